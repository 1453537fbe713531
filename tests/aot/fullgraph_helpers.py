"""What the fullgraph training tests share: a compile backend that records the graphs it
compiles and counts their runs, and the training step they compile.

The tests assert how many graphs a step captures and that every call runs the compiled one
(imported by name: pytest puts this folder on sys.path, as tests/dynamo's corpus modules
are).
"""
import numtorch.nn.functional as F
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


def training_step(model, opt, zero=True):
    """A PyTorch training step: zero_grad (unless ``zero`` is False), cross-entropy forward,
    backward, optimizer step; returns the loss."""
    def step(x, y):
        if zero:
            opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step
