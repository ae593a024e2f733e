"""Jacobians of Jacobians (``jacfwd(jacrev(f))``, JAX's spelling of a Hessian, and the
other three pairings) and Hessians of array-valued functions, against central second
differences of the function itself."""

from __future__ import annotations

import itertools
import math

import numpy
import pytest

import wengert
from wengert.diagnostics import OutputNotScalarError, WengertError


def scalar_out(x):
    return numpy.sin(x[0]) * x[1] ** 2 + x[0] * x[2] - numpy.exp(x[1] * x[2])


def vector_out(x):
    return numpy.array([numpy.sin(x[0]) * x[1] ** 2, x[0] * x[1] * x[2], numpy.tanh(x[2])])


def matrix_out(x):
    return numpy.outer(x, x) * numpy.cos(x[0])


def python_helper(x):
    s = 0.0
    for i in range(len(x)):
        s = s + math.sin(x[i]) * x[i - 1]
    return numpy.array([s, s * s])


def float_in(t):
    return numpy.array([t ** 3, math.sin(t), t * math.exp(t)])


def two_args(x, w):
    return numpy.tanh(w @ x)


FUNCTIONS = [scalar_out, vector_out, matrix_out, python_helper]
PAIRS = {
    "jacfwd(jacfwd)": lambda f, **k: wengert.jacfwd(wengert.jacfwd(f, **k), **k),
    "jacfwd(jacrev)": lambda f, **k: wengert.jacfwd(wengert.jacrev(f, **k), **k),
    "jacrev(jacfwd)": lambda f, **k: wengert.jacrev(wengert.jacfwd(f, **k), **k),
    "jacrev(jacrev)": lambda f, **k: wengert.jacrev(wengert.jacrev(f, **k), **k),
    "hessian": lambda f, **k: wengert.hessian(f, **k),
}


def second_differences(f, args, a, b, h=1e-3):
    """``d/dx_b d f/dx_a`` by central differences of ``f``: shape out + x_a + x_b."""
    args = [numpy.asarray(v, dtype=float) for v in args]
    y = numpy.asarray(f(*args))
    na, nb = args[a].size, args[b].size
    out = numpy.zeros(y.shape + (na, nb))

    def at(da, db):
        moved = [v.copy() for v in args]
        moved[a] = moved[a] + da.reshape(moved[a].shape)
        moved[b] = moved[b] + db.reshape(moved[b].shape)
        return numpy.asarray(f(*[m if m.ndim else float(m) for m in moved]))

    for j in range(na):
        for k in range(nb):
            ej, ek = numpy.zeros(na), numpy.zeros(nb)
            ej[j], ek[k] = h, h
            out[..., j, k] = (at(ej, ek) - at(ej, -ek) - at(-ej, ek) + at(-ej, -ek)) / (4 * h * h)
    return out.reshape(y.shape + args[a].shape + args[b].shape)


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_derivatives_match_second_differences(pair, f):
    x = numpy.array([0.3, -0.7, 0.5])
    got = PAIRS[pair](f)(x)
    assert numpy.shape(got) == numpy.shape(f(x)) + (3, 3)
    numpy.testing.assert_allclose(got, second_differences(f, (x,), 0, 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pair", list(PAIRS))
def test_float_argument(pair):
    got = PAIRS[pair](float_in)(0.4)
    numpy.testing.assert_allclose(got, second_differences(float_in, (0.4,), 0, 0),
                                  rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a,b", list(itertools.product((0, 1), repeat=2)))
def test_mixed_arguments(a, b):
    rng = numpy.random.default_rng(1)
    x, w = rng.standard_normal(3), rng.standard_normal((2, 3))
    got = wengert.jacfwd(wengert.jacrev(two_args, argnums=a), argnums=b)(x, w)
    numpy.testing.assert_allclose(got, second_differences(two_args, (x, w), a, b),
                                  rtol=1e-5, atol=1e-6)


def test_hessian_of_an_array_function_has_one_block_per_entry():
    # Each block is the Hessian of that entry alone.
    x = numpy.array([0.3, -0.7, 0.5])
    blocks = wengert.hessian(vector_out)(x)
    for r in range(3):
        numpy.testing.assert_allclose(
            blocks[r], wengert.hessian(lambda v, r=r: vector_out(v)[r])(x), rtol=1e-12)


def test_symmetric():
    x = numpy.array([0.3, -0.7, 0.5])
    h = wengert.jacfwd(wengert.jacrev(matrix_out))(x)
    numpy.testing.assert_allclose(h, numpy.swapaxes(h, -1, -2), rtol=1e-10, atol=1e-12)


def test_grad_of_an_array_result_names_the_jacobian():
    with pytest.raises(OutputNotScalarError, match="jacrev"):
        wengert.grad(vector_out)(numpy.ones(3))
    # Inside the gradient code (a Hessian's inner gradient, nested grad) as well: the seed
    # of a vector result would otherwise be the gradient of its sum.
    with pytest.raises(OutputNotScalarError, match=r"shape \(3,\)"):
        wengert.jacfwd(wengert.grad(vector_out))(numpy.ones(3))


def test_a_jacobian_differentiated_otherwise_is_refused_clearly():
    jac = wengert.jacfwd(vector_out)

    def uses_jacobian(x):
        return numpy.sum(jac(x) ** 2)

    x = numpy.ones(3)
    for attempt in (lambda: wengert.grad(uses_jacobian)(x),
                    lambda: wengert.jvp(jac, (x,), (x,)),
                    lambda: wengert.vjp(jac, x),
                    lambda: wengert.jacfwd(wengert.hessian(vector_out))(x)):
        with pytest.raises(WengertError, match="not differentiated again") as info:
            attempt()
        assert "wengert.hessian" in str(info.value)
    # Called inside a function being differentiated, it is reported where it is called.
    for attempt in (lambda: wengert.grad(uses_jacobian)(x),
                    lambda: wengert.grad(lambda t: uses_jacobian(x * t))(1.0)):
        with pytest.raises(WengertError, match="not differentiated again") as info:
            attempt()
        assert info.value.loc is not None and info.value.loc.filename == __file__
        assert "jac(x)" in str(info.value)


def test_nested_jacobians_take_int_argnums():
    with pytest.raises(TypeError, match="int argnums"):
        wengert.jacfwd(wengert.jacrev(two_args, argnums=(0, 1)))


def test_an_int_held_by_an_argument_has_no_jacobian_block():
    # An int among an argument's numbers is a constant: its block is None, as its
    # cotangent is (it was the int itself, ``[1, 4.0]``, read as a derivative of 1).
    def f(xs, c):
        return xs[0] * xs[1] * c + sum(xs)

    for jac in (wengert.jacfwd, wengert.jacrev):
        block = jac(f)([1, 2.0], 3.0)
        assert block[0] is None
        assert block[1] == pytest.approx(1 * 3.0 + 1)
    assert wengert.hessian(f)([1, 2.0], 3.0)[0] is None
