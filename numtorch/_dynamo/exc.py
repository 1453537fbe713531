"""The exceptions of capture under PyTorch's module name (``torch._dynamo.exc``), so code that
catches ``torch._dynamo.exc.Unsupported`` (a graph break under ``fullgraph=True``) runs
unchanged. Defines nothing of its own."""
from .values import Unsupported  # noqa: F401
