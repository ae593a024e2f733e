"""Acceptance: randomly generated programs keep their behaviour through the frontend.

Hypothesis writes small float programs as source text with the generator of
``random_programs.py`` (grammar :data:`random_programs.FRONTEND`: straight-line
arithmetic, ``if/elif/else``, ``for`` over ranges and tuples, bounded ``while``
loops, ``break``, ``continue``, loop ``else`` clauses and early ``return``, nested
up to depth 3), saves each to a file so ``inspect.getsource`` works, imports it and
compares the original with ``wengert.api.primal`` on a few inputs.

Every loop is bounded (``range`` of a constant, or a ``while`` whose counter is
incremented first thing in the body, so ``continue`` cannot skip it). Division
is guarded (``l / (abs(r) + 1.0)``) and there is no ``**``, so the programs do
not raise: operations that may raise are covered by the corpus instead.
"""

from __future__ import annotations

import os

import pytest
from frontend_checks import assert_same_behaviour
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_programs import FRONTEND, load_function, programs

import wengert
import wengert.api
import wengert.frontend
import wengert.ir

INPUT = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
INPUTS = st.lists(st.tuples(INPUT, INPUT, INPUT), min_size=2, max_size=3)


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------


def check_program(source: str, inputs: list[tuple]) -> None:
    fn = load_function(source)
    try:
        wengert.ir.verify(wengert.frontend.lower(fn))
        compiled = wengert.api.primal(fn)
    except Exception as e:
        raise AssertionError(f"lowering/compiling failed for program:\n{source}") from e
    for args in inputs:
        assert_same_behaviour(fn, compiled, args, {},
                              label=f"program\n{source}\ncalled with {args!r}")


@settings(max_examples=int(os.environ.get("WENGERT_RANDOM_PROGRAMS", "120")), deadline=None,
          database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=programs(FRONTEND), inputs=INPUTS)
def test_random_programs(source, inputs):
    check_program(source, [*inputs, (0.0, 0.0, 0.0), (1.0, -1.0, 2.0)])


def test_generated_programs_compile_and_terminate():
    """The generator itself is sound: its programs are valid Python and terminate."""

    @settings(max_examples=50, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(source=programs(FRONTEND))
    def run(source):
        ns: dict = {}
        exec(compile(source, "<generated>", "exec"), ns)
        try:
            ns["f"](1.0, 2.0, -0.5)
        except (ZeroDivisionError, OverflowError):
            pass

    run()


HANDWRITTEN = {
    "design_example": """
import math

def f(x, n):
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    return s
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
            a -= 1.0
        if a > z:
            continue
        a = a * 0.5
    return a
""",
    "return_inside_nested_loops": """
def f(x, y, z):
    a = x
    for i in range(3):
        for j in range(3):
            a = a * y + z
            if a > 10.0:
                return i, j, a
        if a < -10.0:
            return "low", a
    return None, a
""",
    "continue_and_else": """
def f(x, y, z):
    b = 0.0
    for i in (x, y, z):
        if i < 0:
            continue
        b += i
    else:
        b = -b
    w = 0
    while w < 5:
        w += 1
        if w == 2:
            continue
        if b > 3:
            break
        b += 1
    else:
        return "exhausted", b
    return "broke", b
""",
    "break_in_loop_else": """
def f(x, y, z):
    a = 0.0
    for i in range(3):
        for j in range(2):
            a += x
            if a > y:
                break
        else:
            a -= z
            if a < 0:
                break
    return a
""",
    "early_return_in_branches": """
def f(x, y, z):
    if x > 0:
        if y > 0:
            return x * y
        elif y < -1:
            a = y
        else:
            return z
    else:
        a = x - y
    b = a * 2
    if b > 1:
        return b
    return a + b
""",
    "while_with_condition_and_counter": """
def f(x, y, z):
    w = 0
    a = x
    while w < 4 and a < 100.0:
        w += 1
        a = a * 2 + abs(y)
        if z > a:
            continue
        a -= z
    return a, w
""",
}

HANDWRITTEN_INPUTS = {
    "design_example": [(0.5, 6), (2.0, 10), (1.0, 0)],
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_handwritten_programs(name):
    inputs = HANDWRITTEN_INPUTS.get(
        name, [(1.0, 2.0, 3.0), (-1.0, 0.5, -2.0), (3.0, -3.0, 0.0), (0.5, 0.25, 20.0)]
    )
    check_program(HANDWRITTEN[name].lstrip("\n"), inputs)
