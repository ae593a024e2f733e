"""Activity analysis: which values need derivatives (varied x useful), Swift-style.

A value is *varied* when it depends, through data flow, on a parameter we
differentiate with respect to, and *useful* when it may influence the returned
value differentiably. Only values that are both (*active*) get tangents or
adjoints; everything else stays in the primal. Control dependence carries no
derivative, so a branch condition never makes the values it selects varied,
and a loop's condition or exit flags are never useful.

Mutation is read off the alias graph of :mod:`wengert.analysis.effects.aliases`:
writing a varied value into an object makes varied every class a write into it may
change (:meth:`~wengert.analysis.effects.aliases.AliasGraph.mutations`); backwards,
every value written into a useful object or into a part of one is useful. The analysis
is flow-insensitive for mutation (a container is varied everywhere once some write makes
it so): it over-approximates, never misses a derivative. The graph's limits are its own
(listed in its module); here, an ``int`` that flows from a wrt parameter through a
differentiable call is varied (no types beyond ``scalar``).

Nested functions (``MakeFunction``) are opaque: the function value is varied
when it captures a varied value or has a varied default, a call of it has
varied results when the function or any argument is varied, and it may write
into its arguments and, at any depth, its captures. Their bodies are analysed
when they are differentiated themselves.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy

from wengert.analysis.effects.aliases import AliasGraph, const_value
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses
from wengert.objects import hashable
from wengert.rules import registry  # importing the package registers the built-in rules


class CutPoint(NamedTuple):
    """A varied value entering a derivative-cutting call (``int``, ``round``) whose result is used.

    The reverse-mode transform reports these as ``NonDifferentiableWarning`` at ``op.loc``.
    """

    op: n.Call
    value: n.Value


@dataclass(frozen=True)
class Activity:
    """The result of :func:`activity`: sets of value ids, and the ops that need derivative code.

    ``varied`` and ``useful`` hold :attr:`Value.id` s; ``active`` is their intersection.
    ``active_op_ids`` holds ``id(op)`` of every op (region ops included) that computes an
    active value or writes into an active object (whatever it writes: an overwritten
    slot's derivative is cut off), and every control-flow op holding one.
    """

    fn: n.Function = field(repr=False)
    wrt: tuple[int, ...]
    varied: frozenset[int]
    useful: frozenset[int]
    active_op_ids: frozenset[int]
    cut_points: tuple[CutPoint, ...]

    @property
    def active(self) -> frozenset[int]:
        """Ids of values that are both varied and useful."""
        return self.varied & self.useful

    def is_varied(self, v: n.Value) -> bool:
        """Whether ``v`` depends on a ``wrt`` parameter through data flow."""
        return v.id in self.varied

    def is_useful(self, v: n.Value) -> bool:
        """Whether ``v`` may influence the returned value differentiably."""
        return v.id in self.useful

    def is_active(self, v: n.Value) -> bool:
        """Whether ``v`` needs a tangent/adjoint: varied and useful."""
        return v.id in self.varied and v.id in self.useful

    def is_active_op(self, op: n.Op) -> bool:
        """Whether ``op`` needs derivative code (see the class docstring)."""
        return id(op) in self.active_op_ids

    def active_ops(self, region: n.Region) -> list[n.Op]:
        """The ops directly in ``region`` (not nested) that need derivative code."""
        return [op for op in region.ops if id(op) in self.active_op_ids]


class _Analysis(AliasGraph):
    """The two fixpoints of one run, over the alias graph (:class:`AliasGraph`)."""

    # -- varied ------------------------------------------------------------------------------

    def varied(self, wrt: Sequence[int]) -> set[int]:
        """Forward fixpoint from the ``wrt`` parameters."""
        params = self.fn.body.args
        vs: set[int] = {params[i].id for i in wrt}
        classes: set[int] = set()

        def is_v(v: n.Value) -> bool:
            return v.id in vs

        def mark(v: n.Value) -> bool:
            if v.id in vs:
                return False
            vs.add(v.id)
            return True

        def mutate(v: n.Value, deep: bool) -> bool:
            # A varied value was written into v's object: every class it reaches is varied.
            changed = False
            for root in self.mutations(v, deep) - classes:
                classes.add(root)
                vs.update(m.id for m in self.members.get(root, ()))
                changed = True
            return changed

        changed = True
        while changed:
            changed = False
            for op in self.ops:
                changed |= self._varied_op(op, is_v, mark, mutate)
        return vs

    def _varied_op(self, op: n.Op, is_v, mark, mutate) -> bool:
        changed = False
        if isinstance(op, (n.Const, n.FormatValue, n.JoinStr, n.BuildSlice, n.Raise,
                           n.Yield, n.Return)):
            return False
        if isinstance(op, n.Call):
            info = self.calls[id(op)]
            if info.cut:
                return False
            if any(is_v(v) for v in op.operands()):
                for r in op.results:
                    changed |= mark(r)
            if any(is_v(v) for v in info.stored):
                for t in info.targets:
                    changed |= mutate(t, info.deep)
            return changed
        if isinstance(op, (n.SetItem, n.SetAttr)):
            return mutate(op.obj, False) if is_v(op.value) else False
        if isinstance(op, n.If):
            for region in (op.then, op.orelse):
                for y, r in zip(region.terminator.operands(), op.results, strict=True):
                    if is_v(y):
                        changed |= mark(r)
            return changed
        if isinstance(op, (n.For, n.While)):
            if isinstance(op, n.For) and is_v(op.iterable):
                changed |= mark(op.body.args[0])
            ys = op.body.terminator.operands()
            for init, arg, y, r in zip(op.inits, op.carried_args, ys, op.results, strict=True):
                if is_v(init) or is_v(y) or is_v(arg):
                    changed |= mark(arg)
                    changed |= mark(r)
            return changed
        if isinstance(op, n.With):
            if is_v(op.manager):
                changed |= mark(op.body.args[0])
            for y, r in zip(op.body.terminator.operands(), op.results, strict=True):
                if is_v(y):
                    changed |= mark(r)
            return changed
        if isinstance(op, n.MakeFunction):
            if any(is_v(v) for v in [*op.operands(), *free_uses(op.func.body)]):
                changed |= mark(op.result)
            return changed
        # Straight-line data flow: GetAttr, GetItem, Build, BuildDict, Unpack.
        if any(is_v(v) for v in op.operands()):
            for r in op.results:
                changed |= mark(r)
        return changed

    # -- useful ------------------------------------------------------------------------------

    def useful(self, extra: Sequence[n.Value] = ()) -> set[int]:
        """Backward fixpoint from the returned value."""
        us: set[int] = set()
        # Classes whose objects' contents matter: a useful value's and its parts'.
        content: set[int] = set()

        def is_u(v: n.Value) -> bool:
            return v.id in us

        def mark(v: n.Value) -> bool:
            changed = v.id not in us
            us.add(v.id)
            new = self.content_of(v) - content
            if new:
                content.update(new)
                changed = True
            return changed

        def class_useful(v: n.Value) -> bool:
            return self.eligible(v) and self.find(v) in content

        def write_useful(v: n.Value) -> bool:
            # A write into an object read out of a container may be a write into any part
            # of it (``qs["k"].x = v`` where ``q`` is stored in ``qs``): useful when any
            # object it may change is.
            return self.eligible(v) and any(c in content for c in self.mutations(v, False))

        ret = self.fn.body.terminator
        if isinstance(ret, n.Return):
            mark(ret.value)
        for v in extra:
            mark(v)
        changed = True
        while changed:
            changed = False
            for op in reversed(self.ops):
                changed |= self._useful_op(op, is_u, mark, write_useful)
        return us

    def _useful_op(self, op: n.Op, is_u, mark, class_useful) -> bool:
        changed = False
        if isinstance(op, (n.Const, n.FormatValue, n.JoinStr, n.BuildSlice, n.Raise,
                           n.Yield, n.Return)):
            return False
        if isinstance(op, n.Call):
            info = self.calls[id(op)]
            if info.cut:
                return False
            # Needed for its result, or because it writes into a useful object.
            if any(is_u(r) for r in op.results) or any(class_useful(t) for t in info.targets):
                for v in op.operands():
                    changed |= mark(v)
            return changed
        if isinstance(op, (n.SetItem, n.SetAttr)):
            # The index/attribute name decides where, not what: it carries no derivative.
            if class_useful(op.obj):
                changed |= mark(op.value)
                changed |= mark(op.obj)
            return changed
        if isinstance(op, n.If):
            for region in (op.then, op.orelse):
                for y, r in zip(region.terminator.operands(), op.results, strict=True):
                    if is_u(r):
                        changed |= mark(y)
            return changed
        if isinstance(op, (n.For, n.While)):
            if isinstance(op, n.For) and is_u(op.body.args[0]):
                changed |= mark(op.iterable)
            ys = op.body.terminator.operands()
            carried = zip(op.inits, op.carried_args, ys, op.results, strict=True)
            for k, (init, arg, y, r) in enumerate(carried):
                if k in op.exit_flags:
                    continue
                if is_u(arg) or is_u(r):
                    changed |= mark(init)
                    changed |= mark(y)
            return changed
        if isinstance(op, n.With):
            if is_u(op.body.args[0]):
                changed |= mark(op.manager)
            for y, r in zip(op.body.terminator.operands(), op.results, strict=True):
                if is_u(r):
                    changed |= mark(y)
            return changed
        if isinstance(op, n.MakeFunction):
            if is_u(op.result):
                for v in [*op.operands(), *free_uses(op.func.body)]:
                    changed |= mark(v)
            return changed
        if any(is_u(r) for r in op.results):
            for v in op.operands():
                changed |= mark(v)
        return changed

    # -- results ----------------------------------------------------------------------------

    def active_ops(self, active: frozenset[int]) -> set[int]:
        """``id(op)`` of ops that compute an active value or write one into an active object."""
        out: set[int] = set()

        def visit(region: n.Region) -> bool:
            any_active = False
            for op in region.ops:
                inner = False
                if not isinstance(op, n.MakeFunction):
                    for r in op.regions():
                        inner |= visit(r)
                hit = inner or any(r.id in active for r in op.results)
                if isinstance(op, (n.SetItem, n.SetAttr)):
                    # Overwriting a slot of an active object matters whatever is written:
                    # the adjoint (tangent) of what was there before is cut off.
                    hit |= op.obj.id in active
                elif isinstance(op, n.Call):
                    info = self.calls[id(op)]
                    hit |= any(t.id in active for t in info.targets)
                if hit:
                    out.add(id(op))
                    any_active = True
            return any_active

        visit(self.fn.body)
        return out

    def cut_points(self, varied: set[int]) -> list[CutPoint]:
        """Warned derivative cuts: a varied operand enters, and the result is used somewhere."""
        used: set[int] = set()
        for op in n.walk(self.fn.body):  # nested function bodies count as uses too
            used.update(v.id for v in op.operands())
        out: list[CutPoint] = []
        for op in self.ops:
            text = _number_of_text_of(self, op, varied)
            if text is not None and any(r.id in used for r in op.results):
                made = self.defs.get(op.args[0].id)  # (named after the text's maker)
                out.append(CutPoint(made if isinstance(made, n.Call) else op, text))
                continue
            if not (isinstance(op, n.Call) and self.calls[id(op)].cut):
                continue
            is_const, fn = const_value(self.defs, op.fn)
            rule = registry.lookup(fn) if is_const else None
            if rule is None or not rule.warn:
                continue
            if not any(r.id in used for r in op.results):
                continue
            for v in op.operands():
                if v.id in varied:
                    out.append(CutPoint(op, v))
                    break
        return out


_TEXTS = frozenset({builtins.str, builtins.repr, builtins.format})
_NUMBERS = frozenset({builtins.float, builtins.int, numpy.float64, numpy.float32})


def _number_of_text_of(analysis: _Analysis, op: n.Op, varied: set[int]) -> n.Value | None:
    """The varied value whose text ``op`` reads back as a number (``float(str(x))``,
    ``float(f"{x:.3f}")``): a cut of the derivative, as ``int(x)`` is."""
    if not isinstance(op, n.Call) or len(op.args) != 1:
        return None
    is_const, fn = const_value(analysis.defs, op.fn)
    if not is_const or not hashable(fn) or fn not in _NUMBERS:
        return None
    made = analysis.defs.get(op.args[0].id)
    if isinstance(made, n.Call):
        is_const, g = const_value(analysis.defs, made.fn)
        if not is_const or not hashable(g) or g not in _TEXTS:
            return None
    elif not isinstance(made, (n.FormatValue, n.JoinStr)):
        return None
    parts = [made.operands()]
    if isinstance(made, n.JoinStr):  # (an f-string: its formatted parts)
        parts = [d.operands() for p in made.operands()
                 if (d := analysis.defs.get(p.id)) is not None]
    return next((v for ops in parts for v in ops if v.id in varied), None)



def activity(fn: n.Function, wrt: Sequence[int], outputs: Sequence[int] = (),
             scalar: Callable[[n.Value], bool] | None = None) -> Activity:
    """Which values of ``fn`` are varied from the parameters ``wrt`` and useful to its result.

    ``wrt`` are indices into ``fn.body.args`` (the parameters, in signature order).
    ``outputs`` are parameters whose objects count as outputs too (a caller sees what the
    function writes into them). ``scalar(v)`` says ``v`` is known to be an immutable
    scalar (from type inference): no call can write into it.
    Raises ``IndexError`` for an index that names no parameter.
    """
    nparams = len(fn.body.args)
    for i in wrt:
        if not -nparams <= i < nparams:
            raise IndexError(f"wrt index {i} out of range for {fn.name!r} "
                             f"with {nparams} parameter(s)")
    wrt_t = tuple(i % nparams for i in wrt)
    analysis = _Analysis(fn, scalar)
    varied = frozenset(analysis.varied(wrt_t))
    useful = frozenset(analysis.useful([fn.body.args[i] for i in outputs]))
    active = varied & useful
    return Activity(
        fn=fn,
        wrt=wrt_t,
        varied=varied,
        useful=useful,
        active_op_ids=frozenset(analysis.active_ops(active)),
        cut_points=tuple(analysis.cut_points(set(varied))),
    )


