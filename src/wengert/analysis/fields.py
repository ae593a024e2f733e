"""The types of the fields of objects a function makes and keeps to itself.

``p = Particle(x0, v0)`` followed by reads and writes of ``p.x`` and ``p.v``: if every
instance of the class in the function is made here (a dataclass constructor, or
``object.__new__`` followed by the writes an inlined ``__init__`` does) and none leaves
the function's sight (stored in a container, captured, passed to code that might write
into it), every value a field can hold is one the function wrote, in its constructor
call or by an attribute assignment. A list the function makes and keeps to itself
(``ps = [Particle(x, v) for x, v in zip(xs, vs)]``, then only read at an index, walked,
measured and appended to) keeps the objects in its sight: one read out of it is one the
function made. The type of a field is then the join of the types of
those values, and reads of it have that type: arithmetic on ``p.x`` inlines like
arithmetic on a float.

The facts are flow-insensitive (one type per class and field over the whole function),
which is what makes them safe without an alias analysis: any write to a field of an
instance, wherever it is, is one of the writes joined.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from wengert import runtime
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses
from wengert.objects import dataclass_arguments

Type = type | None
Fields = dict[tuple[type, str], list[Type]]

#: Functions that may be handed an object without writing into it.
_READ_ONLY = frozenset({isinstance, type, id, len, repr, str, print, hasattr, bool, hash,
                        callable, format,
                        # (checks generated code makes of what objects hold: they raise,
                        # or return nothing, and keep nothing)
                        runtime.check_held_alone, runtime.check_distinct_items})


def object_fields(fn: n.Function, type_of: Callable[[n.Value], Type],
                  consts: Mapping[int, Any],
                  given: Mapping[int, tuple[tuple[str, type], ...]] | None = None,
                  given_items: Mapping[int, tuple[tuple[str, type], ...]] | None = None,
                  same: Mapping[int, n.Value] | None = None,
                  records: set[int] | None = None,
                  display_type: Callable[[n.Value], Any] | None = None) -> Fields:
    """Per class and field, the types of the values the function's constructor calls and
    attribute assignments put in fields of instances of classes whose every instance it
    makes and keeps to itself, or is given as a parameter whose fields' types the caller
    checks (``given``: parameter id -> (name, type) of each of its instance's attributes;
    ``given_items``: the same for the items of a list parameter nothing changes)
    (``None`` in the list: a value of unknown type). ``same`` maps values that are the
    object another value is (a generated gradient's loop record, unpacked by its reverse
    loop: ``effects.reads.record_copies``) to that value, and ``records`` are the ops (by ``id``)
    pushing those onto records: storing it there and reading it back hands it to nothing
    else. ``display_type`` gives the type of a list display of numbers as a list of them
    (``ListOf``): a field given one nothing else holds (``tr.hist = [c, v]``) is given a
    list of those numbers (changed later only through the field, whose lists' writes the
    types check)."""
    found: dict[tuple[type, str], list[Type]] = {}
    uses: dict[int, int] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            uses[v.id] = uses.get(v.id, 0) + 1

    # Fields whose lists may be changed through a read of the field (``m.layers.append``):
    # a list display of objects given to one holds those only while nothing changes it.
    changed_through: set[str] = set()
    reads: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            reads.setdefault(v.id, []).append(op)
    for op in n.walk(fn.body):
        if isinstance(op, n.GetAttr) and not all(
                isinstance(u, n.For) and u.iterable is op.result or
                isinstance(u, n.GetItem) and u.obj is op.result or
                isinstance(u, n.Call) and consts.get(u.fn.id) is len and
                u.args == [op.result] for u in reads.get(op.result.id, [])):
            changed_through.add(op.name)

    def value_type(v: n.Value, name: str | None = None) -> Any:
        t = type_of(v)
        if t is list and display_type is not None and uses.get(v.id) == 1 and \
                (held := display_type(v)) is not None and \
                (held.item in (float, int) or name is not None and name not in changed_through):
            return held
        return t

    made: set[type] = set()
    poisoned: set[type] = set()
    given = given or {}
    given_items = given_items or {}
    same = same or {}
    records = records or set()

    def kind(v: n.Value) -> type | None:
        t = type_of(v)
        return t if isinstance(t, type) and _plain_class(t) else None

    seeded: dict[type, list[set[str]]] = {}

    def seed(c: type, fields: tuple[tuple[str, type], ...]) -> None:
        # An instance whose attributes' types the caller checked: they hold those until a
        # write, and the writes are joined below like a constructor's.
        made.add(c)
        seeded.setdefault(c, []).append({name for name, _ in fields})
        for name, t in fields:
            found.setdefault((c, name), []).append(t)

    for a in fn.body.args:
        if (c := kind(a)) is None:
            continue
        if a.id not in given:
            poisoned.add(c)  # an instance from outside: its fields hold anything
            continue
        seed(c, given[a.id])
    #: the loop whose item each For item value is, and each value's op
    loop_of = {op.body.args[0].id: op for op in n.walk(fn.body) if isinstance(op, n.For)}
    defs = {r.id: op for op in n.walk(fn.body) for r in op.results}
    given_items = dict(given_items)
    for op in n.walk(fn.body):
        # A slice or a copy of such a list holds the same objects (``zip(ps, ps[1:])``).
        if isinstance(op, n.GetItem) and op.obj.id in given_items and \
                type_of(op.index) is slice:
            given_items[op.result.id] = given_items[op.obj.id]
        elif isinstance(op, n.Call) and op.args and op.args[0].id in given_items and \
                consts.get(op.fn.id) in _SAME_ITEMS:
            given_items[op.result.id] = given_items[op.args[0].id]
    local = _local_holders(fn, defs, reads, type_of, consts)
    for op in n.walk(fn.body):
        for a in n.region_args(op):
            if isinstance(op, n.For) and a is op.body.args[0] and (c := kind(a)):
                if a.id in same or op.iterable.id in local:
                    continue  # (a record's copy of an instance kept; an item of a list
                    # of the function's own)
                if op.iterable.id in given_items:
                    seed(c, given_items[op.iterable.id])  # an item of a list passed in
                else:
                    poisoned.add(c)  # read out of a container
        for r in op.results:
            if (c := kind(r)) is None:
                continue
            if r.id in same:
                continue  # (a record's copy of an instance kept)
            if isinstance(op, n.GetItem) and op.obj.id in local:
                continue  # (one of the objects the function put in a list of its own)
            if isinstance(op, n.GetItem) and op.obj.id in given_items:
                seed(c, given_items[op.obj.id])
            elif isinstance(op, n.Unpack) and \
                    (src := _zipped_from(op, r, loop_of, defs, consts)) is not None and \
                    src.id in local:
                continue
            elif isinstance(op, n.Unpack) and \
                    (src := _zipped_from(op, r, loop_of, defs, consts)) is not None and \
                    src.id in given_items:
                seed(c, given_items[src.id])  # ``for i, p in enumerate(ps)``, ``zip(ps, xs)``
            elif isinstance(op, n.Call) and consts.get(op.fn.id) is c:
                made.add(c)
                if not _constructor(c, op, value_type, found):
                    poisoned.add(c)
            elif isinstance(op, n.Call) and consts.get(op.fn.id) is object.__new__ and \
                    op.args and consts.get(op.args[0].id) is c:
                made.add(c)
            elif not isinstance(op, (n.If, n.For, n.While, n.With)):
                poisoned.add(c)  # made elsewhere (a callee, a container read)
        if isinstance(op, n.SetItem) and op.obj.id in given_items and kind(op.value) or \
                _appended_to(op, defs, given_items) or _stored_in(op, defs, local):
            pass  # (a new item of such a list: its reads join every instance's fields)
        elif not _written_back(op, defs):
            _uses(op, kind, consts, poisoned, id(op) in records)
        if isinstance(op, n.SetAttr) and not _written_back(op, defs):
            c = kind(op.obj)
            if c is None and type_of(op.obj) is None:
                poisoned.update(made | {k for k, _ in found})  # it may be any of them
                return {}
            if c is not None:
                found.setdefault((c, op.name), []).append(value_type(op.value, op.name))
        _joins(op, kind, poisoned)
    for (c, name), ts in found.items():
        if any(name not in names for names in seeded.get(c, ())):
            ts.append(None)  # not an attribute of a given instance: read, it is the class's
    return {k: ts for k, ts in found.items() if k[0] in made and k[0] not in poisoned}


def _local_holders(fn: n.Function, defs: Mapping[int, n.Op],
                   reads: Mapping[int, list[n.Op]], type_of: Callable[[n.Value], Type],
                   consts: Mapping[int, Any]) -> set[int]:
    """The ids of the lists the function makes (a display, ``[]`` filled by ``append``, a
    comprehension) that keep what they hold in its sight: each is only read at an index,
    walked by a loop (by itself, or through ``zip``/``enumerate``/``reversed`` walked at
    once), measured, appended to or written at an index, never passed on, stored,
    returned, captured or rebound. An object read out of one is one the function put
    there, so its fields hold what the function wrote into them."""
    out: set[int] = set()
    for op in n.walk(fn.body):
        if not (isinstance(op, n.Build) and op.kind == "list" and not op.starred):
            continue
        xs = op.result
        if all(_in_sight(u, xs, defs, reads, type_of, consts) for u in reads.get(xs.id, [])):
            out.add(xs.id)
    return out


def _in_sight(use: n.Op, xs: n.Value, defs: Mapping[int, n.Op],
              reads: Mapping[int, list[n.Op]], type_of: Callable[[n.Value], Type],
              consts: Mapping[int, Any]) -> bool:
    """Whether ``use`` of the list ``xs`` keeps what it holds in the function's sight
    (:func:`_local_holders`)."""
    if isinstance(use, n.GetItem):
        # (a slice is a list holding the same objects: an item read out of it is one
        # read out of a container, whose fields are not known)
        return use.obj is xs and use.index is not xs and type_of(use.index) is not slice
    if isinstance(use, n.SetItem):
        # (at an index of unknown type, e.g. read back from a pullback's loop record: one
        # object, which no slice assignment could be given)
        value = type_of(use.value)
        return use.obj is xs and use.value is not xs and use.index is not xs and (
            type_of(use.index) is int or
            type_of(use.index) is None and instance_class(value) and
            not hasattr(value, "__iter__"))
    if isinstance(use, n.For):
        return use.iterable is xs and xs not in use.inits
    if isinstance(use, n.GetAttr):
        return use.obj is xs and use.name == "append" and all(
            isinstance(c, n.Call) and c.fn is use.result and len(c.args) == 1 and
            c.args[0] is not xs and not c.kwargs and not c.starred
            for c in reads.get(use.result.id, []))
    if isinstance(use, n.Call) and use.fn is not xs and not use.kwargs and \
            not use.starred:
        f = consts.get(use.fn.id)
        if f is len:
            return use.args == [xs]
        if f in (zip, enumerate, reversed) and all(
                isinstance(u, n.For) and u.iterable is use.results[0] and
                use.results[0] not in u.inits for u in reads.get(use.results[0].id, [])):
            return f is zip or use.args == [xs]
        # (a primitive that keeps nothing, ``getitem_adjoint(ps_bar, ps, i, g)`` of a
        # pullback differentiated again: what it returns holding an item is a call's
        # result, an object of unknown fields)
        return xs is not use.fn and _read_only(f)
    return False


def _stored_in(op: n.Op, defs: Mapping[int, n.Op], lists: set[int]) -> bool:
    """Whether ``op`` puts objects in one of ``lists`` (a display of them, ``xs[i] = p``,
    ``xs.append(p)``): they stay in the function's sight there."""
    if isinstance(op, n.Build):
        return op.result.id in lists
    if isinstance(op, n.SetItem):
        return op.obj.id in lists
    return _appended_to(op, defs, lists)


def _appended_to(op: n.Op, defs: Mapping[int, n.Op], lists: Mapping[int, Any]) -> bool:
    """Whether ``op`` is ``xs.append(v)`` for one of ``lists``."""
    if not isinstance(op, n.Call) or len(op.args) != 1 or op.kwargs or op.starred:
        return False
    m = defs.get(op.fn.id)
    return isinstance(m, n.GetAttr) and m.name == "append" and m.obj.id in lists


def instance_class(t: Any) -> bool:
    """Whether instances of ``t`` are objects whose fields this analysis follows (a user's
    class whose call makes an instance of itself, with a ``__dict__``)."""
    return isinstance(t, type) and _plain_class(t)


#: Calls whose result holds (or yields) the items of their first argument.
_SAME_ITEMS = (list, tuple, sorted, reversed)


def _zipped_from(op: n.Unpack, r: n.Value, loop_of: Mapping[int, n.For],
                 defs: Mapping[int, n.Op], consts: Mapping[int, Any]) -> n.Value | None:
    """The list whose item ``r`` is, where ``op`` unpacks the item of a loop over
    ``zip(xs, ys, ...)`` or ``enumerate(xs)`` (its second part), else ``None``."""
    loop = loop_of.get(op.value.id)
    if loop is None or op.star is not None:
        return None
    made = defs.get(loop.iterable.id)
    if not isinstance(made, n.Call) or made.kwargs or made.starred:
        return None
    fn, k = consts.get(made.fn.id), op.results.index(r)
    if fn is zip and len(made.args) == len(op.results):
        return made.args[k]
    if fn is enumerate and len(made.args) == 1 and len(op.results) == 2 and k == 1:
        return made.args[0]
    return None


def _plain_class(t: type) -> bool:
    """A user's class whose call makes an instance of itself, with a ``__dict__``."""
    return type(t) is type and t.__module__ != "builtins" and t.__new__ is object.__new__ \
        and not hasattr(t, "__slots__")


def _constructor(c: type, op: n.Call, type_of: Callable[[n.Value, str], Type],
                 found: dict[tuple[type, str], list[Type]]) -> bool:
    """Record the field types a dataclass constructor call gives; ``False`` when the call
    is not one whose fields are known (a custom ``__init__``, ``__post_init__``, ``*``)."""
    given = None if op.starred else dataclass_arguments(c, op.args, op.kwargs)
    if given is None:
        return False
    fields = [f for f in dataclasses.fields(c) if f.init]
    for f in fields:
        if f.name in given:
            t = type_of(given[f.name], f.name)
        elif f.default is not dataclasses.MISSING:
            t = type(f.default)
        elif f.default_factory is list or f.default_factory is dict:
            t = f.default_factory  # (called by the generated ``__init__``: a new one)
        else:
            t = None  # another default factory
        found.setdefault((c, f.name), []).append(t)
    return all(f.name in given or f.default is not dataclasses.MISSING or
               f.default_factory is not dataclasses.MISSING for f in fields)


def _written_back(op: n.Op, defs: Mapping[int, n.Op]) -> bool:
    """Whether ``op`` is ``xs[i] = p`` for ``p`` read as ``xs[i]``, or ``o.f = p`` for ``p``
    read as ``o.f`` (reverse mode's write-back, ``transforms/vjp_items.py``): the object
    goes back where it was, seen by no one new."""
    d = defs.get(op.value.id) if isinstance(op, (n.SetItem, n.SetAttr)) else None
    if isinstance(d, n.GetAttr):
        return isinstance(op, n.SetAttr) and d.obj is op.obj and d.name == op.name
    return isinstance(d, n.GetItem) and isinstance(op, n.SetItem) and d.obj is op.obj and \
        d.index is op.index


def _uses(op: n.Op, kind: Callable[[n.Value], type | None], consts: Mapping[int, Any],
          poisoned: set[type], record: bool = False) -> None:
    """Poison the classes of instances ``op`` may store away or hand to code that may
    write into them (a ``record``, pushing values onto a loop's record that its reverse
    loop alone unpacks, stores nothing away)."""
    if record:
        return
    if isinstance(op, n.MakeFunction):
        for v in free_uses(op.func.body):
            if (c := kind(v)) is not None:
                poisoned.add(c)  # captured: written wherever the function is called
        return
    for v in op.operands():
        c = kind(v)
        if c is None:
            continue
        if isinstance(op, n.GetAttr) or isinstance(op, n.SetAttr) and op.obj is v and \
                op.value is not v:
            continue
        if isinstance(op, (n.Yield, n.Return, n.If)) or \
                isinstance(op, (n.For, n.While, n.With)) and v in op.inits:
            continue
        if isinstance(op, n.Call) and op.fn is not v:
            f = consts.get(op.fn.id)
            if _read_only(f):
                continue
        poisoned.add(c)


def _read_only(f: Any) -> bool:
    try:
        if f in _READ_ONLY:
            return True
    except TypeError:
        return False
    from wengert.rules import registry  # the rule tables import this package's users

    rule = registry.lookup(f)
    return rule is not None and rule.pure and f not in (setattr, delattr)


def _joins(op: n.Op, kind: Callable[[n.Value], type | None], poisoned: set[type]) -> None:
    """Poison a class whose instance flows into a value of another type (an ``if`` or a
    loop joining it with something else): writes through that value go unseen."""
    pairs: list[tuple[n.Value, n.Value]] = []
    if isinstance(op, n.If):
        for region in (op.then, op.orelse):
            if region.ops and isinstance(region.terminator, n.Yield):
                pairs += list(zip(region.terminator.values, op.results))
    elif isinstance(op, (n.For, n.While, n.With)):
        ys = op.body.terminator.values if op.body.ops and \
            isinstance(op.body.terminator, n.Yield) else []
        carried = op.args if isinstance(op, n.While) else \
            op.carried_args if isinstance(op, n.For) else op.results
        pairs += list(zip(op.inits, op.results)) + list(zip(ys, op.results))
        pairs += list(zip(op.inits, carried))
    for src, dst in pairs:
        c = kind(src)
        if c is not None and kind(dst) is not c:
            poisoned.add(c)
