"""Scans, searches, quantiles and the top-level spellings of functional ops
(numtorch/_ops/_surface_reduce.py): the cases the OpInfo matrix does not sweep."""
import math

import numpy as np
import pytest

import numtorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _pair(torch, values, dtype="float64"):
    return (numtorch.tensor(values, dtype=getattr(numtorch, dtype)),
            torch.tensor(values, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cum_extremes_nan_and_ties_match_torch(torch, fn):
    for values in ([1.0, math.nan, 3.0, math.nan], [2.0, 2.0, -math.inf, 5.0, 5.0],
                   [-math.inf, -math.inf, 0.0]):
        ours, theirs = _pair(torch, values)
        a, b = getattr(numtorch, fn)(ours, 0), getattr(torch, fn)(theirs, 0)
        np.testing.assert_array_equal(a.values.numpy(), b.values.numpy())
        assert a.indices.tolist() == b.indices.tolist(), values


def test_cummax_gradient_goes_to_the_index(torch):
    ours, theirs = _pair(torch, [1.0, 3.0, 3.0, 2.0, 5.0])
    ours.requires_grad_(), theirs.requires_grad_()
    numtorch.cummax(ours, 0).values.sum().backward()
    torch.cummax(theirs, 0).values.sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist()


def test_logcumsumexp_keeps_far_apart_values():
    x = numtorch.tensor([-1000.0, 0.0, 1.0, -math.inf], dtype=numtorch.float64)
    np.testing.assert_allclose(numtorch.logcumsumexp(x, 0).numpy(),
                               np.logaddexp.accumulate([-1000.0, 0.0, 1.0, -math.inf]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        numtorch.logcumsumexp(numtorch.arange(3), 0)


def test_searchsorted_options_and_errors(torch):
    seq = [5, 1, 3]
    ours = numtorch.searchsorted(numtorch.tensor(seq), numtorch.tensor([3, 6]),
                                 sorter=numtorch.tensor([1, 2, 0]))
    theirs = torch.searchsorted(torch.tensor(seq), torch.tensor([3, 6]),
                                sorter=torch.tensor([1, 2, 0]))
    assert ours.tolist() == theirs.tolist()
    scalar = numtorch.searchsorted(numtorch.tensor([1, 3, 5]), 4)
    assert scalar.shape == () and scalar.item() == 2
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right'"):
        numtorch.searchsorted(numtorch.tensor([1, 2]), numtorch.tensor([1]), side="up")
    with pytest.raises(RuntimeError, match="can't be set to opposites"):
        numtorch.searchsorted(numtorch.tensor([1, 2]), numtorch.tensor([1]), side="left",
                              right=True)
    with pytest.raises(RuntimeError, match="first N-1"):
        numtorch.searchsorted(numtorch.zeros(2, 3), numtorch.zeros(3, 1))
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        numtorch.bucketize(numtorch.zeros(2), numtorch.zeros(2, 2))


def test_quantile_errors_match_torch(torch):
    for call in (lambda t: t.quantile(t.tensor([1, 2]), 0.5),
                 lambda t: t.quantile(t.tensor([1.0, 2.0]), 1.5),
                 lambda t: t.quantile(t.tensor([1.0, 2.0]), 0.5, interpolation="cubic")):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)) as ours:
            call(numtorch)
        assert str(ours.value)[:30] == str(theirs.value)[:30]


def test_functional_spellings_match_torch(torch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3))
    idx = [[0, 4], [1, 1]]
    ours = numtorch.embedding(numtorch.tensor(w), numtorch.tensor(idx), padding_idx=1)
    theirs = torch.embedding(torch.tensor(w), torch.tensor(idx), padding_idx=1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    x = rng.standard_normal((2, 3))
    a, b = numtorch.tensor(x), torch.tensor(x)
    assert numtorch.relu_(a) is a and torch.relu_(b) is b
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    t = (x > 0).astype(np.float64)
    for reduction in (0, 1, 2):
        np.testing.assert_allclose(
            numtorch.binary_cross_entropy_with_logits(numtorch.tensor(x), numtorch.tensor(t),
                                                      reduction=reduction).numpy(),
            torch.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(t),
                                                   reduction=reduction).numpy())
    # default: no reduction, as torch's own top-level op
    assert numtorch.binary_cross_entropy_with_logits(numtorch.tensor(x), numtorch.tensor(t)).shape == (2, 3)
