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

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.form import cases, kw
from wengert.rules.np_arrays import (
    _arange,
    _broadcast,
    _cast,
    _concat,
    _copy,
    _index,
    _item,
    _linspace,
    _mask,
    _pack,
    _permute,
    _reshape,
    _reshape_f,
    _split,
    _spread,
    _unindex,
    _unpack,
)
from wengert.rules.np_plans import (
    _UNSET,
    _along_plan,
    _atleast_shape,
    _broadcast_target,
    _check_castable,
    _common_shape,
    _diag_plan,
    _diagonal_plan,
    _dtype,
    _expanded,
    _fill_dtype,
    _flat_position,
    _flip_index,
    _fortran,
    _linspace_step,
    _mesh_plan,
    _method_perm,
    _move_perm,
    _ndmin_shape,
    _new_shape,
    _pad_plan,
    _perm,
    _ravel_copies,
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
    defpython,
    nondifferentiable,
)

nondifferentiable(np.shape, np.ndim, np.size, _dtype)

# Sample points of the definitions (``cases``: each checked against NumPy's value and type
# and, where a float flows, differentiated to second order against central differences):
# distinct values, so that a sort has no ties, none on a bound of the clip cases.
_V = np.array([0.7, -1.3, 2.1, 0.4])
_W = np.array([1.6, -0.5, 0.9, -2.2])
_M = np.array([[0.3, -1.2, 0.8, 1.9], [1.5, 0.2, -0.6, 1.1], [-0.9, 2.3, 0.5, -1.7]])
_A = ((np.arange(24) * 7) % 24 + 1.0).reshape(2, 3, 4) / 8.0
_S = _A[:1, :, 1:2]  # (1, 3, 1): unit axes to squeeze
_F = np.float64(1.5)  # a NumPy scalar (it has the methods of arrays)


@defpython(np.ndarray.shape)
@defpython(np.generic.shape)
def ndarray_shape(self):
    return np.shape(self)


@defpython(np.ndarray.ndim)
@defpython(np.generic.ndim)
def ndarray_ndim(self):
    return np.ndim(self)


@defpython(np.ndarray.size)
@defpython(np.generic.size)
def ndarray_size(self):
    return np.size(self)


@defpython(np.ndarray.dtype)
@defpython(np.generic.dtype)
def ndarray_dtype(self):
    return _dtype(self)


cases(np.ndarray.shape, (_A,), (_V,))
cases(np.ndarray.ndim, (_A,), (_V,))
cases(np.ndarray.size, (_M,))
cases(np.ndarray.dtype, (_M,), (np.arange(3),))


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
    if copy and isinstance(object, np.ndarray):  # (a list is packed into a new array)
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


cases(np.asarray, (_M,), ([0.5, -1.5, 2.0],), ([[0.5, 1.5], [-2.5, 3.0]],),
      (_V, kw(copy=True)), (_V, kw(dtype=int)))
cases(np.array, (_M,), ([[0.5, -1.5], [2.0, 0.25]],), (_V, kw(ndmin=3)),
      (_V, kw(copy=False)), (_V, kw(dtype=int)))
cases(np.ndarray.astype, (_M, np.float64), (_M, "float64", kw(copy=False)), (_V, int))
cases(np.copy, (_A,), ([1.5, -2.5],))
cases(np.ndarray.copy, (_M,), (_A, kw(order="F")))


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
    a = _pack(a, a)
    out = _reshape_to(a, -1, order)
    if _ravel_copies(a, order):
        out = _copy(out)  # (as NumPy: a view only of what is contiguous in that order)
    return out


@defpython(np.ndarray.ravel, keywords=("order",))
@defpython(np.generic.ravel, keywords=("order",))
def ndarray_ravel(self, order="C"):
    out = _reshape_to(self, -1, order)
    if _ravel_copies(self, order):
        out = _copy(out)
    return out


@defpython(np.ndarray.flatten, keywords=("order",))
@defpython(np.generic.flatten, keywords=("order",))
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


cases(np.reshape, (_A, (6, 4)), (_A, (4, -1), kw(order="F")), (_V, kw(shape=(2, 2))))
cases(np.ndarray.reshape, (_A, 4, 6), (_A, (3, 8)), (_M, -1, kw(order="F")))
cases(np.ravel, (_A,), (_M, kw(order="F")), ([[0.5, 1.5], [-2.5, 3.0]],))
cases(np.ndarray.ravel, (_M,), (_A, kw(order="F")))
cases(np.ndarray.flatten, (_A,), (_M, kw(order="F")))
cases(np.squeeze, (_S,), (_S, kw(axis=-1)), (_S, (0, 2)))
cases(np.ndarray.squeeze, (_S,), (_S, 0), (_S, kw(axis=(0, -1))))
cases(np.expand_dims, (_M, -1), (_V, (0, 2)), (_A, kw(axis=1)))
cases(np.atleast_1d, (_V,), (1.5,), (_V, _M))
cases(np.atleast_2d, (_V,), (_M,), (1.5, _V))
cases(np.atleast_3d, (_V,), (_M,), (_A, 1.5))


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


cases(np.transpose, (_A,), (_A, (1, 0, 2)), (_M, kw(axes=(-1, 0))))
cases(np.ndarray.T, (_M,), (_A,))
cases(np.ndarray.transpose, (_A,), (_A, 2, 0, 1), (_M, (1, 0)))
cases(np.swapaxes, (_A, 0, 2), (_M, -1, 0))
cases(np.ndarray.swapaxes, (_A, 1, -1))
cases(np.moveaxis, (_A, 0, -1), (_A, (0, 1), (2, 0)))


# ================================================================== broadcasting


@defpython(np.broadcast_to, keywords=("shape", "subok"))
def broadcast_to_(array, shape, subok=False):
    array = _pack(array, array)
    return _broadcast(array, np.shape(array), _broadcast_target(np.shape(array), shape))


@defpython(np.broadcast_arrays, keywords=("subok",))
def broadcast_arrays_(*args, subok=False):
    full = _common_shape(args)
    return tuple([_broadcast(_pack(a, a), np.shape(a), full) for a in args])


cases(np.broadcast_to, (_V, (3, 4)), (1.5, (2,)), (_M[:, :1], kw(shape=(2, 3, 4))))
cases(np.broadcast_arrays, (_V, _M), (_M[:1], _M[:, :1]))


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


cases(np.concatenate, ([_M, _M[:1]],), ((_M, _M[:, :2]), kw(axis=-1)), ([_A, _V], kw(axis=None)))
cases(np.stack, ([_V, _W],), ((_M, 2.0 * _M), kw(axis=-1)), ([_V, _W, _V], kw(axis=1)))
cases(np.hstack, ((_V, _W[:2]),), ([_M, _M[:, :1]],), ((_A, _A[:, :1]),))
cases(np.vstack, ((_V, _W),), ([_M, _M[:1], _V],))
cases(np.dstack, ((_M, _M),), ([_V, _W],))
cases(np.column_stack, ((_V, _W),), ([_M, _V[:3]],))
cases(np.split, (_V, 2), (_M, [1, 3], kw(axis=1)), (_A, [1], kw(axis=-3)))
cases(np.array_split, (_V, 3), (_A, 2, kw(axis=1)), (_M, [2, 3], kw(axis=-1)))
cases(np.hsplit, (_M, 2), (_V, [1, 3]))
cases(np.vsplit, (_M, 3), (_A, [1]))
cases(np.dsplit, (_A, 2), (_A, [1, 3]))
cases(np.append, (_V, _W), (_M, _M[:1], kw(axis=0)), (_M, [0.5, 1.5]))


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
@defpython(np.generic.repeat, keywords=("axis",))
def ndarray_repeat(self, repeats, axis=None):
    return _repeat(self, repeats, axis)


cases(np.tile, (_V, 2), (_M, (2, 1, 2)), (1.5, 3))
cases(np.repeat, (_V, 2), (_M, [1, 2, 0, 3], kw(axis=1)), (_A, 2, kw(axis=-3)))
cases(np.ndarray.repeat, (_M, 2, kw(axis=0)), (_V, [3, 1, 0, 2]))


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


cases(np.flip, (_A,), (_A, kw(axis=1)), (_M, (0, -1)))
cases(np.fliplr, (_M,), (_A,))
cases(np.flipud, (_V,), (_M,))
cases(np.roll, (_V, 1), (_M, -2, kw(axis=1)), (_A, (1, 2), kw(axis=(0, -1))))
cases(np.rot90, (_M,), (_M, 2), (_A, kw(k=-1, axes=(1, 2))))
cases(np.sort, (_V,), (_M, kw(axis=0)), (_A, kw(axis=None, kind="stable")))


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
        raise RuleRefusal("wengert: np.take with out= writes into an array; assign the "
                        "result instead")
    return _take(_pack(a, a), indices, axis, mode)


@defpython(np.ndarray.take, keywords=("axis", "mode"))
@defpython(np.generic.take, keywords=("axis", "mode"))
def ndarray_take(self, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise RuleRefusal("wengert: x.take with out= writes into an array; assign the "
                        "result instead")
    return _take(self, indices, axis, mode)


@defpython(np.take_along_axis, keywords=("axis",))
def take_along_axis_(arr, indices, axis=-1):
    arr = _pack(arr, arr)
    src, index = _along_plan(np.shape(arr), indices, axis)
    return _index(_reshape(arr, np.shape(arr), src), index)


cases(np.take, (_V, [2, 0, 2]), (_M, 5), (_A, [[0, 2], [1, 1]], kw(axis=1)),
      (_V, [5, -6], kw(mode="wrap")), (_M, [-1, 4], kw(axis=0, mode="clip")))
cases(np.ndarray.take, (_M, [1, 3], kw(axis=-1)), (_V, 1))
cases(np.take_along_axis, (_M, np.argsort(_M, axis=1), kw(axis=1)),
      (_A, np.array([[[2, 0, 1, 1]]]), kw(axis=-2)), (_V, np.array([3, 0]), kw(axis=None)))


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


cases(np.diag, (_V,), (_V, 1), (_M,), (_M, kw(k=-1)))
cases(np.diagflat, (_M[:2, :2],), (_V, -1))
cases(np.diagonal, (_M,), (_A, 1, kw(axis1=1, axis2=2)), (_A, kw(offset=-1, axis1=-1, axis2=0)))
cases(np.ndarray.diagonal, (_M, 1), (_A, kw(axis1=0, axis2=2)))
cases(np.triu, (_M,), (_M, 1), (_A, kw(k=-1)))
cases(np.tril, (_M,), (_V, -1), (_A,))


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


cases(np.pad, (_M, 1), (_M, ((1, 0), (0, 2)), kw(constant_values=0.5)),
      (_V, (1, 2), kw(mode="reflect")), (_V, 3, kw(mode="symmetric")),
      (_A, ((0, 0), (1, 1), (0, 2)), kw(mode="edge")), (_M, (2, 1), kw(mode="wrap")))


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


cases(np.full, ((2, 3), 1.5), ((2, 4), _V), (3, 0.5, kw(dtype=int)))
cases(np.full_like, (_M, 0.5), (_A, -1.5, kw(shape=(2, 2))), (_V, 2.5, kw(dtype=int)))
cases(np.linspace, (0.5, 2.0), (0.5, 2.0, 5, kw(endpoint=False)), (_V[:2], _W[:2], 3, kw(axis=1)),
      (-1.0, 1.5, 6, kw(retstep=True)))
cases(np.arange, (0.5, 3.1, 0.5), (4.5,), (5,), (1.5, kw(stop=3.1, step=0.25)))
cases(np.meshgrid, (_V, _W[:3]), (_V, _W[:3], kw(indexing="ij")), (_V, _W, _V, kw(sparse=True)))


# ================================================================== methods


@defpython(np.ndarray.clip, keywords=("min", "max"))
@defpython(np.generic.clip, keywords=("min", "max"))
def ndarray_clip(self, min=None, max=None):
    return np.clip(self, min, max)


@defpython(np.ndarray.item)
@defpython(np.generic.item)
def ndarray_item(self, *args):
    return _item(self, np.shape(self), _flat_position(np.shape(self), args))


@defpython(np.ndarray.tolist)
@defpython(np.generic.tolist)
def ndarray_tolist(self):
    return _unpack(self, _structure(self))


cases(np.ndarray.clip, (_M, -0.5, 1.0), (_M, kw(min=0.1)), (_V, None, 1.0), (_A, kw(max=2.05)))
cases(np.ndarray.item, (_M, 5), (_M, 1, 2), (_V[:1],), (_A, -1))
cases(np.ndarray.tolist, (_M,), (_V,), (_A[0, 0, 0:1].reshape(()),))


# ================================================================== NumPy scalars

# A NumPy scalar has the methods and attributes of arrays, computed on it as a 0-d array
# with a 0-d result given back as a scalar (``np.float64(1.5).T`` is the scalar itself):
# the arrays' definitions serve where the result has axes or is no array (they carry a
# second ``defpython`` above); these give the scalar back. Registered here rather than by
# rules/__init__.py (which gives the other methods the arrays' definitions), so that
# their cases are declared with them.


@defpython(np.generic.T)
def generic_T(self):
    return self


@defpython(np.generic.transpose)
def generic_transpose(self, *axes):
    return _permute(self, _method_perm(axes, np.ndim(self)))[()]


@defpython(np.generic.squeeze, keywords=("axis",))
def generic_squeeze(self, axis=None):
    return _reshape(self, np.shape(self), _squeezed(np.shape(self), axis))[()]


@defpython(np.generic.astype, keywords=("order", "casting", "subok", "copy"))
def generic_astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return _astype(self, dtype)[()]


@defpython(np.generic.copy, keywords=("order",))
def generic_copy(self, order="C"):
    return _copy(self)[()]


@defpython(np.generic.reshape, keywords=("order", "copy"))
def generic_reshape(self, *shape, order="C", copy=None):
    out = _reshape_to(self, shape, order)
    if np.ndim(out) == 0:
        out = out[()]  # (a shape with axes keeps the array)
    return out


cases(np.generic.shape, (_F,))
cases(np.generic.ndim, (_F,))
cases(np.generic.size, (_F,))
cases(np.generic.dtype, (_F,), (np.int64(3),))
cases(np.generic.T, (_F,))
cases(np.generic.transpose, (_F,), (_F, ()))
cases(np.generic.squeeze, (_F,), (_F, kw(axis=())))
cases(np.generic.astype, (_F, np.float64), (_F, int))
cases(np.generic.copy, (_F,))
cases(np.generic.reshape, (_F, ()), (_F, 1, 1), (_F, -1, kw(order="F")))
cases(np.generic.ravel, (_F,))
cases(np.generic.flatten, (_F,))
cases(np.generic.repeat, (_F, 3), (_F, [2]))
cases(np.generic.take, (_F, 0), (_F, [0, -1, 0]))
cases(np.generic.clip, (_F, 0.5, 2.0), (_F, kw(max=1.0)))
cases(np.generic.item, (_F,), (_F, 0))
cases(np.generic.tolist, (_F,))
