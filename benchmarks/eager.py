"""Eager workloads of issue #2: small ops, large ops, small autograd, an MLP SGD step.

Targets (checked in ``run.py``, never in unit tests): an op on a 10-element tensor within
2x PyTorch; ops on large tensors within 1.1x NumPy; a 3-op forward+backward within 1.5x
PyTorch; an SGD step of an MLP 784-512-256-10 at batch 128 within 1.2x PyTorch eager.
"""
from __future__ import annotations

import functools

import numpy as np

from .common import add, classification_batch, cross_entropy, has_nn, mlp_apply, mlp_params, \
    mlp_weights, module, numpy_mlp_backprop, sequential_mlp

SMALL = 10
LARGE = 10_000_000
MEDIUM = (1000, 1000)   # issue #13's size: where PyTorch's two threads pay off
MATMUL = 1024


@functools.lru_cache(maxsize=4)
def _data(n, seed=0):
    """Two float32 arrays of shape ``n`` (cached: every framework gets the same data)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32))


def _tensors(lib, n):
    m = module(lib)
    a, b = _data(n)
    if lib == "jax":
        return m.numpy.asarray(a), m.numpy.asarray(b)
    return m.tensor(a), m.tensor(b)


def _tensor_op(lib, n, op):
    x, y = _tensors(lib, n)
    return lambda: op(x, y)


def _numpy_op(n, op):
    a, b = _data(n)
    return lambda: op(a, b)


def _jax_op(n, op):
    import jax
    x, y = _tensors("jax", n)
    f = jax.jit(op)
    return lambda: f(x, y).block_until_ready()


def _register_op(name, group, n, op, np_op=None, jax_op=None):
    add(name, group, target=("torch", 2.0) if group == "small op" else ("numpy", 1.1),
        numtorch=lambda: _tensor_op("numtorch", n, op),
        numpy=lambda: _numpy_op(n, np_op or op),
        torch=lambda: _tensor_op("torch", n, op),
        jax=lambda: _jax_op(n, jax_op or op))


def _jnp(name):
    return lambda x, y: getattr(module("jax.numpy"), name)(x)


# -- an op on a 10-element tensor --------------------------------------------------------
_register_op("x + y (10)", "small op", SMALL, lambda x, y: x + y)
_register_op("x * y (10)", "small op", SMALL, lambda x, y: x * y)
_register_op("x.sin() (10)", "small op", SMALL, lambda x, y: x.sin(), lambda a, b: np.sin(a),
             _jnp("sin"))
_register_op("x.sum() (10)", "small op", SMALL, lambda x, y: x.sum())
_register_op("x[0] (10)", "small op", SMALL, lambda x, y: x[0])


# -- issue #13: everyday ops on small tensors not requiring grad, within 1.2x PyTorch ------
# (Note [Eager fast path], Note [Eager views]). numtorch and torch only: NumPy and JAX
# spell these differently, and the target is PyTorch's per-op overhead.

def _register_small(name, n, op, make=None):
    """A small-op row of issue #13; ``make(lib)`` builds the op's factory for ops that take
    the module (``torch.cat``), else ``op(x, y)``."""
    def factory(lib):
        x, y = _tensors(lib, n)
        m = module(lib)
        return (lambda: make(m, x, y)) if make else (lambda: op(x, y))
    add(name, "small op", target=("torch", 1.2),
        numtorch=lambda: factory("numtorch"), torch=lambda: factory("torch"))


_register_small("x.view(2, 5) (10)", SMALL, lambda x, y: x.view(2, 5))
_register_small("x.reshape(-1, 2) (10)", SMALL, lambda x, y: x.reshape(-1, 2))
_register_small("x.t() (2x5)", (2, 5), lambda x, y: x.t())
_register_small("x.unsqueeze(0) (10)", SMALL, lambda x, y: x.unsqueeze(0))
_register_small("cat([x, y]) (10)", SMALL, None, lambda m, x, y: m.cat([x, y]))
_register_small("stack([x, y]) (10)", SMALL, None, lambda m, x, y: m.stack([x, y]))
_register_small("x.clamp(-0.5, 0.5) (10)", SMALL, lambda x, y: x.clamp(-0.5, 0.5))
_register_small("x.softmax(-1) (10)", SMALL, lambda x, y: x.softmax(-1))
_register_small("x.sum(0) (2x5)", (2, 5), lambda x, y: x.sum(0))
_register_small("x.max() (10)", SMALL, lambda x, y: x.max())
_register_small("x.relu() (10)", SMALL, lambda x, y: x.relu())
_register_small("x.sigmoid() (10)", SMALL, lambda x, y: x.sigmoid())
_register_small("zeros(10)", SMALL, None, lambda m, x, y: m.zeros(10))

# -- ops on large tensors vs NumPy --------------------------------------------------------
_register_op("x + y (1e7)", "large op", LARGE, lambda x, y: x + y)
add("x + y (1000x1000)", "large op", target=("torch", 1.0),
    numtorch=lambda: _tensor_op("numtorch", MEDIUM, lambda x, y: x + y),
    numpy=lambda: _numpy_op(MEDIUM, lambda a, b: a + b),
    torch=lambda: _tensor_op("torch", MEDIUM, lambda x, y: x + y))
_register_op("x.exp() (1e7)", "large op", LARGE, lambda x, y: x.exp(), lambda a, b: np.exp(a),
             _jnp("exp"))
_register_op("x.sum() (1e7)", "large op", LARGE, lambda x, y: x.sum())
_register_op("matmul 1024x1024", "large op", MATMUL * MATMUL,
             lambda x, y: x.reshape(MATMUL, MATMUL) @ y.reshape(MATMUL, MATMUL))


# -- a 3-op forward + backward on small tensors ------------------------------------------

def _fwd_bwd(lib):
    m = module(lib)
    a, b = _data(SMALL)
    x, w = m.tensor(a), m.tensor(b, requires_grad=True)

    def step():
        w.grad = None
        ((x * w).sin().sum()).backward()
    return step


def _fwd_bwd_numpy():
    x, w = _data(SMALL)

    def step():
        s = x * w
        np.sin(s).sum()
        return np.cos(s) * x
    return step


def _fwd_bwd_jax():
    import jax
    import jax.numpy as jnp
    x, w = _tensors("jax", SMALL)
    g = jax.jit(jax.grad(lambda w: jnp.sin(x * w).sum()))
    return lambda: g(w).block_until_ready()


add("((x*w).sin().sum()).backward() (10)", "autograd", target=("torch", 1.5),
    numtorch=lambda: _fwd_bwd("numtorch"), numpy=_fwd_bwd_numpy,
    torch=lambda: _fwd_bwd("torch"), jax=_fwd_bwd_jax)


# -- an SGD step of an MLP 784-512-256-10 at batch 128 ----------------------------------

MLP = (784, 512, 256, 10)
BATCH = 128
LR = 0.01


def _mlp_step_nn(lib):
    m = module(lib)
    model = sequential_mlp(lib, MLP)
    opt = m.optim.SGD(model.parameters(), lr=LR)
    xb, yb = classification_batch(BATCH)
    x, y = m.tensor(xb), m.tensor(yb)
    F = m.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def _mlp_step_raw():
    """numtorch without nn/optim: the same step with raw tensors (the fallback row)."""
    import numtorch as torch
    named = mlp_params(MLP, lambda a: torch.tensor(a, requires_grad=True))
    params = list(named.items())
    xb, yb = classification_batch(BATCH)
    x, y = torch.tensor(xb), torch.tensor(yb)

    def step():
        for _, p in params:
            p.grad = None
        cross_entropy(torch, mlp_apply(named, x, torch.relu), y).backward()
        with torch.no_grad():
            for _, p in params:
                p.sub_(p.grad, alpha=LR)
    return step


def _mlp_step_numpy():
    weights = mlp_weights(MLP)
    x, y = classification_batch(BATCH)

    def step():
        _, inputs, deltas = numpy_mlp_backprop(weights, x, y)
        for (W, b), a, d in zip(weights, inputs, deltas):
            W -= (LR / BATCH) * (d.T @ a)
            b -= (LR / BATCH) * d.sum(0)
    return step


def _mlp_step_jax():
    import jax
    import jax.numpy as jnp
    params = mlp_params(MLP, jnp.asarray)
    xb, yb = classification_batch(BATCH)
    x, y = jnp.asarray(xb), jnp.asarray(yb)

    def loss(p):
        logp = jax.nn.log_softmax(mlp_apply(p, x, jax.nn.relu), -1)
        return -jnp.take_along_axis(logp, y[:, None], -1).mean()

    @jax.jit
    def update(p):
        g = jax.grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g)

    state = [params]

    def step():
        state[0] = update(state[0])
        jax.block_until_ready(state[0])
    return step


def _numtorch_mlp_step():
    return _mlp_step_nn("numtorch") if has_nn() else _mlp_step_raw()


add("MLP 784-512-256-10 SGD step (b=128)", "training", target=("torch", 1.2),
    note="" if has_nn() else "numtorch.nn missing: numtorch column uses raw tensors",
    numtorch=_numtorch_mlp_step, numpy=_mlp_step_numpy,
    torch=lambda: _mlp_step_nn("torch"), jax=_mlp_step_jax)


# -- the SGD update alone (opt.step() over the MLP's 535K parameters) --------------------
# The step's update part, apart from forward and backward: NumPy needs two passes per
# parameter (lr * g, then p -= that), where PyTorch's foreach kernel makes one.

def _sgd_update(lib):
    m = module(lib)
    model = sequential_mlp(lib, MLP)
    for p in model.parameters():
        p.grad = m.full_like(p, 1e-3)
    opt = m.optim.SGD(model.parameters(), lr=LR)
    return opt.step


def _sgd_update_numpy():
    weights = mlp_weights(MLP)
    grads = [(np.full_like(W, 1e-3), np.full_like(b, 1e-3)) for W, b in weights]
    lr = np.float32(LR)

    def step():
        for (W, b), (gW, gb) in zip(weights, grads):
            W -= lr * gW
            b -= lr * gb
    return step


add("SGD update, MLP 784-512-256-10 (535K params)", "training",
    note="opt.step() alone; NumPy: p -= lr * g per parameter",
    numtorch=lambda: _sgd_update("numtorch"), numpy=_sgd_update_numpy,
    torch=lambda: _sgd_update("torch"))
