"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells.

Parameters are named, shaped and initialized as PyTorch's (``weight_ih_l0``,
``bias_hh_l1_reverse``, ...; U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))), so a PyTorch
``state_dict`` loads unchanged. The recurrence is a Python loop over time steps written
with numtorch ops, so autograd, vmap and jvp apply with no rules of their own; the input
projection of every time step is one matmul before the loop (Note [Input projection
first]). A ``PackedSequence`` input (``nn.utils.rnn``) runs padded, with the steps past
each sequence's length masked. ``LSTM(proj_size=p)`` projects each step's hidden state to
``p`` features with ``weight_hr_l{k}`` (PyTorch's LSTM with projections).
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ..._ops import shape as S
from ..._ops.creation import empty, zeros
from ..._ops.creation import tensor as _tensor
from ..._ops.index import index_select
from ..._ops.math import sigmoid, tanh, where
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _padded_index
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# Note [Input projection first]
# x_t W_ih^T + b_ih does not depend on the hidden state, so it is computed for all time
# steps at once (one (L*N, H_in) x (H_in, G) product) and the loop only does the
# hidden-to-hidden product per step: the same arithmetic as PyTorch's reference, with
# L times fewer small matmuls.

def _rnn_step(nonlinearity):
    act = tanh if nonlinearity == "tanh" else F.relu

    def step(gi, h, w_hh, b_hh):
        return act(gi + F.linear(h, w_hh, b_hh))
    return step


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    h, c = state
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = S.chunk(gates, 4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(gi, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    i_r, i_z, i_n = S.chunk(gi, 3, -1)
    h_r, h_z, h_n = S.chunk(gh, 3, -1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def _reverse_within(x, lengths):
    """Each sequence ``b`` of the time-major ``x`` reversed within its first ``lengths[b]``
    steps (the steps past it stay where they are); its own inverse."""
    T, B = x.shape[0], x.shape[1]
    t = np.arange(T)[:, None]
    src = np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    flat = (src * B + np.arange(B)[None, :]).reshape(-1)
    out = index_select(x.reshape((T * B,) + tuple(x.shape[2:])), 0, _tensor(flat, device=x.device))
    return out.reshape(tuple(x.shape))


class RNNBase(Module):
    """Base class for RNN modules (RNN, LSTM, GRU): parameters, checks and the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        # PyTorch's checks and messages, in PyTorch's order
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, v in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(v, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(v).__name__}")
        for name, v in (("input_size", input_size), ("hidden_size", hidden_size),
                        ("num_layers", num_layers), ("proj_size", proj_size)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} should be of type int, got: {type(v).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = self._real_hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = [f"{kind}_l{layer}{suffix}" for kind, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _real_hidden_size(self):
        """The features of the hidden state h (and of the output): ``proj_size`` when the
        LSTM projects, else ``hidden_size``; the cell state c keeps ``hidden_size``."""
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op: PyTorch compacts weights for cuDNN; numtorch has no cuDNN."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda kind: getattr(self, f"{kind}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _step(self):
        if self.mode == "LSTM":
            return _lstm_step
        if self.mode == "GRU":
            return _gru_step
        return _rnn_step("tanh" if self.mode == "RNN_TANH" else "relu")

    def _check_input(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.ndim}D tensor instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _state_shapes(self, batch, n_states):
        """The shapes of h_0 (and, for LSTM, c_0) for a batch of ``batch``."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        h = (layers, batch, self._real_hidden_size)
        return (h, (layers, batch, self.hidden_size)) if n_states == 2 else (h,)

    def _check_hidden(self, hx, shapes):
        """Each initial state has its expected shape (PyTorch's messages: ``hidden`` for
        RNN/GRU, ``hidden[0]``/``hidden[1]`` for LSTM's h and c)."""
        names = ("hidden[0]", "hidden[1]") if len(shapes) == 2 else ("hidden",)
        for h, shape, what in zip(hx, shapes, names):
            if tuple(h.shape) != shape:
                raise RuntimeError(f"Expected {what} size {shape}, got {list(h.shape)}")

    def _run(self, input, states, lengths=None):
        """``input`` (L, N, H_in); ``states`` a list per (layer, direction) of h or (h, c);
        ``lengths`` (sorted, host ints) for a packed batch: the steps past each sequence's
        length leave its state alone, and the reverse direction starts at its last step.
        Returns (output (L, N, D*H), final states in the same layout)."""
        step = self._step()
        num_directions = 2 if self.bidirectional else 1
        masks = None
        if lengths is not None:
            masks = [_tensor((lengths > t)[:, None], device=input.device)
                     for t in range(input.shape[0])]
        finals = []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                step_d = step if w_hr is None else functools.partial(step, w_hr=w_hr)
                xd = x if direction == 0 or lengths is None else _reverse_within(x, lengths)
                gi_all = F.linear(xd, w_ih, b_ih)        # Note [Input projection first]
                state = states[layer * num_directions + direction]
                backwards = direction == 1 and lengths is None
                steps = range(x.shape[0] - 1, -1, -1) if backwards else range(x.shape[0])
                hs = [None] * x.shape[0]
                for t in steps:
                    new = step_d(gi_all[t], state, w_hh, b_hh)
                    if masks is not None:
                        new = (tuple(where(masks[t], a, b) for a, b in zip(new, state))
                               if isinstance(new, tuple) else where(masks[t], new, state))
                    state = new
                    hs[t] = state[0] if isinstance(state, tuple) else state
                out = (S.stack(hs, 0) if hs else x.new_zeros((0,) + tuple(x.shape[1:-1])
                                                             + (self._real_hidden_size,)))
                outs.append(out if direction == 0 or lengths is None else _reverse_within(out, lengths))
                finals.append(state)
            x = outs[0] if num_directions == 1 else S.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        return x, finals

    def _forward_packed(self, packed, hx, n_states):
        data, batch_sizes = packed.data, packed.batch_sizes.numpy()
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        T, B = len(batch_sizes), int(batch_sizes[0])
        lengths = (batch_sizes[None, :] > np.arange(B)[:, None]).sum(1)
        pad = zeros((1, data.shape[1]), dtype=data.dtype, device=data.device)
        rows = _padded_index(batch_sizes, T, data.shape[0])
        x = index_select(S.cat([data, pad], 0), 0, _tensor(rows, device=data.device))
        x = x.reshape(T, B, data.shape[1])
        shapes = self._state_shapes(B, n_states)
        if hx is None:
            hx = tuple(zeros(shape, dtype=data.dtype, device=data.device) for shape in shapes)
        else:
            hx = hx if n_states == 2 else (hx,)
            self._check_hidden(hx, shapes)
            if packed.sorted_indices is not None:   # the caller's order -> the sorted order
                hx = tuple(index_select(h, 1, packed.sorted_indices) for h in hx)
        per_layer = [tuple(h[i] for h in hx) if n_states == 2 else hx[0][i]
                     for i in range(shapes[0][0])]
        output, finals = self._run(x, per_layer, lengths)
        flat = np.concatenate([t * B + np.arange(n) for t, n in enumerate(batch_sizes)])
        out_data = index_select(output.reshape(T * B, output.shape[-1]), 0,
                                _tensor(flat, device=data.device))
        output = type(packed)(out_data, packed.batch_sizes, packed.sorted_indices,
                              packed.unsorted_indices)
        h_n = [S.stack([f[k] for f in finals], 0) for k in range(n_states)] if n_states == 2 \
            else [S.stack(finals, 0)]
        if packed.unsorted_indices is not None:
            h_n = [index_select(h, 1, packed.unsorted_indices) for h in h_n]
        return output, (tuple(h_n) if n_states == 2 else h_n[0])

    def _forward(self, input, hx, n_states):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, n_states)
        self._check_input(input)
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        shapes = self._state_shapes(input.shape[1], n_states)
        if hx is None:
            hx = tuple(zeros(shape, dtype=input.dtype, device=input.device) for shape in shapes)
        else:
            hx = hx if n_states == 2 else (hx,)
            if n_states == 2 and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
                raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
            want = 2 if batched else 1
            for h in hx:
                if h.ndim != want + 1:
                    raise RuntimeError(f"For {'batched' if batched else 'unbatched'} "
                                       f"{want + 1 if batched else 2}-D input, hx should also be "
                                       f"{want + 1}-D but got {h.ndim}-D tensor")
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx)
            self._check_hidden(hx, shapes)
        per_layer = [tuple(h[i] for h in hx) if n_states == 2 else hx[0][i]
                     for i in range(shapes[0][0])]
        output, finals = self._run(input, per_layer)
        if n_states == 2:
            h_n = (S.stack([f[0] for f in finals], 0), S.stack([f[1] for f in finals], 0))
        else:
            h_n = S.stack(finals, 0)
        if not batched:
            output = output.squeeze(1)
            h_n = tuple(h.squeeze(1) for h in h_n) if n_states == 2 else h_n.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, h_n

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _refuse_proj_size(kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    r"""Applies a multi-layer Elman RNN with :math:`\tanh` or :math:`\text{ReLU}`
    non-linearity to an input sequence: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T +
    b_hh)``.

    Args: ``input_size``, ``hidden_size``, ``num_layers`` (1), ``nonlinearity`` ('tanh' or
    'relu'), ``bias`` (True), ``batch_first`` (False), ``dropout`` (on the outputs of each
    layer except the last, 0), ``bidirectional`` (False). ``forward(input, hx=None)``
    returns ``(output, h_n)``.
    """

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        _refuse_proj_size(kwargs)
        if len(args) > 3:   # PyTorch's positional order puts nonlinearity fourth
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, 1)


class LSTM(RNNBase):
    r"""Applies a multi-layer long short-term memory (LSTM) RNN to an input sequence.

    For each element: ``i, f, g, o = sigmoid, sigmoid, tanh, sigmoid`` of the four chunks of
    ``x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh``; ``c_t = f * c_{t-1} + i * g`` and
    ``h_t = o * tanh(c_t)``. ``forward(input, (h_0, c_0)=None)`` returns
    ``(output, (h_n, c_n))``. With ``proj_size > 0`` (LSTM with projections), ``h_t =
    W_hr (o * tanh(c_t))``: h and the output have ``proj_size`` features, c keeps
    ``hidden_size``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, 2)


class GRU(RNNBase):
    r"""Applies a multi-layer gated recurrent unit (GRU) RNN to an input sequence.

    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z = sigmoid(W_iz x + b_iz + W_hz h +
    b_hz)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.
    ``forward(input, hx=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        _refuse_proj_size(kwargs)
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, 1)


class _CellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, n_states):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        shape = (input.shape[0], self.hidden_size)
        if hx is None:
            hx = tuple(zeros(shape, dtype=input.dtype, device=input.device) for _ in range(n_states))
        else:
            hx = tuple(h if batched else h.unsqueeze(0) for h in (hx if n_states == 2 else (hx,)))
            for h in hx:
                if tuple(h.shape) != shape:
                    raise RuntimeError(f"hidden0 has inconsistent hidden_size: got "
                                       f"{list(h.shape)}, expected {list(shape)}")
        return input, hx, batched

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nonlinearity}" if nonlinearity != "tanh" else "")


class RNNCell(_CellBase):
    """An Elman RNN cell with tanh or ReLU non-linearity: ``h' = tanh(x W_ih^T + b_ih +
    h W_hh^T + b_hh)``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        out = _rnn_step(self.nonlinearity)(F.linear(x, self.weight_ih, self.bias_ih), h,
                                           self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(_CellBase):
    """A long short-term memory (LSTM) cell; ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, state, batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), state, self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(_CellBase):
    """A gated recurrent unit (GRU) cell."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
