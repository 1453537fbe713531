"""Intra-op threads: ``numtorch.set_num_threads`` / ``get_num_threads``, and NumPy's BLAS.

numtorch computes on two thread pools: the compiled kernels' OpenMP threads
(``numtorch._inductor.config.cpp.threads``, their own runtime: Note [The kernels' own
OpenMP runtime], _inductor/openmp.py) and the threads of the BLAS library NumPy calls for
matmul, conv and linalg. PyTorch's ``set_num_threads`` sets both of its pools (OpenMP and
MKL/OpenBLAS); so does numtorch's. This module finds NumPy's OpenBLAS in the process and
sets its thread count through its own exported functions (ctypes; NumPy is
the only dependency, so no threadpoolctl), and applies the default thread policy (Note
[OpenMP and BLAS threads], _inductor/build.py) from ``import numtorch`` on. It changes
nothing but thread counts, and only NumPy's BLAS (SciPy's own OpenBLAS is not NumPy's).
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading

# NumPy's PyPI wheels link scipy-openblas (symbols prefixed scipy_openblas_, suffixed 64_
# for 64-bit integers); distribution builds link plain OpenBLAS.
_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("64_", "_64", "")


class OpenBLAS:
    """NumPy's OpenBLAS, loaded in this process: ``path``, ``num_threads()``,
    ``set_num_threads(n)``."""

    def __init__(self, path, lib, get, set_):
        self.path, self._lib, self._get, self._set = path, lib, get, set_

    def num_threads(self):
        """The number of threads OpenBLAS runs a large product on."""
        return int(self._get())

    def set_num_threads(self, n):
        """Run products on ``n`` threads (OpenBLAS's ``openblas_set_num_threads``)."""
        self._set(int(n))


def _log(*args):
    import logging       # not at import: logging costs 3 ms of ``import numtorch``
    logging.getLogger("numtorch").info(*args)


def _loaded_paths():
    """Shared libraries mapped into this process that may be NumPy's OpenBLAS."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
        # NumPy's first: SciPy's wheels bring an OpenBLAS of their own
        return sorted((p for p in paths if p.startswith("/")), key=lambda p: ("numpy" not in p, p))
    except OSError:                    # no /proc (macOS): the wheel's bundled libraries
        import glob
        import numpy
        root = os.path.dirname(os.path.dirname(numpy.__file__))
        return sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*")) +
                      glob.glob(os.path.join(os.path.dirname(numpy.__file__), ".dylibs",
                                             "*openblas*")))


@functools.lru_cache(maxsize=None)
def blas():
    """NumPy's OpenBLAS as an ``OpenBLAS``, or None where NumPy uses another BLAS (MKL,
    Accelerate) or none could be found; then only the kernels' threads are numtorch's."""
    import numpy  # noqa: F401  (loads its BLAS)
    for path in _loaded_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_ is not None:
                    get.restype, get.argtypes = ctypes.c_int, []
                    set_.restype, set_.argtypes = None, [ctypes.c_int]
                    return OpenBLAS(path, lib, get, set_)
    _log("numtorch: NumPy's BLAS is not OpenBLAS; set_num_threads sets kernels only")
    return None


# -- the thread policy --------------------------------------------------------------------

def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# looks: how many times the watcher has looked at the load (tests wait on it)
_POLICY: dict = {"adaptive": False, "written": None, "thread": None, "looks": 0}
# PENDING[0]: the count the watcher chose and no caller has applied yet, else None
# (Note [Thread counts change on the calling thread])
PENDING: list = [None]
# variables by which a user fixes thread counts themselves: then numtorch adapts nothing
FIXING_VARIABLES = ("NUMTORCH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
WATCH_SECONDS = 5.0        # Linux updates the load averages every 5 s
_WAKE = threading.Event()  # set: the watcher looks now (tests)


def _check_threads(n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")


def _config():
    """numtorch._inductor.config where it is imported already (importing it costs 30 ms:
    it loads the backend); else None, and config.py takes ``in_force()`` when it loads."""
    return sys.modules.get("numtorch._inductor.config")


def in_force():
    """The thread count of the default policy now (config.py starts from it)."""
    return _POLICY["written"] or int(os.environ.get("NUMTORCH_NUM_THREADS", 0)) or (os.cpu_count() or 1)


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations (PyTorch's
    ``torch.get_num_threads``): the compiled kernels' OpenMP threads, which
    ``set_num_threads`` also gives NumPy's BLAS. Under the default adaptive policy this is
    the count in force now (Note [OpenMP and BLAS threads], _inductor/build.py), which it
    applies first if the load changed it (Note [Thread counts change on the calling
    thread])."""
    if PENDING[0] is not None:
        apply_pending()
    config = _config()
    return config.cpp.threads if config is not None else in_force()


def set_num_threads(n):
    """Sets the number of threads used for intraop parallelism on CPU (PyTorch's
    ``torch.set_num_threads``): the compiled kernels' OpenMP threads and NumPy's OpenBLAS
    threads. A count set here is kept: the adaptive default policy stops (Note [OpenMP and
    BLAS threads], _inductor/build.py)."""
    _check_threads(n)
    _POLICY["adaptive"] = False
    PENDING[0] = None
    _set_both(n)


# Note [Thread counts change on the calling thread]
# The adaptive policy's watcher is a daemon thread; the computation runs on other threads,
# possibly inside an OpenBLAS product or an OpenMP region at the moment the load changes.
# OpenBLAS does not document `openblas_set_num_threads` as safe while another thread is
# inside a product (it may start threads and rewrites the count a product reads), so the
# watcher sets nothing: it only leaves the count it chose in PENDING, and the thread that
# computes applies it (`apply_pending`) at points where it is between library calls and
# asks for the count anyway: `get_num_threads` (which eager kernels on numtorch's threads
# call before each run, _ops/_threaded.py), each call of a compiled graph (_inductor/
# runner.py, beside its check of `config.cpp.threads`), and each eager `dot_general`
# (matmul, linear and the products of their backward: the eager BLAS calls). The check
# on those paths is one list read (about 20 ns). A program that calls BLAS by other
# routes only (conv, linalg) keeps its count until one of these runs; the policy changes
# counts rarely anyway (at most every WATCH_SECONDS).


def apply_pending():
    """Apply, on this thread, the thread count the adaptive policy's watcher chose (Note
    [Thread counts change on the calling thread]); nothing if there is none or the policy
    has stopped."""
    n, PENDING[0] = PENDING[0], None
    if n is not None and _POLICY["adaptive"] and n != _POLICY["written"]:
        _log("numtorch: load %.1f: %d thread(s)", load_average(), n)
        _set_both(n)


def load_average():
    """The 1-minute load average the policy follows (tests replace it)."""
    return os.getloadavg()[0]


def _set_both(n):
    _POLICY["written"] = n
    config = _config()
    if config is not None:
        config.cpp.threads = n
    lib = blas()
    if lib is not None:
        lib.set_num_threads(n)


def choose_threads(load, cores, current, most):
    """The thread count of the adaptive policy (Note [OpenMP and BLAS threads]) for the
    1-minute load average ``load`` on ``cores`` cores, running ``current`` threads now:
    the cores the other processes leave free, counting this process's ``current`` threads
    as part of the load (so its own work does not push it off its cores), rounded, between
    1 and ``most``."""
    others = max(0.0, load - current)
    return max(1, min(most, round(cores - others)))


def start_policy():
    """Apply the default thread policy once per process (``import numtorch`` calls it):
    unless the user fixed thread counts (``FIXING_VARIABLES``) or there is one core, choose
    the kernels' and BLAS's count from the load now, and keep choosing every
    ``WATCH_SECONDS`` on a daemon thread, for the computing thread to apply (Note [Thread
    counts change on the calling thread]), until ``set_num_threads`` or an assignment to
    ``config.cpp.threads`` fixes it. A process forked later keeps the count of the moment."""
    cores = _cores()
    if _POLICY["thread"] is not None:
        return
    if os.environ.get("NUMTORCH_NUM_THREADS"):
        # numtorch's own variable fixes both pools, as set_num_threads does (OMP_NUM_THREADS
        # and OPENBLAS_NUM_THREADS are read by the libraries themselves)
        _set_both(in_force())
        return
    if cores < 2 or any(os.environ.get(v) for v in FIXING_VARIABLES):
        return
    most = in_force()
    _POLICY["adaptive"] = True
    # a process starting has added nothing to the load yet: all of it is other work
    _set_both(choose_threads(load_average(), cores, 0, most))
    _POLICY["thread"] = threading.Thread(target=_watch, args=(cores, most), daemon=True,
                                         name="numtorch-threads")
    _POLICY["thread"].start()


def _watch(cores, most):
    while _POLICY["adaptive"]:
        _WAKE.wait(WATCH_SECONDS)
        _WAKE.clear()
        config = _config()
        if config is not None and config.cpp.threads != _POLICY["written"]:   # user's now
            _POLICY["adaptive"] = False
        elif _POLICY["adaptive"]:
            # only chosen here, applied by the computing thread (Note [Thread counts
            # change on the calling thread])
            n = choose_threads(load_average(), cores, _POLICY["written"], most)
            PENDING[0] = n if n != _POLICY["written"] else None
        _POLICY["looks"] += 1
