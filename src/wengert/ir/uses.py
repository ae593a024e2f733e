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



class Places:
    """Definitions, uses, consts and places of one function's values: each op's region,
    its place in program order and the loops around it (the reads a nested function makes
    are uses by the op that defines it)."""

    def __init__(self, fn: n.Function) -> None:
        self.fn = fn
        self.defs: dict[int, n.Op] = {}
        self.uses: dict[int, list[n.Op]] = {}
        self.consts: dict[int, object] = {}
        self.where: dict[int, n.Region] = {}
        self.values: dict[int, n.Value] = {}
        #: Each op's place in program order, and the loops around it (their ids).
        self.order: dict[int, int] = {}
        self.loops: dict[int, frozenset[int]] = {}
        self.visit(fn.body)

    def visit(self, region: n.Region, loops: frozenset[int] = frozenset()) -> None:
        for a in region.args:
            self.values[a.id] = a
        for op in region.ops:
            self.where[id(op)] = region
            self.order[id(op)] = len(self.order)
            self.loops[id(op)] = loops
            for r in op.results:
                self.defs[r.id] = op
                self.values[r.id] = r
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op.value
            operands = op.operands()
            if isinstance(op, n.MakeFunction):
                operands = operands + free_uses(op.func.body)
            for v in operands:
                self.uses.setdefault(v.id, []).append(op)
            if not isinstance(op, n.MakeFunction):
                inner = loops | {id(op)} if isinstance(op, (n.For, n.While)) else loops
                for r in op.regions():
                    self.visit(r, inner)

    def between(self, op: n.Op, first: n.Op, then: n.Op) -> bool:
        """Whether ``op`` may run after ``first`` and before ``then``, where ``first``
        defines a value ``then`` uses (so every loop around ``first`` is around
        ``then``): later in program order than the one and earlier than the other, or in
        a loop around both ``op`` and ``then`` that ``first`` is not in (a next step)."""
        at = self.order[id(op)]
        return self.order[id(first)] < at < self.order[id(then)] or \
            bool(self.loops[id(op)] & self.loops[id(then)] - self.loops[id(first)])


def _part(x: object) -> object:
    """One field of an op as :func:`fingerprint` records it."""
    t = type(x)
    if t is n.Value:
        return x.id  # type: ignore[attr-defined]
    if t in _PLAIN:
        return x
    if t is list or t is tuple:
        return tuple([_part(y) for y in x])  # type: ignore[attr-defined]
    if t is n.Region:
        return (id(x), tuple([a.id for a in x.args]), len(x.ops))  # type: ignore[attr-defined]
    if t is n.Function:
        return (id(x), id(x.body), tuple([a.id for a in x.body.args]),  # type: ignore
                id(x.signature))  # type: ignore[attr-defined]
    return id(x)  # (a constant's value, a location: replaced, not changed, by passes)


#: Field values :func:`fingerprint` records as they are.
_PLAIN = frozenset({bool, int, str, type(None)})


def fingerprint(fn: n.Function) -> tuple[object, ...]:
    """What ``fn`` is, structurally: every op (by identity) with every field it holds (the
    values it reads and defines, its constants, its regions' arguments), its nested
    functions' included. Equal fingerprints mean no pass rewrote ``fn`` in between, so
    what an analysis found of it still holds (:class:`~wengert.analysis.cached.Analyses`)."""
    out: list[object] = [tuple([a.id for a in fn.body.args]), len(fn.body.ops)]
    add = out.append
    for op in n.walk(fn.body):
        add(id(op))
        for x in op.__dict__.values():
            add(x.id if type(x) is n.Value else _part(x))
    return tuple(out)
