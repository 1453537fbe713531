"""utils.benchmark: Measurement statistics and printed forms, and Compare tables, equal to
PyTorch's for the same times (character for character); Timer runs what it is given."""
import random

import pytest

import numtorch
from numtorch.utils import benchmark


def _times(seed, n, center, spread):
    rng = random.Random(seed)
    return [center * (1 + spread * rng.random()) for _ in range(n)]


CASES = [  # (number_per_run, raw_times, task spec fields)
    (100, [1.75e-4], dict(stmt="x + x", setup="pass", label="add", sub_label="100", description="ones")),
    (1000, _times(0, 5, 1.1e-3, 0.05), dict(stmt="x * y", setup="x = 1\ny = 2")),
    (10, _times(1, 40, 3e-2, 0.6), dict(stmt="f(x)\ng(x)", setup="import math", sub_label="big")),
    (1, _times(2, 3, 2.5, 0.01), dict(stmt="pass", setup="pass", label="slow", description="d")),
    (10000, _times(3, 12, 1.2e-5, 0.12), dict(stmt="a", setup="pass", num_threads=4)),
]


def _measurement(lib_benchmark, case):
    number, raw, spec = case
    common = lib_benchmark.utils.common if hasattr(lib_benchmark, "utils") else lib_benchmark
    return common.Measurement(number_per_run=number, raw_times=list(raw),
                              task_spec=common.TaskSpec(**spec))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_measurement_statistics_and_repr_equal_pytorchs(case):
    torch = pytest.importorskip("torch")
    import torch.utils.benchmark as tb
    ours, theirs = _measurement(benchmark, CASES[case]), _measurement(tb, CASES[case])
    for attr in ("times", "median", "mean", "iqr"):
        assert getattr(ours, attr) == pytest.approx(getattr(theirs, attr), rel=1e-12, abs=0), attr
    # exact, not approx: newer pytest refuses approx of a str (CI's pytest did)
    for attr in ("significant_figures", "has_warnings", "title"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    # all but the first line (the object's own repr, with its module and address)
    assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:]


def _compare_inputs(common):
    out = []
    for i, (sub, desc, threads) in enumerate([("100", "ones", 1), ("1000", "ones", 1), ("100", "mul", 1),
                                              ("1000", "mul", 1), ("100", "ones", 4), ("10", "ones", 4)]):
        spec = common.TaskSpec(stmt="x + x", setup="pass", label="add", sub_label=sub,
                               description=desc, num_threads=threads)
        out.append(common.Measurement(number_per_run=100, raw_times=_times(i, 7, 1e-3 * (i + 1), 0.3),
                                      task_spec=spec))
    spec = common.TaskSpec(stmt="y = x @ x", setup="pass", label="matmul", description="n=4")
    out.append(common.Measurement(number_per_run=10, raw_times=_times(9, 5, 5e-3, 0.01), task_spec=spec))
    return out


@pytest.mark.parametrize("options", [(), ("trim_significant_figures",), ("colorize",),
                                     ("highlight_warnings", "trim_significant_figures")])
def test_compare_tables_equal_pytorchs(options):
    torch = pytest.importorskip("torch")
    import torch.utils.benchmark as tb
    ours = benchmark.Compare(_compare_inputs(benchmark._measurement))
    theirs = tb.Compare(_compare_inputs(tb.utils.common))
    for option in options:
        getattr(ours, option)()
        getattr(theirs, option)()
    assert str(ours) == str(theirs)


def test_timer_runs_the_statement_with_globals_and_setup():
    calls = []
    t = benchmark.Timer("f()", setup="calls.append('setup')", globals={"f": lambda: calls.append(1), "calls": calls},
                        label="L", sub_label="S", description="D")
    m = t.timeit(50)
    # a warm-up of max(50 // 100, 2) runs, then 50 timed ones; setup once per timeit call
    assert calls.count(1) == 52 and calls.count("setup") == 2
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.label == "L" and m.sub_label == "S"
    assert m.times == [m.raw_times[0] / 50]
    m = benchmark.Timer("torch.ones(3).sum()").blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1 and m.median > 0
    m = benchmark.Timer("x = 1").adaptive_autorange(min_run_time=0.01, max_run_time=0.2)
    assert len(m.raw_times) >= 1 and m.median > 0   # stops at the confidence or at max_run_time
    seen = []
    benchmark.Timer("pass").blocked_autorange(callback=lambda n, t: seen.append((n, t)), min_run_time=0.01)
    assert seen and all(n >= 1 and t > 0 for n, t in seen)


def test_timer_argument_errors():
    with pytest.raises(ValueError, match="only a `str` stmt is supported"):
        benchmark.Timer(lambda: 1)
    with pytest.raises(ValueError, match="only language='python'"):
        benchmark.Timer("pass", language="c++")
    with pytest.raises(TypeError, match="globals must be a dict"):
        benchmark.Timer("pass", globals=[1])
    with pytest.raises(ValueError, match="min_run_time must be positive"):
        benchmark.Timer("pass").blocked_autorange(min_run_time=0)
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_tutorial_lines_run_unedited():
    torch = numtorch
    x = torch.randn(100, 100)
    t0 = torch.utils.benchmark.Timer(stmt="x @ x", globals={"x": x})
    assert "x @ x" in repr(t0.timeit(5))
    import doctest
    from numtorch.utils.benchmark import _measurement, _timer
    for mod in (_measurement, _timer):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0
