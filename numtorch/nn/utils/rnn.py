"""``nn.utils.rnn``: variable-length sequences — ``pad_sequence``, ``PackedSequence`` and
``pack_padded_sequence`` / ``pad_packed_sequence`` / ``pack_sequence``.

Packing and unpacking are one ``index_select`` each, with the index computed from the
lengths (host values, as in PyTorch, where ``lengths`` must be on the CPU), so gradients
flow through both. The recurrent layers accept a ``PackedSequence``
(numtorch/nn/modules/rnn.py runs it padded, with the steps past each length masked).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._core import dtypes as _dt
from ..._core.tensor import Tensor
from ..._ops import shape as S
from ..._ops.creation import full, tensor as _tensor
from ..._ops.index import index_select

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices"])):
    """Holds the data and list of ``batch_sizes`` of a packed sequence: ``data`` is
    ``(sum(lengths), *)``, time step after time step, each step holding the sequences
    still running (longest first); ``batch_sizes[t]`` is how many. Made by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._replace(data=data)

    @property
    def is_cuda(self):
        return False


def _invert(perm):
    inv = np.empty(len(perm), dtype=np.int64)
    inv[np.asarray(perm.numpy() if isinstance(perm, Tensor) else perm)] = np.arange(len(perm))
    return _tensor(inv)


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        lengths = lengths.detach().numpy()
    arr = np.asarray(lengths)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(f"pack_padded_sequence(): argument 'lengths' must be a 1-D list or "
                        f"tensor of integers, got {arr.dtype} of shape {arr.shape}")
    return arr.astype(np.int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pads a list of variable length Tensors with ``padding_value``: the result is
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) where ``T`` is the longest length."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    if not sequences:
        raise RuntimeError("pad_sequence(): received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = S.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return S.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Unpads a padded Tensor into a list of variable length Tensors (the inverse of
    :func:`pad_sequence` with right padding)."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_lengths_array(lengths))]


def _batch_sizes(sorted_lengths):
    steps = int(sorted_lengths[0]) if len(sorted_lengths) else 0
    return np.array([(sorted_lengths > t).sum() for t in range(steps)], dtype=np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a Tensor containing padded sequences of variable length. ``input`` is
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``); ``lengths`` the length of each
    sequence. With ``enforce_sorted=True`` the sequences must be sorted by length in
    decreasing order; otherwise they are sorted here and the permutation is kept."""
    lengths = _lengths_array(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths) != input.shape[1]:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                         f"{len(lengths)} (batch_size={input.shape[1]})")
    if len(lengths) and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        order, sorted_indices = np.arange(len(lengths)), None
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = _tensor(order.astype(np.int64))
    if lengths.max() > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence(): a length ({lengths.max()}) exceeds the "
                           f"padded length {input.shape[0]}")
    sorted_lengths = lengths[order]
    batch_sizes = _batch_sizes(sorted_lengths)
    B = input.shape[1]
    flat = np.concatenate([t * B + order[:n] for t, n in enumerate(batch_sizes)])
    data = index_select(input.reshape((-1,) + tuple(input.shape[2:])), 0,
                        _tensor(flat, device=input.device))
    return PackedSequence(data, _tensor(batch_sizes), sorted_indices, None)


def _padded_index(batch_sizes, total, padding_row):
    """(T * B,) rows of ``data`` (``padding_row`` where a sequence has ended), sorted order."""
    B = int(batch_sizes[0])
    idx = np.full((total, B), padding_row, dtype=np.int64)
    offset = 0
    for t, n in enumerate(batch_sizes):
        idx[t, :n] = np.arange(offset, offset + n)
        offset += n
    return idx.reshape(-1)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch of variable length sequences (the inverse of
    :func:`pack_padded_sequence`). Returns ``(padded, lengths)``, the sequences in their
    original order; ``total_length`` pads to that many steps."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence(): argument 'sequence' must be a PackedSequence, "
                        f"not {type(sequence).__name__}")
    data, batch_sizes = sequence.data, sequence.batch_sizes.numpy()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    B = int(batch_sizes[0])
    pad_row = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    rows = _padded_index(batch_sizes, steps, data.shape[0])
    padded = index_select(S.cat([data, pad_row], 0), 0, _tensor(rows, device=data.device))
    padded = padded.reshape((steps, B) + tuple(data.shape[1:]))
    lengths = (batch_sizes[None, :] > np.arange(B)[:, None]).sum(1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _tensor(lengths, dtype=_dt.int64)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable length Tensors (``pad_sequence`` then
    ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
