"""Liveness over structured regions.

Values defined outside a loop and used inside it are live for the whole loop
(every iteration needs them), and values live after a region op are live
throughout its regions. Code generation uses this to give two values one
Python name only when they are never live at the same time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wengert.ir import nodes as n
from wengert.ir.uses import free_uses

Operands = Callable[[n.Op], list[n.Value]]


@dataclass
class Liveness:
    """Value ids live right after each op, and at the entry of each region."""

    live_out: dict[int, frozenset[int]] = field(default_factory=dict)
    live_in: dict[int, frozenset[int]] = field(default_factory=dict)

    def after(self, op: n.Op) -> frozenset[int]:
        """Values live immediately after ``op``."""
        return self.live_out.get(id(op), frozenset())

    def entry(self, region: n.Region) -> frozenset[int]:
        """Values live at the entry of ``region`` (its arguments included when used)."""
        return self.live_in.get(id(region), frozenset())


def liveness(fn: n.Function, operands: Operands | None = None,
             skip: Callable[[n.Op], bool] | None = None) -> Liveness:
    """Compute liveness for ``fn``'s body.

    ``operands`` gives the values an op effectively reads (code generation passes a
    function that sees through inlined expressions); ``skip`` ops (inlined ones)
    are not executed where they stand.
    """
    ops_of = operands or (lambda op: op.operands())
    skipped = skip or (lambda op: False)
    out = Liveness()

    def region(r: n.Region, live_end: set[int]) -> set[int]:
        live = set(live_end)
        for op in reversed(r.ops):
            if skipped(op):
                continue
            out.live_out[id(op)] = frozenset(live)
            live = transfer(op, live)
        out.live_in[id(r)] = frozenset(live)
        return live

    def ids(vs) -> set[int]:
        return {v.id for v in vs}

    def transfer(op: n.Op, after: set[int]) -> set[int]:
        through = after - ids(op.results)
        live = set(through) | ids(ops_of(op))
        if isinstance(op, n.If):
            live |= region(op.then, through) | region(op.orelse, through)
        elif isinstance(op, n.With):
            live |= region(op.body, through) - ids(op.body.args)
        elif isinstance(op, n.For):
            end = through | ids(free_uses(op.body))
            live |= region(op.body, end) - ids(op.body.args)
        elif isinstance(op, n.While):
            end = through | ids(free_uses(op.body, tuple(op.args))) | \
                ids(free_uses(op.cond, tuple(op.args)))
            body_in = region(op.body, end)
            # When the condition fails the loop ends and the carried values are its
            # results: an arg whose result is live after the loop is live through the
            # condition.
            exiting = {a.id for a, r in zip(op.args, op.results) if r.id in after}
            cond_in = region(op.cond, body_in | end | exiting)
            # The body's entry is reached from the condition: args live there stay live.
            live |= cond_in - ids(op.args)
        elif isinstance(op, n.MakeFunction):
            live |= ids(free_uses(op.func.body))
        return live

    region(fn.body, set())
    return out
