"""``python -m numtorch.distributed.run``: PyTorch's ``torchrun``, on MPI's ``mpiexec``.

    python -m numtorch.distributed.run --nproc-per-node 2 train.py --epochs 3

starts ``mpiexec -n 2 python -m numtorch.distributed._worker train.py --epochs 3``; each
process gets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` (from MPI's
own environment) before the script runs, and a script that raises ends the whole job
(Note [A failing rank aborts the job] in _backend.py). The exit status is mpiexec's.

Several machines: MPI's launcher reaches them (over ssh, or the cluster's scheduler), so
list them in a host file, one per line, and say how many processes each runs::

    # hosts  (MPICH/Hydra syntax "host:slots"; Open MPI's is "host slots=N")
    node1:4
    node2:4

    python -m numtorch.distributed.run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py

which becomes ``mpiexec -n 8 -f hosts -ppn 4 …`` with MPICH and ``mpiexec -n 8 --hostfile
hosts --map-by ppr:4:node …`` with Open MPI. Every machine needs the same Python
environment at the same path, and the script's files. Anything else mpiexec understands
goes through ``--mpiexec-args``. This file owns the command line only; it must not
import mpi4py (the launcher process is not an MPI rank).
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path


def find_mpiexec(explicit=None):
    """The mpiexec to use: ``explicit``, ``$NUMTORCH_MPIEXEC``, the one installed beside this
    Python (the ``mpich`` wheel's, in a virtual environment), or the first on PATH."""
    for candidate in (explicit, os.environ.get("NUMTORCH_MPIEXEC")):
        if candidate:
            return candidate
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise SystemExit("numtorch.distributed.run: no mpiexec found. Install MPI with "
                         "pip install 'numtorch[distributed]' (mpi4py and the mpich wheel), or "
                         "put your MPI's mpiexec on PATH, or pass --mpiexec PATH.")
    return found


def _flavor(mpiexec):
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "mpich"
    return "openmpi" if ("Open MPI" in text or "OpenRTE" in text) else "mpich"


def _positive(text):
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return n


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="python -m numtorch.distributed.run",
        description="Start a numtorch.distributed job with MPI's mpiexec (like torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=_positive, default=1,
                   help="processes per machine (default 1)")
    p.add_argument("--nnodes", type=_positive, default=1,
                   help="machines, listed in --hostfile (default 1: this machine)")
    p.add_argument("--hostfile", help="MPI host file naming the machines (see the module doc)")
    p.add_argument("--mpiexec", help="the mpiexec executable (default: beside python, or PATH)")
    p.add_argument("--mpiexec-args", default="",
                   help="extra arguments for mpiexec, as one shell-quoted string")
    p.add_argument("-m", dest="module", action="store_true",
                   help="run the script argument as a module (python -m)")
    p.add_argument("--dry-run", action="store_true", help="print the mpiexec command, don't run")
    p.add_argument("script", help="the training script (or module, with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    args = p.parse_args(argv)
    if args.nnodes > 1 and not args.hostfile:
        p.error("--nnodes > 1 needs --hostfile naming the machines")
    return args


def command(args):
    """The mpiexec command line for parsed ``args``."""
    mpiexec = find_mpiexec(args.mpiexec)
    cmd = [mpiexec, "-n", str(args.nnodes * args.nproc_per_node)]
    if args.hostfile:
        if _flavor(mpiexec) == "openmpi":
            cmd += ["--hostfile", args.hostfile, "--map-by", f"ppr:{args.nproc_per_node}:node"]
        else:
            cmd += ["-f", args.hostfile, "-ppn", str(args.nproc_per_node)]
    cmd += shlex.split(args.mpiexec_args)
    target = ["-m", args.script] if args.module else [args.script]
    return cmd + [sys.executable, "-m", "numtorch.distributed._worker", *target,
                  *args.script_args]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cmd = command(args)
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    env = dict(os.environ)
    # the workers import numtorch as the launcher did, even when it is not installed
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
