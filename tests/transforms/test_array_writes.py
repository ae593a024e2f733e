"""Writes into NumPy arrays, in both modes and to second order: every spelling of an item
or slice update (assignment, augmented assignment, broadcast values, masks, repeated
integer indices, updates inside loops), and arrays built by a call that has no derivative
(``np.zeros``) and then filled with values being differentiated."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads

X = np.array([0.3, -1.2, 2.0, 0.7, 1.5])


def item_write(a):
    b = a * 0.0
    b[1] = a[0] * 2.0
    return np.sum(b * b)


def slice_write(a):
    b = a * 0.0
    b[2:4] = a[1:3] ** 2
    return np.sum(b * b)


def broadcast_write(a):
    b = a * 0.0
    b[1:3] = a[0]  # one value spread over a slice
    return np.sum(b * b)


def repeated_index_add(a):
    b = a * 1.0
    b[np.array([0, 0])] += a[4]  # NumPy adds once: the position is named twice
    return np.sum(b * b)


def repeated_index_write(a):
    b = a * 1.0
    b[np.array([0, 0])] = a[3:5] * 3.0  # the last value written stays
    return np.sum(b * b)


def mask_write(a):
    b = a * 1.0
    b[b < 0] = 0.0
    return np.sum(b * b)


def scaled_in_place(a):
    b = a * 1.0
    b *= 3.0
    b += a
    return np.sum(b ** 2)


def loop_accumulation(a):
    out = a * 0.0
    for i in range(5):
        out[i] += a[i] * 2.0
    return np.sum(out * out)


CASES = [item_write, slice_write, broadcast_write, repeated_index_add, repeated_index_write,
         mask_write, scaled_in_place, loop_accumulation]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_array_writes_against_finite_differences(f):
    check_grads(f, (X,), order=2, modes=("rev", "fwd"))


def test_a_repeated_index_adds_once():
    # b[0] = a[0] + a[4] once (NumPy's buffered ``+=``): d sum(b^2) / d a[4] = 2 b[0] + 2 b[4].
    g = wengert.grad(repeated_index_add)(X)
    assert g[4] == pytest.approx(2 * (X[0] + X[4]) + 2 * X[4])
    assert g[0] == pytest.approx(2 * (X[0] + X[4]))


def test_a_write_into_an_array_made_by_a_constructor_carries_the_derivative():
    def f(a):
        b = np.zeros(5)
        b[1] = a[0] * 2.0
        return np.sum(b * b)

    assert wengert.grad(f)(X)[0] == pytest.approx(8.0 * X[0])
