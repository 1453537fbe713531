"""numtorch.distributed's collectives on 2 MPI ranks, each against a NumPy reference.

All checks run in one mpiexec job (scripts/collectives.py) launched once per module; each
test below asserts that its check passed on every rank.
"""
import sys
from pathlib import Path

import pytest

from .conftest import needs_mpi, run_checks, SCRIPTS

sys.path.insert(0, str(SCRIPTS))
import collectives  # noqa: E402  (importing defines the checks; it does not start MPI)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_checks("collectives.py", tmp_path_factory.mktemp("collectives"))


@needs_mpi
@pytest.mark.parametrize("name", [fn.__name__ for fn in collectives.CHECKS])
def test_collective_on_every_rank(results, name):
    outcomes = results[name]
    assert len(outcomes) == 2
    for rank, outcome in enumerate(outcomes):
        assert outcome == "ok", f"rank {rank}:\n{outcome}"


def test_collective_before_init_process_group_is_an_error():
    import numtorch as torch
    import numtorch.distributed as dist
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(3))
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.barrier()


def test_init_process_group_rejects_other_backends_and_init_methods():
    import numtorch.distributed as dist
    with pytest.raises(ValueError, match="backend='nccl'.*MPI only"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="init_method='tcp://.*launcher"):
        dist.init_process_group("mpi", init_method="tcp://10.0.0.1:23456")
    with pytest.raises(TypeError, match="timeout must be a datetime.timedelta"):
        dist.init_process_group("mpi", timeout="5s")
    assert not dist.is_initialized()


def test_importing_distributed_does_not_import_mpi4py():
    import subprocess
    code = ("import sys, numtorch, numtorch.distributed, numtorch.distributed.run; "
            "assert 'mpi4py' not in sys.modules, 'imported'")
    r = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("value, on", [(None, True), ("1", True), ("0", False)])
def test_agreement_check_follows_the_environment_variable(value, on):
    # Note [Checking that ranks agree]: on unless NUMTORCH_DISTRIBUTED_CHECKS=0
    import os
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "NUMTORCH_DISTRIBUTED_CHECKS"}
    if value is not None:
        env["NUMTORCH_DISTRIBUTED_CHECKS"] = value
    code = "from numtorch.distributed import _backend; print(_backend._checks_enabled)"
    r = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(on)
