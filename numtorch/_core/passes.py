"""Graph passes: each takes a `Graph` and returns a new one, computing the same outputs.

``dce`` (dead code), ``cse`` (common subexpressions, by hash-consing nodes), ``fold_constants``
and a small pattern rewriter (``rewrite`` with `Rule`s) that later passes (movement-op
simplification, lowering) reuse; ``optimize`` runs a pipeline and can print each graph
before and after. A pass never changes its input graph (new nodes, shared `Var`s) and never
removes, merges or evaluates an impure node (Note [Pure nodes]). This module knows no
particular primitive beyond that rule.
"""
from __future__ import annotations

import numpy as np

from . import primitive as _prim
from .ir import Const, Graph, Node, Var

# Note [Pure nodes]
# A node is pure when running it twice gives the same value and running it zero times is
# unobservable. Not pure: writes (`copy_to`, Note [Effects]: they write an operand), a
# region (`graph_call`) whose graph holds an impure node, and a node with a param whose
# `pure` is False (a custom autograd.Function call: its forward is user code). Random
# draws are pure: each takes the generator's state as an operand and returns the next
# (Note [Random state as a value] in _prims/random.py), so two draws merge only when they
# read the same state (and then they are the same draw), and a draw stays alive while a
# later draw or the graph's returned state reads its new state. Passes keep impure
# nodes in place and in order, and CSE forgets what it has seen at an effect (a write may
# change a value that an earlier node read).


def is_pure(node) -> bool:
    """Whether ``node`` may be removed, merged or evaluated ahead of time (Note [Pure nodes])."""
    if node.is_effect():
        return False
    for p in node.params.values():
        if isinstance(p, Graph) and not all(is_pure(n) for n in p.nodes):
            return False
        if getattr(p, "pure", True) is False:   # a param that says so (autograd.Function's)
            return False
    return True


class Rewriter:
    """Rebuilds a graph node by node; what a `Rule`'s replacement function is given.

    ``emit(prim, *ins, **params)`` appends a new node (its type from the shape rule) and
    returns its output variable(s); ``producer(v)`` is the node of the new graph that defines
    ``v`` (None for inputs and constants); ``const(value)`` makes a captured constant;
    ``value(v)`` is a constant's NumPy array (None for a variable).
    """

    def __init__(self, graph):
        self.graph = graph
        self.nodes, self.consts = [], list(graph.consts)
        self.env = {}          # id(old var) -> its replacement (Var or Const)
        self._producers = {}   # id(var) -> node of the new graph
        self._counter = 0
        self.where = ""

    def get(self, v):
        return self.env.get(id(v), v)

    def producer(self, v):
        return self._producers.get(id(v))

    @staticmethod
    def value(v):
        return v.value._data if isinstance(v, Const) and v.value._data.__class__ is np.ndarray \
            else None

    def const(self, value):
        from .tensor import wrap_array
        c = Const(f"f{len(self.consts)}_{self._counter}", wrap_array(np.asarray(value)),
                  literal=True)
        self._counter += 1
        self.consts.append(c)
        return c

    def append(self, node):
        self.nodes.append(node)
        for v in node.outs:
            self._producers[id(v)] = node

    def emit(self, prim, *ins, **params):
        from .meta import MetaArray
        avals = [MetaArray(v.shape, v.dtype) if isinstance(v, Var) else
                 MetaArray(v.value.shape, v.value._data.dtype) for v in ins]
        res = prim.shape(*avals, **params)
        res = res if prim.multiple_results else (res,)
        outs = []
        for shape, dtype in res:
            outs.append(Var(f"r{self._counter}", shape, dtype))
            self._counter += 1
        self.append(Node(prim, ins, params, outs, self.where))
        return tuple(outs) if prim.multiple_results else outs[0]

    def finish(self, nodes=None):
        g = self.graph
        outputs = [self.get(o) if isinstance(o, (Var, Const)) else o for o in g.outputs]
        used = {id(v) for n in self.nodes for v in n.ins} | {id(o) for o in outputs}
        consts = [c for c in self.consts if id(c) in used]
        return Graph(list(g.inputs), self.nodes, outputs, consts, g.in_tree, g.out_tree,
                     g.name, shape_env=g.shape_env, rng=g.rng).check()


class Rule:
    """A rewrite: nodes of primitive ``prim`` (a name) for which ``when(node, rw)`` holds are
    replaced by ``replace(node, rw)``'s result: the value(s) standing for the node's
    output(s) (variables of the graph, constants, or new nodes made with ``rw.emit``), or
    None to keep the node. ``node.ins`` are already the rewritten graph's values."""

    def __init__(self, prim, replace, when=None, name=None):
        self.prim, self.replace, self.when = prim, replace, when
        self.name = name or getattr(replace, "__name__", prim)


def rewrite(graph, rules, *, max_rounds=10):
    """Apply ``rules`` to every node, in order, until nothing changes (at most ``max_rounds``)."""
    by_prim = {}
    for r in rules:
        by_prim.setdefault(r.prim, []).append(r)
    for _ in range(max_rounds):
        rw, changed = Rewriter(graph), False
        for node in graph.nodes:
            new = Node(node.prim, [rw.get(v) for v in node.ins], node.params, node.outs,
                       node.where)
            replacement = None
            rw.where = node.where
            for r in by_prim.get(node.prim.name, ()):
                if r.when is None or r.when(new, rw):
                    replacement = r.replace(new, rw)
                    if replacement is not None:
                        break
            if replacement is None:
                rw.append(new)
                continue
            changed = True
            reps = replacement if node.prim.multiple_results else (replacement,)
            for old, rep in zip(node.outs, reps):
                rw.env[id(old)] = rep
        graph = rw.finish()
        if not changed:
            break
    return graph


def dce(graph):
    """Dead-code elimination: drop pure nodes none of whose outputs is used."""
    live = {id(o) for o in graph.outputs if isinstance(o, (Var, Const))}
    kept = []
    for node in reversed(graph.nodes):
        if not is_pure(node) or any(id(v) in live for v in node.outs):
            kept.append(node)
            live.update(id(v) for v in node.ins)
    kept.reverse()
    consts = [c for c in graph.consts if id(c) in live]
    return Graph(list(graph.inputs), kept, list(graph.outputs), consts, graph.in_tree,
                 graph.out_tree, graph.name, shape_env=graph.shape_env, rng=graph.rng)


# Note [Literals and captured tensors]
# A graph's constants are of two kinds (`Const.literal`). Literals belong to the graph:
# the 0-d tensors Python numbers become under a trace (`to_tensor` marks them), snapshots
# of tensors made inside the traced function (Note [Constants made inside the trace]) and
# folded results. Captured tensors are tensors from outside: parameters and buffers of a
# library module, optimizer state, globals. The graph reads a captured tensor at each call
# (Note [Captured tensors are read per call]) because its owner changes it between calls
# (an optimizer step, BatchNorm's running statistics, the user's `buf.fill_(...)`), so its
# identity is its meaning: CSE merges small equal *literals* (`x * 2 + y * 2` captures two
# tensors 2.0), never a captured tensor with anything. Merging by value was the cause of
# a wrong result the inductor gave (its pipeline runs cse on graphs with constants): a
# BatchNorm's running_var of ones merged with a literal `torch.ones(3)`, and Adam's step
# count (1.0 at capture) with the literal 1.0 of `step + 1`, so every later step counted
# from 1 (tests/aot/test_captured_constants.py). A tensor that is neither marked nor made
# inside counts as captured: a missed literal costs a merge, never a result.

# Literals up to this many elements are merged by value in CSE.
_SMALL_CONST = 16


def _const_key(c):
    d = c.value._data
    if not c.literal or d.__class__ is not np.ndarray or d.size > _SMALL_CONST or \
            c.value.requires_grad:
        return None
    return ("const", d.shape, d.dtype.str, d.tobytes())


def cse(graph):
    """Common-subexpression elimination by hash-consing: a pure node with the same primitive,
    inputs and params as an earlier one is replaced by it; small equal literals merge, a
    captured tensor never does (Note [Literals and captured tensors])."""
    rw = Rewriter(graph)
    seen = {}
    written = written_ids(graph)
    for c in graph.consts:
        key = _const_key(c) if id(c) not in written else None
        if key is not None:
            rw.env[id(c)] = seen.setdefault(key, c)
    for node in graph.nodes:
        ins = [rw.get(v) for v in node.ins]
        new = Node(node.prim, ins, node.params, node.outs, node.where)
        if not is_pure(node):
            if node.is_effect():
                seen = {k: v for k, v in seen.items() if k[0] == "const"}
            rw.append(new)
            continue
        try:
            key = (node.prim, tuple(id(v) for v in ins), tuple(sorted(node.params.items())))
            hash(key)
        except TypeError:   # an unhashable param: never merged
            rw.append(new)
            continue
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = new
            rw.append(new)
            continue
        for old, rep in zip(node.outs, earlier.outs):
            rw.env[id(old)] = rep
    return rw.finish()


def fold_constants(graph, *, max_numel=4096):
    """Evaluate pure nodes whose inputs are all constants; their results become constants.

    Folding reads the captured tensors' values now: a graph whose captured tensors will be
    changed in place later (parameters an optimizer updates) must not be folded, as with
    TorchInductor's freezing. Constants that require grad are never folded (their gradient
    flows only as inputs), nor are results larger than ``max_numel`` elements (a broadcast
    of a scalar stays a node instead of becoming a large constant).
    """
    written = written_ids(graph)

    def foldable(node, rw):
        return is_pure(node) and node.ins and all(
            rw.value(v) is not None and id(v) not in written and not v.value.requires_grad
            for v in node.ins) and all(_numel(v.shape) <= max_numel for v in node.outs)

    def fold(node, rw):
        out = _prim.eval_bind(node.prim, [v.value for v in node.ins], node.params)
        outs = out if node.prim.multiple_results else (out,)
        consts = tuple(rw.const(o._data) for o in outs)
        return consts if node.prim.multiple_results else consts[0]
    rules = {n.prim.name for n in graph.nodes}
    return rewrite(graph, [Rule(p, fold, foldable, "fold") for p in rules], max_rounds=1)


def written_ids(graph):
    """ids of the values some node writes into (Note [Effects])."""
    return {id(n.ins[n.prim.mutates]) for n in graph.nodes if n.is_effect()}


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


DEFAULT_PASSES = (fold_constants, cse, dce)


def optimize(graph, passes=DEFAULT_PASSES, *, log=None):
    """Run ``passes`` in order; with ``log`` (e.g. ``print``), each graph before and after."""
    for p in passes:
        new = p(graph)
        if log is not None:
            log(f"# before {p.__name__}: {len(graph.nodes)} nodes\n{graph.python_code()}\n"
                f"# after {p.__name__}: {len(new.nodes)} nodes\n{new.python_code()}")
        graph = new
    return graph
