"""AOT autograd: compiled forward and backward graphs for a region whose inputs need grad.

The pipeline (DESIGN.md, "Compile"): a captured region's graph and which inputs need a
gradient give a joint forward+backward graph traced from the VJP rules
(``partition.joint_graph``); a minimum cut splits it into a forward graph that saves
few activations and a backward graph that recomputes cheap pointwise chains
(``partition.partition``, Note [Min-cut partition]); a backend compiles both; the pair
runs as one node of the eager autograd graph (``function.aot_function``). Backends
``"aot_eager"`` and ``"inductor"`` (numtorch._dynamo.backends) use it. ``repro.py`` is the
accuracy minifier (``NUMTORCH_REPRO_AFTER``/``NUMTORCH_REPRO_LEVEL``); ``optimizer.py``
compiles an optimizer's step (``compile(opt.step)``, and ``opt.step()`` at a break);
``fullgraph.py`` captures a whole training step, backward and update included, in one
graph under ``compile(step, fullgraph=True)``.
Nothing here is imported by ``import numtorch``.
"""
from __future__ import annotations

from .function import aot_function, runner_compiler, tensor_compiler  # noqa: F401
from .partition import Partition, joint_graph, partition  # noqa: F401
