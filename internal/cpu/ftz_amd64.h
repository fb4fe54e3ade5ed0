// Flush-to-zero for the CPU backend's C kernels.
//
// Gradients routed through the SPAR score path carry sigmoid'(s/T) factors
// that underflow into float32 subnormals when |s| is large; x86 multiplies
// subnormals through a microcode assist about 100 times slower than normal
// arithmetic, which made a whole backward pass 20x slower (measured on the
// SPAR gate benchmark at C=128). Every exported kernel therefore sets the
// MXCSR flush-to-zero and denormals-are-zero bits on entry and restores the
// caller's MXCSR on return, so Go code never runs with them set. This is
// what GPUs do by default (CUDA's -ftz) and changes results only where a
// value is below 1.2e-38 in magnitude.
#ifndef UHNO_FTZ_H
#define UHNO_FTZ_H

static inline unsigned uhno_ftz_enter(void) {
	unsigned old = __builtin_ia32_stmxcsr();
	__builtin_ia32_ldmxcsr(old | 0x8040u); // FTZ (bit 15) | DAZ (bit 6)
	return old;
}

static inline void uhno_ftz_leave(unsigned old) { __builtin_ia32_ldmxcsr(old); }

#endif
