"""nn.functional: values and gradients vs PyTorch and NumPy formulas, finite-difference
gradients, and PyTorch's errors for bad arguments."""
import math
import warnings

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn.functional as F
from nn_helpers import arr, close, gradcheck, oracle, pair, tol

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5)) * 3
X[0, :4] = [0.0, 3.0, -3.0, 25.0]   # kinks, hard* bounds, softplus threshold

# name -> kwargs; each runs as F.<name>(x, **kwargs) in both libraries.
ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}),
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 5.0}), ("sigmoid", {}),
    ("tanh", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}), ("softsign", {}),
    ("tanhshrink", {}), ("threshold", {"threshold": 0.5, "value": -1.0}),
    ("softmax", {"dim": 1}), ("softmax", {"dim": 0}), ("log_softmax", {"dim": 1}),
    ("softmin", {"dim": -1}), ("glu", {"dim": 0}), ("normalize", {}),
    ("normalize", {"p": 1.0, "dim": 0}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_matches_torch_values_and_grads(name, kwargs, dtype):
    torch = oracle()
    ours, theirs = pair(X, dtype)
    out, ref = getattr(F, name)(ours, **kwargs), getattr(torch.nn.functional, name)(theirs, **kwargs)
    rtol, atol = tol(dtype)
    close(out, ref, rtol, atol)
    if name in ("hardsigmoid", "hardswish") and dtype == "float64":
        rtol = 1e-7  # PyTorch's backward kernels use a float32 constant 1/6 in double
    g = np.random.default_rng(2).standard_normal(tuple(ref.shape)).astype(dtype)
    (out * nt.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    close(ours.grad, theirs.grad, rtol, atol)


@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_finite_difference_gradients(name, kwargs):
    x = nt.tensor(rng.standard_normal((4, 4)) * 2 + 0.05)
    gradcheck(lambda t: getattr(F, name)(t, **kwargs), x)


def test_activations_against_numpy_formulas():
    x = nt.tensor(X)
    np.testing.assert_allclose(F.relu(x).numpy(), np.maximum(X, 0))
    np.testing.assert_allclose(F.silu(x).numpy(), X / (1 + np.exp(-X)), rtol=1e-12)
    np.testing.assert_allclose(F.softplus(x).numpy(),
                               np.where(X > 20, X, np.log1p(np.exp(np.minimum(X, 20)))),
                               rtol=1e-12)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(F.gelu(x).numpy(), 0.5 * X * (1 + erf(X / math.sqrt(2))),
                               rtol=1e-12)
    e = np.exp(X - X.max(1, keepdims=True))
    np.testing.assert_allclose(F.softmax(x, 1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-12)


def test_relu_propagates_nan_and_has_zero_gradient_at_zero():
    x = nt.tensor([float("nan"), 0.0, -1.0, 2.0], requires_grad=True)
    y = F.relu(x)
    assert math.isnan(y[0].item())
    y[1:].sum().backward()
    assert x.grad.tolist()[1:] == [0.0, 0.0, 1.0]


def test_softplus_and_elu_have_finite_gradients_for_huge_inputs():
    x = nt.tensor([1000.0, -1000.0], requires_grad=True)
    (F.softplus(x) + F.elu(x) + F.mish(x) + F.logsigmoid(x)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_inplace_activations_modify_input_and_backprop():
    torch = oracle()
    a, b = pair(X)
    for name in ("relu", "leaky_relu", "elu", "hardtanh", "silu"):
        x, y = a * 1.0, b * 1.0
        out = getattr(F, name)(x, inplace=True)
        ref = getattr(torch.nn.functional, name)(y, inplace=True)
        assert out is x
        close(x, y)
        (out * out).sum().backward()
        (ref * ref).sum().backward()
    close(a.grad, b.grad)
    z = nt.tensor([-1.0, 2.0])
    assert F.relu_(z) is z and z.tolist() == [0.0, 2.0]


def test_activation_errors():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(nt.ones(2), approximate="foo")
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(nt.ones(2, 3), dim=2)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(nt.ones(3))


def test_softmax_without_dim_warns_like_pytorch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(nt.ones(2, 4))
    np.testing.assert_allclose(out.numpy(), np.full((2, 4), 0.25))


# ---------------------------------------------------------------------------------------
# linear / bilinear

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("xshape", [(5, 3), (2, 4, 3), (3,)])
def test_linear_matches_torch(xshape, dtype):
    torch = oracle()
    x, tx = pair(rng.standard_normal(xshape), dtype)
    w, tw = pair(rng.standard_normal((6, 3)), dtype)
    b, tb = pair(rng.standard_normal(6), dtype)
    out, ref = F.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb)
    rtol, atol = tol(dtype)
    close(out, ref, rtol, atol)
    out.sum().backward()
    ref.sum().backward()
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        close(ours.grad, theirs.grad, rtol, atol)
    np.testing.assert_allclose(F.linear(x, w).detach().numpy(),
                               x.detach().numpy() @ w.detach().numpy().T, rtol=rtol, atol=atol)


def test_linear_and_bilinear_gradcheck():
    x, w, b = (nt.tensor(rng.standard_normal(s)) for s in ((4, 3), (2, 3), (2,)))
    gradcheck(F.linear, x, w, b)
    x2, wb = nt.tensor(rng.standard_normal((4, 5))), nt.tensor(rng.standard_normal((2, 3, 5)))
    gradcheck(F.bilinear, x, x2, wb, b)


def test_bilinear_matches_einsum_and_torch():
    torch = oracle()
    x1, t1 = pair(rng.standard_normal((4, 3)))
    x2, t2 = pair(rng.standard_normal((4, 5)))
    w, tw = pair(rng.standard_normal((2, 3, 5)))
    out = F.bilinear(x1, x2, w)
    np.testing.assert_allclose(out.detach().numpy(), np.einsum(
        "ni,oij,nj->no", arr(x1), arr(w), arr(x2)), rtol=1e-12)
    close(out, torch.nn.functional.bilinear(t1, t2, tw))


def test_linear_errors_name_the_shapes_and_dtypes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        F.linear(nt.ones(2, 3), nt.ones(5, 4))
    with pytest.raises(RuntimeError, match=r"\(14x4 and 3x5\)"):
        F.linear(nt.ones(2, 7, 4), nt.ones(5, 3))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: "
                                           "float != double"):
        F.linear(nt.ones(2, 3), nt.ones(5, 3, dtype=nt.float64))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 4 but "
                                           "expected 3"):
        F.bilinear(nt.ones(2, 3), nt.ones(2, 4), nt.ones(5, 3, 3))


# ---------------------------------------------------------------------------------------
# normalization

@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_norm_group_norm_rms_norm_match_torch(dtype):
    torch = oracle()
    x, tx = pair(rng.standard_normal((3, 4, 6)) * 2 + 1, dtype)
    w, tw = pair(rng.standard_normal((4, 6)), dtype)
    b, tb = pair(rng.standard_normal((4, 6)), dtype)
    gw, tgw = pair(rng.standard_normal(4), dtype)
    gb, tgb = pair(rng.standard_normal(4), dtype)
    TF = torch.nn.functional
    outs = [F.layer_norm(x, (4, 6), w, b), F.layer_norm(x, [6]), F.group_norm(x, 2, gw, gb),
            F.rms_norm(x, (6,), w[0], eps=1e-6)]
    refs = [TF.layer_norm(tx, (4, 6), tw, tb), TF.layer_norm(tx, [6]), TF.group_norm(tx, 2, tgw, tgb),
            TF.rms_norm(tx, (6,), tw[0], eps=1e-6)]
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else tol(dtype)
    for o, r in zip(outs, refs):
        close(o, r, rtol, atol)
    sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
    sum(r.sum() * (i + 1) for i, r in enumerate(refs)).backward()
    for ours, theirs in ((x, tx), (w, tw), (b, tb), (gw, tgw), (gb, tgb)):
        close(ours.grad, theirs.grad, rtol, atol)


def test_normalization_gradcheck():
    x = nt.tensor(rng.standard_normal((2, 4, 3)))
    w, b = nt.tensor(rng.standard_normal(3)), nt.tensor(rng.standard_normal(3))
    gradcheck(lambda t, w, b: F.layer_norm(t, (3,), w, b), x, w, b)
    gradcheck(lambda t: F.group_norm(t, 2), x)
    gradcheck(lambda t: F.batch_norm(t, None, None, training=True), x)


def test_batch_norm_training_updates_running_stats_like_torch():
    torch = oracle()
    x, tx = pair(rng.standard_normal((5, 3, 4)) * 2 + 1)
    rm, rv = nt.zeros(3, dtype=nt.float64), nt.ones(3, dtype=nt.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    w, tw = pair(rng.standard_normal(3))
    out = F.batch_norm(x, rm, rv, w, None, training=True, momentum=0.3)
    ref = torch.nn.functional.batch_norm(tx, trm, trv, tw, None, training=True, momentum=0.3)
    close(out, ref)
    close(rm, trm)
    close(rv, trv)
    out.pow(3).sum().backward()
    ref.pow(3).sum().backward()
    close(x.grad, tx.grad, 1e-10, 1e-10)
    close(w.grad, tw.grad, 1e-10, 1e-10)
    close(F.batch_norm(x, rm, rv, training=False), torch.nn.functional.batch_norm(tx, trm, trv))


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, "
                                         r"got input size torch.Size\(\[1, 3\]\)"):
        F.batch_norm(nt.ones(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(nt.ones(2, 3), nt.zeros(4), nt.ones(4))
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(nt.ones(2, 3), None, None, training=False)


def test_layer_and_group_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        F.layer_norm(nt.ones(2, 3), (4,))
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as "
                                           r"normalized_shape, but got weight of shape \[4\]"):
        F.layer_norm(nt.ones(2, 3), (3,), weight=nt.ones(4))
    with pytest.raises(TypeError, match="argument 'normalized_shape'"):
        F.layer_norm(nt.ones(2, 3), 3)
    with pytest.raises(RuntimeError, match=r"divisible by num_groups, but got input of shape "
                                           r"\[2, 6, 3\] and num_groups=4"):
        F.group_norm(nt.ones(2, 6, 3), 4)


# ---------------------------------------------------------------------------------------
# dropout

def test_dropout_statistics_scaling_and_eval_identity():
    x = nt.ones(200, 100)
    y = F.dropout(x, 0.3)
    vals = y.numpy()
    assert np.isclose(vals, 0).sum() + np.isclose(vals, 1 / 0.7).sum() == vals.size
    assert abs((vals == 0).mean() - 0.3) < 0.02
    assert F.dropout(x, 0.3, training=False) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    assert F.dropout(x, 0.0) is x


def test_dropout_gradient_is_the_mask_and_inplace_writes_input():
    x = nt.ones(50, 40, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    z = nt.ones(10)
    assert F.dropout(z, 0.5, inplace=True) is z
    assert set(z.tolist()) <= {0.0, 2.0}


def test_feature_dropout_zeroes_whole_channels():
    y = F.dropout2d(nt.ones(8, 16, 3, 3), 0.5).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert 0 < (per_channel == 0).all(-1).mean() < 1
    y1 = F.dropout1d(nt.ones(16, 20), 0.5).numpy()   # unbatched (C, L)
    assert ((y1 == 0).all(-1) | (y1 == 2).all(-1)).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D"):
        F.dropout1d(nt.ones(2, 3, 4, 5), 0.5)
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
        F.dropout2d(nt.ones(2, 3), 0.5)


def test_dropout_rejects_bad_probability():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(nt.ones(2), 1.5)


# ---------------------------------------------------------------------------------------
# embedding, one_hot

def test_embedding_matches_torch_with_padding_idx_and_max_norm():
    torch = oracle()
    w, tw = pair(rng.standard_normal((6, 3)) * 2)
    idx = [[0, 2, 5], [2, 2, 1]]
    out = F.embedding(nt.tensor(idx), w, padding_idx=2)
    ref = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=2)
    close(out, ref)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    close(w.grad, tw.grad)
    assert (w.grad[2].numpy() == 0).all()
    w3, tw3 = pair(rng.standard_normal((6, 3)))
    out = F.embedding(nt.tensor(idx), w3, padding_idx=0, scale_grad_by_freq=True)
    ref = torch.nn.functional.embedding(torch.tensor(idx), tw3, padding_idx=0, scale_grad_by_freq=True)
    close(out, ref)
    (out * nt.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
    (ref * torch.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
    close(w3.grad, tw3.grad)
    w2, tw2 = pair(rng.standard_normal((6, 3)) * 2, requires_grad=False)
    close(F.embedding(nt.tensor(idx), w2, max_norm=1.0),
          torch.nn.functional.embedding(torch.tensor(idx), tw2, max_norm=1.0))
    close(w2, tw2)  # referenced rows renormalized in place


def test_embedding_errors():
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(nt.tensor([5]), nt.ones(3, 2))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: "
                                           "Long, Int; but got torch.FloatTensor"):
        F.embedding(nt.tensor([1.0]), nt.ones(3, 2))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(nt.tensor([1]), nt.ones(3, 2), padding_idx=5)


def test_one_hot():
    out = F.one_hot(nt.tensor([0, 2, 1]), 4)
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(nt.tensor([1, 5]), 3)


# ---------------------------------------------------------------------------------------
# pad

@pytest.mark.parametrize("mode,pads,shape", [
    ("constant", (1, 2), (2, 3)), ("constant", (1, 0, 2, 1), (2, 3, 4)),
    ("constant", (-1, 2, 0, -1), (2, 3, 4)), ("reflect", (2, 1), (2, 3, 4)),
    ("reflect", (1, 2, 2, 1), (2, 3, 4, 5)), ("replicate", (3, 1, 0, 2), (2, 3, 4)),
    ("circular", (2, 1), (2, 3, 4)), ("circular", (-1, 1), (2, 3, 4)),
    ("reflect", (-1, 1), (2, 3, 4)),
])
def test_pad_matches_torch_values_and_grads(mode, pads, shape):
    torch = oracle()
    x, tx = pair(rng.standard_normal(shape))
    kw = {"value": 1.5} if mode == "constant" else {}
    out = F.pad(x, pads, mode=mode, **kw)
    ref = torch.nn.functional.pad(tx, pads, mode=mode, **kw)
    close(out, ref)
    g = rng.standard_normal(tuple(ref.shape))
    (out * nt.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    close(x.grad, tx.grad)


def test_pad_gradcheck_and_numpy_reference():
    x = nt.tensor(rng.standard_normal((2, 3)))
    gradcheck(lambda t: F.pad(t, (1, 2), mode="reflect"), x)
    np.testing.assert_array_equal(F.pad(x, (1, 1, 2, 0)).numpy(),
                                  np.pad(x.numpy(), ((2, 0), (1, 1))))
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="reflect").numpy(),
                                  np.pad(x.numpy(), ((0, 0), (2, 1)), mode="reflect"))
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="replicate").numpy(),
                                  np.pad(x.numpy(), ((0, 0), (2, 1)), mode="edge"))
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="circular").numpy(),
                                  np.pad(x.numpy(), ((0, 0), (2, 1)), mode="wrap"))


def test_pad_errors():
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(nt.ones(2, 3), (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                                           "times the input dimension but got padding length 6 "
                                           "and input of dimension 2"):
        F.pad(nt.ones(2, 3), (1,) * 6)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(nt.ones(2, 3), (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding "
                                           r"input dimension, but got: padding \(3, 3\) at "
                                           r"dimension 1 of input \[2, 3\]"):
        F.pad(nt.ones(2, 3), (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value'):
        F.pad(nt.ones(2, 3), (1, 1), mode="reflect", value=2)
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input"):
        F.pad(nt.ones(3), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        F.pad(nt.ones(2, 3), (-2, -2))


# ---------------------------------------------------------------------------------------
# distances

def test_cosine_similarity_and_pairwise_distance_match_torch():
    torch = oracle()
    a, ta = pair(rng.standard_normal((4, 5)))
    b, tb = pair(rng.standard_normal((1, 5)))
    TF = torch.nn.functional
    outs = [F.cosine_similarity(a, b), F.cosine_similarity(a, b, dim=0),
            F.pairwise_distance(a, b), F.pairwise_distance(a, b, p=1.0, keepdim=True),
            F.normalize(a, dim=0)]
    refs = [TF.cosine_similarity(ta, tb), TF.cosine_similarity(ta, tb, dim=0),
            TF.pairwise_distance(ta, tb), TF.pairwise_distance(ta, tb, p=1.0, keepdim=True),
            TF.normalize(ta, dim=0)]
    for o, r in zip(outs, refs):
        close(o, r)
    sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
    sum((r * (i + 1)).sum() for i, r in enumerate(refs)).backward()
    close(a.grad, ta.grad, 1e-10, 1e-12)
    close(b.grad, tb.grad, 1e-10, 1e-12)


def test_zero_vectors_give_finite_values_and_gradients():
    z = nt.zeros(2, 3, requires_grad=True)
    out = F.normalize(z) .sum() + F.cosine_similarity(z, nt.ones(2, 3)).sum()
    assert out.item() == 0.0
    out.backward()
    assert np.isfinite(z.grad.numpy()).all()


def test_distance_gradcheck_and_errors():
    a, b = nt.tensor(rng.standard_normal((3, 4))), nt.tensor(rng.standard_normal((3, 4)))
    gradcheck(F.cosine_similarity, a, b)
    gradcheck(F.pairwise_distance, a, b)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1"):
        F.cosine_similarity(nt.ones(2, 3), nt.ones(2, 4))


# ---------------------------------------------------------------------------------------
# attention

@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": "bool"},
                                    {"mask": "float"}, {"gqa": True}], ids=str)
def test_scaled_dot_product_attention_matches_torch(kwargs):
    torch = oracle()
    kwargs = dict(kwargs)
    heads_kv = 1 if kwargs.pop("gqa", False) else 3
    q, tq = pair(rng.standard_normal((2, 3, 4, 5)))
    k, tk = pair(rng.standard_normal((2, heads_kv, 6, 5)))
    v, tv = pair(rng.standard_normal((2, heads_kv, 6, 2)))
    ours_kw, theirs_kw = dict(kwargs), dict(kwargs)
    mask = kwargs.pop("mask", None)
    ours_kw.pop("mask", None), theirs_kw.pop("mask", None)
    if mask == "bool":
        m = rng.uniform(size=(4, 6)) > 0.4
        m[1] = False                                # a fully masked row gives zeros
        ours_kw["attn_mask"], theirs_kw["attn_mask"] = nt.tensor(m), torch.tensor(m)
    elif mask == "float":
        m = rng.standard_normal((4, 6))
        ours_kw["attn_mask"], theirs_kw["attn_mask"] = nt.tensor(m), torch.tensor(m)
    if heads_kv == 1:
        ours_kw["enable_gqa"] = theirs_kw["enable_gqa"] = True
    out = F.scaled_dot_product_attention(q, k, v, **ours_kw)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **theirs_kw)
    close(out, ref, 1e-12, 1e-12)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    for a, b in ((q, tq), (k, tk), (v, tv)):
        close(a.grad, b.grad, 1e-10, 1e-12)


def test_scaled_dot_product_attention_gradcheck_and_errors():
    q, k, v = (nt.tensor(rng.standard_normal((2, 3, 4))) for _ in range(3))
    gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), q, k, v)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=nt.ones(3, 3), is_causal=True)


# ---------------------------------------------------------------------------------------
# conv / pooling are re-exported from numtorch._ops.conv

def test_conv_and_pool_are_reexported_or_raise_clearly():
    from numtorch._ops import conv as conv_ops
    for name in ("conv1d", "conv2d", "max_pool2d", "avg_pool2d"):
        assert getattr(F, name) is getattr(conv_ops, name)


def test_missing_conv_op_raises_not_implemented():
    stub = F._missing("conv9d")
    with pytest.raises(NotImplementedError, match="needs numtorch._ops.conv.conv9d"):
        stub(nt.ones(1))


def test_no_warnings_on_ordinary_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.relu(nt.tensor(X))
        F.softmax(nt.tensor(X), -1)
        F.layer_norm(nt.tensor(X), (5,))
