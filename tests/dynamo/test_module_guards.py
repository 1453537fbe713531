"""Guards on what numtorch's own modules read (Note [Library modules' state is guarded] in
numtorch/_dynamo/capture.py): a library module runs natively in a capture, so a change of
its attributes, submodules or forward hooks after compiling must recompile, never return
the graph captured with the old values. Each test changes one thing between two compiled
calls and compares with eager (each of these returned a stale result before the guard)."""
import copy

import numpy as np
import pytest

import numtorch as torch
import numtorch._dynamo as dynamo
import numtorch.nn as nn


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


def _close(a, b, what=""):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=what)


class _Net(nn.Module):
    """A user module around library ones: its forward is inlined, theirs run natively."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.LeakyReLU(0.1))

    def forward(self, x):
        return self.body(x) * 2


def _pair():
    torch.manual_seed(0)
    eager = _Net()
    model = copy.deepcopy(eager)
    return eager, model, torch.compile(model, backend="eager")


def _changes():
    def slope(m):
        m.body[2].negative_slope = 0.5

    def eps(m):
        m.body[1].eps = 10.0

    def momentum(m):
        m.body[1].momentum = 0.9

    def swap(m):
        m.body[2] = nn.Tanh()

    def hook(m):
        m.body[0].register_forward_hook(lambda mod, inp, out: out * 10)

    def pre_hook(m):
        m.body[2].register_forward_pre_hook(lambda mod, inp: (inp[0] - 1,))
    return {f.__name__: f for f in (slope, eps, momentum, swap, hook, pre_hook)}


@pytest.mark.parametrize("change", sorted(_changes()))
def test_a_change_after_compiling_recompiles(change):
    eager, model, compiled = _pair()
    x = torch.randn(6, 4)
    _close(eager(x), compiled(x), "before the change")
    for m in (eager, model):
        _changes()[change](m)
    x = torch.randn(6, 4)
    _close(eager(x), compiled(x), f"after {change}")
    for (name, b), c in zip(eager.named_buffers(), model.buffers()):
        _close(b, c, f"buffer {name} after {change}")


def test_unchanged_modules_hit_the_cache_and_the_reason_names_the_attribute():
    _, model, compiled = _pair()
    x = torch.randn(6, 4)
    for _ in range(3):
        compiled(x)
    from numtorch._dynamo import eval_frame
    caches = [c for (code, _), c in eval_frame._CACHES.items() if code.co_name == "forward"]
    assert [len(c.entries) for c in caches] == [1]
    model.body[1].momentum = 0.5
    compiled(x)
    assert len(caches[0].entries) == 2
    assert "momentum=0.1" in caches[0].recompile_reasons[-1]


def test_conv_stride_change_recompiles():
    torch.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3)
    f = torch.compile(lambda x: conv(x).relu(), backend="eager")
    x = torch.randn(1, 2, 7, 7)
    f(x)
    conv.stride = (2, 2)
    out = f(x)
    assert out.shape == (1, 3, 3, 3)
    _close(out, conv(x).relu())


def test_matches_torch_recompiling_on_a_changed_attribute():
    torch_ = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter
    counts = {}
    for name, lib in (("numtorch", torch), ("torch", torch_)):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.LeakyReLU(0.1))
        lib._dynamo.reset()
        if name == "torch":
            cnt = CompileCounter()
            f = lib.compile(m, backend=cnt)
        else:
            cnt = []
            f = lib.compile(m, backend=lambda gm, ex: cnt.append(gm) or gm.forward)
        x = lib.ones(2, 4)
        f(x)
        f(x)
        m[1].negative_slope = 0.3
        f(x)
        counts[name] = cnt.frame_count if name == "torch" else len(cnt)
        lib._dynamo.reset()
    assert counts["numtorch"] == counts["torch"] == 2


def test_user_module_from_exec_code_is_inlined_and_counts_each_call():
    """A class made by code exec'd without a __name__ has __module__ 'builtins'; it is
    still the user's: its forward is inlined (it was run natively, at capture only). The
    counter is a guarded constant, so each call recompiles, as in torch.compile."""
    ns = {"torch": torch}
    exec("class M(torch.nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.lin = torch.nn.Linear(2, 2)\n"
         "        self.calls = 0\n"
         "    def forward(self, x):\n"
         "        self.calls = self.calls + 1\n"
         "        return self.lin(x)\n", ns)
    m = ns["M"]()
    assert m.__class__.__module__ == "builtins"
    from numtorch._dynamo.builtins_table import user_code
    assert user_code(ns["M"]) and not user_code(int) and not user_code(dict)
    f = torch.compile(lambda x: m(x).sum(), backend="eager")
    for i in range(1, 4):
        _close(f(torch.ones(1, 2)), m.lin(torch.ones(1, 2)).sum())
        assert m.calls == i
