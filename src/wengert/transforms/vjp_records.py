"""Loop records made small: what a reverse loop reads of each iteration, and no more.

After the pullback is built: a record field that is a short chain of pure calls of
other fields is recomputed in the reverse loop rather than saved (what a person writing
the adjoint does), a field the cleaned pullback no longer reads is dropped, and each
record is pushed as soon as its fields exist (``s`` is saved before ``s = f(s)``
overwrites it: no copy of the old value).
"""

from __future__ import annotations

import operator

import numpy

from wengert import runtime
from wengert.analysis.effects.objects import only_read, unchanged_between
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.objects import attribute_kind, hashable
from wengert.rules import registry, shapes
from wengert.transforms.base import IMMUTABLE
from wengert.transforms.vjp_record_pruning import item_only_loop, prune_unread_fields

#: Calls that read only the shape of their argument.
SHAPE_READERS = frozenset({shapes.shape, numpy.shape, numpy.ndim})

#: Calls whose result is saved rather than computed again in a reverse loop: a product or a
#: solve costs more than the reference a record keeps (``W @ h`` of a layer, whose shape the
#: pullback reads).
_COSTLY = frozenset({operator.matmul, numpy.matmul, numpy.dot, numpy.einsum, numpy.tensordot,
                     numpy.inner, numpy.outer, numpy.linalg.solve, numpy.linalg.inv,
                     numpy.linalg.det, numpy.linalg.slogdet, numpy.linalg.cholesky})


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
                    op.fn.id not in consts or not registry.is_pure(consts[op.fn.id].value) or \
                    hashable(consts[op.fn.id].value) and consts[op.fn.id].value in _COSTLY:
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
            item_only_loop(vjp_fn, loop, stack_op, fwd, kind, entries[0][1:])

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

