"""The eager shortcuts of the ops layer give bit-identical results to the general path.

Each shortcut (Note [Eager fast path], Note [ReLU's zero], the constant broadcast in
``broadcast_to``) skips binds the general path would make; these tests compute the same
values through the general path (a transform, which never takes the shortcuts, or the
NumPy expression the primitives evaluate) and compare the bits, gradients included.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, jvp, vmap

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.reshape(-1).view(np.uint8)


def _same(t, ref):
    got = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(_bits(got), _bits(ref))


def _sample(dtype, shape, seed=0):
    a = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dtype)
    if a.dtype.kind == "f" and a.size >= 4:   # the values where ReLU's definition matters
        a.flat[:4] = [np.nan, -0.0, 0.0, -np.inf]
    return a


@pytest.mark.parametrize("shape", [(), (7,), (64, 100)])   # 6400 elements: the blend select
@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_matches_where(dtype, shape):
    a = _sample(dtype, shape)
    ref = np.where(a < 0, np.zeros((), dtype), a)   # eager: -0.0 stays -0.0 (Note [ReLU's zero])
    _same(torch.relu(torch.tensor(a)), ref)                       # eager, no grad
    _same(torch.nn.functional.relu(torch.tensor(a)), ref)
    if shape:   # under vmap, eager relu of the batched value (Note [Elementwise
        _same(vmap(torch.relu)(torch.tensor(a)), ref)   # composites under vmap])
        # under other transforms, one select of `a <= 0`: +0.0 at -0.0
        _same(jvp(torch.relu, (torch.tensor(a),), (torch.tensor(a),))[0],
              np.where(a <= 0, np.zeros((), dtype), a))
    if a.dtype.kind == "f":
        w = torch.tensor(a, requires_grad=True)
        out = torch.relu(w)
        _same(out, ref)
        out.sum().backward()
        _same(w.grad, np.where(a <= 0, 0, 1).astype(dtype))        # 0 at 0, 1 at NaN
        if shape:
            g = vmap(grad(lambda t: torch.relu(t).sum()))(torch.tensor(a.reshape(shape[0], -1)))
            _same(g, np.where(a <= 0, 0, 1).astype(dtype).reshape(shape[0], -1))


def test_relu_of_zeros_matches_pytorch():
    """relu(-0.0) is -0.0 and the gradient is 0 at both zeros and 1 at NaN, in PyTorch."""
    pt = pytest.importorskip("torch")
    a = np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.inf], np.float32)
    for lib in (torch, pt):
        for relu in (lib.relu, lib.nn.functional.relu, lib.nn.ReLU()):
            w = lib.tensor(a, requires_grad=True)
            out = relu(w)
            out.sum().backward()
            assert np.array_equal(_bits(out.detach().numpy()), _bits(pt.relu(pt.tensor(a)).numpy()))
            np.testing.assert_array_equal(w.grad.numpy(), [0, 0, 0, 1, 1, 0])
        x = lib.tensor(a)
        x.relu_()
        assert np.array_equal(_bits(x.numpy()), _bits(np.where(a < 0, np.float32(0), a)))


def test_relu_meta_and_errors():
    m = torch.relu(torch.empty(3, 4, device="meta", requires_grad=True))
    assert m.shape == (3, 4) and m.device.type == "meta"
    with pytest.raises(RuntimeError, match="Bool"):
        torch.relu(torch.tensor([True, False]))


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_comparison_of_tensors_requiring_grad(op):
    # Comparisons take the fast path even when an operand requires grad (no derivative).
    a, b = _sample(np.float32, (5, 6), 1), _sample(np.float32, (6,), 2)
    w = torch.tensor(a, requires_grad=True)
    for other, ref_other in ((torch.tensor(b), b), (0.5, np.float32(0.5)), (torch.tensor(b, requires_grad=True), b)):
        out = getattr(torch, op)(w, other)
        _same(out, getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater",
                                "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}[op])(a, ref_other))
        assert out.grad_fn is None and not out.requires_grad
        batched = vmap(lambda t: getattr(torch, op)(t, other))(w)   # the strict path
        _same(batched, out.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_division_fast_path_matches_strict(dtype):
    a, b = _sample(dtype, (4, 5), 3), _sample(dtype, (4, 5), 4)
    if a.dtype.kind != "f":
        b[b == 0] = 3
    x, y = torch.tensor(a), torch.tensor(b)
    fast = x / y
    strict = vmap(torch.div)(x, y)          # under vmap: promotion and binds, no shortcut
    _same(fast, strict.numpy())
    expected = np.float32 if a.dtype.kind != "f" else dtype   # ints divide in the default float
    assert fast.numpy().dtype == expected
    if a.dtype.kind == "f":
        w = torch.tensor(a, requires_grad=True)
        _same(w / y, fast.numpy())           # same shape and dtype under autograd: one bind
        (w / y).sum().backward()
        _same(w.grad, (1 / torch.tensor(b)).numpy())


@pytest.mark.parametrize("scalar", [0.01, 3, -2.5])
def test_number_operand_under_autograd(scalar):
    # The number's tensor is broadcast without a recorded node; values and gradients as in NumPy.
    a = _sample(np.float32, (40, 3), 5)
    w = torch.tensor(a, requires_grad=True)
    out = w * scalar - scalar
    _same(out, (a * np.float32(scalar)) - np.float32(scalar))
    assert out.grad_fn.name() == "SubBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "MulBackward0"
    out.sum().backward()
    _same(w.grad, np.full(a.shape, scalar, np.float32))
    _same(vmap(lambda t: t * scalar - scalar)(torch.tensor(a)), out.detach().numpy())


def test_where_with_a_number_operand():
    a = _sample(np.float64, (6, 7), 6)
    c = torch.tensor(a > 0)
    w = torch.tensor(a, requires_grad=True)
    for out, ref in ((torch.where(c, w, 0.0), np.where(a > 0, a, 0.0)),
                     (torch.where(c, 1.5, w), np.where(a > 0, 1.5, a)),
                     (torch.where(c, w, torch.tensor(a[0])), np.where(a > 0, a, a[0]))):
        _same(out, ref)
        (g,) = torch.autograd.grad(out.sum(), [w])
        assert g.shape == w.shape
    (g,) = torch.autograd.grad(torch.where(c, w, 0.0).sum(), [w])
    _same(g, (a > 0).astype(np.float64))


def test_version_checks_follow_what_backward_reads():
    # Note [What backward reads], through the cached per-pattern plans of the engine: w's
    # gradient in w * k reads k only, so writing w is fine and writing k is an error.
    w = torch.ones(3, requires_grad=True)
    k = torch.full((3,), 2.0)
    y = w * k
    with torch.no_grad():
        w.add_(1)
    y.sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full(3, 2.0, np.float32))
    y = w * k
    k.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_outer_product_contraction(dtype):
    # A contraction over a dim of size 1 is an outer product (one example's weight
    # gradient): computed as a broadcast multiply, the same values as the GEMM's.
    rng = np.random.default_rng(7)
    g, x = rng.standard_normal((1, 300)).astype(dtype), rng.standard_normal((1, 200)).astype(dtype)
    _same(torch.tensor(g).T @ torch.tensor(x), np.outer(g, x).astype(dtype))
    w = torch.tensor(rng.standard_normal((300, 200)).astype(dtype), requires_grad=True)
    (torch.tensor(x) @ w.T).mul(torch.tensor(g)).sum().backward()
    _same(w.grad, np.outer(g, x).astype(dtype))


# -- Note [Eager fast path]: paths chosen by looking, primitives given arrays only ---------

def _tries(fn):
    import ast
    import inspect
    import textwrap
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Try)]


def test_fast_paths_choose_without_exceptions():
    from numtorch._ops import _common, index, inplace, methods
    for fn in (_common.elementwise_binary, _common.to_tensor, _common.number_array,
               _common.broadcast_pair, index.getitem, inplace.inplace, inplace._fit,
               methods._ufunc_inplace):
        assert _tries(fn) == [], f"{fn.__qualname__} uses try at lines {_tries(fn)}"


@pytest.fixture
def strict_impls(monkeypatch):
    """Every binary elementwise primitive's impl, checked: arrays of one dtype only."""
    from numtorch._prims import elementwise as E
    calls = []
    for name in ("add", "sub", "mul", "div", "pow", "fmod", "remainder", "maximum", "lt", "eq"):
        prim = getattr(E, name)

        def checked(x, y, _impl=prim.impl, _name=name):
            assert x.__class__ is np.ndarray and y.__class__ is np.ndarray, (_name, x, y)
            assert x.dtype == y.dtype, (_name, x.dtype, y.dtype)
            calls.append(_name)
            return _impl(x, y)
        monkeypatch.setattr(prim, "impl", checked)
    return calls


def test_numbers_reach_primitives_as_arrays(strict_impls):
    x = torch.tensor(_sample(np.float32, (3, 4), 7))
    i = torch.tensor(np.arange(-3, 3, dtype=np.int32))
    ref = x.numpy()
    _same(x * 2.5, ref * np.float32(2.5))
    _same(3 - x, np.float32(3) - ref)
    _same(x < 0.5, ref < np.float32(0.5))
    _same(i ** 2, np.arange(-3, 3, dtype=np.int32) ** 2)
    _same(2 ** i.abs(), 2 ** np.abs(np.arange(-3, 3, dtype=np.int32)))
    _same(i / 2, np.arange(-3, 3, dtype=np.int32).astype(np.float32) / np.float32(2))
    _same(torch.fmod(i, 2), np.fmod(np.arange(-3, 3, dtype=np.int32), 2).astype(np.int32))
    # one impl call per op, and nothing else bound
    assert strict_impls == ["mul", "sub", "lt", "pow", "pow", "div", "fmod"]


@pytest.mark.parametrize("dtype,number,op", [("int8", 300, "add"), ("uint8", -1000, "sub"),
                                             ("int32", 2 ** 40, "mul"), ("int16", -70000, "add")])
def test_out_of_range_ints_wrap_as_in_pytorch(dtype, number, op):
    pt = pytest.importorskip("torch")
    a = np.array([1, 7, -3], dtype=dtype) if dtype[0] == "i" else np.array([1, 7, 200], dtype=dtype)
    got = getattr(torch.tensor(a), op)(number)
    want = getattr(pt.tensor(a), op)(number).numpy()
    _same(got, want)
    t = torch.tensor(a)
    getattr(t, op + "_")(number)                 # the in-place shortcut wraps the same way
    _same(t, want)


def test_kernels_numpy_lacks_raise_pytorchs_errors():
    c = torch.ones(2, dtype=torch.complex64)
    for fn, kernel in ((torch.fmod, "fmod"), (torch.remainder, "remainder"),
                       (torch.floor_divide, "div_floor"), (torch.atan2, "atan2")):
        with pytest.raises(NotImplementedError, match=f'"{kernel}_cpu" not implemented for '
                                                      f"'ComplexFloat'"):
            fn(c, c if fn is torch.atan2 else 2)
    with pytest.raises(NotImplementedError, match="div_trunc_cpu"):
        torch.div(c, 2, rounding_mode="trunc")
    b = torch.tensor([True, False])
    for f in (lambda: b - b, lambda: True - b, lambda: b - True, lambda: b.sub_(b)):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
            f()
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\) at non-singleton dimension 1"):
        torch.ones(2, 3) + torch.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        torch.ones(3).add_(torch.ones(2, 3))


def test_basic_indexing_shortcut_matches_numpy():
    import itertools
    a = np.arange(24).reshape(2, 3, 4)
    t = torch.tensor(a)
    items = [0, -1, 2, 3, -3, slice(1, None), None, Ellipsis]
    for r in (1, 2, 3):
        for idx in itertools.product(items, repeat=r):
            try:
                ref = a[idx]
            except IndexError:
                with pytest.raises((IndexError, RuntimeError)):
                    t[idx]
                continue
            got = t[idx]
            assert got.shape == ref.shape and np.array_equal(got.numpy(), ref), idx



def test_basic_indexing_shortcut_is_a_view_as_the_recorded_path_is():
    """The shortcut (a tensor not requiring grad) returns a view sharing the base's version
    counter, as the recorded path does; the recorded path still names PyTorch's node."""
    base = torch.arange(12.0).reshape(3, 4).clone()     # a base, not a view
    for idx in (1, (slice(None), 2), (0, slice(1, 3)), (Ellipsis, None, 3)):
        fast = base[idx]
        leaf = base.clone().requires_grad_()
        recorded = leaf[idx]
        assert fast._base is base and fast._version == base._version
        assert fast.shape == recorded.shape
        assert np.array_equal(fast.numpy(), recorded.detach().numpy())
        before = base._version
        fast.add_(1)                                  # writes through, counted on the base
        assert base._version == fast._version > before
    row = base[0]
    assert row[1]._base is base                       # a view of a view keeps the root
    assert torch.arange(3.0).requires_grad_()[1].grad_fn.name() == "SelectBackward0"


# -- Note [Broadcasting operands under autograd]: one node per broadcasting op -------------

_BROADCASTS = [((5, 6), (6,)), ((5, 1), (1, 6)), ((5, 6), ()), ((1,), (4, 3)), ((2, 1, 3), (4, 1))]


def _normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
           "pow": torch.pow, "maximum": torch.maximum}


@pytest.mark.parametrize("needs", ["both", "first", "second"])
@pytest.mark.parametrize("shapes", _BROADCASTS)
@pytest.mark.parametrize("op", sorted(_BINARY))
def test_broadcasting_op_gradients_match_strict_path(op, shapes, needs):
    # Eager backward (one node where the Note allows it) against func.grad, whose trace
    # takes the strict path (an explicit broadcast_in_dim node per operand): same bits.
    f = _BINARY[op]
    a = np.abs(_normal(shapes[0], 8)) + 0.5   # pow: positive bases
    b = _normal(shapes[1], 9) / 4
    x = torch.tensor(a, requires_grad=needs != "second")
    y = torch.tensor(b, requires_grad=needs != "first")
    out = f(x, y)
    wanted = [t for t in (x, y) if t.requires_grad]
    got = torch.autograd.grad((out * out).sum(), wanted)
    argnums = tuple(i for i, t in enumerate((x, y)) if t.requires_grad)
    ref = grad(lambda p, q: (f(p, q) * f(p, q)).sum(), argnums=argnums)(
        torch.tensor(a), torch.tensor(b))
    for g, r, t in zip(got, ref, wanted):
        assert g.shape == t.shape
        _same(g, r.numpy())
    _same(out, f(torch.tensor(a), torch.tensor(b)).numpy())


def test_broadcasting_ops_against_pytorch():
    pt = pytest.importorskip("torch")
    a, b = _normal((5, 6), 10).astype(np.float32), _normal(6, 11).astype(np.float32)
    grads = []
    for lib in (torch, pt):
        x, bias = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = ((x * 0.5 + bias) ** 2 - 1.5 * bias / 3).sum()
        grads.append([g.detach().numpy() for g in lib.autograd.grad(out, [x, bias])])
        names = [None if n is None else type(n).__name__ if lib is pt else n.name()
                 for n, _ in (x + bias).grad_fn.next_functions]
        assert names == ["AccumulateGrad", "AccumulateGrad"]   # no ExpandBackward0 between
    for g, r in zip(*grads):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def test_broadcasting_op_second_order():
    # grad of grad through one-node broadcasts (create_graph), against func's strict path.
    a, b = _normal((4, 3), 12), _normal(3, 13)

    def f(x, c):
        return ((x * x + c) ** 2 * 0.5).sum()

    x, c = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (gc,) = torch.autograd.grad(f(x, c), [c], create_graph=True)
    (gx,) = torch.autograd.grad((gc * gc).sum(), [x])
    ref = grad(lambda p: (grad(f, argnums=1)(p, torch.tensor(b)) ** 2).sum())(torch.tensor(a))
    np.testing.assert_allclose(gx.numpy(), ref.numpy(), rtol=1e-12)
    # d/dx of sum_j (sum_i (x_ij^2 + c_j))^2 = 4 x_ij * sum_i (x_ij^2 + c_j)
    np.testing.assert_allclose(gx.numpy(), 4 * a * (a * a + b).sum(0), rtol=1e-12)


def test_broadcast_operand_written_in_place_is_caught():
    # The saved broadcast view shares the operand's version counter: w's gradient in
    # w * k reads k, so writing k in place is an error (as in PyTorch); in w + k nothing
    # reads k, so it is fine.
    w = torch.ones(2, 3, requires_grad=True)
    k = torch.full((3,), 2.0)
    y = w * k
    k.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = w + k
    k.add_(1)
    y.sum().backward()
    _same(w.grad, np.ones((2, 3), np.float32))


def test_broadcasting_node_hooks_see_input_shapes():
    x = torch.ones(4, 3, requires_grad=True)
    bias = torch.ones(3, requires_grad=True)
    out = x + bias
    seen = []
    out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
        [tuple(g.shape) for g in grad_inputs]))
    out.sum().backward()
    assert seen == [[(4, 3), (3,)]]
    _same(bias.grad, np.full(3, 4, np.float32))


@pytest.mark.parametrize("lib_name", ["numtorch", "torch"])
def test_inplace_write_to_a_broadcast_operand_is_caught(lib_name):
    """A broadcast operand a node saves is a view of the operand: writing the operand in
    place afterwards makes backward raise, in PyTorch's words, whether the op took the
    one-node path (`a * 2 + b`, whose saved broadcast of b is reused op after op, Note
    [Saved numbers]) or the strict path (`(a + b) * b`, where mul reads b)."""
    lib = torch if lib_name == "numtorch" else pytest.importorskip("torch")
    b = lib.nn.Parameter(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
    a = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    y1, y2 = a * 2 + b, a * 3 + b
    (y1.sum() + y2.sum()).backward()
    np.testing.assert_array_equal(b.grad.numpy(), [4.0, 4.0, 4.0])
    y3 = (a + b) * b
    y4 = (a * b).sum()
    with lib.no_grad():
        b.add_(1)
    np.testing.assert_array_equal((a * 1 + b).detach().numpy(), [[3.0, 4.0, 5.0]] * 2)
    for y in (y3.sum(), y4):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


# -- Note [Eager views], Note [Eager cat and stack], Note [Eager clamp], Note [Eager softmax] --

def _no_binds(monkeypatch):
    """Count the binds and view-arg checks that reach the primitives (the fast paths make none)."""
    from numtorch._core import primitive as P
    calls = []
    real = P.eval_bind

    def counting(prim, args, params):
        calls.append(prim.name)
        return real(prim, args, params)
    monkeypatch.setattr(P, "eval_bind", counting)
    return calls


_VIEW_CASES = [
    ("view", (12,), lambda t: t.view(2, 6)), ("view", (3, 4), lambda t: t.view(-1)),
    ("view", (3, 4), lambda t: t.view((4, 3))), ("view", (3, 4), lambda t: t.view(torch.Size([2, 6]))),
    ("reshape", (3, 4), lambda t: t.reshape(-1, 2)), ("reshape", (2, 3, 2), lambda t: t.reshape((6, 2))),
    ("flatten", (2, 3, 2), lambda t: t.flatten()), ("flatten", (2, 3, 2), lambda t: t.flatten(1)),
    ("flatten", (), lambda t: t.flatten()), ("flatten", (2, 0, 3), lambda t: t.flatten(0, 1)),
    ("unsqueeze", (3, 4), lambda t: t.unsqueeze(-1)), ("unsqueeze", (), lambda t: t.unsqueeze(0)),
    ("squeeze", (1, 3, 1), lambda t: t.squeeze()), ("squeeze", (1, 3, 1), lambda t: t.squeeze(-1)),
    ("t", (3, 4), lambda t: t.t()), ("transpose", (2, 3, 4), lambda t: t.transpose(0, -1)),
    ("permute", (2, 3, 4), lambda t: t.permute(2, 0, 1)), ("permute", (2, 3, 4), lambda t: t.permute((1, 2, 0))),
    ("expand", (3, 1), lambda t: t.expand(2, 3, 4)), ("expand", (1,), lambda t: t.expand(5, -1)),
    ("expand", (), lambda t: t.expand(2, 2)), ("unsqueeze", (0, 3), lambda t: t.unsqueeze(1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("case", range(len(_VIEW_CASES)))
def test_eager_views_match_the_general_path(case, dtype, monkeypatch):
    name, shape, fn = _VIEW_CASES[case]
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    x = torch.tensor(a)
    general = fn(x)                        # a first call checks its arguments: the general path
    binds = _no_binds(monkeypatch)
    fast = fn(x)                           # the same call again: Note [Eager views]
    again = fn(x)                          # expand: with the strides cached by the second
    # an empty reshape is no view (NumPy copies nothing): the general path, never cached
    assert binds == ([] if general._base is not None else ["reshape"] * 2), (name, binds)
    ref = vmap(fn)(torch.tensor(a[None]))[0]   # under a transform: primitives only
    for out in (general, fast, again):
        assert out.shape == ref.shape and out._data.strides == general._data.strides
        assert out._data.flags.writeable == general._data.flags.writeable
        _same(out, ref.numpy())
        assert out._base is general._base
        if out._base is not None:
            assert out._base is x and out._version_counter is x._version_counter
            assert np.shares_memory(out._data, x._data) or out.numel() == 0
    if general._base is None:
        return
    # the view function replays the view on a new base (in-place ops under transforms)
    _same(fast._view_fn(torch.tensor(a + 1)), fn(torch.tensor(a + 1)).numpy())
    if fast.numel() and name != "expand":
        before = x._version
        fast.add_(1)                       # writes through, counted on the base
        assert x._version == before + 1 and general._version == x._version
        assert np.array_equal(x.numpy(), a + 1)
    monkeypatch.undo()
    v = fn(torch.tensor(a))._base          # a view of a view keeps the root base
    assert fn(v.view(v.shape)) is not None


def test_eager_views_of_views_and_layouts():
    base = torch.arange(24.0)
    x = base.view(4, 6)
    for _ in range(2):
        y = x.t().reshape(-1)                   # a transpose's reshape copies: no view
        assert y._base is None and not np.shares_memory(y._data, x._data)
        z = x.view(2, 12).unsqueeze(0)
        assert z._base is base and z._version_counter is base._version_counter
        _same(z._view_fn(torch.arange(24.0) * 2), (np.arange(24.0, dtype=np.float32) * 2).reshape(1, 2, 12))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(-1)                          # not cached: the same error again
    assert x.view(4, 6) is x and x.reshape(4, 6) is x   # as the general path: the input itself


@pytest.mark.parametrize("call", [lambda t: t.view(5, 5), lambda t: t.view(-1, -1), lambda t: t.reshape(7),
                                  lambda t: t.unsqueeze(3), lambda t: t.transpose(0, 2),
                                  lambda t: t.permute(0, 0), lambda t: t.permute(1), lambda t: t.t().t().t()[0].t(),
                                  lambda t: t.expand(3), lambda t: t.expand(2, 3), lambda t: t.flatten(1, 0),
                                  lambda t: t.squeeze(2), lambda t: t.view(True, 12), lambda t: t.split(0),
                                  lambda t: t.chunk(0), lambda t: t.split(2, 2), lambda t: t.view(np.int64(3), 4)])
def test_eager_views_raise_as_before(call):
    x = torch.arange(12.0).view(3, 4)
    outcomes = []
    for _ in range(2):   # the second call would take a cached fast path if any
        try:
            out = call(x)
            outcomes.append(("ok", tuple(out.shape) if isinstance(out, torch.Tensor) else len(out)))
        except Exception as e:   # noqa: BLE001 -- comparing the errors themselves
            outcomes.append((type(e), str(e)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("shape,size,dim", [((10,), 5, 0), ((10,), 3, 0), ((3, 4), 2, 1), ((3, 4), 4, 1),
                                            ((3, 4), 10, -1), ((0, 4), 2, 0), ((2, 5, 3), 2, -2)])
def test_eager_split_and_chunk_match_the_general_path(shape, size, dim, monkeypatch):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = torch.tensor(a)
    for fn in (lambda t: t.split(size, dim), lambda t: torch.chunk(t, size, dim)):
        w = torch.tensor(a, requires_grad=True)
        general = fn(w)                  # recorded: the general path
        binds = _no_binds(monkeypatch)
        fast = fn(x)
        assert binds == []
        monkeypatch.undo()
        assert len(fast) == len(general)
        for f, g in zip(fast, general):
            _same(f, g.detach().numpy())
            assert f._data.strides == g._data.strides
            assert f is x or (f._base is x and f._version_counter is x._version_counter)
            if f is not x:
                _same(f._view_fn(torch.tensor(a * 2)), (g * 2).detach().numpy())
    if x.numel():
        piece = x.split(size, dim)[-1]
        piece.zero_()
        assert x._version == piece._version and (x.numpy() == 0).any()


_CAT_CASES = [
    (lambda m, ts: m.cat(ts), [(3,), (4,)], np.float32), (lambda m, ts: m.cat(ts, 1), [(2, 3), (2, 1)], np.int64),
    (lambda m, ts: m.cat(ts, -2), [(2, 3), (0, 3), (1, 3)], np.float64), (lambda m, ts: m.cat(ts), [(5,)], np.float32),
    (lambda m, ts: m.stack(ts), [(3,), (3,)], np.float32), (lambda m, ts: m.stack(ts, 1), [(2, 3)] * 3, np.int32),
    (lambda m, ts: m.stack(ts, -1), [(2, 3)] * 2, np.uint8), (lambda m, ts: m.stack(ts), [(), ()], np.float32),
    (lambda m, ts: m.stack(ts, 2), [(4, 0)] * 2, np.float32), (lambda m, ts: m.cat(ts), [(0,), (3,)], np.float32),
    (lambda m, ts: m.cat(ts), [(0,), (2, 3)], np.float32), (lambda m, ts: m.stack(tuple(ts)), [(1,)] * 4, np.bool_),
]


@pytest.mark.parametrize("case", range(len(_CAT_CASES)))
def test_eager_cat_and_stack_match_the_general_path_and_pytorch(case):
    fn, shapes, dtype = _CAT_CASES[case]
    arrays = [np.arange(int(np.prod(s)), dtype=np.float64).reshape(s).astype(dtype) + i for i, s in enumerate(shapes)]
    fast = fn(torch, [torch.tensor(a) for a in arrays])
    # the general path: operands that require grad are recorded (float), or under vmap
    if dtype in (np.float32, np.float64):
        general = fn(torch, [torch.tensor(a, requires_grad=True) for a in arrays]).detach()
    else:   # under vmap, with operands batched by adding a batched zero
        zero = torch.zeros(1, dtype=torch.from_numpy(arrays[0]).dtype)
        general = vmap(lambda z: fn(torch, [torch.tensor(a) + z if dtype != np.bool_ else
                                            torch.tensor(a) | z for a in arrays]))(zero)[0]
    _same(fast, general.numpy())
    pt = pytest.importorskip("torch")
    _same(fast, fn(pt, [pt.tensor(a) for a in arrays]).numpy())
    assert fast._base is None and not any(np.shares_memory(fast._data, a) for a in arrays)


def test_eager_cat_and_stack_errors_and_promotion_unchanged():
    a, b = torch.ones(2, 3), torch.ones(2, 4)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([a, b])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([a, b])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.cat([a, a], 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.stack([a, a], 3)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        torch.cat([torch.tensor(1.0), torch.tensor(2.0)])
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        torch.cat([a, 1.0])
    with pytest.raises(RuntimeError, match="expected a non-empty list"):
        torch.stack([])
    mixed = torch.cat([torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.float64)])
    assert mixed.dtype == torch.float64   # promotion: the general path
    w = torch.ones(2, requires_grad=True)
    assert torch.stack([w, w]).grad_fn.name() == "StackBackward0"


def _nan_equal(got, ref):
    """Bits equal, except that a NaN may differ in sign (Note [Eager clamp])."""
    got = got.detach().numpy() if isinstance(got, torch.Tensor) else got
    assert got.dtype == ref.dtype and got.shape == ref.shape
    nan = np.isnan(ref) if ref.dtype.kind == "f" else np.zeros(ref.shape, bool)
    assert np.array_equal(np.isnan(got) if got.dtype.kind == "f" else nan, nan)
    assert np.array_equal(_bits(np.where(nan, 0, got).astype(ref.dtype)), _bits(np.where(nan, 0, ref).astype(ref.dtype)))


_CLAMP_BOUNDS = [(0, 3), (0.0, None), (-0.0, None), (None, 0.0), (None, -0.0), (0.5, 2.5), (3, 0),
                 (float("nan"), 1), (None, float("nan")), (1, None), (None, 2), (0, 2.5), (-0.0, 0.0),
                 (0.0, -0.0), (-1000, 1000), (float("-inf"), float("inf"))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("shape", [(), (0,), (9,), (40, 3)])
def test_eager_clamp_matches_the_general_path_and_pytorch(dtype, shape, monkeypatch):
    pt = pytest.importorskip("torch")
    vals = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 1.5, -2.5, 3.0, 0.5, -7.0])
    flat = np.random.default_rng(3).choice(vals, int(np.prod(shape)))
    a = (flat if np.dtype(dtype).kind == "f" else np.nan_to_num(flat, posinf=9, neginf=-9)).astype(dtype).reshape(shape)
    if np.dtype(dtype).kind == "f" and a.size:
        a.flat[0] = -np.nan   # PyTorch keeps the input's NaN, sign included
    for lo, hi in _CLAMP_BOUNDS:
        if np.dtype(dtype).kind in "iu" and lo == -1000 and np.iinfo(dtype).bits < 16:
            # Note [Scalars that must fit]: a bound outside the dtype raises on both paths
            for clamp in (lambda t: t.clamp(lo, hi), lambda t: vmap(lambda u: u.clamp(lo, hi))(t[None])):
                with pytest.raises(RuntimeError, match="without overflow"):
                    clamp(torch.tensor(a))
            with pytest.raises(RuntimeError, match="without overflow"):
                pt.tensor(a).clamp(lo, hi)
            continue
        binds = _no_binds(monkeypatch)
        fast = torch.tensor(a).clamp(lo, hi)
        assert binds == []
        monkeypatch.undo()
        general = vmap(lambda t: t.clamp(lo, hi))(torch.tensor(a[None]))[0]
        _nan_equal(fast, general.numpy())
        # NaN signs included, except float16's (PyTorch computes it in float32)
        same = _same if dtype != np.float16 else _nan_equal
        same(fast, pt.tensor(a).clamp(lo, hi).numpy())
        if lo is not None:
            same(torch.clamp_min(torch.tensor(a), lo), pt.clamp_min(pt.tensor(a), lo).numpy())


def test_eager_clamp_leaves_other_calls_to_the_general_path():
    x = torch.tensor([1.0, -2.0, 3.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        x.clamp()
    _same(x.clamp(torch.tensor(0.0), torch.tensor([1.0, 1.0, 2.0])), np.array([1.0, 0.0, 2.0], np.float32))
    assert torch.tensor([True, False]).clamp(0, 1).dtype == torch.int64   # as before: promotion
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    out = w.clamp(0, 1)
    assert out.grad_fn.name() == "ClampBackward1"
    out.sum().backward()
    _same(w.grad, np.array([1.0, 0.0], np.float32))   # a tie with a bound: the input's, as in PyTorch
    y = torch.tensor([1, 5, 9])
    y.clamp_(2, 6)
    _same(y, np.array([2, 5, 6], np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(10,), (3, 4), (2, 3, 5), (1,), (4, 1)])
def test_eager_softmax_matches_the_general_path(dtype, shape, monkeypatch):
    a = (np.random.default_rng(4).standard_normal(shape) * 5).astype(dtype)
    if a.size > 3:
        a.flat[:3] = [np.inf, -np.inf, np.nan]
    for dim in range(-len(shape), len(shape)):
        binds = _no_binds(monkeypatch)
        fast = torch.tensor(a).softmax(dim)
        assert binds == []
        monkeypatch.undo()
        _same(fast, vmap(lambda t: torch.softmax(t, dim))(torch.tensor(a[None]))[0].numpy())
        _same(torch.nn.functional.softmax(torch.tensor(a), dim), fast.numpy())
    pt = pytest.importorskip("torch")
    if dtype != np.float16:
        b = np.random.default_rng(5).standard_normal(shape).astype(dtype)
        np.testing.assert_allclose(torch.tensor(b).softmax(-1).numpy(), pt.tensor(b).softmax(-1).numpy(),
                                   rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_eager_softmax_leaves_other_calls_to_the_general_path():
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.softmax(2)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        x.softmax()
    got = x.softmax(1, dtype=torch.float64)
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), np.exp([[1.0, 2.0], [3.0, 5.0]]) /
                               np.exp([[1.0, 2.0], [3.0, 5.0]]).sum(1, keepdims=True), rtol=1e-15)
    assert torch.empty(0, 3).softmax(0).shape == (0, 3)
    _same(torch.tensor(2.0).softmax(0), np.float32(1.0).reshape(()))
    w = x.clone().requires_grad_()
    assert w.softmax(1).grad_fn.name() == "SoftmaxBackward0"


@pytest.mark.parametrize("op", ["exp", "sigmoid", "tanh", "sqrt", "log", "sin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int64])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_eager_unary_float_ops_match_the_general_path(op, dtype, shape, monkeypatch):
    a = _sample(dtype, shape, 6)
    if a.dtype.kind == "c":
        a = a + 1j * _sample(np.float32, shape, 7)
    binds = _no_binds(monkeypatch)
    fast = getattr(torch.tensor(a), op)()
    assert binds == []   # integers convert to float32 first, by the same shortcut
    monkeypatch.undo()
    if shape:
        _same(fast, vmap(getattr(torch, op))(torch.tensor(a[None]))[0].numpy())
    else:
        _same(fast, jvp(getattr(torch, op), (torch.tensor(a),), (torch.tensor(a),))[0].numpy())


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4)])
def test_eager_max_min_sum_argmax_match_the_general_path(dtype, shape, monkeypatch):
    a = _sample(dtype, shape, 8) if dtype is not np.bool_ else _sample(np.float32, shape, 8) > 0
    if a.dtype.kind == "f" and a.size >= 6:
        a.flat[4:6] = [0.0, -0.0]
    x = torch.tensor(a)
    for fn in (lambda t: t.max(), lambda t: t.min(), lambda t: torch.max(t)):
        binds = _no_binds(monkeypatch)
        fast = fn(x)
        assert binds == []
        monkeypatch.undo()
        _same(fast, vmap(fn)(torch.tensor(a[None]))[0].numpy())
    for dim in range(-len(shape), len(shape)):
        for keepdim in (False, True):
            for fn in (lambda t: t.argmax(dim, keepdim), lambda t: t.argmin(dim, keepdim=keepdim),
                       lambda t: t.sum(dim, keepdim), lambda t: torch.sum(t, dim=dim, keepdim=keepdim)):
                _same(fn(x), vmap(fn)(torch.tensor(a[None]))[0].numpy())


def test_eager_reductions_leave_other_calls_to_the_general_path():
    e = torch.empty(0, 3)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        e.max()
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.argmax(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.ones(2, 3).argmax(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.ones(2, 3).sum(-3)
    assert e.sum(0).shape == (3,) and e.argmax(1).shape == (0,)
    assert torch.tensor([1, 2], dtype=torch.int32).sum(0).dtype == torch.int64   # promotion
    assert torch.tensor(3.0).sum(0).shape == () and torch.tensor(3.0).argmax(0).item() == 0
    v, i = torch.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)
    _same(v, np.array([5.0, 7.0], np.float32))
    _same(i, np.array([1, 0], np.int64))
    _same(torch.tensor([1.0, 5.0]).max(torch.tensor([3.0, 2.0])), np.array([3.0, 5.0], np.float32))
    w = torch.tensor([1.0, 5.0], requires_grad=True)
    assert w.max().grad_fn.name() == "MaxBackward1" and w.sum(0).grad_fn is not None


def test_eager_creation_matches_the_general_path():
    for make, fill in ((torch.zeros, 0), (torch.ones, 1), (torch.empty, 0)):
        for args, kw in (((3,), {}), ((2, 3), {}), (((2, 3),), {}), (((),), {}), ((0,), {}),
                         ((4,), {"dtype": torch.int32}), ((2,), {"dtype": torch.float64})):
            t = make(*args, **kw)
            shape = args[0] if isinstance(args[0], tuple) else args
            dtype = kw.get("dtype", torch.float32)
            _same(t, np.full(shape, fill, dtype=dtype.numpy_dtype if hasattr(dtype, "numpy_dtype")
                             else {torch.float32: np.float32, torch.float64: np.float64,
                                   torch.int32: np.int32}[dtype]))
            assert t._base is None and not t.requires_grad
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.zeros(2).dtype == torch.float64 and torch.ones_like(torch.zeros(2, dtype=torch.int8)).dtype == torch.int8
    finally:
        torch.set_default_dtype(torch.float32)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        torch.zeros(2, -1)
    with pytest.raises(TypeError, match="must be tuple of ints, but found element of type float"):
        torch.ones(2.0)
    assert torch.zeros([2, 3]).shape == (2, 3) and torch.zeros(np.int64(2)).shape == (2,)
    assert torch.zeros(2, requires_grad=True).requires_grad
    assert torch.zeros(2, device="meta").device.type == "meta"
    x = torch.arange(6).view(2, 3).t()
    for like, fill in ((torch.zeros_like, 0), (torch.ones_like, 1)):
        out = like(x)
        _same(out, np.full((3, 2), fill, np.int64))
        assert out._base is None and out._version_counter is not x._version_counter
        assert like(x, dtype=torch.float32).dtype == torch.float32
    assert torch.ones_like(torch.ones(2, requires_grad=True)).requires_grad is False
    assert torch.ones_like(torch.ones(2), requires_grad=True).requires_grad


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_, np.complex64])
def test_eager_conversions_and_detach_match_the_general_path(dtype, monkeypatch):
    a = _sample(np.float64, (3, 4), 9)
    a = np.nan_to_num(a, nan=1.5, posinf=7.0, neginf=-7.0)   # NaN/inf to ints: undefined
    a = a.astype(dtype) if dtype is not np.bool_ else a > 0
    x = torch.tensor(a)
    for conv in (lambda t: t.double(), lambda t: t.float(), lambda t: t.long(), lambda t: t.to(torch.int32),
                 lambda t: t.to(torch.float16), lambda t: t.to(dtype=torch.float64), lambda t: t.bool(),
                 lambda t: t.to(torch.complex128)):
        binds = _no_binds(monkeypatch)
        with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            fast = conv(x)
            monkeypatch.undo()
            _same(fast, vmap(conv)(torch.tensor(a[None]))[0].numpy())
        assert binds == []
        assert fast is x if fast.dtype == x.dtype else fast._version_counter is not x._version_counter
    w = torch.tensor(a.astype(np.float32), requires_grad=True)
    assert w.double().grad_fn is not None   # recorded: the general path
    for t in (x, w, w * 2):
        d = t.detach()
        assert d._data is t._data and d._version_counter is t._version_counter
        assert d.grad_fn is None and not d.requires_grad and d._base is None
    assert vmap(lambda t: t.detach() * 2)(torch.tensor(a[None].astype(np.float32))).shape == (1, 3, 4)
