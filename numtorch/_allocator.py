"""The C allocator NumPy's arrays come from: one adjustment at ``import numtorch``.

numtorch allocates no memory of its own; every array is NumPy's, from ``malloc``. This
module owns the single thing numtorch does about that (Note [Warming the allocator]),
done when it is imported, and must do nothing else: no allocator of its own, no global
knob a user would have to undo.
"""
from __future__ import annotations

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
# array is simply freed). Not done with mallopt: setting any threshold explicitly turns
# glibc's adaptation off for the rest of the process, and needs the C library by name.

_WARM_BYTES = (32 << 20) - (1 << 16)   # under glibc's 32 MiB ceiling with the chunk header


def warm_allocator() -> None:
    """Free one large untouched array so glibc's malloc keeps mid-sized arrays on its heap
    (Note [Warming the allocator])."""
    block = np.empty(_WARM_BYTES, np.uint8)
    del block


warm_allocator()   # at import (numtorch/__init__.py imports this module first)
