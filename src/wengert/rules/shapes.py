"""Shape helpers of broadcasting rules: what a cotangent sums over, what a tangent spreads to.

Tangents and cotangents may carry leading batch axes (batched forward mode, many
cotangents at once), so axes are counted from the right. The functions are linear in
their first argument; their rules (each the other's transpose) are declared in
:mod:`wengert.rules.operator`, so rule bodies calling them differentiate again.
"""

from __future__ import annotations

from typing import Any

import numpy

__all__ = ["broadcast_to", "const", "mT", "shape", "skeleton", "squeeze", "sum_to", "unsqueeze"]


def shape(x: Any) -> tuple[int, ...]:
    """The NumPy shape of a primal value (``()`` for Python scalars)."""
    # (An array's own attribute: ``numpy.shape`` dispatches, at a microsecond a call.)
    return x.shape if type(x) is numpy.ndarray else numpy.shape(x)


def sum_to(t: Any, shape: tuple[int, ...], full: tuple[int, ...]) -> Any:
    """Undo broadcasting: sum ``t`` of shape ``batch + full`` down to ``batch + shape``.

    ``shape`` must broadcast to ``full``.  ``batch`` is whatever leading axes ``t``
    has beyond ``full``, which is why axes are counted from the right.  ``None``
    (a symbolic zero) passes through.
    """
    if t is None or shape == full or tuple(shape) == tuple(full):
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
    out = numpy.sum(t, axis=axes).reshape(t.shape[:batch] + shape)
    return out[()] if out.ndim == 0 else out


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
    if isinstance(x, numpy.ndarray):
        return numpy.broadcast_to(numpy.zeros((), dtype=x.dtype), x.shape)
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
