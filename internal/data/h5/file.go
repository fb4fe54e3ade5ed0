package h5

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/hdf5"
)

// PDEBenchSource says where the PDEBench files come from; missing-file
// errors quote it.
const PDEBenchSource = "the DaRUS repository of PDEBench, doi:10.18419/darus-2986 (https://doi.org/10.18419/darus-2986)"

// Names of the bookkeeping objects uhno adds to the files it writes. Readers
// of the PDEBench layout ignore them; datasets whose name starts with
// ReservedPrefix are hidden from File.Datasets.
const (
	// ReservedPrefix starts the name of every bookkeeping object.
	ReservedPrefix = "uhno-"
	// FormatAttr is a root string attribute, FormatVersion, present in every
	// file uhno writes (and in no PDEBench file).
	FormatAttr = "uhno-format"
	// FormatVersion is the value of FormatAttr.
	FormatVersion = "uhno-pdebench/1"
	// SpecAttr is a root string attribute: the fingerprint of the Spec and
	// trajectory count, so a resumed or skipped file provably matches the
	// settings of the run that wants it.
	SpecAttr = "uhno-spec"
	// TrajectoriesAttr is a root integer attribute: the trajectory count b.
	TrajectoriesAttr = "uhno-trajectories"
	// CompleteAttr is a root integer attribute set to 1 as the last write of
	// a file, after every trajectory.
	CompleteAttr = "complete"
	// WrittenDataset is a uint8 dataset [b]: 1 once trajectory i is on disk.
	WrittenDataset = "uhno-written"
	// CRCDataset is a uint32 dataset [b]: the CRC-32C of trajectory i, over
	// the little-endian bits of its values, dataset after dataset.
	CRCDataset = "uhno-crc32"
)

// quiet keeps the HDF5 library from printing its error stack to stderr for
// the calling goroutine until the returned function runs: use it as
// `defer quiet()()`. HDF5's thread-safe build keeps the print setting per
// OS thread and gonum turns it off only on the thread that ran its init,
// so expected failures (probing for an attribute that PDEBench files lack)
// would print on other threads. quiet pins the goroutine to its thread and
// turns printing off there; our errors carry the context instead. Calls
// nest.
func quiet() func() {
	runtime.LockOSThread()
	hdf5.DisplayErrors(false)
	return runtime.UnlockOSThread
}

// File is an HDF5 file opened for reading: one of uhno's own files or a
// PDEBench file. All datasets live at the root. Its methods are safe for
// concurrent use (the HDF5 library serialises calls internally; File adds a
// lock for its own dataset cache).
type File struct {
	path string
	f    *hdf5.File
	// size is the file's size in bytes when opened: what a dataset the
	// reader loads whole (coordinates, bookkeeping) can hold at most.
	size int64

	mu    sync.Mutex
	dsets map[string]*dataset
}

// dataset caches an open dataset with its shape and element type.
type dataset struct {
	d     *hdf5.Dataset
	dims  []int
	float bool // 64-bit elements (float64) rather than float32
}

// Open opens path for reading. It fails with a one-line error naming the
// path when the file is missing (and then says where PDEBench files come
// from), empty, not HDF5, truncated or corrupt, or an incomplete file left by
// an interrupted uhno write.
func Open(path string) (*File, error) {
	defer quiet()()
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("h5: %s: %w; PDEBench files come from %s, self-generated tasks are written by `uhno datagen`", path, fs.ErrNotExist, PDEBenchSource)
	case err != nil:
		return nil, fmt.Errorf("h5: %w", err)
	case st.IsDir():
		return nil, fmt.Errorf("h5: %s: is a directory, want an HDF5 file", path)
	case st.Size() == 0:
		return nil, fmt.Errorf("h5: %s: empty file (truncated or corrupt); delete it and fetch or generate it again", path)
	}
	if !hdf5.IsHDF5(path) {
		return nil, fmt.Errorf("h5: %s: not an HDF5 file (no HDF5 signature; truncated or corrupt, %d bytes)", path, st.Size())
	}
	hf, err := hdf5.OpenFile(path, hdf5.F_ACC_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("h5: %s: cannot open as HDF5 (truncated or corrupt file, %d bytes; on a filesystem without file locking set HDF5_USE_FILE_LOCKING=FALSE): %v", path, st.Size(), err)
	}
	f := &File{path: path, f: hf, size: st.Size(), dsets: map[string]*dataset{}}
	if err := f.checkComplete(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkComplete rejects a uhno file whose writer did not finish. PDEBench
// files carry no FormatAttr and are complete by construction.
func (f *File) checkComplete() error {
	format, err := f.AttrString(FormatAttr)
	if err != nil {
		return nil // not written by uhno
	}
	if format != FormatVersion {
		return fmt.Errorf("h5: %s: attribute %s is %q, want %q (written by another uhno version; regenerate it with `uhno datagen`)", f.path, FormatAttr, format, FormatVersion)
	}
	if c, err := f.AttrFloat(CompleteAttr); err == nil && c == 1 {
		return nil
	}
	total, _ := f.AttrFloat(TrajectoriesAttr)
	written := -1
	// Writer stores one byte per trajectory, contiguously: a longer
	// dataset than the file has bytes is not uhno's, and is not read.
	if dims, err := f.Shape(WrittenDataset); err == nil && len(dims) == 1 && int64(dims[0]) <= f.size {
		flags := make([]uint8, dims[0])
		if f.readUint8(WrittenDataset, flags) == nil {
			written = 0
			for _, v := range flags {
				if v == 1 {
					written++
				}
			}
		}
	}
	if written >= 0 {
		return fmt.Errorf("h5: %s: incomplete file from an interrupted write (%d of %g trajectories, attribute %q not set); delete it and run `uhno datagen` again", f.path, written, total, CompleteAttr)
	}
	return fmt.Errorf("h5: %s: incomplete file from an interrupted write (attribute %q not set); delete it and run `uhno datagen` again", f.path, CompleteAttr)
}

// Path returns the path the file was opened from.
func (f *File) Path() string { return f.path }

// Close releases the file and its open datasets.
func (f *File) Close() error {
	defer quiet()()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.dsets {
		d.d.Close()
	}
	f.dsets = nil
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	if err != nil {
		return fmt.Errorf("h5: closing %s: %v", f.path, err)
	}
	return nil
}

// Datasets lists the datasets at the root, in HDF5's name order, leaving
// out uhno's bookkeeping datasets (ReservedPrefix).
func (f *File) Datasets() ([]string, error) {
	defer quiet()()
	n, err := f.f.NumObjects()
	if err != nil {
		return nil, fmt.Errorf("h5: %s: listing the root group: %v (corrupt file?)", f.path, err)
	}
	var names []string
	for i := uint(0); i < n; i++ {
		name, err := f.f.ObjectNameByIndex(i)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: listing the root group: %v (corrupt file?)", f.path, err)
		}
		typ, err := f.f.ObjectTypeByIndex(i)
		if err != nil || typ != hdf5.H5G_DATASET || strings.HasPrefix(name, ReservedPrefix) {
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

// Has reports whether a dataset (or group) called name exists at the root.
func (f *File) Has(name string) bool {
	defer quiet()()
	return f.f.LinkExists(name)
}

// Shape returns the dimensions of dataset name.
func (f *File) Shape(name string) ([]int, error) {
	defer quiet()()
	d, err := f.open(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(d.dims), nil
}

// open returns the cached dataset name, opening it on first use.
func (f *File) open(name string) (*dataset, error) {
	defer quiet()()
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.dsets[name]; ok {
		return d, nil
	}
	if f.f == nil {
		return nil, fmt.Errorf("h5: %s: file is closed", f.path)
	}
	if !f.f.LinkExists(name) {
		return nil, fmt.Errorf("h5: %s: no dataset %q", f.path, name)
	}
	hd, err := f.f.OpenDataset(name)
	if err != nil {
		return nil, fmt.Errorf("h5: %s: opening dataset %q: %v (corrupt file?)", f.path, name, err)
	}
	d := &dataset{d: hd}
	space := hd.Space()
	if space == nil {
		hd.Close()
		return nil, fmt.Errorf("h5: %s: dataset %q has no dataspace (corrupt file?)", f.path, name)
	}
	if space.SimpleExtentNDims() > 0 {
		dims, _, err := space.SimpleExtentDims()
		if err != nil {
			space.Close()
			hd.Close()
			return nil, fmt.Errorf("h5: %s: dataset %q: reading its shape: %v", f.path, name, err)
		}
		if _, ok := elements(dims); !ok {
			space.Close()
			hd.Close()
			return nil, fmt.Errorf("h5: %s: dataset %q has shape %v: more elements than an int can count (corrupt file?)", f.path, name, dims)
		}
		for _, v := range dims {
			d.dims = append(d.dims, int(v))
		}
	}
	space.Close()
	if !strings.HasPrefix(name, ReservedPrefix) {
		if d.float, err = floatKind(hd); err != nil {
			hd.Close()
			return nil, fmt.Errorf("h5: %s: dataset %q: %v", f.path, name, err)
		}
	}
	f.dsets[name] = d
	return d, nil
}

// floatKind reports whether the dataset holds float64 (true) or float32
// (false) elements. gonum's ReadSubset uses the file's element type as the
// memory type, so only little-endian IEEE floats (the native order here)
// can be read without conversion; anything else is refused.
func floatKind(d *hdf5.Dataset) (bool, error) {
	dt, err := d.Datatype()
	if err != nil {
		return false, err
	}
	defer dt.Close()
	switch {
	case dt.Equal(hdf5.T_IEEE_F32LE):
		return false, nil
	case dt.Equal(hdf5.T_IEEE_F64LE):
		return true, nil
	}
	return false, fmt.Errorf("element type of class %d and %d bytes; want little-endian float32 or float64", int(dt.Class()), dt.Size())
}

// Read reads the hyperslab of dataset name that starts at offset and takes
// count[k] elements along axis k, every stride[k]-th one (nil stride: 1),
// into dst in row-major order, converting float64 files to float32. Only
// the selected elements are read from disk (HDF5 decompresses the chunks
// they lie in). dst must hold exactly prod(count) values; a wrong length is
// a programming error and panics.
func (f *File) Read(name string, offset, count, stride []int, dst []float32) error {
	defer quiet()()
	d, err := f.open(name)
	if err != nil {
		return err
	}
	n := 1
	for _, c := range count {
		n *= c
	}
	if len(dst) != n {
		panic(fmt.Sprintf("h5: Read %q: dst holds %d values, the selection %v has %d", name, len(dst), count, n))
	}
	if err := checkSelection(d.dims, offset, count, stride); err != nil {
		return fmt.Errorf("h5: %s: dataset %q: %v", f.path, name, err)
	}
	if n == 0 {
		return nil
	}
	fspace, mspace, err := spaces(d, offset, count, stride)
	if err != nil {
		return fmt.Errorf("h5: %s: dataset %q: %v", f.path, name, err)
	}
	defer fspace.Close()
	defer mspace.Close()
	if d.float {
		buf := make([]float64, n)
		err = d.d.ReadSubset(&buf, mspace, fspace)
		for i, v := range buf {
			dst[i] = float32(v)
		}
	} else {
		err = d.d.ReadSubset(&dst, mspace, fspace)
	}
	if err != nil {
		return fmt.Errorf("h5: %s: reading dataset %q at offset %v count %v: HDF5 read failed (%v; truncated or corrupt file?)", f.path, name, offset, count, err)
	}
	return nil
}

// elements returns the number of elements of a dataspace of shape dims,
// and false when it does not fit an int.
func elements(dims []uint) (int, bool) {
	n := uint64(1)
	for _, v := range dims {
		hi, lo := bits.Mul64(n, uint64(v))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return int(n), true
}

// ReadAll reads a whole dataset (meant for small ones such as coordinates)
// and returns its values and shape. A dataset that declares more values
// than the file has bytes is refused before anything is allocated: HDF5
// lets a small file declare a dataset it never stored (reads return the
// fill value), and such a shape must not size an allocation.
func (f *File) ReadAll(name string) ([]float32, []int, error) {
	dims, err := f.Shape(name)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	for _, v := range dims {
		n *= v // cannot overflow: open checked the element count
	}
	if int64(n) > f.size {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q has shape %v, %d values in a file of %d bytes; want a dataset stored in full (corrupt file?)", f.path, name, dims, n, f.size)
	}
	dst := make([]float32, n)
	if err := f.Read(name, make([]int, len(dims)), dims, nil, dst); err != nil {
		return nil, nil, err
	}
	return dst, dims, nil
}

// readUint8 reads a whole 1-D uint8 bookkeeping dataset.
func (f *File) readUint8(name string, dst []uint8) error {
	return f.readBookkeeping(name, len(dst), &dst, hdf5.T_NATIVE_UINT8, hdf5.T_STD_U8LE)
}

// readUint32 reads a whole 1-D uint32 bookkeeping dataset.
func (f *File) readUint32(name string, dst []uint32) error {
	return f.readBookkeeping(name, len(dst), &dst, hdf5.T_NATIVE_UINT32, hdf5.T_STD_U32LE)
}

// readBookkeeping reads the whole 1-D dataset name, of n elements, into
// dst (a pointer to a slice of n elements of a type in types). The shape
// and the element type are checked first: gonum reads in the file's
// element type, so a dataset of wider elements (a uhno-written of
// float64) would be written past the end of dst, into the Go heap.
func (f *File) readBookkeeping(name string, n int, dst any, types ...*hdf5.Datatype) error {
	defer quiet()()
	d, err := f.open(name)
	if err != nil {
		return err
	}
	if len(d.dims) != 1 || d.dims[0] != n {
		return fmt.Errorf("h5: %s: dataset %q has shape %v, want [%d]", f.path, name, d.dims, n)
	}
	dt, err := d.d.Datatype()
	if err != nil {
		return fmt.Errorf("h5: %s: dataset %q: %v (corrupt file?)", f.path, name, err)
	}
	defer dt.Close()
	if !slices.ContainsFunc(types, dt.Equal) {
		return fmt.Errorf("h5: %s: dataset %q has elements of class %d and %d bytes, want %d-byte unsigned integers", f.path, name, int(dt.Class()), dt.Size(), types[0].Size())
	}
	return d.d.Read(dst)
}

// checkSelection validates a hyperslab against the dataset's dimensions.
func checkSelection(dims, offset, count, stride []int) error {
	if len(offset) != len(dims) || len(count) != len(dims) || (stride != nil && len(stride) != len(dims)) {
		return fmt.Errorf("selection of rank %d/%d/%d for a dataset of shape %v", len(offset), len(count), len(stride), dims)
	}
	for k := range dims {
		s := 1
		if stride != nil {
			s = stride[k]
		}
		if offset[k] < 0 || count[k] < 0 || s < 1 {
			return fmt.Errorf("bad selection offset %v count %v stride %v", offset, count, stride)
		}
		if count[k] > 0 && offset[k]+(count[k]-1)*s >= dims[k] {
			return fmt.Errorf("selection offset %v count %v stride %v lies outside shape %v", offset, count, stride, dims)
		}
	}
	return nil
}

// spaces builds the file dataspace with the hyperslab selected and a flat
// memory dataspace of the same number of elements.
func spaces(d *dataset, offset, count, stride []int) (fspace, mspace *hdf5.Dataspace, err error) {
	fspace = d.d.Space()
	if fspace == nil {
		return nil, nil, errors.New("no dataspace (corrupt file?)")
	}
	if len(d.dims) > 0 {
		var ustride []uint
		if stride != nil {
			ustride = toUint(stride)
		}
		if err := fspace.SelectHyperslab(toUint(offset), ustride, toUint(count), nil); err != nil {
			fspace.Close()
			return nil, nil, fmt.Errorf("selecting hyperslab offset %v count %v stride %v: %v", offset, count, stride, err)
		}
	}
	n := 1
	for _, c := range count {
		n *= c
	}
	mspace, err = hdf5.CreateSimpleDataspace([]uint{uint(n)}, nil)
	if err != nil {
		fspace.Close()
		return nil, nil, err
	}
	return fspace, mspace, nil
}

func toUint(v []int) []uint {
	u := make([]uint, len(v))
	for i, x := range v {
		u[i] = uint(x)
	}
	return u
}

// root opens the root group, which carries the file's attributes (h5py's
// f.attrs; gonum's File has no attribute methods of its own).
func (f *File) root() (*hdf5.Group, error) {
	g, err := f.f.OpenGroup("/")
	if err != nil {
		return nil, fmt.Errorf("h5: %s: opening the root group: %v (corrupt file?)", f.path, err)
	}
	return g, nil
}

// Attr returns root attribute name as float64 (numeric scalar), []float64
// (numeric array) or string.
func (f *File) Attr(name string) (any, error) {
	defer quiet()()
	g, err := f.root()
	if err != nil {
		return nil, err
	}
	defer g.Close()
	a, err := g.OpenAttribute(name)
	if err != nil {
		return nil, fmt.Errorf("h5: %s: no attribute %q", f.path, name)
	}
	defer a.Close()
	n := 1
	if sp := a.Space(); sp != nil {
		if sp.SimpleExtentNDims() > 0 {
			n = sp.SimpleExtentNPoints()
		}
		sp.Close()
	}
	if n == 1 {
		var v float64
		if a.Read(&v, hdf5.T_NATIVE_DOUBLE) == nil {
			return v, nil
		}
		var s string
		if a.Read(&s, hdf5.T_GO_STRING) == nil {
			return s, nil
		}
	} else if n > 1 {
		v := make([]float64, n)
		if a.Read(&v[0], hdf5.T_NATIVE_DOUBLE) == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("h5: %s: attribute %q is neither numeric nor a string", f.path, name)
}

// AttrFloat returns numeric scalar root attribute name.
func (f *File) AttrFloat(name string) (float64, error) {
	v, err := f.Attr(name)
	if err != nil {
		return 0, err
	}
	x, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("h5: %s: attribute %q is %T, want a number", f.path, name, v)
	}
	return x, nil
}

// AttrString returns string root attribute name.
func (f *File) AttrString(name string) (string, error) {
	v, err := f.Attr(name)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("h5: %s: attribute %q is %T, want a string", f.path, name, v)
	}
	return s, nil
}

// FirstNonFinite returns the index of the first NaN or ±Inf in x, or -1.
func FirstNonFinite(x []float32) int {
	for i, v := range x {
		if v != v || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}
