"""Rules of builtins: abs, min, max, sum, pow, float, divmod, and the non-differentiable ones."""

from __future__ import annotations

import builtins

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wengert
import wengert.rules  # noqa: F401  (registers the rules)
from wengert.rules import registry
from wengert.testing import check_grads, check_rule

rng = numpy.random.default_rng(3)
A = rng.standard_normal((3, 4))
V4 = rng.standard_normal(4)


def _grads(fn, *args, seed=1.0):
    _, pullback = registry.lookup(fn).vjp(*args)
    return pullback(seed)


@pytest.mark.parametrize("x", [2.5, -0.75, A])
def test_abs(x):
    check_rule(builtins.abs, x)


def test_abs_slope():
    assert _grads(builtins.abs, -2.0) == (-1.0,)
    assert _grads(builtins.abs, 0.0) == (0.0,)


@pytest.mark.parametrize("fn", [builtins.max, builtins.min], ids=lambda f: f.__name__)
@pytest.mark.parametrize("args", [
    (1.0, 3.0, 2.0), (-1.0, -3.0), (2.5, 7), ([1.0, 3.0, 2.0],), ((0.5, -2.0, 4.0, 1.0),),
    ([4.0, 1, 2.5],), ([-0.5],),
])
def test_min_max(fn, args):
    check_rule(fn, *args)


def test_max_adjoint_goes_to_the_first_maximum():
    # Python returns the first of equal maxima; so does the adjoint.
    assert _grads(builtins.max, 1.0, 3.0, 3.0) == (None, 1.0, None)
    assert _grads(builtins.min, 1.0, 0.5, 0.5) == (None, 1.0, None)
    assert _grads(builtins.max, [2.0, 5.0, 5.0, 1.0]) == ([None, 1.0, None, None],)
    xs_bar, = _grads(builtins.min, (2.0, -5.0, 3.0))
    assert xs_bar == (None, 1.0, None) and isinstance(xs_bar, tuple)


def test_max_tangent_is_the_tangent_of_the_winner():
    _, differential = registry.lookup(builtins.max).jvp(1.0, 3.0, 2.0)
    assert differential(10.0, 20.0, 30.0) == 20.0
    assert differential(10.0, None, 30.0) is None
    _, differential = registry.lookup(builtins.min).jvp([1.0, 3.0, -2.0])
    assert differential([10.0, 20.0, 30.0]) == 30.0


def test_max_over_a_generator():
    y, pullback = registry.lookup(builtins.max).vjp(x * x for x in (1.0, -3.0, 2.0))
    assert y == 9.0 and pullback(1.0) == ([None, 1.0, None],)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=6, unique=True))
def test_max_min_property(xs):
    # Distinct values: the extreme is unique, so finite differences apply.
    gaps = sorted(xs)
    if len(xs) > 1 and min(b - a for a, b in zip(gaps, gaps[1:], strict=False)) < 1e-3:
        return
    check_rule(builtins.max, xs, directions=1, batch=2)
    if len(xs) > 1:
        check_rule(builtins.min, *xs, directions=1, batch=2)
    i = xs.index(max(xs))
    assert _grads(builtins.max, xs)[0] == [1.0 if k == i else None for k in range(len(xs))]


def max_by_abs(x, y):
    return max([x, -y, 0.5 * x * y], key=abs) * 2.0


def min_by_key_of_pairs(x, y):
    pairs = [(x * y, 1.0), (x - y, 2.0), (y, 3.0)]
    return min(pairs, key=lambda p: p[1] * p[0])[0] ** 2


def min_or_default(x, y):
    return min([v for v in (x, y) if v > 10.0], default=x * y) + max(x, y, key=abs)


@pytest.mark.parametrize("f", [max_by_abs, min_by_key_of_pairs, min_or_default])
@pytest.mark.parametrize("args", [(0.7, -1.3), (-2.1, 0.4), (1.6, 1.1)])
def test_max_and_min_with_key_and_default(f, args):
    check_grads(f, args, modes=("rev", "fwd"))


@pytest.mark.parametrize("f", [max_by_abs, min_by_key_of_pairs, min_or_default])
def test_max_and_min_with_key_to_second_order(f):
    check_grads(f, (0.7, -1.3), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("args", [
    ([1.0, 2.0, 3],), ((1.0, -2.5),), ([1.0, 2.0], 5.0), ((1.5,), 2), ([],  1.5),
    (A,), ([A, V4, 2.0],), ([1.0, 2.0], A), ([V4, V4 * 2],),
])
def test_sum(args):
    check_rule(builtins.sum, *args)


def test_sum_closed_form_and_container_types():
    assert _grads(builtins.sum, [1.0, 2.0]) == ([1.0, 1.0],)
    assert _grads(builtins.sum, (1.0, 2.0), 3.0) == ((1.0, 1.0), 1.0)
    xs_bar, = _grads(builtins.sum, A, seed=numpy.arange(4.0))
    numpy.testing.assert_array_equal(xs_bar, numpy.tile(numpy.arange(4.0), (3, 1)))
    # A scalar entry broadcast over arrays gets the summed cotangent.
    xs_bar, = _grads(builtins.sum, [V4, 2.0], seed=numpy.ones(4))
    assert xs_bar[1] == 4.0


def test_sum_of_a_generator():
    y, pullback = registry.lookup(builtins.sum).vjp(x for x in (1.0, 2.0))
    assert y == 3.0 and pullback(1.0) == ([1.0, 1.0],)


@pytest.mark.parametrize("a, b", [(1.3, 2.2), (0.5, -1.5), (-2.0, 3), (2.0, A),
                                  (numpy.abs(A) + 1, V4)])
def test_pow(a, b):
    check_rule(builtins.pow, a, b)


def test_pow_closed_form_and_three_arguments():
    assert _grads(builtins.pow, 2.0, 3.0) == pytest.approx((12.0, numpy.log(2.0) * 8.0))
    assert _grads(builtins.pow, 3, 4, 5) == (None, None, None)
    _, differential = registry.lookup(builtins.pow).jvp(3, 4, 5)
    assert differential(None, None, None) is None


@pytest.mark.parametrize("x", [2.5, -1.0, numpy.float64(3.0)])
def test_float(x):
    check_rule(builtins.float, x)


@pytest.mark.parametrize("a, b", [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.2), (A * 5, 1.5),
                                  (9.0, V4 + 3)])
def test_divmod(a, b):
    check_rule(builtins.divmod, a, b)


def test_divmod_closed_form():
    # divmod(7.5, 2) == (3, 1.5): r = a - 3 b, q has no derivative.
    assert _grads(builtins.divmod, 7.5, 2.0, seed=(None, 1.0)) == (1.0, -3.0)
    assert _grads(builtins.divmod, 7.5, 2.0, seed=(1.0, None)) == (None, None)
    _, differential = registry.lookup(builtins.divmod).jvp(7.5, 2.0)
    assert differential(1.0, 1.0) == (None, 1.0 - 3.0)


@pytest.mark.parametrize("fn, args", [
    (builtins.max, (1.0, 3.0)), (builtins.sum, ([1.0, 2.0],)), (builtins.divmod, (7.5, 2.0)),
    (builtins.abs, (-2.0,)),
])
def test_batched_cotangents_match_stacked_singles(fn, args):
    _, pullback = registry.lookup(fn).vjp(*args)
    g = numpy.array([1.0, -2.0, 0.5])
    seed = (None, g) if fn is builtins.divmod else g
    batched = pullback(seed)
    for k in range(3):
        single = pullback((None, g[k]) if fn is builtins.divmod else g[k])
        for got, want in zip(batched, single, strict=True):
            if want is None:
                assert got is None
            elif isinstance(want, list):
                assert [w is None for w in want] == [x is None for x in got]
                assert [x[k] for x in got if x is not None] == [w for w in want if w is not None]
            else:
                assert got[k] == pytest.approx(want)


# --- registration -------------------------------------------------------------------


@pytest.mark.parametrize("fn", [builtins.abs, builtins.min, builtins.max, builtins.sum,
                                builtins.pow, builtins.float, builtins.divmod],
                         ids=lambda f: f.__name__)
def test_differentiable_registration(fn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.vjp is not None and rule.jvp is not None
    assert rule.pure and not rule.nondifferentiable


@pytest.mark.parametrize("fn, warn", [
    (builtins.int, True), (builtins.round, True),
    (builtins.len, False), (builtins.range, False), (builtins.bool, False),
    (builtins.isinstance, False), (builtins.str, False), (builtins.repr, False),
    (builtins.hash, False), (builtins.id, False), (builtins.type, False),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_nondifferentiable_registration(fn, warn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.nondifferentiable and rule.pure
    assert rule.warn is warn


# The container builtins (zip, enumerate, list, ...) have rules: tests/rules/test_containers.py


def extreme_of_a_vector(x):
    return max(x) * numpy.sum(x) + min(x ** 2) + max(numpy.sin(x))


def largest(v):
    return max(v)


def test_max_and_min_of_a_vector():
    # The builtins over a NumPy vector compare its numbers as a list's (a TypeError from
    # the rule at run time before): the first extreme gets the derivative.
    x = numpy.array([0.3, -1.0, 2.0])
    check_grads(extreme_of_a_vector, (x,), modes=("rev", "fwd"), order=2)
    numpy.testing.assert_allclose(wengert.grad(largest)(numpy.array([1.0, 3.0, 3.0])),
                                  [0.0, 1.0, 0.0])


def flattened(x):
    rows = [[x], [x * x, 2.0], (5.0, x)]
    flat = sum(rows[:2], []) + list(sum(rows[2:], ()))
    return flat[0] + 10.0 * flat[1] + 100.0 * flat[2] * flat[4]


def test_sum_of_lists_with_a_start_is_their_concatenation():
    # (``sum(rows, [])``: the rules of a numeric sum gave every row the whole adjoint)
    check_grads(flattened, (0.7,), modes=("rev", "fwd"), order=2)
