"""Adjoints of containers accumulated in place.

A pullback adds each read ``x[i]``'s adjoint into the adjoint of ``x`` with
``runtime.getitem_adjoint``, which returns a new container: the functional form keeps
every earlier adjoint value valid, which the transforms rely on, but it costs a copy
of the whole adjoint per read, so a loop over ``x`` is quadratic.

Just before code generation, this pass gives each such call whose previous adjoint is
dead afterwards the in-place variant, ``runtime.getitem_adjoint_owned``. Liveness proves
that the generated code never reads the old value again; what it cannot prove is that
no other value holds the same object (a rule's pullback may hand one adjoint to two
operands, a caller may keep what it passed). The variant checks that at run time with
the reference count, and copies as before when anything else holds the object. For that
check to mean "only the caller's dead local holds it", the previous adjoint must be a
named local of the generated code: the result of an earlier in-place update, of an
update of a zero adjoint, or a value a loop or branch carries. A function parameter, a
value read out of a tuple, or a captured value may be shared with code the liveness
here does not see, so those keep the copying form.

The IR this pass rewrites is only compiled, never differentiated again, so the variant
needs no rules of its own.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from wengert import runtime
from wengert.analysis.liveness import Liveness, liveness
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.objects import hashable
from wengert.transforms.cleanup import index_values
from wengert.transforms.inplace_loops import drop_made, hoist_entries, hoist_pops, list_of_one

#: Functional adjoint updates and their in-place variants.
IN_PLACE = {runtime.getitem_adjoint: runtime.getitem_adjoint_owned,
            runtime.entry_adjoint_of_array: runtime.entry_adjoint_of_array_owned,
            runtime.entry_adjoint_of_list: runtime.entry_adjoint_of_list_owned,
            runtime.float_pop_adjoint: runtime.float_pop_adjoint_owned,
            runtime.entry_write_adjoint: runtime.entry_write_adjoint_owned,
            runtime.entry_write_of_list: runtime.entry_write_of_list_owned,
            runtime.setitem_adjoint: runtime.setitem_adjoint_owned,
            runtime.pop_adjoint: runtime.pop_adjoint_owned,
            runtime.getattr_adjoint: runtime.getattr_adjoint_owned,
            runtime.setattr_adjoint: runtime.setattr_adjoint_owned}
#: Those returning a pair (the updated adjoint, a part), unpacked at once.
PAIRS = {runtime.setitem_adjoint, runtime.setitem_adjoint_owned, runtime.entry_write_adjoint,
         runtime.entry_write_adjoint_owned, runtime.entry_write_of_list,
         runtime.entry_write_of_list_owned, runtime.pop_adjoint,
         runtime.pop_adjoint_owned, runtime.float_pop_adjoint, runtime.float_pop_adjoint_owned,
         runtime.setattr_adjoint, runtime.setattr_adjoint_owned}

#: Those whose second part is taken out of the adjoint they update (a field's, a slot's).
_TAKING = {runtime.setattr_adjoint, runtime.setattr_adjoint_owned, runtime.setitem_adjoint,
           runtime.setitem_adjoint_owned, runtime.pop_adjoint, runtime.pop_adjoint_owned}


def update_in_place(fn: n.Function) -> None:
    """Rewrite ``fn`` (and the functions it defines) to update dead adjoints in place."""
    _function(fn)


def _function(fn: n.Function) -> None:
    live = liveness(fn)
    # A nested function reads what it captures whenever it runs, after any point that
    # liveness can name.
    captured = {v.id for op in n.walk(fn.body) if isinstance(op, n.MakeFunction)
                for v in free_uses(op.func.body)}
    consts: dict[int, object] = {}
    #: Values held only by a named local of this function when they are defined.
    owned: set[int] = set()
    #: Pairs whose first part is such a value once unpacked.
    pairs: set[int] = set()
    #: Pairs whose second part is a field's (an item's) adjoint taken out of an object's
    #: (a list's) (held by the object's adjoint no more: owned where nothing else held it,
    #: which the in-place variants check by its reference count).
    fields: set[int] = set()

    def region(r: n.Region) -> None:
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            if isinstance(op, n.Const):
                consts[op.result.id] = op.value
            elif isinstance(op, n.MakeFunction):
                _function(op.func)
            elif isinstance(op, n.Call) and consts.get(op.fn.id) is runtime.push:
                _append(op, r, k, fn)
                k += 1  # past the method read inserted before the call
            elif isinstance(op, n.Call) and consts.get(op.fn.id) is runtime.add_adjoint and \
                    (made := list_of_one(op.args[1], r, k)) is not None:
                k += _spread(op, made, r)
                continue
            elif isinstance(op, n.Call) and consts.get(op.fn.id) is runtime.add_adjoint:
                # The sum of two adjoints held by dead locals alone is one of them or a
                # new object: held by its own local alone (``p_bar = accumulate(p_bar,
                # t)`` between two in-place updates of an object's adjoint).
                if len(op.args) == 2 and not op.kwargs and not op.starred and all(
                        (a.id in owned or consts.get(a.id, 0) is None) and
                        a.id not in live.after(op) and a.id not in captured
                        for a in op.args) and op.args[0].id != op.args[1].id:
                    owned.add(op.result.id)
            elif isinstance(op, n.Call) and _rewrite(op, r, k, live):
                k += 1  # past the constant inserted before the call
            elif isinstance(op, n.For):
                # (``owned_array`` counts references itself: a value held by
                # anything but this dead local, a parameter's included, is copied.)
                def dead(v: n.Value, op: n.Op = op) -> bool:
                    return consts.get(v.id, 0) is None or \
                        v.id not in live.after(op) and v.id not in captured
                k += hoist_entries(op, r, k, dead)
                k += hoist_pops(op, r, k, dead)
            elif isinstance(op, n.Unpack) and op.value.id in pairs:
                owned.add(op.results[0].id)
                if op.value.id in fields and len(op.results) == 2:
                    owned.add(op.results[1].id)
            for a in n.region_args(op):
                owned.add(a.id)
            if isinstance(op, (n.If, n.For, n.While)):
                owned.update(v.id for v in op.results)
            if not isinstance(op, n.MakeFunction):
                for sub in op.regions():
                    region(sub)
            k += 1

    def _rewrite(op: n.Call, r: n.Region, k: int, live: Liveness) -> bool:
        fn_value = consts.get(op.fn.id)
        if not op.args or op.kwargs or op.starred or not hashable(fn_value):
            return False
        if fn_value not in IN_PLACE and fn_value not in IN_PLACE.values():
            return False
        prev = op.args[0]
        made = pairs if fn_value in PAIRS else owned
        if fn_value in _TAKING:
            fields.add(op.result.id)
        if consts.get(prev.id, 0) is None:  # a zero adjoint: the result is a fresh object
            made.add(op.result.id)
            return False
        if prev.id not in owned or prev.id in live.after(op) or prev.id in captured or \
                any(a.id == prev.id for a in op.args[1:]):
            return False
        made.add(op.result.id)
        if fn_value in IN_PLACE.values():
            return False
        const = n.Const(IN_PLACE[fn_value], [n.Value(hint=None)], loc=op.loc)  # type: ignore
        r.ops.insert(k, const)
        op.fn = const.result
        consts[const.result.id] = const.value
        return True

    region(fn.body)
    _nest_entries(fn)
    _field_entries(fn)
    _take_field_entries(fn)
    _take_nested_entries(fn)
    _pair_slices(fn)
    _scatter_items(fn)
    _scatter_slice_pairs(fn)
    _carried_fields(fn)
    _field_chains(fn)


def _nest_entries(fn: n.Function) -> None:
    """``getitem_adjoint_owned(p, x, i, entry_adjoint_of_list(None, row, j, g))`` (the
    reverse of reading ``x[i][j]``, a float of a list of lists of floats) as one call,
    ``nested_entry_adjoint_owned(p, x, i, row, j, g)``, which adds ``g`` into the row's
    adjoint itself where nothing else holds it; with ``getitem_adjoint``,
    ``nested_entry_adjoint`` (both lists made at once where ``p`` is zero)."""
    consts, defs, uses = index_values(fn)

    def called(op: n.Op | None, f: Any, nargs: int) -> bool:
        return _calls(op, consts, (f,), nargs)

    def region(r: n.Region) -> None:
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            for sub in op.regions():
                region(sub)
            owned = called(op, runtime.getitem_adjoint_owned, 4)
            if (owned or called(op, runtime.getitem_adjoint, 4)) and \
                    uses.get(op.args[3].id) == 1 and \
                    called(e := defs.get(op.args[3].id), runtime.entry_adjoint_of_list, 4) and \
                    consts.get(e.args[0].id, 0) is None:
                const = n.Const(runtime.nested_entry_adjoint_owned if owned else
                                runtime.nested_entry_adjoint, [n.Value(hint=None)], loc=op.loc)
                r.ops.insert(k, const)
                consts[const.result.id] = const.value
                op.fn = const.result
                op.args = [*op.args[:3], *e.args[1:]]
                dead.add(id(e))  # (read by nothing now)
                k += 1
            k += 1

    dead: set[int] = set()
    region(fn.body)
    _drop(fn, dead)


def _field_entries(fn: n.Function) -> None:
    """``getattr_adjoint_owned(p, obj, name, entry_adjoint_of_list(None, row, j, g))``
    (the reverse of reading ``obj.name[j]``, a float of a list field; or
    ``getitem_adjoint(None, row, j, g, size)`` where the list grows later) as one call,
    ``field_entry_adjoint_owned(p, obj, name, row, j, g[, size])``, which adds ``g`` into
    the field's adjoint itself where nothing else holds it."""
    consts, defs, uses = index_values(fn)

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
            if _calls(op, consts, (runtime.getattr_adjoint_owned,), 4) and \
                    uses.get(op.args[3].id) == 1 and \
                    (_calls(e := defs.get(op.args[3].id), consts,
                            (runtime.entry_adjoint_of_list,), 4) or
                     _calls(e, consts, (runtime.getitem_adjoint,), 5)) and \
                    consts.get(e.args[0].id, 0) is None:
                const = n.Const(runtime.field_entry_adjoint_owned, [n.Value(hint=None)],
                                loc=op.loc)
                r.ops.insert(r.ops.index(op), const)
                consts[const.result.id] = const.value
                op.fn = const.result
                op.args = [*op.args[:3], *e.args[1:]]
                dead.add(id(e))  # (read by nothing now)

    dead: set[int] = set()
    region(fn.body)
    _drop(fn, dead)


def _take_field_entries(fn: n.Function) -> None:
    """``p1, s = setattr_adjoint_owned(p, name); s2, g = setitem_adjoint_owned(s, j); ...;
    p3 = getattr_adjoint_owned(p2, obj, name, s2)`` (the reverse of ``obj.name[j] = v`` on
    a list field written back: the field's adjoint taken out, its item's, the field's put
    back; between them only other fields' adjoints added, ``p2`` from ``p1``) as one call,
    ``p1, g = field_entry_taken(p, obj, name, j)``, which takes the item out of the field's
    adjoint in place: no copy of the list per write (the locals ``s`` and ``s2`` would
    hold it, so the in-place variants could not see that nothing else does)."""
    consts, defs, uses = index_values(fn)
    users: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            users.setdefault(v.id, []).append(op)

    def only_user(v: n.Value) -> n.Op | None:
        found = users.get(v.id, [])
        return found[0] if len(found) == 1 and uses.get(v.id) == 1 else None

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
        for take in list(r.ops):
            if not _calls(take, consts, (runtime.setattr_adjoint_owned,), 2):
                continue
            k = r.ops.index(take)
            name = consts.get(take.args[1].id)
            if k + 1 >= len(r.ops) or not _unpacks(r.ops[k + 1], take, 2, uses) or \
                    type(name) is not str:
                continue
            first = r.ops[k + 1]
            p1, field = first.results  # type: ignore[attr-defined]
            item = only_user(field)
            if not _calls(item, consts, (runtime.setitem_adjoint_owned,), 2) or \
                    item not in r.ops or item.args[0] is not field:
                continue
            second = r.ops[r.ops.index(item) + 1] if item is not r.ops[-1] else None
            if second is None or not _unpacks(second, item, 2, uses):
                continue
            rest, g = second.results  # type: ignore[attr-defined]
            put = only_user(rest)
            if not _calls(put, consts, (runtime.getattr_adjoint_owned,), 4) or \
                    put not in r.ops or put.args[3] is not rest or \
                    consts.get(put.args[2].id) != name:
                continue
            # From ``p1`` to what ``put`` adds into, only other fields' adjoints added.
            chain, ok = p1, True
            while chain is not put.args[0] and ok:
                nxt = only_user(chain)
                ok = nxt is not None and nxt in r.ops and nxt.args[0] is chain and (
                    _calls(nxt, consts, (runtime.getattr_adjoint_owned,), 4) or
                    _calls(nxt, consts, (runtime.field_entry_adjoint_owned,), 6) or
                    _calls(nxt, consts, (runtime.field_entry_adjoint_owned,), 7)) and \
                    consts.get(nxt.args[2].id) not in (name, None)
                chain = nxt.result if ok else chain
            obj, j = put.args[1], item.args[1]
            # Everything the fused call reads exists where the field's adjoint was taken out.
            made = {res.id for o in r.ops[k:r.ops.index(put)] for res in o.results}
            if not ok or obj.id in made or j.id in made:
                continue
            const = n.Const(runtime.field_entry_taken, [n.Value(hint=None)], loc=take.loc)
            r.ops.insert(k, const)
            consts[const.result.id] = const.value
            take.fn = const.result
            take.args = [take.args[0], obj, take.args[1], j]
            first.results = [p1, g]  # type: ignore[attr-defined]
            defs[g.id] = first
            replace_uses(fn, {put.result.id: put.args[0]})
            for gone in (item, second, put):
                r.ops.remove(gone)

    region(fn.body)


def _take_nested_entries(fn: n.Function) -> None:
    """``p2, s = setitem_adjoint_owned(p, i); s2, g = entry_write_of_list(nonzero(s, row),
    j); ...; p3 = getitem_adjoint_owned(p2, x, i, s2)`` (the reverse of ``x[i][j] = v`` on
    a row of a table, its slot written back: the slot's adjoint taken out, its entry's
    taken, the slot's put back) as one call, ``p3, g = nested_entry_taken(p, x, i, row,
    j)``, which takes the entry out of the row's adjoint in place: no copy of the row per
    write."""
    consts, defs, uses = index_values(fn)

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
        k = 0
        while k < len(r.ops):
            fused = _take_at(r, k, consts, defs, uses)
            if fused is not None:
                dead.update(fused)
            k += 1

    dead: set[int] = set()
    region(fn.body)
    _drop(fn, dead)


def _take_at(r: n.Region, k: int, consts: dict[int, object], defs: dict[int, n.Op],
             uses: dict[int, int]) -> set[int] | None:
    """Fuse the three calls :func:`_take_nested_entries` names starting at ``r.ops[k]`` (each
    pair of results unpacked by the op after it), in place; the ids of the ops left unused,
    or ``None``."""
    take = r.ops[k]
    if not _calls(take, consts, (runtime.setitem_adjoint_owned,), 2) or \
            k + 1 >= len(r.ops) or not _unpacks(r.ops[k + 1], take, 2, uses):
        return None
    first = r.ops[k + 1]
    outer, slot = first.results  # type: ignore[attr-defined]
    if uses.get(slot.id) != 1 or uses.get(outer.id) != 1:
        return None
    later = r.ops[k + 2:]
    zero = next((o for o in later if slot in o.operands()), None)
    if not _calls(zero, consts, (runtime.nonzero,), 2) or zero.args[0] is not slot or \
            uses.get(zero.result.id) != 1:
        return None
    row = zero.args[1]
    write = next((o for o in later if zero.result in o.operands()), None)
    if not _calls(write, consts, (runtime.entry_write_of_list,
                                  runtime.entry_write_of_list_owned), 2) or \
            write.args[0] is not zero.result:
        return None
    second = later[later.index(write) + 1] if later.index(write) + 1 < len(later) else None
    if second is None or not _unpacks(second, write, 2, uses):
        return None
    rest, g = second.results  # type: ignore[attr-defined]
    put = next((o for o in later if outer in o.operands()), None)
    if not _calls(put, consts, (runtime.getitem_adjoint_owned,), 4) or \
            put.args[0] is not outer or put.args[2] is not take.args[1] or \
            uses.get(rest.id) != 1:
        return None
    # The slot's adjoint put back as it was left, or with a float added at an entry (the
    # reverse of ``x[i][j] += v``'s read of the old entry).
    added = defs.get(put.args[3].id) if put.args[3] is not rest else None
    if added is not None and not (
            _calls(added, consts, (runtime.entry_adjoint_of_list,), 4) and
            added.args[0] is rest and uses.get(added.result.id) == 1):
        return None
    x, j = put.args[1], write.args[1]
    # Everything the fused call reads exists where the slot was taken out.
    made = {res.id for o in r.ops[k:r.ops.index(put)] for res in o.results}
    if any(v.id in made for v in (x, row, j)):
        return None
    const = n.Const(runtime.nested_entry_taken, [n.Value(hint=None)], loc=take.loc)
    r.ops.insert(k, const)
    consts[const.result.id] = const.value
    take.fn = const.result
    take.args = [take.args[0], x, take.args[1], row, j]
    dropped = {id(zero), id(write), id(second)}
    if added is None:
        first.results = [put.result, g]  # type: ignore[attr-defined]
        defs[put.result.id] = first
        dropped.add(id(put))
    else:
        mid = n.Value(outer.hint)
        first.results = [mid, g]  # type: ignore[attr-defined]
        defs[mid.id] = first
        adds = n.Const(runtime.nested_entry_adjoint_owned, [n.Value(hint=None)], loc=put.loc)
        r.ops.insert(r.ops.index(put), adds)
        consts[adds.result.id] = adds.value
        put.fn = adds.result
        put.args = [mid, x, put.args[2], *added.args[1:]]
        dropped.add(id(added))
    defs[g.id] = first
    return dropped


def _unpacks(op: n.Op, call: n.Op, count: int, uses: dict[int, int]) -> bool:
    """Whether ``op`` unpacks the one result of ``call`` (used by nothing else) into
    ``count`` values."""
    return isinstance(op, n.Unpack) and op.value is call.results[0] and op.star is None and \
        len(op.results) == count and uses.get(op.value.id) == 1


def _calls(op: n.Op | None, consts: dict[int, object], fs: tuple[Any, ...], nargs: int
           ) -> bool:
    """Whether ``op`` calls one of ``fs`` with ``nargs`` plain positional arguments."""
    return isinstance(op, n.Call) and any(consts.get(op.fn.id) is f for f in fs) and \
        len(op.args) == nargs and not op.kwargs and not op.starred


def _pair_slices(fn: n.Function) -> None:
    """``getitem_adjoint_owned(getitem_adjoint(None, x, s2, g[n:]), x, s1, g[:n])`` (the
    reverse of ``x[s1] + x[s2]`` for a list ``x``: the concatenation's adjoint split, each
    part scattered) as one call, ``slice_pair_adjoint(x, s1, s2, g)``, which places both
    parts in one new list where the slices are apart (``row[:j] + row[j + 1:]``) and
    measures ``n`` itself: the forward need not save it."""
    consts, defs, uses = index_values(fn)

    def called(op: n.Op | None, fs: tuple[Any, ...], nargs: int) -> bool:
        return _calls(op, consts, fs, nargs)

    def part(v: n.Value) -> tuple[n.Value, n.Value, bool] | None:
        """``(g, n, first)`` for ``v = g[:n]`` (first) or ``v = g[n:]``, used once."""
        get = defs.get(v.id)
        if uses.get(v.id) != 1 or not isinstance(get, n.GetItem):
            return None
        cut = defs.get(get.index.id)
        if not isinstance(cut, n.BuildSlice) or cut.step is not None:
            return None
        if cut.lower is None and cut.upper is not None:
            return get.obj, cut.upper, True
        if cut.upper is None and cut.lower is not None:
            return get.obj, cut.lower, False
        return None

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
            if not called(op, (runtime.getitem_adjoint, runtime.getitem_adjoint_owned), 4):
                continue
            before = defs.get(op.args[0].id)
            if uses.get(op.args[0].id) != 1 or \
                    not called(before, (runtime.getitem_adjoint,), 4) or \
                    consts.get(before.args[0].id, 0) is not None or \
                    before.args[1] is not op.args[1]:
                continue
            mine, theirs = part(op.args[3]), part(before.args[3])
            if mine is None or theirs is None or mine[0] is not theirs[0] or \
                    mine[1] is not theirs[1] or mine[2] == theirs[2]:
                continue
            first, second = (op.args[2], before.args[2]) if mine[2] else \
                (before.args[2], op.args[2])
            const = n.Const(runtime.slice_pair_adjoint, [n.Value(hint=None)], loc=op.loc)
            new_ops.append((r, op, const))
            # The split parts and the first scatter are read by nothing now.
            gets = [defs[op.args[3].id], defs[before.args[3].id]]
            dead.update(id(d) for d in (before, *gets))
            dead.update(id(defs[g.index.id]) for g in gets if uses.get(g.index.id) == 1)
            g = mine[0]
            zero = defs.get(g.id)
            if uses.get(g.id) == 2 and _calls(zero, consts, (runtime.nonzero,), 2):
                # (A zero adjoint stays ``None``: the fused call gives ``None`` for it.)
                dead.add(id(zero))
                g = zero.args[0]
            op.args = [op.args[1], first, second, g]

    new_ops: list[tuple[n.Region, n.Call, n.Const]] = []
    dead: set[int] = set()
    region(fn.body)
    for r, op, const in new_ops:
        r.ops.insert(r.ops.index(op), const)
        op.fn = const.result
    _drop(fn, dead)


def _scatter_items(fn: n.Function) -> None:
    """``getitem_adjoint_owned(p, x, s, reversed_adjoint(items, seen))`` (the reverse of a
    loop over ``seen = x[s]``, a slice of a list: its items' adjoints, collected last first,
    reversed and added into ``x``'s adjoint) as one call, ``items_adjoint_owned(p, x, s,
    items, seen)``, which adds each item's adjoint at its place, into the lists ``p`` holds
    where nothing else holds them (``for row in m[1:]``: no new list per row)."""
    consts, defs, uses = index_values(fn)
    none = [v for v, c in consts.items() if c is None]
    dead: set[int] = set()
    new_ops: list[tuple[n.Region, n.Call, n.Const]] = []

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
            owned = _calls(op, consts, (runtime.getitem_adjoint_owned,), 4)
            if not owned and not (_calls(op, consts, (runtime.getitem_adjoint,), 4) and
                                  op.args[0].id in none):
                continue
            items = defs.get(op.args[3].id)
            if uses.get(op.args[3].id) != 1 or \
                    not _calls(items, consts, (runtime.reversed_adjoint,), 2):
                continue
            const = n.Const(runtime.items_adjoint_owned, [n.Value(hint=None)], loc=op.loc)
            new_ops.append((r, op, const))
            dead.add(id(items))
            op.args = [*op.args[:3], *items.args]

    region(fn.body)
    for r, op, const in new_ops:
        r.ops.insert(r.ops.index(op), const)
        op.fn = const.result
    _drop(fn, dead)


#: Calls the slices of :func:`_scatter_slice_pairs` may be computed by (moved out of the loop).
_PURE_ARITHMETIC = frozenset({operator.add, operator.sub, operator.neg, operator.mul,
                              operator.floordiv, operator.mod, len})


def _scatter_slice_pairs(fn: n.Function) -> None:
    """The reverse loop of ``ys = [row[s1] + row[s2] for row in x[s]]`` (its rows' adjoints
    popped off ``ys``'s, split by ``slice_pair_adjoint``, collected and added into ``x``'s
    by ``items_adjoint_owned``) as one call, ``slice_pairs_adjoint(p, x, s, seen, s1, s2,
    g)``, which adds each popped adjoint's parts into the row's adjoint in place (a
    minor's rows in a determinant): no list per row, no loop of calls. Only where the
    forward loop walked all of ``seen`` (no ``break``) and nothing else reads the rest of
    ``ys``'s adjoint; ``s1`` and ``s2`` are computed before the loop."""
    consts, defs, uses = index_values(fn)
    forward = {r.id: f for _, record, _, unpack in fn.records
               for r, f in zip(unpack.results, record.items)}
    walked = {stack.result.id: iterable for _, iterable, stack, _, kind in fn.item_loops
              if kind is list}
    fused: list[tuple[n.Region, n.Call, list[n.Op], tuple[n.Value, ...], list[n.Op]]] = []

    def region(r: n.Region) -> None:
        for op in r.ops:
            for sub in op.regions():
                region(sub)
            if _calls(op, consts, (runtime.items_adjoint_owned,), 5):
                found = _slice_pair_loop(op, r, consts, defs, uses)
                seen = op.args[4]
                if found is not None and walked.get(forward.get(found[0].id, found[0]).id) \
                        is forward.get(seen.id, seen):
                    fused.append((r, op, *found[1:]))

    region(fn.body)
    for r, op, hoisted, (s1, s2, g0), gone in fused:
        const = n.Const(runtime.slice_pairs_adjoint, [n.Value(hint=None)], loc=op.loc)
        at = r.ops.index(gone[-1])
        for o in gone:
            r.ops.remove(o)
        r.ops[at - len(gone) + 1:at - len(gone) + 1] = hoisted
        r.ops.insert(r.ops.index(op), const)
        op.fn = const.result
        op.args = [*op.args[:3], op.args[4], s1, s2, g0]


def _slice_pair_loop(op: n.Call, r: n.Region, consts: dict[int, object],
                     defs: dict[int, n.Op], uses: dict[int, int]
                     ) -> tuple[n.Value, list[n.Op], tuple[n.Value, ...], list[n.Op]] | None:
    """For ``items_adjoint_owned(p, x, s, items, seen)`` in ``r``, where ``items`` is
    collected by a reverse loop of :func:`_scatter_slice_pairs`' form: the records the
    loop walks, the ops computing its slices (to go before it), ``(s1, s2, the popped
    adjoint before the loop)``, and the ops of ``r`` to drop (the loop last)."""
    loop = defs.get(op.args[3].id)
    if not isinstance(loop, n.For) or loop not in r.ops or loop.exit_flags or \
            any(uses.get(v.id) for v in loop.results if v is not op.args[3]):
        return None
    k = loop.results.index(op.args[3])
    made, rev = defs.get(loop.inits[k].id), defs.get(loop.iterable.id)
    if not isinstance(made, n.Build) or made.kind != "list" or made.items or \
            uses.get(made.result.id) != 1 or made not in r.ops or \
            not _calls(rev, consts, (reversed,), 1) or uses.get(rev.result.id) != 1 or \
            rev not in r.ops:
        return None
    body = loop.body
    rec, args, ys = body.args[0], body.args[1:], body.terminator.values
    items = args[k]
    local = {res.id: o for o in body.ops for res in o.results}
    append = next((o for o in body.ops if isinstance(o, n.GetAttr) and o.obj is items), None)
    push = next((o for o in body.ops if isinstance(o, n.Call) and append is not None and
                 o.fn is append.result), None)
    if append is None or push is None or ys[k] is not items or uses.get(items.id) != 2 or \
            len(push.args) != 1 or push.kwargs or push.starred:
        return None
    pair = local.get(push.args[0].id)
    if not _calls(pair, consts, (runtime.slice_pair_adjoint,), 4) or \
            uses.get(push.args[0].id) != 1:
        return None
    row, s1, s2, g = pair.args
    taken = local.get(g.id)
    popped = local.get(taken.value.id) if isinstance(taken, n.Unpack) else None
    if not _calls(popped, consts, (runtime.pop_adjoint, runtime.pop_adjoint_owned), 1) or \
            len(taken.results) != 2 or taken.results[1] is not g or uses.get(g.id) != 1 or \
            popped.args[0] not in args or uses.get(popped.args[0].id) != 1:
        return None
    c = args.index(popped.args[0])
    if ys[c] is not taken.results[0] or uses.get(taken.results[0].id) != 1:
        return None
    unpack = local.get(row.id)
    if row is not rec and not (isinstance(unpack, n.Unpack) and unpack.value is rec):
        return None
    # The slices: computed from values outside the loop, by pure calls.
    hoisted: list[n.Op] = []
    needed = [s1, s2]
    while needed:
        v = needed.pop()
        d = local.get(v.id)
        if d is None:
            if v in body.args:
                return None
            continue
        if d in hoisted:
            continue
        if not isinstance(d, (n.Const, n.BuildSlice)) and not (
                isinstance(d, n.Call) and not d.kwargs and not d.starred and
                consts.get(d.fn.id) in _PURE_ARITHMETIC):
            return None
        hoisted.append(d)
        needed += d.operands()
    kept = {id(o) for o in (append, push, pair, taken, popped, unpack, *hoisted)}
    if any(id(o) not in kept and not isinstance(o, (n.Const, n.Yield)) for o in body.ops):
        return None  # (anything else the body does stays a loop)
    hoisted = [o for o in body.ops if o in hoisted]  # (in their order)
    return rev.args[0], hoisted, (s1, s2, loop.inits[c]), [made, rev, loop]


def _carried_fields(fn: n.Function) -> None:
    """A loop carrying the adjoint of an object that each iteration makes anew (``p =
    Particle(p.x + dt * v, v)``) carries its fields' adjoints instead: where the body reads
    the carried adjoint only as ``field_adjoint(a, 'x')`` (the constructor's reverse) and
    yields ``getattr_adjoint_owned(getattr_adjoint(None, p, 'x', gx), p, 'v', gv)`` (the
    reverse of the previous object's field reads), and the loop's result is read only as
    fields, the loop carries ``gx`` and ``gv`` themselves: no adjoint object made and taken
    apart per iteration, and no call."""
    consts, defs, _ = index_values(fn)
    users: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        vals = op.operands()
        if isinstance(op, n.MakeFunction):
            vals = vals + free_uses(op.func.body)
        for v in vals:
            users.setdefault(v.id, []).append(op)

    def field_reads(v: n.Value) -> list[tuple[n.Call, str]] | None:
        """``field_adjoint(v, name)`` calls, if that is all that reads ``v``."""
        out = []
        for op in users.get(v.id, []):
            if not _calls(op, consts, (runtime.field_adjoint,), 2) or \
                    op.args[0] is not v or type(consts.get(op.args[1].id)) is not str:
                return None
            out.append((op, consts[op.args[1].id]))
        return out  # type: ignore[return-value]

    def chain(v: n.Value) -> tuple[dict[str, n.Value], list[n.Op]] | None:
        """The fields' adjoints of ``v``, a chain of ``getattr_adjoint`` calls of distinct
        names on one object from zero, each link read by the next alone."""
        parts: dict[str, n.Value] = {}
        ops: list[n.Op] = []
        obj = None
        while consts.get(v.id, 0) is not None:
            d = defs.get(v.id)
            if not _calls(d, consts, (runtime.getattr_adjoint, runtime.getattr_adjoint_owned),
                          4) or (ops and len(users.get(v.id, [])) != 1):
                return None
            name = consts.get(d.args[2].id)
            if type(name) is not str or name in parts or \
                    obj is not None and d.args[1] is not obj:
                return None
            obj = d.args[1]
            parts[name] = d.args[3]
            ops.append(d)
            v = d.args[0]
        return parts, ops

    for loop in [op for op in n.walk(fn.body) if isinstance(op, n.For)]:
        if loop.exit_flags:
            continue
        region = next((r for op in [None, *n.walk(fn.body)]
                       for r in ([fn.body] if op is None else op.regions())
                       if loop in r.ops), None)
        if region is None:
            continue
        j = 0
        while j < len(loop.carried_args):
            if _scalarise(loop, j, region, consts, users, field_reads, chain):
                continue  # (the carried values shifted down: look at ``j`` again)
            j += 1


def _field_chains(fn: n.Function) -> None:
    """``getattr_adjoint_owned(getattr_adjoint(None, b, 'm', gm), b, 'v', gv)`` (the reverse
    of reading several fields of one object: one adjoint object made and added into per
    read) as one call, ``fields_adjoint(b, ('m', 'v'), gm, gv)``."""
    consts, defs, uses = index_values(fn)
    getters = (runtime.getattr_adjoint, runtime.getattr_adjoint_owned)
    inner: set[int] = set()  # links of a chain read by the next link alone
    for op in n.walk(fn.body):
        if _calls(op, consts, getters, 4) and uses.get(op.args[0].id) == 1 and \
                _calls(defs.get(op.args[0].id), consts, getters, 4):
            inner.add(op.args[0].id)
    dead: set[int] = set()
    for r in [fn.body, *(sub for op in n.walk(fn.body) for sub in op.regions())]:
        for op in list(r.ops):
            if not _calls(op, consts, getters, 4) or op.result.id in inner:
                continue
            links = [op]
            while links[-1].args[0].id in inner:
                links.append(defs[links[-1].args[0].id])  # type: ignore[arg-type]
            links.reverse()
            names = [consts.get(link.args[2].id) for link in links]
            first = links[0]
            if len(links) < 2 or consts.get(first.args[0].id, 0) is not None or \
                    any(type(k) is not str for k in names) or len(set(names)) != len(names) \
                    or any(link.args[1] is not first.args[1] for link in links) or \
                    any(link not in r.ops for link in links):
                continue
            const = n.Const(runtime.fields_adjoint, [n.Value(hint=None)], loc=op.loc)
            keys = n.Const(tuple(names), [n.Value(hint=None)], loc=op.loc)
            r.ops[r.ops.index(op):r.ops.index(op)] = [const, keys]
            op.fn = const.result
            op.args = [first.args[1], keys.result, *(link.args[3] for link in links)]
            dead.update(id(link) for link in links[:-1])
    _drop(fn, dead)


def _scalarise(loop: n.For, j: int, region: n.Region, consts: dict[int, object],
               users: dict[int, list[n.Op]],
               field_reads: Callable[[n.Value], list[tuple[n.Call, str]] | None],
               chain: Callable[[n.Value], tuple[dict[str, n.Value], list[n.Op]] | None]
               ) -> bool:
    """:func:`_carried_fields` for the ``j``-th value ``loop`` carries; whether it was."""
    body, term = loop.body, loop.body.terminator
    a, init, res = loop.carried_args[j], loop.inits[j], loop.results[j]
    y = term.values[j]  # type: ignore[attr-defined]
    reads_a, reads_r = field_reads(a), field_reads(res)
    made = chain(y)
    if not reads_a or reads_r is None or made is None or users.get(y.id) != [term] or \
            any(o not in body.ops for o in made[1]) or \
            any(o not in body.ops for o, _ in reads_a) or \
            any(o not in region.ops for o, _ in reads_r) or \
            sum(v is init for v in loop.inits) != 1:
        return False
    parts, links = made
    names = list(dict.fromkeys([*(k for _, k in reads_a), *(k for _, k in reads_r)]))
    at = region.ops.index(loop)
    before: list[n.Op] = []
    start = chain(init) if users.get(init.id) == [loop] else None
    if consts.get(init.id, 0) is None:
        start = ({}, [])

    def none(ops: list[n.Op]) -> n.Value:
        c = n.Const(None, [n.Value()], loc=loop.loc)
        ops.append(c)
        return c.result

    inits: list[n.Value] = []
    for name in names:
        if start is not None:
            inits.append(start[0][name] if name in start[0] else none(before))
        else:
            c = n.Const(name, [n.Value()], loc=loop.loc)
            f = n.Const(runtime.field_adjoint, [n.Value()], loc=loop.loc)
            call = n.Call(f.result, [init, c.result], [], [n.Value()], loc=loop.loc)
            before += [c, f, call]
            inits.append(call.result)
    hint = a.hint[:-4] if a.hint and a.hint.endswith("_bar") else None
    args = [n.Value(f"{hint}_{k}_bar" if hint else None) for k in names]
    results = [n.Value(f"{hint}_{k}_bar" if hint else None) for k in names]
    tail: list[n.Op] = []
    yields = [parts[k] if k in parts else none(tail) for k in names]
    # The carried object's adjoint out, its fields' in.
    mapping: dict[int, n.Value] = {}
    for op, k in reads_a:
        mapping[op.result.id] = args[names.index(k)]
    for op, k in reads_r:
        mapping[op.result.id] = results[names.index(k)]
    dead = {id(o) for o, _ in reads_a} | {id(o) for o, _ in reads_r} | \
        {id(o) for o in links}
    body.ops = [o for o in body.ops if id(o) not in dead]
    body.ops[-1:-1] = tail
    region.ops = [o for o in region.ops if id(o) not in dead]
    if start is not None and start[1]:
        gone = {id(o) for o in start[1]}
        region.ops = [o for o in region.ops if id(o) not in gone]
    at = region.ops.index(loop)
    region.ops[at:at] = before
    k = 1 + j  # (body.args: the item first)
    body.args[k:k + 1] = args
    loop.inits[j:j + 1] = inits
    loop.results[j:j + 1] = results
    term.values[j:j + 1] = yields  # type: ignore[attr-defined]
    for region_ in [body, region]:
        substitute(region_, mapping)
    for old, new in mapping.items():
        users[new.id] = users.pop(old, [])
    return True


def _drop(fn: n.Function, dead: set[int]) -> None:
    """Remove the ops whose ``id`` is in ``dead`` (fused into another) from ``fn``."""
    if dead:
        for r in [fn.body, *(sub for op in n.walk(fn.body) for sub in op.regions())]:
            r.ops = [op for op in r.ops if id(op) not in dead]


def _append(push: n.Call, r: n.Region, k: int, fn: n.Function) -> None:
    """``items = push(items, g)`` (at ``k`` in ``r``) as ``items.append(g)``: ``push``
    returns the list it appends to, so its result is that list, and a call fewer per item
    runs."""
    items, g = push.args
    method = n.GetAttr(items, "append", [n.Value()], loc=push.loc)
    r.ops.insert(k, method)
    replace_uses(fn, {push.result.id: items})
    push.fn, push.args, push.results = method.result, [g], [n.Value()]


def _spread(op: n.Call, made: list[n.Op], r: n.Region) -> int:
    """``add_adjoint(a, [g] * len(xs))`` (a sum's adjoint added into the list's) as
    ``spread_adjoint(a, g, len(xs))``: no list of ``g`` made and walked. Returns how far
    the op moved back in ``r`` (the ops making the list dropped, where nothing else reads
    them), plus one for the constant inserted before it."""
    fn = n.Const(runtime.spread_adjoint, [n.Value()], loc=op.loc)
    mul, display = made[0], made[1]
    g = display.items[0]  # type: ignore[attr-defined]
    op.fn, op.args = fn.result, [op.args[0], g, mul.args[1]]  # type: ignore[attr-defined]
    r.ops.insert(r.ops.index(op), fn)
    return 1 - drop_made(r, made[:2])


