package h5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
)

// contentFormat versions ContentDigest's definition.
const contentFormat = "uhno-content/1"

// ContentDigest identifies the values of a file uhno wrote, whatever its
// bytes: a SHA-256 over the spec fingerprint (SpecAttr: the generator's
// settings, seed and layout), the trajectory count and every trajectory's
// CRC-32C (CRCDataset, which Write keeps beside the values). Two
// generations of the same data, by one machine or two, have the same
// digest while their bytes differ (HDF5 writes object times, and parallel
// writers place chunks in the order trajectories finish). A file without
// that bookkeeping (PDEBench's) gives "".
//
// The digest reads the bookkeeping, not the values: VerifyContent checks
// that the values still match it.
func (f *File) ContentDigest() (string, error) {
	defer quiet()()
	if !f.Has(CRCDataset) {
		return "", nil
	}
	fp, err := f.AttrString(SpecAttr)
	if err != nil {
		return "", nil // bookkeeping without a spec: not a file of uhno's writer
	}
	total, err := f.AttrFloat(TrajectoriesAttr)
	if err != nil {
		return "", err
	}
	n := int(total)
	if float64(n) != total || n < 1 {
		return "", fmt.Errorf("h5: %s: attribute %q is %v, want a positive count", f.path, TrajectoriesAttr, total)
	}
	crcs := make([]uint32, n)
	if err := f.readUint32(CRCDataset, crcs); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d\n", contentFormat, fp, n)
	b := make([]byte, 4*n)
	for i, c := range crcs {
		binary.LittleEndian.PutUint32(b[4*i:], c)
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyContent recomputes the CRC-32C of every trajectory from its values
// and compares it with the bookkeeping ContentDigest reads, so that a
// matching digest speaks for the values: it finds in-place damage that
// leaves the bookkeeping intact. It reads the whole file. The trajectory
// datasets are those whose leading axis is the trajectory count, taken in
// name order, the order every generator lists them in (Write sums them in
// the generator's order; TestGeneratorDatasetsSorted in internal/data/pde
// pins it). A file without the bookkeeping has nothing to verify.
func (f *File) VerifyContent() error {
	if !f.Has(CRCDataset) {
		return nil
	}
	total, err := f.AttrFloat(TrajectoriesAttr)
	if err != nil {
		return err
	}
	n := int(total)
	crcs := make([]uint32, n)
	if err := f.readUint32(CRCDataset, crcs); err != nil {
		return err
	}
	names, err := f.Datasets()
	if err != nil {
		return err
	}
	slices.Sort(names)
	var fields []string
	var shapes [][]int
	for _, name := range names {
		dims, err := f.Shape(name)
		if err != nil {
			return err
		}
		if len(dims) >= 2 && dims[0] == n {
			fields = append(fields, name)
			shapes = append(shapes, dims)
		}
	}
	if len(fields) == 0 {
		return fmt.Errorf("h5: %s: no dataset of %d trajectories to verify", f.path, n)
	}
	bufs := make([][]float32, len(fields))
	for k, dims := range shapes {
		bufs[k] = make([]float32, prod(dims[1:]))
	}
	for i := range n {
		for k, name := range fields {
			off := make([]int, len(shapes[k]))
			off[0] = i
			count := append([]int{1}, shapes[k][1:]...)
			if err := f.Read(name, off, count, nil, bufs[k]); err != nil {
				return err
			}
		}
		if got := crc(bufs); got != crcs[i] {
			return fmt.Errorf("h5: %s: trajectory %d's values no longer match their checksum (CRC-32C %08x, recorded %08x): damaged in place", f.path, i, got, crcs[i])
		}
	}
	return nil
}
