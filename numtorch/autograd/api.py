"""``autograd.backward``, ``autograd.grad`` and the Tensor methods that use them."""
from __future__ import annotations

import numpy as np

from .._core.tensor import Tensor, wrap_array
from .._ops.creation import ones_like
from . import engine


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, fn):
    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got "
                           f"{len(grads)} gradients for {len(outputs)} outputs")
    out = []
    for o, g in zip(outputs, grads):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if o._data.dtype.kind not in "fc":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {o.dtype}")
            d = o._data
            g = wrap_array(np.ones(d.shape, d.dtype)) if d.__class__ is np.ndarray else ones_like(o)
        elif not isinstance(g, Tensor):
            from .._ops._common import to_tensor
            g = to_tensor(g, o.dtype)
        if tuple(g.shape) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                               f"{tuple(g.shape)} and output[0] has a shape of {tuple(o.shape)}.")
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of ``tensors`` w.r.t. graph leaves into their ``.grad``."""
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, _as_tuple(grad_tensors), "backward")
    for t in tensors:
        if not t.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        gs = engine.run_backward(tensors, grads, retain_graph=retain_graph,
                                 create_graph=create_graph, inputs=inputs, accumulate=False,
                                 allow_unused=True)
        for t, g in zip(inputs, gs):
            if g is not None:
                t._grad = g if t._grad is None else t._grad + g
        return
    engine.run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Computes and returns the sum of gradients of ``outputs`` w.r.t. ``inputs``."""
    outputs = _as_tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): expected inputs to be Tensors, got {type(t).__name__} at {i}")
    for o in outputs:
        if not o.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
    if is_grads_batched:
        from ..func import vmap
        return vmap(lambda *gs: grad(outputs, inputs, gs, retain_graph=True,
                                     create_graph=create_graph, allow_unused=allow_unused))(
            *_as_tuple(grad_outputs))
    grads = _make_grads(outputs, _as_tuple(grad_outputs), "grad")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = engine.run_backward(outputs, grads, retain_graph=retain_graph,
                                 create_graph=create_graph, inputs=inputs, accumulate=False,
                                 allow_unused=allow_unused)
    if materialize_grads:
        from .._ops.creation import zeros_like
        result = tuple(zeros_like(t) if g is None else g for t, g in zip(inputs, result))
    return result


# ---------------------------------------------------------------------------------------
# Tensor methods

def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor w.r.t. graph leaves (see ``autograd.backward``)."""
    backward(self, gradient, retain_graph, create_graph, inputs)


def _register_hook(self, hook):
    """Registers a hook called with this tensor's gradient; it may return a replacement."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        self.grad_fn._add_pre_hook(self._output_nr, hook)
        hooks = self.grad_fn.pre_hooks[self._output_nr]
    else:
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        # A leaf's hooks run as soon as its last consumer has (Note [Post-accumulate-grad
        # hooks] in autograd/engine.py); the engine looks for such leaves while any exist.
        engine._leaf_hooks_live[0] += 1
        return _RemovableHandle(self._hooks, hook, engine._leaf_hooks_live)
    return _RemovableHandle(hooks, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """Registers ``hook(tensor)``, called after this leaf's ``.grad`` has been accumulated
    in a backward pass (Note [Post-accumulate-grad hooks] in autograd/engine.py)."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook(): expected hook to be callable, "
                        f"got {type(hook).__name__}")
    hooks = self.__dict__.setdefault("_post_accumulate_hooks", [])
    hooks.append(hook)
    engine._leaf_hooks_live[0] += 1
    return _RemovableHandle(hooks, hook, engine._leaf_hooks_live)


class _RemovableHandle:
    def __init__(self, hooks, hook, live=None):
        self._hooks, self._hook, self._live = hooks, hook, live

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
            if self._live is not None:
                self._live[0] -= 1


def _retain_grad(self):
    """Makes this non-leaf tensor keep its ``.grad`` after backward."""
    if self.grad_fn is None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    if self._retains_grad:
        return
    self._retains_grad = True

    def store(g):
        self._grad = g.detach() if self._grad is None else self._grad + g.detach()
    self.grad_fn._add_pre_hook(self._output_nr, store)


# Methods carry their attribute names: capture re-binds a method of a traced tensor by
# ``__name__`` (numtorch._dynamo, _symbolic_method), as Python-defined Tensor methods
# elsewhere are named after their attribute.
_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
_register_hook.__name__ = _register_hook.__qualname__ = "register_hook"
_retain_grad.__name__ = _retain_grad.__qualname__ = "retain_grad"
Tensor.backward = _tensor_backward
Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.retain_grad = _retain_grad
Tensor.retains_grad = property(lambda self: self._retains_grad)
