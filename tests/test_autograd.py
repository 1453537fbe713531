"""Eager autograd: backward, accumulation, retain_graph, create_graph, hooks, retain_grad,
in-place checks, autograd.Function (ctx and setup_context styles) and grad mode."""
from __future__ import annotations

import math

import numpy as np
import pytest

import numtorch as torch
from numtorch.testing import assert_close, gradcheck, gradgradcheck


def leaf(*values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


# ---------------------------------------------------------------------------------------
# backward and .grad


def test_backward_fills_leaf_grads():
    x, w = leaf(1.0, 2.0, 3.0), leaf(0.5, -1.0, 2.0)
    ((x * w).sum() + (x ** 2).sum()).backward()
    assert_close(x.grad, w.detach() + 2 * x.detach())
    assert_close(w.grad, x.detach())
    assert x.is_leaf and x.grad_fn is None


def test_grads_accumulate_until_zeroed():
    x = leaf(1.0, 2.0)
    (x * 3).sum().backward()
    (x * 4).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_leaf_grad_is_none_with_a_warning_unless_retained():
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * 3
    y.retain_grad()
    z.sum().backward()
    assert y.grad.tolist() == [3.0, 3.0] and y.retains_grad
    with pytest.warns(UserWarning, match="retain_grad"):
        assert z.grad is None


def test_backward_through_a_reused_tensor_sums_the_paths():
    x = leaf(2.0)
    y = x * x
    (y + y * x).backward()
    assert_close(x.grad, torch.tensor([2 * 2.0 + 3 * 4.0], dtype=torch.float64))


def test_gradient_argument_for_non_scalar_outputs():
    x = leaf(1.0, 2.0, 3.0)
    y = x * 2
    y.backward(torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64))
    assert x.grad.tolist() == [2.0, 0.0, -2.0]


def test_non_scalar_backward_without_gradient_raises():
    y = leaf(1.0, 2.0) * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_second_backward_needs_retain_graph():
    x = leaf(1.0, 2.0)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, 2 * (x.detach().exp() * (x.detach() + 1)))
    z = (x.exp() * x).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()


def test_backward_on_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.ones(2).sum().backward()


def test_autograd_grad_returns_without_accumulating():
    x, y = leaf(1.0, 2.0), leaf(3.0)
    out = (x * y).sum()
    gx, gy = torch.autograd.grad(out, (x, y))
    assert gx.tolist() == [3.0, 3.0] and gy.tolist() == [3.0]
    assert x.grad is None
    z = leaf(1.0)
    with pytest.raises(RuntimeError, match="allow_unused"):
        torch.autograd.grad((x * 2).sum(), (x, z))
    assert torch.autograd.grad((x * 2).sum(), (x, z), allow_unused=True)[1] is None


def test_create_graph_gives_higher_derivatives():
    x = leaf(0.3, 1.2)
    (g,) = torch.autograd.grad(x.sin().sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = torch.autograd.grad(g.sum(), x)
    assert_close(h, -x.detach().sin())
    x.grad = None
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    first = x.grad.clone()
    x.grad = None
    first.sum().backward()
    assert_close(x.grad, 6 * x.detach())


def test_gradcheck_and_gradgradcheck_on_a_composite():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)

    def f(x, w):
        return torch.tanh(w @ x).logsumexp(0)
    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


class WrongRules(torch.autograd.Function):
    """forward doubles; backward and jvp both claim a factor of 3."""

    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 3

    @staticmethod
    def jvp(ctx, t):
        return t * 3


def test_gradcheck_catches_a_wrong_backward_and_a_wrong_jvp():
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(WrongRules.apply, (x,))
    assert gradcheck(WrongRules.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="While considering the forward AD, Jacobian mismatch"):
        gradcheck(WrongRules.apply, (x,), check_backward_ad=False, check_forward_ad=True)


def test_detach_and_requires_grad_flags():
    x = leaf(1.0)
    y = (x * 2).detach()
    assert not y.requires_grad and y.grad_fn is None
    z = torch.ones(2)
    assert z.requires_grad_() is z and z.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.zeros(3, dtype=torch.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf variables"):
        (x * 2).requires_grad_(False)


def test_integer_outputs_do_not_require_grad():
    x = leaf(1.5, -2.5)
    assert not x.argmax().requires_grad and not (x > 0).requires_grad
    assert x.round().requires_grad


# ---------------------------------------------------------------------------------------
# Hooks


def test_tensor_hooks_see_and_replace_gradients():
    x = leaf(1.0, 2.0)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.clone()))
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert seen[0].tolist() == [3.0, 3.0] and x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert len(seen) == 1 and x.grad.tolist() == [10.0, 10.0]


def test_hook_on_intermediate_changes_upstream_gradient():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.register_hook(lambda g: g * 0)
    (y * 5 + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.ones(2).register_hook(lambda g: g)


# ---------------------------------------------------------------------------------------
# In-place operations and the version counter


def test_in_place_on_a_leaf_requiring_grad_raises():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0].mul_(2)
    with torch.no_grad():
        x.add_(1)           # allowed without grad recording (optimizer updates)
    assert x.tolist() == [2.0, 3.0] and x.grad_fn is None


def test_modifying_a_saved_tensor_raises_at_backward():
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * y            # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_in_place_on_intermediates_is_differentiated():
    x = leaf(1.0, 2.0, 3.0)
    y = x * 1
    y.mul_(x)            # y = x ** 2
    y[0] = 0.0           # setitem cuts the gradient of element 0
    y.exp_()
    y.sum().backward()
    expected = 2 * x.detach() * (x.detach() ** 2).exp()
    expected[0] = 0.0
    assert_close(x.grad, expected)


def test_writing_a_function_of_a_view_into_its_base():
    x = leaf(1.0, 2.0)
    y = x.clone()
    y[0] = y[0] * 3
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 1.0]


def test_in_place_on_a_view_reaches_the_base():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x.clone()
    y[1:3].mul_(10)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 10.0, 1.0]


# ---------------------------------------------------------------------------------------
# autograd.Function


class ExpCtx(torch.autograd.Function):
    """The classic style: forward(ctx, ...)."""

    @staticmethod
    def forward(ctx, x, scale):
        y = x.exp() * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y, None


class ExpSetup(torch.autograd.Function):
    """The torch.func style: forward without ctx, then setup_context."""

    @staticmethod
    def forward(x, scale):
        return x.exp() * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y, None

    @staticmethod
    def jvp(ctx, tx, tscale):
        return tx * ctx.saved_tensors[0]


@pytest.mark.parametrize("fn", [ExpCtx, ExpSetup], ids=["ctx", "setup_context"])
def test_custom_function(fn):
    x = leaf(0.5, -1.0)
    y = fn.apply(x, 3.0)
    assert_close(y, 3.0 * x.detach().exp())
    assert y.grad_fn is not None and "Backward" in y.grad_fn.name()
    y.sum().backward()
    assert_close(x.grad, 3.0 * x.detach().exp())
    assert gradcheck(lambda t: fn.apply(t, 2.0), (leaf(0.1, 0.2),))


def test_custom_function_needs_input_grad_and_mark_non_differentiable():
    class DoubleAndArgmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.needs = ctx.needs_input_grad
            idx = x.argmax().reshape(1)
            ctx.mark_non_differentiable(idx)
            return x * 2 + y, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g * 2, None
    x = leaf(3.0, 1.0)
    out, idx = DoubleAndArgmax.apply(x, torch.ones(2, dtype=torch.float64))
    assert not idx.requires_grad and out.requires_grad and idx.tolist() == [0]
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_custom_function_wrong_number_of_gradients():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(leaf(1.0), leaf(2.0)).sum().backward()


# ---------------------------------------------------------------------------------------
# Grad mode


def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf(1.0)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
        with torch.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad and torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()
    with torch.inference_mode():
        assert not (x * 2).requires_grad


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------------------------------
# Against PyTorch: a small program's gradients


def test_program_gradients_match_torch():
    real_torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))

    def program(lib, x, w):
        h = (x @ w).tanh()
        h = h * h.softmax(-1) + h.max(dim=0).values
        y = h.clone()
        y[0] = h[0] * 3
        return (y.std(0).sum() + y.logsumexp(0).mean()) / math.pi
    results = []
    for lib in (torch, real_torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        program(lib, x, w).backward()
        results.append((x.grad.detach().numpy(), w.grad.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------
# Which nodes autograd.grad runs (Note [Execution order])


def test_grad_wrt_non_leaf_runs_no_older_node():
    x = leaf(1.0, 2.0)
    a = x * 2                     # made before the target: cannot lead to it
    ran = []
    a.grad_fn.register_prehook(lambda g: ran.append("older"))
    b = a.sin()
    c = b * x                     # a newer branch back to the leaf, not asked for
    c.grad_fn.register_prehook(lambda g: ran.append("newer"))
    y = (b * b).sum() + c.sum()
    (gb,) = torch.autograd.grad(y, b, retain_graph=True)
    assert_close(gb, 2 * b.detach() + x.detach())
    assert ran == ["newer"]       # on the path to b; x*2's node never runs
    x.grad = None
    y.backward()                  # .backward() still reaches every node
    assert ran == ["newer", "newer", "older"]
    assert_close(x.grad, (2 * b.detach() + x.detach()) * a.detach().cos() * 2 + b.detach())


def test_inner_loop_of_create_graph_grads_matches_func_grad():
    # MAML's inner steps the classic way: each autograd.grad's inputs are the previous
    # step's (non-leaf) parameters; the meta-gradient must equal func.grad's.
    from numtorch.func import grad as fgrad
    data = torch.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=torch.float64)

    def loss(w):
        return ((data @ w).tanh() ** 2).sum()

    def adapted(w, steps=3):
        for _ in range(steps):
            (g,) = torch.autograd.grad(loss(w), w, create_graph=True)
            w = w - 0.1 * g
        return loss(w)

    w0 = leaf(0.3, -0.7)
    adapted(w0).backward()

    def adapted_f(w, steps=3):
        for _ in range(steps):
            w = w - 0.1 * fgrad(loss)(w)
        return loss(w)

    assert_close(w0.grad, fgrad(adapted_f)(w0.detach()))


# ---------------------------------------------------------------------------------------
# What nodes keep (Note [Saved values])


def test_nodes_keep_only_values_their_rule_reads():
    from numtorch.autograd import engine
    x = torch.randn(200, 100, dtype=torch.float64, requires_grad=True)   # 160 KB: above the
    y = torch.randn(200, 100, dtype=torch.float64, requires_grad=True)   # stand-in threshold
    s = x + y
    p = x * y
    node_add, node_mul = s.grad_fn, p.grad_fn
    # add reads no values: its primals are zero-stride stand-ins, same shapes, and its
    # output is not kept at all (Note [A node keeps its output's value, not the output])
    for t in node_add.saved:
        assert t.shape == (200, 100) and t.dtype == torch.float64
        assert t._data.strides == (0, 0)
    assert node_add.out is engine._UNREAD
    # mul reads both operands: kept, and the output (not read) is not kept
    assert node_mul.saved[0] is x and node_mul.saved[1] is y
    assert node_mul.out is engine._UNREAD
    with pytest.raises(RuntimeError, match="vjp_needs"):
        node_mul.out.shape
    # exp's rule reads its output: the node keeps its value (a stand-in when not read)
    e = x.exp()
    assert e.grad_fn.out._data is e._data and e.grad_fn.out.grad_fn is None


@pytest.mark.parametrize("threshold", [0, 1 << 16])
def test_stand_ins_change_no_gradient(monkeypatch, threshold):
    # With every unread value replaced (threshold 0), gradients through conv, batch norm,
    # scatter, indexing and where, and a second-order gradient, equal float64 references.
    from numtorch.autograd import engine
    monkeypatch.setattr(engine, "_STAND_IN_BYTES", threshold)
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, generator=g, requires_grad=True)

    def f(x, w):
        h = F.batch_norm(F.conv2d(x, w), None, None, training=True)
        h = torch.where(h > 0, h, 0.1 * h).reshape(2, -1)
        h = h.scatter(1, torch.tensor([[0], [3]]), h[:, :1] * 2)
        return (h[:, 1:].tanh() ** 2).sum()

    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


@pytest.mark.parametrize("which", ["base", "exponent", "output"])
def test_inplace_write_to_any_of_three_checked_values_raises(which):
    # a ** b with both requiring grad checks three saved values (base, exponent, output:
    # Note [What backward reads]); each one written in place is caught, and an untouched
    # graph gives the closed-form gradients.
    a = torch.tensor([1.5, 2.0], requires_grad=True)
    b = torch.tensor([0.5, 3.0], requires_grad=True)
    x, y = a * 1, b * 1   # non-leaves, so they can be written in place
    out = x ** y
    loss = out.sum() if which != "output" else (out * 1).sum()
    {"base": x, "exponent": y, "output": out}[which].add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    x, y = a * 1, b * 1
    (x ** y).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), (b * a ** (b - 1)).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), (a ** b * a.log()).detach().numpy(), rtol=1e-6)
