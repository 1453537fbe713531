"""Every custom-Function sample: eager, traced, and traced-then-transformed agree.

Each sample's rules deliberately differ from the derivative of its forward (a backward
scaled by 2, a jvp by 3, ...), and each carries reference formulas for its forward and
rules written independently of the class. So a check that passes shows the *custom* rule
ran — through eager autograd, ``func.grad``/``jvp``/``vmap``, a graph from ``make_graph``
(where the call is one ``custom_function_call`` node), and a transformed graph — rather
than autograd through forward (issue 6's bug: a traced Function lost its backward).
"""
from __future__ import annotations

import pytest

import numtorch as torch
from numtorch.func import grad, jvp, make_graph, vmap
from numtorch.testing import assert_close

F64 = torch.float64


class ScaledExp(torch.autograd.Function):
    """setup_context style, a non-tensor argument, jvp, generated vmap rule."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, k):
        return x.exp() * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return 2 * g * out, None            # twice the true derivative

    @staticmethod
    def jvp(ctx, t, _):
        (out,) = ctx.saved_tensors
        return 3 * t * out                  # three times the true derivative


class SinMul(torch.autograd.Function):
    """Two tensor inputs, two outputs, a hand-written vmap staticmethod and jvp."""

    @staticmethod
    def forward(x, y):
        return x.sin() * y, x.cos()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g1, g2):
        x, y = ctx.saved_tensors
        return 2 * (g1 * y * x.cos() - g2 * x.sin()), 5 * g1 * x.sin()

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return 7 * tx * y, 11 * ty * x

    @staticmethod
    def vmap(info, in_dims, x, y):
        # the ops broadcast over a leading batch dim once both operands carry it there
        x = x.movedim(in_dims[0], 0) if in_dims[0] is not None else x
        y = y.movedim(in_dims[1], 0) if in_dims[1] is not None else y
        return SinMul.apply(x, y), (0, 0)


class Clamped(torch.autograd.Function):
    """A straight-through estimator, setup_context style, generated vmap rule."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.clamp(-0.5, 0.5)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g                            # the forward's derivative would be 0 outside

    @staticmethod
    def jvp(ctx, t):
        return t


class DoubleAndArgmax(torch.autograd.Function):
    """A non-differentiable integer output (mark_non_differentiable) beside a float one."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * 2, x.argmax()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, g, g_idx):
        return 4 * g

    @staticmethod
    def jvp(ctx, t):
        return 4 * t, None


class CubeCtx(torch.autograd.Function):
    """The classic forward(ctx, ...) style: eager only (transforms ask for setup_context)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return k * x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * 3 * ctx.k * x ** 2, None


class Sample:
    def __init__(self, name, fn, make_args, out, vjp, jvp=None, batches=True, ctx_style=False):
        self.name, self.fn, self.make_args = name, fn, make_args
        self.ref_out, self.ref_vjp, self.ref_jvp = out, vjp, jvp
        self.batches, self.ctx_style = batches, ctx_style

    def __repr__(self):
        return self.name


def _t(*shape, seed):
    torch.manual_seed(seed)
    return torch.randn(*shape, dtype=F64)


SAMPLES = [
    Sample("setup_context_nontensor_arg", ScaledExp, lambda: (_t(3, seed=0), 1.5),
           out=lambda x, k: (x.exp() * k,),
           vjp=lambda a, cts: (2 * cts[0] * a[0].exp() * a[1],),
           jvp=lambda a, ts: (3 * ts[0] * a[0].exp() * a[1],)),
    Sample("two_outputs_vmap_staticmethod", SinMul, lambda: (_t(4, seed=1), _t(4, seed=2)),
           out=lambda x, y: (x.sin() * y, x.cos()),
           vjp=lambda a, cts: (2 * (cts[0] * a[1] * a[0].cos() - cts[1] * a[0].sin()),
                               5 * cts[0] * a[0].sin()),
           jvp=lambda a, ts: (7 * ts[0] * a[1], 11 * ts[1] * a[0])),
    Sample("straight_through", Clamped, lambda: (_t(5, seed=3) * 2,),
           out=lambda x: (x.clamp(-0.5, 0.5),),
           vjp=lambda a, cts: (cts[0],), jvp=lambda a, ts: (ts[0],)),
    Sample("non_differentiable_output", DoubleAndArgmax, lambda: (_t(4, seed=4),),
           out=lambda x: (x * 2, x.argmax()),
           vjp=lambda a, cts: (4 * cts[0],), jvp=lambda a, ts: (4 * ts[0], None)),
    Sample("ctx_style", CubeCtx, lambda: (_t(3, seed=5), 2.0),
           out=lambda x, k: (k * x ** 3,),
           vjp=lambda a, cts: (2 * cts[0] * 3 * a[1] * a[0] ** 2,),
           batches=False, ctx_style=True),
]


def _tensors(args):
    return [a for a in args if isinstance(a, torch.Tensor)]


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def _rebuild(args, tensors):
    it = iter(tensors)
    return tuple(next(it) if isinstance(a, torch.Tensor) else a for a in args)


def _cotangents(sample, args):
    outs = sample.ref_out(*args)
    return [torch.linspace(0.5, 1.5, o.numel(), dtype=F64).reshape(o.shape)
            if o.dtype.is_floating_point else None for o in outs]


def _loss(sample, args, cts):
    """sum of <out_i, ct_i> over the float outputs: its gradient is the VJP with ``cts``."""
    def loss(*tensors):
        outs = _as_tuple(sample.fn.apply(*_rebuild(args, tensors)))
        return sum((o * c).sum() for o, c in zip(outs, cts) if c is not None)
    return loss


def _traced(sample, args):
    """(graph, runs): each run(*tensors) replays the graph as the function's result, one as a
    region (a ``graph_call`` node, what compile makes) and one inlined node by node."""
    g = make_graph(lambda *ts: sample.fn.apply(*_rebuild(args, ts)))(*_tensors(args))
    n = len(_as_tuple(sample.ref_out(*args)))
    return g, [(lambda *ts, run=run: run(*ts) if n > 1 else run(*ts)[0])
               for run in (g, g.inline)]


def _graph_loss(run, cts):
    return (lambda *ts: sum((o * c).sum() for o, c in zip(_as_tuple(run(*ts)), cts)
                            if c is not None))


def _assert_outputs(got, want):
    got, want = _as_tuple(got), _as_tuple(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        if b is None:
            assert a is None
        else:
            assert_close(a, b)


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_eager_and_traced_forward_agree_with_the_reference(sample):
    args = sample.make_args()
    eager = sample.fn.apply(*args)
    _assert_outputs(eager, sample.ref_out(*args))
    g, runs = _traced(sample, args)
    # the call stays one node of the graph: its rules are still the user's
    assert g.primitives() == ["custom_function_call"]
    for run in runs:
        _assert_outputs(run(*_tensors(args)), eager)


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_backward_is_the_custom_rule_eager_traced_and_transformed(sample):
    args = sample.make_args()
    tensors = _tensors(args)
    cts = _cotangents(sample, args)
    want = sample.ref_vjp(args, cts)
    argnums = tuple(range(len(tensors)))
    # eager autograd (.backward) on the function, and on the replayed graph
    g, runs = _traced(sample, args)
    for f in (lambda *ts: sample.fn.apply(*_rebuild(args, ts)), *runs):
        leaves = [t.detach().requires_grad_() for t in tensors]
        outs = _as_tuple(f(*leaves))
        sum((o * c).sum() for o, c in zip(outs, cts) if c is not None).backward()
        _assert_outputs(tuple(leaf.grad for leaf in leaves), want)
        if f is not runs[0]:   # (a region records one node of its own)
            assert outs[0].grad_fn.name() == sample.fn.__name__ + "Backward"
    losses = [_loss(sample, args, cts)] + [_graph_loss(run, cts) for run in runs]
    if sample.ctx_style:
        # PyTorch's rule: transforms need the setup_context style, traced or not
        for f in losses:
            with pytest.raises(RuntimeError, match="must override the setup_context"):
                grad(f)(*tensors)
        return
    for loss in losses:
        _assert_outputs(grad(loss, argnums=argnums)(*tensors), want)
        # the gradient program traced, then run
        gg = make_graph(grad(loss, argnums=argnums))(*tensors)
        _assert_outputs(gg(*tensors), want)


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.ref_jvp], ids=repr)
def test_jvp_is_the_custom_rule_eager_and_traced(sample):
    args = sample.make_args()
    tensors = _tensors(args)
    tangents = tuple(torch.full_like(t, 0.5) + i for i, t in enumerate(tensors))
    want = sample.ref_jvp(args, tangents)
    _, runs = _traced(sample, args)
    for f in (lambda *ts: sample.fn.apply(*_rebuild(args, ts)), *runs):
        out, tout = jvp(f, tuple(tensors), tangents)
        _assert_outputs(out, sample.ref_out(*args))
        for t, w, o in zip(_as_tuple(tout), want, _as_tuple(out)):
            # PyTorch's jvp gives zero tangents for outputs without one
            assert_close(t, w if w is not None else torch.zeros_like(o))


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.batches], ids=repr)
def test_vmap_and_its_compositions_use_the_custom_rules(sample):
    batch = [sample.make_args() for _ in range(3)]
    for i, b in enumerate(batch):   # distinct examples
        batch[i] = _rebuild(b, [t + 0.1 * i for t in _tensors(b)])
    stacked = [torch.stack(ts) for ts in zip(*[_tensors(b) for b in batch])]
    args0 = batch[0]
    _, runs = _traced(sample, args0)
    per_example = [sample.fn.apply(*b) for b in batch]
    want = tuple(torch.stack(o) for o in zip(*[_as_tuple(p) for p in per_example]))
    for f in (lambda *ts: sample.fn.apply(*_rebuild(args0, ts)), *runs):
        _assert_outputs(vmap(f)(*stacked), want)
    # vmap(grad) and grad(vmap): per-example custom gradients
    cts = _cotangents(sample, args0)
    argnums = tuple(range(len(stacked)))
    want_g = [sample.ref_vjp(b, cts) for b in batch]
    want_g = tuple(torch.stack(gs) for gs in zip(*want_g))
    for loss in [_loss(sample, args0, cts)] + [_graph_loss(run, cts) for run in runs]:
        _assert_outputs(vmap(grad(loss, argnums=argnums))(*stacked), want_g)
        summed = (lambda *ts: vmap(loss)(*ts).sum())
        _assert_outputs(grad(summed, argnums=argnums)(*stacked), want_g)
    if sample.ref_jvp:   # jvp(vmap(f)): the custom jvp, batched
        tangents = tuple(torch.ones_like(t) for t in stacked)
        want_t = [sample.ref_jvp(b, tuple(torch.ones_like(t) for t in _tensors(b)))
                  for b in batch]
        for run in runs:
            _, tout = jvp(vmap(run), tuple(stacked), tangents)
            for k, t in enumerate(_as_tuple(tout)):
                if want_t[0][k] is not None:
                    assert_close(t, torch.stack([w[k] for w in want_t]))


def test_generated_vmap_rule_keeps_the_custom_backward_under_grad_of_vmap():
    # The gap of the old dispatch: grad(vmap(f)) differentiated through forward.
    x = torch.randn(4, 3, dtype=F64)
    g = grad(lambda t: vmap(lambda r: ScaledExp.apply(r, 2.0))(t).sum())(x)
    assert_close(g, 2 * x.exp() * 2.0)
    # nested generated rules, and the trace of one: still the custom backward
    g2 = grad(lambda t: vmap(vmap(Clamped.apply))(t).sum())(x)
    assert_close(g2, torch.ones_like(x))
    gv = make_graph(vmap(Clamped.apply))(x)
    assert gv.primitives() == ["custom_function_call"]
    for run in (gv, gv.inline):
        assert_close(grad(lambda t: run(t)[0].sum())(x), torch.ones_like(x))


def test_double_grad_through_a_traced_custom_backward():
    x = torch.randn(3, dtype=F64)
    g = make_graph(lambda t: ScaledExp.apply(t, 1.0))(x)
    # backward (2 g out) is written in numtorch ops and `out` is the call's output, whose
    # derivative is again the custom rule (2 exp x): the Hessian is 2 * 2 diag(exp x)
    for run in (g, g.inline):
        h = torch.func.jacrev(grad(lambda t: run(t)[0].sum()))(x)
        assert_close(h, torch.diag(4 * x.exp()))


def test_needs_input_grad_is_per_level():
    seen = []

    class Record(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            x, y = ctx.saved_tensors
            return g * y if ctx.needs_input_grad[0] else None, g * x if ctx.needs_input_grad[1] else None

    x, y = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    assert_close(grad(lambda a: Record.apply(a, y).sum())(x), y)
    assert_close(grad(lambda b: Record.apply(x, b).sum())(y), x)
    assert seen == [(True, False), (False, True)]


def test_graph_passes_keep_custom_calls():
    # forward is user code (here a random draw): passes never drop, merge or fold the call
    from numtorch._core.passes import optimize

    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x + torch.rand(x.shape, dtype=x.dtype)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

    def f(x):
        Noisy.apply(x)                          # dead, but it advances the generator
        return Noisy.apply(x) - Noisy.apply(x)  # equal-looking calls: two draws, not one
    x = torch.zeros(3, dtype=F64)
    g = optimize(make_graph(f)(x))
    assert g.primitives().count("custom_function_call") == 3
    assert not torch.equal(g(x)[0], torch.zeros(3, dtype=F64))


def test_a_draw_inside_forward_runs_at_the_level_of_its_operands():
    # Note [Forward at the bottom]: a call on a tensor no transform owns runs forward
    # eagerly, also inside make_graph or vmap (its draw is not a tracer of theirs)
    class Noisy(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x + torch.rand(3, dtype=x.dtype)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

    c = torch.zeros(3, dtype=F64)
    out = make_graph(lambda x: x + Noisy.apply(c))(c)(c)[0]
    assert ((out >= 0) & (out < 1)).all()
    batched = vmap(lambda x: x + Noisy.apply(c))(torch.zeros(4, 3, dtype=F64))
    assert batched.shape == (4, 3) and torch.equal(batched[0], batched[3])
