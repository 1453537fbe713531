"""Compiled training (issue #9, AOT autograd) beside torch.compile and jax.jit.

Group ``compiled training``: each workload twice, eager and compiled, so that one run
(``python -m benchmarks --filter "compiled training"``) compares them.

- The MLP 784-512-256-10 SGD step at batch 128 (eager.py's workload) with the whole step
  compiled, as the torch.compile FAQ writes it: ``compile(step)`` where ``step`` does
  zero_grad, forward, ``loss.backward()`` and ``opt.step()``. numtorch's column is
  ``numtorch.compile(step)`` (forward and backward graphs through AOT autograd; zero_grad
  and the engine run eagerly at their breaks, and ``opt.step()`` at its break runs its
  compiled update, numtorch/_aot/optimizer.py); PyTorch's is ``torch.compile(step)``.
  The aot_eager row is the same pipeline without code generation.
- MAML (32 tasks x 5 inner steps), per-sample gradients (vmap(grad)) and the 10-model
  ensemble (vmap over stacked parameters): transforms.py's workloads, with the transformed
  function passed to ``compile`` (numtorch, inductor) and ``torch.compile`` (PyTorch);
  JAX's column is ``jax.jit`` of the same function in both rows.

What still runs uncompiled in the compiled step: zero_grad (a break), the autograd
engine around the compiled backward node, and the optimizer's hooks; the step's update
is its own compiled graph (forward, backward and update are not one graph).

Compiling happens in the factories (warm numbers). ``python -m benchmarks.compile_train``
also measures the cold compile of each (the first call, in a fresh process with empty
kernel caches: ``NUMTORCH_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` in a new temporary
folder) and writes both to one JSON. Targets (checked in run.py): compiled <= 1.0x
torch.compile's.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

from .common import add, available, classification_batch, has_func, has_nn, module, \
    mlp_params, sequential_mlp
from .eager import BATCH, LR, MLP, _mlp_step_jax, _mlp_step_numpy

GROUP = "compiled training"


def _mlp_step(lib):
    """(step function, its arguments): the FAQ's training step on the MLP."""
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
    return step, (x, y)


def _maml(lib):
    from .transforms import MAML_MLP, _maml_data, _maml_meta_grad
    m, func = module(lib), module(f"{lib}.func")
    params = mlp_params(MAML_MLP, m.tensor)
    data = [m.tensor(a) for a in _maml_data()]
    return _maml_meta_grad(func.grad, func.vmap, m.relu, m.mean), (params, *data)


def _psg(lib):
    from .transforms import PSG_BATCH, PSG_MLP, _sample_loss
    m, func = module(lib), module(f"{lib}.func")
    params, loss = _sample_loss(lib, PSG_MLP)
    xb, yb = classification_batch(PSG_BATCH)
    return func.vmap(func.grad(loss), in_dims=(None, 0, 0)), (params, m.tensor(xb), m.tensor(yb))


def _ensemble(lib):
    from .transforms import ENSEMBLE_BATCH, ENSEMBLE_MLP, ENSEMBLE_MODELS
    m, func = module(lib), module(f"{lib}.func")
    x = m.tensor(classification_batch(ENSEMBLE_BATCH)[0])
    models = [sequential_mlp(lib, ENSEMBLE_MLP, seed=i) for i in range(ENSEMBLE_MODELS)]
    params, buffers = func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    f = func.vmap(lambda p, b, x: func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))
    return f, (params, buffers, x)


WORKLOADS = {  # key: (row name, builder(lib) -> (fn, args))
    "mlp_step": ("MLP 784-512-256-10 SGD step (b=128)", _mlp_step),
    "maml": ("MAML 32 tasks x 5 steps MLP 1-40-40-1", _maml),
    "psg": ("per-sample grads MLP 784-512-256-10 (b=64)", _psg),
    "ensemble": ("ensemble 10 x MLP 784-128-10 (b=64)", _ensemble),
}


def _eager(build, lib):
    def factory():
        fn, args = build(lib)
        return lambda: fn(*args)
    return factory


def _compiled(build, lib, backend="inductor"):
    def factory():
        fn, args = build(lib)
        compiled = module(lib).compile(fn, backend=backend)
        compiled(*args)
        compiled(*args)
        return lambda: compiled(*args)
    return factory


def register():
    if not has_nn():
        return
    for key, (name, build) in WORKLOADS.items():
        if key != "mlp_step" and not has_func():
            continue
        jax = None
        if key == "mlp_step":
            jax = _mlp_step_jax
        else:
            from . import transforms
            jax = {"maml": transforms._maml_jax, "psg": transforms._psg_jax,
                   "ensemble": transforms._ensemble_jax}[key]
        add(f"compiled {name}, inductor", GROUP, target=("torch", 1.0),
            note="numtorch: compile(f), inductor; PyTorch: torch.compile(f); JAX: jit",
            numtorch=_compiled(build, "numtorch"), torch=_compiled(build, "torch"), jax=jax,
            numpy=_mlp_step_numpy if key == "mlp_step" else None)
        if key == "mlp_step":
            add(f"compiled {name}, aot_eager", GROUP, note="backend aot_eager in both frameworks",
                numtorch=_compiled(build, "numtorch", "aot_eager"),
                torch=_compiled(build, "torch", "aot_eager"))
        add(f"  {name}, eager", GROUP, numtorch=_eager(build, "numtorch"),
            torch=_eager(build, "torch"))


if __name__ != "__main__":    # run as a script, run.py's import of this module registers
    register()


# ---------------------------------------------------------------------------------------
# Cold compile: the first call of a fresh compile, in a fresh process with empty caches.

def cold_compile_seconds(lib, key, timeout=900):
    """Seconds of the first call of ``compile(fn)`` for workload ``key`` in framework
    ``lib``, measured in a fresh process whose kernel caches start empty."""
    with tempfile.TemporaryDirectory(prefix="numtorch-cold-") as d:
        env = dict(os.environ, NUMTORCH_CACHE_DIR=os.path.join(d, "nt"),
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "torch"))
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run([sys.executable, "-m", "benchmarks.compile_train", "--cold-child",
                              lib, key], capture_output=True, text=True, env=env, cwd=root,
                             timeout=timeout)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
        return float(out.stdout.strip().splitlines()[-1])


def _cold_child(lib, key):
    available(lib)                         # torch: 2 threads, as in the warm rows
    fn, args = WORKLOADS[key][1](lib)
    compiled = module(lib).compile(fn)
    t0 = time.perf_counter()
    compiled(*args)
    print(time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.compile_train",
                                description="compiled training rows and cold compile times")
    p.add_argument("--json", default="", help="write warm medians and cold compiles here")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cold-child", nargs=2, metavar=("LIB", "WORKLOAD"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.cold_child:
        _cold_child(*args.cold_child)
        return 0
    from . import run
    run.main(["--filter", GROUP, "--json", args.json] + (["--quick"] if args.quick else []))
    cold = {}
    for key in WORKLOADS:
        for lib in ("numtorch", "torch"):
            if lib == "torch" and not available("torch"):
                continue
            try:
                cold.setdefault(key, {})[lib] = round(cold_compile_seconds(lib, key), 2)
            except Exception as e:  # noqa: BLE001 - report, do not stop
                cold.setdefault(key, {})[lib] = f"{type(e).__name__}: {e}"[:200]
            print(f"cold compile {key} [{lib}]: {cold[key][lib]}", flush=True)
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
        data["cold_compile_s"] = cold
        data["cold_compile_note"] = ("first call of compile(f) (default backend) in a fresh "
                                     "process with empty kernel caches; seconds")
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
