"""What type inference must know of mutation before it knows any type.

Type inference (:mod:`wengert.analysis.types`) keeps the item types of a list, the
values of a dict and the axes of an array only where nothing may change them behind its
back. These untyped questions are answered here, below it, from the code alone:

- the values only read wherever used (:func:`read_only`: indexed, iterated, given to
  readers), with the in-place operators taken to act on numbers where asked, or only
  shrunk (:data:`~wengert.analysis.effects.vocabulary.ITEM_REMOVING_METHODS`);
- the lists and dicts changed only by item writes and appends, and what is written
  (:func:`item_writes`), the tables built row by row (:func:`appended`,
  :func:`table_rows`);
- whether anything may change an array's shape in place (:func:`reshaped`);
- the records of a generated gradient's loops, a list pushed onto and read back in
  reverse (:class:`RecordCopies`), which a gradient differentiated again holds.

Each body's constants and methods (:func:`consts_and_methods`) and records are found once
while :func:`facts_once` is open (type inference opens it per call).
"""

from __future__ import annotations

import contextlib
import copy
import operator
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.vocabulary import (
    CONTAINER_READ_METHODS,
    INPLACE_OPERATORS,
    ITEM_KEEPING_METHODS,
    ITEM_REMOVING_METHODS,
    STRUCTURE_READERS,
)
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses
from wengert.objects import hashable

#: Per thread, the facts of the bodies being typed (``infer_types``'s), or ``None``.
_FACTS = threading.local()


@contextlib.contextmanager
def facts_once() -> Iterator[None]:
    """Within it, the facts of a body each helper walks it for (its constants, its
    records...) are found once (:func:`memo`): for a caller that does not change the body
    meanwhile (type inference). Each entry has its own (a call made for a callee's types,
    which may be rewritten while it is typed)."""
    outer = getattr(_FACTS, "memo", None)
    _FACTS.memo = {}
    try:
        yield
    finally:
        _FACTS.memo = outer


def memo(key: tuple, make: Callable[[], Any]) -> Any:
    """``make()``, found once per ``infer_types`` call for ``key``."""
    found = getattr(_FACTS, "memo", None)
    if found is None:
        return make()
    got = found.get(key, _FACTS)
    if got is _FACTS:
        got = found[key] = make()
    return got


def consts_and_methods(body: n.Region) -> tuple[dict[int, Any], dict[int, str]]:
    """The constants of ``body`` and the attribute names read (methods), by value id (not
    to be changed: they are shared)."""
    return memo(("consts", id(body)), lambda: _find_consts_and_methods(body))


def _find_consts_and_methods(body: n.Region) -> tuple[dict[int, Any], dict[int, str]]:
    consts: dict[int, Any] = {}
    methods: dict[int, str] = {}
    for op in n.walk(body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        elif isinstance(op, n.GetAttr):
            methods[op.result.id] = op.name
    return consts, methods


def reshaped(body: n.Region, writes: Callable[[Any], Any] | None) -> bool:
    """Whether ``body`` may change the number of axes of an array in place (``a.shape =
    ...``, ``a.resize(...)``, or a callee that may write into what it is given), so that
    an array parameter's :class:`~wengert.analysis.types.ArrayOf` may not hold throughout."""
    consts, methods = consts_and_methods(body)
    for op in n.walk(body):
        if isinstance(op, n.GetAttr) and op.name == "resize" or \
                isinstance(op, n.SetAttr) and op.name in ("shape", "dtype", "strides"):
            return True
        if isinstance(op, n.Call):
            if op.fn.id in methods:
                if not any(hasattr(t, methods[op.fn.id]) for t in (numpy.ndarray, list, dict)):
                    return True  # a method of an object of unknown class
                continue
            f = consts.get(op.fn.id, _NOT_CONST)
            if f is _NOT_CONST:
                return True
            if isinstance(f, types.FunctionType) and _user_function(f) and \
                    (writes is None or any(True for _ in writes(f))):
                return True
    return False


#: Callables that read a list they are given and never change it.
_READERS = frozenset({len, sum, min, max, enumerate, zip, reversed, sorted, iter, list,
                      tuple, range, runtime.check_distinct_items,
                      runtime.check_held_alone, dict.keys, dict.values, dict.items,
                      # (the index of ``max(xs, key=)``, the order of ``sorted(xs, key=)``)
                      runtime.keyed_extreme, runtime.keyed_order, runtime.first_extreme,
                      copy.deepcopy, runtime.copy_rows, runtime.check_unshared_rows,
                      # (the run-time checks before an operator, ``+=`` on what may be a view)
                      runtime.check_view, runtime.check_operands, runtime.check_union})


def read_only(body: n.Region, writes: Callable[[Any], Any] | None = None,
               numbers_in_place: bool = False, shrinking: bool = False) -> set[int]:
    """Values only read wherever used (and the parameters never used): indexed, iterated,
    or passed to :data:`_READERS` (so a list among them holds the same items throughout).
    In a function that writes into nothing (no item or attribute assignment, no in-place
    operator, no method but ``append``, no callee that may write), a value appended to a
    list is only stored, not changed. ``numbers_in_place``: assume every in-place operator
    (``total += x``) acts on a number, which it does not change (for the caller to check).
    ``shrinking``: also those only taken items out of or reordered (``r.pop(j)``,
    :data:`ITEM_REMOVING_METHODS`): a list among them holds items of the types it was made
    with, not the same items throughout."""
    consts, methods = consts_and_methods(body)
    quiet = _writes_nothing(body, consts, methods, writes, numbers_in_place, shrinking)
    bad: set[int] = set()
    seen: set[int] = set()
    copies = record_copies(body)
    stored: dict[int, list[int]] = {}
    for op in n.walk(body):
        for v in op.operands():
            seen.add(v.id)
            outs = copies.of(op, v)
            if outs is not None:
                # Saved in a loop's record (in a gradient differentiated again): read
                # where the reverse loop unpacks it, if only read there.
                stored.setdefault(v.id, []).extend(outs)
                continue
            if copies.own.get(id(op)) == v.id:
                continue  # (a record list's own use: appended to)
            if isinstance(op, n.GetItem) and op.obj.id == v.id or \
                    isinstance(op, n.For) and op.iterable.id == v.id or \
                    isinstance(op, n.GetAttr) and op.name in CONTAINER_READ_METHODS:
                continue  # (``xs.copy``, ``d.get``: methods that change nothing)
            if shrinking and isinstance(op, n.GetAttr) and op.name in ITEM_REMOVING_METHODS:
                continue
            if isinstance(op, n.Call) and op.fn.id != v.id and v in op.args and \
                    _reader(consts.get(op.fn.id)):
                continue
            if quiet and isinstance(op, n.Call) and methods.get(op.fn.id) == "append" and \
                    op.args == [v]:
                continue
            if isinstance(op, n.Call) and writes is not None and not op.starred and \
                    not op.kwargs and op.fn.id != v.id and \
                    isinstance(f := consts.get(op.fn.id), types.FunctionType) and \
                    _user_function(f) and \
                    not any(i in writes(f) for i, a in enumerate(op.args) if a.id == v.id):
                continue  # given to a helper that does not write into it
            bad.add(v.id)
    changed = True
    while changed:  # (a value is only read if every copy a record makes of it is)
        changed = False
        for vid, outs in stored.items():
            if vid not in bad and any(u in bad for u in outs):
                bad.add(vid)
                changed = True
    return (seen | {a.id for a in body.args}) - bad


@dataclass
class RecordCopies:
    """Where the records of a generated gradient's loops take values (``loop.append((a,
    b))``, ``loop.append(a)``) to be unpacked by the reverse loops (``for a2, b2 in
    reversed(loop)``): a list only pushed onto, measured and iterated that way, directly
    or as the copy an outer loop's record makes of it (:func:`record_copies`)."""

    #: By ``id`` of a pushed tuple display: the values each of its entries is unpacked as.
    entries: dict[int, list[list[int]]] = field(default_factory=dict)
    #: By ``id`` of a push of one value: the values it is iterated as.
    pushes: dict[int, list[int]] = field(default_factory=dict)
    #: By ``id`` of a record list's ``append`` method read: the list's value id.
    own: dict[int, int] = field(default_factory=dict)

    def of(self, op: n.Op, v: n.Value) -> list[int] | None:
        """The values the record ``op`` (a display or a push) copies ``v`` to, if it is
        one holding ``v``."""
        got = self.entries.get(id(op))
        if got is not None:
            return [u for k, x in enumerate(op.items)  # type: ignore[attr-defined]
                    if x.id == v.id for u in got[k]]
        if id(op) in self.pushes and op.args == [v]:  # type: ignore[attr-defined]
            return self.pushes[id(op)]
        return None


def recorded_values(op: n.Op, copies: RecordCopies) -> list[n.Value]:
    """The values the record ``op`` (a pushed display, or a push) keeps."""
    if id(op) in copies.entries:
        return list(op.items)  # type: ignore[attr-defined]
    if id(op) in copies.pushes:
        return list(op.args)  # type: ignore[attr-defined]
    return []


def record_copies(body: n.Region) -> RecordCopies:
    """The records of the loops of ``body`` (see :class:`RecordCopies`)."""
    return memo(("records", id(body)), lambda: _find_record_copies(body))


def _find_record_copies(body: n.Region) -> RecordCopies:
    consts, methods = consts_and_methods(body)
    uses: dict[int, list[n.Op]] = {}
    getters: dict[int, n.GetAttr] = {}
    values: dict[int, n.Value] = {}
    for op in n.walk(body):
        if isinstance(op, n.GetAttr):
            getters[op.result.id] = op
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
        for r in op.results:
            values[r.id] = r
        for region in op.regions():
            for a in region.args:
                values[a.id] = a
    out = RecordCopies()
    parts_of: dict[int, list[list[int]] | None] = {}
    loops_of: dict[int, list[n.For] | None] = {}

    def loops_over(v: n.Value, depth: int) -> list[n.For] | None:
        """The loops iterating the record list ``v`` (or a record's copy of it)."""
        if v.id in loops_of:
            return loops_of[v.id]
        loops_of[v.id] = None
        found: list[n.For] = []
        for u in uses.get(v.id, []):
            if isinstance(u, n.GetAttr) and u.name == "append" and all(
                    isinstance(c, n.Call) and c.fn is u.result and len(c.args) == 1 and
                    not c.kwargs and not c.starred for c in uses.get(u.result.id, [])) or \
                    isinstance(u, n.Call) and consts.get(u.fn.id) is len and u.args == [v]:
                continue
            if isinstance(u, n.Call) and consts.get(u.fn.id) is reversed and u.args == [v]:
                its = uses.get(u.result.id, [])
                if not its or not all(isinstance(o, n.For) and o.iterable is u.result
                                       for o in its):
                    return None
                found += its  # type: ignore[arg-type]
            elif isinstance(u, n.For) and u.iterable is v and v not in u.inits:
                found.append(u)
            elif isinstance(u, n.Build) and depth < 8 and \
                    (outer := parts(u, depth + 1)) is not None:
                for k, x in enumerate(u.items):
                    if x is not v:
                        continue
                    for c in outer[k]:
                        inner = loops_over(values[c], depth + 1)
                        if inner is None:
                            return None
                        found += inner
            else:
                return None
        loops_of[v.id] = found
        return found

    def stack_of(push: n.Op) -> n.Value | None:
        if not isinstance(push, n.Call) or len(push.args) != 1 or push.kwargs or \
                push.starred or methods.get(push.fn.id) != "append" or \
                push.fn.id not in getters:
            return None
        return getters[push.fn.id].obj

    def parts(op: n.Build, depth: int) -> list[list[int]] | None:
        if id(op) in parts_of:
            return parts_of[id(op)]
        parts_of[id(op)] = None  # (no cycles: a record is not its own item)
        pushes = uses.get(op.result.id, [])
        if op.kind != "tuple" or op.starred or not op.items or len(pushes) != 1 or \
                (stack := stack_of(pushes[0])) is None:
            return None
        loops = loops_over(stack, depth)
        if loops is None:
            return None
        got: list[list[int]] = [[] for _ in op.items]
        for loop in loops:
            unpacks = uses.get(loop.body.args[0].id, [])
            if not unpacks or not all(isinstance(x, n.Unpack) and x.star is None and
                                      len(x.results) == len(op.items) for x in unpacks):
                return None
            for x in unpacks:
                for k, r in enumerate(x.results):  # type: ignore[attr-defined]
                    got[k].append(r.id)
        parts_of[id(op)] = got
        return got

    for op in n.walk(body):
        if isinstance(op, n.Build) and (got := parts(op, 0)) is not None:
            out.entries[id(op)] = got
        elif (stack := stack_of(op)) is not None and \
                (loops := loops_over(stack, 0)) is not None:
            out.pushes[id(op)] = [loop.body.args[0].id for loop in loops]
    for op in n.walk(body):
        if isinstance(op, n.GetAttr) and op.name == "append" and \
                loops_of.get(op.obj.id) is not None:
            out.own[id(op)] = op.obj.id
    return out


def _writes_nothing(body: n.Region, consts: Mapping[int, Any], methods: Mapping[int, str],
                    writes: Callable[[Any], Any] | None, numbers_in_place: bool = False,
                    shrinking: bool = False) -> bool:
    """Whether nothing in ``body`` may write into an object other than by ``append`` (and
    by in-place operators, with ``numbers_in_place``; by :data:`ITEM_REMOVING_METHODS`, with
    ``shrinking``)."""
    for op in n.walk(body):
        if isinstance(op, (n.SetItem, n.SetAttr, n.MakeFunction)):
            return False
        if not isinstance(op, n.Call):
            continue
        if numbers_in_place and in_place_operator(op, consts):
            continue
        if op.fn.id in methods:
            if methods[op.fn.id] not in ("append", *CONTAINER_READ_METHODS) and \
                    not (shrinking and methods[op.fn.id] in ITEM_REMOVING_METHODS):
                return False
            continue
        f = consts.get(op.fn.id, _NOT_CONST)
        if f is _NOT_CONST:
            return False
        if isinstance(f, types.FunctionType) and _user_function(f):
            if writes is None or any(True for _ in writes(f)):
                return False
        elif not _reader(f):
            return False
    return True


_NOT_CONST = object()




def in_place_operator(op: n.Op, consts: Mapping[int, Any]) -> bool:
    """Whether ``op`` is a call of an in-place operator (``a += b``)."""
    return isinstance(op, n.Call) and hashable(f := consts.get(op.fn.id)) and \
        f in INPLACE_OPERATORS and bool(op.args)






def _user_function(f: Any) -> bool:
    """Whether ``f`` is a function without a registered rule (a user helper)."""
    from wengert.rules import registry  # the rule tables import this module's users

    return registry.lookup(f) is None


def _reader(f: Any) -> bool:
    """Whether a call of ``f`` leaves the lists passed to it as they were: a reader, or a
    primitive without side effects (the adjoint helpers a pullback calls on ``x``)."""
    if not hashable(f) or f is runtime.getitem_adjoint_owned:
        return False
    from wengert.rules import registry  # the rule tables import this module's users

    return f in _READERS or registry.is_pure(f)




#: Calls that read the items of a list given to them and leave it as it was.
_LIST_READERS = frozenset({reversed, sum, len, max, min, zip, enumerate, sorted, list, tuple,
                           iter, runtime.snapshot, operator.contains, runtime.contained_in,
                           # (a list whose items are written into, in a gradient: its
                           # structure read, transforms/vjp_items.py)
                           runtime.check_distinct_items, runtime.check_held_alone,
                           runtime.structure,
                           runtime.getitem_adjoint, runtime.entry_adjoint_of_list,
                           runtime.nonzero, runtime.reversed_adjoint,
                           # (``d.keys()`` as a call of the method of ``dict``)
                           dict.keys, dict.values, dict.items})




def item_writes(body: n.Region, writes: Callable[[Any], Any] | None = None
                 ) -> dict[int, list[tuple[n.Value, n.Value | None]]]:
    """Values changed only by item writes ``xs[i] = v``, ``xs.append(v)`` and pops, and
    otherwise only read (indexed, iterated, given to readers, returned): for each, what is
    written and under which index (``None`` for an append). Not entering nested functions:
    a value one of them reads is not among these."""
    consts, _ = consts_and_methods(body)
    method_of: dict[int, tuple[int, str]] = {}
    uses: dict[int, list[n.Op]] = {}
    captured: set[int] = set()
    reads: dict[int, n.GetItem] = {}
    stack = [body]
    while stack:
        region = stack.pop()
        for op in region.ops:
            if isinstance(op, n.MakeFunction):
                if not _reading_function(op):  # (a key function only reads)
                    captured.update(v.id for v in free_uses(op.func.body))
                continue
            if isinstance(op, n.GetItem):
                reads[op.result.id] = op
            if isinstance(op, n.GetAttr):
                method_of[op.result.id] = (op.obj.id, op.name)
            for v in op.operands():
                uses.setdefault(v.id, []).append(op)
            stack.extend(op.regions())
    out: dict[int, list[tuple[n.Value, n.Value | None]]] = {}
    for vid, ops in uses.items():
        if vid in captured:
            continue
        found: list[tuple[n.Value, n.Value | None]] = []
        for op in ops:
            if isinstance(op, n.GetItem) and op.obj.id == vid and op.index.id != vid or \
                    isinstance(op, n.For) and op.iterable.id == vid and \
                    all(v.id != vid for v in op.inits) or \
                    isinstance(op, n.Return):
                continue
            if isinstance(op, n.GetAttr) and op.obj.id == vid and op.name == "append":
                # ``xs.append(v)`` read as a method first: what each call appends.
                calls = uses.get(op.result.id, [])
                if not all(isinstance(c, n.Call) and c.fn is op.result and
                           len(c.args) == 1 and not c.kwargs and not c.starred
                           for c in calls):
                    break
                found.extend((c.args[0], None) for c in calls)  # type: ignore[attr-defined]
                continue
            if isinstance(op, n.GetAttr) and op.obj.id == vid and \
                    op.name in ITEM_KEEPING_METHODS:
                continue
            if isinstance(op, n.SetItem) and op.obj.id == vid and op.index.id != vid:
                found.append((op.value, op.index))
                continue
            if isinstance(op, n.SetItem) and op.value.id == vid and \
                    (r := reads.get(vid)) is not None and r.obj is op.obj and \
                    r.index is op.index:
                continue  # put back where it was read (``transforms/vjp_items.py``)
            if isinstance(op, n.Call) and not op.kwargs and not op.starred:
                obj, name = method_of.get(op.fn.id, (None, ""))
                if obj == vid and name == "append" and len(op.args) == 1:
                    found.append((op.args[0], None))
                    continue
                if obj == vid and name in ITEM_KEEPING_METHODS and \
                        all(a.id != vid for a in op.args):
                    continue
                f = consts.get(op.fn.id, _NOT_CONST)
                if obj is None and op.fn.id != vid and f is not _NOT_CONST and \
                        hashable(f) and f in _LIST_READERS:
                    continue
            break
        else:
            if found:
                out[vid] = found
    return out




def _structure_read(op: n.Op, lst: int, consts: Mapping[int, Any]) -> bool:
    """Whether ``op`` gives the list ``lst`` to one of :data:`STRUCTURE_READERS`, at its
    position alone."""
    if not isinstance(op, n.Call) or op.kwargs or op.starred:
        return False
    at = [k for k, a in enumerate(op.args) if a.id == lst]
    f = consts.get(op.fn.id)
    return bool(at) and any(f is g and at == [k] for g, k in STRUCTURE_READERS)


def _puts_back(op: n.Op, lst: int, defs: Mapping[int, n.Op]) -> bool:
    """Whether ``op`` is ``xs[i] = p`` into the list ``lst`` of a ``p`` read as ``xs[i]``:
    it stores the object the slot holds (reverse mode's write-back), changing nothing."""
    if not isinstance(op, n.SetItem) or op.obj.id != lst:
        return False
    d = defs.get(op.value.id)
    return isinstance(d, n.GetItem) and d.obj is op.obj and d.index is op.index


def _reading_function(op: n.Op) -> bool:
    """Whether ``op`` defines a function that only reads what it captures: its body reads
    items and calls nothing but builtins, ``math`` and ``operator`` functions that change
    nothing they are given."""
    if not isinstance(op, n.MakeFunction):
        return False
    consts = {o.result.id: o.value for o in n.walk(op.func.body) if isinstance(o, n.Const)}
    for o in n.walk(op.func.body):
        if isinstance(o, n.Call):
            f = consts.get(o.fn.id)
            if not (f in _KEY_BUILTINS if hashable(f) else False) and not (
                    getattr(f, "__module__", None) == "math" or
                    getattr(f, "__module__", None) in ("operator", "_operator") and
                    not f.__name__.startswith(("i", "set", "del"))):
                return False
        elif not isinstance(o, (n.Const, n.GetItem, n.Return)):
            return False
    return True


#: Builtins a function only reading what it captures may call.
_KEY_BUILTINS = frozenset({abs, len, min, max, sum, float, int, round})


def _moved(op: n.Op, lst: int, defs: Mapping[int, n.Op]) -> bool:
    """Whether ``op`` is ``xs[i] = p`` into the list ``lst`` of a ``p`` read out of it
    (``m[k], m[p] = m[p], m[k]``): an item it held, of the type its items have."""
    if not isinstance(op, n.SetItem) or op.obj.id != lst or op.value.id == lst:
        return False
    d = defs.get(op.value.id)
    return isinstance(d, n.GetItem) and d.obj is op.obj


def _index(body: n.Region) -> tuple[dict[int, Any], dict[int, n.Op], dict[int, list[n.Op]]]:
    """The constants, the defining op and the using ops of each value of ``body`` (nested
    regions included), by value id."""
    uses: dict[int, list[n.Op]] = {}
    defs: dict[int, n.Op] = {}
    consts: dict[int, Any] = {}
    for op in n.walk(body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for r in op.results:
            defs[r.id] = op
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
    return consts, defs, uses


def table_rows(body: n.Region, appended: Mapping[int, list[n.Value]], kept: set[int],
                writes: Callable[[Any], Any] | None = None) -> set[int]:
    """The rows of tables whose items keep their types: lists each put in a table (by one
    append, ``c = [[0.0] * n for _ in range(m)]``, or as an item of a list display, ``[xs[:3],
    xs[3:]]``) and used by nothing else, and the displays they are made of, where the table
    is only appended to, measured, given to helpers that write into nothing it holds, and
    read by index or iterated into values in ``kept`` (only read, or changed only by item
    writes that agree with the items' type, as the caller checks): every change of a row is
    one of those writes."""
    consts, defs, uses = _index(body)
    tables = dict(appended)
    for op in n.walk(body):
        if isinstance(op, n.Build) and op.kind == "list" and op.items and not op.starred:
            tables[op.result.id] = list(op.items)

    def only_read(u: n.Op, lst: int) -> bool:
        if isinstance(u, n.GetItem) and u.obj.id == lst:
            return u.result.id in kept or all(
                _moved(w, lst, defs) for w in uses.get(u.result.id, [None]))
        if _moved(u, lst, defs) or isinstance(u, n.Return) or _reading_function(u):
            return True  # (a row put at another place of the table; the table returned;
            # a key function reading its numbers, ``lambda i: abs(m[i][k])``)
        if isinstance(u, n.For) and u.iterable.id == lst:
            return u.body.args[0].id in kept
        if isinstance(u, n.GetAttr) and u.name == "append" and lst in appended or \
                _puts_back(u, lst, defs) or _structure_read(u, lst, consts):
            return True
        if not isinstance(u, n.Call) or u.starred or u.kwargs or u.fn.id == lst:
            return False
        f = consts.get(u.fn.id)
        if _reader(f):  # (len, sum, copy.deepcopy: it changes nothing there)
            return True
        return writes is not None and isinstance(f, types.FunctionType) and \
            _user_function(f) and \
            not any(i in writes(f) for i, a in enumerate(u.args) if a.id == lst)

    copies: RecordCopies | None = None

    def measured(u: n.Op, v: n.Value) -> bool:
        # ``len(row)``, or a loop's record of it only measured (or its structure read) in
        # the reverse loop (the rows a gradient differentiated again copies, ``list(row)``).
        nonlocal copies
        if isinstance(u, n.Call) and consts.get(u.fn.id) is len and u.args == [v]:
            return True
        if not isinstance(u, n.Build):
            return False
        copies = copies or record_copies(body)
        outs = copies.of(u, v)
        return bool(outs) and all(
            isinstance(w, n.Call) and consts.get(w.fn.id) is len and len(w.args) == 1 or
            w is not None and _structure_read(w, c, consts)
            for c in outs for w in uses.get(c, [None]))

    out: set[int] = set()
    for lst, values in tables.items():
        if not all(only_read(u, lst) for u in uses.get(lst, [])):
            continue
        for v in values:
            # (Used by the table alone, and by its own appends while it was made.)
            if sum(1 for u in uses.get(v.id, []) if not (
                    isinstance(u, n.GetAttr) and u.obj is v and u.name == "append" or
                    measured(u, v))) != 1:
                continue
            out.add(v.id)
            made = defs.get(v.id)
            if isinstance(made, n.Call) and consts.get(made.fn.id) is operator.mul:
                # ``[0.0] * n``: the display, used by the product alone, keeps its items.
                out.update(a.id for a in made.args if len(uses.get(a.id, [])) == 1 and
                           isinstance(defs.get(a.id), n.Build))
    return out


def appended(body: n.Region, writes: Callable[[Any], Any] | None = None,
              stored: set[int] | None = None, written: set[int] | None = None
              ) -> dict[int, list[n.Value]]:
    """Lists made empty and then only appended to and iterated (a loop's records, in
    generated code): the values appended to each, so items read back get their types.
    With ``written``, lists also given items at an index count, and are added to it (their
    items are the appended ones' type only where every such write agrees)."""
    consts, defs, uses = _index(body)
    out: dict[int, list[n.Value]] = {}
    for op in n.walk(body):
        if not (isinstance(op, n.Build) and op.kind == "list" and not op.items):
            continue
        values: list[n.Value] = []
        for u in uses.get(op.result.id, []):
            if isinstance(u, n.GetAttr) and u.name == "append":
                calls = uses.get(u.result.id, [])
                if not all(isinstance(c, n.Call) and c.fn.id == u.result.id and
                           len(c.args) == 1 and not c.kwargs and not c.starred
                           for c in calls):
                    break
                values += [c.args[0] for c in calls]  # type: ignore[union-attr]
            elif isinstance(u, n.For) and u.iterable.id == op.result.id or \
                    isinstance(u, n.Return):
                continue  # (iterated; returned, as the last thing done)
            elif isinstance(u, n.GetItem) and u.obj.id == op.result.id:
                continue  # an item read back
            elif _puts_back(u, op.result.id, defs) or _moved(u, op.result.id, defs) or \
                    _structure_read(u, op.result.id, consts):
                continue
            elif written is not None and isinstance(u, n.SetItem) and \
                    u.obj.id == op.result.id and u.value.id != op.result.id and \
                    u.index.id != op.result.id and \
                    not isinstance(defs.get(u.index.id), n.BuildSlice):
                # One item replaced (``ps[0] = Body(c, v)``, ``xs[i] = 2.0 * xs[i]``):
                # its items are the appended ones only where type inference checks that
                # every such write agrees (``written`` collects the list).
                written.add(op.result.id)
            elif isinstance(u, n.Call) and hashable(consts.get(u.fn.id)) and \
                    consts.get(u.fn.id) in _LIST_READERS and u.fn.id != op.result.id:
                continue  # read, never changed: its items are still the ones appended
            elif isinstance(u, n.Call) and writes is not None and not u.starred and \
                    isinstance(consts.get(u.fn.id), types.FunctionType) and \
                    op.result in u.args and not u.kwargs and \
                    not any(i in writes(consts[u.fn.id]) for i, a in enumerate(u.args)
                            if a is op.result):
                continue  # a user function that does not write into it
            elif stored is not None and isinstance(u, n.Call) and u.args == [op.result] and \
                    not u.kwargs and not u.starred and \
                    isinstance(m := defs.get(u.fn.id), n.GetAttr) and m.name == "append" \
                    and m.obj.id != op.result.id:
                # A row appended to a table: its items hold only while the table's rows
                # are kept as they are (type inference's ``item_type`` asks).
                stored.add(op.result.id)
                continue
            else:
                break
        else:
            out[op.result.id] = values
    return out
