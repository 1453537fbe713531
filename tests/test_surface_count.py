"""isin, gcd, lcm, nanmedian, bincount, histc (numtorch/_ops/_surface_count.py) against
PyTorch: the errors and edges the OpInfo matrix does not sweep."""
import math

import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")


def _same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), equal_nan=True)


def test_values_match_torch():
    cases = [("isin", ([1, 2, 3, 4], [2, 4, 7]), {}), ("isin", ([[1.0, 2.0]], [2.0]), dict(invert=True)),
             ("gcd", ([12, -18, 0, 7, 2 ** 40], [8, 12, 0, -21, 6]), {}),
             ("lcm", ([12, -18, 0, 7], [8, 12, 5, -21]), {}),
             ("nanmedian", ([1.0, math.nan, 3.0, 2.0],), {}),
             ("bincount", ([1, 1, 3],), {}), ("bincount", ([1, 1, 3], [0.5, 1.0, 2.0]), dict(minlength=5)),
             ("histc", ([1.0, 2.0, 1.0],), dict(bins=4, min=0, max=3)), ("histc", ([2.0, 2.0],), dict(bins=3))]
    for name, args, kw in cases:
        ours = getattr(numtorch, name)(*[numtorch.tensor(a) for a in args], **kw)
        theirs = getattr(torch, name)(*[torch.tensor(a) for a in args], **kw)
        _same(ours, theirs)
    assert numtorch.isin(3, numtorch.tensor([1, 3])).item() is True


def test_nanmedian_dim_matches_torch():
    x = [[1.0, math.nan, 3.0, 2.0], [5.0, 4.0, 3.0, 2.0]]
    ours, theirs = numtorch.nanmedian(numtorch.tensor(x), 1, True), torch.nanmedian(torch.tensor(x), 1, True)
    _same(ours.values, theirs.values)
    _same(ours.indices, theirs.indices)


@pytest.mark.parametrize("call", [
    lambda t: t.bincount(t.tensor([-1])),
    lambda t: t.bincount(t.tensor([[1]])),
    lambda t: t.gcd(t.tensor([1.0]), t.tensor([2.0])),
    lambda t: t.histc(t.tensor([1, 2])),
], ids=["bincount_negative", "bincount_2d", "gcd_float", "histc_int"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(numtorch)
    assert str(ours.value)[:30] == str(theirs.value)[:30]
