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
from ._common import scalar_type_name

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
    _check_dtypes(operands)
    program = _plan(equation, tuple(tuple(op.shape) for op in operands))
    return _run(program, operands)


@functools.lru_cache(maxsize=1024)
def _plan(equation, shapes):
    """The program computing ``equation`` for operands of these shapes (Note [Einsum plan])."""
    arrow = equation.find("->")
    lhs_end = arrow if arrow >= 0 else len(equation)
    bounds, start = [], 0
    for i in range(lhs_end + 1):
        if i == lhs_end or equation[i] == ",":
            bounds.append((start, i))
            start = i + 1
    if len(bounds) > len(shapes):
        raise _err("fewer operands were provided than specified in the equation")
    if len(bounds) < len(shapes):
        raise _err("more operands were provided than specified in the equation")
    terms = [_parse_term(equation, a, b, f"operand {k}") for k, (a, b) in enumerate(bounds)]
    for k, (labels, shape) in enumerate(zip(terms, shapes)):
        named = len(labels) - (_ELLIPSIS in labels)
        if _ELLIPSIS in labels:
            if named > len(shape):
                raise _err(f"the number of subscripts in the equation ({named}) is more than the "
                           f"number of dimensions ({len(shape)}) for operand {k}")
        elif named != len(shape):
            raise _err(f"the number of subscripts in the equation ({named}) does not match the "
                       f"number of dimensions ({len(shape)}) for operand {k} and no ellipsis was "
                       "given")
    out_terms = None if arrow < 0 else _parse_term(equation, arrow + 2, len(equation), "output")
    return tuple(_contract(terms, out_terms, [list(s) for s in shapes]))


def _check_dtypes(operands):
    first = operands[0].dtype
    for op in operands[1:]:
        if op.dtype != first:
            raise RuntimeError(f"expected scalar type {scalar_type_name(first)} but found "
                               f"{scalar_type_name(op.dtype)}")


def _expand_ellipses(terms, out_terms, shapes):
    """Replace _ELLIPSIS by right-aligned broadcast labels (Note [Einsum labels])."""
    covered = [len(s) - (len(t) - 1) if _ELLIPSIS in t else 0 for t, s in zip(terms, shapes)]
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
        return expanded, ell + sorted(l for l, n in counts.items() if n == 1 and l < 52)
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


def _sizes(terms, shapes):
    """The broadcast size of every label, with PyTorch's messages for a mismatch."""
    sizes = {}
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        for l, n in zip(t, shape):
            seen = sizes.get(l, 1)
            if n != 1 and seen != 1 and n != seen:
                if l >= 52:
                    raise _err(f"dimension {l - 52} covered by ellipsis in operand {k}has size {n} "
                               f"which does not broadcast with previously seen ellipsis with size "
                               f"{seen} for the respective dimension")
                raise _err(f"subscript {_LETTERS[l]} has size {n} for operand {k} which does not "
                           f"broadcast with previously seen size {seen}")
            sizes[l] = n if n != 1 else seen
    return sizes


# Note [Einsum plan]
# Everything einsum decides depends only on the equation and the operand shapes, so it is
# decided once per (equation, shapes) and cached as a small program over a list of operand
# slots; running it is a handful of binds. Planning tracks each slot's labels and shape:
#   ("diag", k, i, j)            slot k := its diagonal over dims i, j (a repeated label)
#   ("squeeze", k, dims)         drop size-1 dims that broadcast against larger ones
#   ("sum", k, axes)             sum out labels nothing else needs
#   ("pair", i, j, contr, batch) pop slots i > j, append dot_general(slot i, slot j)
#   ("expand", shape) / ("permute", perm)   on the last slot: broadcast labels, output order


def _contract(terms, out_terms, shapes):
    terms, out = _expand_ellipses(terms, out_terms, shapes)
    program, labs = [], []
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        t = list(t)
        while len(set(t)) != len(t):
            l = next(l for l in t if t.count(l) > 1)
            i = t.index(l)
            j = t.index(l, i + 1)
            if shape[i] != shape[j]:
                raise _err(f"subscript {_LETTERS[l]} is repeated for operand {k} but the sizes "
                           f"don't match, {shape[j]} != {shape[i]}")
            program.append(("diag", k, i, j))
            shape = [n for m, n in enumerate(shape) if m not in (i, j)] + [shape[i]]
            t = [m for n, m in enumerate(t) if n not in (i, j)] + [l]
        shapes[k] = shape
        labs.append(t)
    sizes = _sizes(labs, shapes)
    for k, t in enumerate(labs):      # size-1 dims that broadcast: the operand is constant there
        ones = tuple(i for i, (l, n) in enumerate(zip(t, shapes[k])) if n == 1 and sizes[l] != 1)
        if ones:
            program.append(("squeeze", k, ones))
            labs[k] = [l for i, l in enumerate(t) if i not in ones]
    needed = set(out)
    for k in range(len(labs)):        # labels only one operand has are summed at once
        others = set(l for j, t in enumerate(labs) if j != k for l in t) | needed
        labs[k] = _sum_out(program, k, labs[k], set(labs[k]) - others)
    for step in _path(tuple(tuple(t) for t in labs), tuple(tuple(sizes[l] for l in t) for t in labs)):
        idxs = list(step)                 # NumPy may contract three or more at once
        while len(idxs) > 1:
            i, j = idxs[0], idxs[1]
            keep = needed | set(l for m, t in enumerate(labs) if m not in (i, j) for l in t)
            first, second = (i, j) if i < j else (j, i)   # the operand order of the equation
            labs[first] = _sum_out(program, first, labs[first], set(labs[first]) - set(labs[second]) - keep)
            labs[second] = _sum_out(program, second, labs[second], set(labs[second]) - set(labs[first]) - keep)
            lx, ly = labs[first], labs[second]
            shared = [l for l in lx if l in ly]
            batch = [l for l in shared if l in keep]
            contract = [l for l in shared if l not in keep]
            program.append(("pair", first, second,
                            (tuple(lx.index(l) for l in contract), tuple(ly.index(l) for l in contract)),
                            (tuple(lx.index(l) for l in batch), tuple(ly.index(l) for l in batch))))
            del labs[second], labs[first]
            labs.append(batch + [l for l in lx if l not in shared] + [l for l in ly if l not in shared])
            idxs = [len(labs) - 1] + [m - (m > i) - (m > j) for m in idxs[2:]]
    lx = _sum_out(program, len(labs) - 1, labs[-1], set(labs[-1]) - needed)
    missing = [l for l in out if l not in lx]
    if missing:                       # output labels every operand broadcast
        lx = lx + missing
        program.append(("expand", tuple(sizes[l] for l in lx), len(missing)))
    perm = tuple(lx.index(l) for l in out)
    if perm != tuple(range(len(perm))):
        program.append(("permute", perm))
    return program


def _sum_out(program, k, labels, drop):
    axes = tuple(i for i, l in enumerate(labels) if l in drop)
    if axes:
        program.append(("sum", k, axes))
    return [l for l in labels if l not in drop]


def _run(program, operands):
    vals = list(operands)
    for step in program:
        kind = step[0]
        if kind == "pair":
            _, i, j, contracting, batch = step
            y, x = vals.pop(j), vals.pop(i)
            vals.append(bind(dot_general, x, y, contracting=contracting, batch=batch))
        elif kind == "diag":
            vals[step[1]] = SH.diagonal(vals[step[1]], 0, step[2], step[3])
        elif kind == "squeeze":
            vals[step[1]] = SH.squeeze(vals[step[1]], step[2])
        elif kind == "sum":
            vals[step[1]] = R.sum(vals[step[1]], step[2])
        elif kind == "expand":
            x = vals[-1]
            vals[-1] = SH.broadcast_to(x.reshape(tuple(x.shape) + (1,) * step[2]), step[1])
        else:
            vals[-1] = SH.permute(vals[-1], step[1])
    return vals[-1]


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
