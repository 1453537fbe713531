"""The JAX column of benchmarks/compile_train.py computes what numtorch's does.

The compiled-training rows time ``jax.jit`` implementations written separately with jax's
own transforms (jax.grad, jax.vmap); a speed comparison only means something if they
compute the same thing. Oracle: numtorch's eager results on the same data (that compiled
numtorch equals eager is pinned by the other tests in tests/aot); ``check`` also requires
the MLP steps to lower the loss. jax is an optional benchmark dependency (the ``bench``
extra), so this skips without it. The check runs in a child process: JAX starts threads
at import, and the test process forks later (DataLoader workers), which JAX warns can
deadlock.
"""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_column_equals_numtorch():
    code = ("from benchmarks import compile_train as c\n"
            "c.check(backend=None)\n"
            "print('checked', *c.WORKLOADS)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["checked", "mlp_step", "maml", "psg", "ensemble"]
