// emu.h: the C interface of the CUDA emulator's runtime (runtime.cc) to Go
// (emu.go). Every call that can fail returns 0 on success and otherwise
// writes a one-line message into err (errlen bytes) and returns non-zero.
#ifndef UHNO_EMU_H
#define UHNO_EMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Device memory: host memory between PROT_NONE guard pages.
int uhno_emu_malloc(int64_t bytes, uintptr_t *out, char *err, int errlen);
int uhno_emu_free(uintptr_t p, char *err, int errlen);
// Copies; dir 0: host src to device dst, 1: device src to host dst,
// 2: device to device. Device ranges must lie inside one allocation.
int uhno_emu_memcpy(uintptr_t dst, uintptr_t src, int64_t bytes, int dir, char *err, int errlen);
int uhno_emu_memset32(uintptr_t dst, uint32_t v, int64_t n, char *err, int errlen);

// Kernels: the generated table of every kernel in kernels/*.cu.
int uhno_emu_kernel_count(void);
const char *uhno_emu_kernel_name(int i);
const char *uhno_emu_kernel_kinds(int i);
int uhno_emu_kernel_index(const char *name);
// dims: grid x, y, z, block x, y, z. kinds: one letter a parameter as the
// caller packed it (p pointer, i 32-bit int, f float, d double).
int uhno_emu_launch(int kernel, const unsigned *dims, unsigned shared, const uint64_t *args, int nargs,
                    const char *kinds, char *err, int errlen);

// Thread order between barriers: 0 forward, 1 reverse, 2 shuffled by seed.
void uhno_emu_set_order(int order, uint64_t seed);
// Worker threads that run blocks (0: one a core).
void uhno_emu_set_workers(int n);
int64_t uhno_emu_launch_count(void);
// Launches of kernel i so far.
int64_t uhno_emu_kernel_launches(int i);

// cuFFT on FFTW (single precision): type 0x2a R2C, 0x2c C2R; packed
// layouts, unnormalised.
int uhno_emu_fft_plan(int rank, const int *n, int batch, int type, int64_t *plan, char *err, int errlen);
int uhno_emu_fft_exec(int64_t plan, uintptr_t in, uintptr_t out, char *err, int errlen);
int uhno_emu_fft_destroy(int64_t plan, char *err, int errlen);

#ifdef __cplusplus
}
#endif

#endif  // UHNO_EMU_H
