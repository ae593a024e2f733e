"""NumPy's linear algebra (``numpy.linalg``): factorisations, solves, inverses, determinants.

Every rule here is written with matrix products (``@``), the last-two-axes transpose
``_mT`` and the other functions of this module, so that

* the formulas broadcast over stacks of matrices (``(k, n, n)``) and over the leading
  batch axes that tangents and cotangents may carry (a Jacobian pushes many at once):
  a primal of shape ``stack + (n, n)`` meets a tangent of shape ``batch + stack + (n, n)``
  in ``@`` and elementwise products, which broadcast from the right;
* the rule bodies have rules themselves, so Hessians differentiate them again (the
  inverse in the derivative of ``det`` is differentiated by ``inv``'s rule, and so on).

Where NumPy's spelling has options (``solve`` of a vector, ``qr``'s modes, ``svd``'s
flags), the NumPy function is a Python definition over a private primitive that takes
them as static positional arguments; a primitive *refuses* (a ``TypeError`` starting
with ``wengert:``, raised by its rule, so only when the call is differentiated) what
has no derivative it could give correctly: wide QR, full SVD factors of a non-square
matrix, the ``hermitian=True`` paths.

Conventions, and what the formulas assume:

* ``cholesky`` and ``eigh``/``eigvalsh`` read one triangle of their argument (the
  lower one by default) and never the other, so the derivative with respect to the
  entries of the other triangle is zero and the cotangent lies in the triangle read
  (off-diagonal entries count twice: they stand for both symmetric entries). This is
  the derivative of what NumPy computes, which finite differences confirm.
* ``eigh`` assumes distinct eigenvalues and ``svd`` distinct (and, for the extra
  columns of a non-square matrix, non-zero) singular values: at a tie the eigenvectors
  are not differentiable and the formulas give ``inf``/``nan`` (as JAX does), never a
  finite wrong number. Eigenvalues alone (``eigvalsh``, or ``eigh`` with the vectors
  unused) need no such assumption at first order.
* ``det``, ``slogdet``, ``inv`` and ``solve`` need a non-singular matrix (NumPy raises
  ``LinAlgError`` inside the derivative otherwise); ``pinv`` and ``lstsq`` assume the
  rank does not change near the point (true wherever no singular value sits at the
  cut-off).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from wengert.rules.form import cases, defderiv, defrule, kw
from wengert.rules.np_reduction_prims import _sum
from wengert.rules.registry import (
    defjvp,
    defpython,
    defvjp,
    mark_array_result,
    mark_check,
    mark_pure,
    mark_result_type,
    nondifferentiable,
)
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import mT as _mT
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import squeeze as _squeeze
from wengert.rules.shapes import sum_to as _sum_to
from wengert.rules.shapes import unsqueeze as _unsqueeze

# --------------------------------------------------------------------------------------
# Constant matrices the rules multiply by: masks of triangles and identities, in the
# primal's floating dtype (float32 stays float32). They depend only on shapes, so they
# carry no derivative.
# --------------------------------------------------------------------------------------


def _float_dtype(a: Any) -> Any:
    """The floating dtype of ``a``'s derivatives (float32 stays float32; ints give
    float64)."""
    return np.result_type(np.asarray(a).dtype, 1.0)


def _eye(a: Any) -> Any:
    """The identity the size of ``a``'s last axis."""
    return np.eye(np.shape(a)[-1], dtype=_float_dtype(a))


def _tril(a: Any, k: int) -> Any:
    """The mask of the lower triangle ``j <= i + k`` of ``a``'s (square) matrices."""
    n = np.shape(a)[-1]
    return np.tri(n, n, k, dtype=_float_dtype(a))


def _half_tri(a: Any, upper: bool) -> Any:
    """The mask of the strict lower (``upper``: upper) triangle plus half the diagonal.

    A symmetric ``X`` is ``Y + Y^T`` with ``Y = X * mask``; and a cotangent ``G`` of the
    symmetric matrix a triangle stands for is ``(G + G^T) * mask`` on that triangle
    (each off-diagonal entry read stands for two entries, the diagonal for one)."""
    n = np.shape(a)[-1]
    dt = _float_dtype(a)
    mask = np.tri(n, n, -1, dtype=dt) + np.asarray(0.5, dtype=dt) * np.eye(n, dtype=dt)
    return mask.T.copy() if upper else mask


def _identity_like(a: Any) -> Any:
    """A fresh stack of identities of ``a``'s shape and dtype (``matrix_power(a, 0)``)."""
    out = np.empty_like(np.asarray(a))
    out[...] = np.eye(out.shape[-1], dtype=out.dtype)
    return out


nondifferentiable(_float_dtype, _eye, _tril, _half_tri, _identity_like)


def _diag(v: Any, a: Any) -> Any:
    """The diagonal matrices with ``v``'s last axis on their diagonal (batch axes kept)."""
    return _unsqueeze(v, -1) * _eye(a)


def _diagonal_of(x: Any, a: Any) -> Any:
    """The diagonals of the square matrices ``x`` (batch axes kept)."""
    return _sum(x * _eye(a), (-1,), False)


def _symmetric_part(x: Any, upper: bool) -> Any:
    """The symmetric matrix that the triangle of ``x`` NumPy reads stands for (the
    tangent of what a Cholesky or eigen-decomposition of ``x`` actually sees)."""
    y = x * _half_tri(x, upper)
    return y + _mT(y)


def _pairwise_recip(v: Any) -> Any:
    """``F[i, j] = 1 / (v[j] - v[i])`` off the diagonal and ``0`` on it, for ``v``'s last
    axis (batch axes kept): the factor of eigenvector and singular-vector derivatives.

    A tie off the diagonal gives ``inf`` without a warning: the derivative does not exist
    there, and a forward rule computes this factor even when the vectors go unused."""
    v = np.asarray(v)
    eye = np.eye(v.shape[-1], dtype=_float_dtype(v))
    with np.errstate(divide="ignore"):
        return 1.0 / (v[..., None, :] - v[..., :, None] + eye) - eye


@defvjp(_pairwise_recip)
def _pairwise_recip_vjp(v):
    # dF[i, j] = -F[i, j]^2 (dv[j] - dv[i]).
    f = _pairwise_recip(v)

    def _pairwise_recip_pullback(f_bar):
        g = f * f * f_bar
        return (_sum(g, (-1,), False) - _sum(g, (-2,), False),)

    return f, _pairwise_recip_pullback


@defjvp(_pairwise_recip)
def _pairwise_recip_jvp(v):
    f = _pairwise_recip(v)
    return f, lambda v_dot: (f * f) * (_unsqueeze(v_dot, -1) - _unsqueeze(v_dot, -2))


def _recip(x: Any) -> Any:
    """``1 / x``, ``inf`` at 0 without a warning (a singular value that is 0 makes the
    extra singular vectors of a non-square matrix non-differentiable)."""
    with np.errstate(divide="ignore"):
        return 1.0 / np.asarray(x)


defderiv(_recip, lambda x, *, ans: -(ans * ans))
mark_pure(_pairwise_recip, _recip)


# --------------------------------------------------------------------------------------
# inv, det, slogdet
# --------------------------------------------------------------------------------------


@defvjp(np.linalg.inv)
def inv_vjp(a):
    # d(A^-1) = -A^-1 dA A^-1, so the cotangent is -A^-T Y_bar A^-T.
    y = np.linalg.inv(a)
    return y, lambda y_bar: (-(_mT(y) @ y_bar @ _mT(y)),)


@defjvp(np.linalg.inv)
def inv_jvp(a):
    y = np.linalg.inv(a)
    return y, lambda a_dot: -(y @ a_dot @ y)


@defrule(np.linalg.det)
def det_rule(a):
    # d det(A) = det(A) tr(A^-1 dA): the cotangent is d_bar det(A) A^-T.
    d = np.linalg.det(a)

    def det_pullback(d_bar):
        return (_unsqueeze(_unsqueeze(d_bar * d, -1), -1) * _mT(np.linalg.inv(a)),)

    def det_differential(a_dot):
        # tr(A^-1 dA) is the sum of A^-T * dA over the matrix axes.
        return d * _sum(_mT(np.linalg.inv(a)) * a_dot, (-2, -1), False)

    return d, det_pullback, det_differential


@defrule(np.linalg.slogdet)
def slogdet_rule(a):
    # The sign is piecewise constant; log|det A| has the slope A^-T.
    y = np.linalg.slogdet(a)

    def slogdet_pullback(y_bar):
        l_bar = y_bar[1]
        if l_bar is None:
            return (None,)
        return (_unsqueeze(_unsqueeze(l_bar, -1), -1) * _mT(np.linalg.inv(a)),)

    def slogdet_differential(a_dot):
        return None, _sum(_mT(np.linalg.inv(a)) * a_dot, (-2, -1), False)

    return y, slogdet_pullback, slogdet_differential


mark_pure(np.linalg.inv, np.linalg.det, np.linalg.slogdet)


def _real_matrices(t: Any) -> bool:
    """Whether the argument type ``t`` (as type inference gives it) is a float64 or
    float32 array of two axes or more: a (stack of) matrices whose dtype LAPACK keeps."""
    return type(t) is tuple and t[0] in (np.float64, np.float32) and t[1] >= 2


# Types for the inference: the inverse is an array like its argument, the determinant a
# NumPy scalar of its dtype (an array of the stack's axes for a stack of matrices).
mark_result_type(lambda ts, cs: ts[0] if _real_matrices(ts[0]) else None, np.linalg.inv)
mark_result_type(lambda ts, cs: None if not _real_matrices(ts[0]) else
                 ts[0][0] if ts[0][1] == 2 else (ts[0][0], ts[0][1] - 2), np.linalg.det)


# --------------------------------------------------------------------------------------
# solve: the primitive solves for a (stack of) matrix right-hand sides; NumPy's vector
# right-hand side (b of one dimension) is a column added and removed again.
# --------------------------------------------------------------------------------------


def _solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve(a, b)`` for ``b`` of shape ``(..., n, k)`` (never a vector)."""
    return np.linalg.solve(a, b)


@defrule(_solve)
def _solve_rule(a, b):
    # X = A^-1 B: B_bar = A^-T X_bar and A_bar = -B_bar X^T, summed over broadcast stacks.
    x = _solve(a, b)

    def _solve_pullback(x_bar):
        stack = _shape(x)[:-2]
        a_shape = _shape(a)
        b_shape = _shape(b)
        b_bar = _solve(_mT(a), x_bar)
        a_bar = -(b_bar @ _mT(x))
        return (_sum_to(a_bar, a_shape, stack + a_shape[-2:]),
                _sum_to(b_bar, b_shape, stack + b_shape[-2:]))

    def _solve_differential(a_dot, b_dot):
        stack = _shape(x)[:-2]
        a_shape = _shape(a)
        b_shape = _shape(b)
        rhs = _broadcast_to(b_dot, b_shape, stack + b_shape[-2:])
        if a_dot is not None:
            a_dot = _broadcast_to(a_dot, a_shape, stack + a_shape[-2:])
            if rhs is None:
                rhs = -(a_dot @ x)
            else:
                rhs = rhs - a_dot @ x
        return _solve(a, rhs)

    return x, _solve_pullback, _solve_differential


mark_pure(_solve)


@defpython(np.linalg.solve)
def solve_(a, b):
    # NumPy 2 takes b of one dimension as a vector, anything else as a stack of matrices.
    if np.ndim(b) == 1:
        return _squeeze(_solve(a, _unsqueeze(b, -1)), -1)
    return _solve(a, b)


# --------------------------------------------------------------------------------------
# cholesky: A = L L^T, with L read from one triangle of A.
# --------------------------------------------------------------------------------------


def _cholesky(a: Any, upper: bool) -> Any:
    """``np.linalg.cholesky(a, upper=upper)``."""
    return np.linalg.cholesky(a, upper=upper)


@defrule(_cholesky)
def _cholesky_rule(a, upper):
    # With S the symmetric matrix the triangle read stands for, dS = L dL^T + dL L^T and
    # L^-1 dL is lower triangular, so dL = L Phi(L^-1 dS L^-T) (Phi: the lower triangle,
    # halved diagonal). Transposed: M = L^-T Phi(L^T L_bar) L^-1, and the cotangent of the
    # triangle read is (M + M^T) on it, halved on the diagonal.
    c = _cholesky(a, upper)

    def _cholesky_pullback(c_bar):
        low = c
        low_bar = c_bar
        if upper:
            low = _mT(c)
            low_bar = _mT(c_bar)
        linv = np.linalg.inv(low)
        m = _mT(linv) @ ((_mT(low) @ low_bar) * _half_tri(a, False)) @ linv
        return (m + _mT(m)) * _half_tri(a, upper), None

    def _cholesky_differential(a_dot, upper_dot):
        low = c
        if upper:
            low = _mT(c)
        linv = np.linalg.inv(low)
        s_dot = _symmetric_part(a_dot, upper)
        low_dot = low @ ((linv @ s_dot @ _mT(linv)) * _half_tri(a, False))
        if upper:
            return _mT(low_dot)
        return low_dot

    return c, _cholesky_pullback, _cholesky_differential


mark_pure(_cholesky)


@defpython(np.linalg.cholesky, keywords=("upper",))
def cholesky_(a, upper=False):
    return _cholesky(a, upper)



# --------------------------------------------------------------------------------------
# Compositions: matrix_power, multi_dot and the array-API spellings.
# --------------------------------------------------------------------------------------


def _power(a: Any, n: int) -> Any:
    """``a`` to the power ``n >= 0``: one product per power, from the identity (NumPy's
    repeated squaring gives the same value up to rounding)."""
    result = _identity_like(a)
    for _ in range(n):
        result = result @ a
    return result


def _check_exponent(n: Any) -> None:
    """NumPy's check of ``matrix_power``'s exponent (an integer). The definition checks
    the exponent rather than rebinding it to ``operator.index(n)``, so that an exponent
    the caller wrote as a literal stays a constant loop count, which the second
    derivative of the loop currently needs."""
    try:
        operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e


nondifferentiable(_check_exponent, pure=False)
mark_check(_check_exponent)


@defpython(np.linalg.matrix_power)
def matrix_power_(a, n):
    # A negative power inverts the positive one (NumPy powers the inverse: the same up to
    # rounding).
    _check_exponent(n)
    if n < 0:
        return np.linalg.inv(_power(a, -n))
    return _power(a, n)


@defpython(np.linalg.multi_dot)
def multi_dot_(arrays):
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    out = arrays[0]
    for i in range(1, len(arrays)):
        out = out @ arrays[i]
    return out


@defpython(np.linalg.matmul)
def linalg_matmul_(x1, x2):
    return x1 @ x2


@defpython(np.linalg.matrix_transpose)
def matrix_transpose_(x):
    if np.ndim(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _mT(x)


@defpython(np.linalg.trace, keywords=("offset", "dtype"))
def linalg_trace_(x, offset=0, dtype=None):
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@defpython(np.linalg.diagonal, keywords=("offset",))
def linalg_diagonal_(x, offset=0):
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@defpython(np.linalg.outer)
def linalg_outer_(x1, x2):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return np.outer(x1, x2)


@defpython(np.linalg.vecdot, keywords=("axis",))
def linalg_vecdot_(x1, x2, axis=-1):
    # Real arrays only (a complex x1 would be conjugated): wengert refuses complex values.
    return np.sum(x1 * x2, axis=axis)


@defpython(np.linalg.tensordot, keywords=("axes",))
def linalg_tensordot_(x1, x2, axes=2):
    return np.tensordot(x1, x2, axes=axes)


# The rank is an integer: no derivative.
nondifferentiable(np.linalg.matrix_rank)


# --------------------------------------------------------------------------------------
# Cases: well-conditioned matrices, symmetric positive definite ones, distinct
# eigenvalues and singular values, stacks and vectors.
# --------------------------------------------------------------------------------------

_rng = np.random.default_rng(7)
_A = _rng.standard_normal((3, 3)) + 3.0 * np.eye(3)
_AS = _rng.standard_normal((2, 3, 3)) + 3.0 * np.eye(3)
_B = _rng.standard_normal((3, 2))
_BS = _rng.standard_normal((2, 3, 2))
_G = _rng.standard_normal((3, 3))
_SPD = _G @ _G.T + np.diag([1.0, 2.0, 3.0])
_GS = _rng.standard_normal((2, 3, 3))
_SPDS = _GS @ np.swapaxes(_GS, -1, -2) + np.diag([1.0, 2.0, 3.0])
# A not symmetric: the triangle NumPy does not read must get no derivative.
_SPD_LOW = np.tril(_SPD) + np.triu(_rng.standard_normal((3, 3)), 1)
_SPD_UP = np.triu(_SPD) + np.tril(_rng.standard_normal((3, 3)), -1)
_TALL = _rng.standard_normal((4, 3))
_TALLS = _rng.standard_normal((2, 4, 3))
_WIDE = _rng.standard_normal((2, 4))

cases(np.linalg.inv, (_A,), (_AS,))
cases(np.linalg.det, (_A,), (_AS,), (-_A,))
cases(np.linalg.slogdet, (_A,), (_AS,), (-_A[:2, :2],))
cases(_solve, (_A, _B), (_AS, _B), (_A, _BS), (_AS, _BS), (_AS[:1], _BS))
cases(_cholesky, (_SPD, False), (_SPDS, False), (_SPD_LOW, False), (_SPD_UP, True),
      (_SPDS, True))
cases(_pairwise_recip, (np.array([0.5, -1.0, 2.0]),), (_rng.standard_normal((2, 4)),))
cases(_recip, (np.array([0.5, -1.0, 2.0]),))
# NumPy's spellings, checked against NumPy (and differentiated) through their definitions.
cases(np.linalg.solve, (_A, _B[:, 0]), (_A, _B), (_AS, _BS))
cases(np.linalg.cholesky, (_SPD,), (_SPD_UP, kw(upper=True)))
cases(np.linalg.matrix_power, (_A, 3), (_A, -2))
cases(np.linalg.multi_dot, ([_A, _B, _B.T],), ([_B[:, 0], _A, _B[:, 1]],))
cases(np.linalg.matmul, (_A, _B), (_AS, _B))
cases(np.linalg.matrix_transpose, (_B,), (_BS,))
# (``dtype=`` of an int matrix, its value only: the derivative of a trace refuses a dtype.)
cases(np.linalg.trace, (_A,), (_AS, kw(offset=1)),
      (np.arange(9).reshape(3, 3), kw(dtype=np.float64)))
cases(np.linalg.diagonal, (_A,), (_AS, kw(offset=-1)))
cases(np.linalg.outer, (_B[:, 0], _B[:, 1]))
cases(np.linalg.vecdot, (_B, _B[::-1]), (_BS, _BS[::-1], kw(axis=1)))
cases(np.linalg.tensordot, (_AS, _A), (_A, _B, kw(axes=1)),
      (_BS, _B, kw(axes=([1, 2], [0, 1]))))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_recip, _solve, _cholesky, np.linalg.inv)
