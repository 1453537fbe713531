"""Peak memory of one meta-training step of PyTorch's ``maml_omniglot`` example (issue #13).

The workload is functorch's ``examples/maml_omniglot/maml-omniglot-transforms.py`` step on
synthetic data: a 4-conv-block network (Conv2d + BatchNorm2d + ReLU + MaxPool2d, 64
channels, 28x28 inputs, 5-way 5-shot with 15 queries), ``vmap`` over tasks of 5 inner
``grad`` steps through ``functional_call``, then ``.backward()`` of the summed query losses.

Each framework runs in a fresh subprocess (``python -m benchmarks.memory --child FW``), so
one cannot inflate the other's figure. The figure is the step's peak resident memory above
the process's resident memory just before the step (imports, the model and the data are
not counted): Linux's high-water mark is reset first (``/proc/self/clear_refs``) where the
kernel allows it, else the pre-step high-water mark must be below the step's peak. Run
alone: ``python -m benchmarks.memory [--tasks 4]``.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys

import numpy as np

from .common import add, module

TASKS, N_WAY, K_SPT, K_QRY, STEPS, IMG = 4, 5, 5, 15, 5, 28
NAME = f"maml_omniglot step, {TASKS} tasks: peak RSS above start (MB)"


def _data(tasks):
    rng = np.random.default_rng(0)
    x_spt = rng.standard_normal((tasks, N_WAY * K_SPT, 1, IMG, IMG)).astype(np.float32)
    x_qry = rng.standard_normal((tasks, N_WAY * K_QRY, 1, IMG, IMG)).astype(np.float32)
    y_spt = np.tile(np.repeat(np.arange(N_WAY), K_SPT), (tasks, 1)).astype(np.int64)
    y_qry = np.tile(np.repeat(np.arange(N_WAY), K_QRY), (tasks, 1)).astype(np.int64)
    return x_spt, y_spt, x_qry, y_qry


def make_step(lib, tasks=TASKS):
    """One meta-training step of the functorch example, for ``lib`` 'torch' or 'numtorch'."""
    m, func = module(lib), module(f"{lib}.func")
    nn, F = m.nn, m.nn.functional
    m.manual_seed(0)

    def block(c_in):
        return [nn.Conv2d(c_in, 64, 3), nn.BatchNorm2d(64, momentum=1.0, affine=True,
                                                        track_running_stats=False),
                nn.ReLU(), nn.MaxPool2d(2, 2)]

    net = nn.Sequential(*block(1), *block(64), *block(64), nn.Flatten(), nn.Linear(64, N_WAY))
    params = dict(net.named_parameters())
    buffers = dict(net.named_buffers())
    data = [m.tensor(a) for a in _data(tasks)]

    def compute_loss(new_params, x, y):
        return F.cross_entropy(func.functional_call(net, (new_params, buffers), (x,)), y)

    def loss_for_task(x_spt, y_spt, x_qry, y_qry):
        new_params = params
        for _ in range(STEPS):
            grads = func.grad(compute_loss)(new_params, x_spt, y_spt)
            new_params = {k: new_params[k] - 0.1 * g for k, g in grads.items()}
        return compute_loss(new_params, x_qry, y_qry)

    def step():
        for p in params.values():
            p.grad = None
        func.vmap(loss_for_task)(*data).sum().backward()
    return step


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _hwm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _child(lib, tasks):
    if lib == "torch":
        module("torch").set_num_threads(2)
    step = make_step(lib, tasks)
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")   # reset the high-water mark to the current RSS
        reset = True
    except OSError:
        reset = False
    start, hwm_before = _rss_bytes(), _hwm_bytes()
    step()
    peak = _hwm_bytes()
    if not reset and hwm_before >= peak:
        raise RuntimeError("cannot reset the RSS high-water mark and setup peaked higher")
    print(json.dumps({"start": start, "peak": peak, "step": peak - start}))


def peak_step_bytes(lib, tasks=TASKS):
    """Peak RSS growth of one step, measured in a fresh interpreter (bytes)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    r = subprocess.run([sys.executable, "-m", "benchmarks.memory", "--child", lib,
                        "--tasks", str(tasks)], capture_output=True, text=True, env=env,
                       timeout=1200)
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or ["child failed"])[-1])
    return json.loads(r.stdout.strip().splitlines()[-1])["step"]


def register():
    """The memory row (run.py reports its value in MB, not as a time)."""
    add(NAME, "memory", target=("torch", 1.2),
        numtorch=lambda: ("peak_rss", "numtorch"), torch=lambda: ("peak_rss", "torch"))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__.split("\n")[0])
    p.add_argument("--tasks", type=int, default=TASKS)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return _child(args.child, args.tasks)
    for lib in ("numtorch", "torch"):
        try:
            print(f"{lib:9s} {peak_step_bytes(lib, args.tasks) / 2**20:8.1f} MB")
        except Exception as e:  # noqa: BLE001 - report, don't stop
            print(f"{lib:9s} failed: {e}")


if __name__ == "__main__":
    main()
