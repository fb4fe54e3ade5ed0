// Template of the Gaussian axis pass (see gaussian_amd64.h), included by
// gaussian_amd64.c once per vector width. Before including, define:
//   VW        floats per vector (16 for AVX-512, 8 for AVX2 and SSE)
//   VEC       the vector type (GCC vector extension of VW floats)
//   PASS      the name of the function to define
//   PASS_ATTR its target attribute
// Everything defined here is #undef'd at the end.

#define LD(p) (*(const VEC *)(p))
#define ST(p, v) (*(VEC *)(p) = (v))
#define PASTE(a, b) a##b
#define NAMED(a, b) PASTE(a, b)
#define COPY NAMED(PASS, _copy)
#define BLOCK NAMED(PASS, _block)
#define RUNS NAMED(PASS, _runs)

// Modes, constant at every call so that each combination compiles to its
// own loop: WZ forms A = K s into z; S2 adds K s2 into B; BM is what
// happens to B = K' s (+ K s2): 0 not formed, 1 stored into z2, 2 dotted
// with e into acc.

// PASS_copy copies n floats with vector moves (a libc memcpy call would
// cost more than these short copies).
AI void COPY(float *dst, const float *src, int n) {
	int i = 0;
	for (; i + VW <= n; i += VW)
		ST(dst + i, LD(src + i));
	for (; i < n; i++)
		dst[i] = src[i];
}

// PASS_block computes points [j, j+VW*V) of the R runs of one row group.
// Run q reads tap d of s at sb[q] + off[t[q] + d] + j (off is the circular
// offset table, t[q] the index of the run's centre in it) and of s2 at
// s2b[q] + the same offset. R*V accumulators per output hide the FMA
// latency behind the loads.
AI void BLOCK(const int R, const int V, const int WZ, const int S2, const int BM, int j, float *const *z,
              float *const *z2, float *acc, const float *const *e, const float *const *sb,
              const float *const *s2b, const int *t, const int *off, const float *k, const float *dk, int r,
              int add) {
	VEC a[MAXR][MAXV], b[MAXR][MAXV];
	for (int q = 0; q < R; q++) {
		const int o = off[t[q]] + j;
		for (int v = 0; v < V; v++) {
			VEC s = LD(sb[q] + o + VW * v);
			if (WZ)
				a[q][v] = k[0] * s;
			if (BM) {
				b[q][v] = dk[0] * s;
				if (S2)
					b[q][v] += k[0] * LD(s2b[q] + o + VW * v);
			}
		}
	}
	for (int d = 1; d <= r; d++) {
		const float kd = k[d], dkd = BM ? dk[d] : 0;
		for (int q = 0; q < R; q++) {
			const int lo = off[t[q] - d] + j, hi = off[t[q] + d] + j;
			for (int v = 0; v < V; v++) {
				VEC s = LD(sb[q] + lo + VW * v) + LD(sb[q] + hi + VW * v);
				if (WZ)
					a[q][v] += kd * s;
				if (BM) {
					b[q][v] += dkd * s;
					if (S2)
						b[q][v] += kd * (LD(s2b[q] + lo + VW * v) + LD(s2b[q] + hi + VW * v));
				}
			}
		}
	}
	for (int q = 0; q < R; q++)
		for (int v = 0; v < V; v++) {
			if (WZ) {
				float *p = z[q] + j + VW * v;
				if (add)
					a[q][v] += LD(p);
				ST(p, a[q][v]);
			}
			if (BM == 1)
				ST(z2[q] + j + VW * v, b[q][v]);
			if (BM == 2) {
				float *p = acc + j + VW * v;
				ST(p, LD(p) + LD(e[q] + j + VW * v) * b[q][v]);
			}
		}
}

// PASS_runs runs the whole pass with a fixed blocking (R, V) and mode.
// Runs are lines (inner == 1, copied into circularly padded buffers of
// padw = n + 2p points, p >= r) or rows of the strided axis (read in place
// through the offset table).
AI double RUNS(const int R, const int V, const int WZ, const int S2, const int BM, float *zp, float *z2p,
               const float *s, const float *s2, const float *ep, const float *k, const float *dk, int r,
               int outer, int n, int inner, int add, float *scratch, const int *off, int padw) {
	const int line = inner == 1;
	const int w = line ? n : inner;
	const int runs = line ? outer : outer * n;
	const int p = (padw - n) / 2;
	float *acc = scratch + 2 * MAXR * padw;
	float *z[MAXR], *z2[MAXR];
	const float *e[MAXR], *sb[MAXR], *s2b[MAXR];
	int t[MAXR];
	if (BM == 2)
		memset(acc, 0, sizeof(float) * w);
	for (int q0 = 0, nq; q0 < runs; q0 += nq) {
		nq = runs - q0 < R ? 1 : R; // the last runs go one at a time
		for (int qq = 0; qq < nq; qq++) {
			const int q = q0 + qq;
			const size_t at = (size_t)q * w;
			z[qq] = WZ ? zp + at : NULL;
			z2[qq] = BM == 1 ? z2p + at : NULL;
			e[qq] = BM == 2 ? ep + at : NULL;
			if (line) {
				// Circular padding [x[n-p:n], x, x[0:p]]; off[r + d] = d.
				float *pad = scratch + qq * padw;
				COPY(pad + p, s + at, n);
				COPY(pad, s + at + n - p, p);
				COPY(pad + p + n, s + at, p);
				sb[qq] = pad + p;
				if (S2) {
					float *pad2 = scratch + (MAXR + qq) * padw;
					COPY(pad2 + p, s2 + at, n);
					COPY(pad2, s2 + at + n - p, p);
					COPY(pad2 + p + n, s2 + at, p);
					s2b[qq] = pad2 + p;
				}
				t[qq] = r;
			} else {
				// Row i of block o; off[i + r + d] = ((i + d) mod n) * inner.
				const size_t blk = (size_t)(q / n) * n * inner;
				sb[qq] = s + blk;
				s2b[qq] = S2 ? s2 + blk : NULL;
				t[qq] = q % n + r;
			}
		}
		int j = 0;
		if (nq == R) {
			for (; j + VW * V <= w; j += VW * V)
				BLOCK(R, V, WZ, S2, BM, j, z, z2, acc, e, sb, s2b, t, off, k, dk, r, add);
			for (; j + VW <= w; j += VW)
				BLOCK(R, 1, WZ, S2, BM, j, z, z2, acc, e, sb, s2b, t, off, k, dk, r, add);
		} else {
			for (; j + VW * V <= w; j += VW * V)
				BLOCK(1, V, WZ, S2, BM, j, z, z2, acc, e, sb, s2b, t, off, k, dk, r, add);
			for (; j + VW <= w; j += VW)
				BLOCK(1, 1, WZ, S2, BM, j, z, z2, acc, e, sb, s2b, t, off, k, dk, r, add);
		}
		for (; j < w; j++)
			for (int q = 0; q < nq; q++) {
				const float *c = sb[q] + j, *c2 = S2 ? s2b[q] + j : NULL;
				float a0 = k[0] * c[off[t[q]]], b0 = 0;
				if (BM) {
					b0 = dk[0] * c[off[t[q]]];
					if (S2)
						b0 = FMA(k[0], c2[off[t[q]]], b0);
				}
				for (int d = 1; d <= r; d++) {
					const int lo = off[t[q] - d], hi = off[t[q] + d];
					float sd = c[lo] + c[hi];
					a0 = FMA(k[d], sd, a0);
					if (BM) {
						b0 = FMA(dk[d], sd, b0);
						if (S2)
							b0 = FMA(k[d], c2[lo] + c2[hi], b0);
					}
				}
				if (WZ)
					z[q][j] = add ? z[q][j] + a0 : a0;
				if (BM == 1)
					z2[q][j] = b0;
				if (BM == 2)
					acc[j] += e[q][j] * b0;
			}
	}
	double sum = 0;
	if (BM == 2)
		for (int j = 0; j < w; j++)
			sum += acc[j];
	return sum;
}

// PASS picks the blocking from the run width, then the mode.
#define RUN(R, V, WZ, S2, BM) \
	return RUNS(R, V, WZ, S2, BM, z, z2, s, s2, e, k, dk, r, outer, n, inner, add, scratch, off, padw)
#define MODES(R, V)                         \
	do {                                    \
		if (!dk)                            \
			RUN(R, V, 1, 0, 0);             \
		if (z2 && s2)                       \
			RUN(R, V, 1, 1, 1);             \
		if (z2)                             \
			RUN(R, V, 1, 0, 1);             \
		if (z && s2)                        \
			RUN(R, V, 1, 1, 2);             \
		if (z)                              \
			RUN(R, V, 1, 0, 2);             \
		if (s2)                             \
			RUN(R, V, 0, 1, 2);             \
		RUN(R, V, 0, 0, 2);                 \
	} while (0)

PASS_ATTR
static double PASS(float *z, float *z2, const float *s, const float *s2, const float *e, const float *k,
                   const float *dk, int r, int outer, int n, int inner, int add, float *scratch, const int *off,
                   int padw) {
	const int w = inner == 1 ? n : inner;
	if (w >= 4 * VW)
		MODES(1, 4);
	if (w >= 2 * VW)
		MODES(2, 2);
	MODES(4, 1);
}

#undef MODES
#undef RUN
#undef RUNS
#undef BLOCK
#undef COPY
#undef NAMED
#undef PASTE
#undef LD
#undef ST
#undef VW
#undef VEC
#undef PASS
#undef PASS_ATTR
