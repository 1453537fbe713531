"""PyTorch-semantics functions built from primitives."""
