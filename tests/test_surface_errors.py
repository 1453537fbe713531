"""Bad input to the everyday ops added beside PyTorch's (numtorch/_ops/_surface_*.py,
numtorch/nn/_functional*_surface.py): the same exception type and the same first line of
message as PyTorch 2.13 for the same call.

Where numtorch is deliberately stricter or clearer, the case is not here: ``isin(1, 2)``
(PyTorch's argument-parser listing), ``unravel_index`` of an index out of range (PyTorch
returns wrapped values; numtorch raises), ``F.unfold`` of a 2-D input (PyTorch's
IndexError from inside) and ``nn.ZeroPad2d`` with three paddings (PyTorch fails only at
forward).
"""
from __future__ import annotations

import warnings

import pytest

import numtorch

CASES = [
    'lib.nanmedian(lib.ones(0, 3), 0)',
    'lib.bincount(lib.tensor([-1, 2]))',
    'lib.bincount(lib.tensor([1, 2]), minlength=-1)',
    'lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3))',
    'lib.histc(lib.ones(3), bins=0)',
    'lib.histc(lib.ones(3), bins=4, min=2, max=1)',
    'lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(5))',
    'lib.addr(lib.ones(3, 4), lib.ones(3, 1), lib.ones(4))',
    'lib.baddbmm(lib.ones(2, 3, 4), lib.ones(2, 3, 5), lib.ones(2, 4, 4))',
    'lib.signbit(lib.ones(2, dtype=lib.complex64))',
    'lib.heaviside(lib.ones(2), lib.ones(2, dtype=lib.float64))',
    'lib.isposinf(lib.ones(2, dtype=lib.complex64))',
    'lib.frexp(lib.ones(2, dtype=lib.int64))',
    "lib.searchsorted(lib.arange(3.), lib.ones(2), side='middle')",
    "lib.searchsorted(lib.arange(3.), lib.ones(2), side='left', right=True)",
    'lib.bucketize(lib.ones(2), lib.ones(2, 2))',
    'lib.quantile(lib.arange(3), 0.5)',
    "lib.quantile(lib.arange(3.), 0.5, interpolation='mid')",
    'lib.quantile(lib.arange(3.), 1.5)',
    'lib.quantile(lib.ones(0), 0.5)',
    'lib.cdist(lib.ones(3), lib.ones(3))',
    'lib.cdist(lib.ones(2, 3), lib.ones(2, 4))',
    'lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1)',
    'lib.diff(lib.tensor(1.))',
    'lib.diff(lib.ones(3), n=-1)',
    'lib.take(lib.ones(3), lib.tensor([1.]))',
    'lib.take(lib.ones(3), lib.tensor([5]))',
    'lib.rot90(lib.ones(2, 2), 1, [0])',
    'lib.rot90(lib.ones(2), 1, [0, 1])',
    'lib.rot90(lib.ones(2, 2), 1, [0, 0])',
    'lib.hsplit(lib.tensor(1.), 2)',
    'lib.vsplit(lib.ones(3, 2), 2)',
    'lib.block_diag(lib.ones(1, 1, 1))',
    'lib.cartesian_prod(lib.ones(2, 2))',
    'lib.combinations(lib.ones(2, 2))',
    'lib.combinations(lib.ones(3), -1)',
    'lib.vander(lib.ones(2, 2))',
    'lib.vander(lib.ones(2), N=-1)',
    'lib.view_as_real(lib.ones(2))',
    'lib.view_as_complex(lib.ones(2, 3))',
    'lib.view_as_complex(lib.ones(2, dtype=lib.int64))',
    'lib.trapezoid(lib.ones(3), lib.ones(2))',
    'lib.ones(3, 2).index_copy(0, lib.tensor([0, 1]), lib.ones(1, 2))',
    'lib.ones(3, 2).index_fill(0, lib.tensor([0.]), 1.)',
    'lib.ones(3, 2).index_fill(0, lib.tensor([0]), lib.ones(2))',
    'lib.ones(3).renorm(0, 0, 1.)',
    'lib.ones(3, 2).renorm(2, 0, -1.)',
    'lib.ones(3).unfold(0, 4, 1)',
    'lib.ones(3).unfold(0, 2, 0)',
    'lib.ones(2).is_nonzero()',
    'lib.ones(0).is_nonzero()',
    'lib.can_cast(1, lib.float32)',
    'lib.finfo(lib.int32)',
    'lib.iinfo(lib.float32)',
    'lib.iinfo(lib.bool)',
    'lib.set_float32_matmul_precision(3)',
    'lib.use_deterministic_algorithms(1)',
    'lib.empty_strided((2, 3), (1,))',
    'lib.empty_strided((-2, 3), (3, 1))',
    'lib.split_with_sizes(lib.ones(5), [2, 2])',
    'lib.tril_indices(-1, 3)',
    'lib.unravel_index(lib.tensor([1.]), (2, 3))',
    'lib.unravel_index(lib.tensor([1]), (-2, 3))',
    'F.prelu(lib.ones(2, 3), lib.ones(2))',
    'F.softshrink(lib.ones(2), -1.)',
    'F.pixel_shuffle(lib.ones(2, 2), 2)',
    'F.pixel_shuffle(lib.ones(1, 3, 2, 2), 2)',
    'F.pixel_shuffle(lib.ones(1, 4, 2, 2), 0)',
    'F.pixel_unshuffle(lib.ones(1, 1, 3, 2), 2)',
    'F.margin_ranking_loss(lib.ones(2), lib.ones(3), lib.ones(2))',
    'F.cosine_embedding_loss(lib.ones(2, 3), lib.ones(3, 3), lib.ones(2))',
    'F.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=-1.)',
    'F.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3, 3))',
    'F.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3), -lib.ones(2, 3))',
    'lib.logaddexp2(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))',
    'lib.logcumsumexp(lib.ones(2, dtype=lib.int64), 0)',
]


def _error(lib, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            eval(expr, {"lib": lib, "F": lib.nn.functional})   # noqa: S307 - fixed cases
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("expr", CASES)
def test_error_is_pytorchs(expr):
    torch = pytest.importorskip("torch")
    expected = _error(torch, expr)
    assert expected is not None, "PyTorch accepts this call: the case is wrong"
    assert _error(numtorch, expr) == expected
