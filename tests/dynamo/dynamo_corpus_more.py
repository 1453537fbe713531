"""More corpus programs: the FAQ's graph-break topics, containers, closures, modules,
loops, in-place ops, globals, dynamic sizes. Same format as dynamo_corpus.py."""

PROGRAMS = [
    # PyTorch (3, 2): PyTorch's explain counts graph_count - 1 breaks; numtorch counts the failed inlining and the caller's break
    ('nested_call_print_break', """
def g(x):
    y = x * 2
    print("in g")
    return y + 1
def f(x):
    return g(x) - 1
""", ['t:4'], 3, 3, (3, 2)),
    ('graph_break_call', """
def f(x):
    y = x.cos()
    torch._dynamo.graph_break()
    return y.sin()
""", ['t:4'], 2, 1),
    ('disable_inner', """
@torch._dynamo.disable
def helper(t):
    return t * 3
def f(x):
    return helper(x + 1) - 2
""", ['t:4'], 2, 1),
    ('dict_build_and_read', """
def f(x):
    d = {"a": x, "b": x * 2}
    d["c"] = d["a"] + d["b"]
    return d["c"].sum(), sorted(d.keys())
""", ['t:4'], 1, 0),
    ('dict_items_loop', """
def f(x):
    d = {"a": 1.0, "b": 2.0}
    for k, v in d.items():
        x = x * v
    return x
""", ['t:4'], 1, 0),
    ('dict_comprehension', """
def f(x):
    d = {i: x * i for i in range(3)}
    return d[0] + d[1] + d[2]
""", ['t:4'], 1, 0),
    ('list_arg_mutation', """
def f(xs):
    xs.append(xs[0] * 2)
    return xs[-1] + xs[1]
""", ['L:t:3;t:3'], 1, 0),
    ('list_slice_and_reverse', """
def f(x):
    xs = [x, x + 1, x + 2, x + 3]
    ys = xs[1:3] + xs[::-1][:1]
    return sum(ys)
""", ['t:4'], 1, 0),
    ('tuple_star_unpack', """
def f(x):
    a, *rest = (x, x * 2, x * 3)
    return a + sum(rest)
""", ['t:4'], 1, 0),
    ('star_args_kwargs', """
def g(*args, scale=1.0, **kw):
    return sum(args) * scale + kw.get("bias", 0.0)
def f(x):
    return g(x, x + 1, scale=2.0, bias=3.0)
""", ['t:4'], 1, 0),
    ('functools_partial', """
import functools
def g(x, k, b):
    return x * k + b
def f(x):
    h = functools.partial(g, k=3.0)
    return h(x, b=1.0)
""", ['t:4'], 1, 0),
    ('math_on_constants', """
import math
def f(x):
    return x * math.sqrt(2.0) + math.pi * math.floor(2.7)
""", ['t:4'], 1, 0),
    ('isinstance_dispatch', """
def g(v):
    if isinstance(v, (list, tuple)):
        return sum(v)
    return v
def f(x):
    return g([x, x]) + g(x)
""", ['t:4'], 1, 0),
    ('getattr_on_module_constant', """
def f(x):
    fn = getattr(torch, "tanh")
    return fn(x) + getattr(x, "shape")[0]
""", ['t:4'], 1, 0),
    ('fstring_constant', """
def f(x, n):
    name = f"layer_{n:02d}"
    return x * len(name)
""", ['t:4', 'i:3'], 1, 0),
    ('while_constant_bound', """
def f(x):
    i = 0
    while i < 4:
        x = x + i
        i += 1
    return x
""", ['t:4'], 1, 0),
    ('loop_break_continue', """
def f(x):
    for i in range(10):
        if i % 2 == 0:
            continue
        if i > 6:
            break
        x = x * 1.5
    return x
""", ['t:4'], 1, 0),
    # PyTorch (2, 1): PyTorch's explain counts graph_count - 1 breaks (the loop's break recurs)
    ('data_dependent_while', """
def f(x):
    while x.sum() < 10:
        x = x + 1
    return x
""", ['t:4'], 2, 2, (2, 1)),
    ('item_break', """
def f(x):
    s = x.sum().item()
    return x * s
""", ['t:4'], 2, 1),
    ('tolist_break', """
def f(x):
    y = x * 2
    vals = y.tolist()
    return y + len(vals)
""", ['t:4'], 2, 1),
    ('inplace_ops', """
def f(x):
    y = x.clone()
    y.add_(1)
    y.mul_(2)
    return y
""", ['t:4'], 1, 0),
    ('inplace_on_input', """
def f(x):
    x.add_(1)
    return x * 2
""", ['t:4'], 1, 0),
    ('tensor_methods_chain', """
def f(x):
    return x.reshape(2, 2).transpose(0, 1).contiguous().view(-1).abs().max()
""", ['t:4'], 1, 0),
    ('indexing_and_setitem', """
def f(x):
    y = x.clone()
    y[0] = 5.0
    y[1:3] = y[1:3] * 2
    return y
""", ['t:4'], 1, 0),
    ('shape_branch', """
def f(x):
    if x.shape[0] > 3:
        return x[:3]
    return x
""", ['t:4'], 1, 0),
    ('dtype_branch', """
def f(x):
    if x.dtype == torch.float32:
        return x.double()
    return x
""", ['t:4'], 1, 0),
    ('ndim_and_numel', """
def f(x):
    return x * x.dim() + x.numel()
""", ['t:2,3'], 1, 0),
    ('recursion_constant_depth', """
def g(x, n):
    if n == 0:
        return x
    return g(x * 2, n - 1)
def f(x):
    return g(x, 3)
""", ['t:4'], 1, 0),
    ('lambda_in_list', """
def f(x):
    ops = [lambda t: t + 1, lambda t: t * 2, torch.sin]
    for op in ops:
        x = op(x)
    return x
""", ['t:4'], 1, 0),
    ('returns_function_result_of_factory', """
def make(k):
    def inner(t):
        return t * k
    return inner
def f(x):
    return make(3.0)(x) + make(4.0)(x)
""", ['t:4'], 1, 0),
    ('conditional_expression', """
def f(x, n):
    k = 2.0 if n > 2 else 3.0
    return x * k
""", ['t:4', 'i:3'], 1, 0),
    ('enumerate_zip', """
def f(x, y):
    out = 0
    for i, (a, b) in enumerate(zip([x, y], [y, x])):
        out = out + a * b * i
    return out
""", ['t:4', 't:4'], 1, 0),
    ('any_all_constants', """
def f(x):
    flags = [True, False, True]
    if any(flags) and not all(flags):
        return x + 1
    return x
""", ['t:4'], 1, 0),
    ('nn_linear_relu', """
torch.manual_seed(0)
lin = torch.nn.Linear(4, 3)
def f(x):
    return torch.relu(lin(x))
""", ['t:2,4'], 1, 0),
    ('nn_sequential', """
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
def f(x):
    return net(x).sum()
""", ['t:3,4'], 1, 0),
    ('user_module_forward', """
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.scale = 2.0
    def forward(self, x):
        return self.a(x) * self.scale + x
m = M()
def f(x):
    return m(x)
""", ['t:2,4'], 1, 0),
    ('module_list_loop', """
torch.manual_seed(0)
layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
def f(x):
    for layer in layers:
        x = torch.relu(layer(x))
    return x
""", ['t:2,4'], 1, 0),
    ('softmax_layernorm', """
def f(x):
    y = torch.softmax(x, dim=-1)
    return torch.nn.functional.layer_norm(y, (4,))
""", ['t:3,4'], 1, 0),
    ('matmul_and_bias', """
def f(x, w):
    return (x @ w.t()).relu().sum(0)
""", ['t:3,4', 't:5,4'], 1, 0),
    ('torch_where', """
def f(x):
    return torch.where(x > 0, x, x * 0.1)
""", ['t:4'], 1, 0),
    ('cat_stack', """
def f(x, y):
    return torch.cat([x, y]).sum() + torch.stack([x, y]).mean()
""", ['t:4', 't:4'], 1, 0),
    ('global_constant_read', """
SCALE = 3.0
def f(x):
    return x * SCALE
""", ['t:4'], 1, 0),
    ('global_write', """
last = None
def f(x):
    global last
    last = "seen"
    return x + len(last)
""", ['t:4'], 1, 0),
    # PyTorch (2, 1): PyTorch's explain counts graph_count - 1 breaks (no graph before the first print)
    ('print_twice', """
def f(x):
    print("a")
    y = x + 1
    print("b")
    return y * 2
""", ['t:4'], 2, 2, (2, 1)),
    # PyTorch (0, 0): Dynamo skips a frame whose graph break is inside a for loop; numtorch resumes
    ('break_in_loop_body', """
def f(x):
    for i in range(3):
        x = x + i
        print(i)
    return x
""", ['t:4'], 3, 3, (0, 0)),
    # PyTorch (4, 3): PyTorch's explain counts graph_count - 1 breaks; numtorch counts each failed inlining too
    ('nested_break_two_levels', """
def h(x):
    print("deep")
    return x + 1
def g(x):
    return h(x * 2) * 3
def f(x):
    return g(x) - 1
""", ['t:4'], 4, 5, (4, 3)),
    ('str_methods', """
def f(x):
    s = "a,b,c".split(",")
    return x * len(s) + len("-".join(s).upper())
""", ['t:4'], 1, 0),
    ('set_operations', """
def f(x):
    s = {1, 2, 3} | {3, 4}
    return x * len(s) + (2 in s)
""", ['t:4'], 1, 0),
    ('min_max_ints', """
def f(x, n):
    return x * max(n, 2) + min(n, 10)
""", ['t:4', 'i:5'], 1, 0),
    ('range_len_step', """
def f(x):
    r = range(0, 10, 3)
    return x * len(r) + r[1]
""", ['t:4'], 1, 0),
    ('no_grad_decorator_helper', """
def g(t):
    with torch.no_grad():
        return t * 2
def f(x):
    return g(x) + x
""", ['g:4'], 1, 0),
    ('exception_in_loop_caught', """
def f(x):
    total = 0
    for i in range(4):
        try:
            if i == 2:
                raise ValueError(i)
            total = total + i
        except ValueError:
            total = total - 1
    return x * total
""", ['t:4'], 1, 0),
    ('generator_with_state', """
def scaled(xs, k):
    for x in xs:
        yield x * k
        k = k + 1
def f(x):
    return list(scaled([x, x], 2.0))
""", ['t:4'], 1, 0),
    ('class_method_and_property', """
class Scaler:
    def __init__(self, k):
        self._k = k
    @property
    def k(self):
        return self._k * 2
    def apply(self, t):
        return t * self.k
S = Scaler(1.5)
def f(x):
    return S.apply(x)
""", ['t:4'], 1, 0),
    ('dynamic_size_arith', """
def f(x):
    n = x.shape[0]
    return x.reshape(n // 2, 2).sum(1) * n
""", ['t:4'], 1, 0),
    ('sorted_tensors_by_shape', """
def f(a, b, c):
    xs = sorted([a, b, c], key=lambda t: t.shape[0])
    return xs[0].sum() + xs[-1].sum()
""", ['t:5', 't:3', 't:4'], 1, 0),
    # the running statistics are written back after the graph (Note [Writes into captured tensors])
    ('batchnorm_train_buffers', """
torch.manual_seed(0)
bn = torch.nn.BatchNorm1d(4)
def f(x):
    return bn(x) * 2
""", ['t:3,4'], 1, 0),
    ('dropout_eval_mode', """
torch.manual_seed(0)
drop = torch.nn.Dropout(0.5)
drop.eval()
def f(x):
    return drop(x) + 1
""", ['t:4'], 1, 0),
    ('module_attribute_counter', """
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.calls = 0
    def forward(self, x):
        self.calls = self.calls + 1
        return self.lin(x)
m = M()
def f(x):
    return m(x).sum()
""", ['t:2,4'], 1, 0),
    ('parameters_loop', """
torch.manual_seed(0)
lin = torch.nn.Linear(3, 3)
def f(x):
    total = x.sum()
    for p in lin.parameters():
        total = total + p.sum()
    return total
""", ['t:3'], 1, 0),
    ('vmap_inside', """
def f(x):
    return torch.vmap(lambda r: (r * r).sum())(x)
""", ['t:3,4'], 1, 0),
    ('functional_call_inside', """
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
params = {k: v.detach() * 2 for k, v in lin.named_parameters()}
def f(x):
    return torch.func.functional_call(lin, params, (x,))
""", ['t:4,3'], 1, 0),
    ('optional_arg_is_none', """
def g(x, bias=None):
    if bias is None:
        return x * 2
    return x * 2 + bias
def f(x):
    return g(x) + g(x, bias=x)
""", ['t:4'], 1, 0),
    ('kwonly_args', """
def g(x, *, k, b=1.0):
    return x * k + b
def f(x):
    return g(x, k=2.0) + g(x, b=0.5, k=3.0)
""", ['t:4'], 1, 0),
    ('chained_comparison_ints', """
def f(x, n):
    if 0 < n < 10:
        return x + n
    return x
""", ['t:4', 'i:3'], 1, 0),
    ('nested_list_comprehension', """
def f(x):
    rows = [[x * i + j for j in range(2)] for i in range(2)]
    return sum(sum(r) for r in rows)
""", ['t:4'], 1, 0),
    ('dict_get_and_in', """
def f(x):
    cfg = {"scale": 2.0}
    s = cfg.get("scale", 1.0) * cfg.get("missing", 3.0)
    if "scale" in cfg:
        x = x + 1
    return x * s
""", ['t:4'], 1, 0),
    ('int_ops_divmod_bits', """
def f(x, n):
    q, r = divmod(n, 2)
    return x * (q + r) + (n & 1) + (n << 1) + abs(-n) + round(2.6)
""", ['t:4', 'i:7'], 1, 0),
    ('size_comparisons', """
def f(x):
    if x.shape == (2, 3) and x.size(1) == 3:
        return x.t()
    return x
""", ['t:2,3'], 1, 0),
    ('len_and_iter_rows', """
def f(x):
    out = 0
    for row in x:
        out = out + row * len(x)
    return out
""", ['t:3,2'], 1, 0),
    ('no_grad_in_loop', """
def f(x):
    acc = x
    for i in range(3):
        with torch.no_grad():
            acc = acc + i
        acc = acc * 2
    return acc
""", ['g:3'], 1, 0),
    # PyTorch (2, 1): Dynamo does not resume g inside its try block (g runs eagerly); numtorch compiles g's code after the break
    ('callee_try_except_break', """
def g(x):
    try:
        print("g")
        return x + 1
    except ValueError:
        return x
def f(x):
    return g(x * 2) * 3
""", ['t:4'], 3, 3, (2, 1)),
    ('percent_format', """
def f(x, n):
    s = "%d-%s" % (n, "a")
    return x * len(s)
""", ['t:4', 'i:12'], 1, 0),
    ('tuple_comparison_constants', """
def f(x):
    if (1, 2) < (1, 3) and [1] == [1]:
        return x - 1
    return x
""", ['t:4'], 1, 0),
    ('tensor_bool_ops', """
def f(x):
    m = (x > 0) & (x < 1)
    return torch.where(m | (x < -1), x, torch.zeros_like(x))
""", ['t:4'], 1, 0),
    ('reductions_with_dims', """
def f(x):
    return x.sum(dim=0, keepdim=True) - x.mean(1, keepdim=True) + x.amax(dim=(0, 1))
""", ['t:3,4'], 1, 0),
    ('clamp_and_pow', """
def f(x):
    return (x.clamp(min=-0.5, max=0.5) ** 2).sqrt() + torch.exp(-x.abs())
""", ['t:4'], 1, 0),
    ('method_on_list_arg_pop', """
def f(xs):
    last = xs.pop()
    return last + len(xs)
""", ['L:t:3;t:3;t:3'], 1, 0),
    ('global_function_with_closure', """
def make(k):
    def g(t):
        return t * k
    return g
G3 = make(3.0)
def f(x):
    return G3(x) + 1
""", ['t:4'], 1, 0),
]
