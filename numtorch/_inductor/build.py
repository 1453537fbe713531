"""Build and load: the system C compiler, the on-disk kernel cache, ctypes loading.

``load(source)`` returns a loaded shared library for a C source, compiling it at most once
per machine: libraries are cached in ``~/.cache/numtorch`` (``NUMTORCH_CACHE_DIR``), keyed
by source + compiler version + flags + CPU. This module knows nothing of graphs.

Note [Kernel cache]
An entry is ``<key>.so`` plus ``<key>.sha256``, the digest of the library's bytes, written
after it. Both are written to a temporary name and renamed (atomic on POSIX), so a reader
never sees half a file; a process killed mid-write leaves only a stray temporary. A
library whose digest file is missing or disagrees (truncated, corrupted, written by a
killed process) is rebuilt. Builders of the same key take an exclusive ``flock`` on
``<key>.lock``, so two processes compiling the same graph compile it once; the second
finds the entry when it gets the lock.

Note [OpenMP and BLAS threads]
numtorch computes on two pools: the kernels' OpenMP threads and the threads of NumPy's
OpenBLAS. libgomp's workers spin after a parallel region (OMP_WAIT_POLICY's default is
active for a while, GOMP_SPINCOUNT), and so do OpenBLAS's after a product (for 2^28
cycles, about 0.1 s). On a 2-core machine a fused kernel followed by a matmul, alternately,
makes each pool spin on the cores the other needs (a measured 100x slowdown). The policy:
- unless the user set it, OMP_WAIT_POLICY is "passive" for the kernels' pool, which is
  their own runtime (Note [The kernels' own OpenMP runtime], openmp.py), so kernel workers
  sleep soon after a region ends (softmax(x @ w), 512x512, machine loaded: 73 ms per call
  against 113 ms active), whatever else the process loaded first: after a spin of about
  0.1 ms (Note [A short spin], openmp.py), which keeps them awake between the regions of
  one computation;
- kernels of a graph that also calls BLAS (a dot_general or conv extern) run in parallel
  (on the pool since, Note [Kernels on the pool], pool.py) only above ``config.cpp.parallel_threshold_with_blas`` elements of work (4M,
  against 1M otherwise, Note [Kernels on the pool]): below it, the second OpenMP thread would share a core with an
  OpenBLAS thread still spinning after the matmul. Measured in one run on the 2-core
  machine under load ~13 (medians of 30, ms): softmax(x @ w).sum(-1) at 512x512 took
  116-146 with this policy, 194-232 with the kernels parallel, 132-158 for torch.compile,
  119-150 for the matmul alone in NumPy;
- the thread count of both pools follows the load (numtorch/_threads.py, from
  ``import numtorch`` on): the cores other processes leave free, from the 1-minute load
  average less this process's own threads (none at import), between 1 and the core
  count, looked at every 5 s. ``numtorch.set_num_threads(n)`` (both pools, as PyTorch's), an assignment to
  ``config.cpp.threads`` (kernels), or NUMTORCH_NUM_THREADS / OMP_NUM_THREADS /
  OPENBLAS_NUM_THREADS in the environment fix the count instead.
Why adapt rather than fix a count. Under load a parallel region or a 2-thread product waits
for its second thread to be scheduled, and OpenBLAS's threads spin while they wait for
each other inside a product. Measured in one process, policies taking turns (medians, wall
/ CPU per call), at load 4.3-4.7 on 2 cores: the MLP's largest product, 128x784 @ 784x512
float32, 4.49 / 2.39 ms on NumPy's default 2 threads against 1.42 / 1.06 ms on 1; the
eager MLP 784-512-256-10 SGD step 42.5 / 21.7 against 9.3 / 5.1 ms; compiled
softmax(x @ w) alternating with its matmul 16.3 / 9.5 against 3.9 / 3.0 ms. At load
2.1-2.3 (one other busy process): 5.67 / 6.13 against 1.04 / 1.04 ms, 31.5 / 33.8
against 4.47 / 4.46 ms, 24.0 / 24.0 against 2.88 / 2.88 ms. At load 6.0-7.6: 20.6 / 6.4 against 2.6 / 1.1 ms, 156 / 60 against 14.6 / 5.6 ms, 32.2 / 10.6
against 8.6 / 3.0 ms. Shortening OpenBLAS's spin at run time (OPENBLAS_THREAD_TIMEOUT
re-read by openblas_read_env, threads restarted) to 2^20 or 2^4 cycles did not help (the
product 4.4 / 2.3 and 26.8 / 13.7 ms): the waits inside one product are the cost. The
kernels alone show it too: an SGD-with-momentum update over the MLP's parameters (one
kernel, 535K elements) took 9.1-10.2 ms on 2 threads against 2.7-2.8 on 1 at load 8.7.
On a quiet machine the second thread pays: the same product takes 580 us on NumPy's 2
threads (issue #13's quiet measurement; PyTorch's 678 us) against the 1.06-1.15 ms of CPU
one thread needs, so a fixed single thread would give that away. OMP_DYNAMIC=true was not
taken: libgomp subtracts the 15-minute load average from the core count, and that average
includes this process, so on a quiet 2-core machine a sustained numtorch workload (load
~1) would drop to one thread too. The 1-minute average lags by up to a minute, and a busy
process's own load is counted as its thread count, not measured. One pool for both (BLAS
jobs on the kernels' threads, through OpenBLAS's threads callback) is not built;
benchmarks/compile_backend.py keeps the alternating workload.
"""
from __future__ import annotations

import ctypes
import fcntl
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import warnings

from . import config, openmp, pool

log = logging.getLogger("numtorch._inductor")

FLAGS = ("-march=native", "-fopenmp", "-fPIC", "-shared", "-std=gnu11",
         "-fno-math-errno", "-ffp-contract=off", "-fwrapv")
_LOADED: dict = {}          # key -> ctypes.CDLL (one load per process)


@functools.lru_cache(maxsize=None)
def compiler():
    """The C compiler: ``$CC``, else cc, gcc, clang; None when there is none."""
    for name in ([os.environ["CC"]] if os.environ.get("CC") else []) + ["cc", "gcc", "clang"]:
        path = shutil.which(name)
        if path:
            return path
    return None


_BROKEN: list = []         # holds True once the compiler failed a trivial build


def usable():
    """Whether kernels can be built: a compiler exists and has not been found broken."""
    return compiler() is not None and not _BROKEN


@functools.lru_cache(maxsize=None)
def compiler_works():
    """Whether the compiler builds a trivial OpenMP library; asked once, after a build
    failed (a working compiler costs nothing extra). A broken one is not tried again."""
    try:
        load("#include <omp.h>\nint nt_probe_threads(void) { return omp_get_max_threads(); }\n")
        return True
    except (RuntimeError, OSError) as e:
        log.warning("inductor: the C compiler cannot build kernels (%s)", str(e)[:300])
        _BROKEN.append(True)
        return False


@functools.lru_cache(maxsize=None)
def _compiler_id(cc):
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else cc
    except (OSError, subprocess.SubprocessError):
        return cc


@functools.lru_cache(maxsize=None)
def _cpu_id():
    flags = model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line
                elif line.startswith("flags") and not flags:
                    flags = line
    except OSError:
        pass
    return platform.machine() + model + flags


def cache_dir():
    """``$NUMTORCH_CACHE_DIR`` or ``~/.cache/numtorch`` (created on demand)."""
    d = os.environ.get("NUMTORCH_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "numtorch")
    os.makedirs(d, exist_ok=True)
    return d


def cache_key(source, cc, vector_math=False, include=()):
    h = hashlib.sha256()
    for part in (source, _compiler_id(cc), " ".join(_flags(cc, vector_math, include)), _cpu_id()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


# Note [No sincos]
# GCC turns sin(x) and cos(x) of one argument into one scalar sincos call (its cexpi
# rewrite), which has no libmvec vector version, so a loop computing both stopped
# vectorising: the backward of sum(sin(z) * z), cos(z) * z + sin(z), took 3.4 ms on
# 8 x 50K float32 against 0.14 ms for sin or cos alone. Where kernels call libmvec (Note
# [Vector math], vector_math.py) cos is therefore no builtin: each call goes to its own SIMD
# version (the same function either way, so the same values).
NO_SINCOS = ("-fno-builtin-cos", "-fno-builtin-cosf")


def _flags(cc, vector_math=False, include=()):
    extra = ("-Wl,-z,defs", "-lmvec") if vector_math else ()   # last: _compile moves them
    return (config.cpp.opt_level,) + FLAGS + NO_SINCOS * vector_math + \
        tuple("-I" + d for d in include) + openmp.link_flags(cc, cache_dir()) + extra


@functools.lru_cache(maxsize=None)
def has_libmvec():
    """Whether glibc's vector math library is here (Note [Vector math], vector_math.py)."""
    import ctypes.util
    return platform.machine() == "x86_64" and ctypes.util.find_library("mvec") is not None


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _valid(so, sha):
    try:
        with open(sha) as f:
            return f.read().strip() == _digest(so)
    except OSError:
        return False


def _atomic_write_text(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _compile(units, cc, so, vector_math, include=()):
    """Compile the translation ``units`` into ``so`` through temporary files, then rename
    it in place. Several units compile at once, one compiler process each, and are linked
    (Note [Parallel builds], launcher.py)."""
    d = os.path.dirname(so)
    flags, libs = list(_flags(cc, vector_math, include)), ["-lm"]
    if vector_math:                       # libraries after the objects that need them
        flags, libs = flags[:-2], flags[-2:] + libs
    fd, stem = tempfile.mkstemp(dir=d, prefix=".tmp-")
    os.close(fd)
    sources = [f"{stem}-{k}.c" for k in range(len(units))]
    objects = [c[:-2] + ".o" for c in sources] if len(units) > 1 else []
    tmp_so = stem + ".so"
    try:
        for path, text in zip(sources, units):
            with open(path, "w") as f:
                f.write(text)
        if objects:
            procs = [(cmd, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                            text=True))
                     for cmd in ([cc, *flags, "-c", "-o", o, c] for c, o in zip(sources, objects))]
            for cmd, p in procs:
                err = p.communicate()[1]
                _check(cmd, p.returncode, err)
            cmd = [cc, *flags, "-o", tmp_so, *objects, *libs]
        else:
            cmd = [cc, *flags, "-o", tmp_so, *sources, *libs]
        res = subprocess.run(cmd, capture_output=True, text=True)
        _check(cmd, res.returncode, res.stderr)
        os.replace(tmp_so, so)
        _atomic_write_text(so[:-3] + ".sha256", _digest(so))
    finally:
        for path in [stem, tmp_so, *sources, *objects]:
            if os.path.exists(path):
                os.unlink(path)


def _check(cmd, returncode, stderr):
    if returncode != 0:
        raise RuntimeError(f"C compiler failed ({' '.join(cmd)}):\n{stderr[-4000:]}")


def load(source, vector_math=False, include=()):
    """The loaded library for C ``source`` (compiled or taken from the cache): one text,
    or a list of translation units linked into one library (Note [Parallel builds],
    launcher.py); with ``vector_math`` it links glibc's libmvec (Note [Vector math]);
    ``include`` names directories of headers it includes (Python's and NumPy's, for the
    small-tensor kernels: _prims/_small.py), a part of the cache key."""
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler")
    units = [source] if isinstance(source, str) else list(source)
    key = cache_key("\f".join(units), cc, vector_math, include)
    lib = _LOADED.get(key)
    if lib is not None:
        return lib
    d = cache_dir()
    so, sha = os.path.join(d, key + ".so"), os.path.join(d, key + ".sha256")
    if not _valid(so, sha):
        with open(os.path.join(d, key + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not _valid(so, sha):        # another process may have built it meanwhile
                    if os.path.exists(so):
                        log.warning("kernel cache entry %s is corrupt; rebuilding", so)
                    log.info("compiling %s", so)
                    _compile(units, cc, so, vector_math, include)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    # Note [The kernels' own OpenMP runtime] (openmp.py): loaded first, then the kernels
    # bind to it before torch's libgomp
    if openmp.load_runtime(cc, d):
        lib = ctypes.CDLL(so, mode=openmp.LOAD_MODE)
    else:
        lib = ctypes.CDLL(so)
    _LOADED[key] = lib
    pool.set_pool(lib, units)   # Note [Kernels on the pool] (pool.py)
    return lib


def load_or_none(source, what, include=()):
    """The library for C ``source`` (``load``), or None where no compiler works or the build
    fails, which is logged naming ``what``: for eager ops' kernels, whose callers then
    compute with NumPy (_prims/_onepass.py, _ops/_threaded.py)."""
    if not usable():
        return None
    try:
        return load(source, include=include)
    except (RuntimeError, OSError) as e:
        log.warning("%s: no C kernel (%s); using NumPy", what, str(e)[:200])
        return None


_warned = []


def warn_no_compiler():
    if not _warned:
        _warned.append(True)
        warnings.warn("numtorch._inductor: no working C compiler (set CC, or install cc/gcc/"
                      "clang); compiled graphs run as generated NumPy code instead",
                      RuntimeWarning, stacklevel=3)
