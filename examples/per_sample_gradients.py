"""Per-sample gradients: vmap(grad(loss)) over a batch, with functional_call on an nn model.

Checked against a Python loop of .backward(), one example at a time.
Run: python examples/per_sample_gradients.py
"""
import time

import numtorch as torch
import numtorch.nn as nn
import numtorch.nn.functional as F
from numtorch.func import functional_call, grad, vmap


def main(batch=64):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    data = torch.randn(batch, 784)
    targets = torch.randint(0, 10, (batch,))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of_one(params, x, y):
        logits = functional_call(model, params, (x.unsqueeze(0),))
        return F.cross_entropy(logits, y.unsqueeze(0))

    per_sample = vmap(grad(loss_of_one), in_dims=(None, 0, 0))
    grads = per_sample(params, data, targets)   # warm-up
    times = []
    for _ in range(5):
        start = time.perf_counter()
        grads = per_sample(params, data, targets)
        times.append(time.perf_counter() - start)
    t_vmap = sorted(times)[2]
    print({k: tuple(g.shape) for k, g in grads.items()})

    start = time.perf_counter()
    loop = {k: [] for k in params}
    for i in range(batch):
        model.zero_grad()
        F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        for k, p in model.named_parameters():
            loop[k].append(p.grad.clone())
    t_loop = time.perf_counter() - start
    err = max((grads[k] - torch.stack(loop[k])).abs().max().item() for k in params)
    print(f"vmap(grad): {t_vmap * 1e3:.1f} ms (median of 5)   loop of .backward(): {t_loop * 1e3:.1f} ms   "
          f"speed-up {t_loop / t_vmap:.1f}x")
    print("max |vmap - loop| =", err)
    assert err < 1e-5
    print("ok")


if __name__ == "__main__":
    main()
