"""Knobs of the inductor backend (``numtorch._inductor.config``, PyTorch's names).

Read at compile time unless said otherwise; change them before compiling (or, for
``cpp.threads``, before calling). This module only holds values.
"""
from __future__ import annotations

import os

from .. import _threads

debug = False              # comment every generated local with its graph value
# random draws are externs running NumPy's PCG64 samplers from the state operand, so compiled
# code always draws eager's numbers (Note [Random state as a value]); False changes nothing
fallback_random = True
# products in BLAS's faster orientation, transposes moved into products (Note [Transposes
# sink to products], layout.py); graphs bound for C only
layout_rewrites = True
freezing = False           # fold captured tensors into the code (Note [Folding captured tensors])
# set by torch.compile(mode="max-autotune") (Note [Compile mode and options], runner.py);
# it changes nothing yet: the scheduler has one schedule per graph and the thread policy
# is decided by measurement (Note [OpenMP and BLAS threads]), so there is nothing to try
max_autotune = False
# compiler processes building one library at once (Note [Parallel builds], launcher.py)
compile_threads = int(os.environ.get("NUMTORCH_COMPILE_THREADS", 0)) or min(os.cpu_count() or 1, 8)


class trace:
    """Debug output of each compile: ``enabled`` writes what NUMTORCH_COMPILE_DEBUG=1 writes
    (PyTorch's TORCH_COMPILE_DEBUG; numtorch/_dynamo/debug_dir.py), read at capture time."""

    enabled = False


class triton:
    """GPU code generation. numtorch has no GPU backend: these are accepted, as a CPU build
    of PyTorch accepts them, and change nothing."""

    cudagraphs = False


class cpp:
    """C/OpenMP code generation."""

    # NUMTORCH_NUM_THREADS, else the default policy's count now, which it keeps adapting
    # (numtorch.set_num_threads sets this and BLAS's; Note [OpenMP and BLAS threads])
    threads = _threads.in_force()
    # elements of work below which a kernel runs on one thread (Note [Kernels on the pool])
    parallel_threshold = 1 << 20
    # the same for kernels of a graph that also calls BLAS (Note [OpenMP and BLAS threads])
    parallel_threshold_with_blas = 1 << 22
    # Measured (CPU time, load ~8): -O2 builds the MAML step's kernels in 1.17-1.23 s against
    # 1.23-1.25 s at -O3, and runs the inductor rows (gelu mix 34.0-34.5 / 35.3-37.1 ms,
    # softmax 2.9-3.1 / 3.3-3.4 ms, layer_norm 1.95-2.0 / 1.95-2.1 ms) and the MAML step
    # (8.3 / 8.3-8.5 ms) within noise of -O3; -O1 saves 25% of the build but softmax takes
    # 4.4 ms and layer_norm 3.5 ms. So -O3 stays: -O2 would save ~4%. The test suite builds
    # its op matrix at -O1 (the same values; its build is what matters there).
    opt_level = "-O3"
    # run generated NumPy code instead of C even where a compiler works (tests; the
    # automatic fallback without a compiler is the same code, Note [Fused NumPy code])
    numpy_fallback = bool(os.environ.get("NUMTORCH_INDUCTOR_NUMPY"))
    # bytes a kernel must store before it writes with non-temporal stores; None: a quarter
    # of the last-level cache (Note [Streaming stores], streaming.py)
    stream_threshold = None
    # small matrix products (dot_general) run as loops in the graph's library instead of
    # NumPy/BLAS externs (Note [Small products in C], gemm.py); False: all are externs
    small_products = True
    # larger 2-D products call NumPy's BLAS from the segment, not through NumPy (Note [BLAS
    # calls in segments], gemm.py); False: they are NumPy externs
    blas_in_segments = True
    # pointwise kernels reading an operand transposed run in tiles (Note [Tiled kernels],
    # tiling.py); False: row by row (tests compare the two)
    tiling = True
    wait_policy = "passive"      # OMP_WAIT_POLICY unless set (Note [OpenMP and BLAS threads])
    # GOMP_SPINCOUNT with it, unless either is set: a worker spins this many loops after a
    # region before it sleeps; 0, fully passive, by measurement (Note [A short spin],
    # _inductor/openmp.py); 10000 (about 0.1 ms) helps chains of kernels with no products
    spin_count = 0
