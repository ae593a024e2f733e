"""Forward mode of control flow: an ``If``'s arms and a loop's body carry the tangents of
the values they yield and carry, as a mixin of :class:`~wengert.transforms.jvp.JVP`."""

from __future__ import annotations

import numpy

from wengert import runtime
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.transforms.base import (
    FLOATS,
    NO_TANGENT,
    dot_hint,
)

#: Values whose tangent is a number or an array of them.
NUMERIC = (*FLOATS, numpy.ndarray)



class ForwardControlFlow:
    """The handlers of :class:`~wengert.transforms.jvp.JVP` for branches, loops and ``with``."""

    def yield_dot(self, region: n.Region, v: n.Value, sure: bool) -> n.Value:
        """The tangent of ``v`` at the end of ``region`` (zeros made before the yield)."""
        term = region.ops.pop()
        b = Builder(region)
        b.loc = term.loc
        d = self.arg_dot(v, b, sure=sure)
        region.ops.append(term)
        return d

    def on_If(self, op: n.If, b: Builder) -> None:
        b.emit(op)
        self.region(op.then)
        self.region(op.orelse)
        for r, yt, ye in list(zip(op.results, op.then.terminator.values,
                                  op.orelse.terminator.values)):
            if not self.active(r) or (self.get(yt) is None and self.get(ye) is None):
                continue
            numeric = self.type_of(r) in NUMERIC
            dt = self.yield_dot(op.then, yt, numeric)
            de = self.yield_dot(op.orelse, ye, numeric)
            op.then.terminator.values.append(dt)
            op.orelse.terminator.values.append(de)
            rd = n.Value(dot_hint(r), op.loc)
            op.results.append(rd)
            self.set_tan(r, rd, sure=self.is_sure(dt) and self.is_sure(de))
            if dt.id in self.real and de.id in self.real:
                self.real.add(rd.id)

    def loop_slots(self, op: n.For | n.While | n.With, b: Builder) -> list[int]:
        """Give every active carried value a tangent slot; return their indices."""
        slots = []
        carried = op.carried_args if not isinstance(op, n.With) else op.results
        for k, (a, r) in enumerate(zip(carried, op.results)):
            if not (self.active(a) or self.active(r)) or self.type_of(r) in NO_TANGENT:
                continue
            slots.append(k)
        return slots

    def on_For(self, op: n.For, b: Builder) -> None:
        self.loop(op, b)

    def on_While(self, op: n.While, b: Builder) -> None:
        self.loop(op, b)

    def loop(self, op: n.For | n.While, b: Builder) -> None:
        slots = self.loop_slots(op, b)
        new_args = []
        for k in slots:
            a, init = op.carried_args[k], op.inits[k]
            numeric = self.type_of(a) in FLOATS
            d = self.arg_dot(init, b, sure=numeric)
            op.inits.append(d)
            ad = n.Value(dot_hint(a), a.loc)
            new_args.append(ad)
            self.set_tan(a, ad, sure=numeric)
            if a.id in self.needs_real:
                self.real.add(ad.id)
        if isinstance(op, n.For):
            op.body.args.extend(new_args)
            it = op.iterable
            t = self.get(it) if self.active(it) else None
            item = op.body.args[0]
            if t is not None and self.active(item):
                if item.id in self.needs_real:
                    pairs = b.call(runtime.iter_tangent, it, t, b.const(True))
                    self.keep.add(id(b.region.ops[-1]))
                else:
                    pairs = b.call(runtime.iter_tangent, it, t)
                pair = n.Value("pair", op.loc)
                op.iterable = pairs
                op.body.args[0] = pair
                item_dot = n.Value(dot_hint(item), op.loc)
                op.body.ops.insert(0, n.Unpack(pair, [item, item_dot], loc=op.loc))
                self.set_tan(item, item_dot)
        else:
            op.args.extend(new_args)  # shared by the condition and the body
        b.emit(op)
        self.region(op.body)
        for k, ad in zip(slots, new_args):
            a, y = op.carried_args[k], op.body.terminator.values[k]
            d = self.yield_dot(op.body, y, sure=self.is_sure(ad))
            op.body.terminator.values.append(d)
            r = op.results[k]
            rd = n.Value(dot_hint(r), op.loc)
            op.results.append(rd)
            self.set_tan(r, rd, sure=self.is_sure(ad))
            if ad.id in self.real:
                self.real.add(rd.id)

    def on_With(self, op: n.With, b: Builder) -> None:
        if self.active(op.body.args[0]) if op.body.args else False:
            raise NonDifferentiableError(
                "the value of a `with` statement's manager is being differentiated", op.loc)
        slots = self.loop_slots(op, b)
        inits = []
        for k in slots:
            numeric = self.type_of(op.results[k]) in FLOATS
            inits.append(self.arg_dot(op.inits[k], b, sure=numeric))
        b.emit(op)
        self.region(op.body)
        for k, d0 in zip(slots, inits):
            y = op.body.terminator.values[k]
            d = self.yield_dot(op.body, y, sure=self.is_sure(d0))
            op.inits.append(d0)
            op.body.terminator.values.append(d)
            r = op.results[k]
            rd = n.Value(dot_hint(r), op.loc)
            op.results.append(rd)
            self.set_tan(r, rd, sure=self.is_sure(d0) and self.is_sure(d))
