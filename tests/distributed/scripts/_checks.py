"""A tiny harness for scripts that run many checks in one MPI job.

``@check`` registers a function in its module's ``CHECKS``; ``main(out_dir)`` runs them in order on every rank and
writes ``rank<R>.json`` = {name: "ok" or the error}. Checks must not desynchronise the
ranks: each one runs the same collectives on every rank, and a check that fails on one
rank after a collective still lets the others finish it.
"""
import json
import os
import sys
import traceback
from pathlib import Path



def check(fn):
    """Register ``fn`` in its module's ``CHECKS`` list (run in definition order)."""
    sys.modules[fn.__module__].__dict__.setdefault("CHECKS", []).append(fn)
    return fn


def main(out_dir, setup, teardown=None):
    """``setup()`` returns this process's rank; results go to ``out_dir/rank<R>.json``."""
    rank = setup()
    results = {}
    only = os.environ.get("CHECKS_ONLY")   # when working on some: CHECKS_ONLY=name,name
    for fn in sys.modules["__main__"].CHECKS:
        if only and fn.__name__ not in only.split(","):
            continue
        try:
            fn()
            results[fn.__name__] = "ok"
        except Exception:   # noqa: BLE001 — reported to pytest through the file
            results[fn.__name__] = traceback.format_exc()
    if teardown:
        teardown()
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(results))
    sys.stdout.flush()
