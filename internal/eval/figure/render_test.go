package figure

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fig.png")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(path, bytes.NewBufferString("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new" {
		t.Errorf("file holds %q, want %q", got, "new")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	onlyEntries(t, dir, "fig.png")

	// A writer that fails leaves the old figure and no temporary.
	if err := writeAtomic(path, brokenWriterTo{}); err == nil || !strings.Contains(err.Error(), "writing PNG: disk full") {
		t.Errorf("error %v, want the writer's", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("after a failed write the file holds %q, want the old %q", got, "new")
	}
	onlyEntries(t, dir, "fig.png")
}

// brokenWriterTo writes half a figure, then fails.
type brokenWriterTo struct{}

func (brokenWriterTo) WriteTo(w io.Writer) (int64, error) {
	n, _ := w.Write([]byte("\x89PNG half"))
	return int64(n), errors.New("disk full")
}

func TestRenderErrors(t *testing.T) {
	t.Run("missing directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "no-such-dir", "fig.png")
		err := SpaceTime(path, "", []float32{1}, []float32{1}, 1, 1, 0, 1, 0, 1)
		if err == nil || !strings.HasPrefix(err.Error(), "figure: "+path+": ") {
			t.Fatalf("error %v, want one naming %s", err, path)
		}
		if _, statErr := os.Stat(filepath.Dir(path)); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("the directory was created: %v", statErr)
		}
	})
	t.Run("panic while drawing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fig.png")
		err := render(path, inch(1), inch(1), func(draw.Canvas) { panic("plotter: boom") })
		if err == nil || err.Error() != "drawing: plotter: boom" {
			t.Errorf("error %v, want the panic as an error", err)
		}
		onlyEntries(t, filepath.Dir(path))
	})
}
