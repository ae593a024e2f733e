"""NumPy's shape functions, joining and splitting, constructors and the methods of arrays:
the Python definitions compute what NumPy computes, and functions written the way a NumPy
user writes them differentiate in both modes to second order."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.rules import registry
from wengert.testing import check_grads

M = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
A = np.arange(24.0).reshape(2, 3, 4) / 10.0 - 1.1
V = np.array([0.3, -1.2, 0.8, 2.0])
W = np.array([1.1, -0.4, 0.9])
I3 = np.arange(6).reshape(2, 3)


def _check(f, *args, order=2):
    check_grads(f, args, order=order, modes=("rev", "fwd"))


# ------------------------------------------------------------------------ NumPy parity
# Each definition called directly (as plain Python) must give what NumPy gives: the same
# values, dtype and kind of result, for floats, integers, lists and each argument form.

PARITY = [
    (np.reshape, (A, (6, -1)), {}), (np.reshape, (A, 24), {"order": "F"}),
    (np.reshape, ([[1, 2], [3, 4]], (4,)), {}), (np.reshape, (np.asfortranarray(M), -1),
                                                   {"order": "A"}),
    (np.ndarray.reshape, (A, 4, 6), {}), (np.ndarray.reshape, (A, (4, -1)), {}),
    (np.ndarray.reshape, (A, [-1]), {}), (np.ravel, (A,), {}), (np.ravel, (M,), {"order": "F"}),
    (np.ndarray.ravel, (A.T,), {}), (np.ndarray.flatten, (M,), {"order": "F"}),
    (np.transpose, (A,), {}), (np.transpose, (A, (1, 0, 2)), {}), (np.ndarray.transpose, (A,), {}),
    (np.ndarray.transpose, (A, 2, 0, 1), {}), (np.ndarray.transpose, (A, (2, 0, 1)), {}),
    (np.swapaxes, (A, 0, -1), {}), (np.ndarray.swapaxes, (A, 1, 2), {}),
    (np.moveaxis, (A, 0, -1), {}), (np.moveaxis, (A, (0, 1), (2, 0)), {}),
    (np.expand_dims, (M, 1), {}), (np.expand_dims, (M, (0, -1)), {}),
    (np.squeeze, (A[:1, :, :1],), {}), (np.squeeze, (A[:1, :, :1], -1), {}),
    (np.ndarray.squeeze, (A[:1],), {"axis": 0}),
    (np.atleast_1d, (2.0,), {}), (np.atleast_2d, (V,), {}), (np.atleast_3d, (V,), {}),
    (np.atleast_3d, (M,), {}), (np.atleast_2d, (1.0, V, M), {}),
    (np.broadcast_to, (V, (3, 4)), {}), (np.broadcast_to, (2.5, 3), {}),
    (np.broadcast_arrays, (M, W, 1.0), {}),
    (np.concatenate, ([M, M[:1]],), {}), (np.concatenate, ((M, I3), 1), {}),
    (np.concatenate, ([A, M], None), {}), (np.concatenate, ([V, [1.0, 2.0]],), {}),
    (np.concatenate, ([V, V],), {"dtype": np.float32}),
    (np.stack, ([M, M * 2],), {}), (np.stack, ([M, M * 2], -1), {}), (np.stack, ((1.0, 2.0),), {}),
    (np.hstack, ([V, W, 1.0],), {}), (np.hstack, ([M, M],), {}), (np.vstack, ([W, M],), {}),
    (np.dstack, ([M, M],), {}), (np.dstack, ([V, V],), {}), (np.column_stack, ([V, V],), {}),
    (np.column_stack, ([M.T, W],), {}),
    (np.split, (A, 2), {}), (np.split, (A, [1, 3], 2), {}), (np.split, (V, [-1, 10]), {}),
    (np.array_split, (V, 3), {}), (np.array_split, (M, [2, 2], 1), {}),
    (np.hsplit, (M, 3), {}), (np.hsplit, (V, [1]), {}), (np.vsplit, (A, 2), {}),
    (np.dsplit, (A, [1, 2]), {}), (np.append, (M, V), {}), (np.append, (M, M, 0), {}),
    (np.append, (I3, 2.5), {}),
    (np.tile, (M, 2), {}), (np.tile, (V, (2, 1, 2)), {}), (np.tile, (A, (2, 1)), {}),
    (np.repeat, (M, 2), {}), (np.repeat, (M, [1, 0, 2], 1), {}), (np.repeat, (A, 2, -3), {}),
    (np.ndarray.repeat, (M, 3), {"axis": 0}),
    (np.flip, (A,), {}), (np.flip, (A, (0, 2)), {}), (np.flip, (A, -2), {}), (np.fliplr, (M,), {}),
    (np.flipud, (V,), {}),
    (np.roll, (A, 2), {}), (np.roll, (A, -1, 1), {}), (np.roll, (A, (1, 2), (0, 2)), {}),
    (np.roll, (M, (1, 1), (1, 1)), {}), (np.roll, (V, 4), {}),
    (np.rot90, (M,), {}), (np.rot90, (A, 2), {}), (np.rot90, (A, 3, (2, 0)), {}),
    (np.rot90, (M, -4), {}),
    (np.pad, (M, 1), {}), (np.pad, (M, ((1, 0), (0, 2))), {"constant_values": 2.5}),
    (np.pad, (I3, 1), {"constant_values": 7}), (np.pad, (A, (1, 2)), {"mode": "reflect"}),
    (np.pad, (M, 2), {"mode": "symmetric"}), (np.pad, (M, (3, 1)), {"mode": "wrap"}),
    (np.pad, (V, 2), {"mode": "edge"}),
    (np.diag, (V,), {}), (np.diag, (V, -2), {}), (np.diag, (M,), {}), (np.diag, (M, 1), {}),
    (np.diag, (M.T, -1), {}), (np.diagflat, (M,), {}), (np.diagflat, (V, 1), {}),
    (np.diagonal, (A,), {}), (np.diagonal, (A, 1, 2, 0), {}), (np.diagonal, (M, -1), {}),
    (np.ndarray.diagonal, (A,), {"axis1": 1, "axis2": 2}),
    (np.triu, (M,), {}), (np.triu, (A, -1), {}), (np.tril, (V,), {}), (np.tril, (M, 1), {}),
    (np.take, (M, [0, 5, 2]), {}), (np.take, (A, [[2, 0], [1, 1]], 1), {}),
    (np.take, (V, 2), {}), (np.take, (M, 7), {"mode": "wrap"}), (np.take, (M, [-1, 4], 1),
                                                                  {"mode": "clip"}),
    (np.ndarray.take, (M, 1), {"axis": 0}),
    (np.take_along_axis, (M, np.array([[2, 0], [1, 1]]), 1), {}),
    (np.take_along_axis, (M, np.array([[1, 0, 1]]), 0), {}),
    (np.take_along_axis, (V, np.array([3, 0]), None), {}),
    (np.sort, (A,), {}), (np.sort, (A, 0), {}), (np.sort, (M, None), {}),
    (np.sort, (np.array([[3, 1], [2, 2]]),), {}),
    (np.array, ([[1.0, 2.0], [3.0, 4.0]],), {}), (np.array, ([1, 2.5],), {}),
    (np.array, ([V, V],), {}), (np.array, ([[V, V], [V, V]],), {}), (np.array, ((1, 2),), {}),
    (np.array, (2.0,), {}), (np.array, (M,), {"dtype": np.float32}), (np.array, (V,), {"ndmin": 3}),
    (np.array, ([np.float32(1), np.float32(2)],), {}),
    (np.asarray, ([1.0, 2.0],), {}), (np.asarray, (3.0,), {}), (np.asarray, (M,), {"dtype": int}),
    (np.full, ((2, 3), 1.5), {}), (np.full, (3, 2), {}), (np.full, ((2, 3), W), {}),
    (np.full, (2, np.float32(0.5)), {}), (np.full, ((), 1.5), {}),
    (np.full, ((2, 2), 1.7), {"dtype": int}),
    (np.full_like, (M, 2.5), {}), (np.full_like, (I3, 2.5), {}),
    (np.full_like, (M, 2.5), {"shape": (4,)}), (np.full_like, (I3, 2.5), {"dtype": float}),
    (np.linspace, (0.0, 1.0, 5), {}), (np.linspace, (1.0, 2.0, 4), {"endpoint": False}),
    (np.linspace, (W, 2 * W, 3), {}), (np.linspace, (W, 2 * W, 3), {"axis": -1}),
    (np.linspace, (0.0, 1.0, 4), {"retstep": True}),
    (np.linspace, (0.0, 1.0, 1), {"retstep": True}),
    (np.linspace, (0.0, 10.0, 4), {"dtype": int}),
    (np.arange, (5,), {}), (np.arange, (0.5, 3.0), {}),
    (np.arange, (1.0, 0.0, -0.25), {}),
    (np.arange, (0, 5, 2), {"dtype": float}),
    (np.meshgrid, (V, W), {}), (np.meshgrid, (V, W), {"indexing": "ij"}),
    (np.meshgrid, (V, W, W[:2]), {}), (np.meshgrid, (V, W), {"sparse": True}),
    (np.copy, (M,), {}), (np.copy, (2.0,), {}), (np.ndarray.copy, (M,), {}),
    (np.ndarray.astype, (M, np.float32), {}), (np.ndarray.astype, (M, int), {}),
    (np.ndarray.astype, (M, float), {"copy": False}),
    (np.ndarray.astype, (I3, float), {}), (np.ndarray.astype, (M, bool), {}),
    (np.ndarray.item, (M, 4), {}), (np.ndarray.item, (M, (1, 0)), {}),
    (np.ndarray.item, (M, 1, 2), {}), (np.ndarray.item, (I3, 5), {}),
    (np.ndarray.item, (np.array([2.5]),), {}),
    (np.ndarray.tolist, (M,), {}), (np.ndarray.tolist, (I3,), {}),
    (np.ndarray.tolist, (np.array(2.5),), {}),
]


def _same(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, (got, want)
        assert got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("fn", "args", "kwargs"), PARITY,
                         ids=[f"{fn.__name__}-{i}" for i, (fn, _, _) in enumerate(PARITY)])
def test_definitions_compute_what_numpy_computes(fn, args, kwargs):
    definition = registry.python_definition(fn).python
    _same(definition(*args, **kwargs), fn(*args, **kwargs))


def _shares(result, source) -> list[bool]:
    parts = result if isinstance(result, (list, tuple)) else [result]
    return [np.shares_memory(p, source) for p in parts]


def test_views_where_numpy_gives_views():
    # A program writing through a result must see NumPy's aliasing (read-only views, as
    # np.diagonal's and np.broadcast_to's, may be copies: nothing writes through them).
    for fn, args, kwargs in [
            (np.reshape, (A, (6, 4)), {}), (np.transpose, (A,), {}), (np.flip, (A, 1), {}),
            (np.squeeze, (A[:1],), {}), (np.ndarray.ravel, (A,), {}), (np.roll, (A, 0), {}),
            (np.roll, (A, 4, 2), {}), (np.take, (A, 1, 0), {}), (np.rot90, (A, 0), {}),
            (np.meshgrid, (A[0, 0], A[1, 1]), {}), (np.meshgrid, (A[0, 0], A[1, 1]),
                                                    {"sparse": True}),
            (np.meshgrid, (A[0, 0], A[1, 1]), {"sparse": True, "copy": False}),
            (np.split, (A, 2), {}), (np.ndarray.flatten, (A,), {}), (np.atleast_3d, (A,), {}),
            (np.expand_dims, (A, 0), {}), (np.swapaxes, (A, 0, 1), {})]:
        got = registry.python_definition(fn).python(*args, **kwargs)
        assert _shares(got, A) == _shares(fn(*args, **kwargs), A), fn
    # The same object where NumPy gives the argument back, a new one where it copies.
    calls = [(np.asarray, (A,), {}), (np.asarray, (A,), {"dtype": float}), (np.array, (A,), {}),
             (np.ndarray.astype, (A, float), {}), (np.ndarray.astype, (A, float), {"copy": False}),
             (np.ndarray.copy, (A,), {})]
    for fn, args, kwargs in calls:
        got = registry.python_definition(fn).python(*args, **kwargs)
        assert (got is A) == (fn(*args, **kwargs) is A)


# ------------------------------------------------------------------------ shapes and axes


def test_reshape_and_ravel():
    _check(lambda x: np.sin(np.reshape(x, (3, -1))) * np.sum(np.reshape(x, 6)), M)
    _check(lambda x: np.sin(x.reshape(3, 2)) + x.reshape((-1, 2)) ** 2, M)
    _check(lambda x: np.sin(np.reshape(x, (3, 2), order="F")).T @ x.reshape(3, 2), M)
    _check(lambda x: np.cos(x.ravel()) * np.ravel(x.T) + x.flatten(order="F"), M)


def test_transposes_and_axes():
    _check(lambda x: np.sin(np.transpose(x, (2, 0, 1))).sum(axis=0) * x.T.sum(), A)
    _check(lambda x: np.sin(x.transpose(1, 0)) * x.transpose().sum(), M)
    _check(lambda x: np.sin(np.swapaxes(x, 0, 2)) * np.moveaxis(x, (0, 2), (2, 0)), A)
    _check(lambda x: np.sin(x.swapaxes(0, 1)) + np.moveaxis(x, (0, 1), (1, 0)) ** 2, M)


def test_adding_and_removing_axes():
    _check(lambda x: np.sin(np.expand_dims(x, (0, 2))).sum() * np.squeeze(x[None, :, None]), M)
    _check(lambda x: np.exp(np.expand_dims(x, 1).squeeze(1)) * np.squeeze(x[:1], 0).sum(), M)
    _check(lambda x: np.sin(np.atleast_2d(x)) + np.atleast_3d(x)[..., 0] * np.atleast_1d(x), V)
    _check(lambda x: np.sum(np.atleast_2d(x[0], x)[0] * np.atleast_1d(x[1])), V)


def test_new_axes_on_a_numpy_scalar():
    # (a full sum is a NumPy scalar, indexed as a 0-d array: ``s[np.newaxis]``, ``s[()]``)
    x = np.array([0.5, 1.5, -0.25])
    check_grads(lambda a: np.sum(np.sum(a * a)[np.newaxis] * a), (x,), order=2,
                modes=("rev", "fwd"))
    check_grads(lambda a: np.sum(np.sum(a)[None, None] * 2.0) + np.sum(a * a)[()], (x,),
                order=2, modes=("rev", "fwd"))


def test_broadcasting():
    _check(lambda x: np.sin(np.broadcast_to(x, (4, 2, 3))).sum(axis=0), M)
    _check(lambda x, y: np.sin(np.broadcast_arrays(x, y)[0]) * np.broadcast_arrays(x, y)[1],
           M, W)


# ------------------------------------------------------------------------ joining and splitting


def test_concatenate():
    _check(lambda x, y: np.sin(np.concatenate([x, y[None, :3]])), M, V)
    _check(lambda x, y: np.sin(np.concatenate((x, y), axis=None)), M, V)
    _check(lambda x, y: np.sum(np.concatenate([x, y[:, None] * x], axis=1) ** 2), M, W[:2])
    # A list of floats and a constant array among the pieces.
    _check(lambda x: np.sin(np.concatenate([x, [x[0] * x[1], 2.0], np.ones(2)])), V)


def test_stacks():
    _check(lambda x: np.sin(np.stack([x, 2 * x], axis=1)), M)
    _check(lambda x: np.stack([x, x * x]).T, V)
    _check(lambda x, y: np.sin(np.hstack([x, y, 2.0])), V, W)
    _check(lambda x, y: np.sin(np.vstack([x, y])), M, W)
    _check(lambda x: np.sin(np.dstack([x, x * x])), M)
    _check(lambda x: np.sin(np.column_stack([x[0], x[1], x[0] * x[1]])), M)


def test_split():
    _check(lambda x: np.sin(np.split(x, 3, axis=1)[1]) * np.split(x, [1], axis=1)[1][:, :1], M)
    _check(lambda x: np.sum(np.array_split(x, 3)[0] ** 2) + np.sum(np.array_split(x, 3)[2]), V)

    def unpacked(x):
        a, b = np.split(x, 2)
        return np.sum(a * b) + np.sum(np.sin(a))

    _check(unpacked, V)
    _check(lambda x: np.sum(np.hsplit(x, 3)[2]) * np.sum(np.vsplit(x, 2)[1] ** 2), M)
    _check(lambda x: np.sum(np.dsplit(x, [1])[1] ** 2), A)


def test_append():
    _check(lambda x, y: np.sin(np.append(x, y)), M, W)
    _check(lambda x, y: np.sin(np.append(x, y[None, :], axis=0)), M, W)


# ------------------------------------------------------------------------ repeating and reordering


def test_tile_and_repeat():
    _check(lambda x: np.sin(np.tile(x, (2, 1, 2))), M)
    _check(lambda x: np.sin(np.repeat(x, 2, axis=0)) + np.repeat(x, 2, axis=0) ** 2, M)
    _check(lambda x: np.sin(np.repeat(x, [1, 0, 3], axis=1)), M)
    _check(lambda x: np.sin(x.repeat(2)) * np.repeat(x, 2), M)


def test_flips_rolls_rotations():
    _check(lambda x: np.sin(np.flip(x)) * x + np.flip(x, 1) * np.fliplr(x) * np.flipud(x), M)
    _check(lambda x: np.sin(np.roll(x, 1)) * x + np.roll(x, (1, -1), axis=(0, 1)) ** 2, M)
    _check(lambda x: np.sin(np.rot90(x)).T * np.rot90(x, 3, axes=(1, 0)).T + np.rot90(x, 2), M)


def test_sort():
    # Each sorted value's derivative is that of the entry it is.
    _check(lambda x: np.sin(np.sort(x)) * np.arange(3.0), M)
    _check(lambda x: np.sin(np.sort(x, axis=0)) + np.sort(x, axis=None)[-1], M)
    x = np.array([0.5, -2.0, 1.0])
    np.testing.assert_allclose(wengert.grad(lambda x: np.sort(x)[0] * 3.0 + np.sort(x)[2])(x),
                               [0.0, 3.0, 1.0])


# ------------------------------------------------------------------------ gathers, diagonals


def test_take():
    _check(lambda x: np.sin(np.take(x, [0, 2, 2], axis=1)), M)
    _check(lambda x: np.sin(np.take(x, [[0, 5], [5, 1]])) + np.sum(x.take(1, axis=0)), M)
    _check(lambda x: np.take(x, 2) * np.sin(x) + np.take(x, 7, mode="wrap"), V)
    _check(lambda x: np.sin(np.take_along_axis(x, np.array([[2, 0, 0], [1, 1, 2]]), axis=1)), M)
    # Repeated indices add up in the gradient.
    g = wengert.grad(lambda x: np.sum(np.take(x, [1, 1, 3, 1])))(V)
    np.testing.assert_array_equal(g, [0.0, 3.0, 0.0, 1.0])


def test_diagonals_and_triangles():
    _check(lambda x: np.sin(np.diag(x, 1)) + np.diag(x * x, -1), V)
    _check(lambda x: np.sin(np.diag(x, -1)) * np.diag(x.T), M.T)
    _check(lambda x: np.sin(np.diagonal(x, 1, 0, 2)) * np.sum(x.diagonal(axis1=1, axis2=2)), A)
    _check(lambda x: np.sin(np.diagflat(x)) + np.diagflat(x[0], -1).sum(), M)
    _check(lambda x: np.sin(np.triu(x, 1)) * np.tril(x), M)
    _check(lambda x: np.sin(np.tril(x)) + np.triu(x, -1), V)


def test_pad():
    _check(lambda x: np.sin(np.pad(x, 1)), M)
    _check(lambda x, c: np.sin(np.pad(x, ((1, 0), (2, 1)), constant_values=c)), M, 0.7)
    _check(lambda x: np.sin(np.pad(x, 2, mode="reflect")) * np.sum(np.pad(x, (1, 2), mode="edge")
           ** 2) + np.sum(np.pad(x, 1, mode="wrap") ** 3) * np.pad(x, 2, mode="symmetric"), M)


# ------------------------------------------------------------------------ constructors


def test_array_of_active_numbers():
    _check(lambda x, y: np.sin(np.array([x, y * x, 2.0])), 0.5, 1.5)
    _check(lambda x, y: np.sin(np.array([[x, y], (y, x * y)])), 0.5, 1.5)
    _check(lambda x: np.sin(np.array([x, x * 2])) + np.asarray((x, x)), V)
    _check(lambda x: np.sum(np.array([x[0] * x[1], x[2]]) ** 2), V)
    _check(lambda x: np.sin(np.array([np.sum(x[:2]), 1.0], ndmin=2)), V)
    # d/dx sum([[x, 2x], [3x, x^2]]) = 1 + 2 + 3 + 2x.
    assert wengert.grad(lambda x: np.sum(np.array([[x, 2 * x], [3 * x, x * x]])))(0.25) == \
        pytest.approx(6.5)


def test_array_from_a_comprehension():
    def f(x):
        return np.sum(np.array([x[i] * x[i + 1] for i in range(3)]) ** 2)

    _check(f, V)


def test_full_and_full_like():
    _check(lambda x: np.sin(np.full((2, 3), x)), 0.5)
    _check(lambda x: np.sin(np.full_like(x, x[0, 1])) * x + np.full((2, 3), x[0]), M)


def test_constants_have_no_derivative():
    def f(x):
        z = np.zeros(3) + np.ones_like(x) * np.zeros_like(x) + np.empty(0).sum()
        return np.sin(x @ np.eye(3) + np.eye(2, 3, 1) + np.identity(3)[:2] + z)

    _check(f, M)


def test_linspace_arange_meshgrid():
    _check(lambda a, b: np.sin(np.linspace(a, b, 5)), 0.5, 2.0)
    _check(lambda a, b: np.sin(np.linspace(a, b, 4, endpoint=False, axis=-1)), W, 2 * W)
    _check(lambda a, b: np.linspace(a, b, 4, retstep=True)[1] ** 2, 0.5, 2.0)
    _check(lambda a: np.sin(np.arange(a, 3.5, 0.5)), 0.2)
    _check(lambda a, s: np.sin(np.arange(a, 3.3, s)), 0.2, 0.6)
    _check(lambda x: np.sum(np.linspace([x, 2 * x], [3 * x, 1.0], 4) ** 2), 0.5)
    _check(lambda x, y: np.sin(np.meshgrid(x, y)[0]) * np.meshgrid(x, y)[1], V, W)
    _check(lambda x, y: np.sin(np.meshgrid(x, y, indexing="ij")[0]) * np.sum(
        np.meshgrid(x, y, sparse=True)[1]), V, W)
    # stop only decides the length: no derivative.
    assert wengert.grad(lambda b: np.sum(np.arange(0.0, b)))(3.5) == 0.0


def test_copies():
    _check(lambda x: np.sin(np.copy(x)) + x.copy() * np.array(x), M)
    _check(lambda x: np.sum(np.copy([x, 2 * x]) ** 2), 0.5)

    def written(x):
        y = x.copy()
        y[0] = 0.0
        return np.sum(y * x)

    _check(written, M)


# ------------------------------------------------------------------------ casts and scalars


def test_astype_and_scalar_casts():
    _check(lambda x: np.sin(x.astype(np.float64)) * x.astype(float), M)
    _check(lambda x: np.float64(x) * 2.0 + np.float64(x * x), 0.5)
    # A cast to float32 keeps float32, and its cotangent is cast back to the argument's dtype.
    x = np.array([0.5, 1.5])
    value, pullback = wengert.vjp(lambda x: x.astype(np.float32) * np.float32(2.0), x)
    assert value.dtype == np.float32
    (g,) = pullback(np.ones(2, dtype=np.float32))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [2.0, 2.0])
    assert wengert.grad(lambda x: float(np.float32(x)) * 3.0)(0.5) == 3.0
    # A cast to integers is piecewise constant.
    assert wengert.grad(lambda x: np.sum(x.astype(int) * x))(np.array([1.5, 2.5]))[1] == 2.0


def test_float32_stays_float32():
    x = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
    for f in [lambda x: np.sum(np.reshape(x, -1) * np.flip(x).ravel()),
              lambda x: np.sum(np.concatenate([x, x.T]) ** 2),
              lambda x: np.sum(np.pad(x, 1, constant_values=np.float32(0.5)) ** 2),
              lambda x: np.sum(np.stack([x, x]) * np.triu(x)),
              lambda x: np.sum(np.sort(x) * np.diag(np.diag(x)))]:
        value, pullback = wengert.vjp(f, x)
        assert value.dtype == np.float32
        assert pullback(np.float32(1.0))[0].dtype == np.float32


def test_item_and_tolist():
    _check(lambda x: np.sin(x.item(4)) * x.item(0) + x.item(1, 2), M)
    _check(lambda x: x.tolist()[1][2] * x.tolist()[0][0], M)
    _check(lambda x: sum(v * v for v in x.tolist()), V)
    assert type(M.copy().tolist()[0][0]) is float


def test_clip_method_calls_np_clip():
    if registry.python_definition(np.clip) is None and registry.lookup(np.clip) is None:
        pytest.skip("np.clip has no rules yet")
    _check(lambda x: np.sin(x.clip(-0.5, 1.0)) + x.clip(max=0.3) * x.clip(min=-0.9), M)


# ------------------------------------------------------------------------ random numbers


def test_random_numbers_are_constants():
    def f(x):
        return np.sum(np.sin(x) * np.random.default_rng(0).normal(size=3))

    def g(x):
        rng = np.random.default_rng(1)
        return np.sum((x + 0.1 * rng.normal(0.0, 1.0, size=x.shape)) ** 2) + rng.uniform()

    def h(x):
        np.random.seed(0)
        return np.sum(x * np.random.rand(3)) + np.random.randn() * x[0]

    for fn in (f, g, h):
        _check(fn, W)
    noise = np.random.default_rng(0).normal(size=3)
    np.testing.assert_allclose(wengert.grad(f)(W), np.cos(W) * noise)


def test_random_numbers_of_active_parameters_are_refused():
    with pytest.raises(wengert.NonDifferentiableError, match="normal"):
        wengert.grad(lambda x: np.sum(np.random.default_rng(0).normal(x, 1.0)))(W)


# ------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.pad(x, 1, mode="mean")),
    lambda x: np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd")),
    lambda x: np.sum(np.pad(x, 1, constant_values=((0.0, 1.0), (2.0, 3.0)))),
    lambda x: np.sum(x.astype(complex) * 1.0),
    lambda x: np.sum(np.concatenate(x)),
    lambda x: np.sum(np.split(x, [2, 1], axis=1)[2]),
], ids=["pad-mean", "pad-odd", "pad-per-axis", "complex", "concatenate-rows", "split-overlap"])
def test_unsupported_forms_are_refused_with_wengert_errors(f):
    with pytest.raises(TypeError, match="error: ") as e:
        wengert.grad(f)(M)
    assert isinstance(e.value, wengert.WengertError)
    assert e.value.loc is not None and e.value.loc.filename == __file__  # (the user's line)


def test_out_is_refused():
    with pytest.raises((TypeError, wengert.NonDifferentiableError), match="out="):
        wengert.grad(lambda x: np.sum(np.take(x, [0], out=np.zeros(1))))(M)


def test_r_is_differentiated_or_refused():
    try:
        g = wengert.grad(lambda x: np.sum(np.r_[x, 2 * x]))(np.ones(2))
    except wengert.NonDifferentiableError:
        return
    np.testing.assert_array_equal(g, [3.0, 3.0])


SEPARATED = [
    (np.array([0]), slice(None), 0),
    (np.array([2, 0]), slice(1, None), np.array([1, 3])),
    (-1, None, np.array([1])),
    (np.array([True, False, True, False]), None, 1, Ellipsis),
    (1, slice(None), np.array([[0, 2], [1, 1]])),
]


@pytest.mark.parametrize("index", SEPARATED, ids=range(len(SEPARATED)))
def test_advanced_indices_apart_put_their_axes_first_in_batched_forward_mode(index):
    """NumPy moves the axes of advanced indices separated by a slice (or ``None``, ``...``)
    in front of all others: with a batched tangent's slices prepended, in front of its batch
    axes too, so ``jacfwd`` read another tangent's numbers (a wrong Jacobian) or failed to
    broadcast. Reads and writes, checked against differences (``check_grads`` runs
    ``jacfwd``)."""
    a = np.linspace(-1.0, 1.0, 4 * 3 * 4).reshape(4, 3, 4)
    w = np.cos(np.arange(a[index].size)).reshape(a[index].shape)

    def read(a):
        return np.sum(a[index] * w)

    def written(a):
        b = a * 1.0
        b[index] = w * a[index] ** 2
        return np.sum(b * b)

    check_grads(read, (a,), modes=("rev", "fwd"))
    check_grads(written, (a,), modes=("rev", "fwd"), order=2)
    # The Hessian (forward mode over the pullback, batched) against differences of grad.
    hessian = wengert.hessian(written)(a)
    grad = wengert.grad(written)
    for k in [(0, 0, 0), (2, 1, 3), (3, 2, 1)]:
        e = np.zeros_like(a)
        e[k] = 1e-6
        assert np.allclose(hessian[(...,) + k], (grad(a + e) - grad(a - e)) / 2e-6, atol=1e-5)


def test_a_write_into_a_copy_of_an_array_to_second_order():
    """The Hessian's batched pass over ``v[0] = c * x[0]`` on a 2-D array added a batched
    part into an adjoint without batch axes (a ValueError from inside wengert)."""

    def f(x, c):
        v = np.exp(0.3 * x) * 1.0
        v[0] = c * x[0]
        return np.max(x + v)

    x = np.linspace(-1.0, 1.2, 6).reshape(3, 2)
    check_grads(f, (x, 0.7), order=2, modes=("rev", "fwd"))


def test_numpy_scalars_have_the_methods_of_arrays():
    """A full reduction is a NumPy scalar: its ``.sum()``, ``.mean()``, ``.item()`` are
    the arrays' (they had no rule once the scalar's type was known)."""

    def f(x, c):
        v = x + c
        return np.sum(v, axis=0).sum() + np.sum(v * v).mean() + np.max(v).item() * 0.5

    check_grads(f, (np.array([0.5, -1.0, 2.0]), 0.7), order=2, modes=("rev", "fwd"))
