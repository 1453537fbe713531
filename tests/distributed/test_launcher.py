"""``python -m numtorch.distributed.run`` and failure handling across ranks."""
import re
import sys
import time
from types import SimpleNamespace

import pytest

from .conftest import SCRIPTS, launch, needs_mpi


@needs_mpi
def test_launcher_sets_torchrun_variables_and_passes_arguments():
    r = launch([SCRIPTS / "launched.py", "--lr", "0.1", "x"], launcher=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    # mpiexec merges the ranks' stdout in chunks: a line's newline may come after the next
    lines = sorted(re.findall(r"rank=.*?name=__main__", r.stdout))
    assert lines == [f"rank={k} world=2 local={k}/2 args=['--lr', '0.1', 'x'] sum=3.0 "
                     "name=__main__" for k in range(2)], r.stdout


@needs_mpi
def test_a_rank_that_raises_ends_the_job_with_its_traceback():
    start = time.perf_counter()
    r = launch([SCRIPTS / "fails.py"], timeout=60)
    assert r.returncode != 0
    assert "rank 1 of 2 raised an uncaught exception; aborting all ranks" in r.stderr
    assert "ValueError: rank 1 fails on purpose" in r.stderr
    assert "should not get here" not in r.stderr
    assert time.perf_counter() - start < 50


@needs_mpi
def test_launcher_aborts_the_job_on_a_nonzero_exit():
    r = launch([SCRIPTS / "launched.py", "--exit-3-on-rank-1"], launcher=True, timeout=60)
    assert r.returncode != 0
    assert "rank 1 exited with status 3" in r.stderr


def _args(**kw):
    base = dict(nproc_per_node=4, nnodes=1, hostfile=None, mpiexec="mpiexec", mpiexec_args="",
                module=False, script="train.py", script_args=["--epochs", "3"])
    base.update(kw)
    return SimpleNamespace(**base)


def test_launcher_command_line(monkeypatch):
    from numtorch.distributed import run
    monkeypatch.setattr(run, "_flavor", lambda m: "mpich")
    assert run.command(_args()) == ["mpiexec", "-n", "4", sys.executable, "-m",
                                    "numtorch.distributed._worker", "train.py", "--epochs", "3"]
    cmd = run.command(_args(nnodes=2, hostfile="hosts", mpiexec_args="-genv OMP_NUM_THREADS 1"))
    assert cmd[:9] == ["mpiexec", "-n", "8", "-f", "hosts", "-ppn", "4", "-genv",
                       "OMP_NUM_THREADS"]
    monkeypatch.setattr(run, "_flavor", lambda m: "openmpi")
    cmd = run.command(_args(nnodes=2, hostfile="hosts", module=True, script="pkg.train"))
    assert cmd[:7] == ["mpiexec", "-n", "8", "--hostfile", "hosts", "--map-by", "ppr:4:node"]
    assert cmd[-5:] == ["numtorch.distributed._worker", "-m", "pkg.train", "--epochs", "3"]


def test_launcher_argument_errors(capsys):
    from numtorch.distributed import run
    with pytest.raises(SystemExit):
        run.parse_args(["--nnodes", "2", "train.py"])
    assert "--nnodes > 1 needs --hostfile" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run.parse_args(["--nproc-per-node", "0", "train.py"])
    assert "positive integer" in capsys.readouterr().err
    args = run.parse_args(["--nproc_per_node", "2", "train.py", "--lr", "1"])
    assert args.nproc_per_node == 2 and args.script_args == ["--lr", "1"]


@needs_mpi
def test_a_script_started_without_the_launcher_is_told_how_to_start_it():
    import os
    import subprocess
    from .conftest import ROOT
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORLD_SIZE="2", RANK="0")
    code = "import numtorch.distributed as d; d.init_process_group('mpi')"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert "environment variable WORLD_SIZE is 2, but MPI started this process as rank 0 of 1" \
        in r.stderr
    assert "--nproc-per-node" in r.stderr
