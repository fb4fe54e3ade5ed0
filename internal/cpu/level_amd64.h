// The ISA level of the CPU backend's C kernels, shared by the files that
// compile one function per level and pick at run time.
#ifndef UHNO_LEVEL_H
#define UHNO_LEVEL_H

// uhno_cpu_level is the widest level the CPU (and OS) supports: 2 for
// AVX-512 (x86-64-v4), 1 for AVX2+FMA (x86-64-v3), 0 otherwise.
static inline int uhno_cpu_level(void) {
	__builtin_cpu_init(); // idempotent; needed if called before libgcc's constructor
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512cd"))
		return 2;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return 1;
	return 0;
}

#endif
