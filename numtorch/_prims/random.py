"""Random primitives: draws from an explicit generator state.

Note [Random primitives]
A draw takes no tensor arguments: its params are the shape, dtype and the `Generator`
whose state it advances. `bind` sends argument-less primitives to the top of the
interpreter stack, so vmap sees every draw and applies its `randomness` policy: 'error'
raises, 'same' draws once for all examples, 'different' calls the `batch` rule below,
which draws a leading batch dimension in one call (no loop). Draws are not
differentiable, so they have no jvp/vjp (nondiff).
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive


class Generator:
    """``torch.Generator``: an explicit random state (NumPy's PCG64 underneath)."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721
        self._np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        """Sets the seed for generating random numbers; returns the generator."""
        self._seed = int(seed)
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self._np.bit_generator.state

    def set_state(self, state):
        self._np.bit_generator.state = state
        return self

    def __hash__(self):
        return id(self)


default_generator = Generator()


def _draw(fn):
    def impl(*, shape, dtype, generator, **params):
        g = (generator or default_generator)._np
        return np.asarray(fn(g, tuple(shape), np.dtype(dtype), **params))
    return impl


def _uniform(g, shape, dtype, low=0.0, high=1.0):
    if dtype in (np.float32, np.float64):
        u = g.random(shape, dtype=dtype)
    else:
        u = g.random(shape).astype(dtype)
    return u if (low, high) == (0.0, 1.0) else (u * (high - low) + low).astype(dtype)


def _normal(g, shape, dtype):
    if dtype in (np.float32, np.float64):
        return g.standard_normal(shape, dtype=dtype)
    return g.standard_normal(shape).astype(dtype)


def _randint(g, shape, dtype, low, high):
    return g.integers(low, high, size=shape).astype(dtype)


def _random_prim(name, fn):
    p = Primitive(name, impl=_draw(fn), nondiff=True,
                  shape=lambda *, shape, dtype, generator, **_: (tuple(shape), np.dtype(dtype)))
    p.batch = lambda values, bdims, *, batch_size, shape, **params: (
        p.bind(shape=(batch_size,) + tuple(shape), **params), 0)
    return p


uniform = _random_prim("random_uniform", _uniform)
normal = _random_prim("random_normal", _normal)
randint = _random_prim("random_randint", _randint)
permutation = Primitive(
    "random_permutation", nondiff=True,
    impl=lambda *, n, shape, dtype, generator: np.asarray(
        (generator or default_generator)._np.permuted(
            np.broadcast_to(np.arange(n, dtype=dtype), tuple(shape)), axis=-1)),
    shape=lambda *, n, shape, dtype, generator: (tuple(shape), np.dtype(dtype)))
permutation.batch = lambda values, bdims, *, batch_size, shape, **params: (
    permutation.bind(shape=(batch_size,) + tuple(shape), **params), 0)

# Lower rules (Note [Lower rules], _lower.py): draws come from the generator's state, as
# in eager, so compiled code reproduces eager's numbers.
from ._lower import extern  # noqa: E402

for _p in (uniform, normal, randint, permutation):
    _p.lower = extern("random draws: the generator's NumPy stream")
