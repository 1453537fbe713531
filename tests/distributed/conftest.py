"""Launching multi-process tests: ``launch(script, nproc)`` runs a script under mpiexec.

The checks run in real MPI processes on localhost; a pytest process never becomes an MPI
rank itself. Without mpi4py or mpiexec the multi-process tests skip with the reason (CI
installs them: ``.ci/run`` runs ``pip install -e '.[distributed]'``).
"""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"


def _mpi_missing():
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed"
    from numtorch.distributed.run import find_mpiexec
    try:
        find_mpiexec()
    except SystemExit as e:
        return str(e)
    return None


MPI_MISSING = _mpi_missing()
needs_mpi = pytest.mark.skipif(
    MPI_MISSING is not None,
    reason=f"MPI not available ({MPI_MISSING}); install it with pip install -e '.[distributed]'")


def launch(args, nproc=2, timeout=120, launcher=False, env=None):
    """Run ``args`` (a script path and its arguments) on ``nproc`` MPI ranks; returns the
    CompletedProcess. ``launcher=True`` goes through ``python -m numtorch.distributed.run``,
    otherwise plain ``mpiexec -n nproc python``."""
    from numtorch.distributed.run import find_mpiexec
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        full_env.pop(name, None)
    if launcher:
        cmd = [sys.executable, "-m", "numtorch.distributed.run", "--nproc-per-node", str(nproc)]
    else:
        cmd = [find_mpiexec(), "-n", str(nproc), sys.executable]
    try:
        return subprocess.run(cmd + [str(a) for a in args], cwd=ROOT, capture_output=True,
                              text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(map(str, args))} on {nproc} ranks hung for {timeout} s:\n"
                    f"{e.stdout}\n{e.stderr}")


def run_checks(script, tmp_dir, nproc=2, timeout=180):
    """Launch a checks script (scripts/_checks.py protocol); {check: [result per rank]}."""
    r = launch([SCRIPTS / script, tmp_dir], nproc=nproc, timeout=timeout)
    results = {}
    for rank in range(nproc):
        path = Path(tmp_dir) / f"rank{rank}.json"
        if not path.exists():
            pytest.fail(f"{script}: rank {rank} wrote no results (exit {r.returncode}):\n"
                        f"{r.stdout}\n{r.stderr}")
        for name, outcome in json.loads(path.read_text()).items():
            results.setdefault(name, []).append(outcome)
    if r.returncode != 0:
        pytest.fail(f"{script} exited with {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return results
