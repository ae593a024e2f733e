"""The verifier accepts well-formed IR and rejects each broken invariant.

Every rejection test starts from IR that verifies and breaks exactly one thing,
so a test cannot pass because the IR was wrong for some other reason.
"""

from __future__ import annotations

import operator

import pytest

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
    VerifyError,
    While,
    Yield,
    verify,
)
from wengert.ir.builder import Builder


def make(params: list[str], build) -> Function:
    """A function whose body ``build(builder, *params)`` fills; it returns the result value."""
    args = [Value(p) for p in params]
    b = Builder(Region(list(args)))
    b.emit(Return(build(b, *args)))
    return Function("f", Signature(args=list(params)), b.region)


def if_fn() -> tuple[Function, If]:
    """``r = x * 2 if c else x``."""
    ops: list[If] = []

    def build(b: Builder, x: Value, c: Value) -> Value:
        then, orelse = Region(), Region()
        with b.at(then):
            two = b.const(2)
            b.emit(Yield([b.call(operator.mul, x, two)]))
        with b.at(orelse):
            b.emit(Yield([x]))
        op = If(c, then, orelse, [b.value("r")])
        ops.append(op)
        return b.emit(op).result

    return make(["x", "c"], build), ops[0]


def for_fn(break_flag: bool = False) -> tuple[Function, For]:
    """``s = x; for i in xs: s = s + i`` (optionally with a carried break flag)."""
    ops: list[For] = []

    def build(b: Builder, x: Value, xs: Value) -> Value:
        item, s = b.value("i"), b.value("s")
        carried, inits = [s], [x]
        if break_flag:
            brk = b.value("break")
            carried.append(brk)
            inits.append(b.const(False))
        body = Region([item, *carried])
        with b.at(body):
            nxt = b.call(operator.add, s, item, hint="s")
            ys = [nxt]
            if break_flag:
                ys.append(b.call(operator.gt, nxt, x))
            b.emit(Yield(ys))
        op = For(xs, inits, body, [b.value("s")] + ([b.value("break")] if break_flag else []),
                 exit_flags=[1] if break_flag else [])
        ops.append(op)
        b.emit(op)
        return op.results[0]

    return make(["x", "xs"], build), ops[0]


def while_fn() -> tuple[Function, While]:
    """``i = x; while i < n: i = i + 1``."""
    ops: list[While] = []

    def build(b: Builder, x: Value, n: Value) -> Value:
        i = b.value("i")
        cond, body = Region(), Region()
        with b.at(cond):
            b.emit(Yield([b.call(operator.lt, i, n)]))
        with b.at(body):
            one = b.const(1)
            b.emit(Yield([b.call(operator.add, i, one, hint="i")]))
        op = While([x], [i], cond, body, [b.value("i")])
        ops.append(op)
        return b.emit(op).result

    return make(["x", "n"], build), ops[0]


# --------------------------------------------------------------------------- accepted


def test_accepts_well_formed_functions():
    for fn, _ in (if_fn(), for_fn(), for_fn(break_flag=True), while_fn()):
        verify(fn)


def test_accepts_nested_function_reading_an_outer_value_defined_before_it():
    def build(b: Builder, x: Value) -> Value:
        inner = Function("g", Signature(), Region([], [Return(x)]))
        return b.emit(MakeFunction(inner, [], [], [b.value("g")])).result

    verify(make(["x"], build))


def test_accepts_values_defined_outside_and_used_in_both_branches():
    fn, op = if_fn()
    op.orelse.ops[-1].values = [op.cond]  # the condition is visible in both arms
    verify(fn)


# --------------------------------------------------------------------------- rejected


def test_rejects_use_before_definition():
    fn, op = if_fn()
    verify(fn)
    then = op.then.ops
    # Move the constant ``2`` after the call that reads it.
    two = then.pop(0)
    assert isinstance(two, Const) and two.value == 2
    then.insert(len(then) - 1, two)
    with pytest.raises(VerifyError, match="dominate"):
        verify(fn)


def test_rejects_use_of_a_value_defined_later_in_the_function():
    x = Value("x")
    later = Value("later")
    body = Region([x], [])
    b = Builder(body)
    b.call(operator.neg, later)
    b.emit(Const(1.0, [later]))
    b.emit(Return(x))
    with pytest.raises(VerifyError):
        verify(Function("f", Signature(args=["x"]), body))


def test_rejects_a_value_defined_twice():
    fn, op = if_fn()
    verify(fn)
    # The constant in the then-branch redefines the function's parameter.
    op.then.ops[0].results = [fn.body.args[0]]
    with pytest.raises(VerifyError, match="twice"):
        verify(fn)


def test_rejects_a_value_defined_in_both_branches():
    fn, op = if_fn()
    shared = op.then.ops[0].result
    op.orelse.ops.insert(0, Const(3, [shared]))
    with pytest.raises(VerifyError, match="twice"):
        verify(fn)


@pytest.mark.parametrize("arm", ["then", "orelse"])
def test_rejects_yield_count_different_from_if_results(arm):
    fn, op = if_fn()
    verify(fn)
    term = getattr(op, arm).ops[-1]
    term.values = term.values * 2
    with pytest.raises(VerifyError, match="yields 2 values, expected 1"):
        verify(fn)


def test_rejects_if_with_more_results_than_yields():
    fn, op = if_fn()
    op.results.append(Value("extra"))
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_missing_function_terminator():
    fn, _ = if_fn()
    fn.body.ops.pop()
    with pytest.raises(VerifyError, match="must end with Return"):
        verify(fn)


def test_rejects_empty_region():
    fn, op = if_fn()
    op.orelse.ops.clear()
    with pytest.raises(VerifyError, match="must end with Yield"):
        verify(fn)


def test_rejects_return_terminating_a_branch():
    fn, op = if_fn()
    op.orelse.ops[-1] = Return(fn.body.args[0])
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_terminator_in_the_middle_of_a_region():
    fn, op = if_fn()
    x = fn.body.args[0]
    op.then.ops.insert(0, Yield([x]))
    with pytest.raises(VerifyError, match="middle"):
        verify(fn)


def test_rejects_return_in_the_middle_of_the_body():
    fn, _ = if_fn()
    fn.body.ops.insert(0, Return(fn.body.args[0]))
    with pytest.raises(VerifyError, match="middle"):
        verify(fn)


def test_rejects_for_with_an_extra_body_argument():
    fn, op = for_fn()
    verify(fn)
    op.body.args.append(Value("stray"))
    with pytest.raises(VerifyError, match="for"):
        verify(fn)


def test_rejects_for_with_a_missing_body_argument():
    fn, op = for_fn()
    op.body.args.pop()
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_for_whose_body_yields_too_few_carried_values():
    fn, op = for_fn(break_flag=True)
    verify(fn)
    op.body.ops[-1].values.pop()
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_while_with_args_on_its_regions():
    fn, op = while_fn()
    verify(fn)
    op.body.args.append(Value("stray"))
    with pytest.raises(VerifyError, match="while"):
        verify(fn)


def test_rejects_while_condition_yielding_two_values():
    fn, op = while_fn()
    cond = op.cond.ops[-1]
    cond.values = cond.values * 2
    with pytest.raises(VerifyError):
        verify(fn)


@pytest.mark.parametrize("flag", [2, -1])
def test_rejects_for_exit_flag_out_of_range(flag):
    fn, op = for_fn(break_flag=True)
    verify(fn)
    op.exit_flags = [flag]
    with pytest.raises(VerifyError, match="exit flag"):
        verify(fn)


def test_rejects_while_exit_flag_out_of_range():
    fn, op = while_fn()
    op.exit_flags = [1]
    with pytest.raises(VerifyError, match="exit flag"):
        verify(fn)


def test_rejects_use_of_a_value_from_the_sibling_branch():
    fn, op = if_fn()
    verify(fn)
    # The else-branch yields the product computed in the then-branch.
    product = op.then.ops[-2].result
    op.orelse.ops[-1].values = [product]
    with pytest.raises(VerifyError, match="dominate"):
        verify(fn)


def test_rejects_use_of_a_region_value_after_the_region():
    fn, op = if_fn()
    product = op.then.ops[-2].result
    fn.body.ops[-1] = Return(product)
    with pytest.raises(VerifyError, match="dominate"):
        verify(fn)


def test_rejects_use_of_a_loop_body_value_after_the_loop():
    fn, op = for_fn()
    (inside,) = [o.result for o in op.body.ops if isinstance(o, Call)]  # private to the body
    fn.body.ops[-1] = Return(inside)
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_an_if_result_used_inside_its_own_branch():
    fn, op = if_fn()
    op.orelse.ops[-1].values = [op.result]
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_if_region_with_arguments():
    # An ``If`` region is entered without arguments: a value "defined" as one is never
    # bound, so reading it is a use of an undefined value.
    fn, op = if_fn()
    verify(fn)
    unbound = Value("unbound")
    op.orelse.args.append(unbound)
    op.orelse.ops[-1].values = [unbound]
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_nested_function_reading_an_outer_value_defined_after_it():
    def build(b: Builder, x: Value) -> Value:
        later = Value("later")
        inner = Function("g", Signature(), Region([], [Return(later)]))
        g = b.emit(MakeFunction(inner, [], [], [b.value("g")])).result
        b.emit(Const(1.0, [later]))
        return g

    with pytest.raises(VerifyError):
        verify(make(["x"], build))


def test_rejects_signature_and_parameters_disagreeing():
    fn, _ = if_fn()
    fn.signature.args.append("extra")
    with pytest.raises(VerifyError):
        verify(fn)


def test_rejects_an_operand_that_is_not_a_value():
    fn, op = if_fn()
    call = op.then.ops[-2]
    assert isinstance(call, Call)
    call.args[1] = 2  # a raw Python object instead of a constant op
    with pytest.raises(VerifyError, match="not a Value"):
        verify(fn)
