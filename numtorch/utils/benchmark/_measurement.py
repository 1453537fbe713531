"""`TaskSpec` (what was timed) and `Measurement` (the times, their statistics and PyTorch's
printed form).

A measurement holds ``raw_times``: seconds per block of ``number_per_run`` runs; ``times``
are per run. Statistics are NumPy's linear-interpolated quantiles, which are what
``torch.quantile`` computes, so medians, IQRs and the printed text equal PyTorch's.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import textwrap

import numpy as np

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9   # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """Container for information used to define a Timer (except globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        """Best effort attempt at a string label for the measurement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """Build TaskSpec portion of repr string for other containers."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def select_unit(t):
    """Determine how to scale times for O(1) magnitude: ``(unit, scale)``.

    >>> select_unit(2.5e-6)
    ('us', 1e-06)
    """
    # float32 arithmetic, as PyTorch's (torch.tensor(t).log10()), so the units agree at edges
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.log10(np.float32(t)) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """Trim `x` to `n` significant figures (e.g. 3.14159, 2 -> 3.10000)."""
    magnitude = int(np.ceil(np.log10(np.abs(np.float32(x)))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))   # float32, as PyTorch


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of a Timer measurement.

    This class stores one or more measurements of a given statement. It is serializable
    and provides several convenience methods (including a detailed __repr__) for
    downstream consumers.

    >>> m = Measurement(number_per_run=10, raw_times=[2e-5, 3e-5, 4e-5, 5e-5],
    ...                 task_spec=TaskSpec(stmt="x + y", setup="pass"))
    >>> round(m.median, 12), round(m.iqr, 12)
    (3.5e-06, 1.5e-06)
    """

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None   # reserved for user payloads

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        # label, sub_label, stmt, num_threads, … are the task spec's
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Approximate significant figure estimate: the number of digits the 90%
        confidence interval of the median (from the interquartile points) supports."""
        self._lazy_init()
        n = len(self._sorted_times)
        inner = self._sorted_times[n // 4:int(math.ceil(3 * n / 4))]
        std = float(np.std(np.asarray(inner, dtype=np.float32)))
        ci = max(1.645 * std / math.sqrt(len(inner)), _MIN_CONFIDENCE_INTERVAL)
        figures = int(np.floor(np.log10(np.float32(self._median / ci))))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            t = np.asarray(self._sorted_times, dtype=np.float64)
            self._median, self._p25, self._p75 = (float(q) for q in np.quantile(t, [0.5, 0.25, 0.75]))
            self._mean = float(t.mean())
            for threshold, msg in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                                   (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
                if not self.meets_confidence(threshold):
                    self._warnings += (f"  WARNING: Interquartile range is "
                                       f"{self.iqr / self.median * 100:.1f}% of the median "
                                       f"measurement.\n           {msg}",)
                    break

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """Convenience method for merging replicates: measurements of the same task spec
        become one (with ``number_per_run=1``)."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(number_per_run=1, raw_times=[t for m in group for t in m.times],
                            task_spec=spec) for spec, group in grouped.items()]
