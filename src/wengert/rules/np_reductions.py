"""NumPy reductions: each NumPy spelling is a Python definition over a few batch-aware
primitives, which carry the rules.

Tangents and cotangents may carry leading batch axes (a Jacobian pushes many at once),
so the primitives take their axes *normalised and negative* (counted from the right),
computed from the primal's ``ndim`` in the Python definition: ``np.sum(x, axis=0)`` on a
matrix is ``_sum(x, (-2,), False)`` and the same call sums the right axis of a batched
tangent. The definitions are inlined into the code being differentiated, like a user's
helper (:func:`~wengert.rules.registry.defpython`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.rules.form import cases, deflinear
from wengert.rules.registry import defpython, nondifferentiable


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple, possibly negative) as a sorted tuple of negative
    axes of an array with ``ndim`` dimensions."""
    if axis is None:
        return tuple(range(-ndim, 0))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted({int(a) % ndim - ndim for a in axis}))


nondifferentiable(_axes)


def _sum(a: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """``a`` summed over the negative ``axes`` (the batch axes in front are kept)."""
    return np.sum(a, axis=axes, keepdims=keepdims)


def _unsum(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """The transpose of :func:`_sum`: ``g`` (of the reduced shape, after any batch axes)
    spread back over ``shape``, as a fresh array."""
    g = np.asarray(g)
    if not keepdims:
        for a in sorted(axes, reverse=True):  # -1 first: each insert keeps the others' places
            g = np.expand_dims(g, a)
    batch = g.ndim - len(shape)
    return np.array(np.broadcast_to(g, g.shape[:batch] + tuple(shape)))


def _sum_back(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """:func:`_unsum`'s transpose: the sum over ``axes`` of ``g`` of shape batch + shape."""
    return np.sum(g, axis=axes, keepdims=keepdims)


deflinear(_sum, lambda a, axes, keepdims: _unsum(ans_bar, np.shape(a), axes, keepdims))  # noqa: F821
deflinear(_unsum, lambda g, shape, axes, keepdims: _sum_back(ans_bar, shape, axes, keepdims))  # noqa: F821
deflinear(_sum_back, lambda g, shape, axes, keepdims: _unsum(ans_bar, shape, axes, keepdims))  # noqa: F821


@defpython(np.sum, keywords=("axis", "keepdims"))
def sum_(a, axis=None, keepdims=False):
    return _sum(a, _axes(axis, np.ndim(a)), keepdims)


@defpython(np.ndarray.sum, keywords=("axis", "keepdims"))
def ndarray_sum(self, axis=None, keepdims=False):
    return _sum(self, _axes(axis, np.ndim(self)), keepdims)


@defpython(np.mean, keywords=("axis", "keepdims"))
def mean_(a, axis=None, keepdims=False):
    axes = _axes(axis, np.ndim(a))
    return _sum(a, axes, keepdims) / _count(np.shape(a), axes)


@defpython(np.ndarray.mean, keywords=("axis", "keepdims"))
def ndarray_mean(self, axis=None, keepdims=False):
    axes = _axes(axis, np.ndim(self))
    return _sum(self, axes, keepdims) / _count(np.shape(self), axes)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many entries a reduction over ``axes`` of an array of ``shape`` combines."""
    n = 1
    for a in axes:
        n *= shape[a]
    return n


nondifferentiable(_count)


@defpython(np.dot)
def dot_(a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return a * b
    if np.ndim(b) > 2:
        raise NotImplementedError("wengert: np.dot of an array of more than 2 dimensions")
    return a @ b


_A = np.arange(24.0).reshape(2, 3, 4) / 10.0
cases(_sum, (_A, (-3, -1), False), (_A, (-2,), True), (_A[0], (-2, -1), False))
cases(_unsum, (np.ones(3), (2, 3, 4), (-3, -1), False),
      (np.ones((1, 3, 1)), (2, 3, 4), (-3, -1), True))
cases(_sum_back, (_A, (2, 3, 4), (-3, -1), False))
