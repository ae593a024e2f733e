"""NumPy's shape functions, joining and splitting, constructors, and the methods and
attributes of arrays.

Like the reductions, each NumPy spelling is a Python definition over a few batch-aware
primitives: axes are normalised to negative positions counted from the right, so the
same primitive call applies to a tangent or cotangent with leading batch axes. The
primitives, most of them linear in their first argument and declared with their
transposes:

* :func:`_reshape` (its own transpose, the shapes swapped; :func:`_reshape_f` reads in
  Fortran order) and :func:`_permute`: reshape, ravel, flatten, squeeze, expand_dims,
  atleast_*, transpose, swapaxes, moveaxis;
* :func:`_index` and :func:`_unindex`, a gather ``a[..., *index]`` on the trailing axes
  and the scatter-add back: take, take_along_axis, sort, flip, roll, repeat, rot90, diag,
  diagonal, pad (the index map of each of its copying modes is NumPy's pad of ``arange``);
* :func:`_pack` and :func:`_unpack`, nested lists of values and an array: ``np.array``
  and ``np.asarray`` of active numbers, stack, ``tolist``;
* :func:`_concat` and :func:`_split`: concatenate, append, hstack, vstack, dstack,
  column_stack, split, array_split, hsplit, vsplit, dsplit;
* :func:`_broadcast` and :func:`_unbroadcast`: broadcast_to, broadcast_arrays, tile,
  meshgrid, full;
* :func:`_mask` (zeros outside a fixed mask: triu, tril), :func:`_spread` and
  :func:`_spread_sum` (a scalar over a mask: pad's constant), :func:`_copy`, and
  :func:`_item` (one entry as a Python number);
* :func:`_cast` (``astype``, ``np.float32(x)``), linear for a float dtype with the
  cotangent cast back, piecewise constant for an integer one (:func:`_convert`);
* :func:`_linspace` (affine in start and stop) and :func:`_arange` (in start and step).

The static work (index arrays, shapes, permutations) is done by helpers registered as
non-differentiable, so that the definitions, inlined into user code, stay within the
inliner's budget; the primitives return what NumPy's array builders return, so that
type inference knows their results are arrays (methods and attributes of them resolve
when the code is differentiated again). Where NumPy answers with a view (reshape,
transpose, basic slicing) or with its argument itself (asarray), the answer is the same
here, so a program that writes through one computes what NumPy computes.

Constructors whose values do not depend on their arguments' values (zeros, ones, empty,
eye, identity, tri, the ``*_like`` functions but ``full_like``) are non-differentiable.
Random numbers need no rules: generated inside the function, they are constants of the
primal; a random function given an active argument (``rng.normal(mu)``) is refused at
its call, as any function without rules is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.rules.form import ans_bar, cases, defderiv, deflinear
from wengert.rules.np_plans import (
    _UNSET,
    _along_plan,
    _arange_ramp,
    _atleast_shape,
    _axis,
    _broadcast_target,
    _check_castable,
    _common_shape,
    _copies,
    _diag_index,
    _diag_plan,
    _diagonal_plan,
    _dtype,
    _entry,
    _expanded,
    _fill_dtype,
    _flat_position,
    _flip_index,
    _fortran,
    _grid,
    _inverse,
    _linspace_ramp,
    _linspace_step,
    _mesh_plan,
    _method_perm,
    _move_perm,
    _ndmin_shape,
    _new_shape,
    _pad_plan,
    _perm,
    _repeat_plan,
    _roll_plan,
    _rot90_plan,
    _same_dtype,
    _sort_plan,
    _split_axis,
    _split_like,
    _squeezed,
    _stack_perm,
    _structure,
    _swap_perm,
    _take_plan,
    _tile_plan,
    _triangle_plan,
)
from wengert.rules.registry import (
    defjvp,
    defpython,
    defvjp,
    mark_array_result,
    mark_pure,
    nondifferentiable,
)

nondifferentiable(np.shape, np.ndim, np.size, _dtype)


@defpython(np.ndarray.shape)
def ndarray_shape(self):
    return np.shape(self)


@defpython(np.ndarray.ndim)
def ndarray_ndim(self):
    return np.ndim(self)


@defpython(np.ndarray.size)
def ndarray_size(self):
    return np.size(self)


@defpython(np.ndarray.dtype)
def ndarray_dtype(self):
    return _dtype(self)


# ================================================================== primitives
# Each takes the value (or a tangent, or a cotangent, with leading batch axes) first and
# static arguments after; what they return is built by NumPy functions called with
# positional arguments, which type inference knows to be arrays.


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
    ``(t, ndim)``): the leading axes of the first that is not ``None`` (none if all are)."""
    for t, ndim in pairs:
        if t is not None:
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
        raise TypeError("wengert: joining the rows of one array is not supported; pass a "
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


# ================================================================== array-likes and casts


def _astype(a, dtype):
    """``a`` cast to ``dtype`` (not a complex one)."""
    _check_castable(dtype)
    return _cast(a, dtype)


@defpython(np.asarray, keywords=("dtype", "order", "device", "copy", "like"))
def asarray_(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    out = _pack(a, a)
    if dtype is not None:
        out = _astype(out, dtype)
    if copy:
        out = _copy(out)
    return out


@defpython(np.array, keywords=("dtype", "copy", "order", "subok", "ndmin", "like"))
def array_(object, dtype=None, *, copy=True, order="K", subok=True, ndmin=0, like=None):
    out = _pack(object, object)
    if _copies(object, copy):
        out = _copy(out)
    if dtype is not None:
        out = _astype(out, dtype)
    if ndmin > 0:
        out = _reshape(out, np.shape(out), _ndmin_shape(np.shape(out), ndmin))
    return out


@defpython(np.ndarray.astype, keywords=("order", "casting", "subok", "copy"))
def ndarray_astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    out = _astype(self, dtype)
    if copy and _same_dtype(self, dtype):
        out = _copy(out)  # astype gives a new array unless told it need not
    return out


@defpython(np.copy, keywords=("order", "subok"))
def copy_(a, order="K", subok=False):
    return _copy(_pack(a, a))


@defpython(np.ndarray.copy, keywords=("order",))
def ndarray_copy(self, order="C"):
    return _copy(self)


# ================================================================== reshaping


def _reshape_to(a, shape, order):
    """``a`` reshaped to ``shape`` reading in ``order``."""
    old = np.shape(a)
    if _fortran(a, order):
        return _reshape_f(a, old, _new_shape(old, shape))
    return _reshape(a, old, _new_shape(old, shape))


@defpython(np.reshape, keywords=("shape", "order", "copy"))
def reshape_(a, shape, order="C", *, copy=None):
    out = _reshape_to(_pack(a, a), shape, order)
    if copy:
        out = _copy(out)
    return out


@defpython(np.ndarray.reshape, keywords=("order", "copy"))
def ndarray_reshape(self, *shape, order="C", copy=None):
    out = _reshape_to(self, shape, order)
    if copy:
        out = _copy(out)
    return out


@defpython(np.ravel, keywords=("order",))
def ravel_(a, order="C"):
    return _reshape_to(_pack(a, a), -1, order)


@defpython(np.ndarray.ravel, keywords=("order",))
def ndarray_ravel(self, order="C"):
    return _reshape_to(self, -1, order)


@defpython(np.ndarray.flatten, keywords=("order",))
def ndarray_flatten(self, order="C"):
    return _copy(_reshape_to(self, -1, order))


@defpython(np.squeeze, keywords=("axis",))
def squeeze_(a, axis=None):
    a = _pack(a, a)
    return _reshape(a, np.shape(a), _squeezed(np.shape(a), axis))


@defpython(np.ndarray.squeeze, keywords=("axis",))
def ndarray_squeeze(self, axis=None):
    return _reshape(self, np.shape(self), _squeezed(np.shape(self), axis))


@defpython(np.expand_dims, keywords=("axis",))
def expand_dims_(a, axis):
    a = _pack(a, a)
    return _reshape(a, np.shape(a), _expanded(np.shape(a), axis))


def _atleast(arys, n):
    """``np.atleast_{n}d(*arys)``: one array for one argument, else a tuple."""
    out = tuple([_reshape(_pack(a, a), np.shape(a), _atleast_shape(np.shape(a), n))
                 for a in arys])
    if len(out) == 1:
        return out[0]
    return out


@defpython(np.atleast_1d)
def atleast_1d_(*arys):
    return _atleast(arys, 1)


@defpython(np.atleast_2d)
def atleast_2d_(*arys):
    return _atleast(arys, 2)


@defpython(np.atleast_3d)
def atleast_3d_(*arys):
    return _atleast(arys, 3)


# ================================================================== axes


@defpython(np.transpose, keywords=("axes",))
def transpose_(a, axes=None):
    a = _pack(a, a)
    return _permute(a, _perm(axes, np.ndim(a)))


@defpython(np.ndarray.T)
def ndarray_T(self):
    return _permute(self, _perm(None, np.ndim(self)))


@defpython(np.ndarray.transpose)
def ndarray_transpose(self, *axes):
    return _permute(self, _method_perm(axes, np.ndim(self)))


@defpython(np.swapaxes)
def swapaxes_(a, axis1, axis2):
    a = _pack(a, a)
    return _permute(a, _swap_perm(np.ndim(a), axis1, axis2))


@defpython(np.ndarray.swapaxes)
def ndarray_swapaxes(self, axis1, axis2):
    return _permute(self, _swap_perm(np.ndim(self), axis1, axis2))


@defpython(np.moveaxis)
def moveaxis_(a, source, destination):
    a = _pack(a, a)
    return _permute(a, _move_perm(np.ndim(a), source, destination))


# ================================================================== broadcasting


@defpython(np.broadcast_to, keywords=("shape", "subok"))
def broadcast_to_(array, shape, subok=False):
    array = _pack(array, array)
    return _broadcast(array, np.shape(array), _broadcast_target(np.shape(array), shape))


@defpython(np.broadcast_arrays, keywords=("subok",))
def broadcast_arrays_(*args, subok=False):
    full = _common_shape(args)
    return tuple([_broadcast(_pack(a, a), np.shape(a), full) for a in args])


# ================================================================== joining and splitting


@defpython(np.concatenate, keywords=("axis", "dtype", "casting"))
def concatenate_(arrays, axis=0, *, dtype=None, casting="same_kind"):
    out = _concat(arrays, arrays, axis)
    if dtype is not None:
        out = _astype(out, dtype)
    return out


@defpython(np.stack, keywords=("axis", "dtype", "casting"))
def stack_(arrays, axis=0, *, dtype=None, casting="same_kind"):
    out = _pack(arrays, arrays)
    out = _permute(out, _stack_perm(np.ndim(out), axis))
    if dtype is not None:
        out = _astype(out, dtype)
    return out


@defpython(np.hstack, keywords=("dtype", "casting"))
def hstack_(tup, *, dtype=None, casting="same_kind"):
    out = _concat(tup, tup, "hstack")
    if dtype is not None:
        out = _astype(out, dtype)
    return out


@defpython(np.vstack, keywords=("dtype", "casting"))
def vstack_(tup, *, dtype=None, casting="same_kind"):
    out = _concat(tup, tup, "vstack")
    if dtype is not None:
        out = _astype(out, dtype)
    return out


@defpython(np.dstack)
def dstack_(tup):
    return _concat(tup, tup, "dstack")


@defpython(np.column_stack)
def column_stack_(tup):
    return _concat(tup, tup, "column_stack")


@defpython(np.split, keywords=("axis",))
def split_(ary, indices_or_sections, axis=0):
    ary = _pack(ary, ary)
    return _split(ary, _split_like(ary, indices_or_sections, axis, True), axis)


@defpython(np.array_split, keywords=("axis",))
def array_split_(ary, indices_or_sections, axis=0):
    ary = _pack(ary, ary)
    return _split(ary, _split_like(ary, indices_or_sections, axis, False), axis)


@defpython(np.hsplit)
def hsplit_(ary, indices_or_sections):
    ary = _pack(ary, ary)
    axis = _split_axis(np.ndim(ary), "hsplit")
    return _split(ary, _split_like(ary, indices_or_sections, axis, True), axis)


@defpython(np.vsplit)
def vsplit_(ary, indices_or_sections):
    ary = _pack(ary, ary)
    axis = _split_axis(np.ndim(ary), "vsplit")
    return _split(ary, _split_like(ary, indices_or_sections, axis, True), axis)


@defpython(np.dsplit)
def dsplit_(ary, indices_or_sections):
    ary = _pack(ary, ary)
    axis = _split_axis(np.ndim(ary), "dsplit")
    return _split(ary, _split_like(ary, indices_or_sections, axis, True), axis)


@defpython(np.append, keywords=("axis",))
def append_(arr, values, axis=None):
    return _concat((arr, values), (arr, values), axis)


# ================================================================== repetition


@defpython(np.tile)
def tile_(A, reps):
    A = _pack(A, A)
    split, full, out = _tile_plan(np.shape(A), reps)
    # A unit axis before each axis, broadcast to the repetitions, merged back.
    return _reshape(_broadcast(_reshape(A, np.shape(A), split), split, full), full, out)


def _repeat(a, repeats, axis):
    src, index = _repeat_plan(np.shape(a), repeats, axis)
    return _index(_reshape(a, np.shape(a), src), index)


@defpython(np.repeat, keywords=("axis",))
def repeat_(a, repeats, axis=None):
    return _repeat(_pack(a, a), repeats, axis)


@defpython(np.ndarray.repeat, keywords=("axis",))
def ndarray_repeat(self, repeats, axis=None):
    return _repeat(self, repeats, axis)


# ================================================================== reordering


@defpython(np.flip, keywords=("axis",))
def flip_(m, axis=None):
    m = _pack(m, m)
    return _index(m, _flip_index(np.ndim(m), axis))


@defpython(np.fliplr)
def fliplr_(m):
    m = _pack(m, m)
    return _index(m, _flip_index(np.ndim(m), 1))


@defpython(np.flipud)
def flipud_(m):
    m = _pack(m, m)
    return _index(m, _flip_index(np.ndim(m), 0))


@defpython(np.roll, keywords=("axis",))
def roll_(a, shift, axis=None):
    a = _pack(a, a)
    src, index = _roll_plan(np.shape(a), shift, axis)
    return _reshape(_index(_reshape(a, np.shape(a), src), index), src, np.shape(a))


@defpython(np.rot90, keywords=("k", "axes"))
def rot90_(m, k=1, axes=(0, 1)):
    m = _pack(m, m)
    first, perm, last = _rot90_plan(np.ndim(m), k, axes)
    return _index(_permute(_index(m, first), perm), last)


@defpython(np.sort, keywords=("axis", "kind", "order", "stable"))
def sort_(a, axis=-1, kind=None, order=None, *, stable=None):
    a = _pack(a, a)
    src, index = _sort_plan(a, axis, kind, stable)
    return _index(_reshape(a, np.shape(a), src), index)


# ================================================================== gathering


def _take(a, indices, axis, mode):
    src, index = _take_plan(np.shape(a), indices, axis, mode)
    out = _index(_reshape(a, np.shape(a), src), index)
    # One entry is a NumPy scalar, as NumPy gives (an index list folds this away, and
    # the result is known to be an array).
    if isinstance(indices, (int, np.integer)) and np.ndim(out) == 0:
        out = out[()]
    return out


@defpython(np.take, keywords=("axis", "mode"))
def take_(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("wengert: np.take with out= writes into an array; assign the "
                        "result instead")
    return _take(_pack(a, a), indices, axis, mode)


@defpython(np.ndarray.take, keywords=("axis", "mode"))
def ndarray_take(self, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("wengert: x.take with out= writes into an array; assign the "
                        "result instead")
    return _take(self, indices, axis, mode)


@defpython(np.take_along_axis, keywords=("axis",))
def take_along_axis_(arr, indices, axis=-1):
    arr = _pack(arr, arr)
    src, index = _along_plan(np.shape(arr), indices, axis)
    return _index(_reshape(arr, np.shape(arr), src), index)


# ================================================================== diagonals and triangles


@defpython(np.diag, keywords=("k",))
def diag_(v, k=0):
    v = _pack(v, v)
    index, shape = _diag_plan(np.shape(v), k)
    if shape is None:
        return _index(v, index)
    return _unindex(v, index, shape)


@defpython(np.diagflat, keywords=("k",))
def diagflat_(v, k=0):
    v = _pack(v, v)
    index, shape = _diag_plan((np.size(v),), k)
    return _unindex(_reshape(v, np.shape(v), (np.size(v),)), index, shape)


def _diagonal(a, offset, axis1, axis2):
    perm, index = _diagonal_plan(np.shape(a), offset, axis1, axis2)
    return _index(_permute(a, perm), index)


@defpython(np.diagonal, keywords=("offset", "axis1", "axis2"))
def diagonal_(a, offset=0, axis1=0, axis2=1):
    return _diagonal(_pack(a, a), offset, axis1, axis2)


@defpython(np.ndarray.diagonal, keywords=("offset", "axis1", "axis2"))
def ndarray_diagonal(self, offset=0, axis1=0, axis2=1):
    return _diagonal(self, offset, axis1, axis2)


@defpython(np.triu, keywords=("k",))
def triu_(m, k=0):
    m = _pack(m, m)
    full, mask = _triangle_plan(np.shape(m), k, True)
    return _mask(_broadcast(m, np.shape(m), full), mask)


@defpython(np.tril, keywords=("k",))
def tril_(m, k=0):
    m = _pack(m, m)
    full, mask = _triangle_plan(np.shape(m), k, False)
    return _mask(_broadcast(m, np.shape(m), full), mask)


# ================================================================== padding


@defpython(np.pad, keywords=("mode", "constant_values", "reflect_type"))
def pad_(array, pad_width, mode="constant", *, constant_values=_UNSET, reflect_type=_UNSET):
    array = _pack(array, array)
    index, shape, border = _pad_plan(np.shape(array), pad_width, mode, constant_values,
                                     reflect_type)
    if shape is None:
        return _index(array, index)
    out = _unindex(array, index, shape)
    if constant_values is not _UNSET:
        # Zeros in the border and the array inside, plus the value in the border: each
        # entry adds one term to a zero, which keeps it exactly.
        out = out + _spread(constant_values, border, _dtype(array))
    return out


# ================================================================== constructors


@defpython(np.full, keywords=("dtype", "order", "device", "like"))
def full_(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    fill = _pack(fill_value, fill_value)
    if dtype is not None:
        fill = _astype(fill, dtype)
    return _broadcast(fill, np.shape(fill), _broadcast_target(np.shape(fill), shape))


@defpython(np.full_like, keywords=("dtype", "order", "subok", "shape", "device"))
def full_like_(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    fill = _astype(_pack(fill_value, fill_value), _fill_dtype(a, dtype))
    if shape is None:
        shape = np.shape(a)
    return _broadcast(fill, np.shape(fill), _broadcast_target(np.shape(fill), shape))


@defpython(np.linspace, keywords=("num", "endpoint", "retstep", "dtype", "axis", "device"))
def linspace_(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    out = _linspace(start, stop, num, endpoint)
    if dtype is not None:
        out = _astype(out, dtype)
    if axis != 0:
        out = _permute(out, _move_perm(np.ndim(out), 0, axis))
    if retstep:
        return out, (stop - start) / _linspace_step(num, endpoint)
    return out


@defpython(np.arange, keywords=("stop", "step", "dtype", "device", "like"))
def arange_(start_or_stop, stop=None, step=1, *, dtype=None, device=None, like=None):
    if stop is None:
        return _arange(0, start_or_stop, step, dtype)
    return _arange(start_or_stop, stop, step, dtype)


@defpython(np.meshgrid, keywords=("copy", "sparse", "indexing"))
def meshgrid_(*xi, copy=True, sparse=False, indexing="xy"):
    out = []
    for x, (shape, own, full) in zip(xi, _mesh_plan(xi, indexing)):
        y = _reshape(_pack(x, x), shape, own)
        if not sparse:
            y = _broadcast(y, own, full)
        elif copy:
            y = _copy(y)
        out.append(y)
    return tuple(out)


# ================================================================== methods


@defpython(np.ndarray.clip, keywords=("min", "max"))
def ndarray_clip(self, min=None, max=None):
    return np.clip(self, min, max)


@defpython(np.ndarray.item)
def ndarray_item(self, *args):
    return _item(self, np.shape(self), _flat_position(np.shape(self), args))


@defpython(np.ndarray.tolist)
def ndarray_tolist(self):
    return _unpack(self, _structure(self))


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
cases(np.float64, (0.25,), (np.zeros(3, dtype=np.float32),))
cases(np.float32, (np.zeros(3),))

# Arrays in, an array (or a NumPy scalar) out: what type inference may assume.
mark_array_result(_broadcast, _concat, _copy, _index, _mask, _permute, _reshape, _reshape_f,
                  _spread, _spread_sum, _unbroadcast, _unindex)
