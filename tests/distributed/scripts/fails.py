"""Rank 1 raises while rank 0 waits in a collective: the job must end, not hang."""
import sys

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group("mpi")
if dist.get_rank() == 1:
    raise ValueError("rank 1 fails on purpose")
dist.all_reduce(torch.ones(3))   # never completes: rank 1 is gone
print("rank 0 should not get here", file=sys.stderr)
