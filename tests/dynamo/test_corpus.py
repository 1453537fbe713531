"""The capture corpus: each program eager vs compiled (equal results and printed side
effects, expected graph/break counts), and the counts cross-checked with torch.compile."""
import contextlib
import io

import numpy as np
import pytest

import numtorch
import numtorch._dynamo as dynamo
from dynamo_corpus import PROGRAMS as _BASIC
from dynamo_corpus_constructs import PROGRAMS as _CONSTRUCTS
from dynamo_corpus_more import PROGRAMS as _MORE

PROGRAMS = _BASIC + _CONSTRUCTS + _MORE


@pytest.fixture(autouse=True)
def _keep_rng_state():
    # corpus programs seed the global generators (torch.manual_seed(0) before building a
    # module): leave later tests the state they would have had without this file
    state = numtorch.get_rng_state()
    try:
        import torch
        torch_state = torch.get_rng_state()
    except ImportError:
        torch = None
    yield
    numtorch.set_rng_state(state)
    if torch is not None:
        torch.set_rng_state(torch_state)


def _args(spec, lib, rng):
    out = []
    for s in spec:
        kind, _, rest = s.partition(":")
        if kind in ("t", "g"):    # g: a tensor that requires grad
            shape = tuple(int(d) for d in rest.split(","))
            out.append(lib.tensor(rng.standard_normal(shape).astype(np.float32),
                                  requires_grad=kind == "g"))
        elif kind == "i":
            out.append(int(rest))
        elif kind == "L":
            out.append(_args([p for p in rest.split(";") if p], lib, rng))
    return out


def _load(src, lib):
    ns = {"torch": lib}
    exec(compile(src, "<corpus>", "exec"), ns)
    return ns["f"]


def _run(fn, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
    return out, buf.getvalue()


def _same(a, b):
    if isinstance(a, numtorch.Tensor):
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


# Programs whose second call recompiles, as torch.compile's does (graphs added):
# module_attribute_counter reads an int attribute it increments, a guarded constant.
RECOMPILES = {"module_attribute_counter": 1}

CASES = [p[:5] for p in PROGRAMS]
TORCH_CASES = [p[:3] + (p[5] if len(p) > 5 else p[3:5]) for p in PROGRAMS]


@pytest.mark.parametrize("name,src,spec,graphs,breaks", CASES, ids=[p[0] for p in PROGRAMS])
def test_program(name, src, spec, graphs, breaks):
    f = _load(src, numtorch)
    eager_out, eager_print = _run(f, _args(spec, numtorch, np.random.default_rng(0)))
    seen = []

    def counting(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    dynamo.reset()
    cf = numtorch.compile(f, backend=counting)
    args = _args(spec, numtorch, np.random.default_rng(0))
    out, printed = _run(cf, args)
    _same(eager_out, out)
    assert printed == eager_print
    # list arguments: side effects happened once, like eager
    eager_args = _args(spec, numtorch, np.random.default_rng(0))
    _run(f, eager_args)
    for a, b in zip(eager_args, args):
        if isinstance(a, list):
            _same(a, b)
    n_first = len(seen)
    out2, printed2 = _run(cf, _args(spec, numtorch, np.random.default_rng(0)))   # cache hit
    _same(eager_out, out2)
    assert printed2 == eager_print and len(seen) == n_first + RECOMPILES.get(name, 0)
    with contextlib.redirect_stdout(io.StringIO()):
        e = dynamo.explain(f)(*_args(spec, numtorch, np.random.default_rng(0)))
    assert (e.graph_count, e.graph_break_count) == (graphs, breaks), str(e)


@pytest.mark.parametrize("name,src,spec,graphs,breaks", TORCH_CASES,
                         ids=[p[0] for p in PROGRAMS])
def test_counts_match_torch(name, src, spec, graphs, breaks):
    torch = pytest.importorskip("torch")
    f = _load(src, torch)
    torch._dynamo.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        e = torch._dynamo.explain(f)(*_args(spec, torch, np.random.default_rng(0)))
    torch._dynamo.reset()
    # PyTorch reports graph_count - 1 breaks (-1) for a function that makes no graph
    assert (e.graph_count, max(e.graph_break_count, 0)) == (graphs, breaks)
