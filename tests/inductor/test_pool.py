"""Parallel kernels on numtorch's pool (Note [Kernels on the pool], pool.py): the chunk
table covers every iteration once, each parallel form (rows, a flat loop, a horizontal
kernel with a 0-d value, column blocks, streamed rows) gives NumPy's values and the same
bits at 1 and 2 threads, kernels called from several threads at once (the pool busy: the
caller computes alone), and a library without a pool runs its chunks on the caller.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._inductor import build, compile_graph, config, pool
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def compiled(f, *args):
    return compile_graph(make_graph(f)(*args), list(args))


@pytest.fixture
def parallel(monkeypatch):
    """Every kernel parallel, whatever its size, in chunks small enough that these tests'
    arrays make many (Note [Chunks of a kernel])."""
    monkeypatch.setattr(config.cpp, "parallel_threshold", 0)
    monkeypatch.setattr(config.cpp, "parallel_threshold_with_blas", 0)
    monkeypatch.setattr(pool, "CHUNK_WORK", 1 << 12)


@pytest.mark.parametrize("pieces", [
    [(["for (int64_t o = 0; o < 1000; o++) {", "}"], 1000 * 100)],     # 100 elements a row
    [(["for (int64_t o = 0; o < 7; o++) {", "}"], 7)],                  # one chunk
    [(["#pragma omp simd", "for (int64_t i = 0; i < 40000; i++) {", "}"], 40000),
     (["x[0] = 1;"], 1),                                                # a 0-d value
     (["for (int64_t i = 0; i < 3; i++) {", "}"], 3 * 50000)]])
def test_chunks_cover_each_iteration_once(pieces):
    table = pool.chunks(pieces)
    for k, (lines, work) in enumerate(pieces):
        n = pool._split(lines)[0]
        mine = [(lo, hi) for j, lo, hi in table if j == k]
        assert [i for lo, hi in mine for i in range(lo, hi)] == list(range(n))
        per = work // n
        assert all((hi - lo) * per <= max(pool.CHUNK_WORK, per) for lo, hi in mine)


def _forms():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 257)).astype(np.float32)
    v = rng.standard_normal(70001).astype(np.float32)
    w = rng.standard_normal((64, 33)).astype(np.float32)
    s = np.float32(0.5)
    return [
        ("rows", lambda x: torch.softmax(x, -1), (a,),
         lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
        ("flat", lambda x: x * 3 + 1, (v,), lambda x: x * np.float32(3) + np.float32(1)),
        ("horizontal", lambda x, y, z, s: (x * 2, y - 1, z + 3, s * 4), (a, v, w, np.asarray(s)),
         lambda x, y, z, s: (x * np.float32(2), y - np.float32(1), z + np.float32(3), s * np.float32(4))),
        ("columns", lambda x: (x.sum(0), x.amax(0)), (a,),
         lambda x: (x.astype(np.float64).sum(0), x.max(0))),
    ]


@pytest.mark.parametrize("form", _forms(), ids=lambda f: f[0])
def test_each_parallel_form_matches_numpy_with_the_same_bits(form, parallel,
                                                             same_bits_at_one_and_two_threads):
    _, f, arrays, ref = form
    args = [torch.from_numpy(x) for x in arrays]
    c = compiled(f, *args)
    assert "_part, b, " in c.source
    outs = same_bits_at_one_and_two_threads(c, *args)
    refs = ref(*arrays)
    for out, want in zip(outs, refs if isinstance(refs, tuple) else (refs,)):
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-6, atol=1e-6)


def test_streamed_rows_on_the_pool_match_numpy(parallel, monkeypatch, same_bits_at_one_and_two_threads):
    """Rows written with non-temporal stores: each chunk ends with the fence."""
    monkeypatch.setattr(config.cpp, "stream_threshold", 0)
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((200, 300)).astype(np.float32)
    x = torch.from_numpy(xs)
    c = compiled(lambda x: F.layer_norm(x, (300,)), x)
    assert "_part, b, " in c.source and "nt_stream_fence();" in c.source
    (out,) = same_bits_at_one_and_two_threads(c, x)
    mean = xs.mean(-1, keepdims=True)
    ref = (xs - mean) / np.sqrt(((xs - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_kernels_called_from_several_threads_at_once(parallel, monkeypatch):
    """The pool runs one job at a time; a caller finding it busy computes alone."""
    monkeypatch.setattr(config.cpp, "threads", 2)
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((400, 500)).astype(np.float32) for _ in range(4)]
    c = compiled(lambda x: torch.tanh(x) * 2 + x.sum(-1, keepdim=True), torch.from_numpy(xs[0]))
    want = [c(torch.from_numpy(x))[0].numpy().tobytes() for x in xs]
    errors = []

    def run(k):
        for _ in range(20):
            got = c(torch.from_numpy(xs[k]))[0].numpy().tobytes()
            if got != want[k]:
                errors.append(k)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_without_a_pool_the_caller_runs_the_chunks(parallel, monkeypatch):
    from numtorch._ops import _threaded
    monkeypatch.setattr(_threaded, "pool_address", lambda: None)
    monkeypatch.setattr(config.cpp, "threads", 2)
    xs = np.arange(50000, dtype=np.float64) * 0.37    # a source no other test compiles
    x = torch.from_numpy(xs)
    c = compiled(lambda x: x * 0.123 - 4.5, x)
    assert "_part, b, " in c.source
    np.testing.assert_array_equal(c(x)[0].numpy(), xs * 0.123 - 4.5)
