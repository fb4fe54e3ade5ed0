// Package dlib opens a shared library at run time (dlopen) and resolves
// the symbols a caller needs: the one loader of uhno, behind packages
// cuda/cufft and cuda/nccl, which load NVIDIA's libraries by soname so
// that a binary starts where they are absent and picks up whichever
// version is installed, and behind package dist, which loads Open MPI's
// libmpi the same way.
package dlib

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

static void *dlib_open(const char *p, int global) { return dlopen(p, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL)); }
static const char *dlib_error(void) { const char *e = dlerror(); return e ? e : "unknown error"; }
static void *dlib_sym(void *h, const char *s) { return dlsym(h, s); }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// EnvLibDirs is a colon-separated list of directories searched for the
// default sonames (after the library's own variable, $UHNO_CUFFT or
// $UHNO_NCCL, and before the dynamic loader's own search): for NVIDIA
// libraries that sit outside the loader's path, such as those of a Python
// wheel (.../site-packages/nvidia/nccl/lib).
const EnvLibDirs = "UHNO_CUDA_LIB_DIRS"

// Names is the list Load tries for a library whose own variable is
// envPath and whose sonames are defaults: first $envPath when set (a
// library file, by absolute path or a name the loader searches; a
// directory stands for each default soname inside it), then each default
// soname in each directory of $UHNO_CUDA_LIB_DIRS, then the defaults as
// bare sonames, which the dynamic loader looks up (LD_LIBRARY_PATH,
// ld.so.cache).
func Names(envPath string, defaults []string) []string {
	return names(os.Getenv(envPath), os.Getenv(EnvLibDirs), defaults)
}

func names(path, dirs string, defaults []string) []string {
	var out []string
	if path != "" {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			for _, n := range defaults {
				out = append(out, filepath.Join(path, n))
			}
		} else {
			out = append(out, path)
		}
	}
	for _, d := range filepath.SplitList(dirs) {
		if d == "" {
			continue
		}
		for _, n := range defaults {
			out = append(out, filepath.Join(d, n))
		}
	}
	return append(out, defaults...)
}

// Load opens the first of names that loads and defines every one of
// symbols, and returns its name and the symbols' addresses in order.
// When none does it returns the attempts, one "name (why)" each, for the
// caller's error. The library's symbols stay its own (RTLD_LOCAL).
func Load(names, symbols []string) (path string, syms []unsafe.Pointer, tried []string) {
	return load(names, symbols, false)
}

// LoadGlobal is Load with the library's symbols made available to the
// libraries loaded after it (RTLD_GLOBAL): Open MPI's components are
// plugins that resolve libmpi's symbols that way.
func LoadGlobal(names, symbols []string) (path string, syms []unsafe.Pointer, tried []string) {
	return load(names, symbols, true)
}

func load(names, symbols []string, global bool) (path string, syms []unsafe.Pointer, tried []string) {
	g := C.int(0)
	if global {
		g = 1
	}
	for _, name := range names {
		cs := C.CString(name)
		h := C.dlib_open(cs, g)
		C.free(unsafe.Pointer(cs))
		if h == nil {
			tried = append(tried, fmt.Sprintf("%s (%s)", name, C.GoString(C.dlib_error())))
			continue
		}
		syms = make([]unsafe.Pointer, len(symbols))
		var missing []string
		for i, s := range symbols {
			cs := C.CString(s)
			syms[i] = C.dlib_sym(h, cs)
			C.free(unsafe.Pointer(cs))
			if syms[i] == nil {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s (lacks %s)", name, strings.Join(missing, ", ")))
			continue
		}
		return name, syms, nil
	}
	return "", nil, tried
}
