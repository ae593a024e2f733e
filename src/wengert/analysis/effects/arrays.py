"""The storage of arrays: which values share memory, and what each op may write.

Storage is grouped by a union-find over value ids:

- *views*: a basic index of an array (``y[1:]``, ``y[i]`` giving a row, where ``indexed``),
  a view attribute (``y.T``, ``y.real``), a view primitive (``reshape``, ``ravel``,
  ``np.asarray``, ``transpose``, ...: ``registry.mark_view``), the pieces of ``np.split``,
  a row a loop over an array gets;
- *one object under several names*: an in-place operator's result and its first operand,
  a loop's carried value, its initial value and its result, the results of ``if`` arms.

:class:`Effects` (built by :func:`effects`) answers the questions the transforms ask of
them: may two values share storage, may an op write into a value's storage, may a write
after one op reach a value (a residual of the pullback is then copied). Also here: the
types whose values nothing can write into.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable, Iterable
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.vocabulary import (
    MASKS,
    VIEW_ATTRIBUTES,
    WRITING_METHODS,
    is_inplace_operator,
)
from wengert.analysis.types import FLOAT_OR_FLOAT64, INT_OR_FLOAT, Types
from wengert.ir import nodes as n
from wengert.ir.uses import Places
from wengert.objects import hashable
from wengert.rules import registry, shapes

#: Scalar types: a value of one is never written into and holds nothing that is.
SCALAR_TYPES = frozenset({float, int, bool, str, bytes, complex, type(None), range,
                          numpy.float64, numpy.float32, numpy.int64, numpy.bool_,
                          FLOAT_OR_FLOAT64, INT_OR_FLOAT})

#: Types whose values nothing can write into (a tuple may still hold a list that is).
IMMUTABLE = SCALAR_TYPES | frozenset({tuple, frozenset})

#: The classes of :data:`SCALAR_TYPES`, for ``isinstance`` (values holding nothing
#: writable, at any depth).
SCALAR_CLASSES = tuple(t for t in SCALAR_TYPES if isinstance(t, type))

#: The classes of values nothing is taken to write into: :data:`IMMUTABLE`'s, and the
#: modules, functions and classes a function reads as constants.
UNWRITTEN_CLASSES = tuple(t for t in IMMUTABLE if isinstance(t, type)) + (
    pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType, type)

#: The classes of :data:`IMMUTABLE` (numbers, strings, tuples): an argument of one is
#: never changed through, so nothing of it is copied before a derivative runs.
IMMUTABLE_CLASSES = tuple(t for t in IMMUTABLE if isinstance(t, type))

#: Values a view primitive given them makes a new array of (NumPy reads a list's numbers).
_NO_MEMORY = frozenset({list, tuple, float, int, bool, numpy.float64})

def is_immutable(t: Any) -> bool:
    """Whether a value of type ``t`` (of the type lattice) can never be written into."""
    return t in IMMUTABLE or isinstance(t, type) and issubclass(t, (int, float, str, bytes))


Place = tuple[int, frozenset[int]]


def reaches(where: Place | None, at: Place) -> bool:
    """Whether an op placed at ``where`` (``None``: unknown) may run at or after the op
    placed at ``at``: later in program order, or in a loop around both (the next
    iteration's)."""
    return where is None or where[0] >= at[0] or bool(where[1] & at[1])


# -- the analysis ----------------------------------------------------------------------------


class Effects:
    """The effects of one function: the writes of each op and the groups of values that
    share storage (see the module docstring). Built by :func:`effects`."""

    def __init__(self, fn: n.Function, places: Places) -> None:
        self.fn = fn
        self.places = places
        self._parent: dict[int, int] = {}
        self._same: dict[int, int] = {}
        #: As ``_parent``, with the values that may be views where types are not known
        #: (``a[0]`` of an array of unknown axes: a row, or a number): what copies ask.
        self._loose: dict[int, int] = {}
        #: Each write: the op and the value it writes into (by that name).
        self.writes: list[tuple[n.Op, n.Value]] = []
        self._written: dict[int, list[n.Op]] = {}
        self._groups: dict[int, list[int]] | None = None
        self._loose_groups: dict[int, list[int]] | None = None
        self._objects: dict[int, list[int]] | None = None

    # union-find --------------------------------------------------------------------------

    @staticmethod
    def _find(v: int, sets: dict[int, int]) -> int:
        while sets.get(v, v) != v:
            sets[v] = sets.get(sets[v], sets[v])
            v = sets[v]
        return v

    def join(self, a: n.Value, b: n.Value, one: bool = False, maybe: bool = False) -> None:
        """Record that ``a`` shares storage with ``b`` (``one``: they are one object;
        ``maybe``: it may, where types are not known)."""
        self._loose[self._find(a.id, self._loose)] = self._find(b.id, self._loose)
        self._groups = self._loose_groups = None
        if maybe:
            return
        self._parent[self._find(a.id, self._parent)] = self._find(b.id, self._parent)
        if one:
            self._same[self._find(a.id, self._same)] = self._find(b.id, self._same)
            self._objects = None

    def add_write(self, op: n.Op, target: n.Value) -> None:
        self.writes.append((op, target))
        self._written.setdefault(target.id, []).append(op)

    # queries -----------------------------------------------------------------------------

    def shares_storage(self) -> bool:
        """Whether any two values share storage."""
        return bool(self._parent)

    def may_alias(self, a: n.Value, b: n.Value) -> bool:
        """Whether ``a`` and ``b`` may share storage (one may be a view of the other)."""
        return a.id == b.id or \
            self._find(a.id, self._parent) == self._find(b.id, self._parent)

    def same_object(self, a: n.Value, b: n.Value) -> bool:
        """Whether ``a`` and ``b`` are one object under two names."""
        return a.id == b.id or self._find(a.id, self._same) == self._find(b.id, self._same)

    def one_object(self, ids: Iterable[int]) -> None:
        """Record that the values of ``ids`` are one object (the reads of one slot of a
        holder whose items are written into: ``transforms/vjp_items.py``)."""
        ids = list(ids)
        for a, b in zip(ids, ids[1:]):
            for sets in (self._loose, self._parent, self._same):
                sets[self._find(a, sets)] = self._find(b, sets)
        self._groups = self._loose_groups = self._objects = None

    def members(self, v: n.Value, loose: bool = False) -> list[int]:
        """The ids of the values sharing storage with ``v`` (``v`` included); ``loose``:
        with those that may, where types are not known."""
        return self._members(v.id, self._loose if loose else self._parent,
                             "_loose_groups" if loose else "_groups")

    def names(self, v: n.Value) -> list[int]:
        """The ids of the names of the object ``v`` (``v`` included): not its views."""
        return self._members(v.id, self._same, "_objects")

    def _members(self, vid: int, sets: dict[int, int], cache: str) -> list[int]:
        groups = getattr(self, cache)
        if groups is None:
            groups = {}
            for x in list(sets):
                groups.setdefault(self._find(x, sets), []).append(x)
            for root, ids in groups.items():
                if root not in ids:
                    ids.append(root)
            setattr(self, cache, groups)
        return groups.get(self._find(vid, sets), [vid])

    def written(self, *vs: n.Value) -> list[n.Op]:
        """The ops that write into the objects ``vs`` under any of their names (not
        through a view of them): item and attribute stores, in-place operators, methods
        that change their object."""
        ids = dict.fromkeys(m for v in vs for m in self.names(v))
        return list(dict.fromkeys(op for m in ids for op in self._written.get(m, ())))

    def changed_from(self, op: n.Op, *vs: n.Value) -> bool:
        """Whether the objects ``vs`` may be written into (under any of their names) from
        ``op`` on: by ``op`` itself, later in program order, or in a loop around both (the
        next iteration's). An op the analysis did not place (made after it ran): any write."""
        return self.runs_after(self.written(*vs), op)

    def runs_after(self, ops: Iterable[n.Op], op: n.Op) -> bool:
        """Whether any of ``ops`` may run from ``op`` on (``op`` itself included)."""
        at = self.place(op)
        return any(at is None or reaches(self.place(w), at) for w in ops)

    def slot_given_after(self, read: n.GetItem | n.GetAttr, obj: n.Value,
                         held: Callable[[n.Value], bool]) -> bool:
        """Whether the slot ``read`` reads of the object ``obj`` (``obj.name``, ``obj[k]``)
        may be given a new object from ``read`` on: a store into ``obj`` (of the same
        attribute, for an attribute) of a value ``held`` does not say was read out of
        ``obj`` itself (a write-back keeps the objects the holder holds)."""
        name = read.name if isinstance(read, n.GetAttr) else None
        return self.runs_after(
            [w for w in self.written(obj)
             if isinstance(w, (n.SetAttr, n.SetItem)) and not held(w.value) and
             not (isinstance(w, n.SetAttr) and name is not None and w.name != name)], read)

    def resized_after(self, op: n.Op, kept: Callable[[n.Op], bool], *vs: n.Value) -> bool:
        """Whether the lists ``vs`` may change length from ``op`` on: a write that ``kept``
        does not say keeps it (``v[i] = x`` under an int ``i``)."""
        return self.runs_after([w for w in self.written(*vs) if not kept(w)], op)

    def writes_into(self, v: n.Value, loose: bool = False) -> list[n.Op]:
        """The ops that may write into ``v``'s storage, under any name (``loose``: and
        into what it may be a view of, where types are not known)."""
        return [op for m in self.members(v, loose) for op in self._written.get(m, ())]

    def place(self, op: n.Op) -> Place | None:
        at = self.places.order.get(id(op))
        return None if at is None else (at, self.places.loops[id(op)])

    def changed_after(self, v: n.Value, op: n.Op) -> bool:
        """Whether ``v``'s storage may be written from ``op`` on: by ``op`` itself, later in
        program order, or in a loop around both (the next iteration's)."""
        at = self.place(op)
        writes = self.writes_into(v, loose=True)  # (a copy too many costs, one too few lies)
        if at is None:
            return bool(writes)
        return any(reaches(self.place(w), at) for w in writes)

    def changed_between(self, v: n.Value, first: n.Op, then: n.Op) -> bool:
        """Whether ``v``'s storage may be written after ``first`` and before ``then``
        (``first`` defining a value ``then`` uses)."""
        return any(self.places.between(w, first, then) for w in self.writes_into(v, loose=True))

    def reaches_caller(self, v: n.Value) -> bool:
        """Whether a write into ``v`` is seen by the caller: ``v`` shares storage with a
        parameter or with a value the function did not make (a global's)."""
        params = {a.id for a in self.fn.body.args}
        return any(m in params or m in self.places.consts for m in self.members(v))


def effects(fn: n.Function, types: Types, *, indexed: bool = True,
            callee_writes: Callable[[n.Call], Iterable[n.Value]] | None = None) -> Effects:
    """The :class:`Effects` of ``fn`` under the inferred ``types``.

    ``indexed``: a basic index of an array (``y[1:]``) and the rows a loop over an array
    gets are views of it (reverse mode follows each array under its own name; forward mode
    makes its tangents views of the tangents too, so it need not). ``callee_writes``: the
    arguments a call of a user function writes into, where the caller knows them.
    """
    places = Places(fn)
    fx = Effects(fn, places)
    consts, defs = places.consts, places.defs

    def const(v: n.Value) -> Any:
        c = consts.get(v.id)
        return c if hashable(c) else None

    def array(v: n.Value) -> bool:
        return types.of(v) is numpy.ndarray

    def compares(v: n.Value) -> bool:  # (a mask: ``y[y < 0]``)
        d = defs.get(v.id)
        return isinstance(d, n.Call) and const(d.fn) in MASKS and \
            any(types.of(a) is numpy.ndarray for a in d.args)

    def advanced(op: n.GetItem) -> bool:
        d = defs.get(op.index.id)
        parts = d.items if isinstance(d, n.Build) and d.kind == "tuple" else [op.index]
        return any(types.of(p) in (numpy.ndarray, list) or compares(p) for p in parts)

    def basic_view(op: n.GetItem) -> bool:
        """Whether ``op`` reads a view of the array it indexes: a basic index (no array or
        list in it) giving an array; of a type not known, one with a slice in it (an index
        of ints alone reads a number, or a row of an array of axes not known here)."""
        d = defs.get(op.index.id)
        parts = d.items if isinstance(d, n.Build) and d.kind == "tuple" else [op.index]
        if any(types.of(p) in (numpy.ndarray, list) or compares(p) for p in parts):
            return False  # (an advanced index: a copy)
        t = types.of(op.result)
        if t is not None:
            return t is numpy.ndarray
        known = types.arrays.get(op.obj.id)
        return not all(types.of(p) is int for p in parts) or \
            known is not None and len(parts) < known.ndim

    def pieces(v: n.Value) -> bool:  # (a list or tuple of views: ``np.split``'s)
        d = defs.get(v.id)
        return isinstance(d, n.Call) and types.of(v) in (list, tuple, None) and \
            registry.is_view(const(d.fn))

    def gathered(op: n.Call) -> bool:
        """Whether a view primitive reads by an index of arrays a plan made (a copy)."""
        for a in op.args[1:]:
            d = defs.get(a.id)
            d = defs.get(d.value.id) if isinstance(d, n.Unpack) else d
            if isinstance(d, n.Call) and registry.gathers(const(d.fn)):
                return True
        return False

    for op in n.walk(fn.body):
        if isinstance(op, n.GetItem) and indexed and array(op.obj) and basic_view(op) or \
                isinstance(op, n.GetItem) and pieces(op.obj):
            fx.join(op.result, op.obj)  # a basic index: a view (or a row of views)
        elif isinstance(op, n.GetItem) and types.of(op.result) is None and \
                types.of(op.obj) in (numpy.ndarray, None) and not advanced(op):
            fx.join(op.result, op.obj, maybe=True)  # (a row of an array of unknown axes?)
        elif isinstance(op, n.GetAttr) and op.name in VIEW_ATTRIBUTES and array(op.obj):
            fx.join(op.result, op.obj)
        elif isinstance(op, n.Call) and op.args and registry.is_view(const(op.fn)) and \
                types.of(op.args[0]) not in _NO_MEMORY and not gathered(op):
            fx.join(op.result, op.args[0])  # (of a list, a number: a new array)
        elif isinstance(op, n.Call) and op.args and is_inplace_operator(const(op.fn)) and \
                types.of(op.args[0]) not in SCALAR_TYPES:
            if array(op.args[0]) or types.of(op.args[0]) in (list, None):
                fx.join(op.result, op.args[0], one=True)  # (the object itself, changed)
            fx.add_write(op, op.args[0])
        elif isinstance(op, (n.SetItem, n.SetAttr)):
            fx.add_write(op, op.obj)
        elif isinstance(op, n.Call):
            m = defs.get(op.fn.id)
            if isinstance(m, n.GetAttr) and m.name in WRITING_METHODS and \
                    not is_immutable(types.of(m.obj)):
                fx.add_write(op, m.obj)
            if callee_writes is not None:
                for a in callee_writes(op):
                    fx.add_write(op, a)
        if isinstance(op, n.For) and indexed and array(op.iterable):
            fx.join(op.body.args[0], op.iterable)  # a row
        elif isinstance(op, n.Unpack) and (indexed and array(op.value) or pieces(op.value)):
            for r in op.results:
                fx.join(r, op.value)
        if isinstance(op, (n.If, n.For, n.While)):
            # (a value that may be one of several arrays: any of them)
            ends = [r.terminator for r in op.regions() if isinstance(r.terminator, n.Yield)]
            for k, r in enumerate(op.results):
                for end in ends:
                    if k < len(end.values) and array(end.values[k]):
                        fx.join(r, end.values[k], one=True)
            if isinstance(op, (n.For, n.While)):
                for a, init, r in zip(op.carried_args, op.inits, op.results, strict=False):
                    if array(init):
                        fx.join(a, init, one=True)
                        fx.join(r, init, one=True)
    return fx


def shape_reader(op: n.Op, consts: dict[int, Any], v: n.Value | None = None) -> bool:
    """Whether ``op`` reads only the shape of what it is given (no write changes it); with
    ``v``, only the shape of ``v`` (``runtime.nonzero(g, v)``: zeros shaped like ``v``
    where the cotangent ``g`` is none)."""
    if not isinstance(op, n.Call):
        return False
    c = consts.get(op.fn.id)
    return hashable(c) and c in shapes.SHAPE_READERS or \
        v is not None and c is runtime.nonzero and len(op.args) == 2 and \
        op.args[1] is v and op.args[0] is not v


