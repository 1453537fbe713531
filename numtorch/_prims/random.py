"""Random primitives: draws that take the generator's state as a value and return the next.

This module owns `Generator` (``torch.Generator``), the draw primitives and the functions
the ops layer calls to draw (`draw`). It must not know any transform: interpreters see
draws through `bind` (Note [Random primitives]) and threads their state through
`Interpreter.read_rng`/`write_rng` (Note [Random state as a value]).

Note [Random primitives]
A draw's one operand is a generator state (`STATE_TYPE`, below); its params are the
shape, dtype and distribution parameters; it returns ``(sample, new_state)``. `bind`
sends every draw to the top of the interpreter stack whatever its operand (a state is
never a tracer of the transform that should see the draw: vmap must apply its
`randomness` policy to a draw whose state comes from a trace below it), through
`Interpreter.process_draw`: vmap's 'error' raises, 'same' draws once for all examples,
'different' calls the `batch` rule below, which draws a leading batch dimension in one call
(no loop) from the same state; every other interpreter passes the draw down. Draws are
not differentiable (the sample is not a function of a float input; the state is an
integer), so they have no jvp/vjp (nondiff): tangents and cotangents of both outputs are
zero, as for every integer-valued primitive.

Note [Random state as a value]
The state of NumPy's PCG64 — its 128-bit state and increment, plus the buffered half of a
64-bit output that 32-bit draws keep (``has_uint32``, ``uinteger``) — is six 64-bit words,
held as an ``int64[6]`` tensor (the bits of the unsigned words; int64 because every layer
handles it). A draw's ``impl`` loads that state into a scratch PCG64, draws with NumPy's own
samplers, and returns the sample and the state after it: so a graph that holds draws is a
pure function of its inputs and states, and running it from the state eager code would
have had reproduces eager's numbers exactly (the same bit generator, the same samplers).
Where the state lives:
- eager, no transform: in the `Generator`'s live ``np.random.Generator``; `draw` samples
  from it directly (the fast path: packing and unpacking the state costs ~3 µs a draw,
  about what the draw itself costs, and the result is bit-identical to binding the
  primitive on the packed state).
- under transforms but no trace: `draw` packs the live state into a tensor, binds the
  primitive (vmap sees it) and unpacks the new state back into the live generator.
- under a trace (make_graph, compile's capture): the innermost trace owns it. Its first
  read lifts the generator's state as a graph input (`TraceInterpreter.read_rng`); each
  draw's new state replaces it; the last one is a graph output. `make_graph`'s graph lists
  them in ``graph.rng`` (Note [Graphs with random state] in _core/ir.py): calling it reads
  the generators' states, runs, and writes the new states back, so ``make_graph(f)`` run
  after ``manual_seed(s)`` gives eager's numbers, and a second call the next ones, as eager
  f would. Capture (numtorch._dynamo) makes the state an input read from the generator and
  writes the output back as a side effect of the frame, so every backend sees an ordinary
  pure graph.
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray

from .._core import ir as _ir
from .._core.primitive import STACK, Primitive, bind
from .._core.tensor import wrap

STATE_SHAPE = (6,)
STATE_DTYPE = np.dtype(np.int64)
_MASK64 = (1 << 64) - 1


class Generator:
    """``torch.Generator``: an explicit random state (NumPy's PCG64 underneath).

    The state is held either by a live ``np.random.Generator`` (``_np``, what eager draws
    sample) or, after a graph or a transform wrote it back, as a state array not yet loaded
    into it (Note [Cheap state round trips]).
    """

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(67280421310721)

    @property
    def _np(self):
        """The live ``np.random.Generator``, holding the current state."""
        if self._live is None:   # Note [NumPy's random module loads on the first draw]
            self._live = np.random.Generator(np.random.PCG64(self._seed))
        if self._pending is not None:
            self._live.bit_generator.state = unpack_state(self._pending)
            self._pending = None
        return self._live

    def manual_seed(self, seed):
        """Sets the seed for generating random numbers; returns the generator."""
        self._seed = int(seed)
        self._live = None   # seeded when first used (Note [NumPy's random module loads on the first draw])
        self._pending = None
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self._np.bit_generator.state

    def set_state(self, state):
        self._np.bit_generator.state = state
        return self

    def state_array(self):
        """The current state as a read-only ``int64[6]`` array (Note [Random state as a value])."""
        if self._pending is not None:
            return self._pending
        return pack_state(self._np.bit_generator.state)

    def set_state_array(self, array):
        """Make ``array`` (an ``int64[6]`` from `state_array` or a draw) the current state."""
        _check_state(array)
        if array.flags.writeable:   # held, not copied, later: it must not change
            array = array.copy()
            array.flags.writeable = False
        self._pending = array

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return "torch.default_generator" if self is default_generator else \
            f"<torch.Generator object at {id(self):#x}>"


default_generator = Generator()


def pack_state(state):
    """NumPy's PCG64 state dict as six 64-bit words in an int64 array."""
    s, inc = state["state"]["state"], state["state"]["inc"]
    words = np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64,
                      state["has_uint32"], state["uinteger"]], dtype=np.uint64).view(STATE_DTYPE)
    words.flags.writeable = False   # a value (Note [Cheap state round trips])
    return words


def _check_state(array):
    if not isinstance(array, ndarray) or array.shape != STATE_SHAPE or array.dtype != STATE_DTYPE:
        raise TypeError(f"a random state must be an int64 array of shape {STATE_SHAPE}, got "
                        f"{getattr(array, 'dtype', type(array).__name__)}"
                        f"{list(getattr(array, 'shape', ()))}")


def unpack_state(array):
    """The PCG64 state dict of an int64[6] state array (`pack_state`'s inverse)."""
    _check_state(array)
    w = array.view(np.uint64).tolist()
    return {"bit_generator": "PCG64",
            "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
            "has_uint32": w[4], "uinteger": w[5]}


# ---------------------------------------------------------------------------------------
# Samplers: one NumPy call each, shared by the primitives' impls and eager's fast path.

def _uniform(g, shape, dtype, low=0.0, high=1.0):
    if dtype in (np.float32, np.float64):
        u = g.random(shape, dtype=dtype)
    else:
        u = g.random(shape).astype(dtype)
    return u if (low, high) == (0.0, 1.0) else (u * (high - low) + low).astype(dtype)


def _normal(g, shape, dtype):
    if dtype in (np.float32, np.float64):
        return g.standard_normal(shape, dtype=dtype)
    return g.standard_normal(shape).astype(dtype)


def _randint(g, shape, dtype, low, high):
    return g.integers(low, high, size=shape).astype(dtype)


def _permutation(g, shape, dtype, n):
    return g.permuted(np.broadcast_to(np.arange(n, dtype=dtype), shape), axis=-1)


# Note [Cheap state round trips]
# Moving a state between NumPy's bit generator and an array costs about a microsecond each
# way, as much as a small draw; two shortcuts keep a graph call or a draw under vmap from
# paying it four times. State arrays are read-only values. The draws' scratch generator
# remembers the array its state equals (`_SCRATCH_HOLDS`: the last state it returned), so a
# chain of draws, and a graph called again on the state it wrote back, load nothing. A
# `Generator` given a state array (`set_state_array`) keeps it (`_pending`) until an eager
# draw needs its live generator, so the next graph call reads it back for free.
_SCRATCH = []   # [np.random.Generator], loaded with each draw's state; made by the first draw
_SCRATCH_HOLDS = [None]
_SAMPLERS = {}

# Note [NumPy's random module loads on the first draw]
# Importing ``numpy.random`` costs a few percent of ``import numtorch`` (it pulls in
# ``secrets``, ``hmac`` and its bit generators), and most programs seed before they draw.
# So a `Generator` makes its live NumPy generator from its seed when first used (`_np`),
# and the draws' scratch generator is made by the first draw that binds a primitive.


def _impl_of(sample):
    def impl(state, *, shape, dtype, **params):
        if not _SCRATCH:
            _SCRATCH.append(np.random.Generator(np.random.PCG64(0)))
        scratch = _SCRATCH[0]
        bg = scratch.bit_generator
        if state is not _SCRATCH_HOLDS[0]:
            bg.state = unpack_state(state)
        _SCRATCH_HOLDS[0] = None   # (until the draw is done: a sampler may raise midway)
        out = np.asarray(sample(scratch, tuple(shape), np.dtype(dtype), **params))
        new = _SCRATCH_HOLDS[0] = pack_state(bg.state)
        return out, new
    return impl


def _shape_rule(state, *, shape, dtype, **params):
    if tuple(state.shape) != STATE_SHAPE or np.dtype(state.dtype) != STATE_DTYPE:
        raise TypeError(f"random draw: the state must be int64{list(STATE_SHAPE)}, got "
                        f"{np.dtype(state.dtype).name}{list(state.shape)}")
    return (tuple(shape), np.dtype(dtype)), (STATE_SHAPE, STATE_DTYPE)


def _random_prim(name, sample):
    p = Primitive(name, impl=_impl_of(sample), shape=_shape_rule, nondiff=True,
                  multiple_results=True)
    p.draws = True             # bind's routing (Note [Random primitives])
    _SAMPLERS[p] = sample      # eager's fast path (`draw`) calls it on the live generator

    def batch(values, bdims, *, batch_size, shape, **params):
        # randomness='different' (Note [Random primitives]): one draw of a leading batch
        # dimension from the one state. A state that is itself batched (vmap over explicit
        # states) would need one stream per example: not built.
        if bdims[0] is not None:
            raise NotImplementedError(f"vmap: {name} over a batch of random states is not "
                                      "supported (draw with randomness='different' instead)")
        sample, state = p.bind(values[0], shape=(batch_size,) + tuple(shape), **params)
        return (sample, state), (0, None)
    p.batch = batch
    return p


uniform = _random_prim("random_uniform", _uniform)
normal = _random_prim("random_normal", _normal)
randint = _random_prim("random_randint", _randint)
permutation = _random_prim("random_permutation", _permutation)
DRAWS = (uniform, normal, randint, permutation)


# ---------------------------------------------------------------------------------------
# Drawing from a generator (the ops layer's one entry point)

def read_state(generator):
    """The current state of ``generator`` as a tensor: the innermost trace's value if a trace
    has read it (or lifts it now), else the live state (Note [Random state as a value])."""
    for interp in reversed(STACK):
        s = interp.read_rng(generator)
        if s is not None:
            return s
    return read_live_state(generator)


def read_live_state(generator):
    """``generator``'s own state as a tensor (not an enclosing trace's)."""
    return wrap(generator.state_array())


def write_state(generator, state):
    """Make ``state`` (a draw's new state) ``generator``'s current state."""
    d = state._data
    if d.__class__ is ndarray:
        generator.set_state_array(d)
    else:
        d.interp.write_rng(generator, state)


# Eager draws sample the live generator directly (Note [Random state as a value]); False
# binds the primitive on the packed state instead, as under transforms: the tests compare
# the two, and the primitive-coverage tests record eager calls of every primitive.
EAGER_FAST_PATH = [True]


def draw(prim, generator=None, *, shape, dtype, **params):
    """A sample of ``prim`` (``shape`` a tuple, ``dtype`` a NumPy dtype) from ``generator``
    (default: the global one), advancing it."""
    g = generator or default_generator
    if not STACK and EAGER_FAST_PATH[0]:   # the live generator
        if g._pending is not None or g._live is None:
            g._np   # loads the pending state (Note [Cheap state round trips]) or seeds
        out = _SAMPLERS[prim](g._live, shape, dtype, **params)
        return wrap(out if out.__class__ is ndarray else np.asarray(out))
    sample, state = bind(prim, read_state(g), shape=shape, dtype=dtype, **params)
    write_state(g, state)
    return sample


_ir._rng_io = (read_state, write_state)   # Note [Graphs with random state]

# Lower rules (Note [Lower rules], _lower.py): the draw runs NumPy's samplers from the state
# operand, so compiled code reproduces eager's numbers.
from ._lower import extern  # noqa: E402

for _p in DRAWS:
    _p.lower = extern("random draws: NumPy's PCG64 samplers from the state operand")
