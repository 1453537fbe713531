"""C99 + OpenMP code generation for a `Schedule` (scheduler.py).

Each kernel becomes a C function over its buffers; each run of consecutive kernels
between externs becomes one entry point (``segment<k>``) that Python calls once. This
module turns lower rules (Note [Lower rules], numtorch/_prims/_lower.py) into C text; it
does not compile or run anything (``build.py``) and does not decide grouping.

Note [Exact math in kernels]
No -ffast-math: NaN, infinities, signed zeros and denormals behave as in eager. Math
functions are libm's through <tgmath.h> (float32 values call the f-suffixed functions, as
NumPy does); -ffp-contract=off keeps a*b+c two roundings, as NumPy computes it; -fwrapv
gives integer overflow NumPy's wrap-around. Float32 sums and products accumulate in double
(float32 sums in short float blocks first, Note [Float32 blocks]; sums of products with
fma, Note [Sums of products]: as accurate as NumPy's pairwise float32 sum), max/min
propagate NaN like np.maximum. Reductions never cross the parallel loop: each outer index
reduces its own inner loop in a fixed order, so results are the same bits at any thread
count (the vectorised inner order is fixed at compile time).
"""
from __future__ import annotations

import numpy as np

from .._core.ir import Const, Var
from .scheduler import C_TYPES, Kernel, dtype_of, shape_of
from . import config, gemm, launcher, pool, rounding, streaming, tiling
from .vector_math import EXP_PRELUDE, MATH_CALL, VECTOR_MATH

PRELUDE = r"""
#include <stdint.h>
#include <math.h>
#include <tgmath.h>
#include <omp.h>
#define NT_DATA_OFFSET (sizeof(intptr_t) + sizeof(void *))  /* PyObject_HEAD */
#define NT_DATA(o) (*(void **)((char *)(o) + NT_DATA_OFFSET))
""" + launcher.PRELUDE + pool.PRELUDE + r"""/* np.maximum / np.minimum: NaN wins; equal operands (signed zeros) give the second */
#define nt_max(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define nt_min(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
/* torch.sign: sign(nan) == sign(-0.0) == 0 */
#define nt_sign(a) ((a) > 0 ? 1 : (a) < 0 ? -1 : 0)
/* np.remainder on floats: the result takes the divisor's sign (exact: libm's fmod in
   double; rows use the fast form where it is exact, Note [Remainder in float arithmetic]) */
#define nt_rem(a, b) nt_rem_impl((a), (b))
static inline double nt_rem_impl(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    else if (r == 0) r = copysign(0.0, b);
    return r;
}
""" + streaming.PRELUDE + tiling.PRELUDE + rounding.PRELUDE + EXP_PRELUDE


class Unfusable(Exception):
    """A computation reads a reduction of its kernel at another outer index."""


def literal(value, dtype):
    """A C literal of ``value`` in ``dtype`` (exact: hex floats)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = float(value)
        if v != v:
            s = "NAN"
        elif v in (float("inf"), float("-inf")):
            s = "INFINITY" if v > 0 else "-INFINITY"
        else:
            s = float(np.float32(v) if dtype == np.float32 else v).hex()
        return f"(({C_TYPES[dtype.name]}){s})"
    if dtype.kind == "b":
        return "1" if value else "0"
    v = int(value)
    if dtype.kind == "u":
        return f"(({C_TYPES[dtype.name]}){v}ULL)"
    return f"(({C_TYPES[dtype.name]})({v + 1}LL - 1))" if v == np.iinfo(np.int64).min else \
        f"(({C_TYPES[dtype.name]}){v}LL)"


def flat_index(idx, shape):
    terms, stride = [], 1
    for i, n in reversed(list(zip(idx, shape))):
        if n != 1 and i != "0":
            i = i if i.isidentifier() or i.isdigit() else f"({i})"
            terms.append(i if stride == 1 else f"{i}*{stride}")
        stride *= n
    return " + ".join(reversed(terms)) or "0"


def index_names(prefix, shape):
    """Loop variables of ``shape``; size-1 dims index with the constant 0."""
    return tuple("0" if n == 1 else f"{prefix}{k}" for k, n in enumerate(shape))


class Buffers:
    """Names of the memory a graph's kernels touch, in entry-point argument order."""

    def __init__(self):
        self.names = {}   # id(var or const) -> C name
        self.order = []   # vars/consts in argument order

    def name(self, v):
        if id(v) not in self.names:
            self.names[id(v)] = f"buf{len(self.order)}"
            self.order.append(v)
        return self.names[id(v)]


class Emitter:
    """Writes one kernel's C; ``foreign`` collects reductions of other kernels it reads."""

    def __init__(self, sched, kernel, buffers, dry=False, prefix="", tile=None):
        self.sched, self.kernel, self.buffers, self.dry = sched, kernel, buffers, dry
        self.tile = None if tile is None else tiling.Tile(    # Note [Tiled kernels]
            tile, kernel.final_outer(), index_names("o", kernel.final_outer()), kernel.shape[-1])
        self.prefix = prefix
        self.outer = kernel.final_outer()
        self.outer_idx = index_names("o", self.outer)
        self.done = {}        # id(var) of reductions of this kernel already emitted -> local
        self.row_cache = {}   # id(var) -> (array name, inner shape): Note [Row cache]
        self.foreign = []
        self.blocking = []
        self.streams = False  # Note [Streaming stores]: ends with nt_stream_fence()
        self.column = _column_width(sched, kernel, self.outer)   # Note [Column reductions]
        self.pieces = []      # a horizontal kernel's loop nests, with their work (pool.py)
        self.scalars = {}     # buffer name -> its one element's local (Note [One-element reads at entry])
        self.written = set()  # id(var) of stored values this kernel has written (Note [Stored values read back])
        self.checks = None    # the fast forms' checks, while a row of them is emitted (rounding.py)
        self.lines = []
        self.counter = 0

    def local(self):
        self.counter += 1
        return f"v{self.counter}"

    # -- values ----------------------------------------------------------------------
    def load(self, v, idx, scope):
        if isinstance(v, Const):
            value = self.sched.literal_consts.get(id(v))
            if value is not None:
                return literal(value, dtype_of(v))
            return self.read(v, idx)
        key = (id(v), tuple(idx))
        if key in scope:
            return scope[key]
        cached = self.row_cache.get(id(v))
        n = len(self.outer)
        if cached is not None and len(idx) == len(v.shape) and tuple(idx[:n]) == self.outer_idx:
            return f"{cached[0]}[{flat_index(idx[n:], cached[1])}]"
        comp = self.sched.comps.get(id(v))
        node = self.sched.lowered.get(id(v))
        if comp is not None and comp.kernel is self.kernel and comp.is_reduction:
            if id(v) not in self.done:
                raise AssertionError("reduction read before it is computed")
            if tuple(idx) != self.outer_idx[:len(idx)] or len(idx) != len(self.outer):
                self.blocking.append(v)
                raise Unfusable(v.name)
            return self.done[id(v)]
        if node is None or (comp is not None and comp.kernel is not self.kernel and
                            comp.kernel is not None and (comp.is_reduction or comp.stored)):
            if comp is not None and comp.kernel is not self.kernel:
                self.foreign.append(v)
            return self.read(v, idx)
        if (comp is not None and comp.kernel is self.kernel and id(v) in self.written
                and tuple(idx[:n]) == self.outer_idx and n and self.tile is None):      # Note [Stored values read back]
            return f"{self.buffers.name(v)}[{flat_index(idx, v.shape)}]"    # not at entry
        expr = self.expr(node, idx, scope)
        name = self.local()
        self.lines.append(f"{C_TYPES[v.dtype.name]} {name} = {expr};"
                          + (f"  /* {v.name} = {node.prim.name} */" if config.debug else ""))
        scope[key] = name
        return name

    def read(self, v, idx):
        """A read of ``v``'s memory at ``idx``; a value of one element is read once, at the
        kernel's entry (Note [One-element reads at entry])."""
        name = self.buffers.name(v)
        if int(np.prod(shape_of(v))) != 1:
            staged = self.tile and self.tile.read(name, np.dtype(dtype_of(v)), idx, shape_of(v))
            return staged or f"{name}[{flat_index(idx, shape_of(v))}]"
        if name not in self.scalars:
            self.scalars[name] = f"sv{len(self.scalars) + 1}"
        return self.scalars[name]

    def expr(self, node, idx, scope):
        rule, out = node.prim.lower, node.outs[0]
        if rule.kind == "pointwise":
            args = [self.load(v, idx, scope) for v in node.ins]
            kind = dtype_of(node.ins[0]).kind if node.ins else "f"
            if node.prim.name == "convert_element_type" and out.dtype.kind == "b":
                return f"({args[0]} != 0)"
            c = rule.expr_for(kind)
            if self.checks is not None and c in rounding.CHECKED:   # Note [Remainder in float arithmetic]
                c, ok = rounding.CHECKED[c]
                self.checks.append(ok.format(*args))
            return c.format(*args, T=C_TYPES[out.dtype.name])
        if rule.kind == "movement":
            def load(k, index):
                return self.load(node.ins[k], list(index), scope)
            load.const = lambda value: literal(value, out.dtype)
            return rule.index(load, list(idx), [shape_of(v) for v in node.ins], out.shape,
                              **node.params)
        raise AssertionError(f"{node.prim.name} is not inlined")

    # -- computations -------------------------------------------------------------------
    def loops(self, names, shape, body, simd, reduction=None, last=None):
        """Nested loops over ``shape`` (size-1 dims have none) around ``body`` lines; the
        innermost from ``last[0]`` to ``last[1]`` where given (a tile's columns)."""
        dims = [(i, n) for i, n in zip(names, shape) if n != 1]
        out = list(body)
        for k, (i, n) in enumerate(reversed(dims)):
            start, stop = last if k == 0 and last else (0, n)
            head = [f"for (int64_t {i} = {start}; {i} < {stop}; {i}++) {{"]
            if k == 0 and simd:
                head.insert(0, "#pragma omp simd" + (f" {reduction}" if reduction else ""))
            out = head + ["    " + line for line in out] + ["}"]
        return out

    def emit(self, comp):
        node, var = comp.node, comp.var
        where = f"  /* {node.where} */" if node.where else ""
        self.lines.append(f"/* {var.name} = {node.prim.name}{' (stored)' if comp.stored else ''} "
                          f"{var.type} */{where}")
        if comp.is_reduction:
            self.emit_reduction(comp)
        else:
            inner = var.shape[len(self.outer):]
            idx = self.outer_idx + index_names(f"{var.name}_i", inner)
            saved, self.lines = self.lines, []
            if self.tile:
                self.tile.l_var = idx[-1]
            self.checks = None if self.kernel.horizontal or self.column or self.dry else []
            value = self.load(var, idx, {}) if comp.node.prim.lower.kind != "reduction" else None
            checks, self.checks = self.checks, None
            row = self._stream_row(var, inner)
            if row and sum(n != 1 for n in inner) == 1:     # Note [Streaming from registers]
                self.lines = saved + self._stream_chunks(var, idx)
                return
            target = (f"{row}[{flat_index(idx[len(self.outer):], inner)}]" if row else
                      f"{self.buffers.name(var)}[{flat_index(idx, var.shape)}]")
            body = self.lines + [f"{target} = {value};"]
            last = ("tl", "tl1") if self.tile else None
            nest = (self._checked_rows(var, idx, target, body, checks, last) if checks else
                    self.loops(idx[len(self.outer):], inner, body, simd=True, last=last))
            if row:     # Note [Streaming stores]
                size, t = int(np.prod(inner)), C_TYPES[var.dtype.name]
                base = flat_index(self.outer_idx, self.outer)
                nest = [f"{t} {row}[{size}] __attribute__((aligned(64)));"] + nest + [
                    f"nt_stream({self.buffers.name(var)} + ({base})*{size}, {row}, "
                    f"{size} * sizeof({t}));"]
            if self.kernel.horizontal:
                self.pieces.append((nest, int(np.prod(var.shape))))
            if self.column:       # Note [Column reductions]: one outer index per lane
                nest = self._lane_loop(nest, simd=not any(n != 1 for n in inner))
            self.lines = saved + nest
            if comp.stored and not row:
                self.written.add(id(var))

    def _checked_rows(self, var, idx, target, body, checks, last):
        """The loops computing ``var`` with fast forms, each innermost row again with the
        exact forms where one of its elements failed its check (Note [Remainder in float
        arithmetic], rounding.py); ``body`` is the fast row's body."""
        dims = [(i, m) for i, m in zip(idx[len(self.outer):], var.shape[len(self.outer):]) if m != 1]
        names, sizes = [i for i, _ in dims], [m for _, m in dims]
        flag = self.local()
        fast = self.loops(names[-1:], sizes[-1:], body + [f"{flag} |= !({' && '.join(checks)});"],
                          simd=True, reduction=f"reduction(|:{flag})", last=last)
        saved, self.lines = self.lines, []
        value = self.load(var, idx, {})          # self.checks is None: the exact forms
        exact = self.loops(names[-1:], sizes[-1:], self.lines + [f"{target} = {value};"],
                           simd=True, last=last)
        self.lines = saved
        row = [f"int {flag} = 0;"] + fast + [f"if ({flag}) {{"] + ["    " + line for line in exact] + ["}"]
        return self.loops(names[:-1], sizes[:-1], row, simd=False)

    def emit_reduction(self, comp):
        node, var = comp.node, comp.var
        x, axes = node.ins[0], tuple(node.params["axes"])
        rule, dt = node.prim.lower, var.dtype
        red_shape = tuple(n for d, n in enumerate(shape_of(x)) if d in axes)
        red_idx = index_names(f"{var.name}_r", red_shape)
        kept, red = iter(self.outer_idx), iter(red_idx)
        idx = [next(red) if d in axes else next(kept) for d in range(len(shape_of(x)))]
        acc_t = ("double" if dt.kind == "f" and rule.combine in ("sum", "prod") else
                 C_TYPES[dt.name] if rule.combine in ("max", "min") else
                 "uint64_t" if dt.kind == "u" else "int64_t")
        if dt.kind == "b":
            init = {"lowest": "0", "highest": "1"}[rule.init]
        else:
            init = None
        init = init or {"zero": "0", "one": "1",
                "lowest": "-INFINITY" if dt.kind == "f" else literal(_info(dt).min, dt),
                "highest": "INFINITY" if dt.kind == "f" else literal(_info(dt).max, dt)}[rule.init]
        if self.column:
            return self._emit_column_reduction(comp, x, idx, red_idx, red_shape, acc_t, init)
        acc, nan = self.local(), None
        self.lines.append(f"{acc_t} {acc} = {init};")
        if dt.kind == "f" and rule.combine in ("max", "min"):
            nan = self.local()
            self.lines.append(f"int {nan} = 0;")
        cache = self._row_cache_for(comp, x, axes, red_shape)
        saved, self.lines = self.lines, []
        scope = {}
        factors = self._factors(x, idx, scope) if rule.combine == "sum" and dt.kind == "f" else None
        # the product itself only where the row cache keeps it (the fma reads the factors)
        value = self.load(x, idx, scope) if factors is None or cache is not None else None
        cmp = ">" if rule.combine == "max" else "<"
        body = list(self.lines)
        if cache is not None:
            body.append(f"{cache}[{flat_index(red_idx, red_shape)}] = {value};")
            self.row_cache[id(x)] = (cache, red_shape)

        def combine(target, target_t=acc_t):
            """The statement combining ``value`` into the accumulator ``target``."""
            if factors:         # Note [Sums of products]
                a, b = (f"({target_t}){f}" for f in factors)
                return f"{target} = fma({a}, {b}, {target});"
            return {"sum": f"{target} += {value};", "prod": f"{target} *= {value};"}.get(
                rule.combine, f"{target} = {target} {cmp} {value} ? {target} : {value};")
        body.append(combine(acc))     # the combining statement last (the lane form replaces it)
        op = {"sum": "+", "prod": "*"}.get(rule.combine, rule.combine)
        clause = f"reduction({op}:{acc})"
        if nan:
            body.append(f"{nan} |= {value} != {value};")
            clause += f" reduction(|:{nan})"
        lanes = _lanes(red_shape) if rule.combine in ("sum", "prod") else 0
        if lanes:   # Note [Lane accumulators]
            part, lane, chunk = self.local(), self.local(), self.local()
            last, n = red_idx[-1], red_shape[-1]
            block = dt == np.float32 and rule.combine == "sum"   # Note [Float32 blocks]
            target = self.local() if block else part
            inner = [f"const int64_t {last} = {chunk} + {lane};"] + body[:-1] + [
                combine(f"{target}[{lane}]", "float" if block else acc_t)]
            start, stop = "0", str(n)
            if block:
                start, stop = self.local(), self.local()
            loop = [f"for (int64_t {chunk} = {start}; {chunk} < {stop}; {chunk} += {lanes}) {{",
                    "    #pragma omp simd",
                    f"    for (int64_t {lane} = 0; {lane} < {lanes}; {lane}++) {{"] + [
                "        " + line for line in inner] + ["    }", "}"]
            if block:
                step = lanes * BLOCK_CHUNKS
                loop = [f"for (int64_t {start} = 0; {start} < {n}; {start} += {step}) {{",
                        f"    const int64_t {stop} = {start} + {step} < {n} ? {start} + {step} : {n};",
                        f"    float {target}[{lanes}];",
                        f"    for (int64_t {lane} = 0; {lane} < {lanes}; {lane}++) {target}[{lane}] = 0;"
                        ] + ["    " + line for line in loop] + [
                        f"    for (int64_t {lane} = 0; {lane} < {lanes}; {lane}++) "
                        f"{part}[{lane}] += {target}[{lane}];", "}"]
            self.lines = saved + [
                f"{acc_t} {part}[{lanes}];",
                f"for (int64_t {lane} = 0; {lane} < {lanes}; {lane}++) {part}[{lane}] = {init};"]
            self.lines += self.loops(red_idx[:-1], red_shape[:-1], loop, simd=False)
            half = lanes // 2
            while half:       # the lanes added pairwise, in vector halves
                self.lines += ["#pragma omp simd",
                               f"for (int64_t {lane} = 0; {lane} < {half}; {lane}++) "
                               f"{part}[{lane}] {op}= {part}[{lane} + {half}];"]
                half //= 2
            self.lines.append(f"{acc} {op}= {part}[0];")
        else:
            self.lines = saved + self.loops(red_idx, red_shape, body, simd=True, reduction=clause)
        result = self.local()
        value = f"({nan} ? NAN : {acc})" if nan else acc
        self.lines.append(f"{C_TYPES[dt.name]} {result} = ({C_TYPES[dt.name]}){value};")
        if comp.stored:
            self.lines.append(f"{self.buffers.name(var)}[{flat_index(self.outer_idx, var.shape)}] = {result};")
        self.done[id(var)] = result

    def _lane_loop(self, lines, simd):
        """``lines`` run once per lane of a column block (Note [Column reductions]), with the
        last outer index defined from the lane."""
        last = self.outer_idx[-1]
        return (["#pragma omp simd"] if simd else []) + [
            f"for (int64_t ol = 0; ol < ow; ol++) {{",
            f"    const int64_t {last} = ob + ol;"] + ["    " + line for line in lines] + ["}"]

    def _emit_column_reduction(self, comp, x, idx, red_idx, red_shape, acc_t, init):
        """Note [Column reductions]: the reduction of a column block, one accumulator per
        lane (outer index), rows streamed in order; its result is ``res[ol]``."""
        node, var = comp.node, comp.var
        rule, dt, width = node.prim.lower, var.dtype, self.column
        acc, res, nan = self.local(), self.local(), None
        lines = [f"{acc_t} {acc}[{width}];",
                 f"for (int64_t ol = 0; ol < {width}; ol++) {acc}[ol] = {init};"]
        if dt.kind == "f" and rule.combine in ("max", "min"):
            nan = self.local()
            lines += [f"int {nan}[{width}];", f"for (int64_t ol = 0; ol < {width}; ol++) {nan}[ol] = 0;"]
        saved, self.lines = self.lines, []
        scope = {}
        factors = self._factors(x, idx, scope) if rule.combine == "sum" and dt.kind == "f" else None
        value = self.load(x, idx, scope) if factors is None else None
        target = f"{acc}[ol]"
        if factors:         # Note [Sums of products]
            a, b = (f"({acc_t}){f}" for f in factors)
            step = f"{target} = fma({a}, {b}, {target});"
        else:
            cmp = ">" if rule.combine == "max" else "<"
            step = {"sum": f"{target} += {value};", "prod": f"{target} *= {value};"}.get(
                rule.combine, f"{target} = {target} {cmp} {value} ? {target} : {value};")
        body = self.lines + [step] + ([f"{nan}[ol] |= {value} != {value};"] if nan else [])
        lanes = self._lane_loop(body, simd=True)
        lines += self.loops(red_idx, red_shape, lanes, simd=False)
        t = C_TYPES[dt.name]
        total = f"({nan}[ol] ? NAN : {acc}[ol])" if nan else f"{acc}[ol]"
        out = [f"{res}[ol] = ({t}){total};"]
        if comp.stored:
            out.append(f"{self.buffers.name(var)}[{flat_index(self.outer_idx, var.shape)}] = {res}[ol];")
        self.lines = saved + lines + [f"{t} {res}[{width}];"] + self._lane_loop(out, simd=True)
        self.done[id(var)] = f"{res}[ol]"

    def _stream_row(self, var, inner):
        """Note [Streaming stores]: the name of the stack row that the stored value ``var``
        is computed into before it is streamed to memory, or None (stored in place)."""
        size = int(np.prod(inner))
        if (self.dry or self.tile or self.kernel.horizontal or self.column
                or not any(n != 1 for n in self.outer)
                or not 0 < size * var.dtype.itemsize <= streaming.STREAM_ROW_BYTES
                or self.stored_bytes() < streaming.stream_threshold() or self._calls_math(var)):
            return None
        self.streams = True
        self.counter += 1
        return f"out{self.counter}"

    def _stream_chunks(self, var, idx):
        """Note [Streaming from registers]: the loops computing one row of ``var`` (one
        inner dim) and streaming it in vector-sized chunks; the unaligned head and the
        tail are stored in place."""
        n = len(self.outer)
        (i, size), = [(x, m) for x, m in zip(idx[n:], var.shape[n:]) if m != 1]
        t = C_TYPES[var.dtype.name]
        dst, start, head, tmp, lane = (self.local() for _ in range(5))
        chunk = f"NT_CHUNK({t})"

        def body(target, indent):
            saved, self.lines = self.lines, []
            value = self.load(var, idx, {})
            lines, self.lines = self.lines + [f"{target} = {value};"], saved
            return [" " * indent + line for line in lines]
        base = flat_index(self.outer_idx, self.outer)
        return ["{",
                f"    {t} *restrict {dst} = {self.buffers.name(var)} + ({base})*{size};",
                f"    const int64_t {head} = nt_stream_head({dst}, sizeof({t}), {size});",
                f"    int64_t {start} = {head};",
                f"    for (int64_t {i} = 0; {i} < {head}; {i}++) {{"] + body(f"{dst}[{i}]", 8) + [
                "    }",
                f"    for (; {start} + {chunk} <= {size}; {start} += {chunk}) {{",
                f"        {t} {tmp}[{chunk}] __attribute__((aligned(64)));",
                "        #pragma omp simd",
                f"        for (int64_t {lane} = 0; {lane} < {chunk}; {lane}++) {{",
                f"            const int64_t {i} = {start} + {lane};"] + body(f"{tmp}[{lane}]", 12) + [
                "        }",
                f"        NT_STREAM_ONE({dst} + {start}, {tmp});",
                "    }",
                f"    for (int64_t {i} = {start}; {i} < {size}; {i}++) {{"] + body(f"{dst}[{i}]", 8) + [
                "    }",
                "}"]

    def _calls_math(self, var):
        """Whether computing ``var`` inline calls a math function per element (not on a
        value constant along the inner dims, like layer_norm's rsqrt of the variance, nor
        on one read back from a row cache, like softmax's exp: Note [Row cache])."""
        n, stack, seen = len(self.outer), [var], set()
        while stack:
            v = stack.pop()
            node = self.sched.lowered.get(id(v))
            if not isinstance(v, Var) or id(v) in seen or node is None or (
                    v is not var and (id(v) in self.sched.comps or id(v) in self.row_cache)):
                continue
            seen.add(id(v))
            rule = node.prim.lower
            if rule.kind == "pointwise" and int(np.prod(v.shape[n:])) > 1 and \
                    MATH_CALL.search(rule.expr_for(dtype_of(node.ins[0]).kind if node.ins else "f") or ""):
                return True
            stack.extend(u for u in node.ins if isinstance(u, Var))
        return False

    def stored_bytes(self):
        """The bytes the kernel writes to memory per call."""
        return sum(int(np.prod(c.var.shape)) * c.var.dtype.itemsize
                   for c in self.kernel.comps if c.stored)

    def _factors(self, x, idx, scope):
        """Note [Sums of products]: the operands, widened to the accumulator's double, of
        the product ``x`` that a float sum adds, when ``x`` is an inlined multiplication;
        else None."""
        node = self.sched.lowered.get(id(x))
        if (node is None or node.prim.name != "mul" or id(x) in self.sched.comps
                or id(x) in self.row_cache):
            return None
        return tuple(self.load(v, idx, scope) for v in node.ins)

    def _row_cache_for(self, comp, x, axes, red_shape):
        """Note [Row cache]: the name of a per-row array keeping the reduction's computed
        operand ``x`` for later computations of this kernel, or None."""
        n = len(self.outer)
        shape = shape_of(x)
        if (self.dry or not isinstance(x, Var) or id(x) not in self.sched.lowered
                or id(x) in self.sched.comps or axes != tuple(range(n, len(shape)))
                or tuple(shape[:n]) != tuple(self.outer)
                or not 0 < int(np.prod(red_shape)) <= ROW_CACHE_ELEMENTS):
            return None
        later = self.kernel.comps[self.kernel.comps.index(comp) + 1:]
        if not any(_reads(self.sched, c.node, x) for c in later):
            return None
        name = f"row{len(self.row_cache)}"
        self.lines.append(f"{C_TYPES[x.dtype.name]} {name}[{int(np.prod(red_shape))}];")
        return name

    def parallel(self):
        """Whether the kernel runs in chunks on the pool (Note [Kernels on the pool],
        pool.py): not below the threshold, where the chunks would cost more than a second
        thread saves."""
        return self.work() >= (config.cpp.parallel_threshold_with_blas if _calls_blas(self.sched)
                              else config.cpp.parallel_threshold)

    def work(self):
        """Elements the kernel computes or reduces per call (all of its computations)."""
        return sum(int(np.prod(shape_of(c.node.ins[0]) if c.is_reduction else c.var.shape))
                   for c in self.kernel.comps)

    def function(self):
        """The kernel's C function (after emitting all computations); a parallel kernel's
        runs its loops in chunks on the pool (Note [Kernels on the pool], pool.py)."""
        outer, k = self.outer, self.kernel
        total = int(np.prod(outer)) if outer else 1
        body = self.tile.loop(self.lines) if self.tile and total else self.lines  # Note [Tiled kernels]
        name = f"{self.prefix}{k.name}"
        # b holds this kernel's buffers only, in first-use order (launcher.py)
        by_name = {self.buffers.names[id(v)]: v for v in self.buffers.order}
        reads = [f"    const {C_TYPES[dtype_of(by_name[n]).name]} {local} = {n}[0];"
                 for n, local in self.scalars.items()]
        self.args = [by_name[n] for n in launcher.kernel_buffers(reads + body)]
        decls = [f"    {C_TYPES[dtype_of(v).name]} *restrict {self.buffers.names[id(v)]} = b[{j}];"
                 for j, v in enumerate(self.args)] + reads
        parallel = total > 0 and self.parallel()
        loop = None
        if total == 0:
            body = []       # nothing to compute (a size-0 dimension)
        elif self.column:     # Note [Column reductions]: blocks of the last outer dim
            (last, n), width = [(i, n) for i, n in zip(self.outer_idx, outer) if n != 1][-1], self.column
            blocks = -(-n // width)
            dims = [(i, m) for i, m in zip(self.outer_idx[:-1], outer[:-1]) if m != 1]
            loop = [f"const int64_t {i} = o / {blocks * int(np.prod([m for _, m in dims[j + 1:]]))} % {m};"
                    for j, (i, m) in enumerate(dims)]
            loop += ([f"const int64_t ob = 0, ow = {n};"] if blocks == 1 else [
                f"const int64_t ob = o % {blocks} * {width};",
                f"const int64_t ow = {n} - ob < {width} ? {n} - ob : {width};"])
            count = total // n * blocks
        elif self.tile:
            loop = None       # the tiles' loop is the body's (above)
        elif any(n != 1 for n in outer):
            dims = [(i, n) for i, n in zip(self.outer_idx, outer) if n != 1]
            loop, count = [], total
            for j, (i, n) in enumerate(dims):
                stride = int(np.prod([m for _, m in dims[j + 1:]]))
                loop.append(f"const int64_t {i} = o / {stride} % {n};" if stride > 1 else
                            f"const int64_t {i} = o % {n};")
        if loop is not None:
            body = [f"for (int64_t o = 0; o < {count}; o++) {{"] + [
                "    " + line for line in loop + body] + ["}"]
        if parallel and (loop is not None or self.tile or k.horizontal or (
                len(k.comps) == 1 and not k.comps[0].is_reduction
                and any(line.startswith("#pragma omp simd") for line in body))):
            pieces = self.pieces if k.horizontal else [(body, self.work())]
            return pool.functions(name, decls, pieces, fence=self.streams)
        if self.streams:     # Note [Streaming stores]
            body = body + ["nt_stream_fence();"]
        return [f"NT_KERNEL void {name}(void *const *b) {{"] + decls + [
            "    " + line for line in body] + ["}"]


# Note [Stored values read back]
# A value a kernel stores (for the backward, or for another kernel) and reads again later
# in the same outer iteration was computed twice: inlining recomputes it at each use
# (Note [Fusion by inlining]). The MLP step's cross-entropy kernel stores exp(x - max) for
# the backward and then sums it: two exps per element. A later computation of the kernel
# now reads such a value back from its buffer where the index is in the current outer
# iteration, which this thread has just written (the same bits: the stored value is the
# computed one). Not for values written with non-temporal stores (Note [Streaming
# stores]), nor across outer indices or in kernels without an outer loop, whose loops
# may run in any order of chunks (Note [Kernels on the pool], pool.py). The kernel above,
# 128 rows of 10, in a C harness: 12.3 against 7.2 us.


# Note [One-element reads at entry]
# A value of one element that a kernel reads from memory (a 0-d input such as the 0 that
# cross entropy's where(isinf(max), 0, max) takes, a scalar another kernel stored) is read
# once into a local at the kernel's entry, not at each use inside the loops. Read inside
# a loop as one operand of a select, gcc sank the load into the select's branch and
# if-converted it to a masked load of one address, which its vectoriser rejects ("no
# vectype for .MASK_LOAD"): the compiled MLP step's cross-entropy kernel (128 rows of 10)
# computed its exp loops in scalar code, 16 us a call. A kernel never writes what it
# reads from memory (its own values are inlined or kept in registers, Note [Fusion by
# inlining], scheduler.py), so reading at entry gives the same values.


# Note [Sums of products]
# A float sum of products (the FAQ's sum(X[:, :, None] * Y[:, None, :]), a variance's sum
# of squares) adds each product with one fused multiply-add, fma(a, b, acc): one rounding
# instead of two per element and one instruction instead of two (the FAQ's example: 0.153
# against 0.183 ms of one thread's CPU time), a result at least as accurate as rounding
# each product first. This is not -ffp-contract: a pointwise a*b+c keeps its two roundings,
# as NumPy computes it (Note [Exact math in kernels]); but the order in which a reduction
# rounds is already the kernel's own, not NumPy's pairwise order (Note [Lane
# accumulators]), and the fused form only removes roundings. Where a separately rounded
# product would overflow but the exact sum does not, the fused sum stays finite, as a
# reassociated sum may. The order is fixed by the source, so the bits are the same at any
# thread count.


# Note [Float32 blocks]
# Float32 sums accumulate in double (Note [Exact math in kernels]), but converting every
# element to double costs two conversions and a second add per vector: 10% of a row
# softmax. With lane accumulators (Note [Lane accumulators]) a float32 sum instead keeps
# float lanes for a block of BLOCK_CHUNKS chunks (16 elements per lane) and adds each
# block's lanes into the double lanes. A float lane rounds at most 15 times before its
# block ends, so the error stays within NumPy's pairwise float32 sum's (which adds 16
# elements per accumulator in its 128-element blocks, then pairs the blocks), and the
# double lanes keep the error from growing with the length beyond that. The order is fixed
# by the source: the same bits at any thread count.
BLOCK_CHUNKS = 16


# Note [Lane accumulators]
# A sum whose innermost reduced loop is vectorised with one `reduction(+:acc)` clause keeps
# one vector accumulator, so every add waits for the previous one (the FMA latency, not its
# throughput, sets the speed). Where the innermost reduced extent is a multiple of a lane
# count (32, 16 or 8), the reduction instead keeps that many partial sums, lane l summing
# the elements l, l+lanes, …: several independent vector accumulators, about 2x faster on
# the FAQ's sum(X[:, :, None] * Y[:, None, :]). At the end the upper half of the lanes is
# added to the lower half, then the upper quarter to the lower one, …: vector adds, not a
# chain of 31 dependent scalar adds per row (one row of the FAQ's example: 4% faster).
# The order is as fixed as before (a property of the source, not of the thread count), so
# results are still the same bits at any thread count (Note [Exact math in kernels]).
_LANE_COUNTS = (32, 16, 8)


def _lanes(red_shape):
    """Lane count for a reduction over ``red_shape`` (0: the plain simd reduction)."""
    n = red_shape[-1] if red_shape else 0
    total = int(np.prod(red_shape)) if red_shape else 0
    for lanes in _LANE_COUNTS:
        if n % lanes == 0 and total >= 4 * lanes:
            return lanes
    return 0


# Note [Column reductions]
# A reduction that keeps its operand's last dim (a bias gradient: the sum over the batch
# axis of a 128x512 array) was one outer index at a time, its inner loop walking down a
# column: a strided gather per element, and at a row stride of 2 KB the column's lines
# fall into two L1 sets. The 128x512 column sum took 142 us of one thread's CPU against
# NumPy's 12 us. Such a kernel now computes COLUMN_WIDTH outer indices together (a block
# of the last outer dim): each reduction keeps one accumulator per lane and streams the
# rows in order, each row a contiguous vector load over the lanes (`ol`). Every other
# computation of the kernel runs in a loop over the same lanes, reading a reduction of
# the kernel as `res[ol]`, so fusion is as before (Note [Fusion by inlining]). The blocks
# are the parallel loop; each lane reduces its rows in a fixed order (float sums in
# double, as everywhere: Note [Exact math in kernels]), so the bits do not depend on the
# thread count.
COLUMN_WIDTH = 64


def _column_width(sched, kernel, outer):
    """The block width of a kernel whose reductions all keep their operand's last dim
    (Note [Column reductions]), else 0."""
    reductions = [c for c in kernel.comps if c.is_reduction]
    if not reductions or not outer or outer[-1] == 1:
        return 0
    for c in reductions:
        x = c.node.ins[0]
        n = len(shape_of(x))
        if not n or n - 1 in tuple(c.node.params["axes"]) or shape_of(x)[-1] != outer[-1]:
            return 0
    n = outer[-1]
    return n if n <= COLUMN_WIDTH else COLUMN_WIDTH



# Note [Row cache]
# Softmax computes exp(x - max) in its sum loop and again in its output loop; exp is most
# of the work. When a reduction over a kernel's trailing (inner) dims has a computed
# operand that a later computation of the same kernel reads at the same element, the sum
# loop also stores the operand in a per-row array on the thread's stack, and the later
# loop reads it from there (in L1) instead of recomputing it: the same value, bit for bit.
# Rows longer than ROW_CACHE_ELEMENTS recompute (the stack is small).
ROW_CACHE_ELEMENTS = 8192


def _reads(sched, node, var):
    """Whether computing ``node`` inline reads ``var`` (through inlined nodes only)."""
    stack, seen = list(node.ins), set()
    while stack:
        v = stack.pop()
        if v is var:
            return True
        if id(v) in seen or not isinstance(v, Var):
            continue
        seen.add(id(v))
        producer = sched.lowered.get(id(v))
        if producer is not None and id(v) not in sched.comps:
            stack.extend(producer.ins)
    return False


BLAS_PRIMITIVES = ("dot_general", "conv")


def _calls_blas(sched):
    """Whether the graph runs a BLAS extern (Note [OpenMP and BLAS threads], build.py)."""
    return any(s.prim.name in BLAS_PRIMITIVES for s in sched.externs())


def _info(dt):
    return np.iinfo(dt) if dt.kind in "iu" else np.iinfo(np.uint8)


def reads(sched):
    """The scheduler's dry run (see scheduler.schedule): blocking or foreign reductions."""
    def run(kernel, comp, foreign=False):
        em = Emitter(sched, kernel, Buffers(), dry=True)
        try:
            for c in kernel.comps:
                em.emit(c)
                if c is comp:
                    break
            else:
                em.emit(comp)
        except Unfusable:
            return em.blocking
        return em.foreign if foreign else []
    return run


def _tile_dim(sched, kernel):
    """The outer dim to tile ``kernel`` along (Note [Tiled kernels], tiling.py): the
    innermost one along which some operand would be staged; None to keep the rows."""
    for d in tiling.candidates(kernel, kernel.final_outer()) if config.cpp.tiling else ():
        probe = Emitter(sched, kernel, Buffers(), tile=d)
        for comp in kernel.comps:
            probe.emit(comp)
        if probe.tile.staged:
            return d
    return None


def library(parts, vector_math=False, threads=1):
    """A shared library's C translation units (a list; Note [Parallel builds], launcher.py)
    from ``generate``'s chunks of each graph (the prelude at the top of each unit)."""
    return launcher.units([list(p) for p in parts], PRELUDE + (VECTOR_MATH if vector_math else ""),
                          threads)


def generate(sched, buffers, prefix=""):
    """C source of a graph's kernels and its entry point (``<prefix>segment_py``, running
    segment ``s``: a run of consecutive kernels; ``library`` adds the prelude).

    Returns (chunks, segment_buffers): the C in pieces (each distinct kernel, then the
    tables), and per segment the buffers its call takes, in order (Note [Segments as
    data], launcher.py).
    """
    graph_src = sched.graph.python_code().splitlines()
    header = "/* graph:\n" + "\n".join(" * " + line.replace("*/", "* /") for line in graph_src) + "\n */\n"
    kernel_fns = []
    for step in sched.steps:
        if isinstance(step, Kernel):
            em = Emitter(sched, step, buffers, prefix=prefix, tile=_tile_dim(sched, step))
            for comp in step.comps:
                em.emit(comp)
            kernel_fns.append(em)
    launch = launcher.Launcher(prefix)
    for em in kernel_fns:
        lines = em.function()
        launch.add(em.kernel.index, lines, em.args)
    segments, current = [], []
    threshold = (config.cpp.parallel_threshold_with_blas if _calls_blas(sched)
                 else config.cpp.parallel_threshold)
    for i, step in enumerate(sched.steps):
        if isinstance(step, Kernel):
            current.append(step.index)
        elif (made := gemm.segment_function(f"{prefix}x{i}", step, threshold)) is not None:
            lines, args = made      # a product, an index extern or a scan in C (gemm.in_segment)
            for v in args:
                buffers.name(v)
            launch.add(f"{prefix}x{i}", lines, args)
            current.append(f"{prefix}x{i}")
        elif current:
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    chunks = launch.chunks(segments)
    chunks[0] = header + chunks[0]
    return chunks, launch.segment_buffers
