"""``autograd.Function``: user-defined forward and backward (and jvp, vmap) rules.

Note [Custom functions under transforms]
``Function.apply`` finds the innermost interpreter among its tensor arguments, like
`bind`. Each interpreter handles a custom function in ``process_custom``: a grad level
unwraps its tracers, applies the function one level down and records a node whose VJP
calls the user's ``backward``; a jvp level calls the user's ``jvp``; vmap calls the
user's ``vmap`` staticmethod, or with ``generate_vmap_rule = True`` runs ``forward`` on
the batched values (its ops batch themselves). At the bottom the forward runs under
``no_grad`` and, when an input requires grad, eager autograd records the same kind of
node. Each level fills its own ctx with ``setup_context`` (see `context_at_level`).
"""
from __future__ import annotations

from .._core import primitive as _prim
from .._core.primitive import Primitive
from .._core.tensor import Tensor


class FunctionCtx:
    """The ``ctx`` object passed to ``forward``/``setup_context``, ``backward`` and ``jvp``."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self.non_differentiable = ()
        self.dirty = ()

    def save_for_backward(self, *tensors):
        """Saves tensors for ``backward`` (available as ``ctx.saved_tensors``)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is "
                                f"of type {type(t).__name__}")
        self.saved_tensors = tuple(tensors)

    def save_for_forward(self, *tensors):
        self.saved_tensors = tuple(tensors)

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tuple(tensors)

    def mark_dirty(self, *tensors):
        self.dirty = tuple(tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    pass


class Function(metaclass=_FunctionMeta):
    """Base class for custom autograd functions (``forward``, ``setup_context``, ``backward``)."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def vmap(info, in_dims, *args):
        """Override to batch the function by hand; see also ``generate_vmap_rule``."""
        return NotImplemented

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs the function, recording it for autograd and for every active transform."""
        return run_custom(None, cls, args, kwargs)[0]


def _uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def context_at_level(cls, inputs, output):
    """A fresh ctx filled by ``setup_context`` with this level's inputs and outputs.

    Each transform level saves its own tensors, so that a level's backward (or jvp) is
    written in tensors of the levels below it and differentiates again (this is why
    PyTorch requires the ``setup_context`` style under function transforms).
    """
    if not _uses_setup_context(cls):
        raise RuntimeError(
            f"In order to use an autograd.Function ({cls.__name__}) with functorch transforms "
            "(vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod "
            "and not take ctx as the first argument of forward.")
    ctx = FunctionCtx()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in inputs)
    prev = _prim.grad_mode[0]
    _prim.grad_mode[0] = False
    try:
        cls.setup_context(ctx, tuple(inputs), output)
    finally:
        _prim.grad_mode[0] = prev
    return ctx


def innermost(args, below=None):
    """The innermost active interpreter owning a tensor in ``args`` (below ``below``)."""
    top = None
    for a in args:
        if isinstance(a, Tensor):
            interp = getattr(a._data, "interp", None)
            if interp is not None and (below is None or interp.level < below) and (
                    top is None or interp.level > top.level):
                top = interp
    return top


def run_custom(below, cls, args, kwargs):
    """Apply ``cls`` at the innermost level below ``below``; returns (outputs, ctx)."""
    interp = innermost(args, below)
    if interp is not None:
        if not interp.active:
            _prim._escaped(interp)
        return interp.process_custom(cls, args, kwargs)
    return _run_eager(cls, args, kwargs)


def call_forward(cls, args, kwargs):
    """Run the user's forward (and setup_context) without recording; returns (outputs, ctx)."""
    ctx = FunctionCtx()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    prev = _prim.grad_mode[0]
    _prim.grad_mode[0] = False
    try:
        if _uses_setup_context(cls):
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    finally:
        _prim.grad_mode[0] = prev
    return out, ctx


def _run_eager(cls, args, kwargs):
    out, ctx = call_forward(cls, args, kwargs)
    if _prim.grad_mode[0] and any(isinstance(a, Tensor) and a._requires_grad for a in args):
        from .engine import edge_of
        record_custom(cls, ctx, args, out, edge_of)
    return out, ctx


def _custom_vjp(cts, out, *saved, cls, ctx, arg_positions, nargs):
    cts = cts if isinstance(cts, tuple) else (cts,)
    grads = cls.backward(ctx, *cts)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) < nargs:
        raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                           f"gradients (expected {nargs}, got {len(grads)})")
    return tuple(grads[i] for i in arg_positions)


# Never bound: these only carry the VJP that custom nodes run (Note [Custom functions under
# transforms]); the user's class supplies every other rule, so they are not registered.
custom_function = Primitive("custom_function", vjp=_custom_vjp, register=False)
custom_function_multi = Primitive("custom_function_multi", vjp=_custom_vjp,
                                  multiple_results=True, register=False)
# The user's backward reads ctx.saved_tensors, not the inputs (Note [What backward reads]).
custom_function.vjp_needs = custom_function_multi.vjp_needs = ()


def record_custom(cls, ctx, args, out, edge_fn, saved_args=None):
    """Record a node for a custom function on the outputs ``out``.

    ``edge_fn(arg)`` gives the edge of a tensor argument at the recording level.
    """
    from .engine import record
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    edges = tuple(edge_fn(args[i]) for i in positions)
    saved = tuple((saved_args or args)[i] for i in positions)
    outs = out if isinstance(out, tuple) else (out,)
    outs_t = tuple(o for o in outs if isinstance(o, Tensor) and not any(
        o is n for n in ctx.non_differentiable))
    prim = custom_function_multi if isinstance(out, tuple) else custom_function
    node = record(prim, dict(cls=cls, ctx=ctx, arg_positions=positions, nargs=len(args)),
                  edges, saved, out, outs_t)
    node.metadata = {"name": cls.__name__ + "Backward"}
    return node


def once_differentiable(fn):
    """Decorator for ``backward`` methods that do not support double backward."""
    return fn
