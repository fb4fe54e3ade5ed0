package h5

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/hdf5"

	"uhno/internal/data/h5/h5test"
)

// writeTest writes testSpec's n trajectories to path in the given order,
// trajectory k's values given by traj(k).
func writeTest(t *testing.T, path string, order []int, traj func(int) [][]float32) {
	t.Helper()
	w, err := Create(path, testSpec(), len(order))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range order {
		if err := w.Write(i, traj(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func digestOf(t *testing.T, path string) (string, error) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.ContentDigest()
	if err != nil {
		t.Fatal(err)
	}
	return d, f.VerifyContent()
}

// TestContentDigest: two generations of the same values (written in other
// orders, at other times: other bytes) share a digest; other values give
// another; damage to the values that leaves the bookkeeping intact keeps
// the digest but fails VerifyContent; a file without uhno's bookkeeping
// (PDEBench's layout) has no digest.
func TestContentDigest(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	fwd, rev := []int{0, 1, 2, 3, 4, 5}, []int{5, 4, 3, 2, 1, 0}
	a, b, c := filepath.Join(dir, "a.h5"), filepath.Join(dir, "b.h5"), filepath.Join(dir, "c.h5")
	writeTest(t, a, fwd, testTrajectory)
	writeTest(t, b, rev, testTrajectory)
	writeTest(t, c, fwd, func(i int) [][]float32 {
		x := testTrajectory(i)
		if i == 3 {
			x[1][17] += 0.5
		}
		return x
	})
	ra, _ := os.ReadFile(a)
	rb, _ := os.ReadFile(b)
	if bytes.Equal(ra, rb) {
		t.Fatal("the two generations have the same bytes; the test needs files that differ in bytes only")
	}
	da, errA := digestOf(t, a)
	db, errB := digestOf(t, b)
	dc, errC := digestOf(t, c)
	if da == "" || da != db {
		t.Errorf("digests %q and %q of the same values, want equal and non-empty", da, db)
	}
	if dc == da {
		t.Error("a file with one other value has the same digest")
	}
	for _, err := range []error{errA, errB, errC} {
		if err != nil {
			t.Errorf("VerifyContent of an intact file: %v", err)
		}
	}

	// Damage trajectory 2's values in place, the bookkeeping untouched.
	hf, err := hdf5.OpenFile(b, hdf5.F_ACC_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	d, err := hf.OpenDataset("nu")
	if err != nil {
		t.Fatal(err)
	}
	bad := testTrajectory(2)[0]
	bad[5] = -1
	if err := writeSlab(d, []int{2, 0, 0}, []int{1, 8, 8}, &bad); err != nil {
		t.Fatal(err)
	}
	d.Close()
	hf.Close()
	dd, err := digestOf(t, b)
	if dd != da {
		t.Errorf("damage to the values changed the digest (it reads the bookkeeping): %q, want %q", dd, da)
	}
	if err == nil || !strings.Contains(err.Error(), "trajectory 2's values no longer match") || !strings.Contains(err.Error(), b) {
		t.Errorf("VerifyContent of a damaged file: %v, want an error naming it and trajectory 2", err)
	}

	p := filepath.Join(dir, "2D_DarcyFlow_beta1.0_Train.hdf5")
	if err := h5test.Darcy(p, 3, 8, 8, 1.0); err != nil {
		t.Fatal(err)
	}
	if d, err := digestOf(t, p); d != "" || err != nil {
		t.Errorf("a PDEBench file: digest %q, verify %v; want none and nil", d, err)
	}
}
