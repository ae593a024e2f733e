"""The IR printer: deterministic, renumbered per function, unambiguous, total over op kinds."""

from __future__ import annotations

import math
import operator
import re

import wengert  # noqa: F401  (registers the built-in rules)
from wengert.driver.pipeline import lower
from wengert.ir import (
    Build,
    BuildDict,
    BuildSlice,
    Call,
    Const,
    For,
    FormatValue,
    Function,
    GetAttr,
    GetItem,
    If,
    JoinStr,
    MakeFunction,
    Op,
    Raise,
    Region,
    Return,
    SetAttr,
    SetItem,
    Signature,
    Unpack,
    Value,
    While,
    With,
    Yield,
    print_function,
    verify,
    walk,
)
from wengert.ir.builder import Builder

NAME = re.compile(r"%(?:[A-Za-z_]\w*\.)?\d+")


def sample(x, n):
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    k = 0
    while k < n and s > 0:
        k += 1
    return s, k


def test_printing_twice_gives_the_same_text():
    fn = lower(sample)
    assert print_function(fn) == print_function(fn)


def test_separately_lowered_copies_print_identically():
    a, b = lower(sample), lower(sample)
    # Different Value objects with different ids ...
    assert {v.id for v in a.body.args}.isdisjoint(v.id for v in b.body.args)
    # ... but the same text.
    assert print_function(a) == print_function(b)


def test_numbering_starts_from_zero_for_every_function():
    def other(y):
        return y * 2.0

    first = print_function(lower(sample))
    for _ in range(3):
        Value("burn")  # advance the global id counter
    second = print_function(lower(other))
    for text in (first, second):
        numbers = [int(re.search(r"\d+$", m).group()) for m in NAME.findall(text)]
        assert numbers[0] == 0
        # Numbers are dense: 0 .. N-1, whatever ids the values had.
        assert sorted(set(numbers)) == list(range(len(set(numbers))))


def test_distinct_values_get_distinct_names():
    # A hint ending in a digit must not make one value's name look like another's:
    # hint "x1" numbered 0 and hint "x" numbered 10 would both read "%x10".
    hints = ["x1", "a", "b", "c", "d", "e", "g", "h", "i", "j", "x"]
    args = [Value(h) for h in hints]
    add = Value()
    total = Value("total")
    body = Region(list(args), [Const(operator.add, [add]),
                               Call(add, [args[0], args[-1]], [], [total]),
                               Return(total)])
    fn = Function("f", Signature(args=hints), body)
    verify(fn)
    header = print_function(fn).splitlines()[0]
    params = header[header.index("(") + 1:header.index(")")].split(", ")
    assert len(params) == len(set(params)), header


def all_ops_function() -> Function:
    """One function containing every kind of op."""
    names = ["x", "xs", "d", "obj", "mgr"]
    x, xs, d, obj, mgr = params = [Value(p) for p in names]
    b = Builder(Region(list(params)))
    one = b.const(1)
    add = b.const(operator.add, origin="operator.add")
    s = b.emit(Call(add, [x, one, xs], [("k", x), (None, d)], [b.value("s")],
                    starred=(2,))).result
    b.emit(GetAttr(obj, "attr", [b.value("a")]))
    b.emit(SetAttr(obj, "attr", s))
    b.emit(GetItem(xs, one, [b.value("g")]))
    sl = b.emit(BuildSlice(one, None, None, [b.value()])).result
    b.emit(SetItem(xs, sl, xs))
    t = b.emit(Build("tuple", [x, xs], [b.value("t")], starred=(1,))).result
    b.emit(Build("list", [x], [b.value("lst")]))
    b.emit(Build("set", [x], [b.value("st")]))
    b.emit(BuildDict([one, None], [x, d], [b.value("dd")]))
    b.emit(Unpack(t, [b.value("u"), b.value("rest")], star=1))
    spec = b.const(".2f")
    fv = b.emit(FormatValue(x, ord("r"), spec, [b.value()])).result
    b.emit(JoinStr([fv, spec], [b.value("js")]))
    inner = Function("inner", Signature(args=["y"]), Region([Value("y")]))
    inner.body.ops.append(Return(x))
    b.emit(MakeFunction(inner, [one], [], [b.value("inner")]))
    lam = Function("<lambda>", Signature(), Region([], [Return(one)]))
    b.emit(MakeFunction(lam, [], [], [b.value("lam")], is_lambda=True))
    # if x: raise ValueError from x (and yield x) else: yield 1
    then, orelse = Region(), Region()
    with b.at(then):
        err = b.const(ValueError, origin="ValueError")
        b.emit(Raise(err, x))
        b.emit(Yield([x]))
    with b.at(orelse):
        b.emit(Yield([one]))
    r = b.emit(If(x, then, orelse, [b.value("r")])).result
    # for i in xs with carried (acc, brk), exit when brk
    item, acc, brk = b.value("i"), b.value("acc"), b.value("break")
    body = Region([item, acc, brk])
    with b.at(body):
        b.emit(Yield([b.call(operator.add, acc, item), b.call(operator.gt, acc, x)]))
    no = b.const(False)
    loop = b.emit(For(xs, [r, no], body, [b.value("acc"), b.value("break")], [1]))
    # while k < x: k = k + 1
    k = b.value("k")
    cond, wbody = Region(), Region()
    with b.at(cond):
        b.emit(Yield([b.call(operator.lt, k, x)]))
    with b.at(wbody):
        b.emit(Yield([b.call(operator.add, k, one)]))
    b.emit(While([loop.results[0]], [k], cond, wbody, [b.value("k")]))
    # with mgr as m: yield m
    m = b.value("m")
    wb = Region([m], [Yield([m])])
    w = b.emit(With(mgr, [mgr], wb, [b.value("w")])).result
    b.emit(Return(w))
    return Function("every_op", Signature(args=names), b.region)


def test_every_op_kind_prints():
    fn = all_ops_function()
    verify(fn)
    kinds = {type(op) for op in walk(fn.body)}
    assert kinds == set(Op.__subclasses__()), "the sample must contain every op kind"
    text = print_function(fn)
    for word in ("const", "call", "getattr", "setattr", "getitem", "setitem", "slice",
                 "tuple", "list", "set", "dict", "unpack", "format", "joinstr", "raise",
                 "def", "lambda", "if", "else", "for", "while", "with", "yield", "return",
                 "exit_if"):
        assert re.search(rf"\b{word}\b", text), word
    # Call details: starred argument, keyword argument and **mapping.
    assert re.search(r"call %\d+\(%x\.0, %\d+, \*%xs\.1, k=%x\.0, \*\*%d\.2\)", text), text
    # The nested function's body is printed with its own parameter.
    assert "func inner(%y" in text


def test_every_value_is_printed_with_a_name():
    fn = all_ops_function()
    text = print_function(fn)
    names = set(NAME.findall(text))
    values = set()
    for op in walk(fn.body):
        values.update(v.id for v in op.results)
        for r in op.regions():
            values.update(v.id for v in r.args)
        if isinstance(op, While):
            values.update(v.id for v in op.args)
    values.update(v.id for v in fn.body.args)
    assert len(names) == len(values)


def test_nested_regions_are_indented_under_their_op():
    lines = print_function(lower(sample)).splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith("{"):
            depth = len(line) - len(line.lstrip())
            nxt = lines[i + 1]
            assert len(nxt) - len(nxt.lstrip()) > depth, (line, nxt)
