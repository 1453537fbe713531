"""autograd.Function in eager mode and under grad, jvp and vmap."""
import pytest

import numtorch as torch
from numtorch.func import grad, jacrev, jvp, vmap

F64 = torch.float64


class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out

    @staticmethod
    def jvp(ctx, t):
        (out,) = ctx.saved_tensors
        return t * out

    generate_vmap_rule = True


class ScaledCube(torch.autograd.Function):
    """ctx-style forward with a non-tensor argument; backward deliberately scaled by 2 so the
    tests can tell the custom rule ran (not autograd through forward)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return k * x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * 3 * ctx.k * x ** 2, None


def test_eager_backward_uses_custom_rule():
    x = torch.randn(3, dtype=F64, requires_grad=True)
    ScaledCube.apply(x, 2.0).sum().backward()
    assert torch.allclose(x.grad, 2 * 6 * x.detach() ** 2)
    y = MyExp.apply(x)
    assert y.grad_fn.name() == "MyExpBackward"


def test_ctx_style_function_under_a_transform_asks_for_setup_context():
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        grad(lambda t: ScaledCube.apply(t, 1.0).sum())(torch.randn(3))


def test_grad_and_double_grad_through_custom_function():
    x = torch.randn(3, dtype=F64)
    assert torch.allclose(grad(lambda t: MyExp.apply(t).sum())(x), x.exp())
    # backward is written in numtorch ops, so it differentiates again
    h = jacrev(grad(lambda t: MyExp.apply(t).sum()))(x)
    assert torch.allclose(h, torch.diag(x.exp()))


def test_jvp_uses_the_jvp_staticmethod():
    x, v = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    out, t = jvp(MyExp.apply, (x,), (v,))
    assert torch.allclose(out, x.exp()) and torch.allclose(t, v * x.exp())


def test_vmap_with_generated_rule_and_vmap_of_grad():
    xs = torch.randn(4, 3, dtype=F64)
    assert torch.allclose(vmap(MyExp.apply)(xs), xs.exp())
    assert torch.allclose(vmap(grad(lambda t: MyExp.apply(t).sum()))(xs), xs.exp())


class NoVmapRule(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_vmap_without_rule_is_a_clear_error():
    with pytest.raises(RuntimeError, match="override the vmap staticmethod or set generate_vmap_rule"):
        vmap(NoVmapRule.apply)(torch.randn(2, 3))


class VmapRule(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def vmap(info, in_dims, x):
        return x * 2 + 0 * info.batch_size, in_dims[0]


def test_vmap_staticmethod_is_used():
    xs = torch.randn(5, 3)
    assert torch.allclose(vmap(VmapRule.apply)(xs), xs * 2)


class Const42(torch.autograd.Function):
    """backward ignores the forward: a test can tell which derivative ran."""

    @staticmethod
    def forward(x):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return torch.full_like(g, 42.0)


def test_a_traced_custom_function_keeps_its_backward():
    # The bug of issue 6: make_graph inlined forward and dropped the custom backward.
    from numtorch.func import make_graph
    x = torch.tensor(1.5, dtype=F64)
    assert grad(Const42.apply)(x).item() == 42.0
    g = make_graph(Const42.apply)(x)
    assert grad(lambda t: g(t)[0])(x).item() == 42.0
