"""Closures made anew on every call share one derivation (``frontend/source.lift_captures``).

A closure's data (lists, arrays, floats, objects) becomes leading parameters of the one
function of its code, bound at every call; its functions and constants stay its own. The
checks: every API gives what finite differences give for closures made in a loop, whose
captured data changes between calls (new values, new types, new shapes, a cell rebound
under the same wrapper); the lifted function is found again (no derivation per closure);
what cannot be lifted (``nonlocal``, generators, ``super()``) still differentiates; a
refusal inside a lifted closure points at the user's line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import wengert
from wengert.frontend import source
from wengert.testing import check_grads


def cost(points, c):
    s = 0.0
    for p in points:
        d = p - c
        s += d * d
    return s


def cost_grad_exact(points, c):
    return sum(-2.0 * (p - c) for p in points)


def loss(w, X, y):
    return np.mean(np.log1p(np.exp(-y * (X @ w))))


def _fd(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def step(c, pts):
    return wengert.grad(lambda c: cost(pts, c))(c)


def test_a_closure_made_at_every_call_reads_its_own_data():
    for k in range(1, 6):
        pts = [0.5 * i + 0.1 * k for i in range(k + 2)]
        assert math.isclose(step(0.3, pts), cost_grad_exact(pts, 0.3), rel_tol=1e-12)


def test_closures_of_one_code_share_one_lifted_function():
    got = []
    for k in range(3):
        pts = [1.0 * k, 2.0]
        f = lambda c: cost(pts, c)  # noqa: E731
        lifted, data = source.lift_captures(f)
        got.append(lifted)
        assert data == (pts,)
    assert got[0] is got[1] is got[2]


def minibatches(w, X, y, size):
    grads = []
    for i in range(0, len(y), size):
        Xb, yb = X[i:i + size], y[i:i + size]
        grads.append(wengert.grad(lambda w: loss(w, Xb, yb))(w))
    return grads


def test_minibatches_of_changing_shapes():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(23, 3)), np.sign(rng.normal(size=23))
    w = rng.normal(size=3)
    for size in (8, 5, 23):
        got = minibatches(w, X, y, size)
        for g, i in zip(got, range(0, 23, size)):
            Xb, yb = X[i:i + size], y[i:i + size]
            np.testing.assert_allclose(g, _fd(lambda v: loss(v, Xb, yb), w), rtol=1e-6,
                                       atol=1e-9)


def test_a_cell_rebound_under_one_wrapper_is_read_again():
    scale = 2.0
    g = wengert.grad(lambda x: scale * x * x)
    assert g(3.0) == 12.0
    scale = 5.0  # the lambda's cell now holds 5.0: the wrapper's next call sees it
    assert g(3.0) == 30.0
    scale = np.array([1.0, 2.0])  # a new type: derived again for it
    assert wengert.grad(lambda x: np.sum(scale * x * x))(np.array([1.0, 1.0])).tolist() == \
        [2.0, 4.0]


def test_a_captured_constant_changes_the_derivation():
    def make(n):
        return lambda x: sum(x ** k for k in range(n))
    for n in (1, 2, 3, 7):
        assert math.isclose(wengert.grad(make(n))(1.5),
                            sum(k * 1.5 ** (k - 1) for k in range(1, n)), rel_tol=1e-12)


def test_a_captured_function_is_linked_by_identity():
    def make(h):
        return lambda x: h(x) * 2.0
    assert math.isclose(wengert.grad(make(math.sin))(0.4), 2 * math.cos(0.4), rel_tol=1e-12)
    assert math.isclose(wengert.grad(make(math.exp))(0.4), 2 * math.exp(0.4), rel_tol=1e-12)
    assert math.isclose(wengert.grad(make(lambda t: t ** 3))(0.4), 6 * 0.4 ** 2,
                        rel_tol=1e-12)


def test_data_written_through_the_closure_reaches_the_caller():
    def run(x, log):
        def f(x):
            log.append(x)
            return x * x
        return wengert.grad(f)(x)
    log = []
    assert run(3.0, log) == 6.0 and run(4.0, log) == 8.0
    assert log == [3.0, 4.0]


def test_every_api_on_closures_made_anew():
    rng = np.random.default_rng(2)
    for _ in range(3):
        A = rng.normal(size=(3, 3))
        b = rng.normal(size=3)
        f = lambda x: np.sum(np.tanh(A @ x + b) ** 2)  # noqa: E731
        x = rng.normal(size=3)
        check_grads(f, (x,), order=2)
        u = rng.normal(size=3)
        _, t = wengert.jvp(f, (x,), (u,))
        _, pb = wengert.vjp(f, x)
        assert math.isclose(t, float(pb(1.0)[0] @ u), rel_tol=1e-9, abs_tol=1e-12)
        H = wengert.hessian(f)(x)
        g = wengert.grad(f)
        cols = [(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
        np.testing.assert_allclose(H, np.array(cols).T, rtol=1e-5, atol=1e-7)
        J = wengert.jacrev(lambda x: np.tanh(A @ x))(x)
        np.testing.assert_allclose(J, wengert.jacfwd(lambda x: np.tanh(A @ x))(x),
                                   rtol=1e-12)


def test_value_and_grad_and_argnums_of_a_closure():
    c0 = 0.7
    v, g = wengert.value_and_grad(lambda x, y: c0 * x * y, argnums=(0, 1))(2.0, 3.0)
    assert v == pytest.approx(4.2) and g == (pytest.approx(2.1), pytest.approx(1.4))


def test_defaults_belong_to_each_closure():
    fs = [lambda x, k=k: x ** k * scale for k in (1, 2, 3) for scale in (2.0,)]
    assert [wengert.grad(f)(2.0) for f in fs] == [2.0, 8.0, 24.0]


class Base:
    def energy(self, x):
        return x * x


class Scaled(Base):
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return self.k * super().energy(x)


def test_what_cannot_be_lifted_is_derived_as_before():
    def counter():
        total = 0.0

        def f(x):
            nonlocal total
            total += 1.0
            return x * x + total
        return f
    f = counter()
    assert source.lift_captures(f) is None
    with pytest.raises(wengert.UnsupportedSyntaxError, match="nonlocal"):
        wengert.grad(f)(3.0)
    # ``super()`` reads the ``__class__`` cell: the method is its own function.
    assert source.lift_captures(Scaled.energy) is None
    assert wengert.grad(Scaled(3.0).energy)(2.0) == 12.0


def refused(x, data):
    return wengert.grad(lambda x: np.linalg.norm(data * x, ord="nuc"))(x)


def test_a_refusal_in_a_lifted_closure_points_at_the_user_line():
    with pytest.raises(wengert.WengertError) as info:
        refused(np.ones((2, 2)), np.ones((2, 2)))
    assert "test_source.py" in str(info.value)
    line = refused.__code__.co_firstlineno + 1
    assert f":{line}" in str(info.value)


# -- module globals read as data ---------------------------------------------------------------

XS = [0.1 * i for i in range(12)]
YS = [math.sin(x) for x in XS]
GRAVITY = 9.81


def fit_loss(a, b):
    s = 0.0
    for x, y in zip(XS, YS):
        r = a * x + b - y
        s += r * r
    return s


def fit_grad_exact(a, b):
    return (sum(2 * (a * x + b - y) * x for x, y in zip(XS, YS)),
            sum(2 * (a * x + b - y) for x, y in zip(XS, YS)))


def fall(v0, t):
    return v0 * t - 0.5 * GRAVITY * t * t


def test_module_globals_are_read_when_the_derivative_runs():
    global XS, YS, GRAVITY
    g = wengert.grad(fit_loss, argnums=(0, 1))
    assert source.lift_captures(fit_loss)[1] == (XS, YS)
    np.testing.assert_allclose(g(0.5, 0.1), fit_grad_exact(0.5, 0.1), rtol=1e-12)
    saved = XS, YS, GRAVITY
    try:
        XS, YS = [1.0, 2.0, 3.0], [0.5, 0.25, 0.0]  # rebound: the next call reads them
        np.testing.assert_allclose(g(0.5, 0.1), fit_grad_exact(0.5, 0.1), rtol=1e-12)
        XS.append(4.0)  # changed in place: read as it is
        YS.append(1.0)
        np.testing.assert_allclose(g(0.5, 0.1), fit_grad_exact(0.5, 0.1), rtol=1e-12)
        XS, YS = np.linspace(0.0, 1.0, 5), np.cos(np.linspace(0.0, 1.0, 5))  # new types
        np.testing.assert_allclose(g(0.5, 0.1), fit_grad_exact(0.5, 0.1), rtol=1e-12)
        assert wengert.grad(fall, argnums=1)(3.0, 0.5) == pytest.approx(3.0 - GRAVITY * 0.5)
        GRAVITY = 1.62
        assert wengert.grad(fall, argnums=1)(3.0, 0.5) == pytest.approx(3.0 - 1.62 * 0.5)
        check_grads(fall, (3.0, 0.5), order=2)
        check_grads(fit_loss, (0.5, 0.1), order=2)
    finally:
        XS, YS, GRAVITY = saved


COUNTER = 0


def counted(x):
    global COUNTER
    COUNTER += 1
    return x * x * GRAVITY


def test_a_function_binding_a_global_is_not_lifted():
    assert source.lift_captures(counted) is None
    with pytest.raises(wengert.WengertError):  # (``global``: refused at its line, as before)
        wengert.grad(counted)(2.0)


ACTIVATIONS = [math.tanh, math.sin]
OPS = {"sin": math.sin, "square": lambda t: t * t}


def through_tables(x):
    for act in ACTIVATIONS:
        x = act(x)
    return OPS["sin"](x) * OPS["square"](x)


def test_tables_of_functions_are_code_not_data():
    """A global list or dict of functions is what the function calls, not data: it stays a
    constant of the derivation (its calls known where they are written), to any order."""
    assert source.lift_captures(through_tables) is None
    check_grads(through_tables, (0.7,), order=2)


def through_a_literal_key(x):
    return OPS["square"](x) + OPS["sin"](x * 2.0)


def test_a_global_rebound_to_another_kind_is_lifted_again():
    """What is data is decided again when a global the function reads is another object:
    a table of functions becomes data when rebound to a list of numbers, and back (the
    answer of a recent call is kept only while the same objects are read)."""
    global ACTIVATIONS
    saved = ACTIVATIONS
    try:
        assert source.lift_captures(through_tables) is None
        assert source.lift_captures(through_tables) is None  # (the recent answer)
        ACTIVATIONS = [0.5, 2.0]
        lifted = source.lift_captures(through_tables)
        assert lifted is not None and lifted[1] == (ACTIVATIONS,)
        ACTIVATIONS = [math.sin]
        assert source.lift_captures(through_tables) is None
        check_grads(through_tables, (0.7,), order=2)
    finally:
        ACTIVATIONS = saved


def test_an_entry_read_by_a_literal_key_is_the_function_it_holds():
    """``OPS["square"](x)`` is a call of the function the entry holds, inlined, not
    dispatched at run time; replacing the entry derives again."""
    assert "vjp_call" not in wengert.show(through_a_literal_key, mode="vjp")
    g = wengert.grad(through_a_literal_key)
    assert g(0.7) == pytest.approx(2.0 * 0.7 + 2.0 * math.cos(1.4))
    saved = OPS["square"]
    try:
        OPS["square"] = lambda t: t * t * t
        assert g(0.7) == pytest.approx(3.0 * 0.49 + 2.0 * math.cos(1.4))
        check_grads(through_a_literal_key, (0.7,), order=2)
        del OPS["square"]
        with pytest.raises(KeyError):
            g(0.7)
    finally:
        OPS["square"] = saved
    assert g(0.7) == pytest.approx(2.0 * 0.7 + 2.0 * math.cos(1.4))


TABLE = {"f": math.sin}


def writes_its_table(x):
    TABLE["f"] = math.cos  # (a function, not a value being differentiated: allowed)
    return TABLE["f"](x)


def passes_its_table_on(x):
    _swap_entry(TABLE)
    return TABLE["f"](x)


def _swap_entry(table):
    table["f"] = math.cos if table["f"] is math.sin else math.sin


def test_a_table_the_function_changes_is_read_as_it_runs():
    try:
        assert wengert.grad(writes_its_table)(0.7) == pytest.approx(-math.sin(0.7))
        TABLE["f"] = math.sin
        assert wengert.grad(passes_its_table_on)(0.7) == pytest.approx(-math.sin(0.7))
        assert wengert.grad(passes_its_table_on)(0.7) == pytest.approx(math.cos(0.7))
    finally:
        TABLE["f"] = math.sin


class Dense:
    """A layer called as ``layer(h)``: data (its weights) with code (its ``__call__``)."""

    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, h):
        return np.tanh(self.w @ h + self.b)


LAYERS = [Dense(np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([0.1, -0.2])),
          Dense(np.array([[1.0, 0.4]]), np.array([0.3]))]
HEAD = Dense(np.array([[0.7]]), np.array([0.0]))


def network(x):
    h = x
    for layer in LAYERS:
        h = layer(h)
    return np.sum(HEAD(h) ** 2)


def test_callable_objects_are_data_typed_by_their_class():
    """A global list of layer objects (and a global layer) is data read when the derivative
    runs, typed by its class like an argument: its calls are known where written."""
    global LAYERS
    assert source.lift_captures(network)[1] == (LAYERS, HEAD)
    x = np.array([0.3, -0.6])
    g = wengert.grad(network)
    np.testing.assert_allclose(g(x), _fd_vec(network, x), rtol=1e-6)
    check_grads(network, (x,), order=2)
    saved = LAYERS
    try:
        LAYERS[0].w = LAYERS[0].w * 2.0  # a field changed: read as it is
        np.testing.assert_allclose(g(x), _fd_vec(network, x), rtol=1e-6)
        LAYERS = [Dense(np.array([[0.6, -0.1]]), np.array([0.05]))]  # rebound: one layer
        np.testing.assert_allclose(g(x), _fd_vec(network, x), rtol=1e-6)
    finally:
        saved[0].w = saved[0].w / 2.0
        LAYERS = saved


def _fd_vec(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out
