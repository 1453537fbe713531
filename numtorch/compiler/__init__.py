"""numtorch.compiler: the public names of compile's controls (PyTorch's torch.compiler)."""
from .._dynamo.api import compile, disable, is_compiling  # noqa: F401
from .._dynamo.eval_frame import reset  # noqa: F401
from .._dynamo.markers import allow_in_graph, disallow_in_graph  # noqa: F401
from .._dynamo.backends import list_backends  # noqa: F401


def is_dynamo_compiling():
    """Same as `is_compiling`."""
    return is_compiling()


def __getattr__(name):
    if name == "wrap_numpy":   # provided by numtorch._numpy (another part), when present
        from .. import _numpy
        return _numpy.wrap_numpy
    raise AttributeError(f"module 'numtorch.compiler' has no attribute {name!r}")
