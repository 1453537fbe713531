"""numtorch._logging: ``NUMTORCH_LOGS`` topics through Python's logging (like TORCH_LOGS).

Topics: graph_code, graph_breaks, recompiles, guards, bytecode — each the logger
``numtorch._dynamo.<topic>`` at DEBUG. ``set_logs(graph_code=True, ...)`` or the
environment variable ``NUMTORCH_LOGS=graph_code,recompiles`` turns them on.
"""
import logging
import os
import sys

TOPICS = ("graph_code", "graph_breaks", "recompiles", "guards", "bytecode")


def set_logs(**topics):
    """Enable (True) or disable (False) log topics, e.g. ``set_logs(graph_code=True)``."""
    for name, on in topics.items():
        if name not in TOPICS:
            raise ValueError(f"set_logs: unknown topic {name!r}; expected one of {TOPICS}")
        logger = logging.getLogger(f"numtorch._dynamo.{name}")
        logger.setLevel(logging.DEBUG if on else logging.WARNING)
        if on and not logger.handlers:
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter(f"[numtorch:{name}] %(message)s"))
            logger.addHandler(h)


def _from_env():
    spec = os.environ.get("NUMTORCH_LOGS", "")
    names = [s.strip().lstrip("+") for s in spec.split(",") if s.strip()]
    if names:
        set_logs(**{n: True for n in names if n in TOPICS})


_from_env()
