"""The recorded (requires-grad) eager path, checked against PyTorch: the one-node mean
(Note [Mean as one node], _ops/reduce.py), nodes made by the streamlined recording
(Note [Recording a node], autograd/engine.py) and the engine loop's checks: grad_fn
names, next_functions, gradients and double backward bit for bit, hooks, retain_graph
and in-place errors."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt

torch = pytest.importorskip("torch")


def _pair(a, requires_grad=True):
    a = np.asarray(a, np.float32)
    return (nt.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _names(node):
    """(name, sorted names of next functions) as both libraries print them."""
    nexts = [None if f is None else type(f).__name__ if not hasattr(f, "name") else f.name()
             for f, _ in node.next_functions]
    nexts = ["AccumulateGrad" if n and n.endswith("AccumulateGrad") else n for n in nexts]
    return node.name(), nexts


def _x():
    return np.linspace(-1.5, 2.0, 12, dtype=np.float32).reshape(3, 4)


def test_mean_is_one_node_like_pytorchs():
    (x, tx) = _pair(_x())
    y, ty = (x * 2).mean(), (tx * 2).mean()
    assert _names(y.grad_fn) == _names(ty.grad_fn) == ("MeanBackward0", ["MulBackward0"])
    leaf_mean, tleaf_mean = x.mean(), tx.mean()
    assert _names(leaf_mean.grad_fn) == _names(tleaf_mean.grad_fn) == ("MeanBackward0", ["AccumulateGrad"])
    assert leaf_mean.item() == tleaf_mean.item()
    y.backward()
    ty.backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_mean_value_and_gradients_are_the_two_primitives(shape):
    # the one node computes what sum(x) / n computed, bit for bit (Note [Mean as one node])
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x = nt.tensor(a, requires_grad=True)
    y = x.mean()
    ref = nt.tensor(a, requires_grad=True)
    r = ref.sum() / a.size
    assert y.numpy(force=True).tobytes() == r.numpy(force=True).tobytes()
    g, = nt.autograd.grad(y * y, x, create_graph=True)
    gr, = nt.autograd.grad(r * r, ref, create_graph=True)
    assert g.detach().numpy().tobytes() == gr.detach().numpy().tobytes()
    h, = nt.autograd.grad((g * g).sum(), x)
    hr, = nt.autograd.grad((gr * gr).sum(), ref)
    assert h.numpy().tobytes() == hr.numpy().tobytes()
    t = torch.tensor(a, requires_grad=True)
    tg, = torch.autograd.grad(t.mean() * t.mean(), t, create_graph=True)
    th, = torch.autograd.grad((tg * tg).sum(), t)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-4, atol=1e-7)


def test_mean_reads_no_value_so_an_inplace_write_is_fine():
    # PyTorch's MeanBackward0 saves only sizes: writing x afterwards is no error in either
    for lib in (nt, torch):
        x = lib.ones(3, 4, requires_grad=True)
        h = x * 1
        y = h.mean()
        with lib.no_grad():
            h.add_(1)
        y.backward()
        np.testing.assert_array_equal(np.asarray(x.grad.tolist()), np.full((3, 4), 1 / 12, np.float32))


def test_mean_node_hooks_and_retain_graph():
    for lib in (nt, torch):
        x = lib.tensor(_x(), requires_grad=True)
        y = (x * 3).mean()
        seen = []
        y.grad_fn.register_prehook(lambda g: seen.append(("pre", None)))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi[0].shape == (3, 4))))
        y.backward(retain_graph=True)
        y.backward()
        assert seen == [("pre", None), ("post", True)] * 2, lib
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


def test_mean_with_dim_and_under_transforms_keeps_the_general_path():
    x = nt.tensor(_x(), requires_grad=True)
    assert x.mean(1).grad_fn.name() == "MeanBackward1"
    g = nt.func.grad(lambda v: (v * v).mean())(nt.tensor(_x()))
    np.testing.assert_allclose(g.numpy(), 2 * _x() / 12, rtol=1e-6)
    assert nt.nn.functional.mse_loss(x, x.detach() * 0).grad_fn.name() == "MseLossBackward0"


@pytest.mark.parametrize("case", ["mul reads both", "mul by a number", "exp reads its output",
                                  "mul reads the other operand"])
def test_modified_saved_value_raises_as_in_pytorch(case):
    for lib in (nt, torch):
        a = lib.tensor(_x(), requires_grad=True)
        u, v = a * 1, lib.tensor(_x() + 1, requires_grad=case != "mul reads the other operand")
        if case == "mul reads both":
            y, written = u * v, u
        elif case == "mul by a number":
            y, written = u * 2, u      # reads the number, not u
        elif case == "exp reads its output":
            y = u.exp()
            written = y
        else:
            y, written = u * v, v
        with lib.no_grad():
            written.add_(1)
        if case == "mul by a number":
            y.sum().backward()
            continue
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_where_three_operands_checks_all_reads():
    # a node reading three values (select reads its condition) still checks each version
    x = nt.tensor(_x(), requires_grad=True)
    c = x > 0
    y = nt.where(c, x * 2, x * 3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(_x() > 0, 2, 3).astype(np.float32))


def test_binary_recorded_ops_match_pytorch_structure():
    (x, tx), (w, tw) = _pair(_x()), _pair(_x().T + 0.5)
    for f in (lambda a, b: a * a, lambda a, b: a - a.exp(), lambda a, b: a @ b,
              lambda a, b: (a @ b).relu(), lambda a, b: a / (a * a + 1)):
        y, ty = f(x, w), f(tx, tw)
        assert _names(y.grad_fn) == _names(ty.grad_fn)
        g = nt.autograd.grad(y.sum(), (x, w), allow_unused=True)
        tg = torch.autograd.grad(ty.sum(), (tx, tw), allow_unused=True)
        for a, b in zip(g, tg):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
