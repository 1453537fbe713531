"""torch.func: composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, …).

Each transform pushes an interpreter for the duration of one call (Note [Interpreter
stack]); they nest in any order and depth.
"""
from ._grad import grad, grad_and_value, vjp  # noqa: F401
from ._jvp import jvp, linearize  # noqa: F401
from ._vmap import vmap  # noqa: F401
from ._jacobian import jacrev, jacfwd, hessian  # noqa: F401
from ._module import functional_call, stack_module_state  # noqa: F401
from ._trace import make_graph  # noqa: F401
from ._functionalize import functionalize  # noqa: F401
