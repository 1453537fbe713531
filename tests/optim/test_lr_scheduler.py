"""optim.lr_scheduler against PyTorch's, step by step: the same recursions give the same
floats (Note [Chainable schedules]), so learning rates are compared with ==."""
import math
import warnings

import pytest

import numtorch
from numtorch.optim import lr_scheduler as L


def _optimizers(lib, opt="SGD"):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if opt == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def _cos_warm(lib, o):
    return lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3),
            lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=1e-3)], milestones=[3])


SCHEDULES = {
    "StepLR": lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.3),
    "MultiStepLR": lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5),
    "ExponentialLR": lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.001),
    "LambdaLR": lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1 / (1 + e)]),
    "MultiplicativeLR": lambda lib, o: lib.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6),
    "ConstantLR": lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda lib, o: lib.optim.lr_scheduler.PolynomialLR(o, total_iters=8, power=2.0),
    "OneCycleLR": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=21),
    "OneCycleLR-3-linear": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.8, epochs=4, steps_per_epoch=5, three_phase=True, anneal_strategy="linear"),
    "SequentialLR": _cos_warm,
    "CosineAnnealingWarmRestarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01),
    "ChainedScheduler": lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9), lib.optim.lr_scheduler.StepLR(o, 4, 0.5)]),
}


def _run(lib, name, steps, opt="SGD"):
    o = _optimizers(lib, opt)
    s = SCHEDULES[name](lib, o)
    trace = [(s.get_last_lr(), [g.get("momentum", g.get("betas")) for g in o.param_groups])]
    for _ in range(steps):
        o.step()
        s.step()
        trace.append((list(s.get_last_lr()), [g.get("momentum", g.get("betas")) for g in o.param_groups]))
    return trace


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_learning_rates_equal_pytorchs_step_by_step(name):
    torch = pytest.importorskip("torch")
    steps = 20 if name.startswith("OneCycle") else 25
    assert _run(numtorch, name, steps) == _run(torch, name, steps)


def test_one_cycle_cycles_adams_beta1_like_pytorch():
    torch = pytest.importorskip("torch")
    assert _run(numtorch, "OneCycleLR", 20, "Adam") == _run(torch, "OneCycleLR", 20, "Adam")
    o = _optimizers(numtorch)
    s = L.OneCycleLR(o, max_lr=1.0, total_steps=2)
    o.step(), s.step(), o.step(), s.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        s.step()


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", threshold_mode="abs", threshold=0.1),
                                    dict(patience=0, cooldown=2, factor=0.5, min_lr=[0.01, 0.02])])
def test_reduce_lr_on_plateau_equals_pytorchs(kwargs):
    torch = pytest.importorskip("torch")
    metrics = [5.0, 4.0, 4.0, 3.9999, 4.1, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0,
               2.0] + [2.0] * 30

    def run(lib):
        o = _optimizers(lib)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(o, **kwargs)
        out = []
        for m in metrics:
            s.step(m)
            out.append((s.get_last_lr(), s.num_bad_epochs, s.cooldown_counter, s.best))
        return out
    assert run(numtorch) == run(torch)


def test_state_dict_matches_pytorchs_and_resumes():
    torch = pytest.importorskip("torch")
    for name in ("StepLR", "CosineAnnealingLR", "OneCycleLR", "SequentialLR", "MultiStepLR"):
        ours, theirs = _optimizers(numtorch), _optimizers(torch)
        s_ours, s_theirs = SCHEDULES[name](numtorch, ours), SCHEDULES[name](torch, theirs)
        for _ in range(4):
            ours.step(), s_ours.step(), theirs.step(), s_theirs.step()
        sd = s_ours.state_dict()
        assert set(sd) == set(s_theirs.state_dict()), name
        # resuming from a checkpoint (build both, then load the optimizer's state and the
        # scheduler's) continues exactly where the first run was
        fresh_opt = _optimizers(numtorch)
        fresh = SCHEDULES[name](numtorch, fresh_opt)
        fresh_opt.load_state_dict(ours.state_dict())
        fresh.load_state_dict(sd)
        for _ in range(5):
            ours.step(), s_ours.step(), fresh_opt.step(), fresh.step()
            assert fresh.get_last_lr() == s_ours.get_last_lr(), name


def test_closed_form_with_epoch_argument_warns_and_matches():
    o = _optimizers(numtorch)
    s = L.StepLR(o, step_size=2, gamma=0.5)
    o.step()
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
        s.step(5)
    assert s.get_last_lr() == [0.1 * 0.25, 0.05 * 0.25]


def test_stepping_before_the_optimizer_warns():
    o = _optimizers(numtorch)
    s = L.ExponentialLR(o, gamma=0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    o2 = _optimizers(numtorch)
    s2 = L.ExponentialLR(o2, gamma=0.5)
    o2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


def test_argument_errors():
    o = _optimizers(numtorch)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        L.StepLR([], step_size=1)
    with pytest.raises(ValueError, match="step_size should be a positive integer, got step_size=0"):
        L.StepLR(o, step_size=0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        L.LinearLR(o, start_factor=0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        L.LambdaLR(o, [lambda e: 1.0])
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        L.ReduceLROnPlateau(o, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        L.ReduceLROnPlateau(o, mode="avg")
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        L.OneCycleLR(o, max_lr=1.0)
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        L.OneCycleLR(o, max_lr=[1.0], total_steps=3)
    with pytest.raises(ValueError, match="number of milestones"):
        L.SequentialLR(o, [L.StepLR(o, 1)], milestones=[1])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        L.SequentialLR(o, [L.ReduceLROnPlateau(o), L.StepLR(o, 1)], milestones=[1])
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(_optimizers(numtorch), step_size=1, last_epoch=3)
    assert math.isfinite(L.CosineAnnealingLR(o, T_max=1).get_last_lr()[0])


@pytest.mark.parametrize("module", ["numtorch.optim.lr_scheduler", "numtorch.optim._one_cycle"])
def test_docstring_examples_run(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("t_mult", [1, 2])
def test_warm_restarts_with_fractional_epochs_equal_pytorchs(t_mult):
    torch = pytest.importorskip("torch")

    def run(lib):
        o = _optimizers(lib)
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=t_mult)
        out = []
        for epoch in range(7):
            for i in range(4):
                o.step()
                s.step(epoch + i / 4)
                out.append(s.get_last_lr())
        return out
    assert run(numtorch) == run(torch)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        L.CosineAnnealingWarmRestarts(_optimizers(numtorch), T_0=0)
