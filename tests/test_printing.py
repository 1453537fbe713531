"""Tensor printing (numtorch/_core/printing.py): ``repr`` equals PyTorch's, character for
character, and ``set_printoptions`` behaves as PyTorch's.

The first part states PyTorch's documented format as fixed strings (runs without PyTorch);
the second is a differential sweep against PyTorch's own ``repr``: hand-picked cases, the
print options, autograd suffixes, transforms, and a seeded random sweep.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import numtorch as torch
from numtorch._core import printing


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Every test starts and ends with the default options (in PyTorch too, if present)."""
    yield
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    try:
        import torch as real_torch
    except ImportError:
        return
    real_torch.set_printoptions(profile="default")
    real_torch.set_default_dtype(real_torch.float32)


# ---------------------------------------------------------------------------------------
# The format, as PyTorch documents and prints it


@pytest.mark.parametrize("make, expected", [
    (lambda: torch.tensor([1.0, 2.5]), "tensor([1.0000, 2.5000])"),
    (lambda: torch.tensor([1.0, -2.0, 30.0]), "tensor([ 1., -2., 30.])"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor([1e9, 1.0]), "tensor([1.0000e+09, 1.0000e+00])"),
    (lambda: torch.tensor([float("nan"), float("inf"), -float("inf")]),
     "tensor([nan, inf, -inf])"),
    (lambda: torch.tensor([float("nan"), 1.5]), "tensor([   nan, 1.5000])"),
    (lambda: torch.tensor([-0.0, 0.0]), "tensor([-0., 0.])"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([[1, 20], [300, -4]]), "tensor([[  1,  20],\n        [300,  -4]])"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: torch.tensor([1.0], dtype=torch.float64), "tensor([1.], dtype=torch.float64)"),
    (lambda: torch.tensor(3.5), "tensor(3.5000)"),
    (lambda: torch.tensor(7), "tensor(7)"),
    (lambda: torch.tensor([1.5 + 2j, 0.5 - 1j]), "tensor([1.5000+2.j, 0.5000-1.j])"),
    (lambda: torch.tensor([1 + 2j]), "tensor([1.+2.j])"),
    (lambda: torch.zeros(0), "tensor([])"),
    (lambda: torch.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: torch.zeros(0, dtype=torch.int64), "tensor([], dtype=torch.int64)"),
    (lambda: torch.zeros(2, 1, 2),
     "tensor([[[0., 0.]],\n\n        [[0., 0.]]])"),
    (lambda: torch.empty(2, 3, device="meta"), "tensor(..., device='meta', size=(2, 3))"),
    (lambda: torch.empty(2, device="meta", dtype=torch.int64),
     "tensor(..., device='meta', size=(2,), dtype=torch.int64)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True),
     "tensor([1., 2.], requires_grad=True)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True) * 2,
     "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (lambda: torch.nn.Parameter(torch.ones(2)),
     "Parameter containing:\ntensor([1., 1.], requires_grad=True)"),
    (lambda: torch.arange(2000),
     "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda: torch.arange(30.0),
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_documented_format(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_summarized_blocks_and_rows():
    x = torch.arange(8000).reshape(20, 20, 20)
    lines = repr(x).split("\n")
    assert lines[0] == "tensor([[[   0,    1,    2,  ...,   17,   18,   19],"
    assert "        ...," in lines and "" in lines      # an elided block, blank block separators
    assert all(line == line.rstrip() for line in lines), "no trailing spaces"


def test_set_printoptions_as_documented():
    torch.set_printoptions(precision=2)
    assert repr(torch.tensor([1.12345])) == "tensor([1.12])"
    torch.set_printoptions(threshold=5)
    assert repr(torch.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    torch.set_printoptions(profile="default")
    assert repr(torch.tensor([1.12345])) == "tensor([1.1235])"
    assert repr(torch.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_set_printoptions_sci_mode_and_profiles():
    torch.set_printoptions(sci_mode=True)
    assert repr(torch.tensor([1.5])) == "tensor([1.5000e+00])"
    torch.set_printoptions(precision=1)      # a call without sci_mode restores automatic
    assert repr(torch.tensor([1.5])) == "tensor([1.5])"
    torch.set_printoptions(sci_mode=False)
    assert repr(torch.tensor([1e-6, 1.0])) == "tensor([0.0, 1.0])"
    torch.set_printoptions(profile="short")
    assert printing.get_printoptions() == dict(precision=2, threshold=1000, edgeitems=2,
                                               linewidth=80, sci_mode=None)
    torch.set_printoptions(profile="full")
    assert "..." not in repr(torch.arange(5000))
    torch.set_printoptions(edgeitems=0, threshold=3)
    assert repr(torch.arange(5)) == "tensor([...], size=(5,))"


def test_printoptions_context_restores():
    before = printing.get_printoptions()
    with printing.printoptions(precision=1, linewidth=30):
        assert repr(torch.tensor([0.25])) == "tensor([0.2])"
    assert printing.get_printoptions() == before


def test_suffixes_wrap_at_linewidth():
    x = torch.arange(12, dtype=torch.float64).reshape(1, 12).requires_grad_() * 1.5
    assert repr(x) == (
        "tensor([[ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "         12.0000, 13.5000, 15.0000, 16.5000]], dtype=torch.float64,\n"
        "       grad_fn=<MulBackward0>)")


def test_tensors_inside_transforms_show_their_wrapper():
    seen = []

    def f(x):
        seen.append(repr(x))
        return x.sum()

    torch.vmap(f)(torch.ones(2, 3))
    torch.func.grad(f)(torch.ones(2))
    assert seen == [
        "BatchedTensor(lvl=1, bdim=0, value=\n    tensor([[1., 1., 1.],\n"
        "            [1., 1., 1.]])\n)",
        "GradTrackingTensor(lvl=1, value=\n    tensor([1., 1.])\n)"]
    torch.func.make_graph(f)(torch.ones(2))
    assert seen[-1] == "TraceTracer(lvl=1, shape=(2,), dtype=torch.float32)"


def test_large_tensors_format_only_what_is_shown(monkeypatch):
    calls = []
    original = printing._Formatter.format
    monkeypatch.setattr(printing._Formatter, "format",
                        lambda self, v: calls.append(v) or original(self, v))
    text = repr(torch.randn(1000, 1000))
    assert len(calls) == 36 and text.count("...") == 7   # 6 rows x 6 columns, 6+1 elisions


# ---------------------------------------------------------------------------------------
# Against PyTorch

def _real_torch():
    return pytest.importorskip("torch")


def _both(build):
    """(numtorch's repr, PyTorch's repr) of ``build(lib)`` for each library."""
    real = _real_torch()
    return repr(build(torch)), repr(build(real))


def _from_numpy(a):
    return lambda lib: lib.tensor(a.copy())


def _in_lib(expr, **names):
    """A builder evaluating ``expr`` with ``lib`` the library and ``names`` built in it."""
    return lambda lib: eval(expr, {"lib": lib, **{k: make(lib) for k, make in names.items()}})


_RNG = np.random.default_rng(1234)
_F, _I = _RNG.standard_normal, _RNG.integers
_NAN, _INF = float("nan"), float("inf")

# name -> NumPy data; each is printed in every dtype of its kind below.
FLOAT_DATA = {
    "0d": np.array(_F()), "0d-int": np.array(3.0), "1d": _F(5), "2d": _F((3, 4)),
    "3d": _F((2, 3, 4)), "4d": _F((2, 2, 2, 3)), "integral": np.round(_F((3, 5)) * 100),
    "big-integral": np.round(_F(6) * 1e9), "mixed": _F(6) * 10.0 ** np.arange(-3, 3),
    "tiny": _F(4) * 1e-6, "huge": _F(4) * 1e10, "ratio-1000": np.array([1.0, 1000.0]),
    "ratio-1001": np.array([1.0, 1001.0]), "1e8": np.array([1e8, 1.0]),
    "specials": np.array([_NAN, _INF, -_INF, 0.0, -0.0, 1.25]),
    "only-specials": np.array([_NAN, -_INF]), "neg-zero": np.array([-0.0, 0.0, 2.0]),
    "zeros": np.zeros((2, 3)), "long-row": _F((2, 40)), "summarized-1d": _F(2000),
    "summarized-2d": _F((40, 40)), "summarized-3d": _F((11, 12, 13)),
    "summarized-4d": _F((7, 2, 8, 20)), "summarized-rows": _F((1200, 2)),
    "summarized-sci": np.concatenate([_F(1500) * 1e-6, [1e4]]),
    "summarized-hidden-nan": np.concatenate([_F(5), [_NAN] * 1000, _F(5)]),
}
INT_DATA = {"0d": np.array(-5), "1d": _I(-100, 100, 7), "2d": _I(0, 120, (4, 5)),
            "3d": _I(-9, 9, (2, 2, 3)), "summarized": _I(-100, 127, (30, 50)),
            "wide": _I(0, 100, 40)}
BOOL_DATA = {"0d": np.array(False), "1d": _RNG.random(5) < 0.5, "all-true": np.ones(3, bool),
             "2d": _RNG.random((3, 4)) < 0.5, "summarized": _RNG.random(1500) < 0.5}
COMPLEX_DATA = {"0d": np.array(1 - 2j), "1d": _F(4) + 1j * _F(4),
                "integral": np.array([1 + 2j, -3 - 0j, 0 + 0j]),
                "mixed": _F(3) * 1e-6 + 1j * _F(3),
                "specials": np.array([complex(_NAN, 1), complex(1, _INF), complex(0, -0.0)]),
                "2d": _F((3, 3)) + 1j * _F((3, 3)), "summarized": _F(1200) + 1j * _F(1200)}

with np.errstate(over="ignore"):     # float16 overflows to inf, as it does in PyTorch
    FLOAT_CASES = [(f"{n}-{dt}", a.astype(dt)) for n, a in FLOAT_DATA.items()
                   for dt in ("float16", "float32", "float64")]
DTYPE_CASES = (
    FLOAT_CASES
    + [(f"{n}-{dt}", a.astype(dt)) for n, a in INT_DATA.items()
       for dt in ("int8", "int16", "int32", "int64")]
    + [(f"{n}-uint8", np.abs(a).astype("uint8")) for n, a in INT_DATA.items()]
    + [(f"bool-{n}", a) for n, a in BOOL_DATA.items()]
    + [(f"{n}-{dt}", a.astype(dt)) for n, a in COMPLEX_DATA.items()
       for dt in ("complex64", "complex128")])


@pytest.mark.parametrize("a", [pytest.param(a, id=i) for i, a in DTYPE_CASES])
def test_repr_of_every_dtype_matches_torch(a):
    ours, theirs = _both(_from_numpy(a))
    assert ours == theirs


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "complex64"])
def test_repr_of_empty_tensors_matches_torch(shape, dtype):
    ours, theirs = _both(lambda lib: lib.zeros(shape, dtype=getattr(lib, dtype)))
    assert ours == theirs


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex128"])
def test_repr_of_meta_tensors_matches_torch(shape, dtype):
    ours, theirs = _both(lambda lib: lib.empty(shape, dtype=getattr(lib, dtype), device="meta"))
    assert ours == theirs


OPTIONS = [dict(precision=0), dict(precision=2), dict(precision=8), dict(threshold=5),
           dict(threshold=0), dict(edgeitems=1, threshold=10), dict(edgeitems=0, threshold=10),
           dict(edgeitems=5, threshold=20), dict(linewidth=20), dict(linewidth=1),
           dict(linewidth=200), dict(sci_mode=True), dict(sci_mode=False),
           dict(profile="short"), dict(profile="full"), dict(profile="short", precision=6)]
OPTION_DATA = {"float": _F((4, 30)) * 3, "sci": _F(20) * 1e-7, "integral": np.round(_F(50)),
               "int": _I(-1000, 1000, (3, 3, 12)), "bool": _RNG.random(40) < 0.5,
               "complex": (_F(25) + 1j * _F(25)).astype("complex64"), "0d": np.array(2.0),
               "zeros": np.zeros(30), "big": _F(5000)}


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("name", list(OPTION_DATA))
def test_repr_under_printoptions_matches_torch(opts, name):
    real = _real_torch()
    torch.set_printoptions(**opts)
    real.set_printoptions(**opts)
    a = OPTION_DATA[name]
    for arr in [a, a.astype("float32")] if a.dtype == np.float64 else [a]:
        assert repr(torch.tensor(arr)) == repr(real.tensor(arr))


def test_repr_under_float64_default_dtype_matches_torch():
    real = _real_torch()
    for lib in (torch, real):
        lib.set_default_dtype(lib.float64)
    for expr in ("tensor([1.5, 2.0])", "tensor([1.5], dtype=lib.float32)", "tensor([1 + 1j])",
                 "tensor([1j], dtype=lib.complex64)", "zeros(0, dtype=lib.float32)", "zeros(0)",
                 "empty(2, device='meta', dtype=lib.float32)"):
        ours, theirs = _both(_in_lib("lib." + expr))
        assert ours == theirs, expr


# grad_fn names: a node is named after its primitive, PyTorch's name where the primitive
# is one of its ops, and a composite op's PyTorch name (Note [grad_fn names of composite
# ops]); tests/test_grad_fn_names.py sweeps more. OTHER_NAMES would compare with the name
# left out.
SAME_NAMES = ["x * 2", "x + 1", "x - 1", "x / 3", "x.exp()", "x.sin()", "x ** 2", "-x",
              "x.abs()", "x.sqrt()", "x.tanh()", "x.sigmoid()", "x.transpose(0, 1)",
              "x.cumsum(0)", "x[:1]", "x.flip(0)", "x.maximum(x * 2)", "x.double() * 2",
              "x.sum()", "x @ x", "x.reshape(4)", "x.clone()", "x.amax(0)", "x.double()",
              "lib.cat([x, x])", "x.prod()", "x.mean()", "x.t()", "x.relu()", "x.unsqueeze(0)",
              "x.softmax(0)"]
OTHER_NAMES = []
_GRAD_FN = re.compile(r",\s+grad_fn=<\w+>")




@pytest.mark.parametrize("expr", SAME_NAMES + OTHER_NAMES)
@pytest.mark.parametrize("x", [[[1.5, -2.0], [3.0, 4.25]], [[1e-5, 2.0], [3.0, 4.0]]],
                         ids=["fixed", "sci"])
def test_repr_with_grad_fn_matches_torch(expr, x):
    ours, theirs = _both(_in_lib(expr, x=lambda lib: lib.tensor(x, requires_grad=True)))
    if expr in OTHER_NAMES:
        ours, theirs = _GRAD_FN.sub(", grad_fn=<>", ours), _GRAD_FN.sub(", grad_fn=<>", theirs)
    assert ours == theirs


@pytest.mark.parametrize("build", [
    lambda lib: lib.tensor(2.5, requires_grad=True),
    lambda lib: lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True),
    lambda lib: lib.arange(30.0, dtype=lib.float16).requires_grad_(),
    lambda lib: lib.zeros(0, 2, requires_grad=True),
    lambda lib: lib.empty(2, device="meta", requires_grad=True) * 2,
    lambda lib: lib.nn.Parameter(lib.arange(6.0).reshape(2, 3)),
    lambda lib: lib.nn.Parameter(lib.ones(2), requires_grad=False),
    lambda lib: lib.nn.Parameter(lib.ones(2, dtype=lib.float64)) * 2,
    lambda lib: lib.nn.Buffer(lib.ones(2)),
], ids=["0d", "float64", "float16-wrapped", "empty", "meta-grad_fn", "param", "param-frozen",
        "param-op", "buffer"])
def test_repr_of_autograd_tensors_matches_torch(build):
    ours, theirs = _both(build)
    assert ours == theirs


def _printed_in(transform, lib):
    seen = []

    def f(x):
        seen.append(repr(x))
        return (x * 2).sum()

    x = lib.arange(6.0).reshape(2, 3)
    {"vmap": lambda: lib.func.vmap(f)(x), "vmap-dim1": lambda: lib.func.vmap(f, in_dims=1)(x),
     "vmap2": lambda: lib.func.vmap(lib.func.vmap(f))(x),
     "grad": lambda: lib.func.grad(f)(x),
     "jvp": lambda: lib.func.jvp(f, (x,), (lib.ones_like(x),)),
     "functionalize": lambda: lib.func.functionalize(f)(x)}[transform]()
    return seen


@pytest.mark.parametrize("transform", ["vmap", "vmap-dim1", "vmap2", "grad", "jvp",
                                       "functionalize"])
def test_repr_inside_transforms_matches_functorch(transform):
    real = _real_torch()
    assert _printed_in(transform, torch) == _printed_in(transform, real)


def _random_array(rng):
    """A random tensor's data: any dtype, 0-d to 4-d, magnitudes and special values."""
    shape = tuple(int(s) for s in rng.integers(1, 7, size=rng.integers(0, 5)))
    if shape and rng.random() < 0.15:
        shape = shape[:-1] + (int(rng.integers(300, 1200)),)
    kind = rng.choice(["f", "i", "b", "c"], p=[0.6, 0.2, 0.08, 0.12])
    n = int(np.prod(shape))
    if kind == "b":
        return rng.random(shape) < rng.random()
    if kind == "i":
        dt = str(rng.choice(["int8", "int16", "int32", "int64", "uint8"]))
        info = np.iinfo(dt)
        hi = min(info.max, 10 ** int(rng.integers(1, 19)))
        return rng.integers(max(info.min, -hi), hi, size=shape, dtype=dt, endpoint=True)
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 14)
    if rng.random() < 0.3:
        a = np.round(a)
    if rng.random() < 0.1:
        a = 10.0 ** rng.uniform(-6, 10, size=n) * rng.choice([-1, 1], size=n)
    if rng.random() < 0.3 and n:
        idx = rng.integers(0, n, size=max(1, n // 5))
        a[idx] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=idx.size)
    if kind == "c":
        a = a + 1j * rng.standard_normal(n) * 10.0 ** rng.integers(-6, 8)
        return a.astype(str(rng.choice(["complex64", "complex128"]))).reshape(shape)
    with np.errstate(over="ignore"):
        return a.astype(str(rng.choice(["float16", "float32", "float64"]))).reshape(shape)


def _random_options(rng):
    choices = dict(precision=[0, 1, 2, 6], threshold=[0, 3, 50, 100000],
                   edgeitems=[0, 1, 2, 4], linewidth=[1, 20, 40, 120],
                   sci_mode=[True, False], profile=["short", "full", "default"])
    return {k: v[int(rng.integers(len(v)))] for k, v in choices.items()
            if rng.random() < 0.35} if rng.random() < 0.3 else {}


@pytest.mark.parametrize("seed", range(20))
def test_random_tensors_print_as_in_torch(seed):
    real = _real_torch()
    rng = np.random.default_rng(seed)
    for case in range(50):
        a, opts = _random_array(rng), _random_options(rng)
        grad = a.dtype.kind in "fc" and rng.random() < 0.2
        torch.set_printoptions(**opts)
        real.set_printoptions(**opts)
        ours = repr(torch.tensor(a, requires_grad=grad))
        theirs = repr(real.tensor(a, requires_grad=grad))
        assert ours == theirs, f"case {case}: {a.dtype} {a.shape} {opts}\n{ours}\n!=\n{theirs}"
