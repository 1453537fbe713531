"""Compiled training (issue #9, AOT autograd) beside torch.compile and jax.jit.

The MLP 784-512-256-10 SGD step at batch 128 (eager.py's workload) with the whole step
compiled, as the torch.compile FAQ writes it: ``compile(step)`` where ``step`` does
zero_grad, forward, ``loss.backward()`` and ``opt.step()``. numtorch's column is
``numtorch.compile(step)`` with the inductor backend (forward and backward graphs as C
kernels through AOT autograd; zero_grad, the engine and the optimizer step run eagerly
around them); PyTorch's is ``torch.compile(step)`` (compiled in the factory, so compile
time is not counted); JAX's is the jitted update. The aot_eager row is the same pipeline
without code generation. Target (checked in run.py): compiled step <= 1.0x torch.compile's.
"""
from __future__ import annotations

from .common import add, classification_batch, has_nn, module, sequential_mlp
from .eager import BATCH, LR, MLP, _mlp_step_jax, _mlp_step_numpy

STEP_NAME = "compiled MLP 784-512-256-10 SGD step (b=128), inductor"
AOT_EAGER_NAME = "compiled MLP 784-512-256-10 SGD step (b=128), aot_eager"


def _compiled_step(lib, backend):
    def factory():
        m = module(lib)
        model = sequential_mlp(lib, MLP)
        opt = m.optim.SGD(model.parameters(), lr=LR)
        xb, yb = classification_batch(BATCH)
        x, y = m.tensor(xb), m.tensor(yb)
        F = m.nn.functional

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        compiled = m.compile(step, backend=backend)
        compiled(x, y)
        compiled(x, y)
        return lambda: compiled(x, y)
    return factory


if has_nn():
    add(STEP_NAME, "compile", target=("torch", 1.0),
        note="numtorch: compile(step), inductor; PyTorch: torch.compile(step)",
        numtorch=_compiled_step("numtorch", "inductor"), numpy=_mlp_step_numpy,
        torch=_compiled_step("torch", "inductor"), jax=_mlp_step_jax)
    add(AOT_EAGER_NAME, "compile", note="backend aot_eager in both frameworks",
        numtorch=_compiled_step("numtorch", "aot_eager"),
        torch=_compiled_step("torch", "aot_eager"))
