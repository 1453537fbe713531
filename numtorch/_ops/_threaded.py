"""Large eager elementwise arithmetic and full sums on numtorch's threads: ``binary``,
``binary_`` and ``sum_all``.

``binary(prim, a, b)`` returns ``prim.impl(a, b)`` for the primitives add, sub, mul and div
on NumPy arrays, computed by a small C kernel on numtorch's own pool of
``numtorch.get_num_threads()`` threads where it applies (float32 or float64 operands of
one dtype, same shape and C-contiguous, or one a 0-d array) and by ``prim.impl`` itself
otherwise; ``binary_(prim, d, o)`` writes ``prim(d, o)`` into ``d`` the same way.
``sum_all(a)`` is ``np.add.reduce(a, axis=None)``, NumPy's bits, computed on the pool for
aligned C-contiguous float32/float64 arrays (Note [NumPy's sum on the pool]). The kernels
are built and cached by the compile backend's machinery (numtorch/_inductor/build.py); with
no working compiler NumPy computes. Callers call these only from ``LARGE`` (``SUM_LARGE``)
elements on (one comparison on their hot path; Note [Large elementwise ops on numtorch's
threads]). This module knows nothing of Tensors or autograd: it computes a forward value.
Compiled kernels run their chunks on the same pool (``pool_address``; Note [Kernels on the
pool], _inductor/pool.py).
"""
from __future__ import annotations

import ctypes

import numpy as np

from .._prims import elementwise as E
from .._threads import get_num_threads

# Note [Large elementwise ops on numtorch's threads]
# PyTorch splits a large elementwise op over its intra-op threads; a NumPy ufunc runs on
# the calling thread, so eager `x + y` on 1000x1000 float32 took 172 us against PyTorch's
# 66 us on a quiet 2-core machine (2 threads each; equal at 1 thread each). Eager add,
# sub, mul and div therefore run a C kernel, `out[i] = a[i] op b[i]`, on
# `get_num_threads()` threads for operands of LARGE elements or more, when that count is
# at least 2. Under load the thread policy drops the count to 1 (Note [OpenMP and BLAS
# threads], _inductor/build.py), and then NumPy's ufunc computes, exactly as before: at
# one thread nothing changes but the size check.
# Bits. Each element is one IEEE operation on the same two values as the ufunc's (the
# build flags forbid contraction; an elementwise op has nothing to reassociate, and how
# the elements are split over threads only decides which thread computes each), so the
# result equals NumPy's bit for bit at any thread count and size (tests/test_threaded.py),
# and eager, compiled and fallback results keep agreeing. Two things differ from the
# ufunc: no RuntimeWarning on overflow (PyTorch gives none either), and which payload
# survives when both operands are NaNs.
# The threads. Not OpenMP's: a parallel region ends in a barrier where the caller waits
# for every worker of the team, scheduled or not. On the shared machine a worker often is
# not (the other core runs another process): with the kernels' OpenMP runtime spinning
# briefly after each region (Note [A short spin], _inductor/openmp.py) the 1M-element add
# at 2 threads took 73 us in some minutes and 690-790 us in others (load 2.3-3.7: the
# caller spins out its count, then sleeps, and only then does the worker get its core);
# fully passive (workers sleep at once) it took 192-205 us even on a quiet machine,
# where NumPy takes 180, since waking a sleeping thread costs tens of microseconds here.
# (PyTorch's runtime, spinning 300000 loops, took 67-77 us at load 2.7-2.9 and then
# 8.0-12.0 ms per call at load 1.9-2.4 a few minutes later.) So the kernel keeps its own small pool (Note [A pool that never
# waits for a sleeping worker], in _SOURCE): the caller and the workers claim chunks
# (of 16K elements at first; now Note [Chunks and vectors of the eager ops]), a worker
# spins 20 us (now 200: Note [How long a worker spins]) for the next job before it sleeps,
# and the caller waits only for chunks a worker has claimed, so a worker that is not
# running costs the caller nothing but the claims: it computes the whole op itself.
# Measured (2 threads fixed, medians of 300 calls, wall, us, float32):
#   quiet (load 0.0-0.3), np.add(a, b) against the OpenMP version of this kernel (with
#   Note [A short spin]) in one process:
#       elements   64K    128K   256K   1M
#       NumPy      10-11  20-21  46-47  179-181
#       kernel     10-11  17     34     93-95
#   the pool, quiet (load 0.4-0.6), `binary(E.add, a, b)` against np.add(a, b):
#       elements   64K         128K        256K        1M
#       NumPy      11.0-11.3   21.9-22.5   40.0-40.5   152-188
#       pool       10.5-11.4   16.8-18.8   29.6-30.0   86-98
#   (chunks of 4K / 64K elements: 118-138 / 102-112 us at 1M; a worker spin of 0.1 ms:
#   90-102 us, no better than 20 us.)
#   eager `x + y` at 1000x1000, each version in its own process, in the same minutes:
#       load      before (NumPy)  this pool  OpenMP version  PyTorch
#       0.1-0.2   176-206         110-117    87-99           82-95
#       1.4-1.7   158-160         186-222    74 or 695       8.0 ms
#       4.3-5.2   208-331         289-887    1150-2520       16 ms
#       8.1-8.3   159-181         197-215    -               -
#   At load 1.3-1.5 the kernel alone (1M float32, NumPy 154-188 beside it) is bimodal:
#   80 us in a run where the worker stayed awake between jobs (woken for 2 of 300),
#   193-205 us in runs where it slept before almost every job and, woken, shared the
#   caller's core (the process's CPU time then equals its wall time). (A variant waking
#   the worker after each job instead of before: 83-96 us, or 241 us when it never ran.)
# So on a quiet machine the pool gains what the OpenMP version did, less about 20 us;
# with another process on the second core it costs up to 1.4x NumPy's time at 2 threads
# (2x at load 5), where OpenMP's barrier cost up to 10x and PyTorch's spinning runtime
# 50x; the adaptive policy runs one thread under real load (then NumPy computes).
# (Since then the worker keeps off the caller's CPU and spins longer, and with another
# process on the second core the add took 0.5-0.65x NumPy's time: Notes [Workers off
# the caller's CPU] and [How long a worker spins].)
# LARGE = 128K is the first size measured to win, quiet, with either version.
# Why C and not a Python pool over the ufunc (ufuncs release the GIL): waking a Python
# thread costs about 50 us here, so splitting the 1000x1000 add over a ThreadPoolExecutor
# took 150-207 us against 164-178 us unsplit on a quiet machine, and was slower at every
# size under load (42 against 14 us at 1e5 elements, 233 against 150 at 1e6, load 8.3).
# Scope. The fast path's calls (two eager tensors of one dtype, or a tensor and a Python
# number, with no autograd recording) and the in-place `add_`/`sub_`/`mul_` (`+=`) take
# it; ops recorded by autograd (`bind`) compute with NumPy, and their backward's
# cotangent arithmetic takes it. The caller's check is one comparison of `.size` (about
# 40 ns on a 10-element op). Where the kernel does not apply (other dtypes, shapes that
# broadcast other than a 0-d operand, strided views, an in-place operand overlapping the
# destination other than exactly), NumPy computes.

LARGE = 1 << 17           # elements; Note [Large elementwise ops on numtorch's threads]
SUM_LARGE = 1 << 14       # elements; Note [NumPy's sum on the pool]

# Note [NumPy's sum on the pool]
# Eager `x.sum()` (and `x.mean()`, its sum over the count) of a float tensor is
# `np.add.reduce(d, axis=None)`, on one thread; PyTorch splits a large sum over its
# threads. A split sum must keep NumPy's bits (the eager result, the compiled fallback's,
# the tests' references). NumPy 2.4 computes the reduction of an aligned contiguous
# float32/float64 array (any number of dims: the iterator coalesces them) as
# `0 + pairwise_sum(a, n)` in one inner-loop call (the output starts at the identity +0.0,
# not at a[0]: so a sum of -0.0s is +0.0; no buffering, the inner loop grows to the whole
# array), and pairwise_sum (numpy/_core/src/umath/loops_utils.h.src) sums n < 8 elements
# in order from 0, n <= 128 in 8 interleaved accumulators combined as a fixed tree plus
# the tail in order, and above 128 splits at n2 = n/2 rounded down to a multiple of 8 and
# adds the halves' sums. Checked before relying on it: a transcription of that rule in
# NumPy scalar arithmetic gave np.add.reduce's bits for all 499 sizes tried (1-299 and
# random up to 20,000, float32 and float64, magnitudes 1e-3..1e3), and
# `0 + (reduce(a[:n2]) + reduce(a[n2:]))` for 620 arrays up to 1e7 elements and 2-D/3-D
# shapes; the first-element start (`a[0] + pairwise(a[1:])`) matched only 133-154 of 499.
# So `nt_sum` is that rule in C (the build flags forbid reassociating or contracting, so
# the additions are NumPy's, whatever the vector width), cut at the recursion's own split
# points into up to 16 leaves (4 per thread, at least 32K elements each) claimed one at a
# time on the pool, the leaves' sums then added back up the same tree: the same additions
# as NumPy's in the same order at any thread count. Two differences: where two NaNs meet,
# the compiler's vector add may keep the other one's payload (IEEE leaves it open; tests
# compare NaNs as NaNs), and no RuntimeWarning on overflow (PyTorch gives none). A NumPy
# that sums otherwise is caught when the kernel loads (`_sums_as_numpy`: 22 sums of 0 to
# 4,099 elements, each cut 3 ways; under 1 ms), and then NumPy computes every sum. Unaligned, non-C-contiguous and other dtypes
# go to NumPy (which buffers or reorders those).
# The C loop is also faster than NumPy's on one thread (its 8 accumulators vectorize;
# NumPy's loop, with a prefetch in it, did not here). Minimum of 15 interleaved repeats,
# float32, us, under load 7.4 (two threads could not be measured then):
#       elements     1K     4K     16K    64K    256K   1M     4M     1e7
#       NumPy        1.19   1.75   3.91   12.9   46.2   172    728    2071
#       nt_sum (1)   2.33   2.61   3.52   7.33   21.2   67.4   475    1567
# (nt_sum's fixed cost, ~1.2 us more than np.add.reduce's, is the ctypes call and the 0-d
# output.) SUM_LARGE = 16K, where the C loop first wins. On two threads (1 and 2 threads
# alternating in one process, 60 blocks of 30 calls each, load 5.9, us; the minimum and
# 10th percentile are the calls that found the worker running, the median those that did
# not, most of them under this load):
#       elements         64K              128K             256K             1M
#       one thread       5.8 / 5.9 / 6.0  9.3 / 9.4 / 9.6  18.4/18.9/19.3   59.8/60.7/62.0
#       two threads      4.4 / 4.6 / 6.5  6.2 / 6.5 / 10.5 10.2/10.6/19.7   33.0/34.1/61.3
# so leaves of at least SUM_LEAF = 32K elements (the pool from 64K on): a gain of a
# quarter where the worker runs against 0.5-0.9 us (the wake-up) where it does not.

# Note [Chunks and vectors of the eager ops]
# Two changes to the kernel above, for the 1000x1000 float32 add at 2 threads, which was
# 1.07-1.15x PyTorch's (PyTorch ~70 us). (1) Vectors: with -march=native GCC vectorized
# the loops with 512-bit registers on this AMD EPYC, and that loop ran 1M float32 adds
# in 161-168 us against NumPy's 149-150 (one thread, minimum of 100-200 blocks of 10-20
# calls, in one process, load 1.5-2.4); asking GCC for 256-bit vectors on `compute` only
# (an x86 GCC attribute; nothing changes elsewhere): 140-157 us, NumPy's time. (2) Chunks:
# a fixed chunk (16K elements) made 61 claims per 1M-element op, each a compare-and-swap
# on a line the other thread reads, and let one thread idle while the other finished its
# last chunk; larger fixed chunks cut the claims but lengthen that tail. The eager ops
# now claim guided shares: each claim takes 1/(2 threads) of the chunks left, at least
# one chunk of 4K elements, so the first claims are large and the last small (about 20
# claims at 1M elements, with a tail of at most 4K elements); `state` and `done`, written
# by every claim and every finished share, sit on cache lines of their own. A worker
# that is not running still costs the caller nothing: the caller claims what is left.
# Measured in one process, kernels interleaved, 2 threads, float32, per call (us), 150-200
# rounds of 10 calls under load 4.4-7 (no quiet minutes were to be had this sitting;
# minimum / 10th percentile):
#       elements   16K chunks (before)   64K chunks   guided (now)
#       128K       20.5 / 20.8           19.7 / 20.1  19.7 / 19.8
#       256K       37.9 / 38.0           35.8 / 39.3  35.8 / 35.9
#       1M         118.9 / 144.0         93.1 / 146.9 80.3 / 104.2
# Compiled kernels' chunks (nt_pool_call) are still claimed one at a time: their size is
# the kernel's choice (Note [Kernels on the pool], _inductor/pool.py). Each element is
# still one IEEE operation on the same two values, so the bits are unchanged.

# Note [Workers off the caller's CPU]
# The pool's worker sleeps once it has waited SPIN_NS for a job; the caller's futex wake
# then lets the kernel place it. With the other core busy (another process), Linux put it
# on the caller's own CPU: measured with per-job timestamps and CPU ids (sched_getcpu) from
# an instrumented copy of this kernel, 2000-call loops of eager `x + y` at 1000x1000 under
# load 1.8: 97-100% of jobs woke a sleeping worker, and each woken worker that ran, ran on
# the caller's CPU (49-50% of jobs), preempted the caller, took 95% of the chunks at one
# core's speed and then spun out its 20 us there (job 201-214 us median, NumPy's add 155-
# 170); in the other half it never ran before the next job. So the caller records its CPU
# with each job (`caller_cpu`) and each worker keeps to the CPUs the caller may run on less
# that one (`keep_off_caller`: a `sched_setaffinity` on the worker's own thread, only when
# the caller's CPU changed, checked when a job arrives and every 256 spins); woken, it
# queues on the other core and, in the blocks below with that core busy, still took part
# in 76% of the calls (how soon the scheduler runs it there was not measured apart), and
# a caller that moves onto a worker's CPU pushes the worker off it at the next check.
# Measured in one process, the two kernels alternating in blocks of 300 calls (eager
# `x + y`, 1000x1000 float32, 2 threads, 60 s, load 1.6; per-call time from Python):
#                       blocks with the other core busy     blocks with it idle
#       before          195 us median, worker ran in 65%    78 us, 100%
#       off the CPU     84 us, worker ran in 76%            79 us, 100%
# (a 100 us spin instead of 20: 81 us and 86%, at five times the spinning.) In separate
# processes, alternating, under load 1.9-3.6: 200 us (before) and 84 us median per call;
# PyTorch's 90 us. The caller's own thread, which is the user's, is never pinned. A
# process allowed one CPU computes on the caller alone: a worker there could only take
# turns with it.

# Note [How long a worker spins]
# A worker that finds no job spins SPIN_NS, then sleeps; one asleep must be woken (a futex
# call by the caller) and then scheduled, which on a busy core took 100-180 us (median,
# load 8.7, traces as in Note [Workers off the caller's CPU]) against a job of 60-80 us
# at two threads: the job was mostly over by then. 20 us was chosen on a quiet machine,
# where the worker stays awake between back-to-back calls anyway (no spin measured
# better there). Under load, the same loop (eager `x + y`, 1000x1000 float32, 2 threads),
# the kernels alternating in one process in blocks of 300 calls, 90 s per run, median of
# the blocks' medians per call (us) and the share of calls the worker took part in:
#       spin      20 us       50 us       100 us      200 us      500 us      1 ms
#       load 8.3  170 / 51%   131 / 62%   -           102 / 69%   -           -
#       load 8.0  -           -           90 / 75%    87 / 82%    -           97 / 69%
#       load 10   174 / 55%   -           -           86 / 77%    98 / 66%    -
# The process's CPU time over its wall time hardly moved (0.38 at 20 us, 0.40-0.41 at
# 200-500 us): a spinning worker on a contended core takes its fair share, no more. Longer
# than 200 us was worse in both runs that tried it (not explained; perhaps a thread that
# ran longer waits longer to be scheduled once it sleeps), so SPIN_NS = 200 us: on a quiet
# machine a lone large op costs the other core up to 200 us of spinning after it
# (PyTorch's libgomp spins 300,000 `pause` loops, about 14 ms on this CPU). With more
# threads than the caller's CPUs, workers spin a tenth of that (20 us, as before): there a
# spinning worker holds a CPU that a computing one needs (libgomp cuts its spin to 100
# loops then).

_SOURCE = r"""
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

/* Note [A pool that never waits for a sleeping worker]
   A job is published as a number in `state` (with its next unclaimed chunk) and in
   `published` (the futex sleeping workers wait on). The caller and the workers awake claim
   chunks of CHUNK elements (for eager ops a guided share of those left: Note [Chunks and
   vectors of the eager ops]) by compare-and-swap on `state`; a worker reads the job's fields
   before its claim and uses them only if the claim succeeds, which proves the job was
   still that one (job numbers only grow). The caller returns once `done` counts every
   chunk: it waits only for chunks a worker claimed, so a worker that is not scheduled
   claims nothing and costs nothing. One job at a time (`busy`); another caller meanwhile
   computes alone. A forked child starts its own workers. Workers spin SPIN_NS for the
   next job, then sleep on the futex; the caller wakes sleepers only if there are some.
   Workers keep off the CPU the caller last ran on (Note [Workers off the caller's CPU]). */
#define CHUNK 4096                 /* Note [Chunks and vectors of the eager ops] */
#define MAX_WORKERS 63
#define SPIN_NS 200000     /* a worker spins this long for the next job, then sleeps:
                              Note [How long a worker spins] (_threaded.py) */

#define NT_LOOP(T, OP, AS, BS)                                                          \
    { T *o = out; const T *x = a, *y = b;                                               \
      _Pragma("omp simd")                                                               \
      for (ptrdiff_t i = lo; i < hi; i++) o[i] = x[i * AS] OP y[i * BS]; }
#define NT_FORMS(K, T, OP) \
    case K: NT_LOOP(T, OP, 1, 1) break; case K + 1: NT_LOOP(T, OP, 1, 0) break; \
    case K + 2: NT_LOOP(T, OP, 0, 1) break;

/* kind = 12 * dtype (0 float32, 1 float64) + 3 * op (add, sub, mul, div) + form (vv, vs, sv) */
typedef void (*nt_part)(void *const *, int64_t);

/* 256-bit vectors: Note [Chunks and vectors of the eager ops] (GCC's x86 attribute; other
   compilers and targets vectorize as their flags say) */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("prefer-vector-width=256")))
#endif
static void compute(int kind, void *out, const void *a, const void *b, ptrdiff_t lo, ptrdiff_t hi) {
    if (kind < 0) {          /* a compiled kernel's chunks lo..hi (nt_pool_call) */
        for (ptrdiff_t c = lo; c < hi; c++) ((nt_part)out)((void *const *)a, c);
        return;
    }
    switch (kind) {
        NT_FORMS(0, float, +) NT_FORMS(3, float, -) NT_FORMS(6, float, *) NT_FORMS(9, float, /)
        NT_FORMS(12, double, +) NT_FORMS(15, double, -) NT_FORMS(18, double, *)
        NT_FORMS(21, double, /)
    }
}

/* state, done and the rest on cache lines of their own: each claim writes state and each
   finished chunk done (Note [Chunks and vectors of the eager ops]) */
static _Alignas(64) _Atomic uint64_t state;  /* (job number << 32) | next chunk to claim */
static _Alignas(64) _Atomic uint32_t done;   /* chunks finished of the current job */
static _Alignas(64) _Atomic uint32_t published; /* the job number, the futex sleeping workers wait on */
static _Atomic int sleepers;
static _Atomic int job_kind, job_workers, job_split;
static _Atomic uintptr_t job_out, job_a, job_b;
static _Atomic ptrdiff_t job_n, job_chunk;
static _Atomic int caller_cpu = -1;      /* the CPU the caller ran on at its last job */
static cpu_set_t allowed;                /* the CPUs the caller may run on, when workers start */
static int n_allowed;                    /* how many */
static int started;                      /* workers started (by the caller holding busy) */
static pid_t owner;                      /* the process that started them */
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Claim and compute chunks of the job numbered `job` while any are left; the job's fields
   are read before each claim and used only if the claim succeeds, i.e. if the job was
   still that one, with that chunk unclaimed, after they were read. */
static void work(uint32_t job) {
    for (;;) {
        uint64_t s = atomic_load(&state);
        if ((uint32_t)(s >> 32) != job) return;
        int kind = atomic_load(&job_kind);          /* acquire: Note [Retiring a job] */
        void *out = (void *)atomic_load(&job_out);
        const void *a = (const void *)atomic_load(&job_a);
        const void *b = (const void *)atomic_load(&job_b);
        ptrdiff_t n = atomic_load(&job_n), size = atomic_load(&job_chunk);
        int split = atomic_load(&job_split);
        ptrdiff_t lo = (ptrdiff_t)(uint32_t)s * size;
        if (lo >= n) return;
        uint32_t take = 1;       /* chunks: 1, or a 1/split share of those left (guided) */
        if (split) {
            ptrdiff_t left = (n - lo + size - 1) / size;
            if (left / split > 1) take = (uint32_t)(left / split);
        }
        if (!atomic_compare_exchange_weak(&state, &s, s + take)) continue;
        ptrdiff_t hi = lo + (ptrdiff_t)take * size;
        compute(kind, out, a, b, lo, hi < n ? hi : n);
        atomic_fetch_add(&done, take);
    }
}

/* Note [Workers off the caller's CPU] (_threaded.py): move this worker to the CPUs the
   caller may run on, less the one it ran on last, when that one changed since `*away` */
static void keep_off_caller(int *away) {
    int c = atomic_load(&caller_cpu);
    if (c == *away || c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed)) return;
    cpu_set_t others = allowed;
    CPU_CLR(c, &others);
    sched_setaffinity(0, sizeof others, &others);   /* this thread; moves it off c now */
    *away = c;
}

/* how long to spin: SPIN_NS, or a tenth of it when the last job had more threads than
   the caller may use CPUs (a spinning worker would then hold a CPU another one needs) */
static uint64_t spin_ns(void) {
    return atomic_load(&job_workers) < n_allowed ? SPIN_NS : SPIN_NS / 10;
}

static void *worker(void *arg) {
    int index = (int)(intptr_t)arg, away = -1;
    sigset_t all;                        /* signals are the interpreter's threads' to take */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    uint32_t seen = atomic_load(&published);
    for (;;) {
        uint64_t until = now_ns() + spin_ns();
        uint32_t job;
        for (int k = 0; (job = atomic_load(&published)) == seen; k++) {
            if ((k & 255) == 255) keep_off_caller(&away);
            if ((k & 255) == 255 && now_ns() > until) {
                atomic_fetch_add(&sleepers, 1);
                if (atomic_load(&published) == seen)
                    syscall(SYS_futex, &published, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
                atomic_fetch_sub(&sleepers, 1);
                until = now_ns() + spin_ns();
            }
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        seen = job;
        keep_off_caller(&away);
        if (index < atomic_load(&job_workers)) work(job);
    }
    return NULL;
}

/* compute(kind, out, a, b, 0, n) in chunks of `size` on up to `threads` threads (the
   caller and threads - 1 workers); serially when the pool is in use by another caller. */
static void run(int kind, void *out, const void *a, const void *b, ptrdiff_t n, ptrdiff_t size,
                int threads) {
    ptrdiff_t chunks = (n + size - 1) / size;
    if (threads > MAX_WORKERS + 1) threads = MAX_WORKERS + 1;
    if (threads < 2 || chunks < 2 || chunks > 0x7fffffff || pthread_mutex_trylock(&busy) != 0) {
        compute(kind, out, a, b, 0, n);
        return;
    }
    if (owner != getpid()) {             /* a forked child has none of its parent's workers */
        owner = getpid();
        started = 0;
        if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
            n_allowed = CPU_COUNT(&allowed);
    }
    if (n_allowed < 2) {         /* one CPU (or none known): workers would only take turns */
        pthread_mutex_unlock(&busy);
        compute(kind, out, a, b, 0, n);
        return;
    }
    while (started < threads - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&t, &attr, worker, (void *)(intptr_t)started);
        pthread_attr_destroy(&attr);
        if (failed) break;
        pthread_setname_np(t, "numtorch-pool");     /* as `top -H` and tests see them */
        started++;
    }
    /* Note [Retiring a job]: a worker still inside work() for the previous job may have
       loaded `state` before its last chunk was claimed and be about to read the fields;
       if it read this job's fields and then found `state` unchanged, its claim would
       succeed and compute a chunk with a mix of the two jobs' pointers (writing past the
       old output) and count it in this job's `done`. So `state` moves to a value no claim
       can match (the new job number, no chunk left) before any field changes, and the
       fields are written and read with sequentially consistent (release/acquire) order:
       a worker that sees a new field value then sees the retired `state`, and its CAS
       fails. Only then is the job published with chunk 0 claimable. */
    uint32_t job = atomic_load(&published) + 1;
    atomic_store(&state, ((uint64_t)job << 32) | 0xffffffffu);
    atomic_store(&job_kind, kind);
    atomic_store(&job_out, (uintptr_t)out);
    atomic_store(&job_a, (uintptr_t)a);
    atomic_store(&job_b, (uintptr_t)b);
    atomic_store(&job_n, n);
    atomic_store(&job_chunk, size);
    atomic_store(&job_workers, threads - 1);
    atomic_store(&job_split, kind >= 0 ? 2 * threads : 0);   /* guided for eager ops */
    atomic_store(&done, 0);
    atomic_store(&caller_cpu, sched_getcpu());
    atomic_store(&state, (uint64_t)job << 32);
    atomic_store(&published, job);
    if (atomic_load(&sleepers) > 0)
        syscall(SYS_futex, &published, FUTEX_WAKE_PRIVATE, MAX_WORKERS, NULL, NULL, 0);
    work(job);
    /* every chunk is claimed: wait for those a worker claimed and is computing */
    for (int k = 0; atomic_load(&done) < (uint32_t)chunks; k++) {
        if (k > 4096) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else __builtin_ia32_pause();
#endif
    }
    pthread_mutex_unlock(&busy);
}

/* NumPy's pairwise sum (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum), the same
   additions in the same order: Note [NumPy's sum on the pool] (_threaded.py) */
#define NT_PAIRWISE(T, S)                                                                \
static T pairwise_##S(const T *a, ptrdiff_t n) {                                       \
    if (n < 8) {                                                                       \
        T res = 0.;                                                                    \
        for (ptrdiff_t i = 0; i < n; i++) res += a[i];                                 \
        return res;                                                                    \
    }                                                                                  \
    if (n <= 128) {                                                                    \
        T r[8], res;                                                                   \
        ptrdiff_t i;                                                                   \
        for (int j = 0; j < 8; j++) r[j] = a[j];                                       \
        for (i = 8; i < n - (n % 8); i += 8)                                           \
            for (int j = 0; j < 8; j++) r[j] += a[i + j];                              \
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));       \
        for (; i < n; i++) res += a[i];                                                \
        return res;                                                                    \
    }                                                                                  \
    ptrdiff_t n2 = n / 2;                                                              \
    n2 -= n2 % 8;                                                                      \
    return pairwise_##S(a, n2) + pairwise_##S(a + n2, n - n2);                         \
}
NT_PAIRWISE(float, f32)
NT_PAIRWISE(double, f64)

/* a sum's leaves: the subtrees of pairwise_sum's recursion `depth` splits down, each one
   chunk of the pool's job, their sums added back up the same tree */
#define SUM_LEAVES 16
struct sum_job {
    const char *a;
    int f64;
    ptrdiff_t lo[SUM_LEAVES], n[SUM_LEAVES];
    float rf[SUM_LEAVES];
    double rd[SUM_LEAVES];
};

static void sum_leaf(void *const *args, int64_t c) {
    struct sum_job *j = (struct sum_job *)args;
    if (j->f64) j->rd[c] = pairwise_f64((const double *)j->a + j->lo[c], j->n[c]);
    else j->rf[c] = pairwise_f32((const float *)j->a + j->lo[c], j->n[c]);
}

static void sum_split(struct sum_job *j, int *leaves, ptrdiff_t lo, ptrdiff_t n, int depth) {
    if (depth == 0 || n <= 128) {
        j->lo[*leaves] = lo;
        j->n[*leaves] = n;
        (*leaves)++;
        return;
    }
    ptrdiff_t n2 = n / 2;
    n2 -= n2 % 8;
    sum_split(j, leaves, lo, n2, depth - 1);
    sum_split(j, leaves, lo + n2, n - n2, depth - 1);
}

#define NT_SUM_UP(T, S, R)                                                               \
static T sum_up_##S(struct sum_job *j, int *leaf, ptrdiff_t n, int depth) {            \
    if (depth == 0 || n <= 128) return j->R[(*leaf)++];                                \
    ptrdiff_t n2 = n / 2;                                                              \
    n2 -= n2 % 8;                                                                      \
    T left = sum_up_##S(j, leaf, n2, depth - 1);                                       \
    return left + sum_up_##S(j, leaf, n - n2, depth - 1);                              \
}
NT_SUM_UP(float, f32, rf)
NT_SUM_UP(double, f64, rd)

/* *out = np.add.reduce(a) for the n contiguous, aligned elements at a (float32, or
   float64 if f64): 0 + pairwise_sum(a, n), its 2^depth leaves (depth <= 4; for depth < 0,
   up to 4 per thread of at least SUM_LEAF elements) on up to `threads` threads */
#define SUM_LEAF 32768
void nt_sum(int f64, void *out, const void *a, ptrdiff_t n, int depth, int threads) {
    struct sum_job j;
    int leaves = 0, leaf = 0;
    j.a = (const char *)a;
    j.f64 = f64;
    if (depth < 0)
        for (depth = 0; threads > 1 && depth < 4 && (2 << depth) <= 4 * threads
                        && (n >> (depth + 1)) >= SUM_LEAF; depth++) {}
    if (depth > 4) depth = 4;
    sum_split(&j, &leaves, 0, n, depth);
    run(-1, (void *)sum_leaf, &j, 0, leaves, 1, threads);
    if (f64) *(double *)out = 0. + sum_up_f64(&j, &leaf, n, depth);
    else *(float *)out = (float)0. + sum_up_f32(&j, &leaf, n, depth);
}

/* out[i] = a[i] op b[i] for i < n (kind: see compute) */
void nt_binary(int kind, void *out, const void *a, const void *b, ptrdiff_t n, int threads) {
    run(kind, out, a, b, n, CHUNK, threads);
}

/* part(args, c) for each chunk c < chunks of a compiled kernel, each chunk claimed by one
   thread (Note [Kernels on the pool], numtorch/_inductor/pool.py) */
void nt_pool_call(nt_part part, void *const *args, int64_t chunks, int threads) {
    run(-1, (void *)part, args, 0, chunks, 1, threads);
}
"""

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_FORMS = ("vv", "vs", "sv")
# (prim, dtype, form) -> the kernel's `kind` (see compute() in _SOURCE)
_KINDS = {(prim, dt, form): 12 * i + 3 * j + k
          for i, dt in enumerate((_F32, _F64))
          for j, prim in enumerate((E.add, E.sub, E.mul, E.div))
          for k, form in enumerate(_FORMS)}
_run = []                # [nt_binary] once loaded
_pool = []               # [the address of nt_pool_call] once loaded
_sum = []                # [nt_sum] once loaded and found to sum as NumPy does
_unavailable = []        # holds True once loading failed (no compiler, build error)
_from_buffer, _addressof = ctypes.c_char.from_buffer, ctypes.addressof


def _load():
    from .._inductor import build
    lib = build.load_or_none(_SOURCE, "eager elementwise ops on numtorch's threads")
    if lib is None:
        _unavailable.append(True)
        return
    _pool.append(ctypes.cast(lib.nt_pool_call, ctypes.c_void_p).value)
    fn = lib.nt_binary
    fn.restype = None
    fn.argtypes = (ctypes.c_int,) + (ctypes.c_void_p,) * 3 + (ctypes.c_ssize_t, ctypes.c_int)
    fn_sum = lib.nt_sum
    fn_sum.restype = None
    fn_sum.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ssize_t,
                       ctypes.c_int, ctypes.c_int)
    if _sums_as_numpy(fn_sum):
        _sum.append(fn_sum)
    _run.append(fn)


def _sums_as_numpy(fn):
    """Whether ``nt_sum`` gives ``np.add.reduce``'s bits on a few arrays, split into leaves
    or not (Note [NumPy's sum on the pool]): False if this NumPy sums otherwise."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal(4099) * np.exp(rng.uniform(-9, 9, 4099))
    for dt in (_F32, _F64):
        whole = base.astype(dt)
        for n in (0, 1, 7, 8, 9, 127, 128, 129, 136, 1000, 4099):   # 4099: 5 levels of splits
            a = whole[:n]
            ref = np.add.reduce(a)
            for depth in (0, 1, 3):
                out = np.empty((), dt)
                fn(dt is _F64, out.ctypes.data, a.ctypes.data, n, depth, 1)
                if out.tobytes() != ref.tobytes():
                    from .._threads import _log
                    _log("numtorch: NumPy %s sums %s elements otherwise than its pairwise sum "
                         "did; NumPy computes large sums", np.__version__, n)
                    return False
    return True


def available() -> bool:
    """Whether the threaded kernels can run here (loads them on first call)."""
    if not _run and not _unavailable:
        _load()
    return bool(_run)


def pool_address():
    """The address of ``nt_pool_call(part, args, chunks, threads)``, which runs a compiled
    kernel's chunks on this pool (Note [Kernels on the pool], _inductor/pool.py), or None
    where the pool cannot be built."""
    return _pool[0] if available() else None


def _address(x):
    # Through the buffer protocol where writeable: ndarray.ctypes builds Python objects.
    return _addressof(_from_buffer(x)) if x.flags.writeable else x.ctypes.data


def _kernel(prim, a, b):
    """(kind, form, threads) of the kernel for ``prim(a, b)`` on numtorch's threads, or
    None where NumPy computes."""
    dt = a.dtype
    if (dt is not _F32 and dt is not _F64) or b.dtype is not dt:
        return None
    if a.shape == b.shape:
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        form = "vv"
    elif not b.shape and a.flags.c_contiguous:
        form = "vs"
    elif not a.shape and b.flags.c_contiguous:
        form = "sv"
    else:
        return None
    kind = _KINDS.get((prim, dt, form))
    if kind is None:
        return None
    threads = get_num_threads()
    if threads < 2 or _unavailable or not available():
        return None
    return kind, form, threads


def sum_all(a):
    """``np.add.reduce(a, axis=None)``, the same bits, for a NumPy array ``a``: for an aligned
    C-contiguous float32 or float64 array on numtorch's threads (Note [NumPy's sum on the
    pool]), else by NumPy. Callers call it only from SUM_LARGE elements on."""
    dt = a.dtype
    if (dt is _F32 or dt is _F64) and a.flags.c_contiguous and a.flags.aligned and (
            _sum or (not _run and not _unavailable and available() and _sum)):
        out = np.empty((), dt)
        _sum[0](dt is _F64, _addressof(_from_buffer(out)), _address(a), a.size, -1,
                get_num_threads())
        return out
    return np.add.reduce(a, axis=None)


def binary(prim, a, b):
    """``prim.impl(a, b)`` for NumPy arrays ``a``, ``b`` of a broadcast-compatible shape,
    on numtorch's threads where the kernel applies (Note [Large elementwise ops on
    numtorch's threads]), else by ``prim.impl``."""
    k = _kernel(prim, a, b)
    if k is None:
        return prim.impl(a, b)
    kind, form, threads = k
    out = np.empty(b.shape if form == "sv" else a.shape, a.dtype)
    _run[0](kind, _addressof(_from_buffer(out)), _address(a), _address(b), out.size, threads)
    return out


def binary_(prim, d, o):
    """``prim.ufunc(d, o, out=d)``: ``o`` (an array of ``d``'s dtype that broadcasts to
    ``d``'s shape) combined into the writeable array ``d``, on numtorch's threads where the
    kernel applies (not for an ``o`` that overlaps ``d`` other than exactly)."""
    k = _kernel(prim, d, o)
    if k is not None and k[1] != "sv" and d.flags.writeable:
        pd, po = _addressof(_from_buffer(d)), _address(o)
        # o is d itself or lies apart from it (else NumPy, which copies what overlaps)
        if (pd == po and o.shape == d.shape) or not (pd < po + o.nbytes and po < pd + d.nbytes):
            _run[0](k[0], pd, pd, po, d.size, k[2])
            return d
    return prim.ufunc(d, o, out=d)
