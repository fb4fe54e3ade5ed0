package dlib

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	defaults := []string{"libx.so.2", "libx.so"}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libx.so.2")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, dirs string
		want             []string
	}{
		{"nothing set", "", "", defaults},
		{"a file", lib, "", []string{lib, "libx.so.2", "libx.so"}},
		{"a soname", "libx.so.7", "", []string{"libx.so.7", "libx.so.2", "libx.so"}},
		{"a directory", dir, "", []string{lib, filepath.Join(dir, "libx.so"), "libx.so.2", "libx.so"}},
		{"lib dirs", lib, "/a::/b/", []string{lib, "/a/libx.so.2", "/a/libx.so", "/b/libx.so.2", "/b/libx.so", "libx.so.2", "libx.so"}},
	} {
		if got := names(c.path, c.dirs, defaults); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: names(%q, %q) = %q, want %q", c.name, c.path, c.dirs, got, c.want)
		}
	}
}

// TestNamesEnv: Names reads the library's variable and $UHNO_CUDA_LIB_DIRS.
func TestNamesEnv(t *testing.T) {
	t.Setenv("UHNO_TEST_LIB", "/opt/x/libx.so.2")
	t.Setenv(EnvLibDirs, "/opt/y")
	got := strings.Join(Names("UHNO_TEST_LIB", []string{"libx.so.2"}), " ")
	if want := "/opt/x/libx.so.2 /opt/y/libx.so.2 libx.so.2"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
}

// TestLoadAbsolutePath: an absolute path is opened as is (dlopen does not
// search for a name with a slash); libc's own file stands in for an
// NVIDIA library.
func TestLoadAbsolutePath(t *testing.T) {
	var found string
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			found = p
			break
		}
	}
	if found == "" {
		t.Skip("no libc.so.6 at a known path")
	}
	path, syms, tried := Load([]string{"/nonexistent/libc.so.6", found}, []string{"malloc"})
	if path != found || len(syms) != 1 || syms[0] == nil || len(tried) != 0 {
		t.Errorf("Load = %q, %v, %q; want %q with malloc", path, syms, tried, found)
	}
}
