"""Tests of the finite-difference core: numerical_jvp and check_rule.

check_rule must pass correct rules and catch each kind of wrong rule, so each
wrong rule below is registered on its own private function.
"""

from __future__ import annotations

import math

import numpy
import pytest

from wengert.rules.registry import defjvp, defvjp
from wengert.testing import check_rule, numerical_jvp


def test_numerical_jvp_scalar_closed_form():
    got = numerical_jvp(lambda x, y: x * x * y, (3.0, 2.0), (1.0, 0.5))
    # d(x^2 y) = 2 x y dx + x^2 dy
    assert got == pytest.approx(2 * 3.0 * 2.0 * 1.0 + 9.0 * 0.5, rel=1e-8)


def test_numerical_jvp_on_structures_with_constants():
    def f(d, n):
        return {"s": d["a"] * n, "v": d["b"] ** 2, "k": n}, "label"

    args = ({"a": 2.0, "b": numpy.array([1.0, -3.0])}, 4)
    ts = ({"a": 1.0, "b": numpy.array([0.5, 1.0])}, None)
    out, label = numerical_jvp(f, args, ts)
    assert label is None
    assert out["k"] is None  # an int output has no tangent
    assert out["s"] == pytest.approx(4.0)
    numpy.testing.assert_allclose(out["v"], [2 * 1.0 * 0.5, 2 * -3.0 * 1.0], rtol=1e-8)


def test_numerical_jvp_does_not_mutate_arguments():
    def f(a):
        a *= 2.0
        return a

    a = numpy.array([1.0, 2.0])
    numpy.testing.assert_allclose(numerical_jvp(f, (a,), (numpy.ones(2),)), [2.0, 2.0])
    numpy.testing.assert_array_equal(a, [1.0, 2.0])


# --- correct rules pass ------------------------------------------------------------


def _cube(x):
    return x * x * x


@defvjp(_cube)
def _cube_vjp(x):
    return _cube(x), lambda y_bar: (y_bar * (3.0 * x * x),)


@defjvp(_cube)
def _cube_jvp(x):
    return _cube(x), lambda x_dot: x_dot * (3.0 * x * x)


def test_check_rule_accepts_a_correct_rule():
    check_rule(_cube, 1.7)
    check_rule(_cube, numpy.array([1.0, -2.0, 0.5]))


# --- wrong rules are caught ----------------------------------------------------------


def _f_wrong_jvp(x):
    return math.sin(x)


@defvjp(_f_wrong_jvp)
def _f_wrong_jvp_vjp(x):
    return math.sin(x), lambda y_bar: (y_bar * math.cos(x),)


@defjvp(_f_wrong_jvp)
def _f_wrong_jvp_jvp(x):
    return math.sin(x), lambda x_dot: x_dot * -math.cos(x)  # wrong sign


def test_check_rule_catches_a_wrong_jvp():
    with pytest.raises(AssertionError, match="finite differences"):
        check_rule(_f_wrong_jvp, 0.4)


def _f_wrong_vjp(x, y):
    return x * y


@defvjp(_f_wrong_vjp)
def _f_wrong_vjp_vjp(x, y):
    return x * y, lambda z_bar: (z_bar * x, z_bar * y)  # adjoints swapped


@defjvp(_f_wrong_vjp)
def _f_wrong_vjp_jvp(x, y):
    return x * y, lambda x_dot, y_dot: x_dot * y + x * y_dot


def test_check_rule_catches_a_vjp_that_is_not_the_transpose():
    with pytest.raises(AssertionError, match="transpose"):
        check_rule(_f_wrong_vjp, 2.0, 5.0)


def _f_wrong_value(x):
    return 2.0 * x


@defvjp(_f_wrong_value)
def _f_wrong_value_vjp(x):
    return 2.0 * x + 1e-3, lambda y_bar: (2.0 * y_bar,)


@defjvp(_f_wrong_value)
def _f_wrong_value_jvp(x):
    return 2.0 * x, lambda x_dot: 2.0 * x_dot


def test_check_rule_catches_a_wrong_value():
    with pytest.raises(AssertionError, match="vjp rule's value"):
        check_rule(_f_wrong_value, 1.0)


def _f_wrong_arity(x, y):
    return x + y


@defvjp(_f_wrong_arity)
def _f_wrong_arity_vjp(x, y):
    return x + y, lambda z_bar: z_bar  # not a tuple of one adjoint per argument


@defjvp(_f_wrong_arity)
def _f_wrong_arity_jvp(x, y):
    return x + y, lambda x_dot, y_dot: x_dot + y_dot


def test_check_rule_catches_a_pullback_of_the_wrong_arity():
    with pytest.raises(AssertionError, match="one per positional argument"):
        check_rule(_f_wrong_arity, 1.0, 2.0)


def _f_unreduced(a, s):
    return a * s


@defvjp(_f_unreduced)
def _f_unreduced_vjp(a, s):
    # Forgets to sum the adjoint of the broadcast scalar back to a scalar.
    return a * s, lambda y_bar: (y_bar * s, y_bar * a)


@defjvp(_f_unreduced)
def _f_unreduced_jvp(a, s):
    return a * s, lambda a_dot, s_dot: a_dot * s + a * s_dot


def test_check_rule_catches_an_adjoint_of_the_wrong_shape():
    with pytest.raises(AssertionError, match="adjoint of argument 1"):
        check_rule(_f_unreduced, numpy.array([1.0, 2.0, 3.0]), 2.0)


def _f_unbatched(x):
    return math.exp(x)


@defvjp(_f_unbatched)
def _f_unbatched_vjp(x):
    return math.exp(x), lambda y_bar: (y_bar * math.exp(x),)


@defjvp(_f_unbatched)
def _f_unbatched_jvp(x):
    # Correct for one tangent, wrong for a stack: it collapses the batch axis.
    return math.exp(x), lambda x_dot: numpy.mean(x_dot) * math.exp(x)


def test_check_rule_catches_a_rule_that_mishandles_batched_tangents():
    check_rule(_f_unbatched, 0.3, batch=0)  # fine one direction at a time
    with pytest.raises(AssertionError, match="batch"):
        check_rule(_f_unbatched, 0.3)


def _f_nonlinear(x):
    return 3.0 * x


@defvjp(_f_nonlinear)
def _f_nonlinear_vjp(x):
    return 3.0 * x, lambda y_bar: (3.0 * y_bar,)


@defjvp(_f_nonlinear)
def _f_nonlinear_jvp(x):
    # A small quadratic term: the differential is not linear.
    return 3.0 * x, lambda x_dot: 3.0 * x_dot + 0.01 * x_dot * x_dot


def test_check_rule_catches_a_nonlinear_differential():
    with pytest.raises(AssertionError, match="not linear"):
        check_rule(_f_nonlinear, 1.0)


def _f_affine(x):
    return 3.0 * x


@defvjp(_f_affine)
def _f_affine_vjp(x):
    return 3.0 * x, lambda y_bar: (3.0 * y_bar,)


@defjvp(_f_affine)
def _f_affine_jvp(x):
    return 3.0 * x, lambda x_dot: 3.0 * x_dot + 0.5


def test_check_rule_catches_an_affine_differential():
    with pytest.raises(AssertionError, match="not linear"):
        check_rule(_f_affine, 1.0)


def _f_no_rule(x):
    return x


def test_check_rule_needs_a_registered_rule():
    with pytest.raises(AssertionError, match="no registered rule"):
        check_rule(_f_no_rule, 1.0)


def test_check_rule_needs_a_differentiable_argument():
    with pytest.raises(AssertionError, match="nothing to check"):
        check_rule(_cube, 3)
