"""``einsum`` with PyTorch's semantics, decomposed into diagonals, sums and `dot_general`s.

An equation is parsed into integer labels (Note [Einsum labels]); each operand then loses
its repeated labels (diagonals), its size-1 broadcast dims and the labels no one else needs
(sums); what remains is contracted pairwise in the order NumPy's greedy path picks for
these shapes, each pair being one `dot_general` (``_prims/contraction.py``). Derivatives and
batch rules therefore come from those primitives. PyTorch's error messages are raised here.
"""
from __future__ import annotations

import functools

import numpy as np

from .._core.primitive import bind
from .._core.tensor import Tensor
from .._prims.contraction import dot_general
from . import reduce as R
from . import shape as SH
from .linalg_ops import scalar_type_name

# Note [Einsum labels]
# 'A'-'Z' are labels 0-25 and 'a'-'z' 26-51, so sorting labels sorts letters as PyTorch's
# implicit output does (upper case first). Dimensions covered by an ellipsis get labels
# 52, 53, …, right-aligned across operands (an operand whose ellipsis covers e of the E
# broadcast dims uses the last e), which makes ellipsis broadcasting ordinary label
# broadcasting.

_ELLIPSIS = -1
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(_LETTERS)}


def _err(msg):
    return RuntimeError(f"einsum(): {msg}")


def _parse_term(equation, start, stop, where):
    """Labels of equation[start:stop] with _ELLIPSIS for '...' (where: 'operand k'/'output')."""
    labels, i = [], start
    while i < stop:
        c = equation[i]
        if c == " ":
            i += 1
        elif c == ".":
            if equation[i:i + 3] != "..." or i + 3 > stop:
                raise _err(f"found '.' for {where} that is not part of any ellipsis")
            if _ELLIPSIS in labels:
                raise _err(f"found '.' for {where} for which an ellipsis was already found"
                           if where != "output" else
                           "found '.' for output but an ellipsis (...) was already found")
            labels.append(_ELLIPSIS)
            i += 3
        elif c in _INDEX:
            labels.append(_INDEX[c])
            i += 1
        else:
            raise _err(f"invalid subscript given at index {i} in the equation string, "
                       "subscripts must be in [a-zA-Z]")
    return labels


def _sublist_equation(args):
    """torch.einsum(op0, sublist0, op1, sublist1, ..., [out_sublist]) as an equation."""
    def term(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)
    operands, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    out = None
    if len(args) % 2 == 1:
        operands, out = operands[:-1], term(args[-1])
    return ",".join(terms) + ("" if out is None else "->" + out), operands


def einsum(*args):
    """Sums the product of the elements of the operands along dimensions specified by the
    Einstein summation ``equation`` (operands as arguments or one list; '...' broadcasts;
    without '->' the output has the labels that appear once, in alphabetical order).

    >>> einsum('ij,jk->ik', ones(2, 3), ones(3, 4))
    tensor([[3., 3., 3., 3.],
            [3., 3., 3., 3.]])
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(op).__name__}")
    arrow = equation.find("->")
    lhs_end = arrow if arrow >= 0 else len(equation)
    bounds, start = [], 0
    for i in range(lhs_end + 1):
        if i == lhs_end or equation[i] == ",":
            bounds.append((start, i))
            start = i + 1
    if len(bounds) > len(operands):
        raise _err("fewer operands were provided than specified in the equation")
    if len(bounds) < len(operands):
        raise _err("more operands were provided than specified in the equation")
    terms = [_parse_term(equation, a, b, f"operand {k}") for k, (a, b) in enumerate(bounds)]
    for k, (labels, op) in enumerate(zip(terms, operands)):
        named = len(labels) - (_ELLIPSIS in labels)
        if _ELLIPSIS in labels:
            if named > op.ndim:
                raise _err(f"the number of subscripts in the equation ({named}) is more than the "
                           f"number of dimensions ({op.ndim}) for operand {k}")
        elif named != op.ndim:
            raise _err(f"the number of subscripts in the equation ({named}) does not match the "
                       f"number of dimensions ({op.ndim}) for operand {k} and no ellipsis was given")
    out_terms = None if arrow < 0 else _parse_term(equation, arrow + 2, len(equation), "output")
    _check_dtypes(operands)
    return _contract(terms, out_terms, operands)


def _check_dtypes(operands):
    first = operands[0].dtype
    for op in operands[1:]:
        if op.dtype != first:
            raise RuntimeError(f"expected scalar type {scalar_type_name(first)} but found "
                               f"{scalar_type_name(op.dtype)}")


def _expand_ellipses(terms, out_terms, operands):
    """Replace _ELLIPSIS by right-aligned broadcast labels (Note [Einsum labels])."""
    covered = [op.ndim - (len(t) - 1) if _ELLIPSIS in t else 0 for t, op in zip(terms, operands)]
    e = max(covered, default=0)
    ell = list(range(52, 52 + e))
    expanded = []
    for t, c in zip(terms, covered):
        if _ELLIPSIS in t:
            i = t.index(_ELLIPSIS)
            t = t[:i] + ell[e - c:] + t[i + 1:]
        expanded.append(t)
    if out_terms is None:
        counts = {}
        for t in expanded:
            for l in t:
                counts[l] = counts.get(l, 0) + 1
        out = ell + sorted(l for l, n in counts.items() if n == 1 and l < 52)
    else:
        seen = set()
        for l in out_terms:
            if l == _ELLIPSIS:
                continue
            if l in seen:
                raise _err(f"output subscript {_LETTERS[l]} appears more than once in the output")
            seen.add(l)
            if not any(l in t for t in expanded):
                raise _err(f"output subscript {_LETTERS[l]} does not appear in the equation for "
                           "any input operand")
        out = []
        for l in out_terms:
            out.extend(ell if l == _ELLIPSIS else [l])
    return expanded, out


def _take_diagonals(x, labels, k):
    """Collapse repeated labels of one operand to a single dim (its diagonal)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        l = next(l for l in labels if labels.count(l) > 1)
        i = labels.index(l)
        j = labels.index(l, i + 1)
        if x.shape[i] != x.shape[j]:
            raise _err(f"subscript {_LETTERS[l]} is repeated for operand {k} but the sizes don't "
                       f"match, {x.shape[j]} != {x.shape[i]}")
        x = SH.diagonal(x, 0, i, j)
        labels = [m for n, m in enumerate(labels) if n not in (i, j)] + [l]
    return x, labels


def _sizes(terms, operands):
    """The broadcast size of every label, with PyTorch's messages for a mismatch."""
    sizes = {}
    for k, (t, op) in enumerate(zip(terms, operands)):
        for l, n in zip(t, op.shape):
            seen = sizes.get(l, 1)
            if n != 1 and seen != 1 and n != seen:
                if l >= 52:
                    raise _err(f"dimension {l - 52} covered by ellipsis in operand {k}has size {n} "
                               f"which does not broadcast with previously seen ellipsis with size "
                               f"{seen} for the respective dimension")
                raise _err(f"subscript {_LETTERS[l]} has size {n} for operand {k} which does not "
                           f"broadcast with previously seen size {seen}")
            if n != 1:
                sizes[l] = n
            else:
                sizes.setdefault(l, 1)
    return sizes


def _reduce(x, labels, drop):
    axes = [i for i, l in enumerate(labels) if l in drop]
    if not axes:
        return x, labels
    return R.sum(x, tuple(axes)), [l for l in labels if l not in drop]


def _contract(terms, out_terms, operands):
    terms, out = _expand_ellipses(terms, out_terms, operands)
    ops, labs = [], []
    for k, (t, op) in enumerate(zip(terms, operands)):
        op, t = _take_diagonals(op, t, k)
        ops.append(op)
        labs.append(t)
    sizes = _sizes(labs, ops)
    # A size-1 dim whose label is larger elsewhere broadcasts: drop it from this operand.
    for k, (op, t) in enumerate(zip(ops, labs)):
        ones = [i for i, (l, n) in enumerate(zip(t, op.shape)) if n == 1 and sizes[l] != 1]
        if ones:
            ops[k] = SH.squeeze(op, tuple(ones))
            labs[k] = [l for i, l in enumerate(t) if i not in ones]
    needed = set(out)
    # Labels only one operand has and the output lacks are summed right away.
    for k in range(len(ops)):
        others = set(l for j, t in enumerate(labs) if j != k for l in t) | needed
        ops[k], labs[k] = _reduce(ops[k], labs[k], set(labs[k]) - others)
    for step in _path(tuple(tuple(t) for t in labs), tuple(tuple(op.shape) for op in ops)):
        picked = sorted(step, reverse=True)
        group = [(ops.pop(i), labs.pop(i)) for i in picked]
        x, lx = group[0]
        for y, ly in group[1:]:
            keep = needed | set(l for t in labs for l in t)
            x, lx = _pair(x, lx, y, ly, keep)
        ops.append(x)
        labs.append(lx)
    x, lx = ops[0], labs[0]
    x, lx = _reduce(x, lx, set(lx) - needed)
    missing = [l for l in out if l not in lx]
    if missing:   # output labels every operand broadcast: expand at the end
        x = x.reshape(tuple(x.shape) + (1,) * len(missing))
        lx = lx + missing
        x = SH.broadcast_to(x, tuple(x.shape[:len(lx) - len(missing)]) +
                            tuple(sizes[l] for l in missing))
    perm = tuple(lx.index(l) for l in out)
    return x if perm == tuple(range(len(perm))) else SH.permute(x, perm)


def _pair(x, lx, y, ly, keep):
    """Contract two operands over their shared labels that nothing later needs."""
    shared = [l for l in lx if l in ly]
    batch = [l for l in shared if l in keep]
    contract = [l for l in shared if l not in keep]
    x, lx = _reduce(x, lx, set(lx) - set(ly) - keep)
    y, ly = _reduce(y, ly, set(ly) - set(lx) - keep)
    out = bind(dot_general, x, y,
               contracting=(tuple(lx.index(l) for l in contract), tuple(ly.index(l) for l in contract)),
               batch=(tuple(lx.index(l) for l in batch), tuple(ly.index(l) for l in batch)))
    return out, batch + [l for l in lx if l not in shared] + [l for l in ly if l not in shared]


@functools.lru_cache(maxsize=1024)
def _path(labels, shapes):
    """The contraction order NumPy's greedy optimizer picks for these shapes (no data)."""
    if len(labels) <= 2:
        return ((0, 1),) if len(labels) == 2 else ()
    distinct = sorted({l for t in labels for l in t})
    if len(distinct) > len(_LETTERS):      # beyond NumPy's alphabet: left to right
        return ((0, 1),) * (len(labels) - 1)
    letter = dict(zip(distinct, _LETTERS))
    eq = ",".join("".join(letter[l] for l in t) for t in labels)
    dummies = [np.broadcast_to(np.zeros((), np.float64), s) for s in shapes]
    path, _ = np.einsum_path(eq, *dummies, optimize="greedy")
    return tuple(tuple(step) for step in path[1:])
