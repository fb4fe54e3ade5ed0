// Package nccl loads NVIDIA's NCCL at run time (dlopen) and exposes the
// calls data-parallel training needs on GPUs: a unique id made by one
// rank, a communicator built from it on every rank, a float32 sum
// all-reduce on a CUDA stream, and destroying or aborting the
// communicator.
//
// Why at run time, as package cufft does for cuFFT: a binary linked with
// -lnccl would not start where NCCL is absent (a CPU-only run of
// uhno-cuda, a single GPU), and the GPU machines carry NCCL inside
// Python wheels as often as system-wide. Load tries $UHNO_NCCL (a file,
// by absolute path, or a directory), then libnccl.so.2 and libnccl.so in
// each directory of $UHNO_CUDA_LIB_DIRS, then those sonames through the
// dynamic loader's search, and returns one clear error naming every
// path it tried when none loads. The package needs no CUDA or NCCL
// headers (the few types are declared here), so it builds, and its error
// paths are tested, on any machine.
//
// Status: the calls are compile-checked and their loading is tested here,
// but they have not run: no GPU has been lent to this project while it
// was written (README "Data parallel").
package nccl

/*
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define UHNO_NCCL_ID_BYTES 128
typedef struct { char internal[UHNO_NCCL_ID_BYTES]; } uhno_ncclUniqueId;
typedef int ncclResult_t;
typedef void *ncclComm_t;

typedef ncclResult_t (*getVersion_t)(int *);
typedef ncclResult_t (*getUniqueId_t)(uhno_ncclUniqueId *);
typedef ncclResult_t (*commInitRank_t)(ncclComm_t *, int, uhno_ncclUniqueId, int);
typedef ncclResult_t (*allReduce_t)(const void *, void *, size_t, int, int, ncclComm_t, void *);
typedef ncclResult_t (*commFn_t)(ncclComm_t);
typedef ncclResult_t (*asyncError_t)(ncclComm_t, ncclResult_t *);
typedef const char *(*errorString_t)(ncclResult_t);


static ncclResult_t call_version(void *f, int *v) { return ((getVersion_t)f)(v); }
static ncclResult_t call_uniqueId(void *f, void *id) { return ((getUniqueId_t)f)((uhno_ncclUniqueId *)id); }
static ncclResult_t call_initRank(void *f, uintptr_t *comm, int n, const void *id, int rank) {
	uhno_ncclUniqueId u;
	memcpy(&u, id, sizeof u);
	ncclComm_t c = NULL;
	ncclResult_t r = ((commInitRank_t)f)(&c, n, u, rank);
	*comm = (uintptr_t)c;
	return r;
}
static ncclResult_t call_allReduce(void *f, uintptr_t send, uintptr_t recv, size_t count, int dtype, int op, uintptr_t comm, uintptr_t stream) {
	return ((allReduce_t)f)((const void *)send, (void *)recv, count, dtype, op, (ncclComm_t)comm, (void *)stream);
}
static ncclResult_t call_comm(void *f, uintptr_t comm) { return ((commFn_t)f)((ncclComm_t)comm); }
static ncclResult_t call_asyncError(void *f, uintptr_t comm, ncclResult_t *e) { return ((asyncError_t)f)((ncclComm_t)comm, e); }
static const char *call_errorString(void *f, ncclResult_t r) { return ((errorString_t)f)(r); }
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"uhno/internal/dlib"
)

// EnvPath names an NCCL library to load before the default names.
const EnvPath = "UHNO_NCCL"

// DefaultNames are the sonames tried in order.
var DefaultNames = []string{"libnccl.so.2", "libnccl.so"}

// IDBytes is the size of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES).
const IDBytes = 128

// ID is an ncclUniqueId: made by one rank (UniqueID), broadcast to the
// others (over MPI in uhno), and passed to CommInitRank by all.
type ID [IDBytes]byte

// The values of nccl.h uhno uses.
const (
	float32Type = 7 // ncclFloat32
	sumOp       = 0 // ncclSum
)

// Comm is an ncclComm_t.
type Comm uintptr

// Lib is a loaded NCCL library.
type Lib struct {
	path                                                                            string
	version, uniqueID, initRank, allReduce, destroy, abort, asyncError, errorString unsafe.Pointer
}

// EnvLibDirs is a colon-separated list of directories to look for
// DefaultNames in (dlib.EnvLibDirs).
const EnvLibDirs = dlib.EnvLibDirs

// Load opens NCCL: the file named by $UHNO_NCCL when set (a directory: the
// default sonames in it), else the first of DefaultNames found in a
// directory of $UHNO_CUDA_LIB_DIRS, else the first
// of DefaultNames the dynamic loader finds.
func Load() (*Lib, error) {
	return LoadFrom(dlib.Names(EnvPath, DefaultNames))
}

// LoadFrom opens the first library of names that loads and has every
// symbol uhno needs. The error names every attempt and why it failed.
func LoadFrom(names []string) (*Lib, error) {
	path, syms, tried := dlib.Load(names, []string{"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclCommDestroy", "ncclCommAbort", "ncclCommGetAsyncError", "ncclGetErrorString"})
	if syms != nil {
		l := &Lib{path: path}
		for i, dst := range []*unsafe.Pointer{&l.version, &l.uniqueID, &l.initRank, &l.allReduce, &l.destroy, &l.abort, &l.asyncError, &l.errorString} {
			*dst = syms[i]
		}
		return l, nil
	}
	return nil, fmt.Errorf("nccl: NCCL not found: tried %s; install NCCL (libnccl2) or set %s to libnccl.so.2's path",
		strings.Join(tried, "; "), EnvPath)
}

// Path is the library that was loaded.
func (l *Lib) Path() string { return l.path }

// ErrNCCL is wrapped by every NCCL call error.
var ErrNCCL = errors.New("nccl")

// check turns an ncclResult_t into an error with NCCL's own text.
func (l *Lib) check(call string, r C.ncclResult_t) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s (ncclResult %d)", ErrNCCL, call, C.GoString(C.call_errorString(l.errorString, r)), int(r))
}

// Version is ncclGetVersion (e.g. 22703 for NCCL 2.27.3).
func (l *Lib) Version() (int, error) {
	var v C.int
	if err := l.check("ncclGetVersion", C.call_version(l.version, &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// UniqueID makes the id of a new communicator (on one rank only).
func (l *Lib) UniqueID() (ID, error) {
	var id ID
	err := l.check("ncclGetUniqueId", C.call_uniqueId(l.uniqueID, unsafe.Pointer(&id[0])))
	return id, err
}

// CommInitRank joins the communicator id as rank of n. Every rank calls
// it at the same time, each on its own device (the current CUDA context).
func (l *Lib) CommInitRank(id ID, n, rank int) (Comm, error) {
	if n < 1 || rank < 0 || rank >= n {
		return 0, fmt.Errorf("nccl: rank %d of %d ranks", rank, n)
	}
	var c C.uintptr_t
	if err := l.check("ncclCommInitRank", C.call_initRank(l.initRank, &c, C.int(n), unsafe.Pointer(&id[0]), C.int(rank))); err != nil {
		return 0, fmt.Errorf("%w (rank %d of %d)", err, rank, n)
	}
	return Comm(c), nil
}

// AllReduceSum enqueues the float32 sum over all ranks of the count
// values at device address send into recv (the same address for in
// place) on stream (a CUstream handle). It returns when the work is
// enqueued; synchronise the stream to wait for it.
func (l *Lib) AllReduceSum(c Comm, send, recv uintptr, count int, stream uintptr) error {
	return l.check("ncclAllReduce", C.call_allReduce(l.allReduce, C.uintptr_t(send), C.uintptr_t(recv), C.size_t(count),
		float32Type, sumOp, C.uintptr_t(c), C.uintptr_t(stream)))
}

// AsyncError reports an error a communicator met in the background (a
// peer that died, a network fault): what a watchdog polls while it waits
// for a collective.
func (l *Lib) AsyncError(c Comm) error {
	var e C.ncclResult_t
	if err := l.check("ncclCommGetAsyncError", C.call_asyncError(l.asyncError, C.uintptr_t(c), &e)); err != nil {
		return err
	}
	return l.check("communicator", e)
}

// Destroy frees a communicator after its work completed.
func (l *Lib) Destroy(c Comm) error {
	return l.check("ncclCommDestroy", C.call_comm(l.destroy, C.uintptr_t(c)))
}

// Abort frees a communicator at once, cancelling its pending work (after
// a peer died: a collective that can no longer complete).
func (l *Lib) Abort(c Comm) error {
	return l.check("ncclCommAbort", C.call_comm(l.abort, C.uintptr_t(c)))
}
