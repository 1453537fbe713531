"""The inductor backend: fused C/OpenMP kernels from numtorch graphs (``backend="inductor"``).

``compile_graph(graph, example_inputs)`` is the entry point capture (numtorch._dynamo)
calls. The pipeline, one module each: ``scheduler`` (group nodes into kernels and
externs), ``codegen`` (C99 + OpenMP text), ``launcher`` (entry points, one function per
distinct kernel, translation units), ``build`` (compiler, disk cache, loading),
``runner`` (the per-call path), and ``numpy_codegen`` (the graph as NumPy code, where
no C compiler works). Knobs: ``numtorch._inductor.config``. Generated code is
logged under ``NUMTORCH_LOGS=output_code`` (logger ``numtorch._inductor.output_code``).
Nothing here is imported by ``import numtorch``.
"""
from __future__ import annotations

from .runner import check_options, compile_graph, compile_graphs, list_mode_options, \
    list_options  # noqa: F401
from . import config  # noqa: F401
