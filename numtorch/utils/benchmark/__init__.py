"""``torch.utils.benchmark``: `Timer` runs a statement and returns a `Measurement`;
`Compare` lays many measurements out as a table.

This package only re-exports: _measurement.py owns the statistics and how a measurement
prints, _timer.py how statements are run and how many times, _compare.py the tables.
All printed forms are PyTorch's (tests compare them character for character).
"""
from ._measurement import Measurement, TaskSpec, select_unit  # noqa: F401
from ._timer import Timer, Language  # noqa: F401
from ._compare import Compare, Colorize  # noqa: F401

__all__ = ["Timer", "Measurement", "Compare", "Colorize", "TaskSpec", "Language", "select_unit"]
