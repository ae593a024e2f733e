"""Python loops over the numbers of NumPy arrays: every spelling of reading and writing
one entry (``x[i]``, ``x[i, j]``, negative and NumPy-integer indices, rows of a matrix,
``for v in x``, in-place stencils that read what they wrote, accumulators started at
``0.0`` that become NumPy scalars), checked in both modes and to second order; the
pullback of such a loop adds into an array it owns (``x_bar[i] += g``, no call per
entry) and never changes an array the caller holds."""

from __future__ import annotations

import math

import numpy as np
import pytest

import wengert
from wengert.analysis.types import array_of
from wengert.testing import check_grads

X = np.array([0.3, -1.2, 2.0, 0.7, 1.5, -0.4])
M = np.array([[0.5, -0.2, 0.3], [0.9, 1.3, -1.0], [0.2, 0.1, 0.7]])


def accumulate_items(x):
    s = 0.0
    for i in range(len(x)):
        s += math.sin(x[i]) * x[i]
    return s


def iterate_values(x):
    s = 0.0
    for v in x:
        s = s + v * v
    return s


def negative_indices(x):
    s = 0.0
    for i in range(1, len(x)):
        s += x[-i] * x[i - 1]
    return s


def numpy_int_index(x):
    s = 0.0
    for i in np.arange(len(x)):
        s += x[i] ** 2
    return s


def matrix_entries(m):
    s = 0.0
    n, k = m.shape
    for i in range(n):
        for j in range(k):
            s += m[i, j] * m[j, i]
    return s


def matrix_rows(m):
    s = 0.0
    for row in m:
        for v in row:
            s += math.exp(v) * 0.1
    return s


def chained_rows(m):
    s = 0.0
    for i in range(len(m)):
        s += m[i][i] * m[i][0]
    return s


def stencil(x):
    y = np.zeros_like(x)
    for i in range(1, len(x) - 1):
        y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]
    return np.sum(y * y)


def gauss_seidel(x):
    u = x.copy()
    for _ in range(2):
        for i in range(1, len(u) - 1):
            u[i] = 0.5 * (u[i - 1] + u[i + 1]) + 0.1 * u[i] * u[i]
    return np.sum(u ** 3)


def fill_new_array(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = math.tanh(x[i]) + (y[i - 1] if i else 0.0)
    return np.dot(y, x)


def zero_trip_loop(x):
    s = 0.0
    for i in range(0):
        s += x[i]
    return s + x[0]


def accumulate_then_branch(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s += x[i] * x[i]
        else:
            s -= x[i]
    return s


def read_then_written(x):
    y = x * 1.0
    t = y * y  # read before the writes below: the pullback needs y as it was here
    for i in range(len(y)):
        y[i] = y[i] * 2.0 + t[i]
    u = y * x  # read after them
    return np.sum(t * u)


PROGRAMS = [
    (accumulate_items, (X,)),
    (iterate_values, (X,)),
    (negative_indices, (X,)),
    (numpy_int_index, (X,)),
    (matrix_entries, (M,)),
    (matrix_rows, (M,)),
    (chained_rows, (M,)),
    (stencil, (X,)),
    (gauss_seidel, (X,)),
    (fill_new_array, (X,)),
    (zero_trip_loop, (X,)),
    (accumulate_then_branch, (X,)),
    (read_then_written, (X,)),
]


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_entries_in_both_modes_and_to_second_order(f, args):
    check_grads(f, args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_the_regenerated_primal_agrees(f, args):
    out, _ = wengert.vjp(f, *args)
    assert out == pytest.approx(f(*args), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("f", [iterate_values, accumulate_items, stencil])
def test_a_float32_array_gets_float32_derivatives(f):
    x = X.astype(np.float32)
    g = wengert.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, wengert.grad(f)(X), rtol=1e-4, atol=1e-5)
    h = wengert.hessian(f)(x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, wengert.hessian(f)(X), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("f", [accumulate_items, stencil, gauss_seidel])
def test_the_loop_adds_into_an_owned_array(f):
    source = wengert.show(f, mode="vjp", arg_types=(array_of(np.float64, 1),))
    pullback = source[source.index("_pullback"):]
    assert "_bar = owned_array(" in pullback
    assert "entry_adjoint_of_array" not in pullback
    assert "getitem_adjoint" not in pullback


def shared_cotangent(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return x * s


def test_a_callers_cotangent_is_never_changed():
    # The output's cotangent flows into x_bar before the loop adds entries into it.
    ct = np.array([1.0, -2.0, 0.5, 0.25, 1.5, -1.0])
    kept = ct.copy()
    _, pullback = wengert.vjp(shared_cotangent, X)
    first = pullback(ct)
    np.testing.assert_array_equal(ct, kept)
    np.testing.assert_array_equal(pullback(ct)[0], first[0])
    check_grads(shared_cotangent, (X,), order=2, modes=("rev", "fwd"))


def reshaped_in_place(x):
    y = x.copy()
    y.shape = (2, 3)
    s = 0.0
    for i in range(2):
        s += y[i][0] * y[i][1]
    return s


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_array_changed_in_shape_is_refused_where_written(mode):
    with pytest.raises(wengert.NonDifferentiableError) as err:
        if mode == "grad":
            wengert.grad(reshaped_in_place)(X)
        else:
            wengert.jvp(reshaped_in_place, (X,), (X,))
    assert err.value.loc.lineno == reshaped_in_place.__code__.co_firstlineno + 2
    assert "reshape" in str(err.value)
