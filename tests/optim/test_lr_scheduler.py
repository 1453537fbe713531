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
    "CyclicLR": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.3],
                                                               step_size_up=4),
    "CyclicLR-triangular2": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5, mode="triangular2",
        base_momentum=[0.7, 0.75], max_momentum=0.95),
    "CyclicLR-exp_range": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9),
    "CyclicLR-scale_fn-iterations": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 1 / (1 + 0.1 * x),
        scale_mode="iterations"),
    "CyclicLR-scale_fn-cycle-no-momentum": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=0, mode="bogus",
        scale_fn=lambda x: 0.5 ** x, cycle_momentum=False),
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


def test_cyclic_lr_cycles_adams_beta1_like_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("CyclicLR", "CyclicLR-exp_range"):
        assert _run(numtorch, name, 25, "Adam") == _run(torch, name, 25, "Adam"), name


def test_cyclic_lr_after_another_scheduler_and_its_state_dict():
    """Built after another scheduler, CyclicLR's first lr comes from the groups'
    ``initial_lr`` and later ones from ``base_lr``, as PyTorch's; a callable-object
    ``scale_fn`` is saved and restored through its ``__dict__``."""
    torch = pytest.importorskip("torch")

    class Halving:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, x):
            return self.rate ** x

    def run(lib):
        o = _optimizers(lib)
        lib.optim.lr_scheduler.StepLR(o, step_size=2)
        s = lib.optim.lr_scheduler.CyclicLR(o, base_lr=0.02, max_lr=0.2, step_size_up=3,
                                            scale_fn=Halving())
        out = [s.get_last_lr()]
        for _ in range(8):
            o.step(), s.step()
            out.append(s.get_last_lr())
        return out, s
    (ours, s_ours), (theirs, s_theirs) = run(numtorch), run(torch)
    assert ours == theirs
    sd, tsd = s_ours.state_dict(), s_theirs.state_dict()
    assert set(sd) == set(tsd) and sd["_scale_fn_custom"] == tsd["_scale_fn_custom"] == {"rate": 0.5}
    fn = Halving()
    fn.rate = 0.1
    o = _optimizers(numtorch)
    fresh = L.CyclicLR(o, base_lr=0.02, max_lr=0.2, step_size_up=3, scale_fn=fn)
    fresh.load_state_dict(sd)
    assert fn.rate == 0.5 and fresh.last_epoch == s_ours.last_epoch
    o.step(), fresh.step(), s_ours.step()
    assert fresh.get_last_lr() == s_ours.get_last_lr()


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
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        L.CyclicLR(o, 0.01, 0.1, mode="triangle")
    plain = numtorch.optim.Optimizer([numtorch.zeros(1, requires_grad=True)], {"lr": 0.1})
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.CyclicLR(plain, 0.01, 0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.OneCycleLR(plain, max_lr=1.0, total_steps=3)
    with pytest.raises(ValueError, match="base_lr must have the same length as optimizer.param_groups"):
        L.CyclicLR(o, [0.01], 0.1)
    with pytest.raises(ValueError, match="Expected positive step_size_up, but got 0"):
        L.CyclicLR(o, 0.01, 0.1, step_size_up=0)
    with pytest.raises(ValueError, match="scale_mode must be 'cycle' or 'iterations'"):
        L.CyclicLR(o, 0.01, 0.1, scale_fn=abs, scale_mode="epoch")
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(_optimizers(numtorch), step_size=1, last_epoch=3)
    assert math.isfinite(L.CosineAnnealingLR(o, T_max=1).get_last_lr()[0])


@pytest.mark.parametrize("module", ["numtorch.optim.lr_scheduler", "numtorch.optim._one_cycle",
                                    "numtorch.optim._cyclic"])
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
