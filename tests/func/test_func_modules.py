"""functional_call and stack_module_state with real modules, including BatchNorm's buffers."""
import copy

import pytest

import numtorch as torch
import numtorch.nn as nn
from numtorch.func import functional_call, grad, stack_module_state, vmap


def test_functional_call_restores_state_even_when_the_call_raises():
    model = nn.Linear(3, 2)
    w = model.weight
    with pytest.raises(RuntimeError):
        functional_call(model, {"weight": torch.randn(2, 5)}, (torch.randn(4, 3),))
    assert model.weight is w


def test_functional_call_tuple_of_dicts_and_duplicate_keys():
    model = nn.Linear(3, 2)
    p = dict(model.named_parameters())
    x = torch.randn(4, 3)
    assert torch.allclose(functional_call(model, ({"weight": p["weight"]}, {"bias": p["bias"]}), (x,)), model(x))
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(model, ({"weight": p["weight"]}, {"weight": p["weight"]}), (x,))


def test_functional_call_strict_reports_missing_and_unexpected_keys():
    model = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        functional_call(model, {"weight": torch.randn(2, 3)}, (torch.randn(1, 3),), strict=True)


def test_functional_call_ties_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied()
    w = torch.randn(2, 2)
    x = torch.randn(3, 2)
    out = functional_call(m, {"a.weight": w}, (x,))
    assert torch.allclose(out, x @ w.t() @ w.t())


def test_batchnorm_ensemble_updates_stacked_running_stats_under_vmap():
    torch.manual_seed(0)
    models = [nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)) for _ in range(3)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    data = torch.randn(3, 8, 4)
    out = vmap(lambda p, b, x: functional_call(base, (p, b), (x,)))(params, buffers, data)
    for i, m in enumerate(models):
        assert torch.allclose(out[i], m(data[i]), atol=1e-6)   # train mode: updates m's stats too
        assert torch.allclose(buffers["1.running_mean"][i], m[1].running_mean, atol=1e-6)
        assert torch.allclose(buffers["1.running_var"][i], m[1].running_var, atol=1e-6)


def test_batchnorm_with_unbatched_buffers_under_vmap_is_a_clear_error():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        vmap(bn)(torch.randn(2, 5, 3))
    bn.eval()
    x = torch.randn(2, 5, 3)
    assert torch.allclose(vmap(bn)(x), torch.stack([bn(r) for r in x]))


def test_per_sample_grads_through_an_nn_model_match_a_loop():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(6, 5), torch.randn(6, 2)

    def loss(p, xi, yi):
        return ((functional_call(model, p, (xi,)) - yi) ** 2).sum()
    g = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(6):
        model.zero_grad()
        ((model(x[i]) - y[i]) ** 2).sum().backward()
        for k, p in model.named_parameters():
            assert torch.allclose(g[k][i], p.grad, atol=1e-6)
