"""``python -m numtorch``: a short tour that runs in a few seconds and checks itself.

Tensors and broadcasting, autograd against a closed form, a small MLP trained with
``nn`` + ``optim``, per-sample gradients with ``torch.func``, and NumPy code made
differentiable. Every check prints ``ok`` or ``FAILED``; the exit status is the number
of failed checks, so the tour doubles as a smoke test.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import numtorch as torch

_failures = []


def check(label, ok):
    print(f"    {'ok' if ok else 'FAILED'}: {label}")
    if not ok:
        _failures.append(label)


def section(title):
    print(f"\n== {title}")


def tensors():
    section("Tensors and broadcasting")
    x = torch.arange(6.0).reshape(2, 3)
    y = torch.tensor([10.0, 20.0, 30.0])
    print(f"x = torch.arange(6.).reshape(2, 3)\n{x}")
    print(f"x + y  (y has shape {tuple(y.shape)}, broadcast over rows)\n{x + y}")
    print(f"x @ x.T =\n{x @ x.T}")
    print(f"x.sum(dim=1) = {x.sum(dim=1)},  x.max(dim=0) values = {x.max(dim=0).values}")
    print(f"int + float promotes like PyTorch: {(torch.arange(3) + 0.5).dtype}")
    check("broadcast add equals NumPy", np.array_equal((x + y).numpy(), x.numpy() + y.numpy()))


def autograd():
    section("Autograd: d/dx sum(sin(x) * x**2) = cos(x) x^2 + 2 x sin(x)")
    x = torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True)
    (x.sin() * x ** 2).sum().backward()
    closed = torch.cos(x) * x ** 2 + 2 * x * torch.sin(x)
    print(f"x.grad      = {x.grad}\nclosed form = {closed.detach()}")
    check("x.grad matches the closed form", torch.allclose(x.grad, closed.detach()))


def train_mlp():
    section("A small MLP learns sin(x) (nn.Sequential + optim.SGD + F.mse_loss)")
    from numtorch import nn, optim
    import numtorch.nn.functional as F
    torch.manual_seed(0)
    x = torch.linspace(-3, 3, 64).unsqueeze(1)
    y = torch.sin(x)
    model = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 1))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    t0 = time.perf_counter()
    for step in range(300):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == 299:
            print(f"    step {step:3d}  loss {loss.item():.4f}")
    print(f"    300 steps in {time.perf_counter() - t0:.2f} s")
    check("training loss fell by 10x", losses[-1] < losses[0] / 10)
    return model, x, y


def per_sample_grads(model, x, y):
    section("torch.func: per-sample gradients = vmap(grad(functional_call))")
    from numtorch.func import functional_call, grad, vmap
    import numtorch.nn.functional as F
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return F.mse_loss(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    name = "0.weight"
    print(f"    per-sample grads of {name}: shape {tuple(grads[name].shape)} "
          f"(batch {x.shape[0]} x {tuple(params[name].shape)})")
    model.zero_grad()
    F.mse_loss(model(x[3:4]), y[3:4]).backward()
    check("sample 3 matches a single .backward()",
          torch.allclose(grads[name][3], model[0].weight.grad, atol=1e-6))


def numpy_code():
    section("NumPy code on Tensors is differentiable (__array_function__/__array_ufunc__)")
    x = torch.tensor([0.5, 1.0, 1.5], dtype=torch.float64, requires_grad=True)
    y = np.sum(np.sin(x) * np.sum(x))  # plain NumPy calls, Tensor in, Tensor out
    y.backward()
    xs = x.detach().numpy()
    closed = np.cos(xs) * xs.sum() + np.sin(xs).sum()
    print(f"    y = np.sum(np.sin(x) * np.sum(x)) = {y.item():.6f} ({type(y).__name__})")
    print(f"    x.grad = {x.grad}")
    check("gradient through NumPy calls matches the closed form",
          np.allclose(x.grad.numpy(), closed))


def main():
    t0 = time.perf_counter()
    print(f"numtorch {torch.__version__}: PyTorch's programming model on NumPy "
          f"{np.__version__}  (import numtorch as torch)")
    tensors()
    autograd()
    model, x, y = train_mlp()
    per_sample_grads(model, x, y)
    numpy_code()
    print(f"\n{len(_failures)} failed checks; tour took {time.perf_counter() - t0:.1f} s")
    return len(_failures)


if __name__ == "__main__":
    sys.exit(main())
