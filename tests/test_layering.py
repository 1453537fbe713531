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


def test_the_core_imports_nothing_above_it():
    # _core/* (tensor, primitive, ir, printing, ...) is the bottom layer: methods, the
    # constructor and repr are attached from above (_ops/methods.py), never imported up.
    for path in (PKG / "_core").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                up = node.level >= 2 or (node.level == 0 and (node.module or "").startswith(
                    "numtorch") and not node.module.startswith("numtorch._core"))
                assert not up, f"_core/{path.name}:{node.lineno} imports {node.module} from above"


def test_constructor_repr_and_pickling_attached_from_above():
    import pickle

    import numpy as np

    import numtorch as torch
    t = torch.Tensor([1.0, 2.5])
    assert t.dtype == torch.float32 and t.tolist() == [1.0, 2.5]
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert repr(t) == str(t) == "tensor([1.0000, 2.5000])"
    w = pickle.loads(pickle.dumps(torch.tensor([[1.0, 2.0]], requires_grad=True)))
    assert w.requires_grad and np.array_equal(w.detach().numpy(), [[1.0, 2.0]])
    p = pickle.loads(pickle.dumps(torch.nn.Parameter(torch.ones(2))))
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad
