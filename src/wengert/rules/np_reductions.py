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

from wengert.rules.form import cases
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
    return _weighted_average(a, axis, weights, returned, _flag(keepdims))


def _weighted_average(a, axis, weights, returned, keepdims):
    """``np.average`` with weights (a helper of :func:`average_`, inlined with it)."""
    # The weights' axes ordered like a's, with size-1 axes where a has others.
    ins, ordered, before, after = _weight_layout(np.shape(weights), np.shape(a), axis, returned)
    w = _reshape_tail(_einsum1(weights, ins, ordered), before, after)
    axes = _axes(axis, np.ndim(a))
    scl = _sum(w, axes, keepdims)
    _check_weights(scl)
    return _sum(a * w, axes, keepdims) / scl


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
    matrix, p, first, second, both = _norm_plan(np.ndim(x), ord, axis)
    if matrix:
        return _matrix_norm(x, p > 0, first, second, both, keepdims)
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


def _matrix_norm(x, largest, first, second, both, keepdims):
    """The matrix norms 1, -1, inf, -inf: ``|x|`` summed over ``first``, then the max or
    min over ``second`` (a helper of :func:`norm_`, inlined with it)."""
    sums = _sum(np.abs(x), first, True)
    if largest:
        out = _max(sums, second, True)
    else:
        out = _min(sums, second, True)
    if keepdims:
        return out
    return _squeeze_axes(out, both)


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

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_sum, _unsum, _cumsum, _rcumsum, _diff, _diff_T, _expand, _sum_back, _trace,
                  _trace_T, _einsum1, _einsum_expand, _to_last, _from_last, _reshape_tail,
                  _squeeze_axes, _abs_pow, _nonzero_recip, _root, _sgn_pow, _max, _min)
