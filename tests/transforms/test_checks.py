"""Checks both modes make before differentiating (``transforms/checks.py``): writes into an
array that shares its memory with another array read after the write are refused at the
write, in every spelling of the view; what does not share is differentiated."""

from __future__ import annotations

import math

import numpy as np
import pytest
from corpus import trapezoid as integrate

import wengert
from wengert.testing import check_grads

X4 = np.array([0.3, -0.7, 1.1, 0.5])
A22 = np.array([[0.3, -0.7], [1.1, 0.5]])


def reshaped(x):
    y = x.copy()
    m = y.reshape(2, 2)
    m[0, 0] = 3.0 * m[0, 0]
    return np.sum(y ** 2)


def transposed(a):
    b = a.copy()
    c = b.T
    c[0, 1] = 3.0 * c[0, 1]
    return np.sum(b ** 2)


def as_array(x):
    y = np.asarray(x)  # (``x`` itself)
    y[0] = 3.0 * y[0]
    return np.sum(x ** 2)


def base_then_view(x):
    y = x.copy()
    m = y.reshape(2, 2)
    y[0] = 3.0 * y[0]
    return np.sum(m ** 2)


def raveled_and_filled(x):
    big = np.zeros((2, 2))
    flat = big.ravel()
    flat[:] = x
    return np.sum(big ** 2 * np.arange(4.0).reshape(2, 2))


def swapped(a):
    b = a.copy()
    s = np.swapaxes(b, 0, 1)
    s[1, 0] *= 2.0
    return np.sum(b * b)


def moved_and_expanded(a):
    b = a.copy()
    m = np.expand_dims(np.moveaxis(b, 0, 1), 0)
    m[0, 0, 1] = m[0, 0, 1] * a[0, 0]
    return np.sum(b ** 3)


def squeezed_flipped_atleast(x):
    y = x.copy()
    f = np.flip(np.squeeze(np.atleast_2d(y)))
    f[0] = f[0] * 2.0
    return np.sum(y ** 2)


def split_piece(x):
    y = x.copy()
    first, second = np.split(y, 2)
    second[0] = second[0] * first[1]
    return np.sum(y ** 2)


def transposed_in_a_loop(a):
    b = a.copy()
    t = np.transpose(b)
    for i in range(2):
        t[i, 0] = t[i, 0] * 1.5
    return np.sum(b * b)


@pytest.mark.parametrize("f, x", [
    (reshaped, X4), (transposed, A22), (as_array, X4), (base_then_view, X4),
    (raveled_and_filled, X4), (swapped, A22), (moved_and_expanded, A22),
    (squeezed_flipped_atleast, X4), (split_piece, X4), (transposed_in_a_loop, A22),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_write_through_a_view_made_by_a_call_is_refused_in_both_modes(f, x):
    # Each gave a wrong gradient and a wrong tangent, without a word: the derivative
    # followed the array under the name written, not under the other.
    for mode in ("rev", "fwd"):
        with pytest.raises(wengert.NonDifferentiableError, match="shares its memory") as e:
            check_grads(f, (x.copy(),), modes=(mode,))
        assert e.value.loc.filename == __file__


def slice_view_read_after_a_write_of_its_base(x):
    y = x.copy()
    v = y[1:]
    y[1] = 3.0 * y[1]
    return np.sum(v ** 2)


def row_of_a_copy_written(a):
    b = a.copy()
    for row in b:
        row[0] = row[0] * row[1]
    return np.sum(b ** 2)


@pytest.mark.parametrize("f, x", [
    (slice_view_read_after_a_write_of_its_base, X4), (row_of_a_copy_written, A22),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_view_made_by_indexing_is_refused_in_reverse_mode_and_followed_forward(f, x):
    # Forward mode's tangents of basic indexes are views of the tangents: it is right.
    with pytest.raises(wengert.NonDifferentiableError):
        check_grads(f, (x.copy(),), modes=("rev",))
    check_grads(f, (x.copy(),), modes=("fwd",))


def view_written_and_read_alone(x):
    m = x.copy().reshape(2, 2)
    m[0, 0] = 3.0 * m[0, 0]
    return np.sum(m ** 2)


def view_made_after_the_write(x):
    y = x.copy()
    y[0] = 3.0 * y[0]
    m = y.reshape(2, 2).T
    return np.sum(m[0] ** 2) + np.sum(y)


def stencil(u0, alpha):
    u = u0.copy()
    for _ in range(3):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] + u[:-2] - 2.0 * u[1:-1]  # (read before the write, each step)
        u[1:-1] += alpha * lap[1:-1]
    return np.sum(u ** 2)


def shape_of_a_view_after_the_write(x):
    y = x.copy()
    m = y.reshape(2, 2)
    y[0] = y[0] * 2.0
    return np.sum(y) * m.shape[0] + len(m)


def array_copy_written(x):
    y = np.array(x)  # (a copy: ``np.asarray`` would be ``x`` itself)
    y[0] = y[0] ** 3
    return np.sum(y * x)


def masked_writes(x):
    y = x.copy()
    y[y < 0] = 0.0  # (a mask reads a copy)
    y[y > 1.0] = y[y > 1.0] ** 2
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [
    (view_written_and_read_alone, (X4,)), (view_made_after_the_write, (X4,)),
    (stencil, (X4, 0.1)), (shape_of_a_view_after_the_write, (X4,)),
    (array_copy_written, (X4,)), (masked_writes, (X4,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_views_no_later_read_shares_with_are_differentiated(f, args):
    check_grads(f, args, modes=("rev", "fwd"), order=2)


def picked(x, idx):
    return np.sum(x[idx] ** 2) + np.sum(x[np.arange(len(idx)), ] * idx)


def test_an_array_of_integers_carries_no_derivative():
    # (``vjp`` of labels or indices: ``None``, as for an int, where it was refused at the
    # index, "a value being differentiated is used as an index")
    x, idx = np.array([0.3, 0.5, 0.7]), np.array([0, 2, 2])
    _, pullback = wengert.vjp(picked, x, idx)
    g_x, g_idx = pullback(1.0)
    assert g_idx is None
    check_grads(picked, (x, idx), modes=("rev", "fwd"), order=2)


# Closures over a loop's variable: allowed while only called in the pass that made them
# (directly, or by a helper inlined here), refused where they outlive it.
def _lambda_per_pass(x):
    total = 0.0
    for k in range(1, 4):
        total += integrate(lambda t: math.sin(k * t * x), 0.0, 1.0)
    return total


def _def_per_pass(x):
    total = 0.0
    for k in range(1, 4):
        def decay(t):
            return math.exp(-k * t) * x

        total += integrate(decay, 0.0, 1.0) * k + decay(0.5)
    return total


def _while_assigned_before(x):
    k = 0.0
    total = 0.0
    while k < 1.5:
        k = k + 0.5
        total += integrate(lambda t: t * k * x, 0.0, 1.0)
    return total


def _kept_in_a_list(x):
    fs = []
    for k in range(3):
        fs.append(lambda t: t * k * x)
    return sum(f(1.0) for f in fs)


def _carried_to_the_next_pass(x):
    f = None
    total = 0.0
    for k in range(3):
        if f is not None:
            total += f(x)
        f = lambda t: t * k  # noqa: E731
    return total


@pytest.mark.parametrize("f", [_lambda_per_pass, _def_per_pass, _while_assigned_before])
def test_closures_over_a_loop_variable_called_in_their_pass_differentiate(f):
    check_grads(f, (0.7,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("f", [_kept_in_a_list, _carried_to_the_next_pass])
def test_closures_over_a_loop_variable_that_outlive_their_pass_are_refused(f):
    # (Python's closures read the last value of ``k``: a captured value would be wrong)
    with pytest.raises(wengert.UnsupportedSyntaxError, match="assigns again") as e:
        wengert.grad(f)(0.7)
    assert e.value.loc is not None and e.value.loc.filename == __file__
