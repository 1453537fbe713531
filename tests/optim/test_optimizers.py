"""Optimizers: step-by-step agreement with PyTorch's single-tensor implementations, the
Optimizer base (groups, state, state_dict, zero_grad, closures, hooks) and its errors."""
import copy
import time

import numpy as np
import pytest

import numtorch as nt

rng = np.random.default_rng(0)
SHAPES = [(4, 3), (3,), (2, 2, 2)]


def _oracle():
    return pytest.importorskip("torch")


def _params(lib, dtype):
    g = np.random.default_rng(5)
    return [lib.tensor(g.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]


def _loss(lib, params, step):
    # A non-quadratic loss whose gradients change every step.
    total = 0
    for i, p in enumerate(params):
        total = total + (lib.sin(p * (i + 1 + 0.1 * step)) * p).sum() + (p ** 4).sum() * 0.01
    return total


def _run(lib, opt_cls, kwargs, dtype, steps, groups=False, closure=False):
    params = _params(lib, dtype)
    if groups:
        spec = [{"params": params[:1], "lr": 0.05}, {"params": params[1:]}]
    else:
        spec = params
    opt = getattr(lib.optim, opt_cls)(spec, **kwargs)
    for step in range(steps):
        def f():
            opt.zero_grad()
            loss = _loss(lib, params, step)
            loss.backward()
            return loss
        if closure:
            opt.step(f)
        else:
            f()
            opt.step()
    return params, opt


CASES = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("Adam", {}), ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.02, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.02, "weight_decay": 0.05, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.03}), ("AdamW", {"lr": 0.03, "weight_decay": 0.3, "amsgrad": True}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opt_cls,kwargs", CASES, ids=str)
def test_optimizer_steps_match_torch(opt_cls, kwargs, dtype):
    torch = _oracle()
    ours, o1 = _run(nt, opt_cls, kwargs, dtype, 8, groups=True)
    theirs, o2 = _run(torch, opt_cls, kwargs, dtype, 8, groups=True)
    rtol, atol = (2e-5, 1e-6) if dtype == "float32" else (1e-11, 1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    for a, b in zip(ours, theirs):
        sa, sb = o1.state[a], o2.state[b]
        assert set(sa) == set(sb)
        for k in sa:
            np.testing.assert_allclose(np.asarray(sa[k].numpy() if hasattr(sa[k], "numpy") else sa[k]),
                                       sb[k].numpy(), rtol=rtol, atol=atol)


def test_sgd_against_hand_computed_update():
    p = nt.tensor([1.0, -2.0], dtype=nt.float64, requires_grad=True)
    opt = nt.optim.SGD([p], lr=0.1, momentum=0.5, weight_decay=0.2)
    p.grad = nt.tensor([0.5, 0.5], dtype=nt.float64)
    opt.step()
    g1 = np.array([0.5, 0.5]) + 0.2 * np.array([1.0, -2.0])
    p1 = np.array([1.0, -2.0]) - 0.1 * g1
    np.testing.assert_allclose(p.detach().numpy(), p1)
    opt.step()
    g2 = np.array([0.5, 0.5]) + 0.2 * p1
    buf = 0.5 * g1 + g2
    np.testing.assert_allclose(p.detach().numpy(), p1 - 0.1 * buf)


def test_adam_first_step_moves_each_coordinate_by_lr():
    p = nt.tensor([1.0, -2.0, 3.0], dtype=nt.float64, requires_grad=True)
    opt = nt.optim.Adam([p], lr=0.01)
    p.grad = nt.tensor([0.3, -5.0, 1e-3], dtype=nt.float64)
    opt.step()
    # m_hat = g, v_hat = g^2: the first step is lr * sign(g) (up to eps).
    np.testing.assert_allclose(p.detach().numpy(), [0.99, -1.99, 2.99], rtol=1e-6)
    assert opt.state[p]["step"].item() == 1.0 and opt.state[p]["step"].dtype == nt.float32


def test_closure_is_evaluated_with_grad_enabled_and_its_loss_returned():
    torch = _oracle()
    ours, _ = _run(nt, "SGD", {"lr": 0.1, "momentum": 0.9}, "float64", 5, closure=True)
    theirs, _ = _run(torch, "SGD", {"lr": 0.1, "momentum": 0.9}, "float64", 5, closure=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    p = nt.ones(2, requires_grad=True)
    opt = nt.optim.Adam([p])

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    with nt.no_grad():
        assert opt.step(closure).item() == 2.0


def test_step_runs_under_no_grad_and_skips_params_without_grad():
    a = nt.ones(2, requires_grad=True)
    b = nt.ones(2, requires_grad=True)
    opt = nt.optim.SGD([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    assert a.grad_fn is None and a.is_leaf and a.tolist() == [-0.5, -0.5]
    assert b.tolist() == [1.0, 1.0] and b not in opt.state


def test_zero_grad_sets_none_or_zeroes():
    p = nt.ones(3, requires_grad=True)
    opt = nt.optim.SGD([p], lr=0.1)
    p.sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


# ---------------------------------------------------------------------------------------
# state dicts

def test_state_dict_round_trip_continues_identically():
    params, opt = _run(nt, "Adam", {"lr": 0.05, "amsgrad": True}, "float64", 3)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1, 2] and set(sd["state"]) == {0, 1, 2}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    clone_params = [p.detach().clone().requires_grad_(True) for p in params]
    opt2 = nt.optim.Adam(clone_params, lr=0.05, amsgrad=True)
    opt2.load_state_dict(copy.deepcopy(sd))
    for opt_, ps in ((opt, params), (opt2, clone_params)):
        for step in range(3, 6):
            opt_.zero_grad()
            _loss(nt, ps, step).backward()
            opt_.step()
    for a, b in zip(params, clone_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_state_dict_matches_torch_layout_and_loads_from_it():
    torch = _oracle()
    _, ours = _run(nt, "SGD", {"lr": 0.1, "momentum": 0.9}, "float64", 2, groups=True)
    _, theirs = _run(torch, "SGD", {"lr": 0.1, "momentum": 0.9}, "float64", 2, groups=True)
    a, b = ours.state_dict(), theirs.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert set(a["state"]) == set(b["state"])
    converted = {"param_groups": b["param_groups"],
                 "state": {k: {"momentum_buffer": nt.tensor(v["momentum_buffer"].numpy())}
                           for k, v in b["state"].items()}}
    ours.load_state_dict(converted)
    for p, q in zip(ours.param_groups[1]["params"], theirs.param_groups[1]["params"]):
        np.testing.assert_array_equal(ours.state[p]["momentum_buffer"].numpy(),
                                      theirs.state[q]["momentum_buffer"].numpy())


def test_load_state_dict_casts_state_to_param_dtype_and_checks_groups():
    p = nt.ones(2, dtype=nt.float64, requires_grad=True)
    opt = nt.optim.Adam([p])
    opt.load_state_dict({"state": {0: {"step": nt.tensor(3.0), "exp_avg": nt.ones(2),
                                       "exp_avg_sq": nt.ones(2)}},
                         "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
    assert opt.state[p]["exp_avg"].dtype == nt.float64 and opt.state[p]["step"].dtype == nt.float32
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that doesn't "
                                         "match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 1}]})


# ---------------------------------------------------------------------------------------
# groups, repr, hooks, errors

def test_param_groups_defaults_repr_and_named_params():
    torch = _oracle()
    a, b = nt.ones(1, requires_grad=True), nt.ones(1, requires_grad=True)
    opt = nt.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.defaults["momentum"] == 0.9
    ta, tb = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    assert repr(opt) == repr(torch.optim.SGD([{"params": [ta]}, {"params": tb, "lr": 0.5}], lr=0.1,
                                             momentum=0.9))
    assert repr(nt.optim.Adam([a])) == repr(torch.optim.Adam([ta]))
    c = nt.ones(1, requires_grad=True)
    opt.add_param_group({"params": [c], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0
    model = nt.nn.Linear(2, 2)
    named = nt.optim.Adam(model.named_parameters())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]


def test_step_hooks():
    p = nt.ones(1, requires_grad=True)
    opt = nt.optim.SGD([p], lr=1.0)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    p.grad = nt.ones(1)
    opt.step()
    h1.remove()
    opt.step()
    assert calls == ["pre", "post", "post"]


def test_optimizer_errors_match_torch():
    p = nt.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        nt.optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -1"):
        nt.optim.SGD([p], lr=0.1, momentum=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        nt.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        nt.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts, but got torch.FloatTensor"):
        nt.optim.SGD(nt.zeros(1), lr=0.1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        nt.optim.Adam([p], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        nt.optim.Adam([p], eps=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -1"):
        nt.optim.AdamW([p], weight_decay=-1)
    opt = nt.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        nt.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        nt.optim.SGD([1], lr=0.1)
    assert nt.optim.SGD([p]).defaults["lr"] == 1e-3


# ---------------------------------------------------------------------------------------
# speed: the update is a handful of in-place NumPy kernels per parameter

def test_sgd_step_on_an_mlp_is_cheap():
    model = nt.nn.Sequential(nt.nn.Linear(784, 512), nt.nn.ReLU(), nt.nn.Linear(512, 256),
                             nt.nn.ReLU(), nt.nn.Linear(256, 10))
    opt = nt.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for p in model.parameters():
        p.grad = nt.randn(*p.shape)
    opt.step()
    t0 = time.perf_counter()
    for _ in range(20):
        opt.step()
    per_step = (time.perf_counter() - t0) / 20
    # ~535k parameters: a few memory passes each; generous bound for a loaded 2-core machine.
    assert per_step < 0.05, f"SGD step took {per_step * 1e3:.1f} ms"
