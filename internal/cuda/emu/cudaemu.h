// cudaemu.h: CUDA's execution model for kernels/*.cu compiled as C++ by
// the host compiler (internal/cuda/emu). It is the one header the
// emulator puts in front of every kernel source; the kernels themselves
// are the files nvcc compiles, unchanged.
//
// What it provides:
//   - the qualifiers (__global__, __device__, __forceinline__, __shared__),
//   - the built-in variables threadIdx, blockIdx, blockDim, gridDim, read
//     from the emulated thread (a fiber) that is running,
//   - __syncthreads (the fiber yields to its block's scheduler until every
//     live thread of the block has arrived),
//   - the warp collectives (__ballot_sync, __match_any_sync, __any_sync,
//     __all_sync, __shfl*_sync, __syncwarp) in lockstep: every lane named
//     in the mask must arrive before any of them gets its result,
//   - atomics on shared and global memory, vector types, and the math and
//     bit intrinsics the kernels use (__fmul_rn and friends are plain IEEE
//     operations here: the emulator is compiled with -ffp-contract=off, so
//     nothing is fused that the kernel did not ask to fuse).
//
// __shared__ becomes thread_local: a block runs on one worker thread, so
// each worker holds one copy of every static shared array and all the
// threads (fibers) of the block share it, as on the GPU. Dynamic shared
// memory (`extern __shared__ T name[]`) resolves to a per-worker array of
// UHNO_EMU_DYN_SHARED bytes that the generated wrapper of each kernel
// file defines; the launch checks the requested size against it and fills
// the used part with NaN bytes before every block, so a read of shared
// memory nobody wrote shows up as NaN.
#ifndef UHNO_CUDAEMU_H
#define UHNO_CUDAEMU_H

// Never contract a*b+c into a fused multiply-add the kernel did not ask
// for (the build has no -mfma either, so x86-64 has none to contract to).
#pragma GCC optimize("fp-contract=off")

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

// The most dynamic shared memory a launch may ask for without opting in
// (cudaFuncAttributeMaxDynamicSharedMemorySize), the same on every GPU
// uhno supports.
#define UHNO_EMU_DYN_SHARED 49152

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __shared__ thread_local
#define __constant__ const
#define __align__(n) alignas(n)
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};
struct alignas(16) double2 {
    double x, y;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int2 make_int2(int x, int y) { return int2{x, y}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }

namespace uhno_emu {

// Thread is the state of one emulated CUDA thread that kernel code reads.
struct Thread {
    uint3 tid;
};
// Block is the state of the block a worker runs.
struct Block {
    uint3 idx;
    dim3 dim, grid;
};

extern thread_local Thread *cur_thread;
extern thread_local Block *cur_block;

// The warp collectives' kinds (all lanes of one exchange must agree).
enum WarpOp { kBallot = 1, kAny, kAll, kMatchAny, kShfl, kShflUp, kShflDown, kShflXor, kSyncWarp };

void syncthreads();
// warp_exchange deposits v for the calling lane, waits until every lane of
// `mask` has deposited (op must agree), and returns a pointer to the 32
// deposits (valid until the lane's next collective).
const uint64_t *warp_exchange(unsigned mask, uint64_t v, int op);
int lane();

template <class T>
inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffle of a value wider than 8 bytes");
    uint64_t u = 0;
    std::memcpy(&u, &v, sizeof(T));
    return u;
}
template <class T>
inline T from_bits(uint64_t u) {
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

template <class T>
inline T shfl(int op, unsigned mask, T v, int arg, int width) {
    const uint64_t *vals = warp_exchange(mask, to_bits(v), op);
    int l = lane(), base = l & ~(width - 1), src = l;
    switch (op) {
    case kShfl: src = base + (arg & (width - 1)); break;
    case kShflUp: src = (l - arg >= base) ? l - arg : l; break;
    case kShflDown: src = (l + arg < base + width) ? l + arg : l; break;
    case kShflXor: src = ((l ^ arg) < base + width) ? (l ^ arg) : l; break;
    }
    return from_bits<T>(vals[src]);
}

// Atomics: fibers of one block never run at the same time, but blocks run
// on several workers, so global memory needs real atomics.
template <class T>
inline T atomic_add(T *p, T v) {
    if constexpr (std::is_integral<T>::value) {
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    } else {
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);
        T want;
        do {
            want = old + v;
        } while (!__atomic_compare_exchange(p, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    }
}

}  // namespace uhno_emu

#define threadIdx (::uhno_emu::cur_thread->tid)
#define blockIdx (::uhno_emu::cur_block->idx)
#define blockDim (::uhno_emu::cur_block->dim)
#define gridDim (::uhno_emu::cur_block->grid)
#define warpSize 32

inline void __syncthreads() { uhno_emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) { uhno_emu::warp_exchange(mask, 0, uhno_emu::kSyncWarp); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

inline unsigned __ballot_sync(unsigned mask, int pred) {
    const uint64_t *v = uhno_emu::warp_exchange(mask, pred != 0, uhno_emu::kBallot);
    unsigned r = 0;
    for (int l = 0; l < 32; l++)
        if ((mask >> l & 1u) && v[l]) r |= 1u << l;
    return r;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == mask; }
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value) {
    const uint64_t *v = uhno_emu::warp_exchange(mask, uhno_emu::to_bits(value), uhno_emu::kMatchAny);
    uint64_t mine = v[uhno_emu::lane()];
    unsigned r = 0;
    for (int l = 0; l < 32; l++)
        if ((mask >> l & 1u) && v[l] == mine) r |= 1u << l;
    return r;
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    return uhno_emu::shfl(uhno_emu::kShfl, mask, v, src, width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return uhno_emu::shfl(uhno_emu::kShflUp, mask, v, (int)d, width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return uhno_emu::shfl(uhno_emu::kShflDown, mask, v, (int)d, width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
    return uhno_emu::shfl(uhno_emu::kShflXor, mask, v, m, width);
}

template <class T>
inline T atomicAdd(T *p, T v) { return uhno_emu::atomic_add(p, v); }

// Bits and reinterpretation.
inline unsigned __float_as_uint(float f) { return uhno_emu::from_bits<unsigned>(uhno_emu::to_bits(f)); }
inline float __uint_as_float(unsigned u) { return uhno_emu::from_bits<float>(u); }
inline int __float_as_int(float f) { return uhno_emu::from_bits<int>(uhno_emu::to_bits(f)); }
inline float __int_as_float(int i) { return uhno_emu::from_bits<float>((uint32_t)i); }
inline long long __double_as_longlong(double d) { return uhno_emu::from_bits<long long>(uhno_emu::to_bits(d)); }
inline double __longlong_as_double(long long l) { return uhno_emu::from_bits<double>((uint64_t)l); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

// Correctly rounded arithmetic (never contracted: -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }

// CUDA's classification functions are global.
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;

// CUDA's min and max are overloaded for every arithmetic type pair.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// kernel_entry is one row of the generated launch table: a kernel's name,
// its parameter kinds (one letter a parameter: p pointer, i int, u
// unsigned, f float, d double, l 64-bit integer) and a trampoline that
// unpacks the launch's 8-byte argument slots and calls the kernel for the
// current thread; dyn is the kernel file's dynamic shared array (or null).
namespace uhno_emu {
struct KernelEntry {
    const char *name;
    const char *kinds;
    void (*run)(const uint64_t *args);
    void *(*dyn)();
};

template <class T>
inline T arg(uint64_t v) {
    if constexpr (std::is_pointer<T>::value) {
        return reinterpret_cast<T>(static_cast<uintptr_t>(v));
    } else if constexpr (std::is_same<T, float>::value) {
        return from_bits<float>(v & 0xFFFFFFFFu);
    } else if constexpr (std::is_same<T, double>::value) {
        return from_bits<double>(v);
    } else if constexpr (std::is_integral<T>::value && sizeof(T) == 4) {
        return static_cast<T>(static_cast<uint32_t>(v));
    } else if constexpr (std::is_integral<T>::value && sizeof(T) == 8) {
        return static_cast<T>(v);
    } else {
        static_assert(sizeof(T) == 0, "kernel parameter of a type the emulator cannot pass");
    }
}

template <class T>
constexpr char kind() {
    if constexpr (std::is_pointer<T>::value) return 'p';
    else if constexpr (std::is_same<T, float>::value) return 'f';
    else if constexpr (std::is_same<T, double>::value) return 'd';
    else if constexpr (std::is_integral<T>::value && sizeof(T) == 4 && std::is_signed<T>::value) return 'i';
    else if constexpr (std::is_integral<T>::value && sizeof(T) == 4) return 'u';
    else if constexpr (std::is_integral<T>::value && sizeof(T) == 8) return 'l';
    else return '?';
}

template <class... P>
struct Sig {
    static constexpr char kinds[sizeof...(P) + 1] = {kind<P>()..., 0};
};

template <class... P, std::size_t... I>
inline void call_impl(void (*k)(P...), const uint64_t *a, std::index_sequence<I...>) {
    k(arg<P>(a[I])...);
}
template <class... P>
inline void call(void (*k)(P...), const uint64_t *a) {
    call_impl(k, a, std::index_sequence_for<P...>{});
}
template <class... P>
constexpr const char *kinds_of(void (*)(P...)) {
    return Sig<P...>::kinds;
}
}  // namespace uhno_emu

#define UHNO_EMU_KERNEL(name, k, dynfn) \
    { name, ::uhno_emu::kinds_of(k), [](const uint64_t *a) { ::uhno_emu::call(k, a); }, dynfn }

#endif  // UHNO_CUDAEMU_H
