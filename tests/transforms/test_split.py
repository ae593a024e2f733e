"""A compiled VJP split into its forward and its pullback (``transforms.split``).

The split is an optimisation: a caller linked to the VJP calls the two functions with a
tuple of residuals between them instead of a closure. Each program here goes through it
(recursion, mutual recursion, lists and objects given in and changed, a call through the
dispatcher) and is checked against central differences; the generated module has no
nested pullback, and the pullback, bound to its residuals, can be called again.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads


def continued_fraction(x, depth):
    if depth == 0:
        return 1.0
    return 1.0 + x / continued_fraction(x, depth - 1)


def is_even_sum(x, n):
    if n == 0:
        return x
    return math.sin(x) + is_odd_sum(x * 1.1, n - 1)


def is_odd_sum(x, n):
    if n == 0:
        return x * x
    return math.cos(x) * is_even_sum(x, n - 1)


def scale_in_place(xs, k, a):
    if k == 0:
        return 0.0
    xs[k - 1] = xs[k - 1] * a
    return xs[k - 1] + scale_in_place(xs, k - 1, a)


def total_of_list(xs, k):
    if k == len(xs):
        return 0.0
    return xs[k] ** 2 + total_of_list(xs, k + 1)


def through_dispatch(x, y):
    fs = [math.sin, lambda t: t * y, continued_fraction_at_3]
    s = 0.0
    for f in fs:
        s += f(x)
    return s


def continued_fraction_at_3(x):
    return continued_fraction(x, 3)


PROGRAMS = [
    (continued_fraction, (0.7, 12), (0,)),
    (is_even_sum, (0.4, 7), (0,)),
    (scale_in_place, ([0.5, -1.2, 0.8, 2.0], 4, 1.3), (0, 2)),
    (total_of_list, ([0.5, -1.2, 0.8], 0), (0,)),
    (through_dispatch, (0.6, 1.7), (0, 1)),
]


@pytest.mark.parametrize("f, args, argnums", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_split_vjps_against_differences(f, args, argnums):
    check_grads(f, args, argnums=argnums, modes=("rev",))
    _, pullback = wengert.vjp(f, *args)
    np.testing.assert_equal(pullback(1.0), pullback(1.0))


def test_the_pullback_is_a_function_of_the_residuals():
    source = wengert.show(continued_fraction, mode="vjp", like=(0.7, 12))
    assert "def continued_fraction_pullback(res, result_bar):" in source
    assert re.search(r"^    \w+(, \w+)* = res$", source, re.M), source
    assert "return (result, res)" in source
    # The recursion calls the two functions by name: no closure, no dispatcher.
    assert "continued_fraction_vjp(x, " in source
    assert "continued_fraction_pullback(y_res, " in source
    assert "\n    def " not in source and "vjp_call" not in source


def test_grad_of_a_deep_recursion():
    g = wengert.grad(continued_fraction)(0.7, 40)
    h = 1e-6
    want = (continued_fraction(0.7 + h, 40) - continued_fraction(0.7 - h, 40)) / (2 * h)
    assert abs(g - want) < 1e-7
