"""What a VJP's loop records keep, pruned once the pullback is built: the fields of a record
no reverse loop reads (:func:`prune_unread_fields`), and, after the in-place rewrite, records
whose loops fused into one pass push their items flat (:func:`prune_fused_records`). Part of
:mod:`wengert.transforms.vjp_records`."""

from __future__ import annotations

import operator

from wengert import runtime
from wengert.analysis.effects.objects import never_changed
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.objects import hashable
from wengert.rules import registry


def prune_unread_fields(vjp_fn: n.Function,
                        records: list[tuple[n.Region, n.Build, n.Region, n.Unpack]]
                        ) -> list[n.Value]:
    """Drop the fields of ``records`` (loops of ``vjp_fn``) that nothing reads: no tuple on
    either side where one is left. Returns the values no longer saved."""
    used: set[int] = set()
    for op in n.walk(vjp_fn.body):
        used.update(v.id for v in op.operands())
        if isinstance(op, n.MakeFunction):
            used.update(v.id for o in n.walk(op.func.body) for v in o.operands())
    mapping: dict[int, n.Value] = {}
    dropped: list[n.Value] = []
    for fwd_region, record_op, rev_region, unpack in records:
        first: dict[int, int] = {}
        for k, (f, r) in enumerate(zip(record_op.items, unpack.results)):
            if r.id in used and first.setdefault(f.id, k) != k:
                # (A value saved twice, as a loop's items and the list it walked: once.)
                mapping[r.id] = unpack.results[first[f.id]]
                used.discard(r.id)
        keep = [k for k, r in enumerate(unpack.results) if r.id in used]
        if len(keep) == len(unpack.results):
            continue
        if not keep and record_op in fwd_region.ops and unpack in rev_region.ops:
            # Nothing read of the iterations (all computed again): ``None`` is pushed
            # per step, to count them (``count_only_loops`` may push nothing at all).
            dropped += record_op.items
            none = n.Const(None, [n.Value()], loc=record_op.loc)
            fwd_region.ops[fwd_region.ops.index(record_op)] = none
            mapping[record_op.result.id] = none.result
            rev_region.ops.remove(unpack)
            continue
        if not keep:
            continue
        dropped += [f for k, f in enumerate(record_op.items) if k not in keep]
        if len(keep) == 1:
            # One field: the record is the value itself, no tuple on either side.
            (k,) = keep
            mapping[record_op.result.id] = record_op.items[k]
            mapping[unpack.results[k].id] = unpack.value
            unpack.value.hint = unpack.results[k].hint or unpack.value.hint
            fwd_region.ops.remove(record_op)
            rev_region.ops.remove(unpack)
            continue
        record_op.items = [record_op.items[k] for k in keep]
        unpack.results = [unpack.results[k] for k in keep]
    for key, v in mapping.items():
        while v.id in mapping and mapping[v.id] is not v:
            v = mapping[v.id]  # (a copy's field read as the one field left)
        mapping[key] = v
    replace_uses(vjp_fn, mapping)
    return dropped


def prune_fused_records(fn: n.Function) -> None:
    """Drop the record fields of the VJP ``fn`` that only the adjoint calls fused after the
    transform read (``slice_pair_adjoint`` measures the split of ``row[:j] + row[j + 1:]``
    itself: its length is not saved per row), and the forward's pure calls that computed
    nothing else: fewer objects alive between the forward and the pullback."""
    records = [r for r in fn.records
               if r[1] in r[0].ops and r[3] in r[2].ops and r[3].value in r[2].args]
    fn.records = []
    dropped = prune_unread_fields(fn, records)
    while dropped:
        users: dict[int, int] = {}
        defs: dict[int, tuple[n.Region, n.Op]] = {}
        consts: dict[int, object] = {}
        regions = [fn.body]
        while regions:
            region = regions.pop()
            for op in region.ops:
                regions.extend(op.regions())
                for r in op.results:
                    defs[r.id] = (region, op)
                if isinstance(op, n.Const):
                    consts[op.result.id] = op.value
                vals = op.operands()
                if isinstance(op, n.MakeFunction):
                    vals = vals + free_uses(op.func.body)
                for v in vals:
                    users[v.id] = users.get(v.id, 0) + 1
        again = []
        for v in dropped:
            region, op = defs.get(v.id, (None, None))
            if isinstance(op, n.Build) and op.kind == "list" and not op.items:
                again += _drop_unread_stack(fn, op, region, users, defs)  # type: ignore[arg-type]
                continue
            if users.get(v.id) or not isinstance(op, n.Call) or op.kwargs or op.starred or \
                    not hashable(f := consts.get(op.fn.id)) or not registry.is_pure(f):
                continue
            region.ops.remove(op)  # type: ignore[union-attr]
            again += op.args
        dropped = again
    for loop, iterable, stack_op, fwd, kind in fn.item_loops:
        pushes = [op for op in loop.body.ops if isinstance(op, n.Call) and
                  any(op.fn in a.results for a in loop.body.ops if isinstance(a, n.GetAttr)
                      and a.obj is stack_op.result and a.name == "append")]
        if loop.iterable is iterable and stack_op in fwd.ops and loop in fwd.ops and \
                len(pushes) == 1 and pushes[0].args == [loop.body.args[0]]:
            append = next(a for a in loop.body.ops if pushes[0].fn in a.results)
            item_only_loop(fn, loop, stack_op, fwd, kind, (append, pushes[0]))
    fn.item_loops = []
    live = [r for r in records if r[1] in r[0].ops and r[3] in r[2].ops]
    _slice_again(fn, live)
    fn.list_slices = set()
    # (A loop's items saved as the list it walked may now be saved twice: once.)
    prune_unread_fields(fn, live)
    _push_flat(fn, [r for r in live if r[1] in r[0].ops and r[3] in r[2].ops])


def _push_flat(fn: n.Function, records: list[tuple[n.Region, n.Build, n.Region, n.Unpack]]
               ) -> None:
    """A loop record of several fields pushed as its fields (``loop.extend((c, b, a))``)
    rather than as a tuple (``loop.append((a, b, c))``), and read back by
    ``runtime.reversed_records(loop, 3)``: no tuple alive per iteration between the forward
    and the pullback (a recursion's, a determinant's, has one per call). Only where the
    record list is pushed this one record and walked by this one reverse loop."""
    uses: dict[int, list[n.Op]] = {}
    defs: dict[int, n.Op] = {}
    loops: dict[int, n.For] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
        for r in op.results:
            defs[r.id] = op
        if isinstance(op, n.For):
            loops[id(op.body)] = op
    pushed = {id(r[1]) for r in records}
    held = {r.id: f for _, record, _, unpack in records
            for f, r in zip(record.items, unpack.results)}
    for fwd, record, rev, unpack in records:
        push = uses.get(record.result.id, [])
        append = defs.get(push[0].fn.id) if len(push) == 1 and \
            isinstance(push[0], n.Call) else None
        rfor = loops.get(id(rev))
        if len(record.items) < 2 or not isinstance(append, n.GetAttr) or \
                append.name != "append" or push[0].args != [record.result] or \
                push[0].kwargs or push[0].starred or append not in fwd.ops or \
                rfor is None or rfor.body.args[:1] != [unpack.value] or \
                len(uses.get(unpack.value.id, [])) != 1:
            continue
        stack, walk = append.obj, defs.get(rfor.iterable.id)
        if not isinstance(defs.get(stack.id), n.Build) or \
                not isinstance(walk, n.Call) or len(walk.args) != 1 or \
                walk.kwargs or walk.starred or len(uses.get(walk.result.id, [])) != 1 or \
                not isinstance(defs.get(walk.fn.id), n.Const) or \
                defs[walk.fn.id].value is not reversed:
            continue
        seen = walk.args[0]
        passed: list[n.Op] = []  # (the yields it leaves an ``if`` by, on its way)
        if _origin(seen, held, defs, passed) is not stack or \
                seen is not stack and len(uses.get(seen.id, [])) != 1 or \
                any(o is not append and o is not walk and o not in passed and
                    not (isinstance(o, n.Build) and id(o) in pushed)
                    for o in uses.get(stack.id, [])):
            continue  # (the list read anywhere else: kept as it is)
        record.items = record.items[::-1]  # (walked back: the first field first)
        append.name = "extend"
        flat = n.Const(runtime.reversed_records, [n.Value()], loc=walk.loc)
        size = n.Const(len(record.items), [n.Value()], loc=walk.loc)
        region = next(r for r in _regions(fn) if walk in r.ops)
        at = region.ops.index(walk)
        region.ops[at:at] = [flat, size]
        walk.fn = flat.result
        walk.args = [seen, size.result]


def _origin(v: n.Value, held: dict[int, n.Value], defs: dict[int, n.Op],
            passed: list[n.Op]) -> n.Value:
    """The forward value the pullback's ``v`` is: through the record field that held it
    and the ``if`` that yielded it where the other branch has ``None`` (a loop's record
    list made in one branch); the yields passed are added to ``passed``."""
    while True:
        v = held.get(v.id, v)
        made = defs.get(v.id)
        if not isinstance(made, n.If):
            return v
        k = made.results.index(v)
        out = [(r.terminator, r.terminator.values[k]) for r in made.regions()]
        real = [(y, w) for y, w in out
                if not (isinstance(defs.get(w.id), n.Const) and defs[w.id].value is None)]
        if len(real) != 1:
            return v
        passed.append(real[0][0])
        v = real[0][1]


def _regions(fn: n.Function) -> list[n.Region]:
    """Every region of ``fn``, nested functions' included."""
    out, todo = [], [fn.body]
    while todo:
        r = todo.pop()
        out.append(r)
        for op in r.ops:
            todo.extend(op.regions())
    return out


def _slice_again(fn: n.Function, records: list[tuple[n.Region, n.Build, n.Region, n.Unpack]]
                 ) -> None:
    """A record field that is a slice of a list or tuple the forward code never changes
    (``m[1:]`` of the argument walked by ``for row in m[1:]`` in a loop over ``j``) is
    sliced again by the reverse loop instead of saved: the same items, and one list fewer
    alive per iteration between the forward and the pullback; a field that is a slice
    object (``i:``) is made again too. Only for a list the function is given (a callee
    reaching it through a global is the one change not seen here, as for
    ``iteration.py``) and bounds computed from constants, other fields of the record and
    values of the function's top level by a little integer arithmetic."""
    top = {v.id for v in fn.body.args} | {r.id for op in fn.body.ops for r in op.results}
    # (A parameter only: a global list, or one read out of a global, may be changed by a
    # callee that reaches it through the global, which no op of this function shows.)
    params = fn.body.args
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    unchanged: dict[int, bool] = {}
    for fwd, record_op, rev, unpack in records:
        defs = {r.id: o for o in fwd.ops for r in o.results}
        fields = {f.id: r for f, r in zip(record_op.items, unpack.results)}
        made: dict[int, list[n.Op]] = {}
        mapping: dict[int, n.Value] = {}

        def again(v: n.Value | None, ops: list[n.Op], depth: int = 0) -> n.Value | None:
            """``v`` in the reverse loop (ops that compute it added to ``ops``), or
            ``None`` where it cannot be had there."""
            if v.id in top:
                return v
            if v.id in fields:
                return fields[v.id]
            d = defs.get(v.id)
            if isinstance(d, n.Const):
                ops.append(n.Const(d.value, [n.Value(v.hint)], d.origin, d.root))
                return ops[-1].result
            if depth < 3 and isinstance(d, n.Call) and not d.kwargs and not d.starred and \
                    hashable(f := consts.get(d.fn.id)) and f in _BOUNDS_ARITHMETIC:
                args = [again(a, ops, depth + 1) for a in [d.fn, *d.args]]
                if any(a is None for a in args):
                    return None
                ops.append(n.Call(args[0], args[1:], [], [n.Value(v.hint)], loc=d.loc))
                return ops[-1].result
            if depth < 3 and isinstance(d, n.BuildSlice):
                parts = [None if p is None else again(p, ops, depth + 1)
                         for p in (d.lower, d.upper, d.step)]
                if any(p is None and q is not None
                       for p, q in zip(parts, (d.lower, d.upper, d.step))):
                    return None
                ops.append(n.BuildSlice(*parts, [n.Value(v.hint)], loc=d.loc))
                return ops[-1].result
            return None

        for f, r in zip(record_op.items, unpack.results):
            op = defs.get(f.id)
            ops: list[n.Op] = []
            if isinstance(op, n.BuildSlice) or isinstance(op, n.Call) and \
                    consts.get(op.fn.id) is slice:
                del fields[f.id]  # (not read out of the record it replaces)
                got = again(f, ops)
                fields[f.id] = r
            elif f.id in fn.list_slices and isinstance(op, n.GetItem) and op.obj in params:
                cut = again(op.index, ops)
                if cut is None:
                    continue
                if op.obj.id not in unchanged:
                    pushed = {id(record) for _, record, _, _ in records}
                    unchanged[op.obj.id] = never_changed(op.obj, fn, pushed)
                if not unchanged[op.obj.id]:
                    continue
                ops.append(n.GetItem(op.obj, cut, [n.Value(r.hint)], loc=op.loc))
                got = ops[-1].result
            else:
                continue
            if got is not None and r.id not in mapping:
                made[r.id] = ops
                mapping[r.id] = got
        firsts = {}
        for rid in made:
            at = next((k for k, o in enumerate(rev.ops)
                       if any(v.id == rid for o2 in [o, *(x for sub in o.regions()
                                                          for x in n.walk(sub))]
                              for v in o2.operands())), None)
            if at is None:
                del mapping[rid]  # (read nowhere: pruned as it is)
            else:
                firsts[rid] = at
        if firsts:
            # All before the first op that reads one of them (below the comment of its
            # line), slice objects first: a slice of a list made again may read one.
            order = sorted(firsts, key=lambda rid: isinstance(made[rid][-1], n.GetItem))
            at = min(firsts.values())
            rev.ops[at:at] = [o for rid in order for o in made[rid]]
            substitute(rev, mapping)


def _drop_unread_stack(fn: n.Function, stack: n.Build, region: n.Region,
                       users: dict[int, int], defs: dict[int, tuple[n.Region, n.Op]]
                       ) -> list[n.Value]:
    """Drop the record list ``stack`` of a loop (made empty in ``region``) where nothing but
    its pushes reads it any more (the reverse loop fused into one call), with the pushes
    and the records they made; return the values those records held."""
    reads = [o for o in n.walk(fn.body) if stack.result in o.operands()]
    if len(reads) != users.get(stack.result.id) or \
            any(not isinstance(o, n.GetAttr) or o.name != "append" for o in reads):
        return []
    pushes = [(defs[a.result.id][0], a, o) for a in reads for o in n.walk(fn.body)
              if isinstance(o, n.Call) and o.fn is a.result]
    if len(pushes) != len(reads) or \
            any(users.get(a.result.id) != 1 or len(o.args) != 1 or o.kwargs or o.starred
                or o.results and users.get(o.results[0].id) for _, a, o in pushes):
        return []
    held: list[n.Value] = []
    region.ops.remove(stack)
    for body, attr, push in pushes:
        body.ops.remove(attr)
        body.ops.remove(push)
        record = defs.get(push.args[0].id, (None, None))[1]
        if isinstance(record, n.Build) and record.kind == "tuple" and \
                users.get(record.result.id) == 1 and record in body.ops:
            body.ops.remove(record)
            held += record.items
        else:
            held.append(push.args[0])
    return held


def item_only_loop(fn: n.Function, loop: n.For, stack_op: n.Build, fwd: n.Region, kind: type,
               push: tuple[n.Op, n.Op]) -> None:
    """Push nothing in ``loop`` (over a ``kind``: a range, a list or a tuple), whose record
    ``stack_op`` in ``fwd`` is its item alone, pushed by ``push``: the reverse loop walks
    the range, or a copy of the list made before the loop."""
    loop.body.ops = [o for o in loop.body.ops if o not in push]
    if kind is range:
        fwd.ops.remove(stack_op)
        replace_uses(fn, {stack_op.result.id: loop.iterable})
        return
    if _unnamed_slice(fn, loop.iterable, loop, fwd):
        # (A list made for the loop alone: nothing changes it, so it is its own copy.)
        fwd.ops.remove(stack_op)
        replace_uses(fn, {stack_op.result.id: loop.iterable})
        return
    at = fwd.ops.index(stack_op)
    make = n.Const(list, [n.Value()])
    copy = n.Call(make.result, [loop.iterable], [], [stack_op.result], loc=loop.loc)
    fwd.ops[at:at + 1] = []
    at = fwd.ops.index(loop)
    fwd.ops[at:at] = [make, copy]


#: Integer arithmetic a slice's bounds are computed again by in the reverse loop, and
#: ``slice`` itself.
_BOUNDS_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.neg,
                      operator.floordiv, operator.mod, len, slice)


def _unnamed_slice(fn: n.Function, xs: n.Value, loop: n.For, fwd: n.Region) -> bool:
    """Whether ``xs`` is a slice of a list made in ``fwd`` for ``loop`` alone (``for row in
    m[1:]``: no name of the user's holds it) and the forward code only iterates it there and
    saves it in loop records (tuples the pullback reads): nothing can change it later."""
    made = next((op for op in fwd.ops if xs in op.results), None)
    if xs.hint is not None or not isinstance(made, n.GetItem) or made.obj is xs:
        return False
    cut = next((op for op in fwd.ops if made.index in op.results), None)
    if not isinstance(cut, n.BuildSlice):
        return False
    for op in n.walk(fn.body):
        if isinstance(op, n.MakeFunction) or all(v is not xs for v in op.operands()):
            continue  # (the pullback reads the forward's values only)
        if op is loop and xs not in loop.inits or op is made or \
                isinstance(op, n.Build) and op.kind == "tuple":
            continue
        return False
    return True
