"""Reverse mode as a transform: ``grad``, ``grad_and_value``, ``vjp``.

A call pushes a fresh `GradInterpreter` (Note [Interpreter stack]); its tracers carry
autograd nodes of their own level (Note [One reverse mode]). The backward pass binds VJP
rules on lower-level tensors, so it is differentiated by any enclosing transform; the
engine always runs it with ``create_graph=True`` for that reason.
"""
from __future__ import annotations

import functools

from .._core import primitive as _prim
from .._core.primitive import Interpreter, Tracer, bind, pop, push
from .._core.pytree import tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap
from .._ops.creation import ones_like, zeros_like
from ..autograd import engine
from ..autograd.engine import Node as _Node


# Note [Tracer dtypes]
# The ops layer reads ``t._data.dtype`` and ``.shape`` on every operand (type promotion,
# broadcasting). The base Tracer's properties ask the tensor one level down, which under
# grad(vmap(grad(f))) asks the next, down to the array: MAML read the dtype ~1800 and the
# shape ~950 times per meta-step. A tracer's value never changes (an in-place op rebinds
# the payload to a new tracer), so the grad and vmap tracers copy both once, when made.

class GradTracer(Tracer):
    """Payload of a tensor tracked by a grad level: the lower-level value it stands for."""

    __slots__ = ("primal", "shape", "dtype")

    # Values are real under grad: .item() and Python control flow work, as in PyTorch.
    requires_grad = False   # the tensor holding this payload carries the level's flag

    def __init__(self, interp, primal):
        self.interp, self.primal = interp, primal
        # Read once here, not through every level below on each use (Note [Tracer dtypes]).
        d = primal._data
        self.shape, self.dtype = d.shape, d.dtype

    def inner(self):
        return self.primal

    def stand_in(self):
        v = engine.stand_in(self.primal)
        return None if v is self.primal else GradTracer(self.interp, v)


class GradInterpreter(Interpreter):
    __slots__ = ()

    def lift(self, t: Tensor) -> Tensor:
        """A leaf of this level standing for ``t``."""
        return wrap(GradTracer(self, t), requires_grad=True)

    def mine(self, t):
        d = t._data
        return d.__class__ is GradTracer and d.interp is self

    def _unwrap(self, args):
        """(the primals of ``args``, their edges at this level, whether any is tracked)."""
        primals, edges, tracked = [], [], False
        for a in args:
            d = a._data
            if d.__class__ is GradTracer and d.interp is self:   # self.mine(a), inlined
                primals.append(d.primal)
                e = (a.grad_fn, a._output_nr) if a.grad_fn is not None else \
                    ((a, 0) if a._requires_grad else None)   # engine.edge_of, inlined
                edges.append(e)
                tracked = tracked or e is not None
            else:
                primals.append(a)
                edges.append(None)
        return tuple(primals), tuple(edges), tracked

    def process(self, prim, args, params):
        if len(args) == 2:   # _unwrap, inlined for two operands (most ops)
            a, b = args
            d = a._data
            if d.__class__ is GradTracer and d.interp is self:
                pa = d.primal
                ea = (a.grad_fn, a._output_nr) if a.grad_fn is not None else \
                    ((a, 0) if a._requires_grad else None)
            else:
                pa, ea = a, None
            d = b._data
            if d.__class__ is GradTracer and d.interp is self:
                pb = d.primal
                eb = (b.grad_fn, b._output_nr) if b.grad_fn is not None else \
                    ((b, 0) if b._requires_grad else None)
            else:
                pb, eb = b, None
            primals, edges, tracked = (pa, pb), (ea, eb), ea is not None or eb is not None
        else:
            primals, edges, tracked = self._unwrap(args)
        if prim.multiple_results and prim.name == "graph_call" and tracked and _prim.grad_mode[0]:
            # a compiled region runs its partitioned forward and backward (Note [Compiled
            # regions under grad], numtorch/_aot/function.py)
            from .._aot.function import grad_of_region
            result = grad_of_region(self, primals, edges, params["graph"])
            if result is not None:
                return result
        out = bind(prim, *primals, **params)
        if not tracked or prim.nondiff or not _prim.grad_mode[0]:
            return out
        if prim.multiple_results or prim.vjp_context is not None:
            if prim.multiple_results:
                result = wrapped = tuple(wrap(GradTracer(self, o)) if isinstance(o, Tensor) else o
                                         for o in out)
            else:
                result = wrap(GradTracer(self, out))
                wrapped = (result,)
            # All outputs, in order: `record` skips the non-differentiable ones itself, and
            # an output's position is its output_nr (which cotangent slot it fills).
            engine.record(prim, params, edges, tuple(primals), out, wrapped)
            return result
        # One output and no custom ctx: `record`, inlined (one per differentiated op).
        tracer = GradTracer(self, out)
        result = wrap(tracer)
        if tracer.dtype.kind in "fc":
            result.grad_fn = _Node(prim, params, primals, out, edges)
            result._requires_grad = True
        return result


def _unwrap_output(interp, t):
    if isinstance(t, Tensor) and interp.mine(t):
        return t._data.primal
    return t


def _check_argnums(argnums, nargs, fn):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{fn}: argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"{fn}: argnums must be int or Tuple[int, ...], got: {type(n).__name__}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnums={n}, but only {nargs} positional inputs")
    return tuple(n % nargs for n in nums)


def _lift_tree(interp, tree, fn):
    leaves, spec = tree_flatten(tree)
    lifted = []
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{fn}: Expected f(*args) to have Tensor arguments at argnums, "
                               f"got {type(x).__name__}")
        if x._data.dtype.kind not in "fc":
            raise RuntimeError(f"{fn}: only Tensors of floating point dtype can require "
                               f"gradients, got {x.dtype}")
        lifted.append(interp.lift(x))
    return lifted, spec


class _GradLevel:
    """Context: push a grad interpreter with grad mode on (Case 2 of functorch's no_grad notes)."""

    def __enter__(self):
        self.prev = _prim.grad_mode[0]
        _prim.grad_mode[0] = True
        self.interp = push(GradInterpreter())
        return self.interp

    def __exit__(self, *exc):
        pop(self.interp)
        _prim.grad_mode[0] = self.prev
        return False


# Note [Backward below its level]
# A grad level's backward binds VJP rules on lower-level values only (primals and
# cotangents); it makes no tracer of its own level. So it runs with the level taken off
# the top of the stack (still active: a custom Function's backward may close over one of
# its tracers, which `bind` still hands to it). The binds reach the same interpreters;
# what changes is what the top of the stack says. For the outermost grad the stack is
# then empty, so its backward — a third of MAML's meta-step — takes the eager shortcuts
# (Note [Eager fast path]) that an active transform turns off; nested grads see the
# levels below them, as their binds do. `vjp_fn` already ran its backward after its level
# had been popped.

class _BelowLevel:
    """Context: take ``interp`` (the top of the stack) off the stack, keeping it active."""

    def __init__(self, interp):
        self.interp = interp

    def __enter__(self):
        top = _prim.STACK.pop()
        assert top is self.interp, "interpreter stack corrupted"

    def __exit__(self, *exc):
        _prim.STACK.append(self.interp)
        return False


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing ``(grad, value)`` of ``func`` w.r.t. ``argnums``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "grad_and_value")
        with _GradLevel() as interp:
            args = list(args)
            lifted = {}
            for n in nums:
                leaves, spec = _lift_tree(interp, args[n], "grad_and_value")
                lifted[n] = (leaves, spec)
                args[n] = tree_unflatten(leaves, spec)
            out = func(*args, **kwargs)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                       "a tuple: (output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out).__name__}")
            if out.numel() != 1:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.ndim} dims. Maybe you "
                                   f"wanted to use the vjp or jacrev APIs instead?")
            inputs = [x for n in nums for x in lifted[n][0]]
            with _BelowLevel(interp):   # Note [Backward below its level]
                grads = _backward(interp, [out], None, inputs)
            value = _unwrap_output(interp, out)
            results, i = [], 0
            for n in nums:
                leaves, spec = lifted[n]
                results.append(tree_unflatten(grads[i:i + len(leaves)], spec))
                i += len(leaves)
            g = results[0] if not isinstance(argnums, tuple) else tuple(results)
            if has_aux:
                aux = _unwrap_tree(interp, aux)
                return g, (value, aux)
            return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``grad(func)`` computes the gradient of ``func`` (which must return a one-element tensor)
    w.r.t. the inputs at ``argnums``.

    >>> import numtorch as torch
    >>> x = torch.tensor(0.5)
    >>> torch.allclose(grad(torch.sin)(x), x.cos())
    True
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def _unwrap_tree(interp, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_unwrap_output(interp, x) for x in leaves], spec)


def _backward(interp, outputs, cotangents, inputs, retain_graph=False):
    """Gradients of ``outputs`` w.r.t. the lifted ``inputs``, as lower-level tensors."""
    roots, seeds = [], []
    for i, o in enumerate(outputs):
        if isinstance(o, Tensor) and interp.mine(o) and o.requires_grad:
            roots.append(o)
            seeds.append(ones_like(o._data.primal) if cotangents is None else cotangents[i])
    if not roots:
        return [_zero_grad(interp, x) for x in inputs]
    grads = engine.run_backward(roots, seeds, retain_graph=retain_graph, create_graph=True,
                                inputs=inputs, accumulate=False, allow_unused=True)
    return [g if g is not None else _zero_grad(interp, x) for g, x in zip(grads, inputs)]


# Note [Inputs written in place]
# A function may write one of its inputs in place: BatchNorm in training mode updates its
# running statistics under no_grad. The write rebinds the lifted input's payload (Note
# [Effects]) to a value this level does not track: a lower-level tensor, not a
# GradTracer. The output then does not depend on the input's value before the write, so
# its gradient is zeros of the lower-level value's shape, read from whatever the input
# holds now. (PyTorch refuses to differentiate batch_norm with respect to its running
# statistics at all; functorch's vjp of a function writing an input without it returns
# zeros, as here.)

def _zero_grad(interp, x):
    """Zeros for a lifted input nothing reached (Note [Inputs written in place])."""
    return zeros_like(x._data.primal if interp.mine(x) else x)


def vjp(func, *primals, has_aux=False):
    """Returns ``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives the vector-Jacobian
    products w.r.t. each primal, in the primals' structure. ``vjp_fn`` may be called many times.
    """
    with _GradLevel() as interp:
        leaves, spec = _lift_tree(interp, primals, "vjp")
        out = func(*tree_unflatten(leaves, spec))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
        out_leaves, out_spec = tree_flatten(out)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                                   f"only Tensor outputs, got {type(o).__name__}")
        primal_out = tree_unflatten([_unwrap_output(interp, o) for o in out_leaves], out_spec)
        aux = _unwrap_tree(interp, aux) if has_aux else None

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: {ct_spec}, "
                               f"primal output: {out_spec}")
        for c, o in zip(ct_leaves, out_leaves):
            if not isinstance(c, Tensor) or tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{tuple(getattr(c, 'shape', ()))} and output[0] has a shape "
                                   f"of {tuple(o.shape)}.")
        grads = _backward(interp, out_leaves, ct_leaves, leaves, retain_graph=True)
        return tree_unflatten(grads, spec)

    if has_aux:
        return primal_out, vjp_fn, aux
    return primal_out, vjp_fn
