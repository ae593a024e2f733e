"""The reads of a holder's items put in the form :mod:`wengert.transforms.vjp_items` follows,
before reverse mode's walk: a loop over a list some of whose items the function writes into
reads them by index (:func:`index_item_loops`), and the entries of a tuple parameter unpacked
are reads of the tuple at their index (:func:`read_unpacked_entries`), so that every way to an
item is a read of a place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wengert.analysis.effects.arrays import SCALAR_TYPES
from wengert.analysis.effects.objects import region_of, write_targets
from wengert.analysis.types import (
    Types,
)
from wengert.ir import nodes as n
from wengert.transforms.iteration import _index_for, _State

#: Types of values that hold no object (what an item's field may hold).
_INERT = SCALAR_TYPES


def index_item_loops(fn: n.Function, types: Types,
                     written: Callable[[Any], Any] | None) -> bool:
    """Rewrite, in place, each ``for`` loop over a list (alone, through ``enumerate`` or
    in a ``zip``; or over a slice of one made for the loop, ``zip(ps, ps[1:])``) some of
    whose items the function writes into, anywhere, through a loop's item or a read by
    index, into a loop over ``range`` reading the items by index (only where the loop's
    body does not change the list itself); return whether anything changed."""
    loops = [op for op in n.walk_local(fn.body) if isinstance(op, n.For)]
    if not loops:
        return False
    state = _State(fn, types)
    defs = state.defs
    # What each loop walks: per sequence, the list and the slice of it walked (or None).
    walked: dict[int, tuple[Any, list[tuple[n.Value, n.Value | None]]]] = {}
    for op in loops:
        lists = state.iterated_lists(op)
        if lists is None and state.slice_of(op.iterable, op) is not None:
            lists = ("list", [(op.iterable, None)], None)  # (``reversed(xs)``)
        if lists is not None:
            seqs = []
            for xs, _ in lists[1]:
                part = state.slice_of(xs, op)
                seqs.append((xs, None) if part is None else part)
            walked[id(op)] = (lists, seqs)
    # The lists whose items are read as each loop's item (through an unpacking of it).
    loop_items: dict[int, n.Value] = {}
    for op in loops:
        if id(op) not in walked:
            continue
        lists, seqs = walked[id(op)]
        item = op.body.args[0]
        if lists[0] == "list":
            loop_items[item.id] = seqs[0][0]
            continue
        for use in state.uses.get(item.id, []):
            if isinstance(use, n.Unpack) and use.star is None:
                parts = use.results[1:] if lists[0] == "enumerate" else use.results
                for part, (xs, _) in zip(parts, seqs):
                    loop_items[part.id] = xs
    written_lists: set[int] = set()
    for op in state.ops:
        for t in write_targets(op, defs, types.of, written):
            if t.id in loop_items:
                written_lists.add(loop_items[t.id].id)
            d = defs.get(t.id)
            if isinstance(d, n.GetItem) and types.of(d.obj) is list and \
                    types.of(d.index) is int:
                written_lists.add(d.obj.id)
    changed = False
    for op in loops:
        if id(op) not in walked:
            continue
        lists, seqs = walked[id(op)]
        if not any(xs.id in written_lists for xs, _ in seqs):
            continue
        if any(state.changes(op.body, xs) for xs, _ in seqs):
            continue  # (the list itself changed: its loop stays, and the write refused)
        slices = [defs[xs.id] for (xs, _), (_, part) in zip(lists[1], seqs)
                  if part is not None]
        _index_for(op, (lists[0], seqs, lists[2]), state)
        for d in slices:  # (made for the loop alone: read no more)
            region = region_of(d, state)
            region.ops.remove(d)
        changed = True
    return changed


def read_unpacked_entries(fn: n.Function, types: Types, active: Callable[[n.Value], bool],
                          written: Callable[[Any], Any] | None) -> bool:
    """Make each entry of a tuple parameter unpacked (``x0, xs = xt``) that is a list, dict
    or object a read of the tuple at its index (``xs = xt[1]``), where something writes
    into an entry of that tuple, so that the holder's write-backs handle every way to it;
    return whether anything changed."""
    defs = {r.id: op for op in n.walk(fn.body) for r in op.results}
    holders: set[int] = set()
    for op in n.walk_local(fn.body):
        for t in write_targets(op, defs, types.of, written):
            d = defs.get(t.id)
            source = d.value if isinstance(d, n.Unpack) else \
                d.obj if isinstance(d, n.GetItem) else None
            if source is not None and active(t) and types.of(source) is tuple and \
                    source in fn.body.args:
                holders.add(source.id)
    mapping: dict[int, n.Value] = {}
    for region in _regions(fn.body):
        for unpack in [op for op in region.ops if isinstance(op, n.Unpack)]:
            if unpack.value.id not in holders or unpack.star is not None:
                continue
            at = region.ops.index(unpack) + 1
            for k, entry in enumerate(unpack.results):
                if types.of(entry) in _INERT:
                    continue
                index = n.Const(k, [n.Value()], loc=unpack.loc)
                read = n.GetItem(unpack.value, index.result, [n.Value(entry.hint)],
                                 loc=unpack.loc)
                region.ops[at:at] = [index, read]
                at += 2
                mapping[entry.id] = read.result
    if not mapping:
        return False
    for op in n.walk(fn.body):
        if not isinstance(op, n.Unpack):
            op.set_operands([mapping.get(v.id, v) for v in op.operands()])
    return True


def _regions(region: n.Region) -> list[n.Region]:
    """``region`` and every region inside it (not nested functions')."""
    out = [region]
    for op in region.ops:
        if not isinstance(op, n.MakeFunction):
            for r in op.regions():
                out.extend(_regions(r))
    return out
