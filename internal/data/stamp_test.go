package data

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"uhno/internal/data/h5"
)

// writeRandom writes n seeded random bytes to path.
func writeRandom(t *testing.T, path string, n int, seed uint64) []byte {
	t.Helper()
	raw := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestStampRanges checks the sampling: a small file whole; a large one in
// its first and last MiB and 64 blocks between, in order, without overlap,
// inside the file.
func TestStampRanges(t *testing.T) {
	if r := stampRanges(1000); len(r) != 1 || r[0] != [2]int64{0, 1000} {
		t.Fatalf("small file: %v, want the whole file", r)
	}
	for _, size := range []int64{6<<20 + 1, 10 << 20, 5 << 30} {
		r := stampRanges(size)
		if len(r) != stampBlocks+2 || r[0] != [2]int64{0, stampHead} || r[len(r)-1] != [2]int64{size - stampTail, stampTail} {
			t.Fatalf("size %d: %d ranges, first %v, last %v", size, len(r), r[0], r[len(r)-1])
		}
		for i := 1; i < len(r); i++ {
			if r[i][0] < r[i-1][0]+r[i-1][1] {
				t.Fatalf("size %d: range %d %v overlaps %v", size, i, r[i], r[i-1])
			}
		}
	}
}

// TestFileStampMatch checks what resuming refuses: a truncated file (the
// sizes named), a file changed in place with the same size (the
// checksums named), and what it accepts: the same bytes touched or copied.
func TestFileStampMatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.h5")
	raw := writeRandom(t, path, 40000, 1)
	want, err := StampFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want.Size != 40000 || len(want.SHA256) != 64 {
		t.Fatalf("stamp %+v", want)
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	now, err := StampFile(path)
	if err != nil || want.Match(path, now) != nil {
		t.Fatalf("touched file refused: %v %v", err, want.Match(path, now))
	}

	if err := os.Truncate(path, 30000); err != nil {
		t.Fatal(err)
	}
	now, _ = StampFile(path)
	err = want.Match(path, now)
	if err == nil || !strings.HasPrefix(err.Error(), "data: "+path+" has 30000 bytes") || !strings.Contains(err.Error(), "the run recorded 40000 bytes") ||
		!strings.HasSuffix(err.Error(), "truncated, extended or replaced") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("truncated: %v", err)
	}

	raw[20000] ^= 1
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	now, _ = StampFile(path)
	err = want.Match(path, now)
	if err == nil || !strings.HasPrefix(err.Error(), "data: "+path+" changed") || !strings.Contains(err.Error(), "same size, 40000 bytes, but its sampled SHA-256 is "+now.SHA256[:16]) ||
		!strings.Contains(err.Error(), "the run recorded "+want.SHA256[:16]) {
		t.Fatalf("changed: %v", err)
	}

	if _, err := StampFile(filepath.Join(dir, "none.h5")); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "none.h5")) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestFileStampSampled checks, on a file larger than the sample, that a
// change in a sampled block (the first MiB, where HDF5 keeps its headers,
// and the last) is caught.
func TestFileStampSampled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.h5")
	raw := writeRandom(t, path, 8<<20, 2)
	want, err := StampFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{100, len(raw) - 100, int(stampRanges(int64(len(raw)))[10][0])} {
		raw[at] ^= 0x80
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		now, _ := StampFile(path)
		if want.Match(path, now) == nil {
			t.Errorf("a flipped byte at %d of a sampled block went unnoticed", at)
		}
		raw[at] ^= 0x80
	}
}

// TestFileWatch checks the watch of a running job: an untouched file
// passes both checks; a truncation and an in-place rewrite of the same
// size are caught by the quick per-step check; a replacement by rename
// leaves the open file, which the job reads, intact and passes.
func TestFileWatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.h5")
	raw := writeRandom(t, path, 50000, 3)

	w, err := WatchFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(false); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(true); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(false); err == nil || !strings.HasPrefix(err.Error(), "data: "+path+" has 1000 bytes") {
		t.Fatalf("truncated under the watch: %v", err)
	}
	w.Close()

	writeRandom(t, path, 50000, 3)
	if w, err = WatchFile(path); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	raw[0] ^= 1
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(raw[:1], 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := time.Now().Add(time.Minute) // a coarse clock must not hide the write
	os.Chtimes(path, later, later)
	if err := w.Check(false); err == nil || !strings.HasPrefix(err.Error(), "data: "+path+" changed") {
		t.Fatalf("rewritten in place under the watch: %v", err)
	}

	raw[0] ^= 1
	other := filepath.Join(dir, "other.h5")
	if err := os.WriteFile(other, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ = os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt(raw[:1], 0) // the watched file as it was
	f.Close()
	if err := w.Check(true); err != nil {
		t.Fatalf("restored file: %v", err)
	}
	writeRandom(t, other, 20000, 9)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(true); err != nil {
		t.Fatalf("replaced by rename, the open file is intact: %v", err)
	}
	now, _ := StampFile(path)
	if w.Stamp().Match(path, now) == nil {
		t.Fatal("the replacement matches the stamp")
	}
}

// writeGenerated writes a uhno-generated file of n one-field trajectories
// of 4x4 values at path, in the given order, trajectory i holding
// value(i, j) at point j.
func writeGenerated(t *testing.T, path string, order []int, value func(i, j int) float32) {
	t.Helper()
	spec := h5.Spec{Datasets: []string{"tensor"}, Shapes: [][]int{{2, 4, 4}}, Attrs: map[string]any{"seed": 1}}
	w, err := h5.Create(path, spec, len(order))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range order {
		x := make([]float32, 32)
		for j := range x {
			x[j] = value(i, j)
		}
		if err := w.Write(i, [][]float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestFileStampContent: a run's data generated again (other bytes, the same
// values) is accepted by Match; other values, a recorded stamp without a
// content digest (an older run), and a live watch (bytes must not change
// under a running job) are refused.
func TestFileStampContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ns2d.h5")
	same := func(i, j int) float32 { return float32(100*i + j) }
	writeGenerated(t, path, []int{0, 1, 2, 3}, same)
	rec, err := StampFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Content == "" {
		t.Fatal("no content digest for a generated file")
	}

	// The same data generated again, trajectories in another order.
	again := filepath.Join(dir, "again.h5")
	writeGenerated(t, again, []int{3, 1, 2, 0}, same)
	if err := os.Rename(again, path); err != nil {
		t.Fatal(err)
	}
	now, err := StampFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if now.SHA256 == rec.SHA256 {
		t.Fatal("the regenerated file has the same bytes; the test needs other bytes")
	}
	if err := rec.Match(path, now); err != nil {
		t.Errorf("the same data generated again: %v, want accepted", err)
	}
	old := rec
	old.Content = ""
	if err := old.Match(path, now); err == nil {
		t.Error("a stamp without a content digest accepted other bytes")
	}
	bytesOnly := FileStamp{Size: now.Size, SHA256: now.SHA256, ModTime: now.ModTime}
	if err := rec.Match(path, bytesOnly); err == nil {
		t.Error("other bytes without a content digest (a live watch's stamp) accepted")
	}
	if err := old.Match(path, bytesOnly); err == nil {
		t.Error("other bytes accepted where neither stamp has a content digest (a file uhno did not write)")
	}

	// Other values.
	other := filepath.Join(dir, "other.h5")
	writeGenerated(t, other, []int{0, 1, 2, 3}, func(i, j int) float32 { return same(i, j) + float32(i/3) })
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	now, err = StampFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Match(path, now); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("other values: %v, want an error naming the file", err)
	}
}
