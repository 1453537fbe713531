"""What each process started by ``numtorch.distributed.run`` runs before the user's script.

It sets torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``)
from the MPI launcher's environment, runs the script as ``__main__``, and turns an uncaught
exception or a non-zero ``sys.exit`` into an abort of the whole job (Note [A failing rank
aborts the job] in _backend.py), also for scripts that fail before ``init_process_group``.
"""
from __future__ import annotations

import os
import runpy
import sys
import time
import traceback

# (rank, size, local rank, local size) as MPICH/Hydra, Open MPI and Slurm name them
_LAUNCHER_VARS = (("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
                  ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                   "OMPI_COMM_WORLD_LOCAL_SIZE"),
                  ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"))


def _from_launcher():
    for names in _LAUNCHER_VARS:
        if names[0] in os.environ and names[1] in os.environ:
            return [os.environ.get(n) for n in names]
    # unknown launcher: ask MPI itself
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    node = world.Split_type(MPI.COMM_TYPE_SHARED)
    return [str(world.Get_rank()), str(world.Get_size()), str(node.Get_rank()),
            str(node.Get_size())]


def _abort(code):
    sys.stdout.flush()
    sys.stderr.flush()
    # mpiexec's proxy forwards our output asynchronously and MPI_Abort kills it with us:
    # without a moment's grace the last message (why the job ends) was sometimes lost
    time.sleep(0.25)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.COMM_WORLD.Abort(code)
    os._exit(code)


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m numtorch.distributed._worker [-m] script [args...]")
    rank, size, local_rank, local_size = _from_launcher()
    for name, value in (("RANK", rank), ("WORLD_SIZE", size), ("LOCAL_RANK", local_rank),
                        ("LOCAL_WORLD_SIZE", local_size)):
        if value is not None:
            os.environ[name] = value
    as_module = sys.argv[1] == "-m"
    target = sys.argv[2] if as_module else sys.argv[1]
    sys.argv = sys.argv[2:] if as_module else sys.argv[1:]
    if not as_module:
        sys.path[0] = os.path.dirname(os.path.abspath(target))
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code != 0:
            if not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
            sys.stderr.write(f"[numtorch.distributed] rank {rank} exited with status {code}; "
                             "aborting all ranks\n")
            _abort(code)
        raise
    except BaseException:
        # one write: mpiexec may drop output still buffered when the abort kills the job
        sys.stderr.write(f"\n[numtorch.distributed] rank {rank} of {size} raised an uncaught "
                         "exception; aborting all ranks (MPI_Abort) so that the others do not "
                         f"wait for it:\n{traceback.format_exc()}")
        _abort(1)


if __name__ == "__main__":
    main()
