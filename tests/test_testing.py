"""Tests of the finite-difference core: numerical_jvp and check_rule.

check_rule must pass correct rules and catch each kind of wrong rule, so each
wrong rule below is registered on its own private function.
"""

from __future__ import annotations

import math

import numpy
import pytest

import wengert
from wengert.rules.registry import defjvp, defvjp
from wengert.testing import check_grads, check_rule, numerical_jvp


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


# --- check_grads ---------------------------------------------------------------------
#
# check_grads checks wengert.vjp / wengert.jvp of whole functions. Its own logic is
# tested first against hand-written stand-ins for wengert.vjp and wengert.jvp (so a
# bug in the transforms cannot hide a bug in the checker), then against the real
# reverse mode with deliberately wrong registered rules.


def _poly(x, y):
    return x * x * y


def _poly_pullback(x, y, scale_x=1.0, scale_y=1.0):
    return lambda z_bar: (scale_x * z_bar * 2.0 * x * y, scale_y * z_bar * x * x)


def _fake_vjp(pullback_factory, value_shift=0.0):
    """A stand-in for ``wengert.vjp`` built from a hand-written pullback."""

    def vjp(f, *primals):
        value = f(*primals)
        if value_shift:
            value = value + value_shift
        return value, pullback_factory(*primals)

    return vjp


def test_check_grads_accepts_a_correct_pullback(monkeypatch):
    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(_poly_pullback), raising=False)
    check_grads(_poly, (1.5, -0.7))
    check_grads(_poly, (0.3, 2.0), argnums=(0, 1))


def test_check_grads_catches_a_wrong_gradient_and_names_the_entry(monkeypatch):
    wrong = _fake_vjp(lambda x, y: _poly_pullback(x, y, scale_y=1.01))
    monkeypatch.setattr(wengert.api, "vjp", wrong, raising=False)
    with pytest.raises(AssertionError) as info:
        check_grads(_poly, (1.5, -0.7))
    message = str(info.value)
    assert "_poly(1.5, -0.7)" in message
    assert "'rev'" in message
    assert "argument 1" in message  # the first entry that differs


def test_check_grads_argnums_restricts_the_checked_arguments(monkeypatch):
    wrong = _fake_vjp(lambda x, y: _poly_pullback(x, y, scale_y=2.0))
    monkeypatch.setattr(wengert.api, "vjp", wrong, raising=False)
    check_grads(_poly, (1.5, -0.7), argnums=0)  # the wrong adjoint of y is not looked at
    with pytest.raises(AssertionError, match="argument 1"):
        check_grads(_poly, (1.5, -0.7), argnums=1)


def test_check_grads_catches_a_wrong_value(monkeypatch):
    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(_poly_pullback, 1e-3), raising=False)
    with pytest.raises(AssertionError, match="value returned by wengert.vjp"):
        check_grads(_poly, (1.5, -0.7))


def test_a_value_is_the_same_up_to_rounding_at_the_scale_of_its_largest_number():
    from wengert.testing import _assert_same_value

    # ``x - x`` summed in two orders: 0.0 and 5.6e-17 beside numbers near 1 (a pullback's
    # value differentiated again, found by the NumPy program generator, seed 24178).
    _assert_same_value((numpy.full(5, 0.78), 5.551115123125783e-17), (numpy.full(5, 0.78), 0.0),
                       "v")
    with pytest.raises(AssertionError, match="not the function's value"):
        _assert_same_value((numpy.full(5, 0.78), 1e-9), (numpy.full(5, 0.78), 0.0), "v")
    with pytest.raises(AssertionError, match="not the function's value"):
        _assert_same_value(1e-20, 0.0, "v")  # (alone, a number is held to itself)


def test_check_grads_catches_a_pullback_of_the_wrong_arity(monkeypatch):
    def factory(x, y):
        return lambda z_bar: (z_bar * 2.0 * x * y,)

    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(factory), raising=False)
    with pytest.raises(AssertionError, match="one per argument"):
        check_grads(_poly, (1.5, -0.7))


def test_check_grads_wants_zeros_not_none_for_float_arguments(monkeypatch):
    def first(x, y):
        return 3.0 * x

    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(lambda x, y: lambda z: (3.0 * z, None)),
                        raising=False)
    with pytest.raises(AssertionError, match="cotangent of argument 1 is None"):
        check_grads(first, (1.0, 2.0))
    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(lambda x, y: lambda z: (3.0 * z, 0.0)),
                        raising=False)
    check_grads(first, (1.0, 2.0))


def test_check_grads_wants_none_for_int_arguments(monkeypatch):
    def scaled(x, n):
        return x * n

    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(lambda x, n: lambda z: (z * n, 0.0)),
                        raising=False)
    with pytest.raises(AssertionError, match="must be None"):
        check_grads(scaled, (1.5, 3))
    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(lambda x, n: lambda z: (z * n, None)),
                        raising=False)
    check_grads(scaled, (1.5, 3))


def _weighted(a, s):
    return a * s


def test_check_grads_catches_a_cotangent_of_the_wrong_shape(monkeypatch):
    a = numpy.array([1.0, -2.0, 0.5])
    # Forgets to sum the broadcast scalar's adjoint.
    unreduced = _fake_vjp(lambda a, s: lambda y: (y * s, y * a))
    monkeypatch.setattr(wengert.api, "vjp", unreduced, raising=False)
    with pytest.raises(AssertionError, match="cotangent of argument 1 does not fit"):
        check_grads(_weighted, (a, 2.0))
    reduced = _fake_vjp(lambda a, s: lambda y: (y * s, float(numpy.sum(y * a))))
    monkeypatch.setattr(wengert.api, "vjp", reduced, raising=False)
    check_grads(_weighted, (a, 2.0))


def test_check_grads_on_structures(monkeypatch):
    def f(d, xs):
        return {"p": d["a"] * xs[0], "q": xs[1] - d["b"]}, len(xs)

    def factory(d, xs):
        def pullback(out_bar):
            o, _ = out_bar
            return ({"a": o["p"] * xs[0], "b": -o["q"]}, [o["p"] * d["a"], o["q"]])

        return pullback

    args = ({"a": 1.5, "b": 2.0}, [0.5, -1.0])
    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(factory), raising=False)
    check_grads(f, args)

    def swapped(d, xs):
        def pullback(out_bar):
            o, _ = out_bar
            return ({"a": o["p"] * xs[0], "b": -o["q"]}, [o["q"], o["p"] * d["a"]])

        return pullback

    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(swapped), raising=False)
    with pytest.raises(AssertionError, match="argument 1, leaf 0"):
        check_grads(f, args)


def test_check_grads_copies_arguments_for_mutating_functions(monkeypatch):
    def f(xs):
        xs[0] *= 2.0
        return xs[0] + xs[1]

    monkeypatch.setattr(wengert.api, "vjp", _fake_vjp(lambda xs: lambda z: ([2.0 * z, z],)),
                        raising=False)
    xs = [1.0, 3.0]
    check_grads(f, (xs,))
    assert xs == [1.0, 3.0]




def test_check_grads_fwd_mode(monkeypatch):
    def good_jvp(f, primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        return f(x, y), 2.0 * x * y * dx + x * x * dy

    def bad_jvp(f, primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        return f(x, y), 2.0 * x * y * dx - x * x * dy

    monkeypatch.setattr(wengert.api, "jvp", good_jvp, raising=False)
    check_grads(_poly, (1.0, 2.0), modes=("fwd",))
    monkeypatch.setattr(wengert.api, "jvp", bad_jvp, raising=False)
    with pytest.raises(AssertionError, match="'fwd'.*finite differences"):
        check_grads(_poly, (1.0, 2.0), modes=("fwd",))


def test_check_grads_rejects_unknown_modes():
    with pytest.raises(ValueError, match="unknown mode"):
        check_grads(_poly, (1.0, 2.0), modes=("sideways",))


# With the real reverse mode: a function calling a helper whose registered rule is
# wrong must fail; the same function calling a helper with a correct rule passes.


def _helper_with_wrong_rule(x):
    return x * x


@defvjp(_helper_with_wrong_rule)
def _helper_with_wrong_rule_vjp(x):
    return x * x, lambda y_bar: (y_bar * 3.0 * x,)  # should be 2 x


def _helper_with_right_rule(x):
    return x * x


@defvjp(_helper_with_right_rule)
def _helper_with_right_rule_vjp(x):
    return x * x, lambda y_bar: (y_bar * 2.0 * x,)


def _calls_wrong_rule(x, y):
    return math.sin(y) * _helper_with_wrong_rule(x) + y


def _calls_right_rule(x, y):
    return math.sin(y) * _helper_with_right_rule(x) + y


def test_check_grads_catches_a_wrong_registered_rule_through_the_transform():
    with pytest.raises(AssertionError, match="_calls_wrong_rule.*'rev'"):
        check_grads(_calls_wrong_rule, (0.8, 1.3))


def test_check_grads_passes_a_correct_registered_rule_through_the_transform():
    check_grads(_calls_right_rule, (0.8, 1.3))


_SCALE = numpy.array([1.0, 2.0, 3.0])


def scaled_with_a_default(x, scale=_SCALE):
    return numpy.sum(scale * x ** 2)


def seven_arguments(a, b, c, d, e, g, h):
    return numpy.sum(a ** 2) * b * c * d * e * g * h


def test_second_order_checks_of_defaults_and_many_arguments():
    # (``check_grads`` differentiates ``vjp(f, *args)[1](v)`` again: refused before for a
    # parameter left to its default, and past six arguments)
    x = numpy.array([0.3, -0.7, 1.1])
    check_grads(scaled_with_a_default, (x,), order=2, modes=("rev", "fwd"))
    check_grads(seven_arguments, (x, 1.0, 2.0, 3.0, 0.5, 0.25, 1.5), order=2,
                modes=("rev", "fwd"))
