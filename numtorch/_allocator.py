"""The C allocator NumPy's arrays come from: its adjustment at ``import numtorch``.

numtorch allocates no memory of its own; every array is NumPy's, from ``malloc``. This
module owns what numtorch does about that (Note [Warming the allocator], Note [Keeping
freed memory]), done when it is imported, and must do nothing else: no allocator of its
own, and nothing a user cannot override with glibc's own environment variables.
"""
from __future__ import annotations

import ctypes
import os

import numpy as np

# Note [Warming the allocator]
# glibc's malloc serves requests above its mmap threshold (128 KiB at process start) with a
# fresh mmap, and returns the top of its heap to the system once more than its trim
# threshold (also 128 KiB at start) lies free there. Both thresholds adapt: freeing an
# mmapped block raises the mmap threshold to that block's size (at most 32 MiB on 64-bit)
# and the trim threshold to twice that. Until a program has freed one large array, each
# step of a workload whose arrays are a few hundred KiB (MAML under vmap: (32, 40, 40)
# float32 is 200 KiB) gets its memory from the system again and page-faults it in: in the
# vmap MAML benchmark, 1,280 minor faults and 2-4 ms of system time per call (of ~16 ms),
# none once the thresholds have risen. When they rise depends on what the process ran
# before, so the same benchmark row read differently depending on the rows run ahead of
# it. numtorch therefore frees one untouched array just under 32 MiB at import: glibc
# then behaves as it does after any program's first large free (mmap threshold 32 MiB,
# trim threshold 64 MiB), and keeps adapting as before. The array is never written, so it
# costs one mmap and one munmap and no resident memory. Other allocators ignore it (the
# array is simply freed). The mmap threshold is not set with mallopt: it is the one
# threshold whose adaptation matters, and this leaves it at the value glibc adapts to.

_WARM_BYTES = (32 << 20) - (1 << 16)   # under glibc's 32 MiB ceiling with the chunk header


def warm_allocator() -> None:
    """Free one large untouched array so glibc's malloc keeps mid-sized arrays on its heap
    (Note [Warming the allocator])."""
    block = np.empty(_WARM_BYTES, np.uint8)
    del block


# Note [Keeping freed memory]
# After the warm-up, glibc still returns the top of its heap to the system whenever more
# than its trim threshold (then 64 MiB) lies free there, and a workload that frees more
# than that at once gets it back page by page on its next step. The per-sample
# `.backward()` loop of the benchmarks keeps 64 samples' gradients (~140 MB) and drops them
# together: 33,000 minor faults and ~100 ms of system time per call of ~150 ms (PyTorch's
# ~30 ms; numtorch 48 ms without the faults, 1 thread). numtorch therefore sets the trim
# threshold to 512 MiB with mallopt, after the warm-up: free memory at the heap's top is
# kept up to that much and reused by the next step (a process's resident size may stay up
# to 512 MiB above its live data after a peak; peak memory itself is unchanged). Setting
# a threshold stops glibc's adaptation of the mmap threshold, which the warm-up has put at
# its adaptive ceiling (32 MiB), so that changes nothing. A user's own choice wins: with
# any of glibc's MALLOC_*_ environment variables for these thresholds set, numtorch leaves
# malloc alone. Only glibc (mallopt's M_TRIM_THRESHOLD is -1 there).

_KEEP_BYTES = 512 << 20
_M_TRIM_THRESHOLD = -1
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_",
                  "MALLOC_MMAP_MAX_")


def _glibc() -> bool:
    try:    # a C library's name without platform.libc_ver(), which reads the executable
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def keep_freed_memory() -> bool:
    """Raise glibc's trim threshold (Note [Keeping freed memory]); whether it was set."""
    if not _glibc() or any(name in os.environ for name in _USER_SETTINGS):
        return False
    try:
        return ctypes.CDLL(None).mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES) == 1
    except (OSError, AttributeError):
        return False


warm_allocator()   # at import (numtorch/__init__.py imports this module first)
keep_freed_memory()
