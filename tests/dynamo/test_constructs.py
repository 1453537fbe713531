"""Constructs beyond the corpus's counts: gradients through captured grad-mode blocks,
exceptions propagating as in eager, breaks in frames with cells."""
import numpy as np
import pytest

import numtorch as torch
import numtorch._dynamo as dynamo


@pytest.fixture(autouse=True)
def _reset():
    dynamo.reset()
    yield
    dynamo.reset()


def _grads(fn, x, w):
    w.grad = None
    out = fn(x, w)
    out.backward()
    return out.item(), w.grad.numpy().copy(), torch.is_grad_enabled()


@pytest.mark.parametrize("brk", [False, True])
def test_no_grad_block_cuts_gradients_as_in_eager(brk, capsys):
    def f(x, w):
        y = x * w
        with torch.no_grad():
            s = y.sum()
            if brk:
                print("break inside the block")
            z = y * s
        return (z + y * y).sum()
    x, w = torch.randn(5), torch.randn(5, requires_grad=True)
    ref = _grads(f, x, w)
    got = _grads(torch.compile(f, backend="eager"), x, w)
    assert ref[0] == pytest.approx(got[0], rel=1e-6)
    np.testing.assert_allclose(ref[1], got[1], rtol=1e-6)
    assert got[2] is True                       # the mode is restored after the call


def test_grad_mode_block_in_a_frame_entered_without_grad():
    def f(x):
        with torch.enable_grad():
            y = x * 2
        return y, torch.is_grad_enabled()
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        ref = f(x)
        got = torch.compile(f, backend="eager")(x)
    assert ref[1] is got[1] is False
    assert ref[0].requires_grad and got[0].requires_grad


class Box:
    def __init__(self, t, n):
        self.t = t * 2
        self.n = n


class TooBig(ValueError):
    def __init__(self, msg, code):
        super().__init__(msg)
        self.code = code


def test_exceptions_propagate_as_in_eager_with_side_effects_once():
    def f(x, n, log):
        b = Box(x, n)
        log.append(n)
        if n > 3:
            raise TooBig("too big", n)
        return b
    cf = torch.compile(f, backend="eager")
    for fn in (f, cf):
        log = []
        b = fn(torch.ones(2), 2, log)
        assert type(b) is Box and b.t.tolist() == [2.0, 2.0] and b.n == 2
        with pytest.raises(TooBig, match="too big") as info:
            fn(torch.ones(2), 5, log)
        assert info.value.code == 5 and info.value.args == ("too big",)
        assert log == [2, 5]


def test_library_error_caught_by_the_frame():
    def f(x):
        try:
            y = x.reshape(7)
        except RuntimeError:
            y = x * 2
        return y
    x = torch.ones(4)
    assert torch.compile(f, backend="eager")(x).tolist() == f(x).tolist() == [2.0] * 4


def test_library_error_not_caught_propagates():
    def f(x):
        y = x + 1
        return y.reshape(7)
    with pytest.raises(RuntimeError) as eager:
        f(torch.ones(4))
    with pytest.raises(RuntimeError) as compiled:
        torch.compile(f, backend="eager")(torch.ones(4))
    assert str(eager.value) == str(compiled.value)


# -- user context managers (numtorch/_dynamo/contexts.py) ---------------------------------
class _Counter:
    def __init__(self):
        self.total = 0

    def __enter__(self):
        self.total += 1
        return self

    def __exit__(self, *exc):
        self.total += 10


def test_context_manager_object_from_outside_is_updated_once_per_call():
    acc = _Counter()

    def f(x):
        with acc as a:
            y = x * a.total
        return y, acc.total
    x = torch.ones(2)
    eager = [f(x) for _ in range(3)]
    acc.total = 0
    cf = torch.compile(f, backend="eager")
    got = [cf(x) for _ in range(3)]
    for (y1, t1), (y2, t2) in zip(eager, got):
        np.testing.assert_array_equal(y1.numpy(), y2.numpy())
        assert t1 == t2
    assert acc.total == 33


def test_break_inside_a_contextmanager_block_runs_the_frame_as_eager(capsys, monkeypatch):
    # torch.compile runs this frame eagerly too (explain: 0 graphs); the failed capture is
    # cached (Note [Eager cache entries]): later calls do not capture again
    import contextlib
    from numtorch._dynamo import eval_frame
    log = []
    captures = []
    real = eval_frame._capture_once
    monkeypatch.setattr(eval_frame, "_capture_once",
                        lambda *a: captures.append(a[1].co_name) or real(*a))

    @contextlib.contextmanager
    def scaled(k):
        log.append("in")
        try:
            yield k * 2
        finally:
            log.append("out")

    def f(x):
        with scaled(3) as k:
            print("inside")
            y = x * k
        return y
    x = torch.ones(2)
    ref = f(x)
    cf = torch.compile(f, backend="eager")
    got = [cf(x), cf(x)]
    for y in got:
        np.testing.assert_array_equal(y.numpy(), ref.numpy())
    assert log == ["in", "out"] * 3
    assert capsys.readouterr().out == "inside\n" * 3
    n = len(captures)
    assert n >= 1 and cf(x).shape == (2,) and len(captures) == n


def test_exception_through_a_context_manager_propagates_as_in_eager():
    import contextlib
    log = []

    @contextlib.contextmanager
    def noted():
        log.append("in")
        try:
            yield
        finally:
            log.append("out")

    def f(x):
        with noted():
            y = x + 1
            raise KeyError("k")
        return y
    with pytest.raises(KeyError):
        f(torch.ones(2))
    with pytest.raises(KeyError):
        torch.compile(f, backend="eager")(torch.ones(2))
    assert log == ["in", "out", "in", "out"]


def _misbehaving_context_managers():
    import contextlib

    @contextlib.contextmanager
    def no_yield():
        if False:
            yield

    @contextlib.contextmanager
    def two_yields():
        yield 1
        yield 2

    @contextlib.contextmanager
    def yields_after_throw():
        try:
            yield
        except KeyError:
            pass
        yield
    return [(no_yield, False, "generator didn't yield"),
            (two_yields, False, "generator didn't stop"),
            (yields_after_throw, True, r"generator didn't stop after throw\(\)")]


@pytest.mark.parametrize("case", range(3))
def test_a_misbehaving_contextmanager_raises_contextlibs_error_as_in_eager(case):
    # Note [Generator context managers]: the suspended generator's exit raises what
    # contextlib's __exit__ raises; without fullgraph it reaches the caller as in eager,
    # with fullgraph it is the break's reason
    cm, raise_inside, message = _misbehaving_context_managers()[case]

    def f(x):
        with cm():
            if raise_inside:
                raise KeyError("k")
            y = x + 1
        return y
    with pytest.raises(RuntimeError, match=message):
        f(torch.ones(2))
    with pytest.raises(RuntimeError, match=message):
        torch.compile(f, backend="eager")(torch.ones(2))
    with pytest.raises(torch._dynamo.exc.Unsupported, match="RuntimeError.*" + message):
        torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
