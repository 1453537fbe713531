"""Tiled kernels: pointwise kernels that read an operand across its rows (``x.t() + y``)
run in square tiles, the operand's tile transposed once into a local array (Note [Tiled
kernels]). This module holds the transposing helpers of the prelude, the analysis of a
read's index (which loop it is contiguous along) and the tile's loop header; codegen.py's
Emitter asks it where to read and writes the rest of the kernel.
"""
from __future__ import annotations

import math

from .scheduler import C_TYPES

# Note [Tiled kernels]
# A pointwise kernel loops over its output in row-major order: an outer loop over all
# dims but the last and a vectorised inner loop along the last (Note [Fusion by inlining],
# scheduler.py). An operand read transposed (``x.t() + y``, a permuted batch) is then read
# with a large stride in the inner loop: one element of each cache line per row, gathered
# lane by lane. ``x.t() + y`` on 1024x1024 float32 took 3.7-4.0 ms of one thread against
# 0.84 ms for torch.compile and 0.24 ms for the contiguous ``x + y``. No loop order helps:
# whichever dim is inner, some stream is read or written across rows. So, as Inductor does
# for such kernels (2-D tiles with in-register transposes), a kernel where some operand is
# contiguous along an outer dim ``d`` (stride 1 there) and strided along the last dim runs
# in TILE x TILE tiles of (d, last): for each tile the operand's block is first transposed
# into a local array in the output's order by 8x8 (4-byte) or 4x4 (8-byte) blocks of
# vector shuffles (``nt_stage4``/``nt_stage8``: whole vector loads of 8 source rows, three
# rounds of shuffles, whole vector stores), then the tile's rows are computed with the
# inner loop reading the array contiguously. Every other stream stays contiguous along the
# last dim, so each tile touches TILE rows of TILE elements of each stream.
# Measured on 1024x1024 float32 (C harness, one thread's CPU time, minimum of 40): untiled
# 3.70 ms; tiles with the strided reads left in the inner loop (gathers) 1.2-3.5 ms at
# TILE 8-128; transposing each tile with scalar copies 1.6-2.7 ms; with the shuffles 0.75
# (TILE 16), 0.80 (32), 0.56 (64) ms. At TILE 32 and above, the source rows of a tile are
# 4 KB apart and alias in L1's sets; the shuffles read 8 rows at a time, which an 8-way L1
# keeps. TILE is 64: 16 KB of float32 staging per operand on the thread's stack.
# Only reads whose index is a sum of loop indices times constants (the index of a
# transpose, a permute, a broadcast: ``read_strides``) are staged; any other read is read
# in place, at the same index as untiled. What is computed per element does not change:
# the same expression on the same operand elements, only in another order of elements, so
# the bits are the untiled kernel's (no reductions here: tiled kernels have none). Kernels
# with no operand to stage keep the untiled loops, and so do kernels whose tiles would be
# narrower than MIN_SIDE (an 8x8 block) on either side: there the staging is all element
# copies (out (1024, 3) from a (3, 1024) operand: 3.1 us tiled, 2.7 us by rows). Tiled
# against by rows, one thread, same process: out (512, 784) 104 / 925 us, (64, 4096) 93 /
# 194 us, (16, 64, 64) batched 14 / 24 us, (128, 10) 1.8 / 2.0 us, (2048, 2048) 3.9 / 24.0
# ms. A kernel's chunks on the pool (pool.py) are ranges of tiles.
TILE = 64
MIN_SIDE = 8            # a tile narrower than a shuffled block is copied element by element

PRELUDE = r"""/* Note [Tiled kernels] (tiling.py): dst[a*dn + b] = src[a + b*ss] for a < rows,
   b < cols: an operand's tile transposed into the output's order. 8x8 (4-byte) and 4x4
   (8-byte) blocks by vector shuffles; the edges element by element. */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef uint32_t nt_u32x8 __attribute__((vector_size(32), aligned(4)));
typedef uint64_t nt_u64x4 __attribute__((vector_size(32), aligned(8)));
#define NT_SHUF __builtin_shufflevector
static inline __attribute__((always_inline)) void nt_tr8x8(uint32_t *restrict d, int64_t dn,
                                                           const uint32_t *restrict s, int64_t ss) {
    nt_u32x8 r0, r1, r2, r3, r4, r5, r6, r7;
    __builtin_memcpy(&r0, s, 32); __builtin_memcpy(&r1, s + ss, 32);
    __builtin_memcpy(&r2, s + 2 * ss, 32); __builtin_memcpy(&r3, s + 3 * ss, 32);
    __builtin_memcpy(&r4, s + 4 * ss, 32); __builtin_memcpy(&r5, s + 5 * ss, 32);
    __builtin_memcpy(&r6, s + 6 * ss, 32); __builtin_memcpy(&r7, s + 7 * ss, 32);
    nt_u32x8 t0 = NT_SHUF(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13), t1 = NT_SHUF(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);
    nt_u32x8 t2 = NT_SHUF(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13), t3 = NT_SHUF(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);
    nt_u32x8 t4 = NT_SHUF(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13), t5 = NT_SHUF(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15);
    nt_u32x8 t6 = NT_SHUF(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13), t7 = NT_SHUF(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15);
    nt_u32x8 u0 = NT_SHUF(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13), u1 = NT_SHUF(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    nt_u32x8 u2 = NT_SHUF(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13), u3 = NT_SHUF(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
    nt_u32x8 u4 = NT_SHUF(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13), u5 = NT_SHUF(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
    nt_u32x8 u6 = NT_SHUF(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13), u7 = NT_SHUF(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
    nt_u32x8 w0 = NT_SHUF(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11), w4 = NT_SHUF(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
    nt_u32x8 w1 = NT_SHUF(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11), w5 = NT_SHUF(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
    nt_u32x8 w2 = NT_SHUF(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11), w6 = NT_SHUF(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
    nt_u32x8 w3 = NT_SHUF(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11), w7 = NT_SHUF(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
    __builtin_memcpy(d, &w0, 32); __builtin_memcpy(d + dn, &w1, 32);
    __builtin_memcpy(d + 2 * dn, &w2, 32); __builtin_memcpy(d + 3 * dn, &w3, 32);
    __builtin_memcpy(d + 4 * dn, &w4, 32); __builtin_memcpy(d + 5 * dn, &w5, 32);
    __builtin_memcpy(d + 6 * dn, &w6, 32); __builtin_memcpy(d + 7 * dn, &w7, 32);
}
static inline __attribute__((always_inline)) void nt_tr4x4(uint64_t *restrict d, int64_t dn,
                                                           const uint64_t *restrict s, int64_t ss) {
    nt_u64x4 r0, r1, r2, r3;
    __builtin_memcpy(&r0, s, 32); __builtin_memcpy(&r1, s + ss, 32);
    __builtin_memcpy(&r2, s + 2 * ss, 32); __builtin_memcpy(&r3, s + 3 * ss, 32);
    nt_u64x4 t0 = NT_SHUF(r0, r1, 0, 4, 2, 6), t1 = NT_SHUF(r0, r1, 1, 5, 3, 7);
    nt_u64x4 t2 = NT_SHUF(r2, r3, 0, 4, 2, 6), t3 = NT_SHUF(r2, r3, 1, 5, 3, 7);
    nt_u64x4 w0 = NT_SHUF(t0, t2, 0, 1, 4, 5), w2 = NT_SHUF(t0, t2, 2, 3, 6, 7);
    nt_u64x4 w1 = NT_SHUF(t1, t3, 0, 1, 4, 5), w3 = NT_SHUF(t1, t3, 2, 3, 6, 7);
    __builtin_memcpy(d, &w0, 32); __builtin_memcpy(d + dn, &w1, 32);
    __builtin_memcpy(d + 2 * dn, &w2, 32); __builtin_memcpy(d + 3 * dn, &w3, 32);
}
#define NT_TR4 8
#define NT_TR8 4
#else
#define NT_TR4 0
#define NT_TR8 0
#define nt_tr8x8(d, dn, s, ss) ((void)0)
#define nt_tr4x4(d, dn, s, ss) ((void)0)
#endif
/* elements copied as integers of their size, which may alias the kernels' float arrays */
typedef uint32_t nt_u32a __attribute__((may_alias));
typedef uint64_t nt_u64a __attribute__((may_alias));
#define NT_STAGE(name, T, block, tr)                                                     \
static inline void name(void *restrict dst, int64_t dn, const void *restrict src,        \
                        int64_t ss, int64_t rows, int64_t cols) {                        \
    T *restrict d = dst;                                                                 \
    const T *restrict s = src;                                                           \
    int64_t ra = block ? rows / block * block : 0, cb = block ? cols / block * block : 0; \
    for (int64_t b = 0; b < cb; b += (block ? block : 1))                                \
        for (int64_t a = 0; a < ra; a += (block ? block : 1))                            \
            tr((void *)(d + a * dn + b), dn, (const void *)(s + b * ss + a), ss);                                  \
    for (int64_t a = ra; a < rows; a++)                                                  \
        for (int64_t b = 0; b < cols; b++) d[a * dn + b] = s[a + b * ss];                \
    for (int64_t a = 0; a < ra; a++)                                                     \
        for (int64_t b = cb; b < cols; b++) d[a * dn + b] = s[a + b * ss];               \
}
NT_STAGE(nt_stage4, nt_u32a, NT_TR4, nt_tr8x8)
NT_STAGE(nt_stage8, nt_u64a, NT_TR8, nt_tr4x4)
"""


def read_strides(idx, shape):
    """``{loop index name: stride}`` of a read of a C-contiguous buffer of ``shape`` at the
    index expressions ``idx`` (one per dim), or None where some index is not a loop name or
    a constant (a slice's offset, a reshape's division: not analysed)."""
    out, stride = {}, 1
    for i, n in reversed(list(zip(idx, shape))):
        if n != 1 and not i.isdigit():
            if not i.isidentifier():
                return None
            out[i] = out.get(i, 0) + stride
        stride *= n
    return out


def candidates(kernel, outer):
    """The outer dims a kernel could be tiled along with its last dim (innermost first):
    none unless it is a kernel of pointwise computations of one shape of two or more dims
    whose last dim and the candidate are at least MIN_SIDE long (Note [Tiled kernels])."""
    if kernel.horizontal or any(c.is_reduction for c in kernel.comps) or kernel.shape is None \
            or len(kernel.shape) < 2 or any(type(n) is not int for n in kernel.shape) \
            or kernel.shape[-1] < MIN_SIDE:
        return []
    return [d for d in reversed(range(len(outer))) if outer[d] >= MIN_SIDE]


class Tile:
    """How one kernel is tiled: along outer dim ``d`` and its last dim; ``staged`` lists
    the operands transposed per tile (filled while the kernel's C is emitted)."""

    def __init__(self, d, outer, outer_idx, last):
        self.d, self.outer, self.outer_idx, self.last = d, outer, outer_idx, last
        self.d_var = outer_idx[d]
        self.staged = {}        # (buffer name, base index) -> (array, C type, itemsize, stride)
        self.l_var = None       # the inner index of the computation being emitted

    def read(self, name, dtype, idx, shape):
        """The read of buffer ``name`` at ``idx`` from a staged tile, or None (read in
        place): only where the read is contiguous along ``d`` and strided along the last
        dim, and the element is 4 or 8 bytes."""
        strides = read_strides(idx, shape)
        if strides is None or strides.get(self.d_var) != 1 or strides.get(self.l_var, 0) < 2 \
                or dtype.itemsize not in (4, 8) or self.l_var is None:
            return None
        base_idx = [{self.d_var: "td", self.l_var: "tl"}.get(i, i) for i in idx]
        from .codegen import flat_index
        key = (name, flat_index(base_idx, shape))
        if key not in self.staged:
            self.staged[key] = (f"stg{len(self.staged)}", C_TYPES[dtype.name], dtype.itemsize,
                                strides[self.l_var])
        array = self.staged[key][0]
        return f"{array}[({self.d_var} - td)*{TILE} + ({self.l_var} - tl)]"

    def loop(self, body):
        """The kernel's loop: over tiles (the first loop, which the pool cuts), each tile
        staging its operands, then its rows; ``body`` computes one row's part of the tile
        (its inner loops run from ``tl`` to ``tl1``)."""
        n_d, n_l = self.outer[self.d], self.last
        bd, bl = -(-n_d // TILE), -(-n_l // TILE)
        dims = [(i, n) for k, (i, n) in enumerate(zip(self.outer_idx, self.outer))
                if n != 1 and k != self.d]
        count = math.prod(n for _, n in dims) * bd * bl
        head = []
        for j, (i, n) in enumerate(dims):
            stride = math.prod(m for _, m in dims[j + 1:]) * bd * bl
            head.append(f"const int64_t {i} = o / {stride} % {n};")
        head += [f"const int64_t td = o / {bl} % {bd} * {TILE}, tl = o % {bl} * {TILE};",
                 f"const int64_t td1 = td + {TILE} < {n_d} ? td + {TILE} : {n_d};",
                 f"const int64_t tl1 = tl + {TILE} < {n_l} ? tl + {TILE} : {n_l};"]
        for (name, base), (array, ctype, size, stride) in self.staged.items():
            head += [f"{ctype} {array}[{TILE * TILE}] __attribute__((aligned(64)));",
                     f"nt_stage{size}({array}, {TILE}, {name} + ({base}), {stride}, td1 - td, tl1 - tl);"]
        rows = [f"for (int64_t {self.d_var} = td; {self.d_var} < td1; {self.d_var}++) {{"] + [
            "    " + line for line in body] + ["}"]
        return [f"for (int64_t o = 0; o < {count}; o++) {{"] + [
            "    " + line for line in head + rows] + ["}"]
