"""Loops over a list that the loop changes read each item when they reach it.

Python's list iterator reads ``xs[k]`` when step ``k`` begins and stops once ``k``
reaches the list's length *at that moment*. So in

    for i, x in enumerate(xs):
        if i + 1 < len(xs):
            xs[i + 1] = xs[i + 1] + a * x

the item ``x`` of step ``i + 1`` is the value written in step ``i``. The derivative
transforms treat a ``for`` loop's items as the items of the iterable when the loop
begins, which is exact for an iterable the loop does not change (a ``range``, a tuple,
a list it only reads) and wrong here. This pass rewrites such loops, before
differentiation, into the form Python runs them in::

    k = 0
    while k < len(xs):      # zip(a, b): k < len(a) and k < len(b)
        x = xs[k]           # enumerate(xs, s): (s + k, xs[k])
        k = k + 1
        <body>

whose reads and writes both modes differentiate like any other indexing. A loop over
some other iterable the loop may change (a ``reversed`` list, a dict, an iterator
built elsewhere) is refused with a located error rather than differentiated wrongly.

"May change" is :class:`~wengert.analysis.effects.objects.Objects`' question, decided
conservatively: a write into an object that may be the list (``xs[j] = v``,
``xs.append``, ``xs += ys``), or a call that may write into its arguments (a user
function, a method not known to only read, a function value) given an argument that may
be the list or hold it. The one thing not seen is a callee that reaches the list through
a global variable rather than its arguments.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

from wengert import runtime
from wengert.analysis.cached import Analyses
from wengert.analysis.effects.arrays import IMMUTABLE
from wengert.analysis.effects.objects import Objects, region_of
from wengert.analysis.types import Types, infer_types
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import expand_ops

#: The "slice" a loop over ``reversed(xs)`` walks (:meth:`_State.slice_of`).
REVERSED = "reversed"


def index_changed_iterations(fn: n.Function, arg_types: Sequence[Any],
                             analyses: Analyses | None = None) -> bool:
    """Rewrite, in place, every ``for`` loop of ``fn`` over a list its body may change
    (directly, through ``enumerate`` or through ``zip``) into an index loop; return
    whether anything changed. Refuses other iterables the loop may change. ``analyses``:
    where ``fn``'s types (of ``arg_types``) are kept."""
    loops = [op for op in n.walk_local(fn.body) if isinstance(op, n.For)]
    if not loops:
        return False
    types = analyses.types(callee=False) if analyses is not None else \
        infer_types(fn, list(arg_types))
    state = _State(fn, types)
    changed = False
    for op in loops:
        lists = state.iterated_lists(op)
        if lists is None:
            # Not a list (a range, a tuple, ...), or an iterable we cannot index.
            sources = state.iterated_objects(op)
            if len(sources) == 1 and types.of(sources[0]) is dict and \
                    _keys_of(op.iterable, sources[0], state):
                # A dict yields its keys, which writes into its values leave as they are
                # (adding or removing a key while iterating raises in Python itself).
                continue
            if any(state.changes(op.body, source) for source in sources):
                raise NonDifferentiableError(
                    "this loop changes the object it iterates over, which is not supported "
                    "for this kind of iterable", op.loc,
                    hint="iterate over indices (`for k in range(len(xs))`) and read `xs[k]`")
            continue
        if any(state.changes(op.body, xs) or
               lists[0] != "list" and state.writes_items(op.body, xs) and
               state.slice_of(xs, op) is None
               for xs, _ in lists[1]):
            # (a loop over ``enumerate``/``zip`` writing into the items it gets reads them
            # by index too: forward mode's tangents of those items are then the list's; a
            # slice made for the loop alone is walked by its indices in the holder instead,
            # ``vjp_items.index_item_loops``)
            _rewrite(op, lists, state)
            changed = True
    return changed


def _keys_of(it: n.Value, d: n.Value, state: _State) -> bool:
    """Whether iterating ``it`` yields the keys of the dict ``d``: ``d`` itself, or
    ``d.keys()``."""
    if it is d:
        return True
    made = state.defs.get(it.id)
    if not isinstance(made, n.Call) or made.kwargs or made.starred:
        return False
    method = state.defs.get(made.fn.id)
    if isinstance(method, n.GetAttr):
        return method.obj is d and method.name == "keys" and not made.args
    return isinstance(method, n.Const) and method.value is dict.keys and made.args == [d]


class _State(Objects):
    """:class:`~wengert.analysis.effects.objects.Objects` and what a loop iterates over."""

    # -- what a loop iterates over ---------------------------------------------------------

    def iterated_lists(self, op: n.For) -> tuple[str, list[tuple[n.Value, Any]], Any] | None:
        """``(kind, [(list, None)...], start)`` for a loop over a list, ``enumerate`` or
        ``zip`` of lists (kind ``"list"``, ``"enumerate"``, ``"zip"``); ``None`` else."""
        it = op.iterable
        if self.types.of(it) is list:
            return "list", [(it, None)], None
        call = self.walking_call(it)
        if call is None:
            return None
        f, args = call
        if f is builtins.enumerate and len(args) in (1, 2):
            if self.types.of(args[0]) is not list:
                return None
            return "enumerate", [(args[0], None)], args[1] if len(args) == 2 else None
        if f is builtins.zip and args and \
                all(self.types.of(a) in (list, tuple) for a in args) and \
                all(self.const(v) == (True, False) for _, v in self.defs[it.id].kwargs):
            # (``strict=True`` raises where the loop runs out of one list and not of the
            # others: an index loop over the least length would not)
            return "zip", [(a, None) for a in args], None
        return None

    def slice_of(self, xs: n.Value, op: n.For) -> tuple[n.Value, n.Value | str] | None:
        """``(ys, s)`` where ``xs`` is a slice ``ys[s]`` of a list (or ``reversed(ys)``:
        ``s`` is :data:`REVERSED`) made for the loop ``op`` alone (iterated by it, alone or
        in the ``zip``/``enumerate`` it iterates), in the loop's region with nothing
        between that may change ``ys``: the loop may read ``ys`` at the slice's indices
        instead. ``None`` otherwise."""
        d = self.defs.get(xs.id)
        if isinstance(d, n.GetItem) and self.types.of(d.index) is slice and \
                self.types.of(d.obj) is list:
            ys, part = d.obj, d.index
        elif isinstance(d, n.Call) and len(d.args) == 1 and not d.kwargs and \
                not d.starred and self.const(d.fn) == (True, builtins.reversed) and \
                self.types.of(d.args[0]) is list:
            ys, part = d.args[0], REVERSED
        else:
            return None
        made = self.defs.get(op.iterable.id)
        through = [op] if xs is op.iterable else [made]
        if self.uses.get(xs.id, []) != through or \
                xs is not op.iterable and self.uses.get(op.iterable.id, []) != [op]:
            return None
        region = region_of(op, self)
        if not any(o is d for o in region.ops):
            return None
        between = region.ops[region.ops.index(d) + 1:region.ops.index(op)]
        if self.changes(n.Region([], between), ys):
            return None
        return ys, part

    def iterated_objects(self, op: n.For) -> list[n.Value]:
        """The mutable objects a loop over something else walks (``reversed(xs)`` ->
        ``xs``; ``enumerate(zip(a, b))`` -> ``a``, ``b``; ``d.items()`` -> ``d``)."""
        return self._walked(op.iterable)

    def _walked(self, it: n.Value) -> list[n.Value]:
        t = self.types.of(it)
        if t in IMMUTABLE:  # (a tuple's items: iterating it walks no list)
            return []
        d = self.defs.get(it.id)
        call = self.walking_call(it)
        if call is not None and call[1]:
            f, args = call
            if f is builtins.range:
                return []
            if f in (builtins.reversed, builtins.enumerate, builtins.zip, iter):
                return [w for a in args if self.types.of(a) not in (tuple, range)
                        for w in self._walked(a)]
            if f in (dict.items, dict.keys, dict.values) and len(args) == 1:
                return [args[0]]  # (``d.keys()`` made a call of the method of ``dict``)
        if isinstance(d, n.Call) and not d.args and not d.kwargs:
            m = self.defs.get(d.fn.id)
            if isinstance(m, n.GetAttr) and m.name in ("items", "keys", "values"):
                return [m.obj]
        return [it]

def _rewrite(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any],
             state: _State) -> None:
    """Turn the ``For`` ``op`` into the equivalent index ``While``, in place of it."""
    kind, seqs, start = lists
    region = region_of(op, state)
    at = region.ops.index(op)
    loc = op.loc
    pre: list[n.Op] = []
    zero = _const(0, pre, loc)
    k = n.Value("k", loc)
    carried = [n.Value(a.hint, a.loc) for a in op.carried_args]
    # Condition: every sequence still has an item at k.
    cond_ops: list[n.Op] = []
    test: n.Value | None = None
    for xs, _ in seqs:
        length = n.Call(_const(builtins.len, cond_ops, loc, "len"), [xs], [], [n.Value()],
                        loc=loc)
        less = n.Call(_const(operator.lt, cond_ops, loc, "operator.lt"), [k, length.result],
                      [], [n.Value()], loc=loc)
        cond_ops += [length, less]
        if test is None:
            test = less.result
        else:
            both = n.Call(_const(operator.and_, cond_ops, loc, "operator.and_"),
                          [test, less.result], [], [n.Value()], loc=loc)
            cond_ops.append(both)
            test = both.result
    cond_ops.append(n.Yield([test], loc=loc))
    # Body: read the item(s) at k, step k, then the original body.
    head, item = _item_reads(op, lists, k, state)
    one = _const(1, head, loc)
    step = n.Call(_const(operator.add, head, loc, "operator.add"), [k, one], [],
                  [n.Value("k")], loc=loc)
    head.append(step)
    old_item = op.body.args[0]
    body_ops = head + op.body.ops
    mapping = {old_item.id: item, **{a.id: c for a, c in zip(op.carried_args, carried)}}
    body = n.Region([], body_ops)  # a while loop's regions read its ``args``
    substitute(body, mapping)
    body.terminator.values.insert(0, step.result)  # type: ignore[attr-defined]
    args = [k, *carried]
    cond = n.Region([], cond_ops)
    loop = n.While([zero, *op.inits], args, cond, body,
                   [n.Value(), *op.results], [f + 1 for f in op.exit_flags], loc=loc)
    region.ops[at:at + 1] = [*pre, loop]
    _drop_iterable(op, op.iterable, kind, region, state)


def _const(value: Any, out: list[n.Op], loc: Any, origin: str | None = None) -> n.Value:
    c = n.Const(value, [n.Value()], origin, loc=loc)
    out.append(c)
    return c.result


def _item_reads(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any], k: n.Value,
                state: _State) -> tuple[list[n.Op], n.Value]:
    """The ops reading the item of the step at index ``k`` (``xs[k]``, ``(s + k, xs[k])``,
    ``(a[k], b[k])``), with the targets of an unpacking that opens the body made the parts
    themselves; and the value that stands for the loop's item."""
    kind, seqs, start = lists
    loc = op.loc
    head: list[n.Op] = []
    items = []
    for xs, indices in seqs:
        at = k
        if indices is not None:  # (the indices of a slice the loop walked: ``_index_for``)
            j = n.GetItem(indices, k, [n.Value("j")], loc=loc)
            head.append(j)
            at = j.result
        g = n.GetItem(xs, at, [n.Value()], loc=loc)
        head.append(g)
        items.append(g.result)
    if kind == "list":
        item = items[0]
    else:
        if kind == "enumerate":
            if start is None:
                index = k
            else:
                add = n.Call(_const(operator.add, head, loc, "operator.add"), [start, k], [],
                             [n.Value()], loc=loc)
                head.append(add)
                index = add.result
            parts = [index, items[0]]
        else:
            parts = items
        first = op.body.ops[0] if op.body.ops else None
        if isinstance(first, n.Unpack) and first.value is op.body.args[0] and \
                first.star is None and len(first.results) == len(parts) and \
                len(state.uses.get(op.body.args[0].id, [])) == 1:
            # ``for i, x in enumerate(xs)``: the parts are the targets, no tuple between.
            unpacked = {r.id: p for r, p in zip(first.results, parts)}
            op.body.ops.remove(first)
            substitute(op.body, unpacked)
            for r, p in zip(first.results, parts):
                if p.hint is None:
                    p.hint = r.hint
            item = n.Value()
        else:
            tup = n.Build("tuple", parts, [n.Value()], loc=loc)
            head.append(tup)
            item = tup.result
    if item.hint is None:
        item.hint = op.body.args[0].hint
    return head, item


def _drop_iterable(op: n.Op, iterable: n.Value, kind: str, region: n.Region,
                   state: _State) -> None:
    """``enumerate(xs)`` / ``zip(xs, ys)`` made for the loop ``op`` alone is not needed
    once the loop reads its items by index."""
    d = state.defs.get(iterable.id)
    if kind != "list" and isinstance(d, n.Call) and \
            state.uses.get(iterable.id, []) == [op] and d in region.ops:
        region.ops.remove(d)


def index_float_iterations(fn: n.Function, types: Types,
                           active: Callable[[n.Value], bool]) -> bool:
    """Rewrite, in place, each ``for`` loop of ``fn`` over an active list of floats (alone,
    through ``enumerate`` or in a ``zip`` of lists and tuples) that its body does not
    change into a loop over ``range`` reading the items by index; return whether anything
    changed. Reverse mode then adds each item's adjoint into the list's own adjoint where
    the item is read (``xs_bar[i] += g``, a list of floats the loop owns), rather than
    collecting the items' adjoints and regrouping them afterwards (``zip``'s columns)."""
    loops = [op for op in n.walk_local(fn.body) if isinstance(op, n.For)]
    if not loops:
        return False
    state = _State(fn, types)
    changed = False
    for op in loops:
        lists = state.iterated_lists(op)
        if lists is None or not any(
                active(xs) and types.items.get(xs.id) is float for xs, _ in lists[1]):
            continue
        if any(state.changes(op.body, xs) for xs, _ in lists[1]):
            continue  # (``index_changed_iterations`` made those index loops already)
        _index_for(op, lists, state)
        changed = True
    return changed


def index_extremes(fn: n.Function, types: Types, active: Callable[[n.Value], bool]) -> bool:
    """Rewrite, in place, each ``max(xs)`` or ``min(xs)`` of an active list of floats into
    ``xs[first_extreme(xs, max)]``: the item it returns read by its index, so that reverse
    mode adds the adjoint into that one entry of ``xs``'s (``xs_bar[k] += y_bar``) like any
    other read by index, not through a list of ``None`` but one. Return whether anything
    changed."""
    consts = {op.result.id: op.value for op in n.walk_local(fn.body) if isinstance(op, n.Const)}

    def rewrite(op: n.Op) -> list[n.Op] | None:
        extreme = consts.get(op.fn.id) if isinstance(op, n.Call) else None
        if not ((extreme is builtins.max or extreme is builtins.min) and
                len(op.args) == 1 and not op.kwargs and not op.starred and  # type: ignore
                types.of(op.args[0]) is list and  # type: ignore[attr-defined]
                types.items.get(op.args[0].id) is float and  # type: ignore[attr-defined]
                active(op.args[0])):  # type: ignore[attr-defined]
            return None
        xs, loc = op.args[0], op.loc  # type: ignore[attr-defined]
        new: list[n.Op] = []
        pick = n.Call(_const(runtime.first_extreme, new, loc, "first_extreme"),
                      [xs, _const(extreme, new, loc, extreme.__name__)], [],
                      [n.Value("best")], loc=loc)
        return [*new, pick, n.GetItem(xs, pick.result, op.results, loc=loc)]

    return expand_ops(fn.body, rewrite)


def _index_for(op: n.For, lists: tuple[str, list[tuple[n.Value, Any]], Any],
               state: _State) -> None:
    """Turn the ``For`` ``op`` over sequences its body does not change into ``for k in
    range(n)`` reading the items at ``k`` (``n`` the shortest length), in place. A
    sequence given as ``(xs, s)`` with ``s`` a slice is ``xs[s]`` (``reversed(xs)`` where
    ``s`` is :data:`REVERSED`), read at the indices ``range(len(xs))[s]``
    (:meth:`_State.slice_of`)."""
    kind, seqs, start = lists
    region = region_of(op, state)
    at = region.ops.index(op)
    loc = op.loc
    pre: list[n.Op] = []
    size: n.Value | None = None
    read: list[tuple[n.Value, Any]] = []
    for xs, part in seqs:
        length = n.Call(_const(builtins.len, pre, loc, "len"), [xs], [], [n.Value("n")],
                        loc=loc)
        pre.append(length)
        if part is REVERSED:
            back = _const(-1, pre, loc)
            whole = n.BuildSlice(None, None, back, [n.Value()], loc=loc)
            pre.append(whole)
            part = whole.result
        if part is not None:
            # A slice ``xs[part]``: the loop walks ``range(len(xs))[part]``, its indices.
            every = n.Call(_const(builtins.range, pre, loc, "range"), [length.result], [],
                           [n.Value()], loc=loc)
            indices = n.GetItem(every.result, part, [n.Value("at")], loc=loc)
            length = n.Call(_const(builtins.len, pre, loc, "len"), [indices.result], [],
                            [n.Value("n")], loc=loc)
            pre += [every, indices, length]
            part = indices.result
        read.append((xs, part))
        if size is None:
            size = length.result
        else:
            least = n.Call(_const(builtins.min, pre, loc, "min"), [size, length.result], [],
                           [n.Value("n")], loc=loc)
            pre.append(least)
            size = least.result
    steps = n.Call(_const(builtins.range, pre, loc, "range"), [size], [], [n.Value()],
                   loc=loc)
    pre.append(steps)
    k = n.Value("i", loc)
    head, item = _item_reads(op, (kind, read, start), k, state)
    old_item = op.body.args[0]
    op.body.ops[0:0] = head
    substitute(op.body, {old_item.id: item})
    op.body.args[0] = k
    iterable, op.iterable = op.iterable, steps.result
    region.ops[at:at] = pre
    _drop_iterable(op, iterable, kind, region, state)


