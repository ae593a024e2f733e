"""Shape helpers of broadcasting rules: what a cotangent sums over, what a tangent spreads to.

Tangents and cotangents may carry leading batch axes (batched forward mode, many
cotangents at once), so axes are counted from the right. The functions are linear in
their first argument; their rules (each the other's transpose) are declared in
:mod:`wengert.rules.operator`, so rule bodies calling them differentiate again.
"""

from __future__ import annotations

from typing import Any

import numpy

__all__ = ["add_over", "broadcast_to", "broadcast_view", "const", "mT", "mul_sum_to",
           "reduced_shape", "shape", "skeleton", "squeeze", "sum_to", "unsqueeze"]


def shape(x: Any) -> tuple[int, ...]:
    """The NumPy shape of a primal value (``()`` for Python scalars)."""
    # (An array's own attribute: ``numpy.shape`` dispatches, at a microsecond a call.)
    return x.shape if type(x) is numpy.ndarray else numpy.shape(x)


def ravel_copies(a: Any, order: Any) -> bool:
    """Whether ``numpy.ravel(a, order)`` gives a copy (``a`` is not contiguous in that
    order, say a column ``b[:, 0]``), where ``reshape(-1)`` may still give a view: asked of
    NumPy. It reads the layout of ``a`` alone, which no write into ``a`` changes."""
    a = numpy.asarray(a)
    return a.size > 0 and not numpy.may_share_memory(numpy.ravel(a, order), a)


#: Calls that read only the shape (or layout) of their argument (its numbers are not read).
SHAPE_READERS = frozenset({shape, numpy.shape, numpy.ndim, numpy.size, len, ravel_copies})


#: Axis letters of an einsum (NumPy's arrays have at most 64 axes; subscripts, 52).
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def sum_to(t: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """Undo broadcasting: sum ``t`` of shape ``batch + full`` down to ``batch + shape``.

    ``shape`` must broadcast to ``full``.  ``batch`` is whatever leading axes ``t``
    has beyond ``full``, which is why axes are counted from the right.  ``None``
    (a symbolic zero) passes through.
    """
    if t is None or shape == full:
        return t
    if type(t) is numpy.ndarray and type(shape) is tuple and type(full) is tuple:
        # The common case, planned once per shapes: one reduction and a reshape.
        key = (shape, full, t.ndim, t.dtype.char)
        plan = _SUM_PLANS.get(key)
        if plan is None:
            plan = _SUM_PLANS[key] = _sum_plan(shape, full, t.ndim, t.dtype)
        if plan is not _GENERAL:
            spec, axes, batch = plan
            out = numpy.einsum(spec, t) if spec else _add_reduce(t, axes)
            out = out.reshape(t.shape[:batch] + shape)
            return out[()] if out.ndim == 0 else out
    if tuple(shape) == tuple(full):
        return t
    shape, full = tuple(shape), tuple(full)
    t = numpy.asarray(t)
    batch = t.ndim - len(full)
    if batch < 0:
        # A cotangent that was never broadcast (a scalar seed for an array result).
        t = numpy.broadcast_to(t, full)
        batch = 0
    lead = len(full) - len(shape)
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + i for i, n in enumerate(shape) if n == 1 and full[lead + i] != 1
    )
    out = add_over(t, axes).reshape(t.shape[:batch] + shape)
    return out[()] if out.ndim == 0 else out


#: ``numpy.sum`` of a float array without its Python wrapper (a microsecond on a small one).
_add_reduce = numpy.add.reduce

#: (target shape, full shape, axes of the cotangent, its dtype) -> how :func:`sum_to` sums.
_SUM_PLANS: dict[tuple, Any] = {}
_GENERAL = object()  # (a plan: the general path, for shapes this one does not cover)


def _sum_plan(shape: tuple[int, ...], full: tuple[int, ...], ndim: int, dtype: Any) -> Any:
    """``sum_to``'s reduction for a cotangent of ``ndim`` axes: an ``einsum`` spec (or the
    axes, for ``numpy.sum``) and the number of batch axes in front."""
    batch = ndim - len(full)
    if batch < 0 or shape == full:
        return _GENERAL
    lead = len(full) - len(shape)
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + i for i, n in enumerate(shape) if n == 1 and full[lead + i] != 1)
    if dtype.kind == "f" and dtype.itemsize >= 4 and 0 < ndim <= len(_LETTERS) and \
            _einsum_sums_faster(full):
        letters = _LETTERS[:ndim]
        kept = "".join(c for i, c in enumerate(letters) if i not in axes)
        return f"{letters}->{kept}", axes, batch
    return "", axes, batch


def _einsum_sums_faster(shape: tuple[int, ...]) -> bool:
    """Whether ``einsum`` sums an array of ``shape`` over some axes faster than
    ``numpy.sum``, measured: where its last axis is short but not 1 (NumPy's reduction
    machinery then loops in short strides: 3-4× slower over 1,000 rows of 8 or 10), on
    more than a few dozen numbers (below, einsum's own fixed cost is the larger)."""
    if not shape or not 1 < shape[-1] < 32:
        return False
    size = 1
    for k in shape:
        size *= k
    return size > 64


def reduced_shape(shape: Any, axes: Any, keepdims: Any) -> tuple[int, ...] | None:
    """The shape a sum of an array of ``shape`` over the negative ``axes`` has (``None``
    where an argument is not a shape, axes and flag known when the code is made)."""
    if type(shape) is not tuple or type(axes) is not tuple or type(keepdims) is not bool or \
            not all(type(a) is int and -len(shape) <= a < 0 for a in axes):
        return None
    summed = {a % len(shape) for a in axes}
    return tuple(1 if i in summed else k for i, k in enumerate(shape)
                 if keepdims or i not in summed)


def add_over(t: Any, axes: tuple[int, ...], keepdims: bool = False) -> Any:
    """``numpy.sum(t, axis=axes, keepdims=keepdims)`` for the cotangents of generated code:
    an ``einsum`` for a float array, which NumPy's reduction machinery is several times
    slower than where the summed axes are short (a sum over the last axis of 8, or the
    first of 1000 rows of 10). The order of the additions differs from ``numpy.sum``'s
    (rounding only): primal values keep ``numpy.sum``."""
    if type(t) is numpy.ndarray and t.dtype.kind == "f" and t.dtype.itemsize >= 4 and \
            0 < t.ndim <= len(_LETTERS) and not keepdims and _einsum_sums_faster(t.shape):
        letters = _LETTERS[:t.ndim]
        summed = {a % t.ndim for a in axes}
        kept = "".join(c for i, c in enumerate(letters) if i not in summed)
        return numpy.einsum(f"{letters}->{kept}", t)
    if type(t) is numpy.ndarray and t.dtype.kind in "fc":
        return _add_reduce(t, axes, keepdims=keepdims)
    return numpy.sum(t, axis=axes, keepdims=keepdims)


def mul_sum_to(a: Any, b: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """``sum_to(a * b, shape, full)``, the product summed as it is made where a sum is
    taken: the simplifier of generated code writes it for a cotangent multiplied by a
    partial and then unbroadcast (``sum((x[:, None] - mu) ** 2)``'s ``mu_bar``), which as
    two steps makes the full product, often through a broadcast view that NumPy multiplies
    slowly, and reads it again. ``None`` (a symbolic zero) gives ``None``."""
    if a is None or b is None:
        return None
    if shape == full:
        return a * b  # (nothing is summed)
    ndarray = numpy.ndarray
    if type(a) is not ndarray or type(b) is not ndarray or a.ndim != b.ndim or \
            a.dtype != b.dtype or a.dtype.kind != "f" or a.ndim > len(_LETTERS) or \
            tuple(shape) == tuple(full):
        return sum_to(a * b, shape, full)
    shape, full = tuple(shape), tuple(full)
    batch = a.ndim - len(full)
    if batch < 0:
        return sum_to(a * b, shape, full)
    lead = len(full) - len(shape)
    summed = set(range(batch, batch + lead)) | {
        batch + lead + i for i, k in enumerate(shape) if k == 1 and full[lead + i] != 1}
    if a.shape != b.shape:
        a, b = numpy.broadcast_arrays(a, b)
    letters = _LETTERS[:a.ndim]
    kept = "".join(c for i, c in enumerate(letters) if i not in summed)
    out = numpy.einsum(f"{letters},{letters}->{kept}", a, b)
    out = out.reshape(a.shape[:batch] + shape)
    return out[()] if out.ndim == 0 else out


def broadcast_view(a: Any, shape: tuple[int, ...]) -> Any:
    """``numpy.broadcast_to(a, shape)``, a read-only view, made directly where ``a`` is a
    contiguous array (NumPy's checks its arguments in Python, several times the cost of
    the view for the small arrays of a pullback)."""
    if type(a) is numpy.ndarray and a.flags.c_contiguous and a.ndim <= len(shape):
        pad = len(shape) - a.ndim
        strides = [0] * pad
        for n_a, n_s, st in zip(a.shape, shape[pad:], a.strides):
            if n_a == n_s:
                strides.append(st)
            elif n_a == 1:
                strides.append(0)
            else:
                return numpy.broadcast_to(a, shape)  # (its error)
        try:
            view = numpy.ndarray(shape, a.dtype, a, 0, tuple(strides))
        except (TypeError, ValueError, BufferError):
            return numpy.broadcast_to(a, shape)
        view.flags.writeable = False
        return view
    return numpy.broadcast_to(a, shape)


def broadcast_to(t: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """Broadcast ``t`` of shape ``batch + shape`` up to a fresh array of shape ``batch + full``.

    The adjoint of :func:`sum_to`.  The result is materialised (not a read-only
    view) because it becomes a tangent or adjoint that later code may accumulate into.
    """
    if t is None or shape == full or tuple(shape) == tuple(full):
        return t
    shape, full = tuple(shape), tuple(full)
    t = _sequence_tangent(t, shape) if isinstance(t, (list, tuple)) else numpy.asarray(t)
    batch = t.ndim - len(shape)
    lead = len(full) - len(shape)
    t = t.reshape(t.shape[:batch] + (1,) * lead + shape)
    return numpy.array(numpy.broadcast_to(t, t.shape[:batch] + full))


def _sequence_tangent(t: Any, shape: tuple[int, ...]) -> Any:
    """The tangent of a (nested) list of numbers of ``shape``, the list of their tangents
    (each a number, or an array of batch axes, ``0.0`` for a zero), as one array with the
    batch axes in front."""
    flat: list[Any] = []

    def walk(x: Any, depth: int) -> None:
        if depth < len(shape) and isinstance(x, (list, tuple)):
            for y in x:
                walk(y, depth + 1)
        else:
            flat.append(x)

    walk(t, 0)
    batch = max((numpy.shape(x) for x in flat), key=len, default=())
    parts = [numpy.broadcast_to(numpy.asarray(x, dtype=float), batch) for x in flat]
    out = numpy.stack(parts, axis=-1) if parts else numpy.zeros(batch + (0,))
    return out.reshape(batch + shape)


def mT(x: Any) -> Any:
    """Swap the last two axes (the matrix transpose of a stack of matrices)."""
    return x.swapaxes(-1, -2) if type(x) is numpy.ndarray else numpy.swapaxes(x, -1, -2)


def unsqueeze(x: Any, axis: int) -> Any:
    """Insert a size-1 axis at negative position ``axis`` (batch axes stay in front)."""
    if type(x) is numpy.ndarray and -x.ndim - 1 <= axis < 0:
        s = x.shape
        k = len(s) + 1 + axis
        return x.reshape(s[:k] + (1,) + s[k:])
    return numpy.expand_dims(x, axis)


def squeeze(x: Any, axis: int) -> Any:
    """Remove the size-1 axis at negative position ``axis``."""
    return x.squeeze(axis) if type(x) is numpy.ndarray else numpy.squeeze(x, axis)


def skeleton(x: Any) -> Any:
    """A stand-in for ``x`` with its structure and none of its values: a zero array view of
    its shape, a dict of its keys, a list or tuple of ``None`` of its length (``None`` for
    ``None``; an empty list for an iterator, whose adjoint is a list)."""
    if x is None:
        return None
    if isinstance(x, (numpy.ndarray, numpy.generic)):  # (a NumPy scalar: a 0-d array)
        return numpy.broadcast_to(numpy.zeros((), dtype=x.dtype), numpy.shape(x))
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if isinstance(x, tuple):
        return (None,) * len(x)
    if hasattr(x, "__len__"):
        return [None] * len(x)
    return []


def const(v: Any) -> Any:
    """``v`` itself, as a constant to the transforms: an index, a key, a name or a count
    says where an adjoint goes and carries no derivative of its own."""
    return v
