"""The abstract interpreter of type inference (:class:`_Inference`): one handler per op
kind, run over a function's regions in program order by :mod:`~wengert.analysis.types.infer`."""

from __future__ import annotations

import dataclasses
import operator
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.vocabulary import INPLACE_OPERATORS
from wengert.analysis.types.containers import (
    _NOT_CONST,
    _NUMBER_KINDS,
)
from wengert.analysis.types.lattice import (
    _FLOAT_KINDS,
    FLOAT_OR_FLOAT64,
    INT_OR_FLOAT,
    ArrayOf,
    DictOf,
    ListOf,
    ObjectOf,
    TupleOf,
    Type,
    array_of,
    join,
    plain,
    unshaped,
)
from wengert.analysis.types.results import (
    _FLOAT_MAKERS,
    _INDEX_INTS,
    _INTS,
    _LIKE,
    _PLAIN,
    _REAL_SCALARS,
    _SCALAR_SHAPED,
    _broadcast_shape,
    _diverges,
    _entry_shape,
    _float_elementwise,
    _for_item,
    _join_full,
    _lifted,
    _matmul_ndim,
    _matmul_shape,
    _plain_class,
)
from wengert.ir import nodes as n
from wengert.objects import hashable, is_namedtuple

#: NumPy functions making a float64 matrix of the sizes they are given (no keywords).
_SQUARE_MAKERS = (numpy.eye, numpy.identity)

class _Inference:
    """Abstract interpretation of a function body in program order (one handler per op kind)."""

    def __init__(self, known: dict[int, type],
                 callee: Callable[[Any, list[Type]], Type] | None = None) -> None:
        self.types = known
        self.callee = callee
        self.consts: dict[int, Any] = {}
        #: Append-only lists and what is appended to them (see ``appended``).
        self.appended: dict[int, list[n.Value]] = {}
        #: Those of them appended to another list (rows of a table).
        self.stored_rows: set[int] = set()
        #: Lists made empty, appended to and given items at an index (``appended``): their
        #: items are the appended ones' type only while inference checks the writes.
        self.index_written: set[int] = set()
        #: Rows of tables, and the displays they are made of (``table_rows``).
        self.table_rows: set[int] = set()
        #: Loop variables iterating over such a list (or its ``reversed``): the list.
        self.item_of: dict[int, int] = {}
        self.defs: dict[int, n.Op] = {}
        self.reversed_of: dict[int, int] = {}
        #: Item types of lists that hold one type throughout (``ListOf`` parameters).
        self.items: dict[int, type] = {}
        #: Values only ever read (never written into, nor handed to code that might).
        self.readonly: set[int] = set()
        #: ``readonly`` and the lists only shrunk or reordered (:func:`read_only`): the
        #: items they hold keep the types they were made with.
        self.kept: set[int] = set()
        #: Value types of dicts that hold one type throughout (``DictOf`` parameters).
        self.values: dict[int, type] = {}
        #: The dtype and number of axes of arrays known to have them (``ArrayOf``).
        self.arrays: dict[int, ArrayOf] = {}
        #: Writes into one entry of such an array (see ``Types.entry_writes``).
        self.entry_writes: set[tuple[int, int]] = set()
        #: Shapes of values where known (see ``Types.shapes``).
        self.shapes: dict[int, tuple[int, ...]] = {}
        #: The types of the fields of objects the function makes (see ``fields``).
        self.fields: Mapping[tuple[type, str], type] = {}
        #: Loop variables over ``zip``/``enumerate`` of such lists: their entries' types.
        self.entries: dict[int, list[Type]] = {}
        self.handlers: dict[type, Callable[[Any], None]] = {
            n.Const: self.const, n.Call: self.call, n.Build: self.build,
            n.BuildDict: self.build_dict, n.BuildSlice: self.fixed(slice),
            n.JoinStr: self.fixed(str), n.FormatValue: self.fixed(str),
            n.GetItem: self.getitem, n.MakeFunction: self.make_function, n.If: self.if_,
            n.For: self.for_, n.While: self.while_, n.With: self.with_,
            n.Unpack: self.unpack, n.GetAttr: self.getattr, n.SetItem: self.setitem,
        }

    def get(self, v: n.Value) -> Type:
        return self.types.get(v.id)

    def set(self, v: n.Value, t: Type) -> None:
        self.arrays.pop(v.id, None)  # (``set_full`` gives an array its axes again)
        if t in _SCALAR_SHAPED:
            self.shapes[v.id] = ()
        else:
            self.shapes.pop(v.id, None)
        if t is None:
            self.types.pop(v.id, None)
        else:
            self.types[v.id] = t

    def region(self, region: n.Region) -> None:
        for op in region.ops:
            for r in op.results:
                self.defs[r.id] = op
            handler = self.handlers.get(type(op))
            if handler is not None:
                handler(op)
                if type(op) is n.Call and op.result.id not in self.shapes and \
                        self.get(op.result) is numpy.ndarray and \
                        (shape := self.call_shape(op)) is not None:
                    self.shapes[op.result.id] = shape
                    a = self.arrays.get(op.result.id)
                    if a is not None and a.ndim == len(shape):
                        self.arrays[op.result.id] = array_of(a.dtype, a.ndim, shape)
            else:  # GetAttr, Unpack: unknown; mutation and terminators define nothing
                for r in op.results:
                    self.set(r, None)

    def call_shape(self, op: n.Call) -> tuple[int, ...] | None:
        """The shape of what the call ``op`` gives, from its arguments' where known: a
        broadcast of theirs for an elementwise operation, a product's for ``@``, what a
        primitive declares (``registry.mark_result_shape``)."""
        fn = self.consts.get(op.fn.id, _NOT_CONST)
        if op.kwargs or op.starred or not hashable(fn):
            return None
        shapes = [self.shapes.get(a.id) for a in op.args]
        if _float_elementwise(fn) or isinstance(fn, numpy.ufunc) and fn.nout == 1 and \
                fn.signature is None:
            return _broadcast_shape(shapes)
        if fn in (operator.matmul, numpy.matmul) and len(shapes) == 2:
            return _matmul_shape(shapes[0], shapes[1])
        if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
            from wengert.rules import registry  # the rule tables import this module's users

            rule = registry.lookup(fn)
            if rule is not None and rule.result_shape is not None:
                try:
                    shape = rule.result_shape(shapes, [self.consts.get(a.id, registry.UNKNOWN)
                                                       for a in op.args])
                except Exception:  # (the call reports it when it runs)
                    return None
                if type(shape) is tuple and all(type(k) is int for k in shape):
                    return shape
        return None

    def fixed(self, t: type) -> Callable[[n.Op], None]:
        return lambda op: self.set(op.result, t)

    def const(self, op: n.Const) -> None:
        self.consts[op.result.id] = op.value
        self.set(op.result, type(op.value))
        if type(op.value) is tuple:  # (a global tuple: its entries' exact types)
            self.entries[op.result.id] = [type(v) for v in op.value]

    def build(self, op: n.Build) -> None:
        self.set(op.result, {"tuple": tuple, "list": list, "set": set}[op.kind])
        if op.kind == "list" and op.items and not op.starred and \
                op.result.id in self.readonly:
            # A list display nothing changes to another type holds what it was made of.
            kinds = [self.full_type(v) for v in op.items]
            if op.result.id in self.table_rows and all(
                    type(self.consts.get(v.id)) is int for v in op.items):
                # A table's row of int literals (``[[0] * n for _ in range(m)]``) is one of
                # numbers: read as floats, as the floats written into it are.
                kinds = [float for _ in op.items]
            if kinds[0] is not None and all(k == kinds[0] for k in kinds):
                self.items[op.result.id] = kinds[0]
            elif all(k in _NUMBER_KINDS for k in kinds):
                self.items[op.result.id] = INT_OR_FLOAT  # (``[x, 1]``: numbers)
            elif all(isinstance(k, ListOf) and k.item in _NUMBER_KINDS for k in kinds):
                # (rows of numbers, some with ints: ``[[x, 1], [y, 0.5]]``)
                self.items[op.result.id] = ListOf(INT_OR_FLOAT)
        if op.kind == "tuple" and not op.starred:
            # A tuple cannot change: its entries are what it was built from, read by index
            # (``p[0]``, a named tuple's ``p.x``) or unpacked.
            self.entries[op.result.id] = [self.full_type(v) for v in op.items]

    def build_dict(self, op: n.BuildDict) -> None:
        self.set(op.result, dict)
        if op.result.id in self.readonly and op.values and None not in op.keys:
            # A dict nothing changes holds what it was made with (``s._asdict()``).
            kinds = {self.get(v) for v in op.values}
            if len(kinds) == 1 and (t := kinds.pop()) in _PLAIN:
                self.values[op.result.id] = t

    def call(self, op: n.Call) -> None:
        t = None
        if op.fn.id in self.consts:
            simple = not op.starred and not op.kwargs
            fn = self.consts[op.fn.id]
            args = [self.get(a) for a in op.args]
            t = _lifted(fn, args, simple)
            if (fn is runtime.make_namedtuple or fn is object.__new__) and op.args and \
                    op.args[0].id in self.consts and isinstance(self.consts[op.args[0].id], type):
                t = self.consts[op.args[0].id]  # the class it makes an instance of
                if fn is runtime.make_namedtuple and len(op.args) == 2 and \
                        op.args[1].id in self.entries:
                    self.entries[op.result.id] = self.entries[op.args[1].id]
            if isinstance(fn, type) and is_namedtuple(fn) and not op.starred and \
                    all(k is not None for k, _ in op.kwargs):
                # ``Pt(c)``: its entries, given or defaults (read by index, unpacked)
                given = dict(zip(fn._fields, op.args))
                given.update(op.kwargs)
                defaults = getattr(fn, "_field_defaults", {})
                if len(op.args) <= len(fn._fields) and \
                        all(f in given or f in defaults for f in fn._fields):
                    self.entries[op.result.id] = [
                        self.full_type(given[f]) if f in given else type(defaults[f])
                        for f in fn._fields]
            if fn is reversed and len(op.args) == 1 and op.args[0].id in self.appended:
                self.reversed_of[op.result.id] = op.args[0].id
            if fn is operator.add and len(op.args) == 2 and t is tuple and \
                    all(a.id in self.entries for a in op.args):
                # ``(x,) + rest``: the entries of both, in order
                self.entries[op.result.id] = [*self.entries[op.args[0].id],
                                              *self.entries[op.args[1].id]]
            if fn is operator.add and len(op.args) == 2 and t is list and \
                    op.args[0].id in self.items and op.result.id in self.readonly and \
                    self.items.get(op.args[1].id, None) == self.items[op.args[0].id]:
                self.items[op.result.id] = self.items[op.args[0].id]  # ``xs[:j] + xs[j:]``
            if fn is operator.mul and len(op.args) == 2 and t is list and \
                    op.result.id in self.readonly:
                shown = op.args[0] if args[1] is int else op.args[1]
                if shown.id in self.items:
                    self.items[op.result.id] = self.items[shown.id]  # ``[0.0] * n``
            if fn is runtime.snapshot and len(op.args) == 1 and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # a copy holds the items it was taken with
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.kept and self.get(op.args[0]) is list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``list(xs)``: a copy, then kept (or shrunk)
            if fn is sorted and len(op.args) == 1 and not op.starred and \
                    all(k in ("key", "reverse") for k, _ in op.kwargs) and \
                    op.result.id in self.kept and self.get(op.args[0]) is list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``sorted(xs, key=abs)``: a copy, reordered
            if fn is runtime.keyed_order and op.result.id in self.kept:
                self.items[op.result.id] = int  # (the indices ``sorted(key=)`` puts in order)
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and \
                    (entries := self.zipped(op.args[0])) is not None and None not in entries:
                self.items[op.result.id] = TupleOf(tuple(entries))  # ``list(zip(a, b))``
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and self.get(op.args[0]) is not list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``list(iter(xs))``, ``list(reversed(xs))``
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and \
                    len(kinds := set(self.entries.get(op.args[0].id) or [None])) == 1 and \
                    (item := kinds.pop()) in _NUMBER_KINDS:
                self.items[op.result.id] = item  # ``list(q)`` of a tuple of floats
            if t is None and simple and len(args) == 1 and fn in (max, min, sum):
                # The extreme or the sum of a list of floats is a float (a sum of none is
                # the int 0, for which the float code computes the same numbers).
                item = self.item_type(op.args[0])
                if item is float or item is int and fn is not sum:
                    t = item
            if (t is None or t is numpy.ndarray) and simple and \
                    (full := self.declared_result(fn, op.args)):
                self.set_full(op.result, full)
                return
            if t is None and fn is dataclasses.replace and len(op.args) == 1 and \
                    isinstance(kind := self.get(op.args[0]), type) and \
                    dataclasses.is_dataclass(kind):
                t = kind  # a new object of the class of the one it copies
            if t is None and simple and self.callee is not None and \
                    isinstance(fn, types.FunctionType):
                t = self.callee(fn, [unshaped(self.full_type(a)) for a in op.args])
            if fn is numpy.where and simple and len(op.args) == 3 and \
                    (made := self.where_array(op.args)):
                self.set_full(op.result, made)  # ``np.where(x > 0.3, x, 0.0)``: x's kind
                return
            if t is numpy.ndarray and simple and (made := self.made_array(fn, op.args)):
                self.set_full(op.result, made)
                return
            if fn in (operator.matmul, operator.imatmul) and simple and len(args) == 2 and \
                    all(isinstance(self.full_type(a), ArrayOf) for a in op.args):
                a, b = (self.full_type(v) for v in op.args)
                ndim = _matmul_ndim(a.ndim, b.ndim)
                if a.dtype is numpy.float64 and b.dtype is numpy.float64 and ndim is not None:
                    # Exact: two vectors give a NumPy scalar, not an array.
                    self.set_full(op.result, array_of(a.dtype, ndim, _matmul_shape(
                        a.shape, b.shape)) if ndim else a.dtype)
                    return
        elif isinstance(m := self.defs.get(op.fn.id), n.GetAttr) and m.name == "copy" and \
                not op.args and not op.kwargs and self.get(m.obj) in (list, dict):
            # ``xs.copy()``: a new list (or dict) holding what ``xs`` holds.
            t = self.get(m.obj)
            if op.result.id in self.readonly:
                if t is list and (item := self.item_type(m.obj)) is not None:
                    self.items[op.result.id] = item
                elif t is dict and m.obj.id in self.values:
                    self.values[op.result.id] = self.values[m.obj.id]
        self.set(op.result, t)

    def array_arg(self, v: n.Value) -> Any:
        """``v``'s type as a rule's ``array_type`` reads it: ``(dtype, ndim)`` for an array
        of known axes, a list of its items' types for a list or tuple display (nested
        displays nested; ``float`` for any float scalar), else its type."""
        t = self.full_type(v)
        if isinstance(t, ArrayOf):
            return (t.dtype, t.ndim)
        made = self.defs.get(v.id)
        if isinstance(made, n.Build) and made.kind in ("list", "tuple") and not made.starred:
            return [self.array_arg(u) for u in made.items]
        return float if t in _FLOAT_KINDS else t

    def declared_result(self, fn: Any, args: list[n.Value]) -> Any:
        """The full type a NumPy function or primitive declares for its result from its
        arguments' (:func:`registry.mark_result_type`: the tuples of the decompositions)."""
        if not hashable(fn):
            return None
        from wengert.rules import registry  # the rule tables import this module's users

        rule = registry.lookup(fn)
        if rule is None or rule.result_type is None:
            return None

        def full(x: Any) -> Any:
            # The rules' vocabulary: (dtype, ndim) an array, a list the entries of a tuple.
            if isinstance(x, list):
                return TupleOf(tuple(full(e) for e in x), named=True)
            if isinstance(x, tuple):
                return array_of(*x)
            return x

        return full(rule.result_type([self.array_arg(v) for v in args],
                                     [self.consts.get(v.id, registry.UNKNOWN) for v in args]))

    def where_array(self, args: list[n.Value]) -> ArrayOf | None:
        """The :class:`ArrayOf` of ``numpy.where(cond, x, y)``: float64, of the broadcast axes
        of the three, where ``x`` and ``y`` are float64 arrays or real numbers (one at least
        a float64 array or a float: two ints choose ints) and the axes of ``cond`` are known
        (an array of known axes, or a comparison of such arrays and numbers); else ``None``."""
        cond, x, y = (self.full_type(a) for a in args)
        made = self.defs.get(args[0].id)
        test = self.consts.get(made.fn.id) if isinstance(made, n.Call) else None
        if not isinstance(cond, ArrayOf) and hashable(test) and test in _COMPARISONS and \
                len(made.args) == 2:  # type: ignore[union-attr]
            sides = [self.full_type(a) for a in made.args]
            if all(isinstance(t, ArrayOf) and t.dtype is numpy.float64 or t in _REAL_SCALARS
                   for t in sides) and any(isinstance(t, ArrayOf) for t in sides):
                cond = array_of(numpy.bool_, max(t.ndim for t in sides if isinstance(t, ArrayOf)),
                                _broadcast_shape([t.shape for t in sides
                                                  if isinstance(t, ArrayOf)]))
        floats = (float, numpy.float64, FLOAT_OR_FLOAT64)
        if not all(isinstance(t, ArrayOf) and t.dtype is numpy.float64 or t in (int, *floats)
                   for t in (x, y)) or \
                not any(isinstance(t, ArrayOf) or t in floats for t in (x, y)) or \
                not (isinstance(cond, ArrayOf) or cond in (bool, numpy.bool_)):
            return None
        arrays = [t for t in (cond, x, y) if isinstance(t, ArrayOf)]
        if not arrays:
            return None  # (numbers chosen by a number: a NumPy scalar)
        return array_of(numpy.float64, max(t.ndim for t in arrays),
                        _broadcast_shape([t.shape for t in arrays]))

    def made_array(self, fn: Any, args: list[n.Value]) -> ArrayOf | None:
        """The :class:`ArrayOf` of the new array ``fn(*args)`` makes, where its arguments
        say: ``zeros_like(x)`` and its kin and ``copy(x)`` take ``x``'s, ``zeros(n)`` (and
        ``ones``, ``empty``) a float64 array of as many axes as its shape has entries."""
        if fn in _LIKE and len(args) == (2 if fn is numpy.full_like else 1) or \
                fn is runtime.snapshot and len(args) == 1:
            return self.arrays.get(args[0].id)
        if fn in INPLACE_OPERATORS and len(args) == 2 and args[0].id in self.arrays:
            return self.arrays[args[0].id]  # (the array itself, changed: its dtype and axes)
        if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
            from wengert.rules import registry  # the rule tables import this module's users

            rule = registry.lookup(fn)
            if rule is not None and rule.array_type is not None:
                made = rule.array_type(*(self.array_arg(v) for v in args))
                return array_of(*made) if made is not None else None
        ts = [self.full_type(a) for a in args]
        if all(isinstance(t, ArrayOf) and t.dtype is numpy.float64 or t in _REAL_SCALARS
               for t in ts) and _float_elementwise(fn):
            arrays = [t for t in ts if isinstance(t, ArrayOf)]
            return array_of(numpy.float64, max(t.ndim for t in arrays),
                            _broadcast_shape([t.shape for t in arrays]))
        if fn in _FLOAT_MAKERS and len(args) == 1:
            shape = self.consts.get(args[0].id)
            if type(shape) is int and shape >= 0:
                return array_of(numpy.float64, 1, (shape,))
            if self.get(args[0]) in _INDEX_INTS:
                return array_of(numpy.float64, 1)
            made = self.defs.get(args[0].id)
            if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred and \
                    all(self.get(v) in _INDEX_INTS for v in made.items):
                sizes = tuple(self.consts.get(v.id) for v in made.items)
                return array_of(numpy.float64, len(made.items), sizes if all(
                    type(k) is int and k >= 0 for k in sizes) else None)
            if type(shape) is tuple and all(type(k) is int and k >= 0 for k in shape):
                return array_of(numpy.float64, len(shape), shape)
        if fn in _SQUARE_MAKERS and 1 <= len(args) <= (2 if fn is numpy.eye else 1) and \
                all(self.get(a) in _INDEX_INTS for a in args):
            # ``np.eye(n)``, ``np.eye(n, m)``, ``np.identity(n)``: float64, two axes.
            sizes = [self.consts.get(a.id) for a in args]
            sizes = sizes if len(sizes) == 2 else sizes * 2
            return array_of(numpy.float64, 2, tuple(sizes) if all(
                type(k) is int and k >= 0 for k in sizes) else None)
        return None

    def getitem(self, op: n.GetItem) -> None:
        obj, index = self.get(op.obj), self.get(op.index)
        t = None
        if obj is str:
            t = str
        elif obj is range:
            t = range if index is slice else int if index in _INTS else None
        elif op.obj.id in self.entries and index in _INTS and op.index.id in self.consts \
                and (obj is tuple or obj is None or is_namedtuple(obj)) and \
                -len(self.entries[op.obj.id]) <= self.consts[op.index.id] < \
                len(self.entries[op.obj.id]):
            self.set_full(op.result, self.entries[op.obj.id][self.consts[op.index.id]])
            return
        elif obj is tuple and (same := self.same_entries(op.obj)) is not None and \
                index in _INTS:
            self.set_full(op.result, same)  # (``xs[i]`` of a tuple of floats: a float)
            return
        elif obj is tuple and index is slice and op.obj.id in self.entries and \
                (part := self.constant_slice(op.index)) is not None:
            # ``args[1:]`` of a tuple of known entries: those entries (spread into a call,
            # ``f(m, *args[1:])``, each is an argument of its own).
            self.set(op.result, tuple)
            self.entries[op.result.id] = self.entries[op.obj.id][part]
            return
        elif obj in (list, tuple) and index is slice:
            t = obj
            if obj is list and op.obj.id in self.items and op.result.id in self.readonly:
                self.items[op.result.id] = self.items[op.obj.id]  # a slice: the same items
            elif obj is tuple and (same := self.same_entries(op.obj)) is not None:
                self.items[op.result.id] = same  # (a tuple's slice: entries of that type)
        elif op.obj.id in self.items and index in _INTS:
            self.set_full(op.result, self.items[op.obj.id])
            return
        elif obj is list and index in _INTS and self.appended.get(op.obj.id) and \
                (item := self.item_type(op.obj)) is not None:
            self.set_full(op.result, item)  # (a list only appended to)
            return
        elif op.obj.id in self.values and obj is dict:
            self.set_full(op.result, self.values[op.obj.id])
            return
        elif obj is numpy.ndarray and op.obj.id in self.arrays:
            self.set_full(op.result, self.array_entry(self.arrays[op.obj.id], op.index))
            return
        elif obj is numpy.ndarray and self.array_index(op.index):
            t = numpy.ndarray
        self.set(op.result, t)

    def constant_slice(self, v: n.Value) -> slice | None:
        """The slice ``v`` is, where its bounds are constant ints (or left out)."""
        made = self.defs.get(v.id)
        if not isinstance(made, n.BuildSlice):
            return None
        parts = [None if p is None else self.consts.get(p.id, _NOT_CONST)
                 for p in (made.lower, made.upper, made.step)]
        if not all(p is None or type(p) is int for p in parts) or parts[2] == 0:
            return None
        return slice(*parts)

    def same_entries(self, v: n.Value) -> Any:
        """The one type of every entry of the tuple ``v`` (its entries known, or its items:
        a slice of such a tuple), else ``None``."""
        if v.id in self.items and self.get(v) is tuple:
            return self.items[v.id]
        es = self.entries.get(v.id)
        if not es or es[0] is None or any(e != es[0] for e in es[1:]):
            return None
        return es[0]

    def setitem(self, op: n.SetItem) -> None:
        a = self.arrays.get(op.obj.id)
        if a is not None and self.array_entry(a, op.index) is a.dtype:
            self.entry_writes.add((op.obj.id, op.index.id))

    def array_entry(self, a: ArrayOf, index: n.Value) -> Any:
        """The type of ``x[index]`` for an array ``x`` of type ``a``: a scalar of its dtype
        for as many integers as it has axes, an :class:`ArrayOf` for integers, slices and
        ``None`` (each integer drops an axis, each ``None`` adds one), else an array or
        unknown."""
        parts: list[tuple[Any, Type]]
        if index.id in self.consts:
            v = self.consts[index.id]
            parts = [(x, type(x)) for x in (v if type(v) is tuple else (v,))]
        elif isinstance(made := self.defs.get(index.id), n.Build) and made.kind == "tuple" \
                and not made.starred:
            parts = [(self.index_part(x), self.get(x)) for x in made.items]
        else:
            parts = [(_NOT_CONST, self.get(index))]
        ints = sum(1 for _, t in parts if t in _INDEX_INTS)
        nones = sum(1 for _, t in parts if t is type(None))
        if ints + nones + sum(1 for _, t in parts if t is slice) < len(parts) or \
                ints > a.ndim:
            return numpy.ndarray if self.array_index(index) else None
        ndim = a.ndim - ints + nones
        if ints == len(parts) and ndim == 0:
            return a.dtype
        return array_of(a.dtype, ndim, _entry_shape(a.shape, [v for v, _ in parts]))

    def index_part(self, v: n.Value) -> Any:
        """A part of an index: its constant value, ``:`` for a slice of no bounds."""
        made = self.defs.get(v.id)
        if isinstance(made, n.BuildSlice) and made.lower is made.upper is made.step is None:
            return slice(None)
        return self.consts.get(v.id, _NOT_CONST)

    def array_index(self, index: n.Value) -> bool:
        """Whether indexing an array with ``index`` surely gives an array (never a NumPy
        scalar): a slice, ``None`` or ``...`` among its parts, or an index array."""
        def part(v: Any, t: Type) -> bool:
            return t in (slice, type(None), type(Ellipsis), numpy.ndarray, list) or \
                isinstance(v, (slice, numpy.ndarray, list)) or v is None or v is Ellipsis

        if index.id in self.consts:
            v = self.consts[index.id]
            return any(part(x, None) for x in v) if isinstance(v, tuple) else part(v, None)
        made = self.defs.get(index.id)
        if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred:
            return any(part(self.consts.get(x.id, 0), self.get(x)) for x in made.items)
        return part(0, self.get(index))

    def getattr(self, op: n.GetAttr) -> None:
        # (a field passed in holding a list or dict of known items: ``ListOf``, ``DictOf``)
        self.set_full(op.result, self.fields.get((self.get(op.obj), op.name)) if self.fields
                      else None)

    def make_function(self, op: n.MakeFunction) -> None:
        self.set(op.result, types.FunctionType)
        for a in op.func.body.args:
            self.set(a, None)
        self.region(op.func.body)

    def if_(self, op: n.If) -> None:
        self.region(op.then)
        self.region(op.orelse)
        live = [r.terminator.values for r in (op.then, op.orelse) if not _diverges(r)]
        for k, r in enumerate(op.results):
            ts = [self.full_type(ys[k]) for ys in live]
            t = ts[0] if ts else None
            for u in ts[1:]:
                t = _join_full(t, u)
            self.set_full(r, t)

    def loop(self, op: n.For | n.While, carried: list[n.Value],
             regions: list[n.Region]) -> None:
        """Iterate the body until the carried types are stable (each step only loses types)."""
        cur = [self.array_or_type(v) for v in op.inits]
        while True:
            for a, t in zip(carried, cur):
                self.set_full(a, t)
            for r in regions:
                self.region(r)
            new = [_join_full(t, self.array_or_type(y))
                   for t, y in zip(cur, op.body.terminator.values)]
            if all(a is b for a, b in zip(new, cur)):
                break
            cur = new
        for r, t in zip(op.results, cur):
            self.set_full(r, t)

    def array_or_type(self, v: n.Value) -> Any:
        """``v``'s :class:`ArrayOf` where known, else its type."""
        return self.arrays.get(v.id) or self.get(v)

    def for_(self, op: n.For) -> None:
        item = op.body.args[0]
        lst = self.reversed_of.get(op.iterable.id, op.iterable.id)
        if lst in self.appended:
            self.item_of[item.id] = lst
            self.set_full(item, self.item_type(self.defs[lst].result) if lst in self.defs
                          else None)
        elif op.iterable.id in self.items:
            self.set_full(item, self.items[op.iterable.id])
        elif op.iterable.id in self.arrays and self.arrays[op.iterable.id].ndim:
            a = self.arrays[op.iterable.id]
            self.set_full(item, a.dtype if a.ndim == 1 else
                          array_of(a.dtype, a.ndim - 1, a.shape and a.shape[1:]))
        elif (entries := self.zipped(op.iterable)) is not None:
            self.set(item, tuple)
            self.entries[item.id] = entries
        else:
            t = _for_item(self.get(op.iterable))
            lit = self.defs.get(op.iterable.id)
            if isinstance(lit, n.Build) and lit.kind == "tuple" and lit.items and \
                    not lit.starred:
                # ``for c in (1.0, 2.0)``: a tuple's items are the ones it was built from.
                t = self.get(lit.items[0])
                for v in lit.items[1:]:
                    t = join(t, self.get(v))
            self.set(item, t)
        self.loop(op, op.carried_args, [op.body])

    def item_type(self, v: n.Value) -> Type:
        """The type of every item of the list ``v`` (a ``ListOf`` parameter or a list only
        appended to), or ``None``."""
        if v.id in self.items:
            return self.items[v.id]
        if self.get(v) is range:
            return int  # (``list(range(k, n))``: the candidates of ``max(..., key=)``)
        made = self.defs.get(v.id)
        if isinstance(made, n.Call) and len(made.args) == 1 and not made.kwargs and \
                not made.starred and self.consts.get(made.fn.id) in (reversed, iter) and \
                made.args[0].id in self.items:
            return self.items[made.args[0].id]  # ``reversed(xs)`` yields ``xs``'s items
        if self.appended.get(v.id) and (v.id not in self.stored_rows and
                                        v.id not in self.index_written or
                                        v.id in self.readonly):
            if v.id in self.table_rows and all(type(self.consts.get(x.id)) is int
                                               for x in self.appended[v.id]):
                return float  # (``[[0 for _ in r] for r in a]``: as a display of ints)
            t: Any = None
            for k, x in enumerate(self.appended[v.id]):
                u = self.full_type(x)
                t = u if k == 0 else (t if t == u else None)
            return t
        return None

    def display_type(self, v: n.Value) -> ListOf | None:
        """``ListOf(t)`` where ``v`` is a list display of numbers all of type ``t``
        (``[c, tr.k]``), or of objects all of one plain class ``t`` (``[Dense(w, b),
        Dense(v, c)]``): what it holds when made, whatever is done with it after."""
        d = self.defs.get(v.id)
        if not isinstance(d, n.Build) or d.kind != "list" or d.starred or not d.items:
            return None
        kinds = {self.get(x) for x in d.items}
        if len(kinds) != 1:
            return None
        t = kinds.pop()
        return ListOf(t) if t in (float, int) or isinstance(t, type) and _plain_class(t) \
            else None

    def full_type(self, v: n.Value) -> Any:
        """``v``'s type, as :class:`ListOf` for a list of known items."""
        t = self.get(v)
        if t is list and (item := self.item_type(v)) is not None:
            return ListOf(item)  # (a list only appended to: what every append puts there)
        if t is numpy.ndarray and v.id in self.arrays:
            return self.arrays[v.id]
        if (t is tuple or is_namedtuple(t)) and v.id in self.entries and \
                all(e is not None for e in self.entries[v.id]):
            # (``Pt(c)`` appended to a list of ``Pt``: a tuple of the entries it was made of)
            return TupleOf(tuple(self.entries[v.id]), cls=None if t is tuple else t)
        return t

    def set_full(self, v: n.Value, t: Any) -> None:
        """Give ``v`` the type ``t``, which may be a :class:`ListOf`."""
        if isinstance(t, ListOf):
            self.set(v, list)
            if v.id in self.readonly:  # (a list changed later may hold anything)
                self.items[v.id] = t.item
        elif isinstance(t, TupleOf):
            self.set(v, plain(t))
            self.entries[v.id] = list(t.entries)
        elif isinstance(t, ObjectOf):
            self.set(v, t.cls)
        elif isinstance(t, DictOf):
            self.set(v, dict)
            if v.id in self.readonly:  # (a dict changed later may hold anything)
                self.values[v.id] = t.value
        elif isinstance(t, ArrayOf):
            self.set(v, numpy.ndarray)
            self.arrays[v.id] = t
            if t.shape is not None:
                self.shapes[v.id] = t.shape
        else:
            self.set(v, t)

    def zipped(self, iterable: n.Value) -> list[Type] | None:
        """The entry types of the items of ``zip(xs, ys, ...)`` or ``enumerate(xs)`` over
        lists of known items (and ranges, and such zips), else ``None`` (an
        ``enumerate``'s index is an int even where its items are unknown)."""
        made = self.defs.get(iterable.id)
        if not isinstance(made, n.Call) or made.starred or \
                made.fn.id not in self.consts or not made.args:
            return None
        fn = self.consts[made.fn.id]
        if made.kwargs and (fn is not zip or [k for k, _ in made.kwargs] != ["strict"]):
            return None
        if fn is enumerate and len(made.args) <= 2:
            item = self.item_type(made.args[0])
            if item is None and (inner := self.zipped(made.args[0])) is not None:
                item = TupleOf(tuple(inner))  # (``enumerate(zip(a, b))``)
            return [int, item]  # (an index is an int whatever the items)
        if fn is not zip:
            return None
        out: list[Type] = []
        for a in made.args:
            if (item := self.item_type(a)) is not None:
                out.append(item)
            elif (inner := self.zipped(a)) is not None:
                out.append(TupleOf(tuple(inner)))
            elif self.get(a) is range:
                out.append(int)
            elif self.get(a) is numpy.ndarray and a.id in self.arrays:
                arr = self.arrays[a.id]  # (the rows of an array, or its entries)
                out.append(arr.dtype if arr.ndim == 1 else
                           array_of(arr.dtype, arr.ndim - 1, arr.shape and arr.shape[1:]))
            else:
                return None
        return out

    def unpack(self, op: n.Unpack) -> None:
        for r in op.results:
            self.set(r, None)
        entries = self.entries.get(op.value.id)
        if entries is not None and op.star is None and len(entries) == len(op.results):
            for r, t in zip(op.results, entries):
                self.set_full(r, t)
            return
        made = self.defs.get(op.value.id)
        if op.star is not None:
            self.unpack_star(op, made, entries)
            return
        if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred and \
                op.star is None and len(made.items) == len(op.results):
            # ``a, b = b, y``: each target is the value it was built from.
            for r, v in zip(op.results, made.items):
                self.set(r, self.get(v))
            return
        lst = self.item_of.get(op.value.id)
        if lst is None or op.star is not None or not self.appended[lst]:
            return
        # Each item is one of the tuples appended: join their k-th entries' types.
        builds = [self.defs.get(v.id) for v in self.appended[lst]]
        if not all(isinstance(b, n.Build) and b.kind == "tuple" and not b.starred and
                   len(b.items) == len(op.results) for b in builds):
            return
        for k, r in enumerate(op.results):
            t = self.get(builds[0].items[k])  # type: ignore[union-attr]
            for b in builds[1:]:
                t = join(t, self.get(b.items[k]))  # type: ignore[union-attr]
            self.set(r, t)

    def unpack_star(self, op: n.Unpack, made: n.Op | None, entries: list[Any] | None
                    ) -> None:
        """``a, *rest, z = value``: ``rest`` is a list (whatever ``value`` is), the others
        take the types of the items they get where those are known (a display, a tuple of
        known entries, a list whose items have one type)."""
        star, res = op.star, op.results
        assert star is not None
        items: list[Any] | None = None
        if isinstance(made, n.Build) and made.kind in ("list", "tuple") and not made.starred:
            items = [self.get(v) for v in made.items]
        elif entries is not None:
            items = list(entries)
        item = self.items.get(op.value.id) if self.get(op.value) is list else None
        after = len(res) - star - 1
        if items is not None and len(items) >= len(res) - 1:
            for k in range(star):
                self.set(res[k], items[k])
            for k in range(after):
                self.set(res[len(res) - 1 - k], items[len(items) - 1 - k])
            middle = items[star:len(items) - after]
            one = middle[0] if middle and all(t == middle[0] for t in middle) else None
            self.set_full(res[star], ListOf(one) if isinstance(one, type) else list)
            return
        if isinstance(item, type):
            for k, r in enumerate(res):
                if k != star:
                    self.set(r, item)
            self.set_full(res[star], ListOf(item))
            return
        self.set(res[star], list)

    def while_(self, op: n.While) -> None:
        self.loop(op, op.args, [op.cond, op.body])

    def with_(self, op: n.With) -> None:
        self.set(op.body.args[0], None)
        self.region(op.body)
        # A manager that suppresses an exception leaves the initial values in place.
        for r, i, y in zip(op.results, op.inits, op.body.terminator.values):
            self.set(r, join(self.get(i), self.get(y)))


#: The comparisons whose result, for float64 arrays, is a boolean array of their axes.
_COMPARISONS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                          operator.ne})
