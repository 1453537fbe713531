"""In-place ops (``add_``, ``copy_``, ``x[i] = v`` …): one mechanism for eager and transforms.

Note [In-place ops]
An in-place op computes its result functionally, then makes ``self`` hold it:
- Eager, no autograd involved: NumPy writes into ``self``'s buffer (views see it) and the
  version counter is bumped.
- Eager autograd: the result is recomputed from a snapshot of ``self`` (so the backward
  node saves the old value, not the buffer about to change), written into the buffer,
  and ``self`` is rebound to the result's ``grad_fn``. If ``self`` is a view, its base is
  rebound to "base with the view's elements replaced" (a `scatter` at the view's
  positions, Note [Indexing by positions]), so gradients reach the base.
- Under transforms the payload is a tracer: the same rebinding happens without a buffer
  (functionalization). Writing a value that is more transformed than ``self`` (a batched
  value into a tensor captured from outside vmap) raises PyTorch's error.

Note [Created inside a transform]
A tensor made by a creation op (zeros, full, …) while transforms are active records
them. Writing a batched (or otherwise transformed) value into it is then allowed: the
tensor belongs to the mapped function, so it simply becomes batched, as a user writing
``out = torch.zeros(3); out[0] = x.sum()`` inside vmap expects. PyTorch raises here; we
keep its error for tensors captured from outside, where a write would leak out.
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core import primitive as _prim
from .._core.tensor import Tensor, VersionCounter, wrap
from .._prims.ref import copy_to
from ._common import broadcast_result, broadcast_to, convert, scalar_type_name


def _levels(payload):
    out = set()
    while payload.__class__ is not ndarray and hasattr(payload, "interp"):
        out.add(payload.interp)
        inner = payload.inner()
        if inner is None:
            break
        payload = inner._data
    return out


def _check_castable(self, result, name):
    src, dst = result.dtype, self.dtype
    if _dt._category(src) > _dt._category(dst):
        raise RuntimeError(f"result type {scalar_type_name(src)} can't be cast to the desired "
                           f"output type {scalar_type_name(dst)}")


def _check_leaf(self):
    if _prim.grad_mode[0]:
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        base = self._base
        if base is not None and base.grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")


def _snapshot(t: Tensor) -> Tensor:
    s = wrap(np.array(t._data, copy=True))
    s.grad_fn, s._output_nr, s._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    return s


def _operand_snapshot(t: Tensor) -> Tensor:
    """What ``fn`` of an in-place op reads under autograd: a copy of ``t`` whose history
    saves no buffer the write is about to change. A view is replayed on a copy of its base,
    so the view's own node does not save the base being overwritten."""
    base = t._base
    if base is not None and t._view_fn is not None and base._data.__class__ is ndarray:
        return t._view_fn(_snapshot(base))
    return _snapshot(t)


def _fit(self, result, name):
    if not isinstance(result, Tensor):
        from ._common import to_tensor
        result = to_tensor(result, self.dtype)
    _check_castable(self, result, name)
    shape = tuple(self._data.shape)
    rshape = tuple(result._data.shape)
    if rshape != shape:
        _check_fits(shape, rshape)
        result = broadcast_to(result, shape)
    return convert(result, self.dtype)


def _check_fits(shape, rshape):
    """PyTorch's error unless a result of shape ``rshape`` broadcasts to ``shape``."""
    b = broadcast_result(shape, rshape)
    if b != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                           f"shape {list(b if b is not None else rshape)}")


def inplace(self: Tensor, fn, name="inplace"):
    """Run ``fn(self)`` and store the result in ``self`` (Note [In-place ops])."""
    _check_leaf(self)
    result = fn(self)
    d = self._data
    if d.__class__ is ndarray:
        rd = result._data if isinstance(result, Tensor) else None
        tracked = _prim.grad_mode[0] and (self._requires_grad or (
            self._base is not None and self._base._requires_grad))
        if tracked and not (isinstance(result, Tensor) and result._requires_grad):
            # A constant written into a tensor autograd tracks (zero_, fill_, copy_ of a
            # constant): the old value's gradient must stop here, as in PyTorch.
            snap = _operand_snapshot(self)
            return assign(self, _constant_write(snap, _fit(self, fn(snap), name)))
        if rd is None or (rd.__class__ is ndarray and not result._requires_grad):
            if rd is None or rd is not d:
                _check_castable(self, result if isinstance(result, Tensor) else
                                _scalar_tensor(result), name)
                if rd is not None and rd.shape != d.shape:
                    _check_fits(d.shape, rd.shape)
                np.copyto(d, rd if rd is not None else result, casting="unsafe")
            self._version_counter.value += 1
            return self
        if rd.__class__ is ndarray and _prim.grad_mode[0]:
            result = fn(_operand_snapshot(self))
    op_node = result.grad_fn if isinstance(result, Tensor) and name not in _PLAIN_WRITES else None
    assign(self, _fit(self, result, name))
    if op_node is not None and self._base is None and self.grad_fn is not op_node and \
            self.grad_fn is not None:
        _name_write(self.grad_fn, op_node)   # Note [grad_fn of an in-place op]
    return self


# Note [grad_fn of an in-place op]
# Under autograd an in-place op's result reaches ``self`` through a write node (copy_to,
# Note [Effects]), so ``x.relu_().grad_fn`` would print as that node. PyTorch prints the op's
# own node there (ReluBackward0, AddBackward0), so the write node takes its name (a decorated
# composite then names it as its out-of-place call would, Note [grad_fn names of composite
# ops]). A write into a view keeps the view's node. The plain writes keep CopyBackwards: their
# value's node is the source's own history (``y.copy_(x * 2)``), not an op of this call.
_PLAIN_WRITES = frozenset({"copy_", "fill_", "__setitem__"})


def _name_write(node, op_node):
    label = op_node.name()
    if node.metadata is None:
        node.metadata = {"name": label}
    else:
        node.metadata["name"] = label


def _constant_write(old, value):
    """``value`` with a node whose vjp sends zero to ``old`` (keeps requires_grad, like PyTorch)."""
    from .creation import ones_like
    from .math import where
    return where(ones_like(value, dtype=_dt.bool_), value, old)


def _scalar_tensor(v):
    from ._common import to_tensor
    return to_tensor(v)


def assign(self: Tensor, value: Tensor) -> Tensor:
    """Make ``self`` hold ``value`` (same shape and dtype), keeping views consistent."""
    if value._data.__class__ is not ndarray:
        mine, theirs = _levels(self._data), _levels(value._data)
        owner = self if self._base is None else self._base
        extra = theirs - mine
        if extra and not extra <= owner.__dict__.get("_created_under", frozenset()) and \
                not all(i.claims_constants for i in extra):   # Note [Writes into captured tensors]
            raise RuntimeError(
                "vmap: inplace arithmetic(self, *extra_args) is not possible because there "
                "exists a Tensor `other` in extra_args that has more elements than `self`. This "
                "happened due to `other` being vmapped over but `self` not being vmapped over in "
                "a vmap. Please try to use out-of-place operators instead of inplace arithmetic. "
                "(Or, inside a grad transform: an in-place op would mutate a tensor captured from "
                "outside the transform; copy it first with .clone().)")
    base = self._base
    if base is not None and (value._requires_grad or value._data.__class__ is not ndarray
                             or base._requires_grad):
        from .index import positions
        from .._prims import indexing as I
        from .shape import reshape
        pos = self._view_fn(positions(base, (Ellipsis,)))
        source = _snapshot(base) if base._data.__class__ is ndarray else base
        flat = reshape(source.contiguous(), (-1,))
        new_base = reshape(_prim.bind(I.scatter, flat, reshape(pos, (-1,)),
                                      reshape(convert(value, base.dtype).contiguous(), (-1,)), dim=0),
                           tuple(base.shape))
        _write(base, new_base)
        view = self._view_fn(base)
        if self._data.__class__ is ndarray and view._data.__class__ is ndarray:
            self.grad_fn, self._output_nr = view.grad_fn, view._output_nr
            self._requires_grad = view._requires_grad
        else:
            _note_write(self, view._data)
            self._data = view._data   # later reads see the written values
        self._version_counter.value += 1
        return self
    _write(self, value)
    return self


def _write(t: Tensor, value: Tensor):
    """``t`` receives ``value``: a `copy_to` (Note [Effects]) unless nothing but a buffer
    changes (eager, no autograd), where binding it would only copy the value once more."""
    if value._requires_grad or value._data.__class__ is not ndarray or t._data.__class__ is not ndarray:
        value = _prim.bind(copy_to, t, value)
    _store(t, value)


def _store(t: Tensor, value: Tensor):
    """Make ``t`` hold ``value``: write its buffer (eager) or rebind its payload."""
    if value._requires_grad and value.grad_fn is None:
        # A leaf (eager, or lifted by func.grad): its history is itself, so t needs an
        # edge to it, not its empty grad_fn.
        from .shape import clone
        value = clone(value)
    d = t._data
    if d.__class__ is ndarray and value._data.__class__ is ndarray:
        if value._data is not d:
            np.copyto(d, value._data, casting="unsafe")
        t._version_counter.value += 1
    else:
        # Rebinding leaves the old buffer untouched: tensors saved from it stay valid.
        _note_write(t, value._data)
        t._data = value._data
        t._version_counter = VersionCounter()
    if value._requires_grad:
        t.grad_fn, t._output_nr, t._requires_grad = value.grad_fn, value._output_nr, True


_prim.store = _store


# Note [Writes into captured tensors]
# Under compile's capture (a trace that claims constants, Note [Capture claims constants])
# an in-place op on a tensor from outside the function that is not a graph input (a
# module's buffer: BatchNorm's ``running_mean.mul_(1 - m).add_(...)``) is functionalized
# as PyTorch's capture does: the tensor's payload is rebound to the traced new value, so
# later reads in the frame see it, and the trace records the tensor (`note_write`). When
# capture ends, the payload is restored, and the frame's graph returns the final value as
# an extra output that the generated code writes back into the real tensor after each call
# (numtorch/_dynamo/codegen.py). So the write is neither done at capture time nor lost,
# and the graph stays pure (no write node), which AOT autograd needs to compile it.
def _note_write(t: Tensor, payload):
    """Tell the trace owning ``payload`` that real ``t`` is about to be rebound to it."""
    note = getattr(getattr(payload, "interp", None), "note_write", None)
    if note is not None:
        note(t)
