"""The JAX column of benchmarks/compile_train.py computes what numtorch's does.

The compiled-training rows time ``jax.jit`` implementations written separately with jax's
own transforms (jax.grad, jax.vmap); a speed comparison only means something if they
compute the same thing. Oracle: numtorch's eager results on the same data (that compiled
numtorch equals eager is pinned by the other tests in tests/aot). jax is an optional
benchmark dependency (the ``bench`` extra), so these tests skip without it.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax")

from benchmarks import compile_train  # noqa: E402  (after the skip: it imports numtorch.nn)


@pytest.mark.parametrize("key", sorted(compile_train.WORKLOADS))
def test_jax_column_equals_numtorch(key):
    compile_train.check((key,), backend=None)


def test_mlp_step_trains_the_parameters():
    """The MLP row's results are the losses of 3 SGD steps and the parameters after them:
    the loss must fall and every parameter must have moved, or the check above would
    compare two runs that never updated anything."""
    ours = compile_train.results("jax", "mlp_step")
    fresh = compile_train.JAX["mlp_step"]()[1][0]
    assert np.all(np.diff(ours["loss"]) < 0)
    for name, value in fresh.items():
        assert not np.allclose(ours[name], np.asarray(value)), name
