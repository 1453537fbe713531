"""``autograd.Function``: user-defined forward and backward (and jvp, vmap) rules.

``Function.apply`` binds one higher-order primitive, `custom_function_call`, whose rules
call the user's class (Note [Custom functions are a primitive]). Nothing else dispatches
custom functions: eager autograd, grad, jvp, vmap, functionalize and tracing see an
ordinary `bind`. This module owns the primitive, its rules and the ``ctx`` object; the
generated vmap rule lives with vmap (``func/_vmap_custom.py``).

Note [Custom functions are a primitive]
PyTorch's functorch runs ``autograd.Function`` through a higher-order operator,
``custom_function_call``; JAX has ``custom_vjp_call``/``custom_jvp_call``. numtorch does the
same with one primitive that plays both JAX roles (a Function carries both a backward and
a jvp). Its params are a `CustomCall`: the user's class, the non-tensor arguments and
where the tensors go; the tensors are its operands. The rules:
  impl    runs the user's ``forward`` under no_grad on the arrays;
  shape   traces ``forward`` on abstract values (make_graph) for its output types;
  vjp     calls the user's ``backward`` with the ctx of the level that recorded the node;
  jvp     binds the call one level down, then calls the user's ``jvp``;
  batch   the user's ``vmap`` staticmethod, or with ``generate_vmap_rule`` a generated
          Function whose forward/backward/jvp are the user's under vmap (functorch's way),
          so ``grad(vmap(f))`` still calls the custom backward.
So a trace keeps the call as one node (``make_graph(f)`` then ``grad`` runs the custom
backward), and a graph replayed under any transform reaches the same rules.

Note [Custom functions under transforms]
Each grad or jvp level fills its own ctx with ``setup_context``, called with that level's
inputs and outputs (`context_at_level`): its saved tensors belong to the levels below, so
the level's backward is written in tensors an outer transform differentiates again (this
is why PyTorch requires the ``setup_context`` style under function transforms). A grad
level does so when it records the node (`_vjp_context`, the primitive's ``vjp_context``
hook of the autograd engine), so ``mark_non_differentiable`` and ``needs_input_grad``
are known there. The classic ``forward(ctx, ...)`` style only runs at the eager level:
its ctx is the one forward filled, which the impl leaves on the `CustomCall` for the
eager recorder that runs right after it (Note [Classic ctx]).
"""
from __future__ import annotations

from .._core import primitive as _prim
from .._core.primitive import Interpreter, Primitive, Tracer, pop, push
from .._core.tensor import Tensor, wrap, wrap_array
from .._prims._lower import extern


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
        call = CustomCall(cls, args, kwargs)
        outs = custom_function_call.bind(*[args[i] for i in call.positions], call=call)
        return call.unflatten(outs)


def uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def _setup_context_error(cls):
    return RuntimeError(
        f"In order to use an autograd.Function ({cls.__name__}) with functorch transforms "
        "(vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod "
        "and not take ctx as the first argument of forward.")


class CustomCall:
    """The params of one ``Function.apply``: the class, the non-tensor arguments, the layout.

    Hashed by identity, like any param object a graph node holds. ``positions`` are the
    indices of the tensor arguments (the primitive's operands); ``out_spec`` records, the
    first time forward runs, which outputs are tensors (the primitive's results) and the
    other values, so ``unflatten`` rebuilds what the user's forward returned.
    """

    __slots__ = ("cls", "args", "kwargs", "positions", "needs_input_grad", "out_spec",
                 "ctx", "types", "__weakref__")

    # Graph passes never drop, merge or pre-evaluate the call (Note [Pure nodes] in
    # _core/passes.py): forward is user code, which may draw random numbers or count calls.
    pure = False

    def __init__(self, cls, args, kwargs):
        self.cls, self.kwargs = cls, kwargs
        self.positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        self.args = tuple(None if isinstance(a, Tensor) else a for a in args)
        self.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        self.out_spec = None   # (single?, [None for a tensor slot, else the value])
        self.ctx = None        # Note [Classic ctx]
        self.types = {}        # abstract input types -> output types (the shape rule's cache)

    def __repr__(self):
        return self.cls.__qualname__

    @property
    def eager_only(self):
        """A classic ``forward(ctx, ...)`` Function: its backward needs the ctx its forward
        filled, so no transform (not even a graph region's) can run it (Note [Classic ctx])."""
        return not uses_setup_context(self.cls)

    def inputs(self, tensors):
        """The user's argument tuple, with ``tensors`` in the tensor positions."""
        args = list(self.args)
        for i, t in zip(self.positions, tensors):
            args[i] = t
        return tuple(args)

    def flatten(self, out):
        """The tensors of a forward's result (recording its layout the first time)."""
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        if self.out_spec is None:
            self.out_spec = (single, [None if isinstance(o, Tensor) else o for o in outs])
        return tuple(o for o in outs if isinstance(o, Tensor))

    def unflatten(self, tensors):
        """The forward's result rebuilt around ``tensors`` (one per tensor slot)."""
        single, template = self.out_spec
        it = iter(tensors)
        outs = tuple(next(it) if v is None else v for v in template)
        return outs[0] if single else outs

    def per_output(self, tensors):
        """One entry per output of forward: ``tensors`` in the tensor slots, else None."""
        it = iter(tensors)
        return tuple(next(it) if v is None else None for v in self.out_spec[1])

    def tensor_slots(self, values):
        """From a per-output sequence (the user's jvp result, out_dims), the tensor slots."""
        template = self.out_spec[1]
        values = values if isinstance(values, tuple) else (values,) * len(template)
        return tuple(v for v, slot in zip(values, template) if slot is None)


def _no_grad_call(fn, *args, **kwargs):
    prev = _prim.grad_mode[0]
    _prim.grad_mode[0] = False
    try:
        return fn(*args, **kwargs)
    finally:
        _prim.grad_mode[0] = prev


def run_forward(call, tensors):
    """Run the user's forward on ``tensors`` without recording; returns (result, ctx)."""
    ctx = FunctionCtx()
    ctx.needs_input_grad = call.needs_input_grad
    args = call.inputs(tensors)
    if uses_setup_context(call.cls):
        return _no_grad_call(call.cls.forward, *args, **call.kwargs), ctx
    return _no_grad_call(call.cls.forward, ctx, *args, **call.kwargs), ctx


def context_at_level(cls, inputs, output, needs_input_grad=None):
    """A fresh ctx filled by ``setup_context`` with this level's inputs and outputs.

    Each transform level saves its own tensors, so that a level's backward (or jvp) is
    written in tensors of the levels below it and differentiates again (Note [Custom
    functions under transforms]).
    """
    if not uses_setup_context(cls):
        raise _setup_context_error(cls)
    ctx = FunctionCtx()
    ctx.needs_input_grad = needs_input_grad if needs_input_grad is not None else tuple(
        isinstance(a, Tensor) and a.requires_grad for a in inputs)
    _no_grad_call(cls.setup_context, ctx, tuple(inputs), output)
    return ctx


# ---------------------------------------------------------------------------------------
# The primitive's rules (Note [Custom functions are a primitive]).

class _EvalFloor(Interpreter):
    """Pushed while an impl runs forward under transforms: draws inside it evaluate here."""

    __slots__ = ()

    def process_nullary(self, prim, params):
        return _prim.eval_bind(prim, (), params)

    def process_draw(self, prim, args, params):
        return _prim.eval_bind(prim, args, params)

    def read_rng(self, generator):
        # the live state: traces below do not see draws made inside an impl
        return wrap_array(generator.state_array())


def _impl(*arrays, call):
    # Note [Forward at the bottom]: the impl is the eval level's rule, so forward runs
    # there even while transforms are active (its operands belong to none of them): an
    # argument-less op inside it (a random draw, torch.zeros) must not go to the top of
    # the stack, whose tracer an impl could not return.
    tensors = [wrap_array(a) for a in arrays]
    if _prim.STACK:
        floor = push(_EvalFloor())
        try:
            out, ctx = run_forward(call, tensors)
        finally:
            pop(floor)
    else:
        out, ctx = run_forward(call, tensors)
    # Note [Classic ctx]: a forward(ctx, ...) function fills its ctx while it computes; the
    # eager recorder (`_vjp_context`), which runs right after this impl in the same
    # autograd_bind, takes it from here. Functions with setup_context never need it.
    call.ctx = ctx
    return tuple(t._data for t in call.flatten(out))


def _shape(*avals, call):
    key = tuple((a.shape, a.dtype) for a in avals)
    types = call.types.get(key)
    if types is None:
        # Abstract evaluation of forward is tracing it: creation and random ops inside it
        # then land in a graph of their own, not in an enclosing trace.
        from .._core.meta import MetaArray
        from ..func._trace import make_graph
        graph = make_graph(lambda *ts: call.flatten(run_forward(call, ts)[0]))(
            *[wrap(MetaArray(a.shape, a.dtype)) for a in avals])
        outs = graph.outputs[:len(graph.outputs) - len(graph.rng)]   # not the random states
        types = call.types[key] = [(v.shape, v.dtype) if hasattr(v, "shape") else
                                   (v.value.shape, v.value._data.dtype) for v in outs]
    return types


def _jvp(primals, tangents, call):
    from .._ops.creation import zeros_like
    outs = custom_function_call.bind(*primals, call=call)
    cls = call.cls
    needs = [False] * len(call.args)
    full = [None] * len(call.args)
    for i, p, t in zip(call.positions, primals, tangents):
        needs[i] = t is not None
        full[i] = t if t is not None else zeros_like(p)
    ctx = context_at_level(cls, call.inputs(primals), call.unflatten(outs), tuple(needs))
    touts = call.tensor_slots(cls.jvp(ctx, *full))
    return outs, tuple(None if _marked(ctx, o) else t for o, t in zip(outs, touts))


def _vjp(cts, out, *saved, call, ctx):
    grads = call.cls.backward(ctx, *call.per_output(cts))
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) < len(call.args):
        raise RuntimeError(f"function {call.cls.__name__}Backward returned an incorrect number "
                           f"of gradients (expected {len(call.args)}, got {len(grads)})")
    return tuple(grads[i] for i in call.positions)


def _batch(values, bdims, call):
    from ..func._vmap_custom import batch_custom_call
    return batch_custom_call(values, bdims, call)


def _marked(ctx, t):
    """Whether ``t`` (by payload) was passed to ``ctx.mark_non_differentiable``."""
    return any(isinstance(n, Tensor) and n._data is t._data for n in ctx.non_differentiable)


def _vjp_context(node, outs):
    """The engine's hook when it records a custom call: this level's ctx, the node's name.

    ``outs`` are the outputs, one per result; returns them with None in place of those
    ``mark_non_differentiable`` names (they get no ``grad_fn``). Outputs of a transform level are tracers; at the
    eager level they are plain tensors (Note [Custom functions under transforms]).
    """
    if not outs:
        return outs
    call = node.params["call"]
    cls = call.cls
    eager = not isinstance(outs[0]._data, Tracer)
    if eager and not uses_setup_context(cls):
        ctx = call.ctx
    else:
        needs = [False] * len(call.args)
        for i, e in zip(call.positions, node.next_edges):
            needs[i] = e is not None
        ctx = context_at_level(cls, call.inputs(node.saved), call.unflatten(node.out),
                               tuple(needs))
    node.params = {"call": call, "ctx": ctx}
    node.metadata = {"name": cls.__name__ + "Backward"}
    if not ctx.non_differentiable:
        return outs
    return [None if _marked(ctx, o if eager else o._data.inner()) else o for o in outs]


custom_function_call = Primitive("custom_function_call", impl=_impl, shape=_shape, jvp=_jvp,
                                 vjp=_vjp, batch=_batch, multiple_results=True, register=False)
# Not in ALL_PRIMITIVES: a higher-order primitive whose rules are the user's, exercised by
# the custom-Function matrix (tests/func/test_custom_function_matrix.py), not by OpInfo.
# The user's backward reads ctx.saved_tensors, not the inputs (Note [What backward reads]).
custom_function_call.vjp_needs = ()
custom_function_call.vjp_context = _vjp_context
custom_function_call.lower = extern("a custom autograd.Function runs its user's forward")


def once_differentiable(fn):
    """Decorator for ``backward`` methods that do not support double backward."""
    return fn
