"""The batch rule of ``autograd.Function`` calls (`custom_function_call`), and its generated rule.

A Function batches by its ``vmap`` staticmethod, or with ``generate_vmap_rule = True`` by
a generated Function whose forward, setup_context, backward and jvp are the user's run
under a vmap of their own (functorch's ``vmapify_autograd_function``). The generated
Function is bound as a custom call one level down, so a grad level below the vmap
records *it*, and ``grad(vmap(f))`` runs the user's backward (batched), not autograd
through forward (Note [Custom functions are a primitive] in autograd/function.py).
"""
from __future__ import annotations

from .._core.primitive import pop, push
from .._core.tensor import Tensor, wrap
from ..autograd.function import (CustomCall, Function, FunctionCtx, _setup_context_error,
                                 custom_function_call, run_forward, uses_setup_context)
from ._vmap import BATCHING, BatchTracer, VmapInfo, VmapInterpreter


def batch_custom_call(values, bdims, call):
    """The ``batch`` rule of `custom_function_call` (at least one of ``bdims`` is an int)."""
    interp = BATCHING[0]   # Note [The batching interpreter]: read before binding anything
    size, randomness = interp.size, interp.randomness
    cls = call.cls
    if cls.vmap is not Function.vmap:
        in_dims = [None] * len(call.args)
        for i, d in zip(call.positions, bdims):
            in_dims[i] = d
        out, out_dims = cls.vmap(VmapInfo(size, randomness), tuple(in_dims),
                                 *call.inputs(values), **call.kwargs)
        return call.flatten(out), call.tensor_slots(out_dims)
    if cls.generate_vmap_rule:
        vmapped, out_dims = _vmapify(call, tuple(bdims), size, randomness)
        outs = custom_function_call.bind(*values, call=CustomCall(vmapped, values, {}))
        return outs, out_dims[0]
    raise RuntimeError(
        f"To use autograd.Function ({cls.__name__}) with vmap, you must either override the "
        "vmap staticmethod or set generate_vmap_rule=True.")


def _run_batched(fn, values, dims, size, randomness):
    """``fn(unbatch, *tensors)`` under a fresh vmap level over ``values`` batched at ``dims``.

    ``unbatch(t)`` gives ``(value, bdim)`` for a result, bdim None when it is unbatched.
    """
    interp = push(VmapInterpreter(size, randomness))
    try:
        def unbatch(t):
            d = t._data
            if d.__class__ is BatchTracer and d.interp is interp:
                return d.value, d.bdim
            return t, None
        return fn(unbatch, *[wrap(BatchTracer(interp, v, d)) if d is not None else v
                             for v, d in zip(values, dims)])
    finally:
        pop(interp)


def _to_dim(value, dim, want, size):
    """``value`` (batched at ``dim`` or unbatched) laid out with its batch at ``want``."""
    from .._ops.shape import expand, movedim, unsqueeze
    if dim == want:
        return value
    if want is None:
        return value.sum(dim)    # an unbatched input's gradient sums over the examples
    if dim is None:
        shape = list(value.shape)
        shape.insert(want, size)
        return expand(unsqueeze(value, want), tuple(shape))
    return movedim(value, dim, want)


def _vmapify(call, in_dims, size, randomness):
    """A Function computing ``call`` batched over ``in_dims``; and a cell for its out dims."""
    cls = call.cls
    out_dims = [None]   # set by forward, wherever it runs (impl or the shape rule)

    def inner_ctx(ctx, saved):
        inner = FunctionCtx()
        inner.__dict__.update(ctx._vmap_inner)
        inner.saved_tensors = saved
        return inner

    def forward(*values):
        def body(unbatch, *ts):
            return [unbatch(o) for o in call.flatten(run_forward(call, ts)[0])]
        res = _run_batched(body, values, in_dims, size, randomness)
        out_dims[0] = tuple(d for _, d in res)
        return tuple(v for v, _ in res)

    def setup_context(ctx, inputs, output):
        if not uses_setup_context(cls):
            raise _setup_context_error(cls)
        n = len(inputs)
        needs = [False] * len(call.args)
        for i, flag in zip(call.positions, ctx.needs_input_grad):
            needs[i] = flag

        def body(unbatch, *ts):
            inner = FunctionCtx()
            inner.needs_input_grad = tuple(needs)
            cls.setup_context(inner, call.inputs(ts[:n]), call.unflatten(ts[n:]))
            saved = [unbatch(t) if isinstance(t, Tensor) else (t, None)
                     for t in inner.saved_tensors]
            marked = [k for k, o in enumerate(ts[n:])
                      if any(o is m for m in inner.non_differentiable)]
            return inner, saved, marked
        inner, saved, marked = _run_batched(body, (*inputs, *output), in_dims + out_dims[0],
                                            size, randomness)
        # The user's ctx lives on inside ours (nested generated rules each keep their own).
        ctx._vmap_inner = {k: v for k, v in inner.__dict__.items() if k != "saved_tensors"}
        ctx.save_for_backward(*[v for v, _ in saved])
        ctx._vmap_saved_dims = tuple(d for _, d in saved)
        ctx.mark_non_differentiable(*[output[k] for k in marked])

    def backward(ctx, *grads):
        saved, sdims = ctx.saved_tensors, ctx._vmap_saved_dims

        def body(unbatch, *ts):
            full = call.per_output(ts[len(saved):])
            gs = cls.backward(inner_ctx(ctx, ts[:len(saved)]), *full)
            gs = gs if isinstance(gs, tuple) else (gs,)
            if len(gs) < len(call.args):
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect "
                                   f"number of gradients (expected {len(call.args)}, got "
                                   f"{len(gs)})")
            return [None if gs[i] is None else unbatch(gs[i]) for i in call.positions]
        res = _run_batched(body, (*saved, *grads), sdims + out_dims[0], size, randomness)
        return tuple(None if r is None else _to_dim(r[0], r[1], d, size)
                     for r, d in zip(res, in_dims))

    def jvp(ctx, *tangents):
        saved, sdims = ctx.saved_tensors, ctx._vmap_saved_dims

        def body(unbatch, *ts):
            full = [None] * len(call.args)
            for i, t in zip(call.positions, ts[len(saved):]):
                full[i] = t
            touts = call.tensor_slots(cls.jvp(inner_ctx(ctx, ts[:len(saved)]), *full))
            return [None if t is None else unbatch(t) for t in touts]
        res = _run_batched(body, (*saved, *tangents), sdims + in_dims, size, randomness)
        return tuple(None if r is None else _to_dim(r[0], r[1], want, size)
                     for r, want in zip(res, out_dims[0]))

    vmapped = type(f"Vmapped{cls.__name__}", (Function,), {
        "generate_vmap_rule": True, "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context), "backward": staticmethod(backward),
        "jvp": staticmethod(jvp)})
    return vmapped, out_dims

