"""Randomly generated float programs: ``wengert.grad`` against central differences.

Hypothesis writes small programs of three float parameters with the generator of
``tests/frontend/random_programs.py``, grammar :data:`random_programs.SMOOTH`: every
program is smooth almost everywhere and its values stay bounded. Straight-line
arithmetic with ``+ - *``, ``sin``, ``cos``, ``tanh``, ``exp`` of bounded values,
guarded division, ``abs``/``min``/``max``, calls of small helpers and of a local
lambda; active values through list elements (``append``, ``acc[i] = v``,
``acc[i] += v``), dict entries and tuple (starred) unpacking; ``if/elif/else`` and
conditional expressions on data; ``for`` loops over ranges and over tuples of
active values; ``while`` loops with a bounded trip count and a data-dependent
condition; ``break``, ``continue``, loop ``else`` and early ``return``. Every
assignment goes through a bounded function, so values (and derivatives) stay
small enough for finite differences to be a precise oracle.

The evaluation point is drawn from a seeded generator rather than by hypothesis
(which favours round numbers that sit exactly on branch boundaries). A point
where finite differences with two step sizes disagree lies next to a kink or a
jump of the program, where there is no derivative to check: another point is
drawn instead (:func:`random_programs.smooth_point`).
"""

from __future__ import annotations

import copy
import math
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from random_programs import (
    PARAMS,
    SMOOTH,
    assert_bounded_float_program,
    close,
    derandomized,
    load_function,
    programs,
    smooth_point,
    smooth_points,
)

import wengert

# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------


def check_program(source: str, seed: int) -> None:
    f = load_function(source)
    found = smooth_point(f, seed)
    # Only when every try lands next to a kink or jump (or the oracle is unusable):
    # there is no derivative to compare, so this example says nothing.
    assume(found is not None)
    args, numeric = found
    label = f"program\n{source}\nat {args!r}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wengert.NonDifferentiableWarning)
        try:
            value, grads = wengert.value_and_grad(f, argnums=(0, 1, 2))(*copy.deepcopy(args))
        except Exception as e:
            raise AssertionError(f"value_and_grad failed for {label}") from e
        single = wengert.grad(f)(*args)
    expected = f(*args)
    assert value == expected or math.isclose(value, expected, rel_tol=1e-12), (
        f"value {value!r} != {expected!r} for {label}")
    scale = max(1.0, abs(expected))
    for i, (g, n) in enumerate(zip(grads, numeric)):
        assert close(g, n, scale), (
            f"d f / d {PARAMS[i]}: wengert.grad gives {g!r}, central differences give {n!r} "
            f"for {label}")
    assert close(single, numeric[0], scale), (
        f"grad(f) (argnums=0) gives {single!r}, central differences give {numeric[0]!r} "
        f"for {label}")


@derandomized(max_examples=60)
@given(source=programs(SMOOTH), seed=st.integers(0, 2**32 - 1))
def test_random_programs_grad_matches_central_differences(source, seed):
    check_program(source, seed)


def test_generated_programs_are_bounded_float_programs():
    """The generator itself is sound: valid Python, terminating, float results of moderate size."""

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(source=programs(SMOOTH))
    def run(source):
        assert_bounded_float_program(source)

    run()


HANDWRITTEN = {
    "design_example": """
import math


def f(x, y, z):
    s = 0.0
    for i in range(6):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * y
    return s + z
""",
    "break_in_while_in_for": """
def f(x, y, z):
    a = 0.0
    for i in range(4):
        w = 0
        while w < 3:
            w += 1
            if a > y:
                break
            a += x * w
        else:
            a -= z * 0.1
        if a > z:
            continue
        a = a * 0.5
    return a
""",
    "early_return_in_nested_loops": """
def f(x, y, z):
    a = x
    for i in range(3):
        for j in range(3):
            a = a * y * 0.5 + z
            if a > 1.5:
                return a * i + j
    return a
""",
    # Found by the generator: a helper result that is only compared, on a value that is
    # loop-carried and used later.
    "helper_result_only_compared": """
import math

from wengert_random_helpers import squash


def f(x, y, z):
    b = 1.0
    for t in (x, y, z):
        a, b = b, math.cos(y)
    if squash(a) > 5.0:
        pass
    elif squash(z) > 1.0:
        pass
    return math.tanh(a) + b * y
""",
    "helper_result_in_or_condition": """
import math

from wengert_random_helpers import h1, h3, squash


def f(x, y, z):
    a = 0.0
    b = squash(math.exp(math.sin(z)) or a)
    if (0.5 * b >= abs(z)) or (x - 0.5 >= h3(b)):
        return h1(z)
    return math.tanh(a) + b * y
""",
    # Found by the generator: the branch condition is a list that is appended to after
    # the branch, so it must be recorded, not re-tested, for the pullback.
    "branch_on_list_mutated_later": """
import math


def f(x, y, z):
    a = 0.0
    acc = []
    if acc:
        a = math.tanh(acc[0] * x)
    acc.append(y * 2.0)
    return a + acc[0] * x + z
""",
    "loop_else_and_continue": """
import math


def f(x, y, z):
    b = 0.0
    for t in (x, y, z):
        if t < 0:
            continue
        b += math.tanh(t)
    else:
        b = -b * x
    return b
""",
    # Found by the forward-mode tests' generator: floats updated in place and swapped
    # through a tuple, in a branch in a loop.
    "inplace_update_and_tuple_swap_in_loop_branch": """
def f(x, y, z):
    a = 0.0
    b = 1.0
    for i in range(2):
        if i == 0:
            b += x
            a, b = b, y
    return a + b * z
""",
    # Found by the forward-mode tests' generator: a `return` inside a loop over a tuple
    # leaves items the pullback never reached; their adjoints are zeros.
    "return_from_loop_over_tuple": """
def f(x, y, z):
    for t in (x, y):
        if t > 0.0:
            return 2.0 * t * z
    return x * z
""",
    "break_from_loop_over_list": """
def f(x, y, z):
    a = 0.0
    for t in [x, y, z]:
        a = a + t * t
        if a > 0.2:
            break
    return a * y
""",
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_handwritten_programs(name):
    f = load_function(HANDWRITTEN[name].lstrip("\n"))
    for args, numeric in smooth_points(f, name):
        grads = wengert.grad(f, argnums=(0, 1, 2))(*args)
        for i, (g, n) in enumerate(zip(grads, numeric)):
            assert close(g, n, 1.0), f"{name} at {args}: d/d{PARAMS[i]} {g!r} vs {n!r}"
