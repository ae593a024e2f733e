"""Reverse mode: the VJP of an IR function, as a new IR function returning ``(value, pullback)``.

The VJP is the primal with derivative bookkeeping added (the *forward* part), and
a nested function, the pullback, that replays the active operations in reverse
and accumulates adjoints (docs/architecture.md, "Reverse mode"). The transform runs in
two phases:

1. **Forward.** Walk the (cloned) primal; inactive ops stay as they are. Each
   active op is handled by the ``on_<Op>`` method of its kind, which may
   replace it (a rule call becomes the rule's inlined primal code) and returns a
   *reverse action*: a callable that later emits the op's adjoint code.
2. **Reverse.** Run the actions backwards inside :class:`Scope` s that mirror the
   forward regions. A reverse action asks its scope for the primal values it
   reads (``scope.res``); the scope hands out a placeholder, and when a region
   closes, placeholders are bound: a value defined inside a forward ``If`` arm
   becomes an extra result of the ``If``; a value defined inside a loop body is
   pushed on the loop's record list each iteration and unpacked by the reverse
   loop; anything else is asked of the enclosing scope. At the top level the
   pullback simply captures the forward values. So residuals are exactly what
   some adjoint reads.

Adjoints are symbolic zeros (absent) until a contribution arrives. At run time
``None`` is also zero (containers of adjoints hold ``None`` for zero entries);
floats are never ``None`` on the fast path.
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import math
import operator
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.arrays import effects
from wengert.analysis.effects.vocabulary import is_inplace_operator, method_may_write
from wengert.analysis.types import ArrayOf
from wengert.diagnostics import NonDifferentiableError, ReverseModeRefusal, SourceLoc
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import Cloner, substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.rules import registry
from wengert.transforms import inline
from wengert.transforms.base import (
    DECLINED,
    FLOATS,
    IMMUTABLE,
    NO_TANGENT,
    Linker,
    Transform,
)
from wengert.transforms.cleanup import cleanup
from wengert.transforms.iteration import index_extremes, index_float_iterations
from wengert.transforms.prepare import Prepared
from wengert.transforms.vjp_containers import (
    ReverseContainers,
    own_field_containers,
)
from wengert.transforms.vjp_control import ReverseControlFlow
from wengert.transforms.vjp_item_reads import index_item_loops, read_unpacked_entries
from wengert.transforms.vjp_items import own_written_items
from wengert.transforms.vjp_records import LoopRecords
from wengert.transforms.vjp_scope import Action, Scope, _bar, _no_adjoint
from wengert.transforms.vjp_writes import ReverseWriteChecks


class VJP(Transform, ReverseControlFlow, ReverseContainers, LoopRecords, ReverseWriteChecks):
    """Builds the VJP function of one (already cloned) primal function."""

    def __init__(self, fn: n.Function, wrt: Sequence[int], arg_types: Sequence[type | None],
                 lifted: int = 0, linker: Linker | None = None,
                 prepared: Prepared | None = None) -> None:
        super().__init__(fn, wrt, arg_types, linker, prepared)
        self.renamed_active: set[int] = set()
        #: Scalar adjoints of the entries of parameters read under constant keys
        #: (``params["a"]``): parameter id -> key -> the entry's adjoint variable.
        self.slots: dict[int, dict[Any, n.Value]] = {}
        #: Those adjoint variables by id (they stand for no forward value).
        self.synthetic: dict[int, n.Value] = {}
        #: Ids of the zeros an entry's adjoint restarts from once added into its container.
        self.zeros: set[int] = set()
        self.fwd_parent: dict[int, n.Region] = {}
        self.lifted = lifted
        #: Loop records: (forward body, record tuple, reverse body, its unpacking).
        self.records: list[tuple[n.Region, n.Build, n.Region, n.Unpack]] = []
        #: Items read again out of a list by the reverse loops (not saved per iteration),
        #: and the copies of lists made for them (``rematerialize``).
        self.rereads: list[n.GetItem] = []
        self.top_numbers: set[int] = set()
        self.reread_copies: list[tuple[n.Const, n.Call]] = []
        #: Loop bodies and the ops that push their record (``loop.append``, the call).
        self.pushes: list[tuple[n.Region, n.GetAttr, n.Call]] = []
        #: Loops with a record list: (forward loop, the list's op, the region holding them,
        #: the reverse loop, the region holding it).
        self.stacks: list[tuple[n.Op, n.Build, n.Region, n.For, n.Region]] = []
        #: What each op writes and which values share storage (views of arrays). The
        #: reads of one holder's items (``transforms/vjp_items.py``) may be one object: a
        #: change through one (``h.append(x)`` for ``h = tr.hist``) is a change of each.
        self.effects = effects(fn, self.types)
        groups: dict[int, list[int]] = {}
        for r, holder in getattr(self, "item_reads", {}).items():
            groups.setdefault(holder, []).append(r)
        for reads in groups.values():
            self.effects.one_object(reads)
        self.check_stored_then_changed()
        self.check_nested_writes()

    def index_loops(self) -> bool:
        """Loops over active lists of floats read their items by index
        (:func:`~wengert.transforms.iteration.index_float_iterations`), as do ``max`` and
        ``min`` of one (:func:`~wengert.transforms.iteration.index_extremes`): each item's
        adjoint is added into the list's where it is read. A list or dict in a field of an
        object the function makes, written into, is read once per value the field is given
        (:func:`~wengert.transforms.vjp_containers.own_field_containers`): those reads are
        not :meth:`borrowed`."""
        written = self.linker.written_params if self.linker is not None else None
        #: Reads of a field's list that stand for every read of it (not borrowed).
        self.field_lists = own_field_containers(self.fn, self.types.of, written)
        items = index_item_loops(self.fn, self.types, written)
        if read_unpacked_entries(self.fn, self.types, self.act.is_active, written):
            items = True
        if items:
            self.analyse()
        #: Reads of a list's items whose writes go through the list's adjoint (not
        #: borrowed), and those lists.
        self.item_reads, self.item_lists = own_written_items(
            self.fn, self.types, self.arg_types, self.act.is_active, written)
        loops = index_float_iterations(self.fn, self.types, self.act.is_active)
        return index_extremes(self.fn, self.types, self.act.is_active) | loops | \
            bool(self.field_lists) | items | bool(self.item_reads)

    def type_of_id(self, vid: int) -> type | None:
        return self.types.by_id.get(vid)

    # -- small helpers -------------------------------------------------------------------

    def const_fn(self, fn: Any) -> Any:
        """A runtime helper to call from generated code (``Builder.call`` wraps it)."""
        return fn

    def active(self, v: n.Value) -> bool:
        if self.act.is_active(v) or self.is_wrt(v):
            return True
        r = self.resolve(v)
        return r.id in self.renamed_active or self.act.is_active(r) or self.is_wrt(r)

    def set_rename(self, old: n.Value, new: n.Value) -> None:
        """``old`` is now computed as ``new`` (an inlined rule's value, an unpacked pair)."""
        self.rename[old.id] = new
        t = self.types.of(old)
        if t is not None and new.id not in self.extra_types:
            self.extra_types[new.id] = t
        if self.act.is_active(old) or self.is_wrt(old):
            self.renamed_active.add(new.id)
        if old.hint is not None or new.hint is None:
            new.hint = old.hint

    # -- driver --------------------------------------------------------------------------

    def build(self) -> n.Function:
        """The VJP function: the forward code, then ``return value, pullback``."""
        fn = self.fn
        body = fn.body
        ret = body.ops[-1]
        assert isinstance(ret, n.Return)
        actions = self.forward_region(body)
        body.ops.pop()  # the Return; re-added after the pullback
        out = ret.value
        pb_param = n.Value(f"{_hint_of(out) or 'out'}_bar")
        inouts = n.Value("inouts")
        pb_body = n.Region([pb_param, inouts], [])
        top = Scope(self, None, pb_body, None)
        for i in self.wrt:
            p = body.args[i]
            if self.type_of(p) not in (*FLOATS, int, bool) and self.active(p):
                # A caller passes the adjoint a mutable argument has after the call.
                top.adj[p.id] = top.b.call(runtime.inout, inouts, top.b.const(i),
                                           hint=_bar(p))
                top.maybe_none.add(p.id)
        if self.active(out) and self.resolve(out).id in top.adj:
            # ``return self``: the result is the mutated argument, one object, one adjoint.
            top.accumulate(out, pb_param, maybe_none=True)
        elif self.active(out):
            top.adj[self.resolve(out).id] = pb_param
            if self.type_of(out) not in FLOATS:
                top.maybe_none.add(self.resolve(out).id)
        for act in reversed(actions):
            act(top)
        grads: list[n.Value] = []
        for a in body.args:
            if self.is_wrt(a) and self.type_of(a) in FLOATS:
                # Never ``None``: a caller linked to this VJP adds it with a plain ``+=``.
                grads.append(top.need(a))
                continue
            adj = top.get(a) if self.is_wrt(a) else None
            grads.append(adj if adj is not None else top.b.const(None))
        result = top.b.tuple(*grads)
        top.b.emit(n.Return(result))
        # ``inouts``: the adjoints a caller holds for mutable arguments, which the pullback
        # continues from; a pullback of numbers only takes none.
        takes_inouts = any(isinstance(op, n.Call) and op.args and op.args[0] is inouts
                           for op in n.walk(pb_body))
        if not takes_inouts:
            pb_body.args.remove(inouts)
        params = [pb_param.hint or "out_bar", *(["inouts"] if takes_inouts else [])]
        pb_fn = n.Function(f"{fn.name}_pullback", n.Signature(args=params),
                           pb_body, fn.filename, fn.loc, fn.source_lines)
        none = n.Const(None, [n.Value()])
        body.ops.append(none)
        mk = n.MakeFunction(pb_fn, [none.result] if takes_inouts else [], [],
                            [n.Value(pb_fn.name)])
        body.ops.append(mk)
        pair = n.Build("tuple", [out, mk.result], [n.Value()])
        body.ops.append(pair)
        body.ops.append(n.Return(pair.result, loc=ret.loc))
        vjp_fn = n.Function(f"{fn.name}_vjp", fn.signature, body, fn.filename, fn.loc,
                            fn.source_lines)
        replace_uses(vjp_fn, self.rename)
        cleanup(pb_fn, drop_pure_calls=True)
        self.merge_field_reads()
        self.rematerialize(vjp_fn)
        cleanup(pb_fn, drop_pure_calls=True)  # what recomputing made unused
        self.drop_unread_rereads(vjp_fn)
        self.prune_records(vjp_fn)
        self.snapshot_changed_fields()
        self.keep_shapes(vjp_fn, mk)
        if not getattr(self.linker, "differentiated_again", False):
            self.count_only_loops(vjp_fn, pb_fn)
            self.item_only_loops(vjp_fn)
            # A record pushed before a list it holds is filled aliases that list: fine
            # when run, but code differentiated again must not write into stored lists.
            self.hoist_pushes()
            self.iterate_directly(vjp_fn)
            vjp_fn.records = self.records  # (what fusing adjoint calls leaves unread)
            vjp_fn.list_slices = {
                op.result.id for op in n.walk(vjp_fn.body) if isinstance(op, n.GetItem)
                and self.type_of(op.obj) in (list, tuple) and self.type_of(op.index) is slice}
        cleanup(vjp_fn)
        return vjp_fn

    # -- forward phase -------------------------------------------------------------------

    def forward_region(self, region: n.Region) -> list[Action]:
        """Rewrite ``region`` in place; return the reverse actions of its active ops."""
        ops = region.ops
        region.ops = []
        actions: list[Action] = []
        b = Builder(region)
        for op in ops:
            if isinstance(op, n.Const) or not (self.act.is_active_op(op) or
                                               self.overwrites_active(op)):
                if isinstance(op, n.Call):
                    self.check_cut(op)
                region.ops.append(op)
                continue
            handler = getattr(self, f"on_{type(op).__name__}")
            act = handler(op, b)
            if act is not None:
                actions.append(act)
        return actions

    def overwrites_active(self, op: n.Op) -> bool:
        """A write into an active container clears an adjoint slot even if what it writes
        is inactive; an append shifts the slots."""
        if isinstance(op, (n.SetItem, n.SetAttr)):
            return self.active(op.obj)
        if isinstance(op, n.Call):
            # A method that may change an active object is differentiated even when what
            # goes in is inactive: ``acc.scale(2.0)`` transforms what is there, and
            # ``d.update(...)`` overwrites it (then refused by the dispatcher, not ignored).
            m = self.defs.get(self.resolve(op.fn).id)
            return isinstance(m, n.GetAttr) and self.active(m.obj) and \
                method_may_write(m.name) and not self.is_module_attr(m)
        return False

    def check_cut(self, op: n.Call) -> None:
        for cp in self.act.cut_points:
            if cp.op is op:
                self.warnings.append((self.callee_name(op), op.loc))

    # Straight-line ops ---------------------------------------------------------------------

    # Calls (classified by Transform.on_Call) ------------------------------------------

    rule_kind = "vjp"

    def call_nondifferentiable(self, op: n.Call, b: Builder) -> None:
        self.check_cut(op)
        b.emit(op)
        return None

    def call_new_object(self, op: n.Call, b: Builder) -> None:
        # The new object's adjoint starts empty: its reads and writes make it.
        b.emit(op)
        return None

    def call_rule(self, op: n.Call, rule: registry.Rule, b: Builder,
                  keywords: inline.Keywords = ()) -> Action:
        """A primitive with a rule: inline its body when its shape allows, else call it
        (given ``keywords``, literals for keyword-only parameters: :data:`DECLINED` where
        it cannot be inlined)."""
        args = list(op.args)
        loc = op.loc
        types_ = [self.rule_arg_type(a) for a in args]
        spec = inline.specialized_vjp(rule.vjp, len(args), types_, keywords=keywords)
        if spec is None and getattr(self.linker, "differentiated_again", False):
            spec = inline.specialized_vjp(rule.vjp, len(args), types_, unknown_ok=True,
                                          keywords=keywords)
        if spec is None and keywords:
            return DECLINED
        snap = []
        # The array an in-place operator changes is changed where the program has it (an
        # argument's change is the caller's to see, as without wengert): the rule copies
        # what its derivative reads of it.
        fn = self.const_value(op.fn)[1]
        target = args[0] if args and is_inplace_operator(fn) and \
            self.type_of(args[0]) is numpy.ndarray and \
            self.effects.reaches_caller(args[0]) else None
        if args and registry.is_view(fn):
            # (a view of the array itself, which writes through it change: no copy of it,
            # and its derivative reads no value of it)
            target = args[0]
        for k, a in enumerate(args):
            # A float ``s`` in ``s += t`` is rebound, not changed: nothing to copy; nor is a
            # container nothing changes after this read.
            if (k or target is None) and self.mutated_after(a, op) and \
                    self.type_of(a) not in IMMUTABLE:
                s = b.call(self.const_fn(runtime.snapshot), a, hint=a.hint)
                snap.append(s)
            else:
                snap.append(a)
        y = op.result
        # A new array the program writes into after the call (``y = x / d; y[1] *= 2.0``):
        # the rule's derivative may read its value as the call made it, so the program goes
        # on with a copy (``kept_result``) and the derivative keeps the original.
        written = self.type_of(y) in (numpy.ndarray, None) and self.mutated_after(y, op) and \
            target is None and not registry.is_view(fn) and not is_inplace_operator(fn)
        if spec is None:
            pair = b.emit(n.Call(b.const(rule.vjp), snap, [], [n.Value()], loc=loc)).result
            unpack = b.emit(n.Unpack(pair, [n.Value(y.hint), n.Value(f"{y.hint or 'y'}_pb")],
                                     loc=loc))
            self.set_rename(y, unpack.results[0])
            if written:
                self.kept_result(y, unpack.results[0], b)
            pb = unpack.results[1]

            def reverse_dynamic(scope: Scope) -> None:
                g = scope.get(y)
                if g is None or not any(self.active(a) for a in args):
                    return
                scope.b.loc = loc
                outs = scope.b.emit(n.Call(scope.res(pb), [scope.need(y)], [],
                                           [n.Value()], loc=loc)).result
                for k, a in enumerate(args):
                    if self.active(a):
                        c = scope.b.getitem(outs, scope.b.const(k))
                        scope.accumulate(a, c, maybe_none=True)
            return reverse_dynamic

        fwd_map = inline.emit_forward(spec, snap, b, loc)
        value = fwd_map.value
        self.set_rename(y, value)
        # (what the call site knows first: a rule's body may know less of its arguments)
        if (t := self.types.of(y) or spec.value_type) is not None:
            self.extra_types[value.id] = t
        if written:
            self.kept_result(y, value, b)

        def reverse_inlined(scope: Scope) -> None:
            if scope.get(y) is None or not any(self.active(a) for a in args):
                return
            scope.b.loc = loc
            g = scope.need(y)
            need = [self.active(a) for a in args]
            outs = inline.emit_pullback(spec, fwd_map, g, scope.res, scope.b, need, loc)
            for a, c, k, sure in zip(args, outs, need, spec.out_sure):
                if k and c is not None:
                    scope.accumulate(a, c, maybe_none=not sure)
        return reverse_inlined

    def kept_result(self, y: n.Value, value: n.Value, b: Builder) -> None:
        """The program goes on with a copy of ``value``, the result ``y`` a rule made: what
        it writes into it later leaves the value the rule's derivative reads as it was."""
        kept = b.call(self.const_fn(runtime.snapshot), value, hint=y.hint)
        if value.id in self.extra_types:
            self.extra_types[kept.id] = self.extra_types[value.id]
        self.set_rename(y, kept)

    def call_class(self, op: n.Call, cls: type, b: Builder) -> Action | None:
        """``cls(args)`` for a user class: a dataclass's generated ``__init__`` stores
        each argument in a field, so each argument's adjoint is its field's; a class with
        its own Python ``__init__`` is ``object.__new__(cls)`` then a call of ``__init__``,
        which writes into the new object (its adjoint goes in and out of the call)."""
        if type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__ or \
                op.starred or any(k is None for k, _ in op.kwargs):
            return DECLINED
        init = cls.__init__
        if dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__") and \
                getattr(getattr(init, "__code__", None), "co_filename", "") == "<string>":
            names = [f.name for f in dataclasses.fields(cls) if f.init]
            if len(op.args) > len(names):
                return DECLINED
            inputs = [*zip(names, op.args), *op.kwargs]
            b.emit(op)
            y, loc = op.result, op.loc

            def reverse(scope: Scope) -> None:
                g = scope.get(y)
                if g is None:
                    return
                scope.b.loc = loc
                for name, a in inputs:
                    if self.active(a):
                        c = scope.b.call(runtime.field_adjoint, g, scope.b.const(name),
                                         hint=_bar(a))
                        scope.accumulate(a, c, maybe_none=True)
            return reverse
        if not isinstance(init, types.FunctionType):
            return DECLINED
        obj = b.call(object.__new__, self.emit_const(b, cls), hint=op.result.hint)
        self.set_rename(op.result, obj)
        self.extra_types[obj.id] = cls
        call = n.Call(self.emit_const(b, init), [obj, *op.args], op.kwargs, [n.Value()],
                      loc=op.loc)
        self.extra_types[call.result.id] = type(None)
        return self.on_Call(call, b)

    def emit_const(self, b: Builder, value: Any) -> n.Value:
        """A constant the handlers recognise as one (a callee known when transforming)."""
        v = b.const(value)
        self.consts[v.id] = self.defs[v.id] = b.region.ops[-1]  # type: ignore[assignment]
        return v

    def call_direct(self, op: n.Call, fn: Any, b: Builder) -> Action | None:
        """A user function whose argument types are known: call its derived VJP directly
        (linked when this one is generated), with no dispatcher in between."""
        args = list(op.args)
        types_ = tuple(self.param_type(a) for a in args)
        fn = self.linker.resolve(fn) if self.linker is not None else None
        code = getattr(fn, "__code__", None)
        if fn is None or None in types_ or code.co_flags & 0x0C or \
                code.co_kwonlyargcount or code.co_argcount != len(args):
            return DECLINED
        # Activity does not know types: an int argument may be "active" but has no adjoint.
        wrt = tuple(i for i, a in enumerate(args)
                    if self.active(a) and types_[i] not in NO_TANGENT)
        if not wrt:
            b.emit(op)  # nothing that goes in has an adjoint
            return _no_adjoint
        try:
            target = self.linker.direct(fn, wrt, types_)
        except ReverseModeRefusal:
            # (what the callee writes is refused for the types known here, which may be
            # less than its arguments' own: dispatched, it is derived for those as it runs,
            # and refuses then if it still must)
            return DECLINED
        if target is None and getattr(self.linker, "differentiated_again", False):
            return self.call_split(op, fn, wrt, types_, b)
        if target is None:
            return DECLINED
        loc, y = op.loc, op.result
        name = f"{fn.__name__}_vjp"
        # The callee's forward and pullback functions (``transforms/split.py``): its forward
        # returns the residuals its pullback takes first.
        later = isinstance(target, runtime.Later)  # recursion: the function is not made yet

        def part(bb: Builder, role: str, origin: str) -> n.Value:
            if later:
                return bb.emit(n.GetAttr(bb.const(target, origin=f"{name}_later"), role,
                                         [n.Value()], loc=loc)).result
            return bb.const(getattr(target, role), origin=origin)

        pair = b.emit(n.Call(part(b, "forward", name), args, [], [n.Value()],
                             loc=loc)).result
        unpack = b.emit(n.Unpack(pair, [n.Value(y.hint), n.Value(f"{y.hint or 'y'}_res")],
                                 loc=loc))
        self.set_rename(y, unpack.results[0])
        res = unpack.results[1]

        sure = {i for i in wrt if types_[i] in FLOATS}

        def reverse(scope: Scope) -> None:
            self.reverse_call(scope, res, y, args, loc, sure=sure, pullback=lambda bb: part(
                bb, "pullback", f"{fn.__name__}_pullback"))
        return reverse

    def call_split(self, op: n.Call, fn: Any, wrt: tuple[int, ...], types_: tuple[Any, ...],
                   b: Builder) -> Action | None:
        """In code that is differentiated again (a gradient's IR), a user function of
        numbers and float arrays returning a float that is not inlined (recursion): the
        forward calls the function itself and the pullback its gradient, ``y_bar *
        grad(fn)(*args)``. Both are calls of functions with IR, linked when differentiated
        again, where a VJP's pullback closure would be a value no transform can follow.
        (Each level of a recursion then computes its callee's gradient anew: quadratic in
        the depth, for derivatives of second order and up only.)"""
        args, loc, y = list(op.args), op.loc, op.result
        arrays = [i for i, t in enumerate(types_) if t not in (float, int, bool)]
        # (what is differentiated: numbers and float arrays; data passed along as it is,
        # ``zs`` a list of observations, is read again by the gradient, unchanged)
        if any(t is not numpy.ndarray and not (isinstance(t, ArrayOf) and
                                               t.dtype is numpy.float64)
               for t in (types_[i] for i in arrays if i in wrt)) or \
                (result := self.linker.result_type(fn, list(types_))) not in \
                (float, numpy.float64) and not (result is None and _recursive(fn)):
            # (a float alone: the gradient seeds its output with 1.0; a recursion's type
            # is not known before it is made, and the seed refuses what is not one float)
            return DECLINED
        # The pullback reads an array again, as it was at the call: neither the callee
        # nor this function may change it in between.
        written = self.linker.written_params(fn)
        if any(i in written or self.mutated_after(args[i], op) for i in arrays):
            return DECLINED
        b.emit(op)
        grad_fn = self.linker.make_grad(fn, wrt)

        def reverse(scope: Scope) -> None:
            g = scope.get(y)
            if g is None:
                return
            scope.b.loc = loc
            g_val = scope.need(y)
            grads = scope.b.call(grad_fn, *[scope.res(a) for a in args],
                                 origin=f"{fn.__name__}_grad")
            for k, i in enumerate(wrt):
                gi = scope.b.getitem(grads, scope.b.const(k))
                scope.accumulate(args[i], scope.b.call(operator.mul, g_val, gi,
                                                       hint=_bar(args[i])))
        return reverse

    def call_dynamic(self, op: n.Call, method: n.GetAttr | None, b: Builder) -> Action:
        """A callee known at run time (or a user function): the runtime dispatcher."""
        loc = op.loc
        y = op.result
        args = list(op.args)
        starred = set(op.starred)
        for i in sorted(starred):
            # Splatted iterables become tuples first, so their lengths are known later.
            t = b.call(runtime.as_tuple, args[i], hint=args[i].hint)
            self.renamed_active.add(t.id) if self.active(args[i]) else None
            args[i] = t
        if any(k is None and self.active(v) for k, v in op.kwargs):
            raise NonDifferentiableError(
                "a **mapping holding active values in a call is not supported yet", loc,
                hint="pass the values as named keyword arguments")
        operands = [*args, *(v for _, v in op.kwargs)]
        is_method = isinstance(method, n.GetAttr) and not self.is_module_attr(method)
        first = method.obj if is_method else op.fn
        # Objects read out of containers: the callee must not write into them (checked
        # when the callee is known, at run time).
        borrowed = tuple(k for k, v in enumerate([first, *op.args, *(v for _, v in op.kwargs)])
                         if self.borrowed(v) and (k > 0 or is_method))
        # A method is a function of the receiver and the arguments (``p.energy(x)`` for
        # ``p`` read out of a list: ``f(p, x)`` for the function ``f`` of ``p``'s class).
        # The receiver is an argument like the others: one that the method writes into is
        # refused when the pullback runs it again (``recomputable``), one holding values
        # being differentiated is followed if a dataclass (``dispatch_pullback_tangent``).
        receiver = [method.obj] if is_method else []
        keywords = [v for _, v in op.kwargs]
        if getattr(self.linker, "differentiated_again", False) and not starred and \
                all(k is not None for k, _ in op.kwargs) and \
                not any(k > 0 for k in borrowed) and (is_method or not borrowed) and \
                1 <= len(receiver) + len(args) + len(keywords) <= 4 and \
                not any(self.mutated_after(v, op) and self.type_of(v) not in IMMUTABLE and
                        self.type_of(v) not in (list, dict, numpy.ndarray)
                        for v in [op.fn, *receiver, *args, *keywords]):
            return self.call_recomputed(op, b, method if is_method else None)
        site = [b.const(loc, origin="site")]
        if borrowed:
            site.append(b.const(borrowed))
        if is_method:
            # ``obj.m(args)``: the object is an input too (its fields may be active). The
            # dispatcher looks the method up itself.
            if method.result.id in self.called and method in b.region.ops:
                b.region.ops.remove(method)
            f = runtime.vjp_method_checked if borrowed else runtime.vjp_method
            call = n.Call(b.const(f), [*site, method.obj, b.const(method.name), *args],
                          op.kwargs, [n.Value()],
                          tuple(i + 2 + len(site) for i in op.starred), loc=loc)
            inputs = [method.obj, *operands]
            callee_slot = False
        else:
            # A callee that is itself an active value (a callable object read out of a
            # list): its adjoint comes back in the first slot, like a method's receiver.
            callee_active = self.active(op.fn) and self.type_of(op.fn) not in \
                (types.FunctionType, type)
            if callee_active:
                f = runtime.vjp_call_active
                site.insert(1, b.const(borrowed))
                del site[2:]
            else:
                f = runtime.vjp_call_checked if borrowed else runtime.vjp_call
            call = n.Call(b.const(f), [*site, op.fn, *args], op.kwargs, [n.Value()],
                          tuple(i + 1 + len(site) for i in op.starred), loc=loc)
            inputs = [op.fn, *operands]
            callee_slot = not callee_active
        b.emit(call)
        unpack = b.emit(n.Unpack(call.result, [n.Value(y.hint), n.Value(f"{y.hint or 'y'}_pb")],
                                 loc=loc))
        self.set_rename(y, unpack.results[0])
        pb = unpack.results[1]
        layout = [None] + [args[i] if i in starred else None for i in range(len(args))] + \
            [None] * len(op.kwargs)
        originals = [inputs[0], *op.args, *(v for _, v in op.kwargs)]

        def reverse(scope: Scope) -> None:
            self.reverse_call(scope, pb, y, inputs, loc, layout, originals,
                              skip=frozenset({0}) if callee_slot else frozenset())
        return reverse

    def call_recomputed(self, op: n.Call, b: Builder, method: n.GetAttr | None = None
                        ) -> Action:
        """In code that is differentiated again (a gradient's IR), a call of a function
        known only at run time: the forward calls it (``dispatch_value``) and the pullback
        asks for its adjoints from the arguments and the cotangent (``dispatch_pullback``,
        which runs its VJP again), two functions of values whose rules dispatch their own
        derivatives at run time, where a pullback closure kept from the forward would be a
        value no transform can follow."""
        loc, y, args = op.loc, op.result, list(op.args)
        fn = op.fn
        if method is not None:
            # ``obj.name(args)``: ``f(obj, args)`` for the function ``f`` of ``obj``'s class.
            fn = b.call(self.const_fn(runtime.method_function), b.const(loc, origin="site"),
                        method.obj, b.const(method.name), hint=method.name)
            args = [method.obj, *args]
        # ``f(x, k=v)``: ``f`` given ``(x, v)``, the site saying that ``v`` is ``k``.
        args += [v for _, v in op.kwargs]
        # What the program changes after the call is read again as it was at the call (a
        # copy: lists, dicts and arrays only reach here).
        kept = [b.call(self.const_fn(runtime.snapshot), a, hint=a.hint)
                if self.mutated_after(a, op) and self.type_of(a) not in IMMUTABLE else a
                for a in args]
        where = loc if not op.kwargs or loc is None else runtime.KeywordSite(
            **vars(loc), names=tuple(k for k, _ in op.kwargs))
        site = b.const(where, origin="site")
        call = b.emit(n.Call(b.const(runtime.dispatch_value), [site, fn, *args], [],
                             [n.Value(y.hint)], loc=loc))
        self.set_rename(y, call.result)

        def reverse(scope: Scope) -> None:
            if scope.get(y) is None:
                return
            scope.b.loc = loc
            g = scope.need(y)
            values = scope.b.tuple(*[scope.res(a) for a in kept])
            adjs = scope.b.call(runtime.dispatch_pullback, scope.b.const(where, origin="site"),
                                scope.res(fn), values, g)
            # (The callee's own adjoint first: a callable object holding active values.)
            for k, a in enumerate([fn, *args]):
                if self.active(a) and (k > 0 or self.type_of(a) not in (types.FunctionType,
                                                                       type)):
                    scope.accumulate(a, scope.b.getitem(adjs, scope.b.const(k),
                                                        hint=_bar(a)), maybe_none=True)
        return reverse

    def reverse_call(self, scope: Scope, pb: n.Value, y: n.Value, inputs: list[n.Value],
                     loc: SourceLoc | None, layout: list[n.Value | None] | None = None,
                     originals: list[n.Value] | None = None,
                     sure: set[int] | frozenset[int] = frozenset(),
                     skip: frozenset[int] = frozenset(),
                     pullback: Callable[[Builder], n.Value] | None = None) -> None:
        """Call a runtime pullback: adjoints of floats add up; those of containers and
        objects go in as ``inouts`` (the callee may have mutated them) and come back whole.
        With ``pullback`` (which makes the callee's pullback function in a builder), ``pb``
        is the residuals the callee's forward returned, which that function takes first."""
        layout = layout or [None] * len(inputs)
        originals = originals or inputs
        g = scope.get(y)
        # A value that may be a mutable object goes in and out whole (the callee may write
        # into it). A callee derived for known types seeds the parameter's adjoint from it
        # when the parameter is a mutable object or of unknown type, as here; the run-time
        # dispatcher gives back what came in for every argument it was given.
        inout_idx = [k for k, a in enumerate(inputs) if self.active(a) and layout[k] is None
                     and self.type_of(a) not in IMMUTABLE and k not in skip]
        if g is None and not any(scope.get(inputs[k]) is not None for k in inout_idx):
            return
        if not any(self.active(a) for a in inputs):
            return
        scope.b.loc = loc
        g_val = scope.need(y)
        call_args = [g_val]
        # One object given at several places (``matmul(a, a)``) goes in once, at the first:
        # the callee's adjoints of the others are what it adds to it, added after.
        first: dict[int, int] = {}
        for k in inout_idx:
            first.setdefault(self.resolve(originals[k]).id, k)
        if inout_idx:
            ins = [scope.b.const(None)] * len(inputs)
            for k in inout_idx:
                cur = scope.get(inputs[k])
                if cur is not None and first[self.resolve(originals[k]).id] == k:
                    ins[k] = cur
            given = scope.b.tuple(*ins)
            if any(x is not None for x in layout):  # (``*t``: a slot per item of ``t``)
                given = scope.b.call(runtime.spread, given, scope.b.tuple(*[
                    scope.res(x) if x is not None else scope.b.const(None) for x in layout]))
            call_args.append(given)
        if pullback is not None:
            outs = scope.b.emit(n.Call(pullback(scope.b), [scope.res(pb), *call_args], [],
                                       [n.Value()], loc=loc)).result
        else:
            outs = scope.b.call(scope.res(pb), *call_args)
        if any(x is not None for x in layout):
            shape = scope.b.tuple(*[scope.res(x) if x is not None else scope.b.const(None)
                                    for x in layout])
            outs = scope.b.call(runtime.regroup, outs, shape)
        for k, a in enumerate(originals):
            if not self.active(a) or self.type_of(a) in NO_TANGENT or k in skip:
                continue
            c = scope.b.getitem(outs, scope.b.const(k), hint=_bar(a))
            if layout[k] is not None:
                c = scope.b.call(runtime.like_structure, c, scope.res(a), hint=_bar(a))
            if k in inout_idx and first[self.resolve(a).id] == k:
                scope.adj[self.resolve(a).id] = c
                scope.maybe_none.add(self.resolve(a).id)
            elif k in inout_idx:
                scope.accumulate(a, c, maybe_none=True)
            else:
                scope.accumulate(a, c, maybe_none=k not in sure)

    def call_nested(self, op: n.Call, mk: n.MakeFunction, b: Builder) -> Action:
        """A call of a function defined in this one: VJP of its lambda-lifted body."""
        free = [v for v in free_uses(mk.func.body) if v.id != mk.result.id]
        active_free = [v for v in free if self.active(v)]
        if not active_free and not any(self.active(d) for d in mk.operands()):
            return self.call_dynamic(op, None, b)
        if op.kwargs or op.starred or mk.func.signature.vararg or mk.func.signature.kwarg \
                or mk.func.signature.kwonly:
            raise NonDifferentiableError(
                "a nested function that reads an active value must be called with plain "
                "positional arguments", op.loc)
        if mk.result in free_uses(mk.func.body):
            raise NonDifferentiableError(
                "a recursive nested function that reads an active value of its enclosing "
                "function is not supported", op.loc,
                hint="pass the value as an argument instead")
        if any(isinstance(x, n.MakeFunction) for x in n.walk(mk.func.body)):
            raise NonDifferentiableError(
                "a nested function that reads an active value and defines functions of its "
                "own is not supported yet", op.loc,
                hint="move the inner function out, passing what it reads as arguments")
        vjp_fn = self.nested_vjp(mk, active_free)
        loc = op.loc
        y = op.result
        nargs = len(mk.func.body.args)
        args = list(op.args)
        missing = nargs - len(args)
        if 0 < missing <= len(mk.defaults):
            # Defaults are values of this function (``def inner(y, k=x)``): pass them.
            args += mk.defaults[len(mk.defaults) - missing:]
        if len(args) < nargs:
            raise NonDifferentiableError(
                "a nested function that reads an active value must be called with all its "
                "arguments", loc)
        call = b.emit(n.Call(vjp_fn, [*args, *active_free], [], [n.Value()], loc=loc))
        unpack = b.emit(n.Unpack(call.result, [n.Value(y.hint), n.Value(f"{y.hint or 'y'}_pb")],
                                 loc=loc))
        self.set_rename(y, unpack.results[0])
        pb = unpack.results[1]
        inputs = [*args, *active_free]

        def reverse(scope: Scope) -> None:
            self.reverse_call(scope, pb, y, inputs, loc)
        return reverse

    def nested_vjp(self, mk: n.MakeFunction, active_free: list[n.Value]) -> n.Value:
        cache = getattr(self, "_nested", None)
        if cache is None:
            cache = self._nested = {}
        key = id(mk)
        if key in cache:
            return cache[key]
        cl = Cloner()
        lifted = cl.function(mk.func)
        extra = [cl.fresh(v) for v in active_free]
        # Reads of the captured values now read the new parameters.
        substitute(lifted.body, {v.id: e for v, e in zip(active_free, extra)})
        lifted.body.args = [*lifted.body.args, *extra]
        lifted.signature = n.Signature(args=[*mk.func.signature.names(),
                                             *[f"{v.hint or 'c'}" for v in active_free]])
        arg_types = [None] * len(mk.func.body.args) + [self.type_of(v) for v in active_free]
        inner = VJP(lifted, range(len(lifted.body.args)), arg_types, linker=self.linker)
        vjp_fn = inner.build()
        self.warnings.extend(inner.warnings)
        new = n.MakeFunction(vjp_fn, [], [], [n.Value(vjp_fn.name)], loc=mk.loc)
        # Defined right after the original def, in the same region.
        region = self.region_of(mk)
        region.ops.insert(region.ops.index(mk) + 1, new)
        cache[key] = new.result
        return new.result

    def on_MakeFunction(self, op: n.MakeFunction, b: Builder) -> Action | None:
        # The function value itself carries no adjoint; calls of it are handled where made.
        b.emit(op)
        return None

    def on_FormatValue(self, op: n.Op, b: Builder) -> None:
        b.emit(op)
        return None

    fwd_JoinStr = on_FormatValue
    fwd_BuildSlice = on_FormatValue
    fwd_Raise = on_FormatValue

    def on_Yield(self, op: n.Yield, b: Builder) -> None:
        b.emit(op)
        return None

    def on_Return(self, op: n.Return, b: Builder) -> None:
        b.emit(op)
        return None

def _hint_of(v: n.Value) -> str | None:
    return v.hint if v.hint and not v.hint.startswith(".") else None


def _recursive(fn: Any) -> bool:
    """Whether the function ``fn`` calls itself by its global name."""
    code = getattr(fn, "__code__", None)
    return code is not None and fn.__name__ in code.co_names and \
        getattr(fn, "__globals__", {}).get(fn.__name__) is fn


def vjp_transform(fn: n.Function, wrt: Sequence[int], arg_types: Sequence[type | None],
                  linker: Linker | None = None, prepared: Prepared | None = None
                  ) -> tuple[n.Function, list]:
    """The VJP of the primal IR ``fn`` (not modified) for parameters ``wrt``; or, given
    ``prepared``, of the copy of it the driver prepared (which it builds from).

    Returns the VJP function and the warnings found (callee name, location).
    """
    from wengert.ir.clone import clone_function
    cloned = prepared.fn if prepared is not None else clone_function(fn)[0]
    v = VJP(cloned, wrt, arg_types, linker=linker, prepared=prepared)
    out = v.build()
    return out, v.warnings


__all__ = ["vjp_transform", "VJP", "Scope"]
del builtins, inspect, math

