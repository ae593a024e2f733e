"""The API's caches are never stale, and failures leave nothing cached."""

import importlib.util
import math
import sys

import pytest

import wengert
from wengert import api
from wengert.diagnostics import OutputNotScalarError
from wengert.driver import cache

SOURCE = '''
SCALE = 2.0

def helper(x):
    return x + 1.0

def f(x):
    return helper(x) * SCALE

def make(k):
    def g(x):
        return x * k
    return g

def bad(x):
    try:
        return x
    except ValueError:
        return 0.0
'''


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "cachemod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("cachemod", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules["cachemod"] = m
    spec.loader.exec_module(m)
    yield m
    sys.modules.pop("cachemod", None)


def test_rebinding_a_global_is_seen(mod):
    assert api.primal(mod.f)(1.0) == 4.0
    mod.SCALE = 3.0
    assert api.primal(mod.f)(1.0) == 6.0


def test_redefining_a_helper_is_seen(mod):
    assert api.primal(mod.f)(1.0) == 4.0
    mod.helper = lambda x: x - 1.0
    assert api.primal(mod.f)(1.0) == 0.0


def test_two_closures_of_one_def_do_not_share(mod):
    g2, g3 = mod.make(2.0), mod.make(3.0)
    assert api.primal(g2)(1.0) == 2.0
    assert api.primal(g3)(1.0) == 3.0
    assert api.primal(g2)(1.0) == 2.0


def test_failure_is_not_cached(mod):
    for _ in range(2):
        with pytest.raises(wengert.UnsupportedSyntaxError):
            api.primal(mod.bad)
    assert all(k[0] != id(mod.bad.__code__) for k in cache.PRIMALS)


def test_bound_method_and_partial(mod):
    import functools

    class C:
        def __init__(self, k):
            self.k = k

        def m(self, x):
            return self.k * x

    assert api.primal(C(4.0).m)(2.0) == 8.0
    p = functools.partial(mod.make(5.0), 2.0)
    assert api.primal(p)() == 10.0


def test_show_rejects_unknown_mode(mod):
    with pytest.raises(ValueError):
        wengert.show(mod.f, mode="nope")


def test_show_says_how_many_examples_it_wants(mod):
    def two(x, y):
        return x * y

    assert "def two_vjp" in wengert.show(two, mode="vjp", like=(1.0, 2.0))
    with pytest.raises(TypeError, match="takes 2 arguments, but 1 examples"):
        wengert.show(two, mode="vjp", like=((1.0, 2.0),))  # (the arguments wrapped once more)
    with pytest.raises(TypeError, match="takes 2 arguments, but 3 types"):
        wengert.show(two, mode="jvp", arg_types=(float, float, float))


# ----------------------------------------------------- grad of one float runs forward mode


def _forward_entries() -> int:
    return len(cache.JVPS)


def recursive_fraction(x, depth):
    if depth == 0:
        return 1.0
    return 1.0 + x / recursive_fraction(x, depth - 1)


def test_grad_of_one_float_is_a_forward_pass_and_agrees_with_reverse_mode():
    before = _forward_entries()
    g = wengert.grad(recursive_fraction)(0.7, 12)
    assert _forward_entries() > before  # derived in forward mode
    (_, pullback) = wengert.vjp(recursive_fraction, 0.7, 12)
    assert g == pytest.approx(pullback(1.0)[0], rel=1e-14)
    v, (g1,) = wengert.value_and_grad(recursive_fraction, argnums=(0,))(0.7, 12)
    assert v == recursive_fraction(0.7, 12) and g1 == g
    # Calls after the first take the cached forward derivative.
    assert wengert.grad(recursive_fraction)(0.3, 12) == pytest.approx(
        wengert.vjp(recursive_fraction, 0.3, 12)[1](1.0)[0], rel=1e-14)


def reverse_only(x):
    return x * 3.0


@wengert.derivative(reverse_only)
def _reverse_only_vjp(x):
    return reverse_only(x), lambda g: (3.0 * g,)


def uses_reverse_only(x):
    return reverse_only(x) + x


def test_a_function_forward_mode_cannot_derive_falls_back_to_reverse_mode():
    # Only a reverse rule is given for ``reverse_only``: ``jvp`` refuses, ``grad`` answers.
    with pytest.raises(wengert.WengertError):
        wengert.jvp(uses_reverse_only, (1.0,), (1.0,))
    assert wengert.grad(uses_reverse_only)(1.0) == 4.0
    assert wengert.grad(uses_reverse_only)(2.0) == 4.0


def returns_a_pair(x):
    return [x, x]


def returns_an_int(x):
    return 3


def test_grad_of_one_float_refuses_what_reverse_mode_refuses():
    with pytest.raises(OutputNotScalarError):
        wengert.grad(returns_a_pair)(1.0)
    with pytest.raises(OutputNotScalarError):
        wengert.grad(returns_an_int)(1.0)


def rounds(x):
    return x * round(x)


def test_a_derivative_cutting_conversion_warns_once():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert wengert.grad(rounds)(1.2) == 1.0
    assert len([w for w in caught if issubclass(w.category, wengert.NonDifferentiableWarning)]
               ) == 1


def test_primitives_given_directly_with_optional_arguments():
    # ``pow`` given directly: its wrapper passes ``mod=None`` on, which is ``a ** b``
    # (a zero derivative before, as for a modular power); ``math.log`` with a base (a
    # TypeError from inside wengert before: its docstring's optional base was dropped).
    assert wengert.grad(pow)(2.0, 3.0) == pytest.approx(12.0)
    assert wengert.grad(pow, argnums=(0, 1))(2.0, 3.0) == pytest.approx(
        (12.0, 8.0 * math.log(2.0)))
    assert wengert.jvp(pow, (2.0, 3.0), (1.0, 1.0))[1] == pytest.approx(
        12.0 + 8.0 * math.log(2.0))
    assert wengert.hessian(pow)(2.0, 3.0) == pytest.approx(12.0)
    assert wengert.grad(math.log)(8.0, 2.0) == pytest.approx(1.0 / (8.0 * math.log(2.0)))
    assert wengert.grad(math.log, argnums=(0, 1))(8.0, 2.0)[1] == pytest.approx(
        -math.log(8.0) / (2.0 * math.log(2.0) ** 2))
    assert wengert.grad(math.log)(2.0) == pytest.approx(0.5)
