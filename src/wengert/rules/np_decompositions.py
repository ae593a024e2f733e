"""NumPy's orthogonal factorisations, ``eigh``/``eigvalsh`` (A = V diag(w) V^T), ``qr`` and
``svd``/``svdvals``, and what is built on the SVD (``pinv``, ``lstsq``): each a Python
definition over a private primitive with the options as static arguments. The conventions
and what the formulas assume are in ``rules/np_linalg.py``, whose helpers these rules
multiply by."""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.form import ans_bar, cases, deflinear, defrule, kw
from wengert.rules.np_linalg import (
    _A,
    _AS,
    _B,
    _SPD,
    _SPD_LOW,
    _SPD_UP,
    _SPDS,
    _TALL,
    _TALLS,
    _WIDE,
    _diag,
    _diagonal_of,
    _float_dtype,
    _half_tri,
    _pairwise_recip,
    _recip,
    _solve,
    _symmetric_part,
    _tril,
)
from wengert.rules.np_reduction_prims import _sum
from wengert.rules.registry import (
    UNKNOWN,
    defpython,
    mark_array_result,
    mark_pure,
    mark_result_type,
    nondifferentiable,
)
from wengert.rules.shapes import mT as _mT
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import unsqueeze as _unsqueeze

# --------------------------------------------------------------------------------------
# eigh and eigvalsh: A = V diag(w) V^T, read from one triangle.
# --------------------------------------------------------------------------------------


def _eigh(a: Any, uplo: str) -> Any:
    """``np.linalg.eigh(a, UPLO=uplo)``: the pair ``(eigenvalues, eigenvectors)``."""
    return np.linalg.eigh(a, UPLO=uplo)


def _eigvalsh(a: Any, uplo: str) -> Any:
    """``np.linalg.eigvalsh(a, UPLO=uplo)``."""
    return np.linalg.eigvalsh(a, UPLO=uplo)


def _reads_upper(uplo: str) -> bool:
    """Whether ``UPLO`` names the upper triangle (NumPy accepts either case)."""
    return str(uplo).upper() == "U"


nondifferentiable(_reads_upper)


@defrule(_eigh)
def _eigh_rule(a, uplo):
    # With P = V^T dS V: dw = diag(P) and dV = V (F * P), F[i, j] = 1 / (w[j] - w[i]) off
    # the diagonal (distinct eigenvalues). Transposed: M = V (diag(w_bar) + F * V^T V_bar)
    # V^T, and the triangle read gets (M + M^T), halved on its diagonal.
    y = _eigh(a, uplo)
    w = y[0]
    v = y[1]

    def _eigh_pullback(y_bar):
        w_bar = y_bar[0]
        v_bar = y_bar[1]
        g = None
        if v_bar is not None:
            g = _pairwise_recip(w) * (_mT(v) @ v_bar)
        if w_bar is not None:
            if g is None:
                g = _diag(w_bar, a)
            else:
                g = g + _diag(w_bar, a)
        if g is None:
            return None, None
        m = v @ g @ _mT(v)
        return (m + _mT(m)) * _half_tri(a, _reads_upper(uplo)), None

    def _eigh_differential(a_dot, uplo_dot):
        p = _mT(v) @ _symmetric_part(a_dot, _reads_upper(uplo)) @ v
        return _diagonal_of(p, a), v @ (_pairwise_recip(w) * p)

    return y, _eigh_pullback, _eigh_differential


@defrule(_eigvalsh)
def _eigvalsh_rule(a, uplo):
    # dw[k] = v_k^T dS v_k: the cotangent is 2 V diag(w_bar) V^T on the triangle read.
    w = _eigvalsh(a, uplo)

    def _eigvalsh_pullback(w_bar):
        v = _eigh(a, uplo)[1]
        m = (v * _unsqueeze(w_bar, -2)) @ _mT(v)
        return (m + m) * _half_tri(a, _reads_upper(uplo)), None

    def _eigvalsh_differential(a_dot, uplo_dot):
        v = _eigh(a, uplo)[1]
        return _sum(v * (_symmetric_part(a_dot, _reads_upper(uplo)) @ v), (-2,), False)

    return w, _eigvalsh_pullback, _eigvalsh_differential


mark_pure(_eigh, _eigvalsh)


@defpython(np.linalg.eigh, keywords=("UPLO",))
def eigh_(a, UPLO="L"):  # noqa: N803  (NumPy's name)
    return _eigh(a, UPLO)


@defpython(np.linalg.eigvalsh, keywords=("UPLO",))
def eigvalsh_(a, UPLO="L"):  # noqa: N803
    return _eigvalsh(a, UPLO)


# --------------------------------------------------------------------------------------
# qr: A = Q R (reduced), for square and tall matrices.
# --------------------------------------------------------------------------------------


def _qr(a: Any, mode: str) -> Any:
    """``np.linalg.qr(a, mode=mode)``."""
    return np.linalg.qr(a, mode=mode)


def _qr_check(a: Any, mode: str) -> None:
    """Refuse the QR factorisations whose derivative the rules do not give."""
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete", "r"):
        raise RuleRefusal(f"wengert: np.linalg.qr(mode={mode!r}) cannot be differentiated; "
                        "use mode='reduced'")
    if m < n:
        raise RuleRefusal(f"wengert: the derivative of np.linalg.qr of a wide matrix ({m}x{n}, "
                        "more columns than rows) is not supported")
    if mode == "complete" and m > n:
        raise RuleRefusal("wengert: the derivative of np.linalg.qr(mode='complete') of a tall "
                        "matrix is not supported (the extra columns of Q are not determined "
                        "by A); use mode='reduced'")


nondifferentiable(_qr_check, pure=False)


def _qr_split(a: Any, y: Any, mode: str) -> tuple[Any, Any]:
    """``(Q, R)`` of ``a``, where ``y = _qr(a, mode)`` (mode ``'r'`` gives ``R`` only)."""
    if mode == "r":
        return _qr(a, "reduced")[0], y
    return y[0], y[1]


@defrule(_qr)
def _qr_rule(a, mode):
    # With C = Q^T dA R^-1 and U = triu(C) + tril(C, -1)^T (upper triangular, so that
    # Q^T dQ = C - U is antisymmetric): dR = U R and dQ = dA R^-1 - Q U. Transposed,
    # with G = R_bar R^T - Q^T Q_bar: A_bar = (Q_bar + Q (triu(G) + tril(G^T, -1))) R^-T.
    _qr_check(a, mode)
    y = _qr(a, mode)
    q, r = _qr_split(a, y, mode)

    def _qr_pullback(y_bar):
        q_bar = None
        r_bar = y_bar
        if mode != "r":
            q_bar = y_bar[0]
            r_bar = y_bar[1]
        g = None
        if r_bar is not None:
            g = r_bar @ _mT(r)
        if q_bar is not None:
            if g is None:
                g = -(_mT(q) @ q_bar)
            else:
                g = g - _mT(q) @ q_bar
        if g is None:
            return None, None
        h = q @ (g * _mT(_tril(r, 0)) + _mT(g) * _tril(r, -1))
        if q_bar is not None:
            h = h + q_bar
        return _mT(_solve(r, _mT(h))), None

    def _qr_differential(a_dot, mode_dot):
        rinv = np.linalg.inv(r)
        c = _mT(q) @ a_dot @ rinv
        low = c * _tril(r, -1)
        u = c * _mT(_tril(r, 0)) + _mT(low)
        r_dot = u @ r
        if mode == "r":
            return r_dot
        return a_dot @ rinv - q @ u, r_dot

    return y, _qr_pullback, _qr_differential


mark_pure(_qr)


@defpython(np.linalg.qr, keywords=("mode",))
def qr_(a, mode="reduced"):
    return _qr(a, mode)


# --------------------------------------------------------------------------------------
# svd: A = U diag(s) V^T (reduced), and the singular values alone.
# --------------------------------------------------------------------------------------


def _svd(a: Any, full_matrices: bool, compute_uv: bool, hermitian: bool) -> Any:
    """``np.linalg.svd(a, full_matrices, compute_uv, hermitian)``."""
    return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         hermitian=hermitian)


def _svd_check(a: Any, full_matrices: bool, compute_uv: bool, hermitian: bool) -> None:
    m, n = np.shape(a)[-2:]
    if hermitian:
        raise RuleRefusal("wengert: the derivative of np.linalg.svd(hermitian=True) is not "
                        "supported; use hermitian=False")
    if compute_uv and full_matrices and m != n:
        raise RuleRefusal(f"wengert: the derivative of np.linalg.svd of a {m}x{n} matrix with "
                        "full_matrices=True is not supported (the extra singular vectors are "
                        "not determined by A); use full_matrices=False")


nondifferentiable(_svd_check, pure=False)


@defrule(_svd)
def _svd_rule(a, full_matrices, compute_uv, hermitian):
    # With P = U^T dA V (k x k, k = min(m, n)), F[i, j] = 1 / (s[j]^2 - s[i]^2) off the
    # diagonal (distinct singular values):
    #   ds = diag(P),
    #   dU = U (F * (P S + S P^T)) + (I - U U^T) dA V S^-1,
    #   dV = V (F * (S P + P^T S)) + (I - V V^T) dA^T U S^-1.
    # Transposed, with J = F * U^T U_bar and K = F * V^T V_bar:
    #   A_bar = U (diag(s_bar) + (J + J^T) S + S (K + K^T)) V^T
    #           + (I - U U^T) U_bar S^-1 V^T + U S^-1 V_bar^T (I - V V^T).
    _svd_check(a, full_matrices, compute_uv, hermitian)
    y = _svd(a, full_matrices, compute_uv, hermitian)
    if compute_uv:
        u = y[0]
        s = y[1]
        vh = y[2]
    else:
        s = y
        usv = _svd(a, False, True, False)
        u = usv[0]
        vh = usv[2]

    def _svd_pullback(y_bar):
        u_bar = None
        s_bar = y_bar
        vh_bar = None
        if compute_uv:
            u_bar = y_bar[0]
            s_bar = y_bar[1]
            vh_bar = y_bar[2]
        m, n = _shape(a)[-2:]
        row = _unsqueeze(s, -2)  # scales columns: X S is X * row
        col = _unsqueeze(s, -1)  # scales rows: S X is col * X
        d = None
        if s_bar is not None:
            d = _diag(s_bar, s)
        a_bar = None
        if u_bar is not None:
            ut_ubar = _mT(u) @ u_bar
            j = _pairwise_recip(s * s) * ut_ubar
            term = (j + _mT(j)) * row
            d = term if d is None else d + term
            if m > n:
                a_bar = ((u_bar - u @ ut_ubar) * _recip(row)) @ vh
        if vh_bar is not None:
            vbar_t_v = vh_bar @ _mT(vh)  # (V^T V_bar)^T
            k = _pairwise_recip(s * s) * _mT(vbar_t_v)
            term = col * (k + _mT(k))
            d = term if d is None else d + term
            if n > m:
                extra = u @ ((vh_bar - vbar_t_v @ vh) * _recip(col))
                a_bar = extra if a_bar is None else a_bar + extra
        if d is not None:
            main = u @ d @ vh
            a_bar = main if a_bar is None else a_bar + main
        return a_bar, None, None, None

    def _svd_differential(a_dot, full_matrices_dot, compute_uv_dot, hermitian_dot):
        m, n = _shape(a)[-2:]
        a_dot_v = a_dot @ _mT(vh)
        p = _mT(u) @ a_dot_v
        s_dot = _diagonal_of(p, s)
        if not compute_uv:
            return s_dot
        row = _unsqueeze(s, -2)
        col = _unsqueeze(s, -1)
        f = _pairwise_recip(s * s)
        pt = _mT(p)
        u_dot = u @ (f * (p * row + col * pt))
        # (V (F * X))^T = -(F * X) V^T: F is antisymmetric and X = S P + P^T S symmetric.
        vt_dot = -((f * (col * p + pt * row)) @ vh)
        if m > n:
            u_dot = u_dot + (a_dot_v - u @ p) * _recip(row)
        if n > m:
            vt_dot = vt_dot + (_mT(u) @ a_dot - p @ vh) * _recip(col)
        return u_dot, s_dot, vt_dot

    return y, _svd_pullback, _svd_differential


mark_pure(_svd)


@defpython(np.linalg.svd, keywords=("full_matrices", "compute_uv", "hermitian"))
def svd_(a, full_matrices=True, compute_uv=True, hermitian=False):
    return _svd(a, full_matrices, compute_uv, hermitian)


@defpython(np.linalg.svdvals)
def svdvals_(x):
    return _svd(x, False, False, False)



# --------------------------------------------------------------------------------------
# pinv and lstsq: the pseudo-inverse Y = A^+ at a point where the rank is locally constant.
# --------------------------------------------------------------------------------------


def _pinv(a: Any, rcond: Any, hermitian: bool) -> Any:
    """``np.linalg.pinv(a, rcond, hermitian)`` (``rcond`` already resolved from ``rtol``)."""
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


def _pinv_check(hermitian: bool) -> None:
    if hermitian:
        raise RuleRefusal("wengert: the derivative of np.linalg.pinv(hermitian=True) is not "
                        "supported; use hermitian=False")


nondifferentiable(_pinv_check, pure=False)


@defrule(_pinv)
def _pinv_rule(a, rcond, hermitian):
    # dY = -Y dA Y + Y Y^T dA^T (I - A Y) + (I - Y A) dA^T Y^T Y, transposed term by term
    # (A Y and Y A are symmetric projectors).
    _pinv_check(hermitian)
    y = _pinv(a, rcond, hermitian)

    def _pinv_pullback(y_bar):
        yt = _mT(y)
        ybt = _mT(y_bar)
        a_bar = -(yt @ y_bar @ yt)
        a_bar = a_bar + (ybt - a @ (y @ ybt)) @ (y @ yt)
        a_bar = a_bar + (yt @ y) @ (ybt - (ybt @ y) @ a)
        return a_bar, None, None

    def _pinv_differential(a_dot, rcond_dot, hermitian_dot):
        yt = _mT(y)
        at_dot = _mT(a_dot)
        y_dot = -(y @ a_dot @ y)
        y_dot = y_dot + (y @ yt) @ (at_dot - (at_dot @ a) @ y)
        y_dot = y_dot + (at_dot - y @ (a @ at_dot)) @ (yt @ y)
        return y_dot

    return y, _pinv_pullback, _pinv_differential


mark_pure(_pinv)


def _pinv_rcond(a: Any, rcond: Any, rtol: Any) -> Any:
    """NumPy's cut-off for ``pinv`` from its ``rcond`` and ``rtol`` arguments."""
    if rcond is None:
        if rtol is np._NoValue:
            return 1e-15
        if rtol is None:
            return max(np.shape(a)[-2:]) * np.finfo(_float_dtype(a)).eps
        return rtol
    if rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return rcond


nondifferentiable(_pinv_rcond)


@defpython(np.linalg.pinv, keywords=("rcond", "hermitian", "rtol"))
def pinv_(a, rcond=None, hermitian=False, rtol=np._NoValue):
    return _pinv(a, _pinv_rcond(a, rcond, rtol), hermitian)


def _lstsq_solution(a: Any, b: Any, rcond: Any) -> Any:
    """The solution of ``np.linalg.lstsq(a, b, rcond)`` for ``b`` a matrix."""
    return np.linalg.lstsq(a, b, rcond=rcond)[0]


def _lstsq_cutoff(a: Any, rcond: Any) -> Any:
    """``lstsq``'s ``rcond`` as ``pinv`` takes it (the same relative cut-off; ``lstsq``
    computes in double precision, whose epsilon its default and a negative ``rcond``
    stand for)."""
    eps = np.finfo(np.float64).eps
    if rcond is None:
        return max(np.shape(a)[-2:]) * eps
    if rcond < 0:
        return eps
    return rcond


def _lstsq_rank(a: Any, b: Any, rcond: Any) -> Any:
    """The rank ``np.linalg.lstsq`` reports (a NumPy integer, as NumPy gives it)."""
    return np.linalg.lstsq(a, b, rcond=rcond)[2]


nondifferentiable(_lstsq_cutoff, _lstsq_rank)


@defrule(_lstsq_solution)
def _lstsq_solution_rule(a, b, rcond):
    # X = Y B with Y = A^+: B_bar = Y^T X_bar, and A_bar is pinv's cotangent for
    # Y_bar = X_bar B^T, which simplifies with E = B - A X to
    #   A_bar = -B_bar X^T + E (Y B_bar)^T + (Y^T X) ((I - Y A) X_bar)^T.
    x = _lstsq_solution(a, b, rcond)

    def _lstsq_solution_pullback(x_bar):
        y = _pinv(a, _lstsq_cutoff(a, rcond), False)
        b_bar = _mT(y) @ x_bar
        e = b - a @ x
        a_bar = -(b_bar @ _mT(x)) + e @ _mT(y @ b_bar)
        a_bar = a_bar + (_mT(y) @ x) @ _mT(x_bar - y @ (a @ x_bar))
        return a_bar, b_bar, None

    def _lstsq_solution_differential(a_dot, b_dot, rcond_dot):
        # dX = dY B + Y dB with dY from pinv's differential, grouped to act on B.
        y = _pinv(a, _lstsq_cutoff(a, rcond), False)
        x_dot = None
        if a_dot is not None:
            at_dot = _mT(a_dot)
            w = at_dot @ (_mT(y) @ x)
            x_dot = -(y @ (a_dot @ x)) + y @ (_mT(y) @ (at_dot @ (b - a @ x)))
            x_dot = x_dot + w - y @ (a @ w)
        if b_dot is not None:
            term = y @ b_dot
            x_dot = term if x_dot is None else x_dot + term
        return x_dot

    return x, _lstsq_solution_pullback, _lstsq_solution_differential


mark_pure(_lstsq_solution)


def _keep(x: Any, keep: bool) -> Any:
    """``x`` when ``keep``, else ``x`` emptied along its last axis. Linear."""
    return x if keep else x[..., :0]


def _unkeep(g: Any, k: int, keep: bool) -> Any:
    """The transpose of :func:`_keep` (``k``: the length of the last axis it emptied)."""
    if keep:
        return g
    g = np.asarray(g)
    return np.zeros(g.shape[:-1] + (k,), dtype=g.dtype)


deflinear(_keep, lambda x, keep: _unkeep(ans_bar, np.shape(x)[-1], keep))
deflinear(_unkeep, lambda g, k, keep: _keep(ans_bar, keep))
mark_pure(_keep, _unkeep)


def _lstsq_residuals(a: Any, b: Any, x: Any, rank: int) -> Any:
    """``lstsq``'s residuals, recomputed from the solution ``x`` of ``a x = b`` (``b`` a
    matrix), so that they are differentiated as the squared norms they are: empty unless
    ``a`` is tall and of full column rank."""
    m, n = np.shape(a)
    e = b - a @ x
    return _keep(_sum(e * e, (-2,), False), rank == n and m > n)


def _column(b: Any, vector: bool) -> Any:
    """``b`` as a matrix of one column when ``vector`` (a right-hand side of one
    dimension), else ``b``. Linear; the flag, not ``b``'s rank, decides, so that a
    tangent with batch axes in front is treated like its primal."""
    return np.expand_dims(b, -1) if vector else b


def _uncolumn(x: Any, vector: bool) -> Any:
    """The inverse (and transpose) of :func:`_column`."""
    return np.squeeze(x, -1) if vector else x


deflinear(_column, _uncolumn)
deflinear(_uncolumn, _column)
mark_pure(_column, _uncolumn)


@defpython(np.linalg.lstsq, keywords=("rcond",))
def lstsq_(a, b, rcond=None):
    # The solution has its own rules, the singular values are svd's, and the rank has no
    # derivative. No name is rebound in a branch (its zero cotangent would be made at run
    # time, which a second derivative cannot follow), and the definition is kept small
    # (a larger one is called rather than inlined, and not differentiated again).
    vector = np.ndim(b) == 1
    b2 = _column(b, vector)
    x = _lstsq_solution(a, b2, rcond)
    rank = _lstsq_rank(a, b, rcond)
    residuals = _lstsq_residuals(a, b2, x, rank)
    return _uncolumn(x, vector), residuals, rank, _svd(a, False, False, False)


# Cases: the matrices of rules/np_linalg.py (symmetric ones read from one triangle, the
# other must get no derivative; distinct eigenvalues and singular values; tall, wide, stacked).

cases(_eigh, (_SPD, "L"), (_SPDS, "L"), (_SPD_LOW, "L"), (_SPD_UP, "U"), (_SPD_UP, "u"))
cases(_eigvalsh, (_SPD, "L"), (_SPDS, "U"), (_SPD_LOW, "L"), (_SPD_UP, "U"), (_SPD_UP, "u"))
cases(_qr, (_A, "reduced"), (_TALL, "reduced"), (_TALLS, "reduced"), (_AS, "complete"),
      (_TALL, "r"))
cases(_svd, (_A, True, True, False), (_TALL, False, True, False), (_WIDE, False, True, False),
      (_TALLS, False, True, False), (_TALL, False, False, False), (_AS, True, False, False))
cases(_pinv, (_TALL, 1e-15, False), (_WIDE, 1e-15, False), (_AS, 1e-15, False))
cases(_column, (_B[:, 0], True), (_B, False))
cases(_uncolumn, (_B[:, :1], True), (_B, False))
cases(_keep, (_B, True), (_B, False))
cases(_unkeep, (_B, 2, True), (_B[:, :0], 2, False))
cases(_lstsq_solution, (_TALL, _TALL[:, :2] + 0.1, None), (_WIDE, _B[:2], None),
      (_A, _B, 1e-10))
# NumPy's spellings, checked against NumPy (and differentiated) through their definitions.
cases(np.linalg.eigh, (_SPD,), (_SPD_UP, kw(UPLO="U")))
cases(np.linalg.eigvalsh, (_SPD,), (_SPDS, kw(UPLO="U")))
cases(np.linalg.qr, (_TALL,), (_A, kw(mode="r")), (_AS, kw(mode="complete")))
cases(np.linalg.svd, (_A,), (_TALL, kw(full_matrices=False)), (_WIDE, kw(compute_uv=False)))
cases(np.linalg.svdvals, (_TALL,), (_AS,))
cases(np.linalg.pinv, (_TALL,), (_WIDE, kw(rcond=1e-10)), (_AS, kw(rtol=1e-8)))
cases(np.linalg.lstsq, (_TALL, _TALL[:, :2] + 0.1), (_A, _B[:, 0], kw(rcond=None)))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_column, _keep, _uncolumn, _unkeep, _eigvalsh, _pinv, _lstsq_solution)


def _axes_of(t: object) -> int | None:
    """The number of axes of an argument typed ``(dtype, ndim)``, else ``None``."""
    return t[1] if isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], int) else None


def _arrays(ts: list, *drops: int) -> object:
    """Float64 arrays of the first argument's axes less each of ``drops`` (``ndarray``
    where they are not known)."""
    k = _axes_of(ts[0]) if ts else None
    if k is None or ts[0][0] is not np.float64:
        return [np.ndarray] * len(drops)
    return [(np.float64, k - d) for d in drops]


# The decompositions return tuples of arrays (NumPy's named tuples): unpacked, each part
# is an array of known axes, so what is computed from the parts inlines its rules.
mark_result_type(lambda ts, cs: _arrays(ts, 1, 0), _eigh)
mark_result_type(lambda ts, cs: _arrays(ts, 0, 0) if cs[1] in ("reduced", "complete")
                 else None, _qr)
mark_result_type(lambda ts, cs: None if cs[2] is UNKNOWN else
                 _arrays(ts, 0, 1, 0) if cs[2] else _arrays(ts, 1)[0], _svd)
