"""The IR builder: where ops go, which location they carry, what the helpers emit."""

from __future__ import annotations

import operator

import pytest

from wengert.diagnostics import SourceLoc
from wengert.ir import Build, Call, Const, GetAttr, GetItem, Region, Value
from wengert.ir.builder import Builder

HERE = SourceLoc("f.py", 3, 4, 3, 9)
THERE = SourceLoc("f.py", 7, 0)


def test_emit_appends_in_order_and_returns_the_op():
    b = Builder()
    c1 = Const(1, [Value()])
    c2 = Const(2, [Value()])
    assert b.emit(c1) is c1
    assert b.emit(c2) is c2
    assert b.region.ops == [c1, c2]


def test_emit_stamps_the_current_location_on_op_and_results():
    b = Builder()
    b.loc = HERE
    op = b.emit(Const(1, [Value("k")]))
    assert op.loc == HERE
    assert op.result.loc == HERE


def test_emit_keeps_locations_already_set():
    b = Builder()
    b.loc = HERE
    v = Value("k", THERE)
    op = b.emit(Const(1, [v], loc=THERE))
    assert op.loc == THERE
    assert v.loc == THERE


def test_result_without_location_gets_the_ops_location():
    b = Builder()
    b.loc = HERE
    v = Value("k")
    b.emit(Const(1, [v], loc=THERE))
    assert v.loc == THERE


def test_at_fills_another_region_then_returns():
    outer = Region()
    inner = Region()
    b = Builder(outer)
    with b.at(inner) as r:
        assert r is inner
        b.const(1)
    b.const(2)
    assert [op.value for op in inner.ops] == [1]
    assert [op.value for op in outer.ops] == [2]


def test_at_restores_the_region_after_an_exception():
    outer = Region()
    b = Builder(outer)
    with pytest.raises(RuntimeError), b.at(Region()):
        raise RuntimeError
    assert b.region is outer


def test_const_records_value_origin_and_hint():
    b = Builder()
    v = b.const(operator.mul, origin="operator.mul", hint="m")
    (op,) = b.region.ops
    assert isinstance(op, Const)
    assert op.value is operator.mul and op.origin == "operator.mul"
    assert op.result is v and v.hint == "m"


def test_call_wraps_a_python_callable_in_a_constant_emitted_first():
    b = Builder()
    x = Value("x")
    y = b.call(operator.neg, x, hint="y", origin="operator.neg")
    const, call = b.region.ops
    assert isinstance(const, Const) and const.value is operator.neg
    assert isinstance(call, Call)
    assert call.fn is const.result
    assert call.args == [x] and call.kwargs == []
    assert call.result is y and y.hint == "y"


def test_call_with_a_value_callee_and_keywords():
    b = Builder()
    f, x, k = Value("f"), Value("x"), Value("k")
    b.call(f, x, kwargs=[("key", k), (None, k)])
    (call,) = b.region.ops
    assert isinstance(call, Call) and call.fn is f
    assert call.operands() == [f, x, k, k]


def test_attribute_item_and_tuple_helpers():
    b = Builder()
    o, i = Value("o"), Value("i")
    a = b.getattr(o, "shape", hint="a")
    g = b.getitem(o, i)
    t = b.tuple(a, g, hint="t")
    ga, gi, tu = b.region.ops
    assert isinstance(ga, GetAttr) and ga.obj is o and ga.name == "shape" and ga.result is a
    assert isinstance(gi, GetItem) and gi.operands() == [o, i] and gi.result is g
    assert isinstance(tu, Build) and tu.kind == "tuple" and tu.items == [a, g]
    assert tu.result is t and t.hint == "t"


def test_fresh_values_are_distinct_and_carry_the_location():
    b = Builder()
    b.loc = HERE
    v, w = b.value("v"), b.value("v")
    assert v.id != w.id
    assert v.loc == HERE and v.hint == "v"
