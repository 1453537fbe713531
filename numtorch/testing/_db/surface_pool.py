"""OpInfo entries: ``nn.functional`` adaptive_max_pool1d/2d/3d (nn/_adaptive_max_pool.py)
and embedding_bag (nn/_embedding_bag.py)."""
from __future__ import annotations

import numpy as np

import numtorch as torch
import numtorch.nn.functional as F

from ..opinfo import FLOATING, SAME, OpInfo, SampleInput, make, register, tensor_of


def _functional(name, **kw):
    """An entry for ``numtorch.nn.functional.<name>`` (no top-level function)."""
    return OpInfo(f"nn.functional.{name}", op=getattr(F, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.nn.functional, name), **kw)


# ---------------------------------------------------------------------------------------
# adaptive_max_pool: distinct values, so finite differences never move the maximum

def _adaptive_samples(*cases):
    def gen(dtype, requires_grad):
        for shape, size, kwargs, name in cases:
            yield SampleInput(make(shape, dtype, requires_grad, distinct=True), (size,), kwargs,
                              name=name)
    return gen


def _adaptive_max_ref(nd):
    def ref(x, output_size, return_indices=False):
        spatial = x.shape[-nd:]
        if isinstance(output_size, int) or output_size is None:
            output_size = (output_size,) * nd
        sizes = tuple(n if o is None else o for n, o in zip(spatial, output_size))
        values = np.empty(x.shape[:-nd] + sizes, x.dtype)
        indices = np.empty(x.shape[:-nd] + sizes, np.int64)
        for q in np.ndindex(*sizes):
            box = tuple(slice((i * n) // o, -((-(i + 1) * n) // o)) for i, n, o in
                        zip(q, spatial, sizes))
            block = x[(Ellipsis,) + box].reshape(x.shape[:-nd] + (-1,))
            values[(Ellipsis,) + q] = block.max(-1)
            tap = np.unravel_index(block.argmax(-1), tuple(b.stop - b.start for b in box))
            flat = 0
            for t, b, n in zip(tap, box, spatial):
                flat = flat * n + t + b.start
            indices[(Ellipsis,) + q] = flat
        return (values, indices) if return_indices else values
    return ref


_POOL = dict(result_dtype=SAME, dtypes=FLOATING)

register(
    _functional("adaptive_max_pool1d", ref=_adaptive_max_ref(1), sample_inputs=_adaptive_samples(
        ((2, 3, 7), 3, {}, ""),
        ((2, 5), 4, dict(return_indices=True), "unbatched_overlap_indices")), **_POOL),
    _functional("adaptive_max_pool2d", ref=_adaptive_max_ref(2), sample_inputs=_adaptive_samples(
        ((1, 2, 5, 7), (2, 3), dict(return_indices=True), "indices"),
        ((2, 4, 6), (None, 4), {}, "unbatched_none")), **_POOL),
    _functional("adaptive_max_pool3d", ref=_adaptive_max_ref(3), sample_inputs=_adaptive_samples(
        ((1, 1, 3, 4, 5), (2, 3, 2), dict(return_indices=True), "indices"),), **_POOL),
)


# ---------------------------------------------------------------------------------------
# embedding_bag: the indices are the input, the weight the differentiable argument

def _embedding_bag_samples(dtype, requires_grad):
    def w():
        return make((6, 3), dtype, requires_grad)
    flat = tensor_of([1, 2, 4, 5, 4, 3, 2, 0], torch.int64)
    offsets = tensor_of([0, 3, 3, 5], torch.int64)
    # the batched columns' second example reverses every operand: reversed offsets are
    # invalid (PyTorch raises), so these samples skip them; "palindrome" covers offsets there
    fixed = ("vmap", "graph", "passes")
    yield SampleInput(flat, (w(), offsets), dict(mode="mean"), name="mean_empty_bag", skip=fixed)
    yield SampleInput(flat, (w(), offsets), dict(mode="max", padding_idx=4), name="max_padding",
                      skip=fixed)
    yield SampleInput(flat, (w(), tensor_of([0, 3, 3, 5, 8], torch.int64)),
                      dict(mode="sum", include_last_offset=True,
                           per_sample_weights=make((8,), dtype, requires_grad)),
                      name="sum_weights_last_offset", skip=fixed)
    yield SampleInput(flat, (w(), tensor_of([0, 0, 0], torch.int64)), dict(mode="max"),
                      name="palindrome")
    yield SampleInput(tensor_of([[0, 5, 5], [2, 1, 3]], torch.int64), (w(),),
                      dict(mode="sum"), name="2d")


def _embedding_bag_ref(input, weight, offsets=None, mode="mean", per_sample_weights=None,
                       include_last_offset=False, padding_idx=None):
    if input.ndim == 2:
        bags = list(input)
        psw = list(per_sample_weights) if per_sample_weights is not None else None
    else:
        ends = list(offsets[1:]) + ([] if include_last_offset else [len(input)])
        starts = list(offsets[:len(ends)])
        bags = [input[s:e] for s, e in zip(starts, ends)]
        psw = [per_sample_weights[s:e] for s, e in zip(starts, ends)] \
            if per_sample_weights is not None else None
    out = np.zeros((len(bags), weight.shape[1]), weight.dtype)
    for b, bag in enumerate(bags):
        keep = np.array([i != padding_idx for i in bag], bool)
        rows = weight[bag[keep]] if len(bag) else weight[:0]
        if psw is not None:
            rows = rows * psw[b][keep][:, None]
        if len(rows):
            out[b] = dict(sum=rows.sum, mean=rows.mean, max=rows.max)[mode](0)
    return out


register(_functional("embedding_bag", ref=_embedding_bag_ref, result_dtype=lambda s: s.args[0].dtype,
                     sample_inputs=_embedding_bag_samples))
