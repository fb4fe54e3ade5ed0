// runtime.cc: the CUDA emulator's execution engine. A launch runs its
// blocks on a pool of worker threads (blocks are independent, so their
// order and placement cannot change a result); inside a block every CUDA
// thread is a fiber with its own stack, run by the block's scheduler:
//
//   - a fiber runs until it finishes or reaches __syncthreads or a warp
//     collective, then switches back to the scheduler;
//   - one pass resumes every runnable fiber, in forward, reverse or a
//     seeded shuffled order (uhno_emu_set_order), so code that reads
//     shared memory another thread writes without a barrier in between
//     sees different values under different orders;
//   - after a pass, warp collectives whose lanes have all arrived are
//     resolved (each lane gets a snapshot of all 32 deposits); when none
//     is pending and every live fiber waits at __syncthreads, the barrier
//     opens; a fiber waiting for lanes that exited or that wait at a
//     different barrier is a deadlock on a GPU and an error here.
//
// Device memory is host memory between PROT_NONE guard pages, laid out so
// that the allocation ends at the trailing guard (see uhno_emu_malloc);
// any slack and the 64 bytes before the start hold a canary checked after
// every launch. A SIGSEGV inside a kernel prints the kernel, the launch,
// the block and thread, and the allocation it ran past, then exits.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cudaemu.h"
#include "emu.h"

#include <fftw3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace uhno_emu {

thread_local Thread *cur_thread;
thread_local Block *cur_block;

// The generated launch table (table_gen.cc).
extern const KernelEntry *const kernel_files[];
extern const int kernel_file_sizes[];
extern const int kernel_file_count;

namespace {

// ---------------------------------------------------------------------------
// Errors

void fail(char *err, int errlen, const char *fmt, ...) {
    if (err == nullptr || errlen <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

// ---------------------------------------------------------------------------
// Fibers: a context switch that saves the callee-saved registers and the
// floating-point control words on the old stack and restores them from
// the new one (x86-64 System V); ucontext elsewhere.

#if defined(__x86_64__)
struct Ctx {
    void *sp;
};
extern "C" void uhno_emu_switch(Ctx *from, Ctx *to);
__asm__(R"(
.pushsection .text
.globl uhno_emu_switch
.hidden uhno_emu_switch
.type uhno_emu_switch,@function
uhno_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq (%rsi), %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size uhno_emu_switch, .-uhno_emu_switch
.popsection
)");
inline void switch_to(Ctx *from, Ctx *to) { uhno_emu_switch(from, to); }
#else
struct Ctx {
    ucontext_t uc;
};
inline void switch_to(Ctx *from, Ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

enum State { kReady, kRunning, kBarrier, kWarp, kDone };

struct Fiber {
    Ctx ctx;
    Thread thread;
    State state;
    // The pending warp collective: its mask, kind and this lane's deposit;
    // snap receives every lane's deposit when it resolves.
    unsigned mask;
    int op;
    uint64_t deposit;
    uint64_t snap[32];
};

constexpr size_t kStack = 128 << 10;  // bytes of stack a fiber

// Launch is what every worker of one launch shares.
struct Launch {
    const KernelEntry *k;
    int64_t id;
    unsigned grid[3], block[3], shared;
    const uint64_t *args;
    int order;
    uint64_t seed;
    std::atomic<int64_t> next{0};
    int64_t total = 0;
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::string err;  // the first error
};

// Worker is one OS thread's fibers and scheduler context.
struct Worker {
    std::vector<Fiber> fibers;
    char *stacks = nullptr;
    size_t nstacks = 0;
    Ctx sched;
    Fiber *running = nullptr;
    Launch *launch = nullptr;
    Block block;
    size_t page = 4096;
    std::string err;

    ~Worker() {
        if (stacks) munmap(stacks, nstacks * (kStack + page));
    }
    // ensure grows the fiber pool to n fibers, each stack above a guard page.
    void ensure(size_t n) {
        if (n <= nstacks) return;
        if (stacks) munmap(stacks, nstacks * (kStack + page));
        page = (size_t)sysconf(_SC_PAGESIZE);
        size_t len = n * (kStack + page);
        void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "cudaemu: cannot map %zu bytes of fiber stacks\n", len);
            abort();
        }
        stacks = (char *)m;
        for (size_t i = 0; i < n; i++) mprotect(stacks + i * (kStack + page), page, PROT_NONE);
        nstacks = n;
        fibers.assign(n, Fiber{});
    }
    char *stack_top(size_t i) { return stacks + i * (kStack + page) + page + kStack; }
};

thread_local Worker *cur_worker;
// cur_launch is the launch the calling thread is inside (for the fault
// handler's message).
thread_local Launch *cur_launch;

[[noreturn]] void fiber_main() {
    Worker *w = cur_worker;
    w->launch->k->run(w->launch->args);
    Fiber *f = w->running;
    f->state = kDone;
    switch_to(&f->ctx, &w->sched);
    __builtin_unreachable();
}

// start prepares fiber i to begin at fiber_main on its next resume.
void start(Worker *w, size_t i) {
    Fiber &f = w->fibers[i];
#if defined(__x86_64__)
    uint64_t *top = (uint64_t *)w->stack_top(i);  // 16-byte aligned
    // After `ret` pops fiber_main's address, rsp = top - 1 word, as after
    // a call: the System V alignment at function entry.
    top[-1] = 0;
    top[-2] = (uint64_t)(uintptr_t)&fiber_main;
    for (int r = 3; r <= 8; r++) top[-r] = 0;  // rbp rbx r12 r13 r14 r15
    uint32_t *fp = (uint32_t *)&top[-9];
    fp[0] = 0x1F80;  // MXCSR: round to nearest, all exceptions masked, no FTZ/DAZ
    fp[1] = 0x037F;  // x87 control word: the default
    f.ctx.sp = &top[-9];
#else
    getcontext(&f.ctx.uc);
    f.ctx.uc.uc_stack.ss_sp = w->stack_top(i) - kStack;
    f.ctx.uc.uc_stack.ss_size = kStack;
    f.ctx.uc.uc_link = nullptr;
    makecontext(&f.ctx.uc, (void (*)())fiber_main, 0);
#endif
    f.state = kReady;
}

// ---------------------------------------------------------------------------
// Device memory

struct Alloc {
    uintptr_t map;
    uintptr_t lo;  // first accessible byte (after the leading guard page)
    size_t maplen;
    uintptr_t start;
    size_t bytes;
    uintptr_t guard;  // first byte of the trailing guard page
    int64_t id;
};

constexpr unsigned char kCanary = 0xFF;  // NaN in every float lane
constexpr size_t kFront = 64;            // canary bytes checked before a start

std::mutex mem_mu;
std::map<uintptr_t, Alloc> allocs;  // by start
int64_t alloc_ids;

// find returns the allocation containing [p, p+n) (n may be 0: p may be
// one past the end), or null.
const Alloc *find(uintptr_t p, size_t n) {
    auto it = allocs.upper_bound(p);
    if (it == allocs.begin()) return nullptr;
    --it;
    const Alloc &a = it->second;
    if (p >= a.start && p + n <= a.start + a.bytes && p + n >= p) return &a;
    return nullptr;
}

// near names the allocation whose guard pages or canaries hold p.
std::string near(uintptr_t p) {
    char buf[256];
    for (auto &kv : allocs) {
        const Alloc &a = kv.second;
        if (p >= a.map && p < a.map + a.maplen) {
            if (p >= a.start + a.bytes)
                snprintf(buf, sizeof buf, "%zu bytes past the end of device allocation #%lld (%zu bytes at 0x%lx)",
                         (size_t)(p - (a.start + a.bytes)), (long long)a.id, a.bytes, (unsigned long)a.start);
            else if (p < a.start)
                snprintf(buf, sizeof buf, "%zu bytes before the start of device allocation #%lld (%zu bytes at 0x%lx)",
                         (size_t)(a.start - p), (long long)a.id, a.bytes, (unsigned long)a.start);
            else
                snprintf(buf, sizeof buf, "inside device allocation #%lld (%zu bytes at 0x%lx)", (long long)a.id,
                         a.bytes, (unsigned long)a.start);
            return buf;
        }
    }
    return "not in or next to any device allocation";
}

// canaries_ok checks the canary bytes around a; it names the first bad one.
bool canaries_ok(const Alloc &a, std::string *what) {
    const unsigned char *front = (const unsigned char *)a.start - kFront;
    for (size_t i = 0; i < kFront; i++) {
        if ((uintptr_t)(front + i) < a.lo) continue;
        if (front[i] != kCanary) {
            char buf[200];
            snprintf(buf, sizeof buf, "a write %zu bytes before the start of device allocation #%lld (%zu bytes at 0x%lx)",
                     kFront - i, (long long)a.id, a.bytes, (unsigned long)a.start);
            *what = buf;
            return false;
        }
    }
    for (uintptr_t p = a.start + a.bytes; p < a.guard; p++) {
        if (*(const unsigned char *)p != kCanary) {
            char buf[200];
            snprintf(buf, sizeof buf, "a write %zu bytes past the end of device allocation #%lld (%zu bytes at 0x%lx)",
                     (size_t)(p - (a.start + a.bytes)), (long long)a.id, a.bytes, (unsigned long)a.start);
            *what = buf;
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------
// Faults

struct sigaction old_segv, old_bus;
std::once_flag fault_once;

void write_all(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t k = write(2, s, n);
        if (k <= 0) return;
        s += k;
        n -= (size_t)k;
    }
}

void on_fault(int sig, siginfo_t *si, void *uc) {
    Launch *L = cur_launch;
    if (L == nullptr) {
        // Not inside an emulated kernel: the fault is Go's (or another
        // library's) to handle.
        struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
        if (old->sa_flags & SA_SIGINFO) {
            old->sa_sigaction(sig, si, uc);
        } else if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
            signal(sig, SIG_DFL);
            raise(sig);
        } else {
            old->sa_handler(sig);
        }
        return;
    }
    uintptr_t addr = (uintptr_t)si->si_addr;
    const char *rw = "access";
#if defined(__x86_64__)
    rw = (((ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
#endif
    std::string where = "(allocation table busy)";
    if (mem_mu.try_lock()) {
        where = near(addr);
        mem_mu.unlock();
    }
    Worker *w = cur_worker;
    if (w && w->stacks && addr >= (uintptr_t)w->stacks && addr < (uintptr_t)w->stacks + w->nstacks * (kStack + w->page))
        where = "a fiber's stack guard: a thread overflowed its emulated stack";
    char buf[1024];
    Thread *t = cur_thread;
    Block *b = cur_block;
    snprintf(buf, sizeof buf,
             "cudaemu: kernel %s, launch #%lld (grid %u,%u,%u, block %u,%u,%u, %u shared bytes): out-of-bounds %s at "
             "0x%lx by block (%u,%u,%u) thread (%u,%u,%u): %s\n",
             L->k->name, (long long)L->id, L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1], L->block[2],
             L->shared, rw, (unsigned long)addr, b ? b->idx.x : 0, b ? b->idx.y : 0, b ? b->idx.z : 0,
             t ? t->tid.x : 0, t ? t->tid.y : 0, t ? t->tid.z : 0, where.c_str());
    write_all(buf);
    _exit(2);
}

void install_fault_handler() {
    std::call_once(fault_once, [] {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &old_segv);
        sigaction(SIGBUS, &sa, &old_bus);
    });
}

// ---------------------------------------------------------------------------
// Block scheduling

// splitmix64, for the shuffled order.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void set_order(std::vector<int> &ord, int n, int mode, uint64_t seed, uint64_t block, uint64_t pass) {
    ord.resize(n);
    for (int i = 0; i < n; i++) ord[i] = mode == 1 ? n - 1 - i : i;
    if (mode == 2) {
        uint64_t s = mix(seed ^ mix(block ^ mix(pass)));
        for (int i = n - 1; i > 0; i--) {
            s = mix(s);
            int j = (int)(s % (uint64_t)(i + 1));
            std::swap(ord[i], ord[j]);
        }
    }
}

const char *state_name(State s) {
    switch (s) {
    case kBarrier: return "__syncthreads";
    case kDone: return "its exit";
    case kWarp: return "another warp collective";
    default: return "a running state";
    }
}

// resolve_warps releases every warp collective whose lanes have all
// arrived; it returns the number of lanes released, or -1 with w->err set
// for a collective that can never complete.
int resolve_warps(Worker *w, int n) {
    int released = 0;
    for (int base = 0; base < n; base += 32) {
        int lanes = std::min(32, n - base);
        for (int l = 0; l < lanes; l++) {
            Fiber &f = w->fibers[base + l];
            if (f.state != kWarp) continue;
            unsigned mask = f.mask;
            for (int m = 0; m < lanes; m++) {
                if (!(mask >> m & 1u)) continue;
                Fiber &g = w->fibers[base + m];
                if (g.state == kWarp && g.mask == mask && g.op == f.op) continue;
                char buf[300];
                if (g.state == kWarp)
                    snprintf(buf, sizeof buf,
                             "lanes %d and %d of warp %d wait at different warp collectives (kind %d mask 0x%08x, "
                             "kind %d mask 0x%08x)",
                             l, m, base / 32, f.op, mask, g.op, g.mask);
                else
                    snprintf(buf, sizeof buf,
                             "lane %d of warp %d waits at a warp collective (mask 0x%08x) that lane %d never reaches: "
                             "it is at %s",
                             l, base / 32, mask, m, state_name(g.state));
                w->err = buf;
                return -1;
            }
            if (!(mask >> l & 1u)) {
                char buf[200];
                snprintf(buf, sizeof buf, "lane %d of warp %d calls a warp collective with mask 0x%08x, which omits it",
                         l, base / 32, mask);
                w->err = buf;
                return -1;
            }
            uint64_t vals[32] = {0};
            for (int m = 0; m < lanes; m++)
                if (mask >> m & 1u) vals[m] = w->fibers[base + m].deposit;
            for (int m = 0; m < lanes; m++) {
                if (!(mask >> m & 1u)) continue;
                Fiber &g = w->fibers[base + m];
                memcpy(g.snap, vals, sizeof vals);
                g.state = kReady;
                released++;
            }
        }
    }
    return released;
}

// run_block runs block `linear` of the launch to completion; false with
// w->err set on a deadlock or a bad collective.
bool run_block(Worker *w, int64_t linear) {
    Launch *L = w->launch;
    unsigned bx = L->block[0], by = L->block[1], bz = L->block[2];
    int n = (int)(bx * by * bz);
    w->ensure((size_t)n);
    w->block.dim = dim3{bx, by, bz};
    w->block.grid = dim3{L->grid[0], L->grid[1], L->grid[2]};
    uint64_t gx = L->grid[0], gy = L->grid[1];
    w->block.idx = uint3{(unsigned)(linear % gx), (unsigned)(linear / gx % gy), (unsigned)(linear / (gx * gy))};
    cur_block = &w->block;
    if (L->shared > 0 && L->k->dyn) memset(L->k->dyn(), 0xFF, L->shared);
    for (int i = 0; i < n; i++) {
        start(w, (size_t)i);
        w->fibers[i].thread.tid = uint3{(unsigned)(i % bx), (unsigned)(i / bx % by), (unsigned)(i / (bx * by))};
    }
    std::vector<int> ord;
    uint64_t pass = 0;
    for (;;) {
        bool ran = false;
        set_order(ord, n, L->order, L->seed, (uint64_t)linear, pass++);
        for (int i : ord) {
            Fiber &f = w->fibers[i];
            if (f.state != kReady) continue;
            f.state = kRunning;
            w->running = &f;
            cur_thread = &f.thread;
            switch_to(&w->sched, &f.ctx);
            ran = true;
        }
        cur_thread = nullptr;
        int rel = resolve_warps(w, n);
        if (rel < 0) return false;
        if (rel > 0) continue;
        int barrier = 0, done = 0;
        for (int i = 0; i < n; i++) {
            if (w->fibers[i].state == kBarrier) barrier++;
            if (w->fibers[i].state == kDone) done++;
        }
        if (done == n) return true;
        if (barrier + done == n) {
            for (int i = 0; i < n; i++)
                if (w->fibers[i].state == kBarrier) w->fibers[i].state = kReady;
            continue;
        }
        if (!ran) {
            w->err = "the block cannot make progress (threads wait at warp collectives that never complete)";
            return false;
        }
    }
}

// ---------------------------------------------------------------------------
// Workers

struct Pool {
    std::mutex mu;
    std::condition_variable wake, idle;
    std::vector<std::thread> threads;
    Launch *job = nullptr;
    uint64_t generation = 0;
    int busy = 0;
    int want = 0;  // workers requested (0: one a core)
};
Pool pool;
std::mutex launch_mu;  // one launch at a time
std::atomic<int64_t> launches{0};
std::atomic<int64_t> kernel_launches[1024];  // by table index
std::atomic<int> order_mode{0};
std::atomic<uint64_t> order_seed{0};

void run_blocks(Launch *L) {
    if (cur_worker == nullptr) cur_worker = new Worker();
    Worker *w = cur_worker;
    w->launch = L;
    cur_launch = L;
    for (;;) {
        if (L->failed.load(std::memory_order_relaxed)) break;
        int64_t b = L->next.fetch_add(1);
        if (b >= L->total) break;
        if (!run_block(w, b)) {
            std::lock_guard<std::mutex> g(L->mu);
            if (!L->failed.exchange(true)) {
                char buf[160];
                unsigned gx = L->grid[0], gy = L->grid[1];
                snprintf(buf, sizeof buf, "block (%u,%u,%u): ", (unsigned)(b % gx), (unsigned)(b / gx % gy),
                         (unsigned)(b / ((int64_t)gx * gy)));
                L->err = buf + w->err;
            }
            break;
        }
    }
    cur_launch = nullptr;
    cur_block = nullptr;
    cur_thread = nullptr;
}

void worker_loop() {
    // Workers take no asynchronous signals (Go directs its own at its own
    // threads); the fault handler runs on an alternate stack.
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    stack_t ss;
    ss.ss_size = 64 << 10;
    ss.ss_sp = malloc(ss.ss_size);
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
    uint64_t seen = 0;
    for (;;) {
        Launch *L;
        {
            std::unique_lock<std::mutex> g(pool.mu);
            pool.wake.wait(g, [&] { return pool.generation != seen; });
            seen = pool.generation;
            L = pool.job;
        }
        run_blocks(L);
        std::lock_guard<std::mutex> g(pool.mu);
        if (--pool.busy == 0) pool.idle.notify_all();
    }
}

int workers_wanted() {
    int n = pool.want;
    if (n <= 0) {
        const char *e = getenv("UHNO_EMU_THREADS");
        n = e ? atoi(e) : 0;
    }
    if (n <= 0) n = (int)std::thread::hardware_concurrency();
    return std::max(1, std::min(n, 64));
}

// dispatch runs every block of L on the calling thread and the pool.
void dispatch(Launch *L) {
    int helpers = (int)std::min<int64_t>(workers_wanted(), L->total) - 1;
    if (helpers <= 0) {
        run_blocks(L);
        return;
    }
    {
        std::unique_lock<std::mutex> g(pool.mu);
        while ((int)pool.threads.size() < helpers) {
            pool.threads.emplace_back(worker_loop);
            pool.threads.back().detach();
        }
        // Every pool thread wakes; those past `helpers` find no blocks left
        // soon enough, which costs little.
        pool.job = L;
        pool.busy = (int)pool.threads.size();
        pool.generation++;
    }
    pool.wake.notify_all();
    run_blocks(L);
    std::unique_lock<std::mutex> g(pool.mu);
    pool.idle.wait(g, [] { return pool.busy == 0; });
}

// ---------------------------------------------------------------------------
// Kernel table

struct Table {
    std::vector<const KernelEntry *> all;
    std::unordered_map<std::string, int> index;
};
const Table &table() {
    static Table *t = [] {
        Table *t = new Table();
        for (int f = 0; f < kernel_file_count; f++)
            for (int i = 0; i < kernel_file_sizes[f]; i++) {
                if (t->all.size() >= 1024) {
                    fprintf(stderr, "cudaemu: more than 1024 kernels; raise kernel_launches\n");
                    abort();
                }
                t->index[kernel_files[f][i].name] = (int)t->all.size();
                t->all.push_back(&kernel_files[f][i]);
            }
        return t;
    }();
    return *t;
}

// kinds_match reports whether a parameter packed as `got` (Go's view) fits
// a kernel parameter of kind `want` (the C++ type's).
bool kinds_match(char want, char got) {
    if (want == got) return true;
    return (want == 'u' && got == 'i') || (want == 'l' && got == 'i');
}

struct FFTPlan {
    fftwf_plan p;
    int type;
    size_t in_bytes, out_bytes;
};
std::mutex fft_mu;  // FFTW's planner is not thread-safe
std::unordered_map<int64_t, FFTPlan> fft_plans;
int64_t fft_ids;

}  // namespace

void syncthreads() {
    Worker *w = cur_worker;
    Fiber *f = w->running;
    f->state = kBarrier;
    switch_to(&f->ctx, &w->sched);
}

const uint64_t *warp_exchange(unsigned mask, uint64_t v, int op) {
    Worker *w = cur_worker;
    Fiber *f = w->running;
    f->mask = mask;
    f->op = op;
    f->deposit = v;
    f->state = kWarp;
    switch_to(&f->ctx, &w->sched);
    return f->snap;
}

int lane() {
    Thread *t = cur_thread;
    Block *b = cur_block;
    return (int)((t->tid.x + b->dim.x * (t->tid.y + b->dim.y * t->tid.z)) & 31u);
}

}  // namespace uhno_emu

using namespace uhno_emu;

extern "C" {

int uhno_emu_malloc(int64_t bytes, uintptr_t *out, char *err, int errlen) {
    install_fault_handler();
    if (bytes < 0) {
        fail(err, errlen, "malloc of %lld bytes", (long long)bytes);
        return 1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (size_t)std::max<int64_t>(bytes, 1);
    size_t data = (n + kFront + 15 + page - 1) / page * page;
    size_t len = data + 2 * page;
    void *m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        fail(err, errlen, "out of memory: %lld bytes", (long long)bytes);
        return 1;
    }
    uintptr_t base = (uintptr_t)m;
    if (mprotect((void *)(base + page), data, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, len);
        fail(err, errlen, "out of memory: %lld bytes", (long long)bytes);
        return 1;
    }
    Alloc a;
    a.map = base;
    a.lo = base + page;
    a.maplen = len;
    a.guard = base + page + data;
    // The allocation ends right at the guard page whenever its size allows
    // natural alignment: the start is aligned to the largest power of two
    // up to 16 that divides the size, so a float buffer of any length
    // ends at the guard (one element past it faults) and a float2 buffer
    // stays 8-byte aligned. Sizes that are not a multiple of 4 keep up to
    // 3 bytes of canary slack.
    size_t align = 16;
    while (align > 4 && (size_t)bytes % align != 0) align /= 2;
    a.start = (a.guard - (size_t)bytes) & ~(uintptr_t)(align - 1);
    a.bytes = (size_t)bytes;
    // Fresh device memory holds NaNs (cuMemAlloc does not clear it).
    memset((void *)(base + page), kCanary, data);
    std::lock_guard<std::mutex> g(mem_mu);
    a.id = ++alloc_ids;
    allocs[a.start] = a;
    *out = a.start;
    return 0;
}

int uhno_emu_free(uintptr_t p, char *err, int errlen) {
    std::lock_guard<std::mutex> g(mem_mu);
    auto it = allocs.find(p);
    if (it == allocs.end()) {
        fail(err, errlen, "free of 0x%lx, which is not the start of a device allocation", (unsigned long)p);
        return 1;
    }
    std::string what;
    bool ok = canaries_ok(it->second, &what);
    munmap((void *)it->second.map, it->second.maplen);
    allocs.erase(it);
    if (!ok) {
        fail(err, errlen, "free: found %s", what.c_str());
        return 1;
    }
    return 0;
}

int uhno_emu_memcpy(uintptr_t dst, uintptr_t src, int64_t bytes, int dir, char *err, int errlen) {
    if (bytes <= 0) return 0;
    {
        std::lock_guard<std::mutex> g(mem_mu);
        if (dir != 1 && !find(dst, (size_t)bytes)) {
            fail(err, errlen, "copy of %lld bytes to device address 0x%lx: %s", (long long)bytes, (unsigned long)dst,
                 find(dst, 0) ? "runs past the end of its allocation" : "not a device address");
            return 1;
        }
        if (dir != 0 && !find(src, (size_t)bytes)) {
            fail(err, errlen, "copy of %lld bytes from device address 0x%lx: %s", (long long)bytes,
                 (unsigned long)src, find(src, 0) ? "runs past the end of its allocation" : "not a device address");
            return 1;
        }
    }
    memmove((void *)dst, (const void *)src, (size_t)bytes);
    return 0;
}

int uhno_emu_memset32(uintptr_t dst, uint32_t v, int64_t n, char *err, int errlen) {
    if (n <= 0) return 0;
    {
        std::lock_guard<std::mutex> g(mem_mu);
        if (!find(dst, (size_t)n * 4)) {
            fail(err, errlen, "memset of %lld words at device address 0x%lx: %s", (long long)n, (unsigned long)dst,
                 find(dst, 0) ? "runs past the end of its allocation" : "not a device address");
            return 1;
        }
    }
    uint32_t *p = (uint32_t *)dst;
    for (int64_t i = 0; i < n; i++) p[i] = v;
    return 0;
}

int uhno_emu_kernel_count(void) { return (int)table().all.size(); }
const char *uhno_emu_kernel_name(int i) { return table().all[i]->name; }
const char *uhno_emu_kernel_kinds(int i) { return table().all[i]->kinds; }
int uhno_emu_kernel_index(const char *name) {
    auto it = table().index.find(name);
    return it == table().index.end() ? -1 : it->second;
}

void uhno_emu_set_order(int order, uint64_t seed) {
    order_mode = order;
    order_seed = seed;
}

void uhno_emu_set_workers(int n) {
    std::lock_guard<std::mutex> g(pool.mu);
    pool.want = n;
}

int64_t uhno_emu_launch_count(void) { return launches.load(); }
int64_t uhno_emu_kernel_launches(int i) { return i >= 0 && i < 1024 ? kernel_launches[i].load() : 0; }

int uhno_emu_launch(int kernel, const unsigned *dims, unsigned shared, const uint64_t *args, int nargs,
                    const char *kinds, char *err, int errlen) {
    install_fault_handler();
    const Table &t = table();
    if (kernel < 0 || kernel >= (int)t.all.size()) {
        fail(err, errlen, "no kernel #%d", kernel);
        return 1;
    }
    const KernelEntry *k = t.all[kernel];
    int want = (int)strlen(k->kinds);
    if (nargs != want) {
        fail(err, errlen, "kernel %s takes %d parameters, launched with %d", k->name, want, nargs);
        return 1;
    }
    for (int i = 0; i < nargs; i++) {
        if (!kinds_match(k->kinds[i], kinds[i])) {
            fail(err, errlen, "kernel %s: parameter %d is of kind '%c' (%s), launched with '%c'", k->name, i,
                 k->kinds[i], k->kinds, kinds[i]);
            return 1;
        }
    }
    const unsigned *g = dims, *b = dims + 3;
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (g[0] == 0 || g[1] == 0 || g[2] == 0 || threads == 0 || g[0] > 0x7FFFFFFFu || g[1] > 65535 || g[2] > 65535 ||
        b[0] > 1024 || b[1] > 1024 || b[2] > 64 || threads > 1024) {
        fail(err, errlen, "kernel %s: invalid launch geometry: grid (%u,%u,%u), block (%u,%u,%u)", k->name, g[0], g[1],
             g[2], b[0], b[1], b[2]);
        return 1;
    }
    if (shared > UHNO_EMU_DYN_SHARED) {
        fail(err, errlen, "kernel %s: %u bytes of dynamic shared memory, more than the %d a launch may use", k->name,
             shared, UHNO_EMU_DYN_SHARED);
        return 1;
    }
    if (shared > 0 && k->dyn == nullptr) {
        fail(err, errlen, "kernel %s: %u bytes of dynamic shared memory for a kernel that declares none", k->name,
             shared);
        return 1;
    }
    {
        std::lock_guard<std::mutex> gm(mem_mu);
        for (int i = 0; i < nargs; i++) {
            if (k->kinds[i] != 'p' || args[i] == 0) continue;
            if (!find((uintptr_t)args[i], 0)) {
                fail(err, errlen, "kernel %s: parameter %d (0x%lx) is not a device address", k->name, i,
                     (unsigned long)args[i]);
                return 1;
            }
        }
    }
    std::lock_guard<std::mutex> gl(launch_mu);
    Launch L;
    L.k = k;
    L.id = ++launches;
    if (kernel < 1024) kernel_launches[kernel]++;
    memcpy(L.grid, g, sizeof L.grid);
    memcpy(L.block, b, sizeof L.block);
    L.shared = shared;
    L.args = args;
    L.order = order_mode.load();
    L.seed = order_seed.load();
    L.total = (int64_t)g[0] * g[1] * g[2];
    dispatch(&L);
    if (L.failed) {
        fail(err, errlen, "kernel %s, launch #%lld (grid %u,%u,%u, block %u,%u,%u): %s", k->name, (long long)L.id,
             g[0], g[1], g[2], b[0], b[1], b[2], L.err.c_str());
        return 1;
    }
    std::lock_guard<std::mutex> gm(mem_mu);
    for (auto &kv : allocs) {
        std::string what;
        if (!canaries_ok(kv.second, &what)) {
            fail(err, errlen, "kernel %s, launch #%lld (grid %u,%u,%u, block %u,%u,%u): %s", k->name,
                 (long long)L.id, g[0], g[1], g[2], b[0], b[1], b[2], what.c_str());
            // Restore the canaries so later launches report their own.
            const Alloc &a = kv.second;
            memset((void *)(a.start + a.bytes), kCanary, a.guard - (a.start + a.bytes));
            uintptr_t lo = std::max(a.lo, a.start - kFront);
            memset((void *)lo, kCanary, a.start - lo);
            return 1;
        }
    }
    return 0;
}

int uhno_emu_fft_plan(int rank, const int *n, int batch, int type, int64_t *plan, char *err, int errlen) {
    if (rank < 1 || rank > 3 || batch < 1 || (type != 0x2a && type != 0x2c)) {
        fail(err, errlen, "fft plan: rank %d, batch %d, type 0x%x: want rank 1..3, batch >= 1, R2C or C2R", rank,
             batch, type);
        return 1;
    }
    size_t real = 1, cplx = 1;
    for (int i = 0; i < rank; i++) {
        if (n[i] < 1) {
            fail(err, errlen, "fft plan: axis %d has size %d", i, n[i]);
            return 1;
        }
        real *= (size_t)n[i];
        cplx *= (size_t)(i == rank - 1 ? n[i] / 2 + 1 : n[i]);
    }
    std::lock_guard<std::mutex> g(fft_mu);
    float *r = fftwf_alloc_real(real * batch);
    fftwf_complex *c = fftwf_alloc_complex(cplx * batch);
    unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED | (type == 0x2c ? FFTW_DESTROY_INPUT : 0);
    fftwf_plan p = type == 0x2a
                       ? fftwf_plan_many_dft_r2c(rank, n, batch, r, nullptr, 1, (int)real, c, nullptr, 1, (int)cplx, flags)
                       : fftwf_plan_many_dft_c2r(rank, n, batch, c, nullptr, 1, (int)cplx, r, nullptr, 1, (int)real, flags);
    fftwf_free(r);
    fftwf_free(c);
    if (p == nullptr) {
        fail(err, errlen, "fft plan: FFTW could not plan rank %d, batch %d", rank, batch);
        return 1;
    }
    size_t real_bytes = real * sizeof(float) * batch, cplx_bytes = cplx * sizeof(fftwf_complex) * batch;
    FFTPlan fp{p, type, type == 0x2a ? real_bytes : cplx_bytes, type == 0x2a ? cplx_bytes : real_bytes};
    *plan = ++fft_ids;
    fft_plans[*plan] = fp;
    return 0;
}

int uhno_emu_fft_exec(int64_t plan, uintptr_t in, uintptr_t out, char *err, int errlen) {
    FFTPlan fp;
    {
        std::lock_guard<std::mutex> g(fft_mu);
        auto it = fft_plans.find(plan);
        if (it == fft_plans.end()) {
            fail(err, errlen, "fft exec: no plan %lld", (long long)plan);
            return 1;
        }
        fp = it->second;
    }
    {
        std::lock_guard<std::mutex> g(mem_mu);
        if (!find(in, fp.in_bytes) || !find(out, fp.out_bytes)) {
            fail(err, errlen, "fft exec: the %s array (%zu bytes at 0x%lx) is not inside one device allocation",
                 !find(in, fp.in_bytes) ? "input" : "output", !find(in, fp.in_bytes) ? fp.in_bytes : fp.out_bytes,
                 (unsigned long)(!find(in, fp.in_bytes) ? in : out));
            return 1;
        }
    }
    if (fp.type == 0x2a)
        fftwf_execute_dft_r2c(fp.p, (float *)in, (fftwf_complex *)out);
    else
        fftwf_execute_dft_c2r(fp.p, (fftwf_complex *)in, (float *)out);
    return 0;
}

int uhno_emu_fft_destroy(int64_t plan, char *err, int errlen) {
    std::lock_guard<std::mutex> g(fft_mu);
    auto it = fft_plans.find(plan);
    if (it == fft_plans.end()) {
        fail(err, errlen, "fft destroy: no plan %lld", (long long)plan);
        return 1;
    }
    fftwf_destroy_plan(it->second.p);
    fft_plans.erase(it);
    return 0;
}

}  // extern "C"
