package runrec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScanLog: blank lines are skipped and lines come trimmed with their
// numbers; a refused last line without its newline that is not JSON is a
// torn record, left out; a refused line elsewhere is a *LineError naming
// the file and the line.
func TestScanLog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	strict := func(lines *[]string) func(int, []byte) error {
		return func(n int, line []byte) error {
			if !json.Valid(line) {
				return errors.New("not JSON")
			}
			*lines = append(*lines, string(line))
			return nil
		}
	}
	cases := []struct {
		name, text string
		lines      []string
		torn       bool
		err        string
	}{
		{"whole", "{\"a\":1}\n\n  {\"b\":2}  \n", []string{`{"a":1}`, `{"b":2}`}, false, ""},
		{"torn last line", "{\"a\":1}\n{\"b\":", []string{`{"a":1}`}, true, ""},
		{"bad middle line", "{\"a\":1}\nnope\n{\"b\":2}\n", []string{`{"a":1}`}, false, ":2: not JSON"},
		{"bad last line with its newline", "{\"a\":1}\nnope\n", []string{`{"a":1}`}, false, ":2: not JSON"},
	}
	for _, c := range cases {
		path := write(c.name, c.text)
		var lines []string
		torn, err := ScanLog(path, strict(&lines))
		if !slices.Equal(lines, c.lines) || torn != c.torn {
			t.Errorf("%s: lines %q, torn %v; want %q, %v", c.name, lines, torn, c.lines, c.torn)
		}
		var le *LineError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (!errors.As(err, &le) || le.Path != path || !strings.HasSuffix(err.Error(), c.err)):
			t.Errorf("%s: error %v, want a *LineError of %s ending in %q", c.name, err, path, c.err)
		}
	}
	if _, err := ScanLog(filepath.Join(dir, "none"), strict(new([]string))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestDecodeRecord: a record of today's format and one of before the
// model registry ("uhno": spec) both give the U-HNO's width; another
// model has none; a record without a model is refused.
func TestDecodeRecord(t *testing.T) {
	for _, raw := range []string{`{"model":"uhno","spec":{"C0":8}}`, `{"model":"uhno","uhno":{"C0":8}}`} {
		rec, err := DecodeRecord("ck", json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if c0, ok := rec.UHNOWidth(); !ok || c0 != 8 {
			t.Errorf("%s: width %d, %v; want 8", raw, c0, ok)
		}
	}
	rec, err := DecodeRecord("ck", json.RawMessage(`{"model":"fno","spec":{"Width":20}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.UHNOWidth(); ok {
		t.Errorf("an FNO record gave a U-HNO width")
	}
	if _, err := DecodeRecord("ck", json.RawMessage(`{"data":"x.h5"}`)); !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "checkpoint ck has no usable build record") {
		t.Errorf("no model: %v", err)
	}
}
