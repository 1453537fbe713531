"""Bytecode: the per-version normalisation layer and the resume-function generator.

Everything that knows CPython's bytecode layout lives here, so that supporting 3.12/3.13
means adding a table here, not touching the symbolic interpreter (symbolic.py). Today only
CPython 3.11 is supported: `check_version()` raises a clear error naming the running one.

This file owns: decoding a code object into a list of `Inst` (opname, argument, jump
target, line), and building *resume code objects* (Note [Resume functions]). It must not
know about tensors, guards or graphs.
"""
from __future__ import annotations

import dis
import sys
import types

SUPPORTED = ((3, 11),)


class Inst:
    """One instruction: ``opname``, ``arg`` (raw), ``argval`` (decoded), ``target`` (a jump's
    destination offset, else None), ``offset`` and the source ``line``."""

    __slots__ = ("opname", "arg", "argval", "target", "offset", "line", "index")

    def __init__(self, opname, arg, argval, target, offset, line, index):
        self.opname, self.arg, self.argval, self.target = opname, arg, argval, target
        self.offset, self.line, self.index = offset, line, index

    def __repr__(self):
        return f"{self.offset} {self.opname} {self.argval!r}"


def check_version():
    """Raise if this Python's bytecode is not one the symbolic interpreter knows."""
    if sys.version_info[:2] not in SUPPORTED:
        raise RuntimeError(
            f"numtorch.compile: capture interprets CPython bytecode and supports Python "
            f"{', '.join('%d.%d' % v for v in SUPPORTED)}; this is Python "
            f"{sys.version_info.major}.{sys.version_info.minor}. Use backend-less eager code "
            f"or numtorch.func.make_graph instead.")


_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)
_CACHE = {}


def instructions(code: types.CodeType):
    """The decoded instructions of ``code`` (cached), with an offset → index map."""
    hit = _CACHE.get(code)
    if hit is not None:
        return hit
    insts, line = [], code.co_firstlineno
    for i in dis.get_instructions(code):
        if i.starts_line is not None:
            line = i.starts_line
        target = i.argval if i.opcode in _JUMPS else None
        insts.append(Inst(i.opname, i.arg, i.argval, target, i.offset, line, len(insts)))
    by_offset = {inst.offset: inst.index for inst in insts}
    _CACHE[code] = insts, by_offset
    return insts, by_offset


_EXC_CACHE = {}


def exception_table(code):
    """``code``'s exception table: [(start, end (exclusive), handler, stack depth, lasti)]."""
    hit = _EXC_CACHE.get(code)
    if hit is None:
        hit = _EXC_CACHE[code] = [(e.start, e.end, e.target, e.depth, e.lasti)
                                  for e in dis._parse_exception_table(code)]
    return hit


# Note [Resume functions]
# A graph break at offset X of a frame ends the graph; the generated code runs the graph,
# runs the breaking instruction natively, and then calls a *resume function*: a new code
# object whose body is the original bytecode, preceded by a short prologue that pushes the
# live stack (passed as extra arguments) and jumps to X's successor. Its arguments are all
# the original local variables (unbound ones are deleted in the prologue) followed by the
# stack values. Because every jump in 3.11 is relative, the original instructions keep
# working when shifted; only the exception table (absolute offsets) is rewritten, and the
# line table gets a "no location" entry for the prologue. Code with cell variables gets
# its live cells passed in (Note [Cells in resume functions]). Resume code objects are
# cached per (code, offset, stack shape).

_RESUME_CACHE = {}
_ORIGIN = {}      # resume code -> (the user's code object, bytes of prologue before its body)


def origin(code):
    """(original code, offset shift) of a resume code object; (code, 0) for user code.

    A break inside a resume function resumes the *original* code (Note [Resume functions]):
    a data-dependent loop then reuses one resume function per offset instead of making a
    new code object (and a new compile) per iteration.
    """
    return _ORIGIN.get(code, (code, 0))
_NULL_ARG = "___null"


def _varint(n, first=False):
    chunks = []
    while True:
        chunks.append(n & 63)
        n >>= 6
        if not n:
            break
    chunks.reverse()
    out = bytearray()
    for j, c in enumerate(chunks):
        b = c | (64 if j < len(chunks) - 1 else 0)
        if first and j == 0:
            b |= 128
        out.append(b)
    return bytes(out)


def _shift_exception_table(code, shift_units):
    out = bytearray()
    for e in dis._parse_exception_table(code):
        start, end = e.start // 2 + shift_units, e.end // 2 + shift_units
        out += _varint(start, first=True) + _varint(end - start) + \
            _varint(e.target // 2 + shift_units) + _varint((e.depth << 1) | int(e.lasti))
    return bytes(out)


def resumable(code) -> str | None:
    """Why ``code`` cannot get resume functions (None when it can)."""
    if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):   # generator/coroutine flags
        return "the function is a generator or coroutine"
    return None


_DEREF_OPS = {dis.opmap[n] for n in ("LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF",
                                      "LOAD_CLOSURE", "LOAD_CLASSDEREF", "MAKE_CELL")}


def _localsplus(code):
    """3.11's combined locals layout: varnames, then cells that are not arguments, frees."""
    cells = [c for c in code.co_cellvars if c not in code.co_varnames]
    return list(code.co_varnames) + cells + list(code.co_freevars)


# Note [Cells in resume functions]
# A frame with cell variables (locals captured by inner functions) resumes with those
# cells *passed in*, not re-created: the resume code declares the original cellvars as
# leading freevars (freevars = cellvars + original freevars, no cellvars), and the caller
# builds its closure from the live cells, so an inner function made before the break and
# the resumed code share them, as in the original frame. Every *_DEREF/LOAD_CLOSURE index
# is rewritten for the new layout; a cell that was also an argument keeps an unused local
# slot, renamed so the name is not both a local and a free variable.


def resume_code(code, target_offset, stack_kinds, unbound, lineno):
    """A code object that continues ``code`` at ``target_offset`` (Note [Resume functions]).

    Its positional arguments are ``code.co_varnames`` then one per stack slot; a stack slot
    of kind ``'null'`` is re-created with PUSH_NULL instead. ``unbound`` names the local
    indices to delete in the prologue. Its closure is ``code``'s cells (in ``co_cellvars``
    order) followed by ``code``'s own closure (Note [Cells in resume functions]).
    """
    code, shift = origin(code)
    target_offset -= shift
    key = (code, target_offset, tuple(stack_kinds), tuple(unbound))
    hit = _RESUME_CACHE.get(key)
    if hit is not None:
        return hit
    op = dis.opmap
    nvar = len(code.co_varnames)
    stack_names = [f"___stack{nvar + i}" for i in range(len(stack_kinds))]
    varnames = tuple(f"___cellarg_{n}" if n in code.co_cellvars else n
                     for n in code.co_varnames) + tuple(stack_names)
    freevars = tuple(code.co_cellvars) + tuple(code.co_freevars)
    nfree = len(freevars)
    pro = []
    if nfree:
        pro += [op["COPY_FREE_VARS"], nfree]
    pro += [op["RESUME"], 0]
    for i, kind in enumerate(stack_kinds):
        pro += [op["PUSH_NULL"], 0] if kind == "null" else [op["LOAD_FAST"], nvar + i]
    for i in unbound:
        if code.co_varnames[i] not in code.co_cellvars:
            pro += [op["DELETE_FAST"], i]
    # The jump is relative to the instruction after it, which is where the shifted
    # original body begins: the distance is the target's own offset.
    delta_units = target_offset // 2
    if delta_units > 255 or max(nvar + len(stack_kinds), 1) > 255:
        raise NotImplementedError("resume: offset or argument count too large")
    pro += [op["JUMP_FORWARD"], delta_units]
    prologue = bytes(pro)
    body = bytearray(code.co_code)
    if nfree:
        old = _localsplus(code)
        new_index = {n: len(varnames) + i for i, n in enumerate(freevars)}
        for i in range(0, len(body), 2):
            if body[i] in _DEREF_OPS:
                if i and body[i - 2] == op["EXTENDED_ARG"]:
                    raise NotImplementedError("resume: EXTENDED_ARG closure index")
                j = new_index[old[body[i + 1]]]
                if j > 255:
                    raise NotImplementedError("resume: too many locals")
                if body[i] == op["MAKE_CELL"]:   # before the jump target: never run
                    body[i], j = op["NOP"], 0
                body[i + 1] = j
    units = len(prologue) // 2
    linetable, left = b"", units
    while left:   # "no location" entries (code 15), at most 8 code units each
        n = min(left, 8)
        linetable += bytes([0xF8 | (n - 1)])
        left -= n
    flags = code.co_flags & ~(0x04 | 0x08)   # no *args / **kwargs: all plain positionals
    name = f"torch_dynamo_resume_in_{code.co_name}_at_{lineno}"
    new = code.replace(
        co_code=prologue + bytes(body), co_argcount=len(varnames), co_posonlyargcount=0,
        co_kwonlyargcount=0, co_nlocals=len(varnames), co_varnames=varnames,
        co_cellvars=(), co_freevars=freevars,
        co_flags=flags, co_name=name, co_qualname=name,
        co_stacksize=code.co_stacksize + len(stack_kinds) + 1,
        co_linetable=linetable + code.co_linetable,
        co_exceptiontable=_shift_exception_table(code, units))
    _RESUME_CACHE[key] = new
    _ORIGIN[new] = (code, len(prologue))
    return new
