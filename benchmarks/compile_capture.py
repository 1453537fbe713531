"""Capture benchmarks (issue 7): cache-hit overhead, cold capture time, toy_example.

``python -m benchmarks.compile_capture``. Medians of repeated timings, numtorch beside
torch.compile (backend="eager") when PyTorch is installed. Targets: a cache hit costs
≤ 5 µs above calling the graph directly (5 guarded inputs); capturing a 50-op function
≤ 50 ms cold (backend excluded); toy_example compiled ≤ 1.5× eager.
"""
from __future__ import annotations

import contextlib
import io
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _median_call(fn, n=2000, repeats=7):
    fn()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n)
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


def bench(torch, name):
    import numpy as np
    dyn = torch._dynamo
    rows = {}
    args = [torch.tensor(np.ones(8, np.float32)) for _ in range(5)]
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    dyn.reset()
    cf = torch.compile(five_inputs(torch), backend=keep)
    cf(*args)
    gm = graphs[-1]
    hit = _median_call(lambda: cf(*args))
    direct = _median_call(lambda: gm(*args))
    rows["cache hit overhead (µs, 5 inputs)"] = 1e6 * (hit - direct)

    x = torch.tensor(np.ones(16, np.float32))
    colds = []
    for _ in range(5):
        dyn.reset()
        f = torch.compile(fifty_ops(torch), backend=lambda gm, ex: gm.forward)
        t = time.perf_counter()
        f(x)
        colds.append(time.perf_counter() - t)
    rows["cold capture, 50 ops (ms)"] = 1e3 * statistics.median(colds)

    a, b = torch.tensor(np.ones(10, np.float32)), torch.tensor(-np.ones(10, np.float32))
    toy = toy_example_fn(torch)
    dyn.reset()
    ct = torch.compile(toy, backend="eager")
    with contextlib.redirect_stdout(io.StringIO()):
        ct(a, b)
        eager_t = _median_call(lambda: toy(a, b), n=300)
        comp_t = _median_call(lambda: ct(a, b), n=300)
    rows["toy_example compiled/eager (ratio)"] = comp_t / eager_t
    dyn.reset()
    return rows


def main():
    import numtorch
    results = {"numtorch": bench(numtorch, "numtorch")}
    try:
        import torch
        torch.set_num_threads(2)
        results["torch"] = bench(torch, "torch")
    except ImportError:
        pass
    keys = list(results["numtorch"])
    print(f"{'measure':40s}" + "".join(f"{k:>12s}" for k in results))
    for k in keys:
        print(f"{k:40s}" + "".join(f"{results[f][k]:12.2f}" for f in results))


if __name__ == "__main__":
    main()
