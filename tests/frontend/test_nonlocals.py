"""``nonlocal`` in a nested function called as a statement: differentiated as Python means
it (both modes, second order, against central differences), and every other use of such a
function refused at its line."""

from __future__ import annotations

import math

import pytest

import wengert
from wengert.testing import check_grads


def counter(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v * v

    for i in range(3):
        add(x * i)
    return total


def two_variables(x, y):
    s, c = 0.0, 1.0

    def step(v):
        nonlocal s, c
        s = s + c * math.sin(v)
        c = c * v
        return s * c

    r = step(x)
    r += step(y)
    return r + s * c


def returns_early(x):
    acc = x

    def update(v):
        nonlocal acc
        if v > 1.0:
            acc = acc * v
            return acc
        acc = acc + v
        return -acc

    a = update(x)
    b = update(2.0 * x)
    return a * b + acc


def targets_win(x):
    t = x

    def f(v):
        nonlocal t
        t = t * v
        return v

    t = f(3.0)  # (the assignment is the last: t is 3.0)
    u = x

    def g(v):
        nonlocal u
        u = u * 2.0
        return v

    u += g(x)  # (u as it was before the call, plus x)
    return t * u


def returned_call(x):
    n = 1.0

    def bump(v):
        nonlocal n
        n = n * v
        return n + v

    if x > 0.0:
        return bump(x)
    return n


def defined_twice(x):
    t = x
    for k in range(2):
        def bump(v):
            nonlocal t
            t = t * 0.5 + v
            return v * t

        bump(x * k)
    t += x

    def bump(v):  # noqa: F811 (defined again, as a generated program may)
        nonlocal t
        t = math.sin(t + v)
        return t

    r = bump(x)
    return r * t


@pytest.mark.parametrize(("f", "args"), [
    (defined_twice, (0.7,)),
    (counter, (0.7,)), (two_variables, (0.7, 1.3)), (returns_early, (0.7,)),
    (returns_early, (1.7,)), (targets_win, (0.7,)), (returned_call, (0.8,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_nested_function_rebinding_its_callers_variables_to_second_order(f, args):
    check_grads(f, args, argnums=tuple(range(len(args))), modes=("rev", "fwd"), order=2)


def test_the_values_are_python_s():
    # (the primal regenerated from the rewritten function, against the function itself)
    for f, args in [(counter, (0.7,)), (targets_win, (0.7,)), (returns_early, (1.7,))]:
        assert wengert.value_and_grad(f)(*args)[0] == f(*args)
    assert targets_win(0.7) == pytest.approx(3.0 * 1.4)


def passed_on(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    list(map(add, [x, 2 * x]))
    return total


def called_in_an_expression(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v

    return 2.0 * add(x) + total


def called_by_another(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    def twice(v):
        add(v)
        add(v)

    twice(x)
    return total


def outer_variable(x):
    total = x

    def middle(v):
        def inner(w):
            nonlocal total
            total = total + w

        inner(v)
        return v

    return middle(x) + total


def defined_again_otherwise(x):
    s, t = x, 1.0

    def bump(v):
        nonlocal s
        s = s + v * t  # (t read, as the enclosing function has it)

    bump(x)

    def bump(v):  # noqa: F811
        nonlocal t
        t = t * v + s

    bump(x)
    bump(2.0 * x)
    return s * t


def redefined_plain(x):
    s = x

    def bump(v):
        nonlocal s
        s = s * v

    bump(x)

    def bump(v):  # noqa: F811 (a plain function now: it reads s, rebinds nothing)
        return v + s

    r = bump(3.0)
    return r * s


def test_a_function_defined_again_rebinding_other_variables():
    """Each definition takes and gives back the variables either declares nonlocal (one
    declaring none gives them back as they were)."""
    check_grads(defined_again_otherwise, (0.7,), modes=("rev", "fwd"), order=2)
    check_grads(redefined_plain, (0.7,), modes=("rev", "fwd"), order=2)
    assert wengert.value_and_grad(defined_again_otherwise)(0.7)[0] == \
        defined_again_otherwise(0.7)


def defined_again_with_a_local(x):
    s, t = x, 1.0

    def bump(v):
        nonlocal s
        s = s + v

    bump(x)

    def bump(v):  # noqa: F811
        s = v * 2.0  # (its own s: the other's nonlocal)
        return s

    bump(x)
    return s * t


def assigned_over(x):
    s = x

    def bump(v):
        nonlocal s
        s = s + v

    bump(x)
    bump = abs
    return bump(s)


@pytest.mark.parametrize(("f", "caret", "words"), [
    (defined_again_with_a_local, "def bump", "a local variable another one declares"),
    (assigned_over, "bump = abs", "is assigned here"),
    (passed_on, "add", "other than called as a statement"),
    (called_in_an_expression, "add", "other than called as a statement"),
    (called_by_another, "add", "other than called as a statement"),
    (outer_variable, "def inner", "names a variable of a function around"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_other_uses_are_refused_at_the_line(f, caret, words):
    with pytest.raises(wengert.UnsupportedSyntaxError, match=words) as info:
        wengert.grad(f)(0.7)
    loc = info.value.loc
    assert loc is not None and loc.source_line[loc.col:].startswith(caret), loc
