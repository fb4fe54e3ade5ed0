package cuda

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestPlanSPAR checks the chunking of the SPAR kernels: chunks tile
// [0, N) exactly with none empty, their count fits the one-thread-per-chunk
// kernels, and the grids stay within the launch limits.
func TestPlanSPAR(t *testing.T) {
	ns := []int{1, 2, 37, 255, 256, 257, 4095, 4096, 4097, 8191, 42735, 70001,
		128 * 128, 64 * 64 * 64, 1100003, 128 * 128 * 128, 1<<21 + 1, 1 << 24}
	for _, batch := range []int{1, 3, 70000} {
		for _, n := range ns {
			p := PlanSPAR(batch, n)
			if p.Chunks < 1 || p.Chunks > sparMaxChunks || p.Chunks > sparBlock {
				t.Fatalf("B=%d N=%d: %d chunks", batch, n, p.Chunks)
			}
			next := 0
			for g := 0; g < p.Chunks; g++ {
				lo, hi := p.Range(g)
				if lo != next || hi <= lo {
					t.Fatalf("B=%d N=%d: chunk %d is [%d, %d) after %d", batch, n, g, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("B=%d N=%d: chunks end at %d", batch, n, next)
			}
			// Small samples are one chunk; large ones at least sparMinChunk
			// scores a chunk, until the cap.
			if n <= sparMinChunk && p.Chunks != 1 {
				t.Fatalf("N=%d: %d chunks", n, p.Chunks)
			}
			if p.Chunks < sparMaxChunks && p.Chunks > 1 && p.Chunk > sparMinChunk {
				t.Fatalf("N=%d: chunks of %d below the cap", n, p.Chunk)
			}
			sw := p.Sweep()
			if sw.Grid.X != batch*p.Chunks || sw.Grid.X > sparMaxGridX || sw.Grid.Y != 1 || sw.Grid.Z != 1 ||
				sw.Block != (Dim3{sparBlock, 1, 1}) || sw.Shared != 0 {
				t.Fatalf("B=%d N=%d: sweep %+v", batch, n, sw)
			}
			ps := p.PerSample()
			if ps.Grid.X*ps.Grid.Y < batch || ps.Grid.X > 65535 || ps.Grid.Y > maxGridY ||
				ps.Block != (Dim3{sparBlock, 1, 1}) || ps.Shared != 0 {
				t.Fatalf("B=%d N=%d: per-sample %+v", batch, n, ps)
			}
		}
	}
	if got := PlanSPAR(2, 128*128*128); got.Chunks != 256 || got.Chunk != 8192 {
		t.Fatalf("128^3: %+v", got)
	}
}

func TestPlanSPARRejects(t *testing.T) {
	for _, c := range []struct{ b, n int }{{0, 10}, {1, 0}, {sparMaxGridX, 1 << 20}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PlanSPAR(%d, %d) did not panic", c.b, c.n)
				}
			}()
			PlanSPAR(c.b, c.n)
		}()
	}
}

// TestSPARLimits checks the constants the kernels rely on: a block of
// sparBlock threads holds one thread per digit and per chunk, is a whole
// number of warps and a power of two (the tree reductions), the radix
// passes cover 32 bits, and the static shared memory of every kernel is
// within the default 48 KiB.
func TestSPARLimits(t *testing.T) {
	if sparBins != sparBlock || sparMaxChunks != sparBlock || sparBlock > maxBlockThreads ||
		sparBlock%32 != 0 || sparBlock&(sparBlock-1) != 0 || sparPasses*sparRadixBits != 32 {
		t.Fatalf("inconsistent SPAR constants")
	}
	for _, s := range []int{sparSharedStats, sparSharedHist, sparSharedSelect, sparSharedMask, sparSharedThreshold} {
		if s > 48<<10 {
			t.Fatalf("static shared memory %d bytes", s)
		}
	}
}

// TestSPARDefinesMatch checks that kernels/spar.cu uses the constants the
// Go side plans with.
func TestSPARDefinesMatch(t *testing.T) {
	src, err := os.ReadFile("../../kernels/spar.cu")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"SPAR_BLOCK": sparBlock, "SPAR_RADIX_BITS": sparRadixBits, "SPAR_BINS": sparBins} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("kernels/spar.cu: no #define %s", name)
		}
		if got, _ := strconv.Atoi(string(m[1])); got != want {
			t.Fatalf("kernels/spar.cu: %s = %d, Go uses %d", name, got, want)
		}
	}
}
