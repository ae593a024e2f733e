"""Checks both modes make before differentiating: what cannot be done soundly is refused.

A write of a value being differentiated into an object the function did not make and
was not given (a module-level list, dict, array or object: a constant to the IR) would
change that object for every later call, and a read of it after the write, in this call,
would see the new value while its derivative is not followed: refused at the write.
"""

from __future__ import annotations

import operator
import types
from typing import Any

import numpy

from wengert.analysis.activity import READONLY_METHODS, Activity
from wengert.analysis.types import Types
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.uses import Places
from wengert.objects import hashable
from wengert.rules import registry, shapes

#: Values of these types are never written into.
_IMMUTABLE = (int, float, bool, str, bytes, tuple, frozenset, complex, type(None), range,
              types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


def check_global_writes(fn: n.Function, act: Activity) -> None:
    """Refuse a write of a varied value into a constant (global) mutable object."""
    consts: dict[int, Any] = {}
    defs: dict[int, n.Op] = {}
    for op in n.walk(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for r in op.results:
            defs[r.id] = op
    for op in n.walk(fn.body):
        if isinstance(op, (n.SetItem, n.SetAttr)):
            target, values = op.obj, [op.value]
        elif isinstance(op, n.Call):
            m = defs.get(op.fn.id)
            if not isinstance(m, n.GetAttr) or m.name in READONLY_METHODS:
                continue
            target, values = m.obj, [*op.args, *(v for _, v in op.kwargs)]
            holder = consts.get(target.id)
            attr = getattr(holder, m.name, None) if target.id in consts else None
            if attr is not None and getattr(attr, "__self__", None) is not holder or \
                    isinstance(holder, numpy.ufunc):
                # (a function the object holds, not a method of it; a ufunc's methods,
                # ``np.add.at(y, i, v)``, write into their arguments: no write into it)
                continue
        else:
            continue
        if target.id not in consts or isinstance(consts[target.id], _IMMUTABLE):
            continue
        if any(act.is_varied(v) for v in values):
            raise NonDifferentiableError(
                "this writes a value being differentiated into an object defined outside "
                "the function (a global), whose derivative cannot be followed", op.loc,
                hint="make a local copy first (xs = list(XS)), or pass the object in as an "
                     "argument and return what you compute")


def check_out_arguments(fn: n.Function, act: Activity) -> None:
    """Refuse ``f(x, out=buf)`` on a value being differentiated: the result is written into
    ``buf`` behind the program's back (the call's own result may not even be used), so no
    derivative could follow it."""
    for op in n.walk(fn.body):
        if isinstance(op, n.Call) and any(k == "out" for k, _ in op.kwargs) and \
                any(act.is_varied(v) for v in [*op.args, *(v for k, v in op.kwargs if k != "out")]):
            raise NonDifferentiableError(
                "`out=` writes the result into an existing array, which wengert does not "
                "differentiate", op.loc, hint="assign the result instead (`buf = np.sin(x)`)")


#: Attributes of an array whose assignment changes it in place.
_ARRAY_ATTRIBUTES = {"shape": "x = x.reshape(...)", "dtype": "x = x.astype(...)",
                     "strides": "np.lib.stride_tricks.as_strided", "flat": "x[...] = v",
                     "real": "x = v + 1j * x.imag", "imag": "x = x.real + 1j * v"}


def check_array_attributes(fn: n.Function, types: Types) -> None:
    """Refuse ``x.shape = s`` (and ``dtype``, ``strides``, ...) on a NumPy array: it changes
    the array in place under a name no derivative follows."""
    for op in n.walk(fn.body):
        if isinstance(op, n.SetAttr) and types.of(op.obj) is numpy.ndarray:
            hint = _ARRAY_ATTRIBUTES.get(op.name)
            raise NonDifferentiableError(
                f"assigning `.{op.name}` of an array changes it in place, which wengert does "
                "not differentiate", op.loc,
                hint=f"make a new array instead (`{hint}`)" if hint else None)


#: Attributes of an array that are views of it.
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})
#: Values a view primitive given them makes a new array of (NumPy reads a list's numbers).
_NO_MEMORY = frozenset({list, tuple, float, int, bool, numpy.float64})
#: Operators whose result, given an array, is an array of booleans (a mask).
_MASKS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                    operator.ne, operator.and_, operator.or_, operator.xor, operator.invert,
                    numpy.isnan, numpy.isfinite, numpy.logical_and, numpy.logical_or,
                    numpy.logical_not})
#: In-place operators: on an array, they change it and return it.
_INPLACE_OPERATORS = frozenset({operator.iadd, operator.isub, operator.imul, operator.itruediv,
                                operator.ifloordiv, operator.imod, operator.ipow,
                                operator.imatmul, operator.iand, operator.ior, operator.ixor,
                                operator.ilshift, operator.irshift})


def check_view_writes(fn: n.Function, types: Types, act: Activity, indexed: bool) -> None:
    """Refuse a write into an array that shares its memory with another array value read
    after the write: a view (``M = y.reshape(2, 2)``, ``y.T``, ``np.asarray(y)``, a piece of
    ``np.split``, and where ``indexed``, a basic index ``y[1:]``, a row iterated over) and
    what it views. The derivative follows each array under its own name, so the write
    would be seen through the name written and not through the other: a wrong derivative.
    Forward mode follows views made by indexing (its tangents are views of the tangents
    too): ``indexed`` is for reverse mode."""
    places = Places(fn)
    consts, defs, uses = places.consts, places.defs, places.uses
    # Arrays that share memory (views and what they view), and among them those that are
    # one object under several names (a loop's carried array and its result, an in-place
    # operator's result): the transforms thread a write through those.
    parent: dict[int, int] = {}
    same: dict[int, int] = {}

    def find(v: int, sets: dict[int, int] = parent) -> int:
        while sets.get(v, v) != v:
            v = sets[v]
        return v

    def join(a: n.Value, b: n.Value, one: bool = False) -> None:
        parent[find(a.id)] = find(b.id)
        if one:
            same[find(a.id, same)] = find(b.id, same)

    def array(v: n.Value) -> bool:
        return types.of(v) is numpy.ndarray

    def basic_view(op: n.GetItem) -> bool:
        """Whether ``op`` reads a view of the array it indexes: a basic index (no array or
        list in it) giving an array; of a type not known, one with a slice in it (an index
        of ints alone reads a number, or a row of an array of axes not known here)."""
        d = defs.get(op.index.id)
        parts = d.items if isinstance(d, n.Build) and d.kind == "tuple" else [op.index]
        if any(types.of(p) in (numpy.ndarray, list) or _compares(p) for p in parts):
            return False  # (an advanced index: a copy)
        t = types.of(op.result)
        if t is not None:
            return t is numpy.ndarray
        known = types.arrays.get(op.obj.id)
        return not all(types.of(p) is int for p in parts) or \
            known is not None and len(parts) < known.ndim

    def _compares(v: n.Value) -> bool:  # (a mask: ``y[y < 0]``)
        d = defs.get(v.id)
        return isinstance(d, n.Call) and const(d.fn) in _MASKS and \
            any(types.of(a) is numpy.ndarray for a in d.args)

    def const(v: n.Value) -> Any:
        c = consts.get(v.id)
        return c if hashable(c) else None

    def pieces(v: n.Value) -> bool:  # (a list or tuple of views: ``np.split``'s)
        d = defs.get(v.id)
        return isinstance(d, n.Call) and types.of(v) in (list, tuple, None) and \
            registry.is_view(const(d.fn))

    writes: list[tuple[n.Op, n.Value]] = []
    for op in n.walk(fn.body):
        if isinstance(op, n.GetItem) and indexed and array(op.obj) and basic_view(op) or \
                isinstance(op, n.GetItem) and pieces(op.obj):
            join(op.result, op.obj)  # a basic index: a view (or a row of views)
        elif isinstance(op, n.GetAttr) and op.name in _VIEW_ATTRIBUTES and array(op.obj):
            join(op.result, op.obj)
        elif isinstance(op, n.Call) and op.args and registry.is_view(const(op.fn)) and \
                types.of(op.args[0]) not in _NO_MEMORY:
            join(op.result, op.args[0])  # (of a list, a number: a new array)
        elif isinstance(op, n.Call) and op.args and const(op.fn) in _INPLACE_OPERATORS and \
                array(op.args[0]):
            join(op.result, op.args[0], one=True)  # (the array itself, changed)
            writes.append((op, op.args[0]))
        elif isinstance(op, n.SetItem) and types.of(op.obj) in (numpy.ndarray, None):
            writes.append((op, op.obj))  # (of unknown type: one in a group is an array)
        elif isinstance(op, n.For) and indexed and array(op.iterable):
            join(op.body.args[0], op.iterable)  # a row
        elif isinstance(op, n.Unpack) and (indexed and array(op.value) or pieces(op.value)):
            for r in op.results:
                join(r, op.value)
        if isinstance(op, (n.If, n.For, n.While)):
            # (a value that may be one of several arrays: any of them)
            ends = [r.terminator for r in op.regions()
                    if isinstance(r.terminator, n.Yield)]
            for k, r in enumerate(op.results):
                for end in ends:
                    if k < len(end.values) and array(end.values[k]):
                        join(r, end.values[k], one=True)
            if isinstance(op, (n.For, n.While)):
                for a, init, r in zip(op.carried_args, op.inits, op.results, strict=False):
                    if array(init):
                        join(a, init, one=True)
                        join(r, init, one=True)
    if not writes or not parent:
        return
    groups: dict[int, list[n.Value]] = {}
    values = {v.id: v for op in n.walk(fn.body) for v in (*op.operands(), *op.results)}
    values.update({a.id: a for a in fn.body.args})
    for vid in list(parent):
        groups.setdefault(find(vid), []).append(values[vid]) if vid in values else None
    for root in list(groups):
        if root in values and values[root] not in groups[root]:
            groups[root].append(values[root])
    for w, target in writes:
        members = groups.get(find(target.id), [])
        if len(members) < 2 or not any(act.is_varied(m) for m in members) and \
                not any(act.is_varied(v) for v in w.operands()):
            continue
        for b in members:
            if find(b.id, same) == find(target.id, same):
                continue  # (the array written, under another name)
            made = defs.get(b.id)
            for u in uses.get(b.id, []):
                if u is w or isinstance(u, n.Call) and const(u.fn) in shapes.SHAPE_READERS:
                    continue  # (its shape: no write changes it)
                if made is None and (places.order[id(w)] < places.order[id(u)] or
                                     places.loops[id(w)] & places.loops[id(u)]) or \
                        made is not None and places.between(w, made, u):
                    raise NonDifferentiableError(
                        "this writes into an array that shares its memory with another "
                        "array read after the write (a view: a reshape, a transpose, "
                        "np.asarray, a slice, or what one views), which the derivative "
                        "would not see through the other", w.loc,
                        notes=(f"read after the write at line {u.loc.lineno}",)
                        if u.loc is not None else (),
                        hint="write into a copy (`m = y.reshape(2, 2).copy()`), or make the "
                             "new array without writing (`np.where`, `np.concatenate`)")
