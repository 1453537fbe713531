"""compile_graph: schedule, generate, build, and the per-call path of a compiled graph.

The per-call path is generated Python source too (straight-line, no loops over steps),
so a small graph costs one function call, a contiguity check per input, one ``np.empty``
per output and one ctypes call per run of kernels. This module owns that path; grouping,
C text and the compiler live in scheduler.py, codegen.py and build.py.

Note [Passing arrays to kernels]
Reading ``arr.ctypes.data`` costs about 1 µs per array, more than a small kernel. The
entry point takes the arrays themselves, in one tuple (ctypes ``py_object``, a pointer
copy; Note [Segments as data], launcher.py) and reads the data pointer from the object in C: ``PyArrayObject`` starts with the object header
followed by ``char *data`` (NumPy's stable ABI). A probe checks the layout at load time;
where it disagrees, the runner falls back to passing ``ctypes.data`` pointers.
"""
from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
import types

import numpy as np

from .._core.ir import Const, Var
from .._core.tensor import wrap
from .. import _threads
from . import build, codegen, config, gather, gemm, layout, numpy_codegen, simplify
from .scheduler import Kernel, dtype_of, schedule

log = logging.getLogger("numtorch._inductor")
output_code_log = logging.getLogger("numtorch._inductor.output_code")
if "output_code" in os.environ.get("NUMTORCH_LOGS", "") and not output_code_log.handlers:
    output_code_log.addHandler(logging.StreamHandler(sys.stderr))
    output_code_log.setLevel(logging.INFO)

_DATA_OFFSET = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # PyObject_HEAD


class CompiledGraph:
    """A graph compiled to C kernels; call it with the graph's flat input tensors.

    ``source`` is the generated C, ``python_code`` the per-call path, ``kernel_count`` the
    number of fused kernels, ``product_count`` the small matrix products run in C beside
    them (Note [Small products in C], gemm.py) and ``extern_count`` the NumPy calls
    between them. ``run`` is
    the generated per-call function itself (what calling this object runs): callers on a
    hot path (the inductor backend of compile) call it and skip one Python call.
    ``run_arrays`` is the same function on arrays, returning arrays (Note [Runners on
    arrays]), or None.
    """

    def __init__(self, graph, sched, source, python_code, fn, kind="c", run_arrays=None):
        self.graph, self.schedule, self.source, self.python_code = graph, sched, source, python_code
        self._fn = self.run = fn
        self.run_arrays = run_arrays      # Note [Runners on arrays]
        self.kind = kind      # "c": kernels; "numpy": the fallback (Note [Fused NumPy code])
        self.kernel_count = len(sched.kernels) if sched is not None else 0
        in_c = _in_c(sched) if sched is not None and kind == "c" else set()
        self.product_count = sum(1 for i in in_c if not isinstance(sched.steps[i], Kernel)
                                 and gemm.plan(sched.steps[i]))
        self.extern_count = len(sched.steps) - len(in_c) if sched else 0

    def __call__(self, *args):
        return self._fn(*args)

    def __repr__(self):
        if self.kind == "numpy":
            return f"<CompiledGraph {self.graph.name}: NumPy code, no C compiler>"
        products = f"{self.product_count} products, " if self.product_count else ""
        return f"<CompiledGraph {self.graph.name}: {self.kernel_count} kernels, {products}{self.extern_count} externs>"


def compile_graph(graph, example_inputs=None, *, options=None):
    """Compile a `Graph` into fused C/OpenMP kernels; returns ``callable(*flat_inputs)``.

    ``graph`` comes from ``numtorch.func.make_graph(f)(*args)`` or capture; the returned
    callable takes the graph's flat input tensors (same shapes and dtypes as traced) and
    returns the tuple of output tensors, like ``graph(*inputs)``. Pointwise, movement and
    reduction nodes become fused kernels; everything else (matmul, conv, linalg, sort,
    random, data-dependent indexing, float16/complex values) runs the primitive's NumPy
    impl between kernels. Without a working C compiler (or with
    ``config.cpp.numpy_fallback``), a warning is issued once and the graph runs as
    generated NumPy code (Note [Fused NumPy code]). ``options`` (torch.compile's ``options=``) set
    ``numtorch._inductor.config`` attributes for this compilation ("cpp.threads" too).

    >>> import numtorch as torch
    >>> from numtorch.func import make_graph
    >>> x = torch.randn(4, 8)
    >>> g = make_graph(lambda x: torch.softmax(x, -1))(x)
    >>> fn = compile_graph(g, [x])                      # doctest: +SKIP (needs cc)
    >>> torch.allclose(fn(x)[0], torch.softmax(x, -1))  # doctest: +SKIP
    True
    """
    return compile_graphs([graph], options=options)[0]


def compile_graphs(graphs, *, options=None):
    """`compile_graph` for several graphs at once, built into one shared library (one
    compiler run: what the test suite uses to compile hundreds of small graphs)."""
    from .._core.ir import Graph
    for g in graphs:
        if not isinstance(g, Graph):
            raise TypeError(f"compile_graph: graph must be a numtorch Graph (from make_graph), "
                            f"got {type(g).__name__}")
    with _options(options):
        donated = [g.donated for g in graphs]        # Note [Donated inputs]
        graphs = [simplify.optimize(g) for g in graphs]
        if config.cpp.numpy_fallback or not build.usable():
            if not config.cpp.numpy_fallback:
                build.warn_no_compiler()
            return [_numpy(g) for g in graphs]
        if config.layout_rewrites:                   # Note [Transposes sink to products]
            graphs = [layout.choose_layouts(g) for g in graphs]
        parts = []
        for i, graph in enumerate(graphs):
            sched = schedule(graph, codegen.reads)
            buffers = codegen.Buffers()
            prefix = f"g{i}_" if len(graphs) > 1 else ""
            chunks, segments = codegen.generate(sched, buffers, prefix)
            parts.append((graph, sched, buffers, segments, prefix, chunks))
        if output_code_log.isEnabledFor(logging.INFO):
            output_code_log.info("Output code:\n%s", codegen.library(p[-1] for p in parts)[0])
        libs = _build(parts)
        blas = [any(gemm.blas_plan(s) for s in p[1].steps if not isinstance(s, Kernel))
                for p in parts]
        for lib, b in zip(libs, blas):
            if b and lib not in (None, False) and not gemm.set_pointers(lib):
                # Note [BLAS calls in segments]: the check failed; the feature is off now
                return compile_graphs(graphs, options=options)
        out = []
        for (graph, sched, buffers, segments, prefix, src), lib, don in zip(parts, libs, donated):
            if lib is False:            # the compiler rejected this graph's C
                out.append(_numpy(graph))
                continue
            py, fn, on_arrays = _runner(graph, sched, buffers, segments, lib, prefix,
                                        fixed_threads="cpp.threads" in (options or {}),
                                        donated=don)
            out.append(CompiledGraph(graph, sched, codegen.library([src], build.has_libmvec())[0],
                                     py, fn, run_arrays=on_arrays))
    return out


def _numpy(graph):
    """The graph as generated NumPy code (Note [Fused NumPy code], numpy_codegen.py)."""
    py, fn = numpy_codegen.generate(graph)
    output_code_log.info("Output code (NumPy):\n%s", py)
    return CompiledGraph(graph, None, "", py, fn, kind="numpy")


def _build(parts):
    """One library for all parts; if the compiler rejects it, one per graph, and a graph
    whose C fails alone runs as NumPy code (a logged error, never a failure of the
    program; if the compiler cannot build even a trivial library, it is declared broken
    once, with a warning, and every later graph goes to NumPy without trying)."""
    if not any(_in_c(p[1]) for p in parts):
        return [None] * len(parts)
    sources = [p[-1] for p in parts]
    try:
        if build.has_libmvec():
            try:
                units = codegen.library(sources, True, config.compile_threads)
                return [build.load(units, vector_math=True)] * len(parts)
            except RuntimeError as e:
                log.info("inductor: building without libmvec (%s)", str(e)[:200])
        lib = build.load(codegen.library(sources, False, config.compile_threads))
        return [lib] * len(parts)
    except (RuntimeError, OSError) as e:
        if not build.compiler_works():
            build.warn_no_compiler()
            return [False] * len(parts)
        if len(parts) == 1:
            log.error("inductor: %s; running the graph as NumPy code", e)
            return [False]
    return [_build([p])[0] for p in parts]


# Note [Compile mode and options]
# torch.compile(fn, mode=..., options={...}) configures the inductor for that compile only:
# dynamo hands the merged dict (``list_mode_options(mode)`` updated by ``options``) to
# the backend, which sets the named ``numtorch._inductor.config`` attributes while it
# schedules, generates and builds, then restores them. Keys are checked when compile()
# is called, as PyTorch does. The modes, on a CPU backend without CUDA graphs:
# "default" and "reduce-overhead" change nothing (the per-call path is already generated
# straight-line code, Note [Passing arrays to kernels]); "max-autotune" (and its
# "-no-cudagraphs" twin) sets ``max_autotune`` (config.py says what it does). Everything that
# changes the generated C or the compiler flags is in the kernel cache key through the
# source text and the flags (Note [Kernel cache], build.py). ``cpp.threads`` is read per
# call; given in ``options`` it is fixed for that compile's graphs.
_MODES = {"default": {}, "reduce-overhead": {}, "max-autotune": {"max_autotune": True},
          "max-autotune-no-cudagraphs": {"max_autotune": True}}


def list_mode_options(mode=None, dynamic=None):
    """The config options a ``torch.compile`` ``mode`` sets (PyTorch's
    ``torch._inductor.list_mode_options``); None is ``"default"``."""
    if mode is not None and mode not in _MODES:
        raise ValueError(f"compile: unknown mode {mode!r}; expected one of {list(_MODES)}")
    return dict(_MODES[mode or "default"])


def list_options():
    """The option names ``torch.compile(options=...)`` accepts ("cpp.threads" style)."""
    out = []
    for holder, prefix in ((config, ""), (config.cpp, "cpp.")):
        out += [prefix + k for k, v in vars(holder).items()
                if not k.startswith("_") and isinstance(v, (bool, int, float, str))]
    return sorted(out)


class _options:
    """Set config attributes ("cpp.threads" style keys) for the duration of a compile."""

    def __init__(self, options):
        self.options, self.saved = dict(options or {}), []

    def __enter__(self):
        for key, value in self.options.items():
            obj, attr = _option_target(key)
            self.saved.append((obj, attr, getattr(obj, attr)))
            setattr(obj, attr, value)

    def __exit__(self, *exc):
        for obj, attr, value in reversed(self.saved):
            setattr(obj, attr, value)


def _option_target(key):
    """(holder, attribute) of an option name; ValueError naming an unknown one."""
    obj, attr = config, key
    if isinstance(key, str) and "." in key:
        head, attr = key.rsplit(".", 1)
        obj = getattr(config, head, None)
    if obj is None or not isinstance(key, str) or not hasattr(obj, attr) or attr.startswith("_"):
        raise ValueError(f"compile options: unknown inductor option {key!r}; "
                         f"known options: {', '.join(list_options())}")
    return obj, attr


def check_options(options):
    """Raise ValueError for an option name the config does not have (compile() calls it)."""
    if not isinstance(options, dict):
        raise TypeError(f"compile: options must be a dict, got {type(options).__name__}")
    for key in options:
        _option_target(key)


def _contiguous(a):
    """``a`` as a C-contiguous ndarray of the same shape (np.ascontiguousarray makes 0-d 1-d)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(a.shape)


def _matmul_call(step, ins, out=None):
    """``np.matmul`` with transposes for a dot_general of two matrices contracting one
    dim each (nn.Linear's ``x @ w.T``): what ``dot_general``'s impl computes for it, with
    its general reshaping (about 1 µs a call) done here, once; ``out``: the name of the
    kept array it writes (Note [Extern outputs are kept])."""
    if step.prim.name != "dot_general" or step.params["batch"] != ((), ()):
        return None
    xc, yc = step.params["contracting"]
    x, y = (v.value._data if isinstance(v, Const) else v for v in step.ins)
    if len(x.shape) != 2 or len(y.shape) != 2 or len(xc) != 1:
        return None
    a = ins[0] if xc[0] == 1 else f"{ins[0]}.T"
    b = ins[1] if yc[0] == 0 else f"{ins[1]}.T"
    return f"_np.matmul({a}, {b}{f', out={out}' if out else ''})"


def _fault_raiser(lib):
    """The function raising eager's error for the fault the last segment call on this
    thread recorded (Note [Faults in segments], launcher.py)."""
    value = lib.nt_fault_value
    value.argtypes, value.restype = [ctypes.c_int32], ctypes.c_int64

    def fault():
        code, bad, size = value(0), value(1), value(2)
        what = {v: k for k, v in gather.FAULTS.items()}.get(code, "index")
        raise IndexError(f"{what}: index {bad} is out of bounds for dimension with size {size}")
    return fault


def _reads_objects(lib):
    """Whether the library reads arrays' data pointers and tuples' items at the layouts it
    assumes (Note [Passing arrays to kernels]; Note [Segments as data], launcher.py)."""
    probe = np.arange(3.0)
    lib.nt_probe.restype = lib.nt_probe_tuple.restype = ctypes.c_void_p
    lib.nt_probe.argtypes = lib.nt_probe_tuple.argtypes = [ctypes.py_object]
    return (lib.nt_probe(probe) == probe.ctypes.data
            and lib.nt_probe_tuple((None, probe)) == probe.ctypes.data)


def _runner(graph, sched, buffers, segments, lib, prefix="", fixed_threads=False, donated=None):
    """Generate the per-call Python function (Note [Passing arrays to kernels]);
    ``segments`` lists the buffers of each segment's entry point (codegen.generate).
    ``fixed_threads``: use today's ``config.cpp.threads`` always (Note [Compile mode and
    options]), not the value at each call. ``donated``: the graph's `Graph.donated`
    (Note [Donated inputs])."""
    cfg = types.SimpleNamespace(threads=config.cpp.threads) if fixed_threads else config.cpp
    ns = {"_empty": np.empty, "_contig": _contiguous, "_wrap": wrap, "_cfg": cfg,
          "_dummy": np.zeros(1), "_np": np, "_pending": _threads.PENDING,
          "_apply_pending": _threads.apply_pending}
    names = {}      # id(var) -> Python name of its array
    lines = []
    args = [f"a{k}" for k in range(len(graph.inputs))]
    used = {id(v) for v in buffers.order}
    for k, v in enumerate(graph.inputs):
        names[id(v)] = f"x{k}"
        lines.append(f"x{k} = a{k}._data")
        if id(v) in used:
            lines.append(f"if not x{k}.flags.c_contiguous: x{k} = _contig(x{k})")
    for j, c in enumerate(graph.consts):
        names[id(c)] = f"_c{j}"
    reads = used | {id(v) for s in sched.steps if not isinstance(s, Kernel) for v in s.ins}
    lines += numpy_codegen.const_reads(graph, ns, contiguous=True, used=reads)
    in_c = _in_c(sched)       # steps the segments run: kernels and small products
    computed = set(sched.comps) | {id(sched.steps[i].outs[0]) for i in in_c
                                   if not isinstance(sched.steps[i], Kernel)}
    escapes, kept = _escaping(graph, sched, in_c), []
    into = _kept_extern_outputs(sched, in_c, escapes)     # Note [Extern outputs are kept]
    in_place = in_place_outputs(graph, sched, donated) if lib is not None else {}
    for v in buffers.order:
        if id(v) in computed or id(v) in into:
            names[id(v)] = n = buffers.names[id(v)]
            if id(v) not in escapes:
                kept.append(v)        # Note [Kernel temporaries are kept]
                continue
            ns[f"_s{n}"], ns[f"_d{n}"] = v.shape, v.dtype
            if id(v) in in_place:     # Note [Donated inputs]: the input's own array
                x = f"x{in_place[id(v)]}"
                lines.append(f"{n} = {x} if {x}.flags.c_contiguous else _empty(_s{n}, _d{n})")
                continue
            lines.append(f"{n} = _empty(_s{n}, _d{n})")
        elif id(v) not in names:
            names[id(v)] = buffers.names[id(v)]
            lines.append(f"{buffers.names[id(v)]} = _dummy")
    direct = False
    if lib is not None and in_c:
        lines.insert(0, "if _cfg.threads != _state[0]: _state[0] = _cfg.threads; _set_threads(_cfg.threads)")
        ns["_state"], ns["_set_threads"] = [None], lib.nt_set_threads
        if (direct := _reads_objects(lib)):      # Note [Segments as data], launcher.py: (segment, tuple of arrays)
            ns["_seg"] = f = getattr(lib, f"{prefix}segment_py")
            f.argtypes = [ctypes.c_int32, ctypes.py_object]
        else:
            ns["_seg"] = f = getattr(lib, f"{prefix}segment")
            f.argtypes = [ctypes.c_int32, ctypes.c_void_p]
        # Note [Faults in segments], launcher.py: looked at where an index function runs
        faulting = any(gather.plan(s) for s in sched.steps)
        f.restype = ctypes.c_int64 if faulting else None
        ns["_fault"] = _fault_raiser(lib)
    # Note [Thread counts change on the calling thread] (_threads.py): first, on this thread
    lines.insert(0, "if _pending[0] is not None: _apply_pending()")
    seg = 0
    roots, writes = {}, []   # the chains of writes; the lines performing them
    for i, step in enumerate(sched.steps):
        if i in in_c:
            if i - 1 in in_c:
                continue          # the same entry point runs consecutive kernels
            arrays = [names[id(v)] for v in segments[seg]]
            if direct:
                call = f"_seg({seg}, ({''.join(a + ', ' for a in arrays)}))"
            else:
                ns[f"_ptrs{seg}"] = ctypes.c_void_p * max(len(arrays), 1)
                datas = ", ".join(a + ".ctypes.data" for a in arrays)
                call = f"_seg({seg}, _ptrs{seg}({datas}))"
            end = i
            while end + 1 in in_c:
                end += 1
            if any(gather.plan(sched.steps[j]) for j in range(i, end + 1)):
                call = f"if {call}: _fault()"
            lines.append(call)
            seg += 1
            continue
        ins = [names.get(id(v), repr(v)) for v in step.ins]
        ns[f"_p{i}"], ns[f"_k{i}"] = step.prim.impl, step.params
        outs = [names.setdefault(id(v), f"e{i}_{j}") for j, v in enumerate(step.outs)]
        if id(step.outs[0]) in into:
            if not any(v is step.outs[0] for v in kept):
                kept.append(step.outs[0])          # read by NumPy only: not a buffer
            lines.append(_matmul_call(step, ins, out=outs[0]))
            continue
        call = _matmul_call(step, ins) or f"_p{i}({', '.join(ins + [f'**_k{i}'])})"
        if step.prim.multiple_results:
            lines.append(f"{', '.join(outs)}, = {call}")
        else:
            lines.append(f"{outs[0]} = {call}")
        for o, v in zip(outs, step.outs):
            lines.append(f"{o} = _contig({o})" if id(v) in used else f"{o} = _np.asarray({o})")
        if step.is_effect():
            # A write (Note [Effects]): the tensor at the root of the chain of writes (an
            # input, or a captured constant) receives the value, after every kernel has
            # read the inputs' memory (Note [Writes run last], numpy_codegen.py).
            line = numpy_codegen.write_back(graph, step, outs[0], roots)
            if line:
                writes.append(line)
    arrays = None if writes else _on_arrays(graph, lines, names)   # Note [Runners on arrays]
    lines += writes
    lines.append(numpy_codegen.return_line(graph, names, ns))
    src = _function("run", "body", args, lines, [names[id(v)] for v in kept])
    twin = "" if arrays is None else \
        _function("run_arrays", "body_arrays", args, arrays, [names[id(v)] for v in kept])
    if kept:
        shapes = [(v.shape, v.dtype) for v in kept]
        ns["_lock"], ns["_kept"] = threading.Lock(), [np.empty(s, d) for s, d in shapes]
        ns["_fresh"] = lambda: [np.empty(s, d) for s, d in shapes]
    exec(compile(src + twin, f"<inductor runner {graph.name}>", "exec"), ns)
    return src, ns["run"], ns.get("run_arrays")


def _function(name, body, args, lines, kept):
    """The source of the per-call function ``name`` running ``lines``; with ``kept``
    buffers, a ``body`` taking them and ``name`` passing them (Note [Kernel temporaries are
    kept]: fresh ones for a call while another runs)."""
    a = ", ".join(args)
    if not kept:
        return f"def {name}({a}):\n" + "\n".join("    " + line for line in lines) + "\n"
    params = ", ".join(args + kept)
    return (f"def {body}({params}):\n" + "\n".join("    " + line for line in lines) + "\n"
            + f"def {name}({a}):\n"
            + f"    if not _lock.acquire(False):\n        return {body}({a}{', ' if a else ''}*_fresh())\n"
            + f"    try:\n        return {body}({a}{', ' if a else ''}*_kept)\n"
            + "    finally:\n        _lock.release()\n")


# Note [Runners on arrays]
# AOT autograd calls a compiled forward and backward on arrays (the `aot_call` primitive's
# impl and VJP, numtorch/_aot/function.py), while the per-call function takes tensors and
# returns tensors: each call wrapped every input in a Tensor for the runner to unwrap, and
# unwrapped every output the runner had wrapped (the MLP step: 44 wraps and as many
# unwraps per step, ~10% of its Python time). A pure graph's runner therefore also has
# ``run_arrays``, the same lines reading its inputs as arrays and returning arrays
# (`CompiledGraph.run_arrays`, None for a graph with writes, which need the tensors).
# ``python_code`` shows the tensor function; the twin differs only in those lines.
def _on_arrays(graph, lines, names):
    """``lines`` (before the return) for arrays in and out, or None when an output is
    not an array (a Python value)."""
    ret = numpy_codegen.return_line(graph, names, None, arrays=True)
    if ret is None:
        return None
    reads = {f"x{k} = a{k}._data": f"x{k} = a{k}" for k in range(len(graph.inputs))}
    return [reads.get(line, line) for line in lines] + [ret]


# Note [Kernel temporaries are kept]
# A buffer that kernels write and no output can share memory with is allocated once, when
# the graph is compiled, and reused by every call, as the NumPy code does (Note [Fused
# NumPy code]): a fresh large array costs page faults on its first write each call, and
# whether glibc returns freed memory to the system (and faults it in again) depended on
# unrelated allocations (the compiled MAML step: 7.6 ms of CPU per call, or 10.6 ms when
# the heap top was trimmed, against 4.3 ms with kept buffers). Outputs, and buffers an
# extern's result may view (an extern's output is assumed to alias its inputs), are fresh
# per call. A call while another is running (a thread, re-entry) gets fresh buffers (a
# non-blocking lock decides).
# Note [Extern outputs are kept]
# A NumPy extern returns a fresh array per call: the MLP step's (128, 512) float32 matmul
# result is 256 KB, above glibc's mmap threshold, so every call mapped it, faulted its 64
# pages in and unmapped it. A two-matrix product (the ``_matmul_call`` form) whose result
# no output can share memory with (``_escaping``) instead writes a kept array,
# ``np.matmul(a, b, out=kept)``: the same BLAS call, so the same bits. Like kernel
# temporaries (Note [Kernel temporaries are kept]) each such value has its own array for
# the compiled graph's lifetime (no two values share one: a graph holds few of them), a
# re-entrant call gets fresh ones, and outputs handed back stay fresh per call.
#
# Note [No allocator settings]
# glibc's heap trimming used to decide the compiled MAML step's speed (7.7-8.2 ms of CPU,
# 4.1-4.4 ms with MALLOC_TRIM_THRESHOLD_/MALLOC_MMAP_THRESHOLD_ raised), so whether
# numtorch should call mallopt was measured again once products ran in C (Note [Small
# products in C], gemm.py) and extern temporaries were kept: MAML 3.43/3.24 ms CPU with
# the defaults against 3.37/3.20 ms with both thresholds at 1 GB (two runs each, load
# 10-11), and the MLP step 6.1 against 6.3 ms (OpenBLAS on one thread). No measurable
# gain is left, so numtorch sets no process-wide allocator option: it would change every
# other library's allocations in the user's process too.
def _kept_extern_outputs(sched, in_c, escapes):
    """ids of the NumPy externs' results written into kept arrays (Note [Extern outputs
    are kept]): two-matrix products of one dtype whose result no output shares."""
    out = set()
    for i, step in enumerate(sched.steps):
        if i in in_c or step.is_effect() or _matmul_call(step, ["a", "b"]) is None:
            continue
        v = step.outs[0]
        if id(v) not in escapes and len({np.dtype(dtype_of(u)) for u in (*step.ins, v)}) == 1:
            out.add(id(v))
    return out


# Note [Donated inputs]
# A compiled optimizer step (numtorch/_aot/optimizer.py, Note [Writes leave the step
# graph]) returns the new value of each parameter it updates, and the caller copied it into
# the parameter: one more pass over every parameter and a fresh array per call (the SGD
# step over the MLP: 535K floats, ~0.1 ms of a 4.5 ms training step at one thread).
# `Graph.donated` says which outputs may live in an input's memory (the input's old value
# is dead after the call), and the runner then hands the kernel the input's own array as
# that output's buffer, as PyTorch's inductor writes a mutated input in place. It does so
# only where the result is the same as computing into fresh memory whatever order the
# kernels' loops take: every step of the schedule is a kernel (no extern or product reads
# the input after a kernel wrote it), and every value computed from the input, directly or
# through others, is pointwise on the input's shape and reaches no graph output but the
# donated one. Then each element of the input is read only to compute the same element of
# the output, before that element is stored, so writing in place cannot change a value
# read later (SGD's `p + g * -lr`; not SGD with weight decay and momentum, whose momentum
# buffer reads `p` too, nor a step reading a norm of the parameter). The kernels declare
# their buffers `restrict`; two names for one array read and written element by element at
# the same index give the same code either way (each store depends on its own loads).
# A non-contiguous input is made contiguous first (a copy), and the caller finds an output
# that is not the input's array and copies it as before; the inputs are assumed not to
# overlap each other in memory (the optimizer's are distinct tensors: parameters, their
# own `.grad`s, state). The NumPy fallback and other backends ignore `donated`.
def in_place_outputs(graph, sched, donated):
    """{id(output var): input position} of the donated outputs (`Graph.donated`) the
    kernels may compute in their input's memory (Note [Donated inputs])."""
    if not donated or not sched.steps or not all(isinstance(s, Kernel) for s in sched.steps):
        return {}
    readers = {}
    for n in graph.nodes:
        for v in n.ins:
            readers.setdefault(id(v), []).append(n)
    positions = {}
    for j, o in enumerate(graph.outputs):
        positions.setdefault(id(o), []).append(j)
    inputs = {id(v) for v in graph.inputs}
    out = {}
    for j, i in donated.items():
        x, o = graph.inputs[i], graph.outputs[j]
        if not isinstance(o, Var) or id(o) in inputs or id(o) in out or len(positions[id(o)]) > 1 \
                or o.shape != x.shape or o.dtype != x.dtype or i in out.values():
            continue
        if _private_to(x, o, readers, positions):
            out[id(o)] = i
    return out


def _private_to(x, o, readers, positions):
    """Whether every value computed from ``x`` is pointwise on its shape and reaches no
    graph output other than ``o`` (Note [Donated inputs])."""
    todo, seen = [x], set()
    while todo:
        for n in readers.get(id(todo.pop()), ()):
            if id(n) in seen:
                continue
            seen.add(id(n))
            rule = getattr(n.prim, "lower", None)
            if getattr(rule, "kind", None) != "pointwise" or len(n.outs) != 1 \
                    or n.outs[0].shape != x.shape:
                return False
            w = n.outs[0]
            if id(w) in positions and w is not o:
                return False
            todo.append(w)
    return True


def _in_c(sched):
    """Positions in ``sched.steps`` of what the library runs: the kernels, and the products
    and index externs codegen.generate put in its segments (Note [Small products in C],
    gemm.py; Note [BLAS calls in segments], gemm.py; Note [Index externs in C],
    gather.py; Note [Scans in C], scan.py)."""
    return {i for i, s in enumerate(sched.steps) if isinstance(s, Kernel) or gemm.in_segment(s)}


def _escaping(graph, sched, in_c):
    """ids of the values whose memory a graph output may share (Note [Kernel temporaries
    are kept]): the outputs, and through NumPy externs (backwards) their inputs."""
    escapes = {id(o) for o in graph.outputs if isinstance(o, Var)}
    for i in reversed(range(len(sched.steps))):
        step = sched.steps[i]
        if i not in in_c and any(id(v) in escapes for v in step.outs):
            escapes.update(id(v) for v in step.ins)
    return escapes
