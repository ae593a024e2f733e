"""NumPy reductions and contractions: each NumPy spelling is a Python definition over a few
batch-aware primitives, which carry the rules.

Tangents and cotangents may carry leading batch axes (a Jacobian pushes many at once),
so the primitives take their axes *normalised and negative* (counted from the right),
computed from the primal's ``ndim`` in the Python definition: ``np.sum(x, axis=0)`` on a
matrix is ``_sum(x, (-2,), False)`` and the same call sums the right axis of a batched
tangent. The definitions are inlined into the code being differentiated, like a user's
helper (:func:`~wengert.rules.registry.defpython`); their parameters are NumPy's, in
NumPy's order, so that any of them may be passed by position, and those they do not
differentiate (``out=``, ``dtype=``, ``where=``, ``initial=``) are refused by name.
The primitives and their rules are in :mod:`wengert.rules.np_reduction_prims`.
"""

from __future__ import annotations

import numpy as np

from wengert.rules.form import cases, kw
from wengert.rules.np_reduction_plans import (
    _axes,
    _axis,
    _check_weights,
    _count,
    _ddof,
    _dof,
    _dot_spec,
    _einsum_one,
    _einsum_plan,
    _end_shape,
    _flag,
    _float_dtype,
    _inner_spec,
    _kron_plan,
    _nonzero_count,
    _norm_plan,
    _tensordot_spec,
    _unsupported,
    _weight_layout,
)
from wengert.rules.np_reduction_prims import (
    _INF,
    _abs_pow,
    _cumprod_c,
    _cumprod_last,
    _cumprod_t,
    _cumsum,
    _diff,
    _diff_T,
    _einsum1,
    _einsum2,
    _einsum_expand,
    _expand,
    _from_last,
    _max,
    _min,
    _nonzero_recip,
    _others,
    _prod_last,
    _rcumsum,
    _reshape_tail,
    _root,
    _sgn_pow,
    _squeeze_axes,
    _sum,
    _sum_back,
    _to_last,
    _trace,
    _trace_T,
    _unsum,
)
from wengert.rules.registry import (
    defpython,
    mark_array_result,
)

_NoValue = np._NoValue


# ============================================================ the NumPy spellings: sums


@defpython(np.sum, keywords=("axis", "dtype", "out", "keepdims", "initial", "where"))
def sum_(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
         where=_NoValue):
    _unsupported("sum", out_=out)
    if dtype is not None:
        a = np.asarray(a).astype(dtype)  # (summed in that type, as NumPy does)
    if where is not _NoValue:
        a = np.where(where, a, 0.0)  # (the entries left out add nothing)
    if initial is not _NoValue:
        return _sum(a, _axes(axis, np.ndim(a)), _flag(keepdims)) + initial
    return _sum(a, _axes(axis, np.ndim(a)), _flag(keepdims))


@defpython(np.ndarray.sum)
def ndarray_sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
                where=_NoValue):
    return sum_(self, axis, dtype, out, keepdims, initial, where)


@defpython(np.mean, keywords=("axis", "dtype", "out", "keepdims", "where"))
def mean_(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    _unsupported("mean", out_=out)
    if dtype is not None:
        a = np.asarray(a).astype(dtype)  # (summed in that type, as NumPy does)
    axes = _axes(axis, np.ndim(a))
    if where is not _NoValue:
        # (the mean of the entries selected: their sum over their count)
        counted = np.broadcast_to(where, np.shape(a))
        return _sum(np.where(counted, a, 0.0), axes, _flag(keepdims)) / \
            _sum(counted, axes, _flag(keepdims))
    return _sum(a, axes, _flag(keepdims)) / _count(np.shape(a), axes)


@defpython(np.ndarray.mean)
def ndarray_mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    return mean_(self, axis, dtype, out, keepdims, where=where)


@defpython(np.var, keywords=("axis", "dtype", "out", "ddof", "keepdims", "where", "mean",
                             "correction"))
def var_(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
         mean=_NoValue, correction=_NoValue):
    _unsupported("var", dtype=dtype, out_=out, where=where, mean=mean)
    ddof = _ddof(ddof, correction)
    axes = _axes(axis, np.ndim(a))
    n = _count(np.shape(a), axes)
    d = a - _sum(a, axes, True) / n
    return _sum(d * d, axes, _flag(keepdims)) / _dof(n, ddof)


@defpython(np.ndarray.var)
def ndarray_var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
                where=_NoValue, mean=_NoValue, correction=_NoValue):
    return var_(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                correction=correction)


@defpython(np.std, keywords=("axis", "dtype", "out", "ddof", "keepdims", "where", "mean",
                             "correction"))
def std_(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
         mean=_NoValue, correction=_NoValue):
    return np.sqrt(var_(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


@defpython(np.ndarray.std)
def ndarray_std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *,
                where=_NoValue, mean=_NoValue, correction=_NoValue):
    return std_(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                correction=correction)


@defpython(np.average, keywords=("axis", "weights", "returned", "keepdims"))
def average_(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    if weights is None and not returned:
        return mean_(a, axis, None, None, keepdims)
    if weights is None:
        # (NumPy's count of the entries averaged: the sum of weights of 1)
        weights = np.ones(np.shape(a), _float_dtype(a))
    avg, scl = _weighted_average(a, axis, weights, _flag(keepdims))
    if not returned:
        return avg
    # (NumPy's: the sum of the weights too, spread to the average's shape)
    if np.shape(scl) != np.shape(avg):
        scl = np.broadcast_to(scl, np.shape(avg)).copy()
    return avg, scl


def _weighted_average(a, axis, weights, keepdims):
    """``np.average`` with weights and the sum of the weights (a helper of
    :func:`average_`, inlined with it)."""
    # The weights' axes ordered like a's, with size-1 axes where a has others.
    ins, ordered, before, after = _weight_layout(np.shape(weights), np.shape(a), axis)
    w = _reshape_tail(_einsum1(weights, ins, ordered), before, after)
    axes = _axes(axis, np.ndim(a))
    scl = _sum(w, axes, keepdims)
    _check_weights(scl)
    return _sum(a * w, axes, keepdims) / scl, scl


@defpython(np.cumsum, keywords=("axis", "dtype", "out"))
def cumsum_(a, axis=None, dtype=None, out=None):
    _unsupported("cumsum", dtype=dtype, out_=out)
    if axis is None:
        return _cumsum(_reshape_tail(a, np.shape(a), (np.size(a),)), -1)
    return _cumsum(a, _axis(axis, np.ndim(a)))


@defpython(np.ndarray.cumsum)
def ndarray_cumsum(self, axis=None, dtype=None, out=None):
    return cumsum_(self, axis, dtype, out)


@defpython(np.diff, keywords=("n", "axis", "prepend", "append"))
def diff_(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    if n == 0:
        return a
    ax = _axis(axis, np.ndim(a))
    # (what NumPy does: the ends joined to ``a`` along the axis, a scalar as one slice)
    if prepend is not _NoValue:
        a = np.concatenate([np.broadcast_to(prepend, _end_shape(a, prepend, ax)), a],
                           axis=ax)
    if append is not _NoValue:
        a = np.concatenate([a, np.broadcast_to(append, _end_shape(a, append, ax))],
                           axis=ax)
    return _diff(a, n, ax)


@defpython(np.trace, keywords=("offset", "axis1", "axis2", "dtype", "out"))
def trace_(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _unsupported("trace", dtype=dtype, out_=out)
    nd = np.ndim(a)
    return _trace(a, offset, (_axis(axis1, nd), _axis(axis2, nd)))


@defpython(np.ndarray.trace)
def ndarray_trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return trace_(self, offset, axis1, axis2, dtype, out)


# ======================================================== the NumPy spellings: extremes


@defpython(np.max, keywords=("axis", "out", "keepdims", "initial", "where"))
def max_(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    _unsupported("max", out_=out)
    if where is not _NoValue:
        a = _selected(a, where, initial, "maximum")
    m = _max(a, _axes(axis, np.ndim(a)), _flag(keepdims))
    if initial is not _NoValue:
        return np.maximum(m, initial)  # (the initial value takes part, as an entry would)
    return m


@defpython(np.min, keywords=("axis", "out", "keepdims", "initial", "where"))
def min_(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    _unsupported("min", out_=out)
    if where is not _NoValue:
        a = _selected(a, where, initial, "minimum")
    m = _min(a, _axes(axis, np.ndim(a)), _flag(keepdims))
    if initial is not _NoValue:
        return np.minimum(m, initial)
    return m


def _selected(a, where, initial, name):
    """The entries of ``a`` that ``where`` selects, the others ``initial`` (which then
    changes no extreme; a helper of :func:`max_` and :func:`min_`, inlined with them)."""
    if initial is _NoValue:
        raise ValueError(f"reduction operation '{name}' does not have an identity, so to use "
                         "a where mask one has to specify 'initial'")
    return np.where(where, a, initial)


defpython(np.amax, keywords=("axis", "out", "keepdims", "initial", "where"))(max_)
defpython(np.amin, keywords=("axis", "out", "keepdims", "initial", "where"))(min_)


@defpython(np.ndarray.max)
def ndarray_max(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    return max_(self, axis, out, keepdims, initial, where)


@defpython(np.ndarray.min)
def ndarray_min(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    return min_(self, axis, out, keepdims, initial, where)


@defpython(np.ptp, keywords=("axis", "out", "keepdims"))
def ptp_(a, axis=None, out=None, keepdims=False):
    _unsupported("ptp", out_=out)
    axes = _axes(axis, np.ndim(a))
    keep = _flag(keepdims)
    return _max(a, axes, keep) - _min(a, axes, keep)


@defpython(np.ndarray.argmax)
def ndarray_argmax(self, axis=None, out=None, *, keepdims=False):
    return np.argmax(self, axis, out, keepdims=keepdims)


@defpython(np.ndarray.argmin)
def ndarray_argmin(self, axis=None, out=None, *, keepdims=False):
    return np.argmin(self, axis, out, keepdims=keepdims)


@defpython(np.ndarray.argsort)
def ndarray_argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    return np.argsort(self, axis, kind, order, stable=stable)


# ======================================================== the NumPy spellings: products


@defpython(np.prod, keywords=("axis", "dtype", "out", "keepdims", "initial", "where"))
def prod_(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
          where=_NoValue):
    _unsupported("prod", out_=out)
    if dtype is not None:
        a = np.asarray(a).astype(dtype)  # (summed in that type, as NumPy does)
    if where is not _NoValue:
        a = np.where(where, a, 1.0)  # (the entries left out multiply by nothing)
    axes = _axes(axis, np.ndim(a))
    p = _prod_last(_to_last(a, axes)) if initial is _NoValue else \
        _prod_last(_to_last(a, axes)) * initial
    if _flag(keepdims):
        return _expand(p, axes)
    return p


@defpython(np.ndarray.prod)
def ndarray_prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
                 where=_NoValue):
    return prod_(self, axis, dtype, out, keepdims, initial, where)


@defpython(np.cumprod, keywords=("axis", "dtype", "out"))
def cumprod_(a, axis=None, dtype=None, out=None):
    _unsupported("cumprod", dtype=dtype, out_=out)
    if axis is None:
        a = _reshape_tail(a, np.shape(a), (np.size(a),))
        axis = -1
    ax = (_axis(axis, np.ndim(a)),)
    return _from_last(_cumprod_last(_to_last(a, ax)), ax, np.shape(a))


@defpython(np.ndarray.cumprod)
def ndarray_cumprod(self, axis=None, dtype=None, out=None):
    return cumprod_(self, axis, dtype, out)


# ==================================================== the NumPy spellings: contractions


@defpython(np.dot, keywords=("out",))
def dot_(a, b, out=None):
    _unsupported("dot", out_=out)
    na = np.ndim(a)
    nb = np.ndim(b)
    if na == 0 or nb == 0:
        return a * b
    if nb <= 2:
        return a @ b  # the same contraction as matmul for these shapes
    return _einsum2(a, b, _dot_spec(na, nb))


@defpython(np.ndarray.dot)
def ndarray_dot(self, b, out=None):
    return dot_(self, b, out)


@defpython(np.matmul, keywords=("out",))
def matmul_(x1, x2, out=None):
    _unsupported("matmul", out_=out)
    return x1 @ x2


@defpython(np.vdot)
def vdot_(a, b):
    return _reshape_tail(a, np.shape(a), (np.size(a),)) @ \
        _reshape_tail(b, np.shape(b), (np.size(b),))


@defpython(np.inner)
def inner_(a, b):
    na = np.ndim(a)
    nb = np.ndim(b)
    if na == 0 or nb == 0:
        return a * b
    return _einsum2(a, b, _inner_spec(na, nb))


@defpython(np.outer, keywords=("out",))
def outer_(a, b, out=None):
    _unsupported("outer", out_=out)
    return _reshape_tail(a, np.shape(a), (np.size(a), 1)) * \
        _reshape_tail(b, np.shape(b), (np.size(b),))


@defpython(np.tensordot, keywords=("axes",))
def tensordot_(a, b, axes=2):
    return _einsum2(a, b, _tensordot_spec(np.ndim(a), np.ndim(b), axes))


@defpython(np.kron)
def kron_(a, b):
    sa, sb, spec, shape = _kron_plan(np.shape(a), np.shape(b))
    t = _einsum2(_reshape_tail(a, np.shape(a), sa), _reshape_tail(b, np.shape(b), sb), spec)
    return _reshape_tail(t, np.shape(t), shape)


@defpython(np.einsum, keywords=("out", "optimize"))
def einsum_(*operands, out=None, optimize=False):
    # Each step appends its result to ``ops`` (the subscripts, the operands, a 1).
    ops = operands + (_einsum_one(operands),)
    for i, j, spec in _einsum_plan(operands, out):
        ops = ops + (_einsum2(ops[i], ops[j], spec),)
    return ops[-1]


# ============================================================ the NumPy spellings: norms


@defpython(np.linalg.norm, keywords=("ord", "axis", "keepdims"))
def norm_(x, ord=None, axis=None, keepdims=False):
    matrix, p, first, _, both = _norm_plan(np.ndim(x), ord, axis)
    if matrix:
        return _matrix_norm(x, p > 0, first, both, keepdims)
    return _vector_norm(x, p, first, keepdims)


def _vector_norm(x, p, axes, keepdims):
    """The vector ``p``-norm over ``axes`` (a helper of :func:`norm_`, inlined with it)."""
    if p == _INF:
        return _max(np.abs(x), axes, keepdims)
    if p == -_INF:
        return _min(np.abs(x), axes, keepdims)
    if p == 0:
        return _nonzero_count(x, axes, keepdims)
    return _root(_sum(_abs_pow(x, p), axes, keepdims), p)


def _matrix_norm(x, largest, first, both, keepdims):
    """The matrix norms 1, -1, inf, -inf: ``|x|`` summed over ``first``, then the max or
    min over the other axis of ``both`` (a helper of :func:`norm_`, inlined with it)."""
    sums = _sum(np.abs(x), first, True)
    # (over both axes, ``first`` of size 1 now: a full reduction gives a NumPy scalar)
    if largest:
        return _max(sums, both, keepdims)
    return _min(sums, both, keepdims)


# ================================================================================ cases

_A = np.arange(24.0).reshape(2, 3, 4) / 10.0
_V = np.array([0.7, -1.3, 2.1, 0.4])
_M = np.array([[0.3, -1.2, 0.8], [1.5, 0.2, -0.6]])
_Z = np.array([[0.5, 0.0, 1.5, -2.0], [0.0, 1.2, 0.0, 0.7], [1.1, -0.3, 0.9, 2.0]])

cases(_sum, (_A, (-3, -1), False), (_A, (-2,), True), (_A[0], (-2, -1), False))
cases(_unsum, (np.ones(3), (2, 3, 4), (-3, -1), False),
      (np.ones((1, 3, 1)), (2, 3, 4), (-3, -1), True))
cases(_sum_back, (_A, (2, 3, 4), (-3, -1), False))
cases(_to_last, (_A, (-3, -1)), (_A, (-2,)), (_M, (-2, -1)), (_V, ()))
cases(_from_last, (np.ones((3, 8)), (-3, -1), (2, 3, 4)), (_M.T.copy(), (-2,), (2, 3)))
cases(_expand, (_M, (-3, -1)), (_V, (-2,)))
cases(_squeeze_axes, (_A[:1, :, :1], (-3, -1)), (_M[:1], (-2,)))
cases(_reshape_tail, (_A, (3, 4), (12,)), (_V, (4,), (2, 1, 2)))
cases(_cumsum, (_A, -2), (_V, -1))
cases(_rcumsum, (_A, -3), (_V, -1))
cases(_diff, (_A, 1, -1), (_A, 2, -2), (_V, 3, -1))
cases(_diff_T, (_M, 1, -1), (_A, 2, -3))
cases(_trace, (_A, 0, (-2, -1)), (_A, 1, (-3, -1)), (_M, -1, (-1, -2)), (_M, 0, (-2, -1)))
cases(_trace_T, (np.array([0.5, -1.0, 2.0]), (2, 3, 4), 0, (-3, -1)),
      (np.array(0.7), (2, 3), 1, (-2, -1)))
cases(_einsum1, (_A, "ijk", "ki"), (_A[:, :2, :2].copy(), "ijj", "j"),
      (_A[0, :, :3].copy(), "ii", ""), (_M, "ij", "ji"))
cases(_einsum_expand, (_V[:3], "j", "jj", (3, 3)), (_M, "ij", "ijk", (2, 3, 2)),
      (np.array(1.5), "", "ii", (3, 3)))
cases(_einsum2, (_M, _M.T.copy(), ("ij", "jk", "ik")), (_A, _V, ("ijk", "k", "ij")),
      (_A[0], _M, ("jk", "ij", "ki")), (_A[0, :, :3].copy(), _V[:3], ("ii", "i", "i")),
      (_M, _V, ("ij", "k", "jk")), (_M, np.array(1.5), ("ij", "", "ji")))
cases(_max, (_A, (-3, -1), False), (_M, (-1,), True), (_V, (-1,), False))
cases(_min, (_A, (-2,), False), (_M, (-2, -1), True))
cases(_prod_last, (_Z,), (_V,), (_A,))
cases(_others, (_Z,), (_V,), (np.array([0.0, 2.0, 0.0, 3.0]),))
cases(_cumprod_last, (_Z,), (_V,), (_A,))
cases(_cumprod_t, (_V, _V[::-1].copy()), (_Z, _Z[::-1].copy()))
cases(_cumprod_c, (_V, _V[::-1].copy()), (_Z, _Z[::-1].copy()))
cases(_abs_pow, (_M, 2), (_M, 3), (_M, 1), (-0.7, 2))
cases(_sgn_pow, (_M, 1), (_M, 2), (_M, 0))
cases(_root, (np.array([4.0, 0.5, 2.0]), 2), (np.array([4.0, 0.5, 2.0]), 3), (2.5, 2))
cases(_nonzero_recip, (_M,), (0.4,))

# The NumPy spellings, called as users call them (their values are NumPy's, their
# derivatives central differences'): distinct entries (no ties for the extremes and
# orders), none zero (no kinks for the products and norms).
_T = (np.sin(np.arange(1.0, 25.0) * 2.3) * 1.3).round(2).reshape(2, 3, 4)
_W = np.array([[0.9, -1.3, 0.4, 1.7], [-0.6, 1.1, 2.2, -0.8], [1.4, 0.3, -1.9, 0.6]])
_R = np.array([1.2, -0.5, 0.8, 2.3, -1.6])
_Q = np.array([[1.3, -0.4, 0.9], [0.2, 1.8, -1.1], [-0.7, 0.6, 2.4]])
_K = np.array([[0.6, -1.1, 1.9], [1.4, 0.7, -0.3]])
_U = np.array([0.8, -1.7, 0.5, 1.2])
_MASK = np.array([[True, False, True, True], [False, True, True, False],
                  [True, True, False, True]])
_WEIGHTS = np.array([0.5, 1.0, 2.0, 1.5])
_S = np.float64(1.5)

cases(np.sum, (_T,), (_T, kw(axis=1)), (_T, kw(axis=(0, -1), keepdims=True)),
      (_W, kw(axis=-1, dtype=np.float64, initial=0.5, where=_MASK)))
cases(np.ndarray.sum, (_T, kw(axis=(0, 2), keepdims=True)), (_W, -1), (_R,))
cases(np.mean, (_T,), (_T, kw(axis=(1, 2))), (_W, kw(axis=0, keepdims=True, where=_MASK)),
      (_R, kw(dtype=np.float64)))
cases(np.ndarray.mean, (_W, kw(axis=1)), (_T, kw(axis=-1, keepdims=True)))
cases(np.var, (_T,), (_T, kw(axis=1, ddof=1)), (_W, kw(axis=(0, 1), keepdims=True)),
      (_R, kw(correction=1)))
cases(np.ndarray.var, (_W, kw(axis=0, ddof=1)), (_R,))
cases(np.std, (_T, kw(axis=-1)), (_W, kw(ddof=1, keepdims=True)), (_R,))
cases(np.ndarray.std, (_T, kw(axis=(0, 2))), (_W,))
cases(np.average, (_T,), (_T, kw(axis=1)), (_W, 1, _WEIGHTS, kw(returned=True)),
      (_W, None, _W * _W + 0.1, kw(keepdims=True)), (_T, (1, 2), _T[0] * _T[0] + 0.2),
      (_T, kw(axis=-1, returned=True)))
cases(np.cumsum, (_T,), (_T, kw(axis=1)), (_W, -1))
cases(np.ndarray.cumsum, (_W, kw(axis=0)), (_R,))
cases(np.diff, (_R,), (_T, kw(n=2, axis=1)), (_W, 1, 0, _U[None], _U[None, ::-1].copy()),
      (_W, kw(prepend=0.5, append=_W[:, :1] * 2.0)))
cases(np.trace, (_Q,), (_T, kw(offset=1, axis1=1, axis2=2)), (_W, -1))
cases(np.ndarray.trace, (_Q, kw(offset=1)), (_T, kw(axis1=0, axis2=2)))
for _f in (np.max, np.min, np.amax, np.amin):
    cases(_f, (_T,), (_T, kw(axis=1, keepdims=True)), (_W, kw(axis=(0, -1))),
          (_W, kw(axis=1, initial=1.5 if _f in (np.max, np.amax) else -1.5, where=_MASK)))
cases(np.ndarray.max, (_T, kw(axis=-1)), (_W, kw(axis=0, keepdims=True)), (_R,))
cases(np.ndarray.min, (_T, kw(axis=(0, 1))), (_W, 1), (_R,))
cases(np.ptp, (_T,), (_T, kw(axis=(0, 2), keepdims=True)), (_W, -1))
cases(np.ndarray.argmax, (_T,), (_T, kw(axis=1)), (_W, kw(axis=-1, keepdims=True)))
cases(np.ndarray.argmin, (_T,), (_T, kw(axis=1)), (_W, kw(axis=-1, keepdims=True)))
cases(np.ndarray.argsort, (_R,), (_T, kw(axis=1)), (_W, kw(axis=0, kind="stable")),
      (_W, kw(axis=None)))
cases(np.prod, (_W,), (_W, kw(axis=1, keepdims=True)), (_T, kw(axis=(0, -1))),
      (_R, kw(dtype=np.float64, initial=2.0)), (_W, kw(axis=0, where=_MASK)))
cases(np.ndarray.prod, (_W, kw(axis=0)), (_R,))
cases(np.cumprod, (_R,), (_W, kw(axis=1)), (_T, -2))
cases(np.ndarray.cumprod, (_W, kw(axis=0)), (_R,))
cases(np.dot, (_R, _R[::-1].copy()), (_W, _U), (_K, _Q), (_T, _W.T.copy()), (_Q, _T[:, :, :3]),
      (1.5, _R))
cases(np.ndarray.dot, (_W, _U), (_R, _R[::-1].copy()), (_K, _Q))
cases(np.matmul, (_K, _W), (_T, _W.T.copy()), (_Q[0], _W), (_W, _U))
cases(np.vdot, (_W, _W[::-1].copy()), (_R, _R[::-1].copy()))
cases(np.inner, (_R, _R[::-1].copy()), (_W, _T[0]), (_T, _U), (2.0, _W))
cases(np.outer, (_R, _U), (_W, _R))
cases(np.tensordot, (_T, _W), (_T, _W.T.copy(), kw(axes=1)),
      (_T, _T[::-1].copy(), kw(axes=((0, 2), (0, 2)))), (_R, _U, kw(axes=0)))
cases(np.kron, (_K, _Q[:2, :2]), (_R, _U[:3]), (_W, _U[:2]))
cases(np.einsum, ("ij,jk->ik", _K, _Q), ("ijk", _T), ("ij,ij", _W, _W[::-1].copy()),
      ("ii", _Q), ("ijk,k->ij", _T, _U, kw(optimize=True)),
      ("ij,jk,kl->il", _K, _Q, _Q.T.copy(), kw(optimize=True)), ("...j,j->...", _T, _U))
cases(np.linalg.norm, (_R,), (_R, 1), (_R, np.inf), (_R, -np.inf), (_R, 3), (_W,),
      (_W, "fro"), (_W, 1), (_W, -1), (_W, np.inf), (_W, -np.inf),
      (_T, None, (1, 2)), (_T, 2, -1, True), (_T, kw(ord=1, axis=(0, 2), keepdims=True)))

# NumPy scalars' methods compute what the ndarray's do (wengert.rules gives them the
# ndarray's definitions once every module is read): these are registered here, to be
# given cases. (``trace`` is refused by NumPy on every scalar: it has none.)
for _method, _definition in (
        ("argmax", ndarray_argmax), ("argmin", ndarray_argmin), ("argsort", ndarray_argsort),
        ("cumprod", ndarray_cumprod), ("cumsum", ndarray_cumsum), ("max", ndarray_max),
        ("mean", ndarray_mean), ("min", ndarray_min), ("prod", ndarray_prod),
        ("std", ndarray_std), ("sum", ndarray_sum), ("var", ndarray_var)):
    defpython(getattr(np.generic, _method))(_definition)
for _method in ("argmax", "argmin", "argsort", "cumprod", "cumsum", "max", "mean", "min",
                "prod", "sum", "var"):
    cases(getattr(np.generic, _method), (_S,))
cases(np.generic.sum, (_S, kw(keepdims=True)))
# (A scalar's std is 0 whatever it is, but the definition's square root of a zero variance
# has no derivative: differentiated it gives nan, as it does for a constant array. The
# value only, checked on an int.)
cases(np.generic.std, (np.int64(3),))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_sum, _unsum, _cumsum, _rcumsum, _diff, _diff_T, _expand, _sum_back, _trace,
                  _trace_T, _einsum1, _einsum_expand, _to_last, _from_last, _reshape_tail,
                  _squeeze_axes, _abs_pow, _nonzero_recip, _root, _sgn_pow, _max, _min)
