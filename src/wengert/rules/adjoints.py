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

import numpy

from wengert import runtime
from wengert.rules.adjoint_parts import (
    _add_at,
    _append,
    _const,
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
from wengert.rules.registry import defjvp, defvjp, mark_pure, nondifferentiable

# --------------------------------------------------------------------------------------
# The runtime helpers.
# --------------------------------------------------------------------------------------


@defvjp(runtime.add_adjoint)
def add_adjoint_vjp(a, b):
    # ``None`` is a zero: the sum's adjoint flows to both terms unchanged.
    y = runtime.add_adjoint(a, b)

    # It reads neither term, so it stays a plain function where the terms' types are
    # unknown (maybe ``None``) and the rule is called, not inlined. A dict adjoint passes
    # whole to both terms: entries for keys a term lacks are adjoints of nothing.
    def add_adjoint_pullback(y_bar):
        return y_bar, y_bar

    return y, add_adjoint_pullback


@defjvp(runtime.add_adjoint)
def add_adjoint_jvp(a, b):
    y = runtime.add_adjoint(a, b)

    def add_adjoint_differential(a_dot, b_dot):
        return runtime.add_adjoint(a_dot, b_dot)

    return y, add_adjoint_differential


@defvjp(runtime.snapshot)
def snapshot_vjp(x):
    y = runtime.snapshot(x)

    def snapshot_pullback(y_bar):
        return (y_bar,)

    return y, snapshot_pullback


@defjvp(runtime.snapshot)
def snapshot_jvp(x):
    y = runtime.snapshot(x)

    def snapshot_differential(x_dot):
        # The tangent of a list or array is updated in place with it: the copy keeps its own.
        return runtime.snapshot(x_dot)

    return y, snapshot_differential


@defvjp(runtime.getitem_adjoint)
def getitem_adjoint_vjp(prev, x, index, g, *size):
    out = runtime.getitem_adjoint(prev, x, index, g, *size)
    prev_like = _skeleton(prev)
    x_like = _skeleton(x)
    where = _const(index)
    g_zero = g is None
    size_bar = (None,) * len(size)

    def getitem_adjoint_pullback(out_bar):
        prev_bar = None
        if isinstance(prev_like, dict):
            # Entries ``out`` has and ``prev`` lacks are not ``prev``'s.
            prev_bar = runtime.subdict_adjoint(out_bar, prev_like)
        elif prev_like is not None:
            prev_bar = out_bar
        g_bar = None
        if not g_zero:
            g_bar = _take(out_bar, x_like, where)
        return (prev_bar, None, None, g_bar) + size_bar

    return out, getitem_adjoint_pullback


@defjvp(runtime.getitem_adjoint)
def getitem_adjoint_jvp(prev, x, index, g, *size):
    out = runtime.getitem_adjoint(prev, x, index, g, *size)
    x_like = _skeleton(x)
    where = _const(index)
    sizes = _const(size)

    def getitem_adjoint_differential(prev_dot, x_dot, index_dot, g_dot, *size_dot):
        if isinstance(x_like, numpy.ndarray):
            out_dot = _add_at(prev_dot, x_like, where, g_dot)
        else:
            out_dot = runtime.getitem_adjoint(prev_dot, x_like, where, g_dot, *sizes)
        return out_dot

    return out, getitem_adjoint_differential


@defvjp(runtime.setitem_adjoint)
def setitem_adjoint_vjp(prev, index):
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

    return pair, setitem_adjoint_pullback


@defjvp(runtime.setitem_adjoint)
def setitem_adjoint_jvp(prev, index):
    pair = runtime.setitem_adjoint(prev, index)
    prev_like = _skeleton(prev)
    where = _const(index)

    def setitem_adjoint_differential(prev_dot, index_dot):
        if isinstance(prev_like, numpy.ndarray):
            pair_dot = runtime.setitem_adjoint(prev_dot, _past_batch(prev_dot, prev_like, where))
        else:
            pair_dot = runtime.setitem_adjoint(prev_dot, where)
        return pair_dot

    return pair, setitem_adjoint_differential


@defvjp(runtime.pop_adjoint)
def pop_adjoint_vjp(prev):
    pair = runtime.pop_adjoint(prev)
    prev_zero = prev is None
    n = 0 if prev_zero else len(prev) - 1

    def pop_adjoint_pullback(pair_bar):
        prev_bar = None
        if not prev_zero:
            prev_bar = _append(runtime.item_adjoint(pair_bar, 0),
                               runtime.item_adjoint(pair_bar, 1), n)
        return (prev_bar,)

    return pair, pop_adjoint_pullback


@defjvp(runtime.pop_adjoint)
def pop_adjoint_jvp(prev):
    pair = runtime.pop_adjoint(prev)

    def pop_adjoint_differential(prev_dot):
        return runtime.pop_adjoint(prev_dot)

    return pair, pop_adjoint_differential


@defvjp(runtime.getattr_adjoint)
def getattr_adjoint_vjp(prev, obj, name, g):
    out = runtime.getattr_adjoint(prev, obj, name, g)
    prev_like = _skeleton(prev)
    obj_like = _skeleton(obj)
    field = _const(name)
    # A named tuple's field is an item: its adjoint is the tuple's (runtime.getattr_adjoint).
    item = _const(runtime.field_index(obj, name))
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

    return out, getattr_adjoint_pullback


@defjvp(runtime.getattr_adjoint)
def getattr_adjoint_jvp(prev, obj, name, g):
    out = runtime.getattr_adjoint(prev, obj, name, g)
    obj_like = obj if runtime.field_index(obj, name) is not None else None
    field = _const(name)

    def getattr_adjoint_differential(prev_dot, obj_dot, name_dot, g_dot):
        return runtime.getattr_adjoint(prev_dot, obj_like, field, g_dot)

    return out, getattr_adjoint_differential


@defvjp(runtime.field_adjoint)
def field_adjoint_vjp(g, name):
    y = runtime.field_adjoint(g, name)
    g_like = _skeleton(g)
    field = _const(name)

    def field_adjoint_pullback(y_bar):
        g_bar = None
        if g_like is not None and y_bar is not None:
            g_bar = runtime.getattr_adjoint(g_like, None, field, y_bar)
        return g_bar, None

    return y, field_adjoint_pullback


@defjvp(runtime.field_adjoint)
def field_adjoint_jvp(g, name):
    y = runtime.field_adjoint(g, name)
    field = _const(name)

    def field_adjoint_differential(g_dot, name_dot):
        return runtime.field_adjoint(g_dot, field)

    return y, field_adjoint_differential


@defvjp(runtime.setattr_adjoint)
def setattr_adjoint_vjp(prev, name):
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

    return pair, setattr_adjoint_pullback


@defjvp(runtime.setattr_adjoint)
def setattr_adjoint_jvp(prev, name):
    pair = runtime.setattr_adjoint(prev, name)
    field = _const(name)

    def setattr_adjoint_differential(prev_dot, name_dot):
        return runtime.setattr_adjoint(prev_dot, field)

    return pair, setattr_adjoint_differential


@defvjp(runtime.item_adjoint)
def item_adjoint_vjp(g, k):
    y = runtime.item_adjoint(g, k)
    g_like = _skeleton(g)
    where = _const(k)

    def item_adjoint_pullback(y_bar):
        g_bar = None
        if g_like is not None:
            g_bar = runtime.getitem_adjoint(None, g_like, where, y_bar)
        return g_bar, None

    return y, item_adjoint_pullback


@defjvp(runtime.item_adjoint)
def item_adjoint_jvp(g, k):
    y = runtime.item_adjoint(g, k)
    where = _const(k)

    def item_adjoint_differential(g_dot, k_dot):
        return runtime.item_adjoint(g_dot, where)

    return y, item_adjoint_differential


@defvjp(runtime.split_adjoint)
def split_adjoint_vjp(g, lens):
    parts = runtime.split_adjoint(g, lens)
    g_zero = g is None
    as_tuple = isinstance(g, tuple)
    sizes = _const(lens)

    def split_adjoint_pullback(parts_bar):
        g_bar = None
        if not g_zero:
            g_bar = _join(parts_bar, sizes, as_tuple)
        return g_bar, None

    return parts, split_adjoint_pullback


@defjvp(runtime.split_adjoint)
def split_adjoint_jvp(g, lens):
    parts = runtime.split_adjoint(g, lens)
    sizes = _const(lens)

    def split_adjoint_differential(g_dot, lens_dot):
        return runtime.split_adjoint(g_dot, sizes)

    return parts, split_adjoint_differential


@defvjp(runtime.key_adjoint)
def key_adjoint_vjp(g, key):
    y = runtime.key_adjoint(g, key)
    g_like = _skeleton(g)
    where = _const(key)

    def key_adjoint_pullback(y_bar):
        g_bar = None
        if g_like is not None and y_bar is not None:
            g_bar = runtime.getitem_adjoint(g_like, g_like, where, y_bar)
        return g_bar, None

    return y, key_adjoint_pullback


@defjvp(runtime.key_adjoint)
def key_adjoint_jvp(g, key):
    y = runtime.key_adjoint(g, key)
    where = _const(key)

    def key_adjoint_differential(g_dot, key_dot):
        return runtime.key_adjoint(g_dot, where)

    return y, key_adjoint_differential


@defvjp(runtime.subdict_adjoint)
def subdict_adjoint_vjp(g, sub):
    # The entries of ``g`` at the keys of ``sub``: their adjoints go back to those keys.
    y = runtime.subdict_adjoint(g, sub)
    g_like = _skeleton(g)

    def subdict_adjoint_pullback(y_bar):
        g_bar = None
        if g_like is not None:
            g_bar = runtime.subdict_adjoint(y_bar, g_like)
        return g_bar, None

    return y, subdict_adjoint_pullback


@defjvp(runtime.subdict_adjoint)
def subdict_adjoint_jvp(g, sub):
    y = runtime.subdict_adjoint(g, sub)
    keys = _skeleton(sub)

    def subdict_adjoint_differential(g_dot, sub_dot):
        return runtime.subdict_adjoint(g_dot, keys)

    return y, subdict_adjoint_differential


@defvjp(runtime.unpack_adjoint)
def unpack_adjoint_vjp(parts, value, star):
    out = runtime.unpack_adjoint(parts, value, star)
    zero = out is None
    n = len(parts)
    value_like = _skeleton(value)
    starred = _const(star)

    def unpack_adjoint_pullback(out_bar):
        parts_bar = None
        if not zero:
            parts_bar = _unpack(out_bar, value_like, n, starred)
        return parts_bar, None, None

    return out, unpack_adjoint_pullback


@defjvp(runtime.unpack_adjoint)
def unpack_adjoint_jvp(parts, value, star):
    out = runtime.unpack_adjoint(parts, value, star)
    value_like = _skeleton(value)
    starred = _const(star)

    def unpack_adjoint_differential(parts_dot, value_dot, star_dot):
        return _pack(parts_dot, value_like, starred)

    return out, unpack_adjoint_differential


@defvjp(runtime.push)
def push_vjp(items, g):
    # ``items`` is appended to in place and returned: the adjoint of the longer list
    # splits back into the shorter list's and the new entry's.
    y = runtime.push(items, g)
    g_zero = g is None

    def push_pullback(y_bar):
        items_bar, g_bar = runtime.pop_adjoint(y_bar)
        if g_zero:
            g_bar = None
        return items_bar, g_bar

    return y, push_pullback


@defjvp(runtime.push)
def push_jvp(items, g):
    n = len(items)
    y = runtime.push(items, g)

    def push_differential(items_dot, g_dot):
        # The list's tangent grows in place with the list, as forward mode mirrors writes.
        if items_dot is None:
            items_dot = [None] * n
        return runtime.push(items_dot, g_dot)

    return y, push_differential


@defvjp(runtime.reversed_adjoint)
def reversed_adjoint_vjp(collected, iterable):
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

    return out, reversed_adjoint_pullback


@defjvp(runtime.reversed_adjoint)
def reversed_adjoint_jvp(collected, iterable):
    out = runtime.reversed_adjoint(collected, iterable)
    zero = out is None
    iterable_like = _skeleton(iterable)
    pad = max(0, len(iterable_like) - len(collected))  # items a `break` never reached

    def reversed_adjoint_differential(collected_dot, iterable_dot):
        out_dot = None
        if not zero and collected_dot is not None:
            out_dot = _stack(collected_dot[::-1] + [None] * pad, iterable_like)
        return out_dot

    return out, reversed_adjoint_differential


@defvjp(runtime.inout)
def inout_vjp(inouts, i):
    y = runtime.inout(inouts, i)
    inouts_like = _skeleton(inouts)
    where = _const(i)

    def inout_pullback(y_bar):
        inouts_bar = None
        if inouts_like is not None:
            inouts_bar = runtime.getitem_adjoint(None, inouts_like, where, y_bar)
        return inouts_bar, None

    return y, inout_pullback


@defjvp(runtime.inout)
def inout_jvp(inouts, i):
    y = runtime.inout(inouts, i)
    where = _const(i)

    def inout_differential(inouts_dot, i_dot):
        return runtime.inout(inouts_dot, where)

    return y, inout_differential


@defvjp(runtime.as_tuple)
def as_tuple_vjp(x):
    y = runtime.as_tuple(x)
    x_like = _skeleton(x)

    def as_tuple_pullback(y_bar):
        return (_stack(y_bar, x_like),)

    return y, as_tuple_pullback


@defjvp(runtime.as_tuple)
def as_tuple_jvp(x):
    y = runtime.as_tuple(x)
    n = len(y)
    x_like = _skeleton(x)

    def as_tuple_differential(x_dot):
        return tuple(_items(x_dot, x_like, n))

    return y, as_tuple_differential


@defvjp(runtime.regroup)
def regroup_vjp(outs, layout):
    res = runtime.regroup(outs, layout)
    shape = _layout(layout)

    def regroup_pullback(res_bar):
        return _ungroup(res_bar, shape), None

    return res, regroup_pullback


@defjvp(runtime.regroup)
def regroup_jvp(outs, layout):
    res = runtime.regroup(outs, layout)
    shape = _layout(layout)

    def regroup_differential(outs_dot, layout_dot):
        res_dot = None
        if outs_dot is not None:
            res_dot = runtime.regroup(outs_dot, shape)
        return res_dot

    return res, regroup_differential


@defvjp(runtime.like_structure)
def like_structure_vjp(adj, x):
    out = runtime.like_structure(adj, x)
    zero = out is None
    n = len(adj)
    x_like = _skeleton(x)

    def like_structure_pullback(out_bar):
        adj_bar = None
        if not zero:
            adj_bar = tuple(_items(out_bar, x_like, n))
        return adj_bar, None

    return out, like_structure_pullback


@defjvp(runtime.like_structure)
def like_structure_jvp(adj, x):
    out = runtime.like_structure(adj, x)
    x_like = _skeleton(x)

    def like_structure_differential(adj_dot, x_dot):
        return _stack(adj_dot, x_like)

    return out, like_structure_differential


@defvjp(runtime.finish_adjoint)
def finish_adjoint_vjp(adj, x):
    # Zeros made explicit: the identity on the adjoint, whatever its form.
    out = runtime.finish_adjoint(adj, x)

    def finish_adjoint_pullback(out_bar):
        return out_bar, None

    return out, finish_adjoint_pullback


@defjvp(runtime.finish_adjoint)
def finish_adjoint_jvp(adj, x):
    out = runtime.finish_adjoint(adj, x)
    x_like = _const(x)

    def finish_adjoint_differential(adj_dot, x_dot):
        return runtime.finish_adjoint(adj_dot, x_like)

    return out, finish_adjoint_differential


# The in-place variant computes the same function of its arguments (its caller never
# reads ``prev`` again): a pullback differentiated again gets the functional rules.
defvjp(runtime.getitem_adjoint_owned)(getitem_adjoint_vjp)
defjvp(runtime.getitem_adjoint_owned)(getitem_adjoint_jvp)

# ``push`` appends to its list: not pure, an unused call of it still has its effect.
mark_pure(
    runtime.getitem_adjoint_owned, runtime.finish_adjoint,
    runtime.add_adjoint, runtime.snapshot, runtime.getitem_adjoint, runtime.setitem_adjoint,
    runtime.pop_adjoint, runtime.getattr_adjoint, runtime.field_adjoint,
    runtime.setattr_adjoint, runtime.item_adjoint, runtime.split_adjoint, runtime.key_adjoint,
    runtime.subdict_adjoint, runtime.unpack_adjoint, runtime.reversed_adjoint, runtime.inout,
    runtime.as_tuple, runtime.regroup, runtime.like_structure,
)
# It raises when a user object's ``append`` is met where a list's was expected: keep it.
nondifferentiable(runtime.check_list, pure=False)
# A copy of an argument's structure, read by ``finish_adjoint`` only for its shape.
nondifferentiable(runtime.structure)
# Checks that raise or return nothing: kept, carrying no derivative.
nondifferentiable(runtime.check_rebinding, runtime.check_plain_setattr, pure=False)
# Which item max/min picks by key, the order sorted puts items in: piecewise constant.
nondifferentiable(runtime.keyed_extreme, runtime.keyed_order, runtime.field_index)
