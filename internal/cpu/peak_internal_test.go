package cpu

import (
	"sync"
	"testing"
)

// BenchmarkPeak measures the machine's two ceilings for the per-op table
// of docs/PERFORMANCE.md ("CPU step breakdown"), on all cores at once:
//
//   - fma: float32 FMAs on AVX-512 registers with no memory traffic, in
//     GFLOP/s (an FMA counts 2 flops);
//   - copy: Go's copy of a 64 MiB buffer (beyond every cache), in GB/s of
//     bytes read plus bytes written.
func BenchmarkPeak(bm *testing.B) {
	threads := New(0).Threads()
	bm.Run("fma", func(bm *testing.B) {
		if _, ok := peakFMA(1); !ok {
			bm.Skip("no AVX-512")
		}
		const iters = 1 << 20
		for range bm.N {
			var wg sync.WaitGroup
			for range threads {
				wg.Add(1)
				go func() { defer wg.Done(); peakFMA(iters) }()
			}
			wg.Wait()
		}
		bm.ReportMetric(float64(threads)*iters*peakFMAFlops*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	bm.Run("copy", func(bm *testing.B) {
		const n = 64 << 20 / 4 // floats per thread's buffer
		src, dst := make([][]float32, threads), make([][]float32, threads)
		for t := range threads {
			src[t], dst[t] = make([]float32, n), make([]float32, n)
			copy(dst[t], src[t]) // touch the pages
		}
		bm.ResetTimer()
		for range bm.N {
			var wg sync.WaitGroup
			for t := range threads {
				wg.Add(1)
				go func() { defer wg.Done(); copy(dst[t], src[t]) }()
			}
			wg.Wait()
		}
		bm.ReportMetric(float64(threads)*2*4*n*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GB/s")
	})
}
