"""Inlining derivative rules at their call sites.

A rule is ordinary Python (``registry``): ``f_vjp(*args) -> (value, pullback)``.
Its body is lowered once per (rule, argument types), specialised on the types
(``isinstance`` fast paths folded, untaken branches dropped) and cut in two:
the *primal part* (everything before ``return value, pullback``), cloned into
the forward code at the call site, and the *pullback body*, cloned into the
reverse code with its parameter bound to the result's adjoint and its captured
values bound to the forward clones. So ``y = sin(x)`` becomes
``x_bar += y_bar * math.cos(x)``, not a closure call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from wengert.analysis.types import infer_types
from wengert.diagnostics import SourceLoc
from wengert.frontend import lower
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import Cloner, clone_function
from wengert.transforms.cleanup import cleanup, free_uses
from wengert.transforms.specialize import specialize


@dataclass
class Spec:
    """A rule body specialised on argument types, split into its two parts."""

    params: list[n.Value]
    fwd_ops: list[n.Op]
    value: n.Value
    pb_param: n.Value
    pb_ops: list[n.Op]
    #: One adjoint per argument, or ``None`` when the pullback returns a single tuple value.
    outs: list[n.Value] | None
    out_value: n.Value
    none_outs: set[int]
    pb_free: list[n.Value]
    value_type: type | None
    #: Per argument: whether its adjoint is surely a number or array (never ``None``).
    out_sure: list[bool]


_LOWERED: dict[int, n.Function | None] = {}
_SPECS: dict[tuple[int, tuple[Any, ...]], Spec | None] = {}


def _lowered(rule_fn: Callable) -> n.Function | None:
    key = id(rule_fn)
    if key not in _LOWERED:
        try:
            _LOWERED[key] = lower(rule_fn)
        except Exception:  # a rule the frontend cannot read is still callable
            _LOWERED[key] = None
    return _LOWERED[key]


def specialized_vjp(rule_fn: Callable, nargs: int, arg_types: Sequence[type | None]
                    ) -> Spec | None:
    """The inlinable form of ``rule_fn`` for ``nargs`` arguments of ``arg_types``, or ``None``.

    ``None`` means: call the rule at run time (its shape is not ``return value, pullback``,
    or it takes ``*args``, or its arguments' types are unknown).
    """
    types_key = tuple(arg_types)
    key = (id(rule_fn), (nargs, types_key))
    if key in _SPECS:
        return _SPECS[key]
    spec = None
    if all(t is not None for t in arg_types):
        spec = _build(rule_fn, nargs, list(arg_types))
    _SPECS[key] = spec
    return spec


def _build(rule_fn: Callable, nargs: int, arg_types: list[type | None]) -> Spec | None:
    base = _lowered(rule_fn)
    if base is None:
        return None
    sig = base.signature
    if sig.vararg or sig.kwarg or sig.kwonly or sig.posonly or len(sig.args) != nargs or \
            rule_fn.__defaults__:
        return None
    fn, _ = clone_function(base)
    specialize(fn, arg_types)
    cleanup(fn, drop_pure_calls=True)
    types = infer_types(fn, arg_types)
    body = fn.body
    ret = body.ops[-1]
    if not isinstance(ret, n.Return):
        return None
    defs = {r.id: op for op in body.ops for r in op.results}
    pair = defs.get(ret.value.id)
    if not (isinstance(pair, n.Build) and pair.kind == "tuple" and len(pair.items) == 2
            and not pair.starred):
        return None
    value, pbv = pair.items
    mk = defs.get(pbv.id)
    if not isinstance(mk, n.MakeFunction) or mk.defaults or len(mk.func.body.args) != 1 or \
            mk.func.signature.vararg or mk.func.signature.kwarg:
        return None
    if any(mk.result in op.operands() for op in n.walk(mk.func.body)):
        return None
    uses = [op for op in body.ops if pbv in op.operands()]
    if uses != [pair]:
        return None
    fwd_ops = [op for op in body.ops if op is not mk and op is not pair and op is not ret]
    if any(value.id == r.id for op in fwd_ops for r in op.results) is False and \
            value not in body.args:
        return None
    pb_body = mk.func.body
    pb_ret = pb_body.ops[-1]
    if not isinstance(pb_ret, n.Return):
        return None
    pb_defs = {r.id: op for op in pb_body.ops for r in op.results}
    out_op = pb_defs.get(pb_ret.value.id)
    none_outs: set[int] = set()
    if isinstance(out_op, n.Build) and out_op.kind == "tuple" and not out_op.starred:
        if len(out_op.items) != nargs:
            return None
        outs: list[n.Value] | None = list(out_op.items)
        pb_ops = [op for op in pb_body.ops[:-1] if op is not out_op]
        if any(out_op.result in op.operands() for op in pb_ops):
            pb_ops = list(pb_body.ops[:-1])
        for k, v in enumerate(outs):
            d = pb_defs.get(v.id)
            if isinstance(d, n.Const) and d.value is None:
                none_outs.add(k)
    else:
        outs = None
        pb_ops = list(pb_body.ops[:-1])
    value_type = types.of(value) if value not in body.args else arg_types[body.args.index(value)]
    # The adjoint of a float is a float: type the pullback from it to know its outputs.
    free_types = {k: t for k, t in types.by_id.items()}
    for p, t in zip(body.args, arg_types):
        if t is not None:
            free_types[p.id] = t
    pb_types = infer_types(mk.func, [value_type], free_types)
    sure = (float, numpy.float64, numpy.ndarray)
    out_sure = [outs is not None and pb_types.of(v) in sure for v in (outs or [None] * nargs)]
    return Spec(
        params=list(body.args), fwd_ops=fwd_ops, value=value, pb_param=pb_body.args[0],
        pb_ops=pb_ops, outs=outs, out_value=pb_ret.value, none_outs=none_outs,
        pb_free=free_uses(pb_body), value_type=value_type, out_sure=out_sure)


@dataclass
class Forward:
    """The forward clone of a rule at one call site."""

    cloner: Cloner
    value: n.Value


def _stamp(ops: list[n.Op], loc: SourceLoc | None) -> None:
    for op in ops:
        op.loc = loc
        for r in op.regions():
            _stamp(r.ops, loc)


def emit_forward(spec: Spec, args: Sequence[n.Value], b: Builder,
                 loc: SourceLoc | None) -> Forward:
    """Clone the rule's primal part into ``b`` with its parameters bound to ``args``."""
    cl = Cloner({p.id: a for p, a in zip(spec.params, args)})
    ops = cl.ops(spec.fwd_ops)
    _stamp(ops, loc)
    for op in n.walk(n.Region([], ops)):
        for r in op.results:
            r.hint = None  # the rule's own variable names mean nothing at the call site
    b.region.ops.extend(ops)
    return Forward(cl, cl.value(spec.value))


def emit_pullback(spec: Spec, fwd: Forward, g: n.Value, res: Callable[[n.Value], n.Value],
                  b: Builder, need: Sequence[bool], loc: SourceLoc | None
                  ) -> list[n.Value | None]:
    """Clone the pullback body into ``b``; return one adjoint value per argument."""
    mapping = {spec.pb_param.id: g}
    for v in spec.pb_free:
        mapping[v.id] = res(fwd.cloner.value(v))
    cl = Cloner(mapping)
    ops = cl.ops(spec.pb_ops)
    _stamp(ops, loc)
    for op in n.walk(n.Region([], ops)):
        for r in op.results:
            r.hint = None
    b.region.ops.extend(ops)
    if spec.outs is None:
        whole = cl.value(spec.out_value)
        return [b.getitem(whole, b.const(k)) if need[k] else None for k in range(len(need))]
    return [cl.value(v) if need[k] and k not in spec.none_outs else None
            for k, v in enumerate(spec.outs)]
