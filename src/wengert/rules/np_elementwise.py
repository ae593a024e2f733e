"""NumPy's elementwise functions (ufuncs): one partial derivative per argument.

Every differentiable function here is declared with :func:`~wengert.rules.form.defderiv`;
functions of two arrays pass ``broadcast=True`` (cotangents are summed back to each
argument's shape, tangents broadcast up to the result's). Partials are written with NumPy
so that they hold for arrays and for floats alike, and call only functions that have rules
themselves (so Hessians differentiate them again). Tangents may carry leading batch axes;
elementwise partials broadcast against them from the right, as they should. A ufunc's
partials are lambdas of its own parameter names (``x`` for one argument, ``x1, x2`` for two).

Three habits keep the partials honest:

* A partial never divides a Python float by a Python float (a ``ZeroDivisionError`` at a
  pole): it divides by a NumPy result (``ans``, ``np.sqrt(...)``) or calls ``np.divide``,
  which gives ``inf``/``nan`` there, as JAX does.
* Constants are Python floats, which NumPy treats as weak: a float32 argument keeps a
  float32 derivative. Piecewise-constant factors (steps, tie weights) come from small
  non-differentiable helpers that return them in the argument's floating dtype; a bool
  array times ``0.5`` would be float64.
* Functions whose derivative is zero wherever it exists (``sign``, ``floor``, the
  comparisons) are :func:`~wengert.rules.registry.nondifferentiable`: their results carry
  no tangent at all, so both modes and every order skip them without multiplying zeros.

Conventions at points without a derivative are JAX's: ``abs``/``fabs`` slope 0 at 0;
``maximum``/``minimum``/``fmax``/``fmin`` give each argument half at a tie, so
``np.clip`` (``minimum(maximum(a, a_min), a_max)``, as ``jax.numpy.clip`` computes it)
has slope 1/2 in ``a`` and 1/2 in the bound when ``a`` sits exactly on a bound;
``power`` as the ``**`` rules in :mod:`wengert.rules.operator`; ``hypot`` has gradient 0
at the origin; ``arctan2(0, 0)`` NaN; ``sinc`` slope 0 at 0 (with its true higher
derivatives there, from a series); ``copysign`` has no derivative in the sign; the
quotient of ``mod``/``fmod`` is piecewise constant; ``np.where`` passes each cotangent to
the chosen branch only (a select: the other branch gets exactly 0, not ``0 * g``);
``nan_to_num`` has slope 1 where its argument is finite and passes the cotangent of a
replaced entry to the replacement; ``heaviside(x1, x2)`` is a step in ``x1`` and takes
``x2``'s value (and slope) where ``x1 == 0``.

Rounding (``floor``, ``rint``, ...) is not warned about, unlike ``math.floor``: on arrays
it is mostly meant piecewise constant (fractional parts, bins), and JAX is silent too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.form import cases, defderiv, defrule, kw
from wengert.rules.operator import _log_base
from wengert.rules.registry import (
    defpython,
    mark_array_result,
    mark_check,
    mark_pure,
    nondifferentiable,
)
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import sum_to as _sum_to

_LN2 = math.log(2.0)
_INV_LN2 = 1.0 / math.log(2.0)
_INV_LN10 = 1.0 / math.log(10.0)
_RAD_PER_DEG = math.pi / 180.0
_DEG_PER_RAD = 180.0 / math.pi


# ----------------------------------------------------------------------------- helpers


def _floating(value: Any, like: Any) -> Any:
    """``value`` as ``like``'s floating dtype (float32 stays float32; ints, bools and
    Python floats give float64); a scalar when it has no axes."""
    out = np.asarray(value, dtype=np.result_type(like, 1.0))
    return out[()]


def _indicator(mask: Any, like: Any) -> Any:
    """1 where ``mask`` holds, else 0, in ``like``'s floating dtype."""
    return _floating(mask, like)


def _zero(like: Any) -> Any:
    """Zeros of ``like``'s shape and floating dtype: the slope of an argument that has
    none, where the rule form needs one written (see ``copysign``)."""
    return _floating(np.zeros(np.shape(like)), like)


def _tie_weight(a: Any, b: Any, ans: Any) -> Any:
    """The share of ``a`` in ``ans``, which is ``a`` or ``b`` (maximum, minimum, fmax,
    fmin): 1 where ``ans`` is ``a`` alone, 1/2 where ``a == b == ans`` (JAX's split),
    0 where it is ``b`` (or NaN that ``a`` did not give)."""
    hit = np.equal(a, ans)
    both = np.logical_and(hit, np.equal(b, ans))
    return _floating(np.where(hit, np.where(both, 0.5, 1.0), 0.0), ans)


def _quotient(x1: Any, x2: Any, ans: Any) -> Any:
    """The integer ``n`` with ``ans == x1 - n * x2`` (``ans`` a remainder of ``x1`` by
    ``x2``), recovered from the remainder: exact up to a rounding that ``rint`` removes."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _floating(np.rint(np.divide(np.subtract(x1, ans), x2)), ans)


def _real(x: Any) -> bool:
    """Whether ``x`` is of a floating (or complex) type: an int or bool exponent is a
    constant, whose slope is never asked for."""
    return np.result_type(x).kind in "fc"


nondifferentiable(_floating, _indicator, _zero, _tie_weight, _quotient, _real)


def _sigmoid(z: Any) -> Any:
    """``1 / (1 + exp(-z))`` without overflow and accurate in both tails (a partial of
    ``logaddexp``: the weight of one argument in the sum of exponentials)."""
    z = np.asarray(z)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))[()]


defderiv(_sigmoid, lambda z, *, ans: ans * (1.0 - ans))


def _sinc_deriv(x: Any, k: int) -> Any:
    """The ``k``-th derivative (``k >= 1``) of ``np.sinc`` at ``x``.

    With ``u = pi * x`` and ``s(u) = sin(u) / u``, it is ``pi**k * s^(k)(u)``. Near 0 the
    Maclaurin series of ``s`` is differentiated term by term (exact at 0, where the
    quotient form is 0/0); elsewhere Leibniz's rule on ``sin(u) * u**-1`` is used."""
    xa = np.asarray(x)
    u = np.pi * xa.astype(np.float64)
    small = np.abs(u) < 2.0
    # s(u) = sum_n (-1)^n u^(2n) / (2n+1)!; 30 terms reach far below rounding for |u| < 2.
    us = np.where(small, u, 0.0)
    series = np.zeros_like(u)
    for n in range((k + 1) // 2, (k + 1) // 2 + 30):
        c = (-1.0) ** n * math.factorial(2 * n) / (
            math.factorial(2 * n - k) * math.factorial(2 * n + 1))
        series = series + c * us ** (2 * n - k)
    # s^(k)(u) = sum_j C(k, j) sin^(j)(u) (u^-1)^(k-j), (u^-1)^(m) = (-1)^m m! u^-(m+1).
    ul = np.where(small, 1.0, u)
    leibniz = np.zeros_like(u)
    for j in range(k + 1):
        m = k - j
        leibniz = leibniz + (math.comb(k, j) * np.sin(ul + j * np.pi / 2)
                             * ((-1.0) ** m * math.factorial(m)) / ul ** (m + 1))
    return _floating(np.pi ** k * np.where(small, series, leibniz), xa)


defderiv(_sinc_deriv, lambda x, k: _sinc_deriv(x, k + 1), None)
mark_pure(_sigmoid, _sinc_deriv)


# ------------------------------------------------------------- unary: smooth functions

defderiv(np.sin, lambda x: np.cos(x))
defderiv(np.cos, lambda x: -np.sin(x))
defderiv(np.tan, lambda x, *, ans: 1.0 + ans * ans)
defderiv(np.arcsin, lambda x: 1.0 / np.sqrt((1.0 - x) * (1.0 + x)))
defderiv(np.arccos, lambda x: -1.0 / np.sqrt((1.0 - x) * (1.0 + x)))
defderiv(np.arctan, lambda x: 1.0 / (1.0 + x * x))
defderiv(np.sinh, lambda x: np.cosh(x))
defderiv(np.cosh, lambda x: np.sinh(x))
defderiv(np.tanh, lambda x, *, ans: 1.0 - ans * ans)
defderiv(np.arcsinh, lambda x: 1.0 / np.sqrt(x * x + 1.0))
defderiv(np.arccosh, lambda x: 1.0 / np.sqrt((x - 1.0) * (x + 1.0)))
defderiv(np.arctanh, lambda x: np.divide(1.0, (1.0 - x) * (1.0 + x)))

defderiv(np.exp, lambda x, *, ans: ans)
defderiv(np.exp2, lambda x, *, ans: ans * _LN2)
defderiv(np.expm1, lambda x, *, ans: ans + 1.0)
defderiv(np.log, lambda x: np.divide(1.0, x))
defderiv(np.log2, lambda x: np.divide(_INV_LN2, x))
defderiv(np.log10, lambda x: np.divide(_INV_LN10, x))
defderiv(np.log1p, lambda x: np.divide(1.0, 1.0 + x))
# sqrt and cbrt have an infinite slope at 0 (as JAX).
defderiv(np.sqrt, lambda x, *, ans: 0.5 / ans)
defderiv(np.cbrt, lambda x, *, ans: 1.0 / (3.0 * ans * ans))
defderiv(np.square, lambda x: 2.0 * x)
defderiv(np.reciprocal, lambda x, *, ans: -(ans * ans))

# np.abs is np.absolute. Slope sign(x): 0 at 0.
defderiv(np.absolute, lambda x: np.sign(x))
defderiv(np.fabs, lambda x: np.sign(x))
defderiv(np.negative, lambda x: -1.0)
defderiv(np.positive, lambda x: 1.0)
# np.degrees is np.rad2deg's twin, not the same object; likewise radians and deg2rad.
defderiv(np.deg2rad, lambda x: _RAD_PER_DEG)
defderiv(np.radians, lambda x: _RAD_PER_DEG)
defderiv(np.rad2deg, lambda x: _DEG_PER_RAD)
defderiv(np.degrees, lambda x: _DEG_PER_RAD)
defderiv(np.sinc, lambda x: _sinc_deriv(x, 1))

# ------------------------------------------------------------------ binary functions

defderiv(np.add, lambda x1, x2: 1.0, lambda x1, x2: 1.0, broadcast=True)
defderiv(np.subtract, lambda x1, x2: 1.0, lambda x1, x2: -1.0, broadcast=True)
defderiv(np.multiply, lambda x1, x2: x2, lambda x1, x2: x1, broadcast=True)
# np.true_divide is np.divide.
defderiv(np.divide, lambda x1, x2: np.divide(1.0, x2), lambda x1, x2, *, ans: -ans / x2,
         broadcast=True)
# The exponent is bumped to 0 where it is 0, so that 0 * 0**-1 never makes a NaN: the
# base's slope is then exactly 0 (JAX's convention, and that of ``**``). An int exponent
# has no derivative; its slope is written as 0 rather than log(x1) * ans, which is NaN at
# a negative base and would turn a second derivative into 0 * NaN where a zero
# cotangent of the exponent is materialised.
defderiv(np.power, lambda x1, x2: x2 * np.power(x1, x2 - 1 + (x2 == 0)),
         lambda x1, x2, *, ans: _log_base(x1) * ans if _real(x2) else _zero(ans),
         broadcast=True)
defderiv(np.float_power, lambda x1, x2: x2 * np.float_power(x1, x2 - 1 + (x2 == 0)),
         lambda x1, x2, *, ans: _log_base(x1) * ans if _real(x2) else _zero(ans),
         broadcast=True)
# arctan2(x1, x2) is the angle of the point (x2, x1); NaN partials at the origin.
defderiv(np.arctan2, lambda x1, x2: np.divide(x2, x1 * x1 + x2 * x2),
         lambda x1, x2: np.divide(-x1, x1 * x1 + x2 * x2), broadcast=True)
# Gradient 0 at the origin: (ans == 0) makes the denominator 1 where the numerator is 0.
defderiv(np.hypot, lambda x1, x2, *, ans: x1 / (ans + (ans == 0)),
         lambda x1, x2, *, ans: x2 / (ans + (ans == 0)), broadcast=True)
# The weight of x1 in the sum of exponentials, e^x1 / (e^x1 + e^x2) = e^(x1 - ans): one
# pass over the arrays (the exponent is never positive, so it never overflows).
defderiv(np.logaddexp, lambda x1, x2, *, ans: np.exp(x1 - ans),
         lambda x1, x2, *, ans: np.exp(x2 - ans), broadcast=True)
defderiv(np.logaddexp2, lambda x1, x2, *, ans: np.exp2(x1 - ans),
         lambda x1, x2, *, ans: np.exp2(x2 - ans), broadcast=True)
defderiv(np.maximum, lambda x1, x2, *, ans: _tie_weight(x1, x2, ans),
         lambda x1, x2, *, ans: _tie_weight(x2, x1, ans), broadcast=True)
defderiv(np.minimum, lambda x1, x2, *, ans: _tie_weight(x1, x2, ans),
         lambda x1, x2, *, ans: _tie_weight(x2, x1, ans), broadcast=True)
defderiv(np.fmax, lambda x1, x2, *, ans: _tie_weight(x1, x2, ans),
         lambda x1, x2, *, ans: _tie_weight(x2, x1, ans), broadcast=True)
defderiv(np.fmin, lambda x1, x2, *, ans: _tie_weight(x1, x2, ans),
         lambda x1, x2, *, ans: _tie_weight(x2, x1, ans), broadcast=True)
# |x1| with the sign of x2: slope +-1 in x1 (0 at 0), none in x2. The zero is written
# out because the rule form's forward rule for one partial of a broadcasting function
# does not broadcast a (batched) tangent up to the result's shape; with two it does.
defderiv(np.copysign, lambda x1, x2, *, ans: np.sign(x1) * np.sign(ans),
         lambda x1, x2, *, ans: _zero(ans), broadcast=True)
# x1 - n * x2 with the integer n piecewise constant (np.mod is np.remainder).
defderiv(np.remainder, lambda x1, x2: 1.0, lambda x1, x2, *, ans: -_quotient(x1, x2, ans),
         broadcast=True)
defderiv(np.fmod, lambda x1, x2: 1.0, lambda x1, x2, *, ans: -_quotient(x1, x2, ans),
         broadcast=True)


# ----------------------------------------------------- piecewise constant: no derivative

nondifferentiable(
    np.sign, np.floor, np.ceil, np.rint, np.trunc, np.fix, np.round, np.around,
    np.floor_divide,
    np.less, np.greater, np.equal, np.not_equal, np.less_equal, np.greater_equal,
    np.isnan, np.isinf, np.isfinite, np.isposinf, np.isneginf, np.signbit,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    warn=False, pure=True,
)


# The step heaviside(x1, x2) is piecewise constant in x1 and takes the value x2 where
# x1 == 0: slope 1 in x2 there, 0 elsewhere (x2 is usually a constant, and then costs
# nothing). The zero slope in x1 is written out, as for copysign.
defderiv(np.heaviside, lambda x1, x2, *, ans: _zero(ans),
         lambda x1, x2, *, ans: _indicator(np.equal(x1, 0), ans), broadcast=True)


# ------------------------------------------------------------------------------ where


@defrule(np.where)
def where_rule(condition, *xy):
    ans = np.where(condition, *xy)

    def where_pullback(ans_bar):
        # np.where(condition) alone gives indices: nothing to differentiate.
        if len(xy) == 0:
            return (None,)
        full = _shape(ans)
        x_bar = _sum_to(np.where(condition, ans_bar, 0.0), _shape(xy[0]), full)
        y_bar = _sum_to(np.where(condition, 0.0, ans_bar), _shape(xy[1]), full)
        return None, x_bar, y_bar

    def where_differential(condition_dot, *xy_dot):
        ans_dot = None
        if len(xy) > 0:
            full = _shape(ans)
            x_dot = _broadcast_to(xy_dot[0], _shape(xy[0]), full)
            y_dot = _broadcast_to(xy_dot[1], _shape(xy[1]), full)
            if x_dot is not None and y_dot is not None:
                ans_dot = np.where(condition, x_dot, y_dot)
            elif x_dot is not None:
                ans_dot = np.where(condition, x_dot, 0.0)
            elif y_dot is not None:
                ans_dot = np.where(condition, 0.0, y_dot)
        return ans_dot

    return ans, where_pullback, where_differential


mark_pure(np.where)


# ------------------------------------------------------------------------------- clip


def _given(bound: Any) -> bool:
    """Whether a bound of ``np.clip`` is given: neither ``None`` nor NumPy's marker of an
    argument left out."""
    return bound is not None and bound is not np._NoValue


def _check_clip(a_min: Any, a_max: Any, out: Any, method: bool = False) -> None:
    """Refuse ``out=`` (an in-place write, not differentiated) and what NumPy refuses: one
    of ``a_min``/``a_max`` left out when the other is given (``np.clip(x, a_max=1)``,
    which arrives with NumPy's marker in ``a_min``)."""
    if out is not None:
        spelling = "x.clip" if method else "np.clip"
        raise RuleRefusal(f"wengert: {spelling}(..., out=...) writes into an array in place, "
                        "which is not differentiated; use the returned array")
    if (a_min is np._NoValue) != (a_max is np._NoValue):
        name = "a_min" if a_min is np._NoValue else "a_max"
        raise TypeError(f"clip() missing 1 required positional argument: '{name}'")


nondifferentiable(_given, _check_clip)
mark_check(_check_clip)


# The parameters are NumPy's, in NumPy's order, with NumPy's marker of a bound left out
# (what NumPy refuses is refused the same way).
@defpython(np.clip, keywords=("a_min", "a_max", "out", "min", "max"))
def clip_(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=None, max=None):
    _check_clip(a_min, a_max, out)
    if min is not None:
        a_min = min
    if max is not None:
        a_max = max
    # jax.numpy.clip's composition, which fixes the slopes on a bound (1/2 each).
    res = np.positive(a)
    if _given(a_min):
        res = np.maximum(res, a_min)
    if _given(a_max):
        res = np.minimum(res, a_max)
    return res


@defpython(np.ndarray.clip, keywords=("min", "max", "out"))
def ndarray_clip(self, min=None, max=None, out=None):
    _check_clip(None, None, out, True)
    res = np.positive(self)
    if _given(min):
        res = np.maximum(res, min)
    if _given(max):
        res = np.minimum(res, max)
    return res


# ------------------------------------------------------------------------- nan_to_num


def _nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    """``np.nan_to_num`` with the replacements positional (numbers): slope 1 in ``x``
    where it is finite, 1 in a replacement where it is used."""
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _largest(x: Any) -> Any:
    """The largest finite number of ``x``'s floating dtype: NumPy's default for an
    infinity's replacement (given as a number, so that every argument of
    :func:`_nan_to_num` is one)."""
    return np.finfo(np.result_type(x, 1.0)).max


nondifferentiable(_largest)


defderiv(_nan_to_num,
         lambda x, nan, posinf, neginf: _indicator(np.isfinite(x), x),
         lambda x, nan, posinf, neginf: _indicator(np.isnan(x), x),
         lambda x, nan, posinf, neginf: _indicator(np.isposinf(x), x),
         lambda x, nan, posinf, neginf: _indicator(np.isneginf(x), x),
         broadcast=True)


@defpython(np.nan_to_num, keywords=("copy", "nan", "posinf", "neginf"))
def nan_to_num_(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not copy:
        raise RuleRefusal("wengert: np.nan_to_num(..., copy=False) replaces in place, which "
                        "is not differentiated; use the returned array (copy=True)")
    if posinf is None:
        posinf = _largest(x)
    if neginf is None:
        neginf = -_largest(x)
    return _nan_to_num(x, nan, posinf, neginf)


# ------------------------------------------------------------------------------ cases

_X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -1.4]])
_U = np.array([[0.3, -0.7, 0.6], [0.5, 0.2, -0.4]])  # inside (-1, 1)
_P = _X * _X + 0.2  # positive
_B = np.array([[[0.4, -1.3, 2.0], [0.9, 0.1, -0.6]], [[-0.2, 1.7, 0.8], [1.2, -2.1, 0.35]]])

cases(_sigmoid, (0.4,), (-30.0,), (_X * 10.0,))
cases(_sinc_deriv, (0.4, 1), (0.0, 2), (1e-3, 1), (_X * 3.0, 2), (_X, 3))
cases(np.sin, (_X,), (0.4,))
cases(np.cos, (_X,), (-1.2,))
cases(np.tan, (_U,), (0.4,))
cases(np.arcsin, (_U,), (-0.4,))
cases(np.arccos, (_U,), (0.4,))
cases(np.arctan, (_X * 3.0,), (-2.0,))
cases(np.sinh, (_X,), (0.4,))
cases(np.cosh, (_X,), (-0.4,))
cases(np.tanh, (_X,), (0.4,))
cases(np.arcsinh, (_X * 3.0,), (0.4,))
cases(np.arccosh, (_P + 1.0,), (2.5,))
cases(np.arctanh, (_U,), (-0.4,))
cases(np.exp, (_X,), (0.4,))
cases(np.exp2, (_X,), (-1.5,))
cases(np.expm1, (_X,), (1e-3,))
cases(np.log, (_P,), (0.4,))
cases(np.log2, (_P,), (3.0,))
cases(np.log10, (_P,), (30.0,))
cases(np.log1p, (_U,), (2.0,))
cases(np.sqrt, (_P,), (0.4,))
cases(np.cbrt, (_X,), (-2.0,))
cases(np.square, (_X,), (-0.4,))
cases(np.reciprocal, (_X,), (-0.4,))
cases(np.absolute, (_X,), (-0.4,))
cases(np.fabs, (_X,), (0.4,))
cases(np.negative, (_X,), (0.4,))
cases(np.positive, (_X,), (0.4,))
cases(np.deg2rad, (_X * 90.0,), (30.0,))
cases(np.radians, (_X * 90.0,))
cases(np.rad2deg, (_X,), (0.4,))
cases(np.degrees, (_X,))
cases(np.sinc, (_X,), (0.4,), (-1.7,), (np.array([0.0, 1e-4, -0.3, 2.5]),))

cases(np.add, (_X, _X[0]), (_X, 2.0), (0.5, -1.5))
cases(np.subtract, (_X, _X[:, :1]), (1.5, _X), (0.5, -1.5))
cases(np.multiply, (_X, _X[:, :1]), (1.5, _X), (_B, _X))
cases(np.divide, (_X, _P[0]), (1.5, _P), (_B, _P[:, :1]), (0.5, -1.5))
cases(np.power, (_P, _X), (_P, 2), (_P[0], _X), (1.5, _X), (_P, 0.5), (0.7, 2.5), (-1.5, 3))
cases(np.float_power, (_P, _X[0]), (2.0, 1.5), (_P, 3))
cases(np.arctan2, (_X, _X[::-1]), (0.4, -1.3), (_X, 0.5))
cases(np.hypot, (_X, _X[::-1]), (0.4, -1.3), (_X, 0.5))
cases(np.logaddexp, (_X, _X[::-1] * 5.0), (0.4, -1.3), (_B, _X[0]))
cases(np.logaddexp2, (_X, _X[::-1] * 5.0), (0.4, -1.3))
_EXTREME_CASES = ((_X, _X[::-1]), (_X, 0.25), (0.4, -1.3), (_B, _X[:, :1]))
cases(np.maximum, *_EXTREME_CASES)
cases(np.minimum, *_EXTREME_CASES)
cases(np.fmax, *_EXTREME_CASES)
cases(np.fmin, *_EXTREME_CASES)
# The step's argument as ints: perturbed at 0, it would jump.
cases(np.heaviside, (np.array([[0, -1, 2], [1, 0, -3]]), 0.5),
      (np.array([[0, -1, 2], [1, 0, -3]]), _X[0]), (0, 0.3), (_X + 0.05, 0.5))
cases(np.copysign, (_X, _X[::-1]), (0.4, -1.3), (_X, -1.0), (0.4, _X), (_X[0], _B))
cases(np.remainder, (_X * 5.0, 1.3), (_X * 5.0, _P), (4.1, -1.3))
cases(np.fmod, (_X * 5.0, 1.3), (_X * 5.0, _P), (-4.1, 1.3))
cases(np.where, (_X > 0, _X, _X[0]), (_X[0] > 0, 2.0, _B), (_X > 0.25, _X[:, :1], _X[::-1]))
cases(_nan_to_num, (_X, 0.0, 5.0, -5.0), (np.array([0.5, np.nan, np.inf, -np.inf, -1.5]),
                                            0.25, 2.0, -3.0))
# The Python definitions, called as users call them (bounds away from the entries).
cases(np.clip, (_X, -0.5, 0.9), (_X, _X[::-1] * 0.5, None), (0.3, -0.5, 1.0),
      (_B, kw(min=-0.5, max=_X[0] + 0.05)))
cases(np.nan_to_num, (_X,), (np.array([0.5, np.nan, np.inf, -np.inf, -1.5]), True, 0.25),
      (np.array([0.5, np.nan, np.inf, -np.inf, -1.5]), kw(posinf=2.0, neginf=-3.0)),
      (1.5,))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_nan_to_num, _sigmoid, _sinc_deriv)
