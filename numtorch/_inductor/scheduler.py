"""Scheduling: which graph values are computed by which kernel, and which are externs.

Input: a `Graph` (numtorch/_core/ir.py). Output: a `Schedule`, an ordered list of steps,
each a `Kernel` (fused pointwise/reduction work over one outer iteration space) or an
extern node (the primitive's NumPy impl; writes such as ``copy_to`` are externs). This
module decides grouping and which values live in memory; it writes no C (that is
``codegen.py``'s job).

Note [Fusion by inlining]
Pointwise and movement nodes are never materialised unless someone outside the kernel
needs them (graph outputs, extern operands): every consumer recomputes them inline at its
own index, so a chain of any length is one loop body, and a broadcast or transpose is an
index expression, never a copy. The *computations* of a kernel are the values it must
produce: reductions and materialised values. A kernel has an outer iteration space (the
parallel loop); a reduction's outer space is its output shape and its reduced axes are an
inner loop; a pointwise value of shape ``outer + inner`` runs as an inner loop per outer
index. Later computations of the same kernel may read a reduction of that kernel only at
the current outer index (where it is a register); that is what makes softmax, log_softmax
and layer_norm one kernel each: per row, a max loop, a sum loop, an output loop.
Anything else starts a new kernel, and the reduction is stored to a temporary buffer.

Note [Horizontal fusion]
Independent pointwise computations of different shapes share a kernel too: a kernel
without reductions takes any pointwise computation, and the code generator gives each its
own loop nest, and a parallel kernel's chunks cut all of them (one table of chunks, Note
[Kernels on the pool], pool.py: no order between them, since no computation of a kernel
reads another's memory, Note [Fusion by inlining]). So an optimizer step over all parameters (new values, momentum buffers) is one
kernel. Its writes into the parameters (``copy_to``) would split it at every parameter;
but the runner performs writes after all kernels anyway (Note [Writes run last]), and
`simplify.forward_writes` points every reader of a written value at the value itself, so
writes leave the kernels' sequence and run at the end.
"""
from __future__ import annotations

import logging

import numpy as np

from .._core import passes
from .._core.ir import Const, Var
from .simplify import literal_value

log = logging.getLogger("numtorch._inductor")

# dtypes the C generator handles; float16 and complex run as externs (the backend's note)
C_TYPES = {"float32": "float", "float64": "double", "int8": "int8_t", "int16": "int16_t",
           "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
           "uint32": "uint32_t", "uint64": "uint64_t", "bool": "uint8_t"}


def dtype_of(v):
    return v.dtype if isinstance(v, Var) else v.value._data.dtype


def shape_of(v):
    return v.shape if isinstance(v, Var) else tuple(v.value.shape)


class Computation:
    """A value a kernel produces: a reduction or a materialised pointwise value."""

    def __init__(self, node):
        self.node, self.var = node, node.outs[0]
        self.rule = node.prim.lower
        self.is_reduction = self.rule.kind == "reduction"
        self.stored = False          # written to memory (decided by `schedule`)
        self.kernel = None

    @property
    def outer_candidate(self):
        return self.var.shape if self.is_reduction else None


class Kernel:
    """Computations sharing one outer loop; ``outer`` is decided by the first reduction."""

    def __init__(self, index):
        self.index, self.comps, self.outer, self.shape = index, [], None, None

    @property
    def name(self):
        return f"kernel{self.index}"

    @property
    def horizontal(self):
        """Pointwise computations of several shapes (Note [Horizontal fusion])."""
        return self.outer is None and len({c.var.shape for c in self.comps}) > 1

    def final_outer(self):
        if self.outer is not None:
            return self.outer
        if self.horizontal:
            return ()
        return self.shape[:-1] if len(self.shape) else ()


class Schedule:
    def __init__(self, graph, steps, comps, lowered, literal_consts):
        self.graph, self.steps, self.comps = graph, steps, comps
        self.lowered = lowered                # id(var) -> node computing it in C
        self.literal_consts = literal_consts  # id(const) -> scalar value (uniform consts)

    @property
    def kernels(self):
        return [s for s in self.steps if isinstance(s, Kernel)]

    def externs(self):
        return [s for s in self.steps if not isinstance(s, Kernel)]


def lowerable(node):
    """Whether ``node`` can become C (else it is an extern, logged with the reason)."""
    if node.prim.mutates is not None:   # a write (Note [Effects]) runs between kernels
        return False
    rule = getattr(node.prim, "lower", None)
    if rule is None or rule.kind == "extern" or node.prim.multiple_results:
        return False
    for v in tuple(node.ins) + tuple(node.outs):
        if not isinstance(v, (Var, Const)) or np.dtype(dtype_of(v)).name not in C_TYPES:
            log.debug("extern %s: dtype %s is not generated", node.prim.name,
                      getattr(v, "dtype", type(v).__name__))
            return False
    if rule.kind == "pointwise" and node.ins and rule.expr_for(dtype_of(node.ins[0]).kind) is None:
        return False
    if rule.kind == "reduction" and dtype_of(node.ins[0]).kind == "b" and rule.combine in ("sum", "prod"):
        return False
    return True


def schedule(graph, make_reads):
    """Group ``graph``'s nodes into kernels and externs.

    ``make_reads(schedule)`` gives the codegen's dry run ``reads(kernel, comp)``: the
    reductions of ``kernel`` that ``comp`` would read at an index other than the outer one
    (then it cannot join).
    """
    nodes = graph.nodes
    lowered = {}
    for n in nodes:
        if lowerable(n):
            lowered[id(n.outs[0])] = n
    literal_consts = {}     # Note [Literal constants], simplify.py
    written = passes.written_ids(graph)
    for c in graph.consts:
        value = literal_value(c, written)
        if value is not None:
            literal_consts[id(c)] = value
    must_store = {id(o) for o in graph.outputs if isinstance(o, Var)}
    for n in nodes:
        if id(n.outs[0]) not in lowered if n.outs else True:
            must_store.update(id(v) for v in n.ins if isinstance(v, Var))
    hoisted = _scalar_chains(graph, lowered)      # Note [Scalar chains run first]
    for n in nodes:
        if id(n) not in hoisted:
            must_store.update(id(v) for v in n.ins if id(lowered.get(id(v), v)) in hoisted)
    must_store |= _shared(graph, lowered, literal_consts, must_store, hoisted)
    sched = Schedule(graph, [], {}, lowered, literal_consts)
    steps, comps, current = sched.steps, sched.comps, None
    reads = make_reads(sched)

    def close():
        nonlocal current
        if current is not None and current.comps:
            steps.append(current)
        current = None

    if hoisted:                   # Note [Scalar chains run first]
        current = Kernel(0)
        for n in nodes:
            if id(n) in hoisted and id(n.outs[0]) in must_store:
                comp = comps[id(n.outs[0])] = Computation(n)
                comp.stored = True
                _join(current, comp)
        close()
    writes = []
    for n in nodes:
        if id(n) in hoisted:
            continue
        if n.is_effect() and not _read_before_writes_end(n, nodes):
            writes.append(n)          # Note [Horizontal fusion]: writes go last
            log.info("extern %s (a write, run after the kernels)", n.prim.name)
            continue
        if not n.outs or id(n.outs[0]) not in lowered:
            close()
            log.info("extern %s (%s)", n.prim.name, getattr(n.prim.lower, "reason", "no lower rule"))
            steps.append(n)
            continue
        rule = n.prim.lower
        if rule.kind != "reduction" and id(n.outs[0]) not in must_store:
            continue          # inlined into its consumers (Note [Fusion by inlining])
        comp = Computation(n)
        comps[id(comp.var)] = comp
        comp.stored = id(comp.var) in must_store
        if current is None or not _fits(current, comp, reads):
            close()
            current = Kernel(len([s for s in steps if isinstance(s, Kernel)]))
            _join(current, comp)
        else:
            _join(current, comp)
    close()
    steps.extend(writes)
    _mark_stored(steps, comps, reads)
    return sched


# Note [Scalar chains run first]
# A value of one element computed only from inputs and constants of one element (Adam's
# bias corrections: pow(beta, step) and a square root, in double) is a loop invariant of
# every kernel that reads it, but inlining (Note [Fusion by inlining]) put its pow() calls
# inside the element loops of all parameters, where they run per element and stop
# vectorization: the compiled Adam step over the MLP took 2.4x eager's time. Such chains
# are computed first, in a kernel of their own, when they hold an operation worth saving
# (`_COSTLY`); what the other kernels read of them is stored (a few scalars) and read
# from memory. Chains of cheap scalar arithmetic stay inlined.
_COSTLY = frozenset({"pow", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
                     "rsqrt", "div", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin",
                     "acos", "atan", "atan2", "erf", "erfc", "lgamma", "digamma"})


def _scalar_chains(graph, lowered):
    """The ids of the nodes computed first (Note [Scalar chains run first])."""
    scalar = {}                            # id(node) -> costly itself or above it
    made = {}
    for n in graph.nodes:
        out = n.outs[0] if n.outs else None
        if out is None or lowered.get(id(out)) is not n or n.prim.lower.kind == "reduction" \
                or int(np.prod(out.shape)) != 1 or any(s.__class__ is not int for s in out.shape):
            continue
        ok, costly = True, n.prim.name in _COSTLY
        for v in n.ins:
            src = made.get(id(v))
            if src is not None:
                costly = costly or scalar[id(src)]
            elif isinstance(v, Var) and (v not in graph.inputs or int(np.prod(v.shape)) != 1):
                ok = False
            elif isinstance(v, Const) and int(np.prod(v.value.shape)) != 1:
                ok = False
        if ok:
            scalar[id(n)] = costly
            made[id(out)] = n
    keep = {i for i, costly in scalar.items() if costly}
    for n in reversed(graph.nodes):          # and what they are computed from
        if id(n) in keep:
            keep.update(id(made[id(v)]) for v in n.ins if id(v) in made)
    return keep


# Note [Values read by several segments]
# Inlining (Note [Fusion by inlining]) recomputes a value in every kernel that reads it.
# That is free within a kernel, but across kernels it repeats the value's reads: MAML's
# inner steps compute p_k = p_(k-1) - lr*g_k, and every kernel reading p_k (the next
# step's matmul operand, the next update, the backward) recomputed p_0 - lr*g_1 - ... -
# lr*g_k from k+1 buffers, so kernels grew with k and no two steps shared a function
# (Note [One function per distinct kernel], launcher.py). A value is stored once instead
# when that moves less memory, counted in elements of the value per element:
#   recomputed: U*L   (each of U readers reads the value's L input buffers)
#   stored:     L + 1 + U   (computed once: L reads and a write; then U reads)
# where U counts the segments (runs of kernels between externs) with a computation
# reading the value inline, a lower bound on the kernels that would recompute it, and L
# adds the value's input buffers, each weighted by its size over the value's (a
# broadcast bias costs little; literals nothing). So a value read in 3 segments is stored
# from 2 input buffers on, one read in 2 segments from 3. Values are decided from the
# last node back, so a reader already stored counts once, in its own segment, and U is
# exact for the decisions taken; L assumes the value's own inputs inline (an upper bound).
# Arithmetic is not counted: these are chains of cheap adds and multiplies, bound by
# memory. Values of one element are left to Note [Scalar chains run first].


def _shared(graph, lowered, literal_consts, must_store, hoisted):
    """The ids of values stored because several segments read them (Note [Values read by
    several segments])."""
    segment, seg = {}, 0
    for n in graph.nodes:
        if id(n) in hoisted:
            continue
        if n.outs and id(n.outs[0]) in lowered and lowered[id(n.outs[0])] is n:
            segment[id(n)] = seg
        elif not n.is_effect():
            seg += 1                           # an extern ends a segment
    inline = {id(n.outs[0]): n for n in graph.nodes if id(n) in segment
              and n.prim.lower.kind != "reduction" and id(n.outs[0]) not in must_store}
    leaves = {}                                # id(inline value) -> {id(buffer): weight}

    def weight(v, size):
        if isinstance(v, Const) and id(v) in literal_consts:
            return None
        return min(1.0, int(np.prod(shape_of(v))) / size)

    for i, n in inline.items():
        size = max(1, int(np.prod(n.outs[0].shape)))
        mine = {}
        for v in n.ins:
            if id(v) in inline:
                for k, w in leaves[id(v)].items():
                    mine[k] = max(mine.get(k, 0.0), min(1.0, w * int(np.prod(v.shape)) / size))
            elif (w := weight(v, size)) is not None:
                mine[id(v)] = max(mine.get(id(v), 0.0), w)
        leaves[i] = mine
    readers = {}                               # id(inline value) -> segments reading it
    stored = set()
    for n in reversed(graph.nodes):
        if id(n) not in segment:
            continue
        out = id(n.outs[0])
        if out in inline and out not in stored:
            segs = readers.get(out, set())
            u, cost = len(segs), sum(leaves[out].values())
            if u >= 2 and int(np.prod(n.outs[0].shape)) > 1 and u * cost >= cost + 1 + u:
                stored.add(out)
        mine = {segment[id(n)]} if out not in inline or out in stored else readers.get(out, set())
        for v in n.ins:
            if id(v) in inline:
                readers.setdefault(id(v), set()).update(mine)
    return stored


def _read_before_writes_end(node, nodes):
    """Whether a node other than a write reads ``node``'s output (then the write must run
    in place; `simplify.forward_writes` makes this rare)."""
    out = node.outs[0]
    return any(any(v is out for v in n.ins) and not n.is_effect() for n in nodes)


def _join(kernel, comp):
    if comp.is_reduction and kernel.outer is None:
        kernel.outer = comp.var.shape
    elif not comp.is_reduction and kernel.shape is None:
        kernel.shape = comp.var.shape
    kernel.comps.append(comp)
    comp.kernel = kernel


def _fits(kernel, comp, reads):
    shape = comp.var.shape
    if comp.is_reduction:
        if kernel.outer is not None and kernel.outer != shape:
            return False
        if kernel.outer is None and any(c.var.shape[:len(shape)] != shape for c in kernel.comps):
            return False
    else:
        if kernel.outer is not None:
            if shape[:len(kernel.outer)] != kernel.outer:
                return False
        # else: any shape joins (Note [Horizontal fusion])
    saved = kernel.outer, kernel.shape
    if comp.is_reduction and kernel.outer is None:
        kernel.outer = shape
    if not comp.is_reduction and kernel.shape is None:
        kernel.shape = shape
    comp.kernel = kernel
    try:
        return not reads(kernel, comp)
    finally:
        kernel.outer, kernel.shape = saved
        comp.kernel = None


def _mark_stored(steps, comps, reads):
    """A reduction read by another kernel (or an extern) lives in a buffer."""
    for step in steps:
        if isinstance(step, Kernel):
            for comp in step.comps:
                for var in reads(step, comp, foreign=True):
                    comps[id(var)].stored = True
