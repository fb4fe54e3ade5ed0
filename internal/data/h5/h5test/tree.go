package h5test

// WriteTree writes files with groups and typed attributes, as h5py writes
// The Well's files (groups of datasets, attributes on groups and
// datasets; strings as variable-length UTF-8, lists of strings as arrays
// of them, numpy booleans as an int8 enum FALSE = 0, TRUE = 1), through
// HDF5's C API: gonum's bindings write neither string arrays nor enums.

/*
#cgo LDFLAGS: -lhdf5
#cgo linux,!arm64 CFLAGS: -I/usr/lib/x86_64-linux-gnu/hdf5/serial/include
#cgo linux,!arm64 LDFLAGS: -L/usr/lib/x86_64-linux-gnu/hdf5/serial/
#cgo linux,arm64 CFLAGS: -I/usr/lib/aarch64-linux-gnu/hdf5/serial/include
#cgo linux,arm64 LDFLAGS: -L/usr/lib/aarch64-linux-gnu/hdf5/serial/
#include <stdlib.h>
#include "hdf5.h"

static hid_t space_of(long long n, int scalar) {
	if (scalar) return H5Screate(H5S_SCALAR);
	hsize_t d[1] = {(hsize_t)n};
	return H5Screate_simple(1, d, NULL);
}

static int put_attr(hid_t obj, const char *name, hid_t type, long long n, int scalar, const void *buf) {
	hid_t s = space_of(n, scalar);
	hid_t a = H5Acreate2(obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
	int rc = a < 0 ? -1 : (H5Awrite(a, type, buf) < 0 ? -1 : 0);
	if (a >= 0) H5Aclose(a);
	H5Sclose(s);
	return rc;
}

static int attr_doubles(hid_t obj, const char *name, long long n, int scalar, const double *v) {
	return put_attr(obj, name, H5T_NATIVE_DOUBLE, n, scalar, v);
}

static int attr_int64(hid_t obj, const char *name, long long v) {
	return put_attr(obj, name, H5T_NATIVE_LLONG, 1, 1, &v);
}

static int attr_strings(hid_t obj, const char *name, long long n, int scalar, const char **v) {
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	int rc = put_attr(obj, name, t, n, scalar, v);
	H5Tclose(t);
	return rc;
}

static int attr_fixed(hid_t obj, const char *name, long long n, int scalar, size_t size, const char *v) {
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, size);
	H5Tset_strpad(t, H5T_STR_NULLPAD);
	int rc = put_attr(obj, name, t, n, scalar, v);
	H5Tclose(t);
	return rc;
}

static int attr_bools(hid_t obj, const char *name, long long n, int scalar, const signed char *v) {
	hid_t t = H5Tenum_create(H5T_NATIVE_SCHAR);
	signed char f = 0, tr = 1;
	H5Tenum_insert(t, "FALSE", &f);
	H5Tenum_insert(t, "TRUE", &tr);
	int rc = put_attr(obj, name, t, n, scalar, v);
	H5Tclose(t);
	return rc;
}

static hid_t open_obj(hid_t file, const char *path) {
	return H5Oopen(file, path, H5P_DEFAULT);
}

static int make_group(hid_t file, const char *path) {
	hid_t g = H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0) return -1;
	H5Gclose(g);
	return 0;
}

static int make_dataset(hid_t file, const char *path, int rank, const long long *dims, int f64, int boolean, const void *data) {
	hsize_t d[16];
	for (int i = 0; i < rank; i++) d[i] = (hsize_t)dims[i];
	hid_t s = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, d, NULL);
	hid_t t;
	if (boolean) {
		t = H5Tenum_create(H5T_NATIVE_SCHAR);
		signed char f = 0, tr = 1;
		H5Tenum_insert(t, "FALSE", &f);
		H5Tenum_insert(t, "TRUE", &tr);
	} else {
		t = H5Tcopy(f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT);
	}
	hid_t ds = H5Dcreate2(file, path, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int rc = ds < 0 ? -1 : (H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -1 : 0);
	if (ds >= 0) H5Dclose(ds);
	H5Tclose(t);
	H5Sclose(s);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"
)

// Node is one object of a tree file: a group (Group), or a dataset of
// Dims with Data (float32 values; Float64 stores them as float64, Bools
// as h5py's boolean enum), with attributes. Path "" (or "/") is the root
// group, which exists already and takes attributes only. Parents come
// before children.
type Node struct {
	Path    string
	Group   bool
	Dims    []int
	Data    []float32
	Float64 bool
	Bools   []bool
	// Attrs are float64, []float64, int, string, []string, bool or
	// []bool, written as h5py writes them, or Fixed (numpy's fixed-width
	// byte strings, NUL-padded to the longest).
	Attrs map[string]any
}

// Fixed is a list of strings written as fixed-length, NUL-padded strings
// (numpy's dtype S), one element a string.
type Fixed []string

// WriteTree creates path with nodes, in order.
func WriteTree(path string, nodes []Node) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	file := C.H5Fcreate(cpath, C.H5F_ACC_TRUNC, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if file < 0 {
		return fmt.Errorf("h5test: create %s", path)
	}
	defer C.H5Fclose(file)
	for _, n := range nodes {
		if err := writeNode(file, n); err != nil {
			return fmt.Errorf("h5test: %s: %q: %w", path, n.Path, err)
		}
	}
	return nil
}

func writeNode(file C.hid_t, n Node) error {
	p := n.Path
	if p == "" {
		p = "/"
	}
	cp := C.CString(p)
	defer C.free(unsafe.Pointer(cp))
	switch {
	case p == "/":
	case n.Group:
		if C.make_group(file, cp) != 0 {
			return fmt.Errorf("creating the group")
		}
	default:
		if err := writeDataset(file, cp, n); err != nil {
			return err
		}
	}
	obj := C.open_obj(file, cp)
	if obj < 0 {
		return fmt.Errorf("opening it")
	}
	defer C.H5Oclose(obj)
	keys := make([]string, 0, len(n.Attrs))
	for k := range n.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := writeAttr(obj, k, n.Attrs[k]); err != nil {
			return fmt.Errorf("attribute %s: %w", k, err)
		}
	}
	return nil
}

func writeDataset(file C.hid_t, cp *C.char, n Node) error {
	dims := make([]C.longlong, len(n.Dims))
	count := 1
	for i, d := range n.Dims {
		dims[i] = C.longlong(d)
		count *= d
	}
	var dp *C.longlong
	if len(dims) > 0 {
		dp = &dims[0]
	}
	var rc C.int
	switch {
	case n.Bools != nil:
		if len(n.Bools) != count {
			return fmt.Errorf("%d booleans for shape %v", len(n.Bools), n.Dims)
		}
		b := make([]C.schar, count)
		for i, v := range n.Bools {
			if v {
				b[i] = 1
			}
		}
		rc = C.make_dataset(file, cp, C.int(len(dims)), dp, 0, 1, unsafe.Pointer(&b[0]))
	case n.Float64:
		if len(n.Data) != count {
			return fmt.Errorf("%d values for shape %v", len(n.Data), n.Dims)
		}
		d := make([]float64, count)
		for i, v := range n.Data {
			d[i] = float64(v)
		}
		rc = C.make_dataset(file, cp, C.int(len(dims)), dp, 1, 0, unsafe.Pointer(&d[0]))
	default:
		if len(n.Data) != count {
			return fmt.Errorf("%d values for shape %v", len(n.Data), n.Dims)
		}
		rc = C.make_dataset(file, cp, C.int(len(dims)), dp, 0, 0, unsafe.Pointer(&n.Data[0]))
	}
	if rc != 0 {
		return fmt.Errorf("writing the dataset")
	}
	return nil
}

func writeAttr(obj C.hid_t, name string, v any) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var rc C.int
	switch x := v.(type) {
	case float64:
		rc = C.attr_doubles(obj, cn, 1, 1, (*C.double)(unsafe.Pointer(&x)))
	case []float64:
		if len(x) == 0 {
			return fmt.Errorf("an empty []float64")
		}
		rc = C.attr_doubles(obj, cn, C.longlong(len(x)), 0, (*C.double)(unsafe.Pointer(&x[0])))
	case int:
		rc = C.attr_int64(obj, cn, C.longlong(x))
	case string:
		s := C.CString(x)
		defer C.free(unsafe.Pointer(s))
		rc = C.attr_strings(obj, cn, 1, 1, &s)
	case []string:
		// h5py writes an empty list as an empty array of strings.
		ps := C.malloc(C.size_t(max(len(x), 1)) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
		defer C.free(ps)
		arr := unsafe.Slice((**C.char)(ps), max(len(x), 1))
		for i, s := range x {
			arr[i] = C.CString(s)
			defer C.free(unsafe.Pointer(arr[i]))
		}
		rc = C.attr_strings(obj, cn, C.longlong(len(x)), 0, (**C.char)(ps))
	case Fixed:
		size := 1
		for _, e := range x {
			size = max(size, len(e))
		}
		buf := make([]byte, size*max(len(x), 1))
		for i, e := range x {
			copy(buf[i*size:], e)
		}
		rc = C.attr_fixed(obj, cn, C.longlong(len(x)), 0, C.size_t(size), (*C.char)(unsafe.Pointer(&buf[0])))
	case bool:
		var b C.schar
		if x {
			b = 1
		}
		rc = C.attr_bools(obj, cn, 1, 1, &b)
	case []bool:
		b := make([]C.schar, max(len(x), 1))
		for i, e := range x {
			if e {
				b[i] = 1
			}
		}
		rc = C.attr_bools(obj, cn, C.longlong(len(x)), 0, &b[0])
	default:
		return fmt.Errorf("unsupported type %T", v)
	}
	if rc != 0 {
		return fmt.Errorf("writing %T", v)
	}
	return nil
}
