"""``transforms/function_joins.py``: an ``if`` choosing between functions, the rest of its
block copied into each branch, so a closure over values being differentiated reaches the
helpers it is passed to as a function known where it is called."""

from __future__ import annotations

import math

import pytest
from corpus import trapezoid as integrate

import wengert
from wengert.frontend import lower
from wengert.ir import nodes as n
from wengert.testing import check_grads
from wengert.transforms.function_joins import split_function_joins


def descend(f, df, x):
    for _ in range(30):
        x = x - 0.1 * df(x)
    return x


def ascend(f, df, start):
    return descend(lambda x: -f(x), lambda x: -df(x), start)


def saddle_value(p1, p2):
    return p1 * p1 - p2 * p2


def saddle(p1, mode):
    # (the classic nested-optimisation benchmark: one slope per mode, chosen by a branch)
    if mode == "r":
        def slope(p2):
            return wengert.grad(saddle_value, argnums=1)(p1, p2)
    else:
        def slope(p2):
            return wengert.jvp(lambda q: saddle_value(p1, q), (p2,), (1.0,))[1]
    best = ascend(lambda p2: saddle_value(p1, p2), slope, 0.3)
    return saddle_value(p1, best)


def apply_twice(f, v):
    return f(f(v))


def activation_by_sign(x, w):
    if x > 0:
        act = lambda v: math.tanh(w * v)  # noqa: E731  (as users write it)
    else:
        act = lambda v: w * v / (1.0 + abs(v))  # noqa: E731
    return apply_twice(act, x) * w


def chosen_by_flag(x, flag):
    f = math.sin if flag else math.cos
    return integrate(f, 0.0, x) + f(x)


@pytest.mark.parametrize("mode", ["r", "f"])
def test_the_saddle_benchmark_differentiates_in_every_pairing(mode):
    def inner(p):
        return saddle(p, mode)

    check_grads(inner, (1.5,), order=1, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)
    # d/dp1 [p1^2 - best^2], best -> 0: 2 p1
    assert wengert.grad(saddle)(1.5, mode) == pytest.approx(3.0, rel=1e-6)


@pytest.mark.parametrize("f, args", [
    (activation_by_sign, (0.7, 1.3)), (activation_by_sign, (-0.7, 1.3)),
    (lambda x: chosen_by_flag(x, True), (0.9,)), (lambda x: chosen_by_flag(x, False), (0.9,)),
], ids=["closure-positive", "closure-negative", "builtin-sin", "builtin-cos"])
def test_functions_chosen_by_a_branch_and_passed_on_to_second_order(f, args):
    check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_the_rest_of_the_block_is_copied_into_each_branch_and_reads_its_function():
    fn = lower(activation_by_sign)
    assert split_function_joins(fn)
    (branch,) = [op for op in fn.body.ops if isinstance(op, n.If)]
    for region in (branch.then, branch.orelse):
        made = [op for op in region.ops if isinstance(op, n.MakeFunction)]
        calls = [op for op in n.walk(region) if isinstance(op, n.Call)
                 and any(a is made[0].result for a in op.args)]
        assert len(made) == 1 and calls  # ``apply_twice(act, x)`` in each branch, its own act
    assert isinstance(fn.body.ops[-1], n.Return)
    assert not split_function_joins(fn)  # (nothing left to split)


def never_read(x):
    if x > 0:
        f = math.sin  # noqa: F841  (a join nothing after the ``if`` reads)
    else:
        f = math.cos  # noqa: F841
    return x


def test_a_join_nothing_reads_is_left_alone():
    fn = lower(never_read)
    assert not split_function_joins(fn)
