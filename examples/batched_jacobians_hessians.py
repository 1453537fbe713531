"""Batched Jacobians and Hessians: vmap(jacrev(f)) and vmap(hessian(f)), checked by a loop.

Run: python examples/batched_jacobians_hessians.py
"""
import numtorch as torch
from numtorch.func import hessian, jacrev, vmap


def main():
    torch.manual_seed(0)
    W = torch.randn(5, 5, dtype=torch.float64)

    def f(x):          # one example: R^5 -> R^5
        return (W @ x).sin()

    def energy(x):     # one example: R^5 -> R
        return (W @ x).sin().sum() + (x ** 4).sum()

    xs = torch.randn(64, 5, dtype=torch.float64)
    jacs = vmap(jacrev(f))(xs)
    hess = vmap(hessian(energy))(xs)
    print("vmap(jacrev(f)) :", tuple(jacs.shape), "  vmap(hessian(f)):", tuple(hess.shape))
    loop_j = torch.stack([jacrev(f)(x) for x in xs])
    loop_h = torch.stack([hessian(energy)(x) for x in xs])
    print("  max |batched - loop| jacobians:", (jacs - loop_j).abs().max().item(),
          " hessians:", (hess - loop_h).abs().max().item())
    assert torch.allclose(jacs, loop_j) and torch.allclose(hess, loop_h)
    # closed form for one example: J = diag(cos(Wx)) W
    x = xs[0]
    assert torch.allclose(jacs[0], torch.diag((W @ x).cos()) @ W)
    # the "batch trick": the Jacobian of the summed outputs w.r.t. the batch, for a
    # function that treats examples independently, equals the batched Jacobian
    trick = jacrev(lambda X: f_batched(W, X).sum(0))(xs).movedim(1, 0)
    assert torch.allclose(trick, jacs)
    print("ok")


def f_batched(W, X):
    return (X @ W.t()).sin()


if __name__ == "__main__":
    main()
