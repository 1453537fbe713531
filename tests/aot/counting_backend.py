"""A compile backend for tests that records the graphs it compiles and counts their runs.

Shared by the fullgraph training tests, which assert how many graphs a step captures and
that every call runs the compiled one (imported by name: pytest puts this folder on
sys.path, as tests/dynamo's corpus modules are).
"""
from numtorch._dynamo.backends import lookup_backend


class Counting:
    """A backend counting the graphs it compiles and the runs of each."""

    def __init__(self, inner="aot_eager"):
        self.inner, self.graphs, self.runs = lookup_backend(inner), [], 0

    def __call__(self, gm, example):
        self.graphs.append(gm._graph)
        fn = self.inner(gm, example)

        def run(*args):
            self.runs += 1
            return fn(*args)
        return run
