"""The kernels' own OpenMP runtime: a private copy of GCC's libgomp, loaded once per process.

``link_flags(cc, directory)`` makes (once per cache directory) a copy of the compiler's
``libgomp.so.1`` whose soname is renamed, and returns the link flags that make ``-fopenmp``
kernels depend on that copy; ``load_runtime()`` loads it, initialised with the wait
policy numtorch chooses, before the first kernel library loads; ``LOAD_MODE`` is the
``dlopen`` mode for kernel libraries. This module knows nothing of kernels or of the cache's entries
(build.py owns both).

Note [The kernels' own OpenMP runtime]
PyTorch's wheel bundles its own ``libgomp.so.1`` (torch/lib), and GCC-built kernels need
``libgomp.so.1``. The dynamic loader resolves a needed library by soname, so whichever of
the two a process loads first serves both frameworks: one thread pool, initialised once
from the environment of that moment. Measured (2 cores, layer_norm 4096x1024, load ~6):
with ``import torch`` before numtorch's first kernel, /proc/self/maps showed only
torch/lib/libgomp.so.1 and the kernels ran on its workers, which spin after each
parallel region (libgomp's default, OMP_WAIT_POLICY unset: GOMP_SPINCOUNT 300000 pause
loops): 7.0-8.0 ms of CPU per call against 1.43 ms, and 4.1 ms of CPU burnt during a
50 ms sleep after a call against 0.0. Setting OMP_WAIT_POLICY in ``os.environ`` before our
first kernel (the earlier policy) came too late in that order, and in the other order it
leaked: torch's libgomp, loaded after it, read "passive" too and woke its workers by futex
for every region of torch.compile's kernels. libgomp has no call that changes its wait
policy or spin count after it started (both are read once, by its constructor).

So the kernels get a runtime of their own. The copy of GCC's libgomp has soname
``libnt_gomp.1`` (same length as ``libgomp.so.1``, patched in place in .dynstr; nothing
else in the file changes); it sits in ``<cache>/openmp-<digest>/libgomp.so``, and kernels
link with ``-L`` that directory first, so gcc's own ``-fopenmp`` -> ``-lgomp`` finds it and
records ``NEEDED libnt_gomp.1``. ``load_runtime`` loads the copy by path with
OMP_WAIT_POLICY set to ``config.cpp.wait_policy`` for the duration of the load only (a
value the user set is kept), so the process's environment, and torch's runtime, are left
as they were. One more step is needed: torch loads libtorch_global_deps with RTLD_GLOBAL,
which puts its libgomp in the global scope, and the loader looks up a symbol in the global
scope before a library's own dependencies; the kernels' ``GOMP_parallel`` would bind to
torch's runtime again. Kernel libraries are therefore loaded with RTLD_DEEPBIND (their own
dependencies first). Measured with torch imported first: kernels' idle CPU after a call
0.04 ms (was 3.6-8.0 ms). RTLD_DEEPBIND's known cost: a malloc interposed by LD_PRELOAD
(jemalloc, sanitizers) is bypassed inside the kernels; generated code allocates nothing
it hands out, so nothing crosses between allocators.

Where the copy cannot be made (not GCC, no ELF64 libgomp, no soname) the kernels link the
shared runtime as before, and OMP_WAIT_POLICY is set in the environment for good.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import struct
import subprocess
import tempfile

from . import config

log = logging.getLogger("numtorch._inductor")

SONAME = b"libnt_gomp.1"          # Note [The kernels' own OpenMP runtime]: len("libgomp.so.1")
LOAD_MODE = os.RTLD_NOW | getattr(os, "RTLD_DEEPBIND", 0)
_STATE: dict = {}                  # "path": the runtime loaded in this process (or None)


def rename_soname(data, new):
    """The bytes of ELF64 little-endian shared library ``data`` with its DT_SONAME string
    replaced by ``new`` (no longer than the old one; padded with NULs). Raises ValueError
    for anything else (another ELF class, no dynamic section, no soname)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("rename_soname: expected an ELF64 little-endian file")
    out = bytearray(data)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    # section header: name, type, flags, addr, offset, size, link, info, align, entsize
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    dynamic = next((s for s in sections if s[1] == 6), None)          # SHT_DYNAMIC
    if dynamic is None:
        raise ValueError("rename_soname: the file has no dynamic section")
    strtab = sections[dynamic[6]]                                     # its sh_link
    for at in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, at)
        if tag == 14:                                                 # DT_SONAME
            start = strtab[4] + value
            end = out.index(b"\0", start)
            if len(new) > end - start:
                raise ValueError(f"rename_soname: {new!r} is longer than {bytes(out[start:end])!r}")
            out[start:end] = new + b"\0" * (end - start - len(new))
            return bytes(out)
        if tag == 0:                                                  # DT_NULL
            break
    raise ValueError("rename_soname: the file has no DT_SONAME")


@functools.lru_cache(maxsize=None)
def _private_copy(cc, directory):
    """Path of the renamed copy of ``cc``'s libgomp under ``directory``, made on first use;
    None where it cannot be made (Note [The kernels' own OpenMP runtime])."""
    try:
        ident = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
        if "clang" in ident.lower():       # clang's -fopenmp links LLVM's libomp, not libgomp
            return None
        found = subprocess.run([cc, "-print-file-name=libgomp.so.1"], capture_output=True,
                               text=True, timeout=30).stdout.strip()
        if not os.path.isabs(found):
            return None
        with open(os.path.realpath(found), "rb") as f:
            data = rename_soname(f.read(), SONAME)
    except (OSError, subprocess.SubprocessError, ValueError, struct.error) as e:
        log.info("inductor: kernels use the shared libgomp (%s)", e)
        return None
    folder = os.path.join(directory, "openmp-" + hashlib.sha256(data).hexdigest()[:16])
    path = os.path.join(folder, "libgomp.so")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return path
    except OSError:
        pass
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")      # atomic, as Note [Kernel cache]
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return path


def link_flags(cc, directory):
    """Flags that make ``-fopenmp`` libraries built by ``cc`` link the private runtime kept
    in ``directory``; () where there is none (the shared libgomp, as gcc links it)."""
    path = _private_copy(cc, directory)
    return ("-L" + os.path.dirname(path),) if path else ()


# Note [A short spin]
# The private runtime is loaded with OMP_WAIT_POLICY=passive and GOMP_SPINCOUNT=
# ``config.cpp.spin_count``, 0 by default: a worker sleeps on a futex as soon as a region
# ends. The default was 10000 for a few hours, and the end-of-sitting runs took it back
# (quiet machine, load 0.1-1.7, 2 threads, each setting in its own process, alternating,
# wall medians): compiled workloads that alternate kernels with BLAS products ran slower
# with the spin, because the spinning worker holds a core OpenBLAS's second thread needs
# right after: compiled MAML 1.62-1.79 ms spinning against 1.26-1.37 passive, the compiled
# MLP SGD step 3.36-3.89 against 2.55-3.01, the compiled ensemble 1.39-1.66 against
# 1.21-1.44; kernels with no products (the GELU mix, softmax, layer_norm rows) showed no
# consistent difference either way. What the spin does when it is asked for: with
# spin_count = N a worker spins N loops (libgomp's estimate is 100000 per ms; measured
# here for 10000, 0.09-1.2 ms of CPU burnt
# while sleeping right after a compiled call, against 0.08-0.09 ms with no spin and
# 8.1-8.8 ms for libgomp's default of 300000), then sleeps on a futex. GOMP_SPINCOUNT, when set, overrides the spin count of
# either policy. A fully passive worker (spin count 0) must be woken by the kernel for
# each region, and on this (virtual) 2-core machine waking a sleeping thread costs tens
# of microseconds, which ate what the second thread saves. Measured on a quiet machine
# (load 0.2-0.3, 2 threads, medians, wall): float32 add of 1M elements 192-205 us passive
# against 82-95 us spinning (one thread: 162-195 us); compiled (x * y + x).sin() on 1M
# float32 448-449 against 293-300 us, x * y + x 154-226 against 92-103 us. The spin is
# what keeps a worker awake between consecutive regions of one computation. It is short
# because a spinning worker holds a core another pool may need (Note [OpenMP and BLAS
# threads], build.py: the default 300000 loops cost compiled kernels alternating with
# matmuls up to 100x); under load the thread policy runs one thread, which has no
# worker to spin, and libgomp itself spins at most 1000 loops when the process has more
# threads than cores. The cost shows where 2 threads are fixed on a loaded machine: at a
# region's end the caller spins out its count waiting for a worker that has no core, then
# sleeps, and only then does the worker run; the 1M-element add took 690-790 us in some
# minutes at load 2.3-3.7 (73 us in others) against 195 us with no spin (PyTorch's
# runtime: 8.0-12.0 ms). Eager elementwise ops therefore use a pool of their own that
# never waits for a worker that is not running (_ops/_threaded.py). A user's OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept, with libgomp's
# meaning (GOMP_SPINCOUNT=10000, or config.cpp.spin_count = 10000, gives the short spin).


def load_runtime(cc, directory):
    """Load the kernels' OpenMP runtime once per process, before the first kernel library,
    with OMP_WAIT_POLICY = ``config.cpp.wait_policy`` and GOMP_SPINCOUNT =
    ``config.cpp.spin_count`` unless the user set either (Note [A short spin]), and put the
    environment back. Returns the private runtime's path, or None where kernels use the
    shared OpenMP runtime: then the variable is set for good, as the runtime (libgomp when
    the first kernel loads it, LLVM's libomp at its first parallel region) reads it later."""
    if "path" in _STATE:
        return _STATE["path"]
    path = _STATE["path"] = _private_copy(cc, directory)
    if path is None:
        os.environ.setdefault("OMP_WAIT_POLICY", config.cpp.wait_policy)
    elif "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        ctypes.CDLL(path, mode=os.RTLD_NOW)          # the user's choice
    else:
        # Note [A short spin]: GOMP_SPINCOUNT overrides the policy's spin count (0 for passive)
        os.environ["OMP_WAIT_POLICY"] = config.cpp.wait_policy
        os.environ["GOMP_SPINCOUNT"] = str(config.cpp.spin_count)
        try:
            ctypes.CDLL(path, mode=os.RTLD_NOW)     # its constructor reads the variables
        finally:
            del os.environ["OMP_WAIT_POLICY"], os.environ["GOMP_SPINCOUNT"]
    return path


def loaded_runtimes():
    """The OpenMP runtime files mapped into this process (Linux; [] elsewhere)."""
    try:
        with open("/proc/self/maps") as f:
            return sorted({line.split()[-1] for line in f
                           if "gomp" in line.rsplit("/", 1)[-1] or "openmp-" in line})
    except OSError:
        return []
