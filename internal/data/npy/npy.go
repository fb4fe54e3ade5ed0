// Package npy reads NumPy's .npy files (format versions 1.0 to 3.0, as
// numpy.lib.format writes them): the header (element type, order, shape)
// and runs of elements read in place, so a file larger than memory is
// read a piece at a time. Little-endian float32 ('<f4') and float64
// ('<f8') arrays in C order are supported; anything else is refused in
// one line naming the file and what it holds. It exists for issue 36's
// plain-array layout ([trajectories, frames, x (, y, z), channels] in one
// .npy file).
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Magic starts every .npy file.
const Magic = "\x93NUMPY"

// Header is what a .npy file holds: its element type, its shape and where
// the elements start.
type Header struct {
	// Descr is the element type as NumPy writes it: "<f4" or "<f8".
	Descr string
	// Shape is the array's shape (empty for a scalar).
	Shape []int
	// Offset is the byte offset of the first element.
	Offset int64
}

// ElemSize is the size of one element in bytes.
func (h Header) ElemSize() int {
	if h.Descr == "<f8" {
		return 8
	}
	return 4
}

// Len is the number of elements.
func (h Header) Len() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

var (
	descrRe   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	fortranRe = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	shapeRe   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadHeader reads and checks the header of the .npy file at path, and
// that the file holds all the elements it announces.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	bad := func(why string, a ...any) error {
		return fmt.Errorf("npy: %s: %s", path, fmt.Sprintf(why, a...))
	}
	pre := make([]byte, 8)
	if _, err := io.ReadFull(f, pre); err != nil || string(pre[:6]) != Magic {
		return Header{}, bad("not a .npy file (no \\x93NUMPY signature)")
	}
	var hlen, skip int
	switch pre[6] {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(f, b); err != nil {
			return Header{}, bad("truncated header")
		}
		hlen, skip = int(binary.LittleEndian.Uint16(b)), 10
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(f, b); err != nil {
			return Header{}, bad("truncated header")
		}
		hlen, skip = int(binary.LittleEndian.Uint32(b)), 12
	default:
		return Header{}, bad("format version %d.%d; want 1.0 to 3.0", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return Header{}, bad("header of %d bytes (corrupt file?)", hlen)
	}
	text := make([]byte, hlen)
	if _, err := io.ReadFull(f, text); err != nil {
		return Header{}, bad("truncated header")
	}
	h, err := parseHeader(string(bytes.TrimRight(text, " \n\x00")))
	if err != nil {
		return Header{}, bad("%v", err)
	}
	h.Offset = int64(skip + hlen)
	st, err := f.Stat()
	if err != nil {
		return Header{}, fmt.Errorf("npy: %w", err)
	}
	if want := h.Offset + int64(h.Len())*int64(h.ElemSize()); st.Size() < want {
		return Header{}, bad("holds %d bytes, its header announces %d (shape %v of %s): truncated", st.Size(), want, h.Shape, h.Descr)
	}
	return h, nil
}

// parseHeader reads the header's Python dict literal.
func parseHeader(s string) (Header, error) {
	var h Header
	m := descrRe.FindStringSubmatch(s)
	if m == nil {
		return h, errors.New("header without 'descr'")
	}
	h.Descr = m[1]
	if h.Descr != "<f4" && h.Descr != "<f8" {
		return h, fmt.Errorf("elements of type %q; want little-endian float32 ('<f4') or float64 ('<f8')", h.Descr)
	}
	if m := fortranRe.FindStringSubmatch(s); m == nil || m[1] != "False" {
		return h, errors.New("Fortran-ordered or without 'fortran_order'; want C order (numpy.ascontiguousarray)")
	}
	m = shapeRe.FindStringSubmatch(s)
	if m == nil {
		return h, errors.New("header without 'shape'")
	}
	for _, part := range strings.Split(m[1], ",") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "L"))
		if part == "" {
			continue
		}
		d, err := strconv.Atoi(part)
		if err != nil || d < 0 {
			return h, fmt.Errorf("shape entry %q is not a size", part)
		}
		h.Shape = append(h.Shape, d)
	}
	return h, nil
}

// Read fills dst with the elements from index start on (in C order), as
// float32.
func Read(path string, h Header, start int, dst []float32) error {
	if start < 0 || start+len(dst) > h.Len() {
		return fmt.Errorf("npy: %s: elements [%d, %d) outside the %d it holds", path, start, start+len(dst), h.Len())
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	size := h.ElemSize()
	buf := make([]byte, len(dst)*size)
	if _, err := f.ReadAt(buf, h.Offset+int64(start)*int64(size)); err != nil {
		return fmt.Errorf("npy: %s: reading elements from %d: %w", path, start, err)
	}
	for i := range dst {
		if size == 8 {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])))
		} else {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
	}
	return nil
}

// Write writes a float32 array of shape as a version 1.0 .npy file, as
// numpy.save does (the header padded with spaces and a newline to a
// multiple of 64 bytes). For tests and for users' inputs.
func Write(path string, shape []int, data []float32) error {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(data) {
		return fmt.Errorf("npy: %s: %d values for shape %v", path, len(data), shape)
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	head := dict + strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString(Magic)
	b.Write([]byte{1, 0})
	_ = binary.Write(&b, binary.LittleEndian, uint16(len(head)))
	b.WriteString(head)
	body := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(body[4*i:], math.Float32bits(v))
	}
	b.Write(body)
	return os.WriteFile(path, b.Bytes(), 0o644)
}
