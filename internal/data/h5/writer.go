package h5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/hdf5"

	"uhno/internal/atomicfile"
	"uhno/internal/runlock"
)

// Spec describes the contents of a file: the per-trajectory datasets, the
// solver settings and the coordinates. It mirrors the metadata half of
// pde.Generator, so SpecOf(gen) describes a generator's output.
type Spec struct {
	// Datasets names the trajectory datasets in order ("tensor", or "nu"
	// and "tensor" for Darcy).
	Datasets []string
	// Shapes is the per-trajectory shape of each dataset; the file stores
	// dataset k as [b, Shapes[k]...].
	Shapes [][]int
	// Attrs are root attributes: float64, float32, int, int64, uint64,
	// string, []float64 or []int values.
	Attrs map[string]any
	// Coords are 1-D float32 datasets such as "x-coordinate".
	Coords map[string][]float32
}

// Describer is the metadata half of pde.Generator.
type Describer interface {
	Datasets() []string
	Shapes() [][]int
	Attrs() map[string]any
	Coords() map[string][]float32
}

// SeedAttr is the attribute SpecOf stores the generation seed in.
const SeedAttr = "seed"

// SpecOf returns the Spec of a generator's output for the given seed. The
// seed joins the solver settings as attribute "seed" (the generator does
// not know it), so a file made with another seed never passes for this
// one. The generator's maps are copied, not modified.
func SpecOf(d Describer, seed uint64) Spec {
	attrs := map[string]any{}
	for k, v := range d.Attrs() {
		attrs[k] = v
	}
	attrs[SeedAttr] = seed
	return Spec{Datasets: d.Datasets(), Shapes: d.Shapes(), Attrs: attrs, Coords: d.Coords()}
}

// validate checks names, shapes and attribute types.
func (s Spec) validate() error {
	if len(s.Datasets) == 0 || len(s.Datasets) != len(s.Shapes) {
		return fmt.Errorf("%d datasets with %d shapes; want at least one dataset and one shape each", len(s.Datasets), len(s.Shapes))
	}
	seen := map[string]bool{}
	name := func(kind, n string) error {
		switch {
		case n == "" || strings.ContainsAny(n, "/."):
			return fmt.Errorf("%s name %q: want a non-empty name without '/' or '.'", kind, n)
		case strings.HasPrefix(n, ReservedPrefix) || n == CompleteAttr:
			return fmt.Errorf("%s name %q is reserved for uhno's bookkeeping", kind, n)
		case seen[n]:
			return fmt.Errorf("%s name %q is used twice", kind, n)
		}
		seen[n] = true
		return nil
	}
	for k, n := range s.Datasets {
		if err := name("dataset", n); err != nil {
			return err
		}
		if len(s.Shapes[k]) == 0 || slices.ContainsFunc(s.Shapes[k], func(v int) bool { return v < 1 }) {
			return fmt.Errorf("dataset %q: shape %v, want one or more positive sizes", n, s.Shapes[k])
		}
	}
	for n, c := range s.Coords {
		if err := name("coordinate", n); err != nil {
			return err
		}
		if len(c) == 0 {
			return fmt.Errorf("coordinate %q is empty", n)
		}
	}
	attrSeen := map[string]bool{}
	for n, v := range s.Attrs {
		if n == "" || strings.HasPrefix(n, ReservedPrefix) || n == CompleteAttr || attrSeen[n] {
			return fmt.Errorf("attribute name %q is empty or reserved", n)
		}
		attrSeen[n] = true
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("attribute %q is %v, want a finite number", n, x)
			}
		case float32:
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("attribute %q is %v, want a finite number", n, x)
			}
		case int, int64, uint64, string:
		case []float64:
			if len(x) == 0 || slices.ContainsFunc(x, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
				return fmt.Errorf("attribute %q is %v, want a non-empty list of finite numbers", n, x)
			}
		case []int:
			if len(x) == 0 {
				return fmt.Errorf("attribute %q is an empty list", n)
			}
		default:
			return fmt.Errorf("attribute %q has type %T; want float64, float32, int, int64, uint64, string, []float64 or []int", n, v)
		}
	}
	return nil
}

// Fingerprint identifies a Spec together with its trajectory count: the
// SHA-256 of their canonical JSON (attribute and coordinate maps are
// encoded with sorted keys). Two runs agree on a file exactly when their
// fingerprints agree, so changing any setting, the seed included when the
// caller stores it as an attribute, regenerates the file.
func (s Spec) Fingerprint(n int) string {
	b, err := json.Marshal(struct {
		Format   string
		N        int
		Datasets []string
		Shapes   [][]int
		Attrs    map[string]any
		Coords   map[string][]float32
	}{FormatVersion, n, s.Datasets, s.Shapes, s.Attrs, s.Coords})
	if err != nil {
		panic("h5: fingerprint of a validated spec: " + err.Error())
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Existing reports whether path holds a complete file written for spec and
// n trajectories, so a run can skip it. When it does not, reason says why
// in a few words ("missing", "settings differ", an open error, ...).
func Existing(path string, spec Spec, n int) (ok bool, reason string) {
	if _, err := os.Stat(path); err != nil {
		return false, "missing"
	}
	f, err := Open(path)
	if err != nil {
		return false, err.Error()
	}
	defer f.Close()
	fp, err := f.AttrString(SpecAttr)
	if err != nil {
		return false, "not written by uhno"
	}
	if fp != spec.Fingerprint(n) {
		return false, "written with different settings"
	}
	return true, ""
}

// Chunking: one chunk per trajectory while a trajectory holds at most
// ChunkBytes, otherwise the leading axes of the trajectory are halved until
// a chunk fits. 1 MiB is HDF5's default chunk cache per dataset, so a chunk
// read once stays cached while neighbouring frames are read.
const ChunkBytes = 1 << 20

// GzipLevel is the deflate level of trajectory datasets (h5py's default).
const GzipLevel = 4

// chunkShape returns the chunk of a [b, shape...] float32 dataset.
func chunkShape(shape []int) []uint {
	c := make([]int, len(shape))
	copy(c, shape)
	bytes := 4
	for _, v := range c {
		bytes *= v
	}
	for k := 0; k < len(c) && bytes > ChunkBytes; k++ {
		for c[k] > 1 && bytes > ChunkBytes {
			half := (c[k] + 1) / 2
			bytes = bytes / c[k] * half
			c[k] = half
		}
	}
	return append([]uint{1}, toUint(c)...)
}

// Writer writes one file trajectory by trajectory, so generation streams:
// memory holds only the trajectory being written. It writes to the
// temporary name atomicfile.TempPath(path) (".<name>.tmp-<pid>" beside
// path) and publishes that to path in Commit (atomicfile.Publish: fsync,
// rename, fsync the directory), after the CompleteAttr attribute, so an
// interrupted run never leaves a file at path.
// A later Create for the same path and Spec resumes a leftover temporary
// file: trajectories whose CRC matches are kept (Done reports them) and the
// rest are written again. A lock file "<path>.lock" (flock) keeps two
// processes from writing the same path; the lock dies with its process.
//
// Write may be called from several goroutines; calls are serialised.
type Writer struct {
	mu      sync.Mutex
	path    string
	tmp     string
	lock    *os.File
	spec    Spec
	n       int
	f       *hdf5.File
	dsets   []*hdf5.Dataset
	written *hdf5.Dataset
	crcs    *hdf5.Dataset
	done    []bool
	ndone   int
	resumed int
	closed  bool
}

// Create starts (or resumes) writing spec with n trajectories to path. The
// directory must exist.
func Create(path string, spec Spec, n int) (*Writer, error) {
	defer quiet()()
	if err := spec.validate(); err != nil {
		return nil, fmt.Errorf("h5: create %s: %v", path, err)
	}
	if n < 1 {
		return nil, fmt.Errorf("h5: create %s: %d trajectories, want >= 1", path, n)
	}
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("h5: create %s: %w", path, err)
	}
	w := &Writer{path: path, tmp: atomicfile.TempPath(path), lock: lock, spec: spec, n: n, done: make([]bool, n)}
	if err := w.start(); err != nil {
		w.abort()
		return nil, fmt.Errorf("h5: create %s: %v", path, err)
	}
	return w, nil
}

// start resumes the best leftover temporary file or creates a new one.
func (w *Writer) start() error {
	fp := w.spec.Fingerprint(w.n)
	var best string
	var bestDone []bool
	for _, cand := range leftovers(w.path) {
		done, ok := verifyPartial(cand, fp, w.spec, w.n)
		if ok && (best == "" || count(done) > count(bestDone)) {
			if best != "" {
				os.Remove(best)
			}
			best, bestDone = cand, done
			continue
		}
		os.Remove(cand)
	}
	if best != "" {
		if best != w.tmp {
			if err := os.Rename(best, w.tmp); err != nil {
				return err
			}
		}
		if err := w.reopen(); err == nil {
			w.done = bestDone
			w.ndone = count(bestDone)
			w.resumed = w.ndone
			return nil
		}
		w.closeHandles()
		os.Remove(w.tmp)
	}
	return w.create(fp)
}

func count(done []bool) int {
	c := 0
	for _, d := range done {
		if d {
			c++
		}
	}
	return c
}

// leftovers lists the temporary files of path in its directory:
// ".<name>.tmp-*" (atomicfile.TempPath) and "<name>.tmp-*", the name
// earlier versions used, so their interrupted files still resume.
func leftovers(path string) []string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if (strings.HasPrefix(e.Name(), "."+base+".tmp-") || strings.HasPrefix(e.Name(), base+".tmp-")) && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// verifyPartial opens a leftover temporary file and returns the
// trajectories it holds intact: those marked written whose CRC matches. It
// refuses (ok false) a file that does not open, was written for another
// fingerprint or lacks the bookkeeping datasets.
func verifyPartial(path, fp string, spec Spec, n int) (done []bool, ok bool) {
	defer quiet()()
	if !hdf5.IsHDF5(path) {
		return nil, false
	}
	hf, err := hdf5.OpenFile(path, hdf5.F_ACC_RDONLY)
	if err != nil {
		return nil, false
	}
	f := &File{path: path, f: hf, dsets: map[string]*dataset{}}
	if st, err := os.Stat(path); err == nil {
		f.size = st.Size()
	}
	defer f.Close()
	if got, err := f.AttrString(SpecAttr); err != nil || got != fp {
		return nil, false
	}
	flags := make([]uint8, n)
	if f.readUint8(WrittenDataset, flags) != nil {
		return nil, false
	}
	crcs := make([]uint32, n)
	if f.readUint32(CRCDataset, crcs) != nil {
		return nil, false
	}
	done = make([]bool, n)
	bufs := make([][]float32, len(spec.Datasets))
	for k, s := range spec.Shapes {
		bufs[k] = make([]float32, prod(s))
	}
	for i := range n {
		if flags[i] != 1 {
			continue
		}
		for k, name := range spec.Datasets {
			off := make([]int, len(spec.Shapes[k])+1)
			off[0] = i
			if f.Read(name, off, append([]int{1}, spec.Shapes[k]...), nil, bufs[k]) != nil {
				return nil, false
			}
		}
		done[i] = crc(bufs) == crcs[i]
	}
	return done, true
}

func prod(s []int) int {
	p := 1
	for _, v := range s {
		p *= v
	}
	return p
}

// crcTable is CRC-32C (Castagnoli), immutable after initialisation.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// crc is the CRC-32C of the little-endian bits of the fields, in order.
func crc(fields [][]float32) uint32 {
	var sum uint32
	var b [4096]byte
	for _, x := range fields {
		for len(x) > 0 {
			m := min(len(x), len(b)/4)
			for j, v := range x[:m] {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(v))
			}
			sum = crc32.Update(sum, crcTable, b[:4*m])
			x = x[m:]
		}
	}
	return sum
}

// create writes a fresh temporary file: attributes, coordinates, the
// chunked and gzip-compressed trajectory datasets and the bookkeeping.
func (w *Writer) create(fp string) error {
	hf, err := hdf5.CreateFile(w.tmp, hdf5.F_ACC_TRUNC)
	if err != nil {
		return fmt.Errorf("creating %s: %v", w.tmp, err)
	}
	w.f = hf
	root, err := hf.OpenGroup("/")
	if err != nil {
		return err
	}
	defer root.Close()
	attrs := map[string]any{FormatAttr: FormatVersion, SpecAttr: fp, TrajectoriesAttr: w.n}
	for k, v := range w.spec.Attrs {
		attrs[k] = v
	}
	for _, k := range sortedKeys(attrs) {
		if err := writeAttr(root, k, attrs[k]); err != nil {
			return fmt.Errorf("attribute %q: %v", k, err)
		}
	}
	for _, name := range sortedKeys(w.spec.Coords) {
		c := w.spec.Coords[name]
		if err := writeFlat(hf, name, hdf5.T_NATIVE_FLOAT, []uint{uint(len(c))}, &c); err != nil {
			return fmt.Errorf("coordinate %q: %v", name, err)
		}
	}
	for k, name := range w.spec.Datasets {
		dims := append([]uint{uint(w.n)}, toUint(w.spec.Shapes[k])...)
		space, err := hdf5.CreateSimpleDataspace(dims, nil)
		if err != nil {
			return err
		}
		dcpl, err := hdf5.NewPropList(hdf5.P_DATASET_CREATE)
		if err != nil {
			space.Close()
			return err
		}
		err = dcpl.SetChunk(chunkShape(w.spec.Shapes[k]))
		if err == nil {
			err = dcpl.SetDeflate(GzipLevel)
		}
		var d *hdf5.Dataset
		if err == nil {
			d, err = hf.CreateDatasetWith(name, hdf5.T_NATIVE_FLOAT, space, dcpl)
		}
		dcpl.Close()
		space.Close()
		if err != nil {
			return fmt.Errorf("dataset %q: %v", name, err)
		}
		w.dsets = append(w.dsets, d)
	}
	zeros8 := make([]uint8, w.n)
	zeros32 := make([]uint32, w.n)
	if err := writeFlat(hf, WrittenDataset, hdf5.T_NATIVE_UINT8, []uint{uint(w.n)}, &zeros8); err != nil {
		return err
	}
	if err := writeFlat(hf, CRCDataset, hdf5.T_NATIVE_UINT32, []uint{uint(w.n)}, &zeros32); err != nil {
		return err
	}
	if err := w.openBookkeeping(); err != nil {
		return err
	}
	return hf.Flush(hdf5.F_SCOPE_LOCAL)
}

// reopen opens the (renamed) leftover temporary file for writing.
func (w *Writer) reopen() error {
	hf, err := hdf5.OpenFile(w.tmp, hdf5.F_ACC_RDWR)
	if err != nil {
		return err
	}
	w.f = hf
	for _, name := range w.spec.Datasets {
		d, err := hf.OpenDataset(name)
		if err != nil {
			return err
		}
		w.dsets = append(w.dsets, d)
	}
	return w.openBookkeeping()
}

func (w *Writer) openBookkeeping() error {
	var err error
	if w.written, err = w.f.OpenDataset(WrittenDataset); err != nil {
		return err
	}
	w.crcs, err = w.f.OpenDataset(CRCDataset)
	return err
}

// writeFlat creates a contiguous dataset and writes all of data (a pointer
// to a slice).
func writeFlat(f *hdf5.File, name string, dtype *hdf5.Datatype, dims []uint, data any) error {
	space, err := hdf5.CreateSimpleDataspace(dims, nil)
	if err != nil {
		return err
	}
	defer space.Close()
	d, err := f.CreateDataset(name, dtype, space)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Write(data)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeAttr creates (or overwrites) a root attribute.
func writeAttr(g *hdf5.Group, name string, v any) error {
	var (
		dtype *hdf5.Datatype
		dims  []uint
		ptr   any
	)
	switch x := v.(type) {
	case float64:
		dtype, ptr = hdf5.T_NATIVE_DOUBLE, &x
	case float32:
		dtype, ptr = hdf5.T_NATIVE_FLOAT, &x
	case int:
		y := int64(x)
		dtype, ptr = hdf5.T_NATIVE_INT64, &y
	case int64:
		dtype, ptr = hdf5.T_NATIVE_INT64, &x
	case uint64:
		dtype, ptr = hdf5.T_NATIVE_UINT64, &x
	case string:
		dtype, ptr = hdf5.T_GO_STRING, &x
	case []float64:
		dtype, dims, ptr = hdf5.T_NATIVE_DOUBLE, []uint{uint(len(x))}, &x[0]
	case []int:
		y := make([]int64, len(x))
		for i, e := range x {
			y[i] = int64(e)
		}
		dtype, dims, ptr = hdf5.T_NATIVE_INT64, []uint{uint(len(y))}, &y[0]
	default:
		return fmt.Errorf("unsupported type %T", v)
	}
	var space *hdf5.Dataspace
	var err error
	if dims == nil {
		space, err = hdf5.CreateDataspace(hdf5.S_SCALAR)
	} else {
		space, err = hdf5.CreateSimpleDataspace(dims, nil)
	}
	if err != nil {
		return err
	}
	defer space.Close()
	a, err := g.OpenAttribute(name)
	if err != nil {
		if a, err = g.CreateAttribute(name, dtype, space); err != nil {
			return err
		}
	}
	defer a.Close()
	return a.Write(ptr, dtype)
}

// Path returns the final path of the file.
func (w *Writer) Path() string { return w.path }

// Len returns the number of trajectories the file holds.
func (w *Writer) Len() int { return w.n }

// Resumed returns how many trajectories Create recovered from a leftover
// temporary file.
func (w *Writer) Resumed() int { return w.resumed }

// Done reports whether trajectory i is already on disk (written in this run
// or recovered from an interrupted one).
func (w *Writer) Done(i int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done[i]
}

// Remaining lists the trajectories not yet on disk, in increasing order.
func (w *Writer) Remaining() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var r []int
	for i, d := range w.done {
		if !d {
			r = append(r, i)
		}
	}
	return r
}

// Write stores trajectory i: fields[k] holds dataset k's values in
// row-major order (prod(Shapes[k]) of them). The data are flushed before
// the trajectory is marked written, and the mark is flushed too, so an
// interruption at any point leaves either a trajectory a later run can
// verify or one it rewrites. NaN or Inf values are refused with an error
// naming the trajectory. A wrong index or length panics (a programming
// error).
func (w *Writer) Write(i int, fields [][]float32) error {
	defer quiet()()
	if i < 0 || i >= w.n || len(fields) != len(w.spec.Datasets) {
		panic(fmt.Sprintf("h5: Write(%d, %d fields) to %s: want 0 <= i < %d and %d fields", i, len(fields), w.path, w.n, len(w.spec.Datasets)))
	}
	for k, x := range fields {
		if len(x) != prod(w.spec.Shapes[k]) {
			panic(fmt.Sprintf("h5: Write trajectory %d to %s: dataset %q has %d values, want %d", i, w.path, w.spec.Datasets[k], len(x), prod(w.spec.Shapes[k])))
		}
		if j := FirstNonFinite(x); j >= 0 {
			return fmt.Errorf("h5: %s: trajectory %d of dataset %q holds %v at element %d; not written", w.path, i, w.spec.Datasets[k], x[j], j)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("h5: %s: write of trajectory %d after Close or Commit", w.path, i)
	}
	for k, d := range w.dsets {
		shape := w.spec.Shapes[k]
		off := make([]int, len(shape)+1)
		off[0] = i
		if err := writeSlab(d, off, append([]int{1}, shape...), &fields[k]); err != nil {
			return fmt.Errorf("h5: %s: writing trajectory %d of dataset %q: %v", w.tmp, i, w.spec.Datasets[k], err)
		}
	}
	if err := w.f.Flush(hdf5.F_SCOPE_LOCAL); err != nil {
		return fmt.Errorf("h5: %s: flushing trajectory %d: %v", w.tmp, i, err)
	}
	sum := []uint32{crc(fields)}
	one := []uint8{1}
	if err := writeSlab(w.crcs, []int{i}, []int{1}, &sum); err != nil {
		return fmt.Errorf("h5: %s: writing the checksum of trajectory %d: %v", w.tmp, i, err)
	}
	if err := writeSlab(w.written, []int{i}, []int{1}, &one); err != nil {
		return fmt.Errorf("h5: %s: marking trajectory %d written: %v", w.tmp, i, err)
	}
	if err := w.f.Flush(hdf5.F_SCOPE_LOCAL); err != nil {
		return fmt.Errorf("h5: %s: flushing trajectory %d: %v", w.tmp, i, err)
	}
	if !w.done[i] {
		w.done[i] = true
		w.ndone++
	}
	return nil
}

// writeSlab writes data (a pointer to a slice) to the hyperslab offset/count.
func writeSlab(d *hdf5.Dataset, offset, count []int, data any) error {
	fspace := d.Space()
	if fspace == nil {
		return errors.New("no dataspace")
	}
	defer fspace.Close()
	if err := fspace.SelectHyperslab(toUint(offset), nil, toUint(count), nil); err != nil {
		return err
	}
	mspace, err := hdf5.CreateSimpleDataspace([]uint{uint(prod(count))}, nil)
	if err != nil {
		return err
	}
	defer mspace.Close()
	return d.WriteSubset(data, mspace, fspace)
}

// Commit finishes the file: it requires every trajectory on disk, sets
// CompleteAttr = 1 as the last write, closes and fsyncs the temporary file,
// renames it to the final path and fsyncs the directory.
func (w *Writer) Commit() error {
	defer quiet()()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("h5: %s: Commit after Close or Commit", w.path)
	}
	if w.ndone < w.n {
		missing := []int{}
		for i, d := range w.done {
			if !d && len(missing) < 5 {
				missing = append(missing, i)
			}
		}
		return fmt.Errorf("h5: %s: cannot commit: %d of %d trajectories written (missing %v...)", w.path, w.ndone, w.n, missing)
	}
	root, err := w.f.OpenGroup("/")
	if err != nil {
		return fmt.Errorf("h5: %s: %v", w.tmp, err)
	}
	err = writeAttr(root, CompleteAttr, 1)
	root.Close()
	if err != nil {
		return fmt.Errorf("h5: %s: writing attribute %q: %v", w.tmp, CompleteAttr, err)
	}
	if err := w.closeHandles(); err != nil {
		return fmt.Errorf("h5: %s: closing: %v", w.tmp, err)
	}
	if err := atomicfile.Publish(w.tmp, w.path); err != nil {
		return fmt.Errorf("h5: %w", err)
	}
	w.closed = true
	w.releaseLock()
	return nil
}

// Close stops writing without committing. The temporary file stays for a
// later run to resume; the final path is untouched. Close after Commit
// does nothing.
func (w *Writer) Close() error { return w.stop(false) }

// Discard stops writing without committing and removes the temporary
// file, for an output that is worth nothing unless complete (uhno
// predict's, which a rerun computes again): neither the final path nor a
// temporary file is left. Discard after Commit does nothing.
func (w *Writer) Discard() error { return w.stop(true) }

// stop ends writing without committing: it closes the handles, removes
// the temporary file when discard is set, and releases the lock. Once
// closed or committed it does nothing.
func (w *Writer) stop(discard bool) error {
	defer quiet()()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.closeHandles()
	verb := "closing"
	if discard {
		verb = "discarding"
		if rerr := os.Remove(w.tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	w.releaseLock()
	if err != nil {
		return fmt.Errorf("h5: %s %s: %v", verb, w.tmp, err)
	}
	return nil
}

// abort cleans up after a failed Create: the half-made temporary file is
// removed.
func (w *Writer) abort() {
	w.closeHandles()
	os.Remove(w.tmp)
	w.closed = true
	w.releaseLock()
}

func (w *Writer) closeHandles() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, d := range w.dsets {
		keep(d.Close())
	}
	w.dsets = nil
	if w.written != nil {
		keep(w.written.Close())
		w.written = nil
	}
	if w.crcs != nil {
		keep(w.crcs.Close())
		w.crcs = nil
	}
	if w.f != nil {
		keep(w.f.Close())
		w.f = nil
	}
	return first
}

// acquireLock takes an exclusive flock on name, creating it. The lock is
// released when its process ends, so a crashed writer never blocks a later
// run. The loop guards against the file being unlinked by its previous
// holder between our open and our flock.
// ErrBusy is wrapped by Create's error when another writer (another
// process, or another Create in this one) holds the file's lock.
var ErrBusy = errors.New("another process")

func acquireLock(name string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		held, err := runlock.TryLock(f) // the one flock of uhno
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %v", name, err)
		}
		if !held {
			holder, _ := os.ReadFile(name)
			f.Close()
			return nil, fmt.Errorf("%w (pid %s) is writing it; lock file %s", ErrBusy, strings.TrimSpace(string(holder)), name)
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("locking %s: the lock file keeps changing", name)
}

// releaseLock removes and unlocks the lock file (remove first, while still
// holding the lock, so no other process can lock the old inode in between
// and believe it owns the path).
func (w *Writer) releaseLock() {
	if w.lock == nil {
		return
	}
	os.Remove(w.lock.Name())
	w.lock.Close()
	w.lock = nil
}
