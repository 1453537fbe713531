"""numtorch._dynamo.utils: ``compile_times()`` and ``CompileProfiler``."""
from __future__ import annotations

from . import eval_frame


def compile_times(repr="str", aggregate=False):
    """Time spent in each capture phase: a table (``repr="str"``) or a dict of lists."""
    times = {k: list(v) for k, v in eval_frame.COMPILE_TIMES.items()}
    if repr != "str":
        return times
    lines = ["TorchDynamo compilation metrics:", "Function, Runtimes (s)"]
    for k, v in times.items():
        vals = [sum(v)] if aggregate else v
        lines.append(f"{k}, {', '.join(f'{x:.4f}' for x in vals)}")
    return "\n".join(lines)


class CompileProfiler:
    """A backend and context manager recording graphs, breaks and recompilations.

    ``with CompileProfiler() as prof: compile(f, backend=prof)(x); print(prof.report())``.
    """

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0
        self.graphs = []
        self.breaks = []
        self.recompiles = []

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.graphs.append(gm)
        self.op_count += sum(1 for n in gm.graph if n.op == "call_function")
        return gm.forward

    def _observe(self, event, **kw):
        if event == "frame":
            self.breaks += [(u.reason, u.stack) for u in kw["breaks"]]
            if kw.get("reason"):
                self.recompiles.append((kw["code"].co_name, kw["reason"]))

    def __enter__(self):
        eval_frame._OBSERVERS.append(self._observe)
        return self

    def __exit__(self, *exc):
        eval_frame._OBSERVERS.remove(self._observe)
        return False

    def report(self):
        out = [f"Torchdynamo Profiler Report", "=" * 27, "",
               f"Graphs: {len(self.graphs)} ({self.op_count} ops)",
               f"Graph Breaks: {len(self.breaks)}"]
        for reason, stack in self.breaks:
            where = f" at {stack[-1][0]}:{stack[-1][1]}" if stack else ""
            out.append(f"  - {reason}{where}")
        out.append(f"Recompilations: {len(self.recompiles)}")
        for name, reason in self.recompiles:
            out.append(f"  - {name}: {reason}")
        if not self.breaks and not self.recompiles:
            out.append("No graph breaks or recompilation detected.")
        return "\n".join(out)
