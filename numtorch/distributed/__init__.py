"""``numtorch.distributed``: PyTorch's ``torch.distributed`` on MPI (through mpi4py).

Process groups, collectives on Tensors and point-to-point messages, with the MPI backend
only; start the processes with ``python -m numtorch.distributed.run --nproc-per-node N
script.py`` (or ``mpiexec -n N python script.py``). Importing this package does not import
mpi4py: that happens in ``init_process_group`` / ``is_available``. This file only
re-exports; see _backend.py (groups, Work, the communication thread) and _collectives.py.
"""
from ._backend import (DistError, DistBackendError, Work, ProcessGroup, GroupMember, group,  # noqa: F401
                       is_available, is_mpi_available, is_gloo_available, is_nccl_available,
                       init_process_group, is_initialized, destroy_process_group, new_group,
                       get_rank, get_world_size, get_backend, get_process_group_ranks,
                       default_pg_timeout)
from ._collectives import (ReduceOp, all_reduce, broadcast, reduce, all_gather,  # noqa: F401
                           all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor,
                           gather, scatter, barrier, send, recv, isend, irecv,
                           broadcast_object_list, all_gather_object, gather_object,
                           scatter_object_list)

# Note [Scaling to many machines]
# What MPI gives. `mpiexec` (or a scheduler: `srun`, `qsub`) starts the ranks on the hosts
# of a host file (numtorch/distributed/run.py shows the syntax), and MPI picks the
# transport per pair of ranks — shared memory inside a machine, TCP, InfiniBand or another
# libfabric/UCX network between machines — and the all-reduce algorithm per message size
# and group size: recursive doubling or trees for small messages (latency grows like
# log p), a reduce-scatter + all-gather (ring or Rabenseifner) for large ones, and in
# current MPICH/Open MPI hierarchical variants that reduce inside each machine first and
# cross the network once per machine. numtorch adds none of that itself; it hands MPI the
# tensors' buffers (Note [One communication thread] in _backend.py).
#
# What a ring all-reduce costs. For n bytes on p ranks with per-message latency a and
# link bandwidth b, a ring takes 2(p-1) steps of n/p bytes each:
#     t = 2(p-1)·a + 2(p-1)/p · n/b.
# The bandwidth term tends to 2n/b — it does not grow with p — but the latency term grows
# linearly with p, so at many ranks small messages are latency-bound (that is why MPI
# switches to log-p algorithms for them, and why DDP packs gradients into buckets). Per
# step every rank sends and receives about 2·|gradients| bytes whatever p is, while with a
# fixed global batch its compute shrinks like 1/p: beyond some p the step is
# communication-bound, and only a larger global batch (weak scaling) or hiding the
# communication behind compute helps. Across machines b is the network's (typically 10-50x
# below shared memory), so the per-machine reduction of the hierarchical algorithms matters.
#
# What the bucket size trades (Note [Gradient buckets] in nn/parallel/distributed.py).
# A bucket's all-reduce starts only when its last gradient exists, and the last bucket's
# all-reduce (the first layers') can never be hidden: it runs after backward ends. Small
# buckets start early and leave a small last bucket, but each pays the latency term a,
# 2(p-1) times for a ring; large buckets amortise a but start late. PyTorch's defaults
# (25 MB, with a 1 MB first bucket) suit fast networks; at hundreds of ranks, larger
# buckets help as a·p grows. In this Python implementation one more limit applies: the
# communication thread needs the GIL to start each MPI call, and backward's small NumPy
# kernels hold it, so overlap is best with few, large buckets and large layers (see
# benchmarks/distributed.py for the measured fraction hidden).
#
# Not built: gradient compression or communication hooks (PowerSGD, fp16 all-reduce),
# sharded optimizers (ZeRO / FSDP), elastic membership (torchrun's rendezvous and
# restarts): an MPI job has a fixed set of ranks, and a failing rank ends the job
# (Note [A failing rank aborts the job]).
