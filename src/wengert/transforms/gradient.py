"""The gradient of a function as one IR function: its VJP's forward code followed by the
pullback's body, seeded. Ordinary IR, so the transforms differentiate it again."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from wengert import runtime
from wengert.analysis.types import ObjectOf, TupleOf, plain
from wengert.ir import nodes as n


def grad_ir(vjp_ir: n.Function, wrt: tuple[int, ...], single: bool, seeded: bool = False,
             arg_types: Sequence[Any] = ()) -> n.Function:
    """The gradient as one IR function: the VJP's forward code followed by its pullback's
    body, seeded with ``1.0``. It is ordinary IR, so the transforms differentiate it again
    (forward over reverse); the pullback's names and loops come along unchanged.

    The cotangents come finished (:func:`runtime.finish_adjoint`), zeros materialised in
    the structure each argument had when the call began, exactly as ``grad`` returns
    them. ``seeded``: the seed is a new last parameter ``v`` instead of ``1.0``."""
    from wengert.ir.clone import substitute

    body = vjp_ir.body
    ret = body.ops[-1]
    assert isinstance(ret, n.Return)
    pair = next(op for op in body.ops if ret.value in op.results)
    assert isinstance(pair, n.Build)
    mk = next(op for op in body.ops if pair.items[1] in op.results)
    assert isinstance(mk, n.MakeFunction)
    pb = mk.func.body
    unit = n.Const(runtime.unit_like, [n.Value()])
    seed = n.Call(unit.result, [pair.items[0]], [], [n.Value("seed")])
    seed_value = seed.result
    if seeded:
        seed_value = n.Value(pb.args[0].hint or "v")
    none = n.Const(None, [n.Value()])
    mapping = {pb.args[0].id: seed_value}
    if len(pb.args) > 1:  # the adjoints of mutable arguments a caller holds: none here
        mapping[pb.args[1].id] = none.result
    substitute(pb, mapping)
    pb_ret = pb.ops[-1]
    assert isinstance(pb_ret, n.Return)
    grads = next(op for op in pb.ops if pb_ret.value in op.results)
    assert isinstance(grads, n.Build)
    ops = [op for op in body.ops if op not in (ret, pair, mk)]
    ops += [*([] if seeded else [unit, seed]), none, *(op for op in pb.ops if op is not pb_ret)]
    # Containers the function may change get their structure recorded at entry.
    types_ = list(arg_types) + [None] * (len(body.args) - len(arg_types))
    shapes: dict[int, n.Value] = {}
    entry_ops: list[n.Op] = []
    for i in wrt:
        kind = plain(types_[i])
        if kind in (list, dict) or kind is None or \
                isinstance(kind, type) and dataclasses.is_dataclass(kind) or \
                isinstance(types_[i], ObjectOf) or kind is tuple and not (
                    isinstance(types_[i], TupleOf) and
                    all(e in (float, int, bool, str) for e in types_[i].entries)):
            # (a tuple or an object holding lists: one may be appended to)
            fc = n.Const(runtime.structure, [n.Value()], origin="structure")
            call = n.Call(fc.result, [body.args[i]], [], [n.Value(f"{body.args[i].hint}_shape")])
            entry_ops += [fc, call]
            shapes[i] = call.result
    ops[0:0] = entry_ops
    finish = n.Const(runtime.finish_adjoint, [n.Value()], origin="finish_adjoint")
    ops.append(finish)
    finished = {}
    for i in wrt:
        if types_[i] is float:
            finished[i] = grads.items[i]  # a float parameter's adjoint is never None
            continue
        call = n.Call(finish.result, [grads.items[i], shapes.get(i, body.args[i])], [],
                      [n.Value()])
        ops.append(call)
        finished[i] = call.result
    if seeded:
        out = n.Build("tuple", [finished[i] for i in wrt], [n.Value()])
        ops.append(out)
        ops.append(n.Return(out.result, loc=ret.loc))
        return n.Function(f"{vjp_ir.name.removesuffix('_vjp')}_pulled_back",
                          n.Signature(args=[*vjp_ir.signature.names(), "v"]),
                          n.Region([*body.args, seed_value], ops), vjp_ir.filename,
                          vjp_ir.loc, vjp_ir.source_lines)
    if single:
        result = finished[wrt[0]]
    else:
        out = n.Build("tuple", [finished[i] for i in wrt], [n.Value()])
        ops.append(out)
        result = out.result
    ops.append(n.Return(result, loc=ret.loc))
    return n.Function(f"{vjp_ir.name.removesuffix('_vjp')}_grad", vjp_ir.signature,
                      n.Region(list(body.args), ops), vjp_ir.filename, vjp_ir.loc,
                      vjp_ir.source_lines)
