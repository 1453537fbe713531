"""The accuracy minifier (numtorch._aot.repro): NUMTORCH_REPRO_AFTER=dynamo|aot with
NUMTORCH_REPRO_LEVEL=4 compares compiled graphs with eager, bisects to the first diverging
node and writes a standalone repro. Tested by a deliberately wrong lowering (sin lowered
as cos) injected into the inductor backend.
"""
import runpy

import numpy as np
import pytest

import numtorch as torch
from numtorch._aot.repro import AccuracyError, first_divergence
from numtorch._prims import elementwise as E
from numtorch._prims._lower import FLOAT_ONLY, pointwise


def _needs_cc():
    from numtorch._inductor import build
    if build.compiler() is None:
        pytest.skip("no C compiler")


@pytest.fixture
def wrong_sin(monkeypatch, tmp_path):
    _needs_cc()
    monkeypatch.setattr(E.sin, "lower", pointwise("cos({0})", **FLOAT_ONLY))
    monkeypatch.setenv("NUMTORCH_REPRO_LEVEL", "4")
    monkeypatch.setenv("NUMTORCH_REPRO_DIR", str(tmp_path))
    return tmp_path


def f(x):
    y = (x * 0.5).exp()
    return y.sin() * y + x.tanh()


def test_repro_after_dynamo_finds_the_wrong_node_and_writes_a_repro(wrong_sin, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("NUMTORCH_REPRO_AFTER", "dynamo")
    x = torch.randn(4, 5)
    with pytest.raises(AccuracyError, match=r"first diverging node is \w+ = prims\.sin"):
        torch.compile(f, backend="inductor")(x)
    script = wrong_sin / "repro.py"
    assert script.exists() and (wrong_sin / "repro.npz").exists()
    assert "prims.sin(" in script.read_text()
    runpy.run_path(str(script), run_name="__main__")   # the bug is still injected here
    out = capsys.readouterr().out
    diff = float(out.split("max abs difference:")[1].split()[0])
    assert diff > 1e-3


def test_repro_after_aot_checks_the_partitioned_graphs(wrong_sin, monkeypatch):
    monkeypatch.setenv("NUMTORCH_REPRO_AFTER", "aot")
    x = torch.randn(4, 5, requires_grad=True)
    with pytest.raises(AccuracyError, match=r"prims\.sin"):
        torch.compile(f, backend="inductor")(x)


def test_no_mismatch_no_error(monkeypatch, tmp_path):
    _needs_cc()
    monkeypatch.setenv("NUMTORCH_REPRO_AFTER", "dynamo")
    monkeypatch.setenv("NUMTORCH_REPRO_LEVEL", "4")
    monkeypatch.setenv("NUMTORCH_REPRO_DIR", str(tmp_path))
    x = torch.randn(4, 5)
    np.testing.assert_allclose(torch.compile(f, backend="inductor")(x).numpy(), f(x).numpy(),
                               rtol=1e-5, atol=1e-6)
    assert not (tmp_path / "repro.py").exists()


def test_first_divergence_bisects_to_the_first_wrong_node():
    from numtorch.func import make_graph
    x = torch.randn(6)
    g = make_graph(lambda x: ((x + 1).sin() * 2).cos().sum())(x)
    wrong = [n for n in g.nodes if n.prim.name == "sin"][0]

    def compile_fn(graph):     # a "backend" that gets sin wrong
        def run(*inputs):
            env = {id(v): t for v, t in zip(graph.inputs, inputs)}
            for c in graph.consts:
                env[id(c)] = c.value
            for n in graph.nodes:
                out = n.prim.bind(*[env[id(v)] for v in n.ins], **n.params)
                env[id(n.outs[0])] = out + 1 if n.prim is wrong.prim else out
            return tuple(env[id(o)] for o in graph.outputs)
        return run
    assert g.nodes[first_divergence(g, compile_fn, [x])] is wrong
    assert first_divergence(g, lambda graph: graph.inline, [x]) is None


def test_bad_settings_are_named(monkeypatch):
    from numtorch._aot.repro import repro_after, repro_level
    monkeypatch.setenv("NUMTORCH_REPRO_AFTER", "inductor")
    with pytest.raises(ValueError, match="NUMTORCH_REPRO_AFTER must be 'dynamo' or 'aot'"):
        repro_after()
    monkeypatch.setenv("NUMTORCH_REPRO_LEVEL", "7")
    with pytest.raises(ValueError, match="NUMTORCH_REPRO_LEVEL must be"):
        repro_level()
