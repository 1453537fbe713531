"""`Compare`: measurements laid out as PyTorch's tables — one table per ``label``, a row per
``sub_label`` (or stmt) grouped by ``num_threads``, a column per ``description``, each
cell a median in the table's time unit.
"""
from __future__ import annotations

import collections
import enum

import numpy as np

from ._measurement import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

BEST, GOOD, BAD, VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
BOLD, TERMINATE = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x):
    return int(np.ceil(np.log10(np.float32(x))))   # float32, as PyTorch's


class _Column:
    """One description's cells; fixes the number format shared by its cells."""

    def __init__(self, grouped_results, time_scale, trim, highlight_warnings):
        self._grouped_results = grouped_results
        flat = [r for group in grouped_results for r in group]
        self._time_scale, self._trim = time_scale, trim
        self._highlight = highlight_warnings and any(r.has_warnings for r in flat if r)
        leading = [_leading_digits(r.median / time_scale) if r else None for r in flat]
        unit_digits = max(d for d in leading if d is not None)
        decimals = min(max(m.significant_figures - d, 0)
                       for d, m in zip(leading, flat) if m is not None) if trim else 1
        length = unit_digits + decimals + (1 if decimals else 0)
        self._template = f"{{:>{length}.{decimals}f}}{{:>{7 if self._highlight else 0}}}"

    def get_results_for(self, group):
        return self._grouped_results[group]

    def num_to_str(self, value, estimated_sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim:
            value = trim_sigfig(value, estimated_sigfigs)
        return self._template.format(
            value, f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else "")


class _Row:
    def __init__(self, results, row_group, render_env, env_str_len, time_scale, colorize,
                 num_threads=None):
        self._results, self._row_group = results, row_group
        self._render_env, self._env_str_len = render_env, env_str_len
        self._time_scale, self._colorize, self._num_threads = time_scale, colorize, num_threads
        self._columns = ()

    def as_column_strings(self):
        first = next(r for r in self._results if r is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_str_len + 4)
        out = ["  " + env + first.as_row_name]
        for m, col in zip(self._results, self._columns):
            if m is None:
                out.append(col.num_to_str(None, 1, None))
            else:
                out.append(col.num_to_str(m.median / self._time_scale, m.significant_figures,
                                          m.iqr / m.median if m.has_warnings else None))
        return out

    @staticmethod
    def color_segment(segment, value, best):
        if value <= best * 1.01 or value <= best + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width):
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings, col_widths):
        best = [-1 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(r.median for r in self._results if r is not None)
            best = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best = [min((r.median for r in c.get_results_for(self._row_group) if r is not None),
                        default=None) for c in self._columns]
        out = [column_strings[0].ljust(col_widths[0])]
        for s, width, result, b in zip(column_strings[1:], col_widths[1:], self._results, best):
            s = s.center(width)
            if self._colorize != Colorize.NONE and result is not None and b is not None:
                s = self.color_segment(s, result.median, b)
            out.append(s)
        return out


class _Table:
    def __init__(self, results, colorize, trim, highlight_warnings):
        self.results, self.label = results, results[0].label
        self._colorize, self._trim, self._highlight = colorize, trim, highlight_warnings
        self.time_unit, self.time_scale = select_unit(min(r.median for r in results))
        self.row_keys = ordered_unique(self.row_fn(r) for r in results)
        self.row_keys.sort(key=lambda k: k[:2])   # threads, env; stmt order is kept
        self.column_keys = ordered_unique(r.description for r in results)
        self.rows, self.columns = self._populate()

    @staticmethod
    def row_fn(m):
        return m.num_threads, m.env, m.as_row_name

    def _populate(self):
        cells = [[None] * len(self.column_keys) for _ in self.row_keys]
        row_at = {k: i for i, k in enumerate(self.row_keys)}
        col_at = {k: i for i, k in enumerate(self.column_keys)}
        for r in self.results:
            cells[row_at[self.row_fn(r)]][col_at[r.description]] = r
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0
        rows, groups, prior_threads, prior_env, group = [], [], -1, "", -1
        for (threads, env, _), row in zip(self.row_keys, cells):
            transition = threads != prior_threads
            if transition:
                prior_threads, prior_env, group = threads, "", group + 1
                groups.append([])
            rows.append(_Row(row, group, render_env and env != prior_env, env_len,
                             self.time_scale, self._colorize, threads if transition else None))
            groups[-1].append(row)
            prior_env = env
        columns = tuple(_Column([tuple(row[i] for row in g) for g in groups], self.time_scale,
                                self._trim, self._highlight)
                        for i in range(len(self.column_keys)))
        for r in rows:
            r._columns = columns
        return tuple(rows), columns

    def render(self):
        string_rows = [[""] + self.column_keys] + [r.as_column_strings() for r in self.rows]
        width = max(len(r) for r in string_rows)
        for r in string_rows:
            r.extend([""] * (width - len(r)))
        col_widths = [max(len(s) for s in col) for col in zip(*string_rows)]
        lines = ["  |  ".join(s.center(w) for s, w in zip(string_rows[0], col_widths))]
        overall = len(lines[0])
        for strings, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(overall))
            lines.append("  |  ".join(row.finalize_column_strings(strings, col_widths)))
        warn = self._highlight and any(r.has_warnings for r in self.results)
        return (f"[{(' ' + (self.label or '') + ' ').center(overall - 2, '-')}]\n"
                + "\n".join(lines)
                + f"\n\nTimes are in {unit_to_english(self.time_unit)}s ({self.time_unit}).\n"
                + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                   if warn else ""))


class Compare:
    """Helper class for displaying the results of many measurements in a formatted table.

    The table format is based on the information fields provided in
    :class:`numtorch.utils.benchmark.Timer` (`description`, `label`, `sub_label`,
    `num_threads`, etc). The table can be directly printed using :meth:`print` or casted
    as a `str`.

    Args:
        results: List of Measurement to display.
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        """Append results to already stored ones. All added results must be instances of
        ``Measurement``."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Enables trimming of significant figures when building the formatted table."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colorize formatted table. Colorize columnwise by default."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Enables warning highlighting when building formatted table."""
        self._highlight_warnings = True

    def print(self):
        """Print formatted table"""
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [_Table(group, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings).render() for group in by_label.values()]
