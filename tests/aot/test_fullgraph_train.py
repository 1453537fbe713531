"""``compile(step, fullgraph=True)``: zero_grad, forward, ``loss.backward()`` and
``opt.step()`` captured as one graph (numtorch/_aot/fullgraph.py, Note [Training steps in
one graph]).

Oracle: the same step run eagerly on a deep copy of the model and optimizer; parameters,
gradients and optimizer state must agree to float rounding after several steps (the
backward is the VJP rules' graph, fused differently from eager's engine, so not
bit-equal). Counting backend: every graph the compiled step builds, and every run of one.
"""
import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn
import numtorch.nn.functional as F

from fullgraph_helpers import Counting, training_step

OPTIMIZERS = {
    "sgd_momentum_wd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def _data():
    rng = np.random.default_rng(0)
    return torch.tensor(rng.standard_normal((16, 6)).astype(np.float32)), \
        torch.tensor(rng.integers(0, 3, 16))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _assert_close(model, opt, ref_model, ref_opt):
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}.grad")
        assert p.is_leaf and p.grad_fn is None and p.grad.grad_fn is None
    for p, q in zip(model.parameters(), ref_model.parameters()):
        a, b = opt.state.get(p, {}), ref_opt.state.get(q, {})
        assert sorted(a) == sorted(b)
        for k in a:
            np.testing.assert_allclose(np.asarray(a[k].numpy() if hasattr(a[k], "numpy") else a[k]),
                                       np.asarray(b[k].numpy() if hasattr(b[k], "numpy") else b[k]),
                                       rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_training_step_is_one_graph_and_trains_as_eager(name):
    model, x_y = _model(), _data()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](ref_model.parameters())
    backend = Counting()
    step = torch.compile(training_step(model, opt), fullgraph=True, backend=backend)
    ref_step = training_step(ref_model, ref_opt)
    steps = 4
    for _ in range(steps):
        loss, ref_loss = step(*x_y), ref_step(*x_y)
        np.testing.assert_allclose(loss.item(), ref_loss.item(), rtol=1e-6)
    _assert_close(model, opt, ref_model, ref_opt)
    # one graph per call: the first step (state made) and the later ones are two entries
    assert backend.runs == steps
    assert len(backend.graphs) == 2
    # the graph holds the backward: more matmuls than the forward's two (dx of layer 2,
    # dW of both layers)
    dots = [n for n in backend.graphs[-1].nodes if n.prim.name == "dot_general"]
    assert len(dots) >= 5
    assert not loss.requires_grad        # its backward ran inside the graph


@pytest.mark.parametrize("name", ["adam", "adamw"])
def test_inductor_backend(name):
    """Adam's state (step count, moments) is captured by the later steps' graph and read at
    each call: several steps, compared with eager after each (a step count merged with the
    literal 1.0 of ``step + 1`` stayed 2 from the third call: Note [Optimizer state is
    captured])."""
    model, x_y = _model(), _data()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](ref_model.parameters())
    backend = Counting("inductor")
    step, ref_step = torch.compile(training_step(model, opt), fullgraph=True, backend=backend), \
        training_step(ref_model, ref_opt)
    for k in range(1, 6):
        np.testing.assert_allclose(step(*x_y).item(), ref_step(*x_y).item(), rtol=1e-6)
        _assert_close(model, opt, ref_model, ref_opt)
        assert all(float(s["step"]) == k for s in opt.state.values())
    assert backend.runs == 5 and len(backend.graphs) == 2


def test_gradients_accumulate_without_zero_grad():
    """No zero_grad in the step: each call adds its gradient to .grad (the real one, read
    as a graph input) as eager does; two backwards in one call add too."""
    model, (x, y) = _model(), _data()
    ref_model = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(ref_model.parameters(), lr=0.05)

    def make(model, opt):
        def step(x, y):
            F.cross_entropy(model(x[:8]), y[:8]).backward()
            F.cross_entropy(model(x[8:]), y[8:]).backward()
            opt.step()
        return step
    backend = Counting()
    step, ref_step = torch.compile(make(model, opt), fullgraph=True, backend=backend), \
        make(ref_model, ref_opt)
    for _ in range(3):
        step(x, y)
        ref_step(x, y)
    _assert_close(model, opt, ref_model, ref_opt)
    assert backend.runs == 3
    # grads were None at the first call and tensors later: two entries
    assert len(backend.graphs) == 2


def test_without_fullgraph_backward_still_breaks():
    model, x_y = _model(), _data()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    explained = torch._dynamo.explain(training_step(model, opt))(*x_y)
    reasons = " ".join(b.reason for b in explained.break_reasons)
    assert "backward" in reasons and "zero_grad" in reasons


@pytest.mark.parametrize("case, match", [
    ("create_graph", "create_graph"),
    ("no_grad_before", "no_grad"),
    ("read_after_step", "read after opt.step"),
    ("set_to_none", "set_to_none=False"),
])
def test_fullgraph_errors_name_the_reason(case, match):
    model, (x, y) = _model(), _data()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        if case == "set_to_none":
            opt.zero_grad(set_to_none=False)
        if case == "no_grad_before":
            with torch.no_grad():
                x = x * 2
        loss = F.cross_entropy(model(x), y)
        loss.backward(create_graph=case == "create_graph")
        opt.step()
        if case == "read_after_step":
            return model(x)
        return loss
    with pytest.raises(Exception, match=match):
        torch.compile(step, fullgraph=True, backend="aot_eager")(x, y)


def test_leaf_argument_gets_its_gradient():
    """A leaf passed as an argument (not a captured parameter): its .grad is written to
    the tensor of each call, compared with eager (hand-written SGD on a weight)."""
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((5, 3)).astype(np.float32))

    def step(w, x):
        loss = (x @ w).tanh().sum()
        loss.backward()
        return loss
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    for k in range(2):      # a new tensor each call: the write goes to that one
        w = torch.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
        ref = w.detach().clone().requires_grad_()
        compiled(w, x)
        step(ref, x)
        np.testing.assert_allclose(w.grad.numpy(), ref.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_dropout_draws_eagers_masks(backend, monkeypatch):
    """Dropout in a fullgraph training step: with ``_inductor.config.fallback_random = True``
    (the FAQ's accuracy advice) the graph draws from numtorch's generator exactly as eager
    does, so after the same seed the losses, parameters and the generator's next draw are
    eager's bit for bit (float64 model: the backward's summation order cannot hide a
    different mask behind rounding)."""
    from numtorch._inductor import config
    monkeypatch.setattr(config, "fallback_random", True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3)).double()
    ref_model = copy.deepcopy(model)
    x, y = _data()
    x = x.double()
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                    for m in (model, ref_model))
    step = torch.compile(training_step(model, opt), fullgraph=True, backend=backend)
    torch.manual_seed(5)
    losses = [step(x, y).item() for _ in range(3)]
    after = torch.rand(4).numpy()
    torch.manual_seed(5)
    ref_losses = [training_step(ref_model, ref_opt)(x, y).item() for _ in range(3)]
    ref_after = torch.rand(4).numpy()
    np.testing.assert_array_equal(after, ref_after)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-13)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-13)
    losses_by_seed = []                      # the masks matter: another seed, another loss
    for seed in (5, 6):
        torch.manual_seed(seed)
        losses_by_seed.append(F.cross_entropy(model(x), y).item())
    assert losses_by_seed[0] != losses_by_seed[1]


def test_step_alone_reads_the_real_gradients():
    """Backward eagerly, only the step compiled with fullgraph=True: the step reads each
    .grad as a graph input at every call (Adam: state made at the first call, then
    updated), and the run records no autograd history on the parameters."""
    model, (x, y) = _model(), _data()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS["adam"](model.parameters()), OPTIMIZERS["adam"](ref_model.parameters())
    backend = Counting()

    def update():
        opt.step()
    compiled = torch.compile(update, fullgraph=True, backend=backend)
    for k in range(3):
        for m in (model, ref_model):
            m.zero_grad()
            F.cross_entropy(m(x * (k + 1)), y).backward()
        compiled()
        ref_opt.step()
    _assert_close(model, opt, ref_model, ref_opt)
    assert backend.runs == 3 and len(backend.graphs) == 2
