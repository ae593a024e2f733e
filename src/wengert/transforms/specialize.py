"""Specialise a function on the types of its arguments: fold type tests, drop dead branches.

Derivative rules are written with type fast paths (``if isinstance(y, float): ...``)
so one rule serves floats, arrays and sequences. When a rule is inlined at a call
site whose argument types are known, :func:`specialize` folds those tests to
constants and splices the taken branch in place of the ``If``, so the inlined
scalar code is a couple of multiplications rather than a chain of tests.
"""

from __future__ import annotations

import abc
import builtins
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from wengert.analysis.types import Types, infer_types
from wengert.ir import nodes as n
from wengert.transforms.cleanup import cleanup, replace_uses


def specialize(fn: n.Function, param_types: Sequence[type | None],
               free_types: Mapping[int, type] | None = None) -> Types:
    """Fold type tests of ``fn`` (and its nested functions) in place; return the final types.

    ``param_types`` and ``free_types`` are as for :func:`~wengert.analysis.types.infer_types`.
    Folds ``isinstance`` of a value of known type, ``is``/``is not`` against ``None``,
    ``not`` of a constant, ``If`` on a constant and ``While`` whose condition is a false
    constant, then runs :func:`cleanup` (keeping unused calls: dropping them is the
    caller's decision), until nothing changes.
    """
    while True:
        types = infer_types(fn, param_types, free_types)
        folder = _Folder(fn, types)
        folder.region(fn.body)
        if not folder.changed:
            return types
        replace_uses(fn, folder.mapping)
        cleanup(fn)


def _class_tuple(t: Any) -> bool:
    """Whether ``isinstance(x, t)`` is decided by ``type(x)`` alone (no ``__instancecheck__``)."""
    if isinstance(t, tuple):
        return all(_class_tuple(c) for c in t)
    return type(t) in (type, abc.ABCMeta)


class _Folder:
    """One folding pass over a function; ``mapping`` redirects the results of removed ``If``s."""

    def __init__(self, fn: n.Function, types: Types) -> None:
        self.types = types
        self.consts: dict[int, Any] = {}
        self.builds: dict[int, n.Build] = {}
        for op in n.walk(fn.body):
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op.value
            elif isinstance(op, n.Build) and op.kind == "tuple" and not op.starred:
                self.builds[op.result.id] = op
        self.mapping: dict[int, n.Value] = {}
        self.changed = False

    def region(self, region: n.Region) -> None:
        out: list[n.Op] = []
        for op in region.ops:
            op = self.fold(op)
            for r in op.regions():
                self.region(r)
            spliced = self.splice(op)
            if spliced is None:
                out.append(op)
            else:
                out.extend(spliced)
                self.changed = True
        region.ops = out

    def splice(self, op: n.Op) -> list[n.Op] | None:
        """The ops replacing a region op whose path is known (``None``: keep ``op``)."""
        if isinstance(op, n.If):
            truth = self.truth(op.cond)
            if truth is None:
                return None
            taken = op.then if truth else op.orelse
            self.mapping.update(zip((r.id for r in op.results), taken.terminator.values))
            return taken.ops[:-1]
        if isinstance(op, n.While) and self.truth(op.cond.terminator.values[0]) is False:
            # The condition runs once, on the initial values; the body never does.
            for a, r, i in zip(op.args, op.results, op.inits):
                self.mapping[a.id] = self.mapping[r.id] = i
            return op.cond.ops[:-1]
        return None

    def truth(self, v: n.Value) -> bool | None:
        if v.id not in self.consts:
            return None
        try:
            return bool(self.consts[v.id])
        except Exception:  # an array constant, or a __bool__ that raises: keep the test
            return None

    def fold(self, op: n.Op) -> n.Op:
        """``op`` itself, or a ``Const`` defining its result when its value is known."""
        if not isinstance(op, n.Call) or op.fn.id not in self.consts or op.starred or op.kwargs:
            return op
        value = self.call_value(self.consts[op.fn.id], op.args)
        if value is _UNKNOWN:
            return op
        self.consts[op.result.id] = value
        self.changed = True
        return n.Const(value, [op.result], loc=op.loc)

    def call_value(self, fn: Any, args: list[n.Value]) -> Any:
        if fn is builtins.isinstance and len(args) == 2:
            t = self.types.of(args[0])
            classes = self.classes(args[1])
            if t is not None and classes is not None:
                return issubclass(t, classes)
        elif fn in (operator.is_, operator.is_not) and len(args) == 2:
            same = self.is_none(args[0], args[1])
            if same is None:
                same = self.is_none(args[1], args[0])
            if same is not None:
                return same if fn is operator.is_ else not same
        elif fn is operator.not_ and len(args) == 1 and args[0].id in self.consts:
            try:
                return not self.consts[args[0].id]
            except Exception:
                return _UNKNOWN
        return _UNKNOWN

    def classes(self, v: n.Value) -> Any:
        """The class (or tuple of classes) ``v`` is known to hold, or ``None``."""
        if v.id in self.consts:
            t = self.consts[v.id]
        elif v.id in self.builds and all(i.id in self.consts for i in self.builds[v.id].items):
            t = tuple(self.consts[i.id] for i in self.builds[v.id].items)
        else:
            return None
        return t if _class_tuple(t) else None

    def is_none(self, const: n.Value, other: n.Value) -> bool | None:
        """``other is None`` when ``const`` is the constant ``None`` and it can be decided."""
        if const.id not in self.consts or self.consts[const.id] is not None:
            return None
        if other.id in self.consts:
            return self.consts[other.id] is None
        t = self.types.of(other)
        return None if t is None else t is type(None)


_UNKNOWN = object()
