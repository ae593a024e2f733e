"""Derivative rules for the :mod:`math` module.

The primals are Python floats (``math`` works on nothing else), but tangents and
cotangents may be NumPy arrays with a leading batch axis, so they only meet primal
values through infix operators; every ``math.*`` call below is on primals only.

Conventions where the derivative does not exist (each is the one JAX uses unless
noted): an infinite slope gives ``±inf`` (``sqrt``, ``cbrt``, ``asin``, ``acos`` and
``acosh`` at the ends of their domains) rather than a ``ZeroDivisionError``;
``fabs`` and ``copysign`` have slope 0 at 0 and ``hypot``/``dist`` have gradient 0
at the origin (the minimum-norm subgradient, as PyTorch does, and what central
differences give); ``atan2(0, 0)`` has NaN partials.

Functions of one or two floats are declared by their partial derivatives
(:func:`~wengert.rules.form.defderiv`); those of sequences, with several results or an
optional argument keep hand-written rules (a multi-argument differential tests each
tangent for ``None``).
"""

from __future__ import annotations

import math

import numpy

from wengert.rules.form import cases, defderiv, defrule
from wengert.rules.operator import _pow_rules, _sum_cotangents
from wengert.rules.registry import mark_pure, nondifferentiable
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import sum_to as _sum_to

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _quotient(a: float, b: float, r: float) -> float:
    # The integer n with r == a - n * b, recovered from the remainder r.  Rounding
    # with // (no warning, piecewise constant) rather than round() or trunc(), which
    # warn when an active value flows through them.
    return ((a - r) / b + 0.5) // 1.0


nondifferentiable(_quotient, warn=False, pure=True)

#: Bernoulli numbers B_2, B_4, ..., B_14 (the asymptotic series of the polygamma functions).
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _polygamma(n: int, x: float) -> float:
    """The polygamma function ψ⁽ⁿ⁾(x), the (n+1)-th derivative of ``lgamma`` (n = 0: the
    digamma function), for any real ``x`` that is not a pole (0, -1, -2, ...).

    The recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) − (−1)ⁿ n! / x^(n+1) moves ``x`` up to 20, where
    the asymptotic series in the Bernoulli numbers is accurate to about 1e-15."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan  # a pole of lgamma: its derivatives do not exist
    fact = math.factorial(n)
    sign = -1.0 if n % 2 else 1.0
    shift = 0.0
    while x < 20.0:
        shift -= sign * fact / x ** (n + 1)
        x += 1.0
    if n == 0:
        series = math.log(x) - 0.5 / x
        for k, b in enumerate(_BERNOULLI, start=1):
            series -= b / (2 * k * x ** (2 * k))
        return series + shift
    series = math.factorial(n - 1) / x ** n + fact / (2.0 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * x ** (2 * k + n))
    return -sign * series + shift

# Trigonometric and hyperbolic functions.
defderiv(math.sin, lambda x: math.cos(x))
defderiv(math.cos, lambda x: -math.sin(x))
defderiv(math.tan, lambda x, *, ans: 1.0 + ans * ans)
defderiv(math.asin, lambda x: math.inf if x * x == 1.0 else 1.0 / math.sqrt(1.0 - x * x))
defderiv(math.acos, lambda x: -math.inf if x * x == 1.0 else -1.0 / math.sqrt(1.0 - x * x))
defderiv(math.atan, lambda x: 1.0 / (1.0 + x * x))
# atan2(a, b) is the angle of the point (b, a).
defderiv(math.atan2,
         lambda a, b: b / (a * a + b * b) if a != 0.0 or b != 0.0 else math.nan,
         lambda a, b: -a / (a * a + b * b) if a != 0.0 or b != 0.0 else math.nan)
defderiv(math.sinh, lambda x: math.cosh(x))
defderiv(math.cosh, lambda x: math.sinh(x))
defderiv(math.tanh, lambda x, *, ans: 1.0 - ans * ans)
defderiv(math.asinh, lambda x: 1.0 / math.sqrt(x * x + 1.0))
defderiv(math.acosh, lambda x: math.inf if x == 1.0 else 1.0 / math.sqrt(x * x - 1.0))
defderiv(math.atanh, lambda x: 1.0 / (1.0 - x * x))
defderiv(math.degrees, lambda x: 180.0 / math.pi)
defderiv(math.radians, lambda x: math.pi / 180.0)

# Exponentials, logarithms and roots.
defderiv(math.exp, lambda x, *, ans: ans)
defderiv(math.expm1, lambda x: math.exp(x))
defderiv(math.log2, lambda x: 1.0 / (x * _LN2))
defderiv(math.log10, lambda x: 1.0 / (x * _LN10))
defderiv(math.log1p, lambda x: 1.0 / (1.0 + x))
defderiv(math.sqrt, lambda x, *, ans: math.inf if ans == 0.0 else 0.5 / ans)
if hasattr(math, "exp2"):  # Python 3.11+
    defderiv(math.exp2, lambda x, *, ans: ans * _LN2)
if hasattr(math, "cbrt"):  # Python 3.11+
    defderiv(math.cbrt, lambda x, *, ans: math.inf if ans == 0.0 else 1.0 / (3.0 * ans * ans))
# x * 2**i with an int exponent: linear in x.
defderiv(math.ldexp, lambda x, i: math.ldexp(1.0, i), None)
# The conventions of operator.pow (JAX's): see rules/operator.py.
_pow_rules(math.pow)

# Special functions.
defderiv(math.erf, lambda x: _TWO_OVER_SQRT_PI * math.exp(-x * x))
defderiv(math.erfc, lambda x: -_TWO_OVER_SQRT_PI * math.exp(-x * x))
defderiv(math.lgamma, lambda x: _polygamma(0, x))
defderiv(math.gamma, lambda x, *, ans: ans * _polygamma(0, x))
# Each derivative of the digamma function is the next polygamma function.
defderiv(_polygamma, None, lambda n, x: _polygamma(n + 1, x))

# Absolute value and sign: slope +-1 in x (0 at x == 0), piecewise constant in the sign.
defderiv(math.fabs, lambda x: (x > 0) * 1.0 - (x < 0) * 1.0)
defderiv(math.copysign, lambda x, s, *, ans: ans / x if x != 0 else 0.0, None)
# fmod is a - b * trunc(a / b), remainder a - b * n with n the integer nearest a / b: the
# quotient is piecewise constant.
defderiv(math.fmod, lambda a, b: 1.0, lambda a, b, *, ans: -_quotient(a, b, ans))
defderiv(math.remainder, lambda a, b: 1.0, lambda a, b, *, ans: -_quotient(a, b, ans))


cases(math.sin, (0.3,), (-2.0,))
cases(math.cos, (0.3,), (-2.0,))
cases(math.tan, (0.4,), (-1.2,))
cases(math.asin, (0.3,), (-0.8,))
cases(math.acos, (0.3,), (-0.8,))
cases(math.atan, (0.7,), (-3.0,))
cases(math.atan2, (0.4, 1.3), (-1.0, -0.5), (2.0, 0.0))
cases(math.sinh, (0.5,), (-1.5,))
cases(math.cosh, (0.5,), (-1.5,))
cases(math.tanh, (0.5,), (-1.5,))
cases(math.asinh, (0.5,), (-4.0,))
cases(math.acosh, (1.5,), (4.0,))
cases(math.atanh, (0.5,), (-0.9,))
cases(math.degrees, (0.5,))
cases(math.radians, (30.0,))
cases(math.exp, (0.5,), (-2.0,))
cases(math.expm1, (0.5,), (-1e-3,))
cases(math.log2, (0.5,), (30.0,))
cases(math.log10, (0.5,), (30.0,))
cases(math.log1p, (0.5,), (-0.5,))
cases(math.sqrt, (0.5,), (30.0,))
if hasattr(math, "exp2"):
    cases(math.exp2, (0.5,), (-3.0,))
if hasattr(math, "cbrt"):
    cases(math.cbrt, (0.5,), (-30.0,))
cases(math.ldexp, (0.7, 3), (-1.5, -2))
# (A negative base only to an int power: a float one has no real value nearby.)
cases(math.pow, (1.5, 2.2), (-1.5, 3), (0.7, -0.5))
cases(math.erf, (0.5,), (-1.2,))
cases(math.erfc, (0.5,), (-1.2,))
cases(math.lgamma, (0.5,), (3.7,), (-2.5,), (30.0,))
cases(math.gamma, (0.5,), (3.7,), (-2.5,))
cases(_polygamma, (0, 0.7), (1, 2.5), (2, -1.5), (3, 25.0))
cases(math.fabs, (0.5,), (-1.2,))
cases(math.copysign, (0.5, -2.0), (-1.2, 3.0))
cases(math.fmod, (5.3, 1.7), (-5.3, 1.7))
cases(math.remainder, (5.3, 1.7), (-4.1, 1.7))


# --------------------------------------------------------------------------------------
# Hand-written: an optional base, several results, sequences.
# --------------------------------------------------------------------------------------


@defrule(math.log)
def log_rule(x, *base):
    # math.log(x) or math.log(x, base) == log(x) / log(base).
    y = math.log(x, *base)
    scale = x if len(base) == 0 else x * math.log(base[0])

    def log_pullback(y_bar):
        if len(base) == 0:
            return (y_bar / x,)
        return y_bar / scale, -y_bar * (y / (base[0] * math.log(base[0])))

    def log_differential(x_dot, *base_dot):
        if len(base) == 0:
            return x_dot / x
        terms = [None if x_dot is None else x_dot / scale]
        if base_dot[0] is not None:
            terms = terms + [-base_dot[0] * (y / (base[0] * math.log(base[0])))]
        return _sum_cotangents(terms)

    return y, log_pullback, log_differential


# One argument; a base, above and below 1.
cases(math.log, (0.5,), (30.0,), (8.0, 2.0), (0.5, 10.0), (30.0, 0.3))


@defrule(math.frexp)
def frexp_rule(x):
    # (m, e) with x == m * 2**e: m is x * 2**-e, e is a piecewise-constant int.
    y = math.frexp(x)
    scale = math.ldexp(1.0, -y[1])

    def frexp_pullback(y_bar):
        return (None if y_bar[0] is None else y_bar[0] * scale,)

    def frexp_differential(x_dot):
        return x_dot * scale, None

    return y, frexp_pullback, frexp_differential


# Away from the powers of 2, where the exponent jumps.
cases(math.frexp, (0.7,), (-12.5,))


@defrule(math.modf)
def modf_rule(x):
    # (fractional part, integral part): slope 1 and 0.
    y = math.modf(x)

    def modf_pullback(y_bar):
        return (y_bar[0],)

    def modf_differential(x_dot):
        return x_dot, None

    return y, modf_pullback, modf_differential


cases(math.modf, (2.3,), (-1.7,))


# --------------------------------------------------------------------------------------
# Functions of several values: hypot(*xs), dist(p, q), fsum(xs) (math.prod is defined in
# Python: rules/python_defs.py).  Sequence adjoints have the type (tuple or list) and
# length of the argument; a tangent sums its items' terms (None entries are zero).
# --------------------------------------------------------------------------------------


@defrule(math.hypot)
def hypot_rule(*xs):
    y = math.hypot(*xs)

    def hypot_pullback(y_bar):
        if y == 0.0:
            return tuple(None for x in xs)
        return tuple(y_bar * (x / y) for x in xs)

    def hypot_differential(*xs_dot):
        if y == 0.0:
            return None
        return _sum_cotangents([None if xs_dot[i] is None else xs_dot[i] * (xs[i] / y)
                                for i in range(len(xs))])

    return y, hypot_pullback, hypot_differential


cases(math.hypot, (1.5,), (0.3, -0.4), (0.5, -1.0, 2.0))


@defrule(math.dist)
def dist_rule(p, q):
    y = math.dist(p, q)
    n = len(p)

    def dist_pullback(y_bar):
        if y == 0.0:
            return None, None
        p_bar = [y_bar * ((p[i] - q[i]) / y) for i in range(n)]
        q_bar = [-y_bar * ((p[i] - q[i]) / y) for i in range(n)]
        if isinstance(p, tuple):
            p_bar = tuple(p_bar)
        if isinstance(q, tuple):
            q_bar = tuple(q_bar)
        return p_bar, q_bar

    def dist_differential(p_dot, q_dot):
        if y == 0.0:
            return None
        if p_dot is None:
            p_dot = [None] * n
        if q_dot is None:
            q_dot = [None] * n
        return _sum_cotangents([None if p_dot[i] is None else p_dot[i] * ((p[i] - q[i]) / y)
                                for i in range(n)]
                               + [None if q_dot[i] is None else q_dot[i] * ((q[i] - p[i]) / y)
                                  for i in range(n)])

    return y, dist_pullback, dist_differential


cases(math.dist, ([0.5, 1.5], [2.0, -1.0]), ((0.5, 1.5, -0.25), (2.0, -1.0, 0.75)))


@defrule(math.fsum)
def fsum_rule(xs):
    if not isinstance(xs, (list, tuple, numpy.ndarray)):
        xs = list(xs)  # a one-shot iterable: keep its items for the pullback
    y = math.fsum(xs)

    def fsum_pullback(y_bar):
        if isinstance(xs, numpy.ndarray):
            xs_bar = _broadcast_to(y_bar, (), _shape(xs))
        elif isinstance(xs, tuple):
            xs_bar = tuple(y_bar for x in xs)
        else:
            xs_bar = [y_bar for x in xs]
        return (xs_bar,)

    def fsum_differential(xs_dot):
        if isinstance(xs, numpy.ndarray):
            return _sum_to(xs_dot, (), _shape(xs))
        return _sum_cotangents(xs_dot)

    return y, fsum_pullback, fsum_differential


cases(math.fsum, ([0.5, -1.5, 2.0],), ((0.5, 1e-3),), (numpy.array([0.7, -0.4, 1.1]),))


mark_pure(math.log, math.pow, math.hypot, math.modf, math.frexp, math.fsum, math.dist)

# Piecewise constant with jumps: an active value flowing through them loses its
# derivative, which is worth a warning (Swift's "accidental data flow").
nondifferentiable(math.floor, math.ceil, math.trunc, warn=True, pure=True)
nondifferentiable(
    math.isnan, math.isinf, math.isfinite, math.isclose, math.factorial, math.gcd,
    math.comb, math.perm, math.isqrt, math.lcm, math.nextafter, math.ulp,
    warn=False, pure=True,
)

