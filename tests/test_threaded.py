"""Large eager add, sub, mul and div on numtorch's threads (Note [Large elementwise ops on
numtorch's threads], numtorch/_ops/_threaded.py).

The kernel must give NumPy's result bit for bit at any thread count, so the references are
the NumPy expressions; a counting wrapper shows which calls took the kernel and on how many
threads, so each fallback (small, strided, broadcast, overlapping, one thread, no compiler)
is seen to be taken.
"""
from __future__ import annotations

import operator
import os

import numpy as np
import pytest

import numtorch as torch
from numtorch._ops import _threaded
from numtorch._prims import elementwise as E

needs_kernel = pytest.mark.skipif(not _threaded.available(), reason="no C compiler: NumPy path")
LARGE = _threaded.LARGE
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
PRIMS = {E.add: "add", E.sub: "sub", E.mul: "mul", E.div: "div"}


@pytest.fixture
def calls(monkeypatch):
    """(op, dtype, form, threads) of each kernel call made while the test runs."""
    seen = []
    if _threaded.available():
        names = {kind: (PRIMS[prim], dt, form) for (prim, dt, form), kind in _threaded._KINDS.items()}
        run = _threaded._run[0]
        monkeypatch.setattr(_threaded, "_run", [
            lambda kind, *a: (seen.append(names[kind] + (a[-1],)), run(kind, *a))[1]])
    return seen


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _arrays(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    b[::7] = 0.0                       # division by zero: inf and nan, as NumPy gives them
    a[::11] = 0.0
    return a, b


def _same_bits(x, ref):
    x = x.numpy() if hasattr(x, "numpy") else x
    assert x.dtype == ref.dtype and x.shape == ref.shape
    assert np.array_equal(np.ascontiguousarray(x).view(np.uint8),
                          np.ascontiguousarray(ref).view(np.uint8))


@needs_kernel
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [LARGE - 2, LARGE, 3 * LARGE + 7])
def test_binary_ops_equal_numpy_bit_for_bit(n, dtype, threads, calls):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = _arrays(n, dtype)
        x, y = torch.tensor(a), torch.tensor(b)
        for name, op in OPS.items():
            with np.errstate(all="ignore"):
                _same_bits(op(x, y), op(a, b))
                _same_bits(op(x, 0.75), op(a, dtype(0.75)))   # a Python number: the dtype's
                _same_bits(op(-1.5, x), op(dtype(-1.5), a))
    finally:
        torch.set_num_threads(before)
    dt = np.dtype(dtype)
    expected = [(name, dt, form, 2) for name in OPS for form in ("vv", "vs", "sv")] \
        if threads == 2 and n >= LARGE else []
    assert calls == expected


@needs_kernel
def test_promotion_and_results_freshly_allocated(two_threads, calls):
    a, _ = _arrays(LARGE + 1, np.float32)
    _, b = _arrays(LARGE + 1, np.float64, seed=1)
    x, y = torch.tensor(a), torch.tensor(b)
    z = x * y                                          # float32 * float64 -> float64
    _same_bits(z, a * b)
    assert calls == [("mul", np.dtype(np.float64), "vv", 2)]
    w = x + 0
    assert not np.shares_memory(w.numpy(), a) and not np.shares_memory(z.numpy(), b)
    _same_bits(x, a)                                   # operands unchanged


@needs_kernel
def test_other_layouts_and_dtypes_fall_back_to_numpy(two_threads, calls):
    a, b = _arrays(600 * 300, np.float32)
    a, b = a.reshape(600, 300), b.reshape(600, 300)
    x, y = torch.tensor(a), torch.tensor(b)
    _same_bits(x.t() + y.t(), a.T + b.T)                   # strided views
    _same_bits(x[:, ::2] * y[:, ::2], a[:, ::2] * b[:, ::2])
    _same_bits(x - y[0], a - b[0])                         # broadcast row
    xi, yi = torch.tensor((a * 100).astype(np.int32)), torch.tensor((b * 100).astype(np.int32))
    _same_bits(xi + yi, (a * 100).astype(np.int32) + (b * 100).astype(np.int32))
    _same_bits(torch.tensor(3.0) * x, np.float32(3.0) * a)  # a 0-d tensor first: NumPy
    assert calls == []


@needs_kernel
def test_in_place_ops(two_threads, calls):
    a, b = _arrays(LARGE + 3, np.float64)
    x, y = torch.tensor(a), torch.tensor(b)
    x += y
    x.mul_(y)
    x.sub_(0.5)
    x.add_(x)                                              # the operand is x itself
    ref = (((a + b) * b) - 0.5)
    _same_bits(x, ref + ref)
    assert x._version == 4
    f64 = np.dtype(np.float64)
    assert calls == [("add", f64, "vv", 2), ("mul", f64, "vv", 2), ("sub", f64, "vs", 2),
                     ("add", f64, "vv", 2)]


@needs_kernel
def test_in_place_with_an_overlapping_operand_is_numpys(two_threads, calls):
    a, _ = _arrays(2 * LARGE, np.float32)
    x = torch.tensor(a)
    x[1:] += x[:-1]                                        # reads what it writes, shifted
    ref = a.copy()
    np.add(ref[1:], ref[:-1], out=ref[1:])                 # NumPy copies the overlap first
    _same_bits(x, ref)
    y = torch.tensor(a)
    y += y[5]                                              # a 0-d view into y itself
    _same_bits(y, a + a[5])
    assert calls == []


@needs_kernel
def test_autograd_unchanged(two_threads, calls):
    a, b = _arrays(LARGE + 5, np.float32)
    b[b == 0] = 1.0
    x, y = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = x * y + x / y
    _same_bits(out.detach(), a * b + a / b)
    out.sum().backward()
    _same_bits(x.grad, b + np.ones_like(a) / b)
    _same_bits(y.grad, a + (-np.ones_like(a) * (a / b) / b))
    assert calls    # the cotangents' ops ran on the kernel


@needs_kernel
def test_equal_to_pytorch():
    pt = pytest.importorskip("torch")
    a, b = _arrays(LARGE * 2 + 1, np.float32)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for op in OPS.values():
            got = op(torch.tensor(a), torch.tensor(b)).numpy()
            _same_bits(got, op(pt.from_numpy(a), pt.from_numpy(b)).numpy())
    finally:
        torch.set_num_threads(before)


def test_without_a_compiler_numpy_computes(monkeypatch, two_threads):
    from numtorch._inductor import build
    monkeypatch.setattr(build, "usable", lambda: False)
    monkeypatch.setattr(_threaded, "_run", [])
    monkeypatch.setattr(_threaded, "_unavailable", [])
    assert not _threaded.available()
    a, b = _arrays(LARGE + 1, np.float32)
    x, y = torch.tensor(a), torch.tensor(b)
    for op in OPS.values():
        with np.errstate(all="ignore"):
            _same_bits(op(x, y), op(a, b))
    x += y
    _same_bits(x, a + b)


@needs_kernel
def test_callers_on_several_threads_and_more_threads_than_cores(calls):
    """A second caller while the pool is busy computes alone (the pool takes one job at a
    time); any thread count gives the same bits."""
    import threading
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        pairs = [_arrays(LARGE * 4 + 11, np.float32, seed) for seed in range(4)]
        results = [None] * 4

        def run(i):
            a, b = pairs[i]
            x, y = torch.tensor(a), torch.tensor(b)
            results[i] = [(x * y).numpy() for _ in range(20)]

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        torch.set_num_threads(before)
    for (a, b), got in zip(pairs, results):
        for r in got:
            _same_bits(r, a * b)
    assert len(calls) == 80 and {c[-1] for c in calls} == {3}


FORK_SCRIPT = r"""
import os, numpy as np, numtorch as torch
torch.set_num_threads(2)
a = np.arange(1 << 20, dtype=np.float32)
x = torch.tensor(a)
assert np.array_equal((x + x).numpy(), a + a)          # the parent's workers start
pid = os.fork()
if pid == 0:                                            # the child has none of them
    ok = all(np.array_equal((x * 3.0).numpy(), a * np.float32(3.0)) for _ in range(5))
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print("child", status)
"""


@needs_kernel
def test_a_forked_child_computes_the_same():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", FORK_SCRIPT], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-1] == "0"


@needs_kernel
def test_back_to_back_jobs_of_different_sizes(two_threads):
    """Consecutive jobs from one caller, a short one after a long one and back, with the
    workers awake: a worker late from one job must not claim a chunk of the next (Note
    [Retiring a job] in _threaded._SOURCE): every result equals NumPy's bits."""
    sizes = (LARGE * 8 + 5, LARGE + 3, LARGE * 3 + 1, LARGE + 1)
    pairs = [_arrays(n, np.float32, seed) for seed, n in enumerate(sizes)]
    refs = [a - b for a, b in pairs]
    for _ in range(50):
        for (a, b), ref in zip(pairs, refs):
            _same_bits(_threaded.binary(E.sub, a, b), ref)


@needs_kernel
@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("n", [LARGE + 4095, 4096 * 37 + 5, LARGE * 8 + 1])
def test_guided_shares_cover_every_element_once(n, threads):
    """Eager ops claim guided shares of the chunks left (Note [Chunks and vectors of the
    eager ops]): in place, an element computed twice or missed would show; with more
    threads than cores and sizes off the 4K-element chunk, every result is NumPy's."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = _arrays(n, np.float32, seed=threads)
        d = a.copy()
        for _ in range(5):
            _threaded.binary_(E.add, d, b)        # d += b, five times
            _same_bits(_threaded.binary(E.mul, a, b), a * b)
        ref = a.copy()
        for _ in range(5):
            ref += b
        _same_bits(d, ref)
    finally:
        torch.set_num_threads(before)


def _pool_workers_allowed():
    """The allowed CPUs of each of this process's pool workers (threads named numtorch-pool)."""
    import glob
    found = []
    for task in glob.glob("/proc/self/task/*"):
        try:
            with open(task + "/comm") as f:
                if f.read().strip() != "numtorch-pool":
                    continue
            with open(task + "/status") as f:
                line = next(l for l in f if l.startswith("Cpus_allowed_list:"))
        except (OSError, StopIteration):
            continue
        cpus = set()
        for part in line.split(":", 1)[1].strip().split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
        found.append(cpus)
    return found


@needs_kernel
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs")
def test_workers_keep_off_one_of_the_callers_cpus(two_threads):
    """Note [Workers off the caller's CPU]: after a job, each worker may run on every CPU
    the caller may, less exactly one (the caller's at its last job)."""
    a, b = _arrays(LARGE * 4, np.float32)
    for _ in range(20):
        _same_bits(_threaded.binary(E.add, a, b), a + b)
    mine = os.sched_getaffinity(0)
    workers = _pool_workers_allowed()
    assert workers
    for cpus in workers:
        assert cpus < mine and len(mine - cpus) == 1


ONE_CPU_SCRIPT = r"""
import os, numpy as np
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numtorch as torch
from numtorch._ops import _threaded
from numtorch._prims import elementwise as E
torch.set_num_threads(2)
a = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
ok = all(np.array_equal(_threaded.binary(E.mul, a, a).view(np.uint8), (a * a).view(np.uint8))
         for _ in range(5))
names = [open(t + "/comm").read().strip() for t in __import__("glob").glob("/proc/self/task/*")]
print(ok, names.count("numtorch-pool"))
"""


@needs_kernel
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")
def test_a_process_on_one_cpu_starts_no_workers():
    """A worker on the caller's only CPU could only take turns with it: the caller computes
    alone, with NumPy's bits, at two threads."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", ONE_CPU_SCRIPT], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "0"]
