package testutil

import (
	"go/parser"
	"go/token"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/model"
)

func TestSameBits(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		a, b []float32
		want bool
	}{
		{[]float32{1, 2}, []float32{1, 2}, true},
		{[]float32{nan}, []float32{nan}, true},
		{[]float32{0}, []float32{negZero}, false},
		{[]float32{1}, []float32{1, 2}, false},
		{nil, []float32{}, true},
	} {
		if got := SameBits(c.a, c.b); got != c.want {
			t.Errorf("SameBits(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestCheckPNGAndExtra(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.png")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	CheckPNG(t, p, 3, 2)
	CheckPNG(t, p, 0, 0)
	os.WriteFile(filepath.Join(dir, ".a.png.tmp1"), nil, 0o644)
	if got := Extra(t, dir, "a.png"); !slices.Equal(got, []string{".a.png.tmp1"}) {
		t.Errorf("Extra = %v", got)
	}
}

func TestTinyUHNOValid(t *testing.T) {
	for _, dim := range []int{1, 2} {
		if err := TinyUHNO(dim, 2, model.ModeFull).Validate(); err != nil {
			t.Errorf("dim %d: %v", dim, err)
		}
	}
}

// TestOnlyTestsImport keeps testutil out of every binary: no non-test
// file of the module imports it.
func TestOnlyTestsImport(t *testing.T) {
	root := filepath.Join("..", "..")
	read := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // not ours to judge
		}
		read++
		for _, imp := range f.Imports {
			if imp.Path.Value == `"uhno/internal/testutil"` {
				t.Errorf("%s imports testutil; only _test.go files may", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 50 {
		t.Fatalf("read %d Go files under %s, want the module's", read, root)
	}
}
