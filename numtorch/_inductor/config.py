"""Knobs of the inductor backend (``numtorch._inductor.config``, PyTorch's names).

Read at compile time unless said otherwise; change them before compiling (or, for
``cpp.threads``, before calling). This module only holds values.
"""
from __future__ import annotations

import os

debug = False              # comment every generated local with its graph value
# random draws are externs running NumPy's PCG64 samplers from the state operand, so compiled
# code always draws eager's numbers (Note [Random state as a value]); False changes nothing
fallback_random = True
freezing = False           # fold captured tensors into the code (Note [Folding captured tensors])
# set by torch.compile(mode="max-autotune") (Note [Compile mode and options], runner.py);
# it changes nothing yet: the scheduler has one schedule per graph and the thread policy
# is fixed by measurement (Note [OpenMP and BLAS threads]), so there is nothing to try
max_autotune = False


class cpp:
    """C/OpenMP code generation."""

    threads = int(os.environ.get("NUMTORCH_NUM_THREADS", 0)) or (os.cpu_count() or 1)
    parallel_threshold = 32768   # elements of work below which a kernel runs on one thread
    # the same for kernels of a graph that also calls BLAS (Note [OpenMP and BLAS threads])
    parallel_threshold_with_blas = 1 << 22
    opt_level = "-O3"            # the test suite builds its op matrix at -O1 (compiles 5x faster)
    # run generated NumPy code instead of C even where a compiler works (tests; the
    # automatic fallback without a compiler is the same code, Note [Fused NumPy code])
    numpy_fallback = bool(os.environ.get("NUMTORCH_INDUCTOR_NUMPY"))
    wait_policy = "passive"      # OMP_WAIT_POLICY unless set (Note [OpenMP and BLAS threads])
