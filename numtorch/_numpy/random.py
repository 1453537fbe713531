"""``numtorch._numpy.random``: NumPy's random API, with NumPy's own streams.

Note [NumPy's generator semantics]
The numbers come from NumPy's own bit generators, so a seeded program draws exactly the
numbers plain NumPy draws: ``random.seed(0); random.rand(3)`` here equals
``np.random.seed(0); np.random.rand(3)``, and ``default_rng(0).normal(size=3)`` equals
NumPy's. The legacy functions use a RandomState private to this module (seeding it does not
touch ``np.random``'s global state, and vice versa). Draws are constants to numtorch
(random numbers have no gradient); under compile they cannot be graph nodes, which is a
known limit for the compile path (it will treat them as a graph break or fallback).
"""
from __future__ import annotations

import numpy as np

from .._ops import creation as C
from ._ndarray import ndarray

_state = np.random.RandomState()


def _wrap(v):
    return ndarray(C.as_tensor(np.asarray(v)))


def _plain(v):
    """NumPy arguments may be our ndarrays (probabilities, bounds): NumPy needs arrays."""
    return np.asarray(v) if isinstance(v, ndarray) else v


def seed(seed=None):
    """Seed the module's legacy RandomState (``numpy.random.seed``)."""
    _state.seed(seed)


def get_state():
    return _state.get_state()


def set_state(state):
    _state.set_state(state)


def _legacy(name):
    def fn(*args, **kwargs):
        return _wrap(getattr(_state, name)(*[_plain(a) for a in args],
                                           **{k: _plain(v) for k, v in kwargs.items()}))
    fn.__name__ = name
    fn.__doc__ = f"``numpy.random.{name}`` on this module's RandomState (Note [NumPy's generator semantics])."
    return fn


for _n in ("rand", "randn", "random", "random_sample", "uniform", "normal", "randint",
           "choice", "permutation", "standard_normal", "exponential", "binomial", "poisson"):
    globals()[_n] = _legacy(_n)


def shuffle(x):
    """Shuffle ``x`` in place along its first axis (``numpy.random.shuffle``)."""
    perm = _state.permutation(len(x))
    x.tensor.copy_(x.tensor[C.as_tensor(perm)])


class Generator:
    """NumPy's ``Generator`` (``default_rng``) whose draws are ndarrays."""

    def __init__(self, bit_generator_or_seed=None):
        self._g = np.random.default_rng(bit_generator_or_seed)

    def __getattr__(self, name):
        method = getattr(self._g, name)
        if not callable(method):
            return method

        def fn(*args, **kwargs):
            return _wrap(method(*[_plain(a) for a in args],
                                **{k: _plain(v) for k, v in kwargs.items()}))
        return fn

    def permuted(self, x, *, axis=None):
        return _wrap(self._g.permuted(np.asarray(x), axis=axis))


def default_rng(seed=None):
    """A Generator seeded like ``numpy.random.default_rng(seed)``."""
    return Generator(seed)


__all__ = ["seed", "get_state", "set_state", "shuffle", "default_rng", "Generator",
           "rand", "randn", "random", "random_sample", "uniform", "normal", "randint",
           "choice", "permutation", "standard_normal", "exponential", "binomial", "poisson"]
