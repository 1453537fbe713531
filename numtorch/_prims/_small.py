"""Small-tensor C kernels: eager ops whose NumPy spelling is several calls, as one call each.

- ``softmax(a, dim)``, ``log_softmax(a, dim)``: over the last dim of a C-contiguous
  float32/float64 array (Note [Eager softmax], _ops/reduce.py).
- ``sigmoid(a)``: ``1 / (1 + exp(-a))`` of a C-contiguous float32/float64 array (the
  sigmoid primitive's impl, elementwise.py).
- ``amax(a)``, ``amin(a)``: the maximum / minimum of all of a C-contiguous array of a real
  dtype, as a 0-d array (``x.max()``, ``x.min()``: Note [Eager fast path]).
- ``cat(arrays, dim, stack)``: ``np.concatenate`` of a list of C-contiguous arrays of one
  dtype (with ``stack`` true, ``torch.stack``'s: each array given a new dim of size 1 at
  ``dim``; Note [Eager cat and stack], _ops/_eager_shape.py).

Each returns a fresh array holding NumPy's bits for that computation (Note [Small-tensor
kernels]), or None, having computed nothing, for an operand it does not take or where no C
compiler works: the caller then computes with NumPy. Callers call them as attributes of this
module (``_small.softmax(d, dim)``): the first call loads the kernels and rebinds the names
(``_install``). This module knows nothing of Tensors or autograd.
"""
from __future__ import annotations

import ctypes
import logging
import os
import sys
import sysconfig

import numpy as np

log = logging.getLogger("numtorch._inductor")

# Note [Small-tensor kernels]
# On a 10-element tensor the cost of an eager op is its Python layers plus one NumPy call
# per step, ~0.35-1 us each: softmax's five calls (max, sub, exp, sum, div) made
# x.softmax(-1) 5-6 us against PyTorch's 1.3 us, sigmoid's four (neg, exp, add, div)
# 3 us against 1.2 us, and x.max()'s one reduction alone ~1.1 us. These kernels do each
# op in one call of a CPython function (METH_FASTCALL: checks, allocation and all, a
# kernel call on 10 elements costs ~150 ns, where a bare ctypes call with three integer
# arguments costs ~400 ns and `_onepass.relu`'s, with its address conversions, ~1.9 us).
# Measured at 10 float32 elements, CPU time, minimum of 15 x 20,000 calls, the kernel
# calls against the NumPy expressions: softmax 199 ns vs 4,118 ns, sigmoid 161 vs 1,953,
# max 142 vs 1,100 (np.empty alone is 214); np.concatenate of two arrays ~700 ns.
# Bits. The result must equal the NumPy path's bit for bit, so eager results do not depend
# on whether a compiler was found or on the size. The kernels call NumPy's own inner
# loops for the steps whose rounding is NumPy's choice: exp (NumPy's SIMD exp on AVX2 /
# AVX512F machines, not libm's, which differs in the last bit), the sum (np.add.reduce's
# pairwise summation: the add loop called in its reduce form, accumulator 0, step 0) and
# maximum / minimum in reduce form (NaN propagation and which of -0.0 / 0.0 a tie keeps
# are that loop's), each taken from the ufunc's loop table (`PyUFuncObject.functions`)
# for the dtype and called as NumPy's reduction machinery calls it: a reduction without
# an identity (maximum) starts from the first element and reduces the rest; one with an
# identity (add) starts from it. The other steps (negation, x - max, 1 + t, 1 / t,
# e / sum) are single IEEE operations, correctly rounded in C as in NumPy (the build
# forbids contraction into fma), with the operands in NumPy's order, so even NaN
# payloads agree. tests/test_small_kernels.py compares every kernel with the NumPy
# expression, bit for bit, over thousands of shapes, sizes and special values.
# Differences from the NumPy path: no RuntimeWarning (softmax of inf computes inf - inf,
# which NumPy's subtract reported as "invalid value"; PyTorch warns about nothing), and
# large operands compute with the GIL released, as NumPy's loops do.
# Sizes. The kernels are no slower than NumPy at any size they take (same loops, fewer
# passes over memory), so they take every size, except cat above 1 MiB of output, where
# NumPy's copy is as fast. Measured as above (min of 5, float32 unless said, load ~8):
# softmax(-1) on (1000, 1000) 1.31 -> 1.03 ms (float64 2.83 -> 1.91), on (100000, 2)
# 5.8 -> 2.5 ms (softmax takes rows in blocks of ~4K elements: one exp call per block),
# on (10, 100000) equal; sigmoid on 1000x1000 0.87 -> 0.65 ms; max equal from 1M
# elements; stack of two (1280, 100) 32 -> 30 us, cat of them along dim 1 42 -> 29 us.
# Build. The source includes Python.h and NumPy's headers; the compile backend's build
# cache (numtorch/_inductor/build.py, `include`) builds it once per machine, keyed also by
# the Python and NumPy versions written into the source. The library is no extension
# module: one exported function, `nt_small_kernels`, called once through ctypes with the
# GIL held, returns a dict of builtin functions, which Python then calls directly; they
# are used once they reproduce the NumPy expressions on a probe (`_agrees`: all of NumPy's
# tail lengths and the special values, ~0.3 ms once per process). Where no compiler works,
# the build fails, NumPy has not the loops or the probe disagrees, every function here
# returns None (logged once), and the NumPy path computes.

_SOURCE = r"""
/* built for Python %(python)s and NumPy %(numpy)s (Note [Small-tensor kernels]) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct { PyUFuncGenericFunction fn; void *data; } nt_loop;
#define NT_NTYPES (NPY_HALF + 1)
static nt_loop nt_exp[NT_NTYPES], nt_log[NT_NTYPES], nt_add[NT_NTYPES], nt_max[NT_NTYPES],
    nt_min[NT_NTYPES];
#define NT_GIL_FREE 16384   /* elements from which a kernel releases the GIL */
#define NT_BLOCK 4096       /* elements of the blocks of rows softmax computes in */
#define NT_ROWS 512         /* rows whose log_softmax keeps its per-row values on the stack */
#define NT_CAT_MAX (1 << 20) /* bytes of output up to which cat copies (Note [Small-tensor kernels]) */
#define NT_COMPUTE(n, stmt) do {                                                          \
    PyThreadState *_ts = (n) >= NT_GIL_FREE ? PyEval_SaveThread() : NULL;                \
    stmt;                                                                                 \
    if (_ts) PyEval_RestoreThread(_ts);                                                   \
} while (0)

/* the loops of ufunc `name` whose operands all have one dtype, by type number */
static int nt_loops(PyObject *np, const char *name, nt_loop *table) {
    PyObject *u = PyObject_GetAttrString(np, name);
    if (!u) return -1;
    if (!PyObject_TypeCheck(u, &PyUFunc_Type)) {
        Py_DECREF(u);
        PyErr_Format(PyExc_TypeError, "numpy.%%s is no ufunc", name);
        return -1;
    }
    PyUFuncObject *f = (PyUFuncObject *)u;
    for (int i = 0; i < f->ntypes; i++) {
        int t = f->types[i * f->nargs], same = 1;
        for (int k = 1; k < f->nargs; k++) same &= f->types[i * f->nargs + k] == t;
        if (same && t >= 0 && t < NT_NTYPES && !table[t].fn) {
            table[t].fn = f->functions[i];
            table[t].data = f->data[i];
        }
    }
    Py_DECREF(u);
    return 0;
}

/* a NumPy array (not a subclass) that C code may read as a dense native buffer */
static PyArrayObject *nt_dense(PyObject *o) {
    if (!PyArray_CheckExact(o)) return NULL;
    PyArrayObject *a = (PyArrayObject *)o;
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISBEHAVED_RO(a)) return NULL;
    return a;
}

/* one NumPy reduce call: *acc = op(*acc, x[0..n)) in the loop's own order */
static void nt_reduce(const nt_loop *l, char *acc, const char *x, npy_intp n, npy_intp size) {
    char *args[3] = {acc, (char *)x, acc};
    npy_intp steps[3] = {0, size, 0};
    if (n > 0) l->fn(args, &n, steps, l->data);
}

/* one NumPy unary call: out[i] = op(in[i]) (in == out allowed: NumPy treats exact overlap
   as none) */
static void nt_unary(const nt_loop *l, char *in, char *out, npy_intp n, npy_intp size) {
    char *args[2] = {in, out};
    npy_intp steps[2] = {size, size};
    if (n > 0) l->fn(args, &n, steps, l->data);
}

/* one NumPy binary call: out[i] = op(a[i], b[i]) (out == a allowed, as above) */
static void nt_binary(const nt_loop *l, char *a, char *b, char *out, npy_intp n, npy_intp size) {
    char *args[3] = {a, b, out};
    npy_intp steps[3] = {size, size, size};
    if (n > 0) l->fn(args, &n, steps, l->data);
}

#define NT_FLOAT_KERNELS(T, S, NPT)                                                      \
static void nt_softmax_##S(T *out, const T *x, npy_intp rows, npy_intp n) {             \
    /* rows in blocks of ~4K elements: one exp call per block, the block still in cache */ \
    npy_intp per = n < NT_BLOCK ? NT_BLOCK / n : 1;                                     \
    for (npy_intp r0 = 0; r0 < rows; r0 += per) {                                       \
        npy_intp r1 = r0 + per < rows ? r0 + per : rows;                                \
        for (npy_intp r = r0; r < r1; r++) {                                            \
            const T *xr = x + r * n;                                                    \
            T *o = out + r * n, m = xr[0];   /* maximum: no identity, first element */   \
            nt_reduce(&nt_max[NPT], (char *)&m, (const char *)(xr + 1), n - 1, sizeof(T)); \
            for (npy_intp i = 0; i < n; i++) o[i] = xr[i] - m;                          \
        }                                                                               \
        nt_unary(&nt_exp[NPT], (char *)(out + r0 * n), (char *)(out + r0 * n),          \
                 (r1 - r0) * n, sizeof(T));                                             \
        for (npy_intp r = r0; r < r1; r++) {                                            \
            T *o = out + r * n, s = 0;       /* add: from its identity */                \
            nt_reduce(&nt_add[NPT], (char *)&s, (const char *)o, n, sizeof(T));         \
            for (npy_intp i = 0; i < n; i++) o[i] = o[i] / s;                           \
        }                                                                               \
    }                                                                                   \
}                                                                                       \
/* log_softmax as logsumexp composes it: m = max, m' = isinf(m) ? 0 : m (its `where`),   \
   lse = log(sum(exp(x - m'))) + m', out = x - lse; shift and lse hold one value per row: \
   log and the add run once over all rows, as NumPy's calls on the (rows, 1) arrays do   \
   (which NaN a sum of two NaNs keeps depends on the element's place in the add loop's    \
   call: its vector loop, its tail or its scalar loop for short calls) */               \
static void nt_log_softmax_##S(T *out, const T *x, npy_intp rows, npy_intp n, T *shift, \
                               T *lse) {                                                \
    npy_intp per = n < NT_BLOCK ? NT_BLOCK / n : 1;                                     \
    for (npy_intp r0 = 0; r0 < rows; r0 += per) {                                       \
        npy_intp r1 = r0 + per < rows ? r0 + per : rows;                                \
        for (npy_intp r = r0; r < r1; r++) {                                            \
            const T *xr = x + r * n;                                                    \
            T *o = out + r * n, m = xr[0];                                              \
            nt_reduce(&nt_max[NPT], (char *)&m, (const char *)(xr + 1), n - 1, sizeof(T)); \
            shift[r] = m = isinf(m) ? (T)0 : m;                                         \
            for (npy_intp i = 0; i < n; i++) o[i] = xr[i] - m;                          \
        }                                                                               \
        nt_unary(&nt_exp[NPT], (char *)(out + r0 * n), (char *)(out + r0 * n),          \
                 (r1 - r0) * n, sizeof(T));                                             \
        for (npy_intp r = r0; r < r1; r++) {                                            \
            lse[r] = 0;                                                                 \
            nt_reduce(&nt_add[NPT], (char *)&lse[r], (const char *)(out + r * n), n, sizeof(T)); \
        }                                                                               \
    }                                                                                   \
    nt_unary(&nt_log[NPT], (char *)lse, (char *)lse, rows, sizeof(T));                 \
    nt_binary(&nt_add[NPT], (char *)lse, (char *)shift, (char *)lse, rows, sizeof(T));  \
    for (npy_intp r = 0; r < rows; r++) {                                               \
        const T *xr = x + r * n;                                                        \
        T *o = out + r * n, l = lse[r];                                                 \
        for (npy_intp i = 0; i < n; i++) o[i] = xr[i] - l;                              \
    }                                                                                   \
}                                                                                       \
static void nt_sigmoid_##S(T *out, const T *x, npy_intp n) {                            \
    for (npy_intp i = 0; i < n; i++) out[i] = -x[i];                                    \
    nt_unary(&nt_exp[NPT], (char *)out, (char *)out, n, sizeof(T));                     \
    for (npy_intp i = 0; i < n; i++) out[i] = (T)1 / ((T)1 + out[i]);                   \
}
NT_FLOAT_KERNELS(float, f32, NPY_FLOAT)
NT_FLOAT_KERNELS(double, f64, NPY_DOUBLE)

static int nt_float(PyArrayObject *a) {
    int t = PyArray_TYPE(a);
    return t == NPY_FLOAT || t == NPY_DOUBLE;
}

/* softmax(a, dim) and log_softmax(a, dim): over the last dim of a non-empty C-contiguous
   float32/64 array */
static PyObject *nt_softmaxes(PyObject *const *args, Py_ssize_t nargs, int log) {
    PyArrayObject *a = nargs == 2 ? nt_dense(args[0]) : NULL;
    if (!a || !nt_float(a) || !PyLong_CheckExact(args[1])) Py_RETURN_NONE;
    int nd = PyArray_NDIM(a);
    long dim = PyLong_AsLong(args[1]);
    if (dim == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    npy_intp size = PyArray_SIZE(a);
    if (nd < 1 || (dim != -1 && dim != nd - 1) || size == 0) Py_RETURN_NONE;
    PyObject *r = PyArray_SimpleNew(nd, PyArray_DIMS(a), PyArray_TYPE(a));
    if (!r) return NULL;
    void *out = PyArray_DATA((PyArrayObject *)r), *x = PyArray_DATA(a);
    npy_intp n = PyArray_DIM(a, nd - 1);
    int f32 = PyArray_TYPE(a) == NPY_FLOAT;
    if (log) {   /* two values per row: on the stack for up to NT_ROWS rows */
        npy_intp rows = size / n;
        double small[2 * NT_ROWS], *buf = rows <= NT_ROWS ? small : malloc(rows * 16);
        if (!buf) { Py_DECREF(r); return PyErr_NoMemory(); }
        char *shift = (char *)buf, *lse = shift + rows * PyArray_ITEMSIZE(a);
        NT_COMPUTE(size, if (f32) nt_log_softmax_f32(out, x, rows, n, (float *)shift, (float *)lse);
                         else nt_log_softmax_f64(out, x, rows, n, (double *)shift, (double *)lse));
        if (buf != small) free(buf);
    } else
        NT_COMPUTE(size, if (f32) nt_softmax_f32(out, x, size / n, n);
                         else nt_softmax_f64(out, x, size / n, n));
    return r;
}

static PyObject *nt_softmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return nt_softmaxes(args, nargs, 0);
}

static PyObject *nt_log_softmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return nt_softmaxes(args, nargs, 1);
}

/* sigmoid(a): 1 / (1 + exp(-a)) of a non-empty C-contiguous float32/64 array */
static PyObject *nt_sigmoid(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyArrayObject *a = nargs == 1 ? nt_dense(args[0]) : NULL;
    if (!a || !nt_float(a) || PyArray_SIZE(a) == 0) Py_RETURN_NONE;
    npy_intp n = PyArray_SIZE(a);
    PyObject *r = PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), PyArray_TYPE(a));
    if (!r) return NULL;
    void *out = PyArray_DATA((PyArrayObject *)r), *x = PyArray_DATA(a);
    int f32 = PyArray_TYPE(a) == NPY_FLOAT;
    NT_COMPUTE(n, if (f32) nt_sigmoid_f32(out, x, n); else nt_sigmoid_f64(out, x, n));
    return r;
}

/* the reduction of all of a non-empty C-contiguous array of a real dtype, as a 0-d array:
   the first element, then the loop over the rest, as NumPy reduces without an identity */
static PyObject *nt_extremum(PyObject *const *args, Py_ssize_t nargs, const nt_loop *table) {
    PyArrayObject *a = nargs == 1 ? nt_dense(args[0]) : NULL;
    if (!a) Py_RETURN_NONE;
    int t = PyArray_TYPE(a);
    npy_intp n = PyArray_SIZE(a), size = PyArray_ITEMSIZE(a);
    if (n == 0 || t < 0 || t >= NT_NTYPES || !PyTypeNum_ISNUMBER(t) || PyTypeNum_ISCOMPLEX(t) ||
            t == NPY_LONGDOUBLE || !table[t].fn)   /* (long double: padding bytes) */
        Py_RETURN_NONE;
    PyObject *r = PyArray_SimpleNew(0, NULL, t);
    if (!r) return NULL;
    char *acc = PyArray_DATA((PyArrayObject *)r), *x = PyArray_DATA(a);
    memcpy(acc, x, size);
    NT_COMPUTE(n, nt_reduce(&table[t], acc, x + size, n - 1, size));
    return r;
}

static PyObject *nt_amax(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return nt_extremum(args, nargs, nt_max);
}

static PyObject *nt_amin(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return nt_extremum(args, nargs, nt_min);
}

/* cat(arrays, dim, stack): np.concatenate along dim of C-contiguous arrays of one builtin
   dtype, equal off dim (stack: all of one shape, each with a new dim of size 1 at dim);
   None for 1-D empty pieces (cat skips them: the general path), errors, others */
static PyObject *nt_cat(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyLong_CheckExact(args[1])) Py_RETURN_NONE;
    PyObject *list = args[0];
    Py_ssize_t k = PyList_GET_SIZE(list);
    int stack = PyObject_IsTrue(args[2]);
    long dim = PyLong_AsLong(args[1]);
    if ((dim == -1 && PyErr_Occurred()) || stack < 0) { PyErr_Clear(); Py_RETURN_NONE; }
    if (k == 0) Py_RETURN_NONE;
    PyArrayObject *first = nt_dense(PyList_GET_ITEM(list, 0));
    if (!first) Py_RETURN_NONE;
    PyArray_Descr *dt = PyArray_DESCR(first);
    int t = dt->type_num, nd = PyArray_NDIM(first), ond = nd + stack;
    if (!PyArray_ISNBO(dt->byteorder) || t < 0 || !PyTypeNum_ISNUMBER(t) ||
            nd > NPY_MAXDIMS - 1 || ond == 0)
        Py_RETURN_NONE;
    if (dim < 0) dim += ond;
    if (dim < 0 || dim >= ond) Py_RETURN_NONE;
    npy_intp *shape = PyArray_DIMS(first), odims[NPY_MAXDIMS], along = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyArrayObject *a = nt_dense(PyList_GET_ITEM(list, j));
        if (!a || PyArray_DESCR(a) != dt || PyArray_NDIM(a) != nd) Py_RETURN_NONE;
        npy_intp *s = PyArray_DIMS(a);
        for (int i = 0; i < nd; i++)
            if (s[i] != shape[i] && (stack || i != dim)) Py_RETURN_NONE;
        if (!stack && nd == 1 && s[0] == 0) Py_RETURN_NONE;
        along += stack ? 1 : s[dim];
    }
    npy_intp outer = 1, inner = PyArray_ITEMSIZE(first);
    for (int i = 0, j = 0; i < ond; i++) {
        if (i == dim) { odims[i] = along; if (stack) continue; j++; continue; }
        odims[i] = shape[j++];
        if (i < dim) outer *= odims[i]; else inner *= odims[i];
    }
    if (outer * inner * along > NT_CAT_MAX) Py_RETURN_NONE;   /* large: NumPy's copy */
    PyObject *r = PyArray_SimpleNew(ond, odims, t);
    if (!r) return NULL;
    char *out = PyArray_DATA((PyArrayObject *)r);
    for (npy_intp o = 0; o < outer; o++)
        for (Py_ssize_t j = 0; j < k; j++) {
            PyArrayObject *a = (PyArrayObject *)PyList_GET_ITEM(list, j);
            npy_intp block = inner * (stack ? 1 : PyArray_DIM(a, dim));
            memcpy(out, (char *)PyArray_DATA(a) + o * block, block);
            out += block;
        }
    return r;
}

static PyMethodDef nt_methods[] = {
    {"softmax", (PyCFunction)(void (*)(void))nt_softmax, METH_FASTCALL, NULL},
    {"log_softmax", (PyCFunction)(void (*)(void))nt_log_softmax, METH_FASTCALL, NULL},
    {"sigmoid", (PyCFunction)(void (*)(void))nt_sigmoid, METH_FASTCALL, NULL},
    {"amax", (PyCFunction)(void (*)(void))nt_amax, METH_FASTCALL, NULL},
    {"amin", (PyCFunction)(void (*)(void))nt_amin, METH_FASTCALL, NULL},
    {"cat", (PyCFunction)(void (*)(void))nt_cat, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

/* the kernels as a dict of builtin functions (called once, with the GIL, through ctypes) */
PyObject *nt_small_kernels(void) {
    if (PyArray_ImportNumPyAPI() < 0 || PyUFunc_ImportUFuncAPI() < 0) return NULL;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) return NULL;
    int bad = nt_loops(np, "exp", nt_exp) || nt_loops(np, "log", nt_log) ||
              nt_loops(np, "add", nt_add) || nt_loops(np, "maximum", nt_max) ||
              nt_loops(np, "minimum", nt_min);
    Py_DECREF(np);
    if (bad) return NULL;
    int need[] = {NPY_FLOAT, NPY_DOUBLE};
    for (int i = 0; i < 2; i++)
        if (!nt_exp[need[i]].fn || !nt_log[need[i]].fn || !nt_add[need[i]].fn ||
                !nt_max[need[i]].fn || !nt_min[need[i]].fn) {
            PyErr_SetString(PyExc_RuntimeError, "NumPy has no float32/float64 exp, log, add, maximum or minimum loop");
            return NULL;
        }
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (PyMethodDef *m = nt_methods; m->ml_name; m++) {
        PyObject *f = PyCFunction_New(m, NULL);
        if (!f || PyDict_SetItemString(d, m->ml_name, f) < 0) { Py_XDECREF(f); Py_DECREF(d); return NULL; }
        Py_DECREF(f);
    }
    return d;
}
""" % {"python": sys.version.split()[0], "numpy": np.__version__}

_NAMES = ("softmax", "log_softmax", "sigmoid", "amax", "amin", "cat")


def _none(*args):
    return None


def _load():
    """The kernels' dict, or None (logged) where they cannot be built or loaded."""
    from .._inductor import build
    include = (sysconfig.get_paths()["include"], np.get_include())
    if not (os.path.exists(os.path.join(include[0], "Python.h")) and
            os.path.exists(os.path.join(include[1], "numpy", "ufuncobject.h"))):
        # (a Python without its headers: no build to try, and fail, in every process)
        log.info("eager small-tensor kernels: no Python or NumPy headers; using NumPy")
        return None
    lib = build.load_or_none(_SOURCE, "eager small-tensor kernels (softmax, sigmoid, max, cat)",
                             include)
    if lib is None:
        return None
    try:
        fns = ctypes.PYFUNCTYPE(ctypes.py_object)(("nt_small_kernels", lib))()
    except Exception as e:   # NumPy's API or loops not as built for: compute with NumPy
        log.warning("eager small-tensor kernels: not loaded (%s); using NumPy", str(e)[:200])
        return None
    if not _agrees(fns):
        log.warning("eager small-tensor kernels: NumPy %s computes other bits; using NumPy",
                    np.__version__)
        return None
    return fns


def _agrees(fns):
    """Whether the kernels reproduce the NumPy expressions on a probe of both dtypes, all
    tail lengths of NumPy's loops and the special values (a check once per process, ~1 ms,
    against a NumPy whose loop table no longer holds the loops its calls run)."""
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 1e30, -1e30, 88.7, -88.7, 710.0]
    probe = np.concatenate([np.linspace(-100, 100, 389), special, np.linspace(-1, 1, 200)])
    with np.errstate(all="ignore"):
        for dt in (np.float32, np.float64):
            a = probe.astype(dt)
            rows = np.concatenate([a[:600]] * 8).reshape(320, 15)   # two blocks of rows
            m = np.maximum.reduce(rows, axis=-1, keepdims=True)
            e = np.exp(rows - m)
            expected = [(fns["softmax"](rows, -1), e / np.add.reduce(e, axis=-1, keepdims=True)),
                        (fns["softmax"](a[:-1], 0), _softmax_1d(a[:-1])),
                        (fns["log_softmax"](rows, -1), _log_softmax_numpy(rows)),
                        (fns["log_softmax"](a, 0), _log_softmax_numpy(a)),
                        (fns["sigmoid"](a), 1 / (1 + np.exp(-a))),
                        (fns["amax"](a), np.maximum.reduce(a, axis=None)),
                        (fns["amin"](a[::-1].copy()), np.minimum.reduce(a[::-1], axis=None))]
            for got, ref in expected:
                if got is None or got.tobytes() != np.asarray(ref).tobytes():
                    return False
    return True


def _softmax_1d(a):
    e = np.exp(a - np.maximum.reduce(a))
    return e / np.add.reduce(e)


def _log_softmax_numpy(a):
    """log_softmax over the last dim as the general path composes it (Note [Eager softmax])."""
    m = np.maximum.reduce(a, axis=-1, keepdims=True)
    m = np.where(np.isinf(m), a.dtype.type(0), m)
    return a - (np.log(np.add.reduce(np.exp(a - m), axis=-1, keepdims=True)) + m)



def _install():
    """Bind this module's kernel names to the kernels, or to a function returning None."""
    fns = _load()
    g = globals()
    for name in _NAMES:
        g[name] = fns[name] if fns else _none
    _state[:] = [fns is not None]


def _stub(name):
    def first_call(*args):
        _install()
        return globals()[name](*args)
    first_call.__name__ = name
    return first_call


def _reset():
    """Unbind the kernels: the next call loads them again (for tests of the fallback)."""
    g = globals()
    for name in _NAMES:
        g[name] = _stub(name)
    _state[:] = []


def available() -> bool:
    """Whether the kernels run here (loads them on first call)."""
    if not _state:
        _install()
    return _state[0]


_state: list = []     # [True] once loaded, [False] once loading failed, [] before
softmax = log_softmax = sigmoid = amax = amin = cat = None   # bound by _reset, then by _install
_reset()
