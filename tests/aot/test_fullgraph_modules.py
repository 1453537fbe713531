"""What a PyTorch training step has besides parameters, under ``compile(step,
fullgraph=True)`` (numtorch/_aot/fullgraph.py): module buffers the forward writes
(BatchNorm's running statistics, a user module's own buffer), tensor hyperparameters (``lr``
as a 0-d tensor changed between calls) and gradient hooks on parameters.

Oracle: the same step run eagerly on a deep copy of the model and optimizer, compared
after every call (parameters, gradients, buffers, optimizer state) to float rounding.
"""
import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn
import numtorch.nn.functional as F

from fullgraph_helpers import Counting, training_step


def _data(n=16, d=6):
    rng = np.random.default_rng(0)
    return torch.tensor(rng.standard_normal((n, d)).astype(np.float32)), \
        torch.tensor(rng.integers(0, 3, n))


def _assert_same_state(model, ref_model):
    for (name, a), b in zip(model.state_dict().items(), ref_model.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=1e-6, err_msg=name)
    for (name, p), q in zip(model.named_parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-5, atol=1e-6,
                                   err_msg=f"{name}.grad")


def _train(model, make_opt, backend, calls=4, data=None):
    """Train ``model`` compiled and a copy eagerly; compare after each call."""
    ref_model = copy.deepcopy(model)
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref_model.parameters())
    counting = Counting(backend)
    step = torch.compile(training_step(model, opt), fullgraph=True, backend=counting)
    ref_step = training_step(ref_model, ref_opt)
    x, y = data or _data()
    for _ in range(calls):
        np.testing.assert_allclose(step(x, y).item(), ref_step(x, y).item(), rtol=1e-5)
        _assert_same_state(model, ref_model)
    assert counting.runs == calls                 # one graph per call, no break
    return counting


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_batchnorm_running_statistics_update_as_eager(backend):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    _train(model, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), backend)
    assert int(model[1].num_batches_tracked) == 4
    model.eval()                                  # eval after compiled training: eager's
    x = _data()[0]
    ref = copy.deepcopy(model)
    np.testing.assert_allclose(model(x).detach().numpy(), ref(x).detach().numpy())


def test_cnn_with_batchnorm2d_trains_as_eager():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.Flatten(), nn.Linear(4 * 5 * 5, 3))
    rng = np.random.default_rng(1)
    data = (torch.tensor(rng.standard_normal((8, 2, 5, 5)).astype(np.float32)),
            torch.tensor(rng.integers(0, 3, 8)))
    _train(model, lambda ps: torch.optim.Adam(ps, lr=0.01), "aot_eager", calls=3, data=data)


class Seen(nn.Module):
    """A user module that counts what it saw in its own buffer and reads it back."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.register_buffer("seen", torch.ones(6))

    def forward(self, x):
        self.seen.add_(x.abs().sum(0))
        return self.lin(x / self.seen.sqrt())     # a read past the write


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_user_module_buffer_write_read_back(backend):
    """The write is an effect on a graph input (Note [Writes in a differentiated forward]):
    it happens once per call, and the forward differentiated reads the written value."""
    torch.manual_seed(0)
    model = Seen()
    counting = _train(model, lambda ps: torch.optim.SGD(ps, lr=0.1), backend)
    assert len(counting.graphs) == 1


def test_a_write_before_and_after_backward_is_refused():
    """The write before the backward is copied back after the graph; one after it would
    run first inside the graph, so the step is refused with the reason."""
    torch.manual_seed(0)
    model = Seen()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        F.cross_entropy(model(x), y).backward()
        model.seen.mul_(0.5)
        opt.step()
    with pytest.raises(RuntimeError, match="written again after"):
        torch.compile(step, fullgraph=True, backend="aot_eager")(*_data())


def test_two_forwards_write_the_buffer_twice():
    """Gradient accumulation over two half batches: each forward writes the buffer, each
    backward takes the writes so far out of the graph; the buffer ends as eager's."""
    torch.manual_seed(0)
    model = Seen()
    ref_model = copy.deepcopy(model)

    def make(model, opt):
        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x[:8]), y[:8]).backward()
            F.cross_entropy(model(x[8:]), y[8:]).backward()
            opt.step()
        return step
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref_model))
    step = torch.compile(make(model, opt), fullgraph=True, backend="aot_eager")
    for _ in range(3):
        step(*_data())
        make(ref_model, ref_opt)(*_data())
        _assert_same_state(model, ref_model)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("make_opt", [
    lambda ps, lr: torch.optim.SGD(ps, lr=lr, momentum=0.9, weight_decay=0.01),
    lambda ps, lr: torch.optim.AdamW(ps, lr=lr, weight_decay=0.1),
], ids=["sgd", "adamw"])
def test_tensor_lr_changed_in_place_needs_no_recompile(make_opt, backend):
    """Note [Tensor hyperparameters]: the graph reads lr at each call. It is halved in
    place between calls (what an LR scheduler does to a tensor lr); eager runs the same
    optimizer code with its own tensor lr."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref_model = copy.deepcopy(model)
    opt = make_opt(model.parameters(), torch.tensor(0.05))
    ref_opt = make_opt(ref_model.parameters(), torch.tensor(0.05))
    counting = Counting(backend)
    step = torch.compile(training_step(model, opt), fullgraph=True, backend=counting)
    x, y = _data()
    for _ in range(4):
        np.testing.assert_allclose(step(x, y).item(),
                                   training_step(ref_model, ref_opt)(x, y).item(),
                                   rtol=1e-5)
        _assert_same_state(model, ref_model)
        for o in (opt, ref_opt):
            o.param_groups[0]["lr"].mul_(0.5)
    assert counting.runs == 4 and len(counting.graphs) == 2   # first step, later steps
    # the lr matters: with lr 0 the parameters do not move (SGD's weight decay and
    # AdamW's decoupled decay both scale by lr)
    opt.param_groups[0]["lr"].fill_(0.0)
    before = [p.detach().clone() for p in model.parameters()]
    step(x, y)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before))
    assert len(counting.graphs) == 2


def test_a_new_lr_tensor_recompiles():
    model = nn.Linear(6, 3)
    opt = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.1))
    counting = Counting("aot_eager")
    x = _data()[0]

    def step(x):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    compiled = torch.compile(step, fullgraph=True, backend=counting)
    compiled(x)
    opt.param_groups[0]["lr"] = torch.tensor(0.0)
    before = model.weight.detach().clone()
    compiled(x)
    assert len(counting.graphs) == 2 and torch.equal(model.weight, before)


def test_other_tensor_hyperparameters_are_refused():
    model = nn.Linear(6, 3)
    opt = torch.optim.Adam(model.parameters(), betas=(torch.tensor(0.9), torch.tensor(0.99)))

    def step(x):
        model(x).sum().backward()
        opt.step()
    with pytest.raises(Exception, match="tensor hyperparameter 'betas'"):
        torch.compile(step, fullgraph=True, backend="aot_eager")(_data()[0])


@pytest.mark.parametrize("fullgraph", [True, False])
def test_a_step_with_an_lr_scheduler_trains_as_eager(fullgraph, recwarn):
    """An LR scheduler replaces ``opt.step`` by a wrapper (optim/lr_scheduler.py). Compile
    treats it as the step: captured in a fullgraph step (with a tensor lr the scheduler
    fills in place: no recompile), the compiled update at a break otherwise; traced as
    code it had run the update on capture's values (no update at all, or a stale saved
    tensor)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref_model = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.Adam(m.parameters(), lr=torch.tensor(0.05))
                    for m in (model, ref_model))
    sched, ref_sched = (torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.5)
                        for o in (opt, ref_opt))
    counting = Counting("aot_eager")
    step = torch.compile(training_step(model, opt), fullgraph=fullgraph, backend=counting)
    x, y = _data()
    for _ in range(4):
        np.testing.assert_allclose(step(x, y).item(),
                                   training_step(ref_model, ref_opt)(x, y).item(),
                                   rtol=1e-5)
        sched.step()
        ref_sched.step()
        _assert_same_state(model, ref_model)
    assert float(opt.param_groups[0]["lr"]) == float(np.float32(0.05)) / 16
    assert not [w for w in recwarn if "lr_scheduler.step()" in str(w.message)]
    if fullgraph:
        assert counting.runs == 4 and len(counting.graphs) == 2
    else:       # the break ran the compiled step (which runs a tensor lr's update eagerly)
        from numtorch._aot.optimizer import STEPS
        assert opt in STEPS


def test_a_scheduled_step_at_a_break_is_compiled():
    """Without fullgraph, a float lr: the update behind the scheduler's wrapper is traced
    as the compiled step (Note [Compiled optimizer step]), once per lr value."""
    from numtorch._aot.optimizer import STEPS
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref_model = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                    for m in (model, ref_model))
    sched, ref_sched = (torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
                        for o in (opt, ref_opt))
    step = torch.compile(training_step(model, opt), backend="aot_eager")
    x, y = _data()
    for _ in range(4):
        step(x, y)
        training_step(ref_model, ref_opt)(x, y)
        sched.step()
        ref_sched.step()
        _assert_same_state(model, ref_model)
    # first step (momentum made), then lr 0.1 and lr 0.05 with momentum: three traces
    assert [s.traces for s in STEPS[opt].values()] == [3]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_gradient_hooks_on_parameters(backend):
    """Note [Gradient hooks in one graph]: a hook that replaces the gradient (clipping)
    runs at every call, as in eager; a hook added after compiling recompiles."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref_model = copy.deepcopy(model)
    for m in (model, ref_model):
        m[0].weight.register_hook(lambda g: g.clamp(-0.01, 0.01))
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref_model))
    counting = Counting(backend)
    step = torch.compile(training_step(model, opt), fullgraph=True, backend=counting)
    x, y = _data()
    for k in range(4):
        if k == 2:
            for m in (model, ref_model):
                m[2].weight.register_hook(lambda g: g * 0.5)
        np.testing.assert_allclose(step(x, y).item(),
                                   training_step(ref_model, ref_opt)(x, y).item(),
                                   rtol=1e-5)
        _assert_same_state(model, ref_model)
    assert float(model[0].weight.grad.abs().max()) == pytest.approx(0.01)
    assert counting.runs == 4 and len(counting.graphs) == 2


def test_a_hook_with_a_python_side_effect_runs_at_every_call():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ref_model = copy.deepcopy(model)
    seen = {"compiled": [], "eager": []}
    for m, key in ((model, "compiled"), (ref_model, "eager")):
        m[2].bias.register_hook(lambda g, key=key: seen[key].append(tuple(g.shape)))
        m[0].bias.register_hook(lambda g, key=key: seen[key].append(tuple(g.shape)))
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref_model))
    step = torch.compile(training_step(model, opt), fullgraph=True, backend="aot_eager")
    for _ in range(3):
        step(*_data())
        training_step(ref_model, ref_opt)(*_data())
    # the same calls; numtorch's eager engine calls the two leaves' hooks in the other
    # order than PyTorch's (first layer first), the compiled step in PyTorch's
    assert sorted(seen["compiled"]) == sorted(seen["eager"]) and len(seen["eager"]) == 6
    assert seen["compiled"] == [(3,), (8,)] * 3
    _assert_same_state(model, ref_model)


def test_hook_order_is_pytorchs():
    """The order the compiled step runs leaf hooks in, against PyTorch's engine."""
    torch_ = pytest.importorskip("torch")
    m = torch_.nn.Sequential(torch_.nn.Linear(6, 8), torch_.nn.ReLU(), torch_.nn.Linear(8, 3))
    seen = []
    m[2].bias.register_hook(lambda g: seen.append(tuple(g.shape)))
    m[0].bias.register_hook(lambda g: seen.append(tuple(g.shape)))
    x, y = _data()
    torch_.nn.functional.cross_entropy(m(torch_.tensor(x.numpy())),
                                       torch_.tensor(y.numpy())).backward()
    assert seen == [(3,), (8,)]


@pytest.mark.parametrize("case, match", [
    ("inside", "Tensor.register_hook inside a fullgraph training step"),
    ("post_accumulate", "post-accumulate-grad hook"),
    ("bad_return", "not a gradient of the leaf's size"),
])
def test_unsupported_hooks_are_refused(case, match):
    model = nn.Linear(6, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = None
    if case == "post_accumulate":
        handle = model.weight.register_post_accumulate_grad_hook(lambda p: None)
    if case == "bad_return":
        model.bias.register_hook(lambda g: g.sum())

    def step(x):
        out = model(x)
        if case == "inside":
            out.register_hook(lambda g: g * 2)
        out.sum().backward()
        opt.step()
    try:
        with pytest.raises(Exception, match=match):
            torch.compile(step, fullgraph=True, backend="aot_eager")(_data()[0])
    finally:
        if handle is not None:
            handle.remove()     # the engine counts live registrations process-wide
