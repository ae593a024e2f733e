"""Rules for the helpers generated pullbacks call, so that they differentiate again.

A gradient's IR (``api._grad_ir``) is a pullback spliced after its forward code; taking
its derivative (``grad(grad(f))``, ``hessian``) meets these helpers as ordinary calls.
Each is linear in its adjoint arguments (the primal arguments ``x``, ``obj``, ``index``,
``size``, ``name`` only give structure), so its rules are short:

* its forward rule applies the helper itself to the tangents (tangents may carry leading
  batch axes, so the array cases go through the batch-aware helpers below);
* its reverse rule is the transposed linear map (the transpose of "add ``g`` into ``prev``
  at ``index``" is "``prev_bar = out_bar``, ``g_bar = out_bar[index]``").

``None`` is a zero adjoint everywhere: a pullback returns ``None`` for an argument that was
``None`` (a constant zero) or carries no derivative, and accepts ``None`` for its whole
cotangent or any part of a tuple one.  A pullback (or differential) reads no
argument directly: what it needs of one (is it ``None``, its length, its shape, an index)
is taken in the rule's primal part through the non-differentiable ``_skeleton`` and
``_const``, so that the rule can also be called, rather than inlined, in code that is
differentiated again (a closure that reads a value being differentiated cannot be).

Rule bodies call only callables with rules, because they are inlined and differentiated
again for the next derivative: the runtime helpers themselves, and the private linear
helpers below, which come in transposed pairs (``_take`` / ``getitem_adjoint``,
``_stack`` / ``_items``, ``_pack`` / ``_unpack``, ``_join`` / ``split_adjoint``,
``_ungroup`` / ``regroup``, ``_append`` / ``pop_adjoint``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy

from wengert import runtime
from wengert.rules.adjoint_parts import (
    _add_at,
    _append,
    _const,
    _holder,
    _items,
    _join,
    _layout,
    _pack,
    _past_batch,
    _skeleton,
    _stack,
    _take,
    _ungroup,
    _unpack,
)
from wengert.rules.form import ans_bar, cases, deflinear, defrule
from wengert.rules.registry import (
    defpython,
    defrules,
    lookup,
    mark_pure,
    mark_result_type,
    nondifferentiable,
)

# --------------------------------------------------------------------------------------
# The runtime helpers.
# --------------------------------------------------------------------------------------


@defrule(runtime.setitem_adjoint)
def setitem_adjoint_rule(prev, index):
    # (prev with its slot cleared, the slot): the transpose puts the slot's adjoint back
    # into the cleared slot of the first part's adjoint.
    pair = runtime.setitem_adjoint(prev, index)
    prev_like = _skeleton(prev)
    where = _const(index)
    # The entries a repeated position did not keep were cleared: no adjoint flows back.
    kept = runtime.last_writes(prev_like, where)

    def setitem_adjoint_pullback(pair_bar):
        prev_bar = None
        rest_bar = runtime.item_adjoint(pair_bar, 0)
        item_bar = runtime.item_adjoint(pair_bar, 1)
        if kept is not None and item_bar is not None:
            item_bar = item_bar * kept
        if isinstance(prev_like, numpy.ndarray):
            rest_bar = runtime.setitem_adjoint(rest_bar, _past_batch(rest_bar, prev_like, where))[0]
            prev_bar = _add_at(rest_bar, prev_like, where, item_bar)
        elif prev_like is not None:
            rest_bar = runtime.setitem_adjoint(rest_bar, where)[0]
            if rest_bar is None and item_bar is not None:
                rest_bar = prev_like  # all the entries, not just the slot's
            prev_bar = runtime.getitem_adjoint(rest_bar, prev_like, where, item_bar)
        return prev_bar, None

    def setitem_adjoint_differential(prev_dot, index_dot):
        if isinstance(prev_like, numpy.ndarray):
            rest_dot, item_dot = runtime.setitem_adjoint(
                prev_dot, _past_batch(prev_dot, prev_like, where))
            # (the slot's tangent with its batch axes in front, as tangents have them)
            return rest_dot, runtime.batch_front(item_dot, prev_dot, prev_like, where)
        return runtime.setitem_adjoint(prev_dot, where)

    return pair, setitem_adjoint_pullback, setitem_adjoint_differential


@defrule(runtime.getattr_adjoint)
def getattr_adjoint_rule(prev, obj, name, g):
    out = runtime.getattr_adjoint(prev, obj, name, g)
    prev_like = _skeleton(prev)
    obj_like = _skeleton(obj)
    field = _const(name)
    # A named tuple's field is an item: its adjoint is the tuple's (runtime.getattr_adjoint).
    item = _const(runtime.field_index(obj, name))
    named = obj if item is not None else None
    g_zero = g is None

    def getattr_adjoint_pullback(out_bar):
        prev_bar = None
        g_bar = None
        if item is not None:
            if prev_like is not None:
                prev_bar = out_bar
            if not g_zero:
                g_bar = _take(out_bar, obj_like, item)
            return prev_bar, None, None, g_bar
        if prev_like is not None:
            prev_bar = runtime.subdict_adjoint(out_bar, prev_like)
        if not g_zero:
            g_bar = runtime.field_adjoint(out_bar, field)
        return prev_bar, None, None, g_bar

    def getattr_adjoint_differential(prev_dot, obj_dot, name_dot, g_dot):
        return runtime.getattr_adjoint(prev_dot, named, field, g_dot)

    return out, getattr_adjoint_pullback, getattr_adjoint_differential


@defrule(runtime.setattr_adjoint)
def setattr_adjoint_rule(prev, name):
    pair = runtime.setattr_adjoint(prev, name)
    prev_like = _skeleton(prev)
    field = _const(name)

    def setattr_adjoint_pullback(pair_bar):
        prev_bar = None
        if prev_like is not None:
            rest_bar = runtime.setattr_adjoint(runtime.item_adjoint(pair_bar, 0), field)[0]
            item_bar = runtime.item_adjoint(pair_bar, 1)
            if rest_bar is None and item_bar is not None:
                rest_bar = prev_like  # all the fields, not just the one set
            prev_bar = runtime.getattr_adjoint(rest_bar, None, field, item_bar)
        return prev_bar, None

    def setattr_adjoint_differential(prev_dot, name_dot):
        return runtime.setattr_adjoint(prev_dot, field)

    return pair, setattr_adjoint_pullback, setattr_adjoint_differential


@defrule(runtime.push)
def push_rule(items, g):
    # ``items`` is appended to in place and returned: the adjoint of the longer list
    # splits back into the shorter list's and the new entry's.
    n = len(items)
    y = runtime.push(items, g)
    g_zero = g is None

    def push_pullback(y_bar):
        items_bar, g_bar = runtime.pop_adjoint(y_bar)
        if g_zero:
            g_bar = None
        return items_bar, g_bar

    def push_differential(items_dot, g_dot):
        # The list's tangent grows in place with the list, as forward mode mirrors writes.
        if items_dot is None:
            items_dot = [None] * n
        return runtime.push(items_dot, g_dot)

    return y, push_pullback, push_differential


@defrule(runtime.reversed_adjoint)
def reversed_adjoint_rule(collected, iterable):
    out = runtime.reversed_adjoint(collected, iterable)
    zero = out is None
    n = len(collected)
    iterable_like = _skeleton(iterable)

    def reversed_adjoint_pullback(out_bar):
        collected_bar = None
        if not zero:
            m = max(n, len(iterable_like))
            collected_bar = _items(out_bar, iterable_like, m)[:n][::-1]
        return collected_bar, None

    def reversed_adjoint_differential(collected_dot, iterable_dot):
        out_dot = None
        if not zero and collected_dot is not None:
            pad = max(0, len(iterable_like) - n)  # items a `break` never reached
            out_dot = _stack(collected_dot[::-1] + [None] * pad, iterable_like)
        return out_dot

    return out, reversed_adjoint_pullback, reversed_adjoint_differential


@defrule(runtime.as_tuple)
def as_tuple_rule(x):
    y = runtime.as_tuple(x)
    n = len(y)
    x_like = _skeleton(x)

    def as_tuple_pullback(y_bar):
        return (_stack(y_bar, x_like),)

    def as_tuple_differential(x_dot):
        return tuple(_items(x_dot, x_like, n))

    return y, as_tuple_pullback, as_tuple_differential


# The rules of the linear helpers, from their transposes (see ``deflinear``): what a
# transpose reads of an argument is its skeleton or a constant, never its values.
_PREV_X_INDEX = {"prev": _skeleton, "x": _skeleton, "index": _const}
deflinear(runtime.add_adjoint, lambda a, b: ans_bar, lambda a, b: ans_bar, arg=(0, 1))
deflinear(runtime.snapshot, lambda x: ans_bar)
# A sum's adjoint spread over a list's entries and a list adjoint's entries summed: each
# the other's transpose.
deflinear(runtime.spread_adjoint, lambda prev, g, n: ans_bar,
          lambda prev, g, n: runtime.total_adjoint(ans_bar), arg=(0, 1),
          keep={"n": _const}, zeros=True)
deflinear(runtime.total_adjoint, lambda bar: runtime.spread_adjoint(None, ans_bar, len(bar)),
          keep={"bar": _skeleton}, zeros=True)
deflinear(runtime.getitem_adjoint,
          lambda prev, x, index, g, *size: (
              runtime.subdict_adjoint(ans_bar, prev) if isinstance(prev, dict) else ans_bar),
          lambda prev, x, index, g, *size: _take(ans_bar, x, index),
          arg=(0, 3), keep=_PREV_X_INDEX, zeros=True,
          # An array's tangents may carry leading batch axes.
          tangent=lambda prev, x, index, g, *size: (
              _add_at(prev, x, index, g) if isinstance(x, numpy.ndarray)
              else runtime.getitem_adjoint(prev, x, index, g, *size)))
deflinear(runtime.entry_adjoint,
          lambda prev, x, key, g: (
              runtime.subdict_adjoint(ans_bar, prev) if isinstance(prev, dict) else ans_bar),
          lambda prev, x, key, g: runtime.key_adjoint(ans_bar, key) if key in x else None,
          arg=(0, 3), keep={"prev": _skeleton, "x": _skeleton, "key": _const}, zeros=True)
deflinear(runtime.pop_adjoint, lambda prev: _append(
    runtime.item_adjoint(ans_bar, 0), runtime.item_adjoint(ans_bar, 1), len(prev) - 1),
    keep={"prev": _skeleton}, zeros=True)
# Popping an entry off a list adjoint and putting it back are each other's transposes.
deflinear(runtime.unpop_adjoint,
          lambda prev, g, index, n: runtime.item_adjoint(
              runtime.remove_adjoint(ans_bar, index, n), 0),
          lambda prev, g, index, n: runtime.item_adjoint(
              runtime.remove_adjoint(ans_bar, index, n), 1),
          arg=(0, 1), keep={"index": _const, "n": _const}, zeros=True)
deflinear(runtime.remove_adjoint, lambda prev, index, n: runtime.unpop_adjoint(
    runtime.item_adjoint(ans_bar, 0), runtime.item_adjoint(ans_bar, 1), index, n),
    keep={"index": _const, "n": _const}, zeros=True)
# A slice written into a list, whatever its length, and its transpose.
deflinear(runtime.slice_write_adjoint, lambda prev, index, n: runtime.slice_write_merge(
    runtime.item_adjoint(ans_bar, 0), runtime.item_adjoint(ans_bar, 1), index, n, len(prev)),
    keep={"prev": _skeleton, "index": _const, "n": _const}, zeros=True)
deflinear(runtime.slice_write_merge,
          lambda rest, item, index, n, size: runtime.item_adjoint(
              runtime.slice_write_adjoint(ans_bar, index, n), 0),
          lambda rest, item, index, n, size: runtime.item_adjoint(
              runtime.slice_write_adjoint(ans_bar, index, n), 1),
          arg=(0, 1), keep={"index": _const, "n": _const, "size": _const}, zeros=True)
deflinear(runtime.field_adjoint, lambda g, name: (
    None if ans_bar is None else runtime.getattr_adjoint(g, None, name, ans_bar)),
    keep={"g": _skeleton, "name": _const}, zeros=True)
deflinear(runtime.item_adjoint, lambda g, k: runtime.getitem_adjoint(None, g, k, ans_bar),
          keep={"g": _skeleton, "k": _const}, zeros=True)
# An array adjoint's cotangents and tangents may carry batch axes in front (``_add_at``).
deflinear(runtime.display_item_adjoint, lambda g, k, like: (
    _add_at(None, g, k, ans_bar) if isinstance(g, numpy.ndarray)
    else runtime.getitem_adjoint(None, g, k, ans_bar)),
          keep={"g": _skeleton, "k": _const, "like": _skeleton}, zeros=True,
          tangent=lambda g, k, like: runtime.item_tangent(g, k, like))
deflinear(runtime.item_tangent, lambda t, k, like: (
    _add_at(None, t, k, ans_bar) if isinstance(t, numpy.ndarray)
    else runtime.getitem_adjoint(None, t, k, ans_bar)),
          keep={"t": _skeleton, "k": _const, "like": _skeleton}, zeros=True)
# A tangent read where the primal is (forward code differentiated again: a Jacobian taken
# inside): its transpose adds the cotangent back there, in the primal's structure.
deflinear(runtime.getitem_tangent, lambda t, x, index: (
    _add_at(None, x, index, ans_bar) if isinstance(x, numpy.ndarray)
    else runtime.getitem_adjoint(None, x, index, ans_bar)),
          keep={"x": _skeleton, "index": _const}, zeros=True)
# The other tangent helpers forward code calls, linear in the tangent: a sequence's tangent
# item by item, its items' tangents (unpacked, iterated), an attribute's.
deflinear(runtime.seq_tangent, lambda t, x: ans_bar, keep={"x": _skeleton}, zeros=True)
# A tangent made a real container (zeros where it was ``None``): the identity in ``t``; its
# own tangent made real in turn, since writes may fill it in place.
deflinear(runtime.real_tangent, lambda t, x, *batched: ans_bar,
          keep={"x": _skeleton}, zeros=True,
          tangent=lambda t, x, *batched: runtime.real_tangent(t, x))
deflinear(runtime.float_list_tangent, lambda t, x: ans_bar, keep={"x": _skeleton},
          zeros=True)
deflinear(runtime.unpack_tangent, lambda t, x, n, star: _pack(ans_bar, x, star),
          keep={"x": _skeleton, "n": _const, "star": _const}, zeros=True)
deflinear(runtime.getattr_tangent, lambda t, x, name: (
    (runtime.getattr_tangent(ans_bar, x, name) if name == "T" else
     ans_bar if name == "real" else None) if isinstance(x, numpy.ndarray)
    else None if ans_bar is None else runtime.getattr_adjoint(t, x, name, ans_bar)),
          keep={"t": _skeleton, "x": _holder, "name": _const}, zeros=True)
deflinear(runtime.split_adjoint, lambda g, lens: _join(ans_bar, lens, isinstance(g, tuple)),
          keep={"g": _skeleton, "lens": _const}, zeros=True)
deflinear(runtime.key_adjoint, lambda g, key: (
    None if ans_bar is None else runtime.getitem_adjoint(g, g, key, ans_bar)),
    keep={"g": _skeleton, "key": _const}, zeros=True)
# The entries of ``g`` at the keys of ``sub``: their adjoints go back to those keys.
deflinear(runtime.subdict_adjoint, lambda g, sub: runtime.subdict_adjoint(ans_bar, g),
          keep={"g": _skeleton, "sub": _skeleton}, zeros=True)
deflinear(runtime.unpack_adjoint, lambda parts, value, star: _unpack(
    ans_bar, value, len(parts), star), keep={"parts": _skeleton, "value": _skeleton,
                                            "star": _const}, zeros="ans",
          tangent=lambda parts, value, star: _pack(parts, value, star))
deflinear(runtime.inout, lambda inouts, i: runtime.getitem_adjoint(None, inouts, i, ans_bar),
          keep={"inouts": _skeleton, "i": _const}, zeros=True)
deflinear(runtime.regroup, lambda outs, layout: _ungroup(ans_bar, layout),
          keep={"layout": _layout})
deflinear(runtime.like_structure, lambda adj, x: tuple(_items(ans_bar, x, len(adj))),
          keep={"adj": _skeleton, "x": _skeleton}, zeros="ans",
          tangent=lambda adj, x: _stack(adj, x))
# The parts of a cotangent the finished adjoint has (a projection: its own transpose).
deflinear(runtime.finished_cotangent, lambda g, x: runtime.finished_cotangent(ans_bar, x),
          keep={"x": _const}, zeros=True)
# Zeros made explicit: the identity on the adjoint, whatever its form (a zero tangent too),
# but for the parts it drops (a plain object's: no tangent space).
deflinear(runtime.finish_adjoint, lambda adj, x: runtime.finished_cotangent(ans_bar, x),
          keep={"x": _const},
          tangent=lambda adj, x: runtime.finish_adjoint(adj, x))


# A call dispatched at run time, in a gradient's IR differentiated again: its value's
# derivatives and its pullback's are found or derived at run time, for the callee met.
@defrule(runtime.dispatch_value)
def dispatch_value_rule(site, f, *args):
    y = runtime.dispatch_value(site, f, *args)

    def dispatch_value_pullback(y_bar):
        adjs = runtime.dispatch_pullback(site, f, args, y_bar)
        return (None, *adjs)

    def dispatch_value_differential(site_dot, f_dot, *args_dot):
        return runtime.dispatch_tangent(site, f, f_dot, args, args_dot)

    return y, dispatch_value_pullback, dispatch_value_differential


@defrule(runtime.dispatch_pullback)
def dispatch_pullback_rule(site, f, args, g):
    adjs = runtime.dispatch_pullback(site, f, args, g)

    def dispatch_pullback_pullback(adjs_bar):
        # Second derivatives are symmetric: the transpose of the pullback's derivative is
        # that derivative, taken in the direction of the adjoints' cotangent.
        if adjs_bar is None:
            return (None, None, None, None)
        hv = runtime.dispatch_pullback_tangent(site, f, adjs_bar[0], args, g, adjs_bar[1:],
                                               None)
        g_bar = runtime.dispatch_tangent(site, f, adjs_bar[0], args, adjs_bar[1:])
        if hv is None:
            return (None, None, None, g_bar)
        return (None, hv[0], hv[1:], g_bar)

    def dispatch_pullback_differential(site_dot, f_dot, args_dot, g_dot):
        return runtime.dispatch_pullback_tangent(site, f, f_dot, args, g, args_dot, g_dot)

    return adjs, dispatch_pullback_pullback, dispatch_pullback_differential




# The in-place variants compute the same function of their arguments (their caller never
# reads ``prev`` again), as does the form for one entry of a float64 array: a pullback
# differentiated again gets the functional rules.
for _shared, _owned in ((runtime.getitem_adjoint, runtime.getitem_adjoint_owned),
                        (runtime.getitem_adjoint, runtime.entry_adjoint_of_array),
                        (runtime.getitem_adjoint, runtime.entry_adjoint_of_array_owned),
                        (runtime.getitem_adjoint, runtime.entry_adjoint_of_list),
                        (runtime.getitem_adjoint, runtime.entry_adjoint_of_list_owned),
                        (runtime.pop_adjoint, runtime.float_pop_adjoint),
                        (runtime.pop_adjoint, runtime.float_pop_adjoint_owned),
                        (runtime.setitem_adjoint, runtime.entry_write_adjoint),
                        (runtime.setitem_adjoint, runtime.entry_write_adjoint_owned),
                        (runtime.setitem_adjoint, runtime.entry_write_of_list),
                        (runtime.setitem_adjoint, runtime.entry_write_of_list_owned),
                        (runtime.pop_adjoint, runtime.pop_adjoint_owned),
                        (runtime.getattr_adjoint, runtime.getattr_adjoint_owned),
                        (runtime.setattr_adjoint, runtime.setattr_adjoint_owned)):
    defrules(_owned, lookup(_shared).vjp, lookup(_shared).jvp)

@defpython(runtime.iter_tangent)
def iter_tangent_(it, t, real=False):
    # (a loop over a sequence in forward code differentiated again: its items' tangents)
    if real:
        runtime.real_items(it, t)
    if isinstance(it, (list, tuple, dict, numpy.ndarray)):
        return zip(it, _items(t, it, len(it)))
    return zip(it, runtime.zero_items() if t is None else t)


@defpython(runtime.nested_entry_adjoint_owned)
def nested_entry_adjoint_owned_(prev, x, i, row, j, g):
    # What the fused helper computes, in the form differentiated again (it appears only in
    # generated pullbacks).
    return runtime.getitem_adjoint(prev, x, i, runtime.entry_adjoint_of_list(None, row, j, g))


@defpython(runtime.nested_entry_adjoint)
def nested_entry_adjoint_(prev, x, i, row, j, g):
    return runtime.getitem_adjoint(prev, x, i, runtime.entry_adjoint_of_list(None, row, j, g))


@defpython(runtime.items_adjoint_owned)
def items_adjoint_owned_(prev, x, index, items, seen):
    return runtime.getitem_adjoint(prev, x, index, runtime.reversed_adjoint(items, seen))


@defpython(runtime.fields_adjoint)
def fields_adjoint_(obj, names, *gs):
    out = None
    for name, g in zip(names, gs):
        out = runtime.getattr_adjoint(out, obj, name, g)
    return out


@defpython(runtime.nested_entry_taken)
def nested_entry_taken_(prev, x, i, row, j):
    prev, slot = runtime.setitem_adjoint(prev, i)
    slot, g = runtime.entry_write_of_list(runtime.nonzero(slot, row), j)
    return runtime.getitem_adjoint(prev, x, i, slot), g


@defpython(runtime.slice_pair_adjoint)
def slice_pair_adjoint_(x, first, second, g):
    if g is None:
        return None
    n = len(range(len(x))[first])
    return runtime.getitem_adjoint(runtime.getitem_adjoint(None, x, second, g[n:]), x, first,
                                   g[:n])


@defpython(runtime.slice_pairs_adjoint)
def slice_pairs_adjoint_(prev, x, index, seen, first, second, gs):
    if gs is None:
        return prev
    items = [runtime.slice_pair_adjoint(row, first, second, g)
             for row, g in zip(seen, gs[len(gs) - len(seen):])]
    if all(g is None for g in items):
        return prev  # (no row's adjoint: none placed)
    return runtime.getitem_adjoint(prev, x, index, items)


# ``push`` appends to its list: not pure, an unused call of it still has its effect.
mark_pure(
    runtime.getitem_adjoint_owned, runtime.pop_adjoint_owned, runtime.getattr_adjoint_owned,
    runtime.entry_adjoint_of_array, runtime.entry_adjoint_of_array_owned,
    runtime.entry_adjoint_of_list, runtime.entry_adjoint_of_list_owned,
    runtime.nested_entry_adjoint, runtime.nested_entry_adjoint_owned,
    runtime.items_adjoint_owned, runtime.slice_pair_adjoint, runtime.slice_pairs_adjoint,
    runtime.fields_adjoint,
    runtime.nested_entry_taken,
    runtime.float_pop_adjoint, runtime.float_pop_adjoint_owned,
    runtime.entry_write_adjoint, runtime.entry_write_adjoint_owned,
    runtime.entry_write_of_list, runtime.entry_write_of_list_owned,
    runtime.setattr_adjoint_owned, runtime.finish_adjoint,
    runtime.add_adjoint, runtime.snapshot, runtime.getitem_adjoint, runtime.setitem_adjoint,
    runtime.spread_adjoint, runtime.total_adjoint, runtime.pop_adjoint, runtime.getattr_adjoint,
    runtime.field_adjoint,
    runtime.setattr_adjoint, runtime.item_adjoint, runtime.split_adjoint, runtime.key_adjoint,
    runtime.subdict_adjoint, runtime.unpack_adjoint, runtime.reversed_adjoint, runtime.inout,
    runtime.reversed_records,
    runtime.item_tangent, runtime.display_item_adjoint,

    runtime.as_tuple, runtime.regroup, runtime.like_structure,
)
# Zero item tangents made real containers (in place): their values are zeros.
nondifferentiable(runtime.real_items, pure=False)
nondifferentiable(runtime.zero_items)
# It raises when a user object's ``append`` is met where a list's was expected: keep it.
nondifferentiable(runtime.check_list, pure=False)
# A copy of an argument's structure, read by ``finish_adjoint`` only for its shape.
nondifferentiable(runtime.structure)
# Checks that raise or return nothing: kept, carrying no derivative.
nondifferentiable(runtime.check_rebinding, runtime.check_view, runtime.check_operands,
                  runtime.check_union,
                  runtime.check_plain_setattr, runtime.check_distinct_items,
                  runtime.check_held_alone, runtime.check_spread,
                  runtime.check_unshared_rows, pure=False)
# A gradient's seed: 1 in the precision of the result, whatever the result's value.
nondifferentiable(runtime.unit_like)
# Which item max/min picks by key, the order sorted puts items in: piecewise constant.
nondifferentiable(runtime.first_extreme, runtime.keyed_extreme, runtime.keyed_order,
                  runtime.field_index, runtime.namedtuple_fields)
# The function a method call dispatched at run time calls: a callee, not a value with a
# derivative (``dispatch_value`` differentiates the call with respect to its arguments).
nondifferentiable(runtime.method_function)
mark_result_type(lambda ts, cs: int, runtime.first_extreme, runtime.keyed_extreme)


def _cubic(x):
    """A Python function for the dispatch rules' cases (derived at run time)."""
    return x * x * x - 2.0 * x


# Sample points of the rules above, checked by tests/rules/test_form.py.
_V4 = numpy.array([0.3, -1.2, 0.8, 0.5])
_M32 = numpy.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]])
_X3 = [1.0, 2.0, 3.0]
cases(runtime.add_adjoint, ([0.1, None], [0.3, 0.4]))
cases(runtime.snapshot, ([1.0, 2.0],), (_V4,))
cases(runtime.spread_adjoint, ([0.1, None, 0.3], 0.5, 3), (None, 0.5, 2),
      ([0.1, 0.2], None, 2))
cases(runtime.total_adjoint, ([0.1, None, 0.3],), ([0.5, 0.25],))
cases(runtime.dispatch_value, (None, math.sin, 0.5), (None, math.hypot, 0.3, -0.4),
      (None, _cubic, 0.7))
cases(runtime.dispatch_pullback, (None, math.sin, (0.5,), 1.5),
      (None, math.hypot, (0.3, -0.4), 0.75), (None, _cubic, (0.7,), -1.25))
# The in-place variants (``*_owned``, sharing the rules) at the same points: they must
# compute the same values (each call is given fresh copies of the arguments).
for _f in (runtime.getitem_adjoint, runtime.getitem_adjoint_owned):
    cases(_f,
          (None, _X3, 1, 0.5),
          ([0.1, None, 0.3], _X3, 1, 0.5),
          ([0.1, 0.2, 0.3], _X3, slice(0, 2), [0.5, 0.7]),
          (None, (1.0, 2.0, 3.0), 2, 0.5),
          (None, _V4, 2, 0.5),
          (_M32.copy(), _M32, 1, _V4[:2].copy()),
          (_M32.copy(), _M32, (slice(None), 1), _V4[:3].copy()),
          (_M32.copy(), _M32, numpy.array([0, 0, 2]), _M32[::-1].copy()),
          ({"a": 1.0}, {"a": 1.0, "b": 2.0}, "b", 0.5),
          ([0.1, 0.2], [1.0, 2.0, 3.0, 4.0], 1, 0.5, 2))
cases(runtime.setitem_adjoint,
      ([0.1, 0.2, 0.3], 1),
      ([0.1, 0.2, 0.3], slice(1, 3)),
      (_V4.copy(), 1),
      (_M32.copy(), (slice(None), 0)),
      (_M32.copy(), numpy.array([0, 2])),
      ({"a": 1.0, "b": 2.0}, "a"))
for _f in (runtime.entry_adjoint_of_array, runtime.entry_adjoint_of_array_owned):
    cases(_f, (None, _V4, 2, 0.5), (_V4.copy(), _V4, -1, 0.5), (_M32.copy(), _M32, (2, 1), 0.75))
for _f in (runtime.entry_write_adjoint, runtime.entry_write_adjoint_owned):
    cases(_f, (_V4.copy(), 1), (_M32.copy(), (2, 0)))
for _f in (runtime.entry_write_of_list, runtime.entry_write_of_list_owned):
    cases(_f, ([0.1, 0.2, 0.3], 1), ([0.1, None, 0.3], -2))
for _f in (runtime.entry_adjoint_of_list, runtime.entry_adjoint_of_list_owned):
    cases(_f, (None, _X3, 2, 0.5), ([0.1, None, 0.3], _X3, -2, 0.5))
for _f in (runtime.pop_adjoint, runtime.pop_adjoint_owned, runtime.float_pop_adjoint,
           runtime.float_pop_adjoint_owned):
    cases(_f, ([0.1, 0.2, 0.3],))
cases(runtime.pop_adjoint_owned, ([_V4.copy(), None],))
# The list grows in place, its tangent with it; a zero (None) entry pushed, or pushed to.
cases(runtime.push, ([0.5, 1.5], 2.0), ([_V4[:3].copy()], _V4[1:].copy()), ([0.1, 0.2], None),
      ([0.1, None], 0.3))
cases(runtime.entry_adjoint, ({"a": 0.5, "b": 0.25}, {"a": 1.0, "b": 2.0}, "b", 1.5),
      ({"a": 0.5}, {"a": 1.0}, "z", 0.75))
cases(runtime.unpop_adjoint, ([0.1, 0.2], 0.3, 1, 3), ([0.1, 0.2], 0.3, -1, 3))
cases(runtime.slice_write_adjoint, ([0.1, 0.2], slice(0, 2), 4), ([0.1, 0.2, 0.3], slice(0, 1), 2),
      ([0.1, 0.2, 0.3], slice(None, None, 2), 3))
cases(runtime.slice_write_merge, ([0.1, 0.2, 0.3, 0.4], [], slice(0, 2), 4, 2),
      ([0.1, 0.2], [0.3, 0.4], slice(0, 1), 2, 3))
cases(runtime.remove_adjoint, ([0.1, 0.2, 0.3], 0, 3), ([0.1, 0.2, 0.3], -2, 3))
for _f in (runtime.getattr_adjoint, runtime.getattr_adjoint_owned):
    cases(_f,
          (None, None, "w", 0.5),
          (runtime.Attrs(w=0.1, b=0.2), None, "w", 0.5),
          (runtime.Attrs(b=0.2), None, "w", 0.5))
cases(runtime.field_adjoint, (runtime.Attrs(w=0.1, b=0.2), "w"))
for _f in (runtime.setattr_adjoint, runtime.setattr_adjoint_owned):
    cases(_f, (runtime.Attrs(w=0.1, b=0.2), "w"), (runtime.Attrs(b=0.2), "w"))
cases(runtime.item_adjoint, ([0.1, 0.2, _V4], 2), ((0.1, 0.2), 0))
cases(runtime.display_item_adjoint, (_V4.copy(), 1, _V4), ([0.1, 0.2], 0, [0.1, 0.2]))
cases(runtime.item_tangent, (_V4.copy(), 1, _V4), ([0.1, 0.2], 0, None))
cases(runtime.getitem_tangent, (_V4 * 0.5, _V4, 1), (_M32 * 0.5, _M32, (2, 1)),
      (_M32 * 0.25, _M32, slice(0, 2)), ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], -1))
cases(runtime.iter_tangent, (_V4, _V4 * 0.5), ([1.0, 2.0, 3.0], [0.1, 0.2, 0.3]),
      ((1.0, 2.0), None))
cases(runtime.real_tangent, ([0.1, None, 0.3], [1.0, 2.0, 3.0]), (_V4 * 0.5, _V4),
      ((0.5, 0.25), (1.0, 2.0)))
cases(runtime.seq_tangent, ([0.1, None, 0.3], [1.0, 2.0, 3.0]), ((0.5, 0.25), (1.0, 2.0)))
cases(runtime.float_list_tangent, ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0]))
cases(runtime.unpack_tangent, (_V4 * 0.5, _V4, 4, None), ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], 2, 1),
      ((0.1, 0.2), (1.0, 2.0), 2, None), (_M32 * 0.5, _M32, 3, None))
cases(runtime.getattr_tangent, (runtime.Attrs(w=0.1, b=0.2), runtime.Attrs(w=1.0, b=2.0), "w"),
      (_M32 * 0.5, _M32, "T"))
cases(runtime.split_adjoint, ([0.1, 0.2, 0.3, 0.4], (None, 2, None)))
cases(runtime.key_adjoint, ({"a": 0.1, "b": 0.2}, "b"))
cases(runtime.subdict_adjoint, ({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": 1, "c": 2}))
cases(runtime.unpack_adjoint,
      ((0.1, 0.2, 0.3), _X3, None),
      ((0.1, [0.2, 0.3], 0.4), (1.0, 2.0, 3.0, 4.0), 1),
      ((0.1, 0.2, 0.3), _V4[:3].copy(), None),
      ((_V4[:2].copy(), [_V4[2:].copy(), _V4[1:3].copy()]), _M32, 1))
cases(runtime.reversed_adjoint,
      ([0.1, 0.2, 0.3], _X3),
      ([0.1, 0.2, 0.3], (1.0, 2.0, 3.0)),
      ([0.1, 0.2, 0.3], _V4[:3].copy()),
      ([_V4[:2].copy(), _V4[2:].copy(), _V4[1:3].copy()], _M32))
cases(runtime.inout, ((0.1, [0.2, 0.3]), 1))
cases(runtime.as_tuple, ([1.0, 2.0],), (_M32.copy(),))
cases(runtime.regroup, ((0.1, 0.2, 0.3, 0.4), (None, (1.0, 2.0), None)))
cases(runtime.like_structure,
      ((0.1, 0.2), [1.0, 2.0]),
      ((0.1, 0.2), (1.0, 2.0)),
      ((0.1, 0.2, 0.3), _V4[:3].copy()))
cases(runtime.finish_adjoint, ([0.1, 0.2], [1.0, 2.0]), (_V4.copy(), _V4 * 2.0))
cases(runtime.finished_cotangent, ([0.1, 0.2], [1.0, 2.0]), (_V4.copy(), _V4 * 2.0),
      ((0.1, [0.2, 0.3]), (1.0, [2.0, 3.0])))


class _Pair(NamedTuple):
    """A named tuple for the cases of ``fields_adjoint`` (a field is an item)."""

    w: float
    b: float


# The fused helpers at rows of a list of lists: ``row`` is the row ``x[i]`` itself (what the
# generated pullbacks pass), zero and partly zero adjoints, slices apart and overlapping.
_ROWS = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
for _f in (runtime.nested_entry_adjoint, runtime.nested_entry_adjoint_owned):
    cases(_f,
          (None, _ROWS, 1, _ROWS[1], 0, 0.5),
          ([None, [0.1, None, 0.3], None], _ROWS, 1, _ROWS[1], -1, 0.5),
          ([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], _ROWS, 0, _ROWS[0], 2, 0.5))
cases(runtime.nested_entry_taken,
      (None, _ROWS, 1, _ROWS[1], 0),
      ([None, [0.1, None, 0.3], None], _ROWS, 1, _ROWS[1], -1),
      ([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], _ROWS, 0, _ROWS[0], 2))
cases(runtime.items_adjoint_owned,
      (None, _ROWS, slice(1, 3), [[0.5, None, 0.25], [0.1, 0.2, 0.3]], _ROWS[1:3]),
      ([0.1, 0.2, 0.3, 0.4], _X3 + [4.0], slice(0, 4, 2), [0.5, 0.7], [1.0, 3.0]),
      ([None, [0.1, 0.2, 0.3], None], _ROWS, slice(1, None), [None, [0.5, 0.5, 0.5]],
       _ROWS[1:]))
cases(runtime.slice_pair_adjoint,
      (_X3 + [4.0], slice(0, 1), slice(2, 4), [0.5, 0.6, 0.7]),
      ((1.0, 2.0, 3.0), slice(None, 2), slice(1, None), [0.5, 0.6, 0.7, 0.8]),
      (_X3, slice(0, 1), slice(2, 3), None))
cases(runtime.slice_pairs_adjoint,
      (None, _ROWS, slice(1, 3), _ROWS[1:3], slice(None, 1), slice(2, None),
       [[0.5, 0.6], [0.7, 0.8]]),
      ([None, [0.1, 0.2, 0.3], None], _ROWS, slice(1, 3), _ROWS[1:3], slice(None, 1),
       slice(2, None), [[0.1, 0.2], [0.5, 0.6], [0.7, None]]),
      ([None, [0.1, 0.2, 0.3], None], _ROWS, slice(0, 2), _ROWS[:2], slice(0, 1), slice(1, 2),
       None))
cases(runtime.fields_adjoint,
      (_Pair(1.0, 2.0), ("w", "b"), 0.5, 0.25),
      (_Pair(1.0, 2.0), ("b",), None),
      (runtime.Attrs(w=1.0, b=2.0), ("w", "b"), 0.5, None))
