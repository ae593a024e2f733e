"""Where each container comes from, and what may change it.

:class:`Objects` answers, for lists, dicts, objects and arrays, by where each comes from
(a parameter, an op that makes a new one, an item of another): two values may be one
object unless one is made in this function (a display, ``list(...)``) and the other cannot
come from it (it was never stored or passed on, or no data path leads from it to the
other), or one is an item read out of the other. :func:`seen_only_through_its_slot`
decides whether an array a list holds may be updated by slot out of place. Last, a few
questions the transforms ask of the code they generated: is a list only read there
(:func:`only_read`, :func:`never_changed`), may anything between two ops change a field
(:func:`unchanged_between`).
"""

from __future__ import annotations

import builtins
import copy
import operator
import types as pytypes
from collections.abc import Callable, Mapping
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.arrays import IMMUTABLE, SCALAR_CLASSES
from wengert.analysis.effects.vocabulary import (
    DIFFERENTIABLE_INPLACE,
    INPLACE_OPERATORS,
    LIST_INPLACE,
    MUTATING_METHODS,
    READONLY_METHODS,
    SLOT_METHODS,
    is_inplace_operator,
)
from wengert.analysis.types import Types, subclass
from wengert.ir import nodes as n
from wengert.ir.uses import Places, free_uses
from wengert.objects import hashable, namedtuple_method
from wengert.rules import registry

# -- objects: where each container comes from --------------------------------------------------

#: Calls that make a new list or dict sharing no slots with their arguments.
_FRESH_CALLS = frozenset({list, dict, set, sorted, copy.copy, copy.deepcopy})
#: Builtins that only read what they are given.
_ONLY_READING = frozenset({len, sum, min, max, enumerate, zip, reversed, sorted, iter, list,
                           tuple, range, any, all, abs, isinstance, print, repr, str, float,
                           int, bool, round, dict, set, frozenset, map, filter})
#: A root not known (:meth:`Objects.roots`).
_UNKNOWN = ("unknown",)


class Objects:
    """Where each object (a list, a dict, an object, an array) of one function comes from
    (:meth:`roots`: a parameter, an op that makes a new one, a part of another), and the
    questions asked of it: may two values be one object (:meth:`may_alias`), may an object
    reach another (:meth:`may_hold`, :meth:`reaches`), has it escaped (:meth:`escapes`),
    may a region change a list or the objects it holds (:meth:`changes`,
    :meth:`writes_items`)."""

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
        return subclass(t, SCALAR_CLASSES) is True or \
            (self.const(v)[0] and isinstance(self.const(v)[1], SCALAR_CLASSES))

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
            return set() if isinstance(d.value, SCALAR_CLASSES) or d.value is None \
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
            if is_c and hashable(f) and f in INPLACE_OPERATORS and d.args:
                return self.roots(d.args[0], seen)
            if is_c and hashable(f) and f in _FRESH_CALLS:
                return {("fresh", id(d))}
            if is_c and f is runtime.keyed_order:
                return {("fresh", id(d))}  # a new list of indices
            if is_c and hashable(f) and getattr(registry.lookup(f), "fresh", False):
                return {("fresh", id(d))}  # (a rule's helper making a new list)
            if is_c and hashable(f) and self.types.of(v) is numpy.ndarray and \
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
        region = region_of(made, self)
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
                if not (is_c and ((hashable(f) and f in _ONLY_READING) or
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
            if is_c and hashable(f) and f in LIST_INPLACE and use.args and use.args[0] is m:
                return True
            if is_c and ((hashable(f) and f in _ONLY_READING) or registry.lookup(f) is not None):
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
                    if is_c and hashable(f) and f in LIST_INPLACE and use.args[0] is x:
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
                if hashable(f) and f in LIST_INPLACE and op.args:
                    if self.may_alias(op.args[0], xs):
                        return True
                    continue
                if registry.lookup(f) is not None or (hashable(f) and f in _ONLY_READING) or \
                        namedtuple_method(f):
                    continue  # primitives leave their arguments alone
                written = [*op.args, *(v for _, v in op.kwargs)]
            else:
                m = self.defs.get(op.fn.id)
                if isinstance(m, n.GetAttr):
                    if self.const(m.obj)[0]:
                        written = [*op.args, *(v for _, v in op.kwargs)]  # a module function
                    elif m.name in SLOT_METHODS:
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
                if is_c and hashable(f) and f in LIST_INPLACE and op.args:
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


def region_of(op: n.Op, state: Objects) -> n.Region:
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


# -- lists only read, in generated code -------------------------------------------------------
# (The transforms ask these of the code they generated, whose values are their own.)

#: Calls that read a list given to them and leave it as it was.
LIST_READERS = (len, list, tuple, sum, min, max, zip, enumerate, reversed, sorted, iter)


def only_read(xs: n.Value, vjp_fn: n.Function, loop: n.Op, after: bool = False) -> bool:
    """Whether the forward code of ``vjp_fn`` only reads the list ``xs`` (indexes it,
    iterates it, gives it to :data:`LIST_READERS`) from the top-level ``loop`` on (``after``
    it, when true): the values here are the transform's own, so this looks at the code
    itself rather than at the primal's analyses."""
    consts = {op.result.id: op.value for op in n.walk(vjp_fn.body) if isinstance(op, n.Const)}
    top = vjp_fn.body.ops
    regions = [n.Region([], top[top.index(loop) + after:])]
    while regions:
        region = regions.pop()
        for op in region.ops:
            if isinstance(op, n.MakeFunction):
                continue  # the pullback: it reads the forward's values only
            regions.extend(op.regions())
            if all(v is not xs for v in op.operands()):
                continue
            if isinstance(op, n.GetItem) and op.obj is xs and op.index is not xs or \
                    isinstance(op, n.For) and op.iterable is xs and xs not in op.inits:
                continue
            if isinstance(op, n.Call) and op.fn is not xs and not op.kwargs and \
                    hashable(f := consts.get(op.fn.id)) and f in LIST_READERS:
                continue
            return False
    return True


def unchanged_between(type_of: Callable[[n.Value], Any], a: n.Op, b: n.Op, region: n.Region
                      ) -> bool:
    """Whether nothing between the ops ``a`` and ``b`` of ``region`` (``a`` first) can
    change an object's field: constants, reads, and pure calls of numbers only."""
    ops = region.ops
    consts = {o.result.id: o.value for o in ops if isinstance(o, n.Const)}
    for op in ops[ops.index(a) + 1:ops.index(b)]:
        if isinstance(op, (n.Const, n.GetAttr, n.GetItem)):
            continue
        f = consts.get(op.fn.id, consts) if isinstance(op, n.Call) else consts
        if f is consts or not hashable(f) or not registry.is_pure(f) or \
                op.kwargs or op.starred or \
                any(type_of(x) not in (float, int, bool) for x in op.args):
            return False
    return True


def never_changed(xs: n.Value, fn: n.Function, pushed: set[int]) -> bool:
    """Whether the forward code of the VJP ``fn`` only reads ``xs`` (indexes it, iterates
    it, gives it to :data:`LIST_READERS`, saves it in a loop record: an op of ``pushed``,
    by ``id``): no op of its own can change it between the forward and the pullback."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    pullback = next((v.id for op in fn.body.ops if isinstance(op, n.Return)
                     for v in [op.value]), None)
    regions = [fn.body]
    while regions:
        for op in regions.pop().ops:
            if isinstance(op, n.MakeFunction):
                if pullback is None or not any(
                        isinstance(o, n.Build) and op.result in o.items and
                        o.result.id == pullback for o in fn.body.ops) and \
                        any(v is xs for v in free_uses(op.func.body)):
                    return False
                continue  # (the pullback reads the forward's values only)
            regions.extend(op.regions())
            if not reads_only(op, xs, consts, pushed):
                return False
    return True


def reads_only(op: n.Op, xs: n.Value, consts: dict[int, object], pushed: set[int]) -> bool:
    """Whether ``op`` leaves the list ``xs`` as it is: it does not name it, indexes it,
    iterates it, gives it to one of :data:`LIST_READERS` or saves it in a loop record (an
    op of ``pushed``)."""
    if all(v is not xs for v in op.operands()):
        return True
    return isinstance(op, n.GetItem) and op.obj is xs and op.index is not xs or \
        isinstance(op, n.For) and op.iterable is xs and xs not in op.inits or \
        isinstance(op, n.Build) and id(op) in pushed or \
        isinstance(op, n.Call) and op.fn is not xs and not op.kwargs and \
        hashable(f := consts.get(op.fn.id)) and f in LIST_READERS


# -- an item updated in place and written back -------------------------------------------------


def seen_only_through_its_slot(fn: n.Function, types: Types, op: n.Call, read: n.GetItem,
                               item_check: Callable[[n.Value], bool] | None = None) -> bool:
    """Whether the array the in-place operator ``op`` changes, read out of the list or
    dict ``read.obj`` by ``read`` (``params[i] -= lr * g``, written back into the slot
    after), is seen after ``op`` through that slot alone: the container was made here by a
    display, holds arrays made here that no other name holds, is given to nothing that
    could keep one (a closure, another container), and no value read out of it before
    ``op`` (an item, a view of one, what a call given the container returns) is used after
    ``op`` (or in a later step of a loop around both it was not made in). Then ``op`` may
    make a new array instead: what everything reads afterwards is the same. ``item_check``,
    if given, must accept each array the container was given."""
    objs = Objects(fn, types)
    places = Places(fn)
    c = read.obj
    roots = objs.roots(c)
    if not roots or any(r[0] != "fresh" for r in roots):
        return False  # (a parameter's, a global's, a part of another object)
    made = [o for o in objs.ops if ("fresh", id(o)) in roots]
    if any(not isinstance(o, (n.Build, n.BuildDict)) for o in made):
        return False  # (``list(xs)``: items shared with ``xs``)
    members = objs._members(c)
    names = {m.id for m in members}
    made_ids = {id(o) for o in made}

    def stores(u: n.Op, w: n.Value) -> bool:
        """Whether ``u`` only puts ``w`` into the container."""
        if isinstance(u, (n.Build, n.BuildDict)):
            return id(u) in made_ids
        if isinstance(u, n.SetItem):
            return u.obj.id in names and u.value is w and u.index is not w
        if isinstance(u, n.Call) and u.fn is not w and not u.kwargs:
            m = objs.defs.get(u.fn.id)
            return isinstance(m, n.GetAttr) and m.obj.id in names and \
                m.name in ("append", "insert")
        return False

    def item_update(w: n.Value) -> bool:
        """Whether ``w`` is an update of an item of the container by an operator, in place
        or not (one made a new array already), stored back alone: it keeps the item's
        object, or is a new array of the item's kind."""
        d = objs.defs.get(w.id)
        src = objs.defs.get(d.args[0].id) if isinstance(d, n.Call) and d.args else None
        f = objs.const(d.fn)[1] if isinstance(d, n.Call) else None
        return (is_inplace_operator(f) or hashable(f) and f in _ITEM_ARITHMETIC) and \
            isinstance(src, n.GetItem) and src.obj.id in names and \
            all(stores(u, w) for u in objs.uses.get(w.id, ()))

    def defined_in(v: n.Value) -> frozenset[int]:
        d = objs.defs.get(v.id)
        if d is not None:
            return places.loops.get(id(d), frozenset())
        p = objs.parent.get(v.id)  # (a region's argument: inside its op)
        return places.loops.get(id(p), frozenset()) | {id(p)} if p is not None else \
            frozenset()

    # What the container holds: arrays made here, named by nothing else.
    put = [w for o in made for w in (o.items if isinstance(o, n.Build) else o.values)]
    stored = objs._stored_into()
    put += [w for m in members for w in stored.get(m.id, ())]
    for w in put:
        if item_update(w):
            continue
        d = objs.defs.get(w.id)
        f = objs.const(d.fn)[1] if isinstance(d, n.Call) else None
        # (a copy, or what arithmetic makes: ``np.asarray``, ``np.reshape`` may be views)
        fresh = all(r[0] == "fresh" for r in objs.roots(w)) or \
            isinstance(d, n.Call) and len(d.args) == 1 and not d.kwargs and \
            not d.starred and (f is numpy.copy or f is numpy.array)
        uses = objs.uses.get(w.id, ())
        if not fresh or types.of(w) is not numpy.ndarray or len(uses) != 1 or \
                item_check is not None and not item_check(w) or \
                not stores(uses[0], w) or \
                places.loops.get(id(uses[0]), frozenset()) - defined_in(w):
            return False  # (or one array in two slots: stored twice, or in a loop)

    at, around = places.order[id(op)], places.loops[id(op)]

    def after(u: n.Op, v: n.Value) -> bool:
        """Whether ``u``, reading ``v``, may run after ``op`` changed the array."""
        where = places.order.get(id(u))
        return where is None or where > at or \
            bool(places.loops[id(u)] & around - defined_in(v))

    # Values that may be an item of it (or a view of one): none read after ``op``.
    held: list[n.Value] = []
    for m in members:
        for u in objs.uses.get(m.id, ()):
            if isinstance(u, (n.GetItem, n.Unpack)) and (
                    u.obj if isinstance(u, n.GetItem) else u.value) is m:
                held.extend(u.results)
            elif isinstance(u, n.For) and u.iterable is m:
                held.append(u.body.args[0])
            elif isinstance(u, n.SetItem) and u.obj is m and u.value is not m:
                continue
            elif isinstance(u, (n.Yield, n.For, n.While, n.If, n.Return)):
                continue  # (the container itself, under the names of control flow)
            elif isinstance(u, n.GetAttr) and u.obj is m:
                held.extend(r for call in objs.uses.get(u.result.id, ())
                            if isinstance(call, n.Call) for r in call.results)
            elif isinstance(u, n.Call) and objs.const(u.fn)[1] is len:
                continue
            elif isinstance(u, n.Call) and m is not u.fn and _rule_call(objs, u):
                held.extend(u.results)  # (a rule may return an item, or a view of one)
            else:
                return False  # (captured, stored elsewhere, given to a function that may
                # keep an item: it may come back)
    seen: set[int] = set()
    while held:
        v = held.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        d = objs.defs.get(v.id)
        # (read out of the container after ``op``: what the slot holds then, whichever
        # object that is; only carried on to a later step may it be an older one)
        later = d is not None and places.order.get(id(d), -1) > at
        for u in objs.uses.get(v.id, ()):
            if u is op or isinstance(u, n.SetItem) and u.value is v and u.obj.id in names:
                continue
            if not later and after(u, v) or isinstance(u, n.MakeFunction) or \
                    isinstance(u, (n.SetItem, n.SetAttr)) and u.value is v or \
                    isinstance(u, n.Call) and not _rule_call(objs, u):
                return False  # (read after; or kept by a closure, another object, a callee)
            if isinstance(u, n.For) and u.iterable is v:
                held.append(u.body.args[0])  # (its rows: views)
                continue
            f = objs.const(u.fn)[1] if isinstance(u, n.Call) else None
            if isinstance(u, (n.GetItem, n.GetAttr, n.Unpack, n.Build, n.BuildDict, n.If)) or \
                    isinstance(u, n.Call) and not _makes_new_array(f):
                held.extend(u.results)  # (what may be it, a view of it, or hold it)
            elif isinstance(u, n.Yield):
                owner = objs._owner_of_yield(u)
                if owner is not None:
                    k = u.values.index(v)
                    held.extend(owner.results[k:k + 1])
                    if isinstance(owner, (n.For, n.While)):
                        held.extend(owner.carried_args[k:k + 1])
            elif isinstance(u, (n.For, n.While)) and v in u.inits:
                k = u.inits.index(v)
                held += [u.carried_args[k], u.results[k]]
    return True


#: Operators an item update may be written with, not in place (``c[k] = c[k] - v``).
_ITEM_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.truediv,
                              operator.pow})


def _rule_call(objs: Objects, call: n.Call) -> bool:
    """Whether ``call`` calls a function with a rule (which keeps nothing it is given)."""
    is_c, f = objs.const(call.fn)
    return is_c and hashable(f) and registry.lookup(f) is not None


def _makes_new_array(f: Any) -> bool:
    """Whether ``f`` is a primitive that returns a new array, never a view of or one of its
    arguments (``np.reshape``, ``np.asarray``, which have Python definitions, may)."""
    rule = registry.lookup(f) if hashable(f) else None
    return rule is not None and rule.python is None and not rule.view and \
        not is_inplace_operator(f)


def write_targets(op: n.Op, defs: Mapping[int, n.Op], type_of: Callable[[n.Value], Any],
                  written: Callable[[Any], Any] | None) -> list[n.Value]:
    """The objects ``op`` writes into, under every spelling: ``x[k] = v``, ``x.a = v``, a
    mutating method, an in-place operator on a mutable object, a call of a user function
    that writes into the arguments it is given (``written``: the parameters it may write
    into)."""
    if isinstance(op, (n.SetItem, n.SetAttr)):
        return [op.obj]
    if not isinstance(op, n.Call):
        return []
    d = defs.get(op.fn.id)
    if isinstance(d, n.GetAttr) and d.name in MUTATING_METHODS:
        return [d.obj]
    if not isinstance(d, n.Const) or not hashable(d.value):
        return []
    if d.value in DIFFERENTIABLE_INPLACE and op.args and \
            type_of(op.args[0]) not in (None, *IMMUTABLE):
        return [op.args[0]]
    if isinstance(d.value, pytypes.FunctionType) and written is not None and \
            registry.lookup(d.value) is None:
        into = written(d.value)
        return [a for i, a in enumerate(op.args) if i in into]
    return []


def is_writeback(op: n.Op, defs: Mapping[int, n.Op]) -> bool:
    """Whether ``op`` is ``xs[i] = p`` for a ``p`` read as ``xs[i]`` (or ``o.f = p`` for a
    ``p`` read as ``o.f``): it puts back the object the place holds, storing nothing new
    (a write-back, or the user's own)."""
    d = defs.get(op.value.id) if isinstance(op, (n.SetItem, n.SetAttr)) else None
    if isinstance(d, n.GetAttr):
        return isinstance(op, n.SetAttr) and d.obj is op.obj and d.name == op.name
    return isinstance(d, n.GetItem) and isinstance(op, n.SetItem) and d.obj is op.obj and \
        d.index is op.index
