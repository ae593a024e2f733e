"""Specialise a function on the types of its arguments: fold type tests, drop dead branches.

Derivative rules are written with type fast paths (``if isinstance(y, float): ...``)
so one rule serves floats, arrays and sequences. When a rule is inlined at a call
site whose argument types are known, :func:`specialize` folds those tests to
constants and splices the taken branch in place of the ``If``, so the inlined
scalar code is a couple of multiplications rather than a chain of tests.

Rules of a variable number of arguments (``log(x, *base)``, ``max(*args)``) are
specialised on the call's arity too: the inliner binds ``*args`` to a tuple display
of the call's arguments, and the folds below know the length and the items of a
sequence that nothing changes, so ``len(args)``, ``args[0]``, ``f(*args)``,
``for a in args`` and ``[g(a) for a in args]`` become straight-line code.
"""

from __future__ import annotations

import abc
import builtins
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy

from wengert.analysis.cached import Analyses
from wengert.analysis.types import Types, infer_types, subclass
from wengert.ir import nodes as n
from wengert.ir.clone import Cloner, substitute
from wengert.ir.uses import replace_uses
from wengert.objects import hashable
from wengert.rules import registry, shapes
from wengert.transforms.cleanup import cleanup


def specialize(fn: n.Function, param_types: Sequence[type | None],
               free_types: Mapping[int, type] | None = None,
               callee: Any = None, analyses: Analyses | None = None) -> Types:
    """Fold type tests of ``fn`` (and its nested functions) in place; return the final types.

    ``param_types`` and ``free_types`` are as for :func:`~wengert.analysis.types.infer_types`.
    Folds ``isinstance`` of a value of known type, ``is``/``is not`` against ``None``,
    ``not``, comparisons and integer arithmetic of constants, ``If`` on a constant and
    ``While`` whose condition is a false constant; and for a sequence of known items
    (a tuple display, or a list display only read): ``len``, indexing by a constant,
    ``tuple()`` of it, ``*`` of it in a call, and a ``for`` over it or over a constant
    ``range`` (unrolled). A list display followed by appends becomes one display.
    Then runs :func:`cleanup` (keeping unused calls: dropping them is the caller's
    decision), until nothing changes. ``analyses``: where ``fn``'s types (of
    ``param_types``, with ``callee``; no ``free_types``) are kept between passes.
    """
    while True:
        types = analyses.types() if analyses is not None else \
            infer_types(fn, param_types, free_types, callee=callee)
        folder = _Folder(fn, types)
        folder.region(fn.body)
        changed = folder.changed | _fold_appends(fn.body)
        if not changed:
            return types
        replace_uses(fn, folder.mapping)
        cleanup(fn)


def _class_tuple(t: Any) -> bool:
    """Whether ``isinstance(x, t)`` is decided by ``type(x)`` alone (no ``__instancecheck__``)."""
    if isinstance(t, tuple):
        return all(_class_tuple(c) for c in t)
    return type(t) in (type, abc.ABCMeta)


#: A ``for`` over at most this many known items is unrolled (a call's arguments).
_UNROLL = 16

#: Operators folded on constant ints (and bools): ``len(args) == 1``, ``i + 1``.
_INT_OPS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
            operator.add, operator.sub, operator.neg)
#: Calls that only read the items of their one argument, folded for known items.
_READERS = (builtins.len, builtins.tuple)


def _one_of(fn: Any, fns: tuple[Any, ...]) -> bool:
    return any(fn is f for f in fns)  # by identity: a constant may have an odd ``__eq__``


class _Folder:
    """One folding pass over a function; ``mapping`` redirects the results of removed ops."""

    def __init__(self, fn: n.Function, types: Types) -> None:
        self.types = types
        self.consts: dict[int, Any] = {}
        self.builds: dict[int, n.Build] = {}
        self.calls: dict[int, n.Call] = {}
        self.slices: dict[int, n.BuildSlice] = {}
        uses: dict[int, list[n.Op]] = {}
        displays: list[n.Build | n.BuildDict] = []
        dict_displays: list[n.BuildDict] = []
        for op in n.walk(fn.body):
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op.value
            elif isinstance(op, n.Build) and not op.starred:
                displays.append(op)
                if op.kind == "tuple":
                    self.builds[op.result.id] = op
            elif isinstance(op, n.BuildDict) and not op.keys:
                displays.append(op)
            elif isinstance(op, n.BuildDict) and all(k is not None for k in op.keys):
                dict_displays.append(op)
            elif isinstance(op, n.Call):
                self.calls[op.result.id] = op
            elif isinstance(op, n.BuildSlice):
                self.slices[op.result.id] = op
            for v in op.operands():
                uses.setdefault(v.id, []).append(op)
        #: The items of each sequence nothing changes: a tuple display, or a list display
        #: (an empty dict display: ``**kwargs`` of a call without any) that is only read.
        self.items: dict[int, list[n.Value]] = {}
        for d in displays:
            if isinstance(d, n.Build) and d.kind == "tuple" or \
                    all(self.reads(d.result, u) for u in uses.get(d.result.id, [])):
                self.items[d.result.id] = list(d.items) if isinstance(d, n.Build) else []
        #: The entries of each dict display under constant string keys that is only indexed
        #: (``ops = {"sq": lambda t: t * t}; ops["sq"](x)``): key -> value.
        self.entries: dict[int, dict[str, n.Value]] = {}
        for d in dict_displays:
            keys = [self.consts.get(k.id) for k in d.keys]
            if all(type(k) is str for k in keys) and len(set(keys)) == len(keys) and \
                    all(isinstance(u, n.GetItem) and u.obj is d.result and
                        u.index is not d.result for u in uses.get(d.result.id, [])):
                self.entries[d.result.id] = dict(zip(keys, d.values))
        self.mapping: dict[int, n.Value] = {}
        self.changed = False

    def reads(self, v: n.Value, use: n.Op) -> bool:
        """Whether ``use`` only reads the items of the container ``v``."""
        if isinstance(use, n.GetItem):
            return use.obj is v and use.index is not v
        if isinstance(use, n.For):
            return use.iterable is v and v not in use.inits
        if isinstance(use, n.Build):
            return all(k in use.starred for k, a in enumerate(use.items) if a is v)  # (*v,)
        if isinstance(use, n.Call) and use.fn is not v and \
                all(w is not v or k is None for k, w in use.kwargs):
            if all(k in use.starred for k, a in enumerate(use.args) if a is v):
                return True  # f(*v), f(**v): the callee gets new containers of the items
            return use.args == [v] and not use.kwargs and \
                _one_of(self.consts.get(use.fn.id), _READERS)
        return False

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
        """The ops replacing an op whose outcome is known (``None``: keep ``op``)."""
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
        if isinstance(op, n.GetItem) and op.obj.id in self.items and \
                type(self.consts.get(op.index.id)) is int:
            items = self.items[op.obj.id]
            k = self.consts[op.index.id]
            if -len(items) <= k < len(items):
                self.mapping[op.result.id] = items[k]
                return []
            return None
        if isinstance(op, n.GetItem) and op.obj.id in self.entries and \
                self.consts.get(op.index.id) in self.entries[op.obj.id]:
            self.mapping[op.result.id] = self.entries[op.obj.id][self.consts[op.index.id]]
            return []
        if isinstance(op, n.Unpack) and op.value.id in self.items and op.star is None and \
                len(self.items[op.value.id]) == len(op.results):
            # ``a, b = (x, y)``: the items themselves.
            self.mapping.update(zip((r.id for r in op.results), self.items[op.value.id]))
            return []
        if isinstance(op, n.Call) and len(op.args) == 3 and not op.kwargs and not op.starred \
                and _one_of(self.consts.get(op.fn.id), (shapes.sum_to, shapes.broadcast_to)) \
                and type(shape := self.consts.get(op.args[1].id)) is tuple and \
                shape == self.consts.get(op.args[2].id, None):
            # Summed to, or spread over, the shape it has (known shapes): itself.
            self.mapping[op.result.id] = op.args[0]
            return []
        if isinstance(op, n.For):
            return self.unroll(op)
        return None

    def unroll(self, op: n.For) -> list[n.Op] | None:
        """A ``for`` over known items as one copy of its body per item."""
        items: list[n.Value | int] | None = None
        if op.iterable.id in self.items:
            items = list(self.items[op.iterable.id])
        elif op.iterable.id in self.calls:
            call = self.calls[op.iterable.id]
            bounds = [self.consts.get(a.id) for a in call.args]
            if self.consts.get(call.fn.id) is builtins.range and not call.kwargs and \
                    not call.starred and 1 <= len(bounds) <= 3 and \
                    all(type(b) is int for b in bounds) and len(range(*bounds)) <= _UNROLL:
                items = list(range(*bounds))
        if items is None or len(items) > _UNROLL or op.exit_flags:
            return None
        # Copies must see what this pass already redirected inside the body.
        substitute(op.body, {k: self.resolve(v) for k, v in self.mapping.items()})
        out: list[n.Op] = []
        cur = list(op.inits)
        for item in items:
            if isinstance(item, int):
                out.append(n.Const(item, [n.Value()], loc=op.loc))
                item = out[-1].result
            cl = Cloner({op.body.args[0].id: item,
                         **{a.id: c for a, c in zip(op.carried_args, cur)}})
            out.extend(cl.ops(op.body.ops[:-1]))
            cur = [cl.value(y) for y in op.body.terminator.values]
        self.mapping.update(zip((r.id for r in op.results), cur))
        return out

    def resolve(self, v: n.Value) -> n.Value:
        while v.id in self.mapping:
            v = self.mapping[v.id]
        return v

    def truth(self, v: n.Value) -> bool | None:
        if v.id not in self.consts:
            return None
        try:
            return bool(self.consts[v.id])
        except Exception:  # an array constant, or a __bool__ that raises: keep the test
            return None

    def fold(self, op: n.Op) -> n.Op:
        """``op`` itself (its ``*`` of known sequences spread), or an op defining its
        result from what is known: a ``Const``, or a tuple display for ``tuple(items)``."""
        if isinstance(op, (n.Call, n.Build)) and op.starred:
            self.spread(op)
        if isinstance(op, n.Call) and self.passing_check(op):
            self.changed = True
            return n.Const(None, [op.result], loc=op.loc)
        if isinstance(op, n.GetItem) and type(obj := self.consts.get(op.obj.id)) is tuple:
            index = self.constant_index(op.index)
            if type(index) is int and -len(obj) <= index < len(obj) or type(index) is slice:
                # An entry or a slice of a known shape.
                self.consts[op.result.id] = obj[index]
                self.changed = True
                return n.Const(obj[index], [op.result], loc=op.loc)
            return op
        if not isinstance(op, n.Call) or op.fn.id not in self.consts or op.kwargs or \
                op.starred:
            return op
        fn = self.consts[op.fn.id]
        if len(op.args) == 1 and op.args[0].id in self.items and _one_of(fn, _READERS):
            items = self.items[op.args[0].id]
            self.changed = True
            if fn is builtins.len:
                self.consts[op.result.id] = len(items)
                return n.Const(len(items), [op.result], loc=op.loc)
            self.items[op.result.id] = items
            return n.Build("tuple", list(items), [op.result], loc=op.loc)
        value = self.call_value(fn, op.args)
        if value is _UNKNOWN:
            return op
        self.consts[op.result.id] = value
        self.changed = True
        return n.Const(value, [op.result], loc=op.loc)

    def constant_index(self, v: n.Value) -> Any:
        """``v``'s value where it is a constant int or a slice of constant ints (or
        ``None`` parts), else :data:`_UNKNOWN`."""
        if type(self.consts.get(v.id)) is int:
            return self.consts[v.id]
        made = self.slices.get(v.id)
        if made is None:
            return _UNKNOWN
        parts = [None if p is None else self.consts.get(p.id, _UNKNOWN)
                 for p in (made.lower, made.upper, made.step)]
        if all(p is None or type(p) is int for p in parts) and parts[2] != 0:
            return slice(*parts)
        return _UNKNOWN

    def passing_check(self, op: n.Call) -> bool:
        """Whether ``op`` calls a check (``registry.mark_check``) with constant arguments
        that it accepts: the call can go."""
        fn = self.consts.get(op.fn.id, None)
        rule = registry.lookup(fn) if hashable(fn) else None
        if rule is None or not rule.check or op.starred or \
                any(v.id not in self.consts for v in [*op.args, *(v for _, v in op.kwargs)]):
            return False
        try:
            fn(*(self.consts[v.id] for v in op.args),
               **{k: self.consts[v.id] for k, v in op.kwargs})
        except Exception:
            return False  # it raises when it runs, where the user called it
        return True

    def spread(self, op: n.Call | n.Build) -> None:
        """``f(*items)`` as ``f(a, b)`` (and ``(*items, c)`` as ``(a, b, c)``) where the
        items are known."""
        old = op.args if isinstance(op, n.Call) else op.items
        new: list[n.Value] = []
        starred: list[int] = []
        for k, a in enumerate(old):
            if k in op.starred and a.id in self.items:
                new.extend(self.items[a.id])
                continue
            if k in op.starred:
                starred.append(len(new))
            new.append(a)
        if len(starred) == len(op.starred):
            return
        if isinstance(op, n.Call):
            op.args = new
        else:
            op.items = new
        op.starred = tuple(starred)
        self.changed = True

    def call_value(self, fn: Any, args: list[n.Value]) -> Any:
        if fn is builtins.isinstance and len(args) == 2:
            t = self.types.of(args[0])
            classes = self.classes(args[1])
            if t is not None and classes is not None:
                known = subclass(t, classes)
                if known is not None:
                    return known
        elif fn in (operator.is_, operator.is_not) and len(args) == 2:
            same = self.is_none(args[0], args[1])
            if same is None:
                same = self.is_none(args[1], args[0])
            if same is not None:
                return same if fn is operator.is_ else not same
        elif _static_helper(fn) and all(type(self.consts.get(a.id, _UNKNOWN)) in _SIMPLE
                                        for a in args):
            # A helper of wengert's own definitions computing a static value (axes, a
            # flag) from constants: its value, once, here.
            try:
                value = fn(*(self.consts[a.id] for a in args))
            except Exception:
                return _UNKNOWN
            if _simple(value):
                return value
        elif _one_of(fn, (numpy.shape, shapes.shape, numpy.size)) and len(args) == 1 and \
                (shape := self.known_shape(args[0])) is not None:
            # (guarded on each call, as its type)
            return shape if fn is not numpy.size else int(numpy.prod(shape, dtype=int))
        elif fn is len and len(args) == 1 and type(self.consts.get(args[0].id)) is tuple:
            return len(self.consts[args[0].id])
        elif fn is operator.add and len(args) == 2 and \
                all(type(self.consts.get(a.id)) is tuple for a in args):
            return self.consts[args[0].id] + self.consts[args[1].id]
        elif fn is numpy.ndim and len(args) == 1 and args[0].id in self.types.arrays:
            return self.types.arrays[args[0].id].ndim  # (guarded on each call, as its type)
        elif fn is len and len(args) == 1 and (made := self.calls.get(args[0].id)) and \
                len(made.args) == 1 and not made.kwargs and made.args[0].id in self.types.arrays \
                and self.consts.get(made.fn.id, None) in (numpy.shape, shapes.shape):
            return self.types.arrays[made.args[0].id].ndim  # ``len(np.shape(x))``
        elif fn is operator.not_ and len(args) == 1 and args[0].id in self.consts:
            try:
                return not self.consts[args[0].id]
            except Exception:
                return _UNKNOWN
        elif _one_of(fn, _INT_OPS) and args and \
                all(type(self.consts.get(a.id)) in (int, bool) for a in args):
            return fn(*(self.consts[a.id] for a in args))
        return _UNKNOWN

    def known_shape(self, v: n.Value) -> tuple[int, ...] | None:
        """The shape of ``v`` where type inference knows it (from the shapes of the
        arrays the API specialises on), else ``None``."""
        return self.types.shapes.get(v.id)

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


#: Constants a static helper may be computed from, and may give.
_SIMPLE = (int, float, bool, str, type(None), tuple)


def _simple(v: Any) -> bool:
    return type(v) in _SIMPLE and (type(v) is not tuple or all(_simple(x) for x in v))


def _static_helper(fn: Any) -> bool:
    """A pure helper without derivative of wengert's own rule definitions (``_axes``)."""
    if not str(getattr(fn, "__module__", "")).startswith("wengert.rules.") or \
            not hashable(fn):
        return False
    rule = registry.lookup(fn)
    return rule is not None and rule.nondifferentiable and rule.pure


def _fold_appends(region: n.Region, used: set[int] | None = None) -> bool:
    """``xs = [a]; xs.append(b); xs.append(c)`` (what an unrolled comprehension leaves)
    becomes ``xs = [a, b, c]`` where the appends end, if nothing else sees ``xs`` before."""
    if used is None:
        used = {v.id for op in n.walk(region) for v in op.operands()}
    changed = False
    for op in region.ops:
        for r in op.regions():
            changed |= _fold_appends(r, used)
    k = 0
    while k < len(region.ops):
        op = region.ops[k]
        if isinstance(op, n.Build) and op.kind == "list" and not op.starred:
            changed |= _gather_appends(region, k, used)
        k += 1
    return changed


def _gather_appends(region: n.Region, k: int, used: set[int]) -> bool:
    ops = region.ops
    build = ops[k]
    assert isinstance(build, n.Build)
    xs = build.result
    items = list(build.items)
    methods: dict[int, int] = {}  # ``xs.append`` value id -> index of its GetAttr
    gone = {k}
    last = None
    for i in range(k + 1, len(ops)):
        u = ops[i]
        if isinstance(u, n.GetAttr) and u.obj is xs and u.name == "append":
            methods[u.result.id] = i
            continue
        if isinstance(u, n.Call) and u.fn.id in methods and len(u.args) == 1 and \
                not u.kwargs and not u.starred and u.result.id not in used and \
                u.args[0] is not xs and u.args[0].id not in methods:
            items.append(u.args[0])
            gone.update((i, methods.pop(u.fn.id)))
            last = i
            continue
        watched = {xs.id, *methods}
        if any(v.id in watched for op in n.walk(n.Region([], [u])) for v in op.operands()):
            break
    if last is None or any(i < last for i in methods.values()):
        return False
    out = [op for i, op in enumerate(ops) if i not in gone or i == last]
    out[out.index(ops[last])] = n.Build("list", items, [xs], loc=build.loc)
    region.ops = out
    return True


_UNKNOWN = object()
