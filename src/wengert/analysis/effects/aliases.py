"""The alias graph of one function: which objects a write may change, and what a call does.

Activity analysis and the parameter summaries of the driver (which parameters a function
may write into, or return a part of) ask this graph; it is the may-alias analysis of
containers and objects at the level of whole values, flow-insensitive.

Values that may be the same object (a loop's initial, carried and final values, ``a``
and ``a += b``, a ``with``'s manager and target) share a union-find *class*. *Part
edges* join a container's class to the values stored into it (display items, ``a[i] =
v``, ``a.append(v)``, a closure's captures) and to the values read out of it (``a[i]``,
``a.f``, loop items, what ``list(a)`` holds). An ``If``'s result is *joined* from its
yields, one edge each: it may be either branch's object, but the two branches' objects
are not each other. A write into an object (:meth:`AliasGraph.mutations`) changes its
class, every container holding it and, where it was read out of a container, any part of
that container; an unknown callee may write at any depth of its arguments.

What each call may write, store, return a part of or copy is :class:`CallEffect`,
decided once per call (:meth:`AliasGraph.classify`) from the callee: a rule (a fresh
result, arguments untouched), an in-place operator, a method by name
(:mod:`~wengert.analysis.effects.vocabulary`), a function whose summary is known
(``callee_writes``, ``method_writes``), or an unknown callee (anything, at any depth).

Limits (imprecise, never unsound): no types beyond ``scalar(v)``, so an unknown call may
write into all its arguments; a method neither writing nor read-only by name is taken to
store its arguments into its object; registered primitives return fresh objects (the
items of ``a + b`` on lists are not tracked back); :data:`FRESH_METHODS` are taken as deep
copies (``list.copy`` is shallow).
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from wengert import runtime
from wengert.analysis.effects.vocabulary import (
    FRESH_METHODS,
    MUTATING_METHODS,
    READONLY_METHODS,
    SHRINKING_METHODS,
)
from wengert.analysis.effects.vocabulary import INPLACE_OPERATORS as _INPLACE_OPERATORS
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses
from wengert.objects import hashable, is_namedtuple, namedtuple_method
from wengert.rules import registry  # importing the package registers the built-in rules

#: ``operator.i*`` return their (possibly mutated) first operand (by id: the analysis
#: compares callables it finds in constants).
INPLACE_OPERATORS = frozenset(id(f) for f in _INPLACE_OPERATORS)


# ----------------------------------------------------------------------------- helpers


def const_value(defs: dict[int, n.Op], v: n.Value) -> tuple[bool, Any]:
    """``(True, value)`` when ``v`` is defined by a ``Const``."""
    op = defs.get(v.id)
    if isinstance(op, n.Const):
        return True, op.value
    return False, None


def _plain_dataclass(fn: Any) -> bool:
    """A dataclass whose call runs its generated ``__init__`` (no ``__post_init__``, no
    ``__new__`` of its own): the new object holds the arguments, nothing else changes."""
    return isinstance(fn, type) and dataclasses.is_dataclass(fn) and \
        fn.__new__ is object.__new__ and not hasattr(fn, "__post_init__") and \
        getattr(getattr(fn.__init__, "__code__", None), "co_filename", "") == "<string>"


#: Builtins whose result is one of the items of their arguments (not a new container).
_ITEM_RETURNING = frozenset({max, min, next, getattr})
#: Builtins whose result is a new container of their arguments' items.
_COPYING = frozenset({list, tuple, sorted, reversed, enumerate, zip, iter, filter, dict, set,
                      frozenset, copy.copy})
#: Library functions whose result is new throughout, holding nothing they are given.
_FRESH = frozenset({copy.deepcopy, dataclasses.asdict, dataclasses.astuple})


def _is_builtin(obj: Any) -> bool:
    """A callable from the ``builtins`` module (``list``, ``sorted``, ``print`` ...)."""
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(builtins, name, None) is obj


def _ops(region: n.Region) -> Iterable[n.Op]:
    """Ops of ``region`` and nested control-flow regions, not entering nested functions."""
    for op in region.ops:
        yield op
        if not isinstance(op, n.MakeFunction):
            for r in op.regions():
                yield from _ops(r)


class CallEffect(NamedTuple):
    """What a call may do besides computing its results from its operands."""

    #: Registered as nondifferentiable: results never varied, operands not useful through it.
    cut: bool = False
    #: Values whose objects the call may write into.
    targets: tuple[n.Value, ...] = ()
    #: Operands whose values (or parts) the call may write into ``targets``.
    stored: tuple[n.Value, ...] = ()
    #: The writes may reach any depth of the targets (an unknown callee), not only their slots.
    deep: bool = False
    #: Objects the results may be, or be parts of.
    read_from: tuple[n.Value, ...] = ()
    #: The results are the same object as these (in-place operators).
    same: tuple[n.Value, ...] = ()
    #: The results are new containers holding parts of these (``list(a)``,
    #: ``enumerate(a)``, ``zip(a, b)``: a shallow copy shares ``a``'s items).
    shares: tuple[n.Value, ...] = ()
    #: The results are new objects holding these (a dataclass made of its fields).
    holds: tuple[n.Value, ...] = ()


class AliasGraph:
    """The state of one run: definitions, the alias graph, and the two fixpoints.

    Aliasing is recorded at the level of *classes* (union-find over values that may be the
    same object: a loop's init/carried/result values, an in-place operator's operand and
    result) and *part edges* between classes: a value stored into a container (a display
    item, ``a[i] = v``, ``a.append(v)``, a closure's captures) is a stored part of it; a
    value read out of one (``a[i]``, ``a.f``, a loop item, what ``list(a)`` returns) is a
    read part of it, and may be any of its parts. An ``If``'s result is *joined* from its
    yields, one edge each, not put in one class with them: it may be either branch's
    object, but the two branches' objects are not each other (only one branch runs), so a
    write into one (``t += g`` on a running sum in the loop of one branch) is not a write
    into the other (``m[0][0]``, a part of a parameter, returned by the other branch).
    """

    def __init__(self, fn: n.Function,
                 scalar: Callable[[n.Value], bool] | None = None,
                 callee_writes: Callable[[Any], frozenset[int] | None] | None = None,
                 method_writes: Callable[..., tuple[Any, frozenset[int]] | None] | None = None,
                 vjp_operator: Callable[[Any], bool] | None = None) -> None:
        self.fn = fn
        self.scalar = scalar
        self.callee_writes = callee_writes
        self.method_writes = method_writes
        self.vjp_operator = vjp_operator
        self.ops = list(_ops(fn.body))
        self.defs: dict[int, n.Op] = {}
        for op in self.ops:
            for r in op.results:
                self.defs[r.id] = op
        #: A ``for`` loop's item, by id: the loop (made when first needed).
        self._loop_items: dict[int, n.For] | None = None
        self.calls: dict[int, CallEffect] = {id(op): self.classify(op)
                                        for op in self.ops if isinstance(op, n.Call)}
        self.parent: dict[int, int] = {}
        #: class -> values stored into or read out of it
        self.parts: dict[int, list[n.Value]] = {}
        #: class -> containers some member of it is a part of
        self.containers: dict[int, list[n.Value]] = {}
        #: class -> containers some member of it was read out of
        self.read_of: dict[int, list[n.Value]] = {}
        #: class -> its members
        self.members: dict[int, list[n.Value]] = {}
        #: class of an ``If``'s result -> the values its branches yield for it
        self.joined_from: dict[int, list[n.Value]] = {}
        #: class of a yielded value -> the ``If`` results it is yielded for
        self.joined_into: dict[int, list[n.Value]] = {}
        self._mutation_cache: dict[tuple[int, bool], set[int]] = {}
        self._build_aliases()

    # -- calls ---------------------------------------------------------------------------

    def _applied_vjp(self, op: n.Op | None) -> bool:
        """Whether ``op`` is ``wengert.vjp(f, *args)`` of a function ``f`` known here."""
        return isinstance(op, n.Call) and self.vjp_operator is not None and \
            bool(op.args) and not op.starred and not op.kwargs and \
            self.vjp_operator(const_value(self.defs, op.fn)[1]) and \
            const_value(self.defs, op.args[0])[0]

    def classify(self, op: n.Call) -> CallEffect:
        args = (*op.args, *(v for _, v in op.kwargs))
        is_const, fn = const_value(self.defs, op.fn)
        if self._applied_vjp(op) and self.callee_writes is not None:
            # ``wengert.vjp(f, *args)`` runs ``f``: it writes what ``f`` writes.
            written = self.callee_writes(const_value(self.defs, op.args[0])[1],
                                         self._given(op.args[1:]))
            if written is not None:
                return CallEffect(targets=tuple(a for i, a in enumerate(op.args[1:])
                                           if i in written),
                             stored=args, deep=True, read_from=args)
        taken = self.defs.get(op.fn.id)
        if isinstance(taken, n.GetItem) and const_value(self.defs, taken.index) == (True, 1) \
                and self._applied_vjp(self.defs.get(taken.obj.id)):
            # Its pullback, called: it reads its cotangent (the cotangents it gives back may
            # be it) and writes into nothing.
            return CallEffect(read_from=args)
        if is_const:
            rule = registry.lookup(fn)
            if rule is not None and rule.nondifferentiable:
                return CallEffect(cut=True)
            if id(fn) in INPLACE_OPERATORS:
                # ``a += b`` extends a list or array in place and returns it.
                return CallEffect(targets=args[:1], stored=args[1:], same=args[:1])
            if fn is builtins.setattr or fn is runtime.delete_item:
                return CallEffect(targets=args[:1], stored=args[2:])
            if hashable(fn) and fn in _ITEM_RETURNING and not op.starred:
                # ``max(a)`` and ``next(it)`` return one of ``a``'s items.
                return CallEffect(read_from=args)
            if hashable(fn) and fn in _FRESH and not op.starred:
                return CallEffect(read_from=())
            if (namedtuple_method(fn) or fn is dataclasses.replace) and not op.starred:
                # ``p._replace(x=v)``, ``dataclasses.replace(p, x=v)``, ``p._asdict()``: a
                # new object holding ``p``'s other fields and the values given.
                return CallEffect(shares=args[:1], holds=args[1:])
            if hashable(fn) and fn in _COPYING and not op.starred:
                # ``list(a)``, ``sorted(a)``, ``enumerate(a)``, ``zip(a, b)`` make new
                # containers holding ``a``'s items (a write into an item read back out is a
                # write into ``a``'s); they write nothing.
                return CallEffect(shares=args)
            if rule is not None:
                # A registered primitive returns a fresh value and leaves its arguments alone.
                return CallEffect()
            if isinstance(fn, (types.WrapperDescriptorType, types.MethodDescriptorType)) and \
                    getattr(fn, "__name__", None) in MUTATING_METHODS:
                # ``object.__setattr__(o, name, v)``, ``list.append(xs, v)``: a method of a
                # class called with its object first writes into that object.
                return CallEffect(targets=args[:1], stored=args[1:], read_from=args)
            if _is_builtin(fn):
                return CallEffect(read_from=args)  # (called with ``*args``: any of them)
            # An unregistered function (user code, a library function without a rule) may
            # write any argument into any other, at any depth, and return any part of them
            # (unless a summary of the function says which arguments it may write into).
            if isinstance(fn, type) and is_namedtuple(fn):
                # A named tuple holds its arguments and writes into nothing.
                return CallEffect(holds=args)
            if _plain_dataclass(fn) and not op.starred:
                # A dataclass's generated ``__init__`` stores its arguments in the new
                # object and writes into nothing else.
                return CallEffect(holds=args)
            written = self.callee_writes(fn, self._given(op.args)) \
                if self.callee_writes is not None and \
                not op.starred else None
            if written is not None:
                slots = [*(_param_slot(fn, i, None) for i in range(len(op.args))),
                         *(_param_slot(fn, None, k) for k, _ in op.kwargs)]
                return CallEffect(targets=tuple(a for a, k in zip(args, slots)
                                           if k is None or k in written),
                             stored=args, deep=True, read_from=args)
            return CallEffect(targets=args, stored=args, deep=True, read_from=args)
        method = self.defs.get(op.fn.id)
        if isinstance(method, n.GetAttr):
            name, obj = method.name, method.obj
            read_from = () if name in FRESH_METHODS else (obj, *args)
            if name in READONLY_METHODS:
                return CallEffect(read_from=read_from)
            summary = None
            if self.method_writes is not None and self.fn.body.args and not op.starred:
                params = self.fn.body.args
                if obj is params[0] or self._super_of_self(obj) is not None:
                    summary = self.method_writes(name, self._super_of_self(obj))
                elif obj in params:
                    # ``p.kinetic()`` on a parameter whose class is known: that method.
                    summary = self.method_writes(name, None, params.index(obj))
                elif (k := self._item_of_param(obj)) is not None:
                    # ``q.kinetic()`` for ``q`` an item of a list parameter of known items.
                    summary = self.method_writes(name, None, k, True)
            if summary is not None:
                # ``self.m(args)`` in a method of a known class: ``m``'s own summary.
                return self._method_call(summary, obj, op)
            if name in SHRINKING_METHODS and not op.kwargs and not op.starred and \
                    (name != "sort" or not op.args):
                # ``r = list(row); r.pop(j)``: the copy changes, not ``row``'s items.
                return CallEffect(targets=(obj,), read_from=(obj,))
            if name in MUTATING_METHODS:
                if isinstance(const_value(self.defs, obj)[1], type) and args:
                    # Called through its class (``object.__setattr__(o, "x", v)``): the
                    # object written into is the first argument.
                    return CallEffect(targets=args[:1], stored=args[1:], read_from=args)
                return CallEffect(targets=(obj,), stored=args, read_from=read_from)
            return CallEffect(targets=(obj, *args), stored=(obj, *args), deep=True,
                         read_from=read_from)
        nested = self.defs.get(op.fn.id)
        if isinstance(nested, n.MakeFunction) and not op.starred and not op.kwargs and \
                len(op.args) == len(nested.func.body.args) and \
                (written := _nested_writes(nested, self)) is not None:
            # A function defined here (``def energy(q): ...``), called: what it writes,
            # where it writes into none of the values it captures.
            return CallEffect(targets=tuple(a for i, a in enumerate(op.args) if i in written),
                         stored=args, deep=True, read_from=args)
        receiver = self.method_writes("__call__", None) \
            if self.method_writes is not None and self.fn.body.args and \
            op.fn is self.fn.body.args[0] and not op.starred else None
        if receiver is not None:
            # ``self(args)`` in a method of a known class calls the class's ``__call__``
            # (Python looks it up on the class, never on the object): its own summary, as
            # ``self.__call__(args)``, so a callable object recursing on itself is not an
            # unknown callee that may write anywhere.
            return self._method_call(receiver, op.fn, op)
        # A function known only at run time (an argument, a closure): it may write into its
        # arguments and, at any depth, into the function object (a closure's captures).
        everything = (op.fn, *args)
        return CallEffect(targets=everything, stored=everything, deep=True, read_from=everything)

    def _given(self, args: Sequence[n.Value]) -> tuple[int | None, ...]:
        """For each argument of a call, which parameter of this function it is (``None``
        for another value): a callee's writes may depend on the classes they have."""
        params = self.fn.body.args
        return tuple(params.index(a) if a in params else None for a in args)

    def _method_call(self, summary: tuple[Any, frozenset[int]], receiver: n.Value,
                     op: n.Call) -> CallEffect:
        """A call of the method ``summary`` names (the function and the parameters it
        writes into) on ``receiver``, which it takes as its first parameter."""
        target, written = summary
        slots = [0, *(_param_slot(target, i + 1, None) for i in range(len(op.args))),
                 *(_param_slot(target, None, k) for k, _ in op.kwargs)]
        every = (receiver, *op.args, *(v for _, v in op.kwargs))
        return CallEffect(targets=tuple(a for a, k in zip(every, slots)
                                   if k is None or k in written),
                     stored=every, deep=True, read_from=every)

    def _item_of_param(self, v: n.Value) -> int | None:
        """The parameter ``v`` is an item of (``ps[i]``, ``for q in ps``, ``for i, q in
        enumerate(ps)``), or ``None``."""
        params = self.fn.body.args
        if self._loop_items is None:
            self._loop_items = {op.body.args[0].id: op for op in n.walk(self.fn.body)
                                if isinstance(op, n.For)}
        d = self.defs.get(v.id)
        if isinstance(d, n.GetItem):
            return params.index(d.obj) if d.obj in params else None
        if isinstance(d, n.Unpack) and len(d.results) == 2 and v is d.results[1]:
            loop = self._loop_items.get(d.value.id)
            made = self.defs.get(loop.iterable.id) if loop is not None else None
            if isinstance(made, n.Call) and len(made.args) == 1 and not made.kwargs and \
                    not made.starred and const_value(self.defs, made.fn)[1] is enumerate \
                    and made.args[0] in params:
                return params.index(made.args[0])
            return None
        loop = self._loop_items.get(v.id)
        if loop is not None and loop.iterable in params:
            return params.index(loop.iterable)
        return None

    def _super_of_self(self, v: n.Value) -> type | None:
        """``C`` where ``v`` is ``super(C, self)`` of this method's first parameter."""
        d = self.defs.get(v.id)
        if not isinstance(d, n.Call) or len(d.args) != 2 or d.kwargs or \
                d.args[1] is not self.fn.body.args[0]:
            return None
        if const_value(self.defs, d.fn)[1] is not super:
            return None
        is_c, start = const_value(self.defs, d.args[0])
        return start if is_c and isinstance(start, type) else None

    # -- alias graph -------------------------------------------------------------------------

    def eligible(self, v: n.Value) -> bool:
        """Whether ``v`` may be (part of) a mutable object; constants and ints/bools/str are not."""
        op = self.defs.get(v.id)
        if isinstance(op, (n.Const, n.FormatValue, n.JoinStr, n.BuildSlice)):
            return False
        # A non-differentiable call's result (``np.zeros(n)``) may still be an object that
        # values being differentiated are written into afterwards: only its type rules it out.
        # A value known to be a float (an int, a string) is never an object anyone writes to.
        return self.scalar is None or not self.scalar(v)

    def find(self, v: n.Value) -> int:
        """The class representative of ``v`` (path halving)."""
        k = v.id
        p = self.parent
        while p.get(k, k) != k:
            p[k] = p.get(p[k], p[k])
            k = p[k]
        return k

    def union(self, a: n.Value, b: n.Value) -> None:
        """Put ``a`` and ``b`` in one class when both may be mutable objects."""
        if not (self.eligible(a) and self.eligible(b)):
            return
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def _build_aliases(self) -> None:
        edges: list[tuple[n.Value, n.Value, bool]] = []  # (part, container, is_read)
        joins: list[tuple[n.Value, n.Value]] = []  # (yielded value, ``If`` result)

        def stored(part: n.Value, container: n.Value) -> None:
            edges.append((part, container, False))

        def read(part: n.Value, container: n.Value) -> None:
            edges.append((part, container, True))

        for op in self.ops:
            if isinstance(op, n.Call):
                info = self.calls[id(op)]
                for r in op.results:
                    for c in info.read_from:
                        read(r, c)
                    for c in info.shares:
                        # An item of ``c``'s (a value of no op: what the copy holds of it).
                        item = n.Value()
                        read(item, c)
                        stored(item, r)
                    for c in info.holds:
                        stored(c, r)
                    for s in info.same:
                        self.union(r, s)
                for t in info.targets:
                    for s in info.stored:
                        if s is not t:
                            stored(s, t)
            elif isinstance(op, (n.GetAttr, n.GetItem)):
                read(op.result, op.obj)
            elif isinstance(op, n.Unpack):
                for r in op.results:
                    read(r, op.value)
            elif isinstance(op, (n.Build, n.BuildDict)):
                for item in op.operands():
                    stored(item, op.result)
            elif isinstance(op, (n.SetItem, n.SetAttr)):
                stored(op.value, op.obj)
            elif isinstance(op, n.If):
                for region in (op.then, op.orelse):
                    for y, r in zip(region.terminator.operands(), op.results, strict=True):
                        joins.append((y, r))
            elif isinstance(op, (n.For, n.While)):
                if isinstance(op, n.For):
                    read(op.body.args[0], op.iterable)
                ys = op.body.terminator.operands()
                for init, arg, y, r in zip(op.inits, op.carried_args, ys, op.results, strict=True):
                    for v in (init, y, r):
                        self.union(arg, v)
            elif isinstance(op, n.With):
                # ``__enter__`` usually returns the manager itself.
                self.union(op.body.args[0], op.manager)
                for y, r in zip(op.body.terminator.operands(), op.results, strict=True):
                    self.union(y, r)
            elif isinstance(op, n.MakeFunction):
                for c in [*free_uses(op.func.body), *op.operands()]:
                    stored(c, op.result)
        for v in self._all_values():
            if self.eligible(v):
                self.members.setdefault(self.find(v), []).append(v)
        for part, container, is_read in edges:
            if not (self.eligible(part) and self.eligible(container)):
                continue
            p, c = self.find(part), self.find(container)
            self.parts.setdefault(c, []).append(part)
            self.containers.setdefault(p, []).append(container)
            if is_read:
                self.read_of.setdefault(p, []).append(container)
        for y, r in joins:
            if self.eligible(y) and self.eligible(r) and self.find(y) != self.find(r):
                self.joined_from.setdefault(self.find(r), []).append(y)
                self.joined_into.setdefault(self.find(y), []).append(r)

    def _below(self, r: int) -> set[int]:
        """Class ``r`` and the classes of the values joined into it, transitively: the
        classes of the objects a value of class ``r`` may be."""
        out: set[int] = set()
        stack = [r]
        while stack:
            k = stack.pop()
            if k not in out:
                out.add(k)
                stack.extend(self.find(y) for y in self.joined_from.get(k, ()))
        return out

    def mutations(self, v: n.Value, deep: bool) -> set[int]:
        """Classes whose objects may change when something is written into ``v``'s object.

        Upwards, every container holding it changes; if ``v`` was read out of a container it
        may be any part of that container; an unknown callee may write at any depth. A
        write into an ``If``'s result may be into any branch's object, and one into a
        branch's object changes the result (which may be it), but not the other branches'
        objects: a class reached from a yield (``joined``) is not descended again.
        """
        if not self.eligible(v):
            return set()
        key = (self.find(v), deep)
        cached = self._mutation_cache.get(key)
        if cached is not None:
            return cached
        out: set[int] = set()
        # (class, deep, reached only as the result of a join from one of its yields)
        seen: set[tuple[int, bool, bool]] = set()
        stack = [(*key, False)]
        while stack:
            r, d, joined = stack.pop()
            if any((r, dd, jj) in seen for dd in {d, True} for jj in {joined, False}):
                continue
            seen.add((r, d, joined))
            out.add(r)
            # (A part written changes its container whichever object the container is.)
            stack.extend((self.find(c), False, False) for c in self.containers.get(r, ()))
            for c in self.read_of.get(r, ()):
                stack.extend((self.find(p), False, False)
                             for k in self._below(self.find(c)) for p in self.parts.get(k, ()))
            if d:
                stack.extend((self.find(p), True, False) for p in self.parts.get(r, ()))
            stack.extend((self.find(j), d, True) for j in self.joined_into.get(r, ()))
            if not joined:
                stack.extend((self.find(y), d, False) for y in self.joined_from.get(r, ()))
        self._mutation_cache[key] = out
        return out

    def content_of(self, v: n.Value) -> set[int]:
        """``v``'s class and, transitively, the classes of its parts and of the objects it
        may be (an ``If``'s yields)."""
        if not self.eligible(v):
            return set()
        out: set[int] = set()
        stack = [self.find(v)]
        while stack:
            r = stack.pop()
            if r in out:
                continue
            out.add(r)
            stack.extend(self.find(p) for p in self.parts.get(r, ()))
            stack.extend(self.find(y) for y in self.joined_from.get(r, ()))
        return out

    def _all_values(self) -> list[n.Value]:
        out = list(self.fn.body.args)
        for op in self.ops:
            out.extend(op.results)
            out.extend(n.region_args(op))
        return out


def _param_slot(fn: Any, position: int | None, keyword: str | None) -> int | None:
    """The index, among ``fn``'s parameters in the order of its IR's region arguments
    (positional, ``*args``, keyword-only, ``**kwargs``), of the parameter receiving the
    argument at ``position`` or named ``keyword`` (``None``: unknown, or a ``**mapping``)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    npos, var = code.co_argcount, bool(code.co_flags & 0x04)
    names = code.co_varnames
    if position is not None:
        return position if position < npos else npos if var else None
    if keyword is None:
        return None  # a ``**mapping``: any parameter
    if keyword in names[code.co_posonlyargcount:npos]:
        return names.index(keyword)
    kwonly = names[npos:npos + code.co_kwonlyargcount]
    if keyword in kwonly:
        return npos + var + kwonly.index(keyword)
    if code.co_flags & 0x08:
        return npos + var + code.co_kwonlyargcount
    return None


def _nested_writes(mk: n.MakeFunction, outer: AliasGraph) -> frozenset[int] | None:
    """The parameters the nested function ``mk`` defines may write into, or ``None`` where
    it may write into a value it captures (its summary is then not enough)."""
    params = list(mk.func.body.args)
    captured = [v for v in free_uses(mk.func.body) if v not in params]
    probe = n.Function(mk.func.name, mk.func.signature,
                       n.Region([*params, *captured], mk.func.body.ops))
    found = written_params(probe, outer.scalar, outer.callee_writes, outer.method_writes,
                           outer.vjp_operator)
    if any(i >= len(params) for i in found):
        return None
    return found


def returned_params(fn: n.Function,
                    callee_writes: Callable[[Any], frozenset[int] | None] | None = None
                    ) -> frozenset[int]:
    """Indices of ``fn``'s parameters whose objects (or a part of them) ``fn`` may return,
    anywhere in what it returns (``return xs``, ``return m[0]``, ``return (p, 1.0)``):
    a write into the result of a call is then a write into the argument. Over-approximates."""
    analysis = AliasGraph(fn, None, callee_writes)
    returned: set[int] = set()
    for op in analysis.ops:
        if isinstance(op, n.Return):
            returned |= analysis.content_of(op.value)
    return frozenset(i for i, p in enumerate(fn.body.args)
                     if analysis.eligible(p) and analysis.content_of(p) & returned)


def written_params(fn: n.Function, scalar: Callable[[n.Value], bool] | None = None,
                   callee_writes: Callable[..., frozenset[int] | None] | None = None,
                   method_writes: Callable[..., tuple[Any, frozenset[int]] | None]
                   | None = None,
                   vjp_operator: Callable[[Any], bool] | None = None) -> frozenset[int]:
    """Indices of ``fn``'s parameters whose objects (or anything inside them) ``fn`` may
    change: a write into them, into a part of them, or a call that may write into them
    (an unknown callee, at any depth; ``callee_writes(f)`` may say which parameters a
    known function ``f`` writes into, and ``method_writes(name, after)`` which function
    ``self.name`` is, or ``super(after, self).name``, and which of its parameters it writes
    into, where ``fn`` is a method of a known class (``method_writes(name, None, k)``:
    ``p.name`` for the ``k``-th parameter ``p``, where its class is known);
    ``vjp_operator(v)`` whether ``v`` is
    ``wengert.vjp``, whose call writes what the function it runs writes, and whose pullback
    writes nothing). Over-approximates, never misses a write."""
    analysis = AliasGraph(fn, scalar, callee_writes, method_writes, vjp_operator)
    changed: set[int] = set()
    for op in analysis.ops:
        if isinstance(op, (n.SetItem, n.SetAttr)):
            changed |= analysis.mutations(op.obj, False)
        elif isinstance(op, n.Call):
            info = analysis.calls[id(op)]
            for t in info.targets:
                changed |= analysis.mutations(t, info.deep)
    out = set()
    for i, p in enumerate(fn.body.args):
        if analysis.eligible(p) and analysis.content_of(p) & changed:
            out.add(i)
    return frozenset(out)
