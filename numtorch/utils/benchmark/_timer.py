"""`Timer`: runs a Python statement many times with :mod:`timeit` and returns a
`Measurement`; `blocked_autorange` and `adaptive_autorange` choose how many runs.

This module owns how statements are run and counted; statistics and printing are
_measurement.py's. Only Python statements are supported (PyTorch's C++ ``language`` and
Callgrind collection are not built).
"""
from __future__ import annotations

import enum
import statistics
import textwrap
import timeit
from time import perf_counter as timer

from ._measurement import Measurement, TaskSpec


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Helper class for measuring execution time of PyTorch statements.

    The PyTorch Timer is based on `timeit.Timer` (and in fact uses `timeit.Timer`
    internally), with several key differences: it reports a `Measurement` (with
    statistics, printed in a readable form) rather than raw seconds; `blocked_autorange`
    picks the number of runs per block; and ``torch`` is available to ``stmt`` and
    ``setup`` (numtorch, under that name).

    Args:
        stmt: Code snippet to be run in a loop and timed.
        setup: Optional setup code. Used to define variables used in `stmt`.
        timer: Callable which returns the current time.
        globals: A dict which defines the global variables when `stmt` is being executed.
        label: String which summarizes `stmt`.
        sub_label: Provide supplemental information to disambiguate measurements with
            identical stmt or label.
        description: String to distinguish measurements with identical label and
            sub_label (the columns of a `Compare` table).
        env: This tag indicates that otherwise identical tasks were run in different
            environments.
        num_threads: The size of the PyTorch threadpool when executing `stmt` (recorded;
            numtorch does not change NumPy's threads).

    >>> import numtorch as torch
    >>> m = Timer("x + x", globals={"x": torch.ones(3)}).timeit(10)
    >>> m.number_per_run, len(m.times), m.median > 0
    (10, 1, True)
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if not isinstance(setup, str):
            raise ValueError(f"Timer: setup must be a str of Python code, got {type(setup).__name__}")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: only language='python' is supported in numtorch, got "
                             f"{language!r}")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             f"code can simply be moved to `setup`.")
        if globals is not None and not isinstance(globals, dict):
            raise TypeError(f"Timer: globals must be a dict, got {type(globals).__name__}")
        import numtorch
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", numtorch)
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    @staticmethod
    def _clean(code):
        code = textwrap.dedent(code)
        return (code[1:] if code and code[0] == "\n" else code).rstrip()

    def _timeit(self, number):
        # never report 0 s: the statistics divide by times
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Mirrors the semantics of timeit.Timer.timeit(): execute the main statement
        (`stmt`) `number` times, after one warm-up of ``number // 100`` runs."""
        self._timeit(number=max(int(number // 100), 2))
        return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                           task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, stop_hook, min_run_time, max_run_time=None,
                          callback=None):
        total, times, can_stop = 0.0, [], False
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop_hook(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def _estimate_block_size(self, min_run_time):
        """The number of runs per block: grown tenfold until the timer's own overhead is
        negligible (or a block takes a thousandth of ``min_run_time``)."""
        overhead = statistics.median([self._timeit(0) for _ in range(5)])
        number = 1
        while True:
            taken = self._timeit(number)
            if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                break
            if taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Measure many replicates while keeping timer overhead to a minimum.

        At a high level, blocked_autorange executes the following pseudo-code::

            `setup`
            total_time = 0
            while total_time < min_run_time
                start = timer()
                for _ in range(block_size):
                    `stmt`
                total_time += (timer() - start)

        Args:
            callback: called with ``(number, time)`` after each block.
            min_run_time: The total runtime needed before checking `threshold`.
        """
        if min_run_time <= 0:
            raise ValueError(f"blocked_autorange: min_run_time must be positive, got {min_run_time}")
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Similar to `blocked_autorange` but also checks for variablility in
        measurements and repeats until iqr/median is smaller than `threshold` or
        `max_run_time` is reached.

        Args:
            threshold: value of iqr/median threshold for stopping
            min_run_time: total runtime needed before checking `threshold`
            max_run_time: total runtime  for all measurements regardless of `threshold`
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            return len(times) > 3 and Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)
        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind: Callgrind instruction counts are "
                                  "not supported in numtorch")
