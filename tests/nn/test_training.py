"""End to end: small models train with SGD and Adam, and nn composes with torch.func
(functional_call, vmap, grad, jvp, ensembles over meta-device models)."""
import copy

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
import numtorch.nn.functional as F
from numtorch.func import functional_call, grad, jvp, stack_module_state, vmap


def regression_data(n=128):
    g = np.random.default_rng(0)
    x = g.standard_normal((n, 8)).astype(np.float32)
    w = g.standard_normal((8, 1)).astype(np.float32)
    y = np.tanh(x @ w * 0.5) + 0.1 * x[:, :1] ** 2
    return nt.tensor(x), nt.tensor(y)


def classification_data(n=150):
    g = np.random.default_rng(1)
    centers = g.standard_normal((3, 6)) * 3
    labels = g.integers(0, 3, n)
    x = centers[labels] + g.standard_normal((n, 6))
    return nt.tensor(x.astype(np.float32)), nt.tensor(labels)


def train(model, opt, loss_fn, x, y, steps=50):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_mlp_regression_with_sgd_momentum():
    x, y = regression_data()
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    losses = train(model, nt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), F.mse_loss, x, y)
    assert losses[-1] < 0.2 * losses[0]


def test_mlp_classification_with_adam_dropout_and_batchnorm():
    x, y = classification_data()
    model = nn.Sequential(nn.Linear(6, 32), nn.BatchNorm1d(32), nn.GELU(), nn.Dropout(0.1),
                          nn.Linear(32, 3))
    losses = train(model, nt.optim.Adam(model.parameters(), lr=1e-2), nn.CrossEntropyLoss(), x, y)
    assert losses[-1] < 0.2 * losses[0]
    model.eval()
    acc = (model(x).argmax(1) == y).float().mean().item()
    assert acc > 0.9


def test_small_cnn_with_adamw():
    g = np.random.default_rng(2)
    # Class 0: a horizontal bar, class 1: a vertical bar, both with noise.
    imgs = g.standard_normal((64, 1, 8, 8)).astype(np.float32) * 0.3
    labels = g.integers(0, 2, 64)
    for i, c in enumerate(labels):
        if c == 0:
            imgs[i, 0, 3:5, :] += 2
        else:
            imgs[i, 0, :, 3:5] += 2
    x, y = nt.tensor(imgs), nt.tensor(labels)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3, padding="same"), nn.GroupNorm(2, 8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
    losses = train(model, nt.optim.AdamW(model.parameters(), lr=2e-2), F.cross_entropy, x, y, 40)
    assert losses[-1] < 0.3 * losses[0]


def test_embedding_layernorm_model_trains_with_sgd_nesterov():
    g = np.random.default_rng(3)
    tokens = nt.tensor(g.integers(0, 20, (64, 5)))
    target = (tokens.sum(1) % 2).to(nt.float32)

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 16, padding_idx=0)
            self.norm = nn.LayerNorm(16)
            self.out = nn.Linear(16, 1)

        def forward(self, t):
            return self.out(self.norm(self.emb(t).sum(1)))[:, 0]

    model = Bag()
    opt = nt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    losses = train(model, opt, F.binary_cross_entropy_with_logits, tokens, target, 60)
    assert losses[-1] < 0.6 * losses[0]
    assert (model.emb.weight[0].detach().numpy() == 0).all()   # padding row never updated


# ---------------------------------------------------------------------------------------
# torch.func compositions

def test_functional_call_swaps_parameters_and_restores_them():
    model = nn.Linear(3, 2)
    x = nt.randn(4, 3)
    params = {k: nt.zeros_like(v) for k, v in model.named_parameters()}
    out = functional_call(model, params, (x,))
    assert (out.numpy() == 0).all()
    assert isinstance(model.weight, nn.Parameter) and model.weight.abs().sum().item() > 0


def test_per_sample_gradients_with_vmap_grad_match_a_loop():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = nt.randn(5, 4), nt.tensor([0, 2, 1, 1, 0])

    def loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(5):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(per_sample[name][i].numpy(), p.grad.numpy(),
                                       rtol=1e-5, atol=1e-6)


def test_model_ensemble_with_stack_module_state_and_meta_base():
    models = [nn.Sequential(nn.Linear(3, 5), nn.LayerNorm(5), nn.SiLU(), nn.Linear(5, 2))
              for _ in range(4)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = nt.randn(6, 3)

    def f(p, b, xi):
        return functional_call(base, (p, b), (xi,))

    out = vmap(f, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_jvp_through_functional_ops_matches_finite_difference():
    x = nt.randn(3, 4, dtype=nt.float64)
    v = nt.randn(3, 4, dtype=nt.float64)

    def f(t):
        return F.layer_norm(F.gelu(t), (4,)) + F.softplus(t) * F.log_softmax(t, 1)

    _, tangent = jvp(f, (x,), (v,))
    eps = 1e-6
    fd = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)


def test_vmap_of_losses_and_layers_matches_batched_calls():
    x, t = nt.randn(6, 5, 4), nt.randint(0, 4, (6, 5))
    per_example = vmap(lambda xi, ti: F.cross_entropy(xi, ti, label_smoothing=0.1))(x, t)
    expected = nt.stack([F.cross_entropy(x[i], t[i], label_smoothing=0.1) for i in range(6)])
    np.testing.assert_allclose(per_example.numpy(), expected.numpy(), rtol=1e-5)
    ln = nn.LayerNorm(4)
    np.testing.assert_allclose(vmap(ln)(x).detach().numpy(), ln(x).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_dropout_under_vmap_follows_the_randomness_policy():
    x = nt.ones(4, 100)
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: F.dropout(r, 0.5))(x)
    different = vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x).numpy()
    same = vmap(lambda r: F.dropout(r, 0.5), randomness="same")(x).numpy()
    assert not (different[0] == different[1]).all()
    assert (same == same[0]).all()


def test_batchnorm_in_eval_mode_under_vmap_and_train_mode_under_functional_call():
    bn = nn.BatchNorm1d(3)
    bn(nt.randn(8, 3) * 2 + 1)
    bn.eval()
    x = nt.randn(5, 4, 3)
    np.testing.assert_allclose(vmap(bn)(x).detach().numpy(),
                               nt.stack([bn(x[i]) for i in range(5)]).detach().numpy(), rtol=1e-6)
    bn.train()
    buffers = {k: v.clone() for k, v in bn.named_buffers()}
    functional_call(bn, buffers, (nt.randn(6, 3) + 5,))
    assert buffers["num_batches_tracked"].item() == 2
    assert buffers["running_mean"].mean().item() > bn.running_mean.mean().item() + 0.3
