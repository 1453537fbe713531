"""The table of primitives that run as externs (numtorch/_inductor/externs.py) agrees with
what the scheduler does on real graphs: a declared extern, a dtype with no C expression,
and a product on each side of the small-product limit.

Skipped where there is no C compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._core.primitive import ALL_PRIMITIVES
from numtorch._inductor import build, compile_graph
from numtorch._inductor.externs import extern_table, format_table
from numtorch._prims import elementwise
from numtorch.func import make_graph

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def _externs(f, *args):
    c = compile_graph(make_graph(f)(*args), list(args))
    return c, sorted(s.prim.name for s in c.schedule.externs()), c.product_count


def _rows():
    return {name: (when, reason) for name, when, reason in extern_table()}


def test_every_declared_extern_is_listed_with_its_reason():
    rows = _rows()
    declared = {n: p.lower.reason for n, p in ALL_PRIMITIVES.items() if p.lower.kind == "extern"}
    assert declared and "argmax" in declared and "sort" in declared
    for name, reason in declared.items():
        assert rows[name][1] == reason
    # lowered primitives with a C expression for every dtype are not listed
    assert "maximum" not in rows and "reduce_sum" not in rows and "transpose" not in rows
    text = format_table()
    assert all(name in text for name in declared)


def test_declared_extern_runs_between_kernels():
    a = torch.randn(5, 4)
    c, names, _ = _externs(lambda a: a.argmax(-1) + 1, a)
    assert names == ["argmax"] and _rows()["argmax"][0] == "always"
    np.testing.assert_array_equal(c(a)[0].numpy(), a.numpy().argmax(-1) + 1)


def test_a_dtype_without_a_c_expression_is_an_extern():
    """prims.add has no C expression for bools (NumPy's bool add is a logical or)."""
    when, _ = _rows()["add"]
    assert "bool" in when and "float" not in when
    x = torch.tensor(np.array([True, False, True, False]))
    y = torch.tensor(np.array([True, True, False, False]))
    c, names, _ = _externs(lambda x, y: elementwise.add.bind(x, y), x, y)
    assert names == ["add"] and c.kernel_count == 0
    np.testing.assert_array_equal(c(x, y)[0].numpy(), [True, True, True, False])
    f = torch.randn(4)
    c, names, _ = _externs(lambda x: elementwise.add.bind(x, x), f)
    assert names == [] and c.kernel_count == 1


def test_products_are_externs_only_above_the_small_product_limit():
    assert _rows()["dot_general"][0].startswith("unless small")
    small, big = torch.randn(5, 4), torch.randn(600, 600)
    c, names, products = _externs(lambda a: (a @ a.t()).exp(), small)
    assert products == 1 and c.extern_count == 0
    c, names, products = _externs(lambda a: (a @ a).exp(), big)
    assert products == 0 and c.extern_count == 1
