"""Forward mode of containers and objects: reads and writes of items and attributes,
displays, unpacking, and the list and dict methods forward mode differentiates itself, as a
mixin of :class:`~wengert.transforms.jvp.JVP` (one handler per op kind). A container's
tangent is a container of its items' tangents (``None`` for zero), updated as the
primal container is."""

from __future__ import annotations

import operator
from typing import Any

from wengert import runtime
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.transforms.base import (
    DECLINED,
    dot_hint,
)
from wengert.transforms.devirtualize import (
    check_stored_attribute,
    checked_attribute,
)


class ForwardContainers:
    """The handlers of :class:`~wengert.transforms.jvp.JVP` for containers and objects."""

    def call_list_method(self, op: n.Call, method: n.GetAttr, b: Builder) -> Any:
        if self.type_of(method.obj) is not list or op.kwargs or op.starred:
            return DECLINED
        return self.list_method(op, method, b)

    def call_dict_pop(self, op: n.Call, m: n.GetAttr, b: Builder) -> None:
        """``v = d.pop(k[, default])`` (and ``del d[k]``): the entry's tangent is taken out
        of ``d``'s as the entry is out of ``d``; with a default, ``v``'s tangent is the
        default's where the key was missing."""
        d, key = m.obj, op.args[0]
        default = op.args[1] if len(op.args) == 2 else None
        t = self.get(d)
        default_dot = self.get(default) if default is not None else None
        present = b.call(operator.contains, d, key, hint="present") \
            if default_dot is not None else None
        popped = None
        if t is not None:
            popped = self.effect(n.Call(b.const(runtime.pop_entry_tangent), [t, key], [],
                                        [n.Value()], loc=op.loc), b).result
        b.emit(op)
        if present is not None and default_dot is not None:
            other = b.call(runtime.unless, present, default_dot)
            if popped is not None:
                other = b.call(runtime.add_adjoint, b.call(runtime.when, present, popped),
                               other)
            self.set_tan(op.result, other)
        elif popped is not None:
            self.set_tan(op.result, popped)

    def list_method(self, op: n.Call, m: n.GetAttr, b: Builder) -> None:
        """``xs.append(v)`` and friends on a list: the same call on its tangent."""
        b.emit(op)
        xs = m.obj
        t = self.get(xs)
        if t is None:
            if any(self.get(a) is not None for a in op.args):
                raise NonDifferentiableError(
                    f"list.{m.name}() with an active value on a list without a tangent",
                    op.loc)
            return
        args = [self.arg_dot(a, b) for a in op.args]
        if m.name == "extend":
            self.effect(n.Call(b.const(runtime.extend_tangent), [t, args[0], op.args[0]], [],
                               [n.Value()]), b)
            return
        if m.name == "append" and t.id not in self.real:
            self.effect(n.Call(b.const(runtime.append_tangent), [t, args[0]], [],
                               [n.Value()]), b)
            return
        if m.name == "insert":
            args[0] = op.args[0]
        if m.name == "pop":
            args = list(op.args)
        meth = b.getattr(t, m.name)
        call = self.effect(n.Call(meth, args, [], [n.Value()], loc=op.loc), b)
        if m.name == "pop":
            self.set_tan(op.result, call.result)

    def on_GetItem(self, op: n.GetItem, b: Builder) -> None:
        self.check_active_index(op)
        b.emit(op)
        t = self.get(op.obj)
        if t is None:
            return
        y = op.result
        if y.id in self.needs_real:
            r = b.call(runtime.child_tangent, t, op.obj, op.index, hint=dot_hint(y))
            self.real.add(r.id)
            self.set_tan(y, r)
            return
        if t.id in self.real and self.type_of(op.obj) in (list, tuple) and \
                self.type_of(op.index) is int:
            self.set_tan(y, b.getitem(t, op.index, hint=dot_hint(y)), sure=t.id in self.float_lists)
            return
        self.set_tan(y, b.call(runtime.getitem_tangent, t, op.obj, op.index, hint=dot_hint(y)))

    def on_GetAttr(self, op: n.GetAttr, b: Builder) -> None:
        if self.get(op.obj) is not None:
            b.emit(checked_attribute(op, self.type_of(op.obj), self.is_module_attr(op), b,
                                 op.result.id in self.called))
        else:
            b.emit(op)
        t = self.get(op.obj)
        if t is None:
            return
        y = op.result
        name = b.const(op.name)
        if y.id in self.needs_real:
            r = b.call(runtime.child_attr_tangent, t, op.obj, name, hint=dot_hint(y))
            self.real.add(r.id)
            self.set_tan(y, r)
            return
        self.set_tan(y, b.call(runtime.getattr_tangent, t, op.obj, name, hint=dot_hint(y)))

    def on_SetItem(self, op: n.SetItem, b: Builder) -> None:
        b.emit(op)
        t = self.get(op.obj)
        if t is None:
            if self.get(op.value) is not None:
                raise NonDifferentiableError(
                    "a write of an active value into an object without a tangent", op.loc)
            return
        if t.id in self.real and self.type_of(op.obj) in (list, dict) and \
                self.type_of(op.index) is not slice:
            # (a number's tangent made sure: a list of floats' tangent holds floats, never
            # the ``None`` of a zero, as from ``max(x, 2.0)``'s constant branch)
            v = self.arg_dot(op.value, b, sure=True)
            self.effect(n.SetItem(t, op.index, v, loc=op.loc), b)
            return
        v = self.arg_dot(op.value, b)
        self.effect(n.Call(b.const(runtime.setitem_tangent), [t, op.obj, op.index, v, op.value],
                           [], [n.Value()], loc=op.loc), b)

    def on_SetAttr(self, op: n.SetAttr, b: Builder) -> None:
        if self.get(op.obj) is not None:
            check_stored_attribute(op, self.type_of(op.obj), b)
        b.emit(op)
        t = self.get(op.obj)
        if t is None:
            if self.get(op.value) is not None:
                raise NonDifferentiableError(
                    "a write of an active value into an object without a tangent", op.loc)
            return
        v = self.arg_dot(op.value, b)
        self.effect(n.Call(b.const(runtime.setattr_tangent), [t, b.const(op.name), v], [],
                           [n.Value()], loc=op.loc), b)

    def on_Build(self, op: n.Build, b: Builder) -> None:
        b.emit(op)
        if op.kind == "set":
            if any(self.get(x) is not None for x in op.items):
                raise NonDifferentiableError("a set of active values has no derivative", op.loc)
            return
        dots = []
        for i, x in enumerate(op.items):
            d = self.get(x)
            if i in op.starred:
                d = b.call(runtime.seq_tangent, d if d is not None else b.const(None), x)
            dots.append(d if d is not None else self.zero(x, b))
        t = b.emit(n.Build(op.kind, dots, [n.Value(dot_hint(op.result))], tuple(op.starred))).result
        self.set_tan(op.result, t)
        self.real.add(t.id)

    def on_BuildDict(self, op: n.BuildDict, b: Builder) -> None:
        b.emit(op)
        vals = []
        for k, v in zip(op.keys, op.values):
            d = self.get(v)
            if k is None:
                d = b.call(runtime.real_tangent, d if d is not None else b.const(None), v)
            vals.append(d if d is not None else self.zero(v, b))
        t = b.emit(n.BuildDict(list(op.keys), vals, [n.Value(dot_hint(op.result))])).result
        self.set_tan(op.result, t)
        self.real.add(t.id)

    def on_Unpack(self, op: n.Unpack, b: Builder) -> None:
        b.emit(op)
        t = self.get(op.value)
        if t is None:
            return
        parts = b.call(runtime.unpack_tangent, t, op.value, b.const(len(op.results)),
                       b.const(op.star))
        un = b.emit(n.Unpack(parts, [n.Value(dot_hint(r)) for r in op.results], loc=op.loc))
        for r, d in zip(op.results, un.results):
            self.set_tan(r, d)
