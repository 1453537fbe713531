"""Writes into module buffers inside a compiled region (Note [Writes into captured tensors]
in numtorch/_ops/inplace.py): BatchNorm trains compiled with no graph break and its running
statistics follow eager's exactly; a user module's own buffer write happens once per call."""
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


def _bn1d(momentum=0.1):
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=momentum), nn.ReLU(),
                         nn.Linear(3, 2))


def _bn2d(momentum=0.1):
    return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3, momentum=momentum), nn.ReLU(),
                         nn.Flatten(), nn.Linear(27, 2))


_MODELS = {"bn1d": (_bn1d, (6, 4)), "bn2d": (_bn2d, (4, 2, 5, 5))}


def _close(a, b, what):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=what)


def _train_both(make, shape, backend, steps=3):
    """Train a model eagerly and its copy compiled, step by step; compare everything."""
    torch.manual_seed(0)
    eager = make()
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend=backend)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, model)]
    for step in range(steps):
        x = torch.randn(*shape)
        outs = []
        for m, opt in zip((eager, compiled), opts):
            opt.zero_grad()
            y = m(x)
            (y * y).sum().backward()
            outs.append(y)
        _close(outs[0], outs[1], f"output at step {step}")
        for (name, p), q in zip(eager.named_parameters(), model.parameters()):
            _close(p.grad, q.grad, f"grad of {name} at step {step}")
        for (name, b), c in zip(eager.named_buffers(), model.buffers()):
            _close(b, c, f"buffer {name} at step {step}")
            assert b.dtype == c.dtype
        for opt in opts:
            opt.step()
    return eager, model, compiled


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("kind", sorted(_MODELS))
def test_batchnorm_trains_compiled_as_eager(kind, backend):
    make, shape = _MODELS[kind]
    eager, model, compiled = _train_both(make, shape, backend)
    bn, bn_ref = model[1], eager[1]
    assert int(bn.num_batches_tracked) == int(bn_ref.num_batches_tracked) == 3
    # the buffers are the same tensors as before, written in place (views stay live)
    assert bn.running_mean._version > 0
    # eval mode after training: the running statistics are read, and nothing is written
    eager.eval()
    model.eval()
    before = [b.clone() for b in model.buffers()]
    x = torch.randn(*shape)
    _close(eager(x), compiled(x), "eval output")
    for b, c in zip(before, model.buffers()):
        np.testing.assert_array_equal(b.numpy(), c.numpy())


@pytest.mark.parametrize("kind", sorted(_MODELS))
def test_batchnorm_training_is_one_graph_without_breaks(kind):
    make, shape = _MODELS[kind]
    torch.manual_seed(0)
    m = make()
    before = [b.clone() for b in m.buffers()]
    e = dynamo.explain(m)(torch.randn(*shape))
    assert (e.graph_count, e.graph_break_count) == (1, 0), str(e)
    # explain ran the compiled frame once: the statistics moved once
    assert int(m[1].num_batches_tracked) == 1
    assert not np.array_equal(before[0].numpy(), m[1].running_mean.numpy())


@pytest.mark.parametrize("kind", sorted(_MODELS))
def test_batchnorm_counts_match_torch(kind):
    torch_ = pytest.importorskip("torch")
    make, shape = _MODELS[kind]
    import torch.nn as tnn
    layers = {"bn1d": lambda: tnn.Sequential(tnn.Linear(4, 3), tnn.BatchNorm1d(3), tnn.ReLU(),
                                             tnn.Linear(3, 2)),
              "bn2d": lambda: tnn.Sequential(tnn.Conv2d(2, 3, 3), tnn.BatchNorm2d(3),
                                             tnn.ReLU(), tnn.Flatten(), tnn.Linear(27, 2))}
    torch_._dynamo.reset()
    e = torch_._dynamo.explain(layers[kind]())(torch_.randn(*shape))
    torch_._dynamo.reset()
    assert (e.graph_count, e.graph_break_count) == (1, 0)


def test_switching_to_eval_recompiles():
    """A library module's ``training`` flag is guarded: eval() after a compiled training
    call must not reuse the training graph (it did, silently)."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Dropout(0.5))
    c = torch.compile(m, backend="eager")
    x = torch.randn(5, 4)
    c(x)
    m.eval()
    _close(m(x), c(x), "eval output")
    assert int(m[1].num_batches_tracked) == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_cumulative_average_batchnorm(backend):
    """momentum=None: the factor 1 / num_batches_tracked is computed as a tensor (it was
    float() of one, a graph break), so the step is one graph; results and statistics equal
    eager's. (torch.compile's explain reports 0 graphs here: Dynamo breaks at the float().)"""
    _train_both(lambda: _bn1d(momentum=None), (6, 4), backend)
    torch.manual_seed(0)
    e = dynamo.explain(_bn1d(momentum=None))(torch.randn(6, 4))
    assert (e.graph_count, e.graph_break_count) == (1, 0)


class _Accumulates(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("buf", torch.zeros(()))

    def forward(self, x):
        self.buf.add_(x.sum())
        return self.lin(x) * self.buf


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_user_module_writes_its_buffer_once_per_call(backend):
    torch.manual_seed(0)
    eager = _Accumulates()
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend=backend)
    for step in range(3):
        x = torch.randn(2, 3)
        _close(eager(x), compiled(x), f"output at step {step}")
        _close(eager.buf, model.buf, f"buf at step {step}")
    e = dynamo.explain(_Accumulates())(torch.randn(2, 3))
    assert (e.graph_count, e.graph_break_count) == (1, 0)


def test_buffer_write_before_a_break_happens_once_and_in_order(capsys):
    """The write-back runs before the breaking instruction: code after the break sees the
    new statistics, and a failed first capture attempt left no write behind."""
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3)

    def f(x):
        y = bn(x)
        print("count", int(bn.num_batches_tracked))
        return y + bn.running_mean

    ref_bn = copy.deepcopy(bn)
    x = torch.randn(4, 3)
    got = torch.compile(f, backend="eager")(x)
    printed = capsys.readouterr().out
    y = ref_bn(x)
    _close(y + ref_bn.running_mean, got, "output")
    assert printed == "count 1\n"
    _close(ref_bn.running_var, bn.running_var, "running_var")
