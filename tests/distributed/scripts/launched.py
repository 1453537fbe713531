"""Started by the launcher: prints torchrun's variables, its arguments and a collective."""
import os
import sys

import numtorch as torch
import numtorch.distributed as dist

env = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
dist.init_process_group()
x = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(x)
print(f"rank={env['RANK']} world={env['WORLD_SIZE']} local={env['LOCAL_RANK']}/"
      f"{env['LOCAL_WORLD_SIZE']} args={sys.argv[1:]} sum={x.item()} name={__name__}",
      flush=True)
dist.destroy_process_group()
if len(sys.argv) > 1 and sys.argv[1] == "--exit-3-on-rank-1" and env["RANK"] == "1":
    sys.exit(3)
