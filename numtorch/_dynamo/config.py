"""numtorch._dynamo.config: the capture's settings (PyTorch's names and defaults)."""

cache_size_limit = 8          # compiled entries per code object before running eagerly
suppress_errors = False       # internal capture errors → eager fallback with a warning
capture_scalar_outputs = False  # .item() in the graph (not supported yet: always a break)
trace_numpy = True            # NumPy calls through numtorch._numpy (when it exists)
verbose = False
# Dynamic shapes (shapes.py, Note [Which dims are dynamic]): with compile(dynamic=None), a
# recompile caused by a size change makes that dim symbolic; assume_static_by_default=False
# makes every dim symbolic from the first capture (as dynamic=True does).
automatic_dynamic_shapes = True
assume_static_by_default = True
# DistributedDataParallel under compile (ddp_optimizer.py): split a DDP module's graphs at
# its gradient-bucket boundaries so each bucket's all-reduce overlaps the rest of backward.
# PyTorch's values: True/"ddp_optimizer", False/"no_optimization", "python_reducer",
# "python_reducer_without_compiled_forward" (Note [optimize_ddp modes] in ddp_optimizer.py).
optimize_ddp = True
