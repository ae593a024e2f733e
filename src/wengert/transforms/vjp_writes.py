"""Reverse mode's refusals of writes it cannot follow, as a mixin of
:class:`~wengert.transforms.vjp.VJP`: a write into an object read out of a container (its
adjoint is kept apart from the container's), into an object that may be one of several (a
branch's or a loop's), a list changed after it was stored in another. Each is refused at the
user's line before anything is derived (``ReverseModeRefusal`` where forward mode answers
instead: ``grad`` then does), never derived wrong. What may write or alias what is asked of
:mod:`wengert.analysis.effects`."""

from __future__ import annotations

import operator
import types

from wengert.analysis.effects.objects import is_writeback, write_targets
from wengert.diagnostics import NonDifferentiableError, ReverseModeRefusal, SourceLoc
from wengert.ir import nodes as n
from wengert.objects import hashable
from wengert.rules import registry
from wengert.transforms.base import IMMUTABLE, INPLACE, is_c_type
from wengert.transforms.nested_grad import check_second_order_only

#: List methods that take items out of the list they are called on.
_TAKING_OUT = frozenset({"pop", "remove", "clear"})


class ReverseWriteChecks:
    """The checks :class:`~wengert.transforms.vjp.VJP` makes of the writes of the function
    it derives (methods reading the transform's state: types, effects, definitions)."""

    def mutated_after(self, v: n.Value, op: n.Op) -> bool:
        """Whether the program may change ``v`` in place from ``op`` on: ``op`` itself, a
        change later in program order, or one in a loop around both (the next iteration's)."""
        if v.id in self.item_reads or self.resolve(v).id in self.item_reads:
            # An item of a list whose items are written into (``transforms/vjp_items.py``):
            # a write through another read of its slot changes this very object.
            return True
        fx = self.effects
        # (through a view of it, or what it views, too)
        return fx.changed_from(op, v, self.resolve(v)) or \
            self.type_of(v) not in IMMUTABLE and fx.changed_after(v, op)

    def slot_rebound_after(self, read: n.GetItem | n.GetAttr) -> bool:
        """Whether the slot ``read`` reads (``obj.name``, ``obj[k]``) may be given a new
        object from ``read`` on: a write of something not read out of ``obj`` itself (the
        write-back of an item read out of it, as ``tr.hist.append(x)`` and ``t[i][j] += v``
        lower to, keeps the objects it holds)."""
        obj = self.resolve(read.obj)
        holder = self.item_reads.get(self.resolve(read.results[0]).id)

        def held(v: n.Value) -> bool:
            # (read out of the same holder: a write-back, or a swap of two of its items)
            v = self.resolve(v)
            got = self.defs.get(v.id)
            return holder is not None and self.item_reads.get(v.id) == holder or \
                isinstance(got, n.GetItem) and self.resolve(got.obj) is obj or \
                isinstance(got, n.GetAttr) and isinstance(read, n.GetAttr) and \
                got.name == read.name and self.resolve(got.obj) is obj

        return self.effects.slot_given_after(read, obj, held)

    def primal_values(self, v: n.Value) -> list[n.Value]:
        """The primal values the transform computes as ``v`` (``resolve`` backwards)."""
        if getattr(self, "_primal_of", None) is None or self._renames_seen != len(self.rename):
            back: dict[int, list[int]] = {}
            for old, new in self.rename.items():
                back.setdefault(new.id, []).append(old)
            self._primal_of, self._renames_seen = back, len(self.rename)
        out: list[n.Value] = []
        todo, seen = list(self._primal_of.get(v.id, ())), set()
        while todo:
            vid = todo.pop()
            if vid in seen:
                continue
            seen.add(vid)
            d = self.defs.get(vid)
            if d is not None:
                out.extend(r for r in d.results if r.id == vid)
            todo.extend(self._primal_of.get(vid, ()))
        return out

    def is_mutated(self, v: n.Value) -> bool:
        """Whether the program changes ``v`` in place somewhere (by its own name, or by the
        name a call it stands for was given: ``ops = list(t)`` is the rule's result)."""
        return bool(self.effects.written(v, self.resolve(v)))

    def check_nested_writes(self) -> None:
        """Refuse writes into an object that was itself read out of a container or object.

        ``rows[0][1] = v`` writes into ``rows[0]``: the adjoint of that inner list is kept
        apart from the adjoint of ``rows``, so the write would not clear the slot the
        outer adjoint sees, and the gradient would silently be wrong. The same holds for
        every spelling of the write: a mutating method, an in-place operator, or a call
        of a function that writes into the object it is given (``p.step(dt)`` on an
        element of a list); a call whose callee is known only at run time is checked
        when it runs (:meth:`borrowed_positions`).
        """
        #: Each loop's item, by id: the loop.
        self.item_of: dict[int, n.For] = {op.body.args[0].id: op for op in n.walk(self.fn.body)
                                          if isinstance(op, n.For)}
        self.loop_items = set(self.item_of)
        #: A loop's carried values, by id: the loop.
        self.carried_args: dict[int, n.Op] = {
            a.id: op for op in n.walk(self.fn.body) if isinstance(op, (n.For, n.While))
            for a in op.carried_args}
        written = self.linker.written_params if self.linker is not None else None
        for op in n.walk(self.fn.body):
            c = self.consts.get(op.fn.id) if isinstance(op, n.Call) else None
            if c is not None and isinstance(c.value, types.FunctionType) and \
                    written is not None and registry.lookup(c.value) is None:
                check_second_order_only(c.value, op)  # (its own message, not a write's)
            taken = self.taken_out_of(op)
            if taken is not None and self.borrowed(taken) and not self.sliced(taken) and \
                    self.read_again(taken, op):
                raise _borrowed_error(op.loc)
            for target in write_targets(op, self.defs, self.type_of, written):
                if self.borrowed(target):
                    raise _borrowed_error(op.loc)
                if self.joined(target):
                    raise ReverseModeRefusal(
                        "this writes into an object that may be one of several (chosen by a "
                        "branch, or rebound by a loop), which reverse mode does not support: "
                        "each has an adjoint of its own", op.loc,
                        hint="forward mode (wengert.jvp, wengert.jacfwd) handles it; in "
                             "reverse mode write into each object under its own name, or "
                             "make a new one (`ys = list(xs)`)")

    def taken_out_of(self, op: n.Op) -> n.Value | None:
        """The list ``op`` takes items out of (``r.pop(j)``, ``r.remove(v)``, ``r.clear()``;
        not a dict's, whose adjoint is keyed), or ``None``."""
        m = self.defs.get(op.fn.id) if isinstance(op, n.Call) else None
        if not isinstance(m, n.GetAttr) or m.name not in _TAKING_OUT or \
                self.type_of(m.obj) not in (list, None):
            return None
        return m.obj

    def sliced(self, v: n.Value) -> bool:
        """Whether ``v`` is a slice ``x[a:b]``: a new list where ``x`` is one (an array's
        slice, a view, has no ``pop``), whatever is known of ``x``'s type."""
        src = self.defs.get(v.id)
        return isinstance(src, n.GetItem) and self.type_of(src.index) is slice

    def read_again(self, v: n.Value, op: n.Op) -> bool:
        """Whether anything reads the list ``v`` (read out of a container), or the containers
        it was read out of, after ``op`` (besides the reads that found it): then the adjoint
        they give it has the length it had after ``op``, which the reverse of ``op`` does
        not reach (a row's adjoint kept apart from its table's), so the two would not add
        up. Where nothing else reads them (``total += r.pop()`` over the rows of an
        argument), the popped item's adjoint is the row's whole adjoint and is right."""
        # (Its own pops, this one included, are reversed on its own adjoint, in turn.)
        finding = {id(u) for u in self.uses.get(v.id, ())
                   if isinstance(u, n.GetAttr) and u.name in _TAKING_OUT}
        seen: set[int] = set()
        chain = [v]
        while chain:
            x = chain.pop()
            if x.id in seen:
                continue
            seen.add(x.id)
            src = self.defs.get(x.id)
            if isinstance(src, n.GetItem):
                finding.add(id(src))
                chain.append(src.obj)
            loop = self.item_of.get(x.id)
            if loop is not None:  # (a loop's item: read out of what the loop walks)
                finding.add(id(loop))
                chain.append(loop.iterable)
        return self.effects.runs_after(
            [u for vid in seen for u in self.uses.get(vid, ()) if id(u) not in finding], op)

    def borrowed(self, v: n.Value) -> bool:
        """Whether ``v`` is an active object read out of a container or another object:
        its adjoint is kept apart from that container's, so writes into it are lost."""
        if not self.active(v) or self.type_of(v) in IMMUTABLE or v.id in self.field_lists or \
                v.id in self.item_reads:
            return False
        src = self.defs.get(v.id)
        if isinstance(src, n.GetItem) and self.type_of(src.index) is slice and \
                self.type_of(src.obj) in (list, tuple):
            return False  # a slice of a list is a new list
        if isinstance(src, n.Call):
            return self.may_return_an_argument(src)
        return isinstance(src, (n.GetItem, n.GetAttr, n.Unpack)) or v.id in self.loop_items

    def joined(self, v: n.Value) -> bool:
        """Whether ``v`` is an active object that may be one of several (``ys = xs if c else
        [0.0]``, a list a loop rebinds), not all of them new objects made for it alone: each
        has an adjoint of its own, which a write into ``v`` does not reach."""
        if not self.active(v) or self.type_of(v) in IMMUTABLE:
            return False
        return self.join_sources(v) is not None and not self.fresh_join(v, set())

    def join_sources(self, v: n.Value) -> list[n.Value] | None:
        """The values ``v`` may be, where it is an ``If``'s result or a loop's carried
        value (its first value and the one each iteration gives), else ``None``."""
        src = self.defs.get(v.id)
        if isinstance(src, n.If):
            k = src.results.index(v)
            return [r.terminator.values[k] for r in (src.then, src.orelse)
                    if isinstance(r.terminator, n.Yield)]
        loop = src if isinstance(src, (n.For, n.While)) else self.carried_args.get(v.id)
        if loop is None:
            return None
        k = loop.results.index(v) if v in loop.results else loop.carried_args.index(v)
        out = [loop.inits[k]]
        if isinstance(loop.body.terminator, n.Yield):
            out.append(loop.body.terminator.values[k])
        return out

    def fresh_join(self, v: n.Value, seen: set[int]) -> bool:
        """Whether every object the join ``v`` may be is a new one (a display, a copy) made
        for it alone: its only use is to be yielded into ``v``."""
        if v.id in seen:
            return True
        seen.add(v.id)
        sources = self.join_sources(v)
        if sources is None:
            return False
        for s in sources:
            if s is v or s.id in seen:
                continue
            if self.join_sources(s) is not None:
                if not self.fresh_join(s, seen):
                    return False
                continue
            made = self.defs.get(s.id)
            if isinstance(made, n.Call) and made.args and \
                    (made.args[0] is v or made.args[0].id in seen) and \
                    getattr(self.consts.get(made.fn.id), "value", None) in INPLACE:
                continue  # (``out += x``: the object itself, changed)
            new = isinstance(made, (n.Build, n.BuildDict)) or \
                isinstance(made, n.GetItem) and self.type_of(made.index) is slice and \
                self.type_of(made.obj) in (list, tuple) or \
                isinstance(made, n.Call) and self.makes_new(made)
            # Held by nothing but the join: given only to primitives, which keep nothing.
            uses = [o for o in n.walk(self.fn.body) if s in o.operands()]
            if not new or not all(isinstance(o, (n.Yield, n.For, n.While)) or
                                  isinstance(o, n.Call) and o.fn is not s and
                                  self.makes_new(o) for o in uses):
                return False
        return True

    def makes_new(self, call: n.Call) -> bool:
        """Whether ``call`` is of a primitive with a rule or of ``list``/``dict``/``sorted``
        (``[0.0] * n``, ``a + b`` included): a new object, holding no argument of it that
        could be written into."""
        f = getattr(self.consts.get(call.fn.id), "value", None)
        if call.starred or not hashable(f):
            return False
        if f in (list, dict, sorted, operator.mul, operator.add):
            return True
        # (an in-place operator returns the object it changed)
        return registry.lookup(f) is not None and not isinstance(f, type) and f not in INPLACE

    def may_return_an_argument(self, call: n.Call) -> bool:
        """Whether ``call`` may return (a part of) an object it is given that has an
        adjoint of its own (``ys = pick(xs)`` returning ``xs``): a write into its result is
        then one into that object, whose adjoint the write's reverse never sees."""
        c = self.consts.get(call.fn.id)
        fn = c.value if c is not None else None
        given = [a for a in (*call.args, *(v for _, v in call.kwargs))
                 if self.active(a) and self.type_of(a) not in IMMUTABLE]
        if not given:
            return False
        if c is not None and (isinstance(fn, type) or
                              hashable(fn) and registry.lookup(fn) is not None):
            return False  # a constructor, or a primitive: a new object
        if isinstance(fn, types.FunctionType) and self.linker is not None and \
                not call.starred and not call.kwargs:
            returned = self.linker.returned_params(fn)
            return any(i in returned for i, a in enumerate(call.args) if a in given)
        method = self.defs.get(call.fn.id)
        if isinstance(method, n.GetAttr) and method.name in ("copy", "__copy__") and \
                not call.args:
            return False  # ``xs.copy()``: a new list
        return True

    def check_stored_then_changed(self) -> None:
        """Refuse a list or dict changed after it was stored in another container: the
        pullback reads the stored one as it was when stored, but it is the same object."""
        loops: dict[int, tuple[int, ...]] = {}  # value id -> loops enclosing its definition
        stores: list[tuple[int, int, tuple[int, ...]]] = []  # (value, order, loops)
        changes: list[tuple[int, int, tuple[int, ...], n.Op]] = []
        order = 0

        def region(r: n.Region, enclosing: tuple[int, ...]) -> None:
            nonlocal order
            for a in r.args:
                loops[a.id] = enclosing
            for op in r.ops:
                order += 1
                for v in op.results:
                    loops[v.id] = enclosing
                if isinstance(op, n.Build):
                    stores.extend((v.id, order, enclosing) for v in op.items)
                elif isinstance(op, n.SetItem):
                    if not is_writeback(op, self.defs):  # (the object the slot holds)
                        stores.append((op.value.id, order, enclosing))
                    changes.append((op.obj.id, order, enclosing, op))
                elif isinstance(op, n.SetAttr):
                    if not is_writeback(op, self.defs):
                        stores.append((op.value.id, order, enclosing))
                elif isinstance(op, n.Call) and self.constructs(op):
                    # A user class's constructor keeps its arguments (a dataclass's fields).
                    stores.extend((v.id, order, enclosing)
                                  for v in [*op.args, *(v for _, v in op.kwargs)])
                elif isinstance(op, n.Call) and len(op.args) == 1:
                    m = self.defs.get(op.fn.id)
                    if isinstance(m, n.GetAttr) and m.name == "append":
                        stores.append((op.args[0].id, order, enclosing))
                        changes.append((m.obj.id, order, enclosing, op))
                if isinstance(op, n.MakeFunction):
                    continue
                inner = (*enclosing, id(op)) if isinstance(op, (n.For, n.While)) else enclosing
                for sub in op.regions():
                    region(sub, inner)

        region(self.fn.body, ())
        if not stores or not changes:
            return
        for vid, at, where, op in changes:
            if self.type_of_id(vid) not in (list, dict, None):
                continue
            mine = loops.get(vid, ())
            for sid, s_at, s_where in stores:
                if sid != vid:
                    continue
                # A loop around both that the list outlives runs the change after the store.
                shared = [lp for lp in where if lp in s_where and lp not in mine]
                if s_at < at or shared:
                    raise NonDifferentiableError(
                        "a list or dict is changed after it was stored in another container "
                        "(or in a loop that also stores it); reverse mode would see the "
                        "stored one as it was when stored", op.loc,
                        hint="fill the list first and store it afterwards, or store a copy "
                             "(list(xs))")

    def constructs(self, op: n.Call) -> bool:
        """Whether ``op`` calls a class whose Python ``__init__`` or ``__new__`` may keep
        what it is given (a dataclass's fields, a named tuple's items); a class written in
        C (``deque(xs)``) copies."""
        c = self.consts.get(op.fn.id)
        if c is None or not isinstance(c.value, type) or is_c_type(c.value):
            return False
        return isinstance(c.value.__init__, types.FunctionType) or \
            isinstance(c.value.__new__, types.FunctionType)


def _borrowed_error(loc: SourceLoc | None) -> NonDifferentiableError:
    return ReverseModeRefusal(
        "this writes into an object read out of a list, dict or another object, which "
        "reverse mode does not support yet", loc,
        hint="forward mode (wengert.jvp, wengert.jacfwd) handles it; in reverse mode build "
             "new objects instead (`ps = [p.stepped(dt) for p in ps]`, "
             "`rows[0] = [rows[0][0], v]`)")
