"""Forward type inference over the IR (:func:`infer_types`): a pass in program order over
each region, loops iterated to a fixpoint, the types of lists, dicts and fields assumed,
checked against every write and dropped where one disagrees.

The lattice, and why every rule must be sound, are the package's (:mod:`wengert.analysis.types`).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy

from wengert.analysis.effects.reads import (
    appended,
    consts_and_methods,
    facts_once,
    in_place_operator,
    item_writes,
    read_only,
    record_copies,
    recorded_values,
    reshaped,
    table_rows,
)
from wengert.analysis.effects.vocabulary import ITEM_REMOVING_METHODS
from wengert.analysis.fields import object_fields
from wengert.analysis.types.containers import (
    _widened,
    _writes_agree,
    fits,
)
from wengert.analysis.types.engine import _Inference
from wengert.analysis.types.lattice import (
    ArrayOf,
    DictOf,
    ListOf,
    ObjectOf,
    TupleOf,
    Type,
    Types,
    join,
    plain,
    unshaped,
)
from wengert.analysis.types.results import (
    _IMMUTABLE_NUMBERS,
    _SCALAR_SHAPED,
    _one_known,
    _plain_class,
)
from wengert.ir import nodes as n


def infer_types(fn: n.Function, param_types: Sequence[Type],
                free_types: Mapping[int, type] | None = None,
                callee: Callable[[Any, list[Type]], Type] | None = None,
                writes: Callable[[Any], Any] | None = None) -> Types:
    """Infer the types of ``fn``'s values (and its nested functions') from its parameters'.

    ``param_types[i]`` is the type of ``fn.body.args[i]`` (``None``: unknown);
    ``free_types`` types values defined outside ``fn`` that its body reads;
    ``callee(f, arg_types)`` gives the result type of a call of a known function the
    tables here do not cover (a user function with source), or ``None``; ``writes(f)`` the
    positions of the parameters such a function may write into (a list passed to one it
    does not write into keeps the items it holds).
    """
    if len(param_types) != len(fn.body.args):
        raise ValueError(f"{fn.name}: {len(param_types)} parameter types for "
                         f"{len(fn.body.args)} parameters")
    # The facts of the body each helper walks it for (its constants, its records...) are
    # found once per call: the body does not change while its types are inferred. (A call
    # made for a callee's types has its own: a callee may be rewritten while it is typed.)
    with facts_once():
        return _infer_types(fn, param_types, free_types, callee, writes)


def _infer_types(fn: n.Function, param_types: Sequence[Type],
                 free_types: Mapping[int, type] | None,
                 callee: Callable[[Any, list[Type]], Type] | None,
                 writes: Callable[[Any], Any] | None) -> Types:
    readonly = read_only(fn.body, writes)
    consts, methods = consts_and_methods(fn.body)
    shrinks = any(name in ITEM_REMOVING_METHODS for name in methods.values())
    shrunk = read_only(fn.body, writes, shrinking=True) if shrinks else set()
    in_place = [op for op in n.walk(fn.body) if in_place_operator(op, consts)]
    if in_place:
        # ``total += x`` changes nothing when ``total`` is a number: assume so, infer, and
        # keep what is found where every in-place operator's target is a number then (by
        # induction on the program's steps: the first to change a list or an array would
        # have a number as its target, a contradiction).
        assumed = read_only(fn.body, writes, numbers_in_place=True)
        assumed_shrunk = read_only(fn.body, writes, numbers_in_place=True,
                                    shrinking=True) if shrinks else set()
        if assumed != readonly or assumed_shrunk != shrunk:
            trial = _infer(fn, param_types, free_types, callee, writes, assumed,
                           assumed_shrunk)
            if all(trial.of(op.args[0]) in _IMMUTABLE_NUMBERS  # type: ignore[union-attr]
                   for op in in_place):
                return trial
    return _infer(fn, param_types, free_types, callee, writes, readonly, shrunk)


def _infer(fn: n.Function, param_types: Sequence[Type], free_types: Mapping[int, type] | None,
           callee: Callable[[Any, list[Type]], Type] | None,
           writes: Callable[[Any], Any] | None, readonly: set[int],
           shrunk: set[int] = frozenset()) -> Types:  # type: ignore[assignment]
    """:func:`infer_types` with the values only read (``read_only``) given, and those
    only read or shrunk (``shrinking``)."""
    reshapes = reshaped(fn.body, writes)
    written_items = item_writes(fn.body, writes)

    def run(fields: Mapping[tuple[type, str], type], lists: frozenset[int] = frozenset()
            ) -> _Inference:
        inf = _Inference(dict(free_types or {}), callee)
        inf.appended = appended(fn.body, writes, inf.stored_rows, inf.index_written)
        inf.readonly = readonly | lists
        inf.table_rows = table_rows(fn.body, inf.appended, inf.readonly, writes)
        inf.readonly |= inf.table_rows
        inf.kept = inf.readonly | shrunk
        inf.fields = fields
        for a, t in zip(fn.body.args, param_types):
            t = widened.get(a.id, t)
            if isinstance(t, (ListOf, DictOf)):
                if a.id in inf.readonly:
                    if isinstance(t, ListOf):
                        inf.items[a.id] = t.item
                    else:
                        inf.values[a.id] = t.value
                t = list if isinstance(t, ListOf) else dict
            elif isinstance(t, ArrayOf):
                inf.set(a, numpy.ndarray)
                if not reshapes:
                    inf.set_full(a, t)
                continue
            elif isinstance(t, TupleOf):
                inf.set_full(a, t)  # (a tuple cannot change: its entries stay as given)
                continue
            inf.set(a, plain(t))
        inf.region(fn.body)
        for lst in inf.appended:
            # A list made empty and only appended to holds what was appended throughout.
            if lst not in inf.items and lst in inf.defs and \
                    (it := inf.item_type(inf.defs[lst].result)) is not None:
                inf.items[lst] = it
        return inf

    # Lists changed only by writing, appending or popping items (``ys[i] = 0.5 * (ys[i] +
    # ys[i - 1])``): assume they keep the type of items they start with, infer, and drop
    # each list some write of which puts another type in (by induction on the writes,
    # the others hold items of their type throughout).
    # A new object written into such a list is taken at first for one of its items' type
    # where what makes it is of types only the fields' facts settle (``ps[0] = Body(c *
    # ps[0].x, v)``); if, with those facts, it is not, everything is inferred again without.
    # A parameter holding lists of floats given a new list holding ints as well (``d["z"]
    # = [k, c]``) holds lists of numbers (``_widened``).
    widened: dict[int, Type] = {}
    for lenient in (True, False):
        lists = frozenset(written_items)
        widened.clear()
        inf = run({}, lists)
        for _ in range(4):
            wrong = {v for v in lists if not _writes_agree(inf, v, written_items[v], lenient)}
            if not wrong:
                break
            wider = {v: w for v in wrong
                     if (w := _widened(inf, v, written_items[v], dict(zip(
                         (a.id for a in fn.body.args), param_types)).get(v))) is not None}
            widened.update(wider)
            lists -= wrong - set(wider)
            inf = run({}, lists)
        else:
            lists = frozenset()
            inf = run({})
        given = {a.id: t.fields for a, t in zip(fn.body.args, param_types)
                 if isinstance(t, ObjectOf)}
        # (the items of a list nothing changes are the objects the caller's list held)
        given_items = {a.id: t.item.fields for a, t in zip(fn.body.args, param_types)
                       if isinstance(t, ListOf) and isinstance(t.item, ObjectOf) and
                       (a.id in readonly or a.id in lists)}
        if any(isinstance(t, type) and _plain_class(t) for t in inf.types.values()):
            # The fields of objects the function makes and keeps: assume what its constructor
            # calls (else its writes) put there, check that every write agrees, and drop the
            # fields where one does not (each round only loses facts).
            # Values of unknown type may only be waiting for these facts: assume the one type
            # known of each field's values, infer again, and repeat until every value of every
            # field assumed is of its type (a field with a value of another type is dropped for
            # good). Without agreement in a few rounds, no field is typed.
            assumed: dict[tuple[type, str], type] = {}
            dropped: set[tuple[type, str]] = set()
            trial = inf
            # (what a generated gradient's loop records keep for its reverse loop are the
            # same objects there)
            copies = record_copies(fn.body)
            records = [op for op in n.walk(fn.body) if recorded_values(op, copies)]
            same = {u: x for op in records for x in recorded_values(op, copies)
                    for u in copies.of(op, x) or ()}
            # A field given lists of known items and lists whose items are not known yet
            # (``tr.hist = [tr.hist[0], c]``: known once the field is) is assumed to hold
            # lists of those items, and only lists where a round finds otherwise.
            demoted: set[tuple[type, str]] = set()

            def join(k: tuple[type, str], ts: list[Type]) -> Type:
                t = _one_known(ts)
                if t is list and k not in demoted:
                    items = {u for u in ts if isinstance(u, ListOf)}
                    if len(items) == 1:
                        return items.pop()
                return t

            for _ in range(8):
                found = object_fields(fn, trial.get, trial.consts, given, given_items, same,
                                      {id(op) for op in records}, trial.display_type)
                wrong = {k for k, t in assumed.items()
                         if any(u is not t and not fits(u, t) for u in found.get(k, ()))}
                demote = {k for k in wrong if isinstance(assumed[k], ListOf) and all(
                    u is list or isinstance(u, ListOf) for u in found.get(k, ()))}
                demoted |= demote
                wrong -= demote
                if assumed and not wrong and not demote and all(
                        k in assumed and not (assumed[k] is list and
                                              isinstance(join(k, ts), ListOf))
                        for k, ts in found.items() if k not in dropped and _one_known(ts)):
                    inf = trial
                    break
                dropped |= wrong
                assumed = {k: join(k, ts) for k, ts in found.items()
                           if k not in dropped and _one_known(ts) is not None}
                if not assumed:
                    break
                trial = run(assumed, lists)
        if not lenient or all(_writes_agree(inf, v, written_items[v]) for v in lists):
            break

    arrays, shapes = inf.arrays, inf.shapes
    if reshapes:  # (an array may change its shape in place: only numbers keep theirs)
        arrays = {k: unshaped(a) for k, a in arrays.items()}
        shapes = {k: s for k, s in shapes.items() if inf.types.get(k) in _SCALAR_SHAPED}
    entries = {k: tuple(es) for k, es in inf.entries.items() if inf.types.get(k) is tuple}
    return Types(types.MappingProxyType(inf.types), types.MappingProxyType(inf.items),
                 types.MappingProxyType(inf.values), types.MappingProxyType(arrays),
                 frozenset(inf.entry_writes), types.MappingProxyType(shapes),
                 types.MappingProxyType(entries))


def return_type(fn: n.Function, inferred: Types) -> Type:
    """The type ``fn`` returns (joined over its returns), given its inferred types."""
    rets = [op.value for op in fn.body.ops if isinstance(op, n.Return)]
    if not rets:
        return None
    t = inferred.of(rets[0])
    for v in rets[1:]:
        t = join(t, inferred.of(v))
    return t


