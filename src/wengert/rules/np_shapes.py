"""NumPy's shape functions and the attributes of arrays.

Like the reductions, each NumPy spelling is a Python definition over batch-aware
primitives: axes are normalised to negative positions counted from the right, so the
same primitive call applies to a tangent or cotangent with leading batch axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.rules.form import cases, deflinear
from wengert.rules.registry import defpython, nondifferentiable


def _dtype(x: Any) -> Any:
    return np.asarray(x).dtype


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


def _perm(axes: Any, ndim: int) -> tuple[int, ...]:
    """``np.transpose``'s ``axes`` (``None``: reversed) as negative axes."""
    if axes is None:
        return tuple(range(-1, -ndim - 1, -1))
    return tuple(int(a) % ndim - ndim for a in axes)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    k = len(perm)
    inv = [0] * k
    for i, p in enumerate(perm):
        inv[p + k] = i - k
    return tuple(inv)


nondifferentiable(_perm, _inverse)


def _permute(a: Any, perm: tuple[int, ...]) -> Any:
    """The last ``len(perm)`` axes of ``a`` permuted: result axis ``i`` (counted from the
    right) is input axis ``perm[i]``; batch axes in front stay."""
    a = np.asarray(a)
    k = len(perm)
    batch = a.ndim - k
    return np.transpose(a, tuple(range(batch)) + tuple(batch + k + p for p in perm))


deflinear(_permute, lambda a, perm: _permute(ans_bar, _inverse(perm)))  # noqa: F821


@defpython(np.transpose, keywords=("axes",))
def transpose_(a, axes=None):
    return _permute(a, _perm(axes, np.ndim(a)))


@defpython(np.ndarray.T)
def ndarray_T(self):
    return _permute(self, _perm(None, np.ndim(self)))


@defpython(np.ndarray.transpose)
def ndarray_transpose(self, *axes):
    if len(axes) == 0:
        return _permute(self, _perm(None, np.ndim(self)))
    if len(axes) == 1 and not isinstance(axes[0], int):
        return _permute(self, _perm(axes[0], np.ndim(self)))
    return _permute(self, _perm(axes, np.ndim(self)))


_A = np.arange(24.0).reshape(2, 3, 4) / 10.0
cases(_permute, (_A, (-1, -3, -2)), (_A[0], (-1, -2)))
