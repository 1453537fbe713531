"""DDPOptimizer (numtorch/_dynamo/ddp_optimizer.py) in one process, without MPI: a compiled
graph split into pieces of about ``bucket_bytes_cap`` parameter bytes, each compiled by the
backend on its own, computes what the whole graph computes. The split of real DDP modules on
2 ranks (overlap, training) is checked in scripts/ddp.py."""
import numpy as np
import pytest

import numtorch as torch
from numtorch import nn
from numtorch._dynamo.ddp_optimizer import DDPOptimizer


class Counter(nn.Module):
    """An MLP that also counts its calls in a buffer (an in-place write in the graph)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(5, 16, dtype=torch.float64)    # 640 + 128 bytes
        self.b = nn.Linear(16, 16, dtype=torch.float64)   # 2048 + 128
        self.c = nn.Linear(16, 3, dtype=torch.float64)    # 384 + 24
        self.register_buffer("calls", torch.zeros((), dtype=torch.float64))

    def forward(self, x):
        self.calls.add_(1)
        return self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))


def backend_recording(graphs):
    def backend(gm, example_inputs):
        graphs.append(gm._graph)
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    return backend


def grads_and_state(model, fn, x):
    model.zero_grad()
    out = fn(x)
    out.square().sum().backward()
    return [out.detach().numpy()] + [p.grad.numpy().copy() for p in model.parameters()] + \
        [model.calls.numpy().copy()]


@pytest.mark.parametrize("cap, pieces", [(10_000, 1), (1000, 2), (500, 3), (100, 5)])
def test_split_graph_computes_what_the_whole_graph_computes(cap, pieces):
    graphs = []
    opt = DDPOptimizer(cap, backend_recording(graphs))
    model, ref = Counter(), Counter()
    compiled = torch.compile(model, backend=opt.compile_fn)
    x = torch.randn(4, 5, dtype=torch.float64)
    for _ in range(2):
        got, want = grads_and_state(model, compiled, x), grads_and_state(ref, ref, x)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert len(graphs) == pieces
    assert len(opt.buckets) == pieces
    # pieces hold the parameters in graph order; each at least `cap` bytes but the first
    names = [n for bucket in opt.buckets for n in bucket]
    assert len(names) == 6 and sorted(names) == names   # c0..c5, read in order
    sizes = [sum(c.value.numel() * 8 for c in g.consts if c.value.requires_grad)
             for g in graphs]
    assert all(s >= cap for s in sizes[1:]) and sum(sizes) == 3352


def test_symbolic_graph_stays_whole():
    graphs = []
    opt = DDPOptimizer(100, backend_recording(graphs))
    model = Counter()
    compiled = torch.compile(model, backend=opt.compile_fn, dynamic=True)
    x = torch.randn(4, 5, dtype=torch.float64)
    np.testing.assert_allclose(compiled(x).detach().numpy(), Counter()(x).detach().numpy(),
                               rtol=1e-12)
    assert len(graphs) == 1 and graphs[0].shape_env is not None


def test_optimize_ddp_is_a_config_flag():
    assert torch._dynamo.config.optimize_ddp is True


@pytest.mark.parametrize("value, mode", [
    (True, "ddp_optimizer"), (False, "no_optimization"), ("ddp_optimizer", "ddp_optimizer"),
    ("no_optimization", "no_optimization"), ("python_reducer", "python_reducer"),
    ("python_reducer_without_compiled_forward", "python_reducer_without_compiled_forward")])
def test_optimize_ddp_takes_pytorchs_values(monkeypatch, value, mode):
    # Note [optimize_ddp modes]: only "ddp_optimizer" splits graphs
    from numtorch._dynamo.ddp_optimizer import _split_enabled, optimize_ddp_mode
    monkeypatch.setattr(torch._dynamo.config, "optimize_ddp", value)
    assert optimize_ddp_mode() == mode
    assert _split_enabled() is (mode == "ddp_optimizer")


def test_optimize_ddp_modes_are_pytorchs():
    torch_ = pytest.importorskip("torch")
    from numtorch._dynamo.ddp_optimizer import MODES
    assert set(MODES) == set(torch_._dynamo.utils._ddp_optimization_mode)


@pytest.mark.parametrize("value", ["fast", 1, None])
def test_optimize_ddp_rejects_other_values(monkeypatch, value):
    from numtorch._dynamo.ddp_optimizer import optimize_ddp_mode
    monkeypatch.setattr(torch._dynamo.config, "optimize_ddp", value)
    with pytest.raises(ValueError, match="optimize_ddp must be True, False or one of "
                                         "'ddp_optimizer', 'python_reducer'"):
        optimize_ddp_mode()
