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
  function passed to ``compile`` (numtorch, inductor) and ``torch.compile`` (PyTorch).
- ``grad(compile(f))`` of an elementwise loss on 8 x 50K (the transform outside the
  compiled function: numtorch runs the region's partitioned forward and backward, Note
  [Compiled regions under grad] in numtorch/_aot/function.py), beside eager ``grad(f)``.

JAX's column (when jax is installed: ``pip install -e '.[bench]'``, CPU wheel) is
``jax.jit`` of the same computation written with jax's transforms, built here so that it
returns its results: ``check()`` (``--check``) runs each workload in numtorch and JAX on the
same data and compares them before anything is timed (tests/aot/test_bench_jax.py runs it
against numtorch's eager results). The MLP step's JAX column is one jitted function
``params -> (params - lr * grad, loss)`` (JAX has no in-place optimizer: the state is the
returned parameters).

What still runs uncompiled in the compiled step (``compile(step)``, PyTorch's
behaviour): zero_grad (a break), the autograd engine around the compiled backward node,
and the optimizer's hooks; the step's update is its own compiled graph. With
``compile(step, fullgraph=True)`` (the "fullgraph" row) forward, backward and update are
one graph (numtorch/_aot/fullgraph.py); only the frame's write-backs (``.grad``, the
parameters' and the state's new values) run as Python after it.

Compiling happens in the factories (warm numbers). ``python -m benchmarks.compile_train``
also measures the cold compile of each (the first call, in a fresh process with empty
kernel caches: ``NUMTORCH_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` in a new temporary
folder; for JAX the first call of ``jax.jit(f)``, tracing and XLA compilation, in a fresh
process: jax keeps no compilation cache on disk unless asked) and writes both to one JSON. Targets (checked in run.py): compiled <= 1.0x
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

import numpy as np

from .common import add, available, classification_batch, has_func, has_nn, mlp_apply, \
    mlp_params, module, sequential_mlp
from .eager import BATCH, LR, MLP, _mlp_step_numpy

GROUP = "compiled training"


def _mlp_step(lib):
    """(step function, its arguments): the FAQ's training step on the MLP."""
    return _mlp_model_step(lib)[1:]


def _mlp_model_step(lib):
    """(model, step, (x, y)): ``_mlp_step`` with the model whose parameters it trains."""
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
    return model, step, (x, y)


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


# ---------------------------------------------------------------------------------------
# JAX: the same computations with jax's transforms, under jax.jit. Each builder returns
# (jitted function, arguments) like the builders above, so check() can compare results.

def _jax_mlp_step():
    """One SGD step as a pure function: ``step(params, x, y) -> (new params, loss)``."""
    import jax
    import jax.numpy as jnp
    xb, yb = classification_batch(BATCH)

    def loss(p, x, y):
        logp = jax.nn.log_softmax(mlp_apply(p, x, jax.nn.relu), -1)
        return -jnp.take_along_axis(logp, y[:, None], -1).mean()

    @jax.jit
    def step(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g), value
    return step, (mlp_params(MLP, jnp.asarray), jnp.asarray(xb), jnp.asarray(yb))


def _jax_maml():
    """jit of the meta-gradient: jax.grad over jax.vmap (32 tasks) of 5 inner jax.grad steps."""
    import jax
    import jax.numpy as jnp
    from .transforms import MAML_MLP, _maml_data, _maml_meta_grad
    vmap = lambda f, in_dims: jax.vmap(f, in_axes=in_dims)  # noqa: E731 - torch's spelling
    meta = jax.jit(_maml_meta_grad(jax.grad, vmap, jax.nn.relu, jnp.mean))
    return meta, (mlp_params(MAML_MLP, jnp.asarray), *(jnp.asarray(a) for a in _maml_data()))


def _jax_psg():
    """jit(vmap(grad(loss of one example)))."""
    import jax
    import jax.numpy as jnp
    from .transforms import PSG_BATCH, PSG_MLP

    def loss(p, x, y):
        return -jax.nn.log_softmax(mlp_apply(p, x[None], jax.nn.relu), -1)[0, y]
    xb, yb = classification_batch(PSG_BATCH)
    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return f, (mlp_params(PSG_MLP, jnp.asarray), jnp.asarray(xb), jnp.asarray(yb))


def _jax_ensemble():
    """jit(vmap) of the MLP over the 10 models' stacked parameters."""
    import jax
    import jax.numpy as jnp
    from .transforms import ENSEMBLE_BATCH, _stacked
    f = jax.jit(jax.vmap(lambda p, x: mlp_apply(p, x, jax.nn.relu), in_axes=(0, None)))
    return f, (_stacked(jnp.asarray), jnp.asarray(classification_batch(ENSEMBLE_BATCH)[0]))


JAX = {"mlp_step": _jax_mlp_step, "maml": _jax_maml, "psg": _jax_psg,
       "ensemble": _jax_ensemble}


def _jax_factory(key):
    """The timed JAX callable: blocks until the result is computed (JAX dispatches
    asynchronously); the MLP step carries its parameters from call to call."""
    def factory():
        import jax
        fn, args = JAX[key]()
        if key == "mlp_step":
            state = [args[0]]

            def step():
                state[0], loss = fn(state[0], *args[1:])
                jax.block_until_ready(loss)
            return step
        return lambda: jax.block_until_ready(fn(*args))
    return factory


# ---------------------------------------------------------------------------------------
# Equal results: numtorch and JAX on the same data.

def _numpy_tree(out):
    """A result (tensor, array, dict/list/tuple of them) as a flat {path: ndarray}."""
    if isinstance(out, (dict, list, tuple)):
        items = sorted(out.items()) if isinstance(out, dict) else enumerate(out)
        return {f"{k}/{p}".rstrip("/"): v for k, o in items for p, v in _numpy_tree(o).items()}
    return {"": np.asarray(out.detach().numpy() if hasattr(out, "detach") else out)}


def results(lib, key, steps=3, backend=None):
    """{name: ndarray} of workload ``key`` in ``lib`` ('numtorch', 'torch' or 'jax'):
    the function's output, or for the MLP step the losses of ``steps`` steps and the
    parameters after them (named as mlp_params names them). ``backend``: compile the
    numtorch/torch function with it (None: run it eagerly)."""
    if lib == "jax":
        fn, args = JAX[key]()
        if key != "mlp_step":
            return _numpy_tree(fn(*args))
        params, losses = args[0], []
        for _ in range(steps):
            params, loss = fn(params, *args[1:])
            losses.append(loss)
        return {"loss": np.stack([np.asarray(v) for v in losses]), **_numpy_tree(params)}
    m = module(lib)
    if key == "mlp_step":
        model, fn, args = _mlp_model_step(lib)
    else:
        fn, args = WORKLOADS[key][1](lib)
    if backend is not None:
        fn = m.compile(fn, backend=backend)
    if key != "mlp_step":
        return _numpy_tree(fn(*args))
    losses = np.stack([fn(*args).item() for _ in range(steps)]).astype(np.float32)
    return {"loss": losses, **_numpy_tree(dict(model.named_parameters()))}


def check(keys=tuple(WORKLOADS), backend="inductor", rtol=2e-4, atol=2e-5):
    """Assert that JAX's and numtorch's (compiled with ``backend``, or eager with None)
    results agree for each workload in ``keys``; float32 rounding differs between the two
    (summation orders), hence the tolerances."""
    for key in keys:
        ours, theirs = results("numtorch", key, backend=backend), results("jax", key)
        if ours.keys() != theirs.keys():
            raise AssertionError(f"{key}: numtorch gives {sorted(ours)}, jax {sorted(theirs)}")
        if key == "mlp_step" and not np.all(np.diff(theirs["loss"]) < 0):
            # the steps must train, or equal results could be two runs updating nothing
            raise AssertionError(f"mlp_step: JAX's losses do not fall: {theirs['loss']}")
        for name in ours:
            np.testing.assert_allclose(ours[name], theirs[name], rtol=rtol, atol=atol,
                                       err_msg=f"workload {key!r}, result {name!r}")


# ---------------------------------------------------------------------------------------
# Registration

def _eager(build, lib):
    def factory():
        fn, args = build(lib)
        return lambda: fn(*args)
    return factory


def _compiled(build, lib, backend="inductor", fullgraph=False):
    def factory():
        fn, args = build(lib)
        compiled = module(lib).compile(fn, backend=backend, fullgraph=fullgraph)
        compiled(*args)
        compiled(*args)
        return lambda: compiled(*args)
    return factory


# grad of a compiled function (Note [Compiled regions under grad], numtorch/_aot/function.py):
# an elementwise loss on 8 x 50K float32, whose backward is sin and cos of the input.
GRAD_SHAPE = (8, 50_000)


def _grad_loss(z):
    return (z.sin() * z).sum()


def _grad_of_compiled(lib, compiled=True):
    """``func.grad(compile(f))`` (``compiled``) or ``func.grad(f)``, and its input."""
    def factory():
        m, func = module(lib), module(f"{lib}.func")
        x = m.tensor(np.random.default_rng(0).standard_normal(GRAD_SHAPE).astype(np.float32))
        g = func.grad(m.compile(_grad_loss) if compiled else _grad_loss)
        g(x)
        g(x)
        return lambda: g(x)
    return factory


def _jax_grad_of_jit():
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(np.random.default_rng(0).standard_normal(GRAD_SHAPE).astype(np.float32))
    g = jax.jit(jax.grad(lambda z: (jnp.sin(z) * z).sum()))
    jax.block_until_ready(g(x))
    return lambda: jax.block_until_ready(g(x))


def register():
    if not has_nn():
        return
    if has_func():
        add("grad(compile(f)), f = sum(sin(z) * z) on 8x50K", GROUP, target=("torch", 1.0),
            note="numtorch: func.grad(compile(f)), the partitioned forward and backward; "
                 "PyTorch: torch.func.grad(torch.compile(f)); JAX: jax.jit(jax.grad(f))",
            numtorch=_grad_of_compiled("numtorch"), torch=_grad_of_compiled("torch"),
            jax=_jax_grad_of_jit)
        add("  grad(f), f = sum(sin(z) * z) on 8x50K, eager", GROUP,
            numtorch=_grad_of_compiled("numtorch", False), torch=_grad_of_compiled("torch", False))
    for key, (name, build) in WORKLOADS.items():
        if key != "mlp_step" and not has_func():
            continue
        add(f"compiled {name}, inductor", GROUP, target=("torch", 1.0),
            note="numtorch: compile(f), inductor; PyTorch: torch.compile(f); JAX: jax.jit",
            numtorch=_compiled(build, "numtorch"), torch=_compiled(build, "torch"),
            jax=_jax_factory(key),
            numpy=_mlp_step_numpy if key == "mlp_step" else None)
        if key == "mlp_step":
            add(f"compiled {name}, inductor, fullgraph", GROUP,
                note="numtorch: compile(step, fullgraph=True), forward, backward and update "
                     "one graph; PyTorch: torch.compile(step) (its fullgraph=True rejects "
                     "the backward)",
                numtorch=_compiled(build, "numtorch", fullgraph=True),
                torch=_compiled(build, "torch"))
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
    if lib == "jax":
        import jax
        fn, args = JAX[key]()              # jax.jit(f): nothing is traced until the call
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
    else:
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
    p.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    p.add_argument("--check", action="store_true",
                   help="first check that numtorch (inductor) and JAX give equal results")
    p.add_argument("--cold-child", nargs=2, metavar=("LIB", "WORKLOAD"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.cold_child:
        _cold_child(*args.cold_child)
        return 0
    if args.check and available("jax"):
        check()
        print("numtorch (inductor) and jax.jit agree on", ", ".join(WORKLOADS), flush=True)
    from . import run
    run.main(["--filter", GROUP, "--json", args.json, "--timer", args.timer] + (["--quick"] if args.quick else []))
    cold = {}
    for key in WORKLOADS:
        for lib in ("numtorch", "torch", "jax"):
            if lib != "numtorch" and not available(lib):
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
        data["cold_compile_note"] = ("first call of compile(f) (default backend; JAX: "
                                     "jax.jit(f)) in a fresh process with empty kernel "
                                     "caches; seconds")
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
