"""The layers import downwards only (DESIGN.md: ops over prims over the core).

Imports are read from the source with ``ast``, function-level ones included: an import
deferred into a function body is still an edge of the dependency graph, only one that
Python resolves late (and pays for on the call path).
"""
from __future__ import annotations

import ast
import pathlib

import numtorch

PKG = pathlib.Path(numtorch.__file__).parent


def _relative_imports(path):
    """The sibling modules that ``path`` imports (``from .x import``, ``from . import x``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def _ops_graph():
    mods = {p.stem: p for p in (PKG / "_ops").glob("*.py")}
    return {m: _relative_imports(p) & set(mods) for m, p in mods.items()}


def _reachable(graph, start):
    seen, todo = set(), list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    return seen


def test_the_norms_modules_are_in_no_import_cycle():
    graph = _ops_graph()
    for module in ("linalg", "linalg_ops", "reduce"):
        assert module not in _reachable(graph, module), f"_ops/{module}.py is in an import cycle"
    # linalg_ops builds on the products and the reductions, never the reverse
    assert {"linalg", "reduce"} <= graph["linalg_ops"]


def test_every_norm_has_one_home():
    from numtorch._ops import linalg, linalg_ops, reduce
    assert not hasattr(linalg, "vector_norm") and not hasattr(linalg, "matrix_norm")
    assert not hasattr(reduce, "norm")
    import numtorch as torch
    assert torch.linalg.vector_norm is linalg_ops.vector_norm
    assert torch.linalg.matrix_norm is linalg_ops.matrix_norm
    assert torch.linalg.norm is linalg_ops.norm
    assert torch.norm is linalg_ops.norm_top and torch.Tensor.norm is linalg_ops.norm_top
