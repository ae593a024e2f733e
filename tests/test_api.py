"""The API's caches are never stale, and failures leave nothing cached."""

import importlib.util
import math
import sys

import numpy as np
import pytest

import wengert
from wengert import api
from wengert.diagnostics import OutputNotScalarError
from wengert.driver import cache
from wengert.testing import check_grads

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


# ------------------------------------------------ zeros, misuse, rules given directly


@pytest.mark.parametrize("make", [
    lambda f: wengert.grad(f, argnums=1),
    lambda f: (lambda *a: wengert.grad(f, argnums=(0, 1))(*a)[1]),
    lambda f: (lambda *a: wengert.value_and_grad(f, argnums=1)(*a)[1]),
    lambda f: (lambda *a: wengert.vjp(f, *a)[1](1.0)[1]),
    lambda f: wengert.jacrev(f, argnums=1),
    lambda f: wengert.jacfwd(f, argnums=1),
], ids=["grad", "grad-pair", "value_and_grad", "vjp", "jacrev", "jacfwd"])
@pytest.mark.parametrize("v", [[1.0, 2.0], (1.0, 2.0), {"a": 1.0, "b": [2.0, 3.0]},
                               [[1.0], [2.0, 3.0]], np.ones(3)],
                         ids=["list", "tuple", "dict", "rows", "array"])
def test_a_zero_gradient_has_the_argument_s_structure(make, v):
    def unused(x, v):
        return x * x

    def unused_on_the_path_taken(x, v):
        if x > 0.0:
            return x * x
        return x * v[0] if not isinstance(v, dict) else x * v["a"]

    for f in (unused, unused_on_the_path_taken):
        g = make(f)(1.5, v)
        assert g is not None
        flat = np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for leaf in
                               _leaves(g)])
        assert not flat.any() and len(flat) == len(_leaves(v))
        assert type(g) is type(v) or isinstance(v, np.ndarray)


def _leaves(x):
    if isinstance(x, dict):
        return [leaf for k in x for leaf in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    if isinstance(x, np.ndarray):
        return list(x.ravel())
    return [x]


def _two(x, y=2.0):
    return x * y


@pytest.mark.parametrize("call, match", [
    (lambda: wengert.grad(lambda x: x * x)(2), "int"),
    (lambda: wengert.grad(_two, argnums=1)(2.0, 3), "int"),
    (lambda: wengert.value_and_grad(_two)(True), "int"),
    (lambda: wengert.grad(_two)(1.0 + 2.0j), "complex"),
    (lambda: wengert.grad(_two)(np.array([1.0 + 1j])), "complex"),
    (lambda: wengert.grad(_two)(x=1.0), "positional"),
    (lambda: wengert.grad(_two)(), "positional"),
    (lambda: wengert.grad(_two, argnums=1.0)(1.0), "argnums"),
    (lambda: wengert.grad(_two, argnums=5)(1.0), "argnums=5"),
    (lambda: wengert.grad(_two, argnums=-3)(1.0, 2.0), "out of range"),
    (lambda: wengert.grad(_two, argnums=())(1.0), "empty"),
    (lambda: wengert.grad(lambda x: [x, x])(1.0), "scalar"),
])
def test_misuse_gets_a_wengert_error_naming_it(call, match):
    with pytest.raises(wengert.WengertError, match=match):
        call()


def _text_of(x):
    return float(str(x)) * x


def test_a_number_read_back_from_its_text_warns_as_int_does():
    with pytest.warns(wengert.NonDifferentiableWarning, match=r"str\(\)"):
        assert wengert.grad(_text_of)(2.0) == pytest.approx(2.0)


def _squared(x):
    return x * x


@wengert.derivative(of=_squared)
def _squared_vjp(x):
    return x * x, lambda g: (g * 10.0,)  # (not the true derivative: which one ran shows)


def test_a_registered_rule_wins_when_its_function_is_given_directly():
    assert wengert.grad(_squared)(1.0) == 10.0
    assert wengert.grad(lambda x: _squared(x))(1.0) == 10.0
    assert wengert.value_and_grad(_squared)(2.0) == (4.0, 10.0)


def _sorted_then_written(x):
    y = np.sort(x)
    y[0] = 0.0
    return np.sum(y * x)


def test_a_sorted_array_is_a_copy_written_into_freely():
    check_grads(_sorted_then_written, (np.array([3.0, 1.0, 2.0]),), order=2,
                modes=("rev", "fwd"))
    np.testing.assert_allclose(wengert.grad(_sorted_then_written)(np.array([3.0, 1.0, 2.0])),
                               [2.0, 2.0, 4.0])
