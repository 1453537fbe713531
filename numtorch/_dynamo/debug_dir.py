"""``NUMTORCH_COMPILE_DEBUG=1``: every capture's stages written to a debug folder
(PyTorch's ``TORCH_COMPILE_DEBUG``).

Per captured frame, a folder ``<dir>/run_<pid>/<n>_<function>/`` with ``bytecode.txt``
(the frame's instructions), ``graph.py`` (the captured graph as Python, with the user's
file:line), ``guards.py`` (the generated guard function and each guard in words),
``run.py`` (the generated code running the entry: graph call, side effects, break and
resume call) and ``breaks.txt`` (each graph break's reason, fix and user stack).
``<dir>`` is ``NUMTORCH_COMPILE_DEBUG_DIR`` or ``./numtorch_compile_debug``. Setting
``numtorch._inductor.config.trace.enabled = True`` does the same as the variable.

Read only at capture time (never on a cache hit). Must not change what is captured.
"""
from __future__ import annotations

import dis
import io
import itertools
import os

_COUNTER = itertools.count()


def enabled() -> bool:
    from .._inductor import config
    return config.trace.enabled or os.environ.get("NUMTORCH_COMPILE_DEBUG", "") not in ("", "0")


def dump(code, graph, guard, run, breaks, reason=""):
    """Write one capture's stages (see the module docstring); returns the folder."""
    root = os.environ.get("NUMTORCH_COMPILE_DEBUG_DIR") or os.path.join(
        os.getcwd(), "numtorch_compile_debug")
    folder = os.path.join(root, f"run_{os.getpid()}", f"{next(_COUNTER):03d}_{code.co_name}")
    os.makedirs(folder, exist_ok=True)
    buf = io.StringIO()
    dis.dis(code, file=buf)
    files = {
        "bytecode.txt": f"# {code.co_name} ({code.co_filename}:{code.co_firstlineno})\n"
                        + buf.getvalue(),
        "graph.py": graph.python_code() if graph is not None else "# no graph (no tensor ops)\n",
        "guards.py": guard.text + "\n# in words:\n" + "".join(f"#   {w}\n" for _, w in guard.checks)
                     + (f"\n# recompiled because: {reason}\n" if reason else ""),
        "run.py": run.text,
        "breaks.txt": "".join(f"{u.reason}\n  fix: {u.hint}\n" + "".join(
            f"  at {f}:{ln} in {fn}\n" for f, ln, fn in u.stack) for u in breaks)
                      or "no graph break\n",
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(text)
    return folder
