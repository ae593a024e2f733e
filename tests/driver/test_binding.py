"""What a call specialises derivatives on (``driver/binding.py``): containers of floats are
typed by their items, guarded on every call, and the derivatives stay right when the guard
fails (ints, arrays, mixed values)."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.analysis.types import DictOf, ListOf
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
    assert arg_type({"a": 1.0, "b": 2}) is dict
    assert arg_type({"a": np.ones(2)}) is dict
    assert arg_type({}) is dict
    assert arg_type([1.0, 2]) is list


def test_dict_of_parameters_zip_and_enumerate():
    check_grads(fit, ({"a": 0.5, "b": -1.2, "c": 0.3}, XS, YS), order=2, modes=("rev", "fwd"))


def test_an_int_among_the_values_takes_the_general_code():
    # (Second order through the general code is refused with a located error today:
    # the loop's body calls rules chosen at run time, see the closing note of issue 14.)
    check_grads(fit, ({"a": 0.5, "b": -1, "c": 0.3}, XS, YS), order=1, modes=("rev", "fwd"))


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
