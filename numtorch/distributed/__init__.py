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
