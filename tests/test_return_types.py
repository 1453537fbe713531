"""Note [Return types]: ops with several results return `numtorch.return_types` named
tuples that behave and print as PyTorch's ``torch.return_types``."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import vmap

A = [[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.5, -1.0, 4.0]]

CALLS = {   # name of the return type: call on a module (numtorch or torch) and A
    "max": lambda m, a: a.max(0), "min": lambda m, a: m.min(a, 1, keepdim=True),
    "sort": lambda m, a: m.sort(a), "topk": lambda m, a: a.topk(2),
    "kthvalue": lambda m, a: m.kthvalue(a, 2), "median": lambda m, a: a.median(0),
    "nanmedian": lambda m, a: m.nanmedian(a, 1), "mode": lambda m, a: m.mode(a.round()),
    "cummax": lambda m, a: m.cummax(a, 0), "cummin": lambda m, a: a.cummin(1),
    "aminmax": lambda m, a: m.aminmax(a), "frexp": lambda m, a: m.frexp(a),
    "slogdet": lambda m, a: m.slogdet(a), "linalg_slogdet": lambda m, a: m.linalg.slogdet(a),
    "linalg_qr": lambda m, a: m.linalg.qr(a), "linalg_eigh": lambda m, a: m.linalg.eigh(a),
    "linalg_svd": lambda m, a: m.linalg.svd(a), "svd": lambda m, a: m.svd(a),
    "linalg_lstsq": lambda m, a: m.linalg.lstsq(a, a),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_return_type_is_a_named_tuple(name):
    out = CALLS[name](torch, torch.tensor(A))
    cls = getattr(torch.return_types, name)
    assert type(out) is cls and isinstance(out, tuple)
    assert out[0] is getattr(out, cls._fields[0]) and len(out) == len(cls._fields)
    assert repr(out).startswith(f"torch.return_types.{name}(\n{cls._fields[0]}=tensor(")
    back = pickle.loads(pickle.dumps(out))
    assert type(back) is cls
    for x, y in zip(out, back):
        assert np.array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_return_types_print_as_pytorchs(name):
    pt = pytest.importorskip("torch")
    ours = CALLS[name](torch, torch.tensor(A))
    theirs = CALLS[name](pt, pt.tensor(A))
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours)._fields == tuple(type(theirs)._fields) if hasattr(type(theirs), "_fields") \
        else len(ours) == len(theirs)
    if name not in ("linalg_eigh", "linalg_svd", "svd", "linalg_qr", "linalg_lstsq", "slogdet",
                    "linalg_slogdet"):   # LAPACK's last digits and signs may differ
        assert repr(ours) == repr(theirs)


def test_return_types_under_transforms_and_compile():
    x = torch.tensor(A)
    batched = vmap(lambda r: r.max(0))(x)
    assert type(batched) is torch.return_types.max
    assert np.array_equal(batched.values.numpy(), x.max(1).values.numpy())
    compiled = torch.compile(lambda r: r.sort(1))(x)
    assert type(compiled) is torch.return_types.sort
    assert np.array_equal(compiled.indices.numpy(), x.sort(1).indices.numpy())
