"""Specialisation of rule bodies on argument types: every built-in rule keeps its values
and derivatives, type tests fold, and the core scalar rules come out branch-free."""

from __future__ import annotations

import abc
import builtins
import contextlib
import copy
import math
import numbers
import operator
import typing
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pytest

import wengert.rules  # noqa: F401  (registers the built-in rules)
from wengert import runtime
from wengert.codegen.emit import generate
from wengert.driver.pipeline import lower
from wengert.ir import nodes as n
from wengert.ir import verify
from wengert.rules import adjoints as adj_rules
from wengert.rules import operator as op_rules
from wengert.rules import registry
from wengert.testing import check_grads
from wengert.transforms.inline import bind_arity
from wengert.transforms.specialize import specialize

# ----------------------------------------------------------------------------- helpers


def ops_of(fn: n.Function, kind: type) -> list:
    return [op for op in n.walk(fn.body) if isinstance(op, kind)]


def calls_of(fn: n.Function, callee) -> list[n.Call]:
    consts = {op.result.id for op in ops_of(fn, n.Const) if op.value is callee}
    return [op for op in ops_of(fn, n.Call) if op.fn.id in consts]


def specialized(rule, args: tuple) -> tuple[n.Function, object]:
    """The rule lowered, bound to a call with ``args`` and specialised on their types (as
    the inliner does), verified and compiled."""
    fn = lower(rule)
    assert bind_arity(fn, len(args), rule.__defaults__ or (), rule.__kwdefaults__ or {})
    specialize(fn, [type(a) for a in args])
    verify(fn)
    return fn, generate(fn)[0]


def like(x, seed: float = 0.7):
    """A tangent/cotangent shaped like ``x`` (``None`` for non-differentiable leaves)."""
    if isinstance(x, (bool, int, type(None), str, slice, type(Ellipsis), np.dtype)):
        return None  # an index, a key, a dtype: no tangent
    if isinstance(x, (float, np.floating)):
        return type(x)(seed)
    if isinstance(x, np.ndarray):
        return seed * np.arange(1.0, x.size + 1.0).reshape(x.shape)
    if isinstance(x, (list, tuple)):
        items = [like(v, seed + 0.1 * i) for i, v in enumerate(x)]
        return type(x)._make(items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: like(v, seed) for k, v in x.items()}
    if isinstance(x, type) or callable(x):
        return None  # a class or a function passed to a rule: no tangent
    raise TypeError(x)


def assert_same(a, b) -> None:
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b, (a, b)


def outcome(thunk):
    """``("ok", value)`` or ``("raised", exception type)``."""
    try:
        with np.errstate(all="ignore"):
            return "ok", thunk()
    except Exception as e:
        return "raised", type(e)


def check_rule(rule, mode: str, args: tuple) -> bool:
    """The specialised rule agrees with the original at ``args``; returns whether it ran."""
    _, compiled = specialized(rule, args)
    # In-place rules overwrite their first argument: each call gets its own copy.
    expected = outcome(lambda: rule(*copy.deepcopy(args)))
    got = outcome(lambda: compiled(*copy.deepcopy(args)))
    assert expected[0] == got[0], (expected, got)
    if expected[0] == "raised":
        assert expected[1] is got[1]
        return False
    (y, d), (y2, d2) = expected[1], got[1]
    assert type(y) is type(y2)
    if isinstance(y, Iterator):
        # The cotangent of an iterator is the list of its items' cotangents.
        y, y2 = list(y), list(y2)
    assert_same(y, y2)
    if mode == "vjp":
        seeds = [like(y)]
    else:
        seeds = [tuple(like(a, 0.3 + 0.2 * i) for i, a in enumerate(args))]
        # A differential with one zero tangent takes the other branch of its None tests.
        if len(args) > 1 and all(s is not None for s in seeds[0]):
            seeds.append((None, *seeds[0][1:]))
    for seed in seeds:
        call = (lambda f, s=seed: f(s)) if mode == "vjp" else (lambda f, s=seed: f(*s))
        want, have = outcome(lambda: call(d)), outcome(lambda: call(d2))
        assert want[0] == have[0], (want, have)
        if want[0] == "ok":
            assert_same(want[1], have[1])
        else:
            assert want[1] is have[1]
    return True


# ----------------------------------------------------------------------------- every rule


class _Pair(NamedTuple):
    x: float
    y: float


# The defaults for primitives not in SAMPLES: floats, or (for a primitive that takes
# none) sequences of floats.
UNARY = [(0.3,), (1.7,), (-0.4,), (0.0,)]
BINARY = [(1.5, 2.5), (-0.5, 3.0), (2.0, 0.0), (0.0, 0.5), (-2.0, 2.0)]
SEQUENCES = {1: [([1.5, -0.5],), ((1.5, 2.5),)], 2: [([1.0, 2.0], [3.0, 4.0])]}
A23 = np.arange(1.0, 7.0).reshape(2, 3)

#: Inputs per primitive: floats wherever the primitive takes them.
SAMPLES: dict = {
    op_rules._sum_to: [(A23, (1, 3), (2, 3)), (1.5, (), ())],
    op_rules._broadcast_to: [(np.ones((1, 3)), (1, 3), (2, 3)), (1.5, (), ())],
    op_rules._mT: [(A23,)],
    op_rules._unsqueeze: [(np.ones(3), -1)],
    op_rules._squeeze: [(np.ones((3, 1)), -1)],
    op_rules._sum_cotangents: [([1.0, None, 2.0],), ((1.0, 2.0),)],
    op_rules._repeat_adjoint: [([1.0, 2.0, 3.0, 4.0], 2), ((1.0, 2.0), 1)],
    operator.matmul: [(A23, A23.T)],
    operator.imatmul: [(A23, np.ones((3, 3)))],
    operator.concat: [([1.0, 2.0], [3.0])],
    operator.iconcat: [([1.0, 2.0], [3.0])],
    builtins.max: [(2.0, 3.0), (3.0, 2.0), ([1.0, 4.0, 2.0],)],
    builtins.min: [(2.0, 3.0), (3.0, 2.0), ((1.0, 4.0, 0.5),)],
    builtins.sum: [([1.0, 2.0, 3.0],), ([1.0, 2.0], 0.5)],
    builtins.pow: [(2.0, 3.0), (2.0, 0.5), (0.0, 0.5)],
    math.log: [(2.0,), (2.0, 3.0), (0.0,)],
    math.hypot: [(3.0, 4.0), (0.0, 0.0), (1.0, 2.0, 2.0)],
    math.dist: [([1.0, 2.0], [4.0, 6.0]), ((1.0,), (1.0,))],
    math.fsum: [([1.0, 2.0],)],
    math.prod: [([1.5, 2.0],), ((3.0, 0.0, 2.0),)],
    math.ldexp: [(1.5, 3)],
    builtins.zip: [([1.0, 2.0], (3.0, 4.0)), ([1.0], [2.0, 3.0], A23)],
    builtins.enumerate: [([1.0, 2.0],), ((1.0, 2.0), 1)],
    builtins.dict: [([("a", 1.5), ("b", 2.0)],), ({"a": 1.5},)],
    builtins.list: [((1.0, 2.0),), (A23,)],
    builtins.tuple: [([1.0, 2.0],)],
    math.asin: [(0.3,), (-0.5,), (1.0,)],
    math.acos: [(0.3,), (-0.5,), (1.0,)],
    math.atanh: [(0.3,), (-0.5,)],
    math.acosh: [(1.5,), (1.0,)],
    # Helpers generated pullbacks call (differentiated again at higher order).
    runtime.getitem_adjoint: [([1.0, None, 2.0], [1.0, 2.0, 3.0], 1, 0.5),
                              (None, A23, 1, np.ones(3)),
                              ({"a": 1.0}, {"a": 1.0, "b": 2.0}, "b", 0.5),
                              ([1.0, 2.0], [1.0, 2.0, 3.0], 0, 0.5, 2)],
    runtime.finish_adjoint: [([1.0, None], [1.0, 2.0]), (None, 1.5), (0.5, 1.5)],
    runtime.getitem_adjoint_owned: [([1.0, None, 2.0], [1.0, 2.0, 3.0], 1, 0.5),
                                    (np.zeros(3), np.ones(3), 1, 0.5),
                                    ({"a": 1.0}, {"a": 1.0, "b": 2.0}, "b", 0.5)],
    runtime.setitem_adjoint: [([1.0, 2.0, 3.0], 1), (A23, 0), ({"a": 1.5, "b": 2.0}, "a")],
    runtime.getattr_adjoint: [({"w": 1.5}, None, "w", 2.0), (None, None, "w", 2.0),
                              ((1.0, None), _Pair(1.0, 2.0), "y", 0.5)],
    runtime.getattr_adjoint_owned: [({"w": 1.5}, None, "w", 2.0), (None, None, "w", 2.0)],
    runtime.setattr_adjoint_owned: [({"w": 1.5, "b": 2.0}, "w")],
    runtime.make_namedtuple: [(_Pair, (1.5, 2.0))],
    runtime.field_adjoint: [({"w": 1.5, "b": 2.0}, "w")],
    runtime.setattr_adjoint: [({"w": 1.5, "b": 2.0}, "w")],
    runtime.item_adjoint: [([1.5, 2.0], 1), ((1.5, 2.0), 0)],
    runtime.inout: [((1.5, 2.0), 1), (None, 0)],
    runtime.key_adjoint: [({"a": 1.5, "b": 2.0}, "b")],
    runtime.subdict_adjoint: [({"a": 1.5, "b": 2.0}, {"a": 1.0})],
    runtime.split_adjoint: [([1.0, 2.0, 3.0], (None, 2))],
    runtime.unpack_adjoint: [((1.0, 2.0), [1.0, 2.0], None),
                             ((1.0, [2.0, 3.0]), (1.0, 2.0, 3.0), 1)],
    runtime.regroup: [((1.0, 2.0, 3.0), (None, (1.0, 2.0)))],
    adj_rules._take: [([1.0, 2.0, 3.0], [None, None, None], 1), ({"a": 1.0}, {"a": None}, "a"),
                      (A23, np.zeros((2, 3)), 1)],
    adj_rules._add_at: [(A23, np.zeros((2, 3)), 1, np.ones(3)),
                        (None, np.zeros((2, 3)), (0, 1), 2.0)],
    adj_rules._items: [(A23, np.zeros((2, 3)), 2), ([1.0, 2.0], [None, None], 2)],
    adj_rules._pack: [((1.0, [2.0, 3.0]), (None, None, None), 1)],
    adj_rules._unpack: [([1.0, 2.0, 3.0], [None, None, None], 2, 1)],
    adj_rules._join: [([1.0, [2.0, 3.0]], (None, 2), False)],
    adj_rules._ungroup: [([1.0, (2.0, 3.0)], (None, (None, None)))],
    adj_rules._append: [([1.0, 2.0], 3.0, 2), (None, 3.0, 2)],
}


def rule_cases():
    for rule in registry.all_rules():
        for mode in ("vjp", "jvp"):
            fn = getattr(rule, mode)
            if fn is None or not fn.__module__.startswith("wengert.rules."):
                continue  # rules other tests register for their own functions
            name = getattr(rule.fn, "__name__", repr(rule.fn))
            module = getattr(rule.fn, "__module__", None) or "?"
            yield pytest.param(fn, mode, rule.fn, id=f"{module}.{name}-{mode}")


@pytest.mark.parametrize("rule, mode, primitive", list(rule_cases()))
def test_every_rule_keeps_its_values_and_derivatives(rule, mode, primitive):
    arity = 2 if len(lower(rule).signature.args) == 2 else 1
    # The cases declared beside the rule (rules/form.py) where there are any.
    samples = SAMPLES.get(primitive) or registry.lookup(primitive).cases or \
        (BINARY if arity == 2 else UNARY)
    ran = [check_rule(rule, mode, args) for args in samples]
    if not any(ran) and primitive not in SAMPLES:
        ran = [check_rule(rule, mode, args) for args in SEQUENCES[arity]]
    assert any(ran), "no sample input is in the primitive's domain"


def test_the_rule_table_is_covered():
    assert len(list(rule_cases())) >= 140


# ----------------------------------------------------------------------------- core rules

BRANCH_FREE = [operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
               math.sin, math.cos, math.exp, math.tanh]
#: Rules whose remaining ``If``s test values, not types (``b == 0``, ``y == 0.0``,
#: ``a_dot is None``): how many each keeps when specialised on floats. (``math.log(x)``
#: has none left: its ``len(base) == 0`` folds for a call of one argument.)
VALUE_TESTS = {(operator.pow, "vjp"): 3, (math.sqrt, "vjp"): 1,
               (operator.pow, "jvp"): 6, (math.sqrt, "jvp"): 1}


@pytest.mark.parametrize("mode", ["vjp", "jvp"])
@pytest.mark.parametrize("primitive", BRANCH_FREE + [operator.pow, math.sqrt, math.log],
                         ids=lambda f: f.__name__)
def test_core_scalar_rules_fold_every_type_test(primitive, mode):
    rule = getattr(registry.lookup(primitive), mode)
    nparams = 1 if primitive in (operator.neg, math.sin, math.cos, math.exp, math.tanh,
                                 math.sqrt, math.log) else 2
    before = lower(rule)
    fn, _ = specialized(rule, (1.5,) * nparams)
    assert not calls_of(fn, isinstance)
    ifs = len(ops_of(fn, n.If))
    if (primitive, mode) in VALUE_TESTS:
        assert ifs == VALUE_TESTS[primitive, mode]
    elif mode == "vjp" or nparams == 1:
        assert ifs == 0
    else:
        # Only the differential's tests of which tangents are None are left.
        assert 0 < ifs < len(ops_of(before, n.If))
        assert calls_of(fn, operator.is_) or calls_of(fn, operator.is_not)


def test_scalar_pullback_is_straight_line_code():
    fn, compiled = specialized(registry.lookup(operator.mul).vjp, (2.0, 3.0))
    (pullback,) = ops_of(fn, n.MakeFunction)
    kinds = [type(op).__name__ for op in pullback.func.body.ops]
    assert kinds == ["Const", "Call", "Const", "Call", "Build", "Return"]
    y, pb = compiled(2.0, 3.0)
    assert (y, pb(1.0)) == (6.0, (3.0, 2.0))


# ----------------------------------------------------------------------------- arrays

ARRAY_CASES = [
    (operator.add, (A23, np.ones(3))),
    (operator.sub, (A23, A23 * 0.5)),
    (operator.mul, (A23, np.arange(3.0))),
    (operator.mul, (A23, 2.5)),
    (operator.truediv, (2.0, A23)),
    (operator.pow, (A23, np.full((2, 3), 1.5))),
    (operator.neg, (A23,)),
    (operator.abs, (A23 - 3.0,)),
    (operator.matmul, (A23, np.ones(3))),
]


@pytest.mark.parametrize("mode", ["vjp", "jvp"])
@pytest.mark.parametrize("primitive, args", ARRAY_CASES,
                         ids=[f"{p.__name__}{i}" for i, (p, _) in enumerate(ARRAY_CASES)])
def test_array_specialisation_keeps_values_and_derivatives(primitive, args, mode):
    rule = getattr(registry.lookup(primitive), mode)
    assert check_rule(rule, mode, args)
    fn, _ = specialized(rule, args)
    if primitive in (operator.add, operator.sub, operator.mul, operator.truediv):
        assert not calls_of(fn, isinstance)
        if mode == "vjp":
            assert not ops_of(fn, n.If)
            assert calls_of(fn, op_rules._sum_to)


@pytest.mark.parametrize("mode", ["vjp", "jvp"])
def test_numpy_float_scalars_take_the_float_path(mode):
    # numpy.float64 is a float subclass: the rule's float fast path is the one it runs.
    rule = getattr(registry.lookup(operator.mul), mode)
    args = (np.float64(1.5), np.float64(-2.0))
    assert check_rule(rule, mode, args)
    fn, _ = specialized(rule, args)
    assert not calls_of(fn, isinstance) and not calls_of(fn, op_rules._shape)


def test_unknown_types_change_nothing():
    rule = registry.lookup(operator.mul).vjp
    fn = lower(rule)
    before = (len(ops_of(fn, n.If)), len(calls_of(fn, isinstance)))
    types = specialize(fn, [None, None])
    verify(fn)
    assert (len(ops_of(fn, n.If)), len(calls_of(fn, isinstance))) == before
    assert types.of(fn.body.args[0]) is None


# ----------------------------------------------------------------------------- folding rules


def dispatch(x):
    if isinstance(x, bool):
        kind = "bool"
    elif isinstance(x, int):
        kind = "int"
    elif isinstance(x, (list, tuple)):
        kind = "seq"
    elif isinstance(x, float):
        kind = "float"
    else:
        kind = "other"
    return kind


@pytest.mark.parametrize("value, kind", [
    (True, "bool"), (3, "int"), ((1,), "seq"), ([1], "seq"), (2.0, "float"),
    (np.float64(2.0), "float"), (np.float32(2.0), "other"), ("s", "other"),
])
def test_isinstance_folds_with_subclasses(value, kind):
    fn = lower(dispatch)
    specialize(fn, [type(value)])
    verify(fn)
    assert not ops_of(fn, n.If) and not calls_of(fn, isinstance)
    assert generate(fn)[0](value) == kind == dispatch(value)


@typing.runtime_checkable
class Quacks(typing.Protocol):
    def quack(self) -> None: ...


class Base(abc.ABC):  # noqa: B024 - a plain ABC, only for isinstance
    pass


def abc_test(x):
    return isinstance(x, numbers.Real), isinstance(x, Base), isinstance(x, Quacks)


def test_abcs_fold_but_instance_checks_of_protocols_stay():
    fn = lower(abc_test)
    specialize(fn, [float])
    verify(fn)
    # numbers.Real and Base fold; the protocol's __instancecheck__ looks at attributes.
    assert len(calls_of(fn, isinstance)) == 1
    assert generate(fn)[0](1.5) == abc_test(1.5) == (True, False, False)


TYPES = (int, float)


def tuple_const(x):
    return isinstance(x, TYPES), isinstance(x, (str, TYPES))


def test_isinstance_with_a_constant_tuple_folds():
    fn = lower(tuple_const)
    specialize(fn, [float])
    assert not calls_of(fn, isinstance)
    assert generate(fn)[0](1.5) == (True, True)


def none_tests(x, y):
    a = x is None
    b = x is not None
    c = None is y
    d = not (x is None)  # noqa: E714 - a not_ of an is_
    e = None is None
    return a, b, c, d, e


def test_identity_with_none_folds_when_the_type_is_known():
    fn = lower(none_tests)
    specialize(fn, [float, None])
    verify(fn)
    # Only the test of y, whose type is unknown, is left.
    assert len(calls_of(fn, operator.is_)) + len(calls_of(fn, operator.is_not)) == 1
    assert not calls_of(fn, operator.not_)
    g = generate(fn)[0]
    assert g(1.5, None) == none_tests(1.5, None) == (False, True, True, True, True)
    assert g(1.5, 2) == none_tests(1.5, 2)
    fn = lower(none_tests)
    specialize(fn, [type(None), None])
    assert generate(fn)[0](None, 1) == none_tests(None, 1)


def constant_branches(x):
    if 0:
        y = x * 2.0
    else:
        y = x + 1.0
    if "nonempty":
        z = y * 3.0
    else:
        z = y
    return z


def nested_branches(x, flag):
    if isinstance(x, float):
        if flag:
            y = x * 2.0
        else:
            y = x * 3.0
        w = -y
    else:
        y = x
        w = y

    def inner(t):
        if isinstance(x, float):
            return t * y + w
        return t

    return inner


def test_constant_conditions_splice_the_taken_branch():
    fn = lower(constant_branches)
    specialize(fn, [None])
    verify(fn)
    assert not ops_of(fn, n.If)
    assert generate(fn)[0](2.0) == constant_branches(2.0) == 9.0


def test_splicing_rewires_uses_in_nested_functions():
    fn = lower(nested_branches)
    types = specialize(fn, [float, None])
    verify(fn)
    # The test of flag stays (its type is unknown and it is a value test anyway).
    (left,) = ops_of(fn, n.If)
    assert types.of(left.results[0]) is float
    assert not calls_of(fn, isinstance)
    g = generate(fn)[0]
    for flag in (True, False):
        assert g(1.5, flag)(2.0) == nested_branches(1.5, flag)(2.0)


def loop_dispatch(xs, n_):
    s = 0.0
    for i in range(n_):
        if isinstance(i, int):
            s = s + i
        else:
            s = s - 1.0
    while isinstance(s, str):
        s = s * 2.0
    return s


def test_type_tests_inside_loops_fold_after_the_fixpoint():
    fn = lower(loop_dispatch)
    types = specialize(fn, [list, int])
    verify(fn)
    assert len(calls_of(fn, isinstance)) == 0
    assert not ops_of(fn, n.If) and not ops_of(fn, n.While)
    assert types.of(fn.body.terminator.value) is float
    assert generate(fn)[0]([], 4) == loop_dispatch([], 4) == 6.0


def late_float(x, n_):
    s = 0
    for _ in range(n_):
        kind = isinstance(s, int)
        s = s + x
    return kind


def str_loop(s):
    while isinstance(s, str):
        s = s + 1.0
    return s


def test_type_tests_of_values_that_change_type_in_a_loop_stay():
    fn = lower(str_loop)
    specialize(fn, [str])  # str + float raises, but the analysis does not know it
    assert len(calls_of(fn, isinstance)) == 1

    fn = lower(late_float)
    specialize(fn, [float, int])
    verify(fn)
    assert len(calls_of(fn, isinstance)) == 1
    assert generate(fn)[0](1.5, 2) is late_float(1.5, 2) is False


def test_free_types_specialise_a_nested_function_on_its_own():
    fn = lower(nested_branches)
    (mk,) = ops_of(fn, n.MakeFunction)
    (x,) = fn.body.args[:1]
    inner = mk.func
    specialize(inner, [None])
    assert calls_of(inner, isinstance)
    specialize(inner, [None], {x.id: float})
    assert not calls_of(inner, isinstance) and not ops_of(inner, n.If)


def unused_calls(x):
    with contextlib.suppress(ZeroDivisionError):
        1.0 / x
    if isinstance(x, float):
        math.sqrt(x)
    return x


def test_unused_calls_are_kept_for_the_caller_to_drop():
    fn = lower(unused_calls)
    specialize(fn, [float])
    verify(fn)
    assert calls_of(fn, math.sqrt) and calls_of(fn, operator.truediv)
    with pytest.raises(ValueError):
        generate(fn)[0](-1.0)


# ----------------------------------------------------------------------- dict displays


def _dict_of_functions(a):
    ops = {"sq": lambda t: t * t, "sin": math.sin, "scaled": lambda t: a * t}
    return ops["sq"](a) + ops["sin"](a) * ops["scaled"](2.0)


def _dict_of_values(a):
    p = {"w": a * a, "b": 0.5}
    s = 0.0
    for x in (1.0, 2.0, -0.5):
        s += (p["w"] * x + p["b"] - a) ** 2
    return s


def _dict_display_changed(a):
    p = {"w": a, "b": 0.5}
    p["w"] = p["w"] * 3.0  # written: its entries are not its display's any more
    return p["w"] * p["b"] + a


@pytest.mark.parametrize("f", [_dict_of_functions, _dict_of_values, _dict_display_changed],
                         ids=lambda f: f.__name__)
def test_dict_displays_indexed_by_constant_keys(f):
    check_grads(f, (0.7,), order=2, modes=("rev", "fwd"))


def test_a_function_read_out_of_a_dict_display_is_called_directly():
    source = wengert.show(_dict_of_functions, mode="vjp")
    assert "vjp_call" not in source and "site" not in source, source


def test_a_missing_key_still_raises():
    def f(a):
        return {"w": a}["nope"] * a
    with pytest.raises(KeyError):
        wengert.grad(f)(1.0)


def summed_squares(x):
    return np.sum(x * x, axis=-1)


def summed_into_out(x):
    return np.sum(x * x, out=np.zeros(()))


def test_checks_and_static_helpers_of_definitions_fold_away():
    # np.sum's definition checks its keywords and computes its axes: with constants that
    # pass, neither is left in the generated code.
    from wengert import api
    from wengert.analysis.types import array_of

    text = api.show(summed_squares, mode="vjp", arg_types=(array_of(np.float64, 2),))
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    assert "_unsupported" not in code and "_axes(" not in code and "_flag(" not in code
    check_grads(summed_squares, (np.arange(6.0).reshape(2, 3) / 4,), modes=("rev", "fwd"))
    # A check that fails stays, and fails where the user called it, when it runs.
    with pytest.raises(TypeError, match="out=") as e:
        api.grad(summed_into_out)(np.ones(3))
    assert e.value.loc is not None and e.value.loc.filename == __file__


def mlp(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


MLP_ARGS = (np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.array([0.1, -0.2, 0.3]),
            np.linspace(0.5, -0.5, 3).reshape(3, 1), np.array([0.2]),
            np.linspace(-2.0, 2.0, 20).reshape(5, 4), np.linspace(0.0, 1.0, 5).reshape(5, 1))


def scaled_sum(x):
    return np.sum(x * x) / 3


def test_shape_arithmetic_folds_on_the_shapes_of_the_arguments():
    """With the arguments' shapes known, the pullback of an MLP is what a person writes:
    no shape is computed at run time, a cotangent is summed only where its operand was
    broadcast (the biases), and the mean's spreads its one number."""
    from wengert import api

    text = api.show(mlp, mode="vjp", like=MLP_ARGS, argnums=(0, 1, 2, 3))
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    assert "_shape(" not in code and "nonzero(" not in code
    assert code.count("_sum_to(") == 2, code  # b1's (5, 3) -> (3,), b2's (5, 1) -> (1,)
    assert "(5, 3)" in code and "(5, 1)" in code
    # Comments name the lines the user wrote, not those of NumPy's definitions inlined.
    for f, like in [(mlp, MLP_ARGS), (scaled_sum, (np.ones((2, 3)),))]:
        text = api.show(f, mode="vjp", like=like)
        comments = [line.strip() for line in text.splitlines()
                    if line.strip().startswith("#")]
        assert comments and all("_sum(" not in c and "_axes(" not in c for c in comments), \
            comments
    check_grads(mlp, MLP_ARGS, modes=("rev", "fwd"), order=2)


def test_a_function_given_many_shapes_is_derived_without_them():
    """Past a few shapes per function, derivatives stop specialising on them (like a
    compiler's cache limit): one derivation serves every later shape, each still right."""
    from wengert.driver import binding

    def f(x):
        return np.sum(np.sin(x) * x[::-1])

    g = wengert.grad(f)
    for k in range(1, 3 * binding.SHAPES_PER_FUNCTION):
        x = np.linspace(-1.0, 1.0, k)
        expected = np.cos(x) * x[::-1] + np.sin(x)[::-1]
        assert np.allclose(g(x), expected), k
    seen = [s for key, s in binding._SHAPES_SEEN.items() if key[0][0] == id(f.__code__)]
    assert len(seen) == 1 and len(seen[0]) == binding.SHAPES_PER_FUNCTION
