"""Checks both modes make before differentiating: what cannot be done soundly is refused.

A write of a value being differentiated into an object the function did not make and
was not given (a module-level list, dict, array or object: a constant to the IR) would
change that object for every later call, and a read of it after the write, in this call,
would see the new value while its derivative is not followed: refused at the write.
"""

from __future__ import annotations

from typing import Any

import numpy

from wengert.analysis.activity import Activity
from wengert.analysis.effects.arrays import UNWRITTEN_CLASSES, effects, shape_reader
from wengert.analysis.effects.objects import seen_only_through_its_slot
from wengert.analysis.effects.vocabulary import (
    VIEW_ATTRIBUTES,
    is_inplace_operator,
    method_may_write,
)
from wengert.analysis.types import Types
from wengert.diagnostics import NonDifferentiableError, UnsupportedSyntaxError
from wengert.ir import nodes as n
from wengert.ir.uses import Places


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
            if not isinstance(m, n.GetAttr) or not method_may_write(m.name):
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
        if target.id not in consts or isinstance(consts[target.id], UNWRITTEN_CLASSES):
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


def check_view_writes(fn: n.Function, types: Types, act: Activity, indexed: bool) -> None:
    """Refuse a write into an array that shares its memory with another array value read
    after the write: a view (``M = y.reshape(2, 2)``, ``y.T``, ``np.asarray(y)``, a piece of
    ``np.split``, and where ``indexed``, a basic index ``y[1:]``, a row iterated over) and
    what it views. The derivative follows each array under its own name, so the write
    would be seen through the name written and not through the other: a wrong derivative.
    Forward mode follows views made by indexing (its tangents are views of the tangents
    too): ``indexed`` is for reverse mode."""
    fx = effects(fn, types, indexed=indexed)
    # An in-place operator makes its array's tangent anew in forward mode: views of the old
    # tangent (made by indexing) would not see it, so for those writes forward mode follows
    # views made by indexing too.
    whole = fx if indexed else effects(fn, types, indexed=True)
    if not fx.writes or not whole.shares_storage():
        return
    places = fx.places
    defs, uses, values = places.defs, places.uses, places.values
    for w, target in fx.writes:
        if not (isinstance(w, n.SetItem) and types.of(target) in (numpy.ndarray, None) or
                not isinstance(w, (n.SetItem, n.SetAttr)) and types.of(target) is numpy.ndarray):
            continue
        groups = fx if isinstance(w, n.SetItem) else whole
        # (with the values that may be views where types are not known: ``a[0]`` of an
        # array of axes not known may be a row, and refusing costs less than a wrong number)
        members = [values[m] for m in groups.members(target, loose=True) if m in values]
        if len(members) < 2 or not any(act.is_varied(m) for m in members) and \
                not any(act.is_varied(v) for v in w.operands()):
            continue
        for b in members:
            if groups.same_object(b, target):
                continue  # (the array written, under another name)
            made = defs.get(b.id)
            for u in uses.get(b.id, []):
                if u is w or shape_reader(u, places.consts, b):
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


def check_held_inplace(fn: n.Function, types: Types, act: Activity) -> None:
    """Refuse, in forward mode, an in-place operator on an array read out of a list, tuple,
    dict or object, or walked by a loop over one (``history[0] *= 2.0``, ``for p in params:
    p *= 0.5``, ``for p, g in zip(params, grads): p -= lr * g``): the array changes in place
    under every name that holds it, while its new tangent is a new array that reaches only
    the slot written back, if any. Where the item is written back into its slot
    (``c[k] op= v``) and is seen after only through it (``effects.seen_only_through_its_slot``:
    no item read before, no view of one, nothing a callee returned, used after), the
    container's tangent is the whole story and the write is differentiated."""
    places = Places(fn)
    defs, uses, consts = places.defs, places.uses, places.consts
    items = {op.body.args[0].id: op for op in n.walk(fn.body)
             if isinstance(op, n.For) and types.of(op.iterable) is not numpy.ndarray}

    for op in n.walk(fn.body):
        if not isinstance(op, n.Call) or not op.args or \
                not is_inplace_operator(consts.get(op.fn.id)) or \
                types.of(op.args[0]) is not numpy.ndarray or \
                not any(act.is_varied(v) for v in op.args):
            continue
        a = op.args[0]
        src = defs.get(a.id)
        if a.id in items or isinstance(src, (n.GetAttr, n.Unpack)) and \
                not (isinstance(src, n.GetAttr) and src.name in VIEW_ATTRIBUTES):
            written_back = False
        elif isinstance(src, n.GetItem) and types.of(src.obj) is not numpy.ndarray:
            written_back = any(isinstance(u, n.SetItem) and u.obj is src.obj and
                               u.index is src.index for u in uses.get(op.result.id, ()))
            if written_back and seen_only_through_its_slot(fn, types, op, src):
                continue
        else:
            continue
        raise NonDifferentiableError(
            "this in-place operator changes an array held by a list, tuple, dict or object "
            "(or walked by a loop over one) under every name that holds it, which forward "
            "mode does not follow" if not written_back else
            "this in-place operator changes an array that another name read after it also "
            "holds, which forward mode does not follow", op.loc,
            hint="make a new array and store it (`params[i] = p * 0.5`, "
                 "`params = [p - lr * g for p, g in zip(params, grads)]`)")


def check_iteration_closures(fn: n.Function) -> None:
    """Refuse a nested function reading a name the next pass of a loop binds again
    (``MakeFunction.per_iteration``) unless it is only called in the pass that made it
    (directly, once the helpers it was given are inlined, or by another such function):
    then its captured value is the one Python's closure reads. Stored, returned, carried to
    the next pass or given to a function not inlined, it would read the latest value when
    called later, which a captured value is not."""
    from wengert.ir.uses import free_uses

    readers: dict[int, list[n.Op]] = {}
    made = []
    for op in n.walk(fn.body):
        reads = op.operands()
        if isinstance(op, n.MakeFunction):
            reads = reads + free_uses(op.func.body)
            if op.per_iteration is not None:
                made.append(op)
        for v in reads:
            readers.setdefault(v.id, []).append(op)

    def called_only(mk: n.MakeFunction, seen: frozenset[int]) -> bool:
        for u in readers.get(mk.result.id, []):
            if isinstance(u, n.Call) and u.fn is mk.result and \
                    all(a is not mk.result for a in u.args) and \
                    all(v is not mk.result for _, v in u.kwargs):
                continue
            if isinstance(u, n.MakeFunction) and u is not mk and id(u) not in seen and \
                    called_only(u, seen | {id(u)}):
                continue  # (``lambda x: -df(x)``: a function only called, calling it)
            return False
        return True

    for mk in made:
        if called_only(mk, frozenset({id(mk)})):
            mk.per_iteration = None  # (checked where its loop is still a loop)
        else:
            name, loc = mk.per_iteration  # type: ignore[misc]
            raise UnsupportedSyntaxError(  # (as the frontend refuses a name rebound later)
                f"the nested function reads {name!r}, which the enclosing function assigns "
                "again after defining it", loc,
                hint="Python closures see the latest value; pass it as a default argument "
                     f"({name}={name}) to capture the current one")
