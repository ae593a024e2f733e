"""Rules of ``scipy.special``: the special functions of log-likelihoods and physics.

Imported only once the user's code has imported SciPy (``registry._OPTIONAL``): ``import
wengert`` never imports SciPy. Each partial derivative is written with functions that have
rules in turn (``gammaln``' is ``digamma``, whose is ``polygamma(1, .)``), so every rule
differentiates again, to any order.

The ufuncs are primitives declared by their partials (:func:`~wengert.rules.form.defderiv`,
``broadcast=True`` for those of several arguments). The functions SciPy writes in Python
over NumPy (``logsumexp``, ``softmax``, ``log_softmax``, ``multigammaln``) have Python
definitions (:func:`~wengert.rules.registry.defpython`) that wengert inlines and
differentiates like a user's helper, in every mode and to any order.

Where a derivative has no closed form (the order ``v`` of the Bessel functions ``iv``,
``ive``, ``jv``, ``yv``, ``kv``, ``kve``; ``a`` and ``b`` of ``betainc``, ``betaincc`` and
``betaincinv``; ``a`` of ``gammainc``, ``gammaincc`` and their inverses; the exponent ``x`` of
``zeta``) the partial is a refusal (:func:`_no_closed_form`). The code wengert generates
evaluates a partial only for an argument that carries a derivative, so an order that is an
int or a constant (a float the variables differentiated do not reach) costs nothing; a float
one that does is a :class:`~wengert.diagnostics.NonDifferentiableError` at the user's call.
(A rule called directly, as the rule harness calls it, reads a slope 0 for an int order.)
The polygamma order ``n`` and ``yn``'s are ints: a float one differentiated is refused too.

Conventions where SciPy's function has a special value: ``xlogy(0, y)`` and
``xlog1py(0, y)`` are 0 for every ``y``, so their slope in ``y`` is 0 where ``x == 0`` (also
at ``y == 0``, where ``x / y`` would be NaN); their slope in ``x`` is ``log(y)``
(``log1p(y)``), ``-inf`` at ``y == 0`` (``y == -1``). ``entr``, ``rel_entr`` and ``kl_div``
have the slopes of their formulas (``-inf`` in ``x`` at ``x == 0``). ``i0e``, ``i1e`` and
``ive`` (scaled by ``exp(-|x|)``) take ``|x|``'s slope 0 at 0. ``logsumexp``'s zero weights
(``b == 0``) take their terms out whatever ``a`` is there, as SciPy does; where the term is
finite (its exponent below 700) its slope in ``b`` is kept.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc

from wengert.diagnostics import NonDifferentiableError, running_loc
from wengert.rules.form import cases, defderiv, kw
from wengert.rules.registry import defpython, mark_check, nondifferentiable

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_RAD_PER_DEG = math.pi / 180.0
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


# ----------------------------------------------------------------------------- helpers


def _no_closed_form(name: str, arg: str, value: Any) -> Any:
    """The partial of ``scipy.special.<name>`` with respect to its argument ``arg``, which
    has no closed form: a refusal when ``value`` is a float (an int order has no derivative,
    and its slope 0 is what a rule called directly reads of it)."""
    if np.result_type(value).kind not in "fc":
        return 0.0
    raise NonDifferentiableError(
        f"scipy.special.{name} has no closed-form derivative with respect to its argument "
        f"{arg!r}, which is differentiated here", running_loc(),
        hint=f"hold {arg!r} constant (an int, or a value that does not depend on the "
             "variables differentiated), or give the function a rule of your own with "
             "wengert.derivative")


def _both_zero(x: Any, y: Any) -> Any:
    """1 where ``x`` and ``y`` are both 0, else 0, in ``y``'s floating dtype: added to the
    denominator ``y`` of ``x / y`` it makes the slope 0 where ``xlogy(0, y)`` is 0."""
    both = np.logical_and(np.equal(x, 0), np.equal(y, 0))
    return np.asarray(both, dtype=np.result_type(y, 1.0))[()]


nondifferentiable(_no_closed_form, _both_zero)


# --------------------------------------------------------- gamma, beta and friends

defderiv(sc.gammaln, lambda x: sc.digamma(x))
defderiv(sc.gamma, lambda x, *, ans: ans * sc.digamma(x))
defderiv(sc.rgamma, lambda x, *, ans: -ans * sc.digamma(x))
# (sc.psi is sc.digamma: one object, one rule)
defderiv(sc.digamma, lambda x: sc.polygamma(1, x))
# The order n is an int (a float one being differentiated is refused, never a zero slope).
defderiv(sc.polygamma, lambda n, x: _no_closed_form("polygamma", "n", n),
         lambda n, x: sc.polygamma(n + 1, x), broadcast=True)
defderiv(sc.beta, lambda a, b, *, ans: ans * (sc.digamma(a) - sc.digamma(a + b)),
         lambda a, b, *, ans: ans * (sc.digamma(b) - sc.digamma(a + b)), broadcast=True)
defderiv(sc.betaln, lambda a, b: sc.digamma(a) - sc.digamma(a + b),
         lambda a, b: sc.digamma(b) - sc.digamma(a + b), broadcast=True)
# The regularized incomplete beta function I_x(a, b): its slope in x is the Beta(a, b)
# density x^(a-1) (1-x)^(b-1) / B(a, b), in logs (xlogy: the power 0 of 0 is 1); its
# slopes in a and b have no closed form.
defderiv(sc.betainc,
         lambda a, b, x: _no_closed_form("betainc", "a", a),
         lambda a, b, x: _no_closed_form("betainc", "b", b),
         lambda a, b, x: np.exp(sc.xlogy(a - 1.0, x) + sc.xlog1py(b - 1.0, -x)
                                - sc.betaln(a, b)),
         broadcast=True)
defderiv(sc.betaincc,
         lambda a, b, x: _no_closed_form("betaincc", "a", a),
         lambda a, b, x: _no_closed_form("betaincc", "b", b),
         lambda a, b, x: -np.exp(sc.xlogy(a - 1.0, x) + sc.xlog1py(b - 1.0, -x)
                                 - sc.betaln(a, b)),
         broadcast=True)
# The inverse in y of I_x(a, b): one over the density at the result.
defderiv(sc.betaincinv,
         lambda a, b, y: _no_closed_form("betaincinv", "a", a),
         lambda a, b, y: _no_closed_form("betaincinv", "b", b),
         lambda a, b, y, *, ans: np.exp(sc.betaln(a, b) - sc.xlogy(a - 1.0, ans)
                                        - sc.xlog1py(b - 1.0, -ans)),
         broadcast=True)
# The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x): slope
# +-x^(a-1) e^(-x) / Gamma(a) in x (the Gamma(a) density), none in closed form in a.
defderiv(sc.gammainc,
         lambda a, x: _no_closed_form("gammainc", "a", a),
         lambda a, x: np.exp(sc.xlogy(a - 1.0, x) - x - sc.gammaln(a)),
         broadcast=True)
defderiv(sc.gammaincc,
         lambda a, x: _no_closed_form("gammaincc", "a", a),
         lambda a, x: -np.exp(sc.xlogy(a - 1.0, x) - x - sc.gammaln(a)),
         broadcast=True)
defderiv(sc.gammaincinv,
         lambda a, y: _no_closed_form("gammaincinv", "a", a),
         lambda a, y, *, ans: np.exp(ans - sc.xlogy(a - 1.0, ans) + sc.gammaln(a)),
         broadcast=True)
defderiv(sc.gammainccinv,
         lambda a, y: _no_closed_form("gammainccinv", "a", a),
         lambda a, y, *, ans: -np.exp(ans - sc.xlogy(a - 1.0, ans) + sc.gammaln(a)),
         broadcast=True)


def _check_multigammaln(a: Any, d: Any) -> None:
    """SciPy's checks of ``multigammaln``'s arguments (its errors, its words)."""
    d = np.asarray(d)[()]
    if not np.isscalar(d) or (np.floor(d) != d):
        raise ValueError("d should be a positive integer (dimension)")
    if np.any(np.asarray(a) <= 0.5 * (d - 1)):
        raise ValueError(f"condition a ({a}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")


def _multigammaln_const(d: Any) -> tuple[float, int]:
    """The constant term d (d - 1) / 4 log(pi) of ``multigammaln``, and ``d`` as an int."""
    d = int(d)
    return (d * (d - 1) * 0.25) * math.log(math.pi), d


nondifferentiable(_check_multigammaln, _multigammaln_const)
mark_check(_check_multigammaln)


# log Gamma_d(a) = d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j = 0 .. d - 1.
@defpython(sc.multigammaln)
def multigammaln_(a, d):
    _check_multigammaln(a, d)
    res, n = _multigammaln_const(d)
    a = np.asarray(a)
    total = sc.gammaln(a)
    for j in range(1, n):
        total = total + sc.gammaln(a - 0.5 * j)
    return res + total


# ------------------------------------------------------------- error functions

defderiv(sc.erf, lambda x: _TWO_OVER_SQRT_PI * np.exp(-x * x))
defderiv(sc.erfc, lambda x: -_TWO_OVER_SQRT_PI * np.exp(-x * x))
# The scaled complement erfcx(x) = exp(x^2) erfc(x).
defderiv(sc.erfcx, lambda x, *, ans: 2.0 * x * ans - _TWO_OVER_SQRT_PI)
# The inverses: one over the slope of erf (erfc) at the result.
defderiv(sc.erfinv, lambda x, *, ans: _SQRT_PI_OVER_TWO * np.exp(ans * ans))
defderiv(sc.erfcinv, lambda x, *, ans: -_SQRT_PI_OVER_TWO * np.exp(ans * ans))
# The standard normal distribution function, its log and its inverse.
defderiv(sc.ndtr, lambda x: _INV_SQRT_2PI * np.exp(-0.5 * x * x))
# (the normal density over ndtr, in logs: finite far into the left tail)
defderiv(sc.log_ndtr, lambda x, *, ans: _INV_SQRT_2PI * np.exp(-0.5 * x * x - ans))
defderiv(sc.ndtri, lambda y, *, ans: _SQRT_2PI * np.exp(0.5 * ans * ans))


# ---------------------------------------------------------- logistic functions

defderiv(sc.expit, lambda x, *, ans: ans * (1.0 - ans))
defderiv(sc.logit, lambda x: np.divide(1.0, x * (1.0 - x)))
# log(expit(x)) has the slope 1 - expit(x) = expit(-x), accurate in both tails.
defderiv(sc.log_expit, lambda x: sc.expit(-x))
defderiv(sc.softplus, lambda x: sc.expit(x))


def _shift(a: Any, axis: Any) -> Any:
    """The largest entry of ``a`` along ``axis`` (kept), 0 where it is not finite: what
    ``logsumexp`` and ``log_softmax`` subtract before exponentiating (a constant: the
    result does not depend on it)."""
    m = np.max(a, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, 0.0)


def _max_kept(x: Any, axis: Any) -> Any:
    """``np.max(x, axis=axis, keepdims=True)``: ``softmax``'s shift (SciPy's, unguarded)."""
    return np.max(x, axis=axis, keepdims=True)


def _softmax_shift(x: Any, axis: Any) -> Any:
    """``log_softmax``'s shift, as SciPy computes it (a NumPy scalar for a 0-d ``x``)."""
    x_max = np.max(x, axis=axis, keepdims=True)
    if x_max.ndim > 0:
        return np.where(np.isfinite(x_max), x_max, 0)
    return x_max if np.isfinite(x_max) else 0


def _lse_float(a: Any, b: Any) -> Any:
    """The floating dtype ``logsumexp`` computes in: that of ``a`` and ``b`` promoted
    (ints as float64)."""
    return np.result_type(a, 1.0) if b is None else np.result_type(a, b, 1.0)


def _lse_shape(a: Any, b: Any) -> tuple[int, ...]:
    """The shape ``logsumexp`` works in: ``a``'s and ``b``'s broadcast, at least 1-d."""
    shape = np.shape(a) if b is None else np.broadcast_shapes(np.shape(a), np.shape(b))
    return shape if shape else (1,)


def _lse_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` of ``logsumexp`` as a tuple of axes (all of them for ``None``)."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def _lse_dropped(a: Any, b: Any, t: Any) -> Any:
    """Where ``logsumexp`` leaves a term out, its weight ``b`` being 0: where its exponent
    ``t`` is not below 700 (it would overflow; ``inf``, NaN), as SciPy ignores any ``a``
    where ``b == 0``. Elsewhere a term of weight 0 adds 0 and keeps its slope in ``b``."""
    return np.logical_and(np.equal(b, 0), np.logical_not(np.less(t, 700.0)))


def _lse_masked(a: Any, b: Any) -> Any:
    """``a`` with ``-inf`` where ``b == 0``: what the shift is taken of."""
    return np.where(np.equal(b, 0), -np.inf, a)


def _sign(s: Any) -> Any:
    """``np.sign(s)`` (the sign ``logsumexp`` returns)."""
    return np.sign(s)


def _negative(s: Any) -> Any:
    """Where ``s < 0``: a sum of exponentials whose log ``logsumexp`` makes NaN."""
    return np.less(s, 0)


def _log_abs(s: Any) -> Any:
    """``log(|s|)``, ``-inf`` at 0 without a warning (SciPy's ``logsumexp`` warns of none)."""
    with np.errstate(divide="ignore"):
        return np.log(np.abs(s))


# (d log|s| / ds = 1 / s, for either sign)
defderiv(_log_abs, lambda s: np.divide(1.0, s))


nondifferentiable(_shift, _max_kept, _softmax_shift, _lse_float, _lse_shape, _lse_axes,
                  _lse_dropped, _lse_masked, _sign, _negative)


@defpython(sc.logsumexp, keywords=("axis", "b", "keepdims", "return_sign"))
def logsumexp_(a, axis=None, b=None, keepdims=False, return_sign=False):
    # (SciPy's steps: a and b promoted to floats and broadcast, at least 1-d; the largest
    # exponent taken out; a negative sum NaN unless its sign is asked for)
    a = np.asarray(a)
    if b is not None:
        b = np.asarray(b)
    dtype = _lse_float(a, b)
    shape = _lse_shape(a, b)
    a = np.broadcast_to(np.asarray(a, dtype=dtype), shape)
    axes = _lse_axes(axis, len(shape))
    if b is None:
        m = _shift(a, axes)
        s = np.sum(np.exp(a - m), axis=axes, keepdims=True)
    else:
        b = np.broadcast_to(np.asarray(b, dtype=dtype), shape)
        m = _shift(_lse_masked(a, b), axes)
        t = a - m
        t = np.where(_lse_dropped(a, b, t), -np.inf, t)
        s = np.sum(b * np.exp(t), axis=axes, keepdims=True)
    out = _log_abs(s) + m
    if return_sign:
        sgn = _sign(s)
    else:
        out = np.where(_negative(s), np.nan, out)
    if not keepdims:
        out = np.squeeze(out, axis=axes)
        if return_sign:
            sgn = np.squeeze(sgn, axis=axes)
    if np.ndim(out) == 0:
        out = out[()]
        if return_sign:
            sgn = sgn[()]
    if return_sign:
        return out, sgn
    return out


@defpython(sc.softmax, keywords=("axis",))
def softmax_(x, axis=None):
    x = np.asarray(x)
    e = np.exp(x - _max_kept(x, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


@defpython(sc.log_softmax, keywords=("axis",))
def log_softmax_(x, axis=None):
    x = np.asarray(x)
    tmp = x - _softmax_shift(x, axis)
    return tmp - np.log(np.sum(np.exp(tmp), axis=axis, keepdims=True))


# -------------------------------------------------- x log y and the entropies

# xlogy(0, y) is 0 for every y: its slope in y is 0 there (1 / y's denominator is made 1
# where x and y are both 0, where x / y is NaN).
defderiv(sc.xlogy, lambda x, y: np.log(y),
         lambda x, y: x / (y + _both_zero(x, y)), broadcast=True)
defderiv(sc.xlog1py, lambda x, y: np.log1p(y),
         lambda x, y: x / (1.0 + y + _both_zero(x, 1.0 + y)), broadcast=True)
# -x log x; x log(x / y); x log(x / y) - x + y.
defderiv(sc.entr, lambda x: -np.log(x) - 1.0)
defderiv(sc.rel_entr, lambda x, y: np.log(np.divide(x, y)) + 1.0,
         lambda x, y: -np.divide(x, y), broadcast=True)
defderiv(sc.kl_div, lambda x, y: np.log(np.divide(x, y)), lambda x, y: 1.0 - np.divide(x, y),
         broadcast=True)


# -------------------------------------------------------------- Bessel functions

# Modified, first kind: I0' = I1, I1' = (I0 + I2) / 2 (valid at 0, unlike I0 - I1 / x),
# Iv' = (I(v-1) + I(v+1)) / 2. The scaled ones are I * exp(-|x|): minus sign(x) times
# themselves.
defderiv(sc.i0, lambda x: sc.i1(x))
defderiv(sc.i1, lambda x: 0.5 * (sc.i0(x) + sc.iv(2, x)))
defderiv(sc.i0e, lambda x, *, ans: sc.i1e(x) - np.sign(x) * ans)
defderiv(sc.i1e, lambda x, *, ans: 0.5 * (sc.i0e(x) + sc.ive(2, x)) - np.sign(x) * ans)
defderiv(sc.iv, lambda v, x: _no_closed_form("iv", "v", v),
         lambda v, x: 0.5 * (sc.iv(v - 1, x) + sc.iv(v + 1, x)), broadcast=True)
defderiv(sc.ive, lambda v, x: _no_closed_form("ive", "v", v),
         lambda v, x, *, ans: 0.5 * (sc.ive(v - 1, x) + sc.ive(v + 1, x)) - np.sign(x) * ans,
         broadcast=True)
# First kind: J0' = -J1, J1' = (J0 - J2) / 2, Jv' = (J(v-1) - J(v+1)) / 2; the second kind
# (Y) alike. (sc.jn is sc.jv.)
defderiv(sc.j0, lambda x: -sc.j1(x))
defderiv(sc.j1, lambda x: 0.5 * (sc.j0(x) - sc.jv(2, x)))
defderiv(sc.jv, lambda v, x: _no_closed_form("jv", "v", v),
         lambda v, x: 0.5 * (sc.jv(v - 1, x) - sc.jv(v + 1, x)), broadcast=True)
defderiv(sc.y0, lambda x: -sc.y1(x))
defderiv(sc.y1, lambda x: 0.5 * (sc.y0(x) - sc.yv(2, x)))
defderiv(sc.yv, lambda v, x: _no_closed_form("yv", "v", v),
         lambda v, x: 0.5 * (sc.yv(v - 1, x) - sc.yv(v + 1, x)), broadcast=True)
# (yn: an int order)
defderiv(sc.yn, lambda n, x: _no_closed_form("yn", "n", n),
         lambda n, x: 0.5 * (sc.yn(n - 1, x) - sc.yn(n + 1, x)), broadcast=True)
# Modified, second kind: K0' = -K1, K1' = -(K0 + K2) / 2, Kv' = -(K(v-1) + K(v+1)) / 2;
# the scaled ones are K * exp(x): plus themselves.
defderiv(sc.k0, lambda x: -sc.k1(x))
defderiv(sc.k1, lambda x: -0.5 * (sc.k0(x) + sc.kv(2, x)))
defderiv(sc.k0e, lambda x, *, ans: ans - sc.k1e(x))
defderiv(sc.k1e, lambda x, *, ans: ans - 0.5 * (sc.k0e(x) + sc.kve(2, x)))
defderiv(sc.kv, lambda v, x: _no_closed_form("kv", "v", v),
         lambda v, x: -0.5 * (sc.kv(v - 1, x) + sc.kv(v + 1, x)), broadcast=True)
defderiv(sc.kve, lambda v, x: _no_closed_form("kve", "v", v),
         lambda v, x, *, ans: ans - 0.5 * (sc.kve(v - 1, x) + sc.kve(v + 1, x)),
         broadcast=True)


# ------------------------------------------------------------------------ zeta

# The Hurwitz zeta function sum_k (k + q)^-x: slope -x zeta(x + 1, q) in q, none in closed
# form in x. (zeta(x) alone, the Riemann function, has q None: no slope in it.)
defderiv(sc.zeta, lambda x, q=None: _no_closed_form("zeta", "x", x),
         lambda x, q=None: -x * sc.zeta(x + 1, q))


# ------------------------------------------------- SciPy's own elementary functions

# (not NumPy's objects: each needs its rule)
defderiv(sc.expm1, lambda x, *, ans: ans + 1.0)
defderiv(sc.log1p, lambda x: np.divide(1.0, 1.0 + x))
defderiv(sc.exp2, lambda x, *, ans: ans * _LN2)
defderiv(sc.exp10, lambda x, *, ans: ans * _LN10)
defderiv(sc.cbrt, lambda x, *, ans: 1.0 / (3.0 * ans * ans))
# Trigonometric functions of degrees.
defderiv(sc.sindg, lambda x: _RAD_PER_DEG * sc.cosdg(x))
defderiv(sc.cosdg, lambda x: -_RAD_PER_DEG * sc.sindg(x))
defderiv(sc.tandg, lambda x, *, ans: _RAD_PER_DEG * (1.0 + ans * ans))
defderiv(sc.cotdg, lambda x, *, ans: -_RAD_PER_DEG * (1.0 + ans * ans))


# ------------------------------------------------------------------------------ cases

_X3 = np.array([0.5, 1.5, 2.5])
_X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -1.4]])
_P = np.array([[0.4, 1.3, 2.2], [0.9, 3.1, 0.6]])  # positive
_U = np.array([[0.15, 0.4, 0.8], [0.55, 0.3, 0.65]])  # inside (0, 1)
_ORDERS = np.array([[0, 1, 2], [3, 1, 0]])  # int orders

cases(sc.gammaln, (1.7,), (_X3,), (_P,), (-0.4,))
cases(sc.gamma, (1.7,), (_P,), (-0.4,))
cases(sc.rgamma, (1.7,), (_P,), (-0.4,))
cases(sc.digamma, (1.7,), (_X3,), (-0.4,))
cases(sc.polygamma, (1, 1.7), (2, _X3), (0, _P), (_ORDERS, _P))
cases(sc.beta, (1.7, 2.3), (_P, _P[::-1]), (_P, 0.8))
cases(sc.betaln, (1.7, 2.3), (_P, _P[::-1]), (0.8, _P))
# (a and b as ints: their slopes are not asked for)
cases(sc.betainc, (2, 3, 0.35), (1, 2, _U), (3, 2, 0.7))
cases(sc.betaincc, (2, 3, 0.35), (2, 1, _U))
cases(sc.betaincinv, (2, 3, 0.35), (2, 1, _U))
cases(sc.gammainc, (2, 1.3), (3, _P), (1, 0.4))
cases(sc.gammaincc, (2, 1.3), (3, _P))
cases(sc.gammaincinv, (2, 0.3), (3, _U))
cases(sc.gammainccinv, (2, 0.3), (3, _U))
cases(sc.multigammaln, (2.7, 3), (_P + 1.0, 2), (3.5, 1), (_X3 + 4.0, 4))
cases(sc.erf, (0.4,), (_X,))
cases(sc.erfc, (-0.4,), (_X,))
cases(sc.erfcx, (0.4,), (_X * 3.0,))
cases(sc.erfinv, (0.4,), (_U * 2.0 - 1.0,))
cases(sc.erfcinv, (0.4,), (_U * 2.0,))
cases(sc.ndtr, (0.4,), (_X * 3.0,))
cases(sc.log_ndtr, (0.4,), (_X * 3.0,), (-30.0,))
cases(sc.ndtri, (0.4,), (_U,))
cases(sc.expit, (0.3,), (_X3 - 1.0,), (_X * 10.0,))
cases(sc.logit, (0.3,), (_U,))
cases(sc.log_expit, (0.3,), (-40.0,), (_X * 10.0,))
cases(sc.softplus, (0.3,), (_X * 10.0,))
_B = np.array([[1.0, 0.5, 2.0], [0.3, 1.5, 0.7]])
_S = np.array([[1.0, -0.5, 2.0], [0.3, 1.5, -0.7]])  # weights of either sign
cases(_log_abs, (1.5,), (-0.7,), (_S,))
cases(sc.logsumexp, (_X,), (0.7,), (_X3,), (_X, kw(axis=0)), (_X, kw(axis=1, keepdims=True)),
      (_X, kw(axis=(0, 1), keepdims=True)), (_X, kw(axis=-1, b=_B)), (_X, kw(b=_B[0])),
      (_X, kw(b=np.array([[1.0, 0.0, 2.0], [0.0, 1.5, 0.7]]), axis=1)),
      (_X3, kw(b=_B, axis=1)), (_X * 10.0, kw(axis=0)), (_X, kw(b=_B, axis=0, keepdims=True)),
      (_X, 1, _B), (_X, kw(axis=1, b=_S, return_sign=True)),
      (_X, kw(b=-_B, return_sign=True)), (0.7, kw(return_sign=True)))
cases(sc.softmax, (_X,), (_X, kw(axis=0)), (_X, kw(axis=1)), (_X3,), (0.7,),
      (_X * 10.0, kw(axis=(0, 1))))
cases(sc.log_softmax, (_X,), (_X, kw(axis=0)), (_X, kw(axis=-1)), (_X3,), (0.7,),
      (_X * 10.0, kw(axis=1)))
cases(sc.xlogy, (1.3, 0.7), (_X, _P), (0.0, _P), (_X[0], 2.5), (2, _P))
cases(sc.xlog1py, (1.3, 0.7), (_X, _P), (0.0, _U - 0.5), (_X, -0.3))
cases(sc.entr, (0.7,), (_P,))
cases(sc.rel_entr, (0.7, 1.3), (_P, _P[::-1]), (_P, 0.8))
cases(sc.kl_div, (0.7, 1.3), (_P, _P[::-1]), (0.8, _P))
cases(sc.i0, (0.7,), (_X * 3.0,), (0.0,))
cases(sc.i1, (0.7,), (_X * 3.0,), (0.0,))
cases(sc.i0e, (0.7,), (_X * 3.0,))
cases(sc.i1e, (0.7,), (_X * 3.0,), (-2.5,))
cases(sc.iv, (1, 0.7), (2, _P * 3.0), (_ORDERS, _P), (0, -1.5))
cases(sc.ive, (1, 0.7), (2, _P * 3.0), (_ORDERS, _X * 3.0))
cases(sc.j0, (0.7,), (_X * 5.0,))
cases(sc.j1, (0.7,), (_X * 5.0,), (0.0,))
cases(sc.jv, (1, 0.7), (2, _P * 3.0), (_ORDERS, _X * 5.0))
cases(sc.y0, (0.7,), (_P * 3.0,))
cases(sc.y1, (0.7,), (_P * 3.0,))
cases(sc.yv, (1, 0.7), (2, _P * 3.0), (_ORDERS, _P * 2.0))
cases(sc.yn, (1, 0.7), (2, _P * 3.0), (_ORDERS, _P * 2.0))
cases(sc.k0, (0.7,), (_P * 3.0,))
cases(sc.k1, (0.7,), (_P * 3.0,))
cases(sc.k0e, (0.7,), (_P * 3.0,))
cases(sc.k1e, (0.7,), (_P * 3.0,))
cases(sc.kv, (1, 0.7), (2, _P * 3.0), (_ORDERS, _P))
cases(sc.kve, (1, 0.7), (2, _P * 3.0), (_ORDERS, _P))
# (x as an int: its slope is not asked for)
cases(sc.zeta, (2, 1.5), (3, _P + 0.5), (np.array([2, 3, 4]), _X3))
cases(sc.expm1, (0.4,), (_X,))
cases(sc.log1p, (0.4,), (_U - 0.5,))
cases(sc.exp2, (0.4,), (_X,))
cases(sc.exp10, (0.4,), (_X,))
cases(sc.cbrt, (0.4,), (_X,))
cases(sc.sindg, (40.0,), (_X * 90.0,))
cases(sc.cosdg, (40.0,), (_X * 90.0,))
cases(sc.tandg, (40.0,), (_X * 50.0,))
cases(sc.cotdg, (40.0,), (_P * 50.0,))
