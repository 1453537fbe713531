"""numtorch._dynamo: capture of Python programs into graphs (PyTorch's torch._dynamo).

The pipeline, one module per stage: api (compile, disable, run) → eval_frame (cache,
guards check, capture driver, breaks) → symbolic + calls (the bytecode interpreter) →
codegen (the generated function running each entry) → backends. bytecode holds the
per-Python-version layer; guards the sources and generated guard functions.
"""
from . import config  # noqa: F401
from .api import compile, optimize, OptimizedModule, disable, run, is_compiling  # noqa: F401
from .backends import list_backends, register_backend, lookup_backend  # noqa: F401
from .eval_frame import reset  # noqa: F401
from .markers import allow_in_graph, disallow_in_graph, graph_break  # noqa: F401
from .symbolic import Unsupported  # noqa: F401
from .explain import explain, ExplainOutput  # noqa: F401
from . import utils  # noqa: F401


def mark_dynamic(t, index):
    """Mark dimension ``index`` of ``t`` dynamic. Symbolic sizes are not in the IR yet, so
    this records the mark only; a new size still recompiles (bounded by the cache limit)."""
    dims = getattr(t, "_dynamo_dynamic_indices", None)
    _check_dims(t, index, "mark_dynamic")
    _MARKS.setdefault(id(t), set()).update([index] if isinstance(index, int) else index)
    return dims


def mark_static(t, index=None):
    """Mark ``t`` (or dimension ``index``) static: its size is guarded (the default now)."""
    if index is not None:
        _check_dims(t, index, "mark_static")
    _MARKS.pop(id(t), None)


_MARKS: dict = {}


def _check_dims(t, index, what):
    from .._core.tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(t).__name__}")
    for i in [index] if isinstance(index, int) else index:
        if not -t.dim() <= i < t.dim():
            raise IndexError(f"{what}: dimension {i} out of range for a {t.dim()}-d tensor")
