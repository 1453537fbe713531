"""Small programs for the capture corpus: (name, source, argument spec, graphs, breaks).

Each source defines ``f``; it is exec'd with ``torch`` bound to numtorch (and, for the
cross-check, to PyTorch). Arguments: "t:3,4" a float32 randn tensor, "i:5" an int, "L:t:3;t:3"
a list of tensors. An optional sixth field gives PyTorch's counts where they differ (and
why). The expected counts are numtorch's; test_corpus cross-checks them with
torch._dynamo.explain where PyTorch is installed.
"""

PROGRAMS = [
    ("straight_line", """
def f(x, y):
    return torch.sin(x) + y * 2
""", ["t:3,4", "t:3,4"], 1, 0),
    ("toy_example", """
def f(a, b):
    x = a / (torch.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b
""", ["t:10", "t:10"], 3, 2),
    ("data_dependent_if", """
def f(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b
""", ["t:10", "t:10"], 2, 1),
    ("inline_helper", """
def g(x, k=2):
    return x * k
def f(x):
    return g(x) + g(x, k=3) + g(k=4, x=x)
""", ["t:4"], 1, 0),
    ("closure", """
def f(x):
    s = 3.0
    def inner(y):
        return y * s
    return inner(x) + 1
""", ["t:4"], 1, 0),
    ("varargs_kwargs", """
def g(*args, **kw):
    out = args[0]
    for a in args[1:]:
        out = out + a
    return out * kw.get("scale", 1.0)
def f(x, y):
    return g(x, y, x, scale=2.0)
""", ["t:4", "t:4"], 1, 0),
    ("const_loop", """
def f(x):
    for i in range(4):
        x = x * 2 + i
    return x
""", ["t:3"], 1, 0),
    ("list_loop", """
def f(xs):
    total = 0
    for t in xs:
        total = total + t.sum()
    return total
""", ["L:t:3;t:3;t:3"], 1, 0),
    ("comprehension", """
def f(x):
    parts = [x * i for i in range(3)]
    return torch.stack(parts).sum(0)
""", ["t:3"], 1, 0),
    ("dict_build", """
def f(x):
    d = {"a": x.sin(), "b": x.cos()}
    return d["a"] + d["b"]
""", ["t:3"], 1, 0),
    ("tuple_unpack", """
def f(x):
    a, b = x.sin(), x.cos()
    c, *rest = (a, b, a)
    return c + rest[0] + rest[1]
""", ["t:3"], 1, 0),
    ("int_arg", """
def f(x, n):
    return x * n + n
""", ["t:3", "i:4"], 1, 0),
    ("shape_logic", """
def f(x):
    if x.shape[0] > 2:
        return x.sum(0)
    return x
""", ["t:3,2"], 1, 0),
    ("isinstance_len", """
def f(x):
    if isinstance(x, torch.Tensor) and len(x) == 3:
        return x + 1
    return x - 1
""", ["t:3"], 1, 0),
    ("print_middle", """
def f(x):
    y = x.sin()
    print("middle")
    return y.cos()
""", ["t:3"], 2, 1),
    ("print_in_helper", """
def g(y):
    z = y * 2
    print("in g")
    return z + 1
def f(x):
    y = x.sin()
    return g(y).cos()
""", ["t:3"], 4, 3),
    ("item_break", """
def f(x):
    y = x.sum()
    s = y.item()
    return x * s
""", ["t:3"], 2, 1),
    ("graph_break_call", """
def f(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2
""", ["t:3"], 2, 1),
    ("list_append_side_effect", """
def f(x, acc):
    acc.append(x.sin())
    acc.append(3)
    return x + 1
""", ["t:3", "L:"], 1, 0),
    ("nn_module_call", """
lin = torch.nn.Linear(4, 2)
def f(x):
    return torch.relu(lin(x)).sum()
""", ["t:3,4"], 1, 0),
    ("fstring_const", """
def f(x, n):
    name = f"layer{n}"
    if name == "layer2":
        return x * 2
    return x
""", ["t:3", "i:2"], 1, 0),
    ("while_const", """
def f(x):
    i = 0
    while i < 3:
        x = x + i
        i += 1
    return x
""", ["t:3"], 1, 0),
    ("nested_breaks", """
def f(x):
    y = x * 2
    print("a")
    y = y + 1
    print("b")
    return y - 1
""", ["t:3"], 3, 2),
    ("max_min_ints", """
def f(x, n):
    k = max(n, 2) + min(n, 1) + abs(-n)
    return x * k
""", ["t:3", "i:3"], 1, 0),
    ("method_chain", """
def f(x):
    return x.reshape(2, 3).t().contiguous().view(-1).exp().mean()
""", ["t:6"], 1, 0),
    ("no_tensor_ops", """
def f(x, n):
    return n + 1
""", ["t:3", "i:3"], 0, 0),
    ("kwonly_defaults", """
def g(x, *, scale=2.0, shift=0.0):
    return x * scale + shift
def f(x):
    return g(x) + g(x, shift=1.0)
""", ["t:3"], 1, 0),
    ("method_on_user_class", """
class Scaler:
    def __init__(self, k):
        self.k = k
    def apply(self, x):
        return x * self.k
S = Scaler(3.0)
def f(x):
    return S.apply(x) + 1
""", ["t:3"], 1, 0),
    ("user_module_forward", """
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
    def forward(self, x):
        return torch.tanh(self.lin(x)) + x
blk = Block()
def f(x):
    return blk(blk(x)).sum()
""", ["t:2,3"], 1, 0),
    ("enumerate_zip", """
def f(xs, ys):
    out = 0
    for i, (a, b) in enumerate(zip(xs, ys)):
        out = out + a * b * i
    return out
""", ["L:t:3;t:3", "L:t:3;t:3"], 1, 0),
    ("dict_items_loop", """
def f(x):
    d = {"a": 1.0, "b": 2.0}
    for k, v in d.items():
        x = x + v
    return x
""", ["t:3"], 1, 0),
    ("nested_closure_counter", """
def f(x):
    def make(k):
        def inner(y):
            return y + k
        return inner
    add2 = make(2)
    return add2(x) * make(3)(x)
""", ["t:3"], 1, 0),
    ("slice_index", """
def f(x):
    return x[1:, ::2] + x[0, None, ::2]
""", ["t:4,4"], 1, 0),
    ("ternary_const", """
def f(x, flag):
    y = x * 2 if flag else x * 3
    return y
""", ["t:3", "i:1"], 1, 0),
    ("break_in_loop", """
def f(x):
    for i in range(3):
        x = x + 1
        if i == 1:
            break
    return x
""", ["t:3"], 1, 0),
    ("print_twice_in_loop", """
def f(x):
    for i in range(2):
        x = x * 2
        print("step", i)
    return x
""", ["t:3"], 2, 2, (0, 0)),   # Dynamo skips a frame that breaks inside a loop
    ("math_on_constants", """
import math
def f(x):
    return x * math.sqrt(4.0) + math.pi
""", ["t:3"], 1, 0),
    ("tolist_break", """
def f(x):
    y = x * 2
    vals = y.tolist()
    return y + len(vals)
""", ["t:3"], 2, 1),
    ("data_dependent_ternary", """
def f(x):
    return x * 2 if x.sum() > 0 else x * -2
""", ["t:3"], 2, 1),
    ("tensor_attrs", """
def f(x):
    n = x.dim() + x.numel() + x.size(0)
    return x.to(torch.float64) * n
""", ["t:2,3"], 1, 0),
    ("inplace_on_input", """
def f(x):
    x.add_(1)
    return x * 2
""", ["t:3"], 1, 0),
    ("return_tuple_and_const", """
def f(x):
    return x.sin(), 3, "s", None
""", ["t:3"], 1, 0),
    ("unknown_c_function", """
import time
def f(x):
    y = x + 1
    time.perf_counter()
    return y * 2
""", ["t:3"], 2, 1),
    ("and_or_constants", """
def f(x, n):
    k = (n > 1 and n < 10) or n == 0
    return x + k
""", ["t:3", "i:3"], 1, 0),
    ("bool_of_tensor_break", """
def f(x):
    y = x.sum()
    if bool(y > 100):
        return y
    return x * 2
""", ["t:3"], 2, 1),
    ("torch_func_grad_inside", """
def f(x):
    return torch.func.grad(lambda t: (t ** 2).sum())(x)
""", ["t:3"], 1, 0),
]
