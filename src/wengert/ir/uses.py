"""Queries over the uses of values: what a region reads from outside, and rewiring uses.

These belong to the IR, not to any pass: analyses, transforms, the frontend and code
generation all ask them.
"""

from __future__ import annotations

from collections.abc import Callable

from wengert.ir import nodes as n


def function_ops(fn: n.Function) -> list[n.Op]:
    """Every op of ``fn`` including nested regions and nested functions' bodies."""
    return list(n.walk(fn.body))


def replace_uses(fn: n.Function, mapping: dict[int, n.Value]) -> bool:
    """Replace every use of value ``id`` in ``mapping`` (transitively) throughout ``fn``.

    Returns whether any operand changed.
    """
    if not mapping:
        return False
    changed = False

    def resolve(v: n.Value) -> n.Value:
        seen = 0
        while v.id in mapping and seen < 1000:
            v = mapping[v.id]
            seen += 1
        return v

    for op in function_ops(fn):
        ops = op.operands()
        new = [resolve(v) for v in ops]
        if any(a is not b for a, b in zip(ops, new)):
            op.set_operands(new)
            changed = True
    return changed


def free_uses(region: n.Region, extra_defined: tuple[n.Value, ...] = ()) -> list[n.Value]:
    """Values used in ``region`` (and nested regions) but defined outside it."""
    defined: set[int] = {v.id for v in region.args} | {v.id for v in extra_defined}
    used: dict[int, n.Value] = {}
    for op in n.walk(region):
        for r in op.results:
            defined.add(r.id)
        for a in n.region_args(op):
            defined.add(a.id)
        if isinstance(op, n.MakeFunction):
            for a in op.func.body.args:
                defined.add(a.id)
        for v in op.operands():
            used.setdefault(v.id, v)
    return [v for k, v in used.items() if k not in defined]


def expand_ops(region: n.Region, rewrite: Callable[[n.Op], list[n.Op] | None]) -> bool:
    """Replace, in place, each op of ``region`` and of its nested control flow (not of
    nested functions' bodies) for which ``rewrite`` gives a list of ops by those ops (not
    visited again); return whether any was."""
    changed = False
    k = 0
    while k < len(region.ops):
        op = region.ops[k]
        new = rewrite(op)
        if new is not None:
            region.ops[k:k + 1] = new
            k += len(new)
            changed = True
            continue
        if not isinstance(op, n.MakeFunction):
            for sub in op.regions():
                changed |= expand_ops(sub, rewrite)
        k += 1
    return changed

