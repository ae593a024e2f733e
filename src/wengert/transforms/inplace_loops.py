"""Adjoints a reverse loop carries, updated in place by the loop itself: a carried list or
array adjoint that the body only reads and writes at entries becomes an array (or list) the
loop owns, its entries updated in place (``x_bar[i] += g``), and a list adjoint the body
pops a float off per iteration a list popped in place (:func:`hoist_entries`,
:func:`hoist_pops`). Part of :mod:`wengert.transforms.inplace`, which calls them on every
loop of generated code."""

from __future__ import annotations

import operator
from collections.abc import Callable

from wengert import runtime
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses
from wengert.objects import hashable
from wengert.transforms.cleanup import keep_slots


def hoist_entries(loop: n.For, r: n.Region, k: int, dead: Callable[[n.Value], bool]) -> int:
    """Make each adjoint ``loop`` carries that its body only reads and writes at entries of
    one float64 array (a chain of :data:`ENTRY_LINKS` from the carried value to the yielded
    one) an array the loop owns: ``x_bar = owned_array(x_bar, x)`` before the loop
    (``dead``: nothing reads the old adjoint after it), ``x_bar[i] += g`` and ``v_bar =
    y_bar[i]; y_bar[i] = 0.0`` in the body, with no call and no check per entry. Returns
    how many ops went before ``loop`` in ``r`` (at ``k``)."""
    body = loop.body
    term = body.terminator
    inside = {v.id for v in body.args} | {res.id for op in n.walk(body) for res in op.results}
    consts, uses = _index_body(body)
    inserted = 0
    for j, (a, init) in enumerate(zip(loop.carried_args, loop.inits)):
        chain = _entry_chain(a, j, term, body, consts, uses, inside)
        if not chain or not dead(init) or sum(v is init for v in loop.inits) != 1:
            continue
        like = next((link.args[1] for link in chain if consts[link.fn.id] in
                     (*_ENTRY_READS, runtime.nonzero)), init)
        lists = any(consts[link.fn.id] in (runtime.entry_adjoint_of_list,
                                           runtime.entry_write_of_list) for link in chain)
        own = n.Const(runtime.owned_float_list if lists else runtime.owned_array, [n.Value()],
                      loc=loop.loc)
        call = n.Call(own.result, [init, like], [], [n.Value(init.hint)], loc=loop.loc)
        r.ops[k + inserted:k + inserted] = [own, call]
        inserted += 2
        loop.inits[j] = call.result
        for link in chain:
            at = body.ops.index(link)
            body.ops[at:at + 1] = _in_place(link, consts[link.fn.id], a, uses)
            if consts[link.fn.id] in _ENTRY_WRITES:
                unpack = uses[link.result.id][0]
                body.ops.remove(unpack)  # the unpacking of the pair
                _drop_nonzero(unpack.results[1], body, uses, consts)  # type: ignore
        term.values[j] = a
    return inserted


def _index_body(body: n.Region) -> tuple[dict[int, object], dict[int, list[n.Op]]]:
    """The constants of a loop body, and the ops reading each value (nested functions'
    reads included)."""
    consts = {op.result.id: op.value for op in n.walk(body) if isinstance(op, n.Const)}
    uses: dict[int, list[n.Op]] = {}
    for op in n.walk(body):
        vals = op.operands()
        if isinstance(op, n.MakeFunction):
            vals = vals + free_uses(op.func.body)
        for v in vals:
            uses.setdefault(v.id, []).append(op)
    return consts, uses


def hoist_pops(loop: n.For, r: n.Region, k: int, dead: Callable[[n.Value], bool]) -> int:
    """Make each adjoint of a list of floats that ``loop`` carries and its body only pops
    from, once per iteration (the reverse of a loop appending to the list), a list the loop
    owns: ``xs_bar = owned_float_pops(xs_bar)`` before the loop, ``v_bar =
    pop_float(xs_bar)`` in the body, with no pair made and no check per item. Returns how
    many ops went before ``loop`` in ``r`` (at ``k``)."""
    body = loop.body
    term = body.terminator
    consts, uses = _index_body(body)
    inserted = 0
    filled: list[tuple[int, list[n.Op]]] = []
    for j, (a, init) in enumerate(zip(loop.carried_args, loop.inits)):
        us = uses.get(a.id, [])
        if len(us) != 1 or not isinstance(us[0], n.Call) or us[0] not in body.ops or \
                consts.get(us[0].fn.id) is not runtime.float_pop_adjoint or \
                us[0].args != [a] or us[0].kwargs or us[0].starred:
            continue
        pop = us[0]
        pair = uses.get(pop.result.id, [])
        if len(pair) != 1 or not isinstance(pair[0], n.Unpack) or pair[0] not in body.ops \
                or len(pair[0].results) != 2:
            continue
        unpack = pair[0]
        rest = unpack.results[0]
        if uses.get(rest.id) != [term] or \
                [i for i, v in enumerate(term.values) if v is rest] != [j] or \
                not dead(init) or sum(v is init for v in loop.inits) != 1:  # type: ignore
            continue
        term.values[j] = a  # type: ignore[attr-defined]
        made = list_of_one(init, r, k) if dead(loop.results[j]) else None
        if made is not None:
            # ``[g] * len(xs)`` (the adjoint of a sum), popped and then dropped: every
            # entry popped is ``g`` (made a number once, before the loop).
            _drop_nonzero(unpack.results[1], body, uses, consts)
            body.ops.remove(pop)
            body.ops.remove(unpack)
            fill = _nonzero(made[1].items[0], loop.loc)  # type: ignore[attr-defined]
            r.ops[k + inserted:k + inserted] = fill
            inserted += len(fill)
            substitute(body, {unpack.results[1].id: fill[-1].result})
            filled.append((j, made))
            continue
        if dead(loop.results[j]):
            # What is left of the list after the loop is dropped: the loop pops through
            # the list's bound ``pop``, made once (no check and no lookup per entry).
            own = n.Const(runtime.float_pops, [n.Value()], loc=loop.loc)
            call = n.Call(own.result, [init], [], [n.Value(init.hint and f"{init.hint}_pop")],
                          loc=loop.loc)
            r.ops[k + inserted:k + inserted] = [own, call]
            inserted += 2
            at = body.ops.index(pop)
            body.ops[at:at + 1] = [n.Call(call.result, [], [], [unpack.results[1]],
                                          loc=pop.loc)]
            body.ops.remove(unpack)
            _drop_nonzero(unpack.results[1], body, uses, consts)
            filled.append((j, []))
            continue
        own = n.Const(runtime.owned_float_pops, [n.Value()], loc=loop.loc)
        call = n.Call(own.result, [init], [], [n.Value(init.hint)], loc=loop.loc)
        r.ops[k + inserted:k + inserted] = [own, call]
        inserted += 2
        loop.inits[j] = call.result
        at = body.ops.index(pop)
        body.ops[at:at + 1] = _pop_float(a, unpack.results[1], pop.loc)
        body.ops.remove(unpack)
        _drop_nonzero(unpack.results[1], body, uses, consts)
    if filled:
        keep_slots(loop, [k for k in range(len(loop.results)) if k not in dict(filled)])
        for _, made in filled:
            inserted -= drop_made(r, made)
    return inserted


def _nonzero(g: n.Value, loc: object) -> list[n.Op]:
    """``nonzero(g, 0.0)``: an adjoint that may be ``None`` as a number."""
    fn = n.Const(runtime.nonzero, [n.Value()], loc=loc)  # type: ignore[arg-type]
    zero = n.Const(0.0, [n.Value()], loc=loc)  # type: ignore[arg-type]
    return [fn, zero, n.Call(fn.result, [g, zero.result], [], [n.Value()],
                             loc=loc)]  # type: ignore[arg-type]


def drop_made(r: n.Region, made: list[n.Op]) -> int:
    """Remove the ops of ``made`` (each the only reader of the next one's result) from
    ``r`` while nothing reads their results; how many were removed."""
    dropped = 0
    for op in made:
        res = op.results[0]
        if any(v is res for o in n.walk(r) for v in o.operands()):
            break
        r.ops.remove(op)
        dropped += 1
    return dropped


def _drop_nonzero(item: n.Value, body: n.Region, uses: dict[int, list[n.Op]],
                  consts: dict[int, object]) -> None:
    """``nonzero(item, ...)`` in ``body`` is ``item`` itself: an entry of an adjoint the
    loop owns is a number, never ``None``."""
    for u in list(uses.get(item.id, [])):
        if isinstance(u, n.Call) and consts.get(u.fn.id) is runtime.nonzero and \
                u.args and u.args[0] is item and u in body.ops:
            body.ops.remove(u)
            substitute(body, {u.result.id: item})


def _pop_float(a: n.Value, item: n.Value, loc: object) -> list[n.Op]:
    """``item = 0.0 if a is None else a.pop()``: :func:`runtime.pop_float` written inline."""
    none = n.Const(None, [n.Value()], loc=loc)  # type: ignore[arg-type]
    is_ = n.Const(operator.is_, [n.Value()], loc=loc)  # type: ignore[arg-type]
    cond = n.Call(is_.result, [a, none.result], [], [n.Value()], loc=loc)  # type: ignore
    zero = n.Const(0.0, [n.Value()], loc=loc)  # type: ignore[arg-type]
    method = n.GetAttr(a, "pop", [n.Value()], loc=loc)  # type: ignore[arg-type]
    last = n.Call(method.result, [], [], [n.Value()], loc=loc)  # type: ignore[arg-type]
    choice = n.If(cond.result, n.Region([], [zero, n.Yield([zero.result])]),
                  n.Region([], [method, last, n.Yield([last.result])]), [item],
                  loc=loc)  # type: ignore[arg-type]
    return [none, is_, cond, choice]


#: Reads of one number of a float64 array or of a list of floats.
_ENTRY_READS = (runtime.entry_adjoint_of_array, runtime.entry_adjoint_of_list)


#: Writes of one number into a float64 array or into a list of floats.
_ENTRY_WRITES = (runtime.entry_write_adjoint, runtime.entry_write_of_list)


#: The updates of an array's (or a list of floats') adjoint that a loop owning the
#: adjoint does in place.
ENTRY_LINKS = (*_ENTRY_READS, *_ENTRY_WRITES, runtime.nonzero)


def _in_place(link: n.Call, fn: object, a: n.Value, uses: dict[int, list[n.Op]]
              ) -> list[n.Op]:
    """The ops doing ``link``'s update into ``a`` itself (none for ``nonzero``)."""
    loc = link.loc
    if fn in _ENTRY_READS:
        _, _, index, g = link.args
        add = n.Const(operator.add, [n.Value()], loc=loc)
        get = n.GetItem(a, index, [n.Value()], loc=loc)
        # ``g + a[i]`` for a list: both are written inline then, in the order computed (a
        # float's sum does not depend on the order of its terms).
        terms = [g, get.result] if fn is runtime.entry_adjoint_of_list else [get.result, g]
        total = n.Call(add.result, terms, [], [n.Value()], loc=loc)
        return [add, get, total, n.SetItem(a, index, total.result, loc=loc)]
    if fn in _ENTRY_WRITES:
        index = link.args[1]
        unpack = uses[link.result.id][0]
        assert isinstance(unpack, n.Unpack)
        zero = n.Const(0.0, [n.Value()], loc=loc)
        # The entry's adjoint is read into the value the pair's second part was.
        return [n.GetItem(a, index, [unpack.results[1]], loc=loc), zero,
                n.SetItem(a, index, zero.result, loc=loc)]
    return []


def _entry_chain(a: n.Value, j: int, term: n.Op, body: n.Region, consts: dict[int, object],
                 uses: dict[int, list[n.Op]], inside: set[int]) -> list[n.Call] | None:
    """The calls of :data:`ENTRY_LINKS` in ``body`` that take the carried ``a`` to the
    value yielded at ``j``, each reading the one before only, all of one array's adjoint
    (at least one entry update among them); ``None`` if the carried value is used
    otherwise."""
    chain: list[n.Call] = []
    x: n.Value | None = None
    cur = a
    while True:
        us = uses.get(cur.id, [])
        if len(us) != 1:
            return None
        u = us[0]
        if u is term:
            ok = [i for i, v in enumerate(term.values) if v is cur] == [j]  # type: ignore
            entries = any(consts[c.fn.id] is not runtime.nonzero for c in chain)
            return chain if ok and entries else None
        fn = consts.get(u.fn.id) if isinstance(u, n.Call) else None
        if not (isinstance(u, n.Call) and hashable(fn) and fn in ENTRY_LINKS and
                not u.kwargs and not u.starred and u.args and u.args[0] is cur and
                u in body.ops and cur not in u.args[1:]):
            return None
        if fn in _ENTRY_READS:
            if any(consts[c.fn.id] in _ENTRY_READS and consts[c.fn.id] is not fn
                   for c in chain):
                return None  # (one adjoint is of an array or of a list, never both)
            if len(u.args) != 4 or u.args[1].id in inside or x not in (None, u.args[1]):
                return None
            x = u.args[1]
            nxt = u.result
        elif fn in _ENTRY_WRITES:
            pair = uses.get(u.result.id, [])
            if len(u.args) != 2 or len(pair) != 1 or not isinstance(pair[0], n.Unpack) or \
                    pair[0] not in body.ops or len(pair[0].results) != 2:
                return None
            nxt = pair[0].results[0]
        else:
            if len(u.args) != 2:
                return None
            nxt = u.result
        chain.append(u)
        cur = nxt


def list_of_one(v: n.Value, r: n.Region, k: int) -> list[n.Op] | None:
    """The ops making ``v`` as ``[g] * m`` in ``r`` before its op ``k`` (the product, the
    list display, then ``len(xs)`` where ``m`` is that), where nothing but one consumer
    reads ``v`` (nothing writes into it), else ``None``."""
    defs = {res.id: op for op in r.ops[:k] for res in op.results}
    mul = defs.get(v.id)
    if not isinstance(mul, n.Call) or mul.kwargs or mul.starred or len(mul.args) != 2:
        return None
    const = defs.get(mul.fn.id)
    made = defs.get(mul.args[0].id)
    if not isinstance(const, n.Const) or const.value is not operator.mul or \
            not isinstance(made, n.Build) or made.kind != "list" or made.starred or \
            len(made.items) != 1:
        return None
    # Read by its one consumer only: a list written after it is made (``[None] * n`` then
    # ``xs_bar[k] = g``, ``max``'s adjoint) is not ``[g] * n`` any more.
    reads = [v for o in n.walk(r) for v in o.operands()]
    if sum(v is mul.result for v in reads) != 1 or sum(v is made.result for v in reads) != 1:
        return None
    size = defs.get(mul.args[1].id)
    counted = isinstance(size, n.Call) and isinstance(c := defs.get(size.fn.id), n.Const) and \
        c.value is len
    return [mul, made, size] if counted else [mul, made]  # type: ignore[list-item]
