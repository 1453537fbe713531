"""MAML on sine-wave regression: a vmap over tasks of an inner loop of grad steps.

Run: python examples/maml.py
"""
import math
import time

import numtorch as torch
from numtorch.func import grad, grad_and_value, vmap


def init_params(hidden=40):
    def layer(n_in, n_out):
        bound = 1 / math.sqrt(n_in)
        return (torch.rand(n_in, n_out) * 2 - 1) * bound, (torch.rand(n_out) * 2 - 1) * bound
    w1, b1 = layer(1, hidden)
    w2, b2 = layer(hidden, hidden)
    w3, b3 = layer(hidden, 1)
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3}


def net(p, x):
    h = (x @ p["w1"] + p["b1"]).relu()
    h = (h @ p["w2"] + p["b2"]).relu()
    return h @ p["w3"] + p["b3"]


def mse(p, x, y):
    return ((net(p, x) - y) ** 2).mean()


def inner_adapt(p, x, y, steps=5, lr=0.01):
    for _ in range(steps):
        g = grad(mse)(p, x, y)
        p = {k: p[k] - lr * g[k] for k in p}
    return p


def task_loss(p, xs, ys, xq, yq):
    return mse(inner_adapt(p, xs, ys), xq, yq)


def sample_tasks(n_tasks, k=10):
    amp = torch.rand(n_tasks, 1, 1) * 4.9 + 0.1
    phase = torch.rand(n_tasks, 1, 1) * math.pi
    xs = torch.rand(n_tasks, k, 1) * 10 - 5
    xq = torch.rand(n_tasks, k, 1) * 10 - 5
    return xs, amp * (xs + phase).sin(), xq, amp * (xq + phase).sin()


def main(meta_steps=60, n_tasks=32):
    torch.manual_seed(0)
    params = init_params()
    batched = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))
    meta_lr = 1e-3
    m = {k: torch.zeros_like(v) for k, v in params.items()}
    v2 = {k: torch.zeros_like(v) for k, v in params.items()}
    first = None
    start = time.perf_counter()
    for step in range(1, meta_steps + 1):
        tasks = sample_tasks(n_tasks)
        g, loss = grad_and_value(lambda p: batched(p, *tasks).mean())(params)
        loss = loss.item()
        first = loss if first is None else first
        for k in params:   # Adam on the meta-parameters
            m[k] = 0.9 * m[k] + 0.1 * g[k]
            v2[k] = 0.999 * v2[k] + 0.001 * g[k] ** 2
            mh, vh = m[k] / (1 - 0.9 ** step), v2[k] / (1 - 0.999 ** step)
            params[k] = params[k] - meta_lr * mh / (vh.sqrt() + 1e-8)
        if step % 20 == 0:
            print(f"meta step {step:3d}: post-adaptation query loss {loss:.3f}")
    print(f"{meta_steps} meta steps x {n_tasks} tasks x 5 inner steps in "
          f"{time.perf_counter() - start:.2f}s; loss {first:.3f} -> {loss:.3f}")
    # check: the batched meta-gradient equals a Python loop over tasks
    tasks = [t[:4] for t in sample_tasks(4)]
    gb = grad(lambda p: batched(p, *tasks).mean())(params)
    gl = [grad(task_loss)(params, *(t[i] for t in tasks)) for i in range(4)]
    err = max((gb[k] - sum(g[k] for g in gl) / 4).abs().max().item() for k in params)
    print("max |vmap meta-grad - loop meta-grad| =", err)
    assert err < 1e-4
    print("ok")


if __name__ == "__main__":
    main()
