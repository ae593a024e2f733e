"""Copying IR with fresh values, and substituting values inside regions.

Transforms never edit the cached primal IR: they clone it first (a function, or
a rule's body at each call site it is inlined into), mapping the values they
already know (parameters, call arguments) and giving every other definition a
fresh :class:`~wengert.ir.nodes.Value`.
"""

from __future__ import annotations

import copy

from wengert.ir import nodes as n


class Cloner:
    """Clones ops, remembering the map from old value ids to new values."""

    def __init__(self, mapping: dict[int, n.Value] | None = None) -> None:
        self.map: dict[int, n.Value] = dict(mapping or {})

    def value(self, v: n.Value) -> n.Value:
        """The clone of ``v`` (``v`` itself when defined outside what is cloned)."""
        return self.map.get(v.id, v)

    def fresh(self, v: n.Value) -> n.Value:
        """A new value standing for the definition ``v``."""
        new = n.Value(v.hint, v.loc)
        self.map[v.id] = new
        return new

    def region(self, region: n.Region) -> n.Region:
        """A copy of ``region`` with fresh arguments and cloned ops."""
        args = [self.fresh(a) for a in region.args]
        return n.Region(args, [self.op(op) for op in region.ops])

    def ops(self, ops: list[n.Op]) -> list[n.Op]:
        """Clones of ``ops`` in order."""
        return [self.op(op) for op in ops]

    def function(self, fn: n.Function) -> n.Function:
        """A copy of ``fn`` (its parameters get fresh values unless already mapped)."""
        new = copy.copy(fn)
        new.signature = copy.copy(fn.signature)
        args = [self.map.get(a.id) or self.fresh(a) for a in fn.body.args]
        new.body = n.Region(args, [self.op(op) for op in fn.body.ops])
        return new

    def op(self, op: n.Op) -> n.Op:
        """A copy of ``op`` with operands mapped, fresh results and cloned regions."""
        new = copy.copy(op)
        new.set_operands([self.value(v) for v in op.operands()])
        if isinstance(op, n.MakeFunction):
            # The result is defined before the body: a nested def may call itself.
            new.results = [self.fresh(r) for r in op.results]
            new.func = self.function(op.func)
            return new
        if isinstance(op, n.If):
            new.then = self.region(op.then)
            new.orelse = self.region(op.orelse)
        elif isinstance(op, n.For):
            new.body = self.region(op.body)
            new.exit_flags = list(op.exit_flags)
        elif isinstance(op, n.While):
            new.args = [self.fresh(a) for a in op.args]
            # The condition and the body read the loop's own ``args``: none of their own.
            new.cond = n.Region([], self.ops(op.cond.ops))
            new.body = n.Region([], self.ops(op.body.ops))
            new.exit_flags = list(op.exit_flags)
        elif isinstance(op, n.With):
            new.body = self.region(op.body)
        new.results = [self.fresh(r) for r in op.results]
        return new


def clone_function(fn: n.Function) -> tuple[n.Function, Cloner]:
    """A deep copy of ``fn`` and the cloner holding its value map."""
    c = Cloner()
    return c.function(fn), c


def substitute(region: n.Region, mapping: dict[int, n.Value]) -> None:
    """Replace uses of the values in ``mapping`` throughout ``region`` (nested bodies too)."""
    if not mapping:
        return
    for op in n.walk(region):
        ops = op.operands()
        new = [mapping.get(v.id, v) for v in ops]
        if any(a is not b for a, b in zip(ops, new)):
            op.set_operands(new)


def defined_in(region: n.Region) -> set[int]:
    """Ids of every value defined in ``region``: its args, results and nested definitions."""
    out = {a.id for a in region.args}
    for op in n.walk(region):
        out.update(r.id for r in op.results)
        out.update(a.id for a in n.region_args(op))
        if isinstance(op, n.MakeFunction):
            out.update(a.id for a in op.func.body.args)
    return out
