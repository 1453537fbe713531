"""What every benchmark workload shares: the registry, the frameworks, the MLP weights.

A workload is a name, a group, and one *factory* per framework. A factory does the setup
(allocations, model construction, imports) and returns the zero-argument callable that is
timed, so setup never counts. A framework that is not installed is skipped, not failed.
This module must not time anything: that is ``run.py``'s job.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import sys

import numpy as np

# `python benchmarks/run.py` runs from a checkout: make `import numtorch` find it.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

FRAMEWORKS = ("numtorch", "numpy", "torch", "jax", "numba")
LABELS = {"numtorch": "numtorch", "numpy": "NumPy", "torch": "PyTorch", "jax": "JAX (jit)",
          "numba": "Numba (njit)"}


@dataclasses.dataclass
class Workload:
    """One row of the table: ``factories[framework]() -> callable`` to time."""

    name: str
    group: str
    factories: dict
    note: str = ""
    target: tuple | None = None  # (framework, max ratio numtorch/framework)


WORKLOADS: list[Workload] = []


def add(name, group, note="", target=None, **factories):
    """Register a workload; keyword arguments are per-framework factories (None: skip).

    Names are unique: isolated runs (run.py) merge the cells of separate processes by name."""
    if any(w.name == name for w in WORKLOADS):
        raise ValueError(f"add: a workload named {name!r} is already registered")
    WORKLOADS.append(Workload(name, group, {k: v for k, v in factories.items() if v},
                              note, target))


_available: dict = {}
# intra-op threads of torch and numtorch (kernels and BLAS) in a run: ``--threads``, 2 unless
# given, so both frameworks get the same budget whatever numtorch's default policy would
# choose from the load (Note [OpenMP and BLAS threads], numtorch/_inductor/build.py)
THREADS = [2]


def available(framework) -> bool:
    """Whether ``framework`` can be imported (torch and numtorch get ``THREADS`` threads)."""
    if framework not in _available:
        try:
            mod = importlib.import_module(framework)
            if framework in ("torch", "numtorch"):
                mod.set_num_threads(THREADS[0])
            _available[framework] = True
        except Exception:  # noqa: BLE001 - any import failure means "not installed"
            _available[framework] = False
    return _available[framework]


def has_func() -> bool:
    """Whether numtorch.func (the transforms of issue #3) exists yet."""
    try:
        import numtorch.func as f
        return all(hasattr(f, n) for n in ("vmap", "grad", "jacrev", "hessian"))
    except ImportError:
        return False


def has_nn() -> bool:
    """Whether numtorch.nn / optim provide what the training workloads use."""
    try:
        import numtorch.nn as nn
        import numtorch.nn.functional as F
        import numtorch.optim as optim
        return all(hasattr(nn, n) for n in ("Sequential", "Linear", "ReLU")) and \
            hasattr(F, "cross_entropy") and hasattr(optim, "SGD")
    except ImportError:
        return False


# ---------------------------------------------------------------------------------------
# Shared data: the same float32 weights and inputs for every framework.

def mlp_weights(sizes, seed=0):
    """[(W, b), ...] float32 ndarrays for an MLP with layer ``sizes``; W is (out, in) like nn.Linear."""
    rng = np.random.default_rng(seed)
    out = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(n_in)
        out.append((rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
                    rng.uniform(-bound, bound, (n_out,)).astype(np.float32)))
    return out


def classification_batch(batch, n_in=784, n_classes=10, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((batch, n_in)).astype(np.float32),
            rng.integers(0, n_classes, batch).astype(np.int64))


def sequential_mlp(lib, sizes, activation="ReLU", seed=0):
    """``nn.Sequential`` of Linear + activation of framework ``lib`` ('torch' or 'numtorch'),
    with the weights of ``mlp_weights`` (numtorch needs numtorch.nn)."""
    lib = importlib.import_module(lib)
    nn = lib.nn
    layers = []
    for i, (W, b) in enumerate(mlp_weights(sizes, seed)):
        lin = nn.Linear(W.shape[1], W.shape[0])
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(W))
            lin.bias.copy_(lib.tensor(b))
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(getattr(nn, activation)())
    return nn.Sequential(*layers)


def mlp_params(sizes, convert=np.asarray, seed=0):
    """{'0.weight': W, '0.bias': b, '2.weight': ...}, named like an nn.Sequential's state;
    ``convert`` turns each ndarray into the framework's array (e.g. ``torch.tensor``)."""
    params = {}
    for i, (W, b) in enumerate(mlp_weights(sizes, seed)):
        params[f"{2 * i}.weight"], params[f"{2 * i}.bias"] = convert(W), convert(b)
    return params


def mlp_apply(params, x, act):
    """Apply ``mlp_params`` by hand, ``act`` between layers (works for any array library)."""
    n = len(params) // 2
    for i in range(n):
        x = x @ params[f"{2 * i}.weight"].T + params[f"{2 * i}.bias"]
        if i < n - 1:
            x = act(x)
    return x


def numpy_mlp_backprop(weights, x, y):
    """Hand-written NumPy forward and backward of a 3-layer ReLU MLP with softmax
    cross-entropy: (mean loss, layer inputs (x, a1, a2), per-example deltas (d1, d2, dz))."""
    (W1, b1), (W2, b2), (W3, b3) = weights
    h1 = x @ W1.T + b1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ W2.T + b2
    a2 = np.maximum(h2, 0)
    z = a2 @ W3.T + b3
    e = np.exp(z - z.max(1, keepdims=True))
    dz = e / e.sum(1, keepdims=True)
    rows = np.arange(len(y))
    loss = -np.log(dz[rows, y]).mean()
    dz[rows, y] -= 1
    d2 = (dz @ W3) * (h2 > 0)
    d1 = (d2 @ W2) * (h1 > 0)
    return loss, (x, a1, a2), (d1, d2, dz)


def cross_entropy(lib, logits, y):
    """Mean cross-entropy from logits and class indices, with ops torch and numtorch share."""
    logp = lib.log_softmax(logits, -1)
    return -lib.gather(logp, -1, y.unsqueeze(-1)).mean()


def module(name):
    return importlib.import_module(name)
