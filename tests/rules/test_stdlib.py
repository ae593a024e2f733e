"""The standard library people reach for on floats: math's special functions and the
statistics module, differentiated in both modes to second order, with the library's values
and its errors."""

from __future__ import annotations

import bisect
import copy
import dataclasses
import functools
import itertools
import math
import operator
import statistics
import typing

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads


def sample(x):
    return [x, 2.0 * x, 1.0, math.sin(x)]


PROGRAMS = {
    "lgamma": (lambda x: math.lgamma(x) * x, (3.7,)),
    "lgamma_negative": (lambda x: math.lgamma(x), (-2.5,)),
    "gamma": (lambda x: math.gamma(x), (0.6,)),
    "mean": (lambda x: statistics.mean(sample(x)), (1.3,)),
    "fmean": (lambda x: statistics.fmean(sample(x)), (1.3,)),
    "fmean_weights": (lambda x: statistics.fmean(sample(x), [1.0, 2.0, 0.5, x]), (1.3,)),
    "variance": (lambda x: statistics.variance(sample(x)), (1.3,)),
    "variance_xbar": (lambda x: statistics.variance(sample(x), 0.5), (1.3,)),
    "pvariance": (lambda x: statistics.pvariance(sample(x)), (1.3,)),
    "stdev": (lambda x: statistics.stdev(sample(x)), (1.3,)),
    "pstdev": (lambda x: statistics.pstdev(sample(x)), (1.3,)),
    "sum_start": (lambda x: sum(sample(x), x * x), (1.3,)),
    "fsum": (lambda x: math.fsum(sample(x)), (1.3,)),
    "prod": (lambda x: math.prod(sample(x)), (1.3,)),
    "prod_tuple_start": (lambda x: math.prod((x, 2.0, x * x), start=x - 0.5), (1.3,)),
    "prod_zero_entry": (lambda x: math.prod([x, 0.0, 3.0]) + math.prod([2.0, x - 1.3]), (1.3,)),
    "dist": (lambda x: math.dist([x, 1.0], [0.0, x * x]), (1.3,)),
    "divmod": (lambda x: divmod(x * 3.0, 0.7)[1] * x, (1.3,)),
}


def _check(f, args):
    """The regenerated primal against ``f``, both modes to second order against central
    differences."""
    assert wengert.api.primal(f)(*args) == pytest.approx(f(*args), rel=1e-12)
    check_grads(f, args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", PROGRAMS)
def test_stdlib_against_finite_differences(name):
    _check(*PROGRAMS[name])


def test_the_digamma_function_is_lgammas_derivative():
    # psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 ln 2, psi'(1) = pi^2 / 6.
    euler = 0.5772156649015329
    assert wengert.grad(math.lgamma)(1.0) == pytest.approx(-euler, rel=1e-13)
    assert wengert.grad(math.lgamma)(0.5) == pytest.approx(-euler - 2 * math.log(2), rel=1e-13)
    assert wengert.grad(wengert.grad(math.lgamma))(1.0) == pytest.approx(math.pi ** 2 / 6,
                                                                         rel=1e-13)


def test_prod_at_a_zero_entry_is_the_other_entries_product():
    # math.prod([a, 0, b]) has gradient (0, a*b, 0): no division by the zero entry.
    grads = wengert.grad(lambda a, z, b: math.prod([a, z, b]), argnums=(0, 1, 2))(2.0, 0.0, 3.0)
    assert grads == (0.0, 6.0, 0.0)


def test_prod_of_array_rows_is_their_elementwise_product():
    def f(x):
        return math.prod(np.array([[x, 2.0], [x * x, 0.5]])).sum()
    check_grads(f, (1.3,), order=1, modes=("rev", "fwd"))


def _variance_of(values):
    return statistics.variance(values)


def _spread(fn, values):
    return fn(values)


# A library function with a Python definition reached every way a user reaches it: through
# a helper that is inlined, passed as a value, applied by map: always its definition, never
# the library's own source (which computes with fractions no derivative follows).
DEFINITION_SPELLINGS = {
    "helper": lambda x: _variance_of([x, 2.0 * x, 1.0]),
    "value": lambda x: _spread(statistics.pstdev, [x, x * x, 0.5]),
    "map": lambda x: sum(map(statistics.fmean, [[x, 1.0], [x * x, 2.0]])),
    "product_in_helper": lambda x: _spread(math.prod, (x, 3.0, x)),
}


@pytest.mark.parametrize("name", DEFINITION_SPELLINGS)
def test_python_definitions_are_used_however_they_are_reached(name):
    _check(DEFINITION_SPELLINGS[name], (1.3,))


def test_a_sample_too_short_raises_the_librarys_error():
    with pytest.raises(statistics.StatisticsError):
        wengert.grad(lambda x: statistics.variance([x]))(1.0)
    with pytest.raises(statistics.StatisticsError):
        wengert.grad(lambda x: x + statistics.mean([]))(1.0)


# --- methods of dicts and lists holding values being differentiated ---------------------


def _scaled_sum(*xs, **kw):
    return sum(xs) * kw.get("scale", 1.0) + kw.get("shift", 0.0)


def _items_loss(d, x):
    s = 0.0
    for name, v in d.items():
        s = s * x + v * v * (2.0 if name == "p" else 1.0)
    return s


def _popped(x):
    xs = [x, 2.0 * x, x * x, 3.0]
    last = xs.pop()
    first = xs.pop(0)
    mid = xs.pop(-1)
    return last * first * mid + xs[0] + len(xs)


def _drained(x):
    stack = [x * k for k in range(1, 5)]
    total = 0.0
    while stack:
        total = total * 0.5 + stack.pop() ** 2
    return total


def _inserted(x):
    xs = [x, 1.0]
    xs.insert(1, x * x)
    xs.insert(-5, 2.0 * x)
    xs.insert(10, x + 1.0)
    return xs[0] * xs[1] + xs[2] * xs[3] - xs[4] * x


def _extended(x):
    xs = [x]
    xs.extend((x * x, 2.0))
    xs.extend(v * x for v in [1.0, 3.0])
    xs.extend(xs)
    return sum(v * v for v in xs)


def _dict_ops(x):
    d = {"a": x, "b": x * x}
    e = d.copy()
    e["a"] = 3.0 * x
    d.update({"c": x + 1.0})
    d.update([("b", 2.0 * x)])
    d.setdefault("a", 100.0)
    d.setdefault("z", x * x * x)
    return sum(d.values()) * e["a"] + d.get("c", 0.0) * d.get("missing", x)


METHOD_PROGRAMS = {
    "kwargs_get": (lambda x: _scaled_sum(x, x * x, scale=x) + _scaled_sum(x, shift=2.0), (1.3,)),
    "items_of_local_dict": (lambda x: _items_loss({"p": x, "q": 2.0 * x}, x), (1.3,)),
    "items_of_argument": (_items_loss, ({"p": 0.5, "q": -1.5}, 1.3)),
    "values_generator": (lambda x: sum(v * v for v in {"u": x, "w": x * x}.values()), (1.3,)),
    "keys_loop": (lambda x: sum({"u": x, "w": x * x}[k] for k in {"u": x, "w": 1.0}.keys()),
                  (1.3,)),
    "pop": (_popped, (1.3,)),
    "pop_until_empty": (_drained, (1.3,)),
    "insert": (_inserted, (1.3,)),
    "extend": (_extended, (1.3,)),
    "list_copy": (lambda x: [x, x * x].copy()[1] * x, (1.3,)),
    "dict_methods": (_dict_ops, (1.3,)),
}


@pytest.mark.parametrize("name", METHOD_PROGRAMS)
def test_dict_and_list_methods_in_both_modes_to_second_order(name):
    _check(*METHOD_PROGRAMS[name])


def test_a_popped_entry_gets_its_own_adjoint_back():
    # d/dx of xs.pop(1) * 10 + xs[1] for xs = [x, 2x, 3x]: the popped 2x and the 3x that
    # moved into its place.
    def f(a, b, c):
        xs = [a, b, c]
        return xs.pop(1) * 10.0 + xs[1]
    assert wengert.grad(f, argnums=(0, 1, 2))(1.0, 2.0, 3.0) == (0.0, 10.0, 1.0)


def _scale_in_place(x):
    d = {"a": x, "b": 2.0 * x, "c": x * x}
    for k, v in d.items():
        d[k] = v * 3.0 + 1.0  # the entry it is at: what the list of entries shows too
    return d["a"] * d["b"] + d["c"]


def _write_a_later_entry(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k, v in d.items():
        if k == "a":
            d["b"] = v * 3.0  # the view would show this at the next step
        s = s * 0.5 + v * v
    return s


def test_a_loop_over_items_writing_the_entry_it_is_at():
    _check(_scale_in_place, (1.3,))


def _write_passed_and_coming_entries(x):
    d = {"a": x, "b": 2.0 * x, "c": x * x}
    s = 0.0
    for k, v in d.items():
        if k == "b":
            d["a"] = v * 3.0  # an entry already passed
            d["c"] = d["c"] * v  # one still to come
        s = s + v * v
    return s + d["a"]


def _write_while_iterating_values(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for v in d.values():
        d["b"] = d["b"] * v
        s = s + v
    return s * d["b"]


def _write_a_parameter_while_iterating_its_keys(d, x):
    s = 0.0
    for k in d:
        d[k] = d[k] * x
        s = s + d[k]
    for k in d.keys():
        d[k] = d[k] * d[k]
        s += d[k]
    return s


@pytest.mark.parametrize(("f", "args"), [
    (_write_passed_and_coming_entries, (1.3,)),
    (_write_while_iterating_values, (1.3,)),
    (_write_a_parameter_while_iterating_its_keys, ({"a": 0.3, "b": 0.7}, 1.3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loops_over_a_dict_writing_its_values(f, args):
    # (each call on arguments of its own: the function changes the dict it is given)
    assert wengert.api.primal(f)(*copy.deepcopy(args)) == \
        pytest.approx(f(*copy.deepcopy(args)), rel=1e-12)
    check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_a_loop_over_items_writing_another_entry_sees_it_at_the_next_step():
    # (refused before: a loop over a dict yields its keys, read ``d[k]`` at each step, and
    # writes into its values leave the keys as they are)
    _check(_write_a_later_entry, (1.3,))
    assert wengert.grad(_write_a_later_entry)(1.3) == pytest.approx(19 * 1.3)


# --- itertools, bisect, a float's parts, starred calls, functions in a list --------------------


class _Pt(typing.NamedTuple):
    x: float
    y: float


@dataclasses.dataclass
class _State:
    x: float
    v: float


def _copied_state(x):
    p = _State(x, x * x)
    q = copy.deepcopy(p)
    q.x = 3.0  # (not p's)
    return p.x * q.x + q.v


def _copied_params(x):
    params = {"w": x, "b": [x, 2.0]}
    best = copy.deepcopy(params)
    params["w"] = params["w"] * 2.0
    return best["w"] * params["w"] + best["b"][0]


def _copied_table(x):
    a = [[x, 1.0, 2.0], [1.0, 3.0 * x, 0.2], [3.3, 0.4, x * x]]
    m = copy.deepcopy(a)  # (then eliminated in place, rows swapped)
    d = 1.0
    for k in range(3):
        p = max(range(k, 3), key=lambda i: abs(m[i][k]))
        if p != k:
            m[k], m[p] = m[p], m[k]
            d = -d
        d *= m[k][k]
        for i in range(k + 1, 3):
            f = m[i][k] / m[k][k]
            for j in range(k, 3):
                m[i][j] -= f * m[k][j]
    return d + a[0][0]


def _copied_numbers(x):
    xs = [x, 2.0 * x]
    ys = copy.deepcopy(xs)
    ys[0] = ys[0] * 3.0
    return ys[0] * xs[0] + sum(ys)


def _interp(x, xs, ys):
    i = bisect.bisect_right(xs, x) - 1
    i = min(max(i, 0), len(xs) - 2)
    t = (x - xs[i]) / (xs[i + 1] - xs[i])
    return ys[i] * (1 - t) + ys[i + 1] * t


def _composed(x, a):
    fs = [lambda v: v + a, math.tanh, lambda v: a * v * v]
    return functools.reduce(lambda acc, f: f(acc), fs, x)


def _columns(m):
    s = 0.0
    for c in zip(*m):
        s += math.prod(c) + max(c)
    t = list(zip(*m))
    return s + sum(t[0][i] * t[1][i] for i in range(len(t[0])))


MORE_PROGRAMS = {
    "chain": (lambda x: sum(k * v for k, v in enumerate(
        itertools.chain([x], (x * x, 2.0), [math.sin(x)]))), (0.7,)),
    "chain_from_iterable": (lambda x: list(itertools.chain.from_iterable(
        [[x], [x * x], [2.0]]))[1] * 5.0, (0.7,)),
    "accumulate": (lambda x: list(itertools.accumulate([x, x * x, 1.0]))[-1] * list(
        itertools.accumulate([x, 2.0, x], lambda a, b: a * b))[2], (0.7,)),
    "accumulate_initial": (lambda x: sum(itertools.accumulate(
        [x, 2.0], operator.mul, initial=x)), (0.7,)),
    "product": (lambda x: sum(a * b for a, b in itertools.product([x, 2.0], [1.0, x, x * x])),
                (0.7,)),
    "product_repeat": (lambda x: sum(a * b * c for a, b, c in itertools.product(
        [x, 0.5], repeat=3)), (0.7,)),
    "combinations": (lambda x: sum(a * b - c for a, b, c in itertools.combinations(
        [x, 2.0, x * x, 0.5], 3)) + len(list(itertools.combinations([x], 2))), (0.7,)),
    "pairwise": (lambda x: sum((b - a) ** 2 for a, b in itertools.pairwise(
        [x, 2.0, x * x, 0.5])), (0.7,)),
    "starmap": (lambda x: sum(itertools.starmap(pow, [(x, 2.0), (1.5, x)])), (0.7,)),
    "bisect": (lambda x: _interp(x, [0.0, 0.5, 1.0, 1.5], [1.0, x, 0.5, x * x]), (0.7,)),
    "bisect_left": (lambda x: [x, 2 * x, 3 * x][bisect.bisect_left([0.5, 1.0], x)], (0.7,)),
    "float_parts": (lambda x: x.real * x + x.imag + x.conjugate() ** 2, (0.7,)),
    "star_namedtuple": (lambda x: math.hypot(*_Pt(x, 2.0 * x - 1.0)), (0.7,)),
    "star_tuple": (lambda x: math.atan2(*(x, x * x + 1.0)) + max(*(x, 0.5)), (0.7,)),
    "star_numbers": (lambda x: max(*[x, 0.2, x * x]) * min(*[x, 0.2, x * x]), (0.7,)),
    "zip_star": (lambda x: _columns([[x, 2.0, 0.5], [3.0, x * x, -1.0]]), (0.7,)),
    "reduce_functions": (lambda x: _composed(x, 1.3 * x), (0.4,)),
    "map_two": (lambda x: sum(map(operator.mul, [x, 2.0], [x * x, x])), (0.7,)),
    "deepcopy_dataclass": (_copied_state, (0.7,)),
    "deepcopy_dict": (_copied_params, (0.7,)),
    "deepcopy_numbers": (_copied_numbers, (0.7,)),
    "covariance": (lambda x: statistics.covariance([x, 1.0, x * x, 2.5], [0.3, x, 1.0, 2.0]),
                   (0.7,)),
    "correlation": (lambda x: statistics.correlation([x, 1.0, x * x, 2.5],
                                                     [0.3, x, 1.0, 2.0]), (0.7,)),
    "linear_regression": (lambda x: sum(statistics.linear_regression(
        [0.0, 1.0, 2.0, 3.0], [x, 1.3, x * x, 1.5])), (0.7,)),
    "linear_regression_proportional": (lambda x: statistics.linear_regression(
        [1.0, x, 2.0], [x * x, 2.0, 3.0], proportional=True).slope, (0.7,)),
}


@pytest.mark.parametrize("name", MORE_PROGRAMS)
def test_more_of_the_library_against_finite_differences(name):
    _check(*MORE_PROGRAMS[name])


@pytest.mark.parametrize("xs", [[], [0.5]])
def test_a_starred_extreme_of_fewer_than_two_numbers_raises_as_python(xs):
    def f(x, ys):
        return max(*ys) * x

    with pytest.raises(TypeError) as python:
        f(1.0, xs)
    with pytest.raises(TypeError) as ours:
        wengert.grad(f)(1.0, xs)
    assert str(ours.value) == str(python.value)


@pytest.mark.parametrize("f", [
    lambda x: statistics.correlation([x, x], [1.0, 1.0]),
    lambda x: statistics.covariance([x], [1.0]),
    lambda x: statistics.linear_regression([x, x], [1.0, 2.0]).slope,
])
def test_a_pair_of_samples_the_library_refuses_raises_its_error(f):
    with pytest.raises(statistics.StatisticsError) as python:
        f(0.5)
    with pytest.raises(statistics.StatisticsError) as ours:
        wengert.grad(f)(0.5)
    assert str(ours.value) == str(python.value)


def test_a_deep_copy_of_a_table_holding_one_row_twice_is_refused_when_it_runs():
    def f(m):
        c = copy.deepcopy(m)
        c[0][0] = c[0][0] * 5.0  # (c[1] is c[0]: 5 * m[0][0] there too)
        return c[1][0]

    with pytest.raises(wengert.NonDifferentiableError, match="at two places"):
        wengert.grad(f)([[1.0, 2.0]] * 2)
    assert wengert.grad(f)([[1.0, 2.0], [3.0, 4.0]]) == [[0.0, 0.0], [1.0, 0.0]]


def test_a_deep_copy_of_a_table_eliminated_in_place():
    """``copy.deepcopy(a)`` of a list of lists of numbers is a copy of each row, written
    into by elimination with row swaps (refused before: a rule's result, of unknown rows).
    (Reverse over reverse of it is refused; the Hessian, forward over reverse, is taken.)"""
    assert wengert.api.primal(_copied_table)(0.7) == pytest.approx(_copied_table(0.7))
    check_grads(_copied_table, (0.7,), modes=("rev", "fwd"))
    h = 1e-5
    grad = wengert.grad(_copied_table)
    assert wengert.hessian(_copied_table)(0.7) == pytest.approx(
        (grad(0.7 + h) - grad(0.7 - h)) / (2 * h), rel=1e-5)
