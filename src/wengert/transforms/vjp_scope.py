"""The pullback being built: scopes that mirror the forward regions and hold adjoints.

A reverse action (what a forward op leaves to do in the pullback) runs inside a
:class:`Scope`, which asks for the primal values the adjoint reads (``res``: a
placeholder bound when the region closes: an ``If`` result, a loop record field, or a
capture of the pullback) and keeps the current adjoint of each value (a symbolic zero
until a contribution arrives).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy

from wengert import runtime, tangents
from wengert.analysis.types import FLOAT_OR_FLOAT64
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.objects import hashable as _hashable
from wengert.transforms.base import FLOATS

if TYPE_CHECKING:
    from wengert.transforms.vjp import VJP

Action = Callable[["Scope"], None]


def _no_adjoint(scope: Scope) -> None:
    """The reverse of an op whose inputs have no adjoints."""


def _zero_for(t: type | None) -> Any:
    """A static zero for a value of type ``t``, or ``...`` when one needs the value itself."""
    if t is float:
        return 0.0
    return ...


#: Arithmetic on ints that a pullback may do again rather than keep (it cannot fail where
#: it once succeeded, and costs what reading a record costs).
_INT_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv,
                             operator.mod, operator.neg})


class Scope:
    """A region of the pullback being built, mirroring one forward region.

    ``adj`` maps forward value ids to their current adjoint values; a missing
    entry is a symbolic zero. ``maybe_none`` holds ids whose adjoint may be
    ``None`` at run time (it came out of a container or a runtime pullback).
    """

    def __init__(self, vjp: VJP, parent: Scope | None, region: n.Region,
                 fwd_defs: set[int] | None) -> None:
        self.vjp = vjp
        self.parent = parent
        self.region = region
        self.b = Builder(region)
        self.fwd_defs = fwd_defs
        self.placeholders: dict[int, n.Value] = {}
        #: Slices this region made again (``res``), by the forward value's id.
        self.remade: dict[int, n.Value] = {}
        self.requested: dict[int, n.Value] = {}
        self.adj: dict[int, n.Value] = dict(parent.adj) if parent else {}
        self.maybe_none: set[int] = set(parent.maybe_none) if parent else set()

    # -- primal values -------------------------------------------------------------------

    def res(self, v: n.Value) -> n.Value:
        """The forward value ``v``, as seen from this region of the pullback."""
        v = self.vjp.resolve(v)
        c = self.vjp.consts.get(v.id)
        if c is not None:
            return self.b.emit(n.Const(c.value, [n.Value(v.hint)], c.origin, c.root)).result
        if self.parent is None:
            return v
        made = self.remade.get(v.id)
        if made is not None:
            return made
        d = self.vjp.defs.get(v.id)
        if self.remakeable(d):
            # Made again here from what this region has anyway (the bounds of a slice, the
            # terms of ``j + 1``, none of them made in this iteration) rather than kept per
            # iteration: a loop's records hold what changes from one iteration to the next.
            assert d is not None
            made = self.remake(d, v)
            self.remade[v.id] = made
            return made
        p = self.placeholders.get(v.id)
        if p is None:
            p = n.Value(v.hint, v.loc)
            self.placeholders[v.id] = p
            self.requested[v.id] = v
        return p

    def remakeable(self, d: n.Op | None) -> bool:
        """Whether the forward op ``d`` is cheap, pure and made only of values from outside
        this region's forward iteration: a slice, or int arithmetic; or, in a gradient
        differentiated again, an item read out of a list (a dict, an object) whose items are
        written through it (``transforms/vjp_items.py``): its slots hold the same objects, so it is
        read again at its index rather than kept (a loop's record holding the object would
        be, to the pass differentiating the gradient, the object stored away)."""
        if isinstance(d, (n.GetItem, n.GetAttr)) and d.results[0].id in self.vjp.item_reads \
                and getattr(self.vjp.linker, "differentiated_again", False):
            # (Not where the slot may hold another object by the time the reverse runs:
            # ``tr.hist = [c, k]`` after the loop over ``tr.hist``.)
            return not self.vjp.slot_rebound_after(d)
        if isinstance(d, n.BuildSlice):
            parts = [x for x in (d.lower, d.upper, d.step) if x is not None]
        elif isinstance(d, n.Call) and not d.kwargs and not d.starred and \
                self.vjp.consts.get(d.fn.id) is not None and \
                _hashable(self.vjp.consts[d.fn.id].value) and \
                self.vjp.consts[d.fn.id].value in _INT_ARITHMETIC and \
                self.vjp.type_of(d.result) is int and \
                all(self.vjp.type_of(a) is int for a in d.args):
            parts = list(d.args)
        else:
            return False
        inner = self.fwd_defs or set()
        resolved = [self.vjp.resolve(x) for x in parts]
        return all(x.id not in inner or x.id in self.vjp.consts or
                   self.remakeable(self.vjp.defs.get(x.id)) for x in resolved)

    def remake(self, d: n.Op, v: n.Value) -> n.Value:
        """``d`` emitted again in this region, on its operands as this region sees them."""
        if isinstance(d, n.BuildSlice):
            bounds = [None if x is None else self.res(x) for x in (d.lower, d.upper, d.step)]
            return self.b.emit(n.BuildSlice(*bounds, [n.Value(v.hint)], loc=d.loc)).result
        if isinstance(d, n.GetItem):
            return self.b.emit(n.GetItem(self.res(d.obj), self.res(d.index), [n.Value(v.hint)],
                                         loc=d.loc)).result
        if isinstance(d, n.GetAttr):
            return self.b.emit(n.GetAttr(self.res(d.obj), d.name, [n.Value(v.hint)],
                                         loc=d.loc)).result
        assert isinstance(d, n.Call)
        args = [self.res(a) for a in d.args]
        return self.b.emit(n.Call(self.res(d.fn), args, [], [n.Value(v.hint)],
                                  loc=d.loc)).result

    # -- adjoints ------------------------------------------------------------------------

    def get(self, v: n.Value, flush: bool = True) -> n.Value | None:
        """The adjoint of ``v`` or ``None`` for a symbolic zero. Unless ``flush`` is false
        (a loop carrying it carries its entries' scalar adjoints beside it), the adjoints
        of its entries read under constant keys are added into it first."""
        v = self.vjp.resolve(v)
        if flush:
            self.flush(v)
        return self.adj.get(v.id)

    def flush(self, v: n.Value) -> None:
        """Add the scalar adjoints of ``v``'s entries or fields (``VJP.entry_slot``,
        ``VJP.field_slot``) into ``v``'s."""
        for key, slot in self.vjp.slots.get(v.id, {}).items():
            g = self.adj.get(slot.id)
            if g is None or g.id in self.vjp.zeros:
                continue
            prev = self.adj.get(v.id)
            # A field's key is ("field", name); a dict's entry's is the key itself.
            helper, key = (runtime.getattr_adjoint, key[1]) if type(key) is tuple else \
                (runtime.entry_adjoint, key)
            new = self.b.call(self.vjp.const_fn(helper),
                              prev if prev is not None else self.b.const(None), self.res(v),
                              self.b.const(key), g, hint=_bar(v))
            self.adj[v.id] = new
            self.maybe_none.discard(v.id)
            zero = self.b.const(0.0)
            self.vjp.zeros.add(zero.id)
            self.adj[slot.id] = zero

    def need(self, v: n.Value, flush: bool = True) -> n.Value:
        """The adjoint of ``v`` as a value that is never ``None`` at run time."""
        v = self.vjp.resolve(v)
        if flush:
            self.flush(v)
        a = self.adj.get(v.id)
        if a is None:
            return self.zero(v)
        if v.id in self.maybe_none:
            # A float's zero is 0.0: no residual of ``v`` kept (or recomputed) for its shape.
            like = self.b.const(0.0) if self.vjp.type_of(v) is float else self.res(v)
            a = self.b.call(self.vjp.const_fn(runtime.nonzero), a, like, hint=_bar(v))
            self.adj[v.id] = a
            self.maybe_none.discard(v.id)
        return a

    def zero(self, v: n.Value, allow_none: bool = False) -> n.Value:
        """A materialised zero adjoint for ``v`` (``None`` for containers when allowed)."""
        t = self.vjp.type_of(v)
        if t is float or t is numpy.float64 or t is FLOAT_OR_FLOAT64:
            return self.b.const(0.0)  # (a float64's zero adjoint adds like its own)
        if t is type(None):
            return self.b.const(None)
        if t in (int, bool):
            return self.b.const(0)
        if allow_none and t is not numpy.ndarray and t not in FLOATS:
            return self.b.const(None)
        return self.b.call(self.vjp.const_fn(tangents.zeros_like), self.res(v), hint=_bar(v))

    def accumulate(self, v: n.Value, contrib: n.Value, maybe_none: bool = False) -> None:
        """``v_bar += contrib``."""
        v = self.vjp.resolve(v)
        if not self.vjp.active(v):
            return
        cur = self.adj.get(v.id)
        if cur is None:
            self.adj[v.id] = contrib
            if maybe_none:
                self.maybe_none.add(v.id)
            else:
                self.maybe_none.discard(v.id)
            return
        cur_none = v.id in self.maybe_none
        if not cur_none and not maybe_none and self.vjp.type_of(v) in FLOATS:
            # Floats are immutable, so ``+=`` is ``+`` and reads like a hand-written adjoint.
            new = self.b.call(self.vjp.const_fn(runtime.add_floats), cur, contrib,
                              hint=_bar(v))
        else:
            new = self.b.call(runtime.add_adjoint, cur, contrib, hint=_bar(v), origin="accumulate")
        self.adj[v.id] = new
        if not (cur_none and maybe_none):
            self.maybe_none.discard(v.id)


def _bar(v: n.Value) -> str | None:
    return f"{v.hint}_bar" if v.hint and not v.hint.startswith(".") else None
