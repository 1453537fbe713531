"""Exact float operations written so that kernels vectorise (rounding.py): floor, ceil,
trunc and round (Note [Rounding that vectorises]) and the remainder's checked fast form
(Note [Remainder in float arithmetic]; fmod's too), compiled against eager numtorch (NumPy) bit for
bit: edge values (signed zeros, halves, 2^23 and 2^52, infinities, NaNs, denormals), a
sample of all float32 bit patterns, exact multiples and quotients beyond the fast domain,
odd shapes, broadcasts, non-contiguous inputs, chunks on the pool; and the generated C
using the new forms.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

ROUNDING = {"floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "round": torch.round}


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


def _bits_equal(out, ref, nan_bits=True):
    """The same bits; NaNs only as NaNs where not ``nan_bits`` (a remainder of two NaNs is
    +NaN in NumPy's loop and -NaN in libm's fmod: the sign of a NaN has no meaning)."""
    assert out.shape == ref.shape and out.dtype == ref.dtype
    if not nan_bits:
        a, b = out.numpy(), ref.numpy()
        assert np.array_equal(np.isnan(a), np.isnan(b))
        out, ref = torch.from_numpy(np.where(np.isnan(a), 0, a)), torch.from_numpy(np.where(np.isnan(b), 0, b))
    assert out.numpy().tobytes() == ref.numpy().tobytes(), _first_difference(out, ref)


def _first_difference(out, ref):
    a, b = out.numpy().ravel(), ref.numpy().ravel()
    i = np.flatnonzero(a.view(f"u{a.itemsize}") != b.view(f"u{b.itemsize}"))[:3]
    return [(k, a[k], b[k]) for k in i]


def _edges(dtype):
    big = 2.0 ** (23 if dtype == np.float32 else 52)
    tiny = np.finfo(dtype).smallest_subnormal
    v = [0.0, -0.0, 0.3, -0.3, 0.5, -0.5, 0.7, -0.7, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5, 3.5,
         -3.5, big - 0.5, -(big - 0.5), big - 1, big, -big, big + 2, 2 * big, 4.5e15, 1e30,
         -1e30, float(np.finfo(dtype).max), -float(np.finfo(dtype).max), np.inf, -np.inf,
         np.nan, -np.nan, tiny, -tiny, float(np.finfo(dtype).tiny), 0.49999997, -0.49999997,
         np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0)]
    return np.array(v, dtype=dtype)


@pytest.mark.parametrize("name", list(ROUNDING))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_edges_and_draws(name, dtype):
    rng = np.random.default_rng(len(name))
    draws = rng.standard_normal(4000) * np.repeat([1, 10, 1e3, 1e7, 1e16], 800)
    x = torch.from_numpy(np.concatenate([_edges(dtype), draws.astype(dtype)]))
    f = ROUNDING[name]
    c = compiled(f, x)
    assert f"nt_{name}(" in c.source
    _bits_equal(c(x)[0], f(x))


@pytest.mark.parametrize("name", list(ROUNDING))
def test_rounding_on_a_sample_of_all_float32_bit_patterns(name):
    """Every 4099th pattern (1,047,552 values: NaNs with payloads, signalling ones too,
    denormals); all 2^32 were compared in C against libm (Note [Rounding that vectorises])."""
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    x = torch.from_numpy(bits[:1023 * 1024].view(np.float32).reshape(1023, 1024))
    f = ROUNDING[name]
    _bits_equal(compiled(f, x)(x)[0], f(x))


@pytest.mark.parametrize("shape", [(1, 1), (1023, 1025), (3, 5, 7)])
def test_rounding_shapes_broadcasts_and_views(shape):
    rng = np.random.default_rng(1)
    x = torch.from_numpy((rng.standard_normal(shape) * 5).astype(np.float32))
    b = torch.from_numpy((rng.standard_normal(shape[-1:]) * 5).astype(np.float32))
    f = lambda x, b: (torch.floor(x + b), torch.ceil(x.transpose(0, -1) * 2),
                      torch.round(x[..., ::2]), torch.trunc(-x))
    c = compiled(f, x, b)
    for out, ref in zip(c(x, b), f(x, b)):
        _bits_equal(out, ref)


def test_floor_vectorises():
    """The C of floor has no libm call left: the rule's expression is the prelude's."""
    x = torch.randn(64, 64)
    c = compiled(torch.floor, x)
    kernel = c.source.split("NT_KERNEL void kernel0")[1]
    assert "nt_floor(" in kernel and " floor(" not in kernel


def _rem_cases(dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(3000) * np.repeat([1e-3, 1, 30, 1e4], 750)).astype(dtype)
    b = (rng.standard_normal(3000) * np.repeat([1, 0.01, 100, 3], 750)).astype(dtype)
    k = rng.integers(-1000, 1000, 3000).astype(dtype)
    mult = (k * b).astype(dtype)                     # exact multiples (where k*b rounds exactly)
    e = _edges(dtype)
    ea, eb = np.meshgrid(e, np.concatenate([e, np.array([0.7, -0.7, 3.0], dtype)]))
    return np.concatenate([a, mult, ea.ravel()]), np.concatenate([b, b, eb.ravel()])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_remainder_matches_eager_bits(dtype):
    """Random pairs, exact multiples (zero results: the divisor's sign), and every pair of
    edge values: infinities, NaNs, zero divisors and quotients beyond the fast domain go
    to the exact row."""
    a, b = _rem_cases(dtype)
    a, b = torch.from_numpy(a), torch.from_numpy(b)
    f = torch.remainder
    c = compiled(f, a, b)
    assert "nt_rem_fast(" in c.source and "nt_rem_ok(" in c.source
    _bits_equal(c(a, b)[0], f(a, b), nan_bits=False)
    g = lambda a: (a % 0.7, torch.remainder(a, -0.7))
    for out, ref in zip(compiled(g, a)(a), g(a)):
        _bits_equal(out, ref, nan_bits=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmod_matches_eager_bits(dtype):
    """fmod's fast form (the sign of the dividend) on the remainder's cases."""
    a, b = _rem_cases(dtype)
    a, b = torch.from_numpy(a), torch.from_numpy(b)
    c = compiled(torch.fmod, a, b)
    assert "nt_fmod_fast(" in c.source and "nt_rem_ok(" in c.source
    _bits_equal(c(a, b)[0], torch.fmod(a, b), nan_bits=False)
    g = lambda a: (torch.fmod(a, 0.7), torch.fmod(a.t() if a.dim() == 2 else a, -0.7))
    for out, ref in zip(compiled(g, a)(a), g(a)):
        _bits_equal(out, ref, nan_bits=False)


def test_remainder_matches_pytorch_eager():
    pt = pytest.importorskip("torch")
    a, b = _rem_cases(np.float32)
    ref = pt.remainder(pt.from_numpy(a), pt.from_numpy(b)).numpy()
    out = compiled(torch.remainder, torch.from_numpy(a), torch.from_numpy(b))(
        torch.from_numpy(a), torch.from_numpy(b))[0].numpy()
    # PyTorch gives a zero result fmod's sign (a's), NumPy and numtorch the divisor's; and
    # NaN where a / b overflows (its loop's a - b * floor(a / b)), where NumPy is exact
    with np.errstate(all="ignore"):
        moderate = np.isfinite(a) & np.isfinite(b) & (np.abs(a / b) < 2.0 ** 22)
    compared = moderate & (ref != 0)
    assert compared.sum() > 6000
    assert np.array_equal(out[compared], ref[compared])
    assert np.array_equal(out[moderate & (ref == 0)], ref[moderate & (ref == 0)])   # 0 == -0


@pytest.mark.parametrize("shape", [(1, 1), (1023, 1025), (4, 6, 70)])
def test_remainder_shapes_views_and_rows_beyond_the_domain(shape):
    rng = np.random.default_rng(3)
    xs = (rng.standard_normal(shape) * 10).astype(np.float32)
    xs.reshape(-1, shape[-1])[::3, -1] = 3e9      # quotient > 2^22: the row is recomputed
    x = torch.from_numpy(xs)
    d = torch.from_numpy(rng.uniform(0.1, 2, shape[-1]).astype(np.float32))
    f = lambda x, d: (torch.remainder(x, d), (x.transpose(0, -1) * 2) % 0.7, x[..., ::2] % -1.5)
    c = compiled(f, x, d)
    for out, ref in zip(c(x, d), f(x, d)):
        _bits_equal(out, ref)


def test_remainder_in_a_reduction_stays_exact():
    x = torch.from_numpy(np.random.default_rng(4).standard_normal((40, 300)).astype(np.float32) * 9)
    c = compiled(lambda x: (x % 0.7).sum(-1), x)
    assert "nt_rem_fast(" not in c.source.split("NT_KERNEL void kernel0")[1]
    exact = np.remainder(x.numpy().astype(np.float64), np.float32(0.7)).sum(-1)
    np.testing.assert_allclose(c(x)[0].numpy(), exact, rtol=1e-6)


def test_remainder_rows_on_the_pool(monkeypatch, same_bits_at_one_and_two_threads):
    """A 1-d kernel's chunks cut the fast loop and the exact one alike (pool._split)."""
    monkeypatch.setattr(config.cpp, "parallel_threshold", 1 << 12)
    xs = np.random.default_rng(5).standard_normal(300_007).astype(np.float32) * 10
    xs[[7, 150_000, 300_006]] = [np.inf, 1e12, np.nan]      # in the first and the last chunk
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x % 0.7, x)
    assert "_part, b, " in c.source and c.source.count("t0_i0 = lo; t0_i0 < hi;") == 2, c.source
    assert "nt_parallel(kernel0_part, b, 3)" in c.source
    (two,) = same_bits_at_one_and_two_threads(c, x)
    _bits_equal(two, x % 0.7, nan_bits=False)
