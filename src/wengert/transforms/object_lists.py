"""Lists of objects a function makes and keeps to itself, kept as one list per field.

``ps = [Particle(x, v) for x, v in zip(xs, vs)]`` then ``p.v -= g * dt; p.x += p.v * dt``
for each ``p`` in ``ps`` is, to the derivative, a list of objects whose every write needs
its own adjoint object per item (an ``Attrs`` per particle, taken out of the list's adjoint
and put back per write). Where the objects are only ever reached through the list, the
same program is one list per field: ``ps_x = [x for ...]``, ``ps_v = [v for ...]``,
``ps_v[i] -= g * dt``, the loop walking the indices. Lists of numbers are what both modes
differentiate best (a float adjoint per entry, updated in place, to any order), so this
runs before either (``prepare``), and what it rewrites is the structure of arrays a person
would write by hand.

A list ``xs`` is rewritten only when all of this holds (else nothing changes):

* it is a list display (``[]`` filled by ``append`` included) whose every item is an
  object made for it alone: ``C(...)`` of a dataclass with its generated ``__init__`` (no
  ``__post_init__``, no default factory), or ``object.__new__(C)`` and the field writes of
  an inlined ``__init__`` before it is stored; every object of one plain class (attributes
  written as Python writes them), given the same fields;
* ``xs`` is only read at an int index, walked (by itself, ``enumerate``, ``zip``,
  ``reversed``), measured, appended such a new object (not while a loop walks it) or given
  one at an int index (at the top of the function, before anything reads it): never passed
  on, stored, returned, captured or joined with another list;
* what is read out of it (at an index, or a loop's item) is only read or written at one of
  those fields (a write not of another such item), or compared by identity with another
  loop's item of it: each item is a distinct new object, so ``a is b`` is ``i == j``.
"""

from __future__ import annotations

import builtins
import dataclasses
import operator
from typing import Any

from wengert.analysis.types import Types
from wengert.ir import nodes as n
from wengert.ir.uses import Places, replace_uses
from wengert.objects import attribute_kind, dataclass_arguments, plain_class

#: Calls whose result a loop walks, yielding the list's items (at ``k`` among the items).
_WALKERS = (enumerate, reversed, zip)


@dataclasses.dataclass
class _Plan:
    """What rewriting one list changes (see the module's docstring)."""

    xs: n.Value
    fields: tuple[str, ...]
    #: Each new object's id: its fields' values (a value, or a constant default).
    made: dict[int, dict[str, Any]]
    #: The ops making the objects (constructor calls, field writes of inlined ones).
    making: list[n.Op]
    stores: list[n.Op]  # the display, append calls, writes at an index
    appends: list[n.GetAttr]
    #: Each item value's id: the index it was read at (a loop's item is its own index).
    items: dict[int, n.Value]
    reads: list[n.GetItem]
    walks: list[n.Op]  # ``For`` over ``xs``, and ``enumerate``/``zip``/``reversed`` of it
    lens: list[n.Call]
    uses: list[n.Op]  # field reads, writes and identity tests of the items
    #: The items a loop reads (indices counted from the start: one per object).
    loop_items: set[int] = dataclasses.field(default_factory=set)
    #: The indices (constants) of a display's objects used as themselves too.
    displayed: list[n.Const] = dataclasses.field(default_factory=list)
    #: The op whose region each ``Yield`` ends (by the ``Yield``'s ``id``).
    owners: dict[int, n.Op] = dataclasses.field(default_factory=dict)


class _Default:
    """A field's constant default (a dataclass field not given)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def split_object_lists(fn: n.Function, types: Types) -> bool:
    """Rewrite, in place, every list of ``fn`` (not of the functions it defines) that the
    module's docstring describes as one list per field; return whether any was."""
    changed = False
    while True:
        places = Places(fn)
        for op in n.walk_local(fn.body):
            if isinstance(op, n.Build) and op.kind == "list" and not op.starred:
                plan = _plan(fn, op, places, types)
                if plan is not None:
                    _apply(plan, places)
                    changed = True
                    break
        else:
            return changed


def _plan(fn: n.Function, build: n.Build, p: Places, types: Types) -> _Plan | None:
    xs = build.result
    plan = _Plan(xs, (), {}, [], [build], [], {}, [], [], [], [])
    classes: set[type] = set()
    for k, item in enumerate(build.items):
        later: list[n.Op] = []
        if not _construction(item, build, p, plan, classes, later) or \
                any(u is build for u in later) or sum(x is item for x in build.items) != 1:
            return None
        if later:  # (the object at place ``k``, used as itself)
            index = n.Const(k, [n.Value()])
            plan.displayed.append(index)
            plan.items[item.id] = index.result
    first_read = None
    setitems: list[n.SetItem] = []
    for use in p.uses.get(xs.id, []):
        if isinstance(use, n.GetAttr) and use.obj is xs and use.name == "append":
            calls = p.uses.get(use.result.id, [])
            if not calls or not all(
                    isinstance(c, n.Call) and c.fn is use.result and len(c.args) == 1 and
                    not c.kwargs and not c.starred and not p.uses.get(c.results[0].id) and
                    _construction(c.args[0], c, p, plan, classes) for c in calls):
                return None
            plan.appends.append(use)
            plan.stores.extend(calls)
            continue  # (not a read)
        elif isinstance(use, n.GetItem) and use.obj is xs and use.index is not xs and \
                types.of(use.index) is int:
            plan.reads.append(use)
            plan.items[use.result.id] = use.index
        elif isinstance(use, n.SetItem) and use.obj is xs and use.value is not xs and \
                use.index is not xs and types.of(use.index) is int and \
                p.where[id(use)] is fn.body and _construction(use.value, use, p, plan, classes):
            setitems.append(use)
            plan.stores.append(use)
            continue  # (not a read)
        elif isinstance(use, n.For) and use.iterable is xs and xs not in use.inits:
            plan.walks.append(use)
            plan.items[use.body.args[0].id] = use.body.args[0]
        elif isinstance(use, n.Call) and _const(use.fn, p) is builtins.len and \
                use.args == [xs] and not use.kwargs and not use.starred:
            plan.lens.append(use)
            continue
        elif isinstance(use, n.Call) and (walked := _walked(use, xs, p)) is not None:
            plan.walks.append(use)
            for v in walked:
                plan.items[v.id] = v
        else:
            return None
        order = p.order[id(use)]
        first_read = order if first_read is None else min(first_read, order)
    if len(classes) != 1 or not plan.fields or any(
            first_read is not None and p.order[id(s)] > first_read for s in setitems) or \
            setitems and plan.displayed:
        return None  # (an object displayed and used as itself may be replaced at its place)
    # (an object appended while a loop walks the list would be walked too)
    loops = {id(w) for w in plan.walks if isinstance(w, n.For)} | {
        id(u) for w in plan.walks if isinstance(w, n.Call)
        for u in p.uses.get(w.results[0].id, [])}
    if any(p.loops[id(s)] & loops or id(s) in loops for s in plan.stores
           if isinstance(s, n.Call)):
        return None
    appended = [s for s in plan.stores if isinstance(s, n.Call)]
    plan.loop_items = {vid for vid, v in plan.items.items() if v.id == vid}
    joins = _joins(fn, plan)
    reading = [*plan.reads, *plan.walks]
    if joins and any(first_read is not None and p.order[id(s)] > first_read or
                     any(p.loops[id(s)] & p.loops[id(r)] for r in reading)
                     for s in appended):
        return None  # (an item carried past an append: not followed)
    plan.items.update(joins)
    making = {id(op) for op in plan.making} | {id(build)}
    for vid in plan.items:
        for use in p.uses.get(vid, []):
            if id(use) in making:
                continue  # (a displayed object's construction, and its display)
            if not _item_use(use, vid, plan, p):
                return None
            if all(u is not use for u in plan.uses):  # (``a is b`` uses two items)
                plan.uses.append(use)
    for read in plan.reads:
        # (``p = ps[-1]`` then an append: ``p`` is the object that was last, not the new)
        if any(p.between(s, read, use) for s in appended
               for use in p.uses.get(read.result.id, [])):
            return None
    return plan


def _construction(v: n.Value, user: n.Op, p: Places, plan: _Plan, classes: set[type],
                  later: list[n.Op] | None = None) -> bool:
    """Whether ``v`` is a new object made for ``user`` (a display, an ``append`` call, a
    write at an index) alone, as the module's docstring says; record its fields. With
    ``later`` (an item of a display), uses of ``v`` after ``user`` are allowed and put
    there (the object named after it is stored: ``p = P(x); ps = [p, q]``, or specialised
    to it, ``ps[0]`` of a display)."""
    made = p.defs.get(v.id)
    if not isinstance(made, n.Call) or made.starred or p.where.get(id(made)) is not \
            p.where.get(id(user)) or sum(x is v for x in user.operands()) != 1:
        return False
    f = _const(made.fn, p)
    fields: dict[str, Any] = {}
    making: list[n.Op] = [made]
    uses = p.uses.get(v.id, [])
    if f is object.__new__ and len(made.args) == 1 and not made.kwargs:
        cls = _const(made.args[0], p)
        for u in uses:
            if u is user:
                continue
            if later is not None and p.order[id(u)] > p.order[id(user)]:
                later.append(u)
                continue
            if not (isinstance(u, n.SetAttr) and u.obj is v and u.value is not v and
                    p.where[id(u)] is p.where[id(user)] and
                    p.order[id(made)] < p.order[id(u)] < p.order[id(user)]):
                return False
            fields[u.name] = u.value  # (the last write of a field is what it holds)
            making.append(u)
    elif (given := dataclass_arguments(f, made.args, made.kwargs)) is not None:
        cls = f
        if later is not None:
            later.extend(u for u in uses if u is not user and
                         p.order[id(u)] > p.order[id(user)])
            uses = [u for u in uses if u not in later]
        if uses != [user]:
            return False
        for d in dataclasses.fields(cls):
            if d.name in given:
                fields[d.name] = given[d.name]
            elif d.default is not dataclasses.MISSING and \
                    type(d.default) in (int, float, bool, str, type(None)):
                fields[d.name] = _Default(d.default)
            else:
                return False  # (a default factory, or a field left unset)
    else:
        return False
    if not (isinstance(cls, type) and plain_class(cls) and
            cls.__setattr__ is object.__setattr__ and
            all(attribute_kind(cls, k) == "field" for k in fields)):
        return False
    names = tuple(sorted(fields))
    if plan.fields and names != plan.fields:
        return False
    plan.fields = names
    classes.add(cls)
    plan.made[v.id] = fields
    plan.making.extend(making)
    return True


def _walked(call: n.Call, xs: n.Value, p: Places) -> list[n.Value] | None:
    """The items of ``xs`` that loops walking ``call`` (``enumerate(xs)``, ``zip(..., xs,
    ...)``, ``reversed(xs)``, walked at once) read; else ``None``."""
    f = _const(call.fn, p)
    if f not in _WALKERS or call.kwargs or call.starred or call.fn is xs or \
            sum(a is xs for a in call.args) != 1 or f is not zip and call.args != [xs]:
        return None
    k = 1 if f is enumerate else call.args.index(xs) if f is zip else None
    out: list[n.Value] = []
    for loop in p.uses.get(call.results[0].id, []):
        if not isinstance(loop, n.For) or loop.iterable is not call.results[0] or \
                call.results[0] in loop.inits:
            return None
        item = loop.body.args[0]
        if k is None:
            out.append(item)
            continue
        unpacks = p.uses.get(item.id, [])
        if len(unpacks) != 1 or not isinstance(u := unpacks[0], n.Unpack) or \
                u.star is not None or len(u.results) != (2 if f is enumerate else
                                                         len(call.args)):
            return None
        out.append(u.results[k])
    return out


def _joins(fn: n.Function, plan: _Plan) -> dict[int, n.Value]:
    """The results of ``if``s and the carried values of loops that are always one of the
    items (``best = ps[0]`` then ``best = p`` in a loop over ``ps``): they become indices
    too. The largest such set (each of them is one of its sources, every source an item or
    another of them)."""
    sources: dict[int, tuple[n.Value, list[n.Value]]] = {}
    for op in n.walk_local(fn.body):
        for r in op.regions():
            if r.ops and isinstance(r.terminator, n.Yield):
                plan.owners[id(r.terminator)] = op
        if isinstance(op, n.If) and all(r.ops and isinstance(r.terminator, n.Yield)
                                        for r in (op.then, op.orelse)):
            for k, v in enumerate(op.results):
                sources[v.id] = (v, [r.terminator.values[k] for r in (op.then, op.orelse)])
        elif isinstance(op, n.For) and op.body.ops and \
                isinstance(op.body.terminator, n.Yield):
            for k, a in enumerate(op.carried_args):
                both = [op.inits[k], op.body.terminator.values[k]]
                sources[a.id] = (a, both)
                sources[op.results[k].id] = (op.results[k], both)
    kept = set(sources)
    while True:
        gone = {vid for vid in kept if any(
            s.id not in plan.items and s.id not in kept for s in sources[vid][1])}
        if not gone:
            return {vid: sources[vid][0] for vid in kept}
        kept -= gone


def _joined(use: n.Op, vid: int, plan: _Plan) -> bool:
    """Whether ``use`` hands the item ``vid`` only to joins that are items: a ``Yield``
    of an ``if`` or a loop's body, a loop's initial carried value."""
    if isinstance(use, n.Yield):
        owner = plan.owners.get(id(use))
        if isinstance(owner, n.If):
            targets = owner.results
        elif isinstance(owner, n.For):
            targets = owner.carried_args
        else:
            return False
        return all(t.id in plan.items for t, v in zip(targets, use.values) if v.id == vid)
    if isinstance(use, n.For):
        return vid not in (use.iterable.id,) and all(
            a.id in plan.items for a, v in zip(use.carried_args, use.inits) if v.id == vid)
    return False


def _item_use(use: n.Op, vid: int, plan: _Plan, p: Places) -> bool:
    """Whether ``use`` of the item ``vid`` is one the rewrite follows: a read or write of
    one of the fields, an identity test of two loops' items, or a join with other items."""
    if isinstance(use, n.GetAttr):
        return use.obj.id == vid and use.name in plan.fields
    if isinstance(use, n.SetAttr):
        return use.obj.id == vid and use.name in plan.fields and use.value.id not in plan.items
    if isinstance(use, n.Call) and _const(use.fn, p) in (operator.is_, operator.is_not) and \
            len(use.args) == 2 and not use.kwargs and not use.starred:
        # (a loop's item: its index counts from the start, one per object)
        return all(a.id in plan.loop_items for a in use.args)
    return _joined(use, vid, plan)


def _const(v: n.Value, p: Places) -> Any:
    return p.consts.get(v.id)


def _apply(plan: _Plan, p: Places) -> None:
    """Rewrite the list ``plan.xs`` as one list per field (the module's docstring)."""
    xs = plan.xs
    lists = {f: n.Value(f"{xs.hint}_{f}" if xs.hint else None) for f in plan.fields}
    #: A display's objects used as themselves: their places, constants.
    xs_items = [v for v in plan.stores[0].operands()
                if v.id in plan.items and plan.items[v.id].id != v.id]
    first = lists[plan.fields[0]]

    def value(obj: n.Value, f: str, before: list[n.Op]) -> n.Value:
        got = plan.made[obj.id][f]
        if isinstance(got, _Default):
            const = n.Const(got.value, [n.Value()])
            before.append(const)
            return const.result
        return got

    def insert(at: n.Op, ops: list[n.Op], replace: bool = False) -> None:
        region = p.where[id(at)]
        k = next(i for i, op in enumerate(region.ops) if op is at)
        region.ops[k:k + 1 if replace else k] = ops

    def length(at: n.Op) -> n.Value:
        """``range(len(first))`` made just before ``at``."""
        len_fn = n.Const(builtins.len, [n.Value()])
        size = n.Call(len_fn.result, [first], [], [n.Value(f"{xs.hint or 'n'}_len")])
        range_fn = n.Const(builtins.range, [n.Value()])
        r = n.Call(range_fn.result, [size.results[0]], [], [n.Value()])
        insert(at, [len_fn, size, range_fn, r])
        return r.results[0]

    for store in plan.stores:
        ops: list[n.Op] = []
        if isinstance(store, n.Build):
            ops.extend(plan.displayed)
            for f in plan.fields:
                items = [value(v, f, ops) for v in store.items]
                ops.append(n.Build("list", items, [lists[f]], loc=store.loc))
        elif isinstance(store, n.SetItem):
            for f in plan.fields:
                ops.append(n.SetItem(lists[f], store.index, value(store.value, f, ops),
                                     loc=store.loc))
        else:  # an append call
            for f in plan.fields:
                method = n.GetAttr(lists[f], "append", [n.Value()], loc=store.loc)
                v = value(store.args[0], f, ops)  # type: ignore[attr-defined]
                ops += [method, n.Call(method.result, [v], [], [n.Value()], loc=store.loc)]
        insert(store, ops, replace=True)
    for walk in plan.walks:
        if isinstance(walk, n.For):
            walk.iterable = length(walk)
        else:
            walk.args = [length(walk) if a is xs else a for a in walk.args]  # type: ignore
    for vid in plan.loop_items:
        plan.items[vid].hint = "i"  # (a loop's item is now its index)
    for op in plan.lens:
        op.args = [first]
    for use in plan.uses:
        if isinstance(use, n.GetAttr):
            get = n.GetItem(lists[use.name], plan.items[use.obj.id], use.results, loc=use.loc)
            insert(use, [get], replace=True)
        elif isinstance(use, n.SetAttr):
            put = n.SetItem(lists[use.name], plan.items[use.obj.id], use.value, loc=use.loc)
            insert(use, [put], replace=True)
        elif isinstance(use, (n.Yield, n.For)):
            continue  # (a join: its items' indices, below)
        else:  # ``a is b`` of two loops' items: their indices are equal
            f = operator.eq if _const(use.fn, p) is operator.is_ else operator.ne  # type: ignore[attr-defined]
            const = n.Const(f, [n.Value()])
            use.fn = const.result  # type: ignore[attr-defined]
            insert(use, [const])
    for op in [*plan.making, *plan.appends, *plan.reads]:
        region = p.where[id(op)]
        region.ops = [o for o in region.ops if o is not op]
    # (an item read at an index and joined with others: the join holds the index)
    replace_uses(p.fn, {r.result.id: r.index for r in plan.reads} |
                 {v.id: plan.items[v.id] for v in xs_items})
