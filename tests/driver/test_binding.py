"""What a call specialises derivatives on (``driver/binding.py``): containers of floats are
typed by their items, guarded on every call, and the derivatives stay right when the guard
fails (ints, arrays, mixed values)."""

from __future__ import annotations

import copy
import dataclasses
import math
import typing

import numpy as np
import pytest
from corpus import trapezoid

import wengert
from wengert.analysis.types import (
    INT_OR_FLOAT,
    ArrayOf,
    DictOf,
    ListOf,
    ObjectOf,
    TupleOf,
    array_of,
)
from wengert.driver.binding import arg_type
from wengert.testing import check_grads


def fit(params, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        pred = params["a"] * x * x + params["b"] * x + params["c"]
        total += (pred - y) ** 2
    for i, x in enumerate(xs):
        total += 0.01 * i * x * params["a"]
    return total / len(xs) + 0.1 * max(xs) * min(ys)


XS = [0.1, 0.5, -0.7, 1.2]
YS = [1.0, 0.3, 0.2, -0.4]


def test_arg_types_of_containers_of_floats():
    assert arg_type({"a": 1.0, "b": 2.0}) == DictOf(float)
    assert arg_type([1.0, 2.0]) == ListOf(float)
    # Ints and floats both: numbers (an int's derivative is no derivative).
    assert arg_type({"a": 1.0, "b": 2}) == DictOf(INT_OR_FLOAT)
    assert arg_type([1.0, 2]) == ListOf(INT_OR_FLOAT)
    assert arg_type({"a": 1, "b": 2}) is dict
    assert arg_type([1.0, True]) is list
    assert arg_type({"a": np.ones(2)}) is dict
    assert arg_type({}) is dict


def test_dict_of_parameters_zip_and_enumerate():
    check_grads(fit, ({"a": 0.5, "b": -1.2, "c": 0.3}, XS, YS), order=2, modes=("rev", "fwd"))


def test_an_int_among_the_values_is_a_number():
    check_grads(fit, ({"a": 0.5, "b": -1, "c": 0.3}, XS, YS), order=2, modes=("rev", "fwd"))


def test_dict_values_that_are_arrays_take_the_general_code():
    params = {"a": np.array([0.5, 0.2]), "b": np.array([-1.2, 0.1]), "c": 0.3}

    def loss(params, xs):
        total = 0.0
        for x in xs:
            total += np.sum((params["a"] * x + params["b"]) ** 2) + params["c"]
        return total

    check_grads(loss, (params, XS), order=2, modes=("rev", "fwd"))
    # The same function called with floats first, then with arrays: each call is right.
    floats = {"a": 0.5, "b": -1.2, "c": 0.3}
    g1 = wengert.grad(loss)(floats, XS)
    g2 = wengert.grad(loss)(params, XS)
    assert g1["a"] == pytest.approx(sum(2 * (0.5 * x - 1.2) * x for x in XS))
    np.testing.assert_allclose(g2["a"], [sum(2 * (a * x + b) * x for x in XS)
                                         for a, b in zip([0.5, 0.2], [-1.2, 0.1])])


def test_specialised_code_calls_no_rule_at_run_time():
    text = wengert.show(fit, mode="vjp", arg_types=(DictOf(float), ListOf(float),
                                                    ListOf(float)))
    body = text.split("\n", 1)[1]  # after the ``def fit_vjp(...)`` line
    assert "_vjp(" not in body and "_pb(" not in body, text


# --- lists of lists of floats ------------------------------------------------------------


def det(m):
    n = len(m)
    if n == 1:
        return m[0][0]
    total = 0.0
    for j in range(n):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        total = total + (-1.0) ** j * m[0][j] * det(minor)
    return total


def matvec(m, v):
    out = []
    for row in m:
        out.append(sum(a * b for a, b in zip(row, v)))
    return sum(o * o for o in out)


def row_overwritten(m, v):
    rows = []
    for row in m:
        rows.append(row[:])
    rows[0][0] = np.array([1.0, 2.0]) * v[0]
    return np.sum(rows[0][0] * rows[0][1]) + rows[1][0] * v[1]


M3 = [[0.7, 1.3, 0.5], [0.3, 0.9, 1.0], [1.1, 0.2, 0.4]]


def test_arg_types_of_lists_of_lists():
    assert arg_type(M3) == ListOf(ListOf(float))
    assert arg_type([[0.5], [1]]) == ListOf(ListOf(INT_OR_FLOAT))  # (an int among floats)
    assert arg_type([[0.5], []]) is list


def test_lists_of_lists_of_floats():
    check_grads(det, (M3,), order=1, modes=("rev", "fwd"))
    check_grads(matvec, (M3, [0.5, -1.0, 2.0]), order=2, modes=("rev", "fwd"))
    # A row changed to an array through another list: the general code, right or refused
    # where it is written.
    for mode in ("rev", "fwd"):
        try:
            check_grads(row_overwritten, ([[0.5, 1.5], [2.0, -1.0]], [0.3, 0.7]), order=1,
                        modes=(mode,))
        except wengert.NonDifferentiableError as e:
            assert e.loc is not None and e.loc.filename == __file__, e


def test_specialised_lists_of_lists_call_no_rule_at_run_time():
    text = wengert.show(matvec, mode="vjp", arg_types=(ListOf(ListOf(float)), ListOf(float)))
    body = text.split("\n", 1)[1]
    assert "_vjp(" not in body and "_pb(" not in body, text


def test_a_recursive_call_on_a_list_the_function_builds_is_typed():
    # ``minor`` is only appended to (rows of floats): the recursive call is on a list of
    # lists of floats too, returns a float by induction, and its product inlines.
    text = wengert.show(det, mode="vjp", arg_types=(ListOf(ListOf(float)),))
    forward = text.split("def det_pullback", 1)[0]
    assert "det_vjp(minor)" in forward and "mul_vjp" not in forward, text


# --- lists of tuples of floats ------------------------------------------------------------


def fit_pairs(params, data):
    loss = 0.0
    for x, y in data:
        loss += (params["w"] * x * x + params["b"] - y) ** 2
    return loss


PAIRS = [(0.1, 0.3), (0.7, 0.2), (-0.4, 1.1)]


def test_lists_of_tuples_of_floats():
    from wengert.analysis.types import TupleOf

    assert arg_type(PAIRS) == ListOf(TupleOf((float, float)))
    assert arg_type([(0.1, 0.3), (0.7,)]) is list
    assert arg_type([(0.1, 1), (0.7, 0.2)]) == ListOf(TupleOf((float, INT_OR_FLOAT)))
    check_grads(fit_pairs, ({"w": 0.5, "b": 0.1}, PAIRS), order=2, modes=("rev", "fwd"))
    check_grads(fit_pairs, ({"w": 0.5, "b": 0.1}, [(0.1, 1), (0.7, 0.2)]), order=2,
                modes=("rev", "fwd"))
    text = wengert.show(fit_pairs, mode="vjp",
                        arg_types=(DictOf(float), ListOf(TupleOf((float, float)))))
    body = text.split("\n", 1)[1]
    assert "_vjp(" not in body and "_pb(" not in body, text


# --- functions passed in, to a higher order -------------------------------------------------


def _apply(f, x):
    return f(x) * x


_trapezoid = trapezoid


def _area(f, a):
    return _trapezoid(f, 0.0, a) * a


def _bump(t):
    return math.exp(-t * t) * math.sin(3.0 * t)


@pytest.mark.parametrize("f", [_bump, math.sin, lambda t: t ** 3 - 2.0 * t],
                         ids=["function", "builtin", "lambda"])
@pytest.mark.parametrize("program", [_apply, _area], ids=lambda p: p.__name__)
def test_a_function_passed_in_differentiates_to_second_order(program, f):
    check_grads(program, (f, 0.7), argnums=1, order=2, modes=("rev", "fwd"))
    h = wengert.hessian(program, argnums=1)(f, 0.7)
    gg = wengert.grad(wengert.grad(program, argnums=1), argnums=1)(f, 0.7)
    assert float(h) == pytest.approx(gg, rel=1e-10)


def test_first_derivatives_do_not_specialise_on_the_function_passed_in():
    from wengert.driver.cache import VJPS

    def scaled(k):
        return lambda t, k=k: k * t  # one code, no closure, a new function object per call

    wengert.grad(_apply, argnums=1)(scaled(0.0), 0.5)
    before = len(VJPS)
    for k in (1.0, 2.0, 3.0, 4.0, 5.0):
        assert wengert.grad(_apply, argnums=1)(scaled(k), 0.5) == pytest.approx(k)
    assert len(VJPS) == before


# --- grad of one float: forward mode where it is a straight pass ----------------------


def _fraction(x, depth):
    return 1.0 if depth == 0 else 1.0 + x / _fraction(x, depth - 1)


@dataclasses.dataclass
class _Mover:
    x: float
    v: float


def _moved(x0, steps):
    p = _Mover(x0, 0.0)
    for _ in range(steps):
        p = _Mover(p.x + 0.1 * p.v, p.v - 0.1 * p.x)
    return p.x


class _Shift:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return x + self.a * x * x


def _stepped(x0, steps):
    fs = [_Shift(0.1), math.sin]
    for k in range(steps):
        x0 = fs[k % 2](x0)
    return x0


def test_forward_mode_answers_grad_of_one_float_unless_it_dispatches_per_call():
    from wengert.driver.binding import forward_gradient
    from wengert.driver.pipeline import function_of

    fn, _, _ = function_of(_fraction, 2)
    assert forward_gradient(fn, (0.7, 5), (0,), {})[1]
    # (a dataclass's objects are built by forward mode itself, their tangents by field)
    fn, _, _ = function_of(_moved, 2)
    assert forward_gradient(fn, (0.7, 5), (0,), {})[1]
    assert forward_gradient(fn, (0.7, 5), (0, 1), {}) is None  # (not one float)
    # Forward mode calls these callees through the run-time dispatcher, step by step:
    # reverse mode answers.
    fn, _, _ = function_of(_stepped, 2)
    assert not forward_gradient(fn, (0.7, 5), (0,), {})[1]
    for f in (_moved, _stepped):
        _, pullback = wengert.vjp(f, 0.7, 5)
        assert wengert.grad(f)(0.7, 5) == pytest.approx(pullback(1.0)[0], rel=1e-14)


def _entries(x):
    a = np.zeros(5)
    for i in range(1, 5):
        a[i] = a[i - 1] * 0.9 + math.sin(x * i)
    return a.sum()


def _scalars(x):
    s, v = x, 0.0
    for _ in range(10):
        s, v = s + 0.1 * v, v - 0.1 * math.sin(s)
    return s


def test_forward_mode_is_not_chosen_where_it_writes_tangents_through_helpers():
    from wengert.driver.binding import forward_gradient
    from wengert.driver.pipeline import function_of

    fn, _, _ = function_of(_entries, 1)
    assert not forward_gradient(fn, (0.3,), (0,), {})[1]  # (reverse writes in place)
    fn, _, _ = function_of(_scalars, 1)
    assert forward_gradient(fn, (0.3,), (0,), {})[1]
    for f in (_entries, _scalars):
        assert wengert.grad(f)(0.3) == pytest.approx(wengert.vjp(f, 0.3)[1](1.0)[0],
                                                     rel=1e-12)


# ---------------------------------------------- objects and tuples passed in, by their fields


@dataclasses.dataclass
class Body:
    x: float
    v: float
    label: str = "b"


class Spring:
    k = 2.0  # a class attribute: read through an instance until it has its own

    def __init__(self, rest, stiff):
        self.rest = rest
        self.stiff = stiff


class Pair(typing.NamedTuple):
    a: float
    b: float


def energy(p, c):
    return 0.5 * p.v ** 2 + c * math.sin(p.x) * p.x


def retyped(p, c):
    p.v = 3  # an int from here on: the field's reads are not taken for floats
    return p.x * c + p.v * p.x


def spring_force(s, y):
    f = -s.stiff * (y - s.rest) * s.k
    s.k = 3  # the instance's own from here on, an int
    return f * s.k + s.rest * y


def two_bodies(p, q):
    return p.x * q.x + p.v * q.v


def pair_sum(t, c):
    a, b = t
    return a * b * c + t[0] ** 2


def no_runtime_dispatch(f, args):
    source = wengert.show(f, mode="vjp", like=args)
    return not [line for line in source.splitlines()
                if "_vjp(" in line and not line.startswith("def ")]


def test_arg_types_of_objects_and_tuples_name_their_fields():
    assert arg_type(Body(0.5, 1.0)) == ObjectOf(Body, (("x", float), ("v", float),
                                                       ("label", str)))
    assert arg_type(Body(0.5, 1.0)) is arg_type(Body(0.25, 2.0))  # (one object: a cheap key)
    assert arg_type(Body(0.5, 1)) == ObjectOf(Body, (("x", float), ("v", int), ("label", str)))
    assert arg_type((0.5, 1.5)) == TupleOf((float, float))
    assert arg_type(Pair(0.5, 1.5)) == TupleOf((float, float), cls=Pair)
    assert arg_type((0.5, 1)) == TupleOf((float, int))
    assert arg_type(([0.5], {"a": 1.0})) == TupleOf((ListOf(float), DictOf(float)))
    # (an array among the entries: typed as an argument array is, by dtype, axes and shape)
    assert arg_type((0.5, np.ones(2))) == TupleOf((float, array_of(np.float64, 1, (2,))))
    assert arg_type((0.5, np.ones(2), [np.ones(2)])) == \
        TupleOf((float, array_of(np.float64, 1, (2,)), list))
    assert arg_type([Body(0.5, 1.0), Body(1.5, 2.0)]) == ListOf(arg_type(Body(0.5, 1.0)))
    assert arg_type([Body(0.5, 1.0), Body(1.5, 2)]) == ListOf(
        ObjectOf(Body, (("x", float), ("v", INT_OR_FLOAT), ("label", str))))
    assert arg_type([Body(0.5, 1.0), Body(1.5, "2")]) is list
    assert arg_type([Pair(0.5, 1), Pair(1, 1)]) == ListOf(TupleOf((INT_OR_FLOAT, int), cls=Pair))
    assert arg_type({"w": [0.5, 1.0], "b": [2, 1.0]}) == DictOf(ListOf(INT_OR_FLOAT))
    assert arg_type([{"a": 0.5}, {"a": 1}]) == ListOf(DictOf(INT_OR_FLOAT))
    assert arg_type({"w": [0.5, 1.0], "h": [3, 2]}) == DictOf(ListOf(INT_OR_FLOAT))
    # (ints alone: no number to differentiate, untyped as before)
    assert arg_type([[1, 2], [3, 4]]) is list and arg_type({"w": [3, 1], "h": [2]}) is dict
    assert arg_type([{"a": 1}, {"a": 2}]) is list
    assert arg_type({"w": [0.5, 1.0], "b": [2.0]}) == DictOf(ListOf(float))
    assert arg_type([{"a": 0.5}, {"a": 1.0}]) == ListOf(DictOf(float))


def test_objects_and_tuples_passed_in_differentiate_as_their_fields():
    """A dataclass, a plain object or a (named) tuple of floats passed in: the arithmetic on
    its fields inlines (no derivative found at run time per operation), and stays right
    where the function writes another type into a field, reads a class attribute through
    the instance, or is given two objects of one class."""
    for f, args in [(energy, (Body(0.5, 1.5), 2.0)), (pair_sum, ((0.5, 1.5), 2.0)),
                    (pair_sum, (Pair(0.5, 1.5), 2.0)),
                    (two_bodies, (Body(0.5, 1.5), Body(-1.0, 0.25)))]:
        check_grads(f, args, modes=("rev", "fwd"), order=2)
        assert no_runtime_dispatch(f, args), f
    for f, make in [(retyped, lambda: (Body(0.5, 1.5), 2.0)),
                    (spring_force, lambda: (Spring(0.5, 1.5), 2.0)),
                    (two_bodies, lambda: (Body(0.5, 1.5), Body(-1.0, 1)))]:
        check_grads(f, make(), modes=("rev", "fwd"), order=2)
    g = wengert.grad(energy)(Body(0.5, 1.5), 2.0)
    assert type(g) is Body and g.v == 1.5
    assert math.isclose(g.x, 2.0 * (math.cos(0.5) * 0.5 + math.sin(0.5)))


def neighbours(ps, weights, c):
    e = 0.0
    for i, p in enumerate(ps):
        e += (i + 1) * p.x * p.v * c
    for p, q in zip(ps, ps[1:]):
        e += math.sin(p.x - q.x)
    for p, w in zip(reversed(ps), weights):  # (an array's entries beside them)
        e += w * p.v
    return e


def test_objects_of_a_list_passed_in_are_typed_through_enumerate_zip_and_slices():
    """The bodies read by ``enumerate(ps)``, ``zip(ps, ps[1:])`` and ``zip(reversed(ps),
    weights)`` (a float64 array) are the list's, of the fields it was checked for: their
    arithmetic inlines."""
    args = ([Body(0.5, 0.1), Body(0.2, 0.3), Body(-0.4, 0.6)], np.array([1.0, -2.0, 0.5]),
            0.7)
    check_grads(neighbours, args, modes=("rev", "fwd"), order=2)
    assert no_runtime_dispatch(neighbours, args)


# --- numbers some ints, some floats -----------------------------------------------------
# Containers passed in holding ints and floats both (``{"w": 1, "h": 0.5}``, particles one
# of which starts at ``x = 0``, ``[Pair(3, 0.5), ...]``) are typed by what they hold, their
# numbers ``INT_OR_FLOAT``: the same programs as with floats alone, reads and writes of
# their items included, in both modes to the second order; an int's derivative is no
# derivative (``None``), as for an int argument.

def _mixed_programs():
    def step_all(ps, c):
        for q in ps:
            q.x = q.x + 0.1 * q.v * c
        ps[0].v = 3
        return sum(q.x * q.v for q in ps) * c

    def dict_rows(ds, c):
        ds[0]["h"] = 2
        e = ds[0]["h"] * ds[0]["w"] * c
        for k in ds[0]:
            e += ds[0][k] * c
        for _key, val in ds[-1].items():
            e += val * c * c
        return e + sum(d["w"] for d in ds) * c

    def dict_of_lists(d, c):
        d["w"][0] = c * 2.0
        e = sum(d["w"]) * d["h"][0]
        for i in range(len(d["w"])):
            e += d["w"][i] * d["h"][i] * c
        return e

    def named_pairs(qs, c):
        e = 0.0
        for i, q in enumerate(qs):
            e += q._replace(b=c).b * q.a * (i + 1)
        return e + qs[0]._asdict()["a"] * qs[1].b

    def numbers(xs, c):
        xs[0] = xs[0] * c
        xs.append(c * c)
        return xs[0] * xs[1] * c + sum(xs) + max(xs)

    def tuple_of_list(xt, c):
        x0, xs = xt
        xs[1] = xs[1] * x0 * c
        return sum(s * s for s in xs) + x0 * c

    def table_product(a, b):
        # (the trace of a product written entry by entry, ints among the entries)
        c = [[0.0 for _ in b[0]] for _ in a]
        for i in range(len(a)):
            for j in range(len(b[0])):
                for k in range(len(b)):
                    c[i][j] = c[i][j] + a[i][k] * b[k][j]
        return sum(c[i][i] for i in range(len(c))) + c[0][1] * c[1][0]

    return [
        (table_product, ([[1, 0.5], [0.2, 2]], [[0.3, 1], [2, 0.4]])),
        (step_all, ([Body(0.8, -0.5), Body(1, 0.4), Body(1.1, 2)], 0.7)),
        (dict_rows, ([{"w": 1, "h": -0.3}, {"w": 0.9, "h": 0.6}, {"w": 2, "h": 1}], 0.8)),
        (dict_of_lists, ({"w": [-1.1, -1.0, -1.2], "h": [2, -0.3, -0.8]}, 0.7)),
        (named_pairs, ([Pair(3, 0.5), Pair(1.3, -0.4), Pair(-1.2, 2)], 1.1)),
        (numbers, ([1, 2.5, -0.5], 0.9)),
        (tuple_of_list, ((0.9, [-1, 1.4, 2]), 0.6)),
    ]


@pytest.mark.parametrize("f, args", _mixed_programs(), ids=lambda v: getattr(v, "__name__", ""))
def test_ints_among_the_floats_of_a_container_are_numbers(f, args):
    assert not isinstance(arg_type(args[0]), type)  # (typed by what it holds)
    check_grads(f, args, order=2, modes=("rev", "fwd"))
    # An int held gets no derivative; each float the one it gets with the others.
    g = wengert.grad(f, argnums=(0, 1))(*copy.deepcopy(args))[0]
    floats = _as_floats(args[0])
    g_floats = wengert.grad(f, argnums=(0, 1))(*copy.deepcopy((floats, args[1])))[0]
    for x, d, d_float in zip(_leaves(args[0]), _leaves(g), _leaves(g_floats)):
        if type(x) is int:
            assert d is None
        else:
            assert (d or 0.0) == pytest.approx(d_float or 0.0, rel=1e-12, abs=1e-12)


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _leaves(item)]
    if dataclasses.is_dataclass(x):
        return [v for fl in dataclasses.fields(x) for v in _leaves(getattr(x, fl.name))]
    return [x]


def _as_floats(x):
    if type(x) is int:
        return float(x)
    if isinstance(x, dict):
        return {k: _as_floats(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*map(_as_floats, x))
    if isinstance(x, (list, tuple)):
        return type(x)(map(_as_floats, x))
    if dataclasses.is_dataclass(x):
        return dataclasses.replace(x, **{fl.name: _as_floats(getattr(x, fl.name))
                                         for fl in dataclasses.fields(x) if fl.name != "label"})
    return x


# --- functions passed in: constants of the derivation ---------------------------------


def decay(y, t):
    return -0.5 * y + math.sin(t)


def forced(y, t):
    return -2.0 * y * y + math.cos(3.0 * t)


def rk4(f, y0, dt, n):
    y, t = y0, 0.0
    for _ in range(n):
        k1 = f(y, t)
        k2 = f(y + 0.5 * dt * k1, t + 0.5 * dt)
        k3 = f(y + 0.5 * dt * k2, t + 0.5 * dt)
        k4 = f(y + dt * k3, t + dt)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return y


def solve(y0):
    return rk4(decay, y0, 0.05, 20)


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_a_function_passed_in_is_a_constant_of_its_derivation():
    """``rk4(rhs, y0, ...)``: the calls of ``f`` are calls of ``rhs`` (inlined, no run-time
    dispatch); another function under the same gradient is another derivation, never the
    first one's."""
    assert "vjp_call" not in wengert.show(solve, mode="vjp")
    g = wengert.grad(rk4, argnums=1)
    for rhs in (decay, forced, decay, math.sin):
        f = rhs if rhs is not math.sin else (lambda y, t: math.sin(y))
        want = _fd(lambda y: rk4(f, y, 0.05, 20), 0.4)
        assert g(f, 0.4, 0.05, 20) == pytest.approx(want, rel=1e-6)
    check_grads(solve, (0.4,), order=2)
    check_grads(lambda y0: rk4(forced, y0, 0.05, 10), (0.3,), order=2)


def _fresh_rhs(scale):
    return lambda y, t: -scale * y  # a closure: data, dispatched as it runs


def _fresh_plain():
    return lambda y, t: -0.7 * y + t  # captures nothing: one derivation for all of them


def test_closures_and_functions_made_anew_passed_in():
    g = wengert.grad(rk4, argnums=1)
    for scale in (0.5, 1.5, 3.0):
        f = _fresh_rhs(scale)
        assert g(f, 0.4, 0.05, 20) == pytest.approx(
            _fd(lambda y: rk4(f, y, 0.05, 20), 0.4), rel=1e-6)
    a, b = _fresh_plain(), _fresh_plain()
    assert a is not b and arg_type(a) == arg_type(b)
    assert arg_type(_fresh_rhs(1.0)) is type(a)  # (a closure is no constant)
    for f in (a, b):
        assert g(f, 0.4, 0.05, 20) == pytest.approx(
            _fd(lambda y: rk4(f, y, 0.05, 20), 0.4), rel=1e-6)


def _with_default(y, t, k=2.0):
    return -k * y


def _with_list_default(y, t, k=[2.0]):  # noqa: B006 (a mutable default: by identity)
    return -k[0] * y


def test_functions_of_one_code_with_other_defaults_are_other_constants():
    f1 = _with_default
    f2 = type(_with_default)(_with_default.__code__, _with_default.__globals__, "f2", (5.0,))
    assert arg_type(f1) != arg_type(f2)
    g = wengert.grad(rk4, argnums=1)
    for f in (f1, f2, _with_list_default):
        assert g(f, 0.4, 0.05, 20) == pytest.approx(
            _fd(lambda y: rk4(f, y, 0.05, 20), 0.4), rel=1e-6)
    h = type(_with_list_default)(_with_list_default.__code__, _with_list_default.__globals__,
                                 "h", ([1.0],))
    assert arg_type(h) != arg_type(_with_list_default)
    assert g(h, 0.4, 0.05, 20) == pytest.approx(_fd(lambda y: rk4(h, y, 0.05, 20), 0.4),
                                                rel=1e-6)


def test_a_function_passed_in_every_mode():
    y0 = 0.4
    want = _fd(solve, y0)
    _, t = wengert.jvp(solve, (y0,), (1.0,))
    assert t == pytest.approx(want, rel=1e-6)
    _, pb = wengert.vjp(rk4, forced, y0, 0.05, 20)
    assert pb(1.0)[1] == pytest.approx(_fd(lambda y: rk4(forced, y, 0.05, 20), y0), rel=1e-6)
    assert wengert.hessian(solve)(y0) == pytest.approx(0.0, abs=1e-9)  # (affine in y0)
    h = wengert.hessian(solve_forced)(y0)
    assert h == pytest.approx(_fd(wengert.grad(solve_forced), y0), rel=1e-5)
    assert abs(h) > 0.1


def solve_forced(y0):
    return rk4(forced, y0, 0.05, 20)


# A module's tuple of data spread into a call (``f(m, *ARGS[1:])``, SciPy's ``args=``
# convention): its entries are typed, so the call is the callee's own derivative, linked
# where it is written, and differentiated again.
def _track_nll(m, F, H, zs):
    x = m
    nll = 0.0
    for z in zs:
        x = F @ x
        r = z - H @ x
        nll = nll + 0.5 * (r @ r)
    return nll


DATA = (np.array([0.1, -0.2]), np.array([[1.0, 0.1], [0.0, 0.95]]), np.eye(2),
        [np.array([0.3, 0.2]), np.array([0.1, -0.4])])


def _spread_loss(m):
    return _track_nll(m, *DATA[1:])


def test_a_module_tuple_spread_into_a_call_is_typed_and_linked():
    t = arg_type(DATA)
    assert isinstance(t, TupleOf) and len(t.entries) == 4
    assert isinstance(t.entries[0], ArrayOf) and t.entries[3] is list
    m = np.array([0.2, 0.1])
    text = wengert.show(_spread_loss, mode="vjp", like=(m,))
    assert "vjp_call" not in text  # (inlined, not dispatched when it runs)
    check_grads(_spread_loss, (m,), order=2, modes=("rev", "fwd"))
    v = np.array([1.0, -0.5])
    np.testing.assert_allclose(wengert.hvp(_spread_loss, (m,), (v,)),
                               wengert.hessian(_spread_loss)(m) @ v)
