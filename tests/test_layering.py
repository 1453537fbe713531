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


LAZY = ("numtorch._dynamo", "numtorch.nn.parallel", "numtorch.func", "numtorch.fft",
        "numtorch._ops.einsum", "numtorch.optim.lr_scheduler", "numpy.random")


def test_import_leaves_the_optional_parts_unloaded():
    # `import numtorch` must stay fast (<= 0.3 s): these load on first use.
    import subprocess
    import sys
    code = ("import sys, numtorch\n"
            f"print([m for m in {LAZY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=PKG.parent).stdout
    assert out.strip() == "[]", out


def test_the_lazy_parts_load_on_first_use():
    import subprocess
    import sys
    code = """
import sys, numtorch as torch
assert torch.einsum("ij->i", torch.ones(2, 3)).tolist() == [3.0, 3.0]
assert torch.vmap(torch.sin)(torch.zeros(2)).tolist() == [0.0, 0.0]
assert torch.func.grad(lambda x: x * x)(torch.tensor(3.0)).item() == 6.0
assert torch.fft.fft(torch.ones(2)).real.tolist() == [2.0, 0.0]
assert torch.optim.lr_scheduler.StepLR.__name__ == "StepLR"
from numtorch.nn.parallel import DistributedDataParallel
assert torch.nn.parallel.DistributedDataParallel is DistributedDataParallel
assert {"einsum", "vmap", "func", "fft"} <= set(dir(torch))
torch.manual_seed(0)
a = torch.rand(3)
torch.manual_seed(0)
import numpy as np
assert np.array_equal(a.numpy(), np.random.Generator(np.random.PCG64(0)).random(3, dtype=np.float32))
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PKG.parent)
