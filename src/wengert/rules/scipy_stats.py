"""Rules of ``scipy.stats``: the densities, distribution functions and quantiles of its
distributions, as Python definitions wengert differentiates (in every mode and order).

Imported only once the user's code has imported SciPy (``registry._OPTIONAL``).

``st.norm.logpdf(x, mu, s)`` is ``rv_continuous.logpdf(st.norm, x, mu, s)`` once wengert has
read ``st.norm`` as a constant: one definition per method (``logpdf``, ``pdf``, ``cdf``,
``logcdf``, ``sf``, ``logsf``, ``ppf``; ``logpmf`` and ``pmf`` of the discrete ones) serves
every distribution, its ``isinstance`` tests of the constant distribution folding to the one
branch it takes. Each does what SciPy's method does: it takes the shapes (by position, or by
keyword under SciPy's names), ``loc`` and ``scale``; standardises ``x``; computes the
standard distribution's function with SciPy's own formula (in logs where SciPy's is), so
the values agree to rounding; and answers NaN where a parameter is invalid, ``-inf``, 0 or 1
off the support. Off the support the formula is evaluated at a point of the support and not
used, so that none of its NaNs or infinities reaches a derivative. ``multivariate_normal``
and ``dirichlet`` have their ``logpdf`` and ``pdf``.

Where SciPy's function has no closed-form derivative in a shape (``gammainc`` in ``a`` for
the gamma and chi-squared distribution functions and quantiles, ``betainc`` in ``a`` and
``b``, the Student t distribution function and quantiles in ``df``), differentiating that
shape is a :class:`~wengert.diagnostics.NonDifferentiableError`; ``x``, ``loc`` and
``scale`` are differentiated. A distribution without definitions here is SciPy's own code
(``_library``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc
import scipy.stats as st
from scipy.stats._continuous_distns import (
    beta_gen,
    cauchy_gen,
    chi2_gen,
    expon_gen,
    gamma_gen,
    laplace_gen,
    logistic_gen,
    lognorm_gen,
    norm_gen,
    t_gen,
    uniform_gen,
)
from scipy.stats._discrete_distns import bernoulli_gen, binom_gen, nbinom_gen, poisson_gen
from scipy.stats._distn_infrastructure import rv_continuous, rv_discrete
from scipy.stats._multivariate import (
    _dirichlet_check_input,
    _dirichlet_check_parameters,
    dirichlet_gen,
    multivariate_normal_gen,
)

from wengert.diagnostics import NonDifferentiableError, running_loc
from wengert.rules.form import cases, defderiv, kw
from wengert.rules.registry import defpython, library_copy, mark_check, nondifferentiable

_LOG_2PI = math.log(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * _LOG_2PI
_LOG_PI = math.log(math.pi)
_LOG_2 = math.log(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)

_CONTINUOUS = (norm_gen, t_gen, gamma_gen, beta_gen, expon_gen, laplace_gen, logistic_gen,
               cauchy_gen, lognorm_gen, chi2_gen, uniform_gen)
_DISCRETE = (poisson_gen, binom_gen, nbinom_gen, bernoulli_gen)


# ----------------------------------------------------------------------------- checks


def _check_keywords(dist: Any, method: str, other: dict) -> None:
    """SciPy's error for a keyword the distribution does not take."""
    if other:
        raise TypeError(f"scipy.stats.{dist.name}.{method}() got unexpected keyword "
                        f"arguments {', '.join(k + '=' for k in other)}")


def _check_shapes(dist: Any, n: int, npos: int, *named: Any) -> None:
    """SciPy's errors for a shape parameter not given, or given twice (by position and by
    name): ``named`` holds the first ``n`` shapes' keywords (``None``: not given)."""
    for i, given in enumerate(named[:n]):
        if i >= npos and given is None:
            raise TypeError(f"scipy.stats.{dist.name}: missing the shape parameters "
                            f"({dist.shapes}) as positional or keyword arguments")
        if i < npos and given is not None:
            raise TypeError(f"scipy.stats.{dist.name}: the shape parameter "
                            f"{dist.shapes.split(', ')[i]} is given twice")


nondifferentiable(_check_keywords, _check_shapes, pure=False)
mark_check(_check_keywords, _check_shapes)


def _valid(value: Any, ok: Any) -> Any:
    """``value``, NaN where the parameters are invalid (SciPy's ``badvalue``); a NumPy
    scalar, as SciPy returns, where it has no axes."""
    return np.where(ok, value, np.nan)[()]


# A distribution without a definition here is computed by SciPy's own method, called
# through a copy of it named after the distribution (``scipy.stats.weibull_min.logpdf``): on
# values not being differentiated it is a plain call, as it would be without the
# definitions; given a value being differentiated, wengert's refusal of SciPy's code names
# the distribution and the method, at the user's call.

_LIBRARY: dict[tuple[type, str], Any] = {}


def _library(dist: Any, method: str) -> Any:
    """SciPy's ``method`` of ``dist``'s class, as a function named after ``dist``."""
    key = (type(dist), method)
    f = _LIBRARY.get(key)
    if f is None:
        f = _LIBRARY[key] = library_copy(
            getattr(type(dist), method),
            f"scipy.stats.{getattr(dist, 'name', type(dist).__name__)}.{method}")
    return f


nondifferentiable(_library)


def _given(name, value):
    """``{name: value}``, or nothing where ``value`` is ``None`` (a keyword not given): a
    display, whose entries wengert follows (a dict filled in a loop would hold, as far as it
    can tell, the values being differentiated)."""
    return {} if value is None else {name: value}


# ------------------------------------------------------------------ the parameters


def _part(f: Any) -> Any:
    """A part of the definitions, inlined with them whatever its size: its ``isinstance``
    tests fold where it is inlined, and a call of it would not fold."""
    f.__wengert_inline__ = True
    return f


def _arg(args, i, given):
    """The ``i``-th positional argument after ``x``, else the keyword's value."""
    if len(args) > i:
        return args[i]
    return given


def _nshapes(self):
    """How many shape parameters the distribution takes (``self.numargs``, an attribute,
    does not fold)."""
    if isinstance(self, (beta_gen, binom_gen, nbinom_gen)) and \
            not isinstance(self, bernoulli_gen):
        return 2
    if isinstance(self, (t_gen, chi2_gen, gamma_gen, lognorm_gen, poisson_gen, bernoulli_gen)):
        return 1
    return 0


def _first_shape(self, df, a, s):
    """The first shape parameter given by keyword, under its SciPy name."""
    if isinstance(self, (t_gen, chi2_gen)):
        return df
    if isinstance(self, lognorm_gen):
        return s
    return a


@_part
def _shapes_ok(self, s1, s2, scale):
    """SciPy's check of the parameters (``_argcheck``, a positive scale)."""
    if isinstance(self, (t_gen, chi2_gen, gamma_gen, lognorm_gen)):
        return (s1 > 0) & (scale > 0)
    if isinstance(self, beta_gen):
        return (s1 > 0) & (s2 > 0) & (scale > 0)
    return scale > 0


# ------------------------------------------------- the standard distributions


def _inside(z, lo, hi):
    """Where ``z`` is in the closed support, and ``z`` there (a point inside elsewhere):
    what a formula is evaluated at, so that none of its NaNs or infinities outside the
    support reaches a derivative."""
    if hi is None:
        ok = z >= lo
        return ok, np.where(ok, z, lo + 1.0)
    ok = (z >= lo) & (z <= hi)
    return ok, np.where(ok, z, 0.5 * (lo + hi))


def _positive(z):
    """``z > 0``, and ``z`` there (1 elsewhere): the log-normal's ``log(z)``."""
    ok = z > 0.0
    return ok, np.where(ok, z, 1.0)


def _t_logpdf(z, df):
    # log Gamma((df + 1) / 2) - log Gamma(df / 2) - log(pi) / 2 is -betaln(df / 2, 1 / 2): no
    # difference of two large log-gammas where df is large.
    return -sc.betaln(0.5 * df, 0.5) - 0.5 * np.log(df) - 0.5 * (df + 1.0) * np.log1p(z * z / df)


@_part
def _logpdf(self, z, s1, s2):
    """The standard density's log at ``z``; ``-inf`` outside the support."""
    if isinstance(self, norm_gen):
        return -0.5 * z * z - _LOG_SQRT_2PI
    if isinstance(self, t_gen):
        return _t_logpdf(z, s1)
    if isinstance(self, logistic_gen):
        y = -np.abs(z)
        return y - 2.0 * np.log1p(np.exp(y))
    if isinstance(self, laplace_gen):
        return -np.abs(z) - _LOG_2
    if isinstance(self, cauchy_gen):
        return -_LOG_PI - np.log1p(z * z)
    if isinstance(self, gamma_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.xlogy(s1 - 1.0, zs) - zs - sc.gammaln(s1), -np.inf)
    if isinstance(self, chi2_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.xlogy(0.5 * s1 - 1.0, zs) - 0.5 * zs - sc.gammaln(0.5 * s1)
                        - _LOG_2 * s1 / 2.0, -np.inf)
    if isinstance(self, expon_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, -zs, -np.inf)
    if isinstance(self, lognorm_gen):
        ok, zs = _positive(z)  # (the density is 0 at 0)
        lz = np.log(zs)
        return np.where(ok, -lz * lz / (2.0 * s1 * s1) - np.log(s1 * zs * _SQRT_2PI), -np.inf)
    if isinstance(self, beta_gen):
        ok, zs = _inside(z, 0.0, 1.0)
        return np.where(ok, sc.xlog1py(s2 - 1.0, -zs) + sc.xlogy(s1 - 1.0, zs)
                        - sc.betaln(s1, s2), -np.inf)
    if isinstance(self, uniform_gen):
        ok, _ = _inside(z, 0.0, 1.0)
        return np.where(ok, 0.0, -np.inf)
    return None  # (a distribution of SciPy's own code: ``_library``)


@_part
def _cdf(self, z, s1, s2):
    """The standard distribution function at ``z``."""
    if isinstance(self, norm_gen):
        return sc.ndtr(z)
    if isinstance(self, t_gen):
        return _t_cdf(s1, z)
    if isinstance(self, logistic_gen):
        return sc.expit(z)
    if isinstance(self, laplace_gen):
        e = 0.5 * np.exp(-np.abs(z))
        return np.where(z > 0.0, 1.0 - e, e)
    if isinstance(self, cauchy_gen):
        return np.arctan2(1.0, -z) / np.pi
    if isinstance(self, gamma_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.gammainc(s1, zs), 0.0)
    if isinstance(self, chi2_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.gammainc(0.5 * s1, 0.5 * zs), 0.0)
    if isinstance(self, expon_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, -np.expm1(-zs), 0.0)
    if isinstance(self, lognorm_gen):
        ok, zs = _positive(z)
        return np.where(ok, sc.ndtr(np.log(zs) / s1), 0.0)
    if isinstance(self, beta_gen):
        ok, zs = _inside(z, 0.0, 1.0)
        return np.where(ok, sc.betainc(s1, s2, zs), np.where(z > 1.0, 1.0, 0.0))
    if isinstance(self, uniform_gen):
        ok, zs = _inside(z, 0.0, 1.0)
        return np.where(ok, zs, np.where(z > 1.0, 1.0, 0.0))
    return None


@_part
def _sf(self, z, s1, s2):
    """The standard survival function ``1 - cdf`` at ``z``, as SciPy computes it (not by
    subtracting, where a tail would lose its digits)."""
    if isinstance(self, norm_gen):
        return sc.ndtr(-z)
    if isinstance(self, t_gen):
        return _t_cdf(s1, -z)
    if isinstance(self, logistic_gen):
        return sc.expit(-z)
    if isinstance(self, laplace_gen):
        e = 0.5 * np.exp(-np.abs(z))
        return np.where(z < 0.0, 1.0 - e, e)
    if isinstance(self, cauchy_gen):
        return np.arctan2(1.0, z) / np.pi
    if isinstance(self, gamma_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.gammaincc(s1, zs), 1.0)
    if isinstance(self, chi2_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, sc.gammaincc(0.5 * s1, 0.5 * zs), 1.0)
    if isinstance(self, expon_gen):
        ok, zs = _inside(z, 0.0, None)
        return np.where(ok, np.exp(-zs), 1.0)
    if isinstance(self, lognorm_gen):
        ok, zs = _positive(z)
        return np.where(ok, sc.ndtr(-np.log(zs) / s1), 1.0)
    if isinstance(self, beta_gen):
        ok, zs = _inside(z, 0.0, 1.0)
        return np.where(ok, sc.betaincc(s1, s2, zs), np.where(z > 1.0, 0.0, 1.0))
    if isinstance(self, uniform_gen):
        ok, zs = _inside(z, 0.0, 1.0)
        return np.where(ok, 1.0 - zs, np.where(z > 1.0, 0.0, 1.0))
    return None


@_part
def _logcdf(self, z, s1, s2):
    """The log of the standard distribution function: SciPy's own where it has one (the
    far tail stays finite), else SciPy's default: the log of the function below the
    median, ``log1p`` of minus the survival function above it."""
    if isinstance(self, norm_gen):
        return sc.log_ndtr(z)
    if isinstance(self, logistic_gen):
        return sc.log_expit(z)
    if isinstance(self, lognorm_gen):
        ok, zs = _positive(z)
        return np.where(ok, sc.log_ndtr(np.log(zs) / s1), -np.inf)
    c = _cdf(self, z, s1, s2)
    return np.where(c < 0.5, np.log(c), np.log1p(-_sf(self, z, s1, s2)))


@_part
def _logsf(self, z, s1, s2):
    """The log of the standard survival function, as :func:`_logcdf`."""
    if isinstance(self, norm_gen):
        return sc.log_ndtr(-z)
    if isinstance(self, logistic_gen):
        return sc.log_expit(-z)
    if isinstance(self, lognorm_gen):
        ok, zs = _positive(z)
        return np.where(ok, sc.log_ndtr(-np.log(zs) / s1), 0.0)
    if isinstance(self, expon_gen):
        return -np.maximum(z, 0.0)
    c = _sf(self, z, s1, s2)
    return np.where(c < 0.5, np.log(c), np.log1p(-_cdf(self, z, s1, s2)))


@_part
def _ppf(self, u, s1, s2):
    """The standard quantile function at ``u`` in ``[0, 1]``."""
    if isinstance(self, norm_gen):
        return sc.ndtri(u)
    if isinstance(self, t_gen):
        # (``stdtrit(df, 0)`` is +inf: SciPy's ``ppf`` answers the lower bound there)
        return np.where(u == 0.0, -np.inf, _t_ppf(s1, u))
    if isinstance(self, logistic_gen):
        return sc.logit(u)
    if isinstance(self, laplace_gen):
        return np.where(u > 0.5, -np.log(2.0 * (1.0 - u)), np.log(2.0 * u))
    if isinstance(self, cauchy_gen):
        # SciPy's -1 / tan(pi w), w the nearer tail's probability (signed), in the tails;
        # near the median (u - 0.5 exact there) tan(pi (u - 0.5)), 0 at the median.
        w = np.where(u > 0.5, u - 1.0, u)
        tails = np.where(u == 1.0, np.inf, -1.0 / np.tan(np.pi * w))
        return np.where(np.abs(u - 0.5) <= 0.25, np.tan(np.pi * (u - 0.5)), tails)
    if isinstance(self, gamma_gen):
        return sc.gammaincinv(s1, u)
    if isinstance(self, chi2_gen):
        return 2.0 * sc.gammaincinv(0.5 * s1, u)
    if isinstance(self, expon_gen):
        return -np.log1p(-u)
    if isinstance(self, lognorm_gen):
        return np.exp(s1 * sc.ndtri(u))
    if isinstance(self, beta_gen):
        return sc.betaincinv(s1, s2, u)
    if isinstance(self, uniform_gen):
        return 1.0 * u
    return None


# The Student t distribution function and its inverse (SciPy's ``stdtr``, ``stdtrit``):
# their slopes in the data are the density and its reciprocal at the quantile; in ``df``
# they have no closed form.


def _t_cdf(df: Any, t: Any) -> Any:
    """``scipy.special.stdtr(df, t)``."""
    return sc.stdtr(df, t)


def _t_ppf(df: Any, u: Any) -> Any:
    """``scipy.special.stdtrit(df, u)``."""
    return sc.stdtrit(df, u)


def _no_slope(what: str, arg: str, value: Any) -> Any:
    """The slope of ``what`` in ``arg``, which has no closed form: a refusal when ``arg``
    is a float that is differentiated (an int has no slope)."""
    if np.result_type(value).kind not in "fc":
        return 0.0
    raise NonDifferentiableError(
        f"{what} has no closed-form derivative with respect to {arg}, which is "
        "differentiated here", running_loc(),
        hint=f"hold {arg} constant, or give the function a rule of your own with "
             "wengert.derivative")


nondifferentiable(_no_slope)

defderiv(_t_cdf, lambda df, t: _no_slope("the Student t distribution function", "df", df),
         lambda df, t: np.exp(_t_logpdf(t, df)), broadcast=True)
defderiv(_t_ppf, lambda df, u: _no_slope("the Student t quantile function", "df", df),
         lambda df, u, *, ans: np.exp(-_t_logpdf(ans, df)), broadcast=True)


# ------------------------------------------------------ the continuous methods

# Each takes SciPy's arguments: ``x`` (``q`` for ``ppf``), the shapes by position or by
# name, then ``loc`` and ``scale`` by position or by name (any other keyword is SciPy's
# TypeError).

_CONTINUOUS_KEYWORDS = ("loc", "scale", "df", "a", "b", "s", "**")


@_part
def _continuous(self, method, args, loc, scale, df, a, b, s, other):
    """The shapes, ``loc`` and ``scale`` of a call, and whether they are valid."""
    _check_keywords(self, method, other)
    n = _nshapes(self)
    named = _first_shape(self, df, a, s)
    _check_shapes(self, n, len(args), named, b)
    s1 = _arg(args, 0, named) if n > 0 else None
    s2 = _arg(args, 1, b) if n > 1 else None
    loc = _arg(args, n, loc)
    scale = _arg(args, n + 1, scale)
    return s1, s2, loc, scale, _shapes_ok(self, s1, s2, scale)


@defpython(rv_continuous.logpdf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_logpdf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                         **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "logpdf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "logpdf", args, loc, scale, df, a, b, s, other)
    return _valid(_logpdf(self, (x - loc) / scale, s1, s2) - np.log(scale), ok)


@defpython(rv_continuous.pdf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_pdf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                      **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "pdf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "pdf", args, loc, scale, df, a, b, s, other)
    return _valid(np.exp(_logpdf(self, (x - loc) / scale, s1, s2)) / scale, ok)


@defpython(rv_continuous.cdf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_cdf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                      **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "cdf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "cdf", args, loc, scale, df, a, b, s, other)
    return _valid(_cdf(self, (x - loc) / scale, s1, s2), ok)


@defpython(rv_continuous.logcdf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_logcdf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                         **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "logcdf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "logcdf", args, loc, scale, df, a, b, s, other)
    return _valid(_logcdf(self, (x - loc) / scale, s1, s2), ok)


@defpython(rv_continuous.sf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_sf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                     **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "sf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "sf", args, loc, scale, df, a, b, s, other)
    return _valid(_sf(self, (x - loc) / scale, s1, s2), ok)


@defpython(rv_continuous.logsf, keywords=("x", *_CONTINUOUS_KEYWORDS))
def rv_continuous_logsf(self, x, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                        **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "logsf")(
            self, x, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "logsf", args, loc, scale, df, a, b, s, other)
    return _valid(_logsf(self, (x - loc) / scale, s1, s2), ok)


@defpython(rv_continuous.ppf, keywords=("q", *_CONTINUOUS_KEYWORDS))
def rv_continuous_ppf(self, q, *args, loc=0.0, scale=1.0, df=None, a=None, b=None, s=None,
                      **other):
    if not isinstance(self, _CONTINUOUS):
        return _library(self, "ppf")(
            self, q, *args, loc=loc, scale=scale, **other, **_given("df", df),
            **_given("a", a), **_given("b", b), **_given("s", s))
    s1, s2, loc, scale, ok = _continuous(self, "ppf", args, loc, scale, df, a, b, s, other)
    # (NaN for a probability outside [0, 1], as SciPy)
    return _valid(_ppf(self, q, s1, s2) * scale + loc, ok & (q >= 0.0) & (q <= 1.0))


# -------------------------------------------------------- the discrete methods

_DISCRETE_KEYWORDS = ("loc", "mu", "n", "p", "**")


@_part
def _discrete(self, method, args, loc, mu, n, p, other):
    """The shapes and ``loc`` of a call, and whether the shapes are valid."""
    _check_keywords(self, method, other)
    k = _nshapes(self)
    if isinstance(self, poisson_gen):
        named1, named2 = mu, None
    elif isinstance(self, bernoulli_gen):
        named1, named2 = p, None
    else:
        named1, named2 = n, p
    _check_shapes(self, k, len(args), named1, named2)
    s1 = _arg(args, 0, named1)
    s2 = _arg(args, 1, named2) if k > 1 else None
    return s1, s2, _arg(args, k, loc), _pmf_ok(self, s1, s2)


@_part
def _pmf_ok(self, s1, s2):
    """SciPy's ``_argcheck`` of the shapes."""
    if isinstance(self, poisson_gen):
        return s1 >= 0
    if isinstance(self, bernoulli_gen):
        return (s1 >= 0) & (s1 <= 1)
    if isinstance(self, binom_gen):
        return (s1 >= 0) & (np.floor(s1) == s1) & (s2 >= 0) & (s2 <= 1)
    return (s1 > 0) & (s2 > 0) & (s2 <= 1)


@_part
def _logpmf(self, k, s1, s2):
    """The log of the probability of ``k``; ``-inf`` off the support (an integer from 0, up
    to ``n`` for the binomial, 1 for Bernoulli)."""
    if isinstance(self, bernoulli_gen):
        n, p = 1, s1
    elif isinstance(self, binom_gen):
        n, p = s1, s2
    else:
        n, p = None, s2
    on = (k >= 0) & (np.floor(k) == k)
    if n is not None:
        on = on & (k <= n)
    ks = np.where(on, k, 0)
    if isinstance(self, poisson_gen):
        v = sc.xlogy(ks, s1) - sc.gammaln(ks + 1) - s1
    elif isinstance(self, nbinom_gen):
        v = (sc.gammaln(s1 + ks) - sc.gammaln(ks + 1) - sc.gammaln(s1) + s1 * np.log(p)
             + sc.xlog1py(ks, -p))
    else:
        v = (sc.gammaln(n + 1) - (sc.gammaln(ks + 1) + sc.gammaln(n - ks + 1))
             + sc.xlogy(ks, p) + sc.xlog1py(n - ks, -p))
    return np.where(on, v, -np.inf)


@defpython(rv_discrete.logpmf, keywords=("k", *_DISCRETE_KEYWORDS))
def rv_discrete_logpmf(self, k, *args, loc=0, mu=None, n=None, p=None, **other):
    if not isinstance(self, _DISCRETE):
        return _library(self, "logpmf")(
            self, k, *args, loc=loc, **other, **_given("mu", mu), **_given("n", n),
            **_given("p", p))
    s1, s2, loc, ok = _discrete(self, "logpmf", args, loc, mu, n, p, other)
    return _valid(_logpmf(self, k - loc, s1, s2), ok)


@defpython(rv_discrete.pmf, keywords=("k", *_DISCRETE_KEYWORDS))
def rv_discrete_pmf(self, k, *args, loc=0, mu=None, n=None, p=None, **other):
    if not isinstance(self, _DISCRETE):
        return _library(self, "pmf")(
            self, k, *args, loc=loc, **other, **_given("mu", mu), **_given("n", n),
            **_given("p", p))
    s1, s2, loc, ok = _discrete(self, "pmf", args, loc, mu, n, p, other)
    return _valid(np.exp(_logpmf(self, k - loc, s1, s2)), ok)


# ----------------------------------------------------- the multivariate densities


def _check_dirichlet(alpha: Any, x: Any) -> None:
    """SciPy's checks of ``dirichlet``'s arguments (its errors, its words)."""
    _dirichlet_check_input(_dirichlet_check_parameters(alpha), x)


nondifferentiable(_check_dirichlet, pure=False)
mark_check(_check_dirichlet)


def _squeezed(out):
    """SciPy's ``_squeeze_output``: the array without its axes of length 1, a NumPy scalar
    where none is left."""
    out = np.squeeze(out)
    if np.ndim(out) == 0:
        out = out[()]
    return out


# The log-density of N(mean, cov) at the rows of x, with the Cholesky factor L of cov:
# -(d log(2 pi) + log det cov + |L^-1 (x - mean)|^2) / 2, log det cov = 2 sum log diag L.
# Like SciPy's (an eigendecomposition), it reads cov's lower triangle only. A covariance
# that is not positive definite is refused by the factorization (``allow_singular`` is not
# followed).
@defpython(multivariate_normal_gen.logpdf, keywords=("x", "mean", "cov", "allow_singular"))
def multivariate_normal_logpdf(self, x, mean=None, cov=1, allow_singular=False):
    cov = np.asarray(cov, dtype=float)
    if mean is None:
        dim = 1 if np.ndim(cov) < 2 else np.shape(cov)[0]
        mean = np.zeros(dim)
    else:
        mean = np.asarray(mean, dtype=float)
        dim = np.size(mean)
    if dim == 1:
        mean = np.reshape(mean, (1,))
        cov = np.reshape(cov, (1, 1))
    if np.ndim(cov) == 0:
        cov = cov * np.eye(dim)
    elif np.ndim(cov) == 1:
        cov = np.diag(cov)
    # (SciPy's quantiles: a point is a row; one number is a point of dimension 1)
    x = np.asarray(x, dtype=float)
    if np.ndim(x) == 0:
        x = np.reshape(x, (1,))
    elif np.ndim(x) == 1:
        x = np.reshape(x, (-1, 1)) if dim == 1 else np.reshape(x, (1, dim))
    low = np.linalg.cholesky(cov)
    dev = x - mean
    z = np.linalg.solve(low, np.reshape(dev, (-1, dim)).T)
    maha = np.reshape(np.sum(z * z, axis=0), np.shape(dev)[:-1])
    log_det = 2.0 * np.sum(np.log(np.diagonal(low)))
    return _squeezed(-0.5 * (dim * _LOG_2PI + log_det + maha))


@defpython(multivariate_normal_gen.pdf, keywords=("x", "mean", "cov", "allow_singular"))
def multivariate_normal_pdf(self, x, mean=None, cov=1, allow_singular=False):
    return np.exp(multivariate_normal_gen.logpdf(self, x, mean, cov, allow_singular))


# log Dir(x; alpha) = sum (alpha - 1) log x - log B(alpha), B(alpha) = prod Gamma(alpha_i) /
# Gamma(sum alpha_i); the components along x's first axis, the last one 1 minus the others'
# sum where x has one fewer than alpha.
@defpython(dirichlet_gen.logpdf, keywords=("x", "alpha"))
def dirichlet_logpdf(self, x, alpha):
    _check_dirichlet(alpha, x)
    alpha = np.asarray(alpha)
    x = np.asarray(x)
    if np.shape(x)[0] != np.shape(alpha)[0]:
        # (expand_dims: a NumPy scalar indexed by np.newaxis has no adjoint in wengert yet)
        x = np.concatenate([x, np.expand_dims(1.0 - np.sum(x, 0), 0)])
    log_b = np.sum(sc.gammaln(alpha)) - sc.gammaln(np.sum(alpha))
    return _squeezed(-log_b + np.sum(sc.xlogy(alpha - 1, x.T).T, 0))


@defpython(dirichlet_gen.pdf, keywords=("x", "alpha"))
def dirichlet_pdf(self, x, alpha):
    return np.exp(dirichlet_gen.logpdf(self, x, alpha))


# ------------------------------------------------------------------------------ cases

_Z = np.array([-1.3, 0.2, 1.7])  # the real line
_X = np.array([0.3, 1.1, 2.4])  # positive
_U = np.array([0.15, 0.4, 0.8])  # inside (0, 1)

cases(_t_cdf, (3, 0.4), (4, _Z), (np.array([2, 3, 5]), -0.7))
cases(_t_ppf, (3, 0.3), (4, _U))

# The shapes by position are differentiated (SciPy's special functions' slopes in them);
# those of the distribution functions without a closed-form slope in them are ints or
# keywords (constants).
cases(rv_continuous.logpdf,
      (st.norm, _Z, 0.3, 1.4), (st.norm, 0.7, kw(loc=0.3, scale=1.4)),
      (st.t, _Z, 3.5, 0.2, 1.3), (st.t, _Z, kw(df=4.0)),
      (st.gamma, _X, 2.5, kw(scale=1.3)), (st.gamma, _X, kw(a=1.5)),
      (st.beta, _U, 2.5, 1.7), (st.beta, _U, kw(a=2.0, b=3.0, loc=-0.1, scale=1.3)),
      (st.expon, _X, 0.1, 2.0), (st.laplace, _Z, 0.3, 1.2), (st.logistic, _Z, 0.3, 1.2),
      (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6, kw(scale=1.5)),
      (st.lognorm, _X, kw(s=0.6)), (st.chi2, _X, 3.5), (st.chi2, _X, kw(df=4.0, scale=0.5)),
      (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.pdf,
      (st.norm, _Z, 0.3, 1.4), (st.t, _Z, 3.5, kw(loc=0.2)), (st.gamma, _X, 2.5, 0.1, 1.3),
      (st.beta, _U, 2.5, 1.7), (st.expon, _X, kw(scale=2.0)), (st.laplace, _Z, 0.3, 1.2),
      (st.logistic, _Z, 0.3, 1.2), (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6),
      (st.chi2, _X, 3.5, kw(loc=0.1)), (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.cdf,
      (st.norm, _Z, 0.3, 1.4), (st.t, _Z, 3, 0.2, 1.3), (st.t, _Z, kw(df=4.5)),
      (st.gamma, _X, 2, 0.1, 1.3), (st.beta, _U, 2, 3), (st.beta, _U, kw(a=2.5, b=1.5)),
      (st.expon, _X, 0.1, 2.0), (st.laplace, _Z, 0.3, 1.2), (st.logistic, _Z, 0.3, 1.2),
      (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6, kw(scale=1.5)),
      (st.chi2, _X, kw(df=3)), (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.logcdf,
      (st.norm, _Z, 0.3, 1.4), (st.t, _Z, 3, 0.2, 1.3), (st.gamma, _X, 2, 0.1, 1.3),
      (st.beta, _U, 2, 3), (st.expon, _X, 0.1, 2.0), (st.laplace, _Z, 0.3, 1.2),
      (st.logistic, _Z, 0.3, 1.2), (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6),
      (st.chi2, _X, kw(df=3.5)), (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.sf,
      (st.norm, _Z, 0.3, 1.4), (st.t, _Z, 3, 0.2, 1.3), (st.gamma, _X, 2, 0.1, 1.3),
      (st.beta, _U, 2, 3), (st.expon, _X, 0.1, 2.0), (st.laplace, _Z, 0.3, 1.2),
      (st.logistic, _Z, 0.3, 1.2), (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6),
      (st.chi2, _X, kw(df=3, loc=0.2, scale=0.5)), (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.logsf,
      (st.norm, _Z, 0.3, 1.4), (st.t, _Z, 3, 0.2, 1.3), (st.gamma, _X, 2, 0.1, 1.3),
      (st.beta, _U, 2, 3), (st.expon, _X, 0.1, 2.0), (st.laplace, _Z, 0.3, 1.2),
      (st.logistic, _Z, 0.3, 1.2), (st.cauchy, _Z, 0.3, 1.2), (st.lognorm, _X, 0.6),
      (st.chi2, _X, kw(df=3)), (st.uniform, _U, -0.5, 2.0))
cases(rv_continuous.ppf,
      (st.norm, _U, 0.3, 1.4), (st.t, _U, 3, 0.2, 1.3), (st.gamma, _U, 2, 0.1, 1.3),
      (st.beta, _U, 2, 3), (st.expon, _U, 0.1, 2.0), (st.laplace, _U, 0.3, 1.2),
      (st.logistic, _U, 0.3, 1.2), (st.cauchy, np.array([0.1, 0.45, 0.9]), 0.3, 1.2),
      (st.lognorm, _U, 0.6, kw(scale=1.5)), (st.chi2, _U, kw(df=3)), (st.uniform, _U, -0.5, 2.0))

_K = np.array([0, 2, 5])
cases(rv_discrete.logpmf,
      (st.poisson, _K, 3.2), (st.poisson, _K, kw(mu=1.5, loc=-1)), (st.binom, _K, 8, 0.35),
      (st.binom, _K, kw(n=6, p=0.6)), (st.nbinom, _K, 4.5, 0.4), (st.nbinom, _K, kw(n=3, p=0.7)),
      (st.bernoulli, np.array([0, 1, 1]), 0.3))
cases(rv_discrete.pmf,
      (st.poisson, _K, 3.2), (st.binom, _K, 8, 0.35), (st.nbinom, _K, 4.5, 0.4),
      (st.bernoulli, np.array([0, 1, 1]), kw(p=0.3)))

_MEAN = np.array([0.1, -0.2, 0.3])
_COV = np.array([[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.2]])
_XM = np.array([[0.5, -0.1, 0.9], [-1.2, 0.4, 0.3]])
cases(multivariate_normal_gen.logpdf,
      (st.multivariate_normal, _XM, _MEAN, _COV), (st.multivariate_normal, _XM[0], _MEAN, _COV),
      (st.multivariate_normal, _XM, kw(mean=_MEAN, cov=np.diag(_COV))),
      (st.multivariate_normal, _Z, 0.2, 1.5), (st.multivariate_normal, _XM, _MEAN, 1.3))
cases(multivariate_normal_gen.pdf,
      (st.multivariate_normal, _XM, _MEAN, _COV), (st.multivariate_normal, 0.4, 0.2, 1.5))
_ALPHA = np.array([1.5, 2.0, 3.5])
_XD = np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]])  # two points, in columns
# (SciPy refuses a point off the simplex, where central differences of every component
# go: a point differentiated is given by its first components, the last one implied)
cases(dirichlet_gen.logpdf,
      (st.dirichlet, _XD[:2, 0], _ALPHA), (st.dirichlet, _XD[:2], _ALPHA),
      (st.dirichlet, kw(x=_XD, alpha=_ALPHA)), (st.dirichlet, kw(x=_XD[:, 1], alpha=_ALPHA)))
cases(dirichlet_gen.pdf,
      (st.dirichlet, _XD[:2, 0], _ALPHA), (st.dirichlet, kw(x=_XD, alpha=_ALPHA)))
