// FMA-bound loop for BenchmarkPeak; see peak_amd64.c.
#ifndef UHNO_PEAK_H
#define UHNO_PEAK_H

// Runs iters x 384 float32 flops (12 x 16 FMAs) on AVX-512 and returns a
// sum of the results (so the loop is not removed), or -1 without AVX-512.
float uhno_peak_fma(long iters);

#endif
