"""The batch-aware primitives NumPy's shape functions, joins, constructors and array
methods are written over (``rules/np_shapes.py`` says which primitive serves which
spelling), each declared with its transpose or partials and checked by its cases.

Each takes the value (or a tangent, or a cotangent, with leading batch axes) first and
static arguments after; what they return is built by NumPy functions called with
positional arguments, which type inference knows to be arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.form import ans_bar, cases, defderiv, deflinear
from wengert.rules.np_plans import (
    _arange_ramp,
    _atleast_shape,
    _axis,
    _diag_index,
    _dtype,
    _entry,
    _grid,
    _inverse,
    _linspace_ramp,
)
from wengert.rules.registry import (
    defjvp,
    defvjp,
    mark_array_result,
    mark_array_type,
    mark_pure,
    mark_sequence_args,
    mark_view,
)


def _permute(a: Any, perm: tuple[int, ...]) -> Any:
    """The last ``len(perm)`` axes of ``a`` permuted: result axis ``i`` (counted from the
    right) is input axis ``perm[i]``; batch axes in front stay."""
    a = np.asarray(a)
    k = len(perm)
    batch = a.ndim - k
    return np.transpose(a, tuple(range(batch)) + tuple(batch + k + p for p in perm))


def _reshape(a: Any, old: tuple[int, ...], new: tuple[int, ...]) -> Any:
    """The trailing axes of ``a`` (of shape ``old``) reshaped to ``new`` (a view where
    NumPy gives one); batch axes in front stay."""
    a = np.asarray(a)
    return np.reshape(a, a.shape[:a.ndim - len(old)] + tuple(new))


def _reshape_f(a: Any, old: tuple[int, ...], new: tuple[int, ...]) -> Any:
    """:func:`_reshape` reading and writing in Fortran order: the trailing axes reversed,
    reshaped to ``new`` reversed, and reversed back."""
    a = np.asarray(a)
    batch = a.ndim - len(old)
    front = tuple(range(batch))
    flipped = np.reshape(np.transpose(a, front + tuple(range(a.ndim - 1, batch - 1, -1))),
                         a.shape[:batch] + tuple(new)[::-1])
    return np.transpose(flipped, front + tuple(range(flipped.ndim - 1, batch - 1, -1)))


def _index(a: Any, index: tuple) -> Any:
    """``a[..., *index]`` as an array: ``index`` reads the trailing axes, its array
    entries adjacent (so that the axes they make stay behind the batch axes)."""
    return np.asarray(np.asarray(a)[(Ellipsis, *index)])


def _unindex(g: Any, index: tuple, shape: tuple[int, ...]) -> Any:
    """The transpose of :func:`_index`: a fresh array of ``shape`` (after ``g``'s batch
    axes), zero but for ``g`` added at ``[..., *index]``."""
    g = np.asarray(g)
    read = np.broadcast_to(np.zeros((), dtype=np.int8), shape)[(Ellipsis, *index)]
    out = np.zeros(g.shape[:g.ndim - np.ndim(read)] + tuple(shape), g.dtype)
    if all(isinstance(i, (int, np.integer, slice)) for i in index):
        out[(Ellipsis, *index)] = g  # a basic index reads each entry once
    else:
        np.add.at(out, (Ellipsis, *index), g)
    return out


def _leaves(x: Any, like: Any, path: tuple = ()) -> list[tuple[tuple, Any, Any]]:
    """``(path, leaf of x, leaf of like)`` for the entries of the nested lists ``like``
    (``x`` has their structure, a ``None`` for zeros)."""
    if isinstance(like, (list, tuple)):
        out = []
        for i, item in enumerate(like):
            out += _leaves(None if x is None else x[i], item, (*path, i))
        return out
    return [(path, x, like)]


def _batch_of(pairs: list[tuple[Any, int]]) -> tuple[int, ...]:
    """The batch shape of tangents ``t`` of values of ``ndim`` dimensions (pairs
    ``(t, ndim)``): the leading axes of the first that has them (none if none has: a
    plain ``0.0`` among batched tangents is a zero that broadcasts)."""
    for t, ndim in pairs:
        if t is not None and np.ndim(t) > ndim:
            return np.shape(t)[:np.ndim(t) - ndim]
    return ()


def _pack(t: Any, like: Any) -> Any:
    """``np.asarray(t)`` for ``t`` shaped like ``like``: for nested lists or tuples, the
    array of their entries (batch + ``np.shape(like)``; a ``None`` entry of a tangent is
    zeros, and only the structure of ``like`` is read), else ``t`` as an array."""
    if not isinstance(like, (list, tuple)):
        return np.asarray(t)
    leaves = _leaves(t, like)
    batch = _batch_of([(x, np.ndim(v)) for _, x, v in leaves])
    given = [x for _, x, _ in leaves if x is not None]
    if batch == () and len(given) == len(leaves):
        return np.array(t)
    dtype = np.result_type(*given) if given else np.float64
    out = np.zeros(batch + np.shape(like), dtype)
    for path, x, _ in leaves:
        if x is not None:
            out[(slice(None),) * len(batch) + path] = x
    return out


def _unpack(g: Any, like: Any) -> Any:
    """The transpose of :func:`_pack`: ``g`` (batch + ``np.shape(like)``) cut into the
    nested lists of ``like`` (Python numbers where ``like`` holds them and ``g`` has no
    batch axes), or ``g`` itself for an array or a number."""
    g = np.asarray(g)
    batch = g.ndim - np.ndim(like)

    def cut(item: Any, path: tuple) -> Any:
        if isinstance(item, (list, tuple)):
            return type(item)(cut(x, (*path, i)) for i, x in enumerate(item))
        part = g[(slice(None),) * batch + path]
        # Python numbers where like holds them (what tolist gives), as Python numbers.
        return part.item() if batch == 0 and type(item) in (float, int, bool) else part

    return cut(like, ())


def _join_plan(like: Any, axis: Any) -> tuple[list[tuple[int, ...]], int]:
    """How :func:`_concat` joins arrays like ``like``: the shape each is read in and the
    negative axis they are joined along. ``axis`` is an int, ``None`` (flat), or
    ``"hstack"``, ``"vstack"``, ``"dstack"`` or ``"column_stack"``."""
    if isinstance(like, np.ndarray):
        raise RuleRefusal("wengert: joining the rows of one array is not supported; pass a "
                        "list of arrays (list(a)) or reshape it")
    shapes = [tuple(np.shape(x)) for x in like]
    if not shapes:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        return [(int(np.prod(s, dtype=np.int64)),) for s in shapes], -1
    if axis == "hstack":
        reads = [_atleast_shape(s, 1) for s in shapes]
        return reads, _axis(0 if len(reads[0]) == 1 else 1, len(reads[0]))
    if axis == "vstack":
        return [_atleast_shape(s, 2) for s in shapes], -2
    if axis == "dstack":
        reads = [_atleast_shape(s, 3) for s in shapes]
        return reads, _axis(2, len(reads[0]))
    if axis == "column_stack":
        reads = [(int(np.prod(s, dtype=np.int64)), 1) if len(s) < 2 else s for s in shapes]
        return reads, _axis(1, len(reads[0]))
    if len(shapes[0]) == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return shapes, _axis(axis, len(shapes[0]))


def _concat(t: Any, like: Any, axis: Any) -> Any:
    """``np.concatenate`` of ``t``, a sequence like ``like`` (each entry an array, a
    number or nested lists of numbers, or for a tangent ``None`` for zeros, after any
    batch axes), each read in the shape :func:`_join_plan` gives."""
    reads, ax = _join_plan(like, axis)
    items = [None if x is None else _pack(x, v) for x, v in zip(t, like, strict=True)]
    batch = _batch_of([(x, np.ndim(v)) for x, v in zip(items, like, strict=True)])
    given = [x for x in items if x is not None]
    dtype = np.result_type(*given) if given else np.float64
    return np.concatenate([np.zeros(batch + r, dtype) if x is None else
                           np.reshape(np.broadcast_to(x, batch + np.shape(v)), batch + r)
                           for x, v, r in zip(items, like, reads, strict=True)], ax)


def _split(g: Any, like: Any, axis: Any) -> list[Any]:
    """The transpose of :func:`_concat`: ``g`` cut along the joining axis into pieces
    like the entries of ``like`` (views of ``g``, as ``np.split`` gives)."""
    reads, ax = _join_plan(like, axis)
    g = np.asarray(g)
    batch = g.shape[:g.ndim - len(reads[0])]
    bounds = np.cumsum([r[ax] for r in reads])[:-1]
    pieces = [_unpack(np.reshape(p, batch + np.shape(v)), v)
              for p, v in zip(np.split(g, bounds, ax), like, strict=True)]
    return tuple(pieces) if isinstance(like, tuple) else pieces


def _broadcast(a: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """``a`` (of ``shape``, after batch axes) broadcast to a fresh array of ``full``."""
    a = np.asarray(a)
    batch = a.shape[:a.ndim - len(shape)]
    a = np.reshape(a, batch + (1,) * (len(full) - len(shape)) + tuple(shape))
    return np.array(np.broadcast_to(a, batch + tuple(full)))


def _unbroadcast(g: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """The transpose of :func:`_broadcast`: ``g`` summed back to ``shape``."""
    g = np.asarray(g)
    batch = g.ndim - len(full)
    lead = len(full) - len(shape)
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + i for i, n in enumerate(shape) if n == 1 and full[lead + i] != 1)
    return np.reshape(np.sum(g, axes), g.shape[:batch] + tuple(shape))


def _mask(a: Any, mask: np.ndarray) -> Any:
    """``a`` where ``mask`` holds, zero elsewhere (``mask`` on the trailing axes)."""
    return np.where(mask, a, 0)


def _spread(c: Any, mask: np.ndarray, dtype: Any) -> Any:
    """The scalar ``c`` (one per batch entry) where ``mask`` holds, zero elsewhere, in
    ``dtype``."""
    c = np.asarray(c, dtype)
    return np.where(mask, np.reshape(c, c.shape + (1,) * mask.ndim), 0)


def _spread_sum(g: Any, mask: np.ndarray, dtype: Any) -> Any:
    """The transpose of :func:`_spread`: the sum of ``g`` where ``mask`` holds."""
    g = np.asarray(g)
    return np.asarray(np.sum(np.where(mask, g, 0), tuple(range(-mask.ndim, 0))), dtype)


def _cast(a: Any, dtype: Any) -> Any:
    """``np.asarray(a, dtype)`` (``a`` itself when it has that dtype already): linear for
    a float dtype, piecewise constant for an integer or boolean one (rules below)."""
    return np.asarray(a, dtype)


def _convert(t: Any, to: Any, result: Any) -> Any:
    """A tangent or cotangent ``t`` carried through a cast whose result has dtype
    ``result``: cast to ``to`` where that is a float dtype, zero where the cast rounds to
    integers."""
    if np.issubdtype(np.dtype(result), np.inexact):
        return np.array(t, to)
    return np.zeros(np.shape(t))


def _copy(a: Any) -> Any:
    """A fresh copy of ``a`` (a 0-d array for a number)."""
    return np.array(a)


def _item(a: Any, shape: tuple[int, ...], k: int) -> Any:
    """Entry ``k`` (flat) of ``a`` (of ``shape``, after batch axes) as a Python number,
    as ``a.item(k)`` gives, or with batch axes the array of them."""
    a = np.asarray(a)
    batch = a.shape[:a.ndim - len(shape)]
    part = np.reshape(a, batch + (-1,))[..., k]
    return part.item() if part.ndim == 0 else part


def _linspace(start: Any, stop: Any, num: int, endpoint: bool) -> Any:
    return np.linspace(start, stop, num, endpoint)


def _arange(start: Any, stop: Any, step: Any, dtype: Any) -> Any:
    return np.asarray(np.arange(start, stop, step, dtype=dtype))


deflinear(_permute, lambda a, perm: _permute(ans_bar, _inverse(perm)))
deflinear(_reshape, lambda a, old, new: _reshape(ans_bar, new, old))
deflinear(_reshape_f, lambda a, old, new: _reshape_f(ans_bar, new, old))
deflinear(_index, lambda a, index: _unindex(ans_bar, index, np.shape(a)))
deflinear(_unindex, lambda g, index, shape: _index(ans_bar, index))
deflinear(_pack, _unpack)
deflinear(_unpack, _pack)
deflinear(_concat, _split)
deflinear(_split, _concat)
deflinear(_broadcast, _unbroadcast)
# (NumPy gives views where it can: a reshape, a transpose, a basic index, the same array
# for ``np.asarray`` of one, the pieces of a split)
mark_view(_permute, _reshape, _reshape_f, _index, _pack, _split)
deflinear(_unbroadcast, _broadcast)
deflinear(_mask, _mask)
deflinear(_spread, lambda c, mask, dtype: _spread_sum(ans_bar, mask, _dtype(c)))
deflinear(_spread_sum, lambda g, mask, dtype: _spread(ans_bar, mask, _dtype(g)))
deflinear(_convert, lambda t, to, result: _convert(ans_bar, _dtype(t), result))


# A cast is linear or piecewise constant by its dtype, known only when it runs: one
# primitive, so that definitions need no branch on the dtype.
@defvjp(_cast)
def _cast_vjp(a, dtype):
    ans = _cast(a, dtype)
    return ans, lambda ans_bar: (_convert(ans_bar, _dtype(a), dtype), None)


@defjvp(_cast)
def _cast_jvp(a, dtype):
    ans = _cast(a, dtype)
    return ans, lambda a_dot, dtype_dot: None if a_dot is None else _convert(a_dot, dtype, dtype)


mark_pure(_cast)
deflinear(_copy, _copy)
deflinear(_item, lambda a, shape, k: _unindex(ans_bar, _entry(k, shape), shape))
# np.float64(x) and np.float32(x) of a number are casts: the cotangent is cast back.
deflinear(np.float64, lambda x: _cast(ans_bar, _dtype(x)))
deflinear(np.float32, lambda x: _cast(ans_bar, _dtype(x)))
# linspace is affine in (start, stop): each sample weighs stop by a fixed ramp.
defderiv(_linspace,
         lambda start, stop, num, endpoint, *, ans:
         1.0 - _linspace_ramp(ans, num, endpoint, max(np.ndim(start), np.ndim(stop))),
         lambda start, stop, num, endpoint, *, ans:
         _linspace_ramp(ans, num, endpoint, max(np.ndim(start), np.ndim(stop))),
         None, None, broadcast=True)
# arange(start, stop, step) is start + i * step; stop only decides the length.
defderiv(_arange, lambda start, stop, step, dtype, *, ans: _arange_ramp(ans, 0), None,
         lambda start, stop, step, dtype, *, ans: _arange_ramp(ans, 1), None, broadcast=True)


# ================================================================== cases

_A = np.arange(24.0).reshape(2, 3, 4) / 10.0
_M = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
_V = np.array([0.3, -1.2, 0.8, 2.0])
_MASK = np.array([[True, False, True], [False, True, True]])
cases(_permute, (_A, (-1, -3, -2)), (_A[0], (-1, -2)))
cases(_reshape, (_A, (2, 3, 4), (6, 4)), (_A, (3, 4), (12,)), (_V, (4,), (2, 1, 2)),
      (np.array(1.5), (), (1, 1)))
cases(_reshape_f, (_A, (2, 3, 4), (4, 6)), (_M, (2, 3), (3, 2)))
cases(_index,
      (_A, (np.array([2, 0, 2]), slice(None))),
      (_A, (slice(None, None, -1), slice(1, 3))),
      (_A, (1, 2)),
      (_A, _grid((2, 3, 4), np.argsort(-_A, axis=-1), -1)),
      (_M, _diag_index(2, 3, 1)))
cases(_unindex,
      (np.ones((2, 5, 4)), (np.array([2, 0, 2, 1, 0]), slice(None)), (2, 3, 4)),
      (_M, (slice(1, 3), slice(0, 3)), (4, 3)),
      (_V[:3], _diag_index(3, 3, 0), (3, 3)))
cases(_pack, ([0.5, -1.0, 2.0], [0.5, -1.0, 2.0]),
      (([0.5, 1.5], (0.25, -2.0)), ([1.0, 1.0], (1.0, 1.0))),
      ([_M, _M * 2.0], [_M, _M]), (_M, _M.copy()))
cases(_unpack, (_M, [[0.0] * 3, [0.0] * 3]), (_A, [_A[0], _A[1]]), (_V[:2], (1.0, 1.0)),
      (_M, _M.copy()))
cases(_concat, ([_M, _M[:, :1]], [_M, _M[:, :1]], -1), ((_M, _M[:1]), (_M, _M[:1]), 0),
      ([_V, _M], [_V, _M], None), ([_V[:3], [0.5, 1.5, -1.0]], [_V[:3], [0.0] * 3], "vstack"),
      ([_V, 0.5], [_V, 0.5], "hstack"), ([_M, _M], [_M, _M], "dstack"),
      ([_V[:2], _M[:, :1]], [_V[:2], _M[:, :1]], "column_stack"))
cases(_split, (_M, [_M[:, :1], _M[:, 1:]], -1), (_A, [_A[:1], _A[1:]], 0),
      (_V, [_V[:3], [0.0]], None))
cases(_broadcast, (_M[:1], (1, 3), (4, 2, 3)), (np.array(0.5), (), (2, 3)))
cases(_unbroadcast, (_A, (3, 1), (2, 3, 4)))
cases(_mask, (_M, _MASK))
cases(_spread, (0.7, _MASK, np.float64))
cases(_spread_sum, (_M, _MASK, np.float64))
# Finite differences cannot resolve float32 results but near zero, where steps are exact.
cases(_cast, (_M, np.float64), (np.zeros((2, 3)), np.float32),
      (np.zeros(3, dtype=np.float32), np.float64))
cases(_convert, (_M, np.float64, "float64"), (_M, np.float64, np.int64))
cases(_item, (_M, (2, 3), 4), (_A, (3, 4), 5))
cases(_copy, (_M,), (0.5,))
cases(_linspace, (0.5, 2.0, 5, True), (-1.0, 3.0, 4, False), (_V[:2], _V[2:], 3, True))
cases(_arange, (0.5, 4.0, 0.75, None), (-1.0, 2.5, 1.0, np.float64))


def _arange_type(start: Any, stop: Any, step: Any, dtype: Any) -> tuple[type, int] | None:
    """``np.arange`` of Python ints makes the default integers, of other numbers floats."""
    if dtype is not type(None):
        return None
    if all(t in (int, bool) for t in (start, stop, step)):
        return np.arange(1).dtype.type, 1
    if all(t in (int, bool, float) for t in (start, stop, step)):
        return np.float64, 1
    return None


mark_array_type(_arange, _arange_type)
# A copy of an array of known dtype and axes has them (of a number: a 0-d array).
mark_array_type(_copy, lambda a: a if type(a) is tuple else None)
# A transpose of an array of known dtype and axes has them (its axes in another order).
mark_array_type(_permute, lambda a, perm: a if type(a) is tuple else None)


def _pack_type(t: Any, like: Any) -> tuple[type, int] | None:
    """``np.array`` of (nested, rectangular) lists of floats: a float64 array of as many
    axes as the nesting is deep; of an array: an array of its dtype and axes."""
    def dims(x: Any) -> int | None:
        if x is float:
            return 0
        if type(x) is not list or not x:
            return None
        inner = {dims(e) for e in x}
        if len(inner) != 1 or None in inner:
            return None
        if inner != {0} and len({len(e) for e in x}) != 1:
            return None  # ragged
        return inner.pop() + 1

    if type(t) is tuple:
        return t  # (an array of known dtype and axes: itself)
    ndim = dims(t)
    return (np.float64, ndim) if ndim else None


mark_array_type(_pack, _pack_type)
cases(np.float64, (0.25,), (np.zeros(3, dtype=np.float32),))
cases(np.float32, (np.zeros(3),))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_broadcast, _concat, _copy, _index, _mask, _permute, _reshape, _reshape_f,
                  _spread, _spread_sum, _unbroadcast, _unindex)
mark_sequence_args(_concat)
