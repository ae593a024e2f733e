"""Derivative rules for the :mod:`math` module.

The primals are Python floats (``math`` works on nothing else), but tangents and
cotangents may be NumPy arrays with a leading batch axis, so they only meet primal
values through infix operators; every ``math.*`` call below is on primals only.

Conventions where the derivative does not exist (each is the one JAX uses unless
noted): an infinite slope gives ``±inf`` (``sqrt``, ``cbrt``, ``asin``, ``acos`` and
``acosh`` at the ends of their domains) rather than a ``ZeroDivisionError``;
``fabs`` and ``copysign`` have slope 0 at 0 and ``hypot``/``dist`` have gradient 0
at the origin (the minimum-norm subgradient, as PyTorch does, and what central
differences give); ``atan2(0, 0)`` has NaN partials.  A unary differential is only
called with a tangent (never ``None``); multi-argument ones test each tangent.
"""

from __future__ import annotations

import math

import numpy

from wengert.rules.operator import _broadcast_to, _pow_rules, _shape, _sum_to
from wengert.rules.registry import defjvp, defrules, defvjp, mark_pure, nondifferentiable

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# --------------------------------------------------------------------------------------
# Trigonometric functions.
# --------------------------------------------------------------------------------------


@defvjp(math.sin)
def sin_vjp(x):
    return math.sin(x), lambda y_bar: (y_bar * math.cos(x),)


@defjvp(math.sin)
def sin_jvp(x):
    return math.sin(x), lambda x_dot: x_dot * math.cos(x)


@defvjp(math.cos)
def cos_vjp(x):
    return math.cos(x), lambda y_bar: (-y_bar * math.sin(x),)


@defjvp(math.cos)
def cos_jvp(x):
    return math.cos(x), lambda x_dot: -x_dot * math.sin(x)


@defvjp(math.tan)
def tan_vjp(x):
    y = math.tan(x)
    return y, lambda y_bar: (y_bar * (1.0 + y * y),)


@defjvp(math.tan)
def tan_jvp(x):
    y = math.tan(x)
    return y, lambda x_dot: x_dot * (1.0 + y * y)


@defvjp(math.asin)
def asin_vjp(x):
    y = math.asin(x)

    def asin_pullback(y_bar):
        if x * x == 1.0:
            return (y_bar * math.inf,)
        return (y_bar / math.sqrt(1.0 - x * x),)

    return y, asin_pullback


@defjvp(math.asin)
def asin_jvp(x):
    y = math.asin(x)

    def asin_differential(x_dot):
        if x * x == 1.0:
            return x_dot * math.inf
        return x_dot / math.sqrt(1.0 - x * x)

    return y, asin_differential


@defvjp(math.acos)
def acos_vjp(x):
    y = math.acos(x)

    def acos_pullback(y_bar):
        if x * x == 1.0:
            return (-y_bar * math.inf,)
        return (-y_bar / math.sqrt(1.0 - x * x),)

    return y, acos_pullback


@defjvp(math.acos)
def acos_jvp(x):
    y = math.acos(x)

    def acos_differential(x_dot):
        if x * x == 1.0:
            return -x_dot * math.inf
        return -x_dot / math.sqrt(1.0 - x * x)

    return y, acos_differential


@defvjp(math.atan)
def atan_vjp(x):
    return math.atan(x), lambda y_bar: (y_bar / (1.0 + x * x),)


@defjvp(math.atan)
def atan_jvp(x):
    return math.atan(x), lambda x_dot: x_dot / (1.0 + x * x)


@defvjp(math.atan2)
def atan2_vjp(a, b):
    # atan2(a, b) is the angle of the point (b, a).
    y = math.atan2(a, b)

    def atan2_pullback(y_bar):
        r2 = a * a + b * b
        if r2 == 0.0:
            return y_bar * math.nan, y_bar * math.nan
        return y_bar * (b / r2), -y_bar * (a / r2)

    return y, atan2_pullback


@defjvp(math.atan2)
def atan2_jvp(a, b):
    y = math.atan2(a, b)

    def atan2_differential(a_dot, b_dot):
        r2 = a * a + b * b
        if r2 == 0.0:
            r2 = math.nan
        if a_dot is None:
            if b_dot is None:
                return None
            return -b_dot * (a / r2)
        if b_dot is None:
            return a_dot * (b / r2)
        return a_dot * (b / r2) - b_dot * (a / r2)

    return y, atan2_differential


@defvjp(math.degrees)
def degrees_vjp(x):
    return math.degrees(x), lambda y_bar: (y_bar * (180.0 / math.pi),)


@defjvp(math.degrees)
def degrees_jvp(x):
    return math.degrees(x), lambda x_dot: x_dot * (180.0 / math.pi)


@defvjp(math.radians)
def radians_vjp(x):
    return math.radians(x), lambda y_bar: (y_bar * (math.pi / 180.0),)


@defjvp(math.radians)
def radians_jvp(x):
    return math.radians(x), lambda x_dot: x_dot * (math.pi / 180.0)


# --------------------------------------------------------------------------------------
# Hyperbolic functions.
# --------------------------------------------------------------------------------------


@defvjp(math.sinh)
def sinh_vjp(x):
    return math.sinh(x), lambda y_bar: (y_bar * math.cosh(x),)


@defjvp(math.sinh)
def sinh_jvp(x):
    return math.sinh(x), lambda x_dot: x_dot * math.cosh(x)


@defvjp(math.cosh)
def cosh_vjp(x):
    return math.cosh(x), lambda y_bar: (y_bar * math.sinh(x),)


@defjvp(math.cosh)
def cosh_jvp(x):
    return math.cosh(x), lambda x_dot: x_dot * math.sinh(x)


@defvjp(math.tanh)
def tanh_vjp(x):
    y = math.tanh(x)
    return y, lambda y_bar: (y_bar * (1.0 - y * y),)


@defjvp(math.tanh)
def tanh_jvp(x):
    y = math.tanh(x)
    return y, lambda x_dot: x_dot * (1.0 - y * y)


@defvjp(math.asinh)
def asinh_vjp(x):
    return math.asinh(x), lambda y_bar: (y_bar / math.sqrt(x * x + 1.0),)


@defjvp(math.asinh)
def asinh_jvp(x):
    return math.asinh(x), lambda x_dot: x_dot / math.sqrt(x * x + 1.0)


@defvjp(math.acosh)
def acosh_vjp(x):
    y = math.acosh(x)

    def acosh_pullback(y_bar):
        if x == 1.0:
            return (y_bar * math.inf,)
        return (y_bar / math.sqrt(x * x - 1.0),)

    return y, acosh_pullback


@defjvp(math.acosh)
def acosh_jvp(x):
    y = math.acosh(x)

    def acosh_differential(x_dot):
        if x == 1.0:
            return x_dot * math.inf
        return x_dot / math.sqrt(x * x - 1.0)

    return y, acosh_differential


@defvjp(math.atanh)
def atanh_vjp(x):
    return math.atanh(x), lambda y_bar: (y_bar / (1.0 - x * x),)


@defjvp(math.atanh)
def atanh_jvp(x):
    return math.atanh(x), lambda x_dot: x_dot / (1.0 - x * x)


# --------------------------------------------------------------------------------------
# Exponentials, logarithms, roots and powers.
# --------------------------------------------------------------------------------------


@defvjp(math.exp)
def exp_vjp(x):
    y = math.exp(x)
    return y, lambda y_bar: (y_bar * y,)


@defjvp(math.exp)
def exp_jvp(x):
    y = math.exp(x)
    return y, lambda x_dot: x_dot * y


if hasattr(math, "exp2"):  # Python 3.11+

    @defvjp(math.exp2)
    def exp2_vjp(x):
        y = math.exp2(x)
        return y, lambda y_bar: (y_bar * (y * _LN2),)

    @defjvp(math.exp2)
    def exp2_jvp(x):
        y = math.exp2(x)
        return y, lambda x_dot: x_dot * (y * _LN2)

    mark_pure(math.exp2)


@defvjp(math.expm1)
def expm1_vjp(x):
    return math.expm1(x), lambda y_bar: (y_bar * math.exp(x),)


@defjvp(math.expm1)
def expm1_jvp(x):
    return math.expm1(x), lambda x_dot: x_dot * math.exp(x)


@defvjp(math.log)
def log_vjp(x, *base):
    # math.log(x) or math.log(x, base) == log(x) / log(base).
    if len(base) == 0:
        y = math.log(x)
    else:
        y = math.log(x, base[0])

    def log_pullback(y_bar):
        if len(base) == 0:
            return (y_bar / x,)
        log_base = math.log(base[0])
        return y_bar / (x * log_base), -y_bar * (y / (base[0] * log_base))

    return y, log_pullback


@defjvp(math.log)
def log_jvp(x, *base):
    if len(base) == 0:
        y = math.log(x)
    else:
        y = math.log(x, base[0])

    def log_differential(x_dot, *base_dot):
        if len(base) == 0:
            return x_dot / x
        log_base = math.log(base[0])
        if base_dot[0] is None:
            if x_dot is None:
                return None
            return x_dot / (x * log_base)
        if x_dot is None:
            return -base_dot[0] * (y / (base[0] * log_base))
        return x_dot / (x * log_base) - base_dot[0] * (y / (base[0] * log_base))

    return y, log_differential


@defvjp(math.log2)
def log2_vjp(x):
    return math.log2(x), lambda y_bar: (y_bar / (x * _LN2),)


@defjvp(math.log2)
def log2_jvp(x):
    return math.log2(x), lambda x_dot: x_dot / (x * _LN2)


@defvjp(math.log10)
def log10_vjp(x):
    return math.log10(x), lambda y_bar: (y_bar / (x * _LN10),)


@defjvp(math.log10)
def log10_jvp(x):
    return math.log10(x), lambda x_dot: x_dot / (x * _LN10)


@defvjp(math.log1p)
def log1p_vjp(x):
    return math.log1p(x), lambda y_bar: (y_bar / (1.0 + x),)


@defjvp(math.log1p)
def log1p_jvp(x):
    return math.log1p(x), lambda x_dot: x_dot / (1.0 + x)


@defvjp(math.sqrt)
def sqrt_vjp(x):
    y = math.sqrt(x)

    def sqrt_pullback(y_bar):
        if y == 0.0:
            return (y_bar * math.inf,)
        return (y_bar * (0.5 / y),)

    return y, sqrt_pullback


@defjvp(math.sqrt)
def sqrt_jvp(x):
    y = math.sqrt(x)

    def sqrt_differential(x_dot):
        if y == 0.0:
            return x_dot * math.inf
        return x_dot * (0.5 / y)

    return y, sqrt_differential


if hasattr(math, "cbrt"):  # Python 3.11+

    @defvjp(math.cbrt)
    def cbrt_vjp(x):
        y = math.cbrt(x)

        def cbrt_pullback(y_bar):
            if y == 0.0:
                return (y_bar * math.inf,)
            return (y_bar / (3.0 * y * y),)

        return y, cbrt_pullback

    @defjvp(math.cbrt)
    def cbrt_jvp(x):
        y = math.cbrt(x)

        def cbrt_differential(x_dot):
            if y == 0.0:
                return x_dot * math.inf
            return x_dot / (3.0 * y * y)

        return y, cbrt_differential

    mark_pure(math.cbrt)


# The conventions of operator.pow (JAX's): see rules/operator.py.
pow_vjp, pow_jvp = _pow_rules(math.pow)


@defvjp(math.ldexp)
def ldexp_vjp(x, i):
    # x * 2**i with an int exponent: linear in x.
    return math.ldexp(x, i), lambda y_bar: (y_bar * math.ldexp(1.0, i), None)


@defjvp(math.ldexp)
def ldexp_jvp(x, i):
    return math.ldexp(x, i), lambda x_dot, i_dot: x_dot * math.ldexp(1.0, i)


@defvjp(math.frexp)
def frexp_vjp(x):
    # (m, e) with x == m * 2**e: m is x * 2**-e, e is a piecewise-constant int.
    y = math.frexp(x)

    def frexp_pullback(y_bar):
        m_bar = y_bar[0]
        if m_bar is None:
            return (None,)
        return (m_bar * math.ldexp(1.0, -y[1]),)

    return y, frexp_pullback


@defjvp(math.frexp)
def frexp_jvp(x):
    y = math.frexp(x)
    return y, lambda x_dot: (x_dot * math.ldexp(1.0, -y[1]), None)


# --------------------------------------------------------------------------------------
# Absolute value, sign and remainders.
# --------------------------------------------------------------------------------------


@defvjp(math.fabs)
def fabs_vjp(x):
    sign = (x > 0) * 1.0 - (x < 0) * 1.0
    return math.fabs(x), lambda y_bar: (y_bar * sign,)


@defjvp(math.fabs)
def fabs_jvp(x):
    sign = (x > 0) * 1.0 - (x < 0) * 1.0
    return math.fabs(x), lambda x_dot: x_dot * sign


@defvjp(math.copysign)
def copysign_vjp(x, s):
    # |x| with the sign of s: slope +-1 in x (0 at x == 0), piecewise constant in s.
    y = math.copysign(x, s)
    slope = 0.0
    if x != 0:
        slope = y / x
    return y, lambda y_bar: (y_bar * slope, None)


@defjvp(math.copysign)
def copysign_jvp(x, s):
    y = math.copysign(x, s)
    slope = 0.0
    if x != 0:
        slope = y / x

    def copysign_differential(x_dot, s_dot):
        if x_dot is None:
            return None
        return x_dot * slope

    return y, copysign_differential


def _quotient(a: float, b: float, r: float) -> float:
    # The integer n with r == a - n * b, recovered from the remainder r.  Rounding
    # with // (no warning, piecewise constant) rather than round() or trunc(), which
    # warn when an active value flows through them.
    return ((a - r) / b + 0.5) // 1.0


nondifferentiable(_quotient, warn=False, pure=True)


def _remainder_rules(remainder):
    """The rules of ``fmod`` (``a - b * trunc(a / b)``) and ``remainder`` (``a - b * n``
    with ``n`` the nearest integer to ``a / b``): the quotient is piecewise constant.
    One body serves both; ``remainder`` is a closure constant the inliner reads."""

    def remainder_vjp(a, b):
        y = remainder(a, b)
        q = _quotient(a, b, y)
        return y, lambda y_bar: (y_bar, -y_bar * q)

    def remainder_jvp(a, b):
        y = remainder(a, b)
        q = _quotient(a, b, y)

        def remainder_differential(a_dot, b_dot):
            if b_dot is None:
                return a_dot
            if a_dot is None:
                return -b_dot * q
            return a_dot - b_dot * q

        return y, remainder_differential

    defrules(remainder, remainder_vjp, remainder_jvp)
    return remainder_vjp, remainder_jvp


fmod_vjp, fmod_jvp = _remainder_rules(math.fmod)
remainder_vjp, remainder_jvp = _remainder_rules(math.remainder)


@defvjp(math.modf)
def modf_vjp(x):
    # (fractional part, integral part): slope 1 and 0.
    return math.modf(x), lambda y_bar: (y_bar[0],)


@defjvp(math.modf)
def modf_jvp(x):
    return math.modf(x), lambda x_dot: (x_dot, None)


# --------------------------------------------------------------------------------------
# Special functions.
# --------------------------------------------------------------------------------------


@defvjp(math.erf)
def erf_vjp(x):
    return math.erf(x), lambda y_bar: (y_bar * (_TWO_OVER_SQRT_PI * math.exp(-x * x)),)


@defjvp(math.erf)
def erf_jvp(x):
    return math.erf(x), lambda x_dot: x_dot * (_TWO_OVER_SQRT_PI * math.exp(-x * x))


@defvjp(math.erfc)
def erfc_vjp(x):
    return math.erfc(x), lambda y_bar: (-y_bar * (_TWO_OVER_SQRT_PI * math.exp(-x * x)),)


@defjvp(math.erfc)
def erfc_jvp(x):
    return math.erfc(x), lambda x_dot: -x_dot * (_TWO_OVER_SQRT_PI * math.exp(-x * x))


# --------------------------------------------------------------------------------------
# Functions of several values: hypot(*xs), dist(p, q), fsum(xs), prod(xs).
# Sequence adjoints have the type (tuple or list) and length of the argument.
# --------------------------------------------------------------------------------------


@defvjp(math.hypot)
def hypot_vjp(*xs):
    y = math.hypot(*xs)

    def hypot_pullback(y_bar):
        if y == 0.0:
            return tuple(None for x in xs)
        return tuple(y_bar * (x / y) for x in xs)

    return y, hypot_pullback


@defjvp(math.hypot)
def hypot_jvp(*xs):
    y = math.hypot(*xs)

    def hypot_differential(*xs_dot):
        y_dot = None
        if y != 0.0:
            for i in range(len(xs)):
                if xs_dot[i] is not None:
                    if y_dot is None:
                        y_dot = xs_dot[i] * (xs[i] / y)
                    else:
                        y_dot = y_dot + xs_dot[i] * (xs[i] / y)
        return y_dot

    return y, hypot_differential


@defvjp(math.dist)
def dist_vjp(p, q):
    y = math.dist(p, q)

    def dist_pullback(y_bar):
        if y == 0.0:
            return None, None
        p_bar = [y_bar * ((p[i] - q[i]) / y) for i in range(len(p))]
        q_bar = [-y_bar * ((p[i] - q[i]) / y) for i in range(len(q))]
        if isinstance(p, tuple):
            p_bar = tuple(p_bar)
        if isinstance(q, tuple):
            q_bar = tuple(q_bar)
        return p_bar, q_bar

    return y, dist_pullback


@defjvp(math.dist)
def dist_jvp(p, q):
    y = math.dist(p, q)

    def dist_differential(p_dot, q_dot):
        y_dot = None
        if y != 0.0:
            for i in range(len(p)):
                if p_dot is not None and p_dot[i] is not None:
                    term = p_dot[i] * ((p[i] - q[i]) / y)
                    if y_dot is None:
                        y_dot = term
                    else:
                        y_dot = y_dot + term
                if q_dot is not None and q_dot[i] is not None:
                    term = q_dot[i] * ((q[i] - p[i]) / y)
                    if y_dot is None:
                        y_dot = term
                    else:
                        y_dot = y_dot + term
        return y_dot

    return y, dist_differential


@defvjp(math.fsum)
def fsum_vjp(xs):
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

    return y, fsum_pullback


@defjvp(math.fsum)
def fsum_jvp(xs):
    if not isinstance(xs, (list, tuple, numpy.ndarray)):
        xs = list(xs)
    y = math.fsum(xs)

    def fsum_differential(xs_dot):
        if isinstance(xs, numpy.ndarray):
            return _sum_to(xs_dot, (), _shape(xs))
        y_dot = None
        for x_dot in xs_dot:
            if x_dot is not None:
                if y_dot is None:
                    y_dot = x_dot
                else:
                    y_dot = y_dot + x_dot
        return y_dot

    return y, fsum_differential


@defvjp(math.prod)
def prod_vjp(xs, *, start=1):
    if not isinstance(start, int):
        raise TypeError("wengert: the derivative of math.prod does not support a float start=;"
                        " multiply the product by it instead")
    if isinstance(xs, numpy.ndarray):
        raise TypeError("wengert: the derivative of math.prod takes a list or tuple; "
                        "use numpy.prod for arrays")
    if not isinstance(xs, (list, tuple)):
        xs = list(xs)
    # Keyword-free for the default start: code that differentiates this again sees a
    # plain call.
    y = math.prod(xs) if start == 1 else math.prod(xs, start=start)

    def prod_pullback(y_bar):
        # The product of the other entries (not y / x, which fails at zeros).
        others = [start * math.prod(xs[:i]) * math.prod(xs[i + 1:]) for i in range(len(xs))]
        xs_bar = [y_bar * others[i] for i in range(len(xs))]
        if isinstance(xs, tuple):
            xs_bar = tuple(xs_bar)
        return (xs_bar,)

    return y, prod_pullback


@defjvp(math.prod)
def prod_jvp(xs, *, start=1):
    if not isinstance(start, int):
        raise TypeError("wengert: the derivative of math.prod does not support a float start=;"
                        " multiply the product by it instead")
    if isinstance(xs, numpy.ndarray):
        raise TypeError("wengert: the derivative of math.prod takes a list or tuple; "
                        "use numpy.prod for arrays")
    if not isinstance(xs, (list, tuple)):
        xs = list(xs)
    y = math.prod(xs) if start == 1 else math.prod(xs, start=start)

    def prod_differential(xs_dot):
        y_dot = None
        for i in range(len(xs)):
            if xs_dot[i] is not None:
                term = xs_dot[i] * (start * math.prod(xs[:i]) * math.prod(xs[i + 1:]))
                if y_dot is None:
                    y_dot = term
                else:
                    y_dot = y_dot + term
        return y_dot

    return y, prod_differential


mark_pure(
    math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2, math.sinh,
    math.cosh, math.tanh, math.asinh, math.acosh, math.atanh, math.exp, math.expm1, math.log,
    math.log2, math.log10, math.log1p, math.sqrt, math.pow, math.hypot, math.fabs, math.erf,
    math.erfc, math.copysign, math.fmod, math.remainder, math.modf, math.frexp, math.degrees,
    math.radians, math.ldexp, math.fsum, math.prod, math.dist,
)

# Piecewise constant with jumps: an active value flowing through them loses its
# derivative, which is worth a warning (Swift's "accidental data flow").
nondifferentiable(math.floor, math.ceil, math.trunc, warn=True, pure=True)
nondifferentiable(
    math.isnan, math.isinf, math.isfinite, math.isclose, math.factorial, math.gcd,
    math.comb, math.perm, math.isqrt, math.lcm, math.nextafter, math.ulp,
    warn=False, pure=True,
)
