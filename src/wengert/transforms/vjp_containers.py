"""Reverse mode of containers and objects: reads and writes of items and attributes,
displays, unpacking, and the list methods reverse mode differentiates itself (``append``,
``pop``), as a mixin of :class:`~wengert.transforms.vjp.VJP` (one handler per op kind).

An adjoint of a container is a new container per update (never mutated in place here:
``transforms/inplace.py`` turns updates of adjoints nothing else holds into in-place ones);
the entries of a dict parameter read under constant keys get scalar adjoints of their own
(:meth:`ReverseContainers.entry_slot`). Before the walk, the reads of a list or dict
held in a field of an object the function makes and keeps become one read per value the
field is given (:func:`own_field_containers`), so writes into it are writes into a list
of the function's own.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.objects import is_writeback, write_targets
from wengert.analysis.effects.vocabulary import STRUCTURE_READERS
from wengert.diagnostics import NonDifferentiableError, SourceLoc
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses
from wengert.objects import attribute_kind, hashable, plain_class
from wengert.rules import shapes
from wengert.transforms.base import DECLINED, FLOATS, IMMUTABLE
from wengert.transforms.devirtualize import check_stored_attribute, checked_attribute
from wengert.transforms.vjp_scope import Action, Scope, _bar

#: The key of a field's scalar adjoint among an object's slots (a dict's are its keys).
FIELD = "field"

#: Calls that make a new list or dict (a field's own, when stored there and nowhere else).
_FRESH_CONTAINERS = (list, dict)



def own_field_containers(fn: n.Function, type_of: Callable[[n.Value], Any],
                         written: Callable[[Any], Any] | None) -> set[int]:
    """Make the reads ``p.f`` of a list or dict some of which the function writes into
    (``p.hist.append(x)``, ``p.items[i] = v``, in loops, in inlined methods) reads of one
    value per assignment of the field: ``L = p.f`` right after the constructor or the
    ``p.f = [...]`` that gave the field its list; return the ids of those reads.

    Each read of a field has an adjoint of its own, added into the object's where it was
    read; a write into one would miss what later reads of the same list hold (hence
    :meth:`~wengert.transforms.vjp.VJP.borrowed`). Read once, the list is one value, as
    if the function held it in a variable, and its adjoint is one adjoint. That is only
    so where nothing else can reach the list or the object, so a field is rewritten only
    when all of these hold (else nothing changes, and the write stays refused):

    * ``p`` is made here (a dataclass constructor with its generated ``__init__``, or
      ``object.__new__`` with an inlined ``__init__``), its class leaves attribute access
      to Python, and the function only reads and assigns its fields: never passes it on,
      stores, returns or captures it (a pullback given ``p``'s adjoint whole would give
      the field's part to the list only where the list was stored, after undoing the
      writes into it);
    * every read of ``p.f`` is reached by one assignment of the field, found by looking
      back through the structured control flow (not one inside a branch or a later loop
      iteration);
    * each such assignment stores a new list or dict that nothing else holds: a display,
      ``list(...)``/``dict(...)`` used there only, or a dataclass ``default_factory`` of
      ``list``/``dict`` (a caller's list stored in the field is also the caller's, whose
      reads the field's adjoint would not see).
    """
    where: dict[int, tuple[n.Region, n.Op | None]] = {}
    defs: dict[int, n.Op] = {}
    uses: dict[int, list[n.Op]] = {}

    def visit(region: n.Region, owner: n.Op | None) -> None:
        for op in region.ops:
            where[id(op)] = (region, owner)
            for r in op.results:
                defs[r.id] = op
            operands = op.operands()
            if isinstance(op, n.MakeFunction):
                operands = operands + free_uses(op.func.body)
            for v in operands:
                uses.setdefault(v.id, []).append(op)
            if not isinstance(op, n.MakeFunction):
                for r in op.regions():
                    visit(r, op)

    visit(fn.body, None)
    fields: dict[tuple[int, str], n.Value] = {}  # (object id, field) -> the object
    for op in list(n.walk_local(fn.body)):
        # (A callee's writes are summarised only where it is given a field's value.)
        given_field = isinstance(op, n.Call) and \
            any(isinstance(defs.get(a.id), n.GetAttr) for a in op.args)
        for t in write_targets(op, defs, type_of, written if given_field else None):
            read = defs.get(t.id)
            if isinstance(read, n.GetAttr) and type_of(read.result) not in IMMUTABLE:
                fields.setdefault((read.obj.id, read.name), read.obj)
    owned: set[int] = set()
    mapping: dict[int, n.Value] = {}
    for (_, name), obj in fields.items():
        plan = _field_reads(obj, name, defs, uses, where)
        if plan is None:
            continue
        for assign, reads in plan:
            region, _ = where[id(assign)]
            canonical = n.GetAttr(obj, name, [n.Value(f"{obj.hint}_{name}" if obj.hint
                                                      else name)], loc=assign.loc)
            region.ops.insert(region.ops.index(assign) + 1, canonical)
            owned.add(canonical.result.id)
            for read in reads:
                mapping[read.result.id] = canonical.result
                read_region, _ = where[id(read)]
                read_region.ops.remove(read)
    substitute(fn.body, mapping)
    return owned


def _field_reads(obj: n.Value, name: str, defs: Mapping[int, n.Op],
                 uses: Mapping[int, list[n.Op]],
                 where: Mapping[int, tuple[n.Region, n.Op | None]]
                 ) -> list[tuple[n.Op, list[n.GetAttr]]] | None:
    """For the field ``name`` of the object ``obj``: each assignment of a new container
    to it and the reads it reaches (see :func:`own_field_containers`), or ``None`` where
    that is not known of every read."""
    made = defs.get(obj.id)
    cls = _made_class(made, defs)
    if cls is None or made is None:
        return None
    reads: list[n.GetAttr] = []
    assigns: list[n.Op] = [made]
    for use in uses.get(obj.id, []):
        if isinstance(use, n.GetAttr) and attribute_kind(cls, use.name) == "field":
            if use.name == name:
                reads.append(use)
        elif isinstance(use, n.SetAttr) and use.obj is obj and use.value is not obj and \
                attribute_kind(cls, use.name) == "field":
            if use.name == name:
                assigns.append(use)
        elif use is not made and not reads_structure(use, obj, defs):
            return None  # passed on, stored, returned, captured: seen whole elsewhere
    # The ops holding an assignment somewhere inside them (a branch, a loop).
    holding: set[int] = set()
    for a in assigns:
        owner = where[id(a)][1]
        while owner is not None:
            holding.add(id(owner))
            owner = where[id(owner)][1]
    ids = {id(a) for a in assigns}
    plan: dict[int, tuple[n.Op, list[n.GetAttr]]] = {}
    for read in reads:
        assign = _reaching(read, ids, holding, where)
        if assign is None or not _fresh(assign, name, cls, defs, uses, where):
            return None
        plan.setdefault(id(assign), (assign, []))[1].append(read)
    return list(plan.values())


def _made_class(made: n.Op | None, defs: Mapping[int, n.Op]) -> type | None:
    """The class of the object ``made`` makes, if it is a constructor whose effect on the
    fields is known (a dataclass's generated ``__init__``, or ``object.__new__`` that an
    inlined ``__init__`` follows) of a class leaving attribute access to Python."""
    if not isinstance(made, n.Call) or made.starred:
        return None
    fn = _const(made.fn, defs)
    if fn is object.__new__ and len(made.args) == 1 and not made.kwargs:
        cls = _const(made.args[0], defs)
    else:
        cls = fn
        if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__") or \
                getattr(getattr(cls, "__init__", None), "__code__", None) is None or \
                cls.__init__.__code__.co_filename != "<string>":
            return None
    if not isinstance(cls, type) or not plain_class(cls) or \
            cls.__setattr__ is not object.__setattr__ or \
            cls.__delattr__ is not object.__delattr__:
        return None
    return cls


def reads_structure(op: n.Op, obj: n.Value, defs: Mapping[int, n.Op]) -> bool:
    """Whether ``op`` is a call reading only the structure of ``obj``: one of
    :data:`~wengert.analysis.effects.vocabulary.STRUCTURE_READERS` given ``obj`` alone at
    the position it reads that way."""
    if not isinstance(op, n.Call) or op.kwargs or op.starred:
        return False
    fn = _const(op.fn, defs)
    at = [k for k, a in enumerate(op.args) if a is obj]
    return bool(at) and any(fn is f and at == [k] for f, k in STRUCTURE_READERS)


def _const(v: n.Value, defs: Mapping[int, n.Op]) -> Any:
    """What the value ``v`` is, where a ``Const`` defines it (``None`` otherwise)."""
    d = defs.get(v.id)
    return d.value if isinstance(d, n.Const) else None


def _fresh(assign: n.Op, name: str, cls: type, defs: Mapping[int, n.Op],
           uses: Mapping[int, list[n.Op]],
           where: Mapping[int, tuple[n.Region, n.Op | None]]) -> bool:
    """Whether ``assign`` (a constructor, or ``p.name = v``) gives the field ``name`` a new
    list or dict that nothing else holds."""
    if isinstance(assign, n.SetAttr):
        value = assign.value
    else:
        if not isinstance(assign, n.Call) or _const(assign.fn, defs) is object.__new__:
            return False  # (an inlined ``__init__`` assigns the fields after it)
        fields = dataclasses.fields(cls)
        init = [f for f in fields if f.init]
        if len(assign.args) > len(init):
            return False
        given = dict(zip((f.name for f in init), assign.args))
        for key, v in assign.kwargs:
            if key is None:
                return False
            given[key] = v
        field = next((f for f in fields if f.name == name), None)
        if field is None:
            return False
        if name not in given:
            # The generated ``__init__`` calls the factory: a list or dict of its own.
            return any(field.default_factory is c for c in _FRESH_CONTAINERS)
        value = given[name]
    if sum(v is value for v in assign.operands()) != 1:
        return False
    region = where[id(assign)][0]
    before = region.ops[:region.ops.index(assign)]
    for holder in uses.get(value.id, []):
        # Its length taken before it is stored (``list(xs)``'s rule does), or its structure
        # read by a pullback differentiated again, keeps nothing.
        if holder is not assign and not reads_structure(holder, value, defs) and \
                not (holder in before and isinstance(holder, n.Call) and
                     _const(holder.fn, defs) is len):
            return False
    d = defs.get(value.id)
    if isinstance(d, n.Build):
        return d.kind == "list"
    if isinstance(d, n.BuildDict):
        return True
    return isinstance(d, n.Call) and any(_const(d.fn, defs) is c for c in _FRESH_CONTAINERS)


def _reaching(read: n.Op, assigns: set[int], holding: set[int],
              where: Mapping[int, tuple[n.Region, n.Op | None]]) -> n.Op | None:
    """The assignment whose value ``read`` reads on every run: the nearest one before it,
    looking back through the enclosing regions; ``None`` where an op before it may assign
    the field (a branch holding an assignment, a loop around the read that assigns it
    later in its body, for the next iteration)."""
    cur = read
    while True:
        region, owner = where[id(cur)]
        for op in reversed(region.ops[:region.ops.index(cur)]):
            if id(op) in assigns:
                return op
            if id(op) in holding:
                return None
        if owner is None or isinstance(owner, (n.For, n.While)) and id(owner) in holding:
            return None
        cur = owner


class ReverseContainers:
    """The container and object handlers of :class:`~wengert.transforms.vjp.VJP`."""

    def call_list_method(self, op: n.Call, method: n.GetAttr, b: Builder) -> Action | None:
        if method.name not in ("append", "pop"):
            return DECLINED  # dispatched: extend and insert have Python definitions
        if not self.defs_is_list(method.obj):
            # Checked when it runs: a user object may have an ``append`` of its own.
            b.call(runtime.check_list, method.obj, b.const(method.name))
        return self.list_method(op, method, b)

    def same_length(self, v: n.Value) -> bool:
        """Whether the list ``v`` keeps its length: nothing changes it but ``v[i] = x``
        under an int ``i``."""
        return all(isinstance(m, n.SetItem) and self.type_of(m.index) is int
                   for m in self.effects.written(v, self.resolve(v)))

    def resized_after(self, v: n.Value, op: n.Op) -> bool:
        """Whether the program may change the length of the list ``v`` from ``op`` on (a
        change later in program order, or in a loop around both): ``v[i] = x`` under an
        int ``i`` does not (a table's rows written after it was made)."""
        if not isinstance(op, n.GetItem) or self.effects.place(op) is None:
            return True
        return self.effects.resized_after(
            op, lambda m: isinstance(m, n.SetItem) and self.type_of(m.index) is int,
            v, self.resolve(v))

    def float_list(self, v: n.Value) -> bool:
        """Whether ``v`` is a list whose items are all floats wherever it is used."""
        return self.type_of(v) is list and \
            float in (self.types.items.get(v.id), self.types.items.get(self.resolve(v).id))

    def defs_is_list(self, v: n.Value) -> bool:
        t = self.type_of(v)
        if t is list:
            return True
        d = self.defs.get(self.resolve(v).id)
        return isinstance(d, n.Build) and d.kind == "list"

    def list_method(self, op: n.Call, m: n.GetAttr, b: Builder) -> Action | None:
        """``xs.append(v)`` and ``v = xs.pop(i)`` on a list: the adjoint list shrinks back,
        or gets ``v``'s adjoint back at ``i``."""
        loc = op.loc
        xs = m.obj
        name = m.name
        if name == "pop" and len(op.args) <= 1 and not op.kwargs:
            return self.list_pop(op, xs, b)
        b.emit(op)
        if name == "append" and len(op.args) == 1 and not op.kwargs:
            # A list of floats: a form ``transforms.inplace`` may make a plain pop from an
            # adjoint a loop owns.
            pop = runtime.float_pop_adjoint if self.float_list(xs) and \
                self.type_of(op.args[0]) is float else runtime.pop_adjoint
            return self.overwrite(xs, op.args[0], self.const_fn(pop), lambda scope: [], loc)
        raise NonDifferentiableError(
            f"list.{name}() on a list holding active values is not supported yet", loc,
            hint="build the list with append(), indexing or a comprehension")

    def list_pop(self, op: n.Call, xs: n.Value, b: Builder) -> Action:
        size = b.call(len, xs, hint=f"{xs.hint or 'n'}_len")
        b.emit(op)
        y, loc = op.result, op.loc
        index = op.args[0] if op.args else None

        def reverse(scope: Scope) -> None:
            prev, g = scope.get(xs), scope.get(y)
            if prev is None and g is None:
                return
            scope.b.loc = loc
            none = scope.b.const(None)
            at = scope.res(index) if index is not None else scope.b.const(-1)
            new = scope.b.call(self.const_fn(runtime.unpop_adjoint),
                               prev if prev is not None else none, g if g is not None else none,
                               at, scope.res(size), hint=_bar(xs))
            scope.adj[self.resolve(xs).id] = new
            scope.maybe_none.discard(self.resolve(xs).id)
        return reverse

    def call_dict_pop(self, op: n.Call, m: n.GetAttr, b: Builder) -> Action:
        """``v = d.pop(k)`` (and ``del d[k]``): a read of ``d[k]`` that also removes the entry.
        Its reverse is the read's (``v``'s adjoint added into ``d``'s at ``k``); the removal
        adds nothing (the entry's adjoint after it is zero: a later ``d[k] = w`` took its
        own). With a default, whether the key was there is kept: the adjoint goes to the
        entry where it was, else to the default."""
        d, key = m.obj, op.args[0]
        default = op.args[1] if len(op.args) == 2 else None
        present = b.call(operator.contains, d, key, hint="present") \
            if default is not None else None
        b.emit(op)

        def reverse(scope: Scope) -> None:
            g = scope.get(op.result)
            if g is None:
                return  # (the removal itself adds nothing)
            scope.b.loc = op.loc
            if present is not None:
                flag = scope.res(present)
                if self.active(default):
                    scope.accumulate(default, scope.b.call(self.const_fn(runtime.unless),
                                                           flag, g), maybe_none=True)
                g = scope.b.call(self.const_fn(runtime.when), flag, g)
            if not self.active(d):
                return
            prev = scope.get(d)
            none = (present is not None or self.resolve(op.result).id in scope.maybe_none) \
                and (prev is None or self.resolve(d).id in scope.maybe_none)
            new = scope.b.call(self.const_fn(runtime.getitem_adjoint),
                               prev if prev is not None else scope.b.const(None),
                               scope.res(d), scope.res(key), g, hint=_bar(d))
            scope.adj[self.resolve(d).id] = new
            if none:
                scope.maybe_none.add(self.resolve(d).id)
            else:
                scope.maybe_none.discard(self.resolve(d).id)
        return reverse

    def entry_slot(self, op: n.GetItem) -> n.Value | None:
        """The scalar adjoint of ``p[k]`` for a parameter ``p`` (a dict that nothing changes)
        read under a constant key ``k`` as a float: reads of one entry in a loop add into one
        float, and the entry's adjoint goes into ``p``'s (a container, updated by a call)
        once, where ``p``'s adjoint is read (``Scope.get``)."""
        obj = self.resolve(op.obj)
        c = self.consts.get(self.resolve(op.index).id)
        if c is None or obj not in self.fn.body.args or self.is_mutated(obj) or \
                self.type_of(op.result) is not float:
            return None
        if self.type_of(obj) is not dict or type(c.value) is not str:
            return None
        return self.slot(obj, c.value, c.value)

    def slot(self, obj: n.Value, key: Any, label: str) -> n.Value:
        """The float adjoint of ``obj``'s entry or field ``key`` (made on first use)."""
        per = self.slots.setdefault(obj.id, {})
        if key not in per:
            hint = f"{obj.hint}_{label}" if obj.hint and label.isidentifier() else None
            slot = n.Value(hint)
            per[key] = slot
            self.synthetic[slot.id] = slot
            self.extra_types[slot.id] = float
            self.renamed_active.add(slot.id)
        return per[key]

    def field_slot(self, op: n.GetAttr) -> n.Value | None:
        """The scalar adjoint of the float field ``o.a`` of an object the function makes and
        keeps (its fields typed, ``analysis/fields.py``): reads of the field add into one
        float, writes take the field's adjoint from it (``on_SetAttr``), and the object's
        adjoint (an ``Attrs``, updated by a call) is only made where the object is read as
        a whole (its constructor's reverse), as for a dict's entries."""
        obj = self.resolve(op.obj)
        t = self.type_of(obj)
        if not (isinstance(t, type) and plain_class(t)) or self.type_of(op.result) is not float:
            return None
        return self.slot(obj, (FIELD, op.name), op.name)

    def on_GetItem(self, op: n.GetItem, b: Builder) -> Action:
        self.check_active_index(op)
        b.emit(op)
        obj, index, y, loc = op.obj, op.index, op.result, op.loc
        slot = self.entry_slot(op) if self.active(obj) else None
        if slot is not None:
            def reverse_entry(scope: Scope) -> None:
                if scope.get(y) is not None:
                    scope.accumulate(slot, scope.need(y))  # (a float: never None)
            return reverse_entry
        array = self.types.arrays.get(obj.id)
        if array is not None and array.dtype is numpy.float64 and \
                self.type_of(y) is numpy.float64:
            # One number of a float64 array: an update ``transforms.inplace`` may make a
            # plain ``x_bar[i] += g`` in a loop.
            return self.read_back(obj, y, loc, runtime.entry_adjoint_of_array,
                                  lambda scope, g: [scope.res(index), g], sure=True)
        if self.float_list(obj) and self.type_of(index) is int and \
                self.type_of(y) is float and (self.same_length(obj) or
                                              not self.mutated_after(obj, op) or
                                              not self.resized_after(obj, op)):
            # One float of a list of floats that keeps its length from here on: an update
            # ``transforms.inplace`` may make a plain ``xs_bar[i] += g`` in a loop.
            return self.read_back(obj, y, loc, runtime.entry_adjoint_of_list,
                                  lambda scope, g: [scope.res(index), g], sure=True)
        size = None
        if self.is_mutated(obj) and self.resized_after(obj, op):
            size = b.call(len, obj, hint=f"{obj.hint or 'n'}_len")

        return self.read_back(obj, y, loc, runtime.getitem_adjoint, lambda scope, g: [
            scope.res(index), g, *([scope.res(size)] if size is not None else [])])

    def read_back(self, obj: n.Value, y: n.Value, loc: SourceLoc | None, helper: Callable,
                  key: Callable[[Scope, n.Value], list[n.Value]], sure: bool = False
                  ) -> Action:
        """The reverse of a read ``y = obj[k]`` or ``y = obj.k``: ``obj``'s adjoint becomes
        ``helper(obj_bar, obj, *key(scope, y_bar))``, the read's adjoint added at its place
        (never ``None`` there when ``sure``)."""
        def reverse(scope: Scope) -> None:
            g = scope.get(y)
            if g is None or not self.active(obj):
                return
            if sure:
                g = scope.need(y)
            scope.b.loc = loc
            prev = scope.get(obj)
            # (``None`` still where the read's adjoint and the object's before may be)
            none = not sure and self.resolve(y).id in scope.maybe_none and \
                (prev is None or self.resolve(obj).id in scope.maybe_none)
            new = scope.b.call(self.const_fn(helper),
                               prev if prev is not None else scope.b.const(None),
                               scope.res(obj), *key(scope, g), hint=_bar(obj))
            scope.adj[self.resolve(obj).id] = new
            if none:
                scope.maybe_none.add(self.resolve(obj).id)
            else:
                scope.maybe_none.discard(self.resolve(obj).id)
        return reverse

    def on_GetAttr(self, op: n.GetAttr, b: Builder) -> Action:
        b.emit(checked_attribute(op, self.type_of(op.obj), self.is_module_attr(op), b,
                                 op.result.id in self.called))
        slot = self.field_slot(op) if self.active(op.obj) else None
        if slot is not None:
            y = op.result

            def reverse_field(scope: Scope) -> None:
                if scope.get(y) is not None:
                    scope.accumulate(slot, scope.need(y))  # (a float: never None)
            return reverse_field
        return self.read_back(op.obj, op.result, op.loc, runtime.getattr_adjoint,
                              lambda scope, g: [scope.b.const(op.name), g])

    def overwrite(self, obj: n.Value, value: n.Value | None, helper: Callable,
                  key: Callable[[Scope], list[n.Value]], loc: SourceLoc | None,
                  spread: bool = False, flush: bool = True) -> Action:
        """The reverse of a write into ``obj`` (``x[i] = v``, ``o.a = v``, ``xs.append(v)``).

        ``helper(obj_bar, *key)`` returns the adjoint of ``obj`` before the write and the
        adjoint of what was written, which flows to ``value`` (summed to its shape when
        ``spread``: ``a[1:3] = x`` broadcasts ``x`` over the slice).
        """
        def reverse(scope: Scope) -> None:
            prev = scope.get(obj, flush=flush)
            if prev is None:
                return
            scope.b.loc = loc
            pair = scope.b.call(helper, prev, *key(scope))
            # Unpacked at once: the pair is gone before the adjoint is updated again (an
            # adjoint held by nothing else is updated in place, transforms/inplace.py).
            parts = scope.b.emit(n.Unpack(pair, [n.Value(_bar(obj)), n.Value()], loc=loc))
            scope.adj[self.resolve(obj).id] = parts.results[0]
            scope.maybe_none.add(self.resolve(obj).id)
            if value is not None and self.active(value):
                item = parts.results[1]
                if spread and self.type_of(value) not in (list, tuple, dict):
                    item = scope.b.call(shapes.sum_to, item,
                                        scope.b.call(shapes.shape, scope.res(value)),
                                        scope.b.call(shapes.shape, item))
                scope.accumulate(value, item, maybe_none=True)
        return reverse

    def on_SetItem(self, op: n.SetItem, b: Builder) -> Action:
        index = op.index
        if self.type_of(op.obj) is tuple and is_writeback(op, self.defs):
            # Reverse mode's write-back into a tuple passed in (``transforms/vjp_items.py``):
            # the slot holds that object still, so the program has nothing to run; the
            # reverse takes the slot's adjoint into the object's.
            return self.overwrite(op.obj, op.value, runtime.setitem_adjoint,
                                  lambda scope: [scope.res(index)], op.loc)
        if self.type_of(op.obj) is list and self.type_of(index) is slice:
            # A slice written into a list may change its length: the length before is kept.
            n_before = b.call(len, op.obj, hint=f"{op.obj.hint or 'n'}_len")
            b.emit(op)
            return self.overwrite(op.obj, op.value, runtime.slice_write_adjoint,
                                  lambda scope: [scope.res(index), scope.res(n_before)],
                                  op.loc)
        b.emit(op)
        array = self.types.arrays.get(op.obj.id)
        if array is not None and array.dtype is numpy.float64 and \
                (op.obj.id, index.id) in self.types.entry_writes and \
                self.type_of(op.value) in FLOATS:
            return self.overwrite_entry(op)
        if self.float_list(op.obj) and self.type_of(index) is int and \
                self.type_of(op.value) is float and (
                    self.same_length(op.obj) or not self.effects.resized_after(
                        op, lambda m: isinstance(m, n.SetItem) and
                        self.type_of(m.index) is int, op.obj, self.resolve(op.obj))):
            # (a list of floats that keeps its length from here on: grown by appends
            # before, as a list of fields is made, ``transforms/object_lists.py``)
            return self.overwrite_entry(op, runtime.entry_write_of_list)
        # Writing into an array may broadcast the value; into a list or dict it cannot.
        spread = self.type_of(op.obj) not in (list, dict)
        return self.overwrite(op.obj, op.value, runtime.setitem_adjoint,
                              lambda scope: [scope.res(index)], op.loc, spread)

    def overwrite_entry(self, op: n.SetItem, helper: Callable = runtime.entry_write_adjoint
                        ) -> Action:
        """The reverse of ``a[i] = v`` setting one number of a float64 array (or, with
        ``entry_write_of_list``, one float of a list of floats that keeps its length): the
        adjoint of ``a`` (made an array if it was a zero) gives up the entry's, which ``v``
        gets (a number, never ``None``, no broadcasting to undo), and
        ``transforms.inplace`` may make it ``v_bar = a_bar[i]; a_bar[i] = 0.0`` in a
        loop."""
        obj, value, index = op.obj, op.value, op.index

        def reverse(scope: Scope) -> None:
            if scope.get(obj) is None:
                return
            scope.b.loc = op.loc
            pair = scope.b.call(self.const_fn(helper), scope.need(obj), scope.res(index))
            parts = scope.b.emit(n.Unpack(pair, [n.Value(_bar(obj)), n.Value()], loc=op.loc))
            scope.adj[self.resolve(obj).id] = parts.results[0]
            scope.maybe_none.discard(self.resolve(obj).id)
            if self.active(value):
                item = parts.results[1]
                if helper is runtime.entry_write_of_list:  # (an entry of a list may be None)
                    item = scope.b.call(runtime.nonzero, item, scope.b.const(0.0))
                scope.accumulate(value, item)
        return reverse

    def on_SetAttr(self, op: n.SetAttr, b: Builder) -> Action:
        check_stored_attribute(op, self.type_of(op.obj), b)
        b.emit(op)
        name, obj, value = op.name, self.resolve(op.obj), op.value
        whole = self.overwrite(op.obj, op.value, runtime.setattr_adjoint,
                               lambda scope: [scope.b.const(name)], op.loc, flush=False)

        def reverse(scope: Scope) -> None:
            # The field's float adjoint (reads since this write, ``field_slot``) is the
            # written value's; what the object's own adjoint holds of it goes there too.
            slot = self.slots.get(obj.id, {}).get((FIELD, name))
            g = scope.get(slot) if slot is not None else None
            if g is not None and g.id not in self.zeros:
                scope.adj.pop(slot.id)  # type: ignore[union-attr]
                if self.active(value):
                    scope.accumulate(value, g)
            whole(scope)
        return reverse

    def on_Build(self, op: n.Build, b: Builder) -> Action:
        b.emit(op)
        items, y, loc, starred, kind = list(op.items), op.result, op.loc, op.starred, op.kind
        if kind == "set":
            raise NonDifferentiableError("a set of active values has no derivative", loc)

        def reverse(scope: Scope) -> None:
            g = scope.get(y)
            if g is None:
                return
            scope.b.loc = loc
            if starred:
                lens = [scope.b.call(len, scope.res(x)) if i in starred else scope.b.const(None)
                        for i, x in enumerate(items)]
                parts = scope.b.call(self.const_fn(runtime.split_adjoint), g,
                                     scope.b.tuple(*lens))
            else:
                parts = g
            for k, x in enumerate(items):
                if self.active(x):
                    # (``parts`` again: it may be an array, see ``display_item_adjoint``.)
                    c = scope.b.call(self.const_fn(runtime.display_item_adjoint), parts,
                                     scope.b.const(k), parts, hint=_bar(x))
                    scope.accumulate(x, c, maybe_none=True)
        return reverse

    def other_keys(self, k: n.Value | None, other: n.Value | None) -> bool:
        """Whether the dict display's keys ``k`` and ``other`` are constants that differ
        (``None``: a ``**`` entry, of keys not known here)."""
        if k is None or other is None:
            return False
        a, b = self.consts.get(self.resolve(k).id), self.consts.get(self.resolve(other).id)
        return a is not None and b is not None and hashable(a.value) and \
            hashable(b.value) and a.value != b.value

    def on_BuildDict(self, op: n.BuildDict, b: Builder) -> Action:
        b.emit(op)
        keys, values, y, loc = list(op.keys), list(op.values), op.result, op.loc

        def reverse(scope: Scope) -> None:
            g = scope.get(y)
            if g is None:
                return
            scope.b.loc = loc
            for i, (k, v) in enumerate(zip(keys, values)):
                if not self.active(v):
                    continue
                gi = g
                later = [(lk, lv) for lk, lv in zip(keys[i + 1:], values[i + 1:])
                         if not self.other_keys(k, lk)]
                if later:
                    # (a key a later entry gives again takes that entry's value)
                    gi = scope.b.call(
                        self.const_fn(runtime.unshadowed), g,
                        scope.b.tuple(*[scope.res(lk) for lk, _ in later if lk is not None]),
                        scope.b.tuple(*[scope.res(lv) for lk, lv in later if lk is None]))
                if k is None:
                    c = scope.b.call(self.const_fn(runtime.subdict_adjoint), gi, scope.res(v))
                else:
                    c = scope.b.call(self.const_fn(runtime.key_adjoint), gi, scope.res(k))
                scope.accumulate(v, c, maybe_none=True)
        return reverse

    def on_Unpack(self, op: n.Unpack, b: Builder) -> Action:
        b.emit(op)
        value, results, star, loc = op.value, list(op.results), op.star, op.loc

        def reverse(scope: Scope) -> None:
            gs = [scope.get(r) for r in results]
            if all(g is None for g in gs) or not self.active(value):
                return
            scope.b.loc = loc
            parts = scope.b.tuple(*[g if g is not None else scope.b.const(None) for g in gs])
            c = scope.b.call(self.const_fn(runtime.unpack_adjoint), parts, scope.res(value),
                             scope.b.const(star), hint=_bar(value))
            scope.accumulate(value, c, maybe_none=True)
        return reverse
