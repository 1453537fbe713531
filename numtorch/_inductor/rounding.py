"""Exact float operations written so that kernel loops vectorise: floor, ceil, trunc and
round (Note [Rounding that vectorises]) and the remainder's fast form with its domain
check (Note [Remainder in float arithmetic]). codegen.py puts the C in the prelude and
emits a checked form's two loops (``Emitter._checked_rows``); this module writes no loop.
"""
from __future__ import annotations

# Note [Rounding that vectorises]
# ``floor(x)`` in a kernel (<tgmath.h>'s floorf) compiles to one vrndscaless per element
# and never to the vector form: GCC vectorises floor, ceil, trunc and nearbyint only under
# -fno-trapping-math, which the kernels do not use (Note [Exact math in kernels],
# codegen.py). The float32 floor of 1024x1024 took 0.30 ms of one thread against 0.20 for
# torch.compile. The prelude's nt_floor, nt_ceil, nt_trunc and nt_round are instead
# written with operations that vectorise: for |x| < C (2^23 for float32, 2^52 for
# float64), (|x| + C) - C is |x| rounded to an integer (the sum lies in [C, 2C), where the
# spacing is 1, so the addition rounds |x| to nearest, ties to even, and the subtraction
# is exact); copysign puts x's sign back (so rint(-0.3) is -0.0, as np.rint gives). floor
# subtracts one where that is above x, ceil adds one where it is below; trunc floors |x|;
# a zero result takes x's sign (floor(-0.0) is -0.0, ceil(-0.5) is -0.0), and every other
# result already has it. From C on, every float is an integer and the result is x + 0
# (x itself; a signalling NaN comes out quiet, as from the rounding instructions). The
# arithmetic rounds in the current rounding mode, nearest, which numtorch never changes
# (nearbyint also follows it; floor, ceil and trunc do not). Checked against libm's
# floorf, ceilf, truncf and nearbyintf on all 2^32 float32 bit patterns (C loop,
# vectorised, NaNs compared as bits: 0 differences), and against NumPy on float64 edges
# and draws (tests/inductor/test_rounding.py). Float32 floor of 1024x1024, one thread's
# CPU time, minimum of 30 interleaved calls: 0.35 ms with floorf, 0.26 ms now
# (torch.compile 0.27-0.46 ms in the same runs; the contiguous x + y is 0.27 ms).
#
# Note [Remainder in float arithmetic]
# NumPy's remainder (Python's: the result takes the divisor's sign) is fmod, then
# ``mod += b`` where mod and b differ in sign, and copysign(0, b) for a zero mod. The
# kernels computed fmod in double through libm (nt_rem: exact, and exact for float32
# because fmod is exact and double rounding of a sum of two floats is innocuous, 53 >=
# 2*24 + 2), one call per element: 18x torch.compile's time on 1024x1024 float32.
# (torch.compile's own kernel computes a - b * floor(a / b), which differs from eager in
# 40% of the elements there; this one must not.) The fast form nt_rem_fast:
#   t = trunc(fl(a / b)), r = fma(-t, b, a), then NumPy's adjustment of r.
# Where |fl(a / b)| < B (2^22 for float32, 2^50 for float64) and b is finite, this is
# exact: the exact quotient's integer part q is representable, and rounding is monotonic,
# so |t| is |q| or |q| + 1; |q| + 1 only when a / b was rounded up across an integer, by at
# most half an ulp of a number below B (1/8 for float32), so then |fmod| >= 7/8 |b|. r is
# a - t b exactly when that is representable (one rounding in the fma): with t = q it is
# fmod(a, b); with |t| = |q| + 1 it is fmod - sign(a) b, exact by Sterbenz's lemma (|fmod|
# >= |b| / 2, opposite signs). In the second case r has the sign of -a, and NumPy's
# adjustment of r gives what it gives for fmod: for a and b of one sign r + b = fmod
# exactly; of opposite signs r = fmod + b exactly, which is NumPy's rounded fmod + b
# because that sum is representable. Zero results take b's sign both ways. Outside the
# domain (|a / b| >= B, b zero, infinite or NaN, a infinite or NaN) the check nt_rem_ok
# fails. A kernel computing a checked form runs each innermost row twice over when it
# must: the vectorised row with the fast form, OR-ing the checks of its elements; then, if
# some element was outside the domain, the row again with the exact form (libm's fmod),
# overwriting all of it (``Emitter._checked_rows``). A reduction's operand keeps the exact
# form (its loop has no second pass). Checked in a C harness against the exact form (libm's
# fmod in double): every 41st float32 bit pattern of a with 40 divisors (zeros,
# infinities, NaN, denormals, FLT_MAX, 0.7, ...) and 4e8 random pairs, half of them near
# exact multiples: 2.36e9 pairs in the fast domain, 0 differences, for the first form of the
# code; the restructured, vectorising form was re-checked on 3.9e8 pairs per op, 0
# differences; and against NumPy in
# tests/inductor/test_rounding.py. torch.remainder(x, 0.7) on 1024x1024 float32, one
# thread's CPU time, minimum of 30 interleaved calls: 21.7 ms before, 0.43 ms now
# (torch.compile 1.8 ms).
# Every candidate (r, r +/- b, the signed zero) is computed first and then selected, in
# two flat selects: written as nested conditionals, GCC left fmod's loop scalar with
# branches ("control flow in loop": 11.3 ms, no faster than libm's fmodf).
# fmod (C's, NumPy's: the dividend's sign) is the same r with the other adjustment: where
# r is nonzero and its sign is not a's (t was one too big), r + copysign(b, a), which is
# fmod exactly (fmod -/+ b undone, Sterbenz again); a zero takes a's sign. Checked in the
# same harness against libm's fmodf; torch.fmod(x, 0.7) 1024x1024: 17.3 ms before (libm's
# fmodf per element), torch.compile 1.1 ms.

PRELUDE = r"""/* Note [Rounding that vectorises] (rounding.py): exact for every float */
#define NT_ROUNDING(T, S, C)                                                             \
static inline __attribute__((always_inline)) T nt_floor##S(T x) {                         \
    T a = fabs##S(x), s = copysign##S((a + C) - C, x), f = s > x ? s - 1 : s;            \
    return a < C ? copysign##S(f, x) : x + 0;                                             \
}                                                                                        \
static inline __attribute__((always_inline)) T nt_ceil##S(T x) {                          \
    T a = fabs##S(x), s = copysign##S((a + C) - C, x), c = s < x ? s + 1 : s;            \
    return a < C ? copysign##S(c, x) : x + 0;                                             \
}                                                                                        \
static inline __attribute__((always_inline)) T nt_trunc##S(T x) {                         \
    T a = fabs##S(x), m = (a + C) - C;                                                   \
    m = m > a ? m - 1 : m;                                                               \
    return a < C ? copysign##S(m, x) : x + 0;                                             \
}                                                                                        \
static inline __attribute__((always_inline)) T nt_round##S(T x) {                         \
    T a = fabs##S(x);                                                                    \
    return a < C ? copysign##S((a + C) - C, x) : x + 0;                                   \
}
NT_ROUNDING(float, f, 0x1p23f)
NT_ROUNDING(double, , 0x1p52)
#define nt_floor(x) _Generic((x), float: nt_floorf, default: nt_floor)(x)
#define nt_ceil(x) _Generic((x), float: nt_ceilf, default: nt_ceil)(x)
#define nt_trunc(x) _Generic((x), float: nt_truncf, default: nt_trunc)(x)
#define nt_round(x) _Generic((x), float: nt_roundf, default: nt_round)(x)
/* Note [Remainder in float arithmetic] (rounding.py): exact where nt_rem_ok */
#define NT_REM(T, S, B, MAX)                                                             \
static inline __attribute__((always_inline)) T nt_rem_fast##S(T a, T b) {                 \
    T r = fma##S(-nt_trunc##S(a / b), b, a), s = r + b, z = copysign##S(0, b);           \
    T m = (r < 0) != (b < 0) ? s : r;                                                    \
    return r == 0 ? z : m;                                                               \
}                                                                                        \
static inline __attribute__((always_inline)) T nt_fmod_fast##S(T a, T b) {                \
    T r = fma##S(-nt_trunc##S(a / b), b, a), s = r + copysign##S(b, a), z = copysign##S(0, a); \
    T m = (r < 0) != (a < 0) ? s : r;                                                    \
    return r == 0 ? z : m;                                                               \
}                                                                                        \
static inline __attribute__((always_inline)) int nt_rem_ok##S(T a, T b) {                 \
    return fabs##S(a / b) < B && fabs##S(b) <= MAX;                                       \
}
NT_REM(float, f, 0x1p22f, 0x1.fffffep127f)
NT_REM(double, , 0x1p50, 0x1.fffffffffffffp1023)
#define nt_rem_fast(a, b) _Generic((a) + (b), float: nt_rem_fastf, default: nt_rem_fast)(a, b)
#define nt_fmod_fast(a, b) _Generic((a) + (b), float: nt_fmod_fastf, default: nt_fmod_fast)(a, b)
#define nt_rem_ok(a, b) _Generic((a) + (b), float: nt_rem_okf, default: nt_rem_ok)(a, b)
"""

# a pointwise rule's C -> (its fast form, the check that the fast form is exact): Note
# [Remainder in float arithmetic]
CHECKED = {"nt_rem({0}, {1})": ("nt_rem_fast({0}, {1})", "nt_rem_ok({0}, {1})"),
           "fmod({0}, {1})": ("nt_fmod_fast({0}, {1})", "nt_rem_ok({0}, {1})")}
