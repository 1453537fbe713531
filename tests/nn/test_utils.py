"""nn.utils: gradient clipping and parameter/vector conversion, vs PyTorch."""
import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
from nn_helpers import oracle


def _grads(lib, seed=0):
    g = np.random.default_rng(seed)
    params = [lib.zeros(s, requires_grad=True, dtype=lib.float64) for s in ((3, 2), (4,))]
    for p in params:
        p.grad = lib.tensor(g.standard_normal(tuple(p.shape)) * 3)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type):
    torch = oracle()
    ours, theirs = _grads(nt), _grads(torch)
    total = nn.utils.clip_grad_norm_(ours, 1.5, norm_type)
    ref = torch.nn.utils.clip_grad_norm_(theirs, 1.5, norm_type)
    np.testing.assert_allclose(total.item(), ref.item(), rtol=1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_and_errors_on_nonfinite():
    p = nt.zeros(2, requires_grad=True)
    p.grad = nt.tensor([0.3, 0.4])
    assert abs(nn.utils.clip_grad_norm_(p, 10.0).item() - 0.5) < 1e-6
    np.testing.assert_allclose(p.grad.numpy(), [0.3, 0.4], rtol=1e-6)
    p.grad = nt.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


def test_clip_grad_norm_after_backward_of_a_model():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model(nt.randn(5, 3)).sum().backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1e-3)
    total = np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in model.parameters()))
    assert total <= 1e-3 * (1 + 1e-4)


def test_clip_grad_value_and_vector_conversions():
    ps = _grads(nt)
    nn.utils.clip_grad_value_(ps, 0.5)
    assert all(np.abs(p.grad.numpy()).max() <= 0.5 for p in ps)
    model = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert tuple(vec.shape) == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], model.weight.detach().numpy().ravel())
    nn.utils.vector_to_parameters(nt.arange(8.0), model.parameters())
    assert model.bias.tolist() == [6.0, 7.0] and isinstance(model.weight, nn.Parameter)
