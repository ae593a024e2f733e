"""Rules of ``scipy.linalg``, ``scipy.integrate`` and ``scipy.signal``: the dense linear
algebra of Gaussian processes and least squares, the quadrature rules over samples, and 1-D
convolution, as Python definitions over NumPy that wengert inlines and differentiates like a
user's helper (every mode, every order).

Imported only once the user's code has imported SciPy (``registry._OPTIONAL``).

Each definition reads what SciPy's function reads: ``solve_triangular`` and ``cho_solve``
only the triangle they are told of (and not the diagonal, under ``unit_diagonal``);
``cholesky``, ``cho_factor`` and ``solve``/``inv`` with ``assume_a`` ``'pos'``, ``'sym'`` or
``'her'`` only the upper (``lower=True``: the lower) triangle, the matrix being the
symmetric one made of it; ``'diagonal'``, ``'tridiagonal'`` and the triangular structures
only those entries. So a derivative in an entry SciPy ignores is 0, as central differences
of SciPy's function find. ``cho_factor``'s factor holds, in its other triangle, the input's
entries, as SciPy's does (LAPACK factors a copy in place).

Not followed: ``solve``'s ``assume_a='banded'``, refused (``NotImplementedError``); the
convolution and correlation of arrays that are not 1-D, complex or empty, computed by
SciPy's own function (a plain call where nothing is differentiated through it, refused at
the user's call where something is). Matrices are real
(``trans='C'`` is ``'T'``). The values agree with SciPy's to rounding: a triangular system
is solved by NumPy's LU, a convolution directly (a Toeplitz matrix of ``in2`` times
``in1``) where SciPy may use FFTs.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.integrate as si
import scipy.linalg as sl
import scipy.signal as ss

from wengert.rules.form import cases, kw
from wengert.rules.registry import defpython, library_copy, mark_check, nondifferentiable

# ----------------------------------------------------------------------------- helpers


def _check_finite(check: Any, *arrays: Any) -> None:
    """SciPy's ``check_finite``: its error for an infinity or a NaN."""
    if check:
        for a in arrays:
            if not np.all(np.isfinite(a)):
                raise ValueError("array must not contain infs or NaNs")


def _check_square(a: Any) -> None:
    """SciPy's error for a matrix that is not square."""
    if np.ndim(a) < 2 or np.shape(a)[-1] != np.shape(a)[-2]:
        raise ValueError("expected square matrix")


nondifferentiable(_check_finite, _check_square, pure=False)
mark_check(_check_finite, _check_square)


def _floats(a):
    """``a`` as an array of floats (ints made float64, as LAPACK takes them)."""
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        return a
    return np.asarray(a, dtype=np.float64)


def _mT(a):
    """The transpose of each matrix of ``a`` (its last two axes)."""
    return np.swapaxes(a, -1, -2)


def _symmetric(a, lower):
    """The symmetric matrix made of ``a``'s lower (``lower``) or upper triangle."""
    if lower:
        return np.tril(a) + _mT(np.tril(a, -1))
    return np.triu(a) + _mT(np.triu(a, 1))


def _inline(f: Any) -> Any:
    """A part of the definitions, inlined with them whatever its size: its tests of the
    constant options fold where it is inlined, and a call of it would not fold."""
    f.__wengert_inline__ = True
    return f


@_inline
def _structured(a, assume_a, lower):
    """The matrix SciPy's solver for the structure ``assume_a`` reads of ``a``."""
    if assume_a in (None, "general", "gen"):
        return a
    if assume_a in ("pos", "positive definite", "sym", "symmetric", "her", "hermitian"):
        return _symmetric(a, lower)
    if assume_a == "upper triangular":
        return np.triu(a)
    if assume_a == "lower triangular":
        return np.tril(a)
    if assume_a == "diagonal":
        return np.tril(np.triu(a))
    if assume_a == "tridiagonal":
        return np.tril(np.triu(a, -1), 1)
    raise ValueError(f"{assume_a} is not a recognized matrix structure")


# ------------------------------------------------------------------- scipy.linalg


@defpython(sl.solve_triangular,
           keywords=("trans", "lower", "unit_diagonal", "overwrite_b", "check_finite"))
def solve_triangular_(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                      check_finite=True):
    a = _floats(a)
    b = _floats(b)
    _check_finite(check_finite, a, b)
    _check_square(a)
    if unit_diagonal:
        t = np.tril(a, -1) if lower else np.triu(a, 1)
        t = t + np.eye(np.shape(a)[-1], dtype=t.dtype)
    else:
        t = np.tril(a) if lower else np.triu(a)
    if trans in (1, "T", 2, "C"):  # (real matrices: 'C' is 'T')
        t = _mT(t)
    elif trans not in (0, "N"):
        raise ValueError("Invalid 'trans' value.")
    return np.linalg.solve(t, b)


# SciPy's upper factor U (a = U^T U) is the transpose of NumPy's lower one, of the symmetric
# matrix made of a's upper triangle.
@defpython(sl.cholesky, keywords=("lower", "overwrite_a", "check_finite"))
def cholesky_(a, lower=False, overwrite_a=False, check_finite=True):
    a = _floats(a)
    _check_finite(check_finite, a)
    _check_square(a)
    low = np.linalg.cholesky(_symmetric(a, lower))
    if lower:
        return low
    return _mT(low)


@defpython(sl.cho_factor, keywords=("lower", "overwrite_a", "check_finite"))
def cho_factor_(a, lower=False, overwrite_a=False, check_finite=True):
    a = _floats(a)
    _check_finite(check_finite, a)
    _check_square(a)
    low = np.linalg.cholesky(_symmetric(a, lower))
    if lower:
        return low + np.triu(a, 1), lower
    return _mT(low) + np.tril(a, -1), lower


@defpython(sl.cho_solve, keywords=("overwrite_b", "check_finite"))
def cho_solve_(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    c = _floats(c)
    b = _floats(b)
    _check_finite(check_finite, c, b)
    _check_square(c)
    if lower:
        low = np.tril(c)
    else:
        low = _mT(np.triu(c))
    return np.linalg.solve(_mT(low), np.linalg.solve(low, b))


@defpython(sl.solve, keywords=("lower", "overwrite_a", "overwrite_b", "check_finite",
                               "assume_a", "transposed"))
def solve_(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
           assume_a=None, transposed=False):
    if assume_a == "banded":
        raise NotImplementedError("wengert does not follow scipy.linalg.solve with "
                                  "assume_a='banded': give it another structure")
    a = _floats(a)
    b = _floats(b)
    _check_finite(check_finite, a, b)
    _check_square(a)
    m = _structured(a, assume_a, lower)
    if transposed:
        m = _mT(m)
    return np.linalg.solve(m, b)


@defpython(sl.inv, keywords=("overwrite_a", "check_finite", "assume_a", "lower"))
def inv_(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    _check_inv_structure(assume_a)
    a = _floats(a)
    _check_finite(check_finite, a)
    _check_square(a)
    return np.linalg.inv(_structured(a, assume_a, lower))


def _check_inv_structure(assume_a):
    """SciPy's error for a structure ``inv`` does not take (a ``KeyError``)."""
    if assume_a not in (None, "general", "gen", "diagonal", "upper triangular",
                        "lower triangular", "pos", "sym", "her"):
        raise KeyError(assume_a)


nondifferentiable(_check_inv_structure, pure=False)
mark_check(_check_inv_structure)


@defpython(sl.det, keywords=("overwrite_a", "check_finite"))
def det_(a, overwrite_a=False, check_finite=True):
    a = _floats(a)
    _check_finite(check_finite, a)
    _check_square(a)
    return np.linalg.det(a)


# ---------------------------------------------------------------- scipy.integrate
# (each along the last axis, ``axis`` moved there and the result's axes moved back)


def _spacings(x, y, axis):
    """The spacings of the samples ``x`` along ``y``'s last axis (``axis`` of ``x``, where
    it has ``y``'s axes; ``x`` 1-D: along it)."""
    x = np.asarray(x)
    if np.ndim(x) == 1:
        return np.diff(x)
    return np.diff(np.moveaxis(np.broadcast_to(x, np.shape(y)), axis, -1), axis=-1)


@defpython(si.trapezoid, keywords=("x", "dx", "axis"))
def trapezoid_(y, x=None, dx=1.0, axis=-1):
    y = np.asarray(y)
    if y.dtype.kind not in "fc":
        y = np.asarray(y, dtype=np.float64)
    d = dx if x is None else _spacings(x, y, axis)
    t = np.moveaxis(y, axis, -1)
    return np.sum(d * (t[..., 1:] + t[..., :-1]) / 2.0, axis=-1)


@defpython(si.cumulative_trapezoid, keywords=("x", "dx", "axis", "initial"))
def cumulative_trapezoid_(y, x=None, dx=1.0, axis=-1, initial=None):
    y = np.asarray(y)
    _check_cumulative(y, axis, initial)
    d = dx if x is None else _spacings(x, y, axis)
    t = np.moveaxis(y, axis, -1)
    res = np.cumsum(d * (t[..., 1:] + t[..., :-1]) / 2.0, axis=-1)
    if initial is not None:
        res = np.concatenate([np.zeros((*np.shape(res)[:-1], 1), dtype=res.dtype), res],
                             axis=-1)
    return np.moveaxis(res, -1, axis)


def _check_cumulative(y, axis, initial):
    """SciPy's errors for ``cumulative_trapezoid``'s arguments."""
    if np.shape(y)[axis] == 0:
        raise ValueError("At least one point is required along `axis`.")
    if initial is not None:
        if initial != 0:
            raise ValueError("`initial` must be `None` or `0`.")
        if not np.isscalar(initial):
            raise ValueError("`initial` parameter should be a scalar.")


nondifferentiable(_check_cumulative, pure=False)
mark_check(_check_cumulative)


def _ratio(num, den):
    """``num / den``, 0 where ``den`` is 0 (SciPy's ``true_divide(.., where=den != 0)``)."""
    nonzero = den != 0
    return np.where(nonzero, num / np.where(nonzero, den, 1.0), 0.0)


def _basic_simpson(t, stop, h):
    """Simpson's rule over the intervals up to sample ``stop`` (even) of ``t``'s last axis:
    ``h`` the spacings (``None``: even, ``dx``)."""
    y0 = t[..., 0:stop:2]
    y1 = t[..., 1:stop + 1:2]
    y2 = t[..., 2:stop + 2:2]
    h0 = h[..., 0:stop:2]
    h1 = h[..., 1:stop + 1:2]
    hsum = h0 + h1
    hprod = h0 * h1
    h0divh1 = _ratio(h0, h1)
    tmp = hsum / 6.0 * (y0 * (2.0 - _ratio(1.0, h0divh1)) + y1 * (hsum * _ratio(hsum, hprod))
                        + y2 * (2.0 - h0divh1))
    return np.sum(tmp, axis=-1)


# SciPy's algorithm: Simpson's rule over pairs of intervals; for an even number of samples,
# over all but the last interval, and Cartwright's correction for the last one.
@defpython(si.simpson, keywords=("x", "dx", "axis"))
def simpson_(y, x=None, *, dx=1.0, axis=-1):
    y = np.asarray(y)
    n = np.shape(y)[axis]
    t = np.moveaxis(y, axis, -1)
    if x is None:
        if n % 2 == 1:
            return np.sum(t[..., 0:n - 2:2] + 4.0 * t[..., 1:n - 1:2] + t[..., 2:n:2],
                          axis=-1) * (dx / 3.0)
        if n == 2:
            return 0.5 * dx * (t[..., -1] + t[..., -2])
        result = np.sum(t[..., 0:n - 3:2] + 4.0 * t[..., 1:n - 2:2] + t[..., 2:n - 1:2],
                        axis=-1) * (dx / 3.0)
        # (float64, as SciPy's spacings are, whatever y's precision)
        alpha = np.float64((2 * dx ** 2 + 3 * dx * dx) / (6 * (dx + dx)))
        beta = np.float64((dx ** 2 + 3.0 * dx * dx) / (6 * dx))
        eta = np.float64(dx ** 3 / (6 * dx * (dx + dx)))
        return result + alpha * t[..., -1] + beta * t[..., -2] - eta * t[..., -3]
    h = _spacings(x, y, axis)
    if n % 2 == 1:
        return _basic_simpson(t, n - 2, h)
    if n == 2:
        return 0.5 * h[..., -1] * (t[..., -1] + t[..., -2])
    result = _basic_simpson(t, n - 3, h)
    h0 = h[..., -2]
    h1 = h[..., -1]
    alpha = _ratio(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _ratio(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _ratio(h1 ** 3, 6 * h0 * (h0 + h1))
    return result + alpha * t[..., -1] + beta * t[..., -2] - eta * t[..., -3]


# ------------------------------------------------------------------- scipy.signal


def _follows(in1, in2, mode):
    """SciPy's errors for ``convolve``'s arguments; then whether the definitions below
    follow the call (real, non-empty 1-D arrays). What they do not follow is SciPy's own
    code (:func:`_scipy_signal`): a plain call where nothing is differentiated through it,
    refused at the user's call where something is."""
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("full", "same", "valid"):
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    return bool(np.ndim(in1) == 1 and not np.iscomplexobj(in1) and
                not np.iscomplexobj(in2) and np.size(in1) > 0 and np.size(in2) > 0)


nondifferentiable(_follows)

_SIGNAL: dict[str, Any] = {}


def _scipy_signal(name):
    """SciPy's ``scipy.signal.<name>`` as a function of its own (the definitions replace the
    function itself), named as SciPy names it."""
    f = _SIGNAL.get(name)
    if f is None:
        f = _SIGNAL[name] = library_copy(getattr(ss, name), f"scipy.signal.{name}")
    return f


nondifferentiable(_scipy_signal)


def _toeplitz_index(n, m):
    """The index into ``concatenate([in2, [0]])`` of the matrix ``T`` with ``T @ in1`` the
    full convolution of ``in1`` (``n`` samples) and ``in2`` (``m``): ``T[k, j] = in2[k -
    j]``, 0 (the index ``m``) off ``in2``."""
    idx = np.arange(n + m - 1)[:, None] - np.arange(n)[None, :]
    return np.where((idx >= 0) & (idx < m), idx, m)


nondifferentiable(_toeplitz_index)


def _convolved(in1, in2, mode):
    """The convolution of the 1-D ``in1`` and ``in2`` in ``mode``, directly."""
    n = np.shape(in1)[0]
    m = np.shape(in2)[0]
    padded = np.concatenate([in2, np.zeros(1, dtype=in2.dtype)])
    full = padded[_toeplitz_index(n, m)] @ in1
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    return full[min(n, m) - 1:max(n, m)]


@defpython(ss.convolve, keywords=("mode", "method"))
def convolve_(in1, in2, mode="full", method="auto"):
    in1 = np.asarray(in1)
    in2 = np.asarray(in2)
    if _follows(in1, in2, mode):
        return _convolved(in1, in2, mode)
    return _scipy_signal("convolve")(in1, in2, mode, method)


@defpython(ss.correlate, keywords=("mode", "method"))
def correlate_(in1, in2, mode="full", method="auto"):
    in1 = np.asarray(in1)
    in2 = np.asarray(in2)
    if _follows(in1, in2, mode):
        return _convolved(in1, np.flip(in2), mode)
    return _scipy_signal("correlate")(in1, in2, mode, method)


@defpython(ss.fftconvolve, keywords=("mode", "axes"))
def fftconvolve_(in1, in2, mode="full", axes=None):
    in1 = np.asarray(in1)
    in2 = np.asarray(in2)
    if _follows(in1, in2, mode):
        return _convolved(in1, in2, mode)
    return _scipy_signal("fftconvolve")(in1, in2, mode, axes)


# ------------------------------------------------------------------------------ cases

_A3 = np.array([[0.8, -0.3, 0.5], [0.2, 1.1, -0.4], [-0.6, 0.3, 0.9]])
_SPD = _A3 @ _A3.T + 3.0 * np.eye(3)
_NONSYM = _SPD + np.array([[0.0, 0.4, -0.2], [0.7, 0.0, 0.3], [-0.5, 0.1, 0.0]])
_TRI = np.array([[2.5, 0.3, -0.7], [0.4, 3.1, 0.6], [-0.2, 0.5, 2.8]])
_B = np.array([0.3, -1.2, 0.8])
_B2 = np.array([[0.3, 1.0], [-1.2, 0.5], [0.8, -0.4]])
_BATCH = np.stack([_SPD, _SPD + np.eye(3)])

cases(sl.solve_triangular,
      (_TRI, _B), (_TRI, _B2, kw(lower=True)), (_TRI, _B, kw(trans=1)),
      (_TRI, _B2, kw(trans="T", lower=True)), (_TRI, _B, kw(unit_diagonal=True)),
      (_TRI, _B2, kw(lower=True, unit_diagonal=True, trans=2)), (_TRI, _B, kw(trans="N")))
cases(sl.cholesky, (_SPD,), (_NONSYM,), (_NONSYM, kw(lower=True)), (_BATCH,))
cases(sl.cho_factor, (_SPD,), (_NONSYM,), (_NONSYM, kw(lower=True)))
cases(sl.cho_solve,
      ((np.linalg.cholesky(_SPD), True), _B), ((_TRI, True), _B2),
      ((_TRI, False), _B), ((_TRI, False), _B2))
cases(sl.solve,
      (_NONSYM, _B), (_NONSYM, _B2), (_NONSYM, _B, kw(assume_a="pos")),
      (_NONSYM, _B2, kw(assume_a="sym", lower=True)), (_NONSYM, _B, kw(assume_a="gen")),
      (_NONSYM, _B, kw(transposed=True)), (_TRI, _B, kw(assume_a="lower triangular")),
      (_TRI, _B2, kw(assume_a="upper triangular")), (_TRI, _B, kw(assume_a="diagonal")),
      (_TRI, _B, kw(assume_a="tridiagonal")), (_BATCH, _B))
cases(sl.inv,
      (_NONSYM,), (_NONSYM, kw(assume_a="pos")), (_NONSYM, kw(assume_a="sym", lower=True)),
      (_TRI, kw(assume_a="upper triangular")), (_BATCH,))
cases(sl.det, (_NONSYM,), (_TRI,), (_BATCH,))

_T = np.linspace(0.0, 2.0, 7)
_X = np.array([0.0, 0.3, 0.5, 1.1, 1.4, 2.0, 2.2])
_Y = np.sin(_T) + 0.3 * _T
_Y2 = np.stack([_Y, np.cos(_T)])
cases(si.trapezoid, (_Y,), (_Y, _X), (_Y, kw(dx=0.3)), (_Y2, _X), (_Y2.T, kw(axis=0)),
      (_Y2, _Y2 + np.arange(7.0)))
cases(si.cumulative_trapezoid, (_Y,), (_Y, _X), (_Y, kw(dx=0.3, initial=0)),
      (_Y2, _X, kw(initial=0)), (_Y2.T, kw(axis=0)))
cases(si.simpson, (_Y,), (_Y[:6],), (_Y[:2],), (_Y, _X), (_Y[:6], _X[:6]), (_Y[:2], _X[:2]),
      (_Y, kw(dx=0.3)), (_Y[:6], kw(dx=0.3)), (_Y2, _X), (_Y2[:, :6], _X[:6]),
      (_Y2.T[:6], kw(axis=0)), (_Y2[:, :4], _Y2[:, :4] ** 2 + np.arange(4.0)))

_S1 = np.array([0.5, -1.2, 0.8, 2.0, -0.3, 1.1])
_S2 = np.array([0.2, 0.7, -0.4])
_S3 = np.array([1.0, -0.5, 0.25, 0.6])
for _f in (ss.convolve, ss.correlate, ss.fftconvolve):
    cases(_f, (_S1, _S2), (_S2, _S1), (_S1, _S3, kw(mode="same")), (_S3, _S1, kw(mode="same")),
          (_S1, _S2, kw(mode="valid")), (_S2, _S1, kw(mode="valid")),
          (_S1, _S3, kw(mode="valid")), (_S3, _S2, kw(mode="same")))
cases(ss.convolve, (np.array([1, 2, 3]), np.array([0, 1])), (_S1, _S2, kw(method="fft")))
cases(ss.correlate, (_S1, _S3, kw(method="direct")))
