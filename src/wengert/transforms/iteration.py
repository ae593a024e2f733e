"""Loops over a list that the loop changes read each item when they reach it.

Python's list iterator reads ``xs[k]`` when step ``k`` begins and stops once ``k``
reaches the list's length *at that moment*. So in

    for i, x in enumerate(xs):
        if i + 1 < len(xs):
            xs[i + 1] = xs[i + 1] + a * x

the item ``x`` of step ``i + 1`` is the value written in step ``i``. The derivative
transforms treat a ``for`` loop's items as the items of the iterable when the loop
begins, which is exact for an iterable the loop does not change (a ``range``, a tuple,
a list it only reads) and wrong here. This pass rewrites such loops, before
differentiation, into the form Python runs them in::

    k = 0
    while k < len(xs):      # zip(a, b): k < len(a) and k < len(b)
        x = xs[k]           # enumerate(xs, s): (s + k, xs[k])
        k = k + 1
        <body>

whose reads and writes both modes differentiate like any other indexing. A loop over
some other iterable the loop may change (a ``reversed`` list, a dict, an iterator
built elsewhere) is refused with a located error rather than differentiated wrongly.

"May change" is decided conservatively: a write into an object that may be the list
(``xs[j] = v``, ``xs.append``, ``xs += ys``), or a call that may write into its
arguments (a user function, a method not known to only read, a function value)
given an argument that may be the list or hold it. Two values may be one object
unless one is made in this function (a display, ``list(...)``) and the other cannot
come from it (it was never stored or passed on, or no data path leads from it to the
other), or one is an item read out of the other. The one thing not seen is a callee
that reaches the list through a global variable rather than its arguments.
"""

from __future__ import annotations

import builtins
import copy
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects import (
    LIST_INPLACE,
    MUTATING_METHODS,
    READONLY_METHODS,
    SCALAR_CLASSES,
    SLOT_METHODS,
)
from wengert.analysis.types import Types, infer_types, subclass
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import expand_ops
from wengert.objects import namedtuple_method
from wengert.rules import registry

_SLOT_METHODS = SLOT_METHODS
#: Values of these types are never written into (and never hold a list that is).
_IMMUTABLE = SCALAR_CLASSES
#: In-place operators: ``xs += ys`` extends the list ``xs``.
_INPLACE = LIST_INPLACE
#: In-place operators: the result is the object changed (an array, a list), or a new
#: number.
_IN_PLACE_RESULTS = _INPLACE | {operator.isub, operator.itruediv, operator.ifloordiv,
                                operator.imod, operator.ipow, operator.imatmul, operator.iand,
                                operator.ior, operator.ixor, operator.ilshift,
                                operator.irshift}
#: Calls that make a new list or dict sharing no slots with their arguments.
_FRESH_CALLS = frozenset({list, dict, set, sorted, copy.copy, copy.deepcopy})
#: Builtins that only read what they are given.
_READERS = frozenset({len, sum, min, max, enumerate, zip, reversed, sorted, iter, list,
                      tuple, range, any, all, abs, isinstance, print, repr, str, float,
                      int, bool, round, dict, set, frozenset, map, filter})

_UNKNOWN = ("unknown",)
#: The "slice" a loop over ``reversed(xs)`` walks (:meth:`_State.slice_of`).
REVERSED = "reversed"


def index_changed_iterations(fn: n.Function, arg_types: Sequence[Any]) -> bool:
    """Rewrite, in place, every ``for`` loop of ``fn`` over a list its body may change
    (directly, through ``enumerate`` or through ``zip``) into an index loop; return
    whether anything changed. Refuses other iterables the loop may change."""
    loops = [op for op in n.walk_local(fn.body) if isinstance(op, n.For)]
    if not loops:
        return False
    types = infer_types(fn, list(arg_types))
    state = _State(fn, types)
    changed = False
    for op in loops:
        lists = state.iterated_lists(op)
        if lists is None:
            # Not a list (a range, a tuple, ...), or an iterable we cannot index.
            sources = state.iterated_objects(op)
            if len(sources) == 1 and types.of(sources[0]) is dict and \
                    _keys_of(op.iterable, sources[0], state):
                # A dict yields its keys, which writes into its values leave as they are
                # (adding or removing a key while iterating raises in Python itself).
                continue
            if any(state.changes(op.body, source) for source in sources):
                raise NonDifferentiableError(
                    "this loop changes the object it iterates over, which is not supported "
                    "for this kind of iterable", op.loc,
                    hint="iterate over indices (`for k in range(len(xs))`) and read `xs[k]`")
            continue
        if any(state.changes(op.body, xs) or
               lists[0] != "list" and state.writes_items(op.body, xs) and
               state.slice_of(xs, op) is None
               for xs, _ in lists[1]):
            # (a loop over ``enumerate``/``zip`` writing into the items it gets reads them
            # by index too: forward mode's tangents of those items are then the list's; a
            # slice made for the loop alone is walked by its indices in the holder instead,
            # ``vjp_items.index_item_loops``)
            _rewrite(op, lists, state)
            changed = True
    return changed


def _keys_of(it: n.Value, d: n.Value, state: _State) -> bool:
    """Whether iterating ``it`` yields the keys of the dict ``d``: ``d`` itself, or
    ``d.keys()``."""
    if it is d:
        return True
    made = state.defs.get(it.id)
    if not isinstance(made, n.Call) or made.kwargs or made.starred:
        return False
    method = state.defs.get(made.fn.id)
    if isinstance(method, n.GetAttr):
        return method.obj is d and method.name == "keys" and not made.args
    return isinstance(method, n.Const) and method.value is dict.keys and made.args == [d]


class _State:
    """Definitions, uses and types of one function, for the alias questions above."""

    def __init__(self, fn: n.Function, types: Types) -> None:
        self.types = types
        self.top = fn.body
        self._escapes: dict[int, bool] = {}
        self.defs: dict[int, n.Op] = {}
        self.parent: dict[int, n.Op] = {}  # region arg id -> its op
        self.params = {a.id: i for i, a in enumerate(fn.body.args)}
        self.uses: dict[int, list[n.Op]] = {}
        self.ops = list(n.walk_local(fn.body))
        for op in self.ops:
            for r in op.results:
                self.defs[r.id] = op
            for a in n.region_args(op):
                self.parent[a.id] = op
            vals = op.operands()
            if isinstance(op, n.MakeFunction):
                from wengert.ir.uses import free_uses
                vals = vals + free_uses(op.func.body)
            for v in vals:
                self.uses.setdefault(v.id, []).append(op)

    def const(self, v: n.Value) -> tuple[bool, Any]:
        d = self.defs.get(v.id)
        return (True, d.value) if isinstance(d, n.Const) else (False, None)

    def walking_call(self, v: n.Value) -> tuple[Any, list[n.Value]] | None:
        """``(f, args)`` where ``v`` is made by a call of the constant ``f`` with the
        positional ``args``, none starred, and keywords only ``enumerate``'s ``start`` (an
        argument then) or ``zip``'s ``strict`` (which names nothing walked); else
        ``None``."""
        d = self.defs.get(v.id)
        if not isinstance(d, n.Call) or d.starred:
            return None
        is_c, f = self.const(d.fn)
        if not is_c:
            return None
        if not d.kwargs:
            return f, list(d.args)
        names = [k for k, _ in d.kwargs]
        if f is builtins.enumerate and names == ["start"] and len(d.args) == 1:
            return f, [*d.args, d.kwargs[0][1]]
        if f is builtins.zip and names == ["strict"]:
            return f, list(d.args)
        return None

    def immutable(self, v: n.Value) -> bool:
        t = self.types.of(v)
        return subclass(t, _IMMUTABLE) is True or \
            (self.const(v)[0] and isinstance(self.const(v)[1], _IMMUTABLE))

    # -- what a loop iterates over ---------------------------------------------------------

    def iterated_lists(self, op: n.For) -> tuple[str, list[tuple[n.Value, Any]], Any] | None:
        """``(kind, [(list, None)...], start)`` for a loop over a list, ``enumerate`` or
        ``zip`` of lists (kind ``"list"``, ``"enumerate"``, ``"zip"``); ``None`` else."""
        it = op.iterable
        if self.types.of(it) is list:
            return "list", [(it, None)], None
        call = self.walking_call(it)
        if call is None:
            return None
        f, args = call
        if f is builtins.enumerate and len(args) in (1, 2):
            if self.types.of(args[0]) is not list:
                return None
            return "enumerate", [(args[0], None)], args[1] if len(args) == 2 else None
        if f is builtins.zip and args and \
                all(self.types.of(a) in (list, tuple) for a in args) and \
                all(self.const(v) == (True, False) for _, v in self.defs[it.id].kwargs):
            # (``strict=True`` raises where the loop runs out of one list and not of the
            # others: an index loop over the least length would not)
            return "zip", [(a, None) for a in args], None
        return None

    def slice_of(self, xs: n.Value, op: n.For) -> tuple[n.Value, n.Value | str] | None:
        """``(ys, s)`` where ``xs`` is a slice ``ys[s]`` of a list (or ``reversed(ys)``:
        ``s`` is :data:`REVERSED`) made for the loop ``op`` alone (iterated by it, alone or
        in the ``zip``/``enumerate`` it iterates), in the loop's region with nothing
        between that may change ``ys``: the loop may read ``ys`` at the slice's indices
        instead. ``None`` otherwise."""
        d = self.defs.get(xs.id)
        if isinstance(d, n.GetItem) and self.types.of(d.index) is slice and \
                self.types.of(d.obj) is list:
            ys, part = d.obj, d.index
        elif isinstance(d, n.Call) and len(d.args) == 1 and not d.kwargs and \
                not d.starred and self.const(d.fn) == (True, builtins.reversed) and \
                self.types.of(d.args[0]) is list:
            ys, part = d.args[0], REVERSED
        else:
            return None
        made = self.defs.get(op.iterable.id)
        through = [op] if xs is op.iterable else [made]
        if self.uses.get(xs.id, []) != through or \
                xs is not op.iterable and self.uses.get(op.iterable.id, []) != [op]:
            return None
        region = _region_of(op, self)
        if not any(o is d for o in region.ops):
            return None
        between = region.ops[region.ops.index(d) + 1:region.ops.index(op)]
        if self.changes(n.Region([], between), ys):
            return None
        return ys, part

    def iterated_objects(self, op: n.For) -> list[n.Value]:
        """The mutable objects a loop over something else walks (``reversed(xs)`` ->
        ``xs``; ``enumerate(zip(a, b))`` -> ``a``, ``b``; ``d.items()`` -> ``d``)."""
        return self._walked(op.iterable)

    def _walked(self, it: n.Value) -> list[n.Value]:
        t = self.types.of(it)
        if t in _IMMUTABLE or t is tuple:
            return []
        d = self.defs.get(it.id)
        call = self.walking_call(it)
        if call is not None and call[1]:
            f, args = call
            if f is builtins.range:
                return []
            if f in (builtins.reversed, builtins.enumerate, builtins.zip, iter):
                return [w for a in args if self.types.of(a) not in (tuple, range)
                        for w in self._walked(a)]
            if f in (dict.items, dict.keys, dict.values) and len(args) == 1:
                return [args[0]]  # (``d.keys()`` made a call of the method of ``dict``)
        if isinstance(d, n.Call) and not d.args and not d.kwargs:
            m = self.defs.get(d.fn.id)
            if isinstance(m, n.GetAttr) and m.name in ("items", "keys", "values"):
                return [m.obj]
        return [it]

    # -- aliasing --------------------------------------------------------------------------

    def roots(self, v: n.Value, seen: set[int] | None = None) -> set[tuple]:
        """Where the object ``v`` comes from: ``("fresh", op)``, ``("param", i)`` or unknown."""
        seen = set() if seen is None else seen
        if v.id in seen:
            return set()
        seen.add(v.id)
        if v.id in self.params:
            return {("param", self.params[v.id])}
        d = self.defs.get(v.id)
        if isinstance(d, n.Const):
            # A number or string is no object to write into; a global container is one.
            return set() if isinstance(d.value, _IMMUTABLE) or d.value is None \
                else {("const", id(d.value))}
        if d is None:
            p = self.parent.get(v.id)
            if isinstance(p, (n.For, n.While)) and v in p.carried_args:
                k = p.carried_args.index(v)
                return self.roots(p.inits[k], seen) | \
                    self.roots(p.body.terminator.values[k], seen)
            if isinstance(p, n.For) and v is p.body.args[0]:
                return {("part", r) for r in self.roots(p.iterable, seen)}
            return {_UNKNOWN}
        if isinstance(d, n.GetItem):
            return {("part", r) for r in self.roots(d.obj, seen)}
        if isinstance(d, n.Unpack) and d.star is None:
            whole = self._structure(d.value, seen)
            k = d.results.index(v)
            if isinstance(whole, tuple):
                part = whole[1][k] if len(whole[1]) == len(d.results) else None
                # (a tuple of the items of several lists is no one object: unknown)
                return part if isinstance(part, set) else {_UNKNOWN}
            return {("part", r) for r in whole}
        if isinstance(d, (n.Build, n.BuildDict)):
            return {("fresh", id(d))}
        if isinstance(d, n.If):
            k = d.results.index(v)
            return self.roots(d.then.terminator.values[k], seen) | \
                self.roots(d.orelse.terminator.values[k], seen)
        if isinstance(d, (n.For, n.While, n.With)):
            k = d.results.index(v)
            return self.roots(d.inits[k], seen) | self.roots(d.body.terminator.values[k], seen)
        if isinstance(d, n.Call):
            is_c, f = self.const(d.fn)
            if is_c and _hashable(f) and f in _IN_PLACE_RESULTS and d.args:
                return self.roots(d.args[0], seen)
            if is_c and _hashable(f) and f in _FRESH_CALLS:
                return {("fresh", id(d))}
            if is_c and f is runtime.keyed_order:
                return {("fresh", id(d))}  # a new list of indices
            if is_c and _hashable(f) and getattr(registry.lookup(f), "fresh", False):
                return {("fresh", id(d))}  # (a rule's helper making a new list)
            if is_c and _hashable(f) and self.types.of(v) is numpy.ndarray and \
                    (rule := registry.lookup(f)) is not None and rule.python is None and \
                    not rule.view:
                return {("fresh", id(d))}  # (a NumPy primitive's new array: no view)
            if is_c and f is runtime.snapshot and len(d.args) == 1:
                # A copy of a container, the value itself otherwise (a number, an object).
                return {("fresh", id(d))} | self.roots(d.args[0], seen)
            m = self.defs.get(d.fn.id)
            if isinstance(m, n.GetAttr) and m.name == "copy" and not d.args:
                return {("fresh", id(d))}
            if is_c and f is operator.mul and len(d.args) == 2 and \
                    {self.types.of(a) for a in d.args} == {list, int}:
                return {("fresh", id(d))}  # ``[0.0] * n``: a new list
        return {_UNKNOWN}

    def _structure(self, v: n.Value, seen: set[int]) -> tuple | set[tuple]:
        """The roots of ``v`` (:meth:`roots`), or, for the item of a loop over ``zip`` or
        ``enumerate`` (or a part of one), ``("tuple", [roots of each entry])``: an item
        of each list zipped (an index is a number)."""
        loop = self.parent.get(v.id)
        if isinstance(loop, n.For) and v is loop.body.args[0]:
            return self._item_structure(loop.iterable, seen)
        d = self.defs.get(v.id)
        if isinstance(d, n.Unpack) and d.star is None:
            whole = self._structure(d.value, seen)
            if isinstance(whole, tuple) and len(whole[1]) == len(d.results):
                return whole[1][d.results.index(v)]
        return self.roots(v, seen)

    def _item_structure(self, it: n.Value, seen: set[int]) -> tuple | set[tuple]:
        """What an item of the iterable ``it`` is, as :meth:`_structure` says."""
        call = self.walking_call(it)
        if call is not None:
            f, args = call
            if f is builtins.enumerate and len(args) in (1, 2):
                return ("tuple", [set(), self._item_structure(args[0], seen)])
            if f is builtins.zip and args:
                return ("tuple", [self._item_structure(a, seen) for a in args])
        return {("part", r) for r in self.roots(it, seen)}

    def may_alias(self, a: n.Value, b: n.Value) -> bool:
        """Whether ``a`` and ``b`` may be one object."""
        if self.immutable(a) or self.immutable(b):
            return False
        ra, rb = self.roots(a), self.roots(b)
        if not ra or not rb:
            return False  # a value made only of numbers and strings is no object
        if ra & rb:
            return True
        if self._unmade_then(a, b) or self._unmade_then(b, a):
            return False
        # An object made here and never stored, captured or passed on is reached only
        # through its own name: it is nothing else. One that did escape is still not a
        # value computed without it (no data path from it, nor an unknown call after
        # which it could come back).
        for v, r, w in ((a, ra, b), (b, rb, a)):
            if r and all(x[0] == "fresh" for x in r):
                if not self.escapes(v):
                    return False
                reach = self.reaches(w, {m.id for m in self._members(v)})
                if reach is False:
                    return False
        # An item of a container made here, into which only objects made here were put,
        # is no object that comes from a parameter (a row of ``c = [[0.0] * n for _ in
        # range(n)]`` is no row of ``a``).
        for r, other in ((ra, rb), (rb, ra)):
            if r and all(x[0] == "part" and x[1][0] == "fresh" and self._holds_own(x[1][1])
                         for x in r) and \
                    all(_innermost(y)[0] == "param" for y in other):
                return False
        # An item read out of a list (at any depth) is not that list (short of a cyclic
        # structure).
        for r, other in ((ra, rb), (rb, ra)):
            if r and all(x[0] == "part" for x in r) and other <= {_innermost(x) for x in r}:
                return False
        if any(x[0] in ("unknown", "part") for x in (*ra, *rb)):
            return True
        return any(x[0] == "param" for x in ra) and any(x[0] == "param" for x in rb)

    def _unmade_then(self, a: n.Value, w: n.Value) -> bool:
        """Whether ``w``, an item or field read, was read where the object ``a`` (made by
        one display or call each time it runs) did not exist yet or was reachable through
        ``a`` alone: ``w`` is read by an op of the region that makes ``a``, before any op
        of that region through which ``a`` escapes (stored, passed on), and not out of
        ``a`` itself. ``row =
        [v / p for v in aug[col]]; aug[col] = row`` in a loop: the row read is an older
        one, never the list being filled."""
        roots = self.roots(a)
        if len(roots) != 1 or next(iter(roots))[0] != "fresh":
            return False
        made = next((o for o in self.ops if id(o) == next(iter(roots))[1]), None)
        read = self.defs.get(w.id)
        if made is None or not isinstance(read, (n.GetItem, n.GetAttr)):
            return False  # (``w`` an item or field read: another question otherwise)
        region = _region_of(made, self)
        if not any(o is made for o in region.ops) or not any(o is read for o in region.ops):
            return False
        members = self._members(a)
        ids = {m.id for m in members}
        if any(v.id in ids for v in read.operands()):
            return False
        at = {id(o): k for k, o in enumerate(region.ops)}
        for k, o in enumerate(region.ops):
            for inner in o.regions():
                for x in n.walk_local(inner):
                    at.setdefault(id(x), k)
        first = len(region.ops)
        for m in members:
            for use in self.uses.get(m.id, []):
                if not self._harmless_use(use, m):
                    if id(use) not in at:
                        return False  # (it escapes outside that region)
                    first = min(first, at[id(use)])
        return at[id(read)] < first

    def _holds_own(self, made: int) -> bool:
        """Whether the container the op of id ``made`` makes holds only objects made here
        (numbers and strings aside) and held by nothing made elsewhere: it is passed to
        nothing that could put another in, and every value put into it (its display's
        items, item writes, ``append``-like methods) is a new object, or none."""
        op = next((o for o in self.ops if id(o) == made), None)
        if op is None or not op.results or self.escapes(op.results[0]):
            return False
        stored = self._stored_into()
        for m in self._members(op.results[0]):
            put = list(stored.get(m.id, ()))
            if m is op.results[0] and isinstance(op, n.Build):
                put += op.items
            for w in put:
                if self.immutable(w):
                    continue
                rw = self.roots(w)
                if not all(x[0] == "fresh" for x in rw) or \
                        any(self._stored_elsewhere(x[1], m) for x in rw):
                    return False
        return True

    def _stored_elsewhere(self, made: int, holder: n.Value) -> bool:
        """Whether the object the op of id ``made`` makes may be reached other than
        through ``holder`` and its own name: a use of it that is not harmless
        (:meth:`_harmless_use`) nor a putting of it into ``holder``."""
        op = next((o for o in self.ops if id(o) == made), None)
        if op is None or not op.results:
            return True
        keep = {m.id for m in self._members(holder)}
        for m in self._members(op.results[0]):
            for use in self.uses.get(m.id, []):
                if self._harmless_use(use, m):
                    continue
                if isinstance(use, n.SetItem) and use.value is m and use.obj.id in keep \
                        and use.index is not m:
                    continue
                if isinstance(use, n.Build) and any(r.id in keep for r in use.results):
                    continue
                if isinstance(use, n.Call) and use.fn is not m and not use.kwargs:
                    method = self.defs.get(use.fn.id)
                    if isinstance(method, n.GetAttr) and method.obj.id in keep and \
                            method.name in MUTATING_METHODS:
                        continue
                return True
        return False

    def reaches(self, w: n.Value, targets: set[int]) -> bool | None:
        """Whether ``w``'s object may come from one of ``targets`` through data flow:
        ``True`` (a path), ``False`` (none) or ``None`` (an unknown call on the way)."""
        seen: set[int] = set()
        work = [w]
        unknown = False
        stored = self._stored_into()
        while work:
            x = work.pop()
            if x.id in seen:
                continue
            seen.add(x.id)
            if x.id in targets:
                return True
            work.extend(stored.get(x.id, ()))
            d = self.defs.get(x.id)
            if d is None:
                p = self.parent.get(x.id)
                if isinstance(p, (n.For, n.While)) and x in p.carried_args:
                    k = p.carried_args.index(x)
                    work += [p.inits[k], p.body.terminator.values[k]]
                elif isinstance(p, n.For):
                    work.append(p.iterable)
                elif p is not None:
                    unknown = True
                continue
            if isinstance(d, n.Const):
                continue
            if isinstance(d, (n.If, n.For, n.While, n.With)):
                k = d.results.index(x)
                for r in d.regions():
                    if r.ops and isinstance(r.terminator, n.Yield) and \
                            k < len(r.terminator.values):
                        work.append(r.terminator.values[k])
                if isinstance(d, (n.For, n.While, n.With)):
                    work.append(d.inits[k])
                continue
            if isinstance(d, n.Call):
                is_c, f = self.const(d.fn)
                if not (is_c and ((_hashable(f) and f in _READERS) or
                                  registry.lookup(f) is not None)):
                    unknown = True
            work.extend(d.operands())
        return None if unknown else False

    def _stored_into(self) -> dict[int, list[n.Value]]:
        """Container value id -> the values stored into it anywhere (displays, item and
        attribute writes, ``append``-like methods)."""
        cache = getattr(self, "_stored", None)
        if cache is not None:
            return cache
        out: dict[int, list[n.Value]] = {}
        for op in self.ops:
            if isinstance(op, (n.SetItem, n.SetAttr)):
                out.setdefault(op.obj.id, []).append(op.value)
            elif isinstance(op, n.Call):
                m = self.defs.get(op.fn.id)
                if isinstance(m, n.GetAttr) and m.name in MUTATING_METHODS:
                    out.setdefault(m.obj.id, []).extend(op.args)
        self._stored = out
        return out

    def escapes(self, v: n.Value) -> bool:
        """Whether the object ``v`` may be reached other than through ``v`` and the values
        that are it through control flow (it is a parameter, or was stored, captured,
        passed to a function or returned)."""
        if any(r[0] != "fresh" for r in self.roots(v)):
            return True
        cache = self._escapes
        key = v.id
        if key in cache:
            return cache[key]
        cache[key] = True  # while deciding (a cycle through control flow)
        out = False
        for m in self._members(v):
            for use in self.uses.get(m.id, []):
                if not self._harmless_use(use, m):
                    out = True
                    break
            if out:
                break
        cache[key] = out
        return out

    def _harmless_use(self, use: n.Op, m: n.Value) -> bool:
        """Whether ``use`` of the object ``m`` leaves it reachable only through ``m``."""
        if isinstance(use, n.GetItem):
            return use.obj is m and use.index is not m
        if isinstance(use, n.SetItem):
            return use.obj is m and use.value is not m and use.index is not m
        if isinstance(use, (n.For, n.While)):
            return not isinstance(use, n.For) or use.iterable is m or m in use.inits
        if isinstance(use, (n.Yield, n.If, n.GetAttr)):
            return True  # a phi, a truth test, a method looked up on it
        if isinstance(use, n.Call) and use.fn is not m:
            is_c, f = self.const(use.fn)
            if is_c and _hashable(f) and f in _INPLACE and use.args and use.args[0] is m:
                return True
            if is_c and ((_hashable(f) and f in _READERS) or registry.lookup(f) is not None):
                return True
            md = self.defs.get(use.fn.id)
            if isinstance(md, n.GetAttr) and md.obj is not m and md.name in READONLY_METHODS:
                return True
        return False

    def _members(self, v: n.Value) -> list[n.Value]:
        """``v`` and the values that are the same object through control flow."""
        out, work, seen = [], [v], set()
        while work:
            x = work.pop()
            if x.id in seen:
                continue
            seen.add(x.id)
            out.append(x)
            for use in self.uses.get(x.id, []):
                if isinstance(use, n.Yield):
                    owner = self._owner_of_yield(use)
                    if owner is not None:
                        k = use.values.index(x)
                        if k < len(owner.results):
                            work.append(owner.results[k])
                        if isinstance(owner, (n.For, n.While)):
                            work.append(owner.carried_args[k])
                elif isinstance(use, (n.For, n.While)) and x in use.inits:
                    k = use.inits.index(x)
                    work += [use.carried_args[k], use.results[k]]
                elif isinstance(use, n.Call):
                    is_c, f = self.const(use.fn)
                    if is_c and _hashable(f) and f in _INPLACE and use.args[0] is x:
                        work.append(use.result)
        return out

    def _owner_of_yield(self, y: n.Yield) -> n.Op | None:
        cache = getattr(self, "_yield_owner", None)
        if cache is None:
            cache = self._yield_owner = {}
            for op in self.ops:
                for r in op.regions():
                    if r.ops and isinstance(r.terminator, n.Yield) and \
                            not isinstance(op, n.MakeFunction):
                        cache[id(r.terminator)] = op
        return cache.get(id(y))

    # -- writes ----------------------------------------------------------------------------

    def changes(self, body: n.Region, xs: n.Value) -> bool:
        """Whether running ``body`` may change the items of the list ``xs``."""
        for op in n.walk_local(body):
            if isinstance(op, n.SetItem):
                if self.may_alias(op.obj, xs):
                    return True
                continue
            if not isinstance(op, n.Call):
                continue
            is_c, f = self.const(op.fn)
            if is_c:
                if _hashable(f) and f in _INPLACE and op.args:
                    if self.may_alias(op.args[0], xs):
                        return True
                    continue
                if registry.lookup(f) is not None or (_hashable(f) and f in _READERS) or \
                        namedtuple_method(f):
                    continue  # primitives leave their arguments alone
                written = [*op.args, *(v for _, v in op.kwargs)]
            else:
                m = self.defs.get(op.fn.id)
                if isinstance(m, n.GetAttr):
                    if self.const(m.obj)[0]:
                        written = [*op.args, *(v for _, v in op.kwargs)]  # a module function
                    elif m.name in _SLOT_METHODS:
                        if self.may_alias(m.obj, xs):
                            return True
                        continue
                    elif m.name in READONLY_METHODS:
                        continue
                    elif m.name in MUTATING_METHODS:
                        # It stores its arguments into its object, which is not the list.
                        continue
                    else:
                        written = [m.obj, *op.args, *(v for _, v in op.kwargs)]
                else:
                    # A function value may write into what it captured, at any depth.
                    written = [op.fn, *op.args, *(v for _, v in op.kwargs)]
            written = [w for w in written if not self.immutable(w)]
            if any(self.may_alias(w, xs) or self.may_hold(w, xs) for w in written):
                return True
        return False

    def writes_items(self, body: n.Region, xs: n.Value) -> bool:
        """Whether running ``body`` may write into an item of the list ``xs`` (an object
        read out of it, as :meth:`roots` knows)."""
        parts = {("part", r) for r in self.roots(xs)}
        for op in n.walk_local(body):
            target = None
            if isinstance(op, (n.SetItem, n.SetAttr)):
                target = op.obj
            elif isinstance(op, n.Call):
                is_c, f = self.const(op.fn)
                m = self.defs.get(op.fn.id)
                if is_c and _hashable(f) and f in _INPLACE and op.args:
                    target = op.args[0]
                elif isinstance(m, n.GetAttr) and m.name in MUTATING_METHODS:
                    target = m.obj
            if target is not None and not self.immutable(target) and \
                    self.roots(target) & (parts | {_UNKNOWN}):
                return True
        return False

    def may_hold(self, w: n.Value, xs: n.Value) -> bool:
        """Whether the object ``xs`` may be reached from inside ``w`` (stored into it, or
        into something stored into it): a callee given ``w`` could then change ``xs``."""
        targets = {m.id for m in self._members(xs)}
        stored = self._stored_into()
        seen: set[int] = set()
        work = list(self._members(w))
        while work:
            x = work.pop()
            if x.id in seen:
                continue
            seen.add(x.id)
            for v in stored.get(x.id, ()):
                if v.id in targets:
                    return True
                work.extend(self._members(v))
        if any(r[0] != "fresh" for r in self.roots(w)):
            # Came from outside, or out of a container: it holds what the list was stored
            # into only if the list was stored anywhere at all.
            return any(v.id in targets for vs in stored.values() for v in vs)
        return False


def _rewrite(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any],
             state: _State) -> None:
    """Turn the ``For`` ``op`` into the equivalent index ``While``, in place of it."""
    kind, seqs, start = lists
    region = _region_of(op, state)
    at = region.ops.index(op)
    loc = op.loc
    pre: list[n.Op] = []
    zero = _const(0, pre, loc)
    k = n.Value("k", loc)
    carried = [n.Value(a.hint, a.loc) for a in op.carried_args]
    # Condition: every sequence still has an item at k.
    cond_ops: list[n.Op] = []
    test: n.Value | None = None
    for xs, _ in seqs:
        length = n.Call(_const(builtins.len, cond_ops, loc, "len"), [xs], [], [n.Value()],
                        loc=loc)
        less = n.Call(_const(operator.lt, cond_ops, loc, "operator.lt"), [k, length.result],
                      [], [n.Value()], loc=loc)
        cond_ops += [length, less]
        if test is None:
            test = less.result
        else:
            both = n.Call(_const(operator.and_, cond_ops, loc, "operator.and_"),
                          [test, less.result], [], [n.Value()], loc=loc)
            cond_ops.append(both)
            test = both.result
    cond_ops.append(n.Yield([test], loc=loc))
    # Body: read the item(s) at k, step k, then the original body.
    head, item = _item_reads(op, lists, k, state)
    one = _const(1, head, loc)
    step = n.Call(_const(operator.add, head, loc, "operator.add"), [k, one], [],
                  [n.Value("k")], loc=loc)
    head.append(step)
    old_item = op.body.args[0]
    body_ops = head + op.body.ops
    mapping = {old_item.id: item, **{a.id: c for a, c in zip(op.carried_args, carried)}}
    body = n.Region([], body_ops)  # a while loop's regions read its ``args``
    substitute(body, mapping)
    body.terminator.values.insert(0, step.result)  # type: ignore[attr-defined]
    args = [k, *carried]
    cond = n.Region([], cond_ops)
    loop = n.While([zero, *op.inits], args, cond, body,
                   [n.Value(), *op.results], [f + 1 for f in op.exit_flags], loc=loc)
    region.ops[at:at + 1] = [*pre, loop]
    _drop_iterable(op, op.iterable, kind, region, state)


def _const(value: Any, out: list[n.Op], loc: Any, origin: str | None = None) -> n.Value:
    c = n.Const(value, [n.Value()], origin, loc=loc)
    out.append(c)
    return c.result


def _item_reads(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any], k: n.Value,
                state: _State) -> tuple[list[n.Op], n.Value]:
    """The ops reading the item of the step at index ``k`` (``xs[k]``, ``(s + k, xs[k])``,
    ``(a[k], b[k])``), with the targets of an unpacking that opens the body made the parts
    themselves; and the value that stands for the loop's item."""
    kind, seqs, start = lists
    loc = op.loc
    head: list[n.Op] = []
    items = []
    for xs, indices in seqs:
        at = k
        if indices is not None:  # (the indices of a slice the loop walked: ``_index_for``)
            j = n.GetItem(indices, k, [n.Value("j")], loc=loc)
            head.append(j)
            at = j.result
        g = n.GetItem(xs, at, [n.Value()], loc=loc)
        head.append(g)
        items.append(g.result)
    if kind == "list":
        item = items[0]
    else:
        if kind == "enumerate":
            if start is None:
                index = k
            else:
                add = n.Call(_const(operator.add, head, loc, "operator.add"), [start, k], [],
                             [n.Value()], loc=loc)
                head.append(add)
                index = add.result
            parts = [index, items[0]]
        else:
            parts = items
        first = op.body.ops[0] if op.body.ops else None
        if isinstance(first, n.Unpack) and first.value is op.body.args[0] and \
                first.star is None and len(first.results) == len(parts) and \
                len(state.uses.get(op.body.args[0].id, [])) == 1:
            # ``for i, x in enumerate(xs)``: the parts are the targets, no tuple between.
            unpacked = {r.id: p for r, p in zip(first.results, parts)}
            op.body.ops.remove(first)
            substitute(op.body, unpacked)
            for r, p in zip(first.results, parts):
                if p.hint is None:
                    p.hint = r.hint
            item = n.Value()
        else:
            tup = n.Build("tuple", parts, [n.Value()], loc=loc)
            head.append(tup)
            item = tup.result
    if item.hint is None:
        item.hint = op.body.args[0].hint
    return head, item


def _drop_iterable(op: n.Op, iterable: n.Value, kind: str, region: n.Region,
                   state: _State) -> None:
    """``enumerate(xs)`` / ``zip(xs, ys)`` made for the loop ``op`` alone is not needed
    once the loop reads its items by index."""
    d = state.defs.get(iterable.id)
    if kind != "list" and isinstance(d, n.Call) and \
            state.uses.get(iterable.id, []) == [op] and d in region.ops:
        region.ops.remove(d)


def index_float_iterations(fn: n.Function, types: Types,
                           active: Callable[[n.Value], bool]) -> bool:
    """Rewrite, in place, each ``for`` loop of ``fn`` over an active list of floats (alone,
    through ``enumerate`` or in a ``zip`` of lists and tuples) that its body does not
    change into a loop over ``range`` reading the items by index; return whether anything
    changed. Reverse mode then adds each item's adjoint into the list's own adjoint where
    the item is read (``xs_bar[i] += g``, a list of floats the loop owns), rather than
    collecting the items' adjoints and regrouping them afterwards (``zip``'s columns)."""
    loops = [op for op in n.walk_local(fn.body) if isinstance(op, n.For)]
    if not loops:
        return False
    state = _State(fn, types)
    changed = False
    for op in loops:
        lists = state.iterated_lists(op)
        if lists is None or not any(
                active(xs) and types.items.get(xs.id) is float for xs, _ in lists[1]):
            continue
        if any(state.changes(op.body, xs) for xs, _ in lists[1]):
            continue  # (``index_changed_iterations`` made those index loops already)
        _index_for(op, lists, state)
        changed = True
    return changed


def index_extremes(fn: n.Function, types: Types, active: Callable[[n.Value], bool]) -> bool:
    """Rewrite, in place, each ``max(xs)`` or ``min(xs)`` of an active list of floats into
    ``xs[first_extreme(xs, max)]``: the item it returns read by its index, so that reverse
    mode adds the adjoint into that one entry of ``xs``'s (``xs_bar[k] += y_bar``) like any
    other read by index, not through a list of ``None`` but one. Return whether anything
    changed."""
    consts = {op.result.id: op.value for op in n.walk_local(fn.body) if isinstance(op, n.Const)}

    def rewrite(op: n.Op) -> list[n.Op] | None:
        extreme = consts.get(op.fn.id) if isinstance(op, n.Call) else None
        if not ((extreme is builtins.max or extreme is builtins.min) and
                len(op.args) == 1 and not op.kwargs and not op.starred and  # type: ignore
                types.of(op.args[0]) is list and  # type: ignore[attr-defined]
                types.items.get(op.args[0].id) is float and  # type: ignore[attr-defined]
                active(op.args[0])):  # type: ignore[attr-defined]
            return None
        xs, loc = op.args[0], op.loc  # type: ignore[attr-defined]
        new: list[n.Op] = []
        pick = n.Call(_const(runtime.first_extreme, new, loc, "first_extreme"),
                      [xs, _const(extreme, new, loc, extreme.__name__)], [],
                      [n.Value("best")], loc=loc)
        return [*new, pick, n.GetItem(xs, pick.result, op.results, loc=loc)]

    return expand_ops(fn.body, rewrite)


def _index_for(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any],
               state: _State) -> None:
    """Turn the ``For`` ``op`` over sequences its body does not change into ``for k in
    range(n)`` reading the items at ``k`` (``n`` the shortest length), in place. A
    sequence given as ``(xs, s)`` with ``s`` a slice is ``xs[s]`` (``reversed(xs)`` where
    ``s`` is :data:`REVERSED`), read at the indices ``range(len(xs))[s]``
    (:meth:`_State.slice_of`)."""
    kind, seqs, start = lists
    region = _region_of(op, state)
    at = region.ops.index(op)
    loc = op.loc
    pre: list[n.Op] = []
    size: n.Value | None = None
    read: list[tuple[n.Value, Any]] = []
    for xs, part in seqs:
        length = n.Call(_const(builtins.len, pre, loc, "len"), [xs], [], [n.Value("n")],
                        loc=loc)
        pre.append(length)
        if part is REVERSED:
            back = _const(-1, pre, loc)
            whole = n.BuildSlice(None, None, back, [n.Value()], loc=loc)
            pre.append(whole)
            part = whole.result
        if part is not None:
            # A slice ``xs[part]``: the loop walks ``range(len(xs))[part]``, its indices.
            every = n.Call(_const(builtins.range, pre, loc, "range"), [length.result], [],
                           [n.Value()], loc=loc)
            indices = n.GetItem(every.result, part, [n.Value("at")], loc=loc)
            length = n.Call(_const(builtins.len, pre, loc, "len"), [indices.result], [],
                            [n.Value("n")], loc=loc)
            pre += [every, indices, length]
            part = indices.result
        read.append((xs, part))
        if size is None:
            size = length.result
        else:
            least = n.Call(_const(builtins.min, pre, loc, "min"), [size, length.result], [],
                           [n.Value("n")], loc=loc)
            pre.append(least)
            size = least.result
    steps = n.Call(_const(builtins.range, pre, loc, "range"), [size], [], [n.Value()],
                   loc=loc)
    pre.append(steps)
    k = n.Value("i", loc)
    head, item = _item_reads(op, (kind, read, start), k, state)
    old_item = op.body.args[0]
    op.body.ops[0:0] = head
    substitute(op.body, {old_item.id: item})
    op.body.args[0] = k
    iterable, op.iterable = op.iterable, steps.result
    region.ops[at:at] = pre
    _drop_iterable(op, iterable, kind, region, state)


def _region_of(op: n.Op, state: _State) -> n.Region:
    """The region holding ``op`` (searched from the top: an op with no results, a loop
    holding it, is in no map of definitions)."""
    regions = [state.top]
    while regions:
        r = regions.pop()
        if any(o is op for o in r.ops):
            return r
        for o in r.ops:
            if not isinstance(o, n.MakeFunction):
                regions.extend(o.regions())
    return state.top


def _innermost(root: tuple) -> tuple:
    """The root a chain of ``("part", ...)`` roots was read out of."""
    while root[0] == "part":
        root = root[1]
    return root


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
