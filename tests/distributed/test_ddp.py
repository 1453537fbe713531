"""DistributedDataParallel on 2 MPI ranks: training equals single-process training on the
concatenated batch (float64, 1e-10), bucketing and overlap, no_sync, unused parameters.

All checks run in one mpiexec job (scripts/ddp.py), launched once per module.
"""
import sys

import pytest

from .conftest import SCRIPTS, needs_mpi, run_checks

sys.path.insert(0, str(SCRIPTS))
import ddp  # noqa: E402  (importing defines the checks; it does not start MPI)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_checks("ddp.py", tmp_path_factory.mktemp("ddp"))


@needs_mpi
@pytest.mark.parametrize("name", [fn.__name__ for fn in ddp.CHECKS])
def test_ddp_on_every_rank(results, name):
    outcomes = results[name]
    assert len(outcomes) == 2
    for rank, outcome in enumerate(outcomes):
        assert outcome == "ok", f"rank {rank}:\n{outcome}"


def test_ddp_needs_an_initialized_process_group():
    import numtorch as torch
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))


def test_consume_prefix_in_state_dict_if_present():
    import numtorch as torch
    from numtorch.nn.parallel import consume_prefix_in_state_dict_if_present
    sd = {"module.a.weight": 1, "module.b": 2, "other": 3}
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert sd == {"a.weight": 1, "b": 2, "other": 3}
    assert torch.nn.parallel.DistributedDataParallel.__module__ == "numtorch.nn.parallel.distributed"
