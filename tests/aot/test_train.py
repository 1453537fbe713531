"""Compiled training steps (the torch.compile FAQ's training answer): ``compile(step)``
where ``step`` does zero_grad, forward, ``loss.backward()``, ``opt.step()`` trains exactly
as eager does. Oracle: the same step run eagerly on a deep copy of the model.

What runs compiled: the forward (one graph) and, with aot_eager and inductor, its
backward as one autograd node (numtorch._aot); zero_grad and backward's engine run at
every call as graph breaks, and opt.step at its break runs its compiled update
(numtorch/_aot/optimizer.py; tests/aot/test_compiled_step.py).
"""
import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn
import numtorch.nn.functional as F


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh(),
                         nn.Linear(8, 3))


def _mlp_data(dtype):
    return torch.randn(12, 6, dtype=dtype), torch.randint(0, 3, (12,))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2)
        self.fc = nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.flatten(1))


def _cnn_data(dtype):
    return torch.randn(5, 2, 8, 8, dtype=dtype), torch.randint(0, 3, (5,))


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, idx):
        return self.fc(torch.tanh(self.emb(idx).mean(1)))


def _bag_data(dtype):
    return torch.randint(0, 20, (7, 5)), torch.randint(0, 3, (7,))


MODELS = {
    "mlp": (_mlp, _mlp_data, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                          weight_decay=1e-3)),
    "cnn": (SmallCNN, _cnn_data, lambda ps: torch.optim.Adam(ps, lr=1e-2)),
    "embedding": (Bag, _bag_data, lambda ps: torch.optim.AdamW(ps, lr=1e-2)),
}


def _train(model, data, make_opt, backend, steps):
    opt = make_opt(model.parameters())
    x, y = data

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    if backend is not None:
        step = torch.compile(step, backend=backend)
    return [step(x, y) for _ in range(steps)]


def _check_same_training(name, backend, dtype, rtol, atol, steps=3):
    make_model, make_data, make_opt = MODELS[name]
    torch.manual_seed(0)
    model = make_model().to(dtype)
    eager_model = copy.deepcopy(model)
    initial = copy.deepcopy(model.state_dict())
    data = make_data(dtype)
    losses = _train(model, data, make_opt, backend, steps)
    eager_losses = _train(eager_model, data, make_opt, None, steps)
    for a, b in zip(losses, eager_losses):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    for (n, p), q in zip(model.named_parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol,
                                   atol=atol, err_msg=n)
    # the parameters moved: the step really trained
    assert not np.allclose(model.state_dict()[n].numpy(), initial[n].numpy())
    return losses


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_step_trains_as_eager_float64(name, backend):
    losses = _check_same_training(name, backend, torch.float64, rtol=1e-12, atol=1e-12)
    if backend != "eager":
        # the forward and its backward ran as one compiled node (numtorch._aot)
        assert losses[-1].grad_fn.name() == "CompiledFunctionBackward"


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_step_trains_as_eager_float32(backend):
    _check_same_training("mlp", backend, torch.float32, rtol=2e-5, atol=1e-6)


class DropoutMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_dropout_in_compiled_training_reproduces_eager_under_seeding(backend):
    """Random draws in the compiled forward run numtorch's generator in eager's order (the
    partition never recomputes a draw), so seeding reproduces eager's masks."""
    torch.manual_seed(0)
    model = DropoutMLP().double()
    eager_model, initial = copy.deepcopy(model), copy.deepcopy(model)
    data = _mlp_data(torch.float64)

    def make_opt(ps):
        return torch.optim.SGD(ps, lr=0.1)
    torch.manual_seed(5)
    losses = _train(model, data, make_opt, backend, 3)
    torch.manual_seed(5)
    eager_losses = _train(eager_model, data, make_opt, None, 3)
    # the masks matter: another seed gives another loss
    torch.manual_seed(6)
    other = _train(initial, data, make_opt, None, 1)[0]
    assert not np.allclose(other.detach().numpy(), eager_losses[0].detach().numpy())
    for a, b in zip(losses, eager_losses):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert losses[-1].grad_fn.name() == "CompiledFunctionBackward"
