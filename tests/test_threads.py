"""Intra-op threads (numtorch/_threads.py): NumPy's OpenBLAS found and its thread count
set, ``set_num_threads`` / ``get_num_threads`` as PyTorch's, and the adaptive default
policy (Note [OpenMP and BLAS threads], _inductor/build.py).

Whether OpenBLAS really runs a product on the threads we set is read from the kernel's
own accounting (/proc/self/task/*/schedstat: each thread's CPU time), not from OpenBLAS.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

import pytest

import numtorch
from numtorch import _threads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
openblas = pytest.mark.skipif(_threads.blas() is None, reason="NumPy's BLAS is not OpenBLAS")
linux = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")


@pytest.fixture
def restore_threads():
    """Put the thread counts and the policy back as they were."""
    lib = _threads.blas()
    saved = dict(_threads._POLICY), numtorch.get_num_threads(), lib and lib.num_threads()
    yield
    _threads._POLICY.update(saved[0])
    _threads._set_both(saved[1])
    if lib is not None:
        lib.set_num_threads(saved[2])


def _cpu_ns_by_thread():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except OSError:
            pass
    return out


def _threads_that_worked(fn):
    """How many threads of this process ran for over 1 ms of CPU during ``fn()``."""
    before = _cpu_ns_by_thread()
    fn()
    after = _cpu_ns_by_thread()
    return sum(after[t] - before.get(t, 0) > 1_000_000 for t in after)


@openblas
@linux
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core")
def test_openblas_runs_a_product_on_the_threads_set(restore_threads):
    lib = _threads.blas()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 768, 768))
    for n in (1, 2):
        lib.set_num_threads(n)
        assert lib.num_threads() == n
        a @ b                                       # start the workers
        time.sleep(0.2)     # a worker idle since an earlier product spins for up to ~0.1 s
        # the main thread, plus a worker with 2 threads (each does half of 0.9 GFLOP)
        assert _threads_that_worked(lambda: [a @ b for _ in range(3)]) == n


@openblas
def test_blas_is_the_library_numpy_loaded():
    lib = _threads.blas()
    with open("/proc/self/maps") as f:
        mapped = f.read()
    assert lib.path in mapped and "openblas" in os.path.basename(lib.path).lower()


def test_set_num_threads_sets_kernels_and_blas(restore_threads):
    from numtorch._inductor import config
    numtorch.set_num_threads(1)
    assert numtorch.get_num_threads() == 1 == config.cpp.threads
    if _threads.blas() is not None:
        assert _threads.blas().num_threads() == 1
    numtorch.set_num_threads(2)
    assert numtorch.get_num_threads() == 2 == config.cpp.threads
    assert not _threads._POLICY["adaptive"]           # a count set by the user is kept


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_set_num_threads_rejects_what_pytorch_rejects(bad, restore_threads):
    with pytest.raises(RuntimeError, match="set_num_threads expects") as ours:
        numtorch.set_num_threads(bad)
    torch = pytest.importorskip("torch")
    if bad is True:                 # torch takes a bool as 1; numtorch asks for an int
        return
    with pytest.raises(RuntimeError) as theirs:
        torch.set_num_threads(bad)
    assert str(theirs.value).split(",")[0] in str(ours.value)


def test_choose_threads_leaves_the_cores_other_processes_use():
    assert _threads.choose_threads(4.4, 2, 2, 2) == 1          # 2.4 others on 2 cores
    assert _threads.choose_threads(0.3, 2, 1, 2) == 2          # free again
    # its own two busy threads (load 2) don't push it off; one other process does
    assert _threads.choose_threads(2.0, 2, 2, 2) == 2
    assert _threads.choose_threads(2.0, 2, 1, 2) == 1
    assert _threads.choose_threads(10.0, 16, 4, 16) == 10      # 6 others on 16 cores
    assert _threads.choose_threads(0.0, 8, 1, 6) == 6          # never above ``most``


POLICY_SCRIPT = r"""
import json, os, sys, time
load = [float(sys.argv[1])]
os.getloadavg = lambda: (load[0], load[0], load[0])
import numtorch
from numtorch import _threads
def state():
    lib = _threads.blas()
    return [numtorch.get_num_threads(), lib.num_threads() if lib else None]
def settle(value):
    load[0] = value
    looks = _threads._POLICY["looks"]
    _threads._WAKE.set()
    end, watcher = time.monotonic() + 30, _threads._POLICY["thread"]
    while (_threads._POLICY["looks"] == looks and watcher is not None and watcher.is_alive()
           and time.monotonic() < end):
        time.sleep(0.01)
    return state()
out = {"import": state(), "adaptive": _threads._POLICY["adaptive"]}
out["quiet"] = settle(0.2)
out["loaded"] = settle(9.0)
from numtorch._inductor import config
out["config"] = config.cpp.threads
config.cpp.threads = 2                         # the user's choice: the policy stops
out["user"] = settle(0.2) + settle(9.0)
print(json.dumps(out))
"""


def _policy_run(load, **env):
    env = {k: v for k, v in os.environ.items() if k not in _threads.FIXING_VARIABLES} | env
    out = subprocess.run([sys.executable, "-c", POLICY_SCRIPT, str(load)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: nothing to adapt")
def test_default_policy_follows_the_load_until_the_user_sets_threads():
    cores = os.cpu_count()
    blas = (lambda n: n) if _threads.blas() is not None else (lambda n: None)
    r = _policy_run(9.0)
    assert r["adaptive"] and r["import"] == [1, blas(1)]
    assert r["quiet"] == [cores, blas(cores)]
    assert r["loaded"] == [1, blas(1)] and r["config"] == 1
    assert r["user"] == [2, blas(1), 2, blas(1)]      # config's 2 kept; BLAS left as it was


@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="the load figures are for 2 cores")
def test_a_process_starting_counts_the_whole_load_as_other_work():
    # load 2.1 on 2 cores: another process's core; measured there (eager MLP step), one
    # thread took 4.5 ms against 31 ms on two
    assert _policy_run(2.1)["import"][0] == 1


def test_a_fixed_thread_count_in_the_environment_turns_the_policy_off():
    r = _policy_run(9.0, NUMTORCH_NUM_THREADS="2")
    assert not r["adaptive"] and r["import"][0] == 2 and r["loaded"][0] == 2


def test_numtorch_num_threads_sets_blas_too():
    # like set_num_threads: one count for the kernels and NumPy's OpenBLAS (whose own
    # default is every core), whatever the load
    blas = (lambda n: n) if _threads.blas() is not None else (lambda n: None)
    r = _policy_run(0.0, NUMTORCH_NUM_THREADS="1")
    assert not r["adaptive"]
    assert r["import"] == r["quiet"] == r["loaded"] == [1, blas(1)]


CALLER_SCRIPT = r"""
import json, os, sys, threading, time
load = [9.0]
import numtorch
from numtorch import _threads
from numtorch._inductor import config
_threads.load_average = lambda: load[0]              # the load reader, simulated
lib = _threads.blas()
calls = []                                            # (thread, count) of each BLAS setting
real_set = lib._set
lib._set = lambda n: (calls.append((threading.get_ident(), n)), real_set(n))[1]
f = numtorch.compile(lambda x: x * 2 + 1, backend="inductor")
x = numtorch.ones(64)
f(x)
def settle(value):
    load[0] = value
    looks = _threads._POLICY["looks"]
    _threads._WAKE.set()
    end = time.monotonic() + 30
    while _threads._POLICY["looks"] == looks and time.monotonic() < end:
        time.sleep(0.01)
    # what the watcher left: nothing set yet, a count pending
    return [_threads.PENDING[0], lib.num_threads(), config.cpp.threads, len(calls)]
out = {"import": [lib.num_threads(), config.cpp.threads]}
out["quiet"] = settle(0.2)
numtorch.ones(4, 4) @ numtorch.ones(4, 4)            # an eager product applies it
out["after_matmul"] = [_threads.PENDING[0], lib.num_threads(), config.cpp.threads]
out["loaded"] = settle(9.0)
out["get_num_threads"] = numtorch.get_num_threads()  # applies it too
out["quiet_again"] = settle(0.2)
f(x)                                                   # and a compiled call
out["after_compiled"] = [_threads.PENDING[0], lib.num_threads(), config.cpp.threads]
main, watcher = threading.get_ident(), _threads._POLICY["thread"].ident
out["threads"] = sorted({"main" if t == main else "watcher" if t == watcher else "other"
                         for t, n in calls})
out["counts"] = [n for t, n in calls]
print(json.dumps(out))
"""


@pytest.mark.skipif(_threads.blas() is None, reason="NumPy's BLAS is not OpenBLAS")
@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="the load figures are for 2 cores")
def test_the_watcher_only_chooses_and_the_computing_thread_applies():
    """Note [Thread counts change on the calling thread]: no BLAS setting from the watcher."""
    env = {k: v for k, v in os.environ.items() if k not in _threads.FIXING_VARIABLES}
    script = "import os; os.getloadavg = lambda: (9.0, 9.0, 9.0)\n" + CALLER_SCRIPT
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["import"] == [1, 1]
    assert r["quiet"] == [2, 1, 1, 0]                  # chosen, not applied
    assert r["after_matmul"] == [None, 2, 2]
    assert r["loaded"] == [1, 2, 2, 1]
    assert r["get_num_threads"] == 1
    assert r["quiet_again"] == [2, 1, 1, 2]
    assert r["after_compiled"] == [None, 2, 2]
    assert r["threads"] == ["main"] and r["counts"] == [2, 1, 2]
