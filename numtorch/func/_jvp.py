"""Forward mode: ``jvp`` and ``linearize``, by JVP rules (not two reverse passes)."""
from __future__ import annotations

import functools

from .._core.primitive import Interpreter, Tracer, bind, pop, push
from .._core.pytree import tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap


class JvpTracer(Tracer):
    """Payload of a tensor under jvp: its primal and tangent (lower-level tensors)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, interp, primal, tangent):
        self.interp, self.primal, self.tangent = interp, primal, tangent

    def inner(self):
        return self.primal


class JvpInterpreter(Interpreter):
    __slots__ = ()

    def mine(self, t):
        d = t._data
        return d.__class__ is JvpTracer and d.interp is self

    def _unwrap(self, args):
        primals, tangents = [], []
        for a in args:
            if isinstance(a, Tensor) and self.mine(a):
                primals.append(a._data.primal)
                tangents.append(a._data.tangent)
            else:
                primals.append(a)
                tangents.append(None)
        return primals, tangents

    def _wrap(self, out, tangent):
        if tangent is None or not isinstance(out, Tensor):
            return out
        return wrap(JvpTracer(self, out, tangent))

    def process(self, prim, args, params):
        primals, tangents = self._unwrap(args)
        if prim.nondiff or all(t is None for t in tangents):
            return bind(prim, *primals, **params)
        out, tout = prim.jvp(tuple(primals), tuple(tangents), **params)
        if prim.multiple_results:
            return tuple(self._wrap(o, t) for o, t in zip(out, tout))
        return self._wrap(out, tout)


def _check_pair(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           f"should be valid to call f(*primals). Got {type(primals).__name__}")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected tangents to be a tuple. Got "
                           f"{type(tangents).__name__}")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the "
                           f"same python structure. For example, if primals is a tuple of 3 "
                           f"tensors, tangents also must be. Got primals with structure {p_spec} "
                           f"and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be "
                               "Tensors (or pytrees of Tensors)")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have "
                               f"the same shape, got {tuple(p.shape)} and {tuple(t.shape)}")
        if p.dtype != t.dtype:
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have "
                               f"the same dtype, got {p.dtype} and {t.dtype}")
    return p_leaves, t_leaves, p_spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """Returns ``(func(*primals), J @ tangents)``: the Jacobian-vector product by forward mode."""
    p_leaves, t_leaves, spec = _check_pair(primals, tangents)
    interp = push(JvpInterpreter())
    try:
        lifted = [wrap(JvpTracer(interp, p, t)) for p, t in zip(p_leaves, t_leaves)]
        out = func(*tree_unflatten(lifted, spec))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            out, aux = out
        out_leaves, out_spec = tree_flatten(out)
        primal_out, tangent_out = [], []
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f to be a function that "
                                   f"has only Tensor outputs, got {type(o).__name__}")
            if interp.mine(o):
                primal_out.append(o._data.primal)
                tangent_out.append(o._data.tangent)
            else:
                from .._ops.creation import zeros_like
                primal_out.append(o)
                tangent_out.append(zeros_like(o))
        result = (tree_unflatten(primal_out, out_spec), tree_unflatten(tangent_out, out_spec))
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([a._data.primal if isinstance(a, Tensor) and interp.mine(a) else a
                                  for a in aux_leaves], aux_spec)
            return result + (aux,)
        return result
    finally:
        pop(interp)


# Note [Linearize by partial evaluation]
# `linearize(f, *primals)` traces once the joint program `jvp(f, primals, tangents)` with
# both as graph inputs, then splits it (`_core/partial_eval.py`): the nodes that need only
# the primals (f itself and every primal-side factor of the JVP rules: cos(x) for sin) run
# now, once, on the given primals; what reads a tangent is the linear map, a graph of the
# tangents with those residuals as constants. `jvp_fn` runs only that graph, as one region
# (Note [Calling a graph]), so it never re-runs f, retraces nothing, and stays one
# `graph_call` under vmap, grad or jvp of it. `jvp_fn.graph` is the linear graph.


def linearize(func, *primals):
    """Returns ``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``.

    ``func`` is traced once (Note [Linearize by partial evaluation]); each ``jvp_fn`` call
    evaluates only the linear tangent computation.

    >>> import numtorch as torch
    >>> out, jvp_fn = torch.func.linearize(torch.sin, torch.tensor(0.0))
    >>> jvp_fn(torch.tensor(2.0))
    tensor(2.)
    """
    from .._core.partial_eval import bind_inputs, partial_eval
    from ._trace import make_graph
    p_leaves, p_spec = tree_flatten(primals)
    for i, p in enumerate(p_leaves):
        if not isinstance(p, Tensor):
            raise RuntimeError(f"linearize(func, *primals): Expected primals to be Tensors (or "
                               f"pytrees of Tensors), but primal:{i} is {type(p).__name__}")
    n = len(p_leaves)
    out_spec = []

    def joint(*args):
        out, t_out = jvp(func, tree_unflatten(list(args[:n]), p_spec),
                         tree_unflatten(list(args[n:]), p_spec))
        out_leaves, spec = tree_flatten(out)
        out_spec.append(spec)
        return tuple(out_leaves) + tuple(tree_flatten(t_out)[0])

    graph = make_graph(joint, name="linearize")(*p_leaves, *p_leaves)
    m = (len(graph.outputs) - len(graph.rng)) // 2
    known, linear, n_res = partial_eval(graph, [True] * n + [False] * n + [True] * len(graph.rng),
                                        instantiate=[False] * m + [True] * m + [False] * len(graph.rng))
    ran = known(*p_leaves)
    linear = bind_inputs(linear, ran[m:m + n_res])
    linear.name = "jvp_fn"
    shapes = [(tuple(p.shape), p.dtype, p.device) for p in p_leaves]

    @functools.wraps(func)
    def jvp_fn(*tangents):
        t_leaves, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the "
                               f"primals {p_spec}")
        for i, (t, (shape, dtype, device)) in enumerate(zip(t_leaves, shapes)):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"linearize's jvp_fn: tangent:{i} must be a Tensor, got "
                                   f"{type(t).__name__}")
            for what, got, want in (("shape", tuple(t.shape), shape), ("dtype", t.dtype, dtype),
                                    ("device", t.device, device)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree "
                                       f"doesn't match the {what} {want} of the corresponding "
                                       f"primal.")
        return tree_unflatten(list(linear(*t_leaves)), out_spec[0])

    jvp_fn.graph = linear
    return tree_unflatten(list(ran[:m]), out_spec[0]), jvp_fn
