// Package cufft loads NVIDIA's cuFFT at run time (dlopen) and exposes the
// few calls the CUDA backend's spectral convolution needs: batched
// multi-dimensional real-to-complex and complex-to-real plans, bound to a
// stream, and their execution.
//
// Why at run time: a binary linked with -lcufft records the soname of the
// toolkit it was built with (libcufft.so.10 for CUDA 11.8, this project's
// build machine) and would not start on the GPU machine, which has CUDA
// 13 (libcufft.so.12). Load tries $UHNO_CUFFT (a file, by absolute path,
// or a directory), then libcufft.so.12, .11, .10 and libcufft.so in each
// directory of $UHNO_CUDA_LIB_DIRS, then those sonames through the dynamic
// loader's search, and returns one clear error naming every path it
// tried when none loads. The package needs no CUDA headers (the few types
// are declared here), so it builds and its error path is tested on any
// machine.
package cufft

/*
#include <stdlib.h>
#include <stdint.h>

typedef int cufftHandle;
typedef int cufftResult;
typedef int cufftType;

typedef cufftResult (*planMany_t)(cufftHandle *, int, int *, int *, int, int, int *, int, int, cufftType, int);
typedef cufftResult (*setStream_t)(cufftHandle, void *);
typedef cufftResult (*execR2C_t)(cufftHandle, void *, void *);
typedef cufftResult (*execC2R_t)(cufftHandle, void *, void *);
typedef cufftResult (*destroy_t)(cufftHandle);
typedef cufftResult (*version_t)(int *);


static cufftResult call_planMany(void *f, cufftHandle *plan, int rank, int *n, int batch, cufftType type) {
	return ((planMany_t)f)(plan, rank, n, NULL, 1, 0, NULL, 1, 0, type, batch);
}
static cufftResult call_setStream(void *f, cufftHandle plan, uintptr_t stream) { return ((setStream_t)f)(plan, (void *)stream); }
static cufftResult call_exec(void *f, cufftHandle plan, uintptr_t in, uintptr_t out) { return ((execR2C_t)f)(plan, (void *)in, (void *)out); }
static cufftResult call_destroy(void *f, cufftHandle plan) { return ((destroy_t)f)(plan); }
static cufftResult call_version(void *f, int *v) { return ((version_t)f)(v); }
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"uhno/internal/dlib"
)

// EnvPath names a cuFFT library to load before the default names.
const EnvPath = "UHNO_CUFFT"

// DefaultNames are the sonames tried in order: CUDA 13 and 12 ship
// libcufft.so.12, CUDA 11 libcufft.so.10 (.11 is accepted for any
// toolkit that used it).
var DefaultNames = []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"}

// Type is a cufftType.
type Type int

// The transform types uhno uses (cufft.h).
const (
	R2C Type = 0x2a
	C2R Type = 0x2c
)

// Handle is a cufftHandle (a plan).
type Handle int32

// Lib is a loaded cuFFT library.
type Lib struct {
	path                                                    string
	planMany, setStream, execR2C, execC2R, destroy, version unsafe.Pointer
}

// EnvLibDirs is a colon-separated list of directories to look for
// DefaultNames in (dlib.EnvLibDirs).
const EnvLibDirs = dlib.EnvLibDirs

// Load opens cuFFT: the file named by $UHNO_CUFFT when set (a directory: the
// default sonames in it), else the first of DefaultNames found in a
// directory of $UHNO_CUDA_LIB_DIRS, else the
// first of DefaultNames the dynamic loader finds.
func Load() (*Lib, error) {
	return LoadFrom(dlib.Names(EnvPath, DefaultNames))
}

// LoadFrom opens the first library of names that loads and has every
// symbol uhno needs. The error names every attempt and why it failed.
func LoadFrom(names []string) (*Lib, error) {
	path, syms, tried := dlib.Load(names, []string{"cufftPlanMany", "cufftSetStream", "cufftExecR2C", "cufftExecC2R", "cufftDestroy", "cufftGetVersion"})
	if syms != nil {
		l := &Lib{path: path}
		for i, dst := range []*unsafe.Pointer{&l.planMany, &l.setStream, &l.execR2C, &l.execC2R, &l.destroy, &l.version} {
			*dst = syms[i]
		}
		return l, nil
	}
	return nil, fmt.Errorf("cufft: cuFFT not found: tried %s; install the CUDA runtime libraries (libcufft) or set %s to the library's path",
		strings.Join(tried, "; "), EnvPath)
}

// Path is the library that was loaded.
func (l *Lib) Path() string { return l.path }

// Version is cufftGetVersion (e.g. 10900 for cuFFT 10.9 of CUDA 11.8).
func (l *Lib) Version() (int, error) {
	var v C.int
	if err := check("cufftGetVersion", C.call_version(l.version, &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// PlanMany creates a plan for `batch` contiguous transforms of the given
// shape (outermost axis first; rank = len(n), 1 to 3) with the default
// packed layouts: real arrays of prod(n) values, complex arrays of
// prod(n[:rank-1]) * (n[rank-1]/2+1) values.
func (l *Lib) PlanMany(n []int, batch int, typ Type) (Handle, error) {
	if len(n) < 1 || len(n) > 3 || batch < 1 {
		return 0, fmt.Errorf("cufft: plan of shape %v, batch %d: want rank 1..3 and batch >= 1", n, batch)
	}
	dims := (*C.int)(C.malloc(C.size_t(len(n)) * C.size_t(unsafe.Sizeof(C.int(0)))))
	defer C.free(unsafe.Pointer(dims))
	ds := unsafe.Slice(dims, len(n))
	for i, v := range n {
		ds[i] = C.int(v)
	}
	var h C.cufftHandle
	if err := check("cufftPlanMany", C.call_planMany(l.planMany, &h, C.int(len(n)), dims, C.int(batch), C.cufftType(typ))); err != nil {
		return 0, fmt.Errorf("%w (shape %v, batch %d)", err, n, batch)
	}
	return Handle(h), nil
}

// SetStream binds a plan to a CUDA stream (a CUstream handle).
func (l *Lib) SetStream(h Handle, stream uintptr) error {
	return check("cufftSetStream", C.call_setStream(l.setStream, C.cufftHandle(h), C.uintptr_t(stream)))
}

// ExecR2C runs a real-to-complex plan from device address in to out.
func (l *Lib) ExecR2C(h Handle, in, out uintptr) error {
	return check("cufftExecR2C", C.call_exec(l.execR2C, C.cufftHandle(h), C.uintptr_t(in), C.uintptr_t(out)))
}

// ExecC2R runs a complex-to-real plan (unnormalised, as cuFFT defines it).
func (l *Lib) ExecC2R(h Handle, in, out uintptr) error {
	return check("cufftExecC2R", C.call_exec(l.execC2R, C.cufftHandle(h), C.uintptr_t(in), C.uintptr_t(out)))
}

// Destroy releases a plan.
func (l *Lib) Destroy(h Handle) error {
	return check("cufftDestroy", C.call_destroy(l.destroy, C.cufftHandle(h)))
}

// resultNames are cufftResult codes (cufft.h).
var resultNames = map[int]string{
	1: "CUFFT_INVALID_PLAN", 2: "CUFFT_ALLOC_FAILED", 3: "CUFFT_INVALID_TYPE", 4: "CUFFT_INVALID_VALUE",
	5: "CUFFT_INTERNAL_ERROR", 6: "CUFFT_EXEC_FAILED", 7: "CUFFT_SETUP_FAILED", 8: "CUFFT_INVALID_SIZE",
	9: "CUFFT_UNALIGNED_DATA", 11: "CUFFT_INVALID_DEVICE", 13: "CUFFT_NO_WORKSPACE",
	14: "CUFFT_NOT_IMPLEMENTED", 16: "CUFFT_NOT_SUPPORTED",
}

// ErrCuFFT is wrapped by every cuFFT call error.
var ErrCuFFT = errors.New("cufft")

func check(call string, r C.cufftResult) error {
	if r == 0 {
		return nil
	}
	name := resultNames[int(r)]
	if name == "" {
		name = fmt.Sprintf("code %d", int(r))
	}
	return fmt.Errorf("%w: %s: %s", ErrCuFFT, call, name)
}
