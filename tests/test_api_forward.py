"""The forward-mode API: ``jvp``, ``linearize``, ``jacfwd``, ``jacrev`` and ``show(mode="jvp")``.

Every expected number comes from finite differences (``numerical_jvp``), never from
the implementation.
"""

from __future__ import annotations

import math

import numpy
import pytest

import wengert
from wengert.testing import numerical_jvp

A = numpy.array([[1.0, 2.0, 0.5], [-1.0, 0.25, 3.0]])


def scalar_fn(x, y):
    z = x * y + math.sin(x)
    return z / y


def vector_fn(v):
    return A @ (v * v) + v[:2]


def list_fn(xs, k):
    out = []
    for i, x in enumerate(xs):
        out.append(math.exp(x) * k + i)
    return out


def aux_fn(x):
    return x * x, "aux"


def numerical_jacobian(f, args, i):
    """The Jacobian of ``f`` with respect to argument ``i`` (an array or a float)."""
    x = numpy.asarray(args[i], dtype=float)
    cols = []
    for index in numpy.ndindex(x.shape):
        u = numpy.zeros(x.shape)
        u[index] = 1.0
        direction = tuple((u if x.ndim else float(u)) if k == i else None
                          for k in range(len(args)))
        cols.append(numpy.asarray(numerical_jvp(f, args, direction), dtype=float))
    out_shape = cols[0].shape
    return numpy.stack(cols, axis=-1).reshape(out_shape + x.shape)


def test_jvp_scalar_matches_finite_differences():
    out, t = wengert.jvp(scalar_fn, (0.7, 2.0), (0.3, -0.4))
    assert out == pytest.approx(scalar_fn(0.7, 2.0))
    assert t == pytest.approx(numerical_jvp(scalar_fn, (0.7, 2.0), (0.3, -0.4)), rel=1e-6)


def test_jvp_list_output_and_int_argument():
    xs = [0.1, -0.5, 1.25]
    u = [1.0, 0.5, -2.0]
    out, t = wengert.jvp(list_fn, (xs, 3), (u, None))
    want = numerical_jvp(list_fn, (xs, 3), (u, None))
    assert out == list_fn(xs, 3)
    assert numpy.allclose(t, want, rtol=1e-6)


def test_jvp_validates_tangent_structure():
    with pytest.raises(ValueError):
        wengert.jvp(vector_fn, (numpy.ones(3),), (numpy.ones(2),))
    with pytest.raises(TypeError):
        wengert.jvp(scalar_fn, (0.5, 1.0), (1.0,))


def test_jvp_has_aux():
    value, t, aux = wengert.jvp(aux_fn, (1.5,), (2.0,), has_aux=True)
    assert value == 2.25 and aux == "aux"
    assert t == pytest.approx(numerical_jvp(lambda x: aux_fn(x)[0], (1.5,), (2.0,)), rel=1e-6)


def test_linearize():
    out, f_jvp = wengert.linearize(scalar_fn, 0.7, 2.0)
    assert out == pytest.approx(scalar_fn(0.7, 2.0))
    for u in [(1.0, 0.0), (0.0, 1.0), (0.5, -0.25)]:
        assert f_jvp(*u) == pytest.approx(numerical_jvp(scalar_fn, (0.7, 2.0), u), rel=1e-6)


@pytest.mark.parametrize("jac", [wengert.jacfwd, wengert.jacrev])
def test_jacobian_of_array_function(jac):
    v = numpy.array([0.3, -1.2, 0.8])
    got = jac(vector_fn)(v)
    assert got.shape == (2, 3)
    assert numpy.allclose(got, numerical_jacobian(vector_fn, (v,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jac", [wengert.jacfwd, wengert.jacrev])
def test_jacobian_of_scalar_function_with_tuple_argnums(jac):
    jx, jy = jac(scalar_fn, argnums=(0, 1))(0.7, 2.0)
    assert isinstance(jx, float) and isinstance(jy, float)
    assert jx == pytest.approx(numerical_jacobian(scalar_fn, (0.7, 2.0), 0), rel=1e-6)
    assert jy == pytest.approx(numerical_jacobian(scalar_fn, (0.7, 2.0), 1), rel=1e-6)


@pytest.mark.parametrize("jac", [wengert.jacfwd, wengert.jacrev])
def test_jacobian_of_list_function(jac):
    xs = [0.1, -0.5, 1.25]
    got = jac(list_fn, argnums=0)(xs, 2)
    # A list output of a list input: out structure of input structure of floats.
    want = [[float(numerical_jvp(list_fn, (xs, 2), ([float(i == j) for j in range(3)], None))
                   [r]) for i in range(3)] for r in range(3)]
    assert numpy.allclose(numpy.array(got, dtype=float), want, rtol=1e-6)


def test_jacfwd_equals_jacrev_on_matrix_input():
    def f(m):
        return m @ numpy.array([1.0, -2.0]) * m[0, 0]

    m = numpy.array([[0.5, 1.5], [-1.0, 2.0], [0.25, 0.75]])
    fwd = wengert.jacfwd(f)(m)
    rev = wengert.jacrev(f)(m)
    assert fwd.shape == (3, 3, 2)
    assert numpy.allclose(fwd, rev)
    assert numpy.allclose(fwd, numerical_jacobian(f, (m,), 0), rtol=1e-6, atol=1e-8)


def test_show_jvp_is_readable():
    src = wengert.show(scalar_fn, mode="jvp", argnums=(0, 1))
    assert "def scalar_fn_jvp(x, y, x_dot, y_dot):" in src
    assert "math.cos(x)" in src
    assert "apply_rule" not in src  # rules are inlined
