"""Jacobians and Hessians with torch.func, checked against closed forms.

Run: python examples/jacobians_hessians.py
"""
import numtorch as torch
from numtorch.func import hessian, jacfwd, jacrev


def main():
    torch.manual_seed(0)
    # Jacobian of a layer y = tanh(W x + b) w.r.t. x: diag(1 - y^2) @ W
    W = torch.randn(4, 3, dtype=torch.float64)
    b = torch.randn(4, dtype=torch.float64)
    x = torch.randn(3, dtype=torch.float64)

    def layer(x):
        return (W @ x + b).tanh()

    y = layer(x)
    closed = torch.diag(1 - y ** 2) @ W
    j_rev, j_fwd = jacrev(layer)(x), jacfwd(layer)(x)
    print("jacrev(tanh(Wx+b)) shape:", tuple(j_rev.shape))
    print("  max |jacrev - closed form| =", (j_rev - closed).abs().max().item())
    print("  max |jacfwd - jacrev|      =", (j_fwd - j_rev).abs().max().item())
    assert torch.allclose(j_rev, closed) and torch.allclose(j_fwd, closed)

    # Jacobian w.r.t. several arguments: argnums=(0, 1)
    jW, jb = jacrev(lambda W, b: (W @ x + b).tanh(), argnums=(0, 1))(W, b)
    print("jacrev w.r.t. (W, b) shapes:", tuple(jW.shape), tuple(jb.shape))
    assert torch.allclose(jb, torch.diag(1 - y ** 2))

    # Hessian of f(x) = sum(sin(x)) * |x|^2 (closed form below)
    def f(x):
        return x.sin().sum() * (x * x).sum()

    H = hessian(f)(x)
    s, n2 = x.sin().sum(), (x * x).sum()
    closed_H = (torch.diag(-x.sin()) * n2 + 2 * torch.outer(x.cos(), x)
                + 2 * torch.outer(x, x.cos()) + 2 * s * torch.eye(3, dtype=torch.float64))
    print("hessian shape:", tuple(H.shape), " max |H - closed form| =",
          (H - closed_H).abs().max().item())
    assert torch.allclose(H, closed_H)
    assert torch.allclose(jacrev(jacrev(f))(x), H) and torch.allclose(jacfwd(jacfwd(f))(x), H)
    print("ok")


if __name__ == "__main__":
    main()
