"""Corpus programs for the constructs beyond straight-line code: grad-mode blocks,
exceptions, generators, classes, higher-order builtins, dynamic sizes. Same format as
dynamo_corpus.py (name, source, argument spec, graphs, breaks[, PyTorch's counts]); "g:3"
is a tensor that requires grad."""

PROGRAMS = [
    ("no_grad_block", """
def f(x):
    y = x * 2
    with torch.no_grad():
        z = y + 1
    return z * y
""", ["g:4"], 1, 0),
    ("no_grad_only_result", """
def f(x):
    with torch.no_grad():
        return (x * 3).sum()
""", ["g:4"], 1, 0),
    ("enable_grad_inside_no_grad", """
def f(x):
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
        z = y + 1
    return z, y
""", ["g:4"], 1, 0),
    ("set_grad_enabled_false", """
def f(x):
    with torch.set_grad_enabled(False):
        y = x * 2
    return y + 1, torch.is_grad_enabled()
""", ["g:4"], 1, 0),
    ("is_grad_enabled_in_block", """
def f(x):
    with torch.no_grad():
        if torch.is_grad_enabled():
            return x + 1
    return x - 1
""", ["g:4"], 1, 0),
    ("no_grad_with_break_inside", """
def f(x):
    y = x * 2
    with torch.no_grad():
        s = y.sum()
        print("in block", torch.is_grad_enabled())
        z = y * s
    return (z + y).sum(), torch.is_grad_enabled()
""", ["g:4"], 2, 1),
]
