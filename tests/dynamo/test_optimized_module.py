"""``compile(module)`` is an ``nn.Module`` (Note [OptimizedModule is a Module] in
numtorch/_dynamo/api.py): the same names, modes, attribute forwarding and hooks as
PyTorch's OptimizedModule, checked side by side with torch where it is installed."""
import copy

import numpy as np
import pytest

import numtorch
import numtorch._dynamo as dynamo


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


def _observe(torch):
    """What a user sees of compile(module), as plain Python values."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.bn = nn.BatchNorm1d(3)
            self.scale = 2.0

        def forward(self, x):
            return self.bn(self.lin(x)) * self.scale

    seen = {}
    m = Net()
    om = torch.compile(m, backend="eager")
    seen["type"] = (type(om).__name__, [c.__name__ for c in type(om).__mro__],
                    isinstance(om, nn.Module))
    seen["parameters"] = [n for n, _ in om.named_parameters()]
    seen["state_dict"] = list(om.state_dict())
    seen["modules"] = [n for n, _ in om.named_modules()]
    seen["buffers"] = [n for n, _ in om.named_buffers()]
    seen["same parameters"] = [p is q for p, q in zip(om.parameters(), m.parameters())]
    modes = [(om.training, m.training)]
    om.eval()
    modes.append((om.training, m.training, m.bn.training))
    om.train()
    modes.append((om.training, m.bn.training))
    m.training = False
    modes.append(om.training)
    m.train()
    seen["modes"] = modes
    seen["forwarded read"] = (om.scale, om.lin is m.lin, om._orig_mod is m)
    om.scale = 3.0
    om.newattr = 5
    seen["forwarded write"] = (m.scale, "scale" in om.__dict__, m.newattr,
                               "newattr" in om.__dict__)
    seen["children"] = (len(list(om.children())), len(list(om.modules())))
    seen["len"] = len(torch.compile(nn.Sequential(nn.Linear(2, 2), nn.ReLU())))
    with pytest.raises(TypeError, match="does not support len"):
        len(om)
    seen["repr"] = repr(om).splitlines()[:2]
    om2 = torch.compile(Net())
    seen["load"] = str(om2.load_state_dict(om.state_dict()))
    seen["deepcopy"] = type(copy.deepcopy(om)).__name__
    calls = []
    x = torch.randn(5, 4)
    h = om.register_forward_hook(lambda mod, i, o: calls.append(("om", type(mod).__name__)))
    om(x)
    h.remove()
    h = m.register_forward_hook(lambda mod, i, o: calls.append(("m", type(mod).__name__)))
    om(x)
    h.remove()
    om(x)
    seen["hooks"] = calls
    return seen


def test_optimized_module_is_a_module():
    seen = _observe(numtorch)
    assert seen["type"] == ("OptimizedModule", ["OptimizedModule", "Module", "object"], True)
    assert seen["parameters"][0] == "_orig_mod.lin.weight"
    assert seen["state_dict"][-1] == "_orig_mod.bn.num_batches_tracked"
    assert seen["modes"] == [(True, True), (False, False, False), (True, True), False]
    assert seen["forwarded write"] == (3.0, False, 5, False)


def test_optimized_module_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _observe(numtorch), _observe(torch)
    assert ours == theirs


def test_optimizer_and_state_dict_through_the_compiled_module():
    """An optimizer built on compile(model).parameters() trains the original; a state dict
    saved from the compiled module loads into another compiled one, as in PyTorch."""
    torch = numtorch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    ref = copy.deepcopy(model)
    om = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(om.parameters(), lr=0.5)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    x = torch.randn(4, 3)
    for net, o in ((om, opt), (ref, ref_opt)):
        o.zero_grad()
        net(x).pow(2).sum().backward()
        o.step()
    np.testing.assert_allclose(model[0].weight.detach().numpy(),
                               ref[0].weight.detach().numpy(), rtol=1e-6)
    other = torch.compile(torch.nn.Sequential(torch.nn.Linear(3, 2)), backend="eager")
    other.load_state_dict(om.state_dict())
    np.testing.assert_array_equal(other._orig_mod[0].bias.detach().numpy(),
                                  model[0].bias.detach().numpy())
    restored = copy.deepcopy(om)
    assert type(restored) is type(om) and restored._orig_mod is not model
    np.testing.assert_allclose(restored(x).detach().numpy(), om(x).detach().numpy(),
                               rtol=1e-6)


def _module_level_backend(gm, example_inputs):
    return gm.forward


def _pickling(torch):
    """What pickling compile(module) does with each kind of backend, as plain values."""
    import pickle
    seen = {}
    for kind, backend in (("default", None), ("named", "eager"),
                          ("function", _module_level_backend),
                          ("lambda", lambda gm, ex: gm.forward)):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
        om = torch.compile(m) if backend is None else torch.compile(m, backend=backend)
        x = torch.ones(4, 3)
        ref = om(x).detach().numpy()
        try:
            loaded = pickle.loads(pickle.dumps(om))
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            seen[kind] = ("error", "lambda" in str(e))
            continue
        out = loaded(x).detach().numpy()
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        seen[kind] = (type(loaded).__name__, type(loaded._orig_mod).__name__,
                      loaded._orig_mod is not m)
    return seen


def test_pickling_matches_torch():
    torch = pytest.importorskip("torch")
    ours = _pickling(numtorch)
    assert ours["lambda"] == ("error", True)      # pickle's error names the lambda
    assert ours["function"] == ("OptimizedModule", "Sequential", True)
    assert ours == _pickling(torch)


def test_pickling_a_compiled_module_recompiles_with_the_same_arguments():
    import pickle
    m = numtorch.nn.Linear(3, 2)
    om = numtorch.compile(m, backend=_module_level_backend, dynamic=False, fullgraph=True)
    loaded = pickle.loads(pickle.dumps(om))
    ctx = loaded.dynamo_ctx
    assert ctx.spec == (_module_level_backend, None, None)
    assert (ctx.fullgraph, ctx.dynamic) == (True, False)


def test_pickling_a_module_compile_did_not_make_names_the_remedy():
    import pickle
    from numtorch._dynamo.api import OptimizedModule
    from numtorch._dynamo.eval_frame import CompileContext
    om = OptimizedModule(numtorch.nn.Linear(3, 2), CompileContext(lambda gm, ex: gm))
    with pytest.raises(TypeError, match="compile\\(\\) did not make.*pickle its _orig_mod"):
        pickle.dumps(om)
