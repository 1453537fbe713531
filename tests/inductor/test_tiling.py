"""Tiled kernels (Note [Tiled kernels], tiling.py): pointwise kernels reading an operand
transposed run in tiles whose operand blocks are transposed by vector shuffles. Compiled
against eager bit for bit: 2-d and 3-d permutations, ragged tiles (1023x1025), single
rows and columns, 1x1, broadcasts, two staged operands, 4- and 8-byte dtypes and the
2-byte ones read in place, non-contiguous inputs, several stored values, chunks on the
pool at 1 and 2 threads; and the generated C staging the operand (or not).

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config, tiling
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


def _same_bits(c, f, *args, eager=True):
    """``c``'s outputs have the bits of the same graph compiled untiled, and of eager where
    ``eager`` (the ops are exact in both: +, -, *, /, abs; exp and sin are the kernels' own
    functions, Note [Inline float exp])."""
    out = c(*args)
    refs = []
    with_rows = compile_graph(make_graph(f)(*args), list(args), options={"cpp.tiling": False})
    assert "nt_stage" not in with_rows.source.split("NT_KERNEL void kernel0")[1]
    refs.append(with_rows(*args))
    ref = f(*args)
    ref = ref if isinstance(ref, tuple) else (ref,)
    if eager:
        refs.append(ref)
    else:           # within an ulp or so of eager's NumPy functions
        for a, b in zip(out, ref):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
    for ref in refs:
        assert len(out) == len(ref)
        for a, b in zip(out, ref):
            assert a.shape == b.shape and a.dtype == b.dtype
            assert a.numpy().tobytes() == b.numpy().tobytes()


def _randn(*shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed + sum(shape))
    return torch.from_numpy((rng.standard_normal(shape) * 10).astype(dtype))


@pytest.mark.parametrize("m,n", [(1024, 1024), (1023, 1025), (64, 64), (65, 9), (8, 70),
                                 (9, 8), (65, 3), (3, 70), (200, 2), (7, 9)])
def test_transposed_add_is_tiled_with_eager_bits(m, n):
    """Tiles of full and ragged sizes; below 8 on a side the rows stay (tiling.MIN_SIDE)."""
    x, y = _randn(n, m), _randn(m, n, seed=1)
    f = lambda x, y: x.t() + y
    c = compiled(f, x, y)
    tiled = min(m, n) >= tiling.MIN_SIDE
    assert ("nt_stage4(" in c.source and "stg0[" in c.source) == tiled, c.source
    _same_bits(c, f, x, y)
    _same_bits(c, f, _randn(n, m, seed=5), _randn(m, n, seed=6))     # nothing baked in


def test_kernels_without_a_strided_operand_keep_their_rows():
    x, y = _randn(64, 64), _randn(64, 64, seed=1)
    for f in (lambda x, y: x + y, lambda x, y: x * y[0], lambda x, y: x + y[:, :1]):
        c = compiled(f, x, y)
        assert "nt_stage" not in c.source.split("NT_KERNEL void kernel0")[1], c.source
        _same_bits(c, f, x, y)
    c = compiled(lambda x: torch.softmax(x.t(), -1), x)     # reductions are not tiled
    assert "nt_stage" not in c.source.split("NT_KERNEL void kernel0")[1], c.source
    np.testing.assert_allclose(c(x)[0].numpy(), torch.softmax(x.t(), -1).numpy(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1)])
def test_single_rows_and_columns(shape):
    x, y = _randn(*shape[::-1]), _randn(*shape, seed=1)
    f = lambda x, y: x.t() + y
    c = compiled(f, x, y)
    assert "nt_stage" not in c.source.split("NT_KERNEL void kernel0")[1]   # nothing to tile
    _same_bits(c, f, x, y)


@pytest.mark.parametrize("perm,shape", [((2, 1, 0), (70, 3, 90)), ((0, 2, 1), (3, 70, 90)),
                                        ((1, 0, 2), (70, 5, 9)), ((2, 0, 1), (65, 66, 67))])
def test_3d_permutations(perm, shape):
    x = _randn(*shape)
    out_shape = tuple(shape[p] for p in perm)
    y = _randn(*out_shape, seed=2)
    f = lambda x, y: (x.permute(*perm) * y).exp() - 1.0
    c = compiled(f, x, y)
    strided_last = perm[-1] != len(shape) - 1      # x's last dim is then an outer dim
    assert ("nt_stage4(" in c.source) == strided_last, c.source
    _same_bits(c, f, x, y, eager=False)


def test_broadcasts_two_staged_operands_and_several_outputs():
    x, z = _randn(130, 100), _randn(130, 100, seed=1)
    b, r = _randn(130, seed=2), _randn(100, 1, seed=3)
    f = lambda x, z, b, r: ((x.t() + b) * r - z.t(), (x.t() * 2).sin())
    c = compiled(f, x, z, b, r)
    assert "stg1[" in c.source, c.source          # x and z, each transposed once per tile
    _same_bits(c, f, x, z, b, r, eager=False)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.int16, np.uint8])
def test_dtypes(dtype):
    x = _randn(77, 131, dtype=dtype)
    y = _randn(131, 77, dtype=dtype, seed=1)
    f = lambda x, y: x.t() * 3 + y
    c = compiled(f, x, y)
    size = np.dtype(dtype).itemsize
    assert (f"nt_stage{size}(" in c.source) == (size in (4, 8)), c.source
    _same_bits(c, f, x, y)


def test_non_contiguous_inputs_and_public_compile():
    base = _randn(300, 260)
    x, y = base[::2, 1::2], _randn(130, 150, seed=1)      # (150, 130) strided view
    f = lambda x, y: x.t() - y * 0.5
    c = compiled(f, x, y)
    assert "nt_stage4(" in c.source
    _same_bits(c, f, x, y)
    g = torch.compile(f)
    assert g(x, y).numpy().tobytes() == f(x, y).numpy().tobytes()


def test_chunks_on_the_pool_same_bits_at_one_and_two_threads(monkeypatch,
                                                            same_bits_at_one_and_two_threads):
    monkeypatch.setattr(config.cpp, "parallel_threshold", 1 << 12)
    x, y = _randn(300, 190), _randn(190, 300, seed=1)
    f = lambda x, y: x.t() / (y.abs() + 1)
    c = compiled(f, x, y)
    assert "_part, b, " in c.source and "nt_stage4(" in c.source, c.source
    (two,) = same_bits_at_one_and_two_threads(c, x, y)
    assert two.numpy().tobytes() == f(x, y).numpy().tobytes()


def test_read_strides():
    assert tiling.read_strides(["a", "b"], (4, 5)) == {"a": 5, "b": 1}
    assert tiling.read_strides(["a", "0", "a"], (4, 1, 5)) == {"a": 6}
    assert tiling.read_strides(["0", "b"], (4, 5)) == {"b": 1}
    assert tiling.read_strides(["a + 1", "b"], (4, 5)) is None


@pytest.mark.parametrize("n,dtype", [(9, np.float64), (70, np.float64), (9, np.float32),
                                     (70, np.float32), (13, np.int32)])
def test_a_value_stored_beside_its_transpose(n, dtype):
    """The kernel stores ``a + b`` and computes its transpose from staged tiles of both:
    the staging's edges are copied element by element (as integers of the element's size,
    which must not be taken for other objects than the kernel's float arrays: a strict
    aliasing slip once left them unwritten here)."""
    a, b = _randn(n, n, dtype=dtype), _randn(n, n, dtype=dtype, seed=1)
    f = lambda a, b: ((a + b) * 2, (a + b).t() * 3)
    c = compile_graph(make_graph(f)(a, b), [a, b], options={"layout_rewrites": False})
    assert c.kernel_count == 1 and "nt_stage" in c.source
    _same_bits(c, f, a, b)
