"""Derivatives taken inside differentiated code (``transforms/nested_grad.py``): the
gradient of a global function taken inside another, differentiated again to the second
order, against central differences and the derivatives a person writes."""

from __future__ import annotations

import dataclasses
import math

import pytest

import wengert
from wengert.testing import check_grads


def energy(x):
    return x ** 3 + math.sin(x)


def two(x, y):
    return x * x * y + math.exp(0.5 * y)


def force_times_x(x):
    return wengert.grad(energy)(x) * x


def newton_step(x):
    return x - energy(x) / wengert.grad(energy)(x)


def second_argument(x):
    return wengert.grad(two, argnums=1)(x, 2.0 * x) + wengert.grad(two, argnums=-2)(x, 0.5)


def both_arguments(x):
    gx, gy = wengert.grad(two, argnums=(0, 1))(x, x * x)
    return gx * gy


@pytest.mark.parametrize("f", [force_times_x, newton_step, second_argument, both_arguments],
                         ids=lambda f: f.__name__)
def test_the_gradient_of_a_global_taken_inside_to_second_order(f):
    """``grad(energy)(x)`` inside ``f``: its own derivative (refused at the second order
    before: the pullback of the function ``grad`` made had no IR)."""
    check_grads(f, (0.7,), modes=("rev", "fwd"), order=2)


def test_the_hessian_is_the_one_a_person_writes():
    # f = x e'(x), e' = 3x^2 + cos x: f'' = 2 e''(x) + x e'''(x) = 2 (6x - sin x) + x (6 - cos x)
    x = 0.7
    expected = 2 * (6 * x - math.sin(x)) + x * (6 - math.cos(x))
    assert wengert.hessian(force_times_x)(x) == pytest.approx(expected, rel=1e-12)


# ``jvp`` taken inside differentiated code: the IR of the inner JVP inlined where it is
# taken, the function it is of lambda-lifted, so the enclosing derivative's tangents and
# its own stay apart (d/dx of d/dy[x * y * y] at y = x is 4x, not 6x).
def jvp_of_a_closure(x):
    return wengert.jvp(lambda y: x * y * y, (x,), (1.0,))[1]


def jvp_of_a_global(x):
    value, slope = wengert.jvp(two, (x, 0.5), (1.0, 0.0))
    return value * slope


def jvp_of_jvp(x):
    def g(y):
        return wengert.jvp(lambda z: math.sin(z * y), (y,), (1.0,))[1]

    return wengert.jvp(g, (x,), (1.0,))[1]


def grad_of_jvp(x):
    def slope(y):
        return wengert.jvp(lambda z: math.exp(z * x), (y,), (1.0,))[1]

    return wengert.grad(slope)(0.5) * x


@pytest.mark.parametrize("f", [jvp_of_a_closure, jvp_of_a_global, jvp_of_jvp, grad_of_jvp])
def test_a_jvp_taken_inside_differentiates_in_both_modes_to_second_order(f):
    check_grads(f, (0.7,), order=2, modes=("rev", "fwd"))


def test_the_jvp_taken_inside_keeps_its_tangents_apart():
    # d/dx [d/dy (x * y * y)]_{y = x} = d/dx [2 x y]_{y=x} = d/dx 2x^2 = 4x.
    assert wengert.grad(jvp_of_a_closure)(0.7) == pytest.approx(4 * 0.7)
    # d/dx [cos(x^2) - 2 x^2 sin(x^2)] = -6x sin(x^2) - 4x^3 cos(x^2)
    x = 0.7
    want = -6 * x * math.sin(x * x) - 4 * x ** 3 * math.cos(x * x)
    assert wengert.grad(jvp_of_jvp)(x) == pytest.approx(want)
    assert wengert.jvp(jvp_of_jvp, (x,), (1.0,))[1] == pytest.approx(want)


def test_a_jvp_inside_not_written_as_tuples_is_refused_at_its_line():
    def spread(x, at):
        return wengert.jvp(lambda y: y * x, at, (1.0,))[1]

    with pytest.raises(wengert.NonDifferentiableError, match="jvp") as e:
        wengert.grad(spread)(0.5, (0.3,))
    assert e.value.loc is not None and e.value.loc.filename == __file__


# Jacobians and Hessians taken inside: one JVP per entry of the argument, in a loop.
import numpy as np  # noqa: E402


def potential(pos, w):
    return w * np.sum(pos ** 4) - np.sum(pos ** 2)


def euler_with_forces(w):
    pos = np.array([0.3, -0.2, 0.5])
    vel = np.zeros(3)
    for _ in range(3):
        force = -wengert.jacfwd(potential, argnums=0)(pos, w)
        vel = vel + 0.05 * force
        pos = pos + 0.05 * vel
    return np.sum(pos ** 2)


def newton_on_a_closure(c):
    x = np.array([0.4, -0.3])

    def f(z):
        return c * np.sum(z ** 4) + np.sum((z - 1.0) ** 2)

    for _ in range(2):
        step = np.linalg.solve(wengert.hessian(f)(x), wengert.grad(f)(x))
        x = x - step
    return np.sum(x * x)


def jacobian_of_a_map(a):
    def field(v):
        return np.array([v[0] * v[1] * a, np.sin(v[0]) + a * v[1] ** 2, v[1] - a])

    m = wengert.jacrev(field)(np.array([0.5, -0.25]))
    return np.sum(m * m) + np.linalg.det(m[:2, :2])


def jacobian_of_a_scalar_argument(a):
    return np.sum(wengert.jacfwd(lambda t: np.array([t * a, t * t]))(a))


@pytest.mark.parametrize("f, x", [
    (euler_with_forces, 0.8), (newton_on_a_closure, 0.6), (jacobian_of_a_map, 0.7),
    (jacobian_of_a_scalar_argument, 0.4),
], ids=["jacfwd-euler", "hessian-newton", "jacrev-map", "jacfwd-scalar"])
def test_jacobians_and_hessians_taken_inside_to_second_order(f, x):
    check_grads(f, (x,), order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


def test_a_jacobian_taken_inside_is_the_apis():
    pos, w = np.array([0.3, -0.2, 0.5]), 0.8

    def inside(w):
        return wengert.jacfwd(potential, argnums=0)(pos, w)

    np.testing.assert_allclose(wengert.jvp(inside, (w,), (0.0,))[0],
                               wengert.jacfwd(potential, argnums=0)(pos, w))
    np.testing.assert_allclose(wengert.jvp(inside, (w,), (1.0,))[1], 4 * pos ** 3)


# GradBench's ``particle`` (Siskind & Pearlmutter): the outer derivative taken through a
# simulation whose acceleration is the gradient of a field that closes over the very value
# the outer derivative varies, ended by a data-dependent ``while``.
def particle_miss(w, inner):
    charges = [np.array([10.0, 10.0 - w]), np.array([10.0, 0.0])]
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    delta_t = 1e-1

    def field(z):
        return sum(1.0 / np.linalg.norm(z - c) for c in charges)

    while True:
        if inner == "grad":
            xddot = -wengert.grad(field)(x)
        else:
            xddot = -wengert.jacfwd(field)(x)  # (the inner derivative by forward mode)
        x_new = x + delta_t * xdot
        if x_new[1] <= 0.0:
            delta_t_f = -x[1] / xdot[1]
            x_t_f = x + delta_t_f * xdot
            return x_t_f[0] ** 2
        x, xdot = x_new, xdot + delta_t * xddot


@pytest.mark.parametrize("inner", ["grad", "jacfwd"])
def test_the_particle_benchmark_differentiates_by_either_mode_outside(inner):
    w, h = 0.0, 1e-6
    fd = (particle_miss(w + h, inner) - particle_miss(w - h, inner)) / (2 * h)
    assert wengert.grad(particle_miss)(w, inner) == pytest.approx(fd, rel=1e-6)
    assert wengert.jvp(lambda v: particle_miss(v, inner), (w,), (1.0,))[1] == \
        pytest.approx(fd, rel=1e-6)
    # (reverse mode outside, whichever mode inside)
    _, pullback = wengert.vjp(particle_miss, w, inner)
    assert pullback(1.0)[0] == pytest.approx(fd, rel=1e-6)


# A gradient made here and handed to an optimiser (not called where it is made): expanded
# once the optimiser is inlined and calls it here.
def _descend(df, x):
    for _ in range(25):
        x = x - 0.1 * df(x)
    return x


def handed_a_gradient(a):
    return _descend(wengert.grad(lambda y: (y - a) ** 2 + a * y ** 4), 0.1) ** 2


def handed_a_gradient_or_a_slope(a, mode):
    if mode == "reverse":
        slope = wengert.grad(lambda y: (y - a) ** 2)
    else:
        def slope(y):
            return wengert.jvp(lambda z: (z - a) ** 2, (y,), (1.0,))[1]
    return _descend(slope, 0.0) ** 2


@pytest.mark.parametrize("f", [handed_a_gradient,
                               lambda a: handed_a_gradient_or_a_slope(a, "reverse"),
                               lambda a: handed_a_gradient_or_a_slope(a, "forward")],
                         ids=["grad", "joined-reverse", "joined-forward"])
def test_a_gradient_handed_to_a_helper_differentiates_to_second_order(f):
    check_grads(f, (0.8,), order=2, modes=("rev", "fwd"))


def test_a_gradient_passed_where_no_helper_calls_it_is_refused_at_its_line():
    kept = []

    def keeps(a):
        kept.append(wengert.grad(lambda y: y * a))
        return a

    with pytest.raises(wengert.NonDifferentiableError, match="gradient taken inside") as e:
        wengert.grad(keeps)(0.5)
    assert e.value.loc is not None and e.value.loc.filename == __file__


def hvp_inside(a):
    x = np.array([0.3, -0.2])
    v = np.array([1.0, 0.5])
    return np.sum(wengert.hvp(lambda z: a * np.sum(z ** 4) + np.sum(np.sin(z * a)), (x,), (v,)))


def hvp_of_two_inside(a):
    hv = wengert.hvp(lambda p, q: a * p * p * q + np.sin(q * a), (0.5, 0.25), (1.0, -1.0))
    return hv[0] * hv[1]


@pytest.mark.parametrize("f", [hvp_inside, hvp_of_two_inside])
def test_an_hvp_taken_inside_to_second_order(f):
    check_grads(f, (0.7,), order=2, modes=("rev", "fwd"))


def surface(p, w):
    return np.sum(np.sin(p * w) * p) + w * w * np.sum(p)


def jacobians_of_two_arguments(w):
    p = np.array([0.3, -0.7, 1.1])
    jp, jw = wengert.jacfwd(lambda a, b: np.sin(a * b) * a, argnums=(0, 1))(p, w)
    kp, kw = wengert.jacrev(lambda a, b: np.cos(a * b) * b, argnums=(0, 1))(p * w, w)
    return np.sum(jp @ p) + np.sum(jw * jw) + np.sum(kp) * np.sum(kw)


def hessian_of_two_arguments(w):
    p = np.array([0.3, -0.7, 1.1]) * w
    (hpp, hpw), (hwp, hww) = wengert.hessian(surface, argnums=(0, 1))(p, w)
    return np.sum(hpp @ p) + np.sum(hpw * hwp) + hww * w


def value_and_gradient_of_a_global(w):
    p = np.array([0.3, -0.7, 1.1]) * w
    v, g = wengert.value_and_grad(surface)(p, w)
    return v + np.sum(g * p)


def value_and_gradients_of_a_closure(w):
    p = np.array([0.3, -0.7, 1.1])
    v, (gp, gw) = wengert.value_and_grad(lambda a, b: np.sum(np.exp(a * b * w)),
                                         argnums=(0, 1))(p, 0.5)
    return v * gw + np.sum(gp)


@pytest.mark.parametrize("f", [jacobians_of_two_arguments, hessian_of_two_arguments,
                               value_and_gradient_of_a_global,
                               value_and_gradients_of_a_closure])
def test_every_operator_of_several_arguments_taken_inside_to_second_order(f):
    check_grads(f, (0.8,), order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


def test_a_jacobian_of_two_arguments_taken_inside_is_laid_out_as_the_apis():
    p, w = np.array([0.3, -0.7, 1.1]), 0.8

    def inside(w):
        return wengert.hessian(surface, argnums=(0, 1))(p, w)

    kept = []

    def keeps(w):
        kept.append(inside(w))
        return kept[-1][1][1]

    wengert.grad(keeps)(w)
    want = wengert.hessian(surface, argnums=(0, 1))(p, w)
    for got_row, want_row in zip(kept[-1], want):
        for got, expected in zip(got_row, want_row):
            assert np.shape(got) == np.shape(expected)
            np.testing.assert_allclose(got, expected, rtol=1e-12)


#: Data a loss reads as a module-level tuple, spread into the call (``*DATA[1:]``).
DATA = (None, np.array([1.0, 2.0, 3.0]), 0.3)


def spread_loss(m, a, c):
    return np.sum(np.sin(m * a)) * c


def spread_from_a_global_tuple(w):
    m = np.array([0.2, -0.4, 0.6]) * w
    args = (m,) + DATA[1:]
    return spread_loss(m * w, *args[1:]) + np.sum(
        wengert.hvp(lambda q: spread_loss(q * w, *args[1:]), (m,), (m,)))


def test_an_hvp_of_a_loss_spread_from_a_global_tuple_to_second_order():
    # (the call's arguments a tuple made of a global one: each entry's type known)
    check_grads(spread_from_a_global_tuple, (0.8,), order=2, modes=("rev", "fwd"),
                rtol=1e-4, atol=1e-6)


def _pair_product(z):
    a, b = z
    return np.array([a * b, a + np.sin(b)])


def jacobian_of_an_unpacking(c):
    j = wengert.jacfwd(_pair_product)(np.array([0.5, -0.2]) * c)
    return np.sum(j * j)


def _weighted_squares(xs, c):
    s = 0.0
    for x in xs:
        s = s + x * x * c
    return s


def jvp_over_a_list(c):
    xs = [0.1 * c, 0.4, -0.3 * c]
    _, t = wengert.jvp(lambda ys: _weighted_squares(ys, c), (xs,), ([1.0, 0.5, 0.2],))
    return t * c


def _tuple_product(t):
    a, b = t
    return a * b * b


def jvp_of_a_tuple(c):
    _, t = wengert.jvp(_tuple_product, ((c, 2.0 * c),), ((1.0, 0.5),))
    return t


def _loglik(mu, x):
    return np.sum(-0.5 * (x - mu) ** 2 - np.log1p(mu * mu))


def jvp_of_a_gradient_of_a_global(mu):
    # (the curvature of a log-likelihood along 1.0: forward over reverse, taken inside)
    x = np.array([0.1, 0.7, -0.3, 1.5])
    score = lambda m: wengert.grad(_loglik)(m, x)  # noqa: E731
    _, curvature = wengert.jvp(score, (mu,), (1.0,))
    return -curvature * mu + score(mu) ** 2


@dataclasses.dataclass
class _Body:
    x: float
    v: float


def _energy_of(p):
    return p.x * p.v + math.sin(p.x)


def jvp_of_a_dataclass_made_inside(c):
    _, t = wengert.jvp(lambda x: _energy_of(_Body(x, 0.7 * c)), (c,), (1.0,))
    return t


@pytest.mark.parametrize("f", [jacobian_of_an_unpacking, jvp_over_a_list, jvp_of_a_tuple,
                               jvp_of_a_gradient_of_a_global,
                               jvp_of_a_dataclass_made_inside])
def test_forward_code_of_containers_taken_inside_differentiates_again(f):
    # (forward code reading tuples and lists: its tangent helpers have rules of their own)
    check_grads(f, (0.8,), order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


def _game(u, v, c):
    return u * u - v * v + c * u * v


def alternating_steps(c):
    u, v = 0.5, -0.3
    for _ in range(3):
        du = wengert.grad(lambda a: _game(a, v, c))(u)
        dv = wengert.grad(lambda b: _game(u, b, c))(v)
        u, v = u - 0.1 * du, v + 0.1 * dv
    return _game(u, v, c)


def test_a_closure_differentiated_where_it_is_made_reads_the_values_of_then():
    # (``v`` is assigned again after the lambda reading it, which runs before that)
    check_grads(alternating_steps, (0.7,), order=1, modes=("rev", "fwd"), rtol=1e-5)


def _kept_gradient(x):
    v = 2.0
    g = wengert.grad(lambda a: a * a * v)
    v = 3.0
    return g(x)


def test_a_closure_whose_gradient_runs_after_a_read_value_changes_is_refused():
    with pytest.raises(wengert.WengertError, match="assigns again after defining it") as e:
        wengert.grad(_kept_gradient)(0.5)
    assert e.value.loc is not None and e.value.loc.filename == __file__


def _keyed(z):
    d = {"a": z[0], "b": z[1] * 2.0}
    d["c"] = d["a"] * d["b"]
    return np.array([d["c"], d["a"]])


def jacobian_of_a_dict_written_into(c):
    j = wengert.jacrev(_keyed)(np.array([0.5, -0.2]) * c)
    return np.sum(j * j)


def test_forward_code_writing_into_a_dict_taken_inside():
    # Both modes outside differentiate it; at the second order, the tangent helper that
    # writes into the dict's tangent (dispatched) is refused at the user's line, not at a
    # line of wengert's own helpers.
    check_grads(jacobian_of_a_dict_written_into, (0.8,), modes=("rev", "fwd"), rtol=1e-5)
    with pytest.raises(wengert.WengertError) as e:
        check_grads(jacobian_of_a_dict_written_into, (0.8,), order=2, modes=("rev",))
    assert e.value.loc is not None and e.value.loc.filename == __file__


def _exp_energy(z):
    return np.exp(z)  # (a NumPy float for a float: the step's values are NumPy floats)


def _two_steps(df, x):
    for _ in range(2):
        x = x - 0.1 * df(x)
    return x


def descended_by_a_numpy_gradient(w):
    return _two_steps(wengert.grad(_exp_energy), w) ** 2


def descended_with_a_numpy_float_passed(w):
    x = np.float64(w) * 1.0
    return _two_steps(wengert.grad(lambda z: np.sin(z) * z), x) ** 2


@pytest.mark.parametrize("f", [descended_by_a_numpy_gradient,
                               descended_with_a_numpy_float_passed])
def test_a_gradient_called_at_run_time_on_numpy_floats_adds_up(f):
    # (a dispatched call's argument that is a NumPy float: the adjoint it had before the
    # call was dropped, the callee not seeding it and the dispatcher taking it as seeded)
    check_grads(f, (0.806,), order=2, modes=("rev", "fwd"), rtol=1e-5)


def gradient_of_a_def_calling_a_def(w):
    def inner(z):
        return math.sin(z * w)

    def outer(z):
        return inner(z) * inner(2.0 * z)
    return wengert.grad(outer)(0.3 + w)


def gradient_of_a_lambda_calling_lambdas(w):
    c = 0.5 * w + 0.2
    scale = lambda z: math.exp(0.3 * z) * w ** 3  # noqa: E731
    twice = lambda z: scale(z) * scale(z * c)  # noqa: E731
    g = lambda z: twice(z) + scale(z)  # noqa: E731
    dg = wengert.grad(g)
    return dg(0.4 * w) + w


@pytest.mark.parametrize("f", [gradient_of_a_def_calling_a_def,
                               gradient_of_a_lambda_calling_lambdas])
def test_a_function_calling_local_functions_over_differentiated_values(f):
    # (the local functions it calls are defined in the lifted function too, their values
    # its parameters: before, they were parameters, "passed on instead of being called")
    check_grads(f, (0.8,), order=2, modes=("rev", "fwd"), rtol=1e-5)
