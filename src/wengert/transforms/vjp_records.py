"""Loop records made small: what a reverse loop reads of each iteration, and no more.

After the pullback is built: a record field that is a short chain of pure calls of
other fields is recomputed in the reverse loop rather than saved (what a person writing
the adjoint does), a field the cleaned pullback no longer reads is dropped, and each
record is pushed as soon as its fields exist (``s`` is saved before ``s = f(s)``
overwrites it: no copy of the old value).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

import numpy

from wengert import runtime
from wengert.analysis.effects.objects import never_changed, only_read, unchanged_between
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.objects import attribute_kind, hashable
from wengert.rules import registry, shapes
from wengert.transforms.base import IMMUTABLE

#: Calls that read only the shape of their argument.
SHAPE_READERS = frozenset({shapes.shape, numpy.shape, numpy.ndim})

if TYPE_CHECKING:
    pass


class LoopRecords:
    """The reverse-mode transform's loop-record passes (a mixin of :class:`VJP`)."""

    def hoist_pushes(self) -> None:
        """Push each loop record as soon as its fields exist, not at the end of the body:
        ``s`` is saved before ``s = f(s)`` overwrites it, so no copy of the old ``s``."""
        for body, append, push in self.pushes:
            ops = body.ops
            moved = [append, push]
            (arg,) = push.args
            record = next((o for o in ops if arg in o.results and isinstance(o, n.Build)
                           and o not in moved), None)
            if record is not None:
                moved.insert(1, record)
            fields = record.items if record is not None else [arg]
            for o in moved:
                ops.remove(o)
            pos: dict[int, int] = {}
            for i, o in enumerate(ops):
                for r in o.results:
                    pos[r.id] = i
                for sub in o.regions():
                    for x in n.walk(sub):
                        for r in x.results:
                            pos[r.id] = i
            at = max((pos.get(f.id, -1) for f in fields), default=-1) + 1
            ops[at:at] = moved

    def rematerialize(self, vjp_fn: n.Function) -> None:
        """Recompute, in the reverse loop, a record field that is a short chain of pure
        calls of other fields and constants (``t = math.sin(s) * 0.001``), rather than save
        it: what a person writing the adjoint does, and a smaller record (often none)."""
        consts = {op.result.id: op for op in n.walk(vjp_fn.body) if isinstance(op, n.Const)}
        top_loops = {id(op.body): op for op in vjp_fn.body.ops if isinstance(op, n.For)}
        #: Numbers made at the function's top level (or given to it): nothing changes them.
        self.top_numbers = {
            v.id for v in [*vjp_fn.body.args, *(r for op in vjp_fn.body.ops
                                                 if not isinstance(op, n.MakeFunction)
                                                 for r in op.results)]
            if self.type_of(v) in (float, int, bool)}
        copies: dict[tuple[int, int], n.Value] = {}
        for fwd_region, record_op, rev_region, unpack in self.records:
            defs = {r.id: o for o in fwd_region.ops for r in o.results}
            where = {id(o): i for i, o in enumerate(fwd_region.ops)}
            items = record_op.items
            # In the order they are computed: a chain only reads fields computed before it.
            order = sorted(range(len(items)), key=lambda k: where.get(id(defs.get(items[k].id)),
                                                                       -1))
            kept = {f.id: unpack.results[k] for k, f in enumerate(items)}
            computed: dict[int, n.Value] = {}
            at = rev_region.ops.index(unpack) + 1
            mapping: dict[int, n.Value] = {}
            for k in order:
                f = items[k]
                del kept[f.id]
                loop = top_loops.get(id(fwd_region))
                read = None if loop is None else self._item_reread(
                    f, defs, consts, kept, computed, loop, vjp_fn, copies)
                if read is None and loop is not None:
                    read = self._appended_reread(f, fwd_region, kept, loop, vjp_fn)
                if read is not None:
                    rev_region.ops[at:at] = read
                    at += len(read)
                    computed[f.id] = read[-1].results[0]
                    mapping[unpack.results[k].id] = computed[f.id]
                    continue
                chain = self._pure_chain(f, defs, consts, kept, computed)
                if chain is None:
                    kept[f.id] = unpack.results[k]
                    continue
                new_ops: list[n.Op] = []
                for o in chain:
                    args = []
                    for a in [o.fn, *o.args]:
                        got = kept.get(a.id) or computed.get(a.id) or \
                            (a if a.id in self.top_numbers else None)
                        if got is None:
                            c = consts[a.id]
                            new_ops.append(n.Const(c.value, [n.Value(a.hint)], c.origin, c.root))
                            got = new_ops[-1].result
                        args.append(got)
                    new_ops.append(n.Call(args[0], args[1:], [], [n.Value(o.result.hint)],
                                          loc=o.loc))
                    computed[o.result.id] = new_ops[-1].result
                rev_region.ops[at:at] = new_ops
                at += len(new_ops)
                mapping[unpack.results[k].id] = computed[f.id]
            if mapping:
                substitute(rev_region, mapping)

    def merge_field_reads(self) -> None:
        """Two record fields that read one field of one object (``self.x`` twice in ``a =
        -k * self.x - 0.3 * self.x ** 3``) with nothing between the reads that could change
        it (arithmetic of numbers, constants, other reads) are one value: the reverse loop
        reads the first, and the second is not saved."""
        for fwd_region, record_op, rev_region, unpack in self.records:
            if record_op not in fwd_region.ops:
                continue
            where = {id(o): k for k, o in enumerate(fwd_region.ops)}
            defs = {r.id: o for o in fwd_region.ops for r in o.results}
            first: dict[tuple[int, str], tuple[n.GetAttr, n.Value]] = {}
            mapping: dict[int, n.Value] = {}
            for f, r in zip(record_op.items, unpack.results):
                op = defs.get(f.id)
                if not isinstance(op, n.GetAttr) or \
                        attribute_kind(self.type_of(op.obj), op.name) != "field":
                    continue
                key = (self.resolve(op.obj).id, op.name)
                seen = first.get(key)
                if seen is None or where[id(seen[0])] > where[id(op)]:
                    if seen is None or not unchanged_between(self.type_of, op, seen[0], fwd_region):
                        first[key] = (op, r)
                        continue
                    first[key], (op, r) = (op, r), seen
                if unchanged_between(self.type_of, first[key][0], op, fwd_region):
                    mapping[r.id] = first[key][1]
            if mapping:
                substitute(rev_region, mapping)

    def _item_reread(self, f: n.Value, defs: dict[int, n.Op], consts: dict[int, n.Const],
                     kept: dict[int, n.Value], computed: dict[int, n.Value], loop: n.For,
                     vjp_fn: n.Function, copies: dict[tuple[int, int], n.Value]
                     ) -> list[n.Op] | None:
        """The ops reading record field ``f = xs[i]`` again in the reverse loop, for a list
        or tuple ``xs`` from outside the (top-level) ``loop`` that the function only reads
        from the loop on, and an index the reverse loop has: the item is read out of a copy of
        ``xs`` made before the loop (a tuple is its own copy), so no caller's later change
        reaches it, instead of being saved each iteration."""
        op = defs.get(f.id)
        if not isinstance(op, n.GetItem) or op.obj.id in defs or \
                self.type_of(op.obj) not in (list, tuple) or \
                self.type_of(op.index) is not int or not only_read(op.obj, vjp_fn, loop):
            return None
        new_ops: list[n.Op] = []
        index = kept.get(op.index.id) or computed.get(op.index.id)
        if index is None:
            c = consts.get(op.index.id)
            if c is None:
                return None
            new_ops.append(n.Const(c.value, [n.Value(op.index.hint)], c.origin, c.root))
            index = new_ops[-1].result
        key = (id(loop), op.obj.id)
        if key not in copies:
            if self.type_of(op.obj) is tuple:
                copies[key] = op.obj
            else:
                make = n.Const(list, [n.Value()])
                copy = n.Call(make.result, [op.obj], [], [n.Value(
                    f"{op.obj.hint}_copy" if op.obj.hint else None)], loc=loop.loc)
                # Before the loop's record list, so ``for i in range(n)`` stays one line.
                ops = vjp_fn.body.ops
                at = min([ops.index(loop)] + [ops.index(entry[1]) for entry in self.stacks
                                              if entry[0] is loop and entry[1] in ops])
                ops[at:at] = [make, copy]
                self.reread_copies.append((make, copy))
                copies[key] = copy.result
        new_ops.append(n.GetItem(copies[key], index, [n.Value(f.hint)], loc=op.loc))
        self.rereads.append(new_ops[-1])
        return new_ops

    def drop_unread_rereads(self, vjp_fn: n.Function) -> None:
        """Drop the items :meth:`_item_reread` reads again that the cleaned-up pullback does
        not use (``xs[i]`` in ``len(t) * xs[i]``: only the other operand's adjoint read it,
        and that is zero), and the copies no read is left of: cleanup keeps an index it
        cannot prove in range, and this one was read by the forward already."""
        for _ in range(2):  # (the items, then the copies they read)
            used = {v.id for op in n.walk(vjp_fn.body) for v in op.operands()}
            dead = {id(op) for op in self.rereads if op.result.id not in used}
            dead |= {id(op) for make, copy in self.reread_copies
                     if copy.result.id not in used for op in (make, copy)}
            if not dead:
                return
            regions = [vjp_fn.body]
            while regions:
                region = regions.pop()
                region.ops = [o for o in region.ops if id(o) not in dead]
                for o in region.ops:
                    regions.extend(o.regions())  # (a nested function's body included)

    def _appended_reread(self, f: n.Value, body: n.Region, kept: dict[int, n.Value],
                         loop: n.For, vjp_fn: n.Function) -> list[n.Op] | None:
        """The op reading record field ``f`` again in the reverse loop where every step of
        the top-level ``for i in range(n)`` (no ``break``) appends ``f`` to a list ``ws``
        made empty just before it and only read after it: ``f`` is ``ws[i]``, the value
        itself, so nothing is saved for it (``ws = [math.exp(x - m) for x in xs]``)."""
        top = vjp_fn.body.ops
        defs = {r.id: o for o in top for r in o.results}
        consts = {o.result.id: o.value for o in top if isinstance(o, n.Const)}
        rng = defs.get(loop.iterable.id)
        index = kept.get(loop.body.args[0].id)
        if loop.exit_flags or index is None or not isinstance(rng, n.Call) or \
                consts.get(rng.fn.id) is not range or len(rng.args) != 1 or \
                rng.kwargs or rng.starred:
            return None
        methods = {o.result.id: o for o in body.ops
                   if isinstance(o, n.GetAttr) and o.name == "append"}
        for call in body.ops:
            if not isinstance(call, n.Call) or call.args != [f] or call.kwargs or \
                    call.starred or call.fn.id not in methods:
                continue
            ws = methods[call.fn.id].obj
            made = defs.get(ws.id)
            if not isinstance(made, n.Build) or made.kind != "list" or made.items or \
                    not only_read(ws, vjp_fn, loop, after=True):
                continue
            # No other use of ``ws`` between its display and the end of the loop.
            start, end = top.index(made), top.index(loop)
            uses = [o for o in top[start + 1:end] for v in o.operands() if v is ws]
            uses += [o for o in n.walk(body) for v in o.operands() if v is ws]
            getter = methods[call.fn.id]
            if uses != [getter] or [o for o in n.walk(body) for v in o.operands()
                                    if v is getter.result] != [call]:
                continue
            made_f = next((o for o in body.ops if f in o.results), call)
            return [n.GetItem(ws, index, [n.Value(f.hint)], loc=made_f.loc)]
        return None

    def _pure_chain(self, f: n.Value, defs: dict[int, n.Op], consts: dict[int, n.Const],
                    kept: dict[int, n.Value], computed: dict[int, n.Value]
                    ) -> list[n.Call] | None:
        """The pure calls that compute record field ``f`` again from kept fields, values
        already recomputed, numbers of the function's top level (``-k`` of a parameter:
        the same at every step) and constants, in order, if there are at most three new
        ones."""
        chain: list[n.Call] = []

        def visit(v: n.Value, top: bool) -> bool:
            if not top and v.id in self.top_numbers:
                return True
            if not top and v.id in kept and self.changes_later(v):
                return False  # (its contents when the pullback runs are not those read)
            if not top and (v.id in kept or v.id in computed or v.id in consts):
                return True
            op = defs.get(v.id)
            if not isinstance(op, n.Call) or op.kwargs or op.starred or \
                    op.fn.id not in consts or not registry.is_pure(consts[op.fn.id].value):
                return False
            if any(o is op for o in chain):
                return True
            if not all(visit(a, False) for a in op.args):
                return False
            chain.append(op)
            return len(chain) <= 3

        return chain if visit(f, True) else None

    def changes_later(self, v: n.Value) -> bool:
        """Whether the program may change the object ``v`` after it is made (a list whose
        slot is written through another read of it included): what is computed from it
        must be saved, not computed again by the pullback."""
        if self.type_of(v) in IMMUTABLE:
            return False
        # (a value the transform made stands for the primal values computed as it: an
        # inlined rule's result, a copy made before an in-place operator)
        for p in [v, *self.primal_values(v)]:
            d = self.defs.get(p.id)
            if self.mutated_after(p, d) if d is not None else self.is_mutated(p):
                return True
        return False

    def snapshot_changed_fields(self) -> None:
        """A record field that is an array the program changes after making it (a row of
        a matrix written later in the step, a view of one) is saved as a copy taken where
        it is made: the pullback reads it as it was there (its shape, most often, which
        code differentiated again must see unchanged too), not as the later write left
        it. What rules read of it by value was copied where they read it (``call_rule``)."""
        for fwd_region, record_op, _, _ in self.records:
            where = {id(o): i for i, o in enumerate(fwd_region.ops)}
            made = {r.id: o for o in fwd_region.ops for r in o.results}
            items = list(record_op.items)
            for k, f in enumerate(items):
                d = made.get(f.id)
                if d is None or id(d) not in where or \
                        numpy.ndarray not in (self.type_of(f),
                                              *map(self.type_of, self.primal_values(f))) or \
                        not self.changes_later(f):
                    continue
                c = n.Const(runtime.snapshot, [n.Value()], "snapshot")
                copy = n.Call(c.result, [f], [], [n.Value(f.hint)], loc=d.loc)
                at = fwd_region.ops.index(d) + 1
                fwd_region.ops[at:at] = [c, copy]
                items[k] = copy.result
            record_op.items = items

    def prune_records(self, vjp_fn: n.Function) -> None:
        """Drop the fields of loop records that the cleaned-up pullback no longer reads
        (the adjoint that read them turned out to be zero): nothing is saved for nothing."""
        prune_unread_fields(vjp_fn, self.records)

    def keep_shapes(self, vjp_fn: n.Function, mk: n.MakeFunction) -> None:
        """A forward value the pullback reads only the shape of (``np.shape(t)``, the
        broadcasting rules' ``_shape(t)``, ``np.ndim(t)``) is not kept for it: the forward
        computes the shape and the pullback captures that, so a large temporary (``(a -
        b) ** 2`` summed over an axis) is freed when the forward returns, as the primal
        frees it, and the pullback's arrays reuse its memory."""
        inside: set[int] = set()
        consts: dict[int, n.Const] = {}
        reads: dict[int, list[tuple[n.Region, n.Op]]] = {}
        regions = [mk.func.body]
        while regions:
            region = regions.pop()
            inside.update(v.id for v in region.args)
            for op in region.ops:
                inside.update(v.id for v in op.results)
                if isinstance(op, n.Const):
                    consts[op.result.id] = op
                vals = op.operands()
                if isinstance(op, n.MakeFunction):
                    vals = vals + free_uses(op.func.body)
                for v in vals:
                    reads.setdefault(v.id, []).append((region, op))
                regions.extend(op.regions())
        at = vjp_fn.body.ops.index(mk)
        mapping: dict[int, n.Value] = {}
        for vid, users in reads.items():
            if vid in inside or not all(
                    isinstance(op, n.Call) and len(op.args) == 1 and not op.kwargs and
                    not op.starred and op.args[0].id == vid and
                    op.fn.id in consts and hashable(f := consts[op.fn.id].value) and
                    f in SHAPE_READERS
                    for _, op in users):
                continue
            made: dict[object, n.Value] = {}
            for region, op in users:
                f = consts[op.fn.id].value  # type: ignore[union-attr]
                if f not in made:
                    orig = consts[op.fn.id]  # type: ignore[union-attr]
                    c = n.Const(f, [n.Value()], orig.origin, orig.root, loc=op.loc)
                    v = op.args[0]  # type: ignore[union-attr]
                    hint = f"{v.hint}_shape" if v.hint and not v.hint.startswith(".") else None
                    call = n.Call(c.result, [v], [], [n.Value(hint)], loc=op.loc)
                    vjp_fn.body.ops[at:at] = [c, call]
                    at += 2
                    made[f] = call.result
                mapping[op.result.id] = made[f]
                region.ops.remove(op)
        replace_uses(vjp_fn, mapping)

    def item_only_loops(self, vjp_fn: n.Function) -> None:
        """A ``for`` loop without ``break`` whose record is its item alone, over a range, a
        list or a tuple (which its body does not change, or it would be an index loop by
        now): nothing is pushed. The reverse loop runs through the range itself or through
        a copy of the list made before the loop, at the speed of C. A loop whose record
        holds more is kept in ``vjp_fn.item_loops``: fusing adjoint calls after the
        transform may leave its item alone (:func:`prune_fused_records`)."""
        for loop, stack_op, fwd, _rfor, _rev in self.stacks:
            if not isinstance(loop, n.For) or loop.exit_flags or stack_op not in fwd.ops or \
                    loop not in fwd.ops:
                continue
            kind = self.type_of(loop.iterable)
            entries = [e for e in self.pushes if e[0] is loop.body]
            if kind not in (range, list, tuple) or len(entries) != 1:
                continue
            if entries[0][2].args != [loop.body.args[0]]:
                vjp_fn.item_loops.append((loop, loop.iterable, stack_op, fwd, kind))
                continue
            self.pushes.remove(entries[0])
            _item_only(vjp_fn, loop, stack_op, fwd, kind, entries[0][1:])

    def iterate_directly(self, vjp_fn: n.Function) -> None:
        """A forward loop ``for i in range(n)``, ``n`` the length of lists (or the least of
        several), whose ``i`` only reads their items, iterates over them again (``for x in
        xs``, ``for w, x in zip(ws, xs)``) once the reverse takes nothing of it: what the
        program wrote before the reverse needed an index, at its speed. Only where the body
        cannot change those lists (pure calls, appends to lists made here, reads)."""
        ops = list(n.walk_local(vjp_fn.body))
        defs = {r.id: o for o in ops for r in o.results}
        consts = {o.result.id: o.value for o in ops if isinstance(o, n.Const)}
        fresh = {o.result.id for o in ops
                 if isinstance(o, n.Build) and o.kind == "list" and not o.items}
        for loop in [o for o in ops if isinstance(o, n.For)]:
            rng = defs.get(loop.iterable.id)
            if not isinstance(rng, n.Call) or consts.get(rng.fn.id) is not range or \
                    len(rng.args) != 1 or rng.kwargs or rng.starred:
                continue
            seqs = _measured(rng.args[0], defs, consts)
            if not seqs or len(set(map(id, seqs))) != len(seqs) or \
                    any(self.type_of(xs) not in (list, tuple) for xs in seqs):
                continue
            reads = _item_reads(loop, seqs, consts, fresh)
            if reads is None or not _measured_just_before(loop, rng, vjp_fn, consts):
                continue
            item = loop.body.args[0]
            if len(seqs) == 1:
                loop.iterable = seqs[0]
                parts = [item]
                # The item named as the reads were (``x = xs[i]``: ``for x in xs``).
                item.hint = next((r.result.hint for r in reads if r.result.hint), None)
            else:
                pair = n.Const(zip, [n.Value()])
                joined = n.Call(pair.result, list(seqs), [], [n.Value()], loc=loop.loc)
                at = vjp_fn.body.ops.index(loop) if loop in vjp_fn.body.ops else None
                if at is None:
                    continue
                vjp_fn.body.ops[at:at] = [pair, joined]
                loop.iterable = joined.result
                parts = [n.Value(xs.hint and f"{xs.hint}_item") for xs in seqs]
                loop.body.ops.insert(0, n.Unpack(item, parts, loc=loop.loc))
            mapping: dict[int, n.Value] = {}
            for read in reads:
                mapping[read.result.id] = parts[next(k for k, xs in enumerate(seqs)
                                                     if xs is read.obj)]
                if read.result.hint and len(seqs) > 1:
                    mapping[read.result.id].hint = read.result.hint
                _remove(loop.body, read)
            replace_uses(vjp_fn, mapping)

    def count_only_loops(self, vjp_fn: n.Function, pb_fn: n.Function) -> None:
        """A top-level loop whose reverse reads nothing of its records only needs to run as
        many times: over a sized iterable without ``break`` that is ``len(iterable)``, so
        nothing is pushed (``for _ in range(steps)`` instead of ``reversed(loop)``)."""
        used: set[int] = set()
        for op in n.walk(vjp_fn.body):
            used.update(v.id for v in op.operands())
            if isinstance(op, n.MakeFunction):
                used.update(v.id for o in n.walk(op.func.body) for v in o.operands())
        for loop, stack_op, fwd, rfor, rev in self.stacks:
            if rfor.body.args[0].id in used or not isinstance(loop, n.For) or \
                    loop.exit_flags or self.type_of(loop.iterable) not in (range, list, tuple) \
                    or fwd is not vjp_fn.body or rev is not pb_fn.body or \
                    stack_op not in fwd.ops or loop not in fwd.ops or rfor not in rev.ops:
                continue
            for entry in [e for e in self.pushes if e[0] is loop.body]:
                body, append, push = entry
                body.ops = [o for o in body.ops if o is not append and o is not push]
                self.pushes.remove(entry)
            fwd.ops.remove(stack_op)
            size = n.Const(len, [n.Value()])
            steps = n.Call(size.result, [loop.iterable], [], [n.Value("steps")], loc=loop.loc)
            k = fwd.ops.index(loop)
            fwd.ops[k:k] = [size, steps]
            upto = n.Const(range, [n.Value()])
            it = n.Call(upto.result, [steps.result], [], [n.Value()], loc=loop.loc)
            old = rfor.iterable
            rev.ops = [o for o in rev.ops if old not in o.results]  # ``reversed(loop)``
            k = rev.ops.index(rfor)
            rev.ops[k:k] = [upto, it]
            rfor.iterable = it.result


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
            _item_only(fn, loop, stack_op, fwd, kind, (append, pushes[0]))
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


#: Integer arithmetic a slice's bounds are computed again by in the reverse loop, and
#: ``slice`` itself.
_BOUNDS_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.neg,
                      operator.floordiv, operator.mod, len, slice)


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


def _item_only(fn: n.Function, loop: n.For, stack_op: n.Build, fwd: n.Region, kind: type,
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


def _measured(size: n.Value, defs: dict[int, n.Op], consts: dict[int, object]
              ) -> list[n.Value] | None:
    """The sequences ``size`` is the length of (``len(xs)``, or ``min`` of such), else
    ``None``."""
    op = defs.get(size.id)
    if not isinstance(op, n.Call) or op.kwargs or op.starred:
        return None
    f = consts.get(op.fn.id)
    if f is len and len(op.args) == 1:
        return [op.args[0]]
    if f is min and len(op.args) == 2:
        a, b = (_measured(v, defs, consts) for v in op.args)
        return a + b if a is not None and b is not None else None
    return None


#: What may stand between the lengths a loop's range is made of and the loop: reads.
_MEASURING = (len, min, range, list)


def _measured_just_before(loop: n.For, rng: n.Call, vjp_fn: n.Function,
                          consts: dict[int, object]) -> bool:
    """Whether ``loop`` follows the range ``rng`` in one region with nothing between them
    (from the first length it measures) but constants, reads by index, displays and calls
    of :data:`_MEASURING`, which change no list: the lengths still hold when it starts."""
    for op in n.walk_local(vjp_fn.body):
        region = next((r for r in op.regions() if loop in r.ops), None)
        if region is not None:
            break
    else:
        region = vjp_fn.body
    ops = region.ops
    if rng not in ops or loop not in ops:
        return False
    between = ops[:ops.index(loop)]
    # From the first length measured for the range on.
    start = ops.index(rng)
    defs = {r.id: k for k, o in enumerate(between) for r in o.results}
    stack = list(rng.args)
    while stack:
        v = stack.pop()
        made = between[defs[v.id]] if v.id in defs else None
        if isinstance(made, n.Call):  # (a length, or the least of lengths)
            start = min(start, defs[v.id])
            stack.extend(made.args)
    return all(isinstance(o, (n.Const, n.GetItem, n.Build)) or
               isinstance(o, n.Call) and any(consts.get(o.fn.id) is f for f in _MEASURING)
               for o in between[start:])


def _item_reads(loop: n.For, seqs: list[n.Value], consts: dict[int, object],
                fresh: set[int]) -> list[n.GetItem] | None:
    """The reads ``xs[i]`` of ``loop``'s body at its item ``i``, one of ``seqs`` each, at the
    top level of the body, if they are all that uses ``i``, nothing but reads uses ``seqs``,
    and nothing in the body can change a list: calls of pure functions and appends to
    lists made in the function (``fresh``) only, no stores. Else ``None``."""
    item = loop.body.args[0]
    reads: list[n.GetItem] = []
    methods: set[int] = set()
    for op in n.walk(loop.body):
        if isinstance(op, n.MakeFunction) or isinstance(op, (n.SetItem, n.SetAttr)):
            return None
        if isinstance(op, n.GetAttr):
            if op.name != "append" or op.obj.id not in fresh:
                return None
            methods.add(op.result.id)
        if isinstance(op, n.Call) and op.fn.id not in methods and not (
                hashable(f := consts.get(op.fn.id)) and registry.is_pure(f)):
            return None
        if any(v is item for v in op.operands()):
            if not isinstance(op, n.GetItem) or op.index is not item or \
                    not any(op.obj is xs for xs in seqs) or op not in loop.body.ops:
                return None
            reads.append(op)
        elif any(v is xs for v in op.operands() for xs in seqs) and \
                not isinstance(op, n.GetItem):
            return None
    return reads


def _remove(region: n.Region, op: n.Op) -> None:
    region.ops.remove(op)

