"""Capture benchmarks (issue 7): cache-hit overhead, cold capture time, toy_example.

``python -m benchmarks.compile_capture [--rounds N] [--json PATH]``. Medians of repeated
timings (and the median over ``rounds`` runs of the whole set), numtorch beside
torch.compile when PyTorch is installed. Targets: a cache hit costs ≤ 5 µs above calling
the graph directly (5 guarded inputs); capturing a 50-op function ≤ 50 ms cold (backend
excluded); toy_example compiled ≤ 1.5× eager. Also measured: the hit overhead of a
compiled nn.Sequential (library modules run natively, their parameters guarded), of a
training BatchNorm (its running statistics written back after the graph), and a
whole call of a compiled 10-element function with the default backend (issue 8's "per
call" as a user sees it: guards, the AOT check, the kernels, the output Tensor).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# wall: elapsed time; cpu: this process's CPU time, the steadier measure of Python-side
# overhead on a machine that other work shares (every workload here runs on one thread).
_clock = [time.perf_counter]


def _median_call(fn, n=2000, repeats=7):
    fn()
    clock = _clock[0]
    out = []
    for _ in range(repeats):
        t = clock()
        for _ in range(n):
            fn()
        out.append((clock() - t) / n)
    return statistics.median(out)


def five_inputs(torch):
    def f(a, b, c, d, e):
        return a + b + c + d + e
    return f


def fifty_ops(torch):
    def f(x):
        for _ in range(25):
            x = torch.sin(x) * 1.01
        return x
    return f


def toy_example_fn(torch):
    def toy_example(a, b):
        x = a / (torch.abs(a) + 1)
        print("woo")
        if b.sum() < 0:
            b = b * -1
        return x * b
    return toy_example


HIT = "cache hit overhead (µs, 5 inputs)"
MODULE_HIT = "cache hit overhead (µs, nn.Sequential 3 layers, no_grad)"
BN_HIT = "cache hit overhead (µs, Linear+BatchNorm1d training, 3 buffers written back)"
COLD = "cold capture, 50 ops (ms)"
TOY = "toy_example compiled/eager (ratio)"
SMALL = "call of compiled (x*2+1).sin(), 10 elements, default backend (µs)"
TARGETS = {HIT: 5.0, COLD: 50.0, TOY: 1.5, SMALL: 5.0}


def _hit_overhead(torch, f, args):
    """Seconds a cache hit of ``compile(f)`` costs above calling its one graph."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append((gm, list(example_inputs)))
        return gm.forward
    torch._dynamo.reset()
    cf = torch.compile(f, backend=keep)
    cf(*args)
    assert len(graphs) == 1, "one graph expected"
    gm, inputs = graphs[0]      # the graph's own inputs (parameters too, where lifted)
    hit = _median_call(lambda: cf(*args))
    direct = _median_call(lambda: gm(*inputs))
    return hit - direct


def bench(torch, name):
    import numpy as np
    dyn = torch._dynamo
    rows = {}
    args = [torch.tensor(np.ones(8, np.float32)) for _ in range(5)]
    rows[HIT] = 1e6 * _hit_overhead(torch, five_inputs(torch), args)

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        rows[MODULE_HIT] = 1e6 * _hit_overhead(torch, mlp, [torch.randn(2, 8)])

    torch.manual_seed(0)
    bn = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16))
    with torch.no_grad():
        rows[BN_HIT] = 1e6 * _hit_overhead(torch, bn, [torch.randn(4, 8)])

    x = torch.tensor(np.ones(16, np.float32))
    colds = []
    for _ in range(5):
        dyn.reset()
        f = torch.compile(fifty_ops(torch), backend=lambda gm, ex: gm.forward)
        t = _clock[0]()
        f(x)
        colds.append(_clock[0]() - t)
    rows[COLD] = 1e3 * statistics.median(colds)

    a, b = torch.tensor(np.ones(10, np.float32)), torch.tensor(-np.ones(10, np.float32))
    toy = toy_example_fn(torch)
    dyn.reset()
    ct = torch.compile(toy, backend="eager")
    with contextlib.redirect_stdout(io.StringIO()):
        ct(a, b)
        eager_t = _median_call(lambda: toy(a, b), n=300)
        comp_t = _median_call(lambda: ct(a, b), n=300)
    rows[TOY] = comp_t / eager_t

    dyn.reset()
    small = torch.compile(lambda x: (x * 2 + 1).sin())
    x10 = torch.tensor(np.ones(10, np.float32))
    small(x10)
    rows[SMALL] = 1e6 * _median_call(lambda: small(x10))
    dyn.reset()
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=1, help="runs of the whole set (median)")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument("--no-torch", action="store_true", help="numtorch only")
    p.add_argument("--timer", choices=("wall", "cpu"), default="wall",
                   help="cpu: process CPU time (steadier under load)")
    args = p.parse_args(argv)
    _clock[0] = time.process_time if args.timer == "cpu" else time.perf_counter
    from .run import machine_info
    import numtorch
    benches = [("numtorch", numtorch)]
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(2)
            benches.append(("torch", torch))
        except ImportError:
            pass
    load_before = os.getloadavg()[0]
    runs = {name: [] for name, _ in benches}
    for _ in range(args.rounds):
        for name, mod in benches:
            runs[name].append(bench(mod, name))
    results = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
               for name, rs in runs.items()}
    keys = list(results["numtorch"])
    print(f"{'measure':68s}" + "".join(f"{k:>10s}" for k in results) + "    target")
    for k in keys:
        print(f"{k:68s}" + "".join(f"{results[f][k]:10.2f}" for f in results) +
              (f"  <= {TARGETS[k]:g}" if k in TARGETS else ""))
    info = machine_info()
    print(f"load average {load_before:.1f} before, {info['load_average_1min']:.1f} after")
    if args.json:
        rows = [{"name": k, "group": "compile capture", "target": TARGETS.get(k),
                 "values": {f: results[f][k] for f in results},
                 "rounds": {f: [r[k] for r in runs[f]] for f in runs}} for k in keys]
        with open(args.json, "w") as fh:
            json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "stat": f"median of {args.rounds} rounds of per-call medians",
                       "timer": args.timer,
                       "machine": info, "load_average_before": load_before,
                       "results": rows}, fh, indent=1)
        print(f"results written to {args.json}")


if __name__ == "__main__":
    if __package__ in (None, ""):
        __package__ = "benchmarks"
    main()
