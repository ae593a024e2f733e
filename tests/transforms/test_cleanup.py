"""Cleanup (forwarding + dead code elimination) keeps behaviour and leaves verifiable IR."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import wengert  # noqa: F401  (registers the built-in rules: purity comes from them)
from wengert.codegen.emit import generate
from wengert.frontend.lower import FunctionLowering
from wengert.frontend.source import Resolver, get_source
from wengert.ir import (
    Call,
    Const,
    For,
    Function,
    If,
    MakeFunction,
    Region,
    Return,
    Signature,
    Value,
    While,
    Yield,
    verify,
    walk,
)
from wengert.ir.builder import Builder
from wengert.rules import shapes
from wengert.testing import check_grads
from wengert.transforms.cleanup import cleanup, dce, forward_trivial


def raw_lowering(f) -> Function:
    """The frontend's output before cleanup."""
    return FunctionLowering(get_source(f), Resolver(f)).lower_function()


def cleaned(f) -> Function:
    fn = raw_lowering(f)
    verify(fn)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    return fn


def make(params: list[str], build) -> Function:
    args = [Value(p) for p in params]
    b = Builder(Region(list(args)))
    b.emit(Return(build(b, *args)))
    return Function("f", Signature(args=list(params)), b.region)


def ops_of(fn: Function, kind: type) -> list:
    return [op for op in walk(fn.body) if isinstance(op, kind)]


def callees(fn: Function) -> list:
    consts = {op.result.id: op.value for op in ops_of(fn, Const)}
    return [consts.get(op.fn.id) for op in ops_of(fn, Call)]


def for_loop(b: Builder, xs: Value, inits: list[Value], hints: str, step) -> For:
    """``for i in xs`` carrying ``inits`` (named ``hints``); ``step(b, i, *carried)`` yields."""
    item = b.value("i")
    carried = [b.value(h) for h in hints.split()]
    body = Region([item, *carried])
    with b.at(body):
        b.emit(Yield(list(step(b, item, *carried))))
    return b.emit(For(xs, list(inits), body, [b.value(h) for h in hints.split()]))


# --------------------------------------------------------------------------- dead code


def test_unused_pure_op_is_removed():
    def build(b: Builder, x: Value) -> Value:
        b.call(operator.mul, x, x, hint="dead")
        return x

    fn = make(["x"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    assert ops_of(fn, Call) == []
    assert ops_of(fn, Const) == []  # the callee constant died with its call


def test_chain_of_dead_pure_ops_is_removed():
    def unused(x):
        a = x * 2.0
        b = a + 1.0
        c = -b  # noqa: F841
        return x

    fn = cleaned(unused)
    assert ops_of(fn, Call) == []


def test_unused_impure_call_is_kept():
    def noisy(x):
        print(x)
        y = x * 3.0  # noqa: F841
        return x

    fn = cleaned(noisy)
    assert callees(fn) == [print]


def test_unused_call_of_unknown_function_is_kept():
    calls = []

    def effect(v):
        calls.append(v)
        return v

    def uses_helper(x):
        effect(x)
        return x

    fn = cleaned(uses_helper)
    assert effect in callees(fn)
    generate(fn)[0](5)
    assert calls == [5]


def test_impure_call_inside_a_branch_keeps_the_branch_and_its_condition():
    def branchy(x):
        if x > 0:
            print("positive")
        return x

    fn = cleaned(branchy)
    assert len(ops_of(fn, If)) == 1
    assert print in callees(fn) and operator.gt in callees(fn)


def test_mutation_of_an_unused_container_is_kept():
    def mutate(xs):
        ys = xs
        ys[0] = 1.0
        return 2.0

    xs = [0.0]
    fn = cleaned(mutate)
    generate(fn)[0](xs)
    assert xs == [1.0]


def test_unused_if_result_is_removed():
    def build(b: Builder, x: Value, c: Value) -> Value:
        then, orelse = Region(), Region()
        with b.at(then):
            b.emit(Yield([b.call(operator.neg, x), b.call(operator.pos, x)]))
        with b.at(orelse):
            b.emit(Yield([x, x]))
        op = b.emit(If(c, then, orelse, [b.value("used"), b.value("unused")]))
        return op.results[0]

    fn = make(["x", "c"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    (op,) = ops_of(fn, If)
    assert [r.hint for r in op.results] == ["used"]
    assert len(op.then.terminator.values) == len(op.orelse.terminator.values) == 1
    assert operator.pos not in callees(fn)  # only fed the dead result
    assert operator.neg in callees(fn)


def test_if_with_no_used_results_and_no_effects_is_removed():
    def pointless(x):
        if x > 0:
            y = x * 2.0
        else:
            y = x  # noqa: F841
        return x

    fn = cleaned(pointless)
    assert ops_of(fn, If) == []


def test_unused_loop_carried_slot_is_removed():
    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = for_loop(b, xs, [x, x], "s junk", lambda b, i, s, junk: (
            b.call(operator.add, s, i), b.call(operator.mul, junk, i)))
        return loop.results[0]

    fn = make(["x", "xs"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    (loop,) = ops_of(fn, For)
    assert len(loop.inits) == len(loop.results) == len(loop.carried_args) == 1
    assert operator.mul not in callees(fn)
    assert generate(fn)[0](1.0, [1.0, 2.0]) == 4.0


def test_slot_feeding_a_live_slot_is_kept():
    # s depends on t through the loop, so t stays although nothing reads it after the loop.
    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = for_loop(b, xs, [x, x], "s t", lambda b, i, s, t: (
            b.call(operator.add, s, t), b.call(operator.mul, t, i)))
        return loop.results[0]

    fn = make(["x", "xs"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    (loop,) = ops_of(fn, For)
    assert len(loop.results) == 2
    # s, t = 1, 1 -> (2, 2) -> (4, 6)
    assert generate(fn)[0](1, [2, 3]) == 4


def test_loop_with_nothing_used_and_no_effects_is_removed():
    def busy(x, n):
        s = x
        for _ in range(n):
            s = s * 2.0
        return x

    fn = cleaned(busy)
    assert ops_of(fn, For) == []


def test_loop_over_an_iterator_used_afterwards_is_kept():
    # Iterating consumes the iterator: dropping the loop changes what is left in it.
    def consume(xs):
        it = iter(xs)
        for x in it:
            if x > 2:
                break
        return list(it)

    compiled = generate(cleaned(consume))[0]
    assert consume([1, 3, 5]) == [5]
    assert compiled([1, 3, 5]) == [5]


def test_loop_over_a_non_iterable_still_raises():
    def bad(n):
        for _ in n:
            pass
        return 1

    compiled = generate(cleaned(bad))[0]
    with pytest.raises(TypeError):
        compiled(5)


def test_while_loop_is_never_removed():
    def spin(n):
        i = 0
        while i < n:
            i = i + 1
        return n

    fn = cleaned(spin)
    assert len(ops_of(fn, While)) == 1


def test_while_loop_built_by_hand_survives_dce():
    def build(b: Builder, x: Value) -> Value:
        k = b.value("k")
        cond, body = Region(), Region()
        with b.at(cond):
            b.emit(Yield([b.call(operator.lt, k, x)]))
        with b.at(body):
            one = b.const(1)
            b.emit(Yield([b.call(operator.add, k, one)]))
        zero = b.const(0)
        b.emit(While([zero], [k], cond, body, [b.value("k")]))
        return x

    fn = make(["x"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    (loop,) = ops_of(fn, While)
    assert len(loop.results) == 1  # the condition reads k, so its slot lives


# --------------------------------------------------------------------------- forwarding


def test_loop_slot_yielding_its_own_argument_is_forwarded_to_the_init():
    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = for_loop(b, xs, [x, x], "s same", lambda b, i, s, same: (
            b.call(operator.add, s, same), same))
        return b.call(operator.mul, loop.results[0], loop.results[1])

    fn = make(["x", "xs"], build)
    x = fn.body.args[0]
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    (loop,) = ops_of(fn, For)
    assert [a.hint for a in loop.carried_args] == ["s"]
    # The invariant value is read from before the loop, inside it and after it.
    inner_add, outer_mul = ops_of(fn, Call)
    assert inner_add.args[1] is x
    assert outer_mul.args == [loop.results[0], x]


def test_loop_slot_yielding_its_init_is_forwarded():
    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = for_loop(b, xs, [x], "s", lambda b, i, s: (x,))
        return loop.results[0]

    fn = make(["x", "xs"], build)
    x = fn.body.args[0]
    assert forward_trivial(fn)
    dce(fn, drop_pure_calls=True)
    verify(fn)
    assert fn.body.terminator.value is x
    # The loop itself stays (iterating ``xs`` may have effects) but carries nothing.
    (loop,) = ops_of(fn, For)
    assert loop.inits == [] and loop.results == []


def test_if_yielding_the_same_value_in_both_arms_is_forwarded():
    def build(b: Builder, x: Value, c: Value) -> Value:
        then, orelse = Region([], [Yield([x])]), Region([], [Yield([x])])
        return b.emit(If(c, then, orelse, [b.value("r")])).result

    fn = make(["x", "c"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    assert fn.body.terminator.value is fn.body.args[0]
    assert ops_of(fn, If) == []


# --------------------------------------------------------------------------- exit flags


def find(xs):
    junk = 0
    found = None
    for x in xs:
        junk = junk + 1
        if x > 2:
            found = x
            break
    return found


def test_exit_flag_survives_when_other_slots_are_removed():
    fn = cleaned(find)
    (loop,) = ops_of(fn, For)
    assert len(loop.exit_flags) == 1
    (k,) = loop.exit_flags
    assert 0 <= k < len(loop.results)
    assert loop.carried_args[k].hint == "break"
    assert all(a.hint != "junk" for a in loop.carried_args)
    compiled = generate(fn)[0]
    for xs in ([1, 3, 5], [], [1, 2], [5, 1]):
        assert compiled(xs) == find(xs)


def test_exit_flag_of_an_otherwise_empty_loop_survives():
    def first_big(xs):
        for x in xs:
            if x > 2:
                print("big")
                break
        return 0

    fn = cleaned(first_big)
    (loop,) = ops_of(fn, For)
    assert loop.exit_flags == [0]
    assert loop.carried_args[0].hint == "break"


def test_early_return_in_a_loop_keeps_its_flag():
    def early(xs):
        for x in xs:
            if x < 0:
                return x
        return None

    fn = cleaned(early)
    (loop,) = ops_of(fn, For)
    assert loop.exit_flags
    compiled = generate(fn)[0]
    assert compiled([1, -2, -3]) == -2 and compiled([1]) is None


# --------------------------------------------------------------------------- whole functions


def nested(x, n):
    scale = x * 2.0
    unused = x * 3.0  # noqa: F841

    def inner(y):
        dead = y * 5.0  # noqa: F841
        return y * scale

    acc = 0.0
    for i in range(n):
        acc = acc + inner(i)
    return acc


def state_machine(xs):
    total = 0
    state = 0
    count = 0
    for x in xs:
        count += 1
        if state == 0:
            if x < 0:
                continue
            state = 1
            total += x
        elif x == 0:
            break
        else:
            total -= x
    else:
        total += 100
    return total


@pytest.mark.parametrize("f, inputs", [
    (nested, [(1.0, 3), (2.0, 0)]),
    (state_machine, [([],), ([-1, 2, 3],), ([1, 0, 5],), ([1, 2, 0],)]),
    (find, [([1, 2, 3],), ([],)]),
])
def test_cleanup_keeps_behaviour_and_verifies(f, inputs):
    fn = cleaned(f)
    compiled = generate(fn)[0]
    for args in inputs:
        assert compiled(*args) == f(*args)


def test_nested_function_body_is_cleaned_and_its_captures_kept():
    fn = cleaned(nested)
    (mk,) = ops_of(fn, MakeFunction)
    inner_muls = [c for c in callees(mk.func) if c is operator.mul]
    assert len(inner_muls) == 1  # ``dead = y * 5.0`` is gone, ``y * scale`` stays
    outer_calls = [op for op in fn.body.ops if isinstance(op, Call)]
    assert len(outer_calls) == 2  # range(n) and scale = x * 2.0; unused is gone


def test_cleanup_reaches_a_fixed_point():
    for f in (nested, state_machine, find):
        fn = cleaned(f)
        assert not forward_trivial(fn)
        assert not dce(fn, drop_pure_calls=True)


def test_unused_user_division_is_kept_by_default():
    # An unused ``1 / x`` still raises ZeroDivisionError in the user's program.
    def build(b: Builder, x: Value) -> Value:
        one = b.const(1.0)
        b.call(operator.truediv, one, x)
        return x

    fn = make(["x"], build)
    dce(fn)
    assert len(ops_of(fn, Call)) == 1
    dce(fn, drop_pure_calls=True)
    assert ops_of(fn, Call) == []


# ------------------------------------------------------------------ sums of products


def _fused(fn: Function) -> list:
    return [c for c in callees(fn) if c is shapes.mul_sum_to]


def test_a_product_summed_to_a_shape_is_one_fused_sum():
    def build(b: Builder, g: Value, x: Value, s: Value, full: Value) -> Value:
        two = b.const(2.0)
        scaled = b.call(operator.mul, two, x)
        prod = b.call(operator.mul, g, scaled)
        return b.call(shapes.sum_to, b.call(operator.neg, prod), s, full)

    fn = make(["g", "x", "s", "full"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    assert len(_fused(fn)) == 1
    # The constant and the negation now apply to the (smaller) sum, not to the product.
    assert callees(fn).count(operator.mul) == 1 and operator.neg in callees(fn)
    rng = np.random.default_rng(0)
    g, x = rng.normal(size=(5, 3, 1)), rng.normal(size=(5, 3, 4))
    got = generate(fn)[0](g, x, (3, 4), (5, 3, 4))
    np.testing.assert_allclose(got, -np.sum(g * 2.0 * x, axis=0))


def test_a_sum_of_a_sum_is_one_sum():
    def build(b: Builder, t: Value, s1: Value, f1: Value, s2: Value) -> Value:
        inner = b.call(shapes.sum_to, t, s1, f1)
        return b.call(shapes.sum_to, inner, s2, s1)

    fn = make(["t", "s1", "f1", "s2"], build)
    cleanup(fn, drop_pure_calls=True)
    assert callees(fn).count(shapes.sum_to) == 1
    t = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(generate(fn)[0](t, (3, 4), (2, 3, 4), (1, 4)),
                               t.sum(axis=(0, 1)).reshape(1, 4))


def test_a_product_made_outside_a_loop_is_not_summed_inside_it():
    # Folding the product into a sum inside the loop would make it once per iteration.
    def build(b: Builder, g: Value, x: Value, xs: Value, s: Value, full: Value) -> Value:
        prod = b.call(operator.mul, g, x)
        loop = for_loop(b, xs, [g], "acc", lambda b, i, acc: (
            b.call(operator.add, acc, b.call(shapes.sum_to, prod, s, full)),))
        return loop.results[0]

    fn = make(["g", "x", "xs", "s", "full"], build)
    cleanup(fn, drop_pure_calls=True)
    verify(fn)
    assert _fused(fn) == []
    assert callees(fn).count(operator.mul) == 1
    g, x = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(generate(fn)[0](g, x, [0, 1], (3,), (2, 3)),
                               g + 2 * (g * x).sum(axis=0))


def test_a_product_read_twice_is_kept():
    def build(b: Builder, g: Value, x: Value, s: Value, full: Value) -> Value:
        prod = b.call(operator.mul, g, x)
        total = b.call(shapes.sum_to, prod, s, full)
        return b.tuple(total, prod)

    fn = make(["g", "x", "s", "full"], build)
    cleanup(fn, drop_pure_calls=True)
    assert _fused(fn) == [] and callees(fn).count(operator.mul) == 1


def test_equal_arithmetic_on_the_same_values_is_made_once():
    """``y * y``'s two adjoint terms are one product in the pullback; a write between two
    equal products keeps both (the second may read a changed array)."""
    from wengert import api

    def square_sum(y):
        return np.sum(y * y)

    text = api.show(square_sum, mode="vjp", like=(np.ones(3),))
    pullback = [line for line in text[text.index("def square_sum_pullback"):].splitlines()
                if not line.strip().startswith("#")]
    assert sum(line.count(" * y") for line in pullback) == 1, pullback
    check_grads(square_sum, (np.array([0.5, -1.0, 2.0]),), modes=("rev", "fwd"), order=2)

    def written_between(x):
        z = x * 1.0
        y = z * z
        z[0] = 3.0
        return np.sum(y * z) + np.sum(z * z)

    x = np.array([0.5, -1.0, 2.0])
    check_grads(written_between, (x,), modes=("rev", "fwd"), order=2)

    def written_after(x, c):
        y = x * c
        z = x * c  # equal to y, but its own array: y is written next
        y[0] = 0.0
        return np.sum(z * z * z) + np.sum(y * y)

    # The Hessian's code is the gradient's, cleaned as generated code: z made as y's alias
    # lost its first entry (0 where 6 c^3 x_0 = 48).
    hessian = api.hessian(written_after)(x, 2.0)
    assert np.allclose(hessian, np.diag(48.0 * x + np.array([0.0, 8.0, 8.0])))
    check_grads(written_after, (x, 2.0), modes=("rev", "fwd"), order=2)
