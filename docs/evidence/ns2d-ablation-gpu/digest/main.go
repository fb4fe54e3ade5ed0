// Command digest prints one sha256 over the datasets of a uhno HDF5 data
// file (names, shapes and float32 bits, in sorted order): the same digest
// means the same data, whatever HDF5's object times or chunk layout on
// disk. The GPU run of this folder checks its generated NS-2D file against
// the CPU grid's with it.
//
//	go run ./docs/evidence/ns2d-ablation-gpu/digest FILE.h5
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"

	"uhno/internal/data/h5"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: digest FILE.h5")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "digest: %v\n", err)
		os.Exit(1)
	}
}

func run(path string) error {
	f, err := h5.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Datasets()
	if err != nil {
		return err
	}
	sort.Strings(names)
	h := sha256.New()
	var buf [4]byte
	for _, name := range names {
		x, shape, err := f.ReadAll(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(h, "%s %v\n", name, shape)
		for _, v := range x {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			h.Write(buf[:])
		}
	}
	fmt.Printf("%x %s\n", h.Sum(nil), path)
	return nil
}
