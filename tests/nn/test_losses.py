"""Loss functions and loss modules: values and gradients vs PyTorch and NumPy formulas,
finite-difference gradients, reductions and PyTorch's errors."""
import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
import numtorch.nn.functional as F
from nn_helpers import close, gradcheck, oracle, pair, tol

rng = np.random.default_rng(0)
PRED = rng.standard_normal((4, 3))
TARGET = rng.standard_normal((4, 3))
TARGET[0, 0] = PRED[0, 0] + 0.5      # inside the smooth_l1/huber quadratic zone
PROB = rng.uniform(0.05, 0.95, (4, 3))
BINARY = (rng.uniform(size=(4, 3)) > 0.5).astype(float)

REGRESSION = [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
              ("smooth_l1_loss", {"beta": 0.3}), ("smooth_l1_loss", {"beta": 0.0}),
              ("huber_loss", {}), ("huber_loss", {"delta": 0.4}), ("soft_margin_loss", {})]


def _both(fn_name, ours_args, theirs_args, kwargs, dtype, theirs_kwargs=None):
    torch = oracle()
    out = getattr(F, fn_name)(*ours_args, **kwargs)
    ref = getattr(torch.nn.functional, fn_name)(*theirs_args, **(theirs_kwargs or kwargs))
    rtol, atol = tol(dtype)
    close(out, ref, rtol, atol)
    g = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    (out * nt.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    for a, b in zip(ours_args, theirs_args):
        if getattr(b, "grad", None) is not None:
            close(a.grad, b.grad, rtol, atol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kwargs", REGRESSION, ids=str)
def test_regression_losses_match_torch(name, kwargs, reduction, dtype):
    x, tx = pair(PRED, dtype)
    margin = name == "soft_margin_loss"
    y, ty = pair(np.sign(TARGET) if margin else TARGET, dtype, requires_grad=not margin)
    _both(name, (x, y), (tx, ty), dict(kwargs, reduction=reduction), dtype)


@pytest.mark.parametrize("name,kwargs", REGRESSION, ids=str)
def test_regression_losses_gradcheck(name, kwargs):
    gradcheck(lambda a, b: getattr(F, name)(a, b, reduction="none", **kwargs),
              nt.tensor(PRED), nt.tensor(TARGET))


def test_regression_losses_against_numpy():
    x, y = nt.tensor(PRED), nt.tensor(TARGET)
    d = PRED - TARGET
    np.testing.assert_allclose(F.mse_loss(x, y).item(), (d ** 2).mean(), rtol=1e-13)
    np.testing.assert_allclose(F.l1_loss(x, y, reduction="sum").item(), np.abs(d).sum(), rtol=1e-13)
    z = np.abs(d)
    np.testing.assert_allclose(F.huber_loss(x, y, delta=0.7, reduction="none").numpy(),
                               np.where(z < 0.7, 0.5 * z ** 2, 0.7 * (z - 0.35)), rtol=1e-13)
    w = nt.tensor(rng.uniform(size=(4, 3)))
    np.testing.assert_allclose(F.mse_loss(x, y, weight=w, reduction="sum").item(),
                               (w.numpy() * d ** 2).sum(), rtol=1e-13)


def test_regression_size_mismatch_warns_and_broadcasts():
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is "
                                         r"different to the input size \(torch.Size\(\[2, 3\]\)\)"):
        out = F.mse_loss(nt.zeros(2, 3), nt.ones(3))
    assert out.item() == 1.0
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\)"):
        with pytest.warns(UserWarning):
            F.mse_loss(nt.ones(2, 3), nt.ones(2, 4))


def test_bad_reduction_and_parameters():
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
            fn(nt.ones(2), nt.ones(2), reduction="foo")
    with pytest.raises(ValueError, match="batchmean is not a valid value for reduction"):
        F.nll_loss(nt.ones(2, 3), nt.tensor([0, 1]), reduction="batchmean")
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(nt.ones(2), nt.ones(2), beta=-1)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
        F.huber_loss(nt.ones(2), nt.ones(2), delta=0)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        nn.MSELoss(reduction="foo")(nt.ones(2), nt.ones(2))


def test_legacy_size_average_and_reduce_flags():
    x, y = nt.tensor(PRED), nt.tensor(TARGET)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please "
                                         "use reduction='sum' instead"):
        out = F.mse_loss(x, y, size_average=False)
    np.testing.assert_allclose(out.item(), F.mse_loss(x, y, reduction="sum").item())
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


# ---------------------------------------------------------------------------------------
# binary cross entropy

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_variants_match_torch(reduction, dtype):
    p, tp = pair(PROB, dtype)
    t, tt = pair(BINARY * 0.8 + 0.1, dtype)
    w, tw = pair(rng.uniform(size=(3,)), dtype, requires_grad=False)
    _both("binary_cross_entropy", (p, t), (tp, tt), {"reduction": reduction}, dtype)
    p, tp = pair(PROB, dtype)
    _both("binary_cross_entropy", (p, t), (tp, tt), {"reduction": reduction, "weight": w}, dtype,
          {"reduction": reduction, "weight": tw})
    logits, tl = pair(PRED * 4, dtype)
    pw, tpw = pair(rng.uniform(0.5, 2, (3,)), dtype, requires_grad=False)
    _both("binary_cross_entropy_with_logits", (logits, t), (tl, tt),
          {"reduction": reduction, "pos_weight": pw, "weight": w}, dtype,
          {"reduction": reduction, "pos_weight": tpw, "weight": tw})


def test_binary_cross_entropy_clamps_log_and_has_finite_grads():
    torch = oracle()
    p = nt.tensor([0.0, 1.0, 0.5], requires_grad=True)
    t = nt.tensor([1.0, 0.0, 1.0])
    out = F.binary_cross_entropy(p, t, reduction="none")
    ref = torch.nn.functional.binary_cross_entropy(torch.tensor([0.0, 1.0, 0.5]),
                                                   torch.tensor([1.0, 0.0, 1.0]), reduction="none")
    close(out, ref, 1e-6, 1e-6)
    out.sum().backward()
    assert np.isfinite(p.grad.numpy()).all()


def test_bce_with_logits_is_stable_for_large_logits_and_gradchecks():
    x = nt.tensor([1000.0, -1000.0, 0.0], dtype=nt.float64)
    y = nt.tensor([0.0, 1.0, 1.0], dtype=nt.float64)
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(x, y, reduction="none").numpy(),
                               [1000.0, 1000.0, np.log(2)], rtol=1e-12)
    gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
              nt.tensor(PRED), nt.tensor(PROB))
    gradcheck(lambda a: F.binary_cross_entropy(a, nt.tensor(BINARY), reduction="none"),
              nt.tensor(PROB))


def test_binary_cross_entropy_errors():
    with pytest.raises(ValueError, match=r"Using a target size \(torch.Size\(\[3, 2\]\)\) that is "
                                         r"different to the input size \(torch.Size\(\[2, 3\]\)\) "
                                         r"is deprecated"):
        F.binary_cross_entropy(nt.rand(2, 3), nt.rand(3, 2))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(nt.rand(2, 3) + 1, nt.rand(2, 3))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        F.binary_cross_entropy(nt.rand(2, 3), nt.rand(2, 3, dtype=nt.float64))
    with pytest.raises(ValueError, match=r"Target size \(torch.Size\(\[3, 2\]\)\) must be the same "
                                         r"as input size \(torch.Size\(\[2, 3\]\)\)"):
        F.binary_cross_entropy_with_logits(nt.rand(2, 3), nt.rand(3, 2))


# ---------------------------------------------------------------------------------------
# nll / cross entropy

LOGITS = rng.standard_normal((5, 4)) * 2
LABELS = [0, 3, 1, 3, 2]
CE_CASES = [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 3},
    {"ignore_index": 3, "reduction": "none"}, {"weight": [0.5, 1.0, 2.0, 0.1]},
    {"weight": [0.5, 1.0, 2.0, 0.1], "ignore_index": 1},
    {"label_smoothing": 0.2}, {"label_smoothing": 0.2, "weight": [0.5, 1.0, 2.0, 0.1]},
    {"label_smoothing": 0.1, "ignore_index": 3, "weight": [0.5, 1.0, 2.0, 0.1]},
    {"label_smoothing": 0.3, "reduction": "sum", "ignore_index": 0},
    {"label_smoothing": 0.3, "reduction": "none", "weight": [0.5, 1.0, 2.0, 0.1]},
]


def _ce_kwargs(case, lib, dtype):
    kw = dict(case)
    if "weight" in kw:
        kw["weight"] = lib.tensor(np.asarray(kw["weight"], dtype=dtype))
    return kw


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CE_CASES, ids=str)
def test_cross_entropy_and_nll_with_class_indices_match_torch(case, dtype):
    torch = oracle()
    x, tx = pair(LOGITS, dtype)
    out = F.cross_entropy(x, nt.tensor(LABELS), **_ce_kwargs(case, nt, dtype))
    ref = torch.nn.functional.cross_entropy(tx, torch.tensor(LABELS), **_ce_kwargs(case, torch, dtype))
    rtol, atol = tol(dtype)
    close(out, ref, rtol, atol)
    out.sum().backward()
    ref.sum().backward()
    close(x.grad, tx.grad, rtol, atol)
    if "label_smoothing" not in case:
        lp, tlp = pair(LOGITS, dtype)
        close(F.nll_loss(F.log_softmax(lp, 1), nt.tensor(LABELS), **_ce_kwargs(case, nt, dtype)),
              torch.nn.functional.nll_loss(torch.log_softmax(tlp, 1), torch.tensor(LABELS),
                                           **_ce_kwargs(case, torch, dtype)), rtol, atol)


def _cross_entropy_both(logits, target, case):
    """cross_entropy of the same logits/target in both libraries: values and input grads."""
    torch = oracle()
    x, tx = pair(logits)
    out = F.cross_entropy(x, nt.tensor(target), **_ce_kwargs(case, nt, "float64"))
    ref = torch.nn.functional.cross_entropy(tx, torch.tensor(target),
                                            **_ce_kwargs(case, torch, "float64"))
    close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("case", [{}, {"reduction": "none"}, {"ignore_index": 1},
                                  {"label_smoothing": 0.2, "weight": [1.0, 2.0, 0.5]}], ids=str)
def test_cross_entropy_k_dimensional_and_unbatched(case):
    _cross_entropy_both(rng.standard_normal((2, 3, 4, 5)), rng.integers(0, 3, (2, 4, 5)), case)
    _cross_entropy_both(rng.standard_normal(3), np.int64(2), case)


@pytest.mark.parametrize("case", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                  {"label_smoothing": 0.25}, {"weight": [1.0, 2.0, 0.5, 1.5]}],
                         ids=str)
def test_cross_entropy_with_class_probabilities(case):
    p = rng.uniform(size=(5, 4))
    _cross_entropy_both(LOGITS, p / p.sum(1, keepdims=True), case)


def test_cross_entropy_against_numpy_and_gradcheck():
    logp = LOGITS - np.log(np.exp(LOGITS).sum(1, keepdims=True))
    expected = -logp[np.arange(5), LABELS].mean()
    np.testing.assert_allclose(F.cross_entropy(nt.tensor(LOGITS), nt.tensor(LABELS)).item(),
                               expected, rtol=1e-13)
    w = nt.tensor([0.5, 1.0, 2.0, 0.1])
    gradcheck(lambda a: F.cross_entropy(a, nt.tensor(LABELS), weight=w, label_smoothing=0.1,
                                        ignore_index=1, reduction="none"), nt.tensor(LOGITS))
    gradcheck(lambda a: F.nll_loss(a, nt.tensor(LABELS)).reshape(1), nt.tensor(LOGITS))


def test_all_targets_ignored_gives_nan_mean_like_torch():
    out = F.cross_entropy(nt.randn(2, 3), nt.tensor([-100, -100]))
    assert np.isnan(out.item())


def test_nll_and_cross_entropy_errors():
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        F.cross_entropy(nt.randn(2, 3), nt.tensor([0, 3]))
    with pytest.raises(IndexError, match="Target -5 is out of bounds."):
        F.cross_entropy(nt.randn(2, 3), nt.tensor([0, -5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)."):
        F.cross_entropy(nt.randn(2, 3), nt.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(nt.randn(2, 3), nt.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(nt.randn(2, 3), nt.tensor([0, 1], dtype=nt.int32))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.cross_entropy(nt.randn(2, 3), nt.randn(2, 4))
    with pytest.raises(RuntimeError, match=r"weight tensor should be defined either for all 3 "
                                           r"classes or no classes but got weight tensor of "
                                           r"shape: \[4\]"):
        F.nll_loss(nt.randn(2, 3), nt.tensor([0, 1]), weight=nt.ones(4))
    with pytest.raises(RuntimeError, match=r"size mismatch \(got input: \[2, 3, 4, 5\] , target: "
                                           r"\[2, 4, 4\]"):
        F.nll_loss(nt.randn(2, 3, 4, 5), nt.zeros(2, 4, 4, dtype=nt.int64))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.nll_loss(nt.randn(2, 3, 4), nt.zeros(2, 5, dtype=nt.int64))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(nt.randn(2, 3), nt.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(nt.randn(2, 3), nt.rand(2, 3), ignore_index=1)


# ---------------------------------------------------------------------------------------
# KL divergence

@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(reduction, log_target):
    x, tx = pair(np.log(PROB))
    target = np.log(PROB[::-1]) if log_target else PROB[::-1]
    y, ty = pair(target.copy())
    _both("kl_div", (x, y), (tx, ty), {"reduction": reduction, "log_target": log_target}, "float64")


def test_kl_div_mean_warns_and_zero_target_is_zero():
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the "
                                         "batch size and the support size"):
        out = F.kl_div(nt.tensor(np.log(PROB)), nt.tensor(PROB))
    assert np.isfinite(out.item())
    z = F.kl_div(nt.tensor([-1.0, -2.0]), nt.tensor([0.0, 0.0]), reduction="sum")
    assert z.item() == 0.0


# ---------------------------------------------------------------------------------------
# Loss modules forward their options

def test_loss_modules_forward_their_options():
    torch = oracle()
    x, tx = pair(LOGITS)
    t, tt = nt.tensor(LABELS), torch.tensor(LABELS)
    w = [0.5, 1.0, 2.0, 0.1]
    pairs = [
        (nn.CrossEntropyLoss(weight=nt.tensor(w, dtype=nt.float64), ignore_index=3, label_smoothing=0.1),
         torch.nn.CrossEntropyLoss(weight=torch.tensor(w, dtype=torch.float64), ignore_index=3,
                                   label_smoothing=0.1), (x, t), (tx, tt)),
        (nn.NLLLoss(reduction="sum"), torch.nn.NLLLoss(reduction="sum"),
         (F.log_softmax(x, 1), t), (torch.log_softmax(tx, 1), tt)),
        (nn.MSELoss(), torch.nn.MSELoss(), (x, x * 0.5), (tx, tx * 0.5)),
        (nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum"), (x, x * 0), (tx, tx * 0)),
        (nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5), (x, x * 0), (tx, tx * 0)),
        (nn.HuberLoss(delta=2.0), torch.nn.HuberLoss(delta=2.0), (x, x * 0), (tx, tx * 0)),
        (nn.BCELoss(), torch.nn.BCELoss(), (F.sigmoid(x), x * 0 + 1), (torch.sigmoid(tx), tx * 0 + 1)),
        (nn.BCEWithLogitsLoss(pos_weight=nt.tensor(w, dtype=nt.float64)),
         torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w, dtype=torch.float64)),
         (x, x * 0 + 1), (tx, tx * 0 + 1)),
        (nn.KLDivLoss(reduction="batchmean"), torch.nn.KLDivLoss(reduction="batchmean"),
         (F.log_softmax(x, 1), F.softmax(x.detach() * 2, 1)),
         (torch.log_softmax(tx, 1), torch.softmax(tx.detach() * 2, 1))),
    ]
    for ours, theirs, a, b in pairs:
        close(ours(*a), theirs(*b))
        assert repr(ours) == repr(theirs)
    ce = nn.CrossEntropyLoss(weight=nt.tensor(w))
    assert "weight" in dict(ce.named_buffers())
