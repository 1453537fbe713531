"""Convolution and pooling: values, gradients, transforms, meta shapes and error messages."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numtorch as torch
from numtorch._ops import conv as F  # the owner of these ops (nn.functional re-exports them)
from numtorch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap
from numtorch.testing import gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def rand(*shape):
    return torch.tensor(rng.standard_normal(shape))


def conv_reference(x, w, stride, padding, dilation, groups):
    """Direct definition of a 2-D cross-correlation, one output position at a time."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    ho = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for i, j in itertools.product(range(ho), range(wo)):
        patch = x[:, :, i * stride[0]: i * stride[0] + dilation[0] * (kh - 1) + 1: dilation[0],
                  j * stride[1]: j * stride[1] + dilation[1] * (kw - 1) + 1: dilation[1]]
        for g in range(groups):
            out[:, g * og:(g + 1) * og, i, j] = np.einsum(
                "nckl,ockl->no", patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
    return out


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 3), (2, 0), (2, 1), 2),
    ((3, 2), (1, 1), (2, 2), 2)])
def test_conv2d_matches_direct_definition(stride, padding, dilation, groups):
    x, w = rng.standard_normal((2, 4, 9, 11)), rng.standard_normal((6, 4 // groups, 3, 2))
    out = F.conv2d(torch.tensor(x), torch.tensor(w), stride=stride, padding=padding,
                   dilation=dilation, groups=groups)
    np.testing.assert_allclose(out.numpy(), conv_reference(x, w, stride, padding, dilation, groups),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("stride,padding,lhs,rhs,groups", [
    ((1, 1), ((2, 1), (0, 3)), (2, 3), (1, 1), 1),     # transposed conv: the col2im path
    ((1, 1), ((-1, 2), (1, -1)), (2, 2), (2, 1), 2),   # negative padding crops
    ((2, 3), ((1, 1), (2, 0)), (2, 1), (1, 2), 1),     # strided and dilated: im2col over zeros
    ((3, 1), ((0, -2), (0, 0)), (1, 1), (2, 2), 2),
])
def test_conv_primitive_general_params_match_direct_definition(stride, padding, lhs, rhs, groups):
    from numtorch._prims.conv import conv
    x, w = rng.standard_normal((2, 4, 6, 7)), rng.standard_normal((6, 4 // groups, 3, 2))
    dilated = np.zeros((2, 4, 5 * lhs[0] + 1, 6 * lhs[1] + 1))
    dilated[:, :, ::lhs[0], ::lhs[1]] = x
    pads = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    xp = np.pad(dilated, [(0, 0), (0, 0)] + pads)
    xp = xp[:, :, max(-padding[0][0], 0): xp.shape[2] - max(-padding[0][1], 0),
            max(-padding[1][0], 0): xp.shape[3] - max(-padding[1][1], 0)]
    out = conv.bind(torch.tensor(x), torch.tensor(w), stride=stride, padding=padding,
                    lhs_dilation=lhs, rhs_dilation=rhs, groups=groups)
    ref = conv_reference(xp, w, stride, (0, 0), rhs, groups)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)
    assert gradgradcheck(lambda x, w: conv.bind(x, w, stride=stride, padding=padding, lhs_dilation=lhs,
                                                 rhs_dilation=rhs, groups=groups),
                         (torch.tensor(x[:1]).requires_grad_(), torch.tensor(w).requires_grad_()))


def test_conv2d_float32_bias_and_unbatched_input():
    x, w, b = rand(3, 8, 8).float(), rand(5, 3, 3, 3).float(), rand(5).float()
    out = F.conv2d(x, w, b, padding=1)
    assert out.shape == (5, 8, 8) and out.dtype == torch.float32
    ref = conv_reference(x.numpy()[None].astype(np.float64), w.numpy().astype(np.float64),
                         (1, 1), (1, 1), (1, 1), 1)[0] + b.numpy()[:, None, None]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_padding_same_and_valid():
    x, w = rand(1, 2, 7, 8), rand(3, 2, 4, 3)
    same = F.conv2d(x, w, padding="same", dilation=(1, 2))
    assert same.shape == (1, 3, 7, 8)
    # PyTorch puts the extra row of an even kernel at the end: lo = total // 2.
    ref = conv_reference(np.pad(x.numpy(), ((0, 0), (0, 0), (1, 2), (2, 2))), w.numpy(), (1, 1),
                         (0, 0), (1, 2), 1)
    np.testing.assert_allclose(same.numpy(), ref, atol=1e-12)
    assert F.conv2d(x, w, padding="valid").shape == (1, 3, 4, 6)


# ---------------------------------------------------------------------------------------
# Gradients against finite differences, jvp against vjp, and second derivatives


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(dilation=2, groups=2),
                                dict(stride=(1, 2), padding=(2, 0), dilation=(2, 1))])
def test_conv2d_gradcheck_and_gradgradcheck(kw):
    x = rand(2, 4, 6, 7).requires_grad_()
    w = rand(4, 4 // kw.get("groups", 1), 3, 2).requires_grad_()
    b = rand(4).requires_grad_()
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), (x, w, b))
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, **kw), (x, w))


def test_conv_transpose_and_1d_3d_gradcheck():
    x, w = rand(1, 4, 4, 5).requires_grad_(), rand(4, 3, 3, 2).requires_grad_()
    assert gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1,
                                                     groups=2), (x, rand(4, 2, 3, 2).requires_grad_()))
    assert gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=(2, 3), dilation=2), (x, w))
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=2),
                     (rand(2, 3, 9).requires_grad_(), rand(2, 3, 4).requires_grad_()))
    assert gradcheck(lambda x, w: F.conv3d(x, w, padding=1),
                     (rand(1, 2, 3, 4, 3).requires_grad_(), rand(2, 2, 2, 2, 2).requires_grad_()))


def test_conv_jvp_agrees_with_vjp():
    x, w = rand(2, 4, 7, 6), rand(6, 2, 3, 3)

    def f(x, w):
        return F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    tx, tw = rand(*x.shape), rand(*w.shape)
    out, tangent = jvp(f, (x, w), (tx, tw))
    _, pullback = vjp(f, x, w)
    u = rand(*out.shape)
    gx, gw = pullback(u)
    lhs = (gx * tx).sum() + (gw * tw).sum()
    assert abs(lhs.item() - (u * tangent).sum().item()) < 1e-10 * abs(lhs.item())


def test_conv_hessian_matches_jacfwd_of_jacrev():
    x = rand(1, 2, 4, 4)

    def loss(w):
        return F.conv2d(x, w, padding=1).tanh().pow(2).sum()
    w = rand(2, 2, 2, 2)
    h = hessian(loss)(w)
    assert h.shape == (2, 2, 2, 2) * 2
    np.testing.assert_allclose(h.numpy(), jacfwd(jacrev(loss))(w).numpy(), atol=1e-10)
    flat = h.numpy().reshape(16, 16)
    np.testing.assert_allclose(flat, flat.T, atol=1e-10)


# ---------------------------------------------------------------------------------------
# vmap: the batch rule against a Python loop


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0), (2, 1)])
@pytest.mark.parametrize("groups", [1, 2])
def test_conv_vmap_matches_loop(in_dims, groups):
    xs, ws = rand(3, 2, 4, 6, 5), rand(3, 6, 4 // groups, 3, 2)

    def f(x, w):
        return F.conv2d(x, w, stride=(1, 2), padding=1, groups=groups)
    a = xs if in_dims[0] is not None else xs[0]
    b = ws if in_dims[1] is not None else ws[0]
    a = a.movedim(0, in_dims[0]) if in_dims[0] else a
    b = b.movedim(0, in_dims[1]) if in_dims[1] else b
    out = vmap(f, in_dims=in_dims)(a, b)
    ref = torch.stack([f(xs[i] if in_dims[0] is not None else xs[0],
                         ws[i] if in_dims[1] is not None else ws[0]) for i in range(3)])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-12)


def test_per_sample_gradients_of_a_conv_net():
    w1, w2, data = rand(4, 1, 3, 3), rand(2, 4, 3, 3), rand(5, 1, 8, 8)

    def loss(w1, w2, x):
        h = F.max_pool2d(F.conv2d(x.unsqueeze(0), w1, padding=1).relu(), 2)
        return F.avg_pool2d(F.conv2d(h, w2), 2).pow(2).sum()
    g1, g2 = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(w1, w2, data)
    for i in range(5):
        r1, r2 = grad(loss, argnums=(0, 1))(w1, w2, data[i])
        np.testing.assert_allclose(g1[i].numpy(), r1.numpy(), atol=1e-12)
        np.testing.assert_allclose(g2[i].numpy(), r2.numpy(), atol=1e-12)


def test_pooling_vmap_grad_and_double_grad():
    xs = rand(3, 2, 7, 7)

    def f(x):
        return (F.max_pool2d(x, 3, stride=2, padding=1).sum()
                + F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False).pow(2).sum()
                + F.adaptive_avg_pool2d(x, (3, 2)).exp().sum())
    out = vmap(grad(f))(xs)
    np.testing.assert_allclose(out.numpy(), torch.stack([grad(f)(x) for x in xs]).numpy(),
                               atol=1e-12)
    x = rand(1, 5, 5).requires_grad_()
    assert gradcheck(lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))
    assert gradgradcheck(lambda x: F.adaptive_avg_pool2d(x, 2) ** 2, (x,))
    assert gradgradcheck(lambda x: F.max_pool2d(x, 2, 1) ** 2, (x,))


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = torch.zeros(1, 1, 2, 4, dtype=torch.float64, requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[1, 0, 1, 0], [0, 0, 0, 0]]]]
    out, idx = F.max_pool2d(torch.tensor([[[[1.0, 5.0, 2.0], [7.0, 3.0, 9.0]]]]), 2, 1,
                            return_indices=True)
    assert out.tolist() == [[[[7.0, 9.0]]]] and idx.tolist() == [[[[3, 5]]]]
    assert idx.dtype == torch.int64


def test_pooling_values():
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    assert F.max_pool2d(x, 2).tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert F.avg_pool2d(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    ones = torch.ones(1, 1, 6, 6)
    out = F.avg_pool2d(ones, 3, 2, 1, ceil_mode=True).numpy()[0, 0]
    np.testing.assert_allclose(out[0], [4 / 9, 6 / 9, 6 / 9, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(out[3, 3], 1 / 4, rtol=1e-6)
    assert F.avg_pool2d(ones, 3, 2, 1, count_include_pad=False).numpy().min() == 1.0
    assert F.avg_pool2d(x, 2, divisor_override=1).tolist() == [[[[10.0, 18.0], [42.0, 50.0]]]]
    y = F.adaptive_avg_pool2d(torch.arange(20.0).reshape(1, 4, 5), (2, 3))
    # rows [0,2) and [2,4); cols [0,2), [1,4), [3,5)
    a = np.arange(20.0).reshape(4, 5)
    ref = [[a[r0:r1, c0:c1].mean() for c0, c1 in ((0, 2), (1, 4), (3, 5))] for r0, r1 in ((0, 2), (2, 4))]
    np.testing.assert_allclose(y.numpy()[0], ref, rtol=1e-6)
    assert F.max_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist() == [[3.0, 2.0]]
    assert torch.max_pool1d is F.max_pool1d or torch.max_pool1d(
        torch.tensor([[1.0, 3.0]]), 2).tolist() == [[3.0]]


def test_meta_device_shapes():
    x = torch.randn(2, 3, 8, 8, device="meta")
    out = F.conv2d(x, torch.randn(4, 3, 3, 3, device="meta"), torch.randn(4, device="meta"),
                   stride=2, padding=1)
    assert out.shape == (2, 4, 4, 4) and out.is_meta
    assert F.conv_transpose2d(x, torch.randn(3, 2, 3, 3, device="meta"), stride=2).shape == (2, 2, 17, 17)
    assert F.max_pool2d(x, 3, 2, 1, ceil_mode=True).shape == (2, 3, 5, 5)
    assert F.avg_pool2d(x, 3, 1, 1, count_include_pad=False).shape == (2, 3, 8, 8)
    assert F.adaptive_avg_pool2d(x, (5, 1)).shape == (2, 3, 5, 1)


# ---------------------------------------------------------------------------------------
# Against PyTorch, values and gradients


def _compare_with_torch(name, arrays, **kw):
    pt = pytest.importorskip("torch")
    ts = [pt.tensor(a, requires_grad=True) for a in arrays]
    ns = [torch.tensor(a, requires_grad=True) for a in arrays]
    yt, yn = getattr(pt.nn.functional, name)(*ts, **kw), getattr(F, name)(*ns, **kw)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(yn[1].numpy(), yt[1].numpy())
        yt, yn = yt[0], yn[0]
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), atol=1e-10)
    g = rng.standard_normal(tuple(yt.shape))
    yt.backward(pt.tensor(g))
    yn.backward(torch.tensor(g))
    for a, b in zip(ts, ns):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("s,p,op,d,g", [(1, 0, 0, 1, 1), (2, 1, 1, 1, 3), (3, 3, 0, 2, 1),
                                        (2, 0, 1, 2, 3)])
def test_convs_match_torch(s, p, op, d, g):
    x = rng.standard_normal((2, 3, 9, 10))
    _compare_with_torch("conv2d", [x, rng.standard_normal((6, 3 // g, 3, 2)),
                                   rng.standard_normal(6)], stride=s, padding=p, dilation=d, groups=g)
    _compare_with_torch("conv_transpose2d", [x, rng.standard_normal((3, 6 // g, 3, 2))], stride=s,
                        padding=p, output_padding=op, dilation=d, groups=g)
    _compare_with_torch("conv1d", [x[:, :, 0], rng.standard_normal((6, 3 // g, 4))], stride=s, padding=p,
                        dilation=d, groups=g)


@pytest.mark.parametrize("k,s,p,d,ceil", [(2, None, 0, 1, False), (3, 2, 1, 1, True),
                                          ((2, 3), 1, (1, 0), 2, False), (3, 2, 1, 2, True)])
def test_pools_match_torch(k, s, p, d, ceil):
    x = rng.standard_normal((2, 3, 9, 10))
    _compare_with_torch("max_pool2d", [x], kernel_size=k, stride=s, padding=p, dilation=d,
                        ceil_mode=ceil, return_indices=True)
    for cip in (True, False):
        _compare_with_torch("avg_pool2d", [x], kernel_size=k, stride=s, padding=p, ceil_mode=ceil,
                            count_include_pad=cip)
    _compare_with_torch("max_pool1d", [x[0]], kernel_size=3, stride=s, padding=1, ceil_mode=ceil,
                        return_indices=True)
    _compare_with_torch("avg_pool1d", [x[0]], kernel_size=3, stride=s, padding=1, ceil_mode=ceil)
    _compare_with_torch("adaptive_avg_pool2d", [x], output_size=(4, 3))
    _compare_with_torch("max_pool3d", [x[None]], kernel_size=2, return_indices=True)


def test_unfold_fold_are_transposes_and_match_torch():
    kw = dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    x = rand(2, 3, 7, 8)
    cols = F.unfold(x, **kw)
    assert cols.shape == (2, 18, 4 * 8)
    y = rand(*cols.shape)
    # <unfold(x), y> == <x, fold(y)>
    lhs = (cols * y).sum().item()
    assert abs(lhs - (x * F.fold(y, (7, 8), **kw)).sum().item()) < 1e-10 * abs(lhs)
    assert gradcheck(lambda y: F.fold(y, (4, 4), 2), (rand(1, 4, 9).requires_grad_(),))
    _compare_with_torch("unfold", [x.numpy()], **kw)
    _compare_with_torch("fold", [y.numpy()], output_size=(7, 8), **kw)


# ---------------------------------------------------------------------------------------
# Error messages


E = RuntimeError


@pytest.mark.parametrize("call,message", [
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8, 8), torch.randn(4, 3, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3, 8, 8, 8]"),
    (lambda: F.conv1d(torch.randn(2, 3, 5, 5), torch.randn(5, 3, 3)),
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [2, 3, 5, 5]"),
    (lambda: F.conv2d(torch.randn(2, 4, 8, 8), torch.randn(5, 3, 3, 3)),
     "Given groups=1, weight of size [5, 3, 3, 3], expected input[2, 4, 8, 8] to have 3 channels, "
     "but got 4 channels instead"),
    (lambda: F.conv2d(torch.randn(4, 8, 8), torch.randn(5, 3, 3, 3)),
     "expected input[1, 4, 8, 8] to have 3 channels, but got 4 channels instead"),
    (lambda: F.conv2d(torch.randn(2, 4, 8, 8), torch.randn(5, 2, 3, 3), groups=2),
     "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
     "[[5, 2, 3, 3]] instead"),
    (lambda: F.conv2d(torch.randn(2, 3, 2, 2), torch.randn(5, 3, 3, 3)),
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
     "greater than actual input size"),
    (lambda: F.conv2d(torch.randn(2, 3, 4, 4), torch.randn(5, 3, 3, 3), dilation=2),
     "Calculated padded input size per channel: (4 x 4). Kernel size: (5 x 5)."),
    (lambda: F.conv2d(torch.randn(2, 3, 2, 2), torch.randn(5, 3, 3)),
     "expected stride to be a single integer value or a list of 1 values to match the convolution "
     "dimensions, but got stride=[1, 1]"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), padding=(1, 1, 1)),
     "expected padding to be a single integer value or a list of 2 values"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), padding="foo"),
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), bias=torch.randn(4)),
     "Given weight of size [5, 3, 3, 3], expected bias to be 1-dimensional with 5 elements, but got "
     "bias of size [4] instead"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3, dtype=torch.float64)),
     "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same"),
    (lambda: F.conv2d(torch.randn(2, 3, 8, 8), torch.randn(5, 3, 3, 3), groups=0),
     "non-positive groups is not supported"),
    (lambda: F.conv_transpose2d(torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)),
     "Given transposed=1, weight of size [4, 3, 3, 3], expected input[2, 3, 8, 8] to have 4 "
     "channels, but got 3 channels instead"),
    (lambda: F.conv_transpose2d(torch.randn(2, 3, 8, 8), torch.randn(3, 3, 3, 3), stride=2,
                                output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: "
     "2 output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda: F.max_pool2d(torch.randn(2, 3, 8, 8), 3, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
    (lambda: F.max_pool2d(torch.randn(2, 3, 8, 8), 9),
     "Given input size: (3x8x8). Calculated output size: (3x0x0). Output size is too small"),
    (lambda: F.avg_pool1d(torch.randn(2, 3, 8), 9),
     "Given input size: (3x1x8). Calculated output size: (3x1x0). Output size is too small"),
    (lambda: F.max_pool2d(torch.randn(3, 8), 2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda: F.max_pool2d(torch.randn(2, 3, 8, 8), 0, stride=1),
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    (lambda: F.max_pool2d(torch.randn(2, 3, 8, 8), 2, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    (lambda: F.max_pool2d(torch.randn(2, 3, 8, 8), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda: F.avg_pool2d(torch.randn(2, 3, 8, 8), 2, stride=(1, 1, 1)),
     "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    (lambda: F.max_pool1d(torch.randn(3, 8, 8, 8), 2),
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
     "but got:[3, 8, 8, 8]"),
    (lambda: F.max_pool1d(torch.randn(2, 3, 8), 3, padding=2),
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=3"),
    (lambda: F.avg_pool2d(torch.randn(2, 3, 8, 8), 2, padding=-1),
     "pad must be non-negative, but got pad: -1"),
    (lambda: F.avg_pool2d(torch.randn(2, 3, 8, 8), 2, divisor_override=0), "divisor must be not zero"),
    (lambda: F.adaptive_avg_pool2d(torch.randn(8), 3),
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [8]"),
    (lambda: F.adaptive_avg_pool2d(torch.randn(2, 3, 8, 8), (3, 3, 3)),
     "adaptive_avg_pool2d: output_size must be 2"),
    (lambda: F.unfold(torch.randn(2, 3, 4, 4), 5),
     "Given input with spatial size (4, 4), kernel_size=(5, 5), dilation=(1, 1), padding=(0, 0), "
     "calculated shape of the array of sliding blocks as (0, 0), but its components must be at least one."),
    (lambda: F.fold(torch.randn(2, 13, 9), (4, 4), 2),
     "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
     "input.size(1)=13 and kernel_size=(2, 2)."),
    (lambda: F.fold(torch.randn(2, 12, 8), (4, 4), 2),
     "expected size of input's dimension 2 to match the calculated number of sliding blocks 3 * 3 = 9, "
     "but got input.size(2)=8."),
])
def test_error_messages(call, message):
    with pytest.raises(E) as info:
        call()
    assert message in str(info.value)


def test_type_errors():
    with pytest.raises(TypeError, match="argument 'weight' must be Tensor, not int"):
        F.conv2d(torch.randn(2, 3, 8, 8), 3)
    with pytest.raises(NotImplementedError, match="\"max_pool2d\" not implemented for 'Bool'"):
        F.max_pool2d(torch.ones(1, 1, 4, 4, dtype=torch.bool), 2)


def test_weight_gradient_shaped_conv_takes_the_smaller_intermediate():
    # Note [Conv impl paths]: a weight gradient's "kernel" is a whole feature map and its
    # output the small kernel; scatter's intermediate would be Cout*I/(Cin*P) = 15x
    # im2col's here (20 MB against 1.4 MB in float64). tracemalloc sees NumPy's buffers.
    import tracemalloc
    from numtorch._prims.conv import conv
    x, w = rng.standard_normal((4, 40, 13, 13)), rng.standard_normal((32, 10, 11, 11))
    params = dict(stride=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
                  rhs_dilation=(1, 1), groups=4)
    tracemalloc.start()
    try:
        out = conv.impl(x, w, **params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(out, conv_reference(x, w, (1, 1), (0, 0), (1, 1), 4), atol=1e-9)
    assert peak < 4 * 2**20, f"conv used {peak / 2**20:.1f} MB of temporaries"
