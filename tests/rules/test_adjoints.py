"""Rules of the adjoint helpers generated pullbacks call (``rules/adjoints.py``).

Higher derivatives differentiate generated pullbacks, which call these helpers. Each
helper is checked four ways:

* through the transforms: a small module-level wrapper takes differentiable inputs and
  calls the helper; ``check_grads`` compares wengert's reverse and forward derivatives of
  the wrapper with central differences;
* rule by rule: ``check_rule`` checks the pullback is the transpose of the differential,
  both against finite differences, with batched tangents and cotangents too;
* one order up: a wrapper calls a rule itself and applies its pullback (or differential),
  so that the transforms differentiate the rule's body as a called function, the way a
  higher-order derivative meets a rule it cannot inline;
* by convention: ``None`` adjoints for ``None`` and structural arguments, zeros for a
  ``None`` cotangent, and a rule for every helper generated pullbacks call.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import typing

import numpy
import pytest

import wengert
import wengert.rules  # noqa: F401  (registers the rules)
from wengert import runtime
from wengert import tangents as tree
from wengert.rules import adjoints, registry
from wengert.testing import check_grads
from wengert.transforms import inline

rng = numpy.random.default_rng(11)
V4 = rng.standard_normal(4)
M32 = rng.standard_normal((3, 2))
X3 = [1.0, 2.0, 3.0]
Z32 = numpy.zeros((3, 2))
Z23 = numpy.zeros((2, 3))


def _r(*shape):
    """A random float or array (fresh for each case)."""
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


# --------------------------------------------------------------------------------------
# Wrappers: differentiable inputs in, one helper call, its result out.
# --------------------------------------------------------------------------------------


def getitem_list(a, b, g):
    return runtime.getitem_adjoint([a, None, b], X3, 1, g)


def getitem_list_from_zero(g):
    return runtime.getitem_adjoint(None, X3, 2, g)


def getitem_tuple_from_zero(g):
    return runtime.getitem_adjoint(None, (1.0, 2.0, 3.0), 0, g)


def getitem_slice(a, b, c, g):
    return runtime.getitem_adjoint([a, b, c], X3, slice(0, 2), g)


def getitem_rows(prev, g):
    return runtime.getitem_adjoint(prev, Z32, 1, g)


def getitem_fancy(prev, g):
    # Index 0 twice: both reads add into the same entry.
    return runtime.getitem_adjoint(prev, numpy.zeros(4), numpy.array([0, 3, 0]), g)


def getitem_dict(prev, g):
    return runtime.getitem_adjoint(prev, {"a": 1.0, "b": 2.0}, "b", g)


def getitem_sized(prev, g):
    # ``size``: the list was read when it had two entries and grew afterwards.
    return runtime.getitem_adjoint(prev, [1.0, 2.0, 3.0, 4.0], 0, g, 2)


def snapshot_list(a, b):
    return runtime.snapshot([a, b])


def snapshot_array(x):
    return runtime.snapshot(x)


def snapshot_dict(d):
    return runtime.snapshot(d)


def setitem_list(a, b, c):
    return runtime.setitem_adjoint([a, b, c], 1)


def setitem_slice(a, b, c):
    return runtime.setitem_adjoint([a, b, c], slice(1, 3))


def setitem_column(x):
    return runtime.setitem_adjoint(x, (slice(None), 0))


def setitem_dict(d):
    return runtime.setitem_adjoint(d, "a")


def pop_list(a, b, c):
    return runtime.pop_adjoint([a, b, c])


def getattr_fields(w, b, g):
    # The result is an ``Attrs``; a plain dict of it is what a caller sees.
    return dict(runtime.getattr_adjoint({"w": w, "b": b}, None, "w", g))


def getattr_new_field(b, g):
    return dict(runtime.getattr_adjoint({"b": b}, None, "w", g))


def field_of(w, b):
    return runtime.field_adjoint({"w": w, "b": b}, "b")


def setattr_fields(w, b):
    rest, item = runtime.setattr_adjoint({"w": w, "b": b}, "w")
    return dict(rest), item


def item_of_list(xs):
    return runtime.item_adjoint(xs, 1)


def item_of_tuple(a, b):
    return runtime.item_adjoint((a, b), 0)


def split_display(xs):
    return runtime.split_adjoint(xs, (None, 2, None))


def key_of(d):
    return runtime.key_adjoint(d, "b")


def subdict_of(d):
    return runtime.subdict_adjoint(d, {"a": 1, "c": 2})


def unpack_starred(a, b, c):
    return runtime.unpack_adjoint((a, [b, c], None), (1.0, 2.0, 3.0, 4.0), 1)


def unpack_list(a, b, c):
    return runtime.unpack_adjoint((a, b, c), X3, None)


def unpack_rows(a, b):
    return runtime.unpack_adjoint((a, None, b), Z32, None)


def push_twice(a, b, c):
    items = runtime.push([a], b)
    return runtime.push(items, c)


def reversed_list(a, b, c):
    return runtime.reversed_adjoint([a, b, c], X3)


def reversed_tuple(a, b):
    return runtime.reversed_adjoint([a, None, b], (1.0, 2.0, 3.0))


def reversed_rows(a, b):
    return runtime.reversed_adjoint([a, None, b], Z32)


# A loop left by `break` collected fewer adjoints than its iterable has items.
def finish_partial(a, b):
    return runtime.finish_adjoint([a, None, b], [1.0, 2.0, 3.0])


def finish_dict(a):
    return runtime.finish_adjoint({"a": a}, {"a": 1.0, "b": 2.0})


def reversed_after_break(a, b):
    return runtime.reversed_adjoint([a, b], X3)


def reversed_rows_after_break(a):
    return runtime.reversed_adjoint([a], Z32)


def inout_of(a, b):
    return runtime.inout((a, None, b), 2)


def as_tuple_list(xs):
    return runtime.as_tuple(xs)


def as_tuple_rows(x):
    return runtime.as_tuple(x)


def regroup_outs(a, b, c, d):
    return runtime.regroup((a, b, c, d), (None, (1.0, 2.0), None))


def like_list(a, b):
    return runtime.like_structure((a, b), [1.0, 2.0])


def like_tuple(a, b):
    return runtime.like_structure((a, b), (1.0, 2.0))


def like_array(a, b):
    return runtime.like_structure((a, None, b), numpy.zeros(3))


def add_lists(xs, ys):
    return runtime.add_adjoint(xs, ys)


def add_dicts(d, e):
    return runtime.add_adjoint(d, e)


def _wrapper_cases():
    return [
        (getitem_list, (_r(), _r(), _r())),
        (getitem_list_from_zero, (_r(),)),
        (getitem_tuple_from_zero, (_r(),)),
        (getitem_slice, (_r(), _r(), _r(), [_r(), _r()])),
        (getitem_rows, (_r(3, 2), _r(2))),
        (getitem_fancy, (_r(4), _r(3))),
        (getitem_dict, ({"a": _r()}, _r())),
        (getitem_sized, ([_r(), _r()], _r())),
        (snapshot_list, (_r(), _r())),
        (snapshot_array, (_r(4),)),
        (snapshot_dict, ({"a": _r(), "b": _r(2)},)),
        (setitem_list, (_r(), _r(), _r())),
        (setitem_slice, (_r(), _r(), _r())),
        (setitem_column, (_r(3, 2),)),
        (setitem_dict, ({"a": _r(), "b": _r()},)),
        (pop_list, (_r(), _r(), _r())),
        (getattr_fields, (_r(), _r(), _r())),
        (getattr_new_field, (_r(), _r())),
        (field_of, (_r(), _r())),
        (setattr_fields, (_r(), _r())),
        (item_of_list, ([_r(), _r(2), _r()],)),
        (item_of_tuple, (_r(), _r())),
        (split_display, ([_r(), _r(), _r(), _r()],)),
        (key_of, ({"a": _r(), "b": _r()},)),
        (subdict_of, ({"a": _r(), "b": _r(), "c": _r()},)),
        (unpack_starred, (_r(), _r(), _r())),
        (unpack_list, (_r(), _r(), _r())),
        (unpack_rows, (_r(2), _r(2))),
        (push_twice, (_r(), _r(), _r())),
        (reversed_list, (_r(), _r(), _r())),
        (reversed_tuple, (_r(), _r())),
        (reversed_rows, (_r(2), _r(2))),
        (reversed_after_break, (_r(), _r())),
        (finish_partial, (_r(), _r())),
        (finish_dict, (_r(),)),
        (reversed_rows_after_break, (_r(2),)),
        (inout_of, (_r(), _r())),
        (as_tuple_list, ([_r(), _r()],)),
        (as_tuple_rows, (_r(3, 2),)),
        (regroup_outs, (_r(), _r(), _r(), _r())),
        (like_list, (_r(), _r())),
        (like_tuple, (_r(), _r())),
        (like_array, (_r(), _r())),
        (add_lists, ([_r(), _r()], [_r(), _r()])),
        (add_dicts, ({"a": _r()}, {"a": _r()})),
    ]


WRAPPER_CASES = _wrapper_cases()


@pytest.mark.parametrize("fn, args", WRAPPER_CASES, ids=[f.__name__ for f, _ in WRAPPER_CASES])
def test_helper_against_finite_differences(fn, args):
    check_grads(fn, args, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, args", [c for c in WRAPPER_CASES if c[0] in (
    getitem_list, getitem_slice, getitem_rows, getitem_fancy, getitem_sized, setitem_list,
    setitem_column, pop_list, item_of_list, split_display, unpack_starred, unpack_rows,
    push_twice, reversed_list, reversed_rows, inout_of, as_tuple_list, as_tuple_rows,
    regroup_outs, like_list, like_array, snapshot_array, getattr_fields,
)], ids=lambda c: getattr(c, "__name__", ""))
def test_batched_forward_matches_reverse(fn, args):
    # jacfwd runs one forward pass with a batch of tangents (a leading axis), which the
    # array cases must keep in front; jacrev runs one pullback per output entry.
    nums = tuple(range(len(args)))
    forward = tree.flatten(wengert.jacfwd(fn, argnums=nums)(*args))[0]
    reverse = tree.flatten(wengert.jacrev(fn, argnums=nums)(*args))[0]
    assert len(forward) == len(reverse)
    for f, r in zip(forward, reverse):
        numpy.testing.assert_allclose(f, r, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------------
# Rule by rule: transposition, finite differences, batches (wengert.testing.check_rule).
# --------------------------------------------------------------------------------------

#: The cases declared beside the rules of the run-time helpers and of the linear helpers
#: their rules are written with (checked one by one in test_form.py).
RULE_CASES = [(rule.fn, args) for rule in registry.all_rules()
              if id(rule.fn) in {id(f) for f in (*vars(runtime).values(), *vars(adjoints).values())}
              and rule.vjp is not None  # (a Python definition's cases: tests/rules/test_form.py)
              for args in rule.cases]


def _rule_id(case):
    fn, args = case
    return f"{fn.__name__}-{len(args)}"




# --------------------------------------------------------------------------------------
# One order up: a rule called (not inlined) inside code that is differentiated.
# --------------------------------------------------------------------------------------


# The reverse rules, called (not inlined) like any function inside differentiated code.
as_tuple_vjp = registry.lookup(runtime.as_tuple).vjp
field_adjoint_vjp = registry.lookup(runtime.field_adjoint).vjp
getattr_adjoint_vjp = registry.lookup(runtime.getattr_adjoint).vjp
getitem_adjoint_vjp = registry.lookup(runtime.getitem_adjoint).vjp
inout_vjp = registry.lookup(runtime.inout).vjp
item_adjoint_vjp = registry.lookup(runtime.item_adjoint).vjp
key_adjoint_vjp = registry.lookup(runtime.key_adjoint).vjp
like_structure_vjp = registry.lookup(runtime.like_structure).vjp
pop_adjoint_vjp = registry.lookup(runtime.pop_adjoint).vjp
push_vjp = registry.lookup(runtime.push).vjp
regroup_vjp = registry.lookup(runtime.regroup).vjp
reversed_adjoint_vjp = registry.lookup(runtime.reversed_adjoint).vjp
setattr_adjoint_vjp = registry.lookup(runtime.setattr_adjoint).vjp
setitem_adjoint_vjp = registry.lookup(runtime.setitem_adjoint).vjp
snapshot_vjp = registry.lookup(runtime.snapshot).vjp
split_adjoint_vjp = registry.lookup(runtime.split_adjoint).vjp
subdict_adjoint_vjp = registry.lookup(runtime.subdict_adjoint).vjp
unpack_adjoint_vjp = registry.lookup(runtime.unpack_adjoint).vjp
getitem_adjoint_jvp = registry.lookup(runtime.getitem_adjoint).jvp
push_jvp = registry.lookup(runtime.push).jvp
reversed_adjoint_jvp = registry.lookup(runtime.reversed_adjoint).jvp



def pullback_getitem(a, g, b0, b1, b2):
    _, pullback = getitem_adjoint_vjp([a, None, a], X3, 1, g)
    return pullback([b0, b1, b2])


def pullback_getitem_rows(m, g, r):
    _, pullback = getitem_adjoint_vjp(m, Z32, 1, g)
    return pullback(r)


def pullback_setitem(a, b, c, r0, r1, r2, v):
    _, pullback = setitem_adjoint_vjp([a, b, c], 1)
    return pullback(([r0, r1, r2], v))


def pullback_setitem_rows(m, r0, r1):
    _, pullback = setitem_adjoint_vjp(m, 1)
    return pullback((r0, r1))


def pullback_pop(a, b, c, r0, r1, r2):
    _, pullback = pop_adjoint_vjp([a, b, c])
    return pullback(([r0, r1], r2))


def pullback_push(a, b, r0, r1):
    _, pullback = push_vjp([a], b)
    return pullback([r0, r1])


def pullback_getattr(a, b, g, r0, r1):
    _, pullback = getattr_adjoint_vjp({"w": a, "b": b}, None, "w", g)
    prev_bar, _, _, g_bar = pullback({"w": r0, "b": r1})
    return prev_bar, g_bar


def pullback_field(a, b, r):
    _, pullback = field_adjoint_vjp({"w": a, "b": b}, "w")
    return dict(pullback(r)[0])


def pullback_setattr(a, b, r0, r1):
    _, pullback = setattr_adjoint_vjp({"w": a, "b": b}, "w")
    return dict(pullback(({"b": r0}, r1))[0])


def pullback_item(a, b, r):
    _, pullback = item_adjoint_vjp([a, b], 1)
    return pullback(r)


def pullback_split(a, b, c, d, r0, r1, r2):
    _, pullback = split_adjoint_vjp([a, b, c, d], (None, 2, None))
    return pullback([r0, [r1, r2], None])


def pullback_key(a, b, r):
    _, pullback = key_adjoint_vjp({"a": a, "b": b}, "b")
    return pullback(r)


def pullback_subdict(a, b, c, r0, r1):
    _, pullback = subdict_adjoint_vjp({"a": a, "b": b, "c": c}, {"a": 1, "c": 2})
    return pullback({"a": r0, "c": r1})


def pullback_unpack(a, b, c, r0, r1, r2, r3):
    _, pullback = unpack_adjoint_vjp((a, [b, c], None), (1.0, 2.0, 3.0, 4.0), 1)
    return pullback((r0, r1, r2, r3))


def pullback_reversed(a, b, r0, r1):
    _, pullback = reversed_adjoint_vjp([a, b], X3[:2])
    return pullback([r0, r1])


def pullback_reversed_rows(a, b, r):
    _, pullback = reversed_adjoint_vjp([a, b], Z23)
    return pullback(r)


def pullback_inout(a, b, r):
    _, pullback = inout_vjp((a, b), 0)
    return pullback(r)


def pullback_as_tuple(a, b, r0, r1):
    _, pullback = as_tuple_vjp([a, b])
    return pullback((r0, r1))


def pullback_regroup(a, b, c, r0, r1, r2):
    _, pullback = regroup_vjp((a, b, c), (None, (1.0, 2.0)))
    return pullback([r0, (r1, r2)])


def pullback_like_structure(a, b, r0, r1):
    _, pullback = like_structure_vjp((a, b), [1.0, 2.0])
    return pullback([r0, r1])


def pullback_snapshot(a, b, r0, r1):
    _, pullback = snapshot_vjp([a, b])
    return pullback([r0, r1])


def differential_getitem_rows(m, g, u, w):
    _, differential = getitem_adjoint_jvp(m, Z32, 1, g)
    return differential(u, None, None, w)


def differential_reversed_rows(a, b, u, w):
    _, differential = reversed_adjoint_jvp([a, b], Z23)
    return differential([u, w], None)


def differential_push(a, b, u, w):
    _, differential = push_jvp([a], b)
    return differential([u], w)


def _called_rule_cases():
    return [
        (pullback_getitem, (_r(), _r(), _r(), _r(), _r())),
        (pullback_getitem_rows, (_r(3, 2), _r(2), _r(3, 2))),
        (pullback_setitem, tuple(_r() for _ in range(7))),
        (pullback_setitem_rows, (_r(3, 2), _r(3, 2), _r(2))),
        (pullback_pop, tuple(_r() for _ in range(6))),
        (pullback_push, tuple(_r() for _ in range(4))),
        (pullback_getattr, tuple(_r() for _ in range(5))),
        (pullback_field, (_r(), _r(), _r())),
        (pullback_setattr, tuple(_r() for _ in range(4))),
        (pullback_item, (_r(), _r(), _r())),
        (pullback_split, tuple(_r() for _ in range(7))),
        (pullback_key, (_r(), _r(), _r())),
        (pullback_subdict, tuple(_r() for _ in range(5))),
        (pullback_unpack, tuple(_r() for _ in range(7))),
        (pullback_reversed, tuple(_r() for _ in range(4))),
        (pullback_reversed_rows, (_r(3), _r(3), _r(2, 3))),
        (pullback_inout, (_r(), _r(), _r())),
        (pullback_as_tuple, tuple(_r() for _ in range(4))),
        (pullback_regroup, tuple(_r() for _ in range(6))),
        (pullback_like_structure, tuple(_r() for _ in range(4))),
        (pullback_snapshot, tuple(_r() for _ in range(4))),
        (differential_getitem_rows, (_r(3, 2), _r(2), _r(3, 2), _r(2))),
        (differential_reversed_rows, (_r(3), _r(3), _r(3), _r(3))),
        (differential_push, tuple(_r() for _ in range(4))),
    ]


CALLED_RULE_CASES = _called_rule_cases()


@pytest.mark.parametrize("fn, args", CALLED_RULE_CASES,
                         ids=[f.__name__ for f, _ in CALLED_RULE_CASES])
def test_called_rule_differentiates_again(fn, args):
    # The pullback closes over constants only (flags, skeletons, indices), so the
    # transforms may differentiate the rule's body where it is called.
    check_grads(fn, args, modes=("rev", "fwd"))


# --------------------------------------------------------------------------------------
# Conventions: None and structural arguments, None cotangents, inlinable shapes.
# --------------------------------------------------------------------------------------

# (helper, arguments, a cotangent of the result, positions whose adjoint must be None)
NONE_CASES = [
    (runtime.getitem_adjoint, (None, X3, 1, 0.5), [0.1, 0.2, 0.3], (0, 1, 2)),
    (runtime.getitem_adjoint, ([0.1, 0.2, 0.3], X3, 1, None), [0.1, 0.2, 0.3], (1, 2, 3)),
    (runtime.getitem_adjoint, ([0.1, 0.2], X3, 1, 0.5, 2), [0.1, 0.2], (1, 2, 4)),
    (runtime.getattr_adjoint, (None, None, "w", 0.5), {"w": 0.3}, (0, 1, 2)),
    (runtime.getattr_adjoint, ({"w": 0.1}, None, "w", None), {"w": 0.3}, (1, 2, 3)),
    (runtime.setitem_adjoint, (None, 1), ([0.1, None, 0.3], 0.2), (0, 1)),
    (runtime.setattr_adjoint, (None, "w"), ({"b": 0.1}, 0.2), (0, 1)),
    (runtime.pop_adjoint, (None,), ([0.1], 0.2), (0,)),
    (runtime.item_adjoint, (None, 1), 0.5, (0, 1)),
    (runtime.field_adjoint, (None, "w"), 0.5, (0, 1)),
    (runtime.key_adjoint, (None, "a"), 0.5, (0, 1)),
    (runtime.subdict_adjoint, (None, {"a": 1.0}), {"a": 0.5}, (0, 1)),
    (runtime.split_adjoint, (None, (None, 2)), [0.1, [0.2, 0.3]], (0, 1)),
    (runtime.inout, (None, 1), 0.5, (0, 1)),
    (runtime.push, ([0.1], None), [0.2, 0.3], (1,)),
    (runtime.reversed_adjoint, ([None, None], X3[:2]), [0.1, 0.2], (0, 1)),
    # Iterating a dict yields its keys: no adjoint reaches the collected entries.
    (runtime.reversed_adjoint, ([0.1, 0.2], {"a": 1.0, "b": 2.0}), None, (0, 1)),
    (runtime.like_structure, ((None, None), X3[:2]), [0.1, 0.2], (0, 1)),
    (runtime.unpack_adjoint, ((None, None), (1.0, 2.0), None), (0.1, 0.2), (0, 1, 2)),
    (runtime.unpack_adjoint, ((0.1, 0.2), (1.0, 2.0), None), (0.1, 0.2), (1, 2)),
    (runtime.regroup, ((0.1, 0.2, 0.3), (None, (1.0, 2.0))), [0.1, (0.2, 0.3)], (1,)),
    (runtime.like_structure, ((0.1, 0.2), X3[:2]), [0.1, 0.2], (1,)),
    (runtime.as_tuple, ([0.1, 0.2],), (0.3, 0.4), ()),
]


@pytest.mark.parametrize("fn, args, out_bar, nones", NONE_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(NONE_CASES)])
def test_none_and_structural_arguments_get_none(fn, args, out_bar, nones):
    _, pullback = registry.lookup(fn).vjp(*args)
    adjoints_ = pullback(out_bar)
    assert isinstance(adjoints_, tuple) and len(adjoints_) == len(args)
    for i in nones:
        assert adjoints_[i] is None, f"argument {i} of {fn.__name__}: {adjoints_[i]!r}"


def _is_zero(t):
    return all(numpy.all(numpy.asarray(leaf) == 0) for leaf in tree.flatten(t)[0])


@pytest.mark.parametrize("fn, args", RULE_CASES, ids=[_rule_id(c) for c in RULE_CASES])
def test_none_cotangent_is_zero(fn, args):
    rule = registry.lookup(fn)
    _, pullback = rule.vjp(*args)
    adjoints_ = pullback(None)
    assert isinstance(adjoints_, tuple) and len(adjoints_) == len(args)
    assert all(_is_zero(a) for a in adjoints_), adjoints_
    _, differential = rule.jvp(*args)
    assert _is_zero(differential(*[None] * len(args)))


#: Every runtime helper that generated pullbacks (and the forward code of a VJP) call.
PULLBACK_HELPERS = [
    "add_adjoint", "snapshot", "getitem_adjoint", "setitem_adjoint", "pop_adjoint",
    "getattr_adjoint", "field_adjoint", "setattr_adjoint", "item_adjoint", "split_adjoint",
    "key_adjoint", "subdict_adjoint", "unpack_adjoint", "push", "reversed_adjoint", "inout",
    "as_tuple", "regroup", "like_structure", "check_list", "finish_adjoint",
    "getitem_adjoint_owned", "pop_adjoint_owned", "getattr_adjoint_owned",
    "setattr_adjoint_owned", "unpop_adjoint", "remove_adjoint",
    "entry_adjoint", "entry_adjoint_of_array", "entry_adjoint_of_array_owned",
    "entry_adjoint_of_list", "entry_adjoint_of_list_owned", "float_pop_adjoint",
    "float_pop_adjoint_owned", "entry_write_of_list", "entry_write_of_list_owned",
    "entry_write_adjoint", "entry_write_adjoint_owned", "display_item_adjoint", "item_tangent",
    "spread_adjoint", "total_adjoint", "slice_write_adjoint", "slice_write_merge",
    "slice_pair_adjoint", "nested_entry_adjoint_owned", "nested_entry_adjoint",
    "items_adjoint_owned", "fields_adjoint", "nested_entry_taken", "slice_pairs_adjoint",
]
#: Helpers that write into their arguments or raise, so an unused call must stay.
IMPURE = {"push", "check_list"}


def _public_functions():
    return {name: fn for name, fn in vars(runtime).items()
            if inspect.isfunction(fn) and not name.startswith("_")
            and fn.__module__.startswith(runtime.__name__ + ".")}


@pytest.mark.parametrize("name", PULLBACK_HELPERS)
def test_every_pullback_helper_has_a_rule(name):
    fn = _public_functions().get(name)
    assert fn is not None, f"runtime.{name} is not a public runtime function any more"
    rule = registry.lookup(fn)
    assert rule is not None, f"runtime.{name} has no rule"
    if name == "check_list":
        assert rule.nondifferentiable and not rule.pure
        return
    if name in FUSED:
        # A fusion of helpers with rules: differentiated as its Python definition, which
        # must compute what it does.
        assert rule.python is not None and rule.pure
        for args in FUSED[name]:
            assert fn(*copy.deepcopy(args)) == rule.python(*copy.deepcopy(args))
        return
    assert rule.vjp is not None and rule.jvp is not None and not rule.nondifferentiable
    assert rule.pure == (name not in IMPURE)


@dataclasses.dataclass
class _Body:
    x: float
    v: float


class _Pair(typing.NamedTuple):
    x: float
    v: float


#: Helpers the in-place pass writes for several in a row, with sample arguments.
FUSED = {
    # (apart, overlapping, reversed order, empty parts, a step, a tuple, a zero adjoint)
    "slice_pair_adjoint": [([1.0, 2.0, 3.0], slice(None, 1), slice(2, None), [0.5, 0.25]),
                           ([1.0, 2.0, 3.0], slice(None, 2), slice(1, None),
                            [0.1, 0.2, 0.3, 0.4]),
                           ([1.0, 2.0, 3.0], slice(2, None), slice(None, 1), [0.5, 0.25]),
                           ([1.0, 2.0, 3.0], slice(None, 0), slice(5, None), []),
                           ([1.0, 2.0, 3.0], slice(3, 1), slice(1, None), [0.5, 0.25]),
                           ([1.0, 2.0, 3.0, 4.0], slice(None, None, 2), slice(1, 2),
                            [0.5, 0.25, 2.0]),
                           ((1.0, 2.0, 3.0), slice(None, 1), slice(2, None), [0.5, 0.25]),
                           ([1.0, 2.0, 3.0], slice(None, 1), slice(2, None), None)],
    "nested_entry_adjoint_owned": [(prev, m, 0, m[0], j, 0.5)
                                   for m in [[[1.0, 2.0], [3.0]]]
                                   for prev, j in [([None, None], 1), ([[0.5, None], None], 0),
                                                   ([None, [0.25]], -2)]],
    "nested_entry_adjoint": [(prev, m, i, m[i], j, 0.5)
                             for m in [[[1.0, 2.0], [3.0]]]
                             for prev, i, j in [(None, 0, 1), (None, -1, 0), (None, 0, -2),
                                                ([[0.5, None], None], 0, 0),
                                                ([None, [0.25]], 1, 0)]],
    # (the entry's adjoint taken out of a row's; the row's adjoint absent, shared, held)
    "nested_entry_taken": [(prev, m, i, m[i], j)
                           for m in [[[1.0, 2.0], [3.0, 4.0]]]
                           for prev, i, j in [(None, 0, 1), ([None, None], 1, 0),
                                              ([[0.5, 0.25], None], 0, -1),
                                              ([[0.5, None], [1.0, 2.0]], -1, 1)]],
    "fields_adjoint": [(obj, names, *gs)
                       for obj in [_Body(1.0, 2.0), _Pair(1.0, 2.0)]
                       for names, gs in [(("x", "v"), (0.5, 0.25)), (("v",), (None,)),
                                         (("v", "x"), (None, 0.5))]],
    # (the items' adjoints collected last first; fewer than the slice holds after a break)
    "items_adjoint_owned": [(prev, m, index, items, m[index])
                            for m in [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]
                            for prev in [None, [None, [0.5, None], None],
                                         [[1.0, 1.0], [0.5, 0.25], [None, 2.0]]]
                            for index, items in [
                                (slice(1, None), [[0.1, 0.2], [0.3, None]]),
                                (slice(None, None, 2), [[0.1, 0.2], None]),
                                (slice(None, None, -1), [[0.1, 0.2]]),
                                (slice(1, None), [None, None]), (slice(0, 0), [])]],
    # (a minor's rows: the adjoint's last items the rows'; held rows added into, a step,
    # fewer adjoints than rows after a break, a zero adjoint, overlapping slices)
    "slice_pairs_adjoint": [(prev, m, index, m[index], first, second, gs)
                            for m in [[[1.0, 2.0, 3.0], [3.0, 4.0, 5.0], [5.0, 6.0, 7.0]]]
                            for prev in [None, [None, [0.5, None, 1.0], None],
                                         [[1.0, 1.0, 1.0], [0.5, 0.25, 0.0], [None, 2.0, 1.0]]]
                            for index, first, second, gs in [
                                (slice(1, None), slice(None, 1), slice(2, None),
                                 [[9.0, 9.0], [0.1, 0.2], [0.3, None]]),
                                (slice(None, None, 2), slice(None, 1), slice(1, None),
                                 [[0.1, 0.2, 0.3], None]),
                                (slice(None, None, -1), slice(None, 2), slice(1, None),
                                 [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8],
                                  [None, 1.0, 1.0, None]]),
                                (slice(1, None), slice(None, 1), slice(2, None), None),
                                (slice(0, 0), slice(None, 1), slice(2, None), [])]],
}


def test_every_adjoint_helper_is_listed():
    # A new ``*_adjoint`` helper is called by generated pullbacks: it needs rules here.
    adjoint_helpers = {name for name in _public_functions() if name.endswith("_adjoint")}
    assert adjoint_helpers <= set(PULLBACK_HELPERS)


# Argument types as the inliner sees them at a typical call site.
INLINE_TYPES = [
    (runtime.add_adjoint, [list, list]), (runtime.snapshot, [list]),
    (runtime.setitem_adjoint, [list, int]), (runtime.setitem_adjoint, [numpy.ndarray, int]),
    (runtime.pop_adjoint, [list]), (runtime.getattr_adjoint, [dict, type(None), str, float]),
    (runtime.field_adjoint, [dict, str]), (runtime.setattr_adjoint, [dict, str]),
    (runtime.item_adjoint, [list, int]), (runtime.split_adjoint, [list, tuple]),
    (runtime.key_adjoint, [dict, str]), (runtime.subdict_adjoint, [dict, dict]),
    (runtime.unpack_adjoint, [tuple, list, int]), (runtime.push, [list, float]),
    (runtime.reversed_adjoint, [list, list]), (runtime.inout, [tuple, int]),
    (runtime.as_tuple, [list]), (runtime.regroup, [tuple, tuple]),
    (runtime.like_structure, [tuple, list]),
]


@pytest.mark.parametrize("fn, types", INLINE_TYPES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(INLINE_TYPES)])
def test_rules_inline_where_types_are_known(fn, types):
    # ``getitem_adjoint`` takes an optional ``size``: its rules are always called.
    rule = registry.lookup(fn)
    assert inline.specialized_vjp(rule.vjp, len(types), types) is not None
    assert inline.specialized_jvp(rule.jvp, len(types), types) is not None
