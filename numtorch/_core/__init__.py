"""The core: dtypes, primitives and the interpreter stack, the Tensor, the meta device."""
