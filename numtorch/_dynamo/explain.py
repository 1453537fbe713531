"""``explain(fn)(*args)``: compile ``fn`` once and report graphs, breaks and guards.

Must not capture by itself: it observes eval_frame's events while the function runs.
"""
from __future__ import annotations

import os
import time

from . import eval_frame
from .backends import GraphModule, _target_name


class ExplainOutput:
    """What a capture produced (PyTorch's ``torch._dynamo.backends.debugging.ExplainOutput``)."""

    def __init__(self, graphs, break_reasons, out_guards, compile_times):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        # PyTorch's rule: calls of functions count, tensor methods do not
        # (Note [Ops as the user called them] in backends.py)
        self.ops_per_graph = [[n.target for n in gm.graph if n.op == "call_function"]
                              for gm in graphs]
        self.op_count = sum(len(o) for o in self.ops_per_graph)
        self.out_guards = out_guards
        self.compile_times = compile_times

    def __str__(self):
        out = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
               f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, br in enumerate(self.break_reasons, 1):
            out += [f"  Break Reason {i}:", f"    Reason: {br.reason}",
                    f"    Suggested fix: {br.hint}", "    User Stack:"]
            out += [f"      <FrameSummary file {os.path.basename(f)}, line {ln} in {fn}>"
                    for f, ln, fn in br.user_stack]
        out.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            out.append(f"  Ops {i}:")
            out += [f"    {_target_name(op)}" for op in ops]
        out.append("Out Guards:")
        for i, g in enumerate(self.out_guards, 1):
            out += [f"  Guard {i}:", f"    {g}"]
        out.append(f"Compile Times: {self.compile_times}")
        return "\n".join(out) + "\n"

    __repr__ = __str__


class BreakReason:
    def __init__(self, reason, hint, user_stack):
        self.reason, self.hint, self.user_stack = reason, hint, user_stack

    def __repr__(self):
        return f"BreakReason({self.reason!r})"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` → `ExplainOutput` for one compiled run of ``fn``."""
    if extra_args or extra_kwargs:
        raise TypeError("explain(f, *args) was removed in PyTorch 2.1; use explain(f)(*args)")

    def inner(*args, **kwargs):
        from .api import compile
        eval_frame.reset()
        graphs, reasons, guards = [], [], []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        def observe(event, **kw):
            if event == "frame":
                for u in kw["breaks"]:
                    reasons.append(BreakReason(u.reason, u.hint, u.stack))
                guards.extend(words for _, words in kw["guard"].checks)

        eval_frame._OBSERVERS.append(observe)
        t0 = time.perf_counter()
        try:
            compile(f, backend=backend)(*args, **kwargs)
        finally:
            eval_frame._OBSERVERS.remove(observe)
            eval_frame.reset()
        times = f"total {1e3 * (time.perf_counter() - t0):.1f} ms"
        return ExplainOutput(graphs, reasons, guards, times)
    return inner


_ = GraphModule
