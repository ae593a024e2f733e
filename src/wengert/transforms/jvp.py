"""Forward mode: the JVP of an IR function, as a new IR function returning ``(value, tangent)``.

A line-by-line transformation (docs/architecture.md, "Forward mode"): the (cloned)
primal is walked once and every active op gets its tangent computed right beside it, by
the ``on_<Op>`` handler of its kind; inactive ops stay as they are and control flow is
unchanged
(``If``/``With`` results, loop-carried values and loop items carry their tangents
as extra results, carried values and pairs). The generated function is
``f_jvp(<primal params...>, <one tangent param per wrt param>)``.

Tangents are symbolic zeros (absent from :attr:`JVP.tan`) until something makes
them nonzero. At run time ``None`` is a zero too: containers of tangents hold
``None`` for zero entries, and a tangent read out of one may be ``None``. The
transform tracks which tangents are *sure* (never ``None``: numbers and arrays on
the fast path) and feeds rules only sure tangents or static zeros, so inlined
differentials specialise to straight-line arithmetic.

Mutation is mirrored on the tangent structures, in place: the tangent of a list is
a list, of a dict a dict, of an object a :class:`runtime.Attrs`, and a write into
the object writes into its tangent. Every active object that is written to (or
that a callee may write to) gets a *real* tangent (a container, not ``None``) where
it is defined, so aliases of the object share its tangent, as they share the object.

Tangents may carry a leading batch axis (``batched=True``): the rules are written
for that, and the runtime helpers count array axes from the right.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
from collections.abc import Sequence
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.effects.vocabulary import (
    is_inplace_operator,
    method_may_write,
)
from wengert.diagnostics import NonDifferentiableError, SourceLoc
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import Cloner, clone_function, substitute
from wengert.ir.uses import free_uses, replace_uses
from wengert.objects import hashable
from wengert.rules import np_arrays, registry
from wengert.transforms import inline
from wengert.transforms.base import (
    DECLINED,
    FLOATS,
    IMMUTABLE,
    INPLACE,
    LIST_METHODS,
    NO_TANGENT,
    Linker,
    Transform,
    dot_hint,
)
from wengert.transforms.cleanup import cleanup
from wengert.transforms.jvp_containers import ForwardContainers
from wengert.transforms.jvp_control import NUMERIC, ForwardControlFlow
from wengert.transforms.prepare import Prepared
from wengert.vocabulary import tangent_name

#: Adjoint updates ``(prev, x, index, g[, size])`` that forward mode maps onto tangents.
_ADJOINT_UPDATES = (runtime.getitem_adjoint, runtime.getitem_adjoint_owned)

#: Runtime helpers whose calls only compute a tangent (dropped when unused).
_PURE_HELPERS = frozenset({
    runtime.nonzero_tangent, runtime.seq_tangent, runtime.getitem_tangent,
    runtime.float_list_tangent,
    runtime.getattr_tangent, runtime.unpack_tangent, runtime.iter_tangent,
})


#: Calls whose result holds the items of their (list) arguments.
_SHARING = frozenset({operator.mul, operator.add, operator.iadd, operator.imul,
                      operator.concat, list, tuple, sorted, reversed})


class JVP(Transform, ForwardContainers, ForwardControlFlow):
    """Builds the JVP function of one (already cloned) primal function."""

    inplace_followed = Transform.inplace_followed | {list}

    def __init__(self, fn: n.Function, wrt: Sequence[int], arg_types: Sequence[type | None],
                 linker: Linker | None = None, batched: bool = False,
                 prepared: Prepared | None = None) -> None:
        self.batched = batched
        super().__init__(fn, wrt, arg_types, linker, prepared)
        #: Primal value id -> its tangent (absent: a symbolic zero).
        self.tan: dict[int, n.Value] = {}
        #: Ids of tangent values that are never ``None`` at run time.
        self.sure: set[int] = set()
        #: (tangent id, region id) -> (the region, kept alive so that its id stays its
        #: own, and the tangent made sure there, which later reads in it reuse).
        self.made_sure: dict[tuple[int, int], tuple[n.Region, n.Value]] = {}
        #: Ops added by the transform that only compute values (removed when unused).
        self.mine: set[int] = set()
        #: Ops added by the transform that write into tangents (never removed).
        self.keep: set[int] = set()
        self.nested: dict[Any, n.Value] = {}
        for cp in self.act.cut_points:
            self.warnings.append((self.callee_name(cp.op), cp.op.loc))
        self.needs_real = self.real_values()

    # -- checks --------------------------------------------------------------------------

    def real_values(self) -> set[int]:
        """Ids of active values whose tangent must be a real container: something writes
        into them (or may: a callee, a method), or into an object read out of them."""
        out: set[int] = set()
        work: list[n.Value] = []

        def mark(v: n.Value, holder: bool = False) -> None:
            # (a tuple is never written into, but one holding what is gets a real tangent
            # where it is made, a tuple of real tangents: ``xt[1][0] = c``)
            if v.id not in out and self.active(v) and (
                    self.type_of(v) not in IMMUTABLE or holder and self.type_of(v) is tuple):
                out.add(v.id)
                work.append(v)

        for op in n.walk(self.fn.body):
            if isinstance(op, (n.SetItem, n.SetAttr)):
                mark(op.obj)
            elif isinstance(op, n.Call):
                m = self.defs.get(op.fn.id)
                is_c, fn = self.const_value(op.fn)
                if isinstance(m, n.GetAttr) and not self.is_module_attr(m):
                    mark(m.obj)
                    if m.name not in LIST_METHODS:
                        for a in op.args:
                            mark(a)
                elif is_c and hashable(fn) and fn in INPLACE and op.args:
                    mark(op.args[0])
                elif not is_c or registry.lookup(fn) is None:
                    for a in [*op.args, *(v for _, v in op.kwargs)]:
                        mark(a)
        while work:
            v = work.pop()
            d = self.defs.get(v.id)
            if isinstance(d, (n.GetItem, n.GetAttr, n.Unpack)):
                mark(d.obj if not isinstance(d, n.Unpack) else d.value, holder=True)
            elif isinstance(d, n.Build):
                # Its items are what is written into: one tangent each, shared by every
                # place that holds the item (a row appended twice, ``[row] * n``).
                for x in d.items:
                    mark(x)
            elif isinstance(d, n.Call) and d.args and \
                    hashable(f := self.const_value(d.fn)[1]) and f in _SHARING:
                for x in d.args:
                    mark(x)  # (``[row] * n``, ``a + b``, ``list(a)``: the same items)
            elif isinstance(d, n.If):
                k = d.results.index(v)
                mark(d.then.terminator.values[k])
                mark(d.orelse.terminator.values[k])
            elif isinstance(d, (n.For, n.While, n.With)):
                k = d.results.index(v)
                mark(d.inits[k])
                mark(d.body.terminator.values[k])
            elif isinstance(d, n.Call):
                is_c, fn = self.const_value(d.fn)
                if is_c and hashable(fn) and fn in INPLACE and d.args:
                    mark(d.args[0])
            for op in n.walk(self.fn.body):
                if isinstance(op, n.For) and op.body.args[0] is v:
                    mark(op.iterable)
                if isinstance(op, n.SetItem) and op.obj is v:
                    mark(op.value)
                if isinstance(op, n.Call) and isinstance(m := self.defs.get(op.fn.id),
                                                         n.GetAttr) and m.obj is v and \
                        m.name in ("append", "insert", "extend", "setdefault"):
                    for x in op.args:
                        mark(x)
                if isinstance(op, (n.For, n.While)) and v in op.carried_args:
                    k = op.carried_args.index(v)
                    mark(op.inits[k])
                    mark(op.body.terminator.values[k])
        return out

    # -- small helpers -------------------------------------------------------------------

    def resolve(self, v: n.Value) -> n.Value:
        while v.id in self.rename:
            v = self.rename[v.id]
        return v

    def tangent_type(self, v: n.Value) -> type | None:
        """The exact type of ``v``'s tangent when it is sure (for specialising rules)."""
        t = self.type_of(v)
        if t in FLOATS:
            return numpy.ndarray if self.batched else t
        if t is numpy.ndarray:
            return t
        return None

    def set_tan(self, v: n.Value, t: n.Value | None, sure: bool = False) -> None:
        if t is None:
            self.tan.pop(v.id, None)
            return
        self.tan[v.id] = t
        if t.hint is None:
            t.hint = dot_hint(v)
        if sure:
            self.sure.add(t.id)

    def get(self, v: n.Value) -> n.Value | None:
        """The tangent of ``v``, or ``None`` for a symbolic zero."""
        return self.tan.get(v.id)

    def is_sure(self, t: n.Value | None) -> bool:
        return t is not None and t.id in self.sure

    def zero(self, v: n.Value, b: Builder, sure: bool = False) -> n.Value:
        """A materialised zero tangent for ``v``: ``0.0`` for a float, else ``None``
        (a zero array when ``sure`` is asked for an array)."""
        t = self.type_of(v)
        if t in FLOATS:
            z = b.const(0.0)
            self.sure.add(z.id)
            return z
        if sure and t is numpy.ndarray:
            z = b.call(runtime.nonzero_tangent, b.const(None), v, hint=dot_hint(v))
            self.sure.add(z.id)
            return z
        return b.const(None)

    def arg_dot(self, v: n.Value, b: Builder, sure: bool = False) -> n.Value:
        """The tangent of ``v`` as a value (zero materialised); numbers made sure if asked."""
        t = self.get(v)
        if t is None:
            return self.zero(v, b, sure)
        if sure and not self.is_sure(t) and self.type_of(v) in NUMERIC:
            key = (t.id, id(b.region))
            if key in self.made_sure:
                return self.made_sure[key][1]
            s = b.call(runtime.nonzero_tangent, t, v, hint=t.hint)
            self.sure.add(s.id)
            self.made_sure[key] = (b.region, s)
            return s
        return t

    def set_rename(self, old: n.Value, new: n.Value) -> None:
        self.rename[old.id] = new
        t = self.types.of(old)
        if t is not None:
            self.extra_types[new.id] = t
        if old.hint is not None or new.hint is None:
            new.hint = old.hint

    #: In batched mode, a tangent passed in and its value, from which an array made here
    #: learns the batch axes its zero tangent needs (``runtime.real_tangent``).
    batch_like: tuple[n.Value, ...] = ()

    def make_real(self, v: n.Value, b: Builder, op: n.Op | None = None) -> None:
        """Give ``v`` a real tangent container where it is defined (writes will fill it).
        Where ``op`` makes ``v`` a new object (``b = y + 0.0``) its tangent is one of its own
        too: a rule may pass an argument's tangent through unchanged (``y_dot``), which the
        writes into ``v``'s tangent would change as well."""
        if v.id not in self.needs_real:
            return
        t = self.get(v)
        if t is not None and self.makes_new_object(op):
            inputs = [d for a in op.args if (d := self.get(a)) is not None]  # type: ignore
            if inputs:
                t = b.call(runtime.own_tangent, t, *inputs, hint=dot_hint(v))
                self.set_tan(v, t)
        if t is not None and t.id in self.real:
            return
        r = b.call(runtime.real_tangent, t if t is not None else b.const(None), v,
                   *self.batch_like, hint=dot_hint(v))
        self.real.add(r.id)
        self.set_tan(v, r)

    # -- driver --------------------------------------------------------------------------

    def build(self) -> n.Function:
        """The JVP function: the primal with tangents, returning ``(value, tangent)``."""
        fn = self.fn
        body = fn.body
        self.real: set[int] = set()
        #: Tangents of read-only lists of floats with every item a float.
        self.float_lists: set[int] = set()
        ret = body.ops[-1]
        assert isinstance(ret, n.Return)
        dots: list[n.Value] = []
        entry: list[n.Op] = []
        eb = Builder(n.Region([], entry))
        self.batch_like = ()
        for i in self.wrt:
            p = body.args[i]
            d = n.Value(dot_hint(p) or f"arg{i}_dot", p.loc)
            dots.append(d)
            if self.batched and not self.batch_like and self.type_of(p) in NUMERIC:
                self.batch_like = (d, p)
            # Callers pass numbers and arrays as zeros, never ``None`` (see ``api``).
            self.set_tan(p, d, sure=self.type_of(p) in NUMERIC)
            if not self.batched and self.types.items.get(p.id) is float:
                # A list of floats only read: its items' tangents are floats, read plainly.
                r = eb.call(runtime.float_list_tangent, d, p, hint=d.hint)
                self.real.add(r.id)
                self.float_lists.add(r.id)
                self.set_tan(p, r)
            if p.id in self.needs_real and self.type_of(p) in (numpy.ndarray, None):
                # (the caller's tangent is not written into: the function's writes into its
                # argument fill a copy of it)
                self.set_tan(p, eb.call(runtime.own_tangent, d, d, hint=d.hint))
            self.make_real(p, eb)
        for k, p in enumerate(body.args):
            if k not in self.wrt:
                # Not differentiated, but written into with values that are (``d["w"][0] =
                # c * x``, ``lg.xs.append(c)``): a zero tangent to hold what is written, or
                # a later read of the same place would find none.
                self.make_real(p, eb)
        self.region(body)
        body.ops[:0] = entry
        body.ops.pop()
        b = Builder(body)
        b.loc = ret.loc
        out = ret.value
        t = self.get(out)
        if t is None:
            t = self.zero(out, b, sure=True)
        elif self.type_of(out) in NUMERIC and not self.is_sure(t):
            t = self.arg_dot(out, b, sure=True)
        pair = b.tuple(out, t)
        b.emit(n.Return(pair, loc=ret.loc))
        names = fn.signature.names()
        sig = n.Signature(args=[*names, *self.dot_names(names)])
        out_fn = n.Function(f"{fn.name}_jvp", sig, n.Region([*body.args, *dots], body.ops),
                            fn.filename, fn.loc, fn.source_lines)
        replace_uses(out_fn, self.rename)
        self.sweep(out_fn.body)
        cleanup(out_fn)
        return out_fn

    def dot_names(self, names: list[str]) -> list[str]:
        taken = set(names)
        out = []
        for i in self.wrt:
            name = tangent_name(names[i])
            while name in taken:
                name += "_"
            taken.add(name)
            out.append(name)
        return out

    def sweep(self, region: n.Region) -> None:
        """Drop ops the transform added whose results nobody reads (dead tangents)."""
        while True:
            used: set[int] = set()
            consts: dict[int, n.Const] = {}
            holder: dict[int, n.Region] = {}
            stack = [region]
            while stack:
                r = stack.pop()
                for op in r.ops:
                    holder[id(op)] = r
                    used.update(v.id for v in op.operands())
                    if isinstance(op, n.Const):
                        consts[op.result.id] = op
                    if isinstance(op, n.MakeFunction):
                        used.update(v.id for v in free_uses(op.func.body))
                    stack.extend(op.regions())
            gone = [op for op in n.walk(region)
                    if id(op) in self.mine and op.results and self.removable(op, consts) and
                    not any(r.id in used for r in op.results)]
            if not gone:
                return
            for op in gone:
                holder[id(op)].ops.remove(op)

    def removable(self, op: n.Op, consts: dict[int, n.Const]) -> bool:
        """Whether ``op``, once unused, can go: it computes a value and changes nothing
        (``consts``: the constants of the region swept, by value id)."""
        if isinstance(op, (n.Const, n.GetItem, n.GetAttr, n.Build, n.BuildDict, n.Unpack)):
            return True
        if isinstance(op, n.Call):
            is_c, fn = self.const_value(op.fn)
            if not is_c:
                c = consts.get(op.fn.id)
                if c is None:
                    return False
                fn = c.value
            return hashable(fn) and (fn in _PURE_HELPERS or registry.is_pure(fn))
        return False

    def region(self, region: n.Region) -> None:
        """Rewrite ``region`` in place: each active op followed by its tangent code."""
        ops = region.ops
        region.ops = []
        b = Builder(region)
        for op in ops:
            if isinstance(op, n.Const) or isinstance(op, n.TERMINATORS) or \
                    not (self.act.is_active_op(op) or self.writes_active(op) or
                         any(r.id in self.needs_real for r in op.results)):
                region.ops.append(op)
                continue
            start = len(region.ops)
            b.loc = op.loc
            getattr(self, f"on_{type(op).__name__}")(op, b)
            for new in region.ops[start:]:
                if new is not op and not new.regions() and id(new) not in self.keep:
                    self.mine.add(id(new))
            for r in op.results:
                self.make_real(r, b, op)
                self.own_passed_through(r, b, op)

    def own_passed_through(self, v: n.Value, b: Builder, op: n.Op) -> None:
        """``a = x + 0.0`` with ``x`` written into later (``x[0] /= 2.0``): ``a``'s tangent,
        passed through from ``x``'s by the rule, is a copy, or the write into ``x``'s
        tangent would change ``a``'s too."""
        t = self.get(v)
        if t is None or v.id in self.needs_real or not self.makes_new_object(op):
            return
        # Any array argument, where the function writes into an array: it may be written
        # into under another name of its memory (``v = a.reshape(3)``, ``z = v - 0.5``,
        # then ``a[1] = ...`` writes into what ``v``'s tangent views), which the names here,
        # made as Python definitions are inlined, do not all show. (``own_tangent`` copies
        # only a tangent passed through unchanged.)
        if not self.writes_arrays() or not any(
                self.type_of(a) in (numpy.ndarray, None) for a in op.args):  # type: ignore
            return
        inputs = [d for a in op.args if (d := self.get(a)) is not None]  # type: ignore
        if inputs:
            self.set_tan(v, b.call(runtime.own_tangent, t, *inputs, hint=dot_hint(v)))

    def writes_arrays(self) -> bool:
        """Whether the function writes into an array (or a value that may be one)."""
        if getattr(self, "_writes_arrays", None) is None:
            self._writes_arrays = any(self.types.by_id.get(i) in (numpy.ndarray, None)
                                      for i in self.needs_real)
        return self._writes_arrays

    def makes_new_object(self, op: n.Op | None) -> bool:
        """Whether ``op`` is a call of a primitive with rules that returns a new object
        (not a view of its argument, not the operand an in-place operator changed)."""
        if not isinstance(op, n.Call) or not op.args:
            return False
        is_c, fn = self.const_value(op.fn)
        return is_c and hashable(fn) and registry.lookup(fn) is not None and \
            not registry.is_view(fn) and not is_inplace_operator(fn) and \
            not isinstance(fn, type)

    def writes_active(self, op: n.Op) -> bool:
        """A write into an active object clears a tangent slot even if what it writes is
        inactive; an append shifts the slots."""
        if isinstance(op, (n.SetItem, n.SetAttr)):
            return self.active(op.obj)
        if isinstance(op, n.Call):
            m = self.defs.get(op.fn.id)
            return isinstance(m, n.GetAttr) and method_may_write(m.name) and \
                self.active(m.obj)
        return False

    def effect(self, op: n.Op, b: Builder) -> n.Op:
        """Emit ``op``, a write into a tangent that must stay even though nobody reads it."""
        b.emit(op)
        self.keep.add(id(op))
        return op

    # -- calls ---------------------------------------------------------------------------

    rule_kind = "jvp"

    def active(self, v: n.Value) -> bool:
        return v.id in self.wrt_ids or self.act.is_active(v)

    def call_nondifferentiable(self, op: n.Call, b: Builder) -> None:
        b.emit(op)

    def call_new_object(self, op: n.Call, b: Builder) -> None:
        b.emit(op)
        if self.active(op.result):
            # A new object (``Cls(...)`` spelled out by devirtualize): its tangent is a
            # new, empty one its ``__init__`` writes into.
            t = b.emit(n.Call(b.const(runtime.Attrs), [], [],
                              [n.Value(dot_hint(op.result))], loc=op.loc)).result
            self.set_tan(op.result, t)
            self.real.add(t.id)

    def call_class(self, op: n.Call, cls: type, b: Builder) -> Any:
        if cls is functools.partial and any(self.active(a) for a in op.operands()[1:]):
            raise NonDifferentiableError(
                "functools.partial() binding a value that is being differentiated, kept as a "
                "value, is not supported", op.loc,
                hint="call the function with the value directly")
        init = cls.__init__
        if type(cls).__call__ is type.__call__ and cls.__new__ is object.__new__ and \
                not op.starred and all(k is not None for k, _ in op.kwargs) and \
                dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__") and \
                getattr(getattr(init, "__code__", None), "co_filename", "") == "<string>":
            # A dataclass's generated ``__init__`` stores each argument in its field: the
            # new object's tangent holds each argument's under its field's name (a rule's
            # call, so that code taking this JVP inside is differentiated again).
            names = [f.name for f in dataclasses.fields(cls) if f.init]
            if len(op.args) <= len(names):
                b.emit(op)
                given = [*zip(names, op.args), *op.kwargs]
                active = [(k, a) for k, a in given if self.active(a)]
                if active:
                    t = b.call(runtime.fields_adjoint, op.result,
                               b.const(tuple(k for k, _ in active)),
                               *[self.arg_dot(a, b) for _, a in active],
                               hint=dot_hint(op.result))
                    self.set_tan(op.result, t)
                return None
        return DECLINED  # constructed by the dispatcher (runtime Attrs tangents)

    def call_rule(self, op: n.Call, rule: registry.Rule, b: Builder,
                  keywords: inline.Keywords = ()) -> Any:
        """A primitive with a forward rule: inline it when types allow, else call it
        (given ``keywords``, literals for keyword-only parameters: :data:`DECLINED` where
        it cannot be inlined)."""
        args = list(op.args)
        y = op.result
        dots = [self.get(a) if self.active(a) else None for a in args]
        if all(d is None for d in dots):
            b.emit(op)
            return None
        is_c, fn = self.const_value(op.fn)
        if fn in (operator.iadd, operator.iconcat) and self.type_of(args[0]) is list:
            # The list is extended in place: so is its tangent, which aliases share.
            b.emit(op)
            t = self.arg_dot(args[0], b)
            if t.id not in self.real:
                t = b.call(runtime.real_tangent, t, args[0])
            self.effect(n.Call(b.const(runtime.extend_tangent),
                               [t, self.arg_dot(args[1], b), args[1]], [], [n.Value()]), b)
            self.set_tan(y, t)
            self.real.add(t.id)
            return
        if fn in _ADJOINT_UPDATES and len(args) in (4, 5) and \
                self.type_of(args[1]) in (list, tuple, dict):
            # Linear in the adjoint and the item's, and ``x`` only says where: the tangent
            # is the same update of the tangents (in place too, once ``inplace`` sees it).
            b.emit(op)
            prev_dot, g_dot = (self.get(args[0]), self.get(args[3]))
            t = b.call(runtime.getitem_adjoint,
                       prev_dot if prev_dot is not None else b.const(None), args[1], args[2],
                       g_dot if g_dot is not None else b.const(None), *args[4:],
                       hint=dot_hint(y))
            self.set_tan(y, t)
            return
        types_ = [self.rule_arg_type(a) for a in args]
        ttypes: list[type | None] = []
        inline_ok = True
        again = getattr(self.linker, "differentiated_again", False)
        for k, (a, d) in enumerate(zip(args, dots)):
            if d is None:
                ttypes.append(type(None))
            elif self.type_of(a) in NUMERIC:
                ttypes.append(self.tangent_type(a))
            elif self.reads_as_array(fn, args, a):
                ttypes.append(None)
            else:
                if not self.is_sure(d) and len(args) == 1:
                    if again:
                        # (code differentiated again cannot call the rule: its zero tangent
                        # made real, a zero like the value, the differential inlined)
                        dots[k] = d = b.call(runtime.nonzero, d, a, hint=d.hint)
                        self.sure.add(d.id)
                    else:
                        inline_ok = False  # a unary differential must not see ``None``
                ttypes.append(self.type_of(a) if d.id in self.real else None)
        spec = inline.specialized_jvp(rule.jvp, len(args), types_, ttypes, keywords) \
            if inline_ok else None
        if spec is None and inline_ok and getattr(self.linker, "differentiated_again", False):
            spec = inline.specialized_jvp(rule.jvp, len(args), types_, ttypes, keywords,
                                          unknown_ok=True)
        if spec is None and keywords:
            return DECLINED
        ready: list[n.Value | None] = []
        for a, d in zip(args, dots):
            if d is None:
                ready.append(None)
            elif self.type_of(a) in NUMERIC:
                ready.append(self.arg_dot(a, b, sure=True))
            elif self.reads_as_array(fn, args, a):
                # A NumPy function takes a list of numbers as an array: so its tangent, the
                # list of theirs, is one array, batch axes in front (as numpy.array of it
                # would put them behind).
                ready.append(b.call(np_arrays._pack, d, a, hint=d.hint))
            else:
                ready.append(d)
        if spec is None:
            pair = b.call(runtime.apply_rule, b.const(rule.jvp, origin=f"{rule.jvp.__name__}_rule"),
                          b.tuple(*args),
                          b.tuple(*[d if d is not None else b.const(None) for d in ready]))
            unpack = b.emit(n.Unpack(pair, [n.Value(y.hint), n.Value(dot_hint(y))], loc=op.loc))
            self.set_rename(y, unpack.results[0])
            self.set_tan(y, unpack.results[1])
            return
        fwd = inline.emit_forward(spec, args, b, op.loc)
        self.set_rename(y, fwd.value)
        # (what the call site knows first: a rule's body may know less of its arguments)
        if (t := self.types.of(y) or spec.value_type) is not None:
            self.extra_types[fwd.value.id] = t
        bound = [d if d is not None else b.const(None) for d in ready]
        t = inline.emit_differential(spec, fwd, bound, b, op.loc)
        d = next((o for o in reversed(b.region.ops) if t in o.results), None)
        if isinstance(d, n.Const) and d.value is None:
            return  # the differential is a symbolic zero
        if t in bound:
            if t in ready:
                self.set_tan(y, t, sure=self.is_sure(t))
            return
        t.hint = dot_hint(y)
        self.set_tan(y, t, sure=spec.out_sure)

    def call_direct(self, op: n.Call, fn: Any, b: Builder) -> Any:
        """A user function with known argument types: call its derived JVP directly."""
        args = list(op.args)
        types_ = tuple(self.param_type(a) for a in args)
        fn = self.linker.resolve(fn) if self.linker is not None else None
        code = getattr(fn, "__code__", None)
        if fn is None or None in types_ or code.co_flags & 0x0C or \
                code.co_kwonlyargcount or code.co_argcount != len(args):
            return DECLINED
        wrt = tuple(i for i, a in enumerate(args)
                    if self.active(a) and types_[i] not in NO_TANGENT)
        if not wrt or all(self.get(args[i]) is None for i in wrt):
            b.emit(op)
            return None
        target = self.linker.direct_jvp(fn, wrt, types_, self.batched)
        if target is None:
            return DECLINED
        name = f"{fn.__name__}_jvp"
        if isinstance(target, runtime.Later):
            callee = b.getattr(b.const(target, origin=f"{name}_later"), "fn")
        else:
            callee = b.const(target, origin=name)
        dots = [self.arg_dot(args[i], b, sure=True) for i in wrt]
        y = op.result
        pair = b.emit(n.Call(callee, [*args, *dots], [], [n.Value()], loc=op.loc)).result
        unpack = b.emit(n.Unpack(pair, [n.Value(y.hint), n.Value(dot_hint(y))], loc=op.loc))
        self.set_rename(y, unpack.results[0])
        self.set_tan(y, unpack.results[1], sure=self.type_of(y) in NUMERIC)
        return None

    def call_dynamic(self, op: n.Call, method: n.GetAttr | None, b: Builder) -> None:
        """A callee known at run time: the runtime dispatcher derives or finds its JVP."""
        loc = op.loc
        y = op.result
        if any(k is None and self.active(v) for k, v in op.kwargs):
            raise NonDifferentiableError(
                "a **mapping holding active values in a call is not supported yet", loc,
                hint="pass the values as named keyword arguments")
        items, dots = [], []
        for i, a in enumerate(op.args):
            items.append(a)
            d = self.get(a) if self.active(a) else None
            if i in op.starred:
                dots.append(b.call(runtime.seq_tangent, d if d is not None else b.const(None),
                                   a))
            else:
                dots.append(d if d is not None else self.zero(a, b))
        args_t = b.emit(n.Build("tuple", items, [n.Value()], tuple(op.starred))).result
        dots_t = b.emit(n.Build("tuple", dots, [n.Value()], tuple(op.starred))).result
        kw_dots: n.Value = b.const(None)
        active_kw = [(k, v) for k, v in op.kwargs if k is not None and self.get(v) is not None]
        if active_kw:
            kw_dots = b.emit(n.BuildDict([b.const(k) for k, _ in active_kw],
                                         [self.get(v) for _, v in active_kw],
                                         [n.Value()])).result
        site = b.const(loc, origin="site")
        if method is not None:
            self.mine.add(id(method))  # the bound method is looked up by the dispatcher
            obj = method.obj
            od = self.get(obj) if self.active(obj) else None
            call = n.Call(b.const(runtime.jvp_method),
                          [site, obj, od if od is not None else b.const(None),
                           b.const(method.name), args_t, dots_t, kw_dots],
                          op.kwargs, [n.Value()], loc=loc)
        elif self.active(op.fn) and self.get(op.fn) is not None and \
                self.type_of(op.fn) not in (types.FunctionType, type):
            # A callee that is itself an active value (a callable object read out of a
            # list) brings its tangent along, like a method's receiver.
            call = n.Call(b.const(runtime.jvp_call_active),
                          [site, op.fn, self.get(op.fn), args_t, dots_t, kw_dots],
                          op.kwargs, [n.Value()], loc=loc)
        else:
            call = n.Call(b.const(runtime.jvp_call), [site, op.fn, args_t, dots_t, kw_dots],
                          op.kwargs, [n.Value()], loc=loc)
        self.effect(call, b)
        unpack = b.emit(n.Unpack(call.result, [n.Value(y.hint), n.Value(dot_hint(y))], loc=loc))
        self.set_rename(y, unpack.results[0])
        self.set_tan(y, unpack.results[1])

    def call_nested(self, op: n.Call, mk: n.MakeFunction, b: Builder) -> None:
        """A call of a function defined here: the JVP of its lambda-lifted body."""
        free = [v for v in free_uses(mk.func.body) if v.id != mk.result.id]
        active_free = [v for v in free if self.active(v) and self.get(v) is not None]
        if not active_free and not any(self.active(d) for d in mk.operands()):
            self.call_dynamic(op, None, b)
            return
        sig = mk.func.signature
        if op.kwargs or op.starred or sig.vararg or sig.kwarg or sig.kwonly:
            raise NonDifferentiableError(
                "a nested function that reads an active value must be called with plain "
                "positional arguments", op.loc)
        if mk.result in free_uses(mk.func.body):
            raise NonDifferentiableError(
                "a recursive nested function that reads an active value of its enclosing "
                "function is not supported", op.loc,
                hint="pass the value as an argument instead")
        args = list(op.args)
        nargs = len(mk.func.body.args)
        missing = nargs - len(args)
        if 0 < missing <= len(mk.defaults):
            args += mk.defaults[len(mk.defaults) - missing:]
        if len(args) != nargs:
            raise NonDifferentiableError(
                "a nested function that reads an active value must be called with all its "
                "arguments", op.loc)
        inputs = [*args, *active_free]
        types_ = tuple(self.type_of(v) for v in inputs)
        wrt = tuple(i for i, v in enumerate(inputs) if self.active(v) and
                    self.get(v) is not None and types_[i] not in NO_TANGENT)
        key = (id(mk), types_, wrt)
        jfn = self.nested.get(key)
        if jfn is None:
            cl = Cloner()
            lifted = cl.function(mk.func)
            extra = [cl.fresh(v) for v in active_free]
            substitute(lifted.body, {v.id: e for v, e in zip(active_free, extra)})
            lifted.body.args = [*lifted.body.args, *extra]
            lifted.signature = n.Signature(args=[*sig.names(),
                                                 *[f"{v.hint or 'c'}" for v in active_free]])
            inner = JVP(lifted, wrt, list(types_), linker=self.linker, batched=self.batched)
            jvp_fn = inner.build()
            self.warnings.extend(inner.warnings)
            new = n.MakeFunction(jvp_fn, [], [], [n.Value(jvp_fn.name)], loc=mk.loc)
            region = self.region_of(mk)
            region.ops.insert(region.ops.index(mk) + 1, new)
            jfn = self.nested[key] = new.result
        dots = [self.arg_dot(inputs[i], b, sure=True) for i in wrt]
        y = op.result
        pair = b.emit(n.Call(jfn, [*inputs, *dots], [], [n.Value()], loc=op.loc)).result
        unpack = b.emit(n.Unpack(pair, [n.Value(y.hint), n.Value(dot_hint(y))], loc=op.loc))
        self.set_rename(y, unpack.results[0])
        self.set_tan(y, unpack.results[1], sure=self.type_of(y) in NUMERIC)

    # -- containers and objects ----------------------------------------------------------

    def on_MakeFunction(self, op: n.MakeFunction, b: Builder) -> None:
        b.emit(op)

    def on_FormatValue(self, op: n.Op, b: Builder) -> None:
        b.emit(op)

    do_JoinStr = on_FormatValue
    do_BuildSlice = on_FormatValue
    do_Raise = on_FormatValue

    # -- structured ops ------------------------------------------------------------------









def jvp_transform(fn: n.Function, wrt: Sequence[int], arg_types: Sequence[type | None],
                  linker: Linker | None = None, batched: bool = False,
                  prepared: Prepared | None = None
                  ) -> tuple[n.Function, list[tuple[str, SourceLoc | None]]]:
    """The JVP of the primal IR ``fn`` (not modified) for parameters ``wrt``; or, given
    ``prepared``, of the copy of it the driver prepared (which it builds from).

    The result is ``f_jvp(<params>, <one tangent per wrt param>) -> (out, out_dot)``;
    ``batched`` says that tangents carry a leading axis of directions (rules are then
    specialised for array tangents of float values). Returns the function and the
    warnings found (callee name, location).
    """
    cloned = prepared.fn if prepared is not None else clone_function(fn)[0]
    j = JVP(cloned, wrt, arg_types, linker=linker, batched=batched, prepared=prepared)
    out = j.build()
    return out, j.warnings


__all__ = ["JVP", "jvp_transform"]
