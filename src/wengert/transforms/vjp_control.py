"""The reverse of structured control flow: ``If``, loops and ``with`` blocks.

An ``If``'s adjoint re-tests the recorded condition and runs each arm's reverse actions
in a scope of its own; values an arm's adjoint reads from inside the arm become extra
results of the forward ``If``. A loop pushes one record per iteration (the values its
reverse reads) and the reverse loop runs backwards over them, carrying the adjoints of
the loop's carried values, of the values it reads from outside, and of its items.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from wengert import runtime
from wengert.diagnostics import NonDifferentiableError, SourceLoc
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import defined_in, substitute
from wengert.ir.uses import free_uses
from wengert.transforms.base import FLOATS
from wengert.transforms.vjp_containers import FIELD
from wengert.transforms.vjp_scope import Action, Scope, _bar

if TYPE_CHECKING:
    pass


class ReverseControlFlow:
    """The reverse-mode transform's handlers of structured ops (a mixin of :class:`VJP`)."""

    def on_If(self, op: n.If, b: Builder) -> Action:
        if self.type_of(op.cond) is not bool:
            # ``if acc:`` on a list appended to later: the pullback must see the truth
            # value the branch was taken on, not re-test the object.
            op.cond = b.call(operator.truth, op.cond, hint="taken")
            self.extra_types[op.cond.id] = bool
        b.emit(op)
        then_actions = self.forward_region(op.then)
        else_actions = self.forward_region(op.orelse)
        loc = op.loc

        def reverse(scope: Scope) -> None:
            cond = scope.res(op.cond)
            rev_then, rev_else = n.Region(), n.Region()
            children = []
            for region, actions, fwd in ((rev_then, then_actions, op.then),
                                         (rev_else, else_actions, op.orelse)):
                child = Scope(self, scope, region, defined_in(fwd))
                for r, y in zip(op.results, fwd.terminator.values):
                    g = scope.get(r)
                    if g is not None and self.active(y):
                        child.accumulate(y, g, maybe_none=r.id in scope.maybe_none
                                         or self.resolve(r).id in scope.maybe_none)
                # The adjoints of the If's results now live in the arms.
                for r in op.results:
                    child.adj.pop(self.resolve(r).id, None)
                for act in reversed(actions):
                    act(child)
                children.append(child)
            changed = self.merge(scope, children, loc)
            rif = n.If(cond, rev_then, rev_else, [], loc=loc)
            for v in changed:
                rif.results.append(n.Value(_bar(v)))
            scope.b.emit(rif)
            for child, fwd_region in zip(children, (op.then, op.orelse)):
                self.close_branch(child, op, fwd_region)
            for v, r in zip(changed, rif.results):
                scope.adj[v.id] = r
                if any(v.id in c.maybe_none for c in children):
                    scope.maybe_none.add(v.id)
                else:
                    scope.maybe_none.discard(v.id)
        return reverse

    def merge(self, scope: Scope, children: list[Scope], loc: SourceLoc | None) -> list[n.Value]:
        """Outer values whose adjoints an arm changed; each arm yields its final adjoint."""
        changed: list[n.Value] = []
        seen: set[int] = set()
        for child in children:
            for vid, a in child.adj.items():
                if scope.adj.get(vid) is not a and vid not in seen and \
                        (child.fwd_defs is None or vid not in child.fwd_defs):
                    seen.add(vid)
                    changed.append(self.value_by_id(vid))
        for child in children:
            ys = []
            for v in changed:
                a = child.adj.get(v.id)
                if a is None:
                    a = child.zero(v, allow_none=True)
                    if self.type_of(v) not in (*FLOATS, int, bool):
                        child.maybe_none.add(v.id)
                ys.append(a)
            child.b.emit(n.Yield(ys, loc=loc))
        return changed

    def value_by_id(self, vid: int) -> n.Value:
        return self.synthetic.get(vid) or self._values()[vid]

    def _values(self) -> dict[int, n.Value]:
        cache = getattr(self, "_value_cache", None)
        if cache is None:
            cache = {}
            self._value_cache = cache
        if not cache or getattr(self, "_value_cache_n", 0) != len(self.rename):
            for a in self.fn.body.args:
                cache[a.id] = a
            for op in n.walk(self.fn.body):
                for r in op.results:
                    cache[r.id] = r
                for a in n.region_args(op):
                    cache[a.id] = a
            self._value_cache_n = len(self.rename)
        return cache

    def close_branch(self, child: Scope, fwd_if: n.If, fwd_region: n.Region) -> None:
        """Bind a reverse arm's placeholders: export arm-local values through the If."""
        mapping: dict[int, n.Value] = {}
        other = fwd_if.orelse if fwd_region is fwd_if.then else fwd_if.then
        for vid, v in child.requested.items():
            if vid in child.fwd_defs:
                r = n.Value(v.hint, v.loc)
                fwd_if.results.append(r)
                fwd_region.terminator.values.append(v)
                none = n.Const(None, [n.Value()])
                other.ops.insert(len(other.ops) - 1, none)
                other.terminator.values.append(none.result)
                self._values()[r.id] = r
                self.declare(child.parent, r)
                mapping[child.placeholders[vid].id] = child.parent.res(r)
            else:
                mapping[child.placeholders[vid].id] = child.parent.res(v)
        substitute(child.region, mapping)

    def declare(self, scope: Scope | None, r: n.Value) -> None:
        """A new forward value in the region ``scope`` mirrors (and so in its ancestors')."""
        while scope is not None:
            if scope.fwd_defs is not None:
                scope.fwd_defs.add(r.id)
            scope = scope.parent

    def loop_free_active(self, op: n.For | n.While) -> list[n.Value]:
        """Active values defined outside the loop that its body reads (their adjoints carry)."""
        out: list[n.Value] = []
        seen: set[int] = set()
        regions = [op.body] if isinstance(op, n.For) else [op.body]
        inside = set()
        for r in regions:
            inside |= defined_in(r)
        inside |= {a.id for a in n.region_args(op)}
        for r in regions:
            for v in free_uses(r, tuple(n.region_args(op))):
                v = self.resolve(v)
                if v.id not in inside and v.id not in seen and self.active(v):
                    seen.add(v.id)
                    out.append(v)
                    # The scalar adjoints of its entries are carried beside it.
                    out.extend(self.slots.get(v.id, {}).values())
        return out

    def fields_only(self, op: n.For | n.While, v: n.Value) -> bool:
        """Whether the loop ``op`` uses the object ``v`` only to read float fields with
        scalar adjoints (``field_slot``) and to write fields: nothing in its reverse adds
        into ``v``'s own adjoint."""
        if v.id not in self.slots or any(type(k) is not tuple for k in self.slots[v.id]):
            return False
        regions = [op.cond, op.body] if isinstance(op, n.While) else [op.body]
        for r in regions:
            for use in n.walk(r):
                ins = [self.resolve(u).id for u in use.operands()]
                if isinstance(use, n.MakeFunction):
                    ins += [self.resolve(u).id for u in free_uses(use.func.body)]
                if v.id not in ins:
                    continue
                if isinstance(use, n.GetAttr) and (FIELD, use.name) in self.slots[v.id] and \
                        self.type_of(use.result) is float:
                    continue
                if isinstance(use, n.SetAttr) and self.resolve(use.value).id != v.id:
                    continue
                return False
        return True

    def on_For(self, op: n.For, b: Builder) -> Action:
        return self.loop(op, b)

    def on_While(self, op: n.While, b: Builder) -> Action:
        return self.loop(op, b)

    def loop(self, op: n.For | n.While, b: Builder) -> Action:
        stack_op = n.Build("list", [], [n.Value("loop")], loc=op.loc)
        ops = b.region.ops
        at = len(ops)
        # Before the computation of the iterable, so ``for i in range(n)`` stays one line.
        while at > 0 and any(r in op.operands() for r in ops[at - 1].results) and \
                not isinstance(ops[at - 1], (n.For, n.While, n.If, n.With)):
            at -= 1
        ops.insert(at, stack_op)
        fwd_ops, fwd_region = ops, b.region
        seen = op.iterable if isinstance(op, n.For) else None
        if seen is not None and self.type_of(seen) is list and self.active(seen) and \
                self.mutated_after(seen, op):
            # A list changed later (``xs.append``): its items' adjoints are those of the
            # items the loop saw, as many as it had then.
            seen = b.call(list, seen, hint=f"{seen.hint}_seen" if seen.hint else None)
        b.emit(op)
        actions = self.forward_region(op.body)
        stack = stack_op.result
        loc = op.loc
        is_for = isinstance(op, n.For)
        item = op.body.args[0] if is_for else None
        if is_for and self.active(op.iterable) and item is not None and self.active(item):
            item_active = True
        else:
            item_active = False

        def reverse(scope: Scope) -> None:
            free = self.loop_free_active(op)
            carried = [(a, r, y) for a, r, y in zip(op.carried_args, op.results,
                                                    op.body.terminator.values)
                       if self.active(a) or self.active(r)]
            inits: list[n.Value] = []
            slots: list[tuple[str, n.Value]] = []
            for a, r, _ in carried:
                inits.append(scope.need(r) if scope.get(r) is not None
                             else scope.zero(r, allow_none=True))
                slots.append(("carried", a))
            # An object whose adjoint is zero here and that the body only reads and writes
            # float fields of: its adjoint stays zero through the loop (the fields' scalar
            # adjoints carry), so it is not carried.
            free = [v for v in free if scope.get(v, flush=False) is not None or
                    not self.fields_only(op, v)]
            for v in free:
                g = scope.get(v, flush=False)
                if g is not None and self.type_of(v) in (*FLOATS, int, bool):
                    g = scope.need(v)  # the loop's result is read as a number's: never None
                inits.append(g if g is not None else scope.zero(v, allow_none=True))
                slots.append(("free", v))
            if item_active:
                inits.append(scope.b.emit(n.Build("list", [], [n.Value()])).result)
                slots.append(("items", item))
            rec = n.Value("rec")
            rargs = [n.Value(_bar(v) if kind != "items" else "items_bar") for kind, v in slots]
            body = n.Region([rec, *rargs], [])
            child = Scope(self, scope, body, defined_in(op.body) | {
                a.id for a in n.region_args(op)})
            child.adj = {k: v for k, v in scope.adj.items()}
            for (kind, v), arg in zip(slots, rargs):
                if kind != "items":
                    child.adj[self.resolve(v).id] = arg
                    maybe = self.type_of(v) not in (*FLOATS, int, bool)
                    (child.maybe_none.add if maybe else child.maybe_none.discard)(
                        self.resolve(v).id)
            # At the end of an iteration the carried values were the yielded ones.
            for a, _r, _y in carried:
                child.adj.pop(self.resolve(a).id, None)
            for (a, _r, y), arg in zip(carried, rargs):
                if self.active(y):
                    child.accumulate(y, arg, maybe_none=self.type_of(a) not in
                                     (*FLOATS, int, bool))
            for act in reversed(actions):
                act(child)
            ys = []
            for (kind, v), arg in zip(slots, rargs):
                if kind == "items":
                    g = child.get(v)
                    ys.append(child.b.call(self.const_fn(runtime.push), arg,
                                           g if g is not None else child.b.const(None)))
                    continue
                # A carried object's fields' scalar adjoints are this iteration's (each
                # iteration's object is another): they go into its adjoint here. A free
                # value's are carried beside it.
                g = child.get(v, flush=kind == "carried")
                if g is not None and self.type_of(v) in (*FLOATS, int, bool):
                    # The next iteration reads a number's adjoint as never None.
                    g = child.need(v)
                ys.append(g if g is not None else child.zero(v, allow_none=True))
            child.b.emit(n.Yield(ys, loc=loc))
            # Bind placeholders: loop-local values come from the iteration's record.
            fields = [v for vid, v in child.requested.items() if vid in child.fwd_defs]
            mapping: dict[int, n.Value] = {}
            unpacked: list[n.Value] = []
            if fields:
                if len(fields) == 1:
                    mapping[child.placeholders[fields[0].id].id] = rec
                    rec.hint = fields[0].hint or rec.hint
                    record = fields[0]
                else:
                    unpacked = [n.Value(f.hint) for f in fields]
                    body.ops.insert(0, n.Unpack(rec, unpacked, loc=loc))
                    for f, u in zip(fields, unpacked):
                        mapping[child.placeholders[f.id].id] = u
                    record_op = n.Build("tuple", fields, [n.Value()])
                    op.body.ops.insert(len(op.body.ops) - 1, record_op)
                    record = record_op.result
                    self.records.append((op.body, record_op, body, body.ops[0]))
                if len(fields) == 1:
                    pass
            else:
                record = None
            count = None
            if record is None and is_for and not op.exit_flags and \
                    self.type_of(op.iterable) in (range, list, tuple) and stack_op in fwd_ops:
                # Nothing to record: the reverse loop only runs as many times, and a loop
                # over a sized iterable without ``break`` runs len(iterable) times (a loop
                # inside another: the count is a field of the outer loop's record).
                fwd_ops.remove(stack_op)
                size = n.Const(len, [n.Value()])
                count = n.Call(size.result, [op.iterable], [], [n.Value("steps")], loc=loc)
                k = fwd_ops.index(op)
                fwd_ops[k:k] = [size, count]
                self.declare(scope, count.result)  # (a field of an enclosing loop's record)
            else:
                push_arg = record
                if push_arg is None:
                    none = n.Const(None, [n.Value()])
                    op.body.ops.insert(len(op.body.ops) - 1, none)
                    push_arg = none.result
                append = n.GetAttr(stack, "append", [n.Value()])
                push = n.Call(append.result, [push_arg], [], [n.Value()])
                at = len(op.body.ops) - 1
                if record is not None and record is not fields[0]:
                    at -= 1  # Python evaluates ``loop.append`` before building the record
                op.body.ops.insert(at, append)
                op.body.ops.insert(len(op.body.ops) - 1, push)
                self.pushes.append((op.body, append, push))
            for vid, v in child.requested.items():
                if vid not in child.fwd_defs:
                    mapping[child.placeholders[vid].id] = scope.res(v)
            substitute(body, mapping)
            if count is not None:
                rev_iter = scope.b.call(range, scope.res(count.result))
            else:
                rev_iter = scope.b.call(reversed, scope.res(stack))
            rfor = n.For(rev_iter, inits, body, [n.Value(_bar(v) if kind != "items"
                                                          else "items_bar")
                                                 for kind, v in slots], loc=loc)
            scope.b.emit(rfor)
            if count is None:
                self.stacks.append((op, stack_op, fwd_region, rfor, scope.b.region))
            results = list(zip(slots, rfor.results))
            # Free values first: their slot holds the whole adjoint, carried inits add to it.
            for (kind, v), r in results:
                if kind == "free":
                    scope.adj[self.resolve(v).id] = r
                    if self.type_of(v) in (*FLOATS, int, bool):
                        scope.maybe_none.discard(self.resolve(v).id)
                    else:
                        scope.maybe_none.add(self.resolve(v).id)
            for (kind, v), r in results:
                if kind == "items":
                    seq = scope.b.call(self.const_fn(runtime.reversed_adjoint), r,
                                       scope.res(seen))
                    scope.accumulate(op.iterable, seq, maybe_none=True)
                elif kind == "carried":
                    # The adjoint of the carried value at loop entry flows to its init.
                    init = op.inits[op.carried_args.index(v)]
                    if self.active(init):
                        scope.accumulate(init, r, maybe_none=self.type_of(v) not in FLOATS)
        return reverse

    def on_With(self, op: n.With, b: Builder) -> Action:
        target = op.body.args[0]
        if self.active(op.manager) and any(target in o.operands() for o in n.walk(op.body)):
            raise NonDifferentiableError(
                "the value of a `with` statement whose context manager holds active values "
                "is not supported yet", op.loc,
                hint="use the value directly rather than through the `as` target")
        b.emit(op)
        actions = self.forward_region(op.body)
        loc = op.loc

        def reverse(scope: Scope) -> None:
            # The block ran once: its adjoint is its body's, in the enclosing region.
            for r, y, _i in zip(op.results, op.body.terminator.values, op.inits):
                g = scope.get(r)
                if g is not None and self.active(y):
                    scope.adj.pop(self.resolve(r).id, None)
                    scope.accumulate(y, g, maybe_none=True)
            region = n.Region()
            child = Scope(self, scope, region, defined_in(op.body))
            child.adj = scope.adj
            child.maybe_none = scope.maybe_none
            for act in reversed(actions):
                act(child)
            mapping: dict[int, n.Value] = {}
            for vid, v in child.requested.items():
                if vid in child.fwd_defs:
                    r = n.Value(v.hint, v.loc)
                    init = n.Const(None, [n.Value()])
                    b_region = self.region_of(op)
                    b_region.ops.insert(b_region.ops.index(op), init)
                    op.inits.append(init.result)
                    op.results.append(r)
                    op.body.terminator.values.append(v)
                    self._values()[r.id] = r
                    self.declare(scope, r)
                    mapping[child.placeholders[vid].id] = scope.res(r)
                else:
                    mapping[child.placeholders[vid].id] = scope.res(v)
            substitute(region, mapping)
            scope.b.region.ops.extend(region.ops)
        del loc
        return reverse
