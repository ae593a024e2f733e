"""Higher-order derivatives by transforming generated IR again: ``grad(grad(f))``, third
derivatives, and gradients taken inside differentiated functions (nested
differentiation, with no perturbation confusion)."""

from __future__ import annotations

import math

import pytest

import wengert
from wengert import grad, hessian, jacfwd
from wengert.testing import check_grads

# ----------------------------------------------------------------------------- functions


def poly(x):
    return x**5 - 2 * x**3 + x


def trig(x):
    return math.sin(2 * x)


def expo(x):
    return math.exp(x) * x


def horner(x):
    s = 0.0
    for c in (1.0, 2.0, 3.0, 4.0, 5.0):
        s = s * x + c
    return s


def branch(x):
    if x > 0:
        return x**4
    return -x**3


def power_while(x):
    k = 0
    y = x
    while k < 3:
        y = y * x
        k += 1
    return y


def _wave(z):
    return z * math.cos(z)


def uses_helper(x):
    return _wave(x) + x**2


def tanh_(x):
    return math.tanh(x)


def root(x):
    return math.sqrt(x) * x


def rational(x):
    return 1.0 / (1.0 + x * x)


def sincos(x):
    return math.cos(x) * math.sin(x)


def _t(x):
    return math.tanh(x)


#: (function, its third derivative in closed form, points)
THIRD = [
    (poly, lambda x: 60 * x**2 - 12, (0.7, -1.3)),
    (trig, lambda x: -8 * math.cos(2 * x), (0.7, 2.1)),
    (expo, lambda x: math.exp(x) * (x + 3), (0.7, -0.4)),
    (horner, lambda x: 24 * x + 12, (0.7, -1.1)),
    (branch, lambda x: 24 * x if x > 0 else -6.0, (0.7, -0.6)),
    (power_while, lambda x: 24 * x, (0.7, 1.9)),
    (uses_helper, lambda x: -3 * math.cos(x) + x * math.sin(x), (0.7, 2.5)),
    (tanh_, lambda x: (1 - _t(x)**2) * (6 * _t(x)**2 - 2), (0.7, -0.2)),
    (root, lambda x: -0.375 * x**-1.5, (0.7, 3.0)),
    (rational, lambda x: (24 * x - 24 * x**3) / (1 + x * x)**4, (0.7, -1.6)),
    (sincos, lambda x: -4 * math.cos(2 * x), (0.7, 1.2)),
]


@pytest.mark.parametrize("f, d3, points", THIRD, ids=[t[0].__name__ for t in THIRD])
@pytest.mark.parametrize("how", ["grad_grad_grad", "jacfwd_grad_grad", "hessian_grad"])
def test_third_derivative_matches_closed_form(f, d3, points, how):
    op = {
        "grad_grad_grad": lambda: grad(grad(grad(f))),
        "jacfwd_grad_grad": lambda: jacfwd(grad(grad(f))),
        "hessian_grad": lambda: hessian(grad(f)),
    }[how]()
    for x in points:
        assert float(op(x)) == pytest.approx(d3(x), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("f", [t[0] for t in THIRD], ids=[t[0].__name__ for t in THIRD])
def test_grad_of_grad_against_finite_differences(f):
    # Reverse over reverse and forward over reverse, each against central differences.
    check_grads(grad(f), (0.7,), modes=("rev", "fwd"))
    check_grads(grad(grad(f)), (0.7,), modes=("rev", "fwd"))


def two(x, y):
    return x * x * y + math.sin(x * y)


def test_mixed_partials_of_two_arguments():
    dxy = grad(grad(two, 0), 1)
    dyx = grad(grad(two, 1), 0)
    x, y = 0.8, -0.3
    exact = 2 * x + math.cos(x * y) - x * y * math.sin(x * y)
    assert dxy(x, y) == pytest.approx(exact, rel=1e-12)
    assert dyx(x, y) == pytest.approx(exact, rel=1e-12)
    h = hessian(two, (0, 1))(x, y)
    assert h[0][1] == pytest.approx(exact, rel=1e-12)


def test_grad_of_grad_with_tuple_argnums_is_refused_as_nonscalar():
    # grad(f, (0, 1)) returns a pair: its gradient is not defined (as in JAX).
    with pytest.raises(TypeError, match="scalar"):
        grad(grad(two, (0, 1)))(0.8, -0.3)


def test_redefining_the_inner_function_is_seen():
    ns: dict = {}
    src = "import math\ndef g(x):\n    return {body}\n"
    path = _write_module(src.format(body="x ** 3"))
    exec(compile(open(path).read(), path, "exec"), ns)
    g = ns["g"]
    d2 = grad(grad(g))
    assert d2(2.0) == pytest.approx(12.0)
    g.__code__ = _code_of(src.format(body="x ** 4"), path)
    assert d2(2.0) == pytest.approx(48.0)


def _write_module(text):
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".py", prefix="wengert_higher_")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def _code_of(text, path):
    import linecache
    with open(path, "w") as fh:
        fh.write(text)
    linecache.checkcache(path)
    ns: dict = {}
    exec(compile(text, path, "exec"), ns)
    return ns["g"].__code__


# ----------------------------------------------------------------------------- nested


def confusion(x):
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1; perturbation confusion would give 2.
    return x * grad(lambda y: x + y)(1.0)


def confusion_product(x):
    # d/dy (x * y) = x, so the function is x * x and its derivative 2x.
    return x * grad(lambda y: x * y)(3.0)


def confusion_nested(x):
    # d/dy d/dz (x y z) = x: the function is x * x.
    return grad(lambda y: grad(lambda z: x * y * z)(1.0))(2.0) * x


def _h(a, b):
    return a * a * b


def global_grads(x):
    # d/db (a^2 b) = a^2 at (x, 3); d/da at (x, x) = 2 x^2: the sum is 3 x^2.
    return grad(_h, 1)(x, 3.0) + grad(_h)(x, x)


def inner_def(x):
    def inner(y):
        return x * y * y
    return x * grad(inner)(x)  # x * 2 x^2 = 2 x^3


def in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + grad(lambda y: math.sin(x * y))(float(k))  # x cos(k x)
    return total


def in_a_branch(x):
    if x > 0:
        return grad(lambda y: y * y * x)(x)  # 2 x^2
    return grad(lambda y: y * x)(2.0)  # x


NESTED = [
    (confusion, lambda x: 1.0),
    (confusion_product, lambda x: 2 * x),
    (confusion_nested, lambda x: 2 * x),
    (global_grads, lambda x: 6 * x),
    (inner_def, lambda x: 6 * x * x),
    (in_a_loop, lambda x: sum(math.cos(k * x) - k * x * math.sin(k * x) for k in range(3))),
    (in_a_branch, lambda x: 4 * x if x > 0 else 1.0),
]


@pytest.mark.parametrize("f, df", NESTED, ids=[t[0].__name__ for t in NESTED])
@pytest.mark.parametrize("x", [1.5, -0.7])
def test_nested_gradient_has_no_perturbation_confusion(f, df, x):
    assert grad(f)(x) == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    assert float(jacfwd(f)(x)) == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    out, t = wengert.jvp(f, (x,), (1.0,))
    assert t == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    check_grads(f, (x,), modes=("rev", "fwd"))


def test_hessian_of_function_taking_a_gradient_inside():
    def f(x):
        return x * x * grad(lambda y: x * y * y)(x)  # 2 x^4

    for x in (0.6, -1.2):
        assert float(hessian(f)(x)) == pytest.approx(24 * x * x, rel=1e-10)


def test_gradient_returned_from_differentiated_code_is_an_error():
    def make(x):
        return grad(lambda y: x * y)

    def f(x):
        return make(x)(2.0)

    with pytest.raises(wengert.WengertError, match="gradient taken inside"):
        grad(f)(1.0)


def test_nested_gradient_of_two_captured_values():
    def f(a, b):
        # d/dv (a v^2 + b v) at v = b is 2 a b + b: f = a (2 a b + b) = 2 a^2 b + a b.
        return a * grad(lambda v: a * v * v + b * v)(b)

    a, b = 0.5, -1.25
    da, db = grad(f, (0, 1))(a, b)
    assert da == pytest.approx(4 * a * b + b, rel=1e-12)
    assert db == pytest.approx(2 * a * a + a, rel=1e-12)
    check_grads(f, (a, b), modes=("rev", "fwd"))


# --------------------------------------------------------------------------- primitives


PRIMITIVES = [
    (math.tanh, (0.5,), lambda x: 1 - math.tanh(x) ** 2,
     lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2)),
    (math.sin, (0.3,), math.cos, lambda x: -math.sin(x)),
    (math.exp, (0.7,), math.exp, math.exp),
    (math.log, (1.7,), lambda x: 1 / x, lambda x: -1 / x ** 2),
    (math.sqrt, (2.5,), lambda x: 0.5 / math.sqrt(x), lambda x: -0.25 * x ** -1.5),
]


@pytest.mark.parametrize("f, args, d1, d2", PRIMITIVES, ids=[p[0].__name__ for p in PRIMITIVES])
def test_a_primitive_given_directly_differentiates_to_any_order(f, args, d1, d2):
    # JAX users write grad(jnp.tanh): a primitive with rules and no source is wrapped.
    (x,) = args
    assert wengert.grad(f)(x) == pytest.approx(d1(x), rel=1e-12)
    assert wengert.grad(wengert.grad(f))(x) == pytest.approx(d2(x), rel=1e-9)
    assert wengert.hessian(f)(x) == pytest.approx(d2(x), rel=1e-9)
    assert wengert.jvp(f, (x,), (2.0,))[1] == pytest.approx(2 * d1(x), rel=1e-12)
    check_grads(f, args, modes=("rev", "fwd"))


def test_a_primitive_of_two_arguments_given_directly():
    g = wengert.grad(math.atan2, (0, 1))(0.3, 0.7)
    assert g == pytest.approx((0.7 / (0.3 ** 2 + 0.7 ** 2), -0.3 / (0.3 ** 2 + 0.7 ** 2)))
    check_grads(math.pow, (1.3, 0.7), modes=("rev", "fwd"))


def test_a_variadic_primitive_given_directly_is_refused_with_a_hint():
    with pytest.raises(wengert.WengertError, match="lambda x, y: max"):
        wengert.grad(max)(1.0)
