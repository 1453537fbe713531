"""How a parallel kernel runs on numtorch's thread pool: its loops cut into chunks, the
chunk function the generator writes, and handing each kernel library the pool.

codegen.py decides which kernels are parallel and writes their loops; this module turns
those loops (``pieces``) into ``<kernel>_part(b, c)``, computing chunk ``c``, and the
kernel's body that runs the chunks (``nt_parallel``). The pool itself (threads, claims,
waiting) is the eager kernels' pool in numtorch/_ops/_threaded.py; this module starts no
thread.

Note [Kernels on the pool]
Parallel kernels used OpenMP regions. A region ends in a barrier where the caller waits
for every worker of the team, scheduled or not, and a sleeping worker (Note [A short
spin], openmp.py) must first be woken. Right after a two-thread BLAS product OpenBLAS's
own worker is still spinning on the other core, so the kernels' worker waited for it:
measured at 2 threads (wall medians of 400 alternating calls, float32 p + g * -0.01 right
after a 128x784 @ 784x512 product, load 2.9-4.0): 32K elements 83 us in a region against
40 us on one thread, 128K 2462 against 139, 512K 2637 against 403. With no product
before, a region still lost at that load (128K: 38 against 23 us). The compiled MLP
step's SGD kernel (535K parameters, its graph has no product, so it ran in a region)
took 164-2406 us against 133-180 us on one thread in the same step.
So a parallel kernel's loops are cut into chunks of about CHUNK_WORK elements, written as
one function ``part(b, c)``, and run on the eager pool (Note [A pool that never waits for
a sleeping worker], _ops/_threaded.py): the caller and the workers claim chunks one at a
time and the caller waits only for chunks a worker has claimed, so a worker that is not
running costs nothing but the claims. Which chunks exist is fixed at compile time and
every output element is computed inside one chunk by the same code, so the bits do not
depend on the thread count nor on which thread took a chunk (no reduction spans chunks:
Note [Exact math in kernels], codegen.py). A kernel with several loops (Note [Horizontal
fusion], scheduler.py) lists its chunks in a table of (loop, first, last) iterations.
Where the pool cannot be built, or at one thread, the caller runs the chunks in order.
Measured against the OpenMP version (2 threads, wall medians of 400 alternating calls,
right after the product; us, serial / parallel): at load 3-4, 32K elements 18-73 /
38-155 on the pool against 70-73 / 126-129 in a region; 128K 46-141 / 84-187 against
116-125 / 159-2415; 512K 375-449 / 485-2827 against 302-409 / 436-2703; 2M 1069-1256 /
1167-1259 against 1131-1201 / 5807-5903. So the pool bounds the worst case better, not
always: a worker preempted inside a claimed chunk still makes the caller wait. At load
2.2, with and without the product before, neither version beat one thread at any size up
to 535K (the other core was busy). Quiet (load 0.2-0.5), right after the product, neither
did either, up to 1M: 32K 35 / 80 on the pool, 25 / 51 in a region; 262K 112 / 161 and
92 / 123; 1M 477 / 525 and 556 / 596 (OpenBLAS's worker still spins on the other core).
With no product before, the pool won a little (32K 7.7 / 6.2, 131K 26.9 / 30.6, 535K 101
/ 93, 1M 199 / 151) where a region lost (32K 9.1 / 55, 1M 204 / 180). In the compiled
MLP step (2 threads, quiet) the SGD kernel, whose graph has no product but which runs
right after the backward's, took 100-178 us on one thread against 177-251 on the pool
(147-229 in a region). So a kernel is parallel from 1M elements of work
(config.cpp.parallel_threshold; it was 32K), and from 4M in a graph that itself calls
BLAS (parallel_threshold_with_blas, Note [OpenMP and BLAS threads], build.py).
"""
from __future__ import annotations

import ctypes
import re

# elements of work per chunk (Note [Chunks of a kernel])
CHUNK_WORK = 1 << 17

# Note [Chunks of a kernel]
# The eager pool's ops claimed chunks of 16K elements (Note [Large elementwise ops on
# numtorch's threads], _ops/_threaded.py; now guided shares, Note [Chunks and vectors of
# the eager ops]), and kernels first did the same. But a kernel is
# parallel only from config.cpp.parallel_threshold (1M) elements of work, and its rows are
# streamed: with 16K-element chunks the two threads alternate every 16 rows of a row
# softmax, each stream of reads and non-temporal writes restarting every 64 KB, and the
# caller claims 256 times. Quiet A/B at 2 threads (wall medians of 60 calls, 4096x1024
# float32, two rounds, each setting in its own process): softmax 1.43-1.52 ms with 16K
# chunks, 1.24-1.33 with 128K, 1.24-1.27 with 1M; layer_norm 0.79-0.90, 0.62-0.65,
# 0.62-0.63 (the OpenMP regions these replaced: softmax 1.11-1.34, layer_norm 0.87-0.88).
# 128K keeps at least 8 chunks per parallel kernel, so a worker that is not running
# still costs the caller little, and a worker preempted inside a chunk holds it for at most
# an eighth of the smallest parallel kernel.

# The prelude's part (codegen.PRELUDE includes it): the pool's entry, set by set_pool.
PRELUDE = r"""/* Note [Kernels on the pool] (pool.py) */
typedef void (*nt_part)(void *const *, int64_t);
typedef void (*nt_pool_fn)(nt_part, void *const *, int64_t, int);
#ifdef NT_OTHER_UNIT
extern NT_KERNEL nt_pool_fn nt_pool;
#else
NT_KERNEL nt_pool_fn nt_pool = 0;
void nt_set_pool(void *p) { nt_pool = (nt_pool_fn)p; }
#endif
static inline void nt_parallel(nt_part part, void *const *b, int64_t chunks) {
    if (nt_pool && nt_threads > 1 && chunks > 1) nt_pool(part, b, chunks, nt_threads);
    else for (int64_t c = 0; c < chunks; c++) part(b, c);
}
"""

_LOOP = re.compile(r"^(\s*)for \(int64_t (\w+) = 0; \2 < (\d+); \2\+\+\) \{$")


def _split(lines):
    """(extent, lines with the first loop running lo..hi) of a loop nest; (1, lines) for a
    nest without loops (it runs whole, in one chunk). Later loops with the first one's
    header run lo..hi too: a checked row's exact loop repeats its fast one (Note
    [Remainder in float arithmetic], rounding.py)."""
    for line in lines:
        m = _LOOP.match(line)
        if m:
            _, i, n = m.groups()

            def cut(other):
                o = _LOOP.match(other)
                return (f"{o.group(1)}for (int64_t {i} = lo; {i} < hi; {i}++) {{"
                        if o and o.group(2, 3) == (i, n) else other)
            return int(n), [cut(other) for other in lines]
    return 1, lines


def chunks(pieces):
    """The chunks of ``pieces`` (a list of (loop nest lines, elements of work)): a list of
    (piece, first, last) iterations of each nest's first loop, about CHUNK_WORK elements
    each."""
    out = []
    for k, (lines, work) in enumerate(pieces):
        n, _ = _split(lines)
        step = max(1, CHUNK_WORK * n // max(work, 1))
        out += [(k, lo, min(lo + step, n)) for lo in range(0, n, step)]
    return out


def functions(name, decls, pieces, fence=False):
    """The C of kernel ``name`` running ``pieces`` (a list of (loop nest lines, elements of
    work)) in chunks on the pool: the kernel, then ``<name>_part`` (with the buffer
    declarations ``decls``; ``fence``: end each chunk with nt_stream_fence, Note
    [Streaming stores]). The kernel's first line is its signature, as launcher.py expects;
    it declares the part function in its body, which is defined after it (hidden)."""
    table = chunks(pieces)
    part = f"{name}_part"
    lines = [f"NT_KERNEL void {name}(void *const *b) {{",
             f"    extern void {part}(void *const *, int64_t);",
             f"    nt_parallel({part}, b, {len(table)});", "}",
             f'__attribute__((visibility("hidden"))) void {part}(void *const *b, int64_t c) {{'] + decls
    if len(pieces) == 1:
        n, nest = _split(pieces[0][0])
        step = table[0][2] - table[0][1]
        lines += [f"    const int64_t lo = c * {step}, hi = lo + {step} < {n} ? lo + {step} : {n};"]
        lines += ["    " + line for line in nest]
    else:
        rows = ", ".join(f"{{{k}, {lo}, {hi}}}" for k, lo, hi in table)
        lines += [f"    static const int64_t nt_t[][3] = {{{rows}}};",
                  "    const int64_t lo = nt_t[c][1], hi = nt_t[c][2];",
                  "    switch (nt_t[c][0]) {"]
        for k, (nest, _) in enumerate(pieces):
            lines += [f"    case {k}: {{"] + ["        " + line for line in _split(nest)[1]] + [
                "        break;", "    }"]
        lines += ["    }"]
    if fence:
        lines += ["    nt_stream_fence();"]
    return lines + ["}"]


_CALLS = re.compile(r"nt_parallel\(\w+_part, b, ")


def set_pool(lib, units):
    """Hand kernel library ``lib`` (built from the C ``units``) the pool where one of its
    kernels is parallel (Note [Kernels on the pool]); without a pool (no compiler for it)
    its parallel kernels run their chunks on the calling thread."""
    if not any(_CALLS.search(u) for u in units):
        return
    from .._ops import _threaded
    address = _threaded.pool_address()
    if address:
        setter = lib.nt_set_pool
        setter.argtypes, setter.restype = [ctypes.c_void_p], None
        setter(address)
