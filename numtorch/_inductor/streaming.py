"""Streaming stores: how kernels write rows that will not be read again soon (Note
[Streaming stores]) — the C helpers of the kernels' prelude and the rule's numbers (the
threshold, the row limit, the cache size). codegen.py decides per stored value and emits
the loops (``Emitter._stream_row``, ``Emitter._stream_chunks``); this module emits no loop.
"""
from __future__ import annotations

import functools
import glob

from . import config

PRELUDE = r"""/* Note [Streaming stores]: copy a row computed on the stack to memory with non-temporal
   stores (the destination's lines are not read first, nor kept in cache); the unaligned
   head and the tail are plain copies. nt_stream_fence orders them before other threads'
   reads: once per thread, after its last row. */
#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__)
#define NT_STREAM_BYTES 64
#define NT_STREAM_ONE(d, s) _mm512_stream_si512((void *)(d), _mm512_loadu_si512((const void *)(s)))
#elif defined(__AVX__)
#define NT_STREAM_BYTES 32
#define NT_STREAM_ONE(d, s) _mm256_stream_si256((__m256i *)(d), _mm256_loadu_si256((const __m256i *)(s)))
#elif defined(__SSE2__)
#define NT_STREAM_BYTES 16
#define NT_STREAM_ONE(d, s) _mm_stream_si128((__m128i *)(d), _mm_loadu_si128((const __m128i *)(s)))
#endif
static inline void nt_stream(void *restrict dst, const void *restrict src, int64_t bytes) {
    char *d = dst;
    const char *s = src;
#ifdef NT_STREAM_BYTES
    int64_t head = (int64_t)(-(uintptr_t)d & (NT_STREAM_BYTES - 1));
    head = head < bytes ? head : bytes;
    __builtin_memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= NT_STREAM_BYTES; bytes -= NT_STREAM_BYTES, d += NT_STREAM_BYTES, s += NT_STREAM_BYTES)
        NT_STREAM_ONE(d, s);
#endif
    __builtin_memcpy(d, s, bytes);
}
#ifdef NT_STREAM_BYTES
#define nt_stream_fence() _mm_sfence()
#else
#define nt_stream_fence() ((void)0)
#define NT_STREAM_BYTES 16            /* no vector streaming: chunks are plain copies */
#define NT_STREAM_ONE(d, s) __builtin_memcpy((void *)(d), (const void *)(s), 16)
#endif
#define NT_CHUNK(T) (NT_STREAM_BYTES / (int64_t)sizeof(T))     /* elements per streamed vector */
/* elements of size `size` before the first NT_STREAM_BYTES boundary at or after d (all n
   where d is not aligned to its element size: then no chunk is aligned) */
static inline int64_t nt_stream_head(const void *d, int64_t size, int64_t n) {
    uintptr_t gap = -(uintptr_t)d & (NT_STREAM_BYTES - 1);
    int64_t head = gap % size ? n : (int64_t)(gap / size);
    return head < n ? head : n;
}
"""


# Note [Streaming stores]
# A kernel that writes more than a quarter of the last-level cache (a 4096x1024 float32
# layer_norm writes 16 MB; this machine's L3 is 32 MB) writes lines that are evicted
# before anyone reads them, and a plain store first reads each line for ownership: of
# layer_norm's 48 MB of memory traffic, 16 MB is reading the output's old contents. Such a
# kernel computes each row of a stored value into an aligned array on the thread's stack
# (in L1) and copies it out with non-temporal stores (`nt_stream` in the prelude), which
# write whole lines without reading them: 32 MB of traffic. One thread's layer_norm
# 4096x1024 took 1.28 instead of 1.77 ms (median CPU time, load 8), a plain copy 2x less.
# The values are the same bits; only where they are written from changes. The rule is
# glibc's memcpy's (since 2.38: non-temporal stores above a quarter of the shared cache).
# Non-temporal stores are weakly ordered, so each thread ends its share of the rows with
# an sfence (`nt_stream_fence`); a fence per row cost the whole gain. A stored value
# whose own computation calls a math function per element stores in place (erf, tanh,
# exp: the GELU*sigmoid+tanh mix): it is bound by arithmetic, not memory. The mix: 27.1-27.2
# against 28.1-29.4 ms (min of 41, one thread). A value read back from a row cache (Note
# [Row cache], codegen.py) is a load, not a call: softmax's output loop divides the exp
# its sum loop kept, so softmax streams from registers (Note [Streaming from registers]).
# Row softmax 4096x1024 in a C harness calling the generated kernel (medians of 100 calls,
# 5 alternating rounds, load 2-3): one thread's CPU 2.29-2.30 ms streamed against
# 2.93-3.08 in place, torch.compile's kernel 2.99-3.12 in the same rounds; through
# `python -m benchmarks --threads 1 --timer cpu`, one process per tree alternating, load
# 4.5: 2.24-2.39 against 2.51-2.54 ms. (The previous sitting measured the opposite, in
# place 2.25-2.35 against streamed 2.56-2.93, but through a stack row and a copy, and on
# a machine whose two threads each had their own core.) Rows longer than
# STREAM_ROW_BYTES, horizontal kernels and kernels without an outer loop also store in
# place.
# `config.cpp.stream_threshold` sets the size in bytes instead (0: always; tests).
STREAM_ROW_BYTES = 1 << 16

# Note [Streaming from registers]
# A streamed row over one inner dim is not computed into a stack row and copied: its loop
# runs in chunks of one vector (NT_CHUNK elements), each chunk computed in a small aligned
# array that gcc keeps in a register and written with one non-temporal store
# (`NT_STREAM_ONE`); the elements before the first 64-byte boundary of the row (NumPy's
# arrays start 16 or 48 bytes past one) and the tail are stored in place. This removes
# the copy's load and store per vector: layer_norm 4096x1024 float32 in a C harness
# calling the generated kernel (medians of 200 calls, best of 5 alternating rounds, load
# about 7, rows 48 bytes past a boundary as NumPy's): one thread's CPU 1.27 against 1.52 ms,
# two threads' best wall 0.61 against 1.03 ms. Through compile_graph, one process per
# version alternating, load 5-6: one thread's CPU 0.93-1.31 against 1.28-1.40 ms. At two
# threads layer_norm is then about as fast as writing its 16 MB output: a kernel that
# only streams 16 MB took 0.59 ms (best of 400 calls at load 6.6; 0.33-0.42 ms at quieter
# moments), layer_norm's best call 0.49-0.55 ms. Rows over several inner dims keep the
# stack row (their index is not one counter).


def stream_threshold():
    """Bytes a kernel must store to use streaming stores (Note [Streaming stores])."""
    if config.cpp.stream_threshold is not None:
        return config.cpp.stream_threshold
    return last_level_cache() // 4


@functools.lru_cache(maxsize=None)
def last_level_cache():
    """The largest cache's size in bytes (Linux sysfs), else 32 MB."""
    sizes = []
    for size in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(size) as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=32 << 20)
