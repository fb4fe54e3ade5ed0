// Vectorised AdamW update for the CPU backend; see adamw_amd64.c.
#ifndef UHNO_ADAMW_H
#define UHNO_ADAMW_H

// The per-step constants of AdamW (adamw.go).
struct uhno_adamw_consts {
	double b1, c1, b2, c2; // beta1, 1-beta1, beta2, 1-beta2
	double decay;          // 1 - lr wd
	double step;           // lr / (1 - beta1^t)
	double bc2;            // sqrt(1 - beta2^t)
	double eps;
};

// One AdamW step on n elements with the kernel of a given level (2
// AVX-512, 1 AVX2, 0 SSE2; -1 the widest the CPU supports). Returns -1 (and
// does nothing) if the CPU lacks that level, else 0.
int uhno_adamw_level(int level, float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k);

#endif
