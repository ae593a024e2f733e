"""Reverse mode of writes into what a holder holds: the items of a list (``for p in ps:
p.x = p.x + dt * p.v``), the values of a dict (``d["w"][0] = c``), the fields of an object
(``tr.hist.append(x)``), the entries of a tuple (``xt[1][0] = c``).

Each read ``p = ps[i]`` (``d[k]``, ``o.f``, ``t[i]``) has an adjoint of its own, added into
the holder's slot where it was read. A write ``p.x = v`` then clears the field in ``p``'s
adjoint only, and the reads of the same object made through another read of ``ps[i]``
after the write (a later iteration, a later loop over ``ps``) keep theirs in ``ps``'s
adjoint, where the write's reverse never looks: they would flow to the field's value
before the write, a wrong number (hence :meth:`~wengert.transforms.vjp.VJP.borrowed`).

:func:`own_written_items` makes every write go through the holder's own adjoint slot: a
write into an item ``p = ps[i]`` is followed by ``ps[i] = p`` (``o.f = p``), writing back
the object it already is (nothing changes in the program; into a tuple, the write-back is
the reverse's alone), whose reverse takes the adjoint of slot ``i`` out of ``ps``'s into
``p``'s before the write's reverse runs, and the read's reverse puts it back. A use of ``p``
after a write into *any* item of ``ps`` through another read (which may be the same object)
reads ``ps[i]`` again just before it, so that no write stands between a read and its uses.
The adjoint of the object is then always the slot's plus what the reads since the last write
hold, in the order the program ran them; and a change of length through one read
(``h.append(x)``) is one of every read of that holder (``VJP.analyse`` groups them). A
tuple's entries unpacked (``x0, xs = xt``) are read by index first
(:func:`read_unpacked_entries`), so that every way to them is a read of a place.

That is only sound where the items are reached through the holder alone, so a holder is
treated so only when all of this holds (else nothing changes and the write stays refused):

* every loop over a list holder reads its items by index (:func:`index_item_loops`
  rewrites them, and loops over a slice of it or ``reversed`` of it made for the loop:
  ``zip(ps, ps[1:])``), and the holder is otherwise only read at places (an int index, a
  dict's key, a field it was passed in with), measured, its keys iterated, given numbers
  at its own places (``d["z"] = c``, ``tr.k = c``) or new objects made for a place alone
  (``ps[0] = Body(c, v)``, ``d["z"] = [c, v]``, ``tr.hist = [c, v]``,
  ``ps.append(Body(c, v))``) where no object
  read before at a place that may be that one is written into after it, or used after it
  and after a write into an item (its write-back would put the old object back; read
  again, it would be the new one): never changed otherwise, sliced, unpacked, passed on,
  stored, returned or captured;
* its items are only read and written entry by entry (``p.x``, ``row[j]``, ``len(row)``,
  ``row.append(x)``, ``sum(row)``, a loop over ``row`` that writes into nothing the
  holder holds), with numbers and strings only: never passed on, stored, returned or
  captured;
* it is a parameter whose type says it holds objects holding only numbers and strings (a
  list or dict of such objects, lists or dicts; an object of a plain class writing
  attributes as Python does, whose fields are numbers, strings, lists or dicts; a tuple of
  numbers and such), the function reads no list, dict or object of a global or closure,
  and, checked when it runs: no object is twice in the list
  (``runtime.check_distinct_items``, where it holds objects of a class and the other
  parameters can hold none), or (``runtime.check_held_alone``, beside other parameters
  holding objects one level down at most) what it holds is distinct, holds only numbers
  and strings, and is no other parameter nor held by one; or it is a display of new
  objects of a plain class, each made for it from numbers and strings and held by nothing
  else.
"""

from __future__ import annotations

import builtins
import dataclasses
import math
import operator
import statistics
import types as pytypes
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.arrays import SCALAR_TYPES
from wengert.analysis.effects.objects import is_writeback, write_targets
from wengert.analysis.effects.reads import record_copies
from wengert.analysis.types import (
    ArrayOf,
    DictOf,
    ListOf,
    ObjectOf,
    TupleOf,
    Types,
)
from wengert.ir import nodes as n
from wengert.ir.uses import Places
from wengert.objects import attribute_kind, hashable, plain_class
from wengert.rules import registry
from wengert.transforms.base import INPLACE
from wengert.transforms.vjp_containers import (
    _made_class,
    reads_structure,
)

#: Types of values that hold no object (what an item's field may hold).
_INERT = SCALAR_TYPES


class _Plan(Places):
    """Definitions, uses and places of one function's values (:class:`Places`), and the
    records of a gradient differentiated again (none in a user's function)."""

    def __init__(self, fn: n.Function) -> None:
        super().__init__(fn)
        self.copies = record_copies(fn.body)


def own_written_items(fn: n.Function, types: Types, arg_types: Sequence[Any],
                      active: Callable[[n.Value], bool],
                      written: Callable[[Any], Any] | None
                      ) -> tuple[dict[int, int], set[int]]:
    """Make the writes into items of a list, values of a dict or fields of an object go
    through the holder's adjoint (see the module's docstring), in place; return the ids of
    the reads whose writes are so (not borrowed), each with its holder's, and the ids of
    the holders."""
    plan = _Plan(fn)
    # The holders some of whose items, read at a place, are written into.
    holders: dict[int, n.Value] = {}
    for op in list(n.walk_local(fn.body)):
        for t in write_targets(op, plan.defs, types.of, written):
            d = plan.defs.get(t.id)
            if active(t) and _place_read(d, types):
                holders.setdefault(d.obj.id, d.obj)  # type: ignore[union-attr]
    if not holders or not _no_shared_globals(fn):
        return {}, set()
    owned: dict[int, int] = {}
    writebacks: set[int] = set()
    done: set[int] = set()
    for xs in holders.values():
        items = _items(xs, plan, types, arg_types, fn, written)
        if items is None:
            continue
        reads, checked, others, kept = items
        done.add(xs.id)
        _rewrite(fn, xs, reads, types, written, owned, writebacks, kept)
        if xs in fn.body.args:
            site = n.Const(checked, [n.Value()], origin="site")
            if others is None:
                check = n.Const(runtime.check_distinct_items,
                                [n.Value("check_distinct_items")])
                args = [xs, site.result]
                extra: list[n.Op] = []
            else:
                check = n.Const(runtime.check_held_alone, [n.Value("check_held_alone")])
                count = n.Const(others[0], [n.Value()])
                args = [xs, site.result, count.result, *others[1]]
                extra = [count]
            call = n.Call(check.result, args, [], [n.Value()], loc=checked)
            fn.body.ops[0:0] = [site, *extra, check, call]
    return owned, done


def _place_read(d: n.Op | None, types: Types) -> bool:
    """Whether ``d`` reads an object at one place of its holder: ``xs[i]`` of a list,
    ``d[k]`` of a dict, ``o.f`` of an object of a plain class that leaves writing
    attributes to Python."""
    if isinstance(d, n.GetItem):
        t = types.of(d.obj)
        return t in (list, tuple) and types.of(d.index) is int or t is dict
    if isinstance(d, n.GetAttr):
        return _writable_class(types.of(d.obj)) and \
            attribute_kind(types.of(d.obj), d.name) == "field"
    return False


def _writable_class(cls: Any) -> bool:
    """Whether ``cls`` is a plain class whose instances' attributes are written as Python
    writes them (a write-back ``o.f = o.f`` changes nothing)."""
    return isinstance(cls, type) and plain_class(cls) and \
        cls.__setattr__ is object.__setattr__


def _holder_type(t: Any) -> bool:
    """Whether a parameter of this type holds, one level down, objects that hold only
    numbers and strings (as types know, or checked when it runs:
    ``runtime.check_held_alone``): a list or dict of such, or an object whose fields are
    numbers, strings, lists and dicts."""
    if isinstance(t, ListOf):
        return _inert_item(t.item)
    if isinstance(t, DictOf):
        return _inert_item(t.value)
    if isinstance(t, ObjectOf):
        return _writable_class(t.cls) and all(
            ft in _INERT or ft in (list, dict) or _inert_item(ft) for _, ft in t.fields)
    if isinstance(t, TupleOf):
        return t.cls is None and all(e in _INERT or _inert_item(e) for e in t.entries)
    return False


def _items(xs: n.Value, plan: _Plan, types: Types, arg_types: Sequence[Any],
           fn: n.Function, written: Callable[[Any], Any] | None
           ) -> tuple[list[n.Op], Any, tuple[int, list[n.Value]] | None,
                      dict[int, list[n.Value]]] | None:
    """The reads of the holder ``xs`` at a place (``xs[i]``, ``xs[k]``, ``xs.f``) giving
    objects, the place to report a holder passed in that shares what it holds at (its first
    write into one), and, for a holder passed in beside parameters that may hold objects,
    those parameters for ``runtime.check_held_alone`` (the count of those that hold none,
    and all of them; ``None`` where ``runtime.check_distinct_items`` is check enough),
    and the reads used after a store of a new object at their place (by the store's
    ``id``: they keep the object as it was there, :func:`_rewrite`), where the
    conditions of the module's docstring hold of ``xs``; else ``None``."""
    params = fn.body.args
    made = plan.defs.get(xs.id)
    kind = types.of(xs)
    others: tuple[int, list[n.Value]] | None = None
    if xs in params:
        k = params.index(xs)
        if not _holder_type(arg_types[k]):
            return None
        rest = [(p, t) for j, (p, t) in enumerate(zip(params, arg_types)) if j != k]
        if not (isinstance(arg_types[k], ListOf) and isinstance(arg_types[k].item, ObjectOf)
                and all(_holds_no_objects(t) for _, t in rest)):
            # (Objects of a class in a list, beside parameters that can hold none: that no
            # object is twice in the list is check enough.)
            if not all(_flat_type(t) or _shallow(t) for _, t in rest):
                return None
            tops = [p for p, t in rest if t not in _INERT and _flat_type(t)]
            deep = [p for p, t in rest if not _flat_type(t)]
            others = (len(tops), tops + deep)
    elif not (kind is list and isinstance(made, n.Build) and made.kind == "list" and
              not made.starred and
              all(_new_inert_object(v, made, plan, types) or _new_row(v, made, plan, types)
                  for v in made.items)):
        return None  # (not a display of new objects or new rows: ``[[x, 2.0], [y, c]]``)
    given = arg_types[params.index(xs)] if xs in params else None
    fields = dict(given.fields) if isinstance(given, ObjectOf) else {}
    reads: list[n.Op] = []
    stores: list[n.Op] = []
    first_write = None
    swapped = _swaps(xs, plan) if kind is list else {}
    for use in plan.uses.get(xs.id, []):
        if id(use) in swapped:
            if isinstance(use, n.SetItem):
                stores.append(use)  # (two items swapped: ``m[k], m[p] = m[p], m[k]``)
            continue
        if _held_read(use, xs, kind, fields, types):
            if types.of(use.results[0]) not in _INERT:
                reads.append(use)
        elif kind is list and xs not in params and not made.items and \
                _appends_new_row(use, xs, plan, types):
            continue  # (a table made row by row: ``[[0.0] * n for _ in range(m)]``)
        elif _measures(use, xs, plan) or _reads_structure(use, xs, plan) or \
                _checks_alone(use, plan) or kind is dict and _iterates_keys(use, xs, plan):
            continue
        elif isinstance(use, n.Unpack) and use.value is xs and kind is tuple and \
                use.star is None and all(types.of(r) in _INERT or not plan.uses.get(r.id)
                                         for r in use.results):
            continue  # (its numbers; an entry written into is read by index instead)
        elif isinstance(use, n.GetItem) and use.obj is xs and all(
                _reads_structure(u, use.result, plan) or _measures(u, use.result, plan)
                for u in plan.uses.get(use.result.id, [])):
            continue  # (a pullback's read of an item's structure: its values are not read)
        elif isinstance(use, (n.SetItem, n.SetAttr)) and use.obj is xs and \
                use.value is not xs and (_writeback(use, plan) or
                                         _number_write(use, xs, kind, fields, types)):
            continue
        elif isinstance(use, n.SetItem) and use.obj is xs and kind in (list, dict) and \
                (types.of(use.index) is int or kind is dict) and \
                (_new_row(use.value, use, plan, types) or
                 _new_inert_object(use.value, use, plan, types)):
            stores.append(use)  # (a new object at a place: ``ps[0] = Body(c, v)``)
        elif isinstance(use, n.SetAttr) and use.obj is xs and use.name in fields and \
                attribute_kind(kind, use.name) == "field" and \
                _new_row(use.value, use, plan, types):
            stores.append(use)  # (a new list in a field: ``tr.hist = [c, v]``)
        elif kind is list and (calls := _appends_new(use, xs, plan, types)) is not None:
            stores.extend(calls)  # (new objects at new places: ``ps.append(Body(c, v))``)
        elif isinstance(use, n.Return) and xs not in params and use.value is xs:
            continue  # (a table made here, returned: its adjoint is the output's)
        elif isinstance(use, n.MakeFunction) and _reading_key(use, plan):
            continue  # (``max(range(k, n), key=lambda i: abs(m[i][k]))``)
        elif use is not made:
            return None
    # The writes into what the reads give (each followed by a write-back, and reads after
    # it read again: ``_rewrite``).
    got = {r.results[0].id for r in reads}
    writes = [op for op in n.walk_local(fn.body) if stores and any(
        t.id in got for t in write_targets(op, plan.defs, types.of, written))]
    grows = any(isinstance(s, n.Call) for s in stores)
    kept: dict[int, list[n.Value]] = {}
    for read in reads:
        p = read.results[0]
        for use in plan.uses.get(p.id, []):
            if not _item_use(use, p, read, types, plan):
                return None
            for s in stores:
                if not plan.between(s, read, use) or _other_place(s, read, plan):
                    continue
                if use in writes:
                    return None  # (an object read, its place given a new one, then the
                    # old object written into: its write-back would put it back)
                if id(s) not in swapped and _same_place(s, read, plan, grows):
                    # (used after its place was given a new one: the object as it was
                    # there just before, never written into again)
                    if p not in kept.setdefault(id(s), []):
                        kept[id(s)].append(p)
                elif any(plan.between(w, read, use) for w in writes):
                    return None  # (read again after a write into an item, it may be the
                    # new one)
            if first_write is None and isinstance(use, (n.SetAttr, n.SetItem)) and \
                    use.obj is p:
                first_write = use.loc
    return reads, first_write, others, kept


def _swaps(xs: n.Value, plan: _Plan) -> dict[int, n.Op]:
    """The ops, by ``id``, of each swap of two items of the list ``xs``: ``a = xs[i]; b =
    xs[k]`` then ``xs[i] = b; xs[k] = a`` (``m[i], m[k] = m[k], m[i]``, or through a
    temporary), the four in one region with nothing but constants, index arithmetic
    (``v[j], v[j + 1] = v[j + 1], v[j]``) and measures of ``xs`` between them, each read
    used by its store alone. The items stay distinct objects, each at one place (where
    ``i`` is ``k`` nothing changes), so writes into them keep their write-backs; three or
    more places moved round are not taken (with two of the places one, an object would be
    left at two places)."""
    found: dict[int, n.Op] = {}
    for s1 in plan.uses.get(xs.id, []):
        if not isinstance(s1, n.SetItem) or s1.obj is not xs or id(s1) in found:
            continue
        r1 = plan.defs.get(s1.value.id)
        if not (isinstance(r1, n.GetItem) and r1.obj is xs and
                plan.uses.get(r1.result.id) == [s1]):
            continue
        region = plan.where[id(s1)]
        ops = region.ops
        at = ops.index(s1)
        for s2 in ops[at + 1:]:
            if _index_arithmetic(s2, plan) or _measures(s2, xs, plan):
                continue
            r2 = plan.defs.get(s2.value.id) if isinstance(s2, n.SetItem) else None
            if isinstance(r2, n.GetItem) and s2.obj is xs and r2.obj is xs and \
                    plan.uses.get(r2.result.id) == [s2] and \
                    _one_index(s1.index, r2.index, plan) and \
                    _one_index(s2.index, r1.index, plan) and \
                    plan.where[id(r1)] is region and plan.where[id(r2)] is region:
                first = min(ops.index(r1), ops.index(r2))
                if all(_index_arithmetic(op, plan) or _measures(op, xs, plan) or
                       op in (r1, r2, s1) for op in ops[first:at]):
                    found.update({id(op): op for op in (r1, r2, s1, s2)})
            break
    return found


#: Helpers taking a key function whose results only choose (an index, an order): no
#: derivative passes through the key.
_KEY_TAKERS = (runtime.keyed_extreme, runtime.keyed_order)


def _reading_key(make: n.MakeFunction, plan: _Plan) -> bool:
    """Whether ``make`` defines a key function (``lambda i: abs(m[i][k])``) given only to
    :data:`_KEY_TAKERS` as their key, whose body reads numbers and calls rules: what it
    reads of a holder it reads when called, at a place, and passes no derivative on; it
    writes into nothing."""
    f = make.results[0]
    calls = plan.uses.get(f.id, [])
    if not calls or not all(
            isinstance(c, n.Call) and c.args[1:2] == [f] and f not in c.args[2:] and
            f not in c.args[:1] and not c.kwargs and not c.starred and
            any(_const(c.fn, plan) is t for t in _KEY_TAKERS) for c in calls):
        return False
    consts = {op.result.id: op.value for op in n.walk(make.func.body)
              if isinstance(op, n.Const)}
    for op in n.walk(make.func.body):
        if isinstance(op, n.Call):
            g = consts.get(op.fn.id)
            if not hashable(g) or g in INPLACE or registry.lookup(g) is None:
                return False
        elif not isinstance(op, (n.Const, n.GetItem, n.Return)):
            return False
    return True


#: Arithmetic of ints that two indices may each compute anew (``v[j + 1]`` twice).
_INDEX_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.neg,
                     operator.floordiv, operator.mod)


def _index_arithmetic(op: n.Op, plan: _Plan) -> bool:
    """Whether ``op`` is a constant or :data:`_INDEX_ARITHMETIC` (it changes nothing)."""
    return isinstance(op, n.Const) or isinstance(op, n.Call) and \
        any(_const(op.fn, plan) is g for g in _INDEX_ARITHMETIC)


def _one_index(a: n.Value, b: n.Value, plan: _Plan, depth: int = 0) -> bool:
    """Whether the indices ``a`` and ``b`` are one value, equal int constants, or the same
    arithmetic of such (``j + 1`` computed twice)."""
    if a is b:
        return True
    x, y = plan.defs.get(a.id), plan.defs.get(b.id)
    if isinstance(x, n.Const) and isinstance(y, n.Const):
        return type(x.value) is int and type(y.value) is int and x.value == y.value
    if depth > 4 or not (isinstance(x, n.Call) and isinstance(y, n.Call)) or \
            x.kwargs or y.kwargs or x.starred or y.starred or len(x.args) != len(y.args):
        return False
    f = _const(x.fn, plan)
    return any(f is g for g in _INDEX_ARITHMETIC) and _const(y.fn, plan) is f and \
        all(_one_index(u, v, plan, depth + 1) for u, v in zip(x.args, y.args))


def _same_place(store: n.Op, read: n.Op, plan: _Plan, grows: bool) -> bool:
    """Whether the write ``store`` of a new object surely replaces what ``read`` read, and
    runs after it in its region (so it comes before every use after it): a field of one
    name, one key or index (one value: a list given new places, ``grows``, may move a
    negative one), or equal constant keys or indices from the start."""
    if plan.where.get(id(store)) is not plan.where.get(id(read)) or \
            plan.order[id(store)] < plan.order[id(read)]:
        return False
    if isinstance(store, n.SetAttr) and isinstance(read, n.GetAttr):
        return store.name == read.name and store.obj is read.obj
    if not (isinstance(store, n.SetItem) and isinstance(read, n.GetItem)):
        return False
    a, b = plan.defs.get(store.index.id), plan.defs.get(read.index.id)
    if store.index is read.index:
        return not grows or isinstance(a, n.Const) and type(a.value) is int and a.value >= 0
    if not (isinstance(a, n.Const) and isinstance(b, n.Const)):
        return False
    x, y = a.value, b.value
    return type(x) is type(y) and x == y and (type(x) is str or type(x) is int and x >= 0)


def _appends_new(use: n.Op, xs: n.Value, plan: _Plan, types: Types) -> list[n.Op] | None:
    """The calls of ``use``, ``xs.append`` read as a method, where each appends a new
    object made for it alone (``ps.append(Body(c, v))``, ``rows.append([c, v])``); else
    ``None``."""
    if not (isinstance(use, n.GetAttr) and use.obj is xs and use.name == "append"):
        return None
    calls = plan.uses.get(use.result.id, [])
    if calls and all(
            isinstance(c, n.Call) and c.fn is use.result and len(c.args) == 1 and
            not c.kwargs and not c.starred and c.args[0] is not xs and
            (_new_row(c.args[0], c, plan, types) or
             _new_inert_object(c.args[0], c, plan, types)) for c in calls):
        return calls
    return None


def _other_place(store: n.Op, read: n.Op, plan: _Plan) -> bool:
    """Whether the write ``store`` and the ``read`` of one holder are at places that cannot
    be one: fields of other names, constant keys that differ, constant indices of one
    sign that differ, or an append and a constant index counted from the start."""
    if isinstance(store, n.SetAttr) and isinstance(read, n.GetAttr):
        return store.name != read.name
    if isinstance(store, n.Call) and isinstance(read, n.GetItem):
        # (an append puts its object at a new place: no place counted from the start)
        b = plan.defs.get(read.index.id)
        return isinstance(b, n.Const) and type(b.value) is int and b.value >= 0
    if not (isinstance(store, n.SetItem) and isinstance(read, n.GetItem)):
        return False
    a, b = plan.defs.get(store.index.id), plan.defs.get(read.index.id)
    if not (isinstance(a, n.Const) and isinstance(b, n.Const)):
        return False
    x, y = a.value, b.value
    if type(x) is int and type(y) is int:
        return x != y and (x < 0) == (y < 0)
    return type(x) is str and type(y) is str and x != y


def _held_read(use: n.Op, xs: n.Value, kind: Any, fields: Mapping[str, Any],
               types: Types) -> bool:
    """Whether ``use`` reads what the holder ``xs`` holds at one place: ``xs[i]`` of a
    list (an int), ``xs[k]`` of a dict (a string or an int), ``xs.f`` of one of the fields
    ``xs`` was passed in with (a class's attribute may be shared by all its objects)."""
    if isinstance(use, n.GetItem):
        # (a dict's key may be of any type: what is read there is written back there)
        return use.obj is xs and use.index is not xs and (
            kind in (list, tuple) and types.of(use.index) is int or kind is dict)
    if isinstance(use, n.GetAttr):
        return use.obj is xs and use.name in fields and \
            attribute_kind(kind, use.name) == "field"
    return False


def _iterates_keys(use: n.Op, xs: n.Value, plan: _Plan) -> bool:
    """Whether ``use`` iterates over the keys of the dict ``xs`` (``for k in d``, ``for k in
    d.keys()``): writes into its values leave its keys as they are."""
    if isinstance(use, n.For):
        return use.iterable is xs and xs not in use.inits
    if isinstance(use, n.Call) and use.args == [xs] and not use.kwargs and \
            not use.starred and _const(use.fn, plan) is dict.keys:
        calls = [use]  # (``d.keys()`` made a call of the method of ``dict``)
    elif isinstance(use, n.GetAttr) and use.obj is xs and use.name == "keys":
        calls = plan.uses.get(use.result.id, [])
        if not all(isinstance(c, n.Call) and c.fn is use.result and not c.args and
                   not c.kwargs for c in calls):
            return False
    else:
        return False
    return bool(calls) and all(
        all(isinstance(u, n.For) and u.iterable is c.results[0] and
            c.results[0] not in u.inits for u in plan.uses.get(c.results[0].id, []))
        for c in calls)


def _number_write(op: n.Op, xs: n.Value, kind: Any, fields: Mapping[str, Any],
                  types: Types) -> bool:
    """Whether ``op`` writes a number or a string at one place of the holder ``xs`` (a
    dict's key, an object's field it was passed in with): the holder's own write, which
    reverse mode follows on the holder's adjoint."""
    if types.of(op.value) not in _INERT:  # type: ignore[attr-defined]
        return False
    if isinstance(op, n.SetItem):
        return kind is dict
    return isinstance(op, n.SetAttr) and op.name in fields and \
        attribute_kind(kind, op.name) == "field"


def _checks_alone(use: n.Op, plan: _Plan) -> bool:
    """Whether ``use`` is the run-time check ``check_held_alone`` (which reads what the
    parameters it is given hold, changing nothing)."""
    return isinstance(use, n.Call) and _const(use.fn, plan) is runtime.check_held_alone


def _flat_type(t: Any) -> bool:
    """Whether a parameter of this type holds no object at all (a number, a list or dict of
    numbers, a numeric array, a function): only the object it is could be shared."""
    if t in _INERT or isinstance(t, (pytypes.FunctionType, pytypes.BuiltinFunctionType)):
        return True
    if isinstance(t, (ListOf, DictOf)):
        item = t.item if isinstance(t, ListOf) else t.value
        return item in _INERT or isinstance(item, TupleOf) and _flat_type(item)
    if isinstance(t, TupleOf):
        return all(e in _INERT for e in t.entries)
    return isinstance(t, ArrayOf) and t.dtype is not object and \
        numpy.dtype(t.dtype).kind in "biufc"


def _shallow(t: Any) -> bool:
    """Whether a parameter of this type holds objects one level down at most, those
    holding only numbers and strings (checked when it runs where types do not say): a
    list, dict or tuple of such, an object whose fields are numbers, strings, lists or
    dicts."""
    if isinstance(t, TupleOf):
        return all(_flat_type(e) or _inert_item(e) for e in t.entries)
    # (a list, dict or tuple of items of several types: what it holds is checked then)
    return t in (list, dict, tuple) or _holder_type(t)


def _item_use(use: n.Op, p: n.Value, read: n.GetItem, types: Types, plan: _Plan) -> bool:
    """Whether ``use`` only reads or writes a field or entry of the item ``p`` (a number or
    a string), measures it, reads its structure, or is the write-back of it at its own
    index."""
    t = types.of(p)
    if isinstance(use, n.GetAttr):
        if t is list:
            return _appends_numbers(use, p, plan, types)
        return use.obj is p and plain_class(t) and attribute_kind(t, use.name) == "field"
    if isinstance(use, n.SetAttr):
        if use.value is p:
            return is_writeback(use, plan.defs) and use.obj is read.obj
        return use.obj is p and plain_class(t) and \
            attribute_kind(t, use.name) == "field" and types.of(use.value) in _INERT
    if isinstance(use, n.GetItem):
        return use.obj is p and use.index is not p and t in (list, dict)
    if isinstance(use, n.SetItem):
        if use.value is p:
            return is_writeback(use, plan.defs) and use.obj is read.obj
        return use.obj is p and use.index is not p and t in (list, dict) and \
            types.of(use.value) in _INERT and types.of(use.index) in _INERT
    return _measures(use, p, plan) or _reads_structure(use, p, plan) or \
        _checks_alone(use, plan) or _identity_test(use, p, plan) or \
        t is list and _row_read(use, p, plan) or \
        t in (list, dict) and _iterated(use, p, read, plan, types) or _recorded(use, p, plan)


def _identity_test(use: n.Op, p: n.Value, plan: _Plan) -> bool:
    """Whether ``use`` is ``p is q`` or ``p is not q`` (``if a is b: continue`` over pairs
    of items): it reads which object ``p`` is, which write-backs keep."""
    return isinstance(use, n.Call) and _const(use.fn, plan) in (operator.is_, operator.is_not) \
        and len(use.args) == 2 and not use.kwargs and not use.starred


#: Calls whose result iterates over the lists (or dicts) they are given (read, not kept).
_ITERATORS = frozenset({zip, enumerate, reversed, dict.keys, dict.values, dict.items})


def _iterated(use: n.Op, p: n.Value, read: n.Op, plan: _Plan, types: Types) -> bool:
    """Whether ``use`` iterates over the item ``p`` (``for v in p``, a generator over it,
    or through ``zip``/``enumerate``/``reversed``, a dict's keys, values or items, iterated
    at once) in a loop that writes into nothing its holder holds: the loop reads its
    numbers."""
    loops: list[n.Op] = [use]
    if isinstance(use, n.Call) and p not in use.kwargs and not use.starred and \
            use.fn is not p and _const(use.fn, plan) in _ITERATORS:
        loops = plan.uses.get(use.results[0].id, [])
        if not loops:
            return False
        it = use.results[0]
    else:
        it = p
    holder = read.obj  # type: ignore[attr-defined]
    for loop in loops:
        if not (isinstance(loop, n.For) and loop.iterable is it and it not in loop.inits):
            return False
        for op in n.walk(loop.body):
            for t in write_targets(op, plan.defs, types.of, None):
                d = plan.defs.get(t.id)
                if t is p or getattr(d, "obj", None) is holder:
                    return False
    return True


def _recorded(use: n.Op, v: n.Value, plan: _Plan) -> bool:
    """Whether ``use`` saves ``v`` in a loop's record (in a gradient differentiated again)
    whose reverse loops only measure it or read its structure."""
    outs = plan.copies.of(use, v)
    return outs is not None and all(
        _measures(u, plan.values[c], plan) or _reads_structure(u, plan.values[c], plan)
        for c in outs for u in plan.uses.get(c, []))


#: Functions that read a list of numbers they are given, all of it at once, and return
#: numbers or a new list of them: an item passed to one is read, not kept or changed.
_ROW_READERS = frozenset({builtins.sum, builtins.len, builtins.min, builtins.max,
                          builtins.sorted, builtins.list, builtins.tuple, math.fsum,
                          math.prod, statistics.mean, statistics.fmean,
                          # (in a gradient differentiated again: a copy for a pullback,
                          # the place of ``max(row)``)
                          runtime.snapshot, runtime.first_extreme})


def _row_read(use: n.Op, p: n.Value, plan: _Plan) -> bool:
    """Whether ``use`` is ``sum(p)`` or another call of :data:`_ROW_READERS` given the list
    ``p`` first, and nowhere else."""
    return isinstance(use, n.Call) and use.args[:1] == [p] and p not in use.args[1:] and \
        not use.kwargs and not use.starred and use.fn is not p and \
        hashable(f := _const(use.fn, plan)) and f in _ROW_READERS


def _appends_new_row(use: n.Op, xs: n.Value, plan: _Plan, types: Types) -> bool:
    """Whether ``use`` is ``xs.append`` (read as a method) whose every call appends a new
    list of numbers made for it alone (:func:`_new_row`)."""
    if not (isinstance(use, n.GetAttr) and use.obj is xs and use.name == "append"):
        return False
    calls = plan.uses.get(use.result.id, [])
    return bool(calls) and all(
        isinstance(c, n.Call) and c.fn is use.result and len(c.args) == 1 and
        not c.kwargs and not c.starred and c.args[0] is not xs and
        _new_row(c.args[0], c, plan, types) for c in calls)


def _new_row(v: n.Value, append: n.Op, plan: _Plan, types: Types) -> bool:
    """Whether ``v``, appended by ``append`` (or stored by it at a place, ``d["z"] = [c,
    v]``) and used by nothing else, is a new list of numbers (and strings) made in the
    same region: a display (``[0.0] * n`` too), a copy
    of a list of numbers (``row[:]``, ``list(row)``, ``row.copy()``), or a list made empty
    and only appended numbers to (``[0.0 for _ in range(n)]``)."""
    if types.of(v) is not list:
        return False
    made = plan.defs.get(v.id)
    if plan.where.get(id(made)) is not plan.where.get(id(append)):
        return False
    if isinstance(made, n.Build) and made.kind == "list" and not made.starred and \
            not made.items:
        # Made empty, only appended numbers to, then appended to the table.
        return all(u is append or isinstance(u, n.GetAttr) and u.name == "append" and all(
            isinstance(c, n.Call) and c.fn is u.result and len(c.args) == 1 and
            not c.kwargs and not c.starred and types.of(c.args[0]) in _INERT
            for c in plan.uses.get(u.result.id, []))
            for u in plan.uses.get(v.id, []))
    if [u for u in plan.uses.get(v.id, []) if not _recorded(u, v, plan)] != [append]:
        return False
    if isinstance(made, n.Call) and not made.kwargs and not made.starred and \
            len(made.args) == 2 and _const(made.fn, plan) is operator.mul:
        # ``[0.0] * n``: the numbers are shared, which no write into the list changes.
        shown, times = made.args if types.of(made.args[1]) is int else made.args[::-1]
        if types.of(times) is not int or plan.uses.get(shown.id, []) != [made]:
            return False
        made = plan.defs.get(shown.id)
    if isinstance(made, n.Build) and made.kind == "list" and not made.starred:
        return all(types.of(x) in _INERT for x in made.items)
    if isinstance(made, n.Call) and not made.kwargs and not made.starred and \
            len(made.args) == 2 and _const(made.fn, plan) is operator.add:
        # ``list(row) + [b]``: a new list of what both hold.
        return all(_numbers_list(x, types) or _inert_display(x, plan, types)
                   for x in made.args)
    if isinstance(made, n.GetItem) and types.of(made.index) is slice:
        return _numbers_list(made.obj, types)
    if isinstance(made, n.Call) and len(made.args) == 1 and not made.kwargs and \
            not made.starred and _const(made.fn, plan) is builtins.list:
        # (a new list, of numbers: ``list(q)`` of a tuple of floats too)
        return _numbers_list(made.args[0], types) or _numbers_list(v, types)
    if isinstance(made, n.Call) and not made.args and not made.kwargs:
        method = plan.defs.get(made.fn.id)
        return isinstance(method, n.GetAttr) and method.name == "copy" and \
            _numbers_list(method.obj, types)
    return False


def _inert_display(v: n.Value, plan: _Plan, types: Types) -> bool:
    """Whether ``v`` is a list display of numbers and strings (``[b]``)."""
    made = plan.defs.get(v.id)
    return isinstance(made, n.Build) and made.kind == "list" and not made.starred and \
        all(types.of(x) in _INERT for x in made.items)


def _numbers_list(v: n.Value, types: Types) -> bool:
    """Whether ``v`` is a list whose items are all numbers or strings, as types know."""
    return types.of(v) in (list, tuple) and types.items.get(v.id) in _INERT


def _appends_numbers(use: n.Op, p: n.Value, plan: _Plan, types: Types) -> bool:
    """Whether ``use`` is ``p.append`` (read as a method) whose every call appends a number
    or a string."""
    return isinstance(use, n.GetAttr) and use.obj is p and use.name == "append" and all(
        isinstance(c, n.Call) and c.fn is use.result and len(c.args) == 1 and
        not c.kwargs and not c.starred and types.of(c.args[0]) in _INERT
        for c in plan.uses.get(use.result.id, []))


def _writeback(op: n.SetItem | n.SetAttr, plan: _Plan) -> bool:
    """Whether ``op`` is ``xs[i] = p`` for a ``p`` read as ``xs[i]`` (a write-back made by
    an earlier pass, in a gradient differentiated again)."""
    return is_writeback(op, plan.defs)


def _const(v: n.Value, plan: _Plan) -> Any:
    d = plan.defs.get(v.id)
    return d.value if isinstance(d, n.Const) else None


def _measures(op: n.Op, v: n.Value, plan: _Plan) -> bool:
    """Whether ``op`` is ``len(v)``."""
    return isinstance(op, n.Call) and _const(op.fn, plan) is builtins.len and \
        len(op.args) == 1 and op.args[0] is v and not op.kwargs and not op.starred


def _reads_structure(op: n.Op, v: n.Value, plan: _Plan) -> bool:
    """Whether ``op`` is a call of a pullback's helper reading only the structure of ``v``
    (:data:`STRUCTURE_READERS`)."""
    return reads_structure(op, v, plan.defs)


def _inert_item(t: Any) -> bool:
    """Whether an item of this parameter type holds nothing but numbers and strings, in
    fields of a plain class (written as Python writes attributes) or as a list's items or a
    dict's values."""
    if isinstance(t, ObjectOf):
        cls = t.cls
        return plain_class(cls) and cls.__setattr__ is object.__setattr__ and \
            all(ft in _INERT for _, ft in t.fields)
    if isinstance(t, ListOf):
        return t.item in _INERT
    if isinstance(t, DictOf):
        return t.value in _INERT
    return False


def _holds_no_objects(t: Any) -> bool:
    """Whether a parameter of this type can reach no object that a list's item could be."""
    if t in _INERT or isinstance(t, (ListOf, DictOf)) and _holds_no_objects(
            t.item if isinstance(t, ListOf) else t.value):
        return True
    if isinstance(t, TupleOf):
        return all(_holds_no_objects(e) for e in t.entries)
    if isinstance(t, ArrayOf):
        return t.dtype is not object and numpy.dtype(t.dtype).kind in "biufc"
    return isinstance(t, (pytypes.FunctionType, pytypes.BuiltinFunctionType))


def _new_inert_object(v: n.Value, display: n.Op, plan: _Plan, types: Types) -> bool:
    """Whether ``v``, an item of the list display ``display`` (or the value it stores at a
    place, ``ps[0] = Body(c, v)``), is an object made for it of a class ``_inert_item``
    would take, from numbers and strings, and held by nothing else: its constructor's only
    other uses are the writes of its fields before the display (an inlined
    ``__init__``)."""
    made = plan.defs.get(v.id)
    cls = _made_class(made, plan.defs)
    if cls is None or not isinstance(made, n.Call):
        return False
    # (``object.__new__(C)``, an inlined ``__init__`` writing the fields after it: the
    # class is its argument)
    given = made.args[1:] if _const(made.fn, plan) is object.__new__ else made.args
    if not all(types.of(a) in _INERT for a in [*given, *(a for _, a in made.kwargs)]):
        return False
    if dataclasses.is_dataclass(cls):
        if any(f.default_factory is not dataclasses.MISSING or
               f.default is not dataclasses.MISSING and type(f.default) not in _INERT
               for f in dataclasses.fields(cls)):
            return False
    region = plan.where[id(display)]
    before = region.ops[:region.ops.index(display)]
    uses = plan.uses.get(v.id, [])
    if sum(x is v for x in display.operands()) != 1 or \
            sum(1 for u in uses if u is display) != 1:
        return False
    return all(u is display or
               isinstance(u, n.SetAttr) and u.obj is v and u.value is not v and
               types.of(u.value) in _INERT and u in before
               for u in uses)


def _no_shared_globals(fn: n.Function) -> bool:
    """Whether the function reads no list, dict, set or user object of a global or a
    closure (which could hold the objects a list passed in holds)."""
    for op in n.walk(fn.body):
        if not isinstance(op, n.Const):
            continue
        v = op.value
        if isinstance(v, (list, dict, set)):
            return False
        cls = type(v)
        if plain_class(cls) and not cls.__module__.startswith("wengert") and \
                not callable(v):
            return False
    return True


def _rewrite(fn: n.Function, xs: n.Value, reads: list[n.GetItem], types: Types,
             written: Callable[[Any], Any] | None, owned: dict[int, int],
             writebacks: set[int], kept: Mapping[int, list[n.Value]]) -> None:
    """Write back every write into an item of ``xs`` and read an item again where a write
    into another may stand between its read and a use (the module's docstring). A read
    used after its place is given a new object (``kept``, by the store's ``id``) is, from
    the store on, the object as it was just before the store (read again there if a write
    came between)."""
    # Each read's place: the index or key it was read at, or the field's name.
    index: dict[int, n.Value | str] = {
        r.results[0].id: r.name if isinstance(r, n.GetAttr) else r.index  # type: ignore
        for r in reads}

    def read_at(place: n.Value | str, hint: str | None, loc: Any) -> n.Op:
        if isinstance(place, str):
            return n.GetAttr(xs, place, [n.Value(hint)], loc=loc)
        return n.GetItem(xs, place, [n.Value(hint)], loc=loc)

    def write_at(place: n.Value | str, value: n.Value, loc: Any) -> n.Op:
        if isinstance(place, str):
            return n.SetAttr(xs, place, value, loc=loc)
        return n.SetItem(xs, place, value, loc=loc)

    owned.update(dict.fromkeys(index, xs.id))

    def item_write(op: n.Op, defs: Mapping[int, n.Op]) -> n.Value | None:
        # (An item of this list: another list's, rewritten in its turn, is another object.)
        for t in write_targets(op, defs, types.of, written):
            if t.id in index:
                return t
        return None

    plan_defs: dict[int, n.Op] = {}
    for op in n.walk(fn.body):
        for r in op.results:
            plan_defs[r.id] = op

    def writes_inside(op: n.Op) -> bool:
        return any(item_write(o, plan_defs) is not None or id(o) in writebacks
                   for r in op.regions() for o in n.walk(r))

    #: Reads whose place was given a new object: what each is from then on.
    fixed: dict[int, n.Value] = {}

    def region(r: n.Region, current: dict[int, n.Value]) -> None:
        ops = list(r.ops)
        out: list[n.Op] = []
        for op in ops:
            for v in kept.get(id(op), ()):
                if v.id not in fixed:
                    cur = current.get(v.id)
                    if cur is None:  # (a write came between: as it is before the store)
                        again = read_at(index[v.id], v.hint, op.loc)
                        out.append(again)
                        plan_defs[again.result.id] = again
                        owned[again.result.id] = xs.id
                        cur = again.result
                    fixed[v.id] = cur
            # The item as read since the last write into any item of ``xs``.
            mapping: dict[int, n.Value] = {}
            for v in op.operands():
                if v.id in fixed:
                    mapping[v.id] = fixed[v.id]
                elif v.id in index and v.id not in mapping:
                    cur = current.get(v.id)
                    if cur is None:
                        again = read_at(index[v.id], v.hint, op.loc)
                        out.append(again)
                        plan_defs[again.result.id] = again
                        index[again.result.id] = index[v.id]
                        owned[again.result.id] = xs.id
                        cur = current[v.id] = again.result
                    mapping[v.id] = cur
            if mapping:
                op.set_operands([mapping.get(v.id, v) for v in op.operands()])
            out.append(op)
            if any(r.id in index for r in op.results):
                current[op.results[0].id] = op.results[0]
            target = item_write(op, plan_defs)
            if target is not None:
                back = write_at(index[target.id], target, op.loc)
                writebacks.add(id(back))
                out.append(back)
                # Another read may be the same object: it is read again after this.
                original = next(k for k, c in current.items() if c is target) \
                    if target in current.values() else None
                current.clear()
                if original is not None:
                    current[original] = target
            if not isinstance(op, n.MakeFunction) and op.regions():
                loops = isinstance(op, (n.For, n.While))
                inside = writes_inside(op)
                for sub in op.regions():
                    # A loop's body runs after its own writes: it starts with no item read.
                    region(sub, {} if loops and inside else dict(current))
                if writes_inside(op):
                    current.clear()
        r.ops = out

    region(fn.body, {})
