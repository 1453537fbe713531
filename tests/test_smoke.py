import numpy as np

import numtorch as torch


def test_linear_model_gradient_matches_closed_form():
    x = torch.randn(3, 4, dtype=torch.float64)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    loss = ((x @ w) ** 2).mean()
    loss.backward()
    X, W = x.numpy(), w.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), 2 * X.T @ (X @ W) / 3, rtol=1e-12)


def test_second_derivative_of_sin():
    a = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(a.sin(), a, create_graph=True)
    (g2,) = torch.autograd.grad(g, a)
    assert g.item() == np.cos(0.7)
    assert abs(g2.item() + np.sin(0.7)) < 1e-15


def test_matrix_products_with_empty_dimensions():
    assert torch.equal(torch.zeros(2, 3, 0) @ torch.zeros(0, 4), torch.zeros(2, 3, 4))
    assert (torch.zeros(2, 0, 5) @ torch.zeros(5, 4)).shape == (2, 0, 4)
