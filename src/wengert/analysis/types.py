"""Forward type inference over the IR: the exact Python type of a value, where it is known.

The lattice is flat: a value has one concrete type (``type(v)`` at run time, exactly,
never a supertype) or is unknown; joining two different types gives unknown. The
result feeds :mod:`wengert.transforms.specialize`, which folds a rule's
``isinstance`` fast paths at a call site, so every rule here must be *sound*: when
a callee could return something else for some input (a user ``__eq__``, a NumPy
scalar compared with a float, ``numpy.float64(array)``), the answer is unknown.
"""

from __future__ import annotations

import builtins
import dataclasses
import itertools
import operator
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy

from wengert import runtime
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
from wengert.analysis.effects.vocabulary import INPLACE_OPERATORS, ITEM_REMOVING_METHODS
from wengert.analysis.fields import object_fields
from wengert.ir import nodes as n
from wengert.ir.uses import replace_uses
from wengert.objects import hashable, is_namedtuple

Type = Any  # a type, :data:`FLOAT_OR_FLOAT64`, or None for "unknown"


@dataclass(frozen=True)
class OneOf:
    """A value's type is one of ``members`` (each exact), not known which: a float
    accumulator started at ``0.0`` that a loop adds NumPy scalars into is a ``float`` before
    the first step and a ``numpy.float64`` after it. Calls are typed for each member and the
    answers joined; ``isinstance`` folds where every member agrees (:func:`subclass`)."""

    members: tuple[type, ...]


#: The one union the lattice has: a Python float or a ``numpy.float64`` (both subclass
#: ``float``, so every float fast path of a rule applies to either).
FLOAT_OR_FLOAT64 = OneOf((float, numpy.float64))


#: An item of a container passed in holding ints and floats both (a dict ``{"w": 1, "h":
#: 0.5}``, particles whose ``x`` is ``0`` in one and ``0.3`` in another): a number, which
#: is differentiated where it is a float (an int's derivative is no derivative).
INT_OR_FLOAT = OneOf((int, float))


def subclass(t: Type, classes: Any) -> bool | None:
    """``issubclass(t, classes)`` for a type of the lattice; ``None`` when unknown (``t``
    unknown, or members of a union that disagree)."""
    if t is None:
        return None
    if isinstance(t, OneOf):
        answers = {issubclass(m, classes) for m in t.members}
        return answers.pop() if len(answers) == 1 else None
    return issubclass(t, classes)


@dataclass(frozen=True)
class ListOf:
    """A parameter type: a list whose items all have the exact type ``item`` (the API
    checks it on every call). Its value's type is ``list``; items read from it, by
    index or by iteration, have type ``item`` wherever the function cannot change it."""

    item: type


@dataclass(frozen=True)
class TupleOf:
    """An item type: a tuple whose entries have the exact types ``entries`` (``data =
    [(x, y), ...]`` of floats). Its value's type is ``tuple``; unpacking it gives the
    entries their types."""

    entries: tuple[type, ...]
    #: A named tuple of a class not known here (NumPy's ``EighResult``): its value's type
    #: is left unknown, so its fields are read as attributes, and only unpacking it or
    #: indexing it uses ``entries``.
    named: bool = False
    #: The named tuple class of an argument (its value's type; ``p.x`` is ``p[0]``).
    cls: type | None = None


@dataclass(frozen=True)
class ObjectOf:
    """A parameter type: an instance of the user's class ``cls`` (a dataclass or a plain
    class) whose attributes are ``fields``, each ``(name, exact type)`` (the API checks
    them on every call). Its value's type is ``cls``; reading a field gives its type until
    the function writes another there (``analysis.fields``), so ``p.x * p.v`` of a
    particle passed in is arithmetic on floats."""

    cls: type
    fields: tuple[tuple[str, type], ...]


@dataclass(frozen=True)
class DictOf:
    """A parameter type: a dict whose values all have the exact type ``value`` (the API
    checks it on every call). Its value's type is ``dict``; values read from it by key have
    type ``value`` wherever the function cannot change it."""

    value: type


@dataclass(frozen=True, eq=False)
class ArrayOf:
    """A parameter type: a NumPy array (exactly ``numpy.ndarray``) of ``ndim`` axes whose
    entries are ``dtype`` scalars (``numpy.float64``). Its value's type is ``numpy.ndarray``;
    an entry read with as many integer indices as it has axes is a ``dtype`` scalar, a row a
    smaller array. Made only by :func:`array_of`, one object per triple (compared by
    identity, so a derivation's key costs what a plain type costs).

    ``shape``, where known, is the array's shape: an argument's (the API specialises a
    function on the shapes of the arrays it is given, as ``jax.jit`` does, up to a few per
    function, :mod:`wengert.driver.binding`), and what elementwise operations, ``@`` and
    the array makers give from known shapes. Rule bodies specialised on it fold their
    shape arithmetic (``_sum_to`` of a cotangent that was never broadcast is the cotangent)."""

    dtype: type
    ndim: int
    shape: tuple[int, ...] | None = None


_ARRAYS: dict[tuple[type, int, tuple[int, ...] | None], ArrayOf] = {}


def plain(t: Any) -> Any:
    """The value type of a parameter type: ``numpy.ndarray`` for an :class:`ArrayOf`,
    ``list`` for a :class:`ListOf`, ``dict`` for a :class:`DictOf`, else ``t``."""
    if isinstance(t, ArrayOf):
        return numpy.ndarray
    if isinstance(t, ListOf):
        return list
    if isinstance(t, DictOf):
        return dict
    if isinstance(t, TupleOf):
        return t.cls if t.cls is not None else None if t.named else tuple
    if isinstance(t, ObjectOf):
        return t.cls
    return t


def unshaped(t: Any) -> Any:
    """``t`` without a shape: what a callee's derivation is specialised on (shapes are the
    API's arguments' alone, so a recursion on smaller and smaller arrays derives its
    function once, not once per size)."""
    if type(t) is ArrayOf and t.shape is not None:
        return array_of(t.dtype, t.ndim)
    return t


def array_of(dtype: type, ndim: int, shape: tuple[int, ...] | None = None) -> ArrayOf:
    """The :class:`ArrayOf` of ``ndim`` axes of ``dtype`` scalars (of ``shape``, if given)."""
    t = _ARRAYS.get((dtype, ndim, shape))
    if t is None:
        t = _ARRAYS[dtype, ndim, shape] = ArrayOf(dtype, ndim, shape)
    return t


@dataclass(frozen=True)
class Constant:
    """A parameter type: the argument is this very object (a function passed in, when a
    derivative is taken of a derivative), so the derivation treats the parameter as a
    constant of the program (:func:`bind_constants`) and calls of it are calls of a known
    function, differentiated again like any other."""

    value: Any


#: Functions passed in that a derivative of a derivative takes as constants: Python
#: functions, builtins (``math.sin``) and built-in types' methods (``dict.items``). (A
#: bound method or a ``functools.partial`` is still dispatched.)
FUNCTION_VALUES = (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                   types.WrapperDescriptorType)


def bind_constants(fn: n.Function, param_types: Sequence[Any]) -> list[Any]:
    """Replace the parameters of ``fn`` typed :class:`Constant` by their values (a ``Const``
    at the top of its body, in place); return the parameter types with each of those the
    type of its value."""
    mapping: dict[int, n.Value] = {}
    consts: list[n.Op] = []
    out = []
    for a, t in zip(fn.body.args, param_types):
        if isinstance(t, Constant):
            c = n.Const(t.value, [n.Value(a.hint)])
            consts.append(c)
            mapping[a.id] = c.result
            t = type(t.value)
        out.append(t)
    if mapping:
        fn.body.ops[:0] = consts
        replace_uses(fn, mapping)
    return out


@dataclass(frozen=True)
class Types:
    """The inferred types of a function's values, keyed by value id (absent means unknown)."""

    by_id: Mapping[int, type]
    #: The type of every item of list values that hold one type throughout.
    items: Mapping[int, type] = field(default_factory=dict)
    #: The type of every value of dict values that hold one type throughout.
    values: Mapping[int, type] = field(default_factory=dict)
    #: The entry type and number of axes of arrays known to have them.
    arrays: Mapping[int, ArrayOf] = field(default_factory=dict)
    #: ``(array id, index id)`` of writes ``a[index] = v`` that set one entry of such an
    #: array (as many integers as it has axes).
    entry_writes: frozenset[tuple[int, int]] = frozenset()
    #: The NumPy shape of values where known: ``()`` for numbers, an array's from its
    #: :class:`ArrayOf`, and what elementwise operations, ``@`` and the primitives that
    #: declare it (``registry.mark_result_shape``) make of known shapes.
    shapes: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def of(self, v: n.Value) -> type | None:
        """The exact type of ``v`` at run time, or ``None`` when it is not known."""
        return self.by_id.get(v.id)

    def param_type(self, v: n.Value) -> Any:
        """``v``'s type as a parameter type: :class:`ListOf` for a list of known items,
        :class:`DictOf` for a dict of known values."""
        if v.id in self.items:
            return ListOf(self.items[v.id])
        if v.id in self.values:
            return DictOf(self.values[v.id])
        if v.id in self.arrays:
            return unshaped(self.arrays[v.id])
        return self.by_id.get(v.id)


def join(a: Type, b: Type) -> Type:
    """The least upper bound: equal types stay, a ``float`` and a ``numpy.float64`` (or
    either and their union) give :data:`FLOAT_OR_FLOAT64`, anything else is unknown."""
    if a is b:
        return a
    if a in _FLOAT_KINDS and b in _FLOAT_KINDS:
        return FLOAT_OR_FLOAT64
    if (a is INT_OR_FLOAT or b is INT_OR_FLOAT) and a in _INT_FLOAT and b in _INT_FLOAT:
        return INT_OR_FLOAT  # (a float written where ints and floats both were)
    return None


_FLOAT_KINDS = (float, numpy.float64, FLOAT_OR_FLOAT64)
_INT_FLOAT = (int, float, INT_OR_FLOAT)


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


#: A value no constant is (``consts.get(v, _NOT_CONST)``).
_NOT_CONST = object()


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
        inf.appended = appended(fn.body, writes, inf.stored_rows)
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
    return Types(types.MappingProxyType(inf.types), types.MappingProxyType(inf.items),
                 types.MappingProxyType(inf.values), types.MappingProxyType(arrays),
                 frozenset(inf.entry_writes), types.MappingProxyType(shapes))


def _writes_agree(inf: _Inference, vid: int, found: list[tuple[n.Value, n.Value | None]],
                  lenient: bool = False) -> bool:
    """Whether every item written into the list ``vid`` is of the type its items were
    assumed to have (under an int index), or into the dict ``vid`` of the type its values
    were assumed to have (under any key), or nothing was assumed of its items. With
    ``lenient``, a new object's field values of unknown type count as fitting
    (:func:`_new_object_of`)."""
    if vid in inf.values:
        value = inf.values[vid]
        return all(k is not None and (fits(inf.full_type(w), value) or
                                      _read_from(inf, w, vid) or
                                      _new_object_of(inf, w, value, lenient))
                   for w, k in found)
    item = inf.items.get(vid)
    if item is None:
        return True
    return all((fits(inf.full_type(w), item) or _read_from(inf, w, vid) or
                _new_object_of(inf, w, item, lenient)) and
               (k is None or inf.get(k) is int) for w, k in found)


#: The kinds of number a field holding numbers may hold.
_NUMBER_KINDS = frozenset({int, float, INT_OR_FLOAT})


def _widened(inf: _Inference, vid: int, found: list[tuple[n.Value, n.Value | None]],
             given: Type) -> Type:
    """For a parameter ``vid`` of type ``given`` holding lists of floats (a dict of them,
    or a list), into which ``found`` puts list displays of numbers some of them ints: the
    type holding lists of :data:`INT_OR_FLOAT` instead; else ``None``."""
    if isinstance(given, DictOf) and isinstance(given.value, ListOf):
        wide = DictOf(ListOf(INT_OR_FLOAT))
    elif isinstance(given, ListOf) and isinstance(given.item, ListOf):
        wide = ListOf(ListOf(INT_OR_FLOAT))
    else:
        return None
    inner = given.value if isinstance(given, DictOf) else given.item
    if inner.item not in _NUMBER_KINDS:
        return None
    for w, _ in found:
        d = inf.defs.get(w.id)
        if not (isinstance(d, n.Build) and d.kind == "list" and not d.starred and
                all(inf.get(x) in _NUMBER_KINDS for x in d.items)) and \
                not _read_from(inf, w, vid):
            return None
    return wide


def _new_object_of(inf: _Inference, w: n.Value, item: Type, lenient: bool) -> bool:
    """Whether ``w`` is a new instance of the dataclass of ``item`` (an :class:`ObjectOf`)
    made by its generated ``__init__`` from values of its fields' types there (``ps[0] =
    Body(c * ps[0].x, ps[0].v)``), defaults included, or a list display of values of the
    type of the items of ``item`` (a :class:`ListOf`): an item of the type the others
    have."""
    d = inf.defs.get(w.id)
    if isinstance(item, ListOf):
        # (a new list of numbers: ``d["z"] = [c, 2 * c]`` into a dict of lists of floats)
        return isinstance(d, n.Build) and d.kind == "list" and not d.starred and all(
            fits(t := inf.full_type(x), item.item) or lenient and t is None
            for x in d.items)
    if not isinstance(item, ObjectOf):
        return False
    cls = item.cls
    if not (isinstance(d, n.Call) and not d.starred and dataclasses.is_dataclass(cls) and
            inf.consts.get(d.fn.id, _NOT_CONST) is cls) or \
            hasattr(cls, "__post_init__") or \
            getattr(getattr(cls.__init__, "__code__", None), "co_filename", "") != "<string>":
        return False
    fields = dataclasses.fields(cls)
    if not all(f.init for f in fields) or len(d.args) > len(fields):
        return False
    given = {f.name: inf.full_type(a) for f, a in zip(fields, d.args)}
    for name, a in d.kwargs:
        if name in given:
            return False
        given[name] = inf.full_type(a)
    for f in fields:
        if f.name not in given:
            if f.default is dataclasses.MISSING:
                return False  # (a default_factory's value, or a call Python refuses)
            given[f.name] = type(f.default)
    want = dict(item.fields)
    # (a number of another kind where numbers were, ``Q(1, c)``: the facts of the class's
    # fields join every value put there, ``analysis.fields``)
    return set(want) == set(given) and all(
        fits(given[k], want[k]) or lenient and given[k] is None or
        given[k] in _NUMBER_KINDS and want[k] in _NUMBER_KINDS for k in want)


def fits(t: Type, assumed: Type) -> bool:
    """Whether a value of type ``t`` may stand where ``assumed`` was (a float or an int
    written where numbers of either kind are, a list of known items where lists are)."""
    return t == assumed or assumed is INT_OR_FLOAT and t in (int, float, INT_OR_FLOAT) or \
        assumed is list and isinstance(t, ListOf)


def _read_from(inf: _Inference, w: n.Value, vid: int) -> bool:
    """Whether ``w`` is an item read out of the list (or dict) ``vid`` itself (``ps[i] = p``
    for ``p = ps[j]``, ``transforms/vjp_items.py``): it has the type its items have."""
    d = inf.defs.get(w.id)
    return isinstance(d, n.GetItem) and d.obj.id == vid


def return_type(fn: n.Function, inferred: Types) -> Type:
    """The type ``fn`` returns (joined over its returns), given its inferred types."""
    rets = [op.value for op in fn.body.ops if isinstance(op, n.Return)]
    if not rets:
        return None
    t = inferred.of(rets[0])
    for v in rets[1:]:
        t = join(t, inferred.of(v))
    return t


# ----------------------------------------------------------------------------- call tables

_INTS = (bool, int)
#: Types of values whose NumPy shape is ``()``.
_SCALAR_SHAPED = frozenset({bool, int, float, numpy.float64, numpy.float32, numpy.int64,
                      FLOAT_OR_FLOAT64})
#: Types a ``numpy.float64`` computes with to give a ``numpy.float64``.
_F64_PARTNERS = (bool, int, float, numpy.float64, numpy.float32, numpy.int64)
#: Index types that select one entry along an axis (``True`` adds an axis instead).
_INDEX_INTS = (int, numpy.int64, numpy.intp, numpy.int32)
_NUMBERS = (bool, int, float)
#: Numbers an in-place operator makes a new one of (``x += 1`` changes no object).
_IMMUTABLE_NUMBERS = (bool, int, float, complex, numpy.float64, numpy.float32, numpy.int64)
#: Types whose comparisons always give a ``bool`` (or raise), whatever the other operand.
_PLAIN = frozenset({bool, int, float, complex, str, bytes, type(None), tuple, list, dict, set,
                    frozenset, range})

_ARITH = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.iadd, operator.isub, operator.imul,
          operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow,
          runtime.add_floats}
_ADDS = {operator.add, operator.iadd, operator.concat, operator.iconcat, runtime.add_floats}
_MULS = {operator.mul, operator.imul}
_DIVS = {operator.truediv, operator.itruediv}
_POWS = {operator.pow, operator.ipow}
_MODS = {operator.mod, operator.imod}
_UNARY = {operator.neg, operator.pos, operator.abs, builtins.abs}
_RICH = {operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge}
_ALWAYS_BOOL = {operator.is_, operator.is_not, operator.not_, operator.truth,
                operator.contains, runtime.contained_in, runtime.not_contained_in}

#: Builtins whose result type does not depend on their arguments.
_BUILTIN_RESULT: dict[Any, type] = {
    float: float, int: int, bool: bool, str: str, bytes: bytes, complex: complex, len: int,
    range: range, slice: slice, isinstance: bool, issubclass: bool, callable: bool,
    hasattr: bool, list: list, tuple: tuple, dict: dict, set: set, frozenset: frozenset,
    zip: zip, enumerate: enumerate, map: map, filter: filter, sorted: list, repr: str,
    format: str, chr: str, ord: int, id: int, hash: int,
}
_REVERSED = {list: type(reversed([])), tuple: reversed, range: type(reversed(range(0)))}

_MATH_INT = frozenset({"factorial", "gcd", "lcm", "isqrt", "comb", "perm"})
_MATH_ROUNDING = frozenset({"floor", "ceil", "trunc"})  # int for real numbers only
_MATH_BOOL = frozenset({"isnan", "isinf", "isfinite", "isclose"})
_MATH_TUPLE = frozenset({"frexp", "modf"})
_MATH_UNKNOWN = frozenset({"prod", "sumprod"})  # the type of their items


#: NumPy functions whose result may be a NumPy scalar rather than an array (reductions,
#: contractions, determinants) even for array arguments.
_NUMPY_MAY_REDUCE = frozenset({
    "sum", "mean", "prod", "max", "min", "amax", "amin", "ptp", "std", "var", "average",
    "median", "dot", "vdot", "inner", "trace", "norm", "det", "einsum", "any", "all",
    "argmax", "argmin", "count_nonzero", "nansum", "nanmean", "nanmax", "nanmin", "matmul",
    "logdet", "cond", "matrix_rank", "item", "tensordot", "logsumexp", "percentile",
    "quantile", "searchsorted", "slogdet", "shape", "ndim", "size", "isscalar", "result_type",
    "allclose", "array_equal", "iscomplexobj", "isrealobj",
})


def _numpy(fn: Any, args: list[Type]) -> Type:
    """The type of a NumPy function's result: an array when an argument is one (or the
    function builds arrays), unless it may reduce to a scalar."""
    name = getattr(fn, "__name__", "")
    if name in _NUMPY_MAY_REDUCE:
        return None
    if isinstance(fn, numpy.ufunc):
        if any(t is numpy.ndarray for t in args):
            return numpy.ndarray if fn.nout == 1 else tuple
        return None  # NumPy scalars of the arguments' types
    if name in _NUMPY_SEVERAL:
        return None
    if any(t is numpy.ndarray for t in args) or name in _NUMPY_BUILDERS:
        return numpy.ndarray
    return None


#: NumPy functions that build a new array whatever their arguments.
_NUMPY_BUILDERS = frozenset({
    "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "identity",
    "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "diag",
    "outer", "kron", "copy", "tri", "triu", "tril",
})
#: NumPy functions returning a list or tuple of arrays (one array for one argument).
_NUMPY_SEVERAL = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit",
                            "broadcast_arrays", "meshgrid", "atleast_1d", "atleast_2d",
                            "atleast_3d"})


def _hashable_get(table: Mapping[Any, Any], key: Any) -> Any:
    try:
        return table.get(key)
    except TypeError:
        return None


def _numpy_scalar(t: Type) -> bool:
    return t is not None and issubclass(t, (numpy.floating, numpy.integer))


def _arith(fn: Any, a: Type, b: Type) -> Type:
    """The type of ``fn(a, b)`` for a binary arithmetic operator."""
    if fn in _MODS and a in (str, bytes):
        return a  # printf-style formatting, whatever the right operand
    if (a is numpy.ndarray or b is numpy.ndarray) and a not in (str, bytes):
        return numpy.ndarray  # (bytes + array concatenates the array's buffer)
    if a in _INTS and b in _INTS:
        if fn in _DIVS:
            return float
        # (``2 ** -1`` is a float, ``(-1) ** j`` an int: one of the two, which a product
        # with a float makes a float)
        return INT_OR_FLOAT if fn in _POWS else int
    if a in _NUMBERS and b in _NUMBERS:
        return float
    if (a is numpy.float64 and b in _F64_PARTNERS) or (b is numpy.float64 and a in _F64_PARTNERS):
        return numpy.float64  # (a float subclass: float's operators defer to its own)
    if a is b and _numpy_scalar(a):
        return numpy.float64 if fn in _DIVS and issubclass(a, numpy.integer) else a
    if fn in _ADDS and a is b and a in (list, tuple, str, bytes):
        return a
    if fn in _MULS:
        if a in (list, tuple, str, bytes) and b in _INTS:
            return a
        if b in (list, tuple, str, bytes) and a in _INTS:
            return b
    return None


def _unary(a: Type) -> Type:
    if a in _INTS:
        return int
    if a is float or a is numpy.ndarray or _numpy_scalar(a):
        return a
    return None


def _math(name: str, args: list[Type]) -> Type:
    if name in _MATH_BOOL:
        return bool
    if name in _MATH_INT:
        return int
    if name in _MATH_ROUNDING:
        # math.floor(x) calls x.__floor__, which may return anything for other types.
        return int if args and args[0] in _NUMBERS else None
    if name in _MATH_TUPLE:
        return tuple
    if name in _MATH_UNKNOWN:
        return None
    return float


def _builtin(fn: Any, args: list[Type], simple: bool) -> Type:
    """The type of a builtin call; ``simple`` when it has positional arguments only."""
    if fn is round and simple:
        if len(args) == 1:
            return int if args[0] in _NUMBERS else None
        if len(args) == 2 and args[0] in (int, float) and args[1] in _INTS:
            return args[0]
        return None
    if fn in (min, max):
        if simple and len(args) >= 2 and all(t is args[0] for t in args):
            return args[0]
        if simple and len(args) >= 2 and all(t in _INT_FLOAT for t in args):
            return INT_OR_FLOAT  # (``min(a, 3)``: the float or the int, whichever is less)
        return None
    if fn is reversed:
        return _REVERSED.get(args[0]) if simple and len(args) == 1 else None
    if fn is pow:
        return _arith(operator.pow, args[0], args[1]) if simple and len(args) == 2 else None
    return _hashable_get(_BUILTIN_RESULT, fn)


def _one_known(ts: list[Type]) -> Type:
    """The one type among ``ts`` other than unknown, or ``None`` (ints and floats: a
    number; lists of known and unknown items: a list)."""
    known = {t for t in ts if t is not None}
    if len(known) > 1 and known <= set(_INT_FLOAT):
        return INT_OR_FLOAT  # (a field holding ints and floats both: a number)
    if len(known) > 1 and all(t is list or isinstance(t, ListOf) for t in known):
        return list  # (a list of floats passed in, another list put there: a list)
    return known.pop() if len(known) == 1 else None


def _plain_class(t: type) -> bool:
    return type(t) is type and t.__module__ != "builtins" and t.__new__ is object.__new__


def _class_call(cls: type) -> Type:
    # Only a plain class is sure to return an instance of itself (``Path()`` builds a
    # ``PosixPath``, ``numpy.float64(array)`` returns an array).
    if type(cls) is type and cls.__new__ is object.__new__:
        return cls
    return None


def _call(fn: Any, args: list[Type], simple: bool) -> Type:
    """The result type of ``fn(*args)`` where the callee ``fn`` is a known object."""
    try:
        hash(fn)
    except TypeError:
        return None  # not a function or class these tables know
    if fn in _ALWAYS_BOOL:
        return bool
    if fn in _RICH:
        # User __eq__, NumPy scalars (numpy.bool_) and arrays decide for themselves.
        return bool if len(args) == 2 and all(t in _PLAIN for t in args) else None
    if fn in (operator.matmul, operator.imatmul) and simple and len(args) == 2 and \
            all(t is numpy.ndarray for t in args):
        # An array, or for two vectors a NumPy scalar: like the elementwise operators on
        # 0-d arrays, one the rules' array branches handle as they handle an array.
        return numpy.ndarray
    if fn in _ARITH or fn in (operator.concat, operator.iconcat):
        return _arith(fn, args[0], args[1]) if simple and len(args) == 2 else None
    if fn is runtime.make_namedtuple:
        return None  # the class is an argument: the call site knows it (see ``call``)
    if fn is runtime.snapshot and simple and len(args) == 1:
        return args[0]  # a copy of a container, the value itself otherwise
    if fn is runtime.nonzero and simple and len(args) == 2 and args[1] is numpy.ndarray and \
            args[0] in (None, numpy.ndarray, type(None)):
        return numpy.ndarray  # an array's adjoint, or zeros shaped like it
    if fn is runtime.add_adjoint and simple and len(args) == 2:
        # Adjoints of one value: ``None`` is a zero, two numbers add like ``+``.
        a, b = args
        if a is type(None) or b is type(None):
            return b if a is type(None) else a
        return _arith(operator.add, a, b) if a is b and a in (float, int) else None
    if fn in _UNARY:
        return _unary(args[0]) if simple and len(args) == 1 else None
    if getattr(fn, "__module__", None) == "math" and callable(fn):
        return _math(getattr(fn, "__name__", ""), args)
    if getattr(fn, "__module__", None) == "builtins":
        return _builtin(fn, args, simple)
    if isinstance(fn, numpy.ufunc) or not isinstance(fn, type) and \
            str(getattr(fn, "__module__", None)).startswith("numpy"):
        return _numpy(fn, args) if simple else None
    if isinstance(fn, type):
        return _class_call(fn)
    if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
        from wengert.rules import registry  # the rule tables import this module's users

        rule = registry.lookup(fn)
        if rule is not None and rule.array_result and simple and \
                (numpy.ndarray in args or list in args):
            # (a list given to a NumPy primitive is read as an array: ``np.outer([x, y], w)``)
            return numpy.ndarray
        if rule is not None and rule.nondifferentiable:
            # The static helpers of the NumPy definitions say what they return.
            ann = str(getattr(fn, "__annotations__", {}).get("return", ""))
            return _ANNOTATED.get(ann.split("[")[0])
    return None


def _lifted(fn: Any, args: list[Type], simple: bool) -> Type:
    """:func:`_call` where arguments may be unions: the join of its answers for every
    choice of their members."""
    unions = [k for k, t in enumerate(args) if isinstance(t, OneOf)]
    if not unions:
        return _call(fn, args, simple)
    if len(unions) > 3:
        return None
    out: Type = None
    for k, choice in enumerate(itertools.product(*(args[i].members for i in unions))):
        trial = list(args)
        for i, m in zip(unions, choice):
            trial[i] = m
        t = _call(fn, trial, simple)
        if t is None:
            return None
        if k == 0:
            out = t
        elif INT_OR_FLOAT in args and {out, t} <= set(_INT_FLOAT):
            # (ints and floats both, from numbers of either kind: a number too)
            out = out if out == t else INT_OR_FLOAT
        else:
            out = join(out, t)
    return out


#: NumPy functions making an array of the dtype and number of axes of their first argument.
_LIKE = frozenset({numpy.zeros_like, numpy.ones_like, numpy.empty_like, numpy.full_like,
                   numpy.copy})
#: Numbers that computing elementwise with a float64 array keeps it float64.
_REAL_SCALARS = (bool, int, float, numpy.float64, FLOAT_OR_FLOAT64)
_ELEMENTWISE = frozenset({operator.add, operator.sub, operator.mul, operator.truediv,
                          operator.pow, operator.neg, operator.pos, operator.abs,
                          operator.iadd, operator.isub, operator.imul, operator.itruediv,
                          operator.ipow, operator.mod, operator.floordiv, abs})


def _join_full(a: Any, b: Any) -> Any:
    """:func:`join` that keeps an :class:`ArrayOf` (or a :class:`ListOf`) both sides agree
    on."""
    if a is b or a == b and isinstance(a, ListOf):
        return a
    if isinstance(a, ArrayOf) and isinstance(b, ArrayOf) and a.dtype is b.dtype and \
            a.ndim == b.ndim:
        return array_of(a.dtype, a.ndim)  # (shapes that differ: the axes are known)
    return join(plain(a), plain(b))


def _matmul_ndim(a: int, b: int) -> int | None:
    """The number of axes of ``x @ y`` for ``x``, ``y`` of ``a``, ``b`` axes (``None``:
    an error)."""
    if a == 0 or b == 0:
        return None
    if a == 1 or b == 1:
        return a + b - 2
    return max(a, b)


def _broadcast_shape(shapes: list[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """The shape arrays of ``shapes`` broadcast to (``None``: one is unknown, or they do
    not broadcast, which the operation itself reports when it runs)."""
    if any(s is None for s in shapes):
        return None
    try:
        return tuple(numpy.broadcast_shapes(*shapes))  # type: ignore[arg-type]
    except ValueError:
        return None


def _matmul_shape(a: tuple[int, ...] | None, b: tuple[int, ...] | None
                  ) -> tuple[int, ...] | None:
    """The shape of ``x @ y`` for ``x``, ``y`` of shapes ``a``, ``b`` (``None``: unknown,
    or an error the product reports when it runs)."""
    if a is None or b is None or not a or not b:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        return None
    stack = _broadcast_shape([a2[:-2], b2[:-2]])
    if stack is None:
        return None
    return stack + a2[-2:-1] * (len(a) > 1) + b2[-1:] * (len(b) > 1)


def _float_elementwise(fn: Any) -> bool:
    """Whether ``fn`` computes entry by entry, float64 entries giving float64 ones (a
    broadcasting operator, or a ufunc with a float64 loop: not ``isnan``, not ``@``)."""
    if isinstance(fn, numpy.ufunc):
        return fn.nout == 1 and "d" * fn.nin + "->d" in fn.types
    return fn in _ELEMENTWISE


#: NumPy functions making a float64 array of a shape given as their one argument.
_FLOAT_MAKERS = frozenset({numpy.zeros, numpy.ones, numpy.empty})


#: Return annotations of wengert's own helpers, as types.
_ANNOTATED = {"int": int, "bool": bool, "float": float, "str": str, "tuple": tuple,
              "list": list}


def _entry_shape(shape: tuple[int, ...] | None, parts: list[Any]) -> tuple[int, ...] | None:
    """The shape of ``x[parts]`` for ``x`` of ``shape`` where each part is a constant int,
    ``None`` or ``:`` (``None``: another index, or ``shape`` unknown)."""
    if shape is None:
        return None
    out: list[int] = []
    axis = 0
    for p in parts:
        if p is None:
            out.append(1)
        elif type(p) is int and axis < len(shape) and -shape[axis] <= p < shape[axis]:
            axis += 1
        elif p == slice(None) and axis < len(shape):
            out.append(shape[axis])
            axis += 1
        else:
            return None
    return tuple(out) + shape[axis:]


def _for_item(t: Type) -> Type:
    if t is range or t is _REVERSED[range]:
        return int  # (``for i in reversed(range(n))`` too)
    if t is str:
        return str
    if t in (enumerate, zip):
        return tuple
    return None


def _diverges(region: n.Region) -> bool:
    """Whether ``region`` always raises, so its yield is never reached."""
    return any(isinstance(op, n.Raise) for op in region.ops)


# ----------------------------------------------------------------------------- inference


class _Inference:
    """Abstract interpretation of a function body in program order (one handler per op kind)."""

    def __init__(self, known: dict[int, type],
                 callee: Callable[[Any, list[Type]], Type] | None = None) -> None:
        self.types = known
        self.callee = callee
        self.consts: dict[int, Any] = {}
        #: Append-only lists and what is appended to them (see ``appended``).
        self.appended: dict[int, list[n.Value]] = {}
        #: Those of them appended to another list (rows of a table).
        self.stored_rows: set[int] = set()
        #: Rows of tables, and the displays they are made of (``table_rows``).
        self.table_rows: set[int] = set()
        #: Loop variables iterating over such a list (or its ``reversed``): the list.
        self.item_of: dict[int, int] = {}
        self.defs: dict[int, n.Op] = {}
        self.reversed_of: dict[int, int] = {}
        #: Item types of lists that hold one type throughout (``ListOf`` parameters).
        self.items: dict[int, type] = {}
        #: Values only ever read (never written into, nor handed to code that might).
        self.readonly: set[int] = set()
        #: ``readonly`` and the lists only shrunk or reordered (:func:`read_only`): the
        #: items they hold keep the types they were made with.
        self.kept: set[int] = set()
        #: Value types of dicts that hold one type throughout (``DictOf`` parameters).
        self.values: dict[int, type] = {}
        #: The dtype and number of axes of arrays known to have them (``ArrayOf``).
        self.arrays: dict[int, ArrayOf] = {}
        #: Writes into one entry of such an array (see ``Types.entry_writes``).
        self.entry_writes: set[tuple[int, int]] = set()
        #: Shapes of values where known (see ``Types.shapes``).
        self.shapes: dict[int, tuple[int, ...]] = {}
        #: The types of the fields of objects the function makes (see ``fields``).
        self.fields: Mapping[tuple[type, str], type] = {}
        #: Loop variables over ``zip``/``enumerate`` of such lists: their entries' types.
        self.entries: dict[int, list[Type]] = {}
        self.handlers: dict[type, Callable[[Any], None]] = {
            n.Const: self.const, n.Call: self.call, n.Build: self.build,
            n.BuildDict: self.build_dict, n.BuildSlice: self.fixed(slice),
            n.JoinStr: self.fixed(str), n.FormatValue: self.fixed(str),
            n.GetItem: self.getitem, n.MakeFunction: self.make_function, n.If: self.if_,
            n.For: self.for_, n.While: self.while_, n.With: self.with_,
            n.Unpack: self.unpack, n.GetAttr: self.getattr, n.SetItem: self.setitem,
        }

    def get(self, v: n.Value) -> Type:
        return self.types.get(v.id)

    def set(self, v: n.Value, t: Type) -> None:
        self.arrays.pop(v.id, None)  # (``set_full`` gives an array its axes again)
        if t in _SCALAR_SHAPED:
            self.shapes[v.id] = ()
        else:
            self.shapes.pop(v.id, None)
        if t is None:
            self.types.pop(v.id, None)
        else:
            self.types[v.id] = t

    def region(self, region: n.Region) -> None:
        for op in region.ops:
            for r in op.results:
                self.defs[r.id] = op
            handler = self.handlers.get(type(op))
            if handler is not None:
                handler(op)
                if type(op) is n.Call and op.result.id not in self.shapes and \
                        self.get(op.result) is numpy.ndarray and \
                        (shape := self.call_shape(op)) is not None:
                    self.shapes[op.result.id] = shape
                    a = self.arrays.get(op.result.id)
                    if a is not None and a.ndim == len(shape):
                        self.arrays[op.result.id] = array_of(a.dtype, a.ndim, shape)
            else:  # GetAttr, Unpack: unknown; mutation and terminators define nothing
                for r in op.results:
                    self.set(r, None)

    def call_shape(self, op: n.Call) -> tuple[int, ...] | None:
        """The shape of what the call ``op`` gives, from its arguments' where known: a
        broadcast of theirs for an elementwise operation, a product's for ``@``, what a
        primitive declares (``registry.mark_result_shape``)."""
        fn = self.consts.get(op.fn.id, _NOT_CONST)
        if op.kwargs or op.starred or not hashable(fn):
            return None
        shapes = [self.shapes.get(a.id) for a in op.args]
        if _float_elementwise(fn) or isinstance(fn, numpy.ufunc) and fn.nout == 1 and \
                fn.signature is None:
            return _broadcast_shape(shapes)
        if fn in (operator.matmul, numpy.matmul) and len(shapes) == 2:
            return _matmul_shape(shapes[0], shapes[1])
        if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
            from wengert.rules import registry  # the rule tables import this module's users

            rule = registry.lookup(fn)
            if rule is not None and rule.result_shape is not None:
                try:
                    shape = rule.result_shape(shapes, [self.consts.get(a.id, registry.UNKNOWN)
                                                       for a in op.args])
                except Exception:  # (the call reports it when it runs)
                    return None
                if type(shape) is tuple and all(type(k) is int for k in shape):
                    return shape
        return None

    def fixed(self, t: type) -> Callable[[n.Op], None]:
        return lambda op: self.set(op.result, t)

    def const(self, op: n.Const) -> None:
        self.consts[op.result.id] = op.value
        self.set(op.result, type(op.value))

    def build(self, op: n.Build) -> None:
        self.set(op.result, {"tuple": tuple, "list": list, "set": set}[op.kind])
        if op.kind == "list" and op.items and not op.starred and \
                op.result.id in self.readonly:
            # A list display nothing changes to another type holds what it was made of.
            kinds = [self.full_type(v) for v in op.items]
            if op.result.id in self.table_rows and all(
                    type(self.consts.get(v.id)) is int for v in op.items):
                # A table's row of int literals (``[[0] * n for _ in range(m)]``) is one of
                # numbers: read as floats, as the floats written into it are.
                kinds = [float for _ in op.items]
            if kinds[0] is not None and all(k == kinds[0] for k in kinds):
                self.items[op.result.id] = kinds[0]
            elif all(k in _NUMBER_KINDS for k in kinds):
                self.items[op.result.id] = INT_OR_FLOAT  # (``[x, 1]``: numbers)
            elif all(isinstance(k, ListOf) and k.item in _NUMBER_KINDS for k in kinds):
                # (rows of numbers, some with ints: ``[[x, 1], [y, 0.5]]``)
                self.items[op.result.id] = ListOf(INT_OR_FLOAT)
        if op.kind == "tuple" and not op.starred:
            # A tuple cannot change: its entries are what it was built from, read by index
            # (``p[0]``, a named tuple's ``p.x``) or unpacked.
            self.entries[op.result.id] = [self.full_type(v) for v in op.items]

    def build_dict(self, op: n.BuildDict) -> None:
        self.set(op.result, dict)
        if op.result.id in self.readonly and op.values and None not in op.keys:
            # A dict nothing changes holds what it was made with (``s._asdict()``).
            kinds = {self.get(v) for v in op.values}
            if len(kinds) == 1 and (t := kinds.pop()) in _PLAIN:
                self.values[op.result.id] = t

    def call(self, op: n.Call) -> None:
        t = None
        if op.fn.id in self.consts:
            simple = not op.starred and not op.kwargs
            fn = self.consts[op.fn.id]
            args = [self.get(a) for a in op.args]
            t = _lifted(fn, args, simple)
            if (fn is runtime.make_namedtuple or fn is object.__new__) and op.args and \
                    op.args[0].id in self.consts and isinstance(self.consts[op.args[0].id], type):
                t = self.consts[op.args[0].id]  # the class it makes an instance of
                if fn is runtime.make_namedtuple and len(op.args) == 2 and \
                        op.args[1].id in self.entries:
                    self.entries[op.result.id] = self.entries[op.args[1].id]
            if isinstance(fn, type) and is_namedtuple(fn) and not op.starred and \
                    all(k is not None for k, _ in op.kwargs):
                # ``Pt(c)``: its entries, given or defaults (read by index, unpacked)
                given = dict(zip(fn._fields, op.args))
                given.update(op.kwargs)
                defaults = getattr(fn, "_field_defaults", {})
                if len(op.args) <= len(fn._fields) and \
                        all(f in given or f in defaults for f in fn._fields):
                    self.entries[op.result.id] = [
                        self.full_type(given[f]) if f in given else type(defaults[f])
                        for f in fn._fields]
            if fn is reversed and len(op.args) == 1 and op.args[0].id in self.appended:
                self.reversed_of[op.result.id] = op.args[0].id
            if fn is operator.add and len(op.args) == 2 and t is list and \
                    op.args[0].id in self.items and op.result.id in self.readonly and \
                    self.items.get(op.args[1].id, None) == self.items[op.args[0].id]:
                self.items[op.result.id] = self.items[op.args[0].id]  # ``xs[:j] + xs[j:]``
            if fn is operator.mul and len(op.args) == 2 and t is list and \
                    op.result.id in self.readonly:
                shown = op.args[0] if args[1] is int else op.args[1]
                if shown.id in self.items:
                    self.items[op.result.id] = self.items[shown.id]  # ``[0.0] * n``
            if fn is runtime.snapshot and len(op.args) == 1 and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # a copy holds the items it was taken with
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.kept and self.get(op.args[0]) is list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``list(xs)``: a copy, then kept (or shrunk)
            if fn is sorted and len(op.args) == 1 and not op.starred and \
                    all(k in ("key", "reverse") for k, _ in op.kwargs) and \
                    op.result.id in self.kept and self.get(op.args[0]) is list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``sorted(xs, key=abs)``: a copy, reordered
            if fn is runtime.keyed_order and op.result.id in self.kept:
                self.items[op.result.id] = int  # (the indices ``sorted(key=)`` puts in order)
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and \
                    (entries := self.zipped(op.args[0])) is not None and None not in entries:
                self.items[op.result.id] = TupleOf(tuple(entries))  # ``list(zip(a, b))``
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and self.get(op.args[0]) is not list and \
                    (item := self.item_type(op.args[0])) is not None:
                self.items[op.result.id] = item  # ``list(iter(xs))``, ``list(reversed(xs))``
            if fn is list and simple and len(op.args) == 1 and \
                    op.result.id in self.readonly and \
                    len(kinds := set(self.entries.get(op.args[0].id) or [None])) == 1 and \
                    (item := kinds.pop()) in _NUMBER_KINDS:
                self.items[op.result.id] = item  # ``list(q)`` of a tuple of floats
            if t is None and simple and len(args) == 1 and fn in (max, min, sum):
                # The extreme or the sum of a list of floats is a float (a sum of none is
                # the int 0, for which the float code computes the same numbers).
                item = self.item_type(op.args[0])
                if item is float or item is int and fn is not sum:
                    t = item
            if (t is None or t is numpy.ndarray) and simple and \
                    (full := self.declared_result(fn, op.args)):
                self.set_full(op.result, full)
                return
            if t is None and fn is dataclasses.replace and len(op.args) == 1 and \
                    isinstance(kind := self.get(op.args[0]), type) and \
                    dataclasses.is_dataclass(kind):
                t = kind  # a new object of the class of the one it copies
            if t is None and simple and self.callee is not None and \
                    isinstance(fn, types.FunctionType):
                t = self.callee(fn, [unshaped(self.full_type(a)) for a in op.args])
            if t is numpy.ndarray and simple and (made := self.made_array(fn, op.args)):
                self.set_full(op.result, made)
                return
            if fn in (operator.matmul, operator.imatmul) and simple and len(args) == 2 and \
                    all(isinstance(self.full_type(a), ArrayOf) for a in op.args):
                a, b = (self.full_type(v) for v in op.args)
                ndim = _matmul_ndim(a.ndim, b.ndim)
                if a.dtype is numpy.float64 and b.dtype is numpy.float64 and ndim is not None:
                    # Exact: two vectors give a NumPy scalar, not an array.
                    self.set_full(op.result, array_of(a.dtype, ndim, _matmul_shape(
                        a.shape, b.shape)) if ndim else a.dtype)
                    return
        elif isinstance(m := self.defs.get(op.fn.id), n.GetAttr) and m.name == "copy" and \
                not op.args and not op.kwargs and self.get(m.obj) in (list, dict):
            # ``xs.copy()``: a new list (or dict) holding what ``xs`` holds.
            t = self.get(m.obj)
            if op.result.id in self.readonly:
                if t is list and (item := self.item_type(m.obj)) is not None:
                    self.items[op.result.id] = item
                elif t is dict and m.obj.id in self.values:
                    self.values[op.result.id] = self.values[m.obj.id]
        self.set(op.result, t)

    def array_arg(self, v: n.Value) -> Any:
        """``v``'s type as a rule's ``array_type`` reads it: ``(dtype, ndim)`` for an array
        of known axes, a list of its items' types for a list or tuple display (nested
        displays nested; ``float`` for any float scalar), else its type."""
        t = self.full_type(v)
        if isinstance(t, ArrayOf):
            return (t.dtype, t.ndim)
        made = self.defs.get(v.id)
        if isinstance(made, n.Build) and made.kind in ("list", "tuple") and not made.starred:
            return [self.array_arg(u) for u in made.items]
        return float if t in _FLOAT_KINDS else t

    def declared_result(self, fn: Any, args: list[n.Value]) -> Any:
        """The full type a NumPy function or primitive declares for its result from its
        arguments' (:func:`registry.mark_result_type`: the tuples of the decompositions)."""
        if not hashable(fn):
            return None
        from wengert.rules import registry  # the rule tables import this module's users

        rule = registry.lookup(fn)
        if rule is None or rule.result_type is None:
            return None

        def full(x: Any) -> Any:
            # The rules' vocabulary: (dtype, ndim) an array, a list the entries of a tuple.
            if isinstance(x, list):
                return TupleOf(tuple(full(e) for e in x), named=True)
            if isinstance(x, tuple):
                return array_of(*x)
            return x

        return full(rule.result_type([self.array_arg(v) for v in args],
                                     [self.consts.get(v.id, registry.UNKNOWN) for v in args]))

    def made_array(self, fn: Any, args: list[n.Value]) -> ArrayOf | None:
        """The :class:`ArrayOf` of the new array ``fn(*args)`` makes, where its arguments
        say: ``zeros_like(x)`` and its kin and ``copy(x)`` take ``x``'s, ``zeros(n)`` (and
        ``ones``, ``empty``) a float64 array of as many axes as its shape has entries."""
        if fn in _LIKE and len(args) == (2 if fn is numpy.full_like else 1) or \
                fn is runtime.snapshot and len(args) == 1:
            return self.arrays.get(args[0].id)
        if fn in INPLACE_OPERATORS and len(args) == 2 and args[0].id in self.arrays:
            return self.arrays[args[0].id]  # (the array itself, changed: its dtype and axes)
        if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
            from wengert.rules import registry  # the rule tables import this module's users

            rule = registry.lookup(fn)
            if rule is not None and rule.array_type is not None:
                made = rule.array_type(*(self.array_arg(v) for v in args))
                return array_of(*made) if made is not None else None
        ts = [self.full_type(a) for a in args]
        if all(isinstance(t, ArrayOf) and t.dtype is numpy.float64 or t in _REAL_SCALARS
               for t in ts) and _float_elementwise(fn):
            arrays = [t for t in ts if isinstance(t, ArrayOf)]
            return array_of(numpy.float64, max(t.ndim for t in arrays),
                            _broadcast_shape([t.shape for t in arrays]))
        if fn in _FLOAT_MAKERS and len(args) == 1:
            shape = self.consts.get(args[0].id)
            if type(shape) is int and shape >= 0:
                return array_of(numpy.float64, 1, (shape,))
            if self.get(args[0]) in _INDEX_INTS:
                return array_of(numpy.float64, 1)
            made = self.defs.get(args[0].id)
            if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred and \
                    all(self.get(v) in _INDEX_INTS for v in made.items):
                sizes = tuple(self.consts.get(v.id) for v in made.items)
                return array_of(numpy.float64, len(made.items), sizes if all(
                    type(k) is int and k >= 0 for k in sizes) else None)
            if type(shape) is tuple and all(type(k) is int and k >= 0 for k in shape):
                return array_of(numpy.float64, len(shape), shape)
        return None

    def getitem(self, op: n.GetItem) -> None:
        obj, index = self.get(op.obj), self.get(op.index)
        t = None
        if obj is str:
            t = str
        elif obj is range:
            t = range if index is slice else int if index in _INTS else None
        elif op.obj.id in self.entries and index in _INTS and op.index.id in self.consts \
                and (obj is tuple or obj is None or is_namedtuple(obj)) and \
                -len(self.entries[op.obj.id]) <= self.consts[op.index.id] < \
                len(self.entries[op.obj.id]):
            self.set_full(op.result, self.entries[op.obj.id][self.consts[op.index.id]])
            return
        elif obj is tuple and (same := self.same_entries(op.obj)) is not None and \
                index in _INTS:
            self.set_full(op.result, same)  # (``xs[i]`` of a tuple of floats: a float)
            return
        elif obj in (list, tuple) and index is slice:
            t = obj
            if obj is list and op.obj.id in self.items and op.result.id in self.readonly:
                self.items[op.result.id] = self.items[op.obj.id]  # a slice: the same items
            elif obj is tuple and (same := self.same_entries(op.obj)) is not None:
                self.items[op.result.id] = same  # (a tuple's slice: entries of that type)
        elif op.obj.id in self.items and index in _INTS:
            self.set_full(op.result, self.items[op.obj.id])
            return
        elif obj is list and index in _INTS and self.appended.get(op.obj.id) and \
                (item := self.item_type(op.obj)) is not None:
            self.set_full(op.result, item)  # (a list only appended to)
            return
        elif op.obj.id in self.values and obj is dict:
            self.set_full(op.result, self.values[op.obj.id])
            return
        elif obj is numpy.ndarray and op.obj.id in self.arrays:
            self.set_full(op.result, self.array_entry(self.arrays[op.obj.id], op.index))
            return
        elif obj is numpy.ndarray and self.array_index(op.index):
            t = numpy.ndarray
        self.set(op.result, t)

    def same_entries(self, v: n.Value) -> Any:
        """The one type of every entry of the tuple ``v`` (its entries known, or its items:
        a slice of such a tuple), else ``None``."""
        if v.id in self.items and self.get(v) is tuple:
            return self.items[v.id]
        es = self.entries.get(v.id)
        if not es or es[0] is None or any(e != es[0] for e in es[1:]):
            return None
        return es[0]

    def setitem(self, op: n.SetItem) -> None:
        a = self.arrays.get(op.obj.id)
        if a is not None and self.array_entry(a, op.index) is a.dtype:
            self.entry_writes.add((op.obj.id, op.index.id))

    def array_entry(self, a: ArrayOf, index: n.Value) -> Any:
        """The type of ``x[index]`` for an array ``x`` of type ``a``: a scalar of its dtype
        for as many integers as it has axes, an :class:`ArrayOf` for integers, slices and
        ``None`` (each integer drops an axis, each ``None`` adds one), else an array or
        unknown."""
        parts: list[tuple[Any, Type]]
        if index.id in self.consts:
            v = self.consts[index.id]
            parts = [(x, type(x)) for x in (v if type(v) is tuple else (v,))]
        elif isinstance(made := self.defs.get(index.id), n.Build) and made.kind == "tuple" \
                and not made.starred:
            parts = [(self.index_part(x), self.get(x)) for x in made.items]
        else:
            parts = [(_NOT_CONST, self.get(index))]
        ints = sum(1 for _, t in parts if t in _INDEX_INTS)
        nones = sum(1 for _, t in parts if t is type(None))
        if ints + nones + sum(1 for _, t in parts if t is slice) < len(parts) or \
                ints > a.ndim:
            return numpy.ndarray if self.array_index(index) else None
        ndim = a.ndim - ints + nones
        if ints == len(parts) and ndim == 0:
            return a.dtype
        return array_of(a.dtype, ndim, _entry_shape(a.shape, [v for v, _ in parts]))

    def index_part(self, v: n.Value) -> Any:
        """A part of an index: its constant value, ``:`` for a slice of no bounds."""
        made = self.defs.get(v.id)
        if isinstance(made, n.BuildSlice) and made.lower is made.upper is made.step is None:
            return slice(None)
        return self.consts.get(v.id, _NOT_CONST)

    def array_index(self, index: n.Value) -> bool:
        """Whether indexing an array with ``index`` surely gives an array (never a NumPy
        scalar): a slice, ``None`` or ``...`` among its parts, or an index array."""
        def part(v: Any, t: Type) -> bool:
            return t in (slice, type(None), type(Ellipsis), numpy.ndarray, list) or \
                isinstance(v, (slice, numpy.ndarray, list)) or v is None or v is Ellipsis

        if index.id in self.consts:
            v = self.consts[index.id]
            return any(part(x, None) for x in v) if isinstance(v, tuple) else part(v, None)
        made = self.defs.get(index.id)
        if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred:
            return any(part(self.consts.get(x.id, 0), self.get(x)) for x in made.items)
        return part(0, self.get(index))

    def getattr(self, op: n.GetAttr) -> None:
        # (a field passed in holding a list or dict of known items: ``ListOf``, ``DictOf``)
        self.set_full(op.result, self.fields.get((self.get(op.obj), op.name)) if self.fields
                      else None)

    def make_function(self, op: n.MakeFunction) -> None:
        self.set(op.result, types.FunctionType)
        for a in op.func.body.args:
            self.set(a, None)
        self.region(op.func.body)

    def if_(self, op: n.If) -> None:
        self.region(op.then)
        self.region(op.orelse)
        live = [r.terminator.values for r in (op.then, op.orelse) if not _diverges(r)]
        for k, r in enumerate(op.results):
            ts = [self.full_type(ys[k]) for ys in live]
            t = ts[0] if ts else None
            for u in ts[1:]:
                t = _join_full(t, u)
            self.set_full(r, t)

    def loop(self, op: n.For | n.While, carried: list[n.Value],
             regions: list[n.Region]) -> None:
        """Iterate the body until the carried types are stable (each step only loses types)."""
        cur = [self.array_or_type(v) for v in op.inits]
        while True:
            for a, t in zip(carried, cur):
                self.set_full(a, t)
            for r in regions:
                self.region(r)
            new = [_join_full(t, self.array_or_type(y))
                   for t, y in zip(cur, op.body.terminator.values)]
            if all(a is b for a, b in zip(new, cur)):
                break
            cur = new
        for r, t in zip(op.results, cur):
            self.set_full(r, t)

    def array_or_type(self, v: n.Value) -> Any:
        """``v``'s :class:`ArrayOf` where known, else its type."""
        return self.arrays.get(v.id) or self.get(v)

    def for_(self, op: n.For) -> None:
        item = op.body.args[0]
        lst = self.reversed_of.get(op.iterable.id, op.iterable.id)
        if lst in self.appended:
            self.item_of[item.id] = lst
            self.set_full(item, self.item_type(self.defs[lst].result) if lst in self.defs
                          else None)
        elif op.iterable.id in self.items:
            self.set_full(item, self.items[op.iterable.id])
        elif op.iterable.id in self.arrays and self.arrays[op.iterable.id].ndim:
            a = self.arrays[op.iterable.id]
            self.set_full(item, a.dtype if a.ndim == 1 else
                          array_of(a.dtype, a.ndim - 1, a.shape and a.shape[1:]))
        elif (entries := self.zipped(op.iterable)) is not None:
            self.set(item, tuple)
            self.entries[item.id] = entries
        else:
            t = _for_item(self.get(op.iterable))
            lit = self.defs.get(op.iterable.id)
            if isinstance(lit, n.Build) and lit.kind == "tuple" and lit.items and \
                    not lit.starred:
                # ``for c in (1.0, 2.0)``: a tuple's items are the ones it was built from.
                t = self.get(lit.items[0])
                for v in lit.items[1:]:
                    t = join(t, self.get(v))
            self.set(item, t)
        self.loop(op, op.carried_args, [op.body])

    def item_type(self, v: n.Value) -> Type:
        """The type of every item of the list ``v`` (a ``ListOf`` parameter or a list only
        appended to), or ``None``."""
        if v.id in self.items:
            return self.items[v.id]
        if self.get(v) is range:
            return int  # (``list(range(k, n))``: the candidates of ``max(..., key=)``)
        made = self.defs.get(v.id)
        if isinstance(made, n.Call) and len(made.args) == 1 and not made.kwargs and \
                not made.starred and self.consts.get(made.fn.id) in (reversed, iter) and \
                made.args[0].id in self.items:
            return self.items[made.args[0].id]  # ``reversed(xs)`` yields ``xs``'s items
        if self.appended.get(v.id) and (v.id not in self.stored_rows or
                                        v.id in self.readonly):
            if v.id in self.table_rows and all(type(self.consts.get(x.id)) is int
                                               for x in self.appended[v.id]):
                return float  # (``[[0 for _ in r] for r in a]``: as a display of ints)
            t: Any = None
            for k, x in enumerate(self.appended[v.id]):
                u = self.full_type(x)
                t = u if k == 0 else (t if t == u else None)
            return t
        return None

    def display_type(self, v: n.Value) -> ListOf | None:
        """``ListOf(t)`` where ``v`` is a list display of numbers all of type ``t``
        (``[c, tr.k]``), or of objects all of one plain class ``t`` (``[Dense(w, b),
        Dense(v, c)]``): what it holds when made, whatever is done with it after."""
        d = self.defs.get(v.id)
        if not isinstance(d, n.Build) or d.kind != "list" or d.starred or not d.items:
            return None
        kinds = {self.get(x) for x in d.items}
        if len(kinds) != 1:
            return None
        t = kinds.pop()
        return ListOf(t) if t in (float, int) or isinstance(t, type) and _plain_class(t) \
            else None

    def full_type(self, v: n.Value) -> Any:
        """``v``'s type, as :class:`ListOf` for a list of known items."""
        t = self.get(v)
        if t is list and (item := self.item_type(v)) is not None:
            return ListOf(item)  # (a list only appended to: what every append puts there)
        if t is numpy.ndarray and v.id in self.arrays:
            return self.arrays[v.id]
        if (t is tuple or is_namedtuple(t)) and v.id in self.entries and \
                all(e is not None for e in self.entries[v.id]):
            # (``Pt(c)`` appended to a list of ``Pt``: a tuple of the entries it was made of)
            return TupleOf(tuple(self.entries[v.id]), cls=None if t is tuple else t)
        return t

    def set_full(self, v: n.Value, t: Any) -> None:
        """Give ``v`` the type ``t``, which may be a :class:`ListOf`."""
        if isinstance(t, ListOf):
            self.set(v, list)
            if v.id in self.readonly:  # (a list changed later may hold anything)
                self.items[v.id] = t.item
        elif isinstance(t, TupleOf):
            self.set(v, plain(t))
            self.entries[v.id] = list(t.entries)
        elif isinstance(t, ObjectOf):
            self.set(v, t.cls)
        elif isinstance(t, DictOf):
            self.set(v, dict)
            if v.id in self.readonly:  # (a dict changed later may hold anything)
                self.values[v.id] = t.value
        elif isinstance(t, ArrayOf):
            self.set(v, numpy.ndarray)
            self.arrays[v.id] = t
            if t.shape is not None:
                self.shapes[v.id] = t.shape
        else:
            self.set(v, t)

    def zipped(self, iterable: n.Value) -> list[Type] | None:
        """The entry types of the items of ``zip(xs, ys, ...)`` or ``enumerate(xs)`` over
        lists of known items (and ranges, and such zips), else ``None`` (an
        ``enumerate``'s index is an int even where its items are unknown)."""
        made = self.defs.get(iterable.id)
        if not isinstance(made, n.Call) or made.starred or \
                made.fn.id not in self.consts or not made.args:
            return None
        fn = self.consts[made.fn.id]
        if made.kwargs and (fn is not zip or [k for k, _ in made.kwargs] != ["strict"]):
            return None
        if fn is enumerate and len(made.args) <= 2:
            item = self.item_type(made.args[0])
            if item is None and (inner := self.zipped(made.args[0])) is not None:
                item = TupleOf(tuple(inner))  # (``enumerate(zip(a, b))``)
            return [int, item]  # (an index is an int whatever the items)
        if fn is not zip:
            return None
        out: list[Type] = []
        for a in made.args:
            if (item := self.item_type(a)) is not None:
                out.append(item)
            elif (inner := self.zipped(a)) is not None:
                out.append(TupleOf(tuple(inner)))
            elif self.get(a) is range:
                out.append(int)
            elif self.get(a) is numpy.ndarray and a.id in self.arrays:
                arr = self.arrays[a.id]  # (the rows of an array, or its entries)
                out.append(arr.dtype if arr.ndim == 1 else
                           array_of(arr.dtype, arr.ndim - 1, arr.shape and arr.shape[1:]))
            else:
                return None
        return out

    def unpack(self, op: n.Unpack) -> None:
        for r in op.results:
            self.set(r, None)
        entries = self.entries.get(op.value.id)
        if entries is not None and op.star is None and len(entries) == len(op.results):
            for r, t in zip(op.results, entries):
                self.set_full(r, t)
            return
        made = self.defs.get(op.value.id)
        if op.star is not None:
            self.unpack_star(op, made, entries)
            return
        if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred and \
                op.star is None and len(made.items) == len(op.results):
            # ``a, b = b, y``: each target is the value it was built from.
            for r, v in zip(op.results, made.items):
                self.set(r, self.get(v))
            return
        lst = self.item_of.get(op.value.id)
        if lst is None or op.star is not None or not self.appended[lst]:
            return
        # Each item is one of the tuples appended: join their k-th entries' types.
        builds = [self.defs.get(v.id) for v in self.appended[lst]]
        if not all(isinstance(b, n.Build) and b.kind == "tuple" and not b.starred and
                   len(b.items) == len(op.results) for b in builds):
            return
        for k, r in enumerate(op.results):
            t = self.get(builds[0].items[k])  # type: ignore[union-attr]
            for b in builds[1:]:
                t = join(t, self.get(b.items[k]))  # type: ignore[union-attr]
            self.set(r, t)

    def unpack_star(self, op: n.Unpack, made: n.Op | None, entries: list[Any] | None
                    ) -> None:
        """``a, *rest, z = value``: ``rest`` is a list (whatever ``value`` is), the others
        take the types of the items they get where those are known (a display, a tuple of
        known entries, a list whose items have one type)."""
        star, res = op.star, op.results
        assert star is not None
        items: list[Any] | None = None
        if isinstance(made, n.Build) and made.kind in ("list", "tuple") and not made.starred:
            items = [self.get(v) for v in made.items]
        elif entries is not None:
            items = list(entries)
        item = self.items.get(op.value.id) if self.get(op.value) is list else None
        after = len(res) - star - 1
        if items is not None and len(items) >= len(res) - 1:
            for k in range(star):
                self.set(res[k], items[k])
            for k in range(after):
                self.set(res[len(res) - 1 - k], items[len(items) - 1 - k])
            middle = items[star:len(items) - after]
            one = middle[0] if middle and all(t == middle[0] for t in middle) else None
            self.set_full(res[star], ListOf(one) if isinstance(one, type) else list)
            return
        if isinstance(item, type):
            for k, r in enumerate(res):
                if k != star:
                    self.set(r, item)
            self.set_full(res[star], ListOf(item))
            return
        self.set(res[star], list)

    def while_(self, op: n.While) -> None:
        self.loop(op, op.args, [op.cond, op.body])

    def with_(self, op: n.With) -> None:
        self.set(op.body.args[0], None)
        self.region(op.body)
        # A manager that suppresses an exception leaves the initial values in place.
        for r, i, y in zip(op.results, op.inits, op.body.terminator.values):
            self.set(r, join(self.get(i), self.get(y)))
