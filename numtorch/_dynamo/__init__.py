"""numtorch._dynamo: capture of Python programs into graphs (PyTorch's torch._dynamo).

The pipeline, one module per stage: api (compile, disable, run) → eval_frame (cache,
guards check, capture driver, breaks) → symbolic + calls (the bytecode interpreter) →
codegen (the generated function running each entry) → backends. bytecode holds the
per-Python-version layer; guards the sources and generated guard functions; capture the
shared state of one capture (sources → symbolic values); values the symbolic value types;
shapes the dynamic-shape decisions; contexts the with blocks (grad mode, user context
managers, @contextmanager, nullcontext).
"""
from . import config  # noqa: F401
from .api import compile, optimize, OptimizedModule, disable, run, is_compiling  # noqa: F401
from .backends import list_backends, register_backend, lookup_backend  # noqa: F401
from .eval_frame import reset  # noqa: F401
from .markers import allow_in_graph, disallow_in_graph, graph_break  # noqa: F401
from .values import Unsupported  # noqa: F401
from .explain import explain, ExplainOutput  # noqa: F401
from . import exc, utils  # noqa: F401


def mark_dynamic(t, index, *, min=None, max=None):
    """Mark dimension ``index`` (an int or a list of ints) of ``t`` dynamic: the next capture
    reading ``t`` gives it a symbolic size, under any ``compile(dynamic=...)`` setting, and
    raises ``ConstraintViolationError`` if the code needs it as a constant (PyTorch's
    ``torch._dynamo.mark_dynamic``; the mark lives on the tensor, ``_dynamo_dynamic_indices``).
    ``min``/``max`` range constraints are not supported."""
    if min is not None or max is not None:
        raise NotImplementedError("mark_dynamic: min/max range constraints are not supported")
    dims = _check_dims(t, index, "mark_dynamic")
    marks = getattr(t, "_dynamo_dynamic_indices", set()) | dims
    t._dynamo_dynamic_indices = marks
    static = getattr(t, "_dynamo_static_indices", None)
    if static:
        t._dynamo_static_indices = static - dims


def maybe_mark_dynamic(t, index):
    """Like `mark_dynamic`, but the dim may still specialise without an error (PyTorch's
    ``torch._dynamo.maybe_mark_dynamic``): symbolic from the first capture, not marked."""
    dims = _check_dims(t, index, "maybe_mark_dynamic")
    t._dynamo_weak_dynamic_indices = getattr(t, "_dynamo_weak_dynamic_indices", set()) | dims


def mark_static(t, index=None):
    """Mark dimension ``index`` of ``t`` (all dims when None) static: its size is guarded and
    never made symbolic, whatever ``dynamic=`` says (PyTorch's ``torch._dynamo.mark_static``)."""
    dims = _check_dims(t, range(t.dim()) if index is None else index, "mark_static")
    t._dynamo_static_indices = getattr(t, "_dynamo_static_indices", set()) | dims
    for attr in ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices"):
        marks = getattr(t, attr, None)
        if marks:
            setattr(t, attr, marks - dims)


def _check_dims(t, index, what):
    from .._core.tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(t).__name__}")
    dims = [index] if isinstance(index, int) else list(index)
    out = set()
    for i in dims:
        if not isinstance(i, int):
            raise TypeError(f"{what}: index must be an int or a list of ints, got {i!r}")
        if not -t.dim() <= i < t.dim():
            raise IndexError(f"{what}: dimension {i} out of range for a {t.dim()}-d tensor")
        out.add(i % t.dim())
    return out
