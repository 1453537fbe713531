"""Large eager sums on numtorch's threads (Note [NumPy's sum on the pool],
numtorch/_ops/_threaded.py).

The kernel must give ``np.add.reduce``'s bits at every size and thread count, so the
references are NumPy's own sums; a counting wrapper shows which sums took the kernel and
on how many threads, so each fallback (small, strided, unaligned, other dtypes, a NumPy
that sums otherwise) is seen to be taken.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._ops import _threaded

# NumPy's references warn of the overflows and NaNs these tests make on purpose (the
# kernel, like PyTorch, does not)
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered",
                                        "ignore:invalid value encountered")

needs_kernel = pytest.mark.skipif(not _threaded.available() or not _threaded._sum,
                                  reason="no C compiler, or a NumPy that sums otherwise")
SUM_LARGE = _threaded.SUM_LARGE


@pytest.fixture
def sums(monkeypatch):
    """(n, threads) of each kernel sum made while the test runs."""
    seen = []
    if _threaded.available() and _threaded._sum:
        fn = _threaded._sum[0]
        monkeypatch.setattr(_threaded, "_sum", [
            lambda f64, out, a, n, depth, threads: (seen.append((n, threads)),
                                                    fn(f64, out, a, n, depth, threads))[1]])
    return seen


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


def _same_bits(x, ref):
    """The same bits, but for which NaN's payload survives where two meet (the kernel's
    vector adds may take the operands the other way round: Note [NumPy's sum on the
    pool])."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    ref = np.asarray(ref)
    assert x.dtype == ref.dtype and x.shape == ref.shape
    assert x.tobytes() == ref.tobytes() or (np.isnan(x) and np.isnan(ref)), (x, ref)


def _data(dtype, n, seed):
    """Values whose sum rounds at every addition: magnitudes spread over 1e-6..1e6."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * np.exp(rng.uniform(-14, 14, n))).astype(dtype)


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_equal_numpys_bit_for_bit_at_thousands_of_sizes(dtype, threads, sums):
    """Every size from SUM_LARGE to SUM_LARGE + 300 (each remainder mod 8 and mod 128 of
    the pairwise recursion's splits), 400 sizes up to 4M, at 1-3 threads: NumPy's bits."""
    buf = _data(dtype, 1 << 22, seed=threads)
    rng = np.random.default_rng(7)
    sizes = list(range(SUM_LARGE, SUM_LARGE + 301)) + list(rng.integers(SUM_LARGE, 1 << 22, 400))
    for n in sizes:
        start = int(rng.integers(0, (1 << 22) - n + 1))
        a = buf[start:start + n]
        _same_bits(_threaded.sum_all(a), np.add.reduce(a))
    assert len(sums) == len(sizes) and {t for _, t in sums} == {threads}


@needs_kernel
def test_every_element_counted_once(threads, sums):
    """Sums of ones are exact counts: a leaf missed or added twice, or an element on two
    leaves, would be off by its size; a sum of element indices would see a shifted leaf."""
    for n in (SUM_LARGE, 3 * 32768 + 7, (1 << 20) + 129, 5_000_011):
        _same_bits(_threaded.sum_all(np.ones(n)), np.float64(n))
        _same_bits(_threaded.sum_all(np.arange(n, dtype=np.float64)), np.float64(n * (n - 1) // 2))
        if n < 1 << 24:
            _same_bits(_threaded.sum_all(np.ones(n, np.float32)), np.float32(n))
    assert len(sums) == 12 and {t for _, t in sums} == {threads}


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values(dtype, threads):
    """inf, NaN, -0.0 (a sum of -0.0s is +0.0: NumPy starts from the identity),
    subnormals and overflow to inf come out as NumPy's."""
    n = SUM_LARGE * 40 + 3
    info = np.finfo(dtype)
    cases = [np.full(n, -0.0, dtype), np.full(n, info.smallest_subnormal, dtype),
             np.full(n, info.max / 4, dtype), _data(dtype, n, 1) * info.tiny]
    for where, value in ((5, np.inf), (n - 1, -np.inf), (n // 2, np.nan)):
        a = _data(dtype, n, where)
        a[where] = value
        cases.append(a)
    a = _data(dtype, n, 2)
    a[3], a[n - 4] = np.inf, -np.inf
    cases.append(a)
    for a in cases:
        _same_bits(_threaded.sum_all(a), np.add.reduce(a))


@needs_kernel
def test_eager_sum_and_mean_of_tensors(sums, threads):
    """x.sum() and x.mean() of contiguous 1-3-D tensors from SUM_LARGE elements take the
    kernel with NumPy's bits; smaller ones, and other layouts and dtypes, NumPy."""
    big = [(1000, 1000), (3, 70001), (SUM_LARGE,), (7, 41, 131)]
    for shape in big:
        for dtype in (np.float32, np.float64):
            a = _data(dtype, int(np.prod(shape)), len(shape)).reshape(shape)
            x = torch.tensor(a)
            _same_bits(x.sum(), np.add.reduce(a, axis=None))
            _same_bits(x.mean(), np.add.reduce(a, axis=None) / a.size)
    assert len(sums) == 2 * 2 * len(big)
    del sums[:]
    a = _data(np.float32, 1 << 20, 3)
    # (every 4 bytes from the third on: other floats, some of them NaNs with payloads)
    unaligned = np.frombuffer(a.tobytes() + b"\0\0", np.float32, count=a.size - 1, offset=2)
    others = [_data(np.float32, SUM_LARGE - 1, 4), a.astype(np.float16), a.astype(np.complex64)]
    for b in others:
        _same_bits(torch.tensor(b).sum(), np.add.reduce(b, axis=None))
    for b in (torch.tensor(a.reshape(1024, 1024)).t(), torch.tensor(a)[::2]):   # views
        _same_bits(b.sum(), np.add.reduce(b.numpy(), axis=None))
    _same_bits(_threaded.sum_all(unaligned), np.add.reduce(unaligned))
    assert sums == []
    _same_bits(_threaded.sum_all(unaligned.copy()), np.add.reduce(unaligned))
    assert [n for n, _ in sums] == [unaligned.size]


@needs_kernel
def test_sum_with_autograd_unchanged():
    """A sum recorded by autograd computes as before (NumPy), with the same value."""
    a = _data(np.float32, 1 << 18, 5)
    x = torch.tensor(a, requires_grad=True)
    s = x.sum()
    _same_bits(s.detach(), np.add.reduce(a))
    s.backward()
    assert np.array_equal(x.grad.numpy(), np.ones_like(a))


@needs_kernel
def test_a_numpy_that_sums_otherwise_is_caught(monkeypatch):
    """`_sums_as_numpy` rejects a kernel whose bits differ from np.add.reduce's; with no
    checked kernel NumPy computes every sum."""
    fn = _threaded._sum[0]
    assert _threaded._sums_as_numpy(fn)

    def off_by_one_ulp(f64, out, a, n, depth, threads):
        fn(f64, out, a, n, depth, threads)
        if n > 1000:
            o = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * 1).from_address(out))
            o[0] = np.nextafter(o[0], np.float32(np.inf))
    assert not _threaded._sums_as_numpy(off_by_one_ulp)
    monkeypatch.setattr(_threaded, "_sum", [])
    a = _data(np.float32, SUM_LARGE * 4, 6)
    _same_bits(torch.tensor(a).sum(), np.add.reduce(a))


@needs_kernel
def test_sums_from_several_threads_at_once(sums):
    """Callers on four Python threads (the pool takes one job at a time; the others sum
    alone) with two threads set: every sum is NumPy's."""
    import threading
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        arrays = [_data(np.float32, (1 << 20) + 17 * i, 10 + i) for i in range(4)]
        results = [None] * 4

        def run(i):
            x = torch.tensor(arrays[i])
            results[i] = [x.sum().numpy() for _ in range(20)]

        workers = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    finally:
        torch.set_num_threads(before)
    for a, got in zip(arrays, results):
        for r in got:
            _same_bits(r, np.add.reduce(a))
    assert len(sums) == 80 and {t for _, t in sums} == {2}
