"""The backend without a C compiler: a graph as one generated Python function over NumPy.

When no C compiler works (``build.compiler_works()``), or ``config.cpp.numpy_fallback``
forces it, `compile_graph` runs this module's code instead of C kernels: one straight-line
function per graph that calls NumPy directly, with no `bind`, no Tensor and no dispatch
between nodes (Note [Fused NumPy code]). This module owns that generated function; it
shares nothing with the C path except the graph and the primitives' own ``impl``s.

Note [Fused NumPy code]
NumPy cannot fuse a chain of ufuncs into one loop, but most of what fusion saves can still
be had: (1) a pointwise node whose ``impl`` is a ufunc writes with ``out=`` into a buffer
that a dead operand leaves behind, so ``(x * 1.5).sin() + 0.25`` runs three passes over
one buffer, in cache, instead of allocating three arrays; (2) intermediate buffers are
allocated once per compiled graph, at compile time, and reused by every call (page faults
of fresh large arrays cost as much as the arithmetic); (3) the floating-point error state
is set once per call, not once per node. Buffers that a graph output may alias (through a
view made by a movement node or any non-ufunc impl, assumed conservatively to alias its
operands) are never shared: they are allocated per call, as eager does. A second call while
one is running (another thread, or re-entry) gets fresh buffers instead of the shared ones
(a non-blocking lock decides). Results equal eager's bit for bit: the same ufuncs on the
same dtypes, in the same order.

Note [Writes run last]
A write node (``copy_to``, Note [Effects]) computes the new value functionally; the graph
reads that value through the node's output, never through the written tensor's memory.
So the runners perform the writes into input (or captured) tensors after every node has
run: a view of an input taken before the write (a NumPy view here, a kernel reading the
input's memory in C) then still sees the value the graph says it reads.
"""
from __future__ import annotations

import threading

import numpy as np

from .._core.ir import Const, Var
from .._core.tensor import wrap

try:        # the context variable behind np.errstate (Note [Silent floating-point errors])
    from .._prims.elementwise import _EXTOBJ, _IGNORE
except ImportError:  # pragma: no cover - other NumPy versions
    _EXTOBJ = _IGNORE = None


def _ufunc_of(node):
    """The NumPy ufunc a pointwise node's impl is (possibly behind an errstate wrapper), when
    calling it with ``out=`` gives exactly the node's output dtype; else None."""
    rule = getattr(node.prim, "lower", None)
    if rule is None or rule.kind != "pointwise" or node.prim.mutates is not None or node.params:
        return None
    impl = node.prim.impl
    u = impl if isinstance(impl, np.ufunc) else getattr(impl, "__wrapped__", None)
    if not isinstance(u, np.ufunc) or u.nout != 1 or u.nin != len(node.ins):
        return None
    out = node.outs[0]
    try:
        with np.errstate(all="ignore"):
            probe = u(*[np.zeros((), v.dtype if isinstance(v, Var) else v.value._data.dtype)
                    for v in node.ins])
    except (TypeError, ValueError):
        return None
    return u if np.asarray(probe).dtype == out.dtype else None


def _write_root(node, roots):
    """The input or constant at the root of a chain of writes (Note [Effects])."""
    dst = node.ins[node.prim.mutates]
    root = roots[id(node.outs[0])] = roots.get(id(dst), dst)
    return root



def return_line(graph, names, ns, arrays=False):
    """The generated ``return (...)`` of a graph's outputs: inputs as passed (``a<i>``),
    captured constants (``_ct<i>``), computed buffers wrapped as Tensors, and Python
    values through ``ns`` (shared by this module's code and runner.py's). With
    ``arrays``, the line of a runner on arrays (Note [Runners on arrays], runner.py):
    constants' and buffers' arrays, and None for a graph with a Python-value output."""
    results = []
    for o in graph.outputs:
        if isinstance(o, Var) and o in graph.inputs:
            results.append(f"a{graph.inputs.index(o)}")
        elif isinstance(o, Const):
            results.append(f"_ct{graph.consts.index(o)}" + ("._data" if arrays else ""))
        elif isinstance(o, Var):
            results.append(names[id(o)] if arrays else f"_wrap({names[id(o)]})")
        elif arrays:
            return None
        else:
            ns[f"_o{len(results)}"] = o
            results.append(f"_o{len(results)}")
    return f"return ({', '.join(results)}{',' if len(results) == 1 else ''})"

def write_back(graph, node, value, roots):
    """The Python line performing ``node``'s write into the tensor it writes, or None (the
    runners' shared rule: the root of the chain of writes receives the value)."""
    root = _write_root(node, roots)
    if root in graph.inputs:
        return f"a{graph.inputs.index(root)}.copy_(_wrap({value}))"
    if root in graph.consts:
        return f"_ct{graph.consts.index(root)}.copy_(_wrap({value}))"
    return None


class _Plan:
    """Which buffer each ufunc node writes (Note [Fused NumPy code])."""

    def __init__(self, graph):
        self.graph = graph
        self.ufuncs = {id(n): _ufunc_of(n) for n in graph.nodes}
        self.alias = {}        # id(value) -> ids of the ufunc outputs whose memory it may share
        for n in graph.nodes:
            if self.ufuncs[id(n)] is not None:
                self.alias[id(n.outs[0])] = {id(n.outs[0])}
                continue
            fresh = n.prim.lower is not None and n.prim.lower.kind == "reduction" and \
                n.params.get("axes")
            shared = set() if fresh or n.is_effect() else \
                set().union(*[self.alias.get(id(v), set()) for v in n.ins])
            for v in n.outs:
                self.alias[id(v)] = shared
        self.escapes = set().union(*[self.alias.get(id(o), set()) for o in graph.outputs
                                     if isinstance(o, Var)])
        self.last_use = {}
        for i, n in enumerate(graph.nodes):
            for v in n.ins:
                for r in self.alias.get(id(v), ()):
                    self.last_use[r] = i
        self.buffers = []      # (shape, dtype) of each shared buffer
        self.assigned = {}     # id(ufunc output) -> shared buffer index, or None (per call)
        free, owner = {}, {}   # (shape, dtype) -> free buffer indices; buffer -> its value
        for i, n in enumerate(graph.nodes):
            dying = [r for r in set().union(*[self.alias.get(id(v), set()) for v in n.ins])
                     if self.last_use.get(r) == i and r in owner]
            out = n.outs[0] if n.outs else None
            if self.ufuncs[id(n)] is not None:
                # an operand that dies here and is exactly a buffer: write in place
                for v in n.ins:
                    if id(v) in dying and self.assigned.get(id(v)) is not None:
                        self._release(id(v), owner, free)
                        dying.remove(id(v))
                key = (out.shape, out.dtype)
                if id(out) in self.escapes or id(out) not in self.last_use:
                    self.assigned[id(out)] = None
                else:
                    pool = free.get(key)
                    k = pool.pop() if pool else len(self.buffers)
                    if k == len(self.buffers):
                        self.buffers.append(key)
                    self.assigned[id(out)], owner[id(out)] = k, k
            for r in dying:
                self._release(r, owner, free)

    def _release(self, r, owner, free):
        k = owner.pop(r, None)
        if k is not None:
            free.setdefault(self.buffers[k], []).append(k)


# Note [Captured tensors are read per call]
# A graph's captured tensors (parameters of a module called in the compiled region,
# closed-over tensors) are read from their Tensor object on each call, never snapshot when
# compiling: an optimizer updates them in place, but ``param.data = t`` and
# ``module.to(...)``/``.double()`` replace the array. The runner compares the array with
# the one it was compiled with (one identity check): a new array of the same shape and
# dtype is used (made contiguous for C kernels); any other change is an error naming the
# tensor (under compile, dynamo's guards on captured tensors recompile before that).

def const_reads(graph, ns, contiguous=False, used=None):
    """Lines binding ``_c{j}`` to the array of the graph's ``j``-th captured tensor, read
    per call (Note [Captured tensors are read per call]), for those whose id is in ``used``
    (default: all); ``contiguous``: as C kernels need it. Fills ``ns`` with what the lines
    use (``_ct{j}`` is the Tensor itself)."""
    lines = []
    ns["_const_changed"] = _const_changed
    for j, c in enumerate(graph.consts):
        ns[f"_ct{j}"] = c.value
        if used is not None and id(c) not in used:
            continue
        d = c.value._data
        ns[f"_ct{j}"], ns[f"_ca{j}"] = c.value, d
        lines.append(f"_c{j} = _ct{j}._data")
        changed = f"_const_changed(_c{j}, _ca{j}, {c.name!r}, {contiguous!r})"
        if contiguous and not d.flags.c_contiguous:
            lines.append(f"_c{j} = {changed}")      # a copy per call, as the inputs get
        else:
            lines.append(f"if _c{j} is not _ca{j}: _c{j} = {changed}")
    return lines


def _const_changed(new, old, name, contiguous):
    """The array a captured tensor holds now, checked against the compiled one."""
    if new.__class__ is not np.ndarray or new.shape != old.shape or new.dtype != old.dtype:
        raise RuntimeError(
            f"compiled graph: captured tensor {name} was compiled as {old.dtype}{list(old.shape)} "
            f"but now holds {getattr(new, 'dtype', type(new).__name__)}"
            f"{list(getattr(new, 'shape', ()))}; compile the graph again")
    if contiguous and not new.flags.c_contiguous:
        return np.ascontiguousarray(new).reshape(new.shape)
    return new


def generate(graph):
    """The source and function of ``graph`` run with NumPy (Note [Fused NumPy code]).

    The function takes the graph's flat input tensors and returns its output tensors, like
    the C runner's.
    """
    plan = _Plan(graph)
    ns = {"_wrap": wrap, "_empty": np.empty, "_asarray": np.asarray, "_ndarray": np.ndarray,
          "_ctx": _EXTOBJ, "_ignore": _IGNORE}
    names = {}
    args = [f"a{k}" for k in range(len(graph.inputs))]
    bufs = [f"b{k}" for k in range(len(plan.buffers))]
    lines = []
    for k, v in enumerate(graph.inputs):
        names[id(v)] = f"x{k}"
        lines.append(f"x{k} = a{k}._data")
    for j, c in enumerate(graph.consts):
        names[id(c)] = f"_c{j}"
    lines += const_reads(graph, ns)
    roots, writes = {}, []
    for i, n in enumerate(graph.nodes):
        ins = [names.get(id(v), repr(v)) for v in n.ins]
        outs = [names.setdefault(id(v), f"t{i}_{j}") for j, v in enumerate(n.outs)]
        u = plan.ufuncs[id(n)]
        where = f"  # {n.prim.name}" + (f"  {n.where}" if n.where else "")
        if u is not None:
            v = n.outs[0]
            k = plan.assigned[id(v)]
            ns[f"_u{i}"] = u
            if k is None:
                ns[f"_s{i}"], ns[f"_d{i}"] = v.shape, v.dtype
                target = f"_empty(_s{i}, _d{i})"
            else:
                target = f"b{k}"
            lines.append(f"{outs[0]} = _u{i}({', '.join(ins)}, out={target}){where}")
            continue
        ns[f"_p{i}"], ns[f"_k{i}"] = n.prim.impl, n.params
        call = f"_p{i}({', '.join(ins + [f'**_k{i}'])})"
        lhs = ", ".join(outs) + ("," if n.prim.multiple_results else "")
        lines.append(f"{lhs or '_'} = {call}{where}")
        for o, v in zip(outs, n.outs):
            if len(v.shape) == 0:
                lines.append(f"if {o}.__class__ is not _ndarray: {o} = _asarray({o})")
        if n.is_effect():
            line = write_back(graph, n, outs[0], roots)
            if line:
                writes.append(line)       # Note [Writes run last]
    lines += writes
    lines.append(return_line(graph, names, ns))
    body = f"def body({', '.join(args + bufs)}):\n" + "".join(f"    {ln}\n" for ln in lines)
    shared = [np.empty(shape, dtype) for shape, dtype in plan.buffers]
    ns["_shared"], ns["_lock"], ns["_fresh"] = shared, threading.Lock(), \
        lambda: [np.empty(s, d) for s, d in plan.buffers]
    a = ", ".join(args)
    entry = [f"def run({a}):"]
    if _EXTOBJ is not None:     # NumPy's error state, once per call
        entry += ["    _token = _ctx.set(_ignore)", "    try:"]
    pad = "        " if _EXTOBJ is not None else "    "
    if bufs:
        entry += [f"{pad}if not _lock.acquire(False):",
                  f"{pad}    return body({', '.join(args + ['*_fresh()'])})",
                  f"{pad}try:", f"{pad}    return body({', '.join(args + ['*_shared'])})",
                  f"{pad}finally:", f"{pad}    _lock.release()"]
    else:
        entry.append(f"{pad}return body({a})")
    if _EXTOBJ is not None:
        entry += ["    finally:", "        _ctx.reset(_token)"]
    entry = "\n".join(entry) + "\n"
    source = body + entry
    exec(compile(source, f"<inductor numpy {graph.name}>", "exec"), ns)
    return source, ns["run"]
