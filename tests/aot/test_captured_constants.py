"""Captured tensors keep their identity through the compile pipeline (Note [Literals and
captured tensors] in numtorch/_core/passes.py).

A library module's buffers and an optimizer's state enter a compiled graph as captured
constants, read at each call. Their owner changes them between calls, so a pass that
replaced one by an equal-valued literal (cse merging small equal constants) made the graph
read a stale value. Oracle: the same function run eagerly after the same change.
"""
import numpy as np
import pytest

import numtorch as torch
import numtorch.nn as nn


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_changed_buffer_is_read_not_an_equal_literal(backend):
    """BatchNorm's running_var (ones at capture) beside a literal ``torch.ones(3)``: the
    inductor's cse merged the two, so after ``running_var.fill_(4)`` the compiled function
    added 4 where eager adds 1."""
    bn = nn.BatchNorm1d(3).eval().requires_grad_(False)   # no grad: the graph runs as is

    def f(x):
        return bn(x) + torch.ones(3)
    compiled = torch.compile(f, backend=backend)
    x = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)
    for var, mean in ((4.0, 0.5), (1.0, 0.0), (9.0, -2.0)):
        bn.running_var.fill_(var)
        bn.running_mean.fill_(mean)
        want = (x.numpy() - mean) / np.sqrt(var + bn.eps) + 1.0
        np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(compiled(x).numpy(), want, rtol=1e-6)


def test_a_buffer_equal_to_another_stays_apart():
    """Two buffers of equal value at capture (running_mean of two BatchNorms) are two
    tensors: changing one changes only what reads it."""
    a = nn.BatchNorm1d(2).eval().requires_grad_(False)
    b = nn.BatchNorm1d(2).eval().requires_grad_(False)

    def f(x):
        return a(x) - b(x)
    compiled = torch.compile(f, backend="inductor")
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_array_equal(compiled(x).numpy(), np.zeros((2, 2), np.float32))
    a.running_mean.fill_(1.0)
    np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)
    assert np.all(compiled(x).numpy() < 0)
