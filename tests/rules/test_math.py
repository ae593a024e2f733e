"""Rules of the math module: finite differences, closed forms, conventions, registration."""

from __future__ import annotations

import math

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wengert.rules  # noqa: F401  (registers the rules)
from wengert.rules import registry
from wengert.testing import check_rule

# Each unary function with a domain strictly inside where it is smooth (kept away
# from the edges so that central differences stay accurate) and its derivative,
# written out independently of the rules.
UNARY = {
    math.sin: ((-10.0, 10.0), math.cos),
    math.cos: ((-10.0, 10.0), lambda x: -math.sin(x)),
    math.tan: ((-1.4, 1.4), lambda x: 1.0 / math.cos(x) ** 2),
    math.asin: ((-0.95, 0.95), lambda x: 1.0 / math.sqrt(1.0 - x * x)),
    math.acos: ((-0.95, 0.95), lambda x: -1.0 / math.sqrt(1.0 - x * x)),
    math.atan: ((-20.0, 20.0), lambda x: 1.0 / (1.0 + x * x)),
    math.sinh: ((-5.0, 5.0), math.cosh),
    math.cosh: ((-5.0, 5.0), math.sinh),
    math.tanh: ((-5.0, 5.0), lambda x: 1.0 / math.cosh(x) ** 2),
    math.asinh: ((-20.0, 20.0), lambda x: 1.0 / math.sqrt(x * x + 1.0)),
    math.acosh: ((1.05, 20.0), lambda x: 1.0 / math.sqrt(x * x - 1.0)),
    math.atanh: ((-0.95, 0.95), lambda x: 1.0 / (1.0 - x * x)),
    math.exp: ((-10.0, 10.0), math.exp),
    math.expm1: ((-10.0, 10.0), math.exp),
    math.log: ((0.05, 100.0), lambda x: 1.0 / x),
    math.log2: ((0.05, 100.0), lambda x: 1.0 / (x * math.log(2.0))),
    math.log10: ((0.05, 100.0), lambda x: 1.0 / (x * math.log(10.0))),
    math.log1p: ((-0.95, 100.0), lambda x: 1.0 / (1.0 + x)),
    math.sqrt: ((0.05, 100.0), lambda x: 0.5 * x ** -0.5),
    math.fabs: ((0.05, 100.0), lambda x: 1.0),
    math.erf: ((-4.0, 4.0), lambda x: 2.0 / math.sqrt(math.pi) * math.exp(-x * x)),
    math.erfc: ((-4.0, 4.0), lambda x: -2.0 / math.sqrt(math.pi) * math.exp(-x * x)),
    math.degrees: ((-10.0, 10.0), lambda x: 180.0 / math.pi),
    math.radians: ((-500.0, 500.0), lambda x: math.pi / 180.0),
}
if hasattr(math, "exp2"):
    UNARY[math.exp2] = ((-10.0, 10.0), lambda x: math.log(2.0) * 2.0 ** x)
if hasattr(math, "cbrt"):
    UNARY[math.cbrt] = ((0.05, 100.0), lambda x: x ** (-2.0 / 3.0) / 3.0)

UNARY_FNS = sorted(UNARY, key=lambda f: f.__name__)


@pytest.mark.parametrize("fn", UNARY_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_unary_against_finite_differences(fn, where):
    lo, hi = UNARY[fn][0]
    check_rule(fn, lo + where * (hi - lo))


def _closed_form_check(fn, x):
    derivative = UNARY[fn][1]
    value, pullback = registry.lookup(fn).vjp(x)
    assert value == fn(x)
    assert pullback(1.0)[0] == pytest.approx(derivative(x), rel=1e-9, abs=1e-12)
    value, differential = registry.lookup(fn).jvp(x)
    assert value == fn(x)
    assert differential(1.0) == pytest.approx(derivative(x), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("fn", UNARY_FNS, ids=lambda f: f.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_unary_closed_form_property(fn, data):
    lo, hi = UNARY[fn][0]
    _closed_form_check(fn, data.draw(st.floats(lo, hi)))


@pytest.mark.parametrize("fn", UNARY_FNS, ids=lambda f: f.__name__)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_unary_check_rule_property(fn, data):
    lo, hi = UNARY[fn][0]
    check_rule(fn, data.draw(st.floats(lo, hi)), directions=1, batch=2)


def test_fabs_on_the_negative_side():
    check_rule(math.fabs, -2.5)
    assert registry.lookup(math.fabs).vjp(-2.5)[1](1.0) == (-1.0,)


@pytest.mark.parametrize("fn, args", [
    (math.atan2, (1.0, 2.0)), (math.atan2, (-1.0, -2.0)), (math.atan2, (0.5, -3.0)),
    (math.pow, (1.5, 2.3)), (math.pow, (0.3, -1.7)), (math.pow, (-2.0, 3)), (math.pow, (2.0, 3)),
    (math.log, (2.0, 3.0)), (math.log, (10.0, 10)), (math.log, (0.5, 0.25)),
    (math.hypot, (3.0,)), (math.hypot, (-3.0, 4.0)), (math.hypot, (1.0, 2.0, -3.0)),
    (math.copysign, (2.0, -1.0)), (math.copysign, (-2.0, 3.0)), (math.copysign, (-2.0, -3.0)),
    (math.fmod, (7.3, 2.0)), (math.fmod, (-7.3, 2.0)), (math.fmod, (7.3, -2.5)),
    (math.remainder, (7.3, 2.0)), (math.remainder, (-6.9, 2.0)),
    (math.ldexp, (1.5, 3)), (math.ldexp, (-0.7, -2)),
    (math.frexp, (5.5,)), (math.frexp, (-0.3,)),
    (math.modf, (5.5,)), (math.modf, (-2.25,)),
    (math.fsum, ([1.0, 2.5, -3.0],)), (math.fsum, ((1.0, 2, 3.5),)),
    (math.fsum, (numpy.array([1.0, 2.0, 4.0]),)),
    (math.dist, ((1.0, 2.0), (4.0, -2.0))), (math.dist, ([0.5, 1.0, 2.0], (3.0, 1.0, -1.0))),
])
def test_several_arguments(fn, args):
    check_rule(fn, *args)


def _grads(fn, *args, seed=1.0):
    _, pullback = registry.lookup(fn).vjp(*args)
    return pullback(seed)


def test_closed_forms_of_several_arguments():
    # atan2(a, b): (b, -a) / (a^2 + b^2)
    assert _grads(math.atan2, 1.0, 2.0) == pytest.approx((2.0 / 5.0, -1.0 / 5.0))
    # log(x, b) = ln x / ln b
    gx, gb = _grads(math.log, 2.0, 3.0)
    assert gx == pytest.approx(1.0 / (2.0 * math.log(3.0)))
    assert gb == pytest.approx(-math.log(2.0) / (3.0 * math.log(3.0) ** 2))
    # hypot: x / r
    assert _grads(math.hypot, 3.0, 4.0) == pytest.approx((0.6, 0.8))
    # fmod(7.3, 2) = 7.3 - 3 * 2; remainder(7.3, 2) = 7.3 - 4 * 2
    assert _grads(math.fmod, 7.3, 2.0) == pytest.approx((1.0, -3.0))
    assert _grads(math.remainder, 7.3, 2.0) == pytest.approx((1.0, -4.0))
    # fsum keeps the container type.
    assert _grads(math.fsum, (1.0, 2.0)) == ((1.0, 1.0),)
    # dist: (p - q) / |p - q|
    p_bar, q_bar = _grads(math.dist, (0.0, 0.0), [3.0, 4.0])
    assert p_bar == pytest.approx((-0.6, -0.8)) and isinstance(p_bar, tuple)
    assert q_bar == pytest.approx([0.6, 0.8]) and isinstance(q_bar, list)
    # ldexp(x, i) = x 2^i; the int exponent has no adjoint.
    assert _grads(math.ldexp, 1.5, 3) == (8.0, None)
    # frexp(x) = (x 2^-e, e) with a cotangent tuple that may hold None.
    assert _grads(math.frexp, 5.5, seed=(1.0, None)) == (1.0 / 8.0,)
    assert _grads(math.modf, 5.5, seed=(None, 1.0)) == (None,)


def test_conventions_at_singular_points():
    assert _grads(math.sqrt, 0.0) == (math.inf,)
    assert _grads(math.asin, 1.0) == (math.inf,)
    assert _grads(math.acos, -1.0) == (-math.inf,)
    assert _grads(math.acosh, 1.0) == (math.inf,)
    if hasattr(math, "cbrt"):
        assert _grads(math.cbrt, 0.0) == (math.inf,)
    assert _grads(math.fabs, 0.0) == (0.0,)
    assert _grads(math.copysign, 0.0, -1.0) == (0.0, None)
    assert _grads(math.hypot, 0.0, 0.0) == (None, None)
    assert _grads(math.dist, (1.0, 2.0), (1.0, 2.0)) == (None, None)
    assert all(math.isnan(g) for g in _grads(math.atan2, 0.0, 0.0))
    # pow follows operator.pow: zero exponent adjoint at a zero base.
    assert _grads(math.pow, 0.0, 2.5) == (0.0, 0.0)


def test_several_arguments_with_none_tangents():
    _, differential = registry.lookup(math.atan2).jvp(1.0, 2.0)
    assert differential(None, 1.0) == pytest.approx(-1.0 / 5.0)
    assert differential(None, None) is None
    _, differential = registry.lookup(math.log).jvp(2.0, 3.0)
    assert differential(None, 1.0) == pytest.approx(-math.log(2.0) / (3.0 * math.log(3.0) ** 2))
    assert differential(None, None) is None
    _, differential = registry.lookup(math.hypot).jvp(3.0, 4.0)
    assert differential(None, 1.0) == pytest.approx(0.8)
    _, differential = registry.lookup(math.fsum).jvp([1.0, 2, 3.0])
    assert differential([1.0, None, 2.0]) == 3.0


@pytest.mark.parametrize("fn, args", [
    (math.sin, (0.3,)), (math.exp, (0.3,)), (math.atan2, (1.0, -2.0)), (math.hypot, (1.0, 2.0)),
    (math.pow, (1.5, 2.5)), (math.log, (2.0, 3.0)),
])
def test_batched_tangents_match_stacked_single_directions(fn, args):
    """Tangents of shape (3,) for scalar inputs: linear and equal to stacked single jvps."""
    rng = numpy.random.default_rng(7)
    _, differential = registry.lookup(fn).jvp(*args)
    _, pullback = registry.lookup(fn).vjp(*args)
    dots = [rng.standard_normal(3) for _ in args]
    batched = differential(*dots)
    assert batched.shape == (3,)
    singles = [differential(*[d[k] for d in dots]) for k in range(3)]
    numpy.testing.assert_allclose(batched, singles, rtol=1e-12)
    mixed = differential(*[2.0 * d[0] - 3.0 * d[1] for d in dots])
    assert mixed == pytest.approx(2.0 * singles[0] - 3.0 * singles[1], rel=1e-10, abs=1e-12)
    g = rng.standard_normal(3)
    batched_bars = pullback(g)
    for k in range(3):
        for got, want in zip(batched_bars, pullback(g[k]), strict=True):
            assert got[k] == pytest.approx(want, rel=1e-12)


# --- registration -------------------------------------------------------------------

DIFFERENTIABLE = [
    math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2, math.sinh,
    math.cosh, math.tanh, math.asinh, math.acosh, math.atanh, math.exp, math.expm1, math.log,
    math.log2, math.log10, math.log1p, math.sqrt, math.pow, math.hypot, math.fabs, math.erf,
    math.erfc, math.copysign, math.fmod, math.degrees, math.radians, math.ldexp, math.fsum,
    math.dist, math.remainder, math.modf, math.frexp,
] + [getattr(math, n) for n in ("exp2", "cbrt") if hasattr(math, n)]


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_differentiable_registration(fn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.vjp is not None and rule.jvp is not None
    assert rule.pure and not rule.nondifferentiable


@pytest.mark.parametrize("fn, warn", [
    (math.floor, True), (math.ceil, True), (math.trunc, True),
    (math.isnan, False), (math.isinf, False), (math.isfinite, False), (math.isclose, False),
    (math.factorial, False), (math.gcd, False), (math.comb, False), (math.perm, False),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_nondifferentiable_registration(fn, warn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.nondifferentiable and rule.pure
    assert rule.warn is warn
