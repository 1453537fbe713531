"""numtorch's performance suite: ``python -m benchmarks [--quick] [--filter NAME]``.

``common`` holds the workload registry and shared data, ``eager`` the workloads of issue
#2 (small ops, large ops, autograd, an MLP step), ``transforms`` those of issue #3
(torch.func), ``run`` the timing, the table, the target checks and the JSON output.
"""
