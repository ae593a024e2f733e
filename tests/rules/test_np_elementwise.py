"""NumPy's elementwise functions as a user writes them: derivatives against closed forms
written out here and against central differences (both modes, second order), the
conventions at points without a derivative (JAX's), float32, and the refusals.

The rules' own cases (values, linearity, batched tangents) run in tests/rules/test_form.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads

X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -1.4]])
U = np.array([[0.3, -0.7, 0.6], [0.5, 0.2, -0.4]])  # inside (-1, 1)
P = X * X + 0.3  # positive

BOTH = ("rev", "fwd")


def check2(f, args, **kw):
    check_grads(f, args, order=2, modes=BOTH, **kw)


@pytest.fixture(autouse=True)
def _quiet():
    # Points on a pole (log(0), sqrt(0)) are meant: NumPy's warnings there are noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# ------------------------------------------------- unary: closed forms written out here

# name -> (function, point, its derivative there, written independently of the rules)
UNARY = {
    "sin": (np.sin, X, np.cos(X)),
    "cos": (np.cos, X, -np.sin(X)),
    "tan": (np.tan, U, 1.0 / np.cos(U) ** 2),
    "arcsin": (np.arcsin, U, 1.0 / np.sqrt(1.0 - U ** 2)),
    "arccos": (np.arccos, U, -1.0 / np.sqrt(1.0 - U ** 2)),
    "arctan": (np.arctan, 3 * X, 1.0 / (1.0 + 9 * X ** 2)),
    "sinh": (np.sinh, X, np.cosh(X)),
    "cosh": (np.cosh, X, np.sinh(X)),
    "tanh": (np.tanh, X, 1.0 / np.cosh(X) ** 2),
    "arcsinh": (np.arcsinh, 3 * X, 1.0 / np.sqrt(9 * X ** 2 + 1.0)),
    "arccosh": (np.arccosh, P + 1.0, 1.0 / np.sqrt((P + 1.0) ** 2 - 1.0)),
    "arctanh": (np.arctanh, U, 1.0 / (1.0 - U ** 2)),
    "exp": (np.exp, X, np.exp(X)),
    "exp2": (np.exp2, X, math.log(2.0) * 2.0 ** X),
    "expm1": (np.expm1, X, np.exp(X)),
    "log": (np.log, P, 1.0 / P),
    "log2": (np.log2, P, 1.0 / (P * math.log(2.0))),
    "log10": (np.log10, P, 1.0 / (P * math.log(10.0))),
    "log1p": (np.log1p, U, 1.0 / (1.0 + U)),
    "sqrt": (np.sqrt, P, 0.5 * P ** -0.5),
    "cbrt": (np.cbrt, P, P ** (-2.0 / 3.0) / 3.0),
    "square": (np.square, X, 2.0 * X),
    "reciprocal": (np.reciprocal, X, -1.0 / X ** 2),
    "abs": (np.abs, X, np.where(X > 0, 1.0, -1.0)),
    "absolute": (np.absolute, X, np.where(X > 0, 1.0, -1.0)),
    "fabs": (np.fabs, X, np.where(X > 0, 1.0, -1.0)),
    "negative": (np.negative, X, -np.ones_like(X)),
    "positive": (np.positive, X, np.ones_like(X)),
    "deg2rad": (np.deg2rad, X, np.full_like(X, math.pi / 180.0)),
    "radians": (np.radians, X, np.full_like(X, math.pi / 180.0)),
    "rad2deg": (np.rad2deg, X, np.full_like(X, 180.0 / math.pi)),
    "degrees": (np.degrees, X, np.full_like(X, 180.0 / math.pi)),
    "sinc": (np.sinc, X, (np.cos(np.pi * X) * np.pi * X - np.sin(np.pi * X))
             / (np.pi * X ** 2)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_closed_form(name):
    fn, x, slope = UNARY[name]

    def f(x):
        return np.sum(fn(x))

    np.testing.assert_allclose(wengert.grad(f)(x), slope, rtol=1e-12, atol=1e-12)
    _, t = wengert.jvp(lambda x: fn(x), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, slope, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_in_an_expression_second_order(name):
    fn, x, _ = UNARY[name]

    def f(x, w):
        return np.sum(fn(x) * w) * np.mean(fn(x))

    check2(f, (x, X[::-1]))


@pytest.mark.parametrize("name", ["sin", "tanh", "log", "sqrt", "arctan", "sinc", "expm1"])
def test_unary_on_python_floats(name):
    fn, x, _ = UNARY[name]
    a = float(x.flat[3])

    def f(a):
        return fn(a) * a

    check2(f, (a,))


def test_sinc_at_zero():
    # sinc is even with sinc''(0) = -pi^2 / 3 (from sin(u)/u = 1 - u^2/6 + ...).
    def f(x):
        return np.sinc(x)

    assert wengert.grad(f)(0.0) == 0.0
    assert wengert.hessian(f)(0.0) == pytest.approx(-math.pi ** 2 / 3, rel=1e-12)
    h = wengert.hessian(lambda x: np.sum(np.sinc(x)))(np.array([0.0, 1e-3]))
    assert h[0, 0] == pytest.approx(-math.pi ** 2 / 3, rel=1e-12)
    # Near 0 (series) and away from it (quotient) the same function.
    u = 1e-3 * math.pi
    d2 = math.pi ** 2 * ((2 - u * u) * math.sin(u) - 2 * u * math.cos(u)) / u ** 3
    assert h[1, 1] == pytest.approx(d2, rel=1e-6)
    check2(lambda x: np.sum(np.sinc(x) ** 2), (np.array([0.0, 0.4, -1.7, 2.5]),))


def test_abs_sign_at_zero_has_slope_zero():
    x = np.array([0.0, -2.0, 3.0])
    for fn in (np.abs, np.absolute, np.fabs):
        np.testing.assert_array_equal(wengert.grad(lambda x: np.sum(fn(x)))(x), [0.0, -1.0, 1.0])


def test_poles_give_inf_not_zero_division():
    # Python floats at a pole: NumPy's inf (JAX's), never a ZeroDivisionError.
    assert wengert.grad(lambda x: np.log(x))(0.0) == math.inf
    assert wengert.grad(lambda x: np.arctanh(x))(1.0) == math.inf
    assert wengert.grad(lambda x: np.sqrt(x))(0.0) == math.inf
    assert wengert.grad(lambda x: np.divide(1.0, x))(0.0) == -math.inf
    assert wengert.grad(lambda x: np.log1p(x))(-1.0) == math.inf
    assert wengert.grad(lambda x: np.arcsin(x))(1.0) == math.inf
    assert wengert.grad(lambda x: np.arccosh(x))(1.0) == math.inf
    assert wengert.grad(lambda x: np.cbrt(x))(0.0) == math.inf
    assert wengert.grad(lambda x: np.divide(x, 0.0))(1.0) == math.inf


# --------------------------------------------------------------------- binary functions


def test_binary_with_broadcasting_second_order():
    row, col = X[0], X[:, :1]

    def f(x, r, c):
        return np.sum(np.add(x, r) * np.subtract(c, x) + np.multiply(x, r) * np.divide(x, c + 3.0)
                      + np.true_divide(r, P) + np.arctan2(x, c + 2.0) + np.hypot(x, r)
                      + np.logaddexp(x, r) + np.logaddexp2(c, x) * r)

    check2(f, (X, row, col))


def test_binary_closed_forms():
    a, b = X, X[::-1] + 2.0
    g = wengert.grad(lambda a, b: np.sum(np.arctan2(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(g[0], b / (a ** 2 + b ** 2), rtol=1e-12)
    np.testing.assert_allclose(g[1], -a / (a ** 2 + b ** 2), rtol=1e-12)
    g = wengert.grad(lambda a, b: np.sum(np.hypot(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(g[0], a / np.sqrt(a ** 2 + b ** 2), rtol=1e-12)
    g = wengert.grad(lambda a, b: np.sum(np.logaddexp(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(g[0], np.exp(a) / (np.exp(a) + np.exp(b)), rtol=1e-12)
    np.testing.assert_allclose(g[1], np.exp(b) / (np.exp(a) + np.exp(b)), rtol=1e-12)
    g = wengert.grad(lambda a, b: np.sum(np.logaddexp2(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(g[0], 2.0 ** a / (2.0 ** a + 2.0 ** b), rtol=1e-12)
    # Broadcast cotangents are summed back to the row's shape.
    g = wengert.grad(lambda a, r: np.sum(np.divide(a, r)), argnums=1)(a, b[0])
    np.testing.assert_allclose(g, -np.sum(a, axis=0) / b[0] ** 2, rtol=1e-12)


def test_logaddexp_far_apart_and_infinite():
    # The weights stay exact where exp() would overflow.
    g = wengert.grad(lambda a, b: np.logaddexp(a, b), argnums=(0, 1))(1000.0, 0.0)
    assert g == (1.0, 0.0)
    g = wengert.grad(lambda a, b: np.logaddexp(a, b), argnums=(0, 1))(-math.inf, 0.5)
    assert g == (0.0, 1.0)
    check2(lambda a, b: np.sum(np.logaddexp(a, b)), (X * 30.0, X[0] * -20.0))


def test_power_second_order_and_conventions():
    def f(a, b):
        return np.sum(np.power(a, b) + np.float_power(a, 2.5) + np.power(a, 3) * b)

    check2(f, (P, X[0]))
    # d/da a**b = b a**(b-1); d/db a**b = log(a) a**b.
    a, b = P, X
    g = wengert.grad(lambda a, b: np.sum(np.power(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(g[0], b * a ** (b - 1), rtol=1e-12)
    np.testing.assert_allclose(g[1], np.log(a) * a ** b, rtol=1e-12)
    # An int exponent, a negative base: the base's derivatives to second order.
    check2(lambda a: np.sum(np.power(a, 3) + np.float_power(a, 2)), (X,))
    assert wengert.hessian(lambda a, n: np.power(a, n))(-1.5, 3) == pytest.approx(-9.0)


def test_power_conventions_of_jax():
    zero_exp = wengert.grad(lambda a: np.sum(np.power(a, 0.0)))(np.array([0.0, 2.0]))
    np.testing.assert_array_equal(zero_exp, [0.0, 0.0])
    half = wengert.grad(lambda a: np.sum(np.power(a, 0.5)))(np.array([0.0, 4.0]))
    np.testing.assert_array_equal(half, [math.inf, 0.25])
    # The exponent's slope is 0 at a zero base and NaN at a negative one.
    base = np.array([0.0, 2.0, -1.0])
    g = wengert.grad(lambda b: np.sum(np.power(base, b)))(np.array([1.5, 1.5, 2.0]))
    assert g[0] == 0.0 and g[1] == pytest.approx(math.log(2.0) * 2.0 ** 1.5) and np.isnan(g[2])


@pytest.mark.parametrize("fn", [np.maximum, np.minimum, np.fmax, np.fmin],
                         ids=lambda f: f.__name__)
def test_extremes(fn):
    check2(lambda a, b: np.sum(fn(a, b) * a), (X, X[::-1]))
    check2(lambda a: np.sum(fn(a, 0.25) ** 2), (X,))
    # At a tie each side gets half (JAX's convention).
    g = wengert.grad(lambda a, b: np.sum(fn(a, b)), argnums=(0, 1))(
        np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0]))
    big = fn in (np.maximum, np.fmax)
    np.testing.assert_array_equal(g[0], [0.5, 0.0, 1.0] if big else [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(g[1], [0.5, 1.0, 0.0] if big else [0.5, 0.0, 1.0])


def test_fmax_skips_nan_and_maximum_propagates_it():
    a, b = np.array([np.nan, 1.0]), np.array([2.0, np.nan])
    ga, gb = wengert.grad(lambda a, b: np.sum(np.fmax(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(ga, [0.0, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.0])
    ga, gb = wengert.grad(lambda a, b: np.sum(np.maximum(a, b) * 0.0 + a), argnums=(0, 1))(
        np.array([1.0]), np.array([np.nan]))
    np.testing.assert_array_equal(ga, [1.0])


def test_hypot_and_arctan2_at_the_origin():
    g = wengert.grad(lambda a, b: np.hypot(a, b), argnums=(0, 1))(0.0, 0.0)
    assert g == (0.0, 0.0)
    g = wengert.grad(lambda a, b: np.arctan2(a, b), argnums=(0, 1))(0.0, 0.0)
    assert all(math.isnan(v) for v in g)


def test_copysign_has_no_derivative_in_the_sign():
    def f(a, s):
        return np.sum(np.copysign(a, s) * s)

    a, s = X, X[::-1]
    ga, gs = wengert.grad(f, argnums=(0, 1))(a, s)
    np.testing.assert_allclose(ga, np.sign(a) * np.sign(s) * s)
    np.testing.assert_allclose(gs, np.copysign(a, s))  # only through the factor s
    check2(f, (a, s))


@pytest.mark.parametrize("fn", [np.mod, np.remainder, np.fmod], ids=lambda f: f.__name__)
def test_remainders(fn):
    a, b = X * 5.0, P + 0.5
    ga, gb = wengert.grad(lambda a, b: np.sum(fn(a, b)), argnums=(0, 1))(a, b)
    quotient = np.floor(a / b) if fn is not np.fmod else np.trunc(a / b)
    np.testing.assert_array_equal(ga, np.ones_like(a))
    np.testing.assert_allclose(gb, -quotient)
    check2(lambda a, b: np.sum(fn(a, b) ** 2), (a, b[0]))
    check2(lambda a: fn(a, 1.3) * a, (-4.1,))


# ---------------------------------------------------------------- piecewise constant


def test_rounding_and_sign_carry_no_derivative():
    def f(x):
        return np.sum(x - np.floor(x) + np.ceil(x) * x + np.rint(x) * np.trunc(x) * x
                      + np.fix(x) + np.sign(x) * x * x + np.round(x, 1) + np.heaviside(x, 0.5) * x)

    x = X * 3.1 + 0.013  # away from the jumps
    g = wengert.grad(f)(x)
    expected = (1.0 + np.ceil(x) + np.rint(x) * np.trunc(x) + 2.0 * np.sign(x) * x
                + np.heaviside(x, 0.5))
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    check2(f, (x,))
    np.testing.assert_allclose(wengert.hessian(lambda x: np.sum(np.floor(x) * x * x))(x[0]),
                               np.diag(2.0 * np.floor(x[0])))


def test_heaviside_takes_its_value_at_zero_from_the_second_argument():
    x = np.array([0.0, -1.0, 2.0, 0.0])

    def f(x, h):
        return np.sum(np.heaviside(x, h) * np.array([1.0, 2, 3, 4]))

    gx, gh = wengert.grad(f, argnums=(0, 1))(x, 0.3)
    np.testing.assert_array_equal(gx, np.zeros(4))
    assert gh == 5.0  # the slots where x == 0
    check2(f, (x + 0.5, 0.3))
    check2(lambda h: np.sum(np.heaviside(x, h) * h), (np.array([0.2, 0.4, 0.6, 0.8]),))


def test_comparisons_and_predicates_as_masks():
    def f(x, y):
        keep = np.logical_and(np.less(x, 1.0), np.greater_equal(y, -0.5))
        keep = np.logical_or(keep, np.equal(x, y))
        keep = np.logical_xor(keep, np.not_equal(x, x))
        keep = np.logical_and(keep, np.logical_not(np.isnan(x)))
        keep = keep & np.isfinite(y) & ~np.isinf(x) & ~np.signbit(np.abs(x))
        return np.sum(x * y * keep + (np.greater(x, y) * 1.0 + np.less_equal(x, 0.0)) * x)

    check2(f, (X, X[::-1]))
    gx = wengert.grad(f)(X, X[::-1])
    keep = (X < 1.0) & (X[::-1] >= -0.5)
    np.testing.assert_allclose(gx, X[::-1] * keep + (X > X[::-1]) + (X <= 0.0))


# ----------------------------------------------------------------------------- where


def test_where_second_order_with_broadcasting():
    def f(x, y):
        return np.sum(np.where(x > 0, x * y, np.sin(y)) + np.where(x < 0.4, 2.0, x) * x)

    check2(f, (X, X[0]))
    check2(lambda a, b: np.where(a > b, a * a, b * a), (0.3, -0.2))


def test_where_passes_the_cotangent_to_the_chosen_branch_only():
    # The untaken branch gets exactly 0, even where the cotangent is infinite (sqrt at 0):
    # the classic guard works, as in JAX.
    def f(x):
        return np.sum(np.sqrt(np.where(x > 0, x, 0.0)))

    g = wengert.grad(f)(np.array([0.25, -1.0, 0.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])

    def guarded(x):
        safe = np.where(x > 0, x, 1.0)
        return np.sum(np.where(x > 0, np.log(safe), 0.0))

    np.testing.assert_array_equal(wengert.grad(guarded)(np.array([2.0, -1.0, 0.0])),
                                  [0.5, 0.0, 0.0])


def test_where_of_a_condition_alone_is_indices():
    def f(x):
        return np.sum(x[np.where(x > 0)] ** 2)

    np.testing.assert_allclose(wengert.grad(f)(X), np.where(X > 0, 2.0 * X, 0.0))


# ------------------------------------------------------------------------------ clip


def test_clip_forms():
    check2(lambda x: np.sum(np.clip(x, -0.5, 0.6) ** 2), (X,))
    check2(lambda x, lo: np.sum(np.clip(x, lo, None) * x), (X, X[1] * 0.5))
    check2(lambda x, hi: np.sum(np.clip(x, None, hi) * x), (X, X[:, :1] + 0.1))
    check2(lambda x, lo, hi: np.sum(np.clip(x, lo, hi) ** 2), (X, -0.3, X[0] + 0.45))
    check2(lambda x: np.sum(np.clip(x, max=0.4) + np.clip(x, min=-0.1)), (X,))
    check2(lambda x: np.sum(x.clip(max=0.4) * x.clip(-0.5, 0.6)), (X,))
    check2(lambda x: np.clip(x, 0.0, 1.0) * x, (0.4,))


def test_clip_slopes_inside_outside_and_on_a_bound():
    # Inside 1, outside 0; on a bound 1/2 to the argument and 1/2 to the bound (JAX's
    # clip is maximum then minimum, which split ties).
    x = np.array([-2.0, -0.5, 0.1, 0.6, 3.0])
    gx, glo, ghi = wengert.grad(lambda x, lo, hi: np.sum(np.clip(x, lo, hi)),
                                argnums=(0, 1, 2))(x, -0.5, 0.6)
    np.testing.assert_array_equal(gx, [0.0, 0.5, 1.0, 0.5, 0.0])
    assert glo == 1.5 and ghi == 1.5


def test_clip_refuses_what_numpy_refuses():
    def one_bound(x):
        return np.sum(np.clip(x, a_max=0.4))

    with pytest.raises(TypeError, match="a_min"):
        one_bound(X)
    with pytest.raises(TypeError, match="a_min"):
        wengert.grad(one_bound)(X)


def test_clip_out_is_refused_at_the_users_line():
    def f(x):
        buf = np.empty(3)
        return np.sum(np.clip(x, 0.0, 1.0, out=buf))

    with pytest.raises(TypeError, match=r"error: np.clip\(\.\.\., out="):
        wengert.grad(f)(X[0])


# ------------------------------------------------------------------------- nan_to_num


def test_nan_to_num_slope_is_one_where_finite_zero_where_replaced():
    x = np.array([0.5, np.nan, np.inf, -np.inf, -1.5])

    def f(x, r):
        return np.sum(np.nan_to_num(x, nan=r, posinf=2.0 * r) * np.array([1.0, 2, 3, 4, 5]))

    gx, gr = wengert.grad(f, argnums=(0, 1))(x, 0.25)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0, 0.0, 5.0])
    assert gr == 2.0 + 2.0 * 3.0  # the NaN's slot and the +inf's (2 r)
    check2(lambda x: np.sum(np.nan_to_num(x) ** 2), (X,))
    check2(lambda x: np.nan_to_num(x) * x, (0.4,))
    g = wengert.grad(lambda x: np.sum(np.nan_to_num(x) * x))(x)
    assert np.all(g[1:4] != g[1:4])  # x itself is not finite there: NaN, not a silent 0


def test_nan_to_num_in_place_is_refused():
    def f(x):
        return np.sum(np.nan_to_num(x, copy=False))

    with pytest.raises(TypeError, match="error: np.nan_to_num"):
        wengert.grad(f)(X)


# ------------------------------------------------------------------------------ dtypes


F32_FUNCTIONS = {
    "tanh*maximum": lambda x: np.sum(np.tanh(x) * np.maximum(x, 0.0)),
    "where": lambda x: np.sum(np.where(x > 0, x * x, np.exp(x))),
    "clip": lambda x: np.sum(np.clip(x, -0.5, 0.5) * x),
    "sinc": lambda x: np.sum(np.sinc(x)),
    "power": lambda x: np.sum(np.power(x * x + 1.0, 1.5) + np.power(x, 3)),
    "logaddexp": lambda x: np.sum(np.logaddexp(x, 0.5)),
    "hypot/arctan2": lambda x: np.sum(np.hypot(x, 0.5) + np.arctan2(x, 2.0)),
    "log1p/abs": lambda x: np.sum(np.log1p(x * x) + np.abs(x)),
    "nan_to_num/fmod": lambda x: np.sum(np.nan_to_num(x) + np.fmod(x, 0.4)),
    "operators": lambda x: np.sum((x + 1.0) * (x - 2.0) / (x * x + 1.0) + (-x) ** 2),
}


@pytest.mark.parametrize("name", sorted(F32_FUNCTIONS))
def test_float32_stays_float32(name):
    f = F32_FUNCTIONS[name]
    x = X.astype(np.float32)
    value, g = wengert.value_and_grad(f)(x)
    assert np.asarray(value).dtype == np.float32
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, wengert.grad(f)(X), rtol=1e-4, atol=1e-5)

    def h(x):
        return f(x) * x

    y, t = wengert.jvp(h, (x,), (np.ones_like(x),))
    assert y.dtype == np.float32 and t.dtype == np.float32


# ------------------------------------------------------- Hessians (batched tangents)


def _numeric_hessian(f, x, eps=1e-5):
    g = wengert.grad(f)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append(((g(x + e) - g(x - e)) / (2 * eps)).ravel())
    return np.array(cols).T.reshape(x.shape + x.shape)


HESSIAN_FUNCTIONS = {
    "copysign/heaviside": lambda v: np.sum(np.copysign(v[0], v) * v
                                           + np.heaviside(v - 0.1, v[1]) * v),
    "clip": lambda v: np.sum(np.clip(v, v[0], 0.8) * v) + np.sum(np.clip(v[1], -0.2, v) ** 3),
    "where": lambda v: np.sum(np.where(v > 0, v[2] * v, np.sin(v[0])) * v),
    "extremes": lambda v: np.sum(np.maximum(v[0], v) * np.minimum(v, v[1]) * np.fmax(v, 0.1)),
    "power/logaddexp": lambda v: np.sum(np.power(v * v + 1.0, v[0]) + np.logaddexp(v[1], v)
                                         * v + np.hypot(v[2], v) * np.arctan2(v, v[3] + 3.0)),
    "remainders": lambda v: np.sum(np.mod(v * 5.0, v[0] + 2.0) * v
                                   + np.fmod(v[1] + 3.0, v + 2.0) * v),
    "nan_to_num/sinc": lambda v: np.sum(np.nan_to_num(v * v[0]) * np.sinc(v)),
}


@pytest.mark.parametrize("name", sorted(HESSIAN_FUNCTIONS))
def test_hessian_of_broadcasting_functions(name):
    # The Hessian pushes all tangents at once (a batch axis in front); a scalar argument
    # broadcast against the array must get its tangents broadcast right.
    f = HESSIAN_FUNCTIONS[name]
    v = np.array([0.31, -0.42, 0.57, 0.66, -0.23])
    np.testing.assert_allclose(wengert.hessian(f)(v), _numeric_hessian(f, v),
                               rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------- the array operators


def test_array_operators_second_order():
    def f(x, y, c):
        return np.sum((x + y) * (x - y) / (y * y + 1.0) + (-x) ** 2 + P ** x + x ** 3
                      + 2.0 / (c + 3.0) + 1.0 - x + (x * x + 1.0) ** y[0] + (+x) * c)

    check2(f, (X, X[1], X[:, :1]))
    check2(lambda a, b: (a + b) * (a - b) / b + (-a) ** 2 + b ** a, (0.3, 1.7))


def test_array_operators_match_the_ufuncs():
    a, b = X, P[0]
    for op, ufunc in ((lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract),
                      (lambda a, b: a * b, np.multiply), (lambda a, b: a / b, np.divide),
                      (lambda a, b: b ** a, lambda a, b: np.power(b, a))):
        g_op = wengert.grad(lambda a, b: np.sum(op(a, b) * a), argnums=(0, 1))(a, b)
        g_uf = wengert.grad(lambda a, b: np.sum(ufunc(a, b) * a), argnums=(0, 1))(a, b)
        for u, v in zip(g_op, g_uf, strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-12)


# ------------------------------------------------------------ keywords without rules


def test_ufunc_keywords_are_refused_at_the_users_line():
    def f(x):
        return np.sum(np.sin(x, dtype=np.float64))

    def g(x):
        buf = np.empty(3)
        np.sin(x, out=buf)  # the call's own result is not even used
        return np.sum(buf)

    for h in (f, g):
        for derivative in (wengert.grad(h), lambda x, h=h: wengert.jvp(h, (x,), (x,))):
            with pytest.raises(wengert.NonDifferentiableError) as e:
                derivative(X)
            assert e.value.loc is not None and e.value.loc.filename == __file__


def _where_then_transposed(x, c):
    a = x * 1.0
    a = np.where(x > 0.3, a * (x ** 2 - a), a)
    z = np.tanh(a[0])
    return np.sum(z.T * c) + np.sum(a)


def test_a_row_of_where_transposed_in_every_mode():
    # ``np.where``'s result is a float64 array of known axes, so ``a[0]`` is one too and
    # ``z.T`` a transpose (it was refused as a computed attribute of an unknown class).
    x = np.array([[0.1, 0.5], [0.7, -0.2]])
    check_grads(_where_then_transposed, (x, 0.3), order=2, modes=("rev", "fwd"))
