"""The launcher: how Python reaches a graph's kernels, and each distinct kernel emitted once.

codegen.py writes one C function per kernel (``kernel<k>(void *const *b)``, ``b`` holding
that kernel's own buffers, in the order the kernel's text first names them). This module
turns a graph's kernels into the rest of its C: identical kernels merged (Note [One
function per distinct kernel]) and the entry point that runs a segment (a run of
consecutive kernels between externs) from tables (Note [Segments as data]). It decides
nothing about loops, fusion or compilation.

Note [One function per distinct kernel]
Unrolled loops and batched training repeat the same computation on other buffers: the
compiled MAML step (5 inner steps, forward and backward) had 110 kernels, most of them
copies of a few. Two kernels are the same function when their C text is the same up to
comments and the names of their local identifiers (loop indices carry the graph's value
names; buffers are reached through ``b[j]`` in first-use order), so ``kernel_key`` strips
comments and renames every ``bufN`` and every declared ``int64_t`` local in order of first
appearance. Equal keys mean the texts differ only by a consistent renaming of locals:
the first kernel's function runs the others on their own buffers. The generated source
says which kernels a function also runs.

Note [Segments as data]
A segment used to be straight-line C: ``segment<s>_py(o0, ..., oN)`` taking every buffer
of the graph, building an N-entry pointer array and calling its kernels. With 154
segments and ~300 buffers that was most of a 1.9 MB file and most of gcc's time (function
expansion, dead-store elimination and the combiner over those arrays), and ~300 ctypes
argument conversions per segment call. Now a graph has one entry point,
``<prefix>segment_py(s, tuple)``: the tuple holds segment ``s``'s buffers (the union of
its kernels' buffers, nothing else), and a table lists, per call of a kernel, the
kernel's function and the tuple positions of its arguments; one loop in the prelude
(``nt_run``) walks it. The C per graph grows with the number of kernel *calls* (a few
integers each), not with segments x buffers. The tuple's items are read in C at
CPython's ``PyTupleObject`` layout (header, size, items), checked by a probe at load time
like the array data pointer (Note [Passing arrays to kernels], runner.py); where the
probe disagrees, ``<prefix>segment(s, pointers)`` takes an array of data pointers.

Note [Faults in segments]
A function of the table may find its input wrong where eager raises: an index out of
range in gather or scatter_add (Note [Index externs in C], gather.py). It records the
first fault of the segment call (a code, the bad value, the size) in ``nt_fault``,
thread-local so that concurrent calls keep theirs, and returns; both entry points clear
it first and return its code, 0 when nothing went wrong. The rest of the segment still
runs (on values computed from the faulting function's partly written output: other
index functions check their own indices, so nothing reads or writes out of bounds); the
runner then raises eager's error from ``nt_fault_value`` and the call's outputs are
dropped. Only segments holding such a function have their result looked at.
"""
from __future__ import annotations

import re

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_BUFFER = re.compile(r"\bbuf\d+\b")
_INDEX_DECL = re.compile(r"\bint64_t\s+(\w+)")
_PART = re.compile(r"\b\w+_part\b")       # a kernel's chunk function (pool.py)
_WORD = re.compile(r"\b\w+\b")


def kernel_buffers(body):
    """The buffer names (``bufN``) a kernel's body lines use, in order of first use."""
    seen = {}
    for line in body:
        for name in _BUFFER.findall(_COMMENT.sub("", line)):
            seen.setdefault(name, len(seen))
    return list(seen)


def kernel_key(text):
    """``text`` (a kernel function without its name line) up to comments and a consistent
    renaming of buffers and declared indices (Note [One function per distinct kernel])."""
    text = _COMMENT.sub("", text)
    rename = {}
    for name in _BUFFER.findall(text):
        rename.setdefault(name, f"B{len(rename)}")
    for name in _INDEX_DECL.findall(text) + _PART.findall(text):
        rename.setdefault(name, f"I{len(rename)}")
    return _WORD.sub(lambda m: rename.get(m.group(0), m.group(0)), text)


# The prelude's part (codegen.PRELUDE includes it): the thread count, the layout probes,
# reading a tuple's items, walking a call table; defined in the first unit of a library.
PRELUDE = r"""
#define NT_TUPLE_SIZE(t) (((intptr_t *)(t))[2])                         /* PyObject_VAR_HEAD */
#define NT_TUPLE_ITEM(t, j) (((void **)((char *)(t) + 3 * sizeof(void *)))[j])
#ifndef NT_KERNEL
#define NT_KERNEL static         /* hidden, not static, where kernels span units */
#endif
typedef void (*nt_kernel)(void *const *);
/* Note [Vector accumulators] (gemm.py): GCC vector types, read and written unaligned, and
   a lane-wise fused multiply-add that the compiler turns into one vector instruction */
#define NT_VECTOR(t, n) typedef t nt_##t##n __attribute__((vector_size(n * sizeof(t)), aligned(sizeof(t))));
NT_VECTOR(float, 16) NT_VECTOR(float, 8) NT_VECTOR(float, 4) NT_VECTOR(float, 2)
NT_VECTOR(double, 8) NT_VECTOR(double, 4) NT_VECTOR(double, 2)
#define NT_VFMA(f, n, a, v, c) ({ __typeof__(c) nt_r_; \
    for (int nt_l_ = 0; nt_l_ < (n); nt_l_++) nt_r_[nt_l_] = f((a), (v)[nt_l_], (c)[nt_l_]); nt_r_; })
/* Note [BLAS calls in segments] (gemm.py): cblas_sgemm / cblas_dgemm of NumPy's ILP64 OpenBLAS */
typedef void (*nt_sgemm_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                            int64_t, const float *, int64_t, float, float *, int64_t);
typedef void (*nt_dgemm_fn)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                            int64_t, const double *, int64_t, double, double *, int64_t);
#ifdef NT_OTHER_UNIT             /* Note [Parallel builds] (launcher.py) */
extern NT_KERNEL int nt_threads;
extern NT_KERNEL __thread int64_t nt_fault[3];
extern NT_KERNEL nt_sgemm_fn nt_sgemm;
extern NT_KERNEL nt_dgemm_fn nt_dgemm;
#else
NT_KERNEL nt_sgemm_fn nt_sgemm;
NT_KERNEL nt_dgemm_fn nt_dgemm;
void nt_set_gemm(void *s, void *d) { nt_sgemm = (nt_sgemm_fn)s; nt_dgemm = (nt_dgemm_fn)d; }
/* [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]], the second operand given transposed */
int nt_gemm_check(void) {
    const float a[4] = {1, 2, 3, 4}, bt[4] = {5, 7, 6, 8};
    const double ad[4] = {1, 2, 3, 4}, btd[4] = {5, 7, 6, 8};
    float c[4] = {0}; double cd[4] = {0};
    nt_sgemm(101, 111, 112, 2, 2, 2, 1, a, 2, bt, 2, 0, c, 2);
    nt_dgemm(101, 111, 112, 2, 2, 2, 1, ad, 2, btd, 2, 0, cd, 2);
    return c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50 &&
           cd[0] == 19 && cd[1] == 22 && cd[2] == 43 && cd[3] == 50;
}
NT_KERNEL int nt_threads = 1;
/* Note [Faults in segments] (launcher.py): what a segment's index function found wrong */
NT_KERNEL __thread int64_t nt_fault[3];
int64_t nt_fault_value(int32_t j) { return nt_fault[j]; }
void nt_set_threads(int n) { nt_threads = n > 0 ? n : 1; }
void *nt_probe(void *o) { return NT_DATA(o); }
void *nt_probe_tuple(void *t) { return NT_TUPLE_SIZE(t) == 2 ? NT_DATA(NT_TUPLE_ITEM(t, 1)) : 0; }
/* Note [Segments as data] (launcher.py): calls[c] is a function, calls[c+1] its argument
   count n, calls[c+2 .. c+1+n] the positions of its arguments in b */
static void nt_run(const nt_kernel *fns, const int32_t *calls, int32_t c, int32_t end,
                   void *const *b, int32_t max_args) {
    void *a[max_args > 0 ? max_args : 1];
    while (c < end) {
        const int32_t n = calls[c + 1];
        for (int32_t j = 0; j < n; j++) a[j] = b[calls[c + 2 + j]];
        fns[calls[c]](a);
        c += 2 + n;
    }
}
#endif
static inline void nt_fault_at(int64_t what, int64_t value, int64_t size) {
    if (!nt_fault[0]) { nt_fault[0] = what; nt_fault[1] = value; nt_fault[2] = size; }
}
"""


def _ints(values, per_line=24):
    values = [str(v) for v in values] or ["0"]
    return ",\n".join("    " + ", ".join(values[i:i + per_line])
                      for i in range(0, len(values), per_line))


class Launcher:
    """Collects a graph's kernel functions (deduplicated) and writes its entry point.

    ``add(kernel_index, lines, buffers)`` takes a kernel's function (its first line the
    signature, ``buffers`` its argument vars in ``b`` order); ``chunks(segments)`` returns
    the C of the distinct functions and the tables, and sets ``segment_buffers``: the vars
    each segment's tuple holds, in order.
    """

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.functions = []       # [lines] of distinct kernels
        self.also = []            # per distinct function: the other kernels it runs
        self.by_key = {}          # kernel_key -> function position
        self.calls = {}           # kernel index -> (function position, [buffer vars])

    def add(self, index, lines, buffers):
        key = kernel_key("\n".join(lines[1:]))
        f = self.by_key.get(key)
        if f is None:
            f = self.by_key[key] = len(self.functions)
            self.functions.append(lines)
            self.also.append([])
        else:
            self.also[f].append(index)
        self.calls[index] = (f, list(buffers))

    def chunks(self, segments):
        """The C text in pieces: one per distinct kernel function, then the tables and the
        entry points (which may go to another translation unit: Note [Parallel
        builds]). ``segments`` lists, per segment, its kernels' indices in order."""
        p, out = self.prefix, []
        for lines, also in zip(self.functions, self.also):
            note = (f"/* also runs {', '.join(k if isinstance(k, str) else f'kernel{k}' for k in also)} "
                    "(the same code on other buffers) */\n") if also else ""
            out.append(note + "\n".join(lines) + "\n")
        calls, starts, self.segment_buffers = [], [0], []
        for ks in segments:
            position = {}          # id(var) -> place in this segment's tuple
            seg_vars = []
            for k in ks:
                f, bufs = self.calls[k]
                calls += [f, len(bufs)]
                for v in bufs:
                    if id(v) not in position:
                        position[id(v)] = len(seg_vars)
                        seg_vars.append(v)
                    calls.append(position[id(v)])
            starts.append(len(calls))
            self.segment_buffers.append(seg_vars)
        names = [lines[0].split("(")[0].split()[-1] for lines in self.functions]
        max_args = max([len(b) for _, b in self.calls.values()], default=0)
        max_bufs = max([len(b) for b in self.segment_buffers], default=0)
        out.append("\n".join([f"NT_KERNEL void {name}(void *const *b);" for name in names] + [
            f"static const nt_kernel {p}nt_fns[] = {{{', '.join(names) or '0'}}};",
            f"static const int32_t {p}nt_calls[] = {{\n{_ints(calls)}}};",
            f"static const int32_t {p}nt_segments[] = {{\n{_ints(starts)}}};",
            f"int64_t {p}segment(int32_t s, void *const *b) {{",
            "    nt_fault[0] = 0;",
            f"    nt_run({p}nt_fns, {p}nt_calls, {p}nt_segments[s], {p}nt_segments[s + 1], b, "
            f"{max_args});",
            "    return nt_fault[0];",
            "}",
            f"int64_t {p}segment_py(int32_t s, void *t) {{",
            f"    void *b[{max(max_bufs, 1)}];",
            "    for (intptr_t j = 0; j < NT_TUPLE_SIZE(t); j++) b[j] = NT_DATA(NT_TUPLE_ITEM(t, j));",
            f"    return {p}segment(s, b);",
            "}"]) + "\n")
        return out


# Note [Parallel builds]
# gcc compiles one translation unit on one core. A library with much kernel code is split
# into up to ``config.compile_threads`` units compiled at once and linked: the kernel
# functions, largest first, go to the unit with the least code so far (comments and the
# tables cost next to nothing to compile, so they are not counted); the first unit also
# holds the tables and entry points (Note [Segments as data]), which reach the kernels of
# the other units through hidden-visibility symbols (``NT_KERNEL``; in a single unit
# kernels stay ``static``), and the one definition of the thread count. Measured on the
# compiled MAML step (-O3, CPU seconds of the compiler processes): one unit 1.24-1.28;
# two units 0.63 + 0.61, link 0.02, so on two free cores the build takes half the time.
# On a loaded machine there is no free core and the split costs ~0.1 s of CPU more (the
# prelude twice, a link): the end-to-end cold compile under load ~8 was 4.4-5.8 s either
# way. A library with less than ``SPLIT_BYTES`` of code per unit (~0.35 s of compiling)
# stays one unit: below that a second process and the link save little. A precompiled
# prelude would not pay: compiling the prelude alone takes ~0.03 s.
SPLIT_BYTES = 48_000
_HIDDEN = '#define NT_KERNEL __attribute__((visibility("hidden")))\n'


def units(parts, prelude, threads=1):
    """The translation units of one library: ``parts`` holds each graph's chunks (from
    ``Launcher.chunks``, the last being the tables), ``prelude`` what every unit starts
    with. One unit (a string in a list) unless splitting pays (Note [Parallel builds])."""
    total = sum(len(_COMMENT.sub("", c)) for chunks in parts for c in chunks[:-1])
    n = max(1, min(threads, total // SPLIT_BYTES))
    if n == 1:
        return [prelude + "\n" + "\n".join(c for chunks in parts for c in chunks)]
    heads = [c for chunks in parts for c in chunks[-1:]]        # tables, in the first unit
    kernels = sorted(((len(_COMMENT.sub("", c)), c) for chunks in parts for c in chunks[:-1]),
                     key=lambda t: t[0], reverse=True)
    bins = [list(heads)] + [[] for _ in range(n - 1)]
    sizes = [0] * n          # code to compile (the tables and comments cost next to nothing)
    for size, c in kernels:
        k = sizes.index(min(sizes))
        bins[k].append(c)
        sizes[k] += size
    return [("#define NT_OTHER_UNIT\n" if k else "") + _HIDDEN + prelude + "\n" + "\n".join(b)
            for k, b in enumerate(bins) if b]
