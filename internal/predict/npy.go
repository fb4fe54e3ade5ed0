package predict

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio"

	"uhno/internal/atomicfile"
)

// npySource reads a .npy file: the header through npyio, the values by
// seeking to one trajectory's frames at a time, so a file larger than
// memory streams.
type npySource struct {
	path     string
	f        *os.File
	shape    []int // as stored
	f64      bool
	data     int64 // offset of the first value
	n        int
	frames   int
	grid     []int
	channels int // fields; the trailing axis when hasC
	hasC     bool
	pts      int
	buf      []byte
}

// openNPY opens path for a model of dim spatial axes and c fields and
// decides how its axes read (see the package documentation).
func openNPY(path string, dim, c int, expect string) (*npySource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	r, err := npyio.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("predict: %s: not a readable .npy file: %v", path, err)
	}
	s := &npySource{path: path, f: f, shape: r.Header.Descr.Shape}
	fail := func(format string, a ...any) (*npySource, error) {
		f.Close()
		return nil, fmt.Errorf("predict: %s: "+format, append([]any{path}, a...)...)
	}
	switch typ := strings.Trim(r.Header.Descr.Type, `'"`); typ {
	case "<f4":
	case "<f8":
		s.f64 = true
	default:
		return fail("element type %s, want little-endian float32 (<f4) or float64 (<f8)", typ)
	}
	if r.Header.Descr.Fortran {
		return fail("Fortran-ordered array, want C order (numpy.ascontiguousarray)")
	}
	if s.data, err = f.Seek(0, io.SeekCurrent); err != nil {
		return fail("%v", err)
	}
	sh := s.shape
	rank := len(sh)
	switch {
	case c == 1 && rank == dim+1:
		s.frames, s.grid = 1, sh[1:]
	case c == 1 && rank == dim+2:
		s.frames, s.grid = sh[1], sh[2:]
	case c > 1 && rank == dim+2:
		s.frames, s.grid, s.hasC = 1, sh[1:rank-1], true
	case rank == dim+3:
		s.frames, s.grid, s.hasC = sh[1], sh[2:rank-1], true
	default:
		return fail("array of shape %v has %d axes, the run expects %s", sh, rank, expect)
	}
	s.n, s.channels = sh[0], c
	if s.hasC && sh[rank-1] != c {
		return fail("array of shape %v has %d channels (last axis), the run expects %d: %s", sh, sh[rank-1], c, expect)
	}
	s.pts = 1
	for _, g := range sh {
		if g < 1 {
			return fail("array of shape %v is empty, the run expects %s", sh, expect)
		}
	}
	for _, g := range s.grid {
		s.pts *= g
	}
	st, err := f.Stat()
	if err != nil {
		return fail("%v", err)
	}
	size := int64(4)
	if s.f64 {
		size = 8
	}
	want := size
	for _, g := range sh {
		if want > math.MaxInt64/int64(g) {
			return fail("array of shape %v is too large", sh)
		}
		want *= int64(g)
	}
	if st.Size()-s.data < want {
		return fail("holds %d bytes of values, its shape %v needs %d (truncated?)", st.Size()-s.data, sh, want)
	}
	return s, nil
}

func (s *npySource) Len() int                    { return s.n }
func (s *npySource) Frames() int                 { return s.frames }
func (s *npySource) Grid() []int                 { return append([]int(nil), s.grid...) }
func (s *npySource) Where() string               { return s.path }
func (s *npySource) Shape() []int                { return append([]int(nil), s.shape...) }
func (s *npySource) Close() error                { return s.f.Close() }
func (s *npySource) Coord(name string) []float32 { return nil }

// Constant refuses: a plain array holds time-dependent channels only.
func (s *npySource) Constant(_ []float32, name string, _ int) error {
	return fmt.Errorf("predict: %s: the run takes constant input %q, which a plain .npy array cannot hold: give the input in the layout of the run's data (or its task.json)", s.path, name)
}

// Read reads frames [t0, t0+nt) of trajectory i as [nt, fields, points],
// moving a trailing channel axis in front of the grid.
func (s *npySource) Read(dst []float32, i, t0, nt int) error {
	c, pts := s.channels, s.pts
	if i < 0 || i >= s.n || t0 < 0 || nt < 1 || t0+nt > s.frames || len(dst) != nt*c*pts {
		panic(fmt.Sprintf("predict: npy Read(%d, %d, %d) of %s: outside %d trajectories of %d frames, or dst %d values", i, t0, nt, s.path, s.n, s.frames, len(dst)))
	}
	size := 4
	if s.f64 {
		size = 8
	}
	vals := nt * c * pts
	if cap(s.buf) < vals*size {
		s.buf = make([]byte, vals*size)
	}
	buf := s.buf[:vals*size]
	off := s.data + int64(((i*s.frames+t0)*c*pts)*size)
	if _, err := s.f.ReadAt(buf, off); err != nil {
		return fmt.Errorf("predict: %s: reading trajectory %d: %v", s.path, i, err)
	}
	for j := range vals { // j indexes the file's order: [nt, points, c] or [nt, c=1, points]
		var v float64
		if s.f64 {
			v = math.Float64frombits(binary.LittleEndian.Uint64(buf[j*8:]))
		} else {
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[j*4:])))
		}
		f, rest := j/(c*pts), j%(c*pts)
		p, ch := rest/c, rest%c
		x := float32(v)
		if math.IsNaN(v) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("predict: %s: holds %v at index %s", s.path, v, s.index(i, t0+f, p, ch))
		}
		dst[(f*c+ch)*pts+p] = x
	}
	return nil
}

// index writes the numpy index of trajectory i, frame f, flat grid point
// p and channel ch, as (i, f, y, x, ch) in the file's axes.
func (s *npySource) index(i, f, p, ch int) string {
	idx := []string{strconv.Itoa(i)}
	if len(s.shape) > len(s.grid)+1+btoi(s.hasC) {
		idx = append(idx, strconv.Itoa(f))
	}
	g := make([]string, len(s.grid))
	for a := len(s.grid) - 1; a >= 0; a-- {
		g[a] = strconv.Itoa(p % s.grid[a])
		p /= s.grid[a]
	}
	idx = append(idx, g...)
	if s.hasC {
		idx = append(idx, strconv.Itoa(ch))
	}
	return "[" + strings.Join(idx, ", ") + "]"
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// npyHeader is a version 1.0 .npy header for a C array of element type
// descr ("<f4": little-endian float32) and the given shape, padded so the values start at a multiple of
// 64 bytes (NumPy's format, numpy.lib.format).
func npyHeader(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, v := range shape {
		dims[i] = strconv.Itoa(v)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	const pre = 10 // magic (6), version (2), header length (2)
	pad := 64 - (pre+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	return append(out, dict...)
}

// npySink writes the output .npy through atomicfile: a temporary file
// beside path, published at the end.
type npySink struct {
	path     string
	tmp      *atomicfile.File
	w        *bufio.Writer
	channels int
	pts      int
	next     int
	row      []byte
}

// createNPY starts an .npy of n trajectories of frames [frames, c, grid...].
func createNPY(path string, n, frames, c int, grid []int) (*npySink, error) {
	shape := append([]int{n, frames}, grid...)
	if c > 1 {
		shape = append(shape, c)
	}
	hdr := npyHeader("<f4", shape)
	if len(hdr) > 1<<16 {
		return nil, fmt.Errorf("predict: %s: shape %v gives an .npy header too long for format 1.0", path, shape)
	}
	tmp, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	pts := 1
	for _, g := range grid {
		pts *= g
	}
	s := &npySink{path: path, tmp: tmp, w: bufio.NewWriterSize(tmp, 1<<20), channels: c, pts: pts}
	if _, err := s.w.Write(hdr); err != nil {
		s.Discard()
		return nil, fmt.Errorf("predict: %s: %w", tmp.Name(), err)
	}
	return s, nil
}

// Write appends trajectory i, [frames, c, points], in order.
func (s *npySink) Write(i int, traj []float32) error {
	if i != s.next {
		panic(fmt.Sprintf("predict: npy Write of trajectory %d, want %d", i, s.next))
	}
	s.next++
	c, pts := s.channels, s.pts
	if cap(s.row) < len(traj)*4 {
		s.row = make([]byte, len(traj)*4)
	}
	row := s.row[:len(traj)*4]
	for j := range traj { // j: output order [frames, points, c]
		f, rest := j/(c*pts), j%(c*pts)
		p, ch := rest/c, rest%c
		binary.LittleEndian.PutUint32(row[j*4:], math.Float32bits(traj[(f*c+ch)*pts+p]))
	}
	if _, err := s.w.Write(row); err != nil {
		return fmt.Errorf("predict: %s: %w", s.tmp.Name(), err)
	}
	return nil
}

// Commit flushes the file and publishes it at its path (atomicfile).
func (s *npySink) Commit() error {
	if err := s.w.Flush(); err != nil {
		s.tmp.Abort()
		return fmt.Errorf("predict: writing %s: %w", s.path, err)
	}
	if err := s.tmp.Commit(); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	return nil
}

// Discard removes the temporary file.
func (s *npySink) Discard() { s.tmp.Abort() }
