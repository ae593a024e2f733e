"""The batch-aware primitives of NumPy's reductions and contractions, each with its rules
(:mod:`wengert.rules.np_reductions` spells NumPy's functions over them).

The primitives, by family:

* linear, each declared with its transpose: :func:`_sum`/:func:`_unsum`, :func:`_to_last`
  (the reduced axes moved last and merged into one) and :func:`_from_last`,
  :func:`_expand`/:func:`_squeeze_axes` (``keepdims``), :func:`_reshape_tail`,
  :func:`_cumsum`/:func:`_rcumsum`, :func:`_diff`/:func:`_diff_T`,
  :func:`_trace`/:func:`_trace_T`, and :func:`_einsum1`/:func:`_einsum_expand` (a
  one-operand einsum: diagonals, sums, transpositions, and the embedding back);
* :func:`_einsum2`, bilinear: every contraction of two arrays (dot, inner, tensordot,
  kron, einsum, one pair at a time); its pullback is two more ``_einsum2`` calls;
* :func:`_max`/:func:`_min`: the cotangent shared equally among tied extremes (JAX's
  convention), a piecewise-constant weight;
* products, exact where entries are zero (no division by an entry): :func:`_prod_last`
  with :func:`_others` (the product of the other entries, from two exclusive cumulative
  products), and :func:`_cumprod_last` with :func:`_cumprod_t` and :func:`_cumprod_c` (its
  derivative applied to a tangent and its transpose applied to a cotangent). Their own
  derivatives are the same primitives applied to an ``n x n`` array of rows, row ``m``
  the input with entry ``m`` replaced by 1, so the rules close on themselves to any
  order (first order costs O(n), second order O(n^2), as the Hessian's size);
* :func:`_root` (``s ** (1/p)``, the last step of a norm) with :func:`_nonzero_recip`:
  the gradient of a norm at the zero vector is the subgradient 0 (JAX gives NaN there);
  the second derivative there does not exist, and is NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.rules.form import ans_bar, defderiv, deflinear, defrule
from wengert.rules.np_reduction_plans import (
    _count,
    _eye,
    _float_dtype,
    _kept,
    _nan_at_zero,
    _off,
    _tie_weights,
    _upper,
)
from wengert.rules.registry import (
    defjvp,
    defrules,
    defvjp,
    mark_pure,
    mark_result_shape,
    mark_result_type,
    nondifferentiable,
)
from wengert.rules.shapes import add_over, broadcast_view, reduced_shape
from wengert.rules.shapes import unsqueeze as _unsqueeze

_NoValue = np._NoValue
_INF = np.inf

# ======================================================================= linear primitives


def _sum(a: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """``a`` summed over the negative ``axes`` (the batch axes in front are kept)."""
    if type(a) is np.ndarray and a.dtype.kind in "fc":
        return _add_reduce(a, axes, keepdims=keepdims)  # (``np.sum``'s, without its wrapper)
    return np.sum(a, axis=axes, keepdims=keepdims)


_add_reduce = np.add.reduce


#: Scalar cotangents :func:`_unsum` spreads without a copy.
_SCALARS = frozenset({float, np.float64, np.float32})


def _sum_type(a: Any, axes: Any, keepdims: Any) -> Any:
    """What :func:`_sum` gives for an array of ``(dtype, ndim)`` ``a`` of floats: a scalar
    of its dtype where every axis is summed away, else an array of fewer axes."""
    if type(a) is not tuple or type(axes) is not tuple or type(keepdims) is not bool or \
            not issubclass(a[0], np.floating) or len(set(axes)) != len(axes) or \
            not all(type(k) is int and -a[1] <= k < 0 for k in axes):
        return None
    if keepdims:
        return a
    return a[0] if len(axes) == a[1] else (a[0], a[1] - len(axes))


def _unsum(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """The transpose of :func:`_sum`: ``g`` (of the reduced shape, after any batch axes)
    spread back over ``shape``, as a read-only broadcast view (no copy of the full array:
    in-place adjoint updates check that they own what they write into, and the API copies
    a read-only gradient before handing it out)."""
    if type(g) in _SCALARS and len(axes) == len(shape) and not keepdims:
        # A full reduction's cotangent (a mean's, a loss's): one number seen everywhere.
        one = np.array(g)
        view = np.ndarray(tuple(shape), one.dtype, one, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    g = np.asarray(g)
    if not keepdims:
        for a in sorted(axes, reverse=True):  # -1 first: each insert keeps the others' places
            g = _unsqueeze(g, a)
    batch = g.ndim - len(shape)
    return broadcast_view(g, g.shape[:batch] + tuple(shape))


def _sum_back(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """:func:`_unsum`'s transpose: the sum over ``axes`` of ``g`` of shape batch + shape."""
    return add_over(g, axes, keepdims)


mark_result_shape(lambda shapes, consts: reduced_shape(shapes[0], consts[1], consts[2]), _sum)
mark_result_type(lambda types, consts: _sum_type(types[0], consts[1], consts[2]), _sum)
mark_result_shape(lambda shapes, consts: reduced_shape(shapes[0], consts[2], consts[3]),
                  _sum_back)
mark_result_shape(lambda shapes, consts: consts[1] if reduced_shape(
    consts[1], consts[2], consts[3]) == shapes[0] else None, _unsum)
deflinear(_sum, lambda a, axes, keepdims: _unsum(ans_bar, np.shape(a), axes, keepdims))
deflinear(_unsum, lambda g, shape, axes, keepdims: _sum_back(ans_bar, shape, axes, keepdims))
deflinear(_sum_back, lambda g, shape, axes, keepdims: _unsum(ans_bar, shape, axes, keepdims))


def _to_last(a: Any, axes: tuple[int, ...]) -> Any:
    """The negative ``axes`` of ``a`` moved to the end (in order) and merged into one:
    the kept axes stay in order before it, batch axes in front."""
    a = np.asarray(a)
    k = len(axes)
    n = _count(a.shape, axes)
    moved = np.moveaxis(a, axes, tuple(range(-k, 0)))
    return moved.reshape(moved.shape[:moved.ndim - k] + (n,))


def _from_last(g: Any, axes: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    """:func:`_to_last`'s inverse (and transpose): the last axis of ``g`` split into the
    sizes ``shape`` has at ``axes`` and moved back there."""
    g = np.asarray(g)
    k = len(axes)
    g = g.reshape(g.shape[:-1] + tuple(shape[a] for a in axes))
    return np.moveaxis(g, tuple(range(-k, 0)), axes)


deflinear(_to_last, lambda a, axes: _from_last(ans_bar, axes, np.shape(a)))
deflinear(_from_last, lambda g, axes, shape: _to_last(ans_bar, axes))


def _expand(a: Any, axes: tuple[int, ...]) -> Any:
    """Size-1 axes inserted at the negative ``axes`` of the result (``keepdims``)."""
    return np.expand_dims(a, axes)


def _squeeze_axes(a: Any, axes: tuple[int, ...]) -> Any:
    """The size-1 axes at the negative ``axes`` removed."""
    return np.squeeze(a, axes)


deflinear(_expand, lambda a, axes: _squeeze_axes(ans_bar, axes))
deflinear(_squeeze_axes, lambda a, axes: _expand(ans_bar, axes))


def _reshape_tail(x: Any, old: tuple[int, ...], new: tuple[int, ...]) -> Any:
    """``x``'s trailing axes (shaped ``old``) reshaped to ``new``; batch axes stay."""
    x = np.asarray(x)
    return x.reshape(x.shape[:x.ndim - len(old)] + tuple(new))


deflinear(_reshape_tail, lambda x, old, new: _reshape_tail(ans_bar, new, old))


def _cumsum(a: Any, axis: int) -> Any:
    """The running sum along the negative ``axis``."""
    return np.cumsum(a, axis=axis)


def _rcumsum(g: Any, axis: int) -> Any:
    """The running sum from the end along ``axis``: :func:`_cumsum`'s transpose."""
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


deflinear(_cumsum, lambda a, axis: _rcumsum(ans_bar, axis))
deflinear(_rcumsum, lambda g, axis: _cumsum(ans_bar, axis))


def _diff(a: Any, n: int, axis: int) -> Any:
    """The ``n``-th difference along the negative ``axis``."""
    return np.diff(a, n=n, axis=axis)


def _diff_T(g: Any, n: int, axis: int) -> Any:
    """:func:`_diff`'s transpose: ``n`` times, ``g`` shifted one place later minus ``g``
    (each difference ``d[i] = a[i+1] - a[i]`` gives ``a[k]`` the share ``d[k-1] - d[k]``)."""
    g = np.asarray(g)
    for _ in range(n):
        width = [(0, 0)] * g.ndim
        width[axis] = (1, 0)
        later = np.pad(g, width)
        width[axis] = (0, 1)
        g = later - np.pad(g, width)
    return g


deflinear(_diff, lambda a, n, axis: _diff_T(ans_bar, n, axis))
deflinear(_diff_T, lambda g, n, axis: _diff(ans_bar, n, axis))


def _trace(a: Any, offset: int, axes: tuple[int, int]) -> Any:
    """The sum of the ``offset`` diagonal over the negative ``axes`` pair; the other axes
    stay in order."""
    return np.trace(a, offset, axes[0], axes[1])


def _trace_T(g: Any, shape: tuple[int, ...], offset: int, axes: tuple[int, int]) -> Any:
    """:func:`_trace`'s transpose: ``g`` written on the ``offset`` diagonal of zeros of
    ``shape`` (after ``g``'s batch axes)."""
    g = np.asarray(g)
    batch = g.shape[:g.ndim - (len(shape) - 2)]
    out = np.zeros(batch + tuple(shape), dtype=np.result_type(g, np.float32))
    # A writable view of the diagonal: the pair moved last, the offset sliced off, the
    # square block's diagonal read by einsum (a view, as einsum returns for no sum).
    square = np.moveaxis(out, axes, (-2, -1))
    square = square[..., max(0, -offset):, max(0, offset):]
    d = min(square.shape[-2], square.shape[-1])
    diagonal = np.einsum("...ii->...i", square[..., :d, :d])
    diagonal[...] = g[..., None]
    return out


deflinear(_trace, lambda a, offset, axes: _trace_T(ans_bar, np.shape(a), offset, axes))
deflinear(_trace_T, lambda g, shape, offset, axes: _trace(ans_bar, offset, axes))


def _einsum1(a: Any, ins: str, out: str) -> Any:
    """The one-operand einsum ``ins -> out`` (a diagonal, a sum, a transposition), batch
    axes in front."""
    return np.einsum(f"...{ins}->...{out}", a)


def _einsum_expand(v: Any, frm: str, to: str, shape: tuple[int, ...]) -> Any:
    """:func:`_einsum1`'s transpose: ``v`` over the letters ``frm`` (each once) spread to an
    array of ``shape`` over ``to``: copied along the letters ``frm`` lacks, written on the
    diagonals of repeated letters (zeros off them)."""
    v = np.asarray(v)
    batch = v.shape[:v.ndim - len(frm)]
    unique = "".join(dict.fromkeys(to))
    if frm == to:
        return v.copy()
    out = np.zeros(batch + tuple(shape), dtype=v.dtype)
    # Writable: with no letter summed, einsum answers a view (diagonals, transpositions).
    view = np.einsum(f"...{to}->...{unique}", out)
    size = dict(zip(to, shape, strict=True))
    ordered = "".join(c for c in unique if c in frm)
    v = np.einsum(f"...{frm}->...{ordered}", v)
    view[...] = v.reshape(batch + tuple(size[c] if c in frm else 1 for c in unique))
    return out


deflinear(_einsum1, lambda a, ins, out: _einsum_expand(ans_bar, out, ins, np.shape(a)))
deflinear(_einsum_expand, lambda v, frm, to, shape: _einsum1(ans_bar, to, frm))


# ==================================================================== the bilinear einsum


def _einsum2(a: Any, b: Any, spec: tuple[str, str, str]) -> Any:
    """The einsum ``sa,sb->so`` of two arrays (``spec = (sa, sb, so)``), batch axes in
    front of either. Large operands go through NumPy's BLAS-backed contraction."""
    sa, sb, so = spec
    big = np.size(a) * np.size(b) > 4096
    return np.einsum(f"...{sa},...{sb}->...{so}", a, b, optimize=big)


@defrule(_einsum2)
def _einsum2_rule(a, b, spec):
    ans = _einsum2(a, b, spec)

    def _einsum2_pullback(ans_bar):
        # Each operand's cotangent: the einsum of the other with ans_bar over the letters
        # they share, then spread over the letters only it has and onto its diagonals.
        sa, sb, so = spec
        ka = _kept(spec, 0)
        kb = _kept(spec, 1)
        a_bar = _einsum_expand(_einsum2(ans_bar, b, (so, sb, ka)), ka, sa, np.shape(a))
        b_bar = _einsum_expand(_einsum2(a, ans_bar, (sa, so, kb)), kb, sb, np.shape(b))
        return a_bar, b_bar, None

    def _einsum2_differential(a_dot, b_dot, spec_dot):
        if a_dot is None:
            if b_dot is None:
                return None
            return _einsum2(a, b_dot, spec)
        if b_dot is None:
            return _einsum2(a_dot, b, spec)
        return _einsum2(a_dot, b, spec) + _einsum2(a, b_dot, spec)

    return ans, _einsum2_pullback, _einsum2_differential


# ======================================================================== max and min


def _max(a: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The largest entry over the negative ``axes``."""
    return np.max(a, axis=axes, keepdims=keepdims)


def _min(a: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The smallest entry over the negative ``axes``."""
    return np.min(a, axis=axes, keepdims=keepdims)


# The extreme's cotangent is shared equally among the entries equal to it: a weight that
# is piecewise constant, so it adds no second-order term.


def _extreme_rules(extreme: Any) -> None:
    """The rules of ``_max`` or ``_min``: one pair of bodies, the primitive read from the
    closure (the ties are the entries equal to the extreme found)."""

    def extreme_vjp(a, axes, keepdims):
        ans = extreme(a, axes, keepdims)
        w = _tie_weights(a, ans, axes, keepdims)

        def extreme_pullback(ans_bar):
            return _unsum(ans_bar, np.shape(a), axes, keepdims) * w, None, None

        return ans, extreme_pullback

    def extreme_jvp(a, axes, keepdims):
        ans = extreme(a, axes, keepdims)
        w = _tie_weights(a, ans, axes, keepdims)

        def extreme_differential(a_dot, axes_dot, keepdims_dot):
            if a_dot is None:
                return None
            return _sum(a_dot * w, axes, keepdims)

        return ans, extreme_differential

    defrules(extreme, extreme_vjp, extreme_jvp)


_extreme_rules(_max)
_extreme_rules(_min)


# ============================================================================ products


def _prod_last(x: Any) -> Any:
    """The product along the last axis."""
    return np.prod(x, axis=-1)


def _others(x: Any) -> Any:
    """Entry ``i``: the product of the other entries along the last axis, without
    dividing (exact where entries are zero): the product of those before times the
    product of those after, each a running product."""
    x = np.asarray(x)
    if x.shape[-1] == 0:
        return x.copy()
    one = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    before = np.cumprod(np.concatenate([one, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([one, np.flip(x[..., 1:], -1)], axis=-1), axis=-1)
    return before * np.flip(after, -1)


@defrule(_prod_last)
def _prod_last_rule(x):
    ans = _prod_last(x)

    def _prod_last_pullback(ans_bar):
        return (_unsqueeze(ans_bar, -1) * _others(x),)

    def _prod_last_differential(x_dot):
        if x_dot is None:
            return None
        return _sum(x_dot * _others(x), (-1,), False)

    return ans, _prod_last_pullback, _prod_last_differential


# d others_i / d x_k = the product of the entries but i and k (0 for k = i): the others
# of row i of ``unit`` (x with entry i replaced by 1, made with operators that have rules),
# at k, off the diagonal. Symmetric, so one formula serves both modes.


@defrule(_others)
def _others_rule(x):
    ans = _others(x)

    def _others_pullback(ans_bar):
        unit = _unsqueeze(x, -2) * _off(x) + _eye(x)
        pairs = _others(unit) * _off(x)
        return (_sum(pairs * _unsqueeze(ans_bar, -1), (-2,), False),)

    def _others_differential(x_dot):
        if x_dot is None:
            return None
        unit = _unsqueeze(x, -2) * _off(x) + _eye(x)
        pairs = _others(unit) * _off(x)
        return _sum(pairs * _unsqueeze(x_dot, -2), (-1,), False)

    return ans, _others_pullback, _others_differential


def _cumprod_last(a: Any) -> Any:
    """The running product along the last axis."""
    return np.cumprod(a, axis=-1)


def _exact_division(a: Any) -> bool:
    """Whether dividing by the entries of ``a`` is safe (none is zero or near underflow)."""
    a = np.asarray(a)
    if not np.issubdtype(a.dtype, np.inexact):
        return bool(np.all(a != 0))
    return bool(np.all(np.abs(a) > np.sqrt(np.finfo(a.dtype).tiny)))


def _cumprod_t(a: Any, t: Any) -> Any:
    """The derivative of the running product at ``a`` applied to ``t`` (batch axes in
    front): entry ``i`` is the sum over ``k <= i`` of ``t[k]`` times the product of
    ``a[j]``, ``j <= i``, ``j != k``."""
    a = np.asarray(a)
    t = np.asarray(t)
    if _exact_division(a):
        return np.cumprod(a, axis=-1) * np.cumsum(t / a, axis=-1)
    # An entry is zero: the recurrence d[i] = d[i-1] a[i] + c[i-1] t[i] (c the product).
    out = np.zeros(np.broadcast_shapes(a.shape, t.shape), dtype=np.result_type(a, t))
    c = np.ones(a.shape[:-1], dtype=a.dtype)
    d = np.zeros(out.shape[:-1], dtype=out.dtype)
    for i in range(a.shape[-1]):
        d = d * a[..., i] + c * t[..., i]
        c = c * a[..., i]
        out[..., i] = d
    return out


def _cumprod_c(a: Any, g: Any) -> Any:
    """The transpose of :func:`_cumprod_t`, applied to the cotangent ``g``: entry ``k`` is
    the sum over ``i >= k`` of ``g[i]`` times the product of ``a[j]``, ``j <= i``,
    ``j != k``."""
    a = np.asarray(a)
    g = np.asarray(g)
    if _exact_division(a):
        return np.flip(np.cumsum(np.flip(g * np.cumprod(a, axis=-1), -1), axis=-1), -1) / a
    # An entry is zero: the product before k, times s[k] = g[k] + a[k+1] s[k+1].
    n = a.shape[-1]
    out = np.zeros(np.broadcast_shapes(a.shape, g.shape), dtype=np.result_type(a, g))
    s = np.zeros(out.shape[:-1], dtype=out.dtype)
    for k in range(n - 1, -1, -1):
        s = g[..., k] + (a[..., k + 1] * s if k + 1 < n else s)
        out[..., k] = s
    one = np.ones(a.shape[:-1] + (1,), dtype=a.dtype)
    return out * np.cumprod(np.concatenate([one, a[..., :-1]], axis=-1), axis=-1)


@defvjp(_cumprod_last)
def _cumprod_last_vjp(a):
    ans = _cumprod_last(a)
    return ans, lambda ans_bar: (_cumprod_c(a, ans_bar),)


@defjvp(_cumprod_last)
def _cumprod_last_jvp(a):
    ans = _cumprod_last(a)
    return ans, lambda a_dot: None if a_dot is None else _cumprod_t(a, a_dot)


# The second derivatives of the running product, through the rows of ``unit`` (row m:
# a with a[m] = 1). d _cumprod_t(a, t)[i] / d a[m] is, for m <= i, the sum over k <= i,
# k != m, of t[k] times the product of a[j], j <= i, j not k or m: _cumprod_t of row m
# applied to t with t[m] = 0, masked to m <= i. d _cumprod_c(a, g)[k] / d a[m], k != m,
# is the sum over i >= k, m of g[i] times the same product: _cumprod_c of row m applied
# to g masked to i >= m, off the diagonal.


@defrule(_cumprod_t)
def _cumprod_t_rule(a, t):
    ans = _cumprod_t(a, t)

    def _cumprod_t_pullback(ans_bar):
        unit = _unsqueeze(a, -2) * _off(a) + _eye(a)
        rows = _cumprod_t(unit, _unsqueeze(t, -2) * _off(a)) * _upper(a)
        a_bar = _sum(rows * _unsqueeze(ans_bar, -2), (-1,), False)
        return a_bar, _cumprod_c(a, ans_bar)

    def _cumprod_t_differential(a_dot, t_dot):
        out = None if t_dot is None else _cumprod_t(a, t_dot)
        if a_dot is not None:
            unit = _unsqueeze(a, -2) * _off(a) + _eye(a)
            rows = _cumprod_t(unit, _unsqueeze(t, -2) * _off(a)) * _upper(a)
            term = _sum(rows * _unsqueeze(a_dot, -1), (-2,), False)
            out = term if out is None else out + term
        return out

    return ans, _cumprod_t_pullback, _cumprod_t_differential


@defrule(_cumprod_c)
def _cumprod_c_rule(a, g):
    ans = _cumprod_c(a, g)

    def _cumprod_c_pullback(ans_bar):
        unit = _unsqueeze(a, -2) * _off(a) + _eye(a)
        rows = _cumprod_c(unit, _unsqueeze(g, -2) * _upper(a)) * _off(a)
        a_bar = _sum(rows * _unsqueeze(ans_bar, -2), (-1,), False)
        return a_bar, _cumprod_t(a, ans_bar)

    def _cumprod_c_differential(a_dot, g_dot):
        out = None if g_dot is None else _cumprod_c(a, g_dot)
        if a_dot is not None:
            unit = _unsqueeze(a, -2) * _off(a) + _eye(a)
            rows = _cumprod_c(unit, _unsqueeze(g, -2) * _upper(a)) * _off(a)
            term = _sum(rows * _unsqueeze(a_dot, -1), (-2,), False)
            out = term if out is None else out + term
        return out

    return ans, _cumprod_c_pullback, _cumprod_c_differential


# ============================================================================== norms


def _nonzero_recip(n: Any) -> Any:
    """``1 / n``, and 0 where ``n`` is 0 (the subgradient choice of a norm at zero)."""
    n = np.asarray(n)
    out = np.zeros(n.shape, dtype=_float_dtype(n))
    np.divide(1, n, out=out, where=n != 0)
    return out[()]


def _root(s: Any, p: Any) -> Any:
    """``s ** (1/p)`` (a sum of p-th powers to its norm)."""
    return np.sqrt(s) if p == 2 else np.power(s, 1.0 / p)


# (1/p) s ** (1/p - 1) = ans / (p s); 0 at s = 0, where the norm's gradient is taken as 0.
# There the second derivative does not exist: the slope of _nonzero_recip is NaN.
def _abs_pow(x: Any, p: Any) -> Any:
    """``|x| ** p`` (``x * x`` for ``p = 2``)."""
    return x * x if p == 2 else np.abs(x) ** p


def _sgn_pow(x: Any, q: Any) -> Any:
    """``sign(x) |x| ** q``, the slope of :func:`_abs_pow` divided by its power."""
    return x if q == 1 else np.sign(x) * np.abs(x) ** q


# Each the other's slope, a power lower: the 2-norm's square has the slope 2 x and the
# curvature 2 at x = 0 too, the 1-norm the slope sign(x) (0 at 0); a power 0 is constant.
defderiv(_abs_pow, lambda x, p=2: 0.0 * x if p == 0 else p * _sgn_pow(x, p - 1))
defderiv(_sgn_pow, lambda x, q=1: 0.0 * x if q == 0 else q * _abs_pow(x, q - 1))
defderiv(_root, lambda s, p=2, *, ans: ans * _nonzero_recip(s) / p)
defderiv(_nonzero_recip, lambda n, *, ans: _nan_at_zero(n) - ans * ans)


mark_pure(_max, _min, _einsum2, _prod_last, _others, _cumprod_last, _cumprod_t, _cumprod_c)
nondifferentiable(_exact_division)
