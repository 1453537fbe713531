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
    ("try_except_no_raise", """
def f(x):
    try:
        y = x + 1
    except ValueError:
        y = x - 1
    return y * 2
""", ["t:4"], 1, 0),
    ("try_finally", """
def f(x):
    out = []
    try:
        y = x + 1
    finally:
        out.append(1)
    return y * len(out)
""", ["t:4"], 1, 0),
    ("raise_caught_in_frame", """
def f(x):
    try:
        raise ValueError("boom")
    except ValueError:
        y = x - 1
    return y * 2
""", ["t:4"], 1, 0),
    ("raise_caught_with_message", """
def f(x):
    try:
        raise KeyError("k")
    except (ValueError, KeyError) as e:
        msg = str(e)
    return x * len(msg)
""", ["t:4"], 1, 0),
    ("raise_in_callee_caught_by_caller", """
def check(n):
    if n > 2:
        raise ValueError("n too big")
    return n
def f(x, n):
    try:
        k = check(n)
    except ValueError:
        k = 0
    return x + k
""", ["t:4", "i:5"], 1, 0),
    ("finally_runs_on_caught_raise", """
def f(x):
    log = []
    try:
        try:
            raise RuntimeError("inner")
        finally:
            log.append("finally")
    except RuntimeError:
        log.append("caught")
    return x * len(log)
""", ["t:4"], 1, 0),
    ("assert_on_constant", """
def f(x, n):
    assert n > 0, "n must be positive"
    assert x.shape[0] == 4
    return x * n
""", ["t:4", "i:3"], 1, 0),
    ("assert_on_tensor", """
def f(x):
    y = x + 1
    assert (y > -100).all()
    return y * 2
""", ["t:4"], 2, 1, (1, 0)),   # PyTorch turns it into torch._assert_async in the graph
    ("generator_in_loop", """
def gen(n):
    for i in range(n):
        yield i * 2
def f(x):
    for k in gen(3):
        x = x + k
    return x
""", ["t:4"], 1, 0),
    ("generator_of_tensors", """
def pairs(xs):
    for a, b in zip(xs, xs[1:]):
        yield a * b
def f(x):
    return sum(pairs([x, x + 1, x + 2]))
""", ["t:4"], 1, 0),
    ("generator_expression_sum", """
def f(x):
    return sum(x * i for i in range(4))
""", ["t:4"], 1, 0),
    ("user_class_construction", """
class P:
    def __init__(self, a):
        self.a = a
def f(x):
    p = P(x)
    return p.a + 1
""", ["t:4"], 1, 0),
    ("super_call_chain", """
class A:
    def __init__(self, k):
        self.k = k
    def go(self, x):
        return x * self.k
class B(A):
    def __init__(self):
        super().__init__(3)
    def go(self, x):
        return super().go(x) + 1
def f(x):
    b = B()
    return b.go(x)
""", ["t:4"], 1, 0),
    ("user_object_returned", """
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b
    def total(self):
        return self.a + self.b
def f(x):
    p = Pair(x * 2, x + 1)
    return p.total(), p.a
""", ["t:4"], 1, 0),
    ("map_filter_sorted_key", """
def f(x):
    ys = list(map(lambda t: t * 2, [x, x + 1]))
    zs = list(filter(lambda k: k > 1, [1, 2, 3]))
    ks = sorted([3, 1, 2], key=lambda k: -k)
    return ys[0] + ys[1] + sum(zs) + ks[0]
""", ["t:4"], 1, 0),
    ("max_with_key_over_shapes", """
def f(a, b):
    big = max([a, b], key=lambda t: t.shape[0])
    return big.sum()
""", ["t:3", "t:5"], 1, 0),
    ("map_two_iterables", """
def f(x, y):
    return list(map(lambda a, b: a * b, [x, y], [y, x]))
""", ["t:3", "t:3"], 1, 0),
    ("cell_variable_resumes_after_break", """
def f(x):
    s = x * 2
    def inner(y):
        return y + s
    print("hi")
    return inner(x)
""", ["t:4"], 2, 1),
    ("nonlocal_write_after_break", """
def f(x, k):
    s = x * 2
    def inner(y):
        return y + s + k
    print("hi")
    s = s + 1
    out = inner(x)
    def setk(v):
        nonlocal k
        k = v
    setk(10)
    return out + k
""", ["t:4", "i:3"], 2, 1),
    ("closure_list_of_fresh_functions", """
def f(x):
    fns = []
    for i in range(3):
        def g(t, i=i):
            return t * i
        fns.append(g)
    print("made")
    return sum(fn(x) for fn in fns)
""", ["t:4"], 1, 1, (1, 0)),   # PyTorch's explain counts graphs - 1 breaks (no graph before the print)
    # dicts keyed by tensors (Note [Dicts keyed by objects] in numtorch/_dynamo/capture.py)
    ("dict_keyed_by_global_tensors", """
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
scale = {lin.weight: 2.0, lin.bias: 3.0}
def f(x):
    return sum(v * k.sum() for k, v in scale.items()) + x
""", ["t:4"], 1, 0),
    ("dict_built_with_tensor_keys", """
def f(x, y):
    d = {x: 1, y: 2}
    out = 0
    for k in d:
        out = out + k * d[k]
    return out, x in d, len(d)
""", ["t:4", "t:4"], 1, 0),
    ("dict_keyed_by_tensors_lookup", """
torch.manual_seed(0)
params = [torch.randn(3), torch.randn(2)]
state = {params[0]: torch.ones(3)}
def f(x):
    new = {}
    for p in params:
        b = state.get(p)
        new[p] = p * x.sum() if b is None else b + p
    return [new[p] * 1 for p in params], params[1] in state
""", ["t:4"], 1, 0),
    ("dict_keyed_by_tensors_in_a_list_argument", """
def f(xs):
    d = {t: i for i, t in enumerate(xs)}
    print("keys", len(d))
    return [t * d[t] for t in xs]
""", ["L:t:2;t:3"], 1, 1, (1, 0)),   # PyTorch counts graphs - 1 breaks (no graph before the print)
    # user context managers (numtorch/_dynamo/contexts.py)
    ("with_user_class_context_manager", """
class Scale:
    def __init__(self, k, log):
        self.k, self.log = k, log
    def __enter__(self):
        self.log.append("enter")
        return self.k
    def __exit__(self, *exc):
        self.log.append("exit")
        return False
def f(x):
    log = []
    with Scale(2, log) as k:
        y = x * k
    return y + 1, log
""", ["t:4"], 1, 0),
    ("with_contextmanager_generator", """
import contextlib
@contextlib.contextmanager
def scaled(k, log):
    log.append("in")
    try:
        yield k * 2
    finally:
        log.append("out")
def f(x):
    log = []
    with scaled(3, log) as a, scaled(1, log) as b:
        y = x * a - b
    return y, log
""", ["t:4"], 1, 0),
    ("with_nullcontext", """
import contextlib
def f(x):
    with contextlib.nullcontext():
        y = x + 1
    with contextlib.nullcontext(5) as v:
        y = y * v
    return y
""", ["t:4"], 1, 0),
    ("with_exit_suppresses_exception", """
class Suppress:
    def __enter__(self):
        return self
    def __exit__(self, t, v, tb):
        return t is ValueError
def f(x):
    y = x * 2
    with Suppress():
        y = y + 1
        raise ValueError("boom")
    return y
""", ["t:4"], 1, 0),
    ("with_contextmanager_swallows_exception", """
import contextlib
@contextlib.contextmanager
def swallow(log):
    try:
        yield
    except ValueError as e:
        log.append(str(e))
def f(x):
    log = []
    with swallow(log):
        y = x + 1
        raise ValueError("boom")
    return y * 2, log
""", ["t:4"], 1, 0),
    ("itertools_chain_and_product", """
import itertools
def f(x, y):
    for t in itertools.chain([x], [y * 2]):
        x = x + t
    for i, j in itertools.product(range(2), [x, y]):
        x = x + j * i
    return x, list(itertools.islice(itertools.repeat(y, 5), 2))
""", ["t:3", "t:3"], 1, 0),
    ("functools_reduce", """
import functools, operator
def f(x, y):
    return functools.reduce(operator.mul, [x, y, x + 1]), functools.reduce(lambda a, b: a - b, [y, x], x * 3)
""", ["t:3", "t:3"], 1, 0),
    ("import_inside_function", """
def f(x):
    import math
    from operator import mul
    return mul(x, math.pi)
""", ["t:3"], 1, 0),
    ("namedtuple_made_and_replaced", """
import collections
Pt = collections.namedtuple("Pt", "x y")
def f(a):
    p = Pt(a, y=a * 2)
    q = p._replace(x=a + 1)
    return Pt(q.x + p.y, len(p)), q, Pt._make([a, a]).y
""", ["t:3"], 1, 0),
    ("namedtuple_across_a_break", """
import collections
Pt = collections.namedtuple("Pt", "x y")
def f(a):
    p = Pt(a, y=a * 2)
    q = p._replace(x=a + 1)
    print("brk")
    return Pt(q.x + p.y, len(p)), q
""", ["t:3"], 2, 1),
]
