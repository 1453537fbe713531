"""Compiled optimizer steps (numtorch/_aot/optimizer.py): ``compile(opt.step)`` and a
compiled function calling ``opt.step()`` run the update as one compiled graph.

Oracle: the same optimizer stepped eagerly on a deep copy of the model, from the same
gradients. The update runs the same primitives on the same values and the inductor builds
without fp contraction, so parameters and state must be bit-equal (assert_array_equal).
"""
import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn
from numtorch._aot.optimizer import STEPS

OPTIMIZERS = {
    "sgd_momentum_wd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True,
                                               dampening=0),
    "sgd_plain": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "adam_wd": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1),
    "adam_amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.01, amsgrad=True),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))


def _grads(model, k):
    """Deterministic gradients for step ``k`` (the same for both copies)."""
    rng = np.random.default_rng(k)
    for p in model.parameters():
        p.grad = torch.tensor(rng.standard_normal(p.shape).astype(np.float32))


def _run(model, opt, step, steps=4):
    for k in range(steps):
        _grads(model, k)
        step()


def _state_arrays(opt):
    return [(k, v.numpy().copy()) for s in opt.state.values() for k, v in sorted(s.items())
            if isinstance(v, torch.Tensor)]


def _assert_same(model, opt, ref_model, ref_opt):
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    a, b = _state_arrays(opt), _state_arrays(ref_opt)
    assert [k for k, _ in a] == [k for k, _ in b]
    for (k, x), (_, y) in zip(a, b):
        np.testing.assert_array_equal(x, y, err_msg=k)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_opt_step_is_bit_equal_to_eager(name, backend):
    if backend == "inductor" and name not in ("sgd_momentum_wd", "adamw"):
        pytest.skip("inductor: one SGD and one Adam variant keep the suite fast")
    model = _model()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](ref_model.parameters())
    step = torch.compile(opt.step, backend=backend)
    _run(model, opt, step)
    _run(ref_model, ref_opt, ref_opt.step)
    _assert_same(model, opt, ref_model, ref_opt)
    # the parameters moved, and the update was traced twice (the first step creates the
    # state, the later ones update it; plain SGD has none), not once per step
    assert not np.array_equal(model[0].weight.detach().numpy(), _model()[0].weight.detach().numpy())
    (compiled,) = STEPS[opt].values()
    assert compiled.traces == (2 if opt.state else 1)


def test_inductor_step_is_one_kernel_without_externs():
    """SGD with momentum and weight decay over all parameters: one fused kernel (Note
    [Horizontal fusion] in _inductor/scheduler.py), the writes taken out of the graph
    (Note [Writes leave the step graph])."""
    model = _model()
    opt = OPTIMIZERS["sgd_momentum_wd"](model.parameters())
    step = torch.compile(opt.step)
    _run(model, opt, step, steps=2)
    (compiled,) = STEPS[opt].values()
    for run, _ in compiled.cache.values():
        kernels = run.compiled.kernels
        assert (kernels.kernel_count, kernels.extern_count) == (1, 0), kernels


def test_step_called_by_a_compiled_function_runs_compiled():
    """The FAQ's training step: opt.step() after backward's break runs its compiled update."""
    model = _model()
    ref_model = copy.deepcopy(model)
    x = torch.randn(6, 5)

    def train(model, opt):
        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        return step
    opt = OPTIMIZERS["adamw"](model.parameters())
    ref_opt = OPTIMIZERS["adamw"](ref_model.parameters())
    step, ref_step = torch.compile(train(model, opt), backend="eager"), train(ref_model, ref_opt)
    for _ in range(3):
        step(x)
        ref_step(x)
    (compiled,) = STEPS[opt].values()
    assert compiled.traces == 2
    _assert_same(model, opt, ref_model, ref_opt)


def test_changed_lr_retraces_and_matches_eager():
    model = _model()
    ref_model = copy.deepcopy(model)
    opt = OPTIMIZERS["sgd_momentum_wd"](model.parameters())
    ref_opt = OPTIMIZERS["sgd_momentum_wd"](ref_model.parameters())
    step = torch.compile(opt.step, backend="aot_eager")
    _run(model, opt, step, steps=2)
    _run(ref_model, ref_opt, ref_opt.step, steps=2)
    for o in (opt, ref_opt):
        o.param_groups[0]["lr"] = 0.01
    _run(model, opt, step, steps=2)
    _run(ref_model, ref_opt, ref_opt.step, steps=2)
    _assert_same(model, opt, ref_model, ref_opt)
    (compiled,) = STEPS[opt].values()
    assert compiled.traces == 3


def test_hooks_closure_and_params_without_grad():
    model = _model()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = (OPTIMIZERS["adam_wd"](m.parameters()) for m in (model, ref_model))
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    step = torch.compile(opt.step, backend="aot_eager")
    for m, o, s in ((model, opt, step), (ref_model, ref_opt, ref_opt.step)):
        _grads(m, 0)
        m[2].bias.grad = None                 # skipped by the step, as in eager
        assert s(lambda: torch.tensor(3.0)).item() == 3.0
    assert calls == ["pre", "post"]
    _assert_same(model, opt, ref_model, ref_opt)
    assert model[2].bias not in opt.state


def test_tensor_lr_runs_eagerly_and_matches():
    model = _model()
    ref_model = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.1), momentum=0.9)
    ref_opt = torch.optim.SGD(ref_model.parameters(), lr=torch.tensor(0.1), momentum=0.9)
    _run(model, opt, torch.compile(opt.step, backend="aot_eager"), steps=2)
    _run(ref_model, ref_opt, ref_opt.step, steps=2)
    _assert_same(model, opt, ref_model, ref_opt)
    (compiled,) = STEPS[opt].values()
    assert compiled.traces == 0


def test_compiled_step_bumps_versions_and_keeps_parameters_leaves():
    model = _model()
    opt = OPTIMIZERS["sgd_momentum_wd"](model.parameters())
    step = torch.compile(opt.step, backend="aot_eager")
    w = model[0].weight
    before = w._version
    _run(model, opt, step, steps=2)
    assert w._version > before
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_in_place_update_under_no_grad_compiles(backend):
    """A graph that writes its inputs, with no input needing grad, runs its writes (was
    an error under aot_eager: the runner takes pure graphs only)."""
    w = torch.ones(3, requires_grad=True)
    g = torch.full((3,), 2.0)

    @torch.compile(backend=backend)
    def update(w, g):
        with torch.no_grad():
            w.add_(g, alpha=-0.5)
    update(w, g)
    np.testing.assert_array_equal(w.detach().numpy(), np.zeros(3, np.float32))


def test_lr_changing_every_step_stops_retracing_at_the_cache_limit():
    from numtorch._dynamo import config
    model = _model()
    ref_model = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref_model))
    step = torch.compile(opt.step, backend="eager")
    with pytest.warns(UserWarning, match="cache_size_limit"):
        for k in range(config.cache_size_limit + 3):
            for o in (opt, ref_opt):
                o.param_groups[0]["lr"] = 0.1 / (k + 1)
            _run(model, opt, step, steps=1)
            _run(ref_model, ref_opt, ref_opt.step, steps=1)
    _assert_same(model, opt, ref_model, ref_opt)
    (compiled,) = STEPS[opt].values()
    assert compiled.traces == config.cache_size_limit
