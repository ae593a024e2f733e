"""Checks both modes make before differentiating: what cannot be done soundly is refused.

A write of a value being differentiated into an object the function did not make and
was not given (a module-level list, dict, array or object: a constant to the IR) would
change that object for every later call, and a read of it after the write, in this call,
would see the new value while its derivative is not followed: refused at the write.
"""

from __future__ import annotations

import types
from typing import Any

import numpy

from wengert.analysis.activity import READONLY_METHODS, Activity
from wengert.analysis.types import Types
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n

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
            if attr is not None and getattr(attr, "__self__", None) is not holder:
                continue  # a function the object holds, not a method of it: no write
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
