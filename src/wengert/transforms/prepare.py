"""What both modes do to a (cloned) primal before differentiating it.

0. checked attribute reads of generated code (``runtime.plain_attr``, differentiated
   again) are plain reads again: the transform checks them anew; keyword arguments of a
   primitive that has rules are passed positionally where its signature allows
   (``enumerate(xs, start=1)`` is ``enumerate(xs, 1)``), so the rule inlines;
   ``max``/``min`` with ``key=`` or ``default=`` select an item by index
   (:func:`runtime.keyed_extreme`, piecewise constant), which differentiates to any
   order like any indexing; ``map``, ``filter``, ``functools.reduce`` and ``sorted(key=)``
   call their Python definitions (:mod:`wengert.rules.python_defs`), inlined below; a
   ``functools.partial`` that is only called is the call of its function;
1. :func:`~wengert.transforms.devirtualize.devirtualize`: properties, methods and class
   methods of objects whose class is known become calls of the functions they are;
2. :func:`~wengert.transforms.nested_grad.expand_nested_grads`: ``grad``/``vjp`` taken
   inside the function become the IR of that derivative;
3. :func:`~wengert.transforms.inline_calls.inline_calls`: small user helpers are inlined,
   so their derivatives are straight-line code in the caller's;
4. all of the above again, after specialising inlined code on what the call site knows,
   while that exposes more (an inlined helper's own methods and nested derivatives, an
   object of a class now known);
5. :func:`~wengert.transforms.iteration.index_changed_iterations`: loops over a list the
   loop changes read each item when they reach it;
6. ``s += t`` on a value of unknown type whose old value is read again gets a run-time
   check (:func:`runtime.check_rebinding`): a number is rebound, which both modes handle;
   a list or array would be changed in place under its old name, which they refuse.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.cached import Analyses
from wengert.analysis.effects.objects import seen_only_through_its_slot
from wengert.analysis.effects.vocabulary import (
    DIFFERENTIABLE_INPLACE,
    is_inplace_operator,
    method_may_write,
)
from wengert.analysis.types import bind_constants
from wengert.ir import nodes as n
from wengert.ir.uses import expand_ops
from wengert.objects import hashable
from wengert.rules import registry
from wengert.transforms.checks import check_iteration_closures
from wengert.transforms.devirtualize import devirtualize
from wengert.transforms.function_joins import split_function_joins
from wengert.transforms.inline_calls import inline_calls
from wengert.transforms.iteration import index_changed_iterations
from wengert.transforms.nested_grad import expand_nested_grads
from wengert.transforms.object_lists import split_object_lists
from wengert.transforms.specialize import specialize

#: Rounds of step 4 (each is bounded by the inliner's budget anyway).
_ROUNDS = 8


@dataclass
class Prepared:
    """A function made ready for a transform: rewritten in place by :func:`prepare`, its
    parameter types (constants bound) and its analyses, kept while it is unchanged."""

    fn: n.Function
    arg_types: list[Any]
    analyses: Analyses


def prepare_function(fn: n.Function, arg_types: Sequence[Any], linker: Any) -> Prepared:
    """Bind the functions passed in as constants of ``fn`` and :func:`prepare` it: what
    both transforms start from (the driver runs it before either, see
    :mod:`wengert.driver.pipeline`)."""
    bound = bind_constants(fn, arg_types)
    return Prepared(fn, list(bound), prepare(fn, bound, linker))


def prepare(fn: n.Function, arg_types: Sequence[Any], linker: Any,
            analyses: Analyses | None = None) -> Analyses:
    """Normalise ``fn`` in place for differentiation (see the module docstring); return
    its analyses (``analyses``, or new ones), kept while it is unchanged."""
    callee = linker.result_type if linker is not None else None
    if analyses is None:
        analyses = Analyses(fn, arg_types, callee,
                            getattr(linker, "written_params", None))
    _plain_reads(fn)
    for _ in range(_ROUNDS):
        _positional_rule_calls(fn)
        _keyed_extremes(fn)
        _python_definitions(fn)
        _called_partials(fn)
        changed = devirtualize(fn, arg_types, callee, analyses)
        _live_dict_loops(fn)
        if linker is not None:
            changed |= expand_nested_grads(fn, arg_types, linker, final=False)
            _plain_reads(fn)
            # (an ``if`` choosing between closures passed on: each branch passes its own)
            changed |= split_function_joins(fn)
            changed |= inline_calls(fn, linker.callee_ir) > 0
            # (before specialising unrolls a loop: a closure over its variable called after
            # the pass that made it would look called in it)
            check_iteration_closures(fn)
            # Inlined code specialised on what its call site knows: ``len(args)`` of a
            # tuple display, ``isinstance`` of a value of known type, the branches they
            # decide; an object read out of a list display is that object, of its class.
            before = _fingerprint(fn)
            specialize(fn, arg_types, callee=callee, analyses=analyses)
            changed |= _fingerprint(fn) != before  # (an unrolled loop may call known ones)
            changed |= devirtualize(fn, arg_types, callee, analyses)
        if not changed:
            break
    if linker is not None:
        expand_nested_grads(fn, arg_types, linker)  # (a gradient still passed on: refused)
    # (objects kept in a list of the function's own: one list of numbers per field)
    split_object_lists(fn, analyses.types(callee=False))
    index_changed_iterations(fn, arg_types, analyses)
    _number_updates(fn, analyses)
    _item_updates(fn, analyses)
    _self_operands(fn)
    _guard_inplace(fn, analyses)
    if not getattr(linker, "differentiated_again", False):
        _guard_unions(fn, analyses)
    check_iteration_closures(fn)  # (those no helper took: a function of no inlined call)
    return analyses


def _plain_reads(fn: n.Function) -> None:
    """``runtime.plain_attr(obj, "name", site)`` -> ``obj.name``; likewise the checks of
    attribute writes are dropped (the transform adds what the types still need)."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}

    def region(r: n.Region) -> None:
        out = []
        for op in r.ops:
            if isinstance(op, n.Call) and not op.kwargs and len(op.args) == 3:
                f = consts.get(op.fn.id)
                if f is runtime.plain_attr and isinstance(consts.get(op.args[1].id), str):
                    out.append(n.GetAttr(op.args[0], consts[op.args[1].id], op.results,
                                         loc=op.loc))
                    continue
                if f is runtime.check_plain_setattr:
                    continue
            for sub in op.regions():
                region(sub)
            out.append(op)
        r.ops = out

    region(fn.body)


def _positional_rule_calls(fn: n.Function) -> None:
    """``f(a, k=v)`` -> ``f(a, v)`` for a primitive ``f`` with rules whose signature takes
    ``k`` as its next positional parameter (parameters skipped get their defaults)."""
    consts = {op.result.id: op for op in n.walk(fn.body) if isinstance(op, n.Const)}
    for op in n.walk(fn.body):
        if not isinstance(op, n.Call) or not op.kwargs or op.starred or \
                any(k is None for k, _ in op.kwargs):
            continue
        c = consts.get(op.fn.id)
        rule = registry.lookup(c.value) if c is not None and hashable(c.value) else None
        if rule is None or rule.python is not None:
            continue  # (a Python definition takes its keywords by name)
        try:
            params = list(inspect.signature(c.value).parameters.values())
        except (TypeError, ValueError):
            continue
        given = dict(op.kwargs)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        if any(name not in {p.name for p in positional[len(op.args):]
                            if p.kind is p.POSITIONAL_OR_KEYWORD} for name in given):
            continue
        last = max(i for i, p in enumerate(positional) if p.name in given)
        args = list(op.args)
        pre: list[n.Op] = []
        for p in positional[len(op.args):last + 1]:
            if p.name in given:
                args.append(given[p.name])
            elif p.default is not p.empty:
                d = n.Const(p.default, [n.Value()], loc=op.loc)
                pre.append(d)
                args.append(d.result)
            else:
                break
        else:
            if len(args) > _capacity(rule.vjp) or len(args) > _capacity(rule.jvp):
                continue  # (``np.sin(x, out=y)``: the rules take no ``out``; refused later)
            op.args, op.kwargs = args, []
            region = _region_of(fn.body, op)
            at = region.ops.index(op)
            region.ops[at:at] = pre


def _capacity(rule_fn: Any) -> float:
    """How many positional arguments a rule takes (no limit for ``*args``)."""
    if rule_fn is None:
        return float("inf")
    params = inspect.signature(rule_fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return float("inf")
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _region_of(body: n.Region, op: n.Op) -> n.Region:
    if op in body.ops:
        return body
    for x in n.walk(body):
        for r in x.regions():
            if op in r.ops:
                return r
    raise AssertionError("op not found")  # pragma: no cover



_INPLACE = DIFFERENTIABLE_INPLACE


#: The operator an augmented assignment of an array's item amounts to.
_PLAIN = {operator.iadd: operator.add, operator.isub: operator.sub,
          operator.imul: operator.mul, operator.itruediv: operator.truediv,
          operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
          operator.ipow: operator.pow, operator.imatmul: operator.matmul}


#: Numbers, which no in-place operator changes: ``a += b`` on one is ``a = a + b``.
_NUMBERS = (float, int, bool, numpy.float64)


def _number_updates(fn: n.Function, analyses: Analyses) -> None:
    """``operator.iadd(a, b)`` of a number ``a`` (``p.v += f * dt`` of a float field,
    ``ps_v[i] += g`` once the field is a list) is ``a + b``: said so, it is an operator
    like any other, and the generated code writes it ``t + g``."""
    types_ = analyses.types()
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}

    def region(r: n.Region) -> None:
        out: list[n.Op] = []
        for op in r.ops:
            f = consts.get(op.fn.id) if isinstance(op, n.Call) else None
            if isinstance(op, n.Call) and len(op.args) == 2 and not op.kwargs and \
                    not op.starred and hashable(f) and f in _PLAIN and \
                    types_.of(op.args[0]) in _NUMBERS:
                plain = n.Const(_PLAIN[f], [n.Value()], f"operator.{_PLAIN[f].__name__}",
                                loc=op.loc)
                out.append(plain)
                op.fn = plain.result
            if not isinstance(op, n.MakeFunction):
                for sub in op.regions():
                    region(sub)
            out.append(op)
        r.ops = out

    region(fn.body)


def _item_updates(fn: n.Function, analyses: Analyses) -> None:
    """``a[i] += v`` on an array is ``a[i] = a[i] + v``: Python updates the item read out
    (a view or a copy) in place, then writes it back, and what ``a`` holds afterwards is
    the same. Said without the in-place operator, the item read is a value like any other
    (derivatives may read it again)."""
    types_ = analyses.types()
    defs: dict[int, n.Op] = {}
    consts: dict[int, Any] = {}
    users: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        for r in op.results:
            defs[r.id] = op
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for v in op.operands():
            users.setdefault(v.id, []).append(op)
    for op in n.walk(fn.body):
        f = consts.get(op.fn.id) if isinstance(op, n.Call) else None
        if not (isinstance(op, n.Call) and len(op.args) == 2 and hashable(f) and f in _PLAIN):
            continue
        item = defs.get(op.args[0].id)
        if not isinstance(item, n.GetItem) or types_.of(item.obj) not in (numpy.ndarray, list,
                                                                          dict):
            continue
        back = users.get(op.result.id, [])
        if len(back) == 1 and isinstance(back[0], n.SetItem) and back[0].obj is item.obj \
                and back[0].index is item.index and back[0].value is op.result and \
                (types_.of(item.obj) is numpy.ndarray or _array_item_alone(fn, types_, op, item,
                                                                           users)):
            plain = n.Const(_PLAIN[f], [n.Value()], f"operator.{_PLAIN[f].__name__}",
                            loc=op.loc)
            region = _region_of(fn.body, op)
            region.ops.insert(region.ops.index(op), plain)
            op.fn = plain.result


def _array_item_alone(fn: n.Function, types_: Any, op: n.Call, item: n.GetItem,
                      users: dict[int, list[n.Op]]) -> bool:
    """Whether ``params[i] -= lr * g``, on a float64 array held by a list or dict made here,
    may be ``params[i] = params[i] - lr * g``: the array is read by this update alone and
    is seen after it only through its slot (``effects.seen_only_through_its_slot``), every
    array the container holds is float64 (no casting), and the operand, where its type is
    known, is float64 with no more axes than any of them and a shape that broadcasts into
    theirs (else the in-place operator, which raises, stays)."""
    v = op.args[1]
    b = types_.arrays.get(v.id)
    # (an operand of a dtype or axes not known: one that would not fit raises in the
    # program itself, which is then no program to differentiate)
    if users.get(op.args[0].id) != [op] or \
            types_.of(v) not in (float, int, bool, numpy.ndarray) or \
            b is not None and b.dtype is not numpy.float64:
        return False

    def float64_wider(w: n.Value) -> bool:
        a = types_.arrays.get(w.id)
        return a is not None and a.dtype is numpy.float64 and (
            b is None or b.ndim <= a.ndim and (
                a.shape is None or b.shape is None or
                all(y in (1, x) for x, y in zip(a.shape[::-1], b.shape[::-1]))))

    return seen_only_through_its_slot(fn, types_, op, item, float64_wider)


def _self_operands(fn: n.Function) -> None:
    """``a *= a``: the operand read besides the one changed is a copy of it taken before
    the change (``a *= snapshot(a)``), as NumPy reads it; the derivatives read it after
    the change otherwise."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    for op in list(n.walk(fn.body)):
        if not isinstance(op, n.Call) or len(op.args) < 2 or \
                not is_inplace_operator(consts.get(op.fn.id)) or \
                not any(a is op.args[0] for a in op.args[1:]):
            continue
        region = _region_of(fn.body, op)
        at = region.ops.index(op)
        f = n.Const(runtime.snapshot, [n.Value()], "runtime.snapshot", loc=op.loc)
        copy = n.Call(f.result, [op.args[0]], [], [n.Value(op.args[0].hint)], loc=op.loc)
        region.ops[at:at] = [f, copy]
        op.args = [op.args[0], *(copy.result if a is op.args[0] else a for a in op.args[1:])]


def _guard_inplace(fn: n.Function, analyses: Analyses) -> None:
    """Insert run-time checks before in-place operators the transforms cannot follow (see
    the module docstring, step 6): :func:`runtime.check_rebinding` where the first operand
    has a type unknown here and is read again after it, or was read out of a container or
    an object (a list or array changed in place would change it there too);
    :func:`runtime.check_view` where it may be an array, which must not be a view of
    another (``v = y[0]; v *= 2`` changes ``y``, under a name the derivative does not
    see)."""
    types_ = analyses.types()
    order = {id(op): k for k, op in enumerate(n.walk(fn.body))}
    uses: dict[int, list[int]] = {}
    consts: dict[int, Any] = {}
    defs: dict[int, n.Op] = {}
    items: set[int] = set()
    for op in n.walk(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for r in op.results:
            defs[r.id] = op
        if isinstance(op, n.For):
            items.add(op.body.args[0].id)
        for v in op.operands():
            uses.setdefault(v.id, []).append(order[id(op)])

    def checks(op: n.Call) -> list[Any]:
        a = op.args[0]
        t = types_.of(a)
        if t is not None and t is not numpy.ndarray:
            return []
        out = []
        borrowed = a.id in items or isinstance(defs.get(a.id), (n.GetItem, n.GetAttr, n.Unpack))
        if t is None and (borrowed or any(u > order[id(op)] for u in uses.get(a.id, []))):
            out.append(runtime.check_rebinding)
        if not any(c is runtime.check_rebinding for c in out):
            out.append(runtime.check_view)
        return out

    def region(r: n.Region) -> None:
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            f = consts.get(op.fn.id) if isinstance(op, n.Call) else None
            if isinstance(op, n.Call) and op.args and hashable(f) and f in _INPLACE:
                for guard in checks(op):
                    check = n.Const(guard, [n.Value()], loc=op.loc)
                    site = n.Const(op.loc, [n.Value()], origin="site", loc=op.loc)
                    call = n.Call(check.result, [op.args[0], site.result], [], [n.Value()],
                                  loc=op.loc)
                    r.ops[k:k] = [check, site, call]
                    k += 3
            for sub in op.regions():
                if not isinstance(op, n.MakeFunction):
                    region(sub)
            k += 1

    region(fn.body)


def _guard_unions(fn: n.Function, analyses: Analyses) -> None:
    """:func:`runtime.check_union` before ``a | b`` (``a |= b``) given a value of a type
    unknown here, in a user's function: the rules of ``|`` are those of bits (no
    derivative), and the union of dicts must not be taken for them (``devirtualize``
    makes a known dicts' union a display). Here, not in the transforms: activity takes
    ``|`` for a cut."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    unions = [op for op in n.walk(fn.body) if isinstance(op, n.Call) and
              hashable(f := consts.get(op.fn.id)) and f in (operator.or_, operator.ior)]
    if not unions:
        return
    types_ = analyses.types()

    def rewrite(op: n.Op) -> list[n.Op] | None:
        if op not in unions or op.kwargs or op.starred:  # type: ignore[union-attr]
            return None
        unknown = [a for a in op.args if types_.of(a) is None and  # type: ignore[union-attr]
                   a.id not in consts]
        if not unknown:
            return None
        check = n.Const(runtime.check_union, [n.Value()], loc=op.loc)
        site = n.Const(op.loc, [n.Value()], origin="site", loc=op.loc)
        call = n.Call(check.result, [site.result, *unknown], [], [n.Value()], loc=op.loc)
        return [check, site, call, op]

    expand_ops(fn.body, rewrite)


def _keyed_extremes(fn: n.Function) -> None:
    """``max(xs, key=f, default=d)`` -> ``seq = list(xs); k = keyed_extreme(seq, f, max);
    seq[k] if k >= 0 else d`` (likewise ``min``, and ``max(a, b, key=f)`` over ``(a, b)``)."""
    consts = {op.result.id: op for op in n.walk(fn.body) if isinstance(op, n.Const)}

    def rewrite(op: n.Op) -> list[n.Op] | None:
        c = consts.get(op.fn.id) if isinstance(op, n.Call) else None
        if c is not None and (c.value is builtins.max or c.value is builtins.min) and \
                op.kwargs and not op.starred and op.args and \
                all(name in ("key", "default") for name, _ in op.kwargs) and \
                (len(op.args) == 1 or all(name == "key" for name, _ in op.kwargs)):
            return _select_extreme(op, c.value)  # type: ignore[arg-type]
        return None

    expand_ops(fn.body, rewrite)


def _select_extreme(op: n.Call, extreme: Any) -> list[n.Op]:
    loc = op.loc
    kw = dict(op.kwargs)
    out: list[n.Op] = []

    def const(value: Any, origin: str | None = None) -> n.Value:
        c = n.Const(value, [n.Value()], origin, loc=loc)
        out.append(c)
        return c.result

    if len(op.args) == 1:
        seq = n.Call(const(builtins.list, "list"), [op.args[0]], [], [n.Value("items")], loc=loc)
    else:
        seq = n.Build("tuple", list(op.args), [n.Value("items")], loc=loc)
    out.append(seq)
    key = kw.get("key") or const(None)
    pick = n.Call(const(runtime.keyed_extreme, "keyed_extreme"),
                  [seq.result, key, const(extreme, extreme.__name__),
                   const("default" in kw)], [], [n.Value("best")], loc=loc)
    out.append(pick)
    if "default" not in kw:
        out.append(n.GetItem(seq.result, pick.result, op.results, loc=loc))
        return out
    found = n.Call(const(operator.ge, "operator.ge"), [pick.result, const(0)], [],
                   [n.Value()], loc=loc)
    out.append(found)
    item = n.GetItem(seq.result, pick.result, [n.Value()], loc=loc)
    then = n.Region([], [item, n.Yield([item.result], loc=loc)])
    orelse = n.Region([], [n.Yield([kw["default"]], loc=loc)])
    out.append(n.If(found.result, then, orelse, op.results, loc=loc))
    return out


def _live_dict_loops(fn: n.Function) -> None:
    """``for k, v in d.items()`` (and ``for v in d.values()``) whose body may change another
    entry of ``d`` as ``for k in d`` reading ``d[k]`` at each step, which is what iterating
    the view does (and which differentiation then refuses where it cannot follow it): the
    Python definitions of ``items``/``values`` make a list at the call, which a later write
    into another entry would leave stale. So too where the function writes into what ``d``
    holds (``d["w"][0] = c``): read at its keys, the values stay reached through ``d``
    alone, which reverse mode's writes into them need (``transforms/vjp_items.py``)."""
    from wengert.ir.uses import replace_uses
    from wengert.rules import python_defs

    kinds = {python_defs.dict_items: "items", python_defs.dict_values: "values"}
    uses: dict[int, int] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            uses[v.id] = uses.get(v.id, 0) + 1
    for op in list(n.walk(fn.body)):
        if not isinstance(op, n.For) or uses.get(op.iterable.id) != 1:
            continue
        call = _def_of(fn.body, op.iterable)
        if not isinstance(call, n.Call) or len(call.args) != 1 or call.kwargs or call.starred:
            continue
        c = _const_of(fn, call.fn)
        kind = kinds.get(c.value) if c is not None and hashable(c.value) else None
        if kind is None:
            continue
        d, item = call.args[0], op.body.args[0]
        if not (_writes_other_entries(op.body, d, item, kind) or
                _values_written_into(fn, d, op, kind)):
            continue  # the list made at the call is what the view shows at every step
        key = n.Value("key")
        read = n.GetItem(d, key, [n.Value(item.hint if kind == "values" else "value")],
                         loc=op.loc)
        new_ops: list[n.Op] = [read]
        if kind == "items":
            new_ops.append(n.Build("tuple", [key, read.result], [n.Value(item.hint)],
                                   loc=op.loc))
        op.body.ops[:0] = new_ops
        op.body.args[0] = key
        op.iterable = d
        _region_of(fn.body, call).ops.remove(call)
        replace_uses(fn, {item.id: new_ops[-1].result})


def _writes_other_entries(body: n.Region, d: n.Value, item: n.Value, kind: str) -> bool:
    """Whether the loop body may change ``d`` other than by ``d[k] = ...`` for the key ``k``
    it is at (a write the list of entries made at the loop's start already agrees with)."""
    key = None
    if kind == "items":
        unpack = next((op for op in body.ops if isinstance(op, n.Unpack) and op.value is item
                       and len(op.results) == 2), None)
        key = unpack.results[0] if unpack is not None else None
    for op in n.walk(body):
        if isinstance(op, n.SetItem) and op.obj is d:
            if key is None or op.index is not key:
                return True
        elif isinstance(op, n.GetAttr) and op.obj is d:
            if op.name not in ("get", "keys", "values", "items", "copy"):
                return True
        elif d in op.operands() and not isinstance(op, (n.GetItem, n.SetItem, n.GetAttr)):
            return True  # handed on: the callee may write into it
    return False


def _values_written_into(fn: n.Function, d: n.Value, loop: n.For, kind: str) -> bool:
    """Whether something in ``fn`` writes into a value of ``d`` read at a key
    (``d["w"][0] = c``, ``d["h"].append(c)``, ``d["p"].x = c``) or into the values the
    ``loop`` over ``d.values()`` (``d.items()``) gives."""
    held = {op.result.id for op in n.walk(fn.body)
            if isinstance(op, n.GetItem) and op.obj is d}
    item = loop.body.args[0]
    if kind == "values":
        held.add(item.id)
    else:
        held.update(op.results[1].id for op in loop.body.ops
                    if isinstance(op, n.Unpack) and op.value is item and
                    len(op.results) == 2)
    for op in n.walk(fn.body):
        if isinstance(op, (n.SetItem, n.SetAttr)) and op.obj.id in held or \
                isinstance(op, n.GetAttr) and op.obj.id in held and \
                method_may_write(op.name):
            return True
    return False


def _def_of(body: n.Region, v: n.Value) -> n.Op | None:
    return next((op for op in n.walk(body) if v in op.results), None)


def _python_definitions(fn: n.Function) -> None:
    """Calls of a builtin with a Python definition call the definition instead (inlined
    then like a helper); keywords it does not take leave the call as it is."""
    for op in n.walk(fn.body):
        if not isinstance(op, n.Call):
            continue
        d = next((x for x in [_const_of(fn, op.fn)] if x is not None), None)
        if d is None or not hashable(d.value):
            continue
        rule = registry.python_definition(d.value)
        if rule is None or not registry.takes_keywords(rule, [k for k, _ in op.kwargs]):
            continue
        d2 = n.Const(rule.python, [n.Value()], loc=op.loc)
        region = _region_of(fn.body, op)
        region.ops.insert(region.ops.index(op), d2)
        op.fn = d2.result


def _const_of(fn: n.Function, v: n.Value) -> n.Const | None:
    cache = getattr(fn, "_const_cache", None)
    if cache is None or v.id not in cache:
        cache = {op.result.id: op for op in n.walk(fn.body) if isinstance(op, n.Const)}
        fn._const_cache = cache  # type: ignore[attr-defined]
    return cache.get(v.id)


def _called_partials(fn: n.Function) -> None:
    """``g = functools.partial(f, *a, **k)`` used only as a callee: each ``g(*b, **l)`` is
    ``f(*a, *b, **k, **l)``, so ``f`` is called where it is known."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    uses: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
        if isinstance(op, n.MakeFunction):
            from wengert.ir.uses import free_uses
            for v in free_uses(op.func.body):
                uses.setdefault(v.id, []).append(op)
    for op in list(n.walk(fn.body)):
        if not (isinstance(op, n.Call) and consts.get(op.fn.id) is functools.partial and
                op.args and not op.starred and 0 not in op.starred and
                all(k is not None for k, _ in op.kwargs)):
            continue
        users = uses.get(op.result.id, [])
        if not users or not all(isinstance(u, n.Call) and u.fn is op.result and
                                op.result not in u.args and
                                all(v is not op.result for _, v in u.kwargs) for u in users):
            continue
        f, bound = op.args[0], op.args[1:]
        _region_of(fn.body, op).ops.remove(op)  # the partial object is not needed any more
        for u in users:
            later = {k for k, _ in u.kwargs}
            u.fn = f
            u.starred = tuple(i + len(bound) for i in u.starred)
            u.args = [*bound, *u.args]
            u.kwargs = [(k, v) for k, v in op.kwargs if k not in later] + list(u.kwargs)


def _fingerprint(fn: n.Function) -> tuple[int, ...]:
    """Which ops ``fn`` has (to tell whether a pass changed it)."""
    return tuple(id(op) for op in n.walk(fn.body))
