"""Vectorization: ``vmap`` by batching rules (no loops, no silent slow path).

A batched value is a lower-level tensor plus the position of its batch dimension; the user
sees the per-example shape. Each primitive's ``batch`` rule moves batch dims instead of
looping, so a vmapped function costs the same number of binds at any batch size.
"""
from __future__ import annotations

import functools

from .._core import primitive as _prim
from .._core.primitive import Interpreter, Tracer, bind, pop, push
from .._core.pytree import broadcast_prefix, tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap
from ..autograd import engine

_DATA_DEPENDENT = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow "
    "(or calling {what} on it). Its value differs per example, so it has no single value here. "
    "Use torch.where (or other tensor ops) instead of Python control flow on batched tensors.")


# Note [The batching interpreter]
# Batch rules see values and batch dims, not the interpreter. A higher-order primitive's
# rule (autograd.Function's) also needs the batch size and the randomness policy, to hand
# them to the user's vmap staticmethod or to a nested vmap. `process` leaves the
# interpreter here just before calling a batch rule; such a rule reads it first thing,
# before it binds anything (which may overwrite it).
BATCHING = [None]


class BatchTracer(Tracer):
    """Payload of a tensor under vmap: a lower-level value with a batch dimension ``bdim``."""

    __slots__ = ("value", "bdim", "shape", "dtype")

    def __init__(self, interp, value, bdim):
        self.interp, self.value, self.bdim = interp, value, bdim
        d = value._data
        s = d.shape   # the per-example shape, read often by ops and rules
        self.shape = s[:bdim] + s[bdim + 1:]
        self.dtype = d.dtype   # Note [Tracer dtypes]

    def inner(self):
        return self.value

    def stand_in(self):
        v = engine.stand_in(self.value)
        return None if v is self.value else BatchTracer(self.interp, v, self.bdim)

    def map_elementwise(self, op):
        """``op``, an elementwise op of one tensor, applied to the batched value: the
        result keeps this batch dim (Note [Elementwise composites under vmap])."""
        if not self.interp.active:
            return None   # the composed path binds, and bind reports the escaped tracer
        return wrap(BatchTracer(self.interp, op(self.value), self.bdim))

    def concrete(self, what):
        if what == "item()":
            raise RuntimeError(
                "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
                "over calling .item() on a Tensor, please try to rewrite what you're doing with "
                "other operations (e.g. torch.where instead of Python control flow).")
        raise RuntimeError(_DATA_DEPENDENT.format(what=what))


# Note [Elementwise composites under vmap]
# A composite op that is elementwise in one tensor (ReLU: a comparison and a select)
# would, under vmap, bind each of its parts on the batched tracer: a batch rule per part,
# and its constants (ReLU's zero) broadcast to the batch. Its vmap is the op itself
# applied to the batched value, whatever the batch dim's position, as PyTorch's batch
# rule for relu does; such an op asks its argument's tracer for `map_elementwise(op)`,
# and a BatchTracer answers with the op of its value under the same batch dim. The op on
# the value runs below this level, so an eager value takes the op's eager path (ReLU's
# one pass and its ReluBackward0 node) and a lower transform's tracer its rules there.
# Tracers of other transforms have no such method: the op composes there.


class VmapInterpreter(Interpreter):
    __slots__ = ("size", "randomness")

    def __init__(self, size, randomness):
        self.size, self.randomness = size, randomness

    def mine(self, t):
        d = t._data
        return d.__class__ is BatchTracer and d.interp is self

    def _unwrap(self, args):
        values, bdims, batched = [], [], False
        for a in args:
            d = a._data
            if d.__class__ is BatchTracer and d.interp is self:   # self.mine(a), inlined
                values.append(d.value)
                bdims.append(d.bdim)
                batched = True
            else:
                values.append(a)
                bdims.append(None)
        return values, bdims, batched

    def _wrap(self, out, bdim):
        if bdim is None or not isinstance(out, Tensor):
            return out
        return wrap(BatchTracer(self, out, bdim))

    def process(self, prim, args, params):
        values, bdims, batched = self._unwrap(args)
        if not batched:
            return bind(prim, *values, **params)
        batch = prim.batch
        if batch is None:
            raise NotImplementedError(f"vmap: the primitive {prim.name} has no batching rule")
        BATCHING[0] = self   # Note [The batching interpreter]
        out, out_bdim = batch(tuple(values), tuple(bdims), **params)
        if prim.multiple_results:
            return tuple(self._wrap(o, d) for o, d in zip(out, out_bdim))
        if out_bdim is None:
            return out
        return wrap(BatchTracer(self, out, out_bdim))   # _wrap, inlined: one per bind

    def process_draw(self, prim, args, params):
        # the randomness policy (Note [Random primitives] in _prims/random.py)
        if self.randomness == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either use "
                "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                "operation out of vmap")
        values, bdims, batched = self._unwrap(args)
        with _suspended(self):
            if self.randomness == "same" and not batched:
                return prim.bind(*values, **params)
            out, out_bdims = prim.batch(tuple(values), tuple(bdims), batch_size=self.size,
                                        **params)
        return tuple(self._wrap(o, d) for o, d in zip(out, out_bdims))


class VmapInfo:
    """The ``info`` argument of a custom Function's ``vmap`` staticmethod."""

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness




class _suspended:
    """Take an interpreter off the stack while its batch rule draws (random prims)."""

    def __init__(self, interp):
        self.interp = interp

    def __enter__(self):
        self.index = _prim.STACK.index(self.interp)
        _prim.STACK.pop(self.index)

    def __exit__(self, *exc):
        _prim.STACK.insert(self.index, self.interp)
        return False


# ---------------------------------------------------------------------------------------

def _fn_name(func):
    name = getattr(func, "__name__", None)   # repr only when needed: each call runs this
    return name if name is not None else repr(func)


def _validate(func, in_dims, args, flat_args, flat_dims):
    name = _fn_name(func)
    size = None
    for a, d in zip(flat_args, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be "
                             f"int or None (or a pytree of them), got {d!r}")
        if not isinstance(a, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"an input but the input is of type {type(a)}. We cannot vmap over "
                             f"non-Tensor arguments, please use None as the respective in_dim")
        nd = a.ndim
        if not -nd <= d < nd:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"some input, but that input is a Tensor of dimensionality {nd} so "
                             f"expected in_dim to satisfy -{nd} <= in_dim < {nd}.")
        n = a.shape[d]
        if size is None:
            size = n
        elif n != size:
            sizes = [x.shape[dd] for x, dd in zip(flat_args, flat_dims)
                     if dd is not None and isinstance(x, Tensor)]
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
    if size is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dims={in_dims} "
                         f"but no Tensor inputs are batched: at least one in_dim must be an int "
                         f"for a Tensor input")
    return size


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``vmap(func)`` maps ``func`` over dimension ``in_dims`` of its inputs, returning outputs
    stacked along ``out_dims``. Batch rules vectorize every primitive: no Python loop runs.

    >>> import numtorch as torch
    >>> vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2)).shape
    torch.Size([3])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({_fn_name(func)})(<inputs>): got no inputs. Maybe you forgot "
                             f"to add inputs, or you are trying to vmap over a function with no "
                             f"inputs. The latter is unsupported.")
        flat_args, spec = tree_flatten(args)
        dims_prefix = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(f"vmap({_fn_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims "
                             f"is not compatible with the structure of `inputs`. in_dims has "
                             f"structure {tree_flatten(in_dims)[1]} but inputs has structure "
                             f"{spec}.")
        try:
            flat_dims = broadcast_prefix(tuple(dims_prefix), spec)
        except ValueError:
            raise ValueError(f"vmap({_fn_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims "
                             f"is not compatible with the structure of `inputs`. in_dims has "
                             f"structure {tree_flatten(in_dims)[1]} but inputs has structure "
                             f"{spec}.") from None
        size = _validate(func, in_dims, args, flat_args, flat_dims)
        flat_dims = [d % a.ndim if d is not None else None for a, d in zip(flat_args, flat_dims)]
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, flat_args, flat_dims, spec, size, kwargs)
        return _vmap_call(func, flat_args, flat_dims, spec, size, kwargs)

    def _chunked(func, flat_args, flat_dims, spec, size, kwargs):
        from .._ops.shape import cat, narrow
        outs = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            chunk = [narrow(a, d, start, n) if d is not None else a for a, d in zip(flat_args, flat_dims)]
            outs.append(_vmap_call(func, chunk, flat_dims, spec, n, kwargs))
        out_leaves = [tree_flatten(o)[0] for o in outs]
        out_spec = tree_flatten(outs[0])[1]
        dims = _out_dims_for(out_dims, out_spec)
        merged = [cat([o[i] for o in out_leaves], d) if d is not None else out_leaves[0][i]
                  for i, d in enumerate(dims)]
        return tree_unflatten(merged, out_spec)

    def _vmap_call(func, flat_args, flat_dims, spec, size, kwargs):
        interp = push(VmapInterpreter(size, randomness))
        try:
            lifted = [wrap(BatchTracer(interp, a, d)) if d is not None else a
                      for a, d in zip(flat_args, flat_dims)]
            initial = [t._data if d is not None else None for t, d in zip(lifted, flat_dims)]
            out = func(*tree_unflatten(lifted, spec), **kwargs)
            out_leaves, out_spec = tree_flatten(out)
            dims = _out_dims_for(out_dims, out_spec)
            results = [_unbatch(interp, o, d, size) for o, d in zip(out_leaves, dims)]
            _write_back(interp, flat_args, flat_dims, lifted, initial, size)
            return tree_unflatten(results, out_spec)
        finally:
            pop(interp)

    def _out_dims_for(out_dims, out_spec):
        try:
            if isinstance(out_dims, (tuple, list)) and out_spec.kind is None:
                raise ValueError   # a tuple of out_dims for a single output
            return broadcast_prefix(out_dims, out_spec)
        except ValueError:
            raise ValueError(f"vmap({_fn_name(func)}, ..., out_dims={out_dims})(<inputs>): "
                             f"out_dims is not compatible with the structure of `outputs`. "
                             f"out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                             f"has structure {out_spec}.") from None

    def _write_back(interp, flat_args, flat_dims, lifted, initial, size):
        # In-place ops on a batched input (BatchNorm's running stats passed in through
        # functional_call) rebound its payload; the caller's tensor receives the result.
        for a, d, t, first in zip(flat_args, flat_dims, lifted, initial):
            if d is not None and t._data is not first:
                a.copy_(_unbatch(interp, t, d, size))

    def _unbatch(interp, o, d, size):
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({_fn_name(func)}, ...): `{_fn_name(func)}` must only return "
                             f"Tensors, got type {type(o)}. Did you mean to set out_dims= to None "
                             f"for output?")
        if interp.mine(o):
            if d is None:
                raise ValueError(f"vmap({_fn_name(func)}, ..., out_dims=None)(<inputs>): the "
                                 f"output is batched, so out_dims=None is not allowed for it "
                                 f"(it has a different value per example).")
            from .._prims._helpers import move_bdim
            v = o._data
            return move_bdim(v.value, v.bdim, d % (v.value.ndim))
        if d is None:
            return o
        from .._ops.shape import expand, unsqueeze
        d = d % (o.ndim + 1)
        shape = tuple(o.shape)
        return expand(unsqueeze(o, d), shape[:d] + (size,) + shape[d:])

    return wrapper


# vmap's rule for F.linear, an op composed of several primitives (Note [One node for a
# batched linear]); the module imports this one, so it is attached here, at the end.
from ._vmap_linear import batched_linear as _batched_linear  # noqa: E402

VmapInterpreter.linear = _batched_linear
