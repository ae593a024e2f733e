"""Activity analysis (varied x useful) on small real functions.

Each case is an ordinary module-level function (so ``inspect.getsource`` works),
lowered with the real frontend; values are found by the user's variable name
(the ``hint`` the frontend gives them).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import math
import typing

import numpy as np
import pytest

import wengert.rules  # noqa: F401  (registers the built-in rules)
from wengert.analysis.activity import Activity, CutPoint, activity
from wengert.driver.pipeline import lower
from wengert.ir import nodes as n
from wengert.rules import registry
from wengert.testing import check_grads

# ----------------------------------------------------------------------------- helpers


def all_values(fn_ir: n.Function) -> list[n.Value]:
    """Every value defined in ``fn_ir`` (parameters, op results, region arguments)."""
    out = list(fn_ir.body.args)
    for op in n.walk(fn_ir.body):
        out.extend(op.results)
        out.extend(n.region_args(op))
    return out


def values_named(fn_ir: n.Function, hint: str) -> list[n.Value]:
    """Every value the frontend named after the user's variable ``hint``."""
    found = [v for v in all_values(fn_ir) if v.hint == hint]
    assert found, f"no value named {hint!r} in {fn_ir.name}"
    return found


def analyse(f, wrt=(0,)) -> tuple[n.Function, Activity]:
    fn_ir = lower(f)
    return fn_ir, activity(fn_ir, wrt)


def ops_of(fn_ir: n.Function, kind: type) -> list[n.Op]:
    return [op for op in n.walk(fn_ir.body) if isinstance(op, kind)]


def calls_of(fn_ir: n.Function, callee) -> list[n.Call]:
    """Calls whose callee is the constant ``callee``."""
    consts = {op.result.id for op in ops_of(fn_ir, n.Const) if op.value is callee}
    return [op for op in ops_of(fn_ir, n.Call) if op.fn.id in consts]


def method_calls(fn_ir: n.Function, name: str) -> list[n.Call]:
    """Calls of ``obj.name(...)`` in program order."""
    methods = {op.result.id for op in ops_of(fn_ir, n.GetAttr) if op.name == name}
    return [op for op in ops_of(fn_ir, n.Call) if op.fn.id in methods]


def line_of(f, text: str) -> int:
    """The absolute line number of the first line of ``f`` containing ``text``."""
    lines, start = inspect.getsourcelines(f)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def all_active(a: Activity, vs: list[n.Value]) -> bool:
    return all(a.is_active(v) for v in vs)


def none_varied(a: Activity, vs: list[n.Value]) -> bool:
    return not any(a.is_varied(v) for v in vs)


# ----------------------------------------------------------------------------- cases


def straight_line(x):
    y = math.sin(x) * x
    z = y + 1.0
    return z


def unused_print(x):
    t = x * 2.0
    print(t)
    return x


def only_in_condition(x):
    t = x * 3.0
    if t > 0.0:
        y = x
    else:
        y = -x
    return y


def non_wrt_param(x, a):
    b = a * 2.0
    return x * b


def counted_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    return s


def branch_on_x(x):
    if x > 0:
        y = 1.0
    else:
        y = 2.0
    return y


def branch_on_truth_of_x(x):
    if x:
        y = 1.0
    else:
        y = 2.0
    return y


def branch_yields_x(x, a):
    if a > 0:
        y = x * 2.0
    else:
        y = 2.0
    return y


def halve_until_small(x):
    s = x
    k = 0
    while s > 1.0:
        s = s / 2.0
        k += 1
    return s + k


def compare_and_len(x, xs):
    c = x > 0.0
    m = len(xs)
    return c + m


def len_of_wrt(xs):
    m = len(xs)
    return m * 1.0


def append_varied(x, a):
    out = []
    out.append(x * 2.0)
    out.append(a)
    return out[1]


def append_constant(x, a):
    out = []
    out.append(a * 2.0)
    return out[0] + x


def setitem_varied(x):
    buf = [0.0, 0.0]
    buf[0] = x * x
    first = buf[0]
    return first


def fill_in_loop(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    total = sum(out)
    return total


def int_cut(x):
    k = int(x)
    return k * 2.0


def round_cut(x):
    r = round(x)
    return x + r


def int_of_constant(x, n):
    k = int(n)
    return x * k


def for_over_wrt(xs):
    s = 0.0
    for v in xs:
        s = s + v
    return s


def two_params(x, y):
    u = x * 2.0
    w = y * 3.0
    return u + w


def early_break(x, n):
    s = x
    for _ in range(n):
        s = s * 1.5
        if s > 100.0:
            break
    return s


def closure_capture(x, a):
    g = lambda t: t * x  # noqa: E731
    h = lambda t: t * a  # noqa: E731
    return g(2.0) + h(3.0)


def _fill(buf, v):
    buf[0] = v


def helper_mutates(x):
    buf = [0.0]
    _fill(buf, x)
    return buf[0]


def numpy_method(v, a):
    r = a.dot(v)
    return r


def with_manager(x):
    with contextlib.nullcontext(x) as v:
        y = v * 2.0
    return y


def with_param_manager(cm):
    with cm as v:
        y = v * 2.0
    return y


def useful_via_mutation(x, a):
    out = [a]
    out.append(x)
    return out


def nested_rows(x, m):
    for row in m:
        row.append(x)
    return m


def store_into_inner(x, a):
    inner = [a]
    outer = [inner]
    inner.append(x)
    return outer


def store_through_read(x, a):
    inner = [a]
    outer = [inner, [1.0]]
    t = outer[0]
    t.append(x)
    return outer


def closure_appends(x):
    out = []

    def push():
        out.append(x)

    push()
    return out[0]


def inplace_extend(x):
    acc = []
    acc += [x]
    return acc[0]


def _warned(v):
    return v


def _quiet(v):
    return v


registry.nondifferentiable(_warned, warn=True)
registry.nondifferentiable(_quiet, warn=False)


def private_cuts(x):
    p = _warned(x)
    q = _quiet(x)
    return p + q


# ----------------------------------------------------------------------------- tests


def test_straight_line_all_active():
    fn_ir, a = analyse(straight_line)
    for name in ("x", "y", "z"):
        assert all_active(a, values_named(fn_ir, name)), name


def test_unused_computation_is_varied_but_not_useful():
    fn_ir, a = analyse(unused_print)
    (t,) = values_named(fn_ir, "t")
    assert a.is_varied(t)
    assert not a.is_useful(t)
    assert not a.is_active(t)


def test_value_used_only_by_a_comparison_is_not_useful():
    fn_ir, a = analyse(only_in_condition)
    (t,) = values_named(fn_ir, "t")
    assert a.is_varied(t) and not a.is_useful(t)
    # The branch result still is active: both arms yield x-dependent values.
    assert all_active(a, values_named(fn_ir, "y"))


def test_value_from_non_wrt_parameter_is_not_varied():
    fn_ir, a = analyse(non_wrt_param, wrt=[0])
    (b,) = values_named(fn_ir, "b")
    assert not a.is_varied(b)
    assert a.is_useful(b)  # it scales the result, but carries no derivative
    assert not a.is_active(b)
    (a_param,) = values_named(fn_ir, "a")
    assert not a.is_varied(a_param)


def test_integer_loop_counter_and_range_are_not_active():
    fn_ir, a = analyse(counted_loop, wrt=[0])
    (i,) = values_named(fn_ir, "i")
    assert not a.is_varied(i)
    assert a.is_useful(i)  # it multiplies x
    (rng,) = calls_of(fn_ir, range)
    assert not a.is_varied(rng.result) and not a.is_active(rng.result)


def test_loop_carried_accumulator_is_active():
    fn_ir, a = analyse(counted_loop, wrt=[0])
    (loop,) = ops_of(fn_ir, n.For)
    assert all_active(a, loop.carried_args + loop.results)
    assert a.is_active_op(loop)
    assert loop in a.active_ops(fn_ir.body)
    # The initial 0.0 is a constant: useful (it starts the sum) but never varied.
    assert not a.is_varied(loop.inits[0]) and a.is_useful(loop.inits[0])


def test_loop_accumulator_not_varied_without_wrt_x():
    fn_ir, a = analyse(counted_loop, wrt=[1])
    (loop,) = ops_of(fn_ir, n.For)
    assert none_varied(a, loop.carried_args + loop.results)
    assert a.active_ops(fn_ir.body) == []


def test_condition_on_x_does_not_make_branch_result_varied():
    fn_ir, a = analyse(branch_on_x)
    (if_op,) = ops_of(fn_ir, n.If)
    assert not a.is_varied(if_op.results[0])
    assert a.is_useful(if_op.results[0])
    assert not a.is_useful(if_op.cond)  # control dependence carries no derivative
    assert not a.is_active_op(if_op)


def test_varied_condition_itself_does_not_make_branch_result_varied():
    fn_ir, a = analyse(branch_on_truth_of_x)
    (if_op,) = ops_of(fn_ir, n.If)
    assert a.is_varied(if_op.cond)  # the condition *is* x here
    assert not a.is_useful(if_op.cond)
    assert not a.is_varied(if_op.results[0])


def test_branch_result_varied_when_one_arm_yields_varied():
    fn_ir, a = analyse(branch_yields_x)
    (if_op,) = ops_of(fn_ir, n.If)
    assert a.is_active(if_op.results[0])
    assert not a.is_varied(if_op.cond)
    assert a.is_active_op(if_op)


def test_while_with_data_dependent_condition():
    fn_ir, a = analyse(halve_until_small)
    (loop,) = ops_of(fn_ir, n.While)
    s_arg, k_arg = loop.args
    s_res, k_res = loop.results
    assert a.is_active(s_arg) and a.is_active(s_res)
    assert not a.is_varied(k_arg) and not a.is_varied(k_res)
    (cond_value,) = loop.cond.terminator.operands()
    assert not a.is_varied(cond_value) and not a.is_useful(cond_value)


def test_comparisons_and_len_cut_variedness():
    fn_ir, a = analyse(compare_and_len, wrt=[0, 1])
    (c,) = values_named(fn_ir, "c")
    (m,) = values_named(fn_ir, "m")
    assert not a.is_varied(c)
    assert not a.is_varied(m)
    # Operands of a nondifferentiable call are not useful through it.
    (x,) = values_named(fn_ir, "x")
    assert not a.is_useful(x)


def test_len_of_wrt_list_is_not_varied():
    fn_ir, a = analyse(len_of_wrt)
    (m,) = values_named(fn_ir, "m")
    (xs,) = values_named(fn_ir, "xs")
    assert not a.is_varied(m)
    assert not a.is_useful(xs)


def test_append_of_varied_value_makes_list_active():
    fn_ir, a = analyse(append_varied, wrt=[0])
    (out,) = values_named(fn_ir, "out")
    assert a.is_active(out)
    (read,) = ops_of(fn_ir, n.GetItem)
    assert a.is_varied(read.result)  # may read the appended x * 2.0
    appends = method_calls(fn_ir, "append")
    assert len(appends) == 2
    # Appending x * 2.0 is derivative code; so is appending the inactive ``a`` into the
    # active list: it shifts the slots, which the adjoint must follow.
    assert a.is_active_op(appends[0])
    assert a.is_active_op(appends[1])
    # Storing ``a`` into a list that later holds x-dependent data does not make ``a`` varied.
    (a_param,) = values_named(fn_ir, "a")
    assert not a.is_varied(a_param)


def test_append_of_non_varied_value_leaves_list_inactive():
    fn_ir, a = analyse(append_constant, wrt=[0])
    (out,) = values_named(fn_ir, "out")
    assert not a.is_varied(out)
    (read,) = ops_of(fn_ir, n.GetItem)
    assert not a.is_varied(read.result)


def test_setitem_of_varied_value_makes_container_active():
    fn_ir, a = analyse(setitem_varied)
    (buf,) = values_named(fn_ir, "buf")
    (first,) = values_named(fn_ir, "first")
    assert a.is_active(buf)
    assert a.is_active(first)
    (store,) = ops_of(fn_ir, n.SetItem)
    assert a.is_active_op(store)
    assert not a.is_useful(store.index)


def test_append_inside_loop_makes_list_active_after_loop():
    fn_ir, a = analyse(fill_in_loop, wrt=[0])
    (out,) = values_named(fn_ir, "out")
    (total,) = values_named(fn_ir, "total")
    assert a.is_active(out) and a.is_active(total)
    (loop,) = ops_of(fn_ir, n.For)
    assert a.is_active_op(loop)


def test_mutation_into_useful_container_makes_stored_value_useful():
    fn_ir, a = analyse(useful_via_mutation, wrt=[0])
    (x,) = values_named(fn_ir, "x")
    (out,) = values_named(fn_ir, "out")
    assert a.is_active(x) and a.is_active(out)


def test_unknown_helper_may_write_into_its_arguments():
    fn_ir, a = analyse(helper_mutates)
    (buf,) = values_named(fn_ir, "buf")
    (read,) = ops_of(fn_ir, n.GetItem)
    assert a.is_varied(buf) and a.is_active(read.result)


def test_int_cut_point_reported_with_location():
    assert registry.lookup(int) is not None and registry.lookup(int).warn
    fn_ir, a = analyse(int_cut)
    (cut,) = a.cut_points
    assert isinstance(cut, CutPoint)
    op, value = cut
    assert op in calls_of(fn_ir, int)
    assert value is fn_ir.body.args[0]
    assert op.loc is not None and op.loc.lineno == line_of(int_cut, "int(x)")
    (k,) = values_named(fn_ir, "k")
    assert not a.is_varied(k)


def test_round_cut_point_reported():
    assert registry.lookup(round) is not None and registry.lookup(round).warn
    fn_ir, a = analyse(round_cut)
    assert [cp.op for cp in a.cut_points] == calls_of(fn_ir, round)
    assert a.cut_points[0].op.loc.lineno == line_of(round_cut, "round(x)")


def test_no_cut_point_when_operand_not_varied():
    _, a = analyse(int_of_constant, wrt=[0])
    assert a.cut_points == ()
    _, a = analyse(compare_and_len, wrt=[0, 1])  # len/comparisons cut silently
    assert a.cut_points == ()


def test_registered_warn_flag_decides_cut_points():
    fn_ir, a = analyse(private_cuts)
    assert [cp.op for cp in a.cut_points] == calls_of(fn_ir, _warned)
    (p,) = values_named(fn_ir, "p")
    (q,) = values_named(fn_ir, "q")
    assert not a.is_varied(p) and not a.is_varied(q)


def test_for_item_varied_when_iterable_varied():
    fn_ir, a = analyse(for_over_wrt)
    (loop,) = ops_of(fn_ir, n.For)
    assert a.is_active(loop.body.args[0])
    assert a.is_active(loop.results[0])


def test_wrt_subset_of_parameters():
    fn_ir, a = analyse(two_params, wrt=[1])
    (u,) = values_named(fn_ir, "u")
    (w,) = values_named(fn_ir, "w")
    assert not a.is_varied(u) and a.is_active(w)
    both = activity(fn_ir, [0, 1])
    assert both.is_active(u) and both.is_active(w)
    none = activity(fn_ir, [])
    assert none.varied == frozenset()
    assert a.wrt == (1,)


def test_wrt_out_of_range_raises():
    fn_ir = lower(two_params)
    with pytest.raises(IndexError):
        activity(fn_ir, [2])


def test_exit_flag_is_not_useful():
    fn_ir, a = analyse(early_break)
    (loop,) = ops_of(fn_ir, n.For)
    assert loop.exit_flags
    for k in loop.exit_flags:
        assert not a.is_varied(loop.carried_args[k])
        assert not a.is_useful(loop.carried_args[k])
        assert not a.is_useful(loop.body.terminator.operands()[k])
    s_results = [r for r in loop.results if r.hint == "s"]
    assert all_active(a, s_results)


def test_closure_is_varied_only_when_it_captures_varied_values():
    fn_ir, a = analyse(closure_capture, wrt=[0])
    (g,) = values_named(fn_ir, "g")
    (h,) = values_named(fn_ir, "h")
    assert a.is_active(g)
    assert not a.is_varied(h)
    g_call, h_call = [c for c in ops_of(fn_ir, n.Call) if c.fn in (g, h)]
    assert a.is_active(g_call.result)
    assert not a.is_varied(h_call.result)


def test_readonly_method_does_not_make_object_varied():
    fn_ir, a = analyse(numpy_method, wrt=[0])
    (r,) = values_named(fn_ir, "r")
    (a_param,) = values_named(fn_ir, "a")
    assert a.is_active(r)
    assert not a.is_varied(a_param)
    # Sanity: the function is real NumPy code.
    assert numpy_method(np.ones(2), np.ones(2)) == 2.0


@pytest.mark.parametrize("f", [with_manager, with_param_manager])
def test_with_target_varied_when_manager_varied(f):
    fn_ir, a = analyse(f)
    (w,) = ops_of(fn_ir, n.With)
    assert a.is_active(w.manager)
    assert a.is_active(w.body.args[0])
    assert a.is_active(w.results[0])


def test_mutating_an_item_read_from_a_container_makes_container_varied():
    fn_ir, a = analyse(nested_rows, wrt=[0])
    (m,) = values_named(fn_ir, "m")
    (row,) = values_named(fn_ir, "row")
    assert a.is_active(m) and a.is_active(row)


def test_mutating_a_stored_part_makes_its_container_varied():
    fn_ir, a = analyse(store_into_inner, wrt=[0])
    (outer,) = values_named(fn_ir, "outer")
    (inner,) = values_named(fn_ir, "inner")
    (x,) = values_named(fn_ir, "x")
    (a_param,) = values_named(fn_ir, "a")
    assert a.is_active(outer) and a.is_active(inner)
    assert a.is_useful(x)  # it reaches the result through inner
    assert not a.is_varied(a_param)


def test_write_through_a_read_part_reaches_stored_parts():
    fn_ir, a = analyse(store_through_read, wrt=[0])
    (outer,) = values_named(fn_ir, "outer")
    (inner,) = values_named(fn_ir, "inner")
    (t,) = values_named(fn_ir, "t")
    (x,) = values_named(fn_ir, "x")
    # ``t`` is ``inner`` at run time: writing into t changes inner and outer.
    assert a.is_active(t) and a.is_active(outer) and a.is_varied(inner)
    assert a.is_useful(x)


def test_closure_writing_into_a_capture_makes_it_varied():
    fn_ir, a = analyse(closure_appends)
    (out,) = values_named(fn_ir, "out")
    (read,) = ops_of(fn_ir, n.GetItem)
    assert a.is_varied(out) and a.is_active(read.result)


def test_inplace_operator_mutates_its_left_operand():
    fn_ir, a = analyse(inplace_extend)
    acc_values = values_named(fn_ir, "acc")
    assert all(a.is_varied(v) for v in acc_values)
    (read,) = ops_of(fn_ir, n.GetItem)
    assert a.is_active(read.result)


def test_exit_flag_carries_no_usefulness_hand_built_ir():
    # for _ in it: (flag = flag) exit_if[flag]; return flag -- the flag only stops the loop.
    x, it, item, arg, res = (n.Value(h) for h in ("x", "it", "item", "flag", "res"))
    body = n.Region(args=[item, arg], ops=[n.Yield([arg])])
    loop = n.For(it, [x], body, [res], exit_flags=[0])
    fn_ir = n.Function("hand", n.Signature(args=["x", "it"]),
                       n.Region(args=[x, it], ops=[loop, n.Return(res)]))
    a = activity(fn_ir, [0])
    assert a.is_varied(res) and a.is_useful(res)
    assert not a.is_useful(x) and not a.is_useful(arg)


# ----------------------------------------- what a call writes, by the callee's parameters


def _appends_to_second(a, b):
    b.append(1.0)
    return a


def _appends_to_a_later_vararg(*xs):
    xs[1].append(1.0)
    return xs[0]


def _appends_to_keyword_only(a, *, into):
    into.append(a)
    return a


def _appends_through_kwargs(a, **kw):
    kw["into"].append(a)
    return a


def _reads_only(a, axis=0):
    return a[axis]


def _calls_by_keyword(x, y):
    return _appends_to_second(x, b=y)


def _calls_with_varargs(x, y):
    return _appends_to_a_later_vararg(x, y)


def _calls_keyword_only(x, y):
    return _appends_to_keyword_only(x, into=y)


def _calls_through_kwargs(x, y):
    return _appends_through_kwargs(x, into=y)


def _calls_a_reader_by_keyword(x, y):
    return _reads_only(x, axis=y)


def _calls_with_a_mapping(x, y):
    return _appends_to_second(x, **{"b": y})


@pytest.mark.parametrize("f, expected", [
    (_calls_by_keyword, {1}), (_calls_with_varargs, {0, 1}), (_calls_keyword_only, {1}),
    (_calls_through_kwargs, {1}), (_calls_a_reader_by_keyword, set()),
    (_calls_with_a_mapping, {1}),
])
def test_a_callees_writes_map_to_the_arguments_given_by_position_or_keyword(f, expected):
    from wengert.driver.pipeline import written_params

    # (``_calls_with_varargs`` writes through its ``*xs``: every argument past the named
    # ones may be written; a reader given a keyword argument writes nothing.)
    assert written_params(f) >= expected
    if not expected:
        assert written_params(f) == frozenset()


def _deletes_an_entry(d):
    del d["a"]
    return 1.0


def _pops_an_entry(d, k):
    return d.pop(k)


def _deletes_a_local_entry(x):
    d = {"a": x}
    del d["a"]
    return x


@pytest.mark.parametrize("f, expected", [
    (_deletes_an_entry, {0}), (_pops_an_entry, {0}), (_deletes_a_local_entry, set()),
])
def test_a_deletion_writes_into_its_container(f, expected):
    from wengert.driver.pipeline import written_params

    # (over-approximated: a key given to ``pop`` may count as stored into the dict)
    assert written_params(f) >= frozenset(expected)
    if not expected:
        assert written_params(f) == frozenset()


def _pops_a_copy(m, j):
    r = list(m[0])
    r.pop(j)
    return r[0]


def _removes_from_a_comprehension(m):
    r = [v for v in m[0]]
    r.remove(r[0])
    r.reverse()
    return r[0]


def _clears_its_argument(xs):
    xs.clear()
    return 0.0


def _pops_a_row_of_its_argument(m):
    m[0].pop()
    return m[0][0]


def _sorts_by_a_key(xs, key):
    r = list(xs)
    r.sort(key=key)  # (``key`` runs on the items: any of them may be changed)
    return r[0]


class _Stack:
    def __init__(self, items):
        self.items = items

    def pop(self):
        self.items[0].append(1.0)  # (a user's ``pop``, known by its class: what it does)
        return self.items.pop()


def _pops_a_stack(items):
    return _Stack(items).pop()


@pytest.mark.parametrize("f, expected", [
    (_pops_a_copy, set()), (_removes_from_a_comprehension, set()),
    (_clears_its_argument, {0}), (_pops_a_row_of_its_argument, {0}),
    (_sorts_by_a_key, {0, 1}), (_pops_a_stack, {0}),
])
def test_taking_items_out_of_a_list_writes_into_that_list_alone(f, expected):
    """``pop``, ``remove``, ``clear``, ``reverse``, ``sort`` change the list they are called
    on, not its items: a copy of a row popped (``r = list(row); r.pop(j)``, a minor of a
    determinant) writes into nothing the caller gave, a row of an argument popped writes
    into the argument."""
    from wengert.driver.pipeline import written_params

    assert written_params(f) == frozenset(expected), f


class _Pair(typing.NamedTuple):
    u: float
    w: float = 0.5


@dataclasses.dataclass
class _Box:
    x: float
    items: list


def _replaces_a_field(p, c):
    q = dataclasses.replace(p, x=p.x * c)
    return q.x


def _replaces_a_named_tuple_entry(qs, c):
    return qs[0]._replace(w=c).w + qs[0]._asdict()["u"]


def _copies_deeply(p, c):
    q = copy.deepcopy(p)
    q.items.append(c)
    return q.x


def _replaces_then_writes_the_list_kept(p, c):
    q = dataclasses.replace(p, x=c)
    q.items.append(c)  # the list is p's: a write into p
    return q.x


@pytest.mark.parametrize("f, expected", [
    (_replaces_a_field, set()), (_replaces_a_named_tuple_entry, set()),
    (_copies_deeply, set()), (_replaces_then_writes_the_list_kept, {0}),
])
def test_copies_made_by_the_library_write_into_nothing_given(f, expected):
    from wengert.driver.pipeline import written_params

    # (they were "writes" before: two arguments that are one object were refused; a write
    # is over-approximated, ``c`` appended may count as written too)
    assert written_params(f) >= frozenset(expected)
    if not expected:
        assert written_params(f) == frozenset()
    assert written_params(_Pair(1.0)._replace) == frozenset()


class _Shape:
    def __init__(self, r):
        self.r = r

    def area(self):
        return self.r * self.r

    def grow(self, k):
        self.r = self.r * k

    def scaled_area(self, k):
        return self.area() * k

    def grown_area(self, k):
        self.grow(k)
        return self.area()


def test_a_method_of_a_known_class_is_summarised_with_its_siblings():
    from wengert.driver.pipeline import written_params

    # Unknown class: ``self.area()`` may be anything. Known: it only reads.
    assert 0 in written_params(_Shape.scaled_area)
    assert written_params(_Shape.scaled_area, _Shape) == frozenset()
    assert 0 in written_params(_Shape.grown_area, _Shape)


def _entry_or_running_sum(m):
    if len(m) == 1:
        return m[0][0]
    t = 0.0
    for row in m:
        t += row[0]  # (``+=``: may be in place, on whatever ``t`` is)
    return t


def _writes_through_a_branch_result(m, c):
    r = m if c else [0.0]
    r.append(1.0)
    return 0.0


def _writes_into_a_part_of_a_branch_result(m, c):
    r = m if c else [[0.0]]
    row = r[0]
    row.append(1.0)
    return 0.0


def _writes_into_a_branch_object_later(x, c):
    y = [0.0]
    r = y if c else [1.0]
    out = [r]
    y.append(x)
    return out[0][-1]


def test_an_if_result_is_either_branchs_object_but_they_are_not_each_other():
    from wengert.driver.pipeline import written_params

    # The running sum ``t`` of one branch is not ``m[0][0]``, returned by the other: its
    # ``+=`` writes into nothing of ``m`` (they were one alias class: m was written).
    assert written_params(_entry_or_running_sum) == frozenset()
    # A write into the result is one into either branch's object, at any depth.
    assert written_params(_writes_through_a_branch_result) == frozenset({0})
    assert written_params(_writes_into_a_part_of_a_branch_result) == frozenset({0})
    # A write into a branch's object changes the result, and what holds it.
    fn_ir, a = analyse(_writes_into_a_branch_object_later, wrt=[0])
    (out,) = values_named(fn_ir, "out")
    assert a.is_varied(out) and a.is_varied(fn_ir.body.terminator.value)


class _Cofactor:
    def __call__(self, m):
        if len(m) == 1:
            return m[0][0]
        total = 0.0
        for j in range(len(m)):
            minor = [r[:j] + r[j + 1:] for r in m[1:]]
            total = total + (-1.0) ** j * m[0][j] * self(minor)
        return total


class _DoublingCofactor(_Cofactor):
    def __call__(self, m):
        m[0] = [2.0 * m[0][k] for k in range(len(m))]
        return super().__call__(m)


class _RowsAndColumns:
    """Cofactor expansion along a row, then a column, and so on: the two methods call each
    other, one through ``self(...)``, the other through ``self.columns(...)``."""

    def __call__(self, m):
        if len(m) == 1:
            return m[0][0]
        total = 0.0
        for j in range(len(m)):
            total = total + (-1.0) ** j * m[0][j] * self.columns(
                [r[:j] + r[j + 1:] for r in m[1:]])
        return total

    def columns(self, m):
        if len(m) == 1:
            return m[0][0]
        total = 0.0
        for i in range(len(m)):
            total = total + (-1.0) ** i * m[i][0] * self([r[1:] for r in m[:i] + m[i + 1:]])
        return total


class _Alternating:
    def __call__(self, xs):
        if len(xs) == 1:
            return xs[0]
        return xs[0] * self.rest(xs)

    def rest(self, xs):
        return 1.0 + self(xs[1:])


class _DoublingAlternating(_Alternating):
    def rest(self, xs):
        xs[1] = 2.0 * xs[1]  # (into the caller's own list: ``__call__`` passes its xs)
        return super().rest(xs)


def test_a_callable_object_calling_itself_is_summarised_with_its_class():
    from wengert.driver.pipeline import written_params

    # ``self(minor)`` is ``type(self).__call__``: for a known class, the method itself,
    # summarised with the assumption it writes nothing until the body says otherwise.
    assert written_params(_Cofactor.__call__, _Cofactor) == frozenset()
    assert 0 in written_params(_Cofactor.__call__)  # (unknown class: ``self`` may be anything)
    assert 1 in written_params(_DoublingCofactor.__call__, _DoublingCofactor)
    # Two methods calling each other, through ``self(...)`` and ``self.columns(...)``.
    for method in (_RowsAndColumns.__call__, _RowsAndColumns.columns):
        assert written_params(method, _RowsAndColumns) == frozenset(), method
    for method in (_Alternating.__call__, _Alternating.rest):
        assert written_params(method, _Alternating) == frozenset(), method
    for method in (_DoublingAlternating.__call__, _DoublingAlternating.rest):
        assert 1 in written_params(method, _DoublingAlternating), method


@dataclasses.dataclass
class _Body:
    x: float
    v: float


def _through_enumerate(ps, c):
    for _, q in enumerate(ps):
        q.x = c * q.v
    return ps[1].x


def _through_copies(ps, c):
    for q, r in zip(sorted(ps, key=lambda b: b.v), reversed(list(ps))):
        q.v = c + r.x
    return ps[0].v * ps[1].v


def _copy_then_append(ps, c):
    qs = list(ps)
    qs.append(_Body(c, c))  # the copy grows; ``ps`` does not
    return len(ps) * ps[0].x + qs[-1].x * c


def test_items_of_a_shallow_copy_are_the_originals_items():
    """``list(a)``, ``enumerate(a)``, ``zip(a, b)``, ``sorted(a)``, ``reversed(a)`` make new
    containers of ``a``'s items: a write into an item read back out of one is a write into
    ``a``'s (it was taken for a fresh value: the write was not differentiated, a JVP of 0
    where it is 1), and a write into the copy itself is not."""
    fn = lower(_through_enumerate)
    act = activity(fn, [1])
    (write,) = [op for op in n.walk(fn.body) if isinstance(op, n.SetAttr)]
    assert act.is_active_op(write)
    for f in (_through_enumerate, _through_copies, _copy_then_append):
        check_grads(f, ([_Body(0.5, 1.0), _Body(1.5, -2.0)], 0.7), modes=("fwd",), order=1)
    from wengert.driver.pipeline import written_params

    assert written_params(_copy_then_append) == frozenset()
    assert written_params(_through_enumerate) == frozenset({0})


def _nested_reader(p, q, c):
    def energy(o):
        return 0.5 * o.m * o.v ** 2 + math.cos(o.x)
    return energy(q) * c + p.x


def _nested_writer(p, q, c):
    def push(o):
        o.x = o.x * c
        return o.x
    return push(q) + p.x


def _nested_capture_writer(p, c):
    keep = [p]

    def grab():
        keep[0].x = c  # into a captured list's item: ``p`` itself
        return 1.0
    return grab() + p.x


def _nested_recursive(p, n):
    def down(o, k):
        return o.x if k == 0 else down(o, k - 1)  # (calls itself: a captured function)
    return down(p, n)


@pytest.mark.parametrize("f, expected", [
    (_nested_reader, set()), (_nested_writer, {1}), (_nested_capture_writer, {0}),
    (_nested_recursive, {0}),
])
def test_a_nested_function_called_writes_what_its_body_writes(f, expected):
    """A function defined in the body and called is summarised by its own body: one that
    only reads its argument writes nothing (it was taken for an unknown callee, and
    ``f(b, b)`` refused); one writing into what it captures, or calling itself, stays
    unknown (every argument may be written)."""
    from wengert.driver.pipeline import written_params

    # (an unknown callee may write into every argument: numbers too, to this summary)
    assert set(written_params(f)) == expected if f in (_nested_reader, _nested_writer) \
        else set(written_params(f)) >= expected


def test_a_pullback_of_a_function_writing_nothing_writes_nothing():
    """``wengert.vjp(f, *args)[1](v)`` (check_grads' second order) writes what ``f`` writes:
    nothing for a reader, its own written parameters for a writer."""
    import wengert
    from wengert.driver.pipeline import written_params
    from wengert.testing import _pulled_back

    assert written_params(_pulled_back(wengert, _nested_reader, 1.0, 3)) == frozenset()
    assert 1 in written_params(_pulled_back(wengert, _nested_writer, 1.0, 3))
