package h5

// The object tree of a foreign file: groups, their members and the
// attributes of any group or dataset, in the types h5py writes (The
// Well's and PDEBench's files are written by h5py). gonum's bindings read
// numeric and single-string attributes only; h5py also writes lists of
// strings (variable-length string arrays) and numpy booleans (an enum of
// int8, FALSE = 0 and TRUE = 1), so attributes are read here through
// HDF5's C API on gonum's open file.

/*
#cgo LDFLAGS: -lhdf5
#cgo linux,!arm64 CFLAGS: -I/usr/lib/x86_64-linux-gnu/hdf5/serial/include
#cgo linux,!arm64 LDFLAGS: -L/usr/lib/x86_64-linux-gnu/hdf5/serial/
#cgo linux,arm64 CFLAGS: -I/usr/lib/aarch64-linux-gnu/hdf5/serial/include
#cgo linux,arm64 LDFLAGS: -L/usr/lib/aarch64-linux-gnu/hdf5/serial/
#include <stdlib.h>
#include "hdf5.h"

// attr_open opens attribute name of object obj (a path from loc), or
// returns a negative id.
static hid_t attr_open(hid_t loc, const char *obj, const char *name) {
	if (H5Aexists_by_name(loc, obj, name, H5P_DEFAULT) <= 0) return -1;
	return H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT);
}

// attr_shape reports the attribute's type class, element size, whether it
// is a variable-length string, and its number of elements (1 for a
// scalar).
static int attr_shape(hid_t a, int *cls, size_t *size, int *vstr, long long *n) {
	hid_t t = H5Aget_type(a);
	if (t < 0) return -1;
	*cls = (int)H5Tget_class(t);
	*size = H5Tget_size(t);
	*vstr = H5Tis_variable_str(t) > 0;
	H5Tclose(t);
	hid_t s = H5Aget_space(a);
	if (s < 0) return -1;
	hssize_t np = H5Sget_simple_extent_npoints(s);
	H5Sclose(s);
	if (np < 0) return -1;
	*n = (long long)np;
	return 0;
}

// attr_doubles reads a numeric attribute as n doubles.
static int attr_doubles(hid_t a, double *dst) {
	return H5Aread(a, H5T_NATIVE_DOUBLE, dst) < 0 ? -1 : 0;
}

// attr_enum_ints reads an enum attribute (h5py's bool) as its base
// integers, widened to int64: the enum is read in its own type (HDF5
// converts no enum to an integer) and each element's bytes taken as a
// signed little-endian integer of the base's size.
static int attr_enum_ints(hid_t a, long long n, long long *dst) {
	hid_t t = H5Aget_type(a);
	if (t < 0) return -1;
	hid_t nt = H5Tget_native_type(t, H5T_DIR_DEFAULT);
	H5Tclose(t);
	if (nt < 0) return -1;
	size_t sz = H5Tget_size(nt);
	unsigned char *buf = malloc(sz * (size_t)n);
	if (!buf) { H5Tclose(nt); return -1; }
	int rc = H5Aread(a, nt, buf) < 0 ? -1 : 0;
	H5Tclose(nt);
	for (long long i = 0; rc == 0 && i < n; i++) {
		long long v = 0;
		for (size_t b = 0; b < sz; b++) v |= (long long)buf[i * sz + b] << (8 * b);
		if (sz < 8 && (v >> (8 * sz - 1)) & 1) v -= 1LL << (8 * sz);
		dst[i] = v;
	}
	free(buf);
	return rc;
}

// vstring_type is the memory type of a variable-length string attribute:
// C strings in the attribute's own character set (HDF5 converts no UTF-8
// string to ASCII or back; h5py writes UTF-8).
static hid_t vstring_type(hid_t a) {
	hid_t ft = H5Aget_type(a);
	if (ft < 0) return -1;
	H5T_cset_t cs = H5Tget_cset(ft);
	H5Tclose(ft);
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, cs);
	return t;
}

// attr_vstrings reads a variable-length string attribute of n elements
// into dst (pointers the caller copies, then frees with attr_vstrings_free).
static int attr_vstrings(hid_t a, char **dst) {
	hid_t t = vstring_type(a);
	if (t < 0) return -1;
	int rc = H5Aread(a, t, dst) < 0 ? -1 : 0;
	H5Tclose(t);
	return rc;
}

static void attr_vstrings_free(hid_t a, long long n, char **p) {
	hid_t t = vstring_type(a);
	if (t < 0) return;
	hsize_t dims[1] = {(hsize_t)n};
	hid_t s = H5Screate_simple(1, dims, NULL);
	H5Dvlen_reclaim(t, s, H5P_DEFAULT, p);
	H5Sclose(s);
	H5Tclose(t);
}

// attr_fstrings reads a fixed-length string attribute (n elements of size
// bytes each) into dst.
static int attr_fstrings(hid_t a, char *dst) {
	hid_t t = H5Aget_type(a);
	if (t < 0) return -1;
	int rc = H5Aread(a, t, dst) < 0 ? -1 : 0;
	H5Tclose(t);
	return rc;
}

// member_kind is 0 for a group, 1 for a dataset, 2 for anything else, -1
// when path does not name an object.
static int member_kind(hid_t loc, const char *path) {
	if (H5Lexists(loc, path, H5P_DEFAULT) <= 0) return -1;
	H5O_info_t info;
	if (H5Oget_info_by_name(loc, path, &info, H5P_DEFAULT) < 0) return -1;
	return info.type == H5O_TYPE_GROUP ? 0 : info.type == H5O_TYPE_DATASET ? 1 : 2;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"gonum.org/v1/hdf5"
)

// Kind is what a path in a file names.
type Kind int

// The kinds of object a path can name.
const (
	KindNone Kind = iota // nothing
	KindGroup
	KindDataset
	KindOther // a named datatype or another object
)

// Member is one entry of a group.
type Member struct {
	Name string
	Kind Kind
}

// Kind returns what path names ("/" or "" is the root group).
func (f *File) Kind(path string) Kind {
	defer quiet()()
	if path == "" || path == "/" {
		return KindGroup
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	switch C.member_kind(C.hid_t(f.f.ID()), cp) {
	case 0:
		return KindGroup
	case 1:
		return KindDataset
	case 2:
		return KindOther
	}
	return KindNone
}

// Members lists group's entries in HDF5's name order ("" or "/" is the
// root), uhno's bookkeeping datasets (ReservedPrefix) left out.
func (f *File) Members(group string) ([]Member, error) {
	defer quiet()()
	if group == "" {
		group = "/"
	}
	if f.Kind(group) != KindGroup {
		return nil, fmt.Errorf("h5: %s: no group %q", f.path, group)
	}
	g, err := f.f.OpenGroup(group)
	if err != nil {
		return nil, fmt.Errorf("h5: %s: opening group %q: %v (corrupt file?)", f.path, group, err)
	}
	defer g.Close()
	n, err := g.NumObjects()
	if err != nil {
		return nil, fmt.Errorf("h5: %s: listing group %q: %v (corrupt file?)", f.path, group, err)
	}
	var out []Member
	for i := uint(0); i < n; i++ {
		name, err := g.ObjectNameByIndex(i)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: listing group %q: %v (corrupt file?)", f.path, group, err)
		}
		if group == "/" && strings.HasPrefix(name, ReservedPrefix) {
			continue
		}
		m := Member{Name: name, Kind: KindOther}
		switch typ, err := g.ObjectTypeByIndex(i); {
		case err != nil:
		case typ == hdf5.H5G_GROUP:
			m.Kind = KindGroup
		case typ == hdf5.H5G_DATASET:
			m.Kind = KindDataset
		}
		out = append(out, m)
	}
	return out, nil
}

// AttrOf returns attribute name of the object at path (a group or a
// dataset; "" or "/" is the root) in the types h5py writes: a numeric
// scalar as float64 and a numeric array as []float64; a string (variable
// or fixed length) as string and a string array as []string; a boolean
// (h5py's enum) as bool and a boolean array as []bool. ok is false when
// the object has no such attribute; err is set for one that cannot be
// read or is of another type.
func (f *File) AttrOf(path, name string) (v any, ok bool, err error) {
	defer quiet()()
	if path == "" {
		path = "/"
	}
	cp, cn := C.CString(path), C.CString(name)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cn))
	loc := C.hid_t(f.f.ID())
	if f.Kind(path) == KindNone {
		return nil, false, nil
	}
	a := C.attr_open(loc, cp, cn)
	if a < 0 {
		return nil, false, nil
	}
	defer C.H5Aclose(a)
	bad := func(why string) error {
		return fmt.Errorf("h5: %s: attribute %q of %q: %s", f.path, name, path, why)
	}
	var (
		cls  C.int
		size C.size_t
		vstr C.int
		n    C.longlong
	)
	if C.attr_shape(a, &cls, &size, &vstr, &n) != 0 {
		return nil, true, bad("cannot read its type or shape (corrupt file?)")
	}
	scalar := n == 1
	switch C.H5T_class_t(cls) {
	case C.H5T_INTEGER, C.H5T_FLOAT:
		xs := make([]float64, n)
		if n > 0 && C.attr_doubles(a, (*C.double)(unsafe.Pointer(&xs[0]))) != 0 {
			return nil, true, bad("cannot be read as numbers")
		}
		if scalar {
			return xs[0], true, nil
		}
		return xs, true, nil
	case C.H5T_ENUM:
		is := make([]int64, n)
		if n > 0 && C.attr_enum_ints(a, n, (*C.longlong)(unsafe.Pointer(&is[0]))) != 0 {
			return nil, true, bad("an enum that cannot be read")
		}
		bs := make([]bool, n)
		for i, x := range is {
			if x != 0 && x != 1 {
				return nil, true, bad(fmt.Sprintf("an enum with value %d, want a boolean (0 or 1)", x))
			}
			bs[i] = x == 1
		}
		if scalar {
			return bs[0], true, nil
		}
		return bs, true, nil
	case C.H5T_STRING:
		ss, err := f.attrStrings(a, int(n), int(size), vstr != 0)
		if err != nil {
			return nil, true, bad(err.Error())
		}
		if scalar {
			return ss[0], true, nil
		}
		return ss, true, nil
	}
	return nil, true, bad(fmt.Sprintf("of HDF5 type class %d, want a number, a string or a boolean", int(cls)))
}

// attrStrings reads n strings of attribute a: variable-length, or fixed
// length of size bytes each (NUL-padded or space-padded, trailing padding
// dropped).
func (f *File) attrStrings(a C.hid_t, n, size int, variable bool) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]string, n)
	if variable {
		ps := (**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		defer C.free(unsafe.Pointer(ps))
		if C.attr_vstrings(a, ps) != 0 {
			return nil, fmt.Errorf("variable-length strings that cannot be read")
		}
		for i, p := range unsafe.Slice(ps, n) {
			if p != nil {
				out[i] = C.GoString(p)
			}
		}
		C.attr_vstrings_free(a, C.longlong(n), ps)
		return out, nil
	}
	buf := (*C.char)(C.malloc(C.size_t(n * size)))
	defer C.free(unsafe.Pointer(buf))
	if C.attr_fstrings(a, buf) != 0 {
		return nil, fmt.Errorf("fixed-length strings that cannot be read")
	}
	raw := C.GoBytes(unsafe.Pointer(buf), C.int(n*size))
	for i := range out {
		out[i] = strings.TrimRight(string(raw[i*size:(i+1)*size]), "\x00 ")
	}
	return out, nil
}
