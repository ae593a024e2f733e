"""Liveness over structured regions (the basis of name sharing in generated code)."""

from __future__ import annotations

import operator

from wengert.analysis.liveness import liveness
from wengert.ir import (
    For,
    Function,
    If,
    Op,
    Region,
    Return,
    Signature,
    Value,
    While,
    Yield,
    verify,
)
from wengert.ir.builder import Builder


def make(params: list[str], build) -> Function:
    args = [Value(p) for p in params]
    b = Builder(Region(list(args)))
    b.emit(Return(build(b, *args)))
    fn = Function("f", Signature(args=list(params)), b.region)
    verify(fn)
    return fn


def live_everywhere_in(live, region: Region, v: Value) -> bool:
    """``v`` is live at the region's entry and after each of its ops."""
    return v.id in live.entry(region) and all(v.id in live.after(op) for op in region.ops)


def live_nowhere_in(live, region: Region, v: Value) -> bool:
    return v.id not in live.entry(region) and all(v.id not in live.after(op)
                                                  for op in region.ops)


def counted_loop(b: Builder, xs: Value, init: Value, step) -> For:
    item, s = b.value("i"), b.value("s")
    body = Region([item, s])
    with b.at(body):
        b.emit(Yield([step(b, item, s)]))
    return b.emit(For(xs, [init], body, [b.value("s")]))


# --------------------------------------------------------------------------- loops


def test_value_used_in_a_loop_is_live_throughout_the_body():
    holder: list[For] = []

    def build(b: Builder, x: Value, xs: Value) -> Value:
        zero = b.const(0.0)

        def step(b: Builder, i: Value, s: Value) -> Value:
            t = b.call(operator.mul, x, i)  # x is read first thing ...
            u = b.call(operator.add, s, t)
            return b.call(operator.neg, u)  # ... but must survive to the next iteration

        loop = counted_loop(b, xs, zero, step)
        holder.append(loop)
        return loop.result

    fn = make(["x", "xs"], build)
    live = liveness(fn)
    (loop,) = holder
    x = fn.body.args[0]
    assert live_everywhere_in(live, loop.body, x)
    assert x.id in live.after(fn.body.ops[0])  # and before the loop, from its definition


def test_value_used_after_a_loop_only_is_live_across_it():
    holder: list[For] = []

    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = counted_loop(b, xs, x, lambda b, i, s: b.call(operator.add, s, i))
        holder.append(loop)
        return b.call(operator.mul, loop.result, x)

    fn = make(["x", "xs"], build)
    live = liveness(fn)
    assert live_everywhere_in(live, holder[0].body, fn.body.args[0])


def test_value_dead_after_loop_entry_is_not_live_in_the_body():
    # s = x; for i in xs: s = s + i   -- x is only the initial value of s.
    holder: list[For] = []

    def build(b: Builder, x: Value, xs: Value) -> Value:
        loop = counted_loop(b, xs, x, lambda b, i, s: b.call(operator.add, s, i))
        holder.append(loop)
        return loop.result

    fn = make(["x", "xs"], build)
    live = liveness(fn)
    loop = holder[0]
    assert live_nowhere_in(live, loop.body, fn.body.args[0])
    # The carried value is dead once the body has read it.
    s = loop.carried_args[0]
    assert s.id in live.entry(loop.body)
    assert s.id not in live.after(loop.body.ops[-1])


def test_value_used_in_a_while_condition_is_live_throughout_the_body():
    holder: list[While] = []

    def build(b: Builder, x: Value, n: Value) -> Value:
        k = b.value("k")
        cond, body = Region(), Region()
        with b.at(cond):
            b.emit(Yield([b.call(operator.lt, k, n)]))
        with b.at(body):
            b.emit(Yield([b.call(operator.add, k, x)]))
        zero = b.const(0)
        loop = b.emit(While([zero], [k], cond, body, [b.value("k")]))
        holder.append(loop)
        return loop.result

    fn = make(["x", "n"], build)
    live = liveness(fn)
    loop = holder[0]
    x, n = fn.body.args
    assert live_everywhere_in(live, loop.body, n)  # read by the next test of the condition
    assert live_everywhere_in(live, loop.cond, x)  # read by the next pass of the body
    k = loop.args[0]
    assert k.id in live.entry(loop.cond)


# --------------------------------------------------------------------------- branches


def branch_fn(then_uses_v: bool, after_uses_w: bool) -> tuple[Function, If, Value, Value]:
    """``v = -x; w = +x; r = (v * 2 if c else x); return r [* w]``."""
    holder: list[If] = []
    vw: list[Value] = []

    def build(b: Builder, x: Value, c: Value) -> Value:
        v = b.call(operator.neg, x, hint="v")
        w = b.call(operator.pos, x, hint="w")
        vw.extend([v, w])
        then, orelse = Region(), Region()
        with b.at(then):
            two = b.const(2)
            b.emit(Yield([b.call(operator.mul, v if then_uses_v else x, two)]))
        with b.at(orelse):
            b.emit(Yield([c]))
        op = b.emit(If(c, then, orelse, [b.value("r")]))
        holder.append(op)
        return b.call(operator.mul, op.result, w) if after_uses_w else op.result

    fn = make(["x", "c"], build)
    return fn, holder[0], vw[0], vw[1]


def test_value_used_only_in_the_then_branch_is_not_live_in_the_else_branch():
    fn, op, v, _ = branch_fn(then_uses_v=True, after_uses_w=False)
    live = liveness(fn)
    assert v.id in live.entry(op.then)
    assert live_nowhere_in(live, op.orelse, v)
    assert v.id not in live.after(op)


def test_value_used_after_an_if_is_live_inside_both_branches():
    fn, op, _, w = branch_fn(then_uses_v=True, after_uses_w=True)
    live = liveness(fn)
    assert live_everywhere_in(live, op.then, w)
    assert live_everywhere_in(live, op.orelse, w)
    assert w.id in live.after(op)


def test_value_used_neither_in_nor_after_an_if_is_dead_there():
    fn, op, v, w = branch_fn(then_uses_v=False, after_uses_w=False)
    live = liveness(fn)
    for val in (v, w):
        assert live_nowhere_in(live, op.then, val)
        assert live_nowhere_in(live, op.orelse, val)


def test_value_used_in_one_branch_inside_a_loop_is_live_in_the_other():
    # for i in xs: s = (s * y if i else s)  -- the else-branch must keep y for later passes.
    holder: list[If] = []

    def build(b: Builder, y: Value, xs: Value) -> Value:
        def step(b: Builder, i: Value, s: Value) -> Value:
            then, orelse = Region(), Region()
            with b.at(then):
                b.emit(Yield([b.call(operator.mul, s, y)]))
            with b.at(orelse):
                b.emit(Yield([s]))
            op = b.emit(If(i, then, orelse, [b.value("s")]))
            holder.append(op)
            return op.result

        return counted_loop(b, xs, y, step).result

    fn = make(["y", "xs"], build)
    live = liveness(fn)
    y = fn.body.args[0]
    assert live_everywhere_in(live, holder[0].orelse, y)


def test_results_of_an_op_are_not_live_before_it():
    fn, op, v, w = branch_fn(then_uses_v=True, after_uses_w=True)
    live = liveness(fn)
    ops: list[Op] = fn.body.ops
    i = ops.index(op)
    assert op.result.id not in live.after(ops[i - 1])
    assert op.result.id in live.after(op)
