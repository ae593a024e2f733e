"""Arguments, tangents and cotangents between the user's form and generated code's.

A call binds its arguments to parameters (defaults included: one derived function serves
every function object of a code object); tangents and cotangents go into generated code
with symbolic zeros (``None``) and objects as :class:`~wengert.runtime.Attrs`, and come
out finished in the structure of their primal (zeros materialised, a dataclass as one).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
import warnings
from collections.abc import Sequence
from operator import countOf
from typing import Any

import numpy

from wengert import runtime, tangents
from wengert.analysis.effects.arrays import IMMUTABLE_CLASSES
from wengert.analysis.fields import instance_class
from wengert.analysis.types import (
    FUNCTION_VALUES,
    INT_OR_FLOAT,
    ArrayOf,
    Constant,
    DictOf,
    ListOf,
    ObjectOf,
    TupleOf,
    array_of,
    function_constant,
)
from wengert.diagnostics import (
    NonDifferentiableError,
    describe,
)
from wengert.driver.cache import DerivedEntry
from wengert.driver.callables import (
    Gradient,
    cache_key,
    fixed_arity,
    not_differentiated,
    plain_object,
)
from wengert.driver.pipeline import (
    function_of,
    jvp_entry,
    param_count,
    primal_entry,
    takes_derivatives,
    vjp_entry,
    writes_arguments,
)
from wengert.objects import is_namedtuple, plain_class

LIST_OF_FLOAT = ListOf(float)
_ndarray = numpy.ndarray
LIST_OF_FLOAT_LISTS = ListOf(LIST_OF_FLOAT)
DICT_OF_FLOAT = DictOf(float)


def arg_type(a: Any) -> Any:
    """The type an argument specialises derivatives on: its own, ``ListOf(float)`` for a
    list of floats, ``DictOf(float)`` for a dict of floats, ``ArrayOf`` for a NumPy array
    (checked on each call: the specialised code relies on it)."""
    t = type(a)
    if t in _SCALARS:
        return t
    if t is numpy.ndarray:
        # Entries of a numeric dtype (``a[i]`` is a ``numpy.float64``), by shape (which
        # :func:`shaped` keeps to a few per function).
        return array_of(a.dtype.type, a.ndim, a.shape) if a.dtype.kind in "biufc" else t
    if t is list and a and type(a[0]) is float and countOf(map(type, a), float) == len(a):
        return LIST_OF_FLOAT  # (counted in C: the cheapest test of every item)
    if t is list and a and all(type(v) is list and v and all(type(w) is float for w in v)
                               for v in a):
        return LIST_OF_FLOAT_LISTS
    if t is list and a and isinstance(a[0], tuple) and a[0] and \
            (type(a[0]) is tuple or is_namedtuple(type(a[0]))) and \
            all(type(v) is type(a[0]) and len(v) == len(a[0]) and
                all(type(w) is float for w in v) for v in a):
        # ``[(x, y), ...]`` of floats, or of named tuples ``[Point(x, y), ...]``
        return ListOf(_float_tuple(len(a[0]), None if type(a[0]) is tuple else type(a[0])))
    if t is list and a:
        # Items of one typed kind (``[Particle(x, v), ...]``, ``[{'a': 1.0}, ...]``).
        first = arg_type(a[0])
        kinds = None
        if type(first) is ObjectOf:
            if _all_like(a, first):
                return _list_of(first)
        elif type(first) in _NESTED and first is not LIST_OF_INT:
            kinds = list(map(arg_type, a))
            if all(k == first for k in kinds):
                return _list_of(first)
        # (Numbers some ints, some floats: ``[1, 0.5]``, ``[Body(x=0, ...), Body(x=0.3,
        # ...)]``, ``[{"w": 1, "h": 0.5}, {"w": 0.2, "h": 0.1}]``.)
        if first in _NUMBER_KINDS:
            mixed = _numbers(a)
            if mixed is not None:
                return mixed
            if first is int and countOf(map(type, a), int) == len(a):
                return LIST_OF_INT  # (indices: ``a[rows[0]]`` reads one entry)
        elif type(first) in _NESTED or first is dict or first is list:
            mixed = _merged(first, list(map(arg_type, a)) if kinds is None else kinds, a)
            if mixed is not None:
                return _list_of(mixed)
    if t is dict and a and all(type(v) is float for v in a.values()):
        return DICT_OF_FLOAT
    if t is dict and a:
        first = arg_type(next(iter(a.values())))  # ``{'w': [..], 'b': [..]}``
        if first is LIST_OF_INT:
            pass  # (lists of ints held by a container: untyped, as ints elsewhere)
        elif type(first) in _NESTED or first is dict or first is list:
            kinds = list(map(arg_type, a.values()))
            if first is not dict and first is not list and all(k == first for k in kinds):
                return _dict_of(first)
            mixed = _merged(first, kinds, a.values())
            if mixed is not None:
                return _dict_of(mixed)
        elif first in _NUMBER_KINDS and _numbers(a.values()) is not None:
            return _dict_of(INT_OR_FLOAT)
    if isinstance(a, tuple) and a and (t is tuple or is_namedtuple(t)):
        cls = None if t is tuple else t
        if countOf(map(type, a), float) == len(a):
            # A tuple of floats (a named tuple's fields): its entries read and unpacked as
            # floats.
            return _float_tuple(len(a), cls)
        if len(a) <= _MAX_FIELDS:
            entries = tuple(map(arg_type, a))
            if all(e in _SCALARS or type(e) in _NESTED or type(e) is ArrayOf or e in _CONTAINERS
                   for e in entries):
                # ``(xs, ys)`` of lists, ``(x, n)``, ``(F, H, zs)`` of arrays and a list: its
                # entries known in number (``f(m, *args[1:])`` spreads them) and type.
                return _tuple_of(entries, cls)
    known = _OBJECT_CLASSES.get(t)
    if known is None:
        known = _OBJECT_CLASSES[t] = instance_class(t) and plain_class(t)
    if known:
        d = a.__dict__
        if 0 < len(d) <= _MAX_FIELDS:
            # The types of its attributes (a particle's ``x`` and ``v``): what a read of one
            # gives until the function writes another.
            key = (t, tuple(d), tuple(map(_field_type, d.values())))
            o = _OBJECTS.get(key)
            if o is None:
                if len(_OBJECTS) >= 1024:
                    _OBJECTS.clear()
                o = _OBJECTS[key] = ObjectOf(t, tuple(zip(key[1], key[2])))
            return o
    if t in FUNCTION_VALUES:
        # (a function passed in, ``rk4(rhs, y0)``: a constant of the derivation, its calls
        # known where they are written; a closure is dispatched when it runs)
        return function_constant(a) or t
    return t


_NUMBER_KINDS = (int, float, INT_OR_FLOAT)


#: The type of a list of ints (row and column indices, counts).
LIST_OF_INT = ListOf(int)


def _numbers(items: Any) -> ListOf | None:
    """``ListOf(INT_OR_FLOAT)`` for ints and floats both, ``None`` for anything else."""
    kinds = set(map(type, items))
    return _list_of(INT_OR_FLOAT) if kinds == {int, float} else None


def _merged(first: Any, kinds: list[Any], items: Any) -> Any:
    """One type for items whose types differ only where one holds an int and another a
    float (``INT_OR_FLOAT`` there): objects of one class with the same attributes, dicts
    of numbers; ``None`` where they differ otherwise."""
    if type(first) is ObjectOf:
        if not all(type(k) is ObjectOf and k.cls is first.cls and
                   len(k.fields) == len(first.fields) for k in kinds):
            return None
        fields = []
        for j, (name, _) in enumerate(first.fields):
            seen = {k.fields[j][1] for k in kinds}
            if any(k.fields[j][0] != name for k in kinds):
                return None
            if len(seen) == 1:
                fields.append((name, seen.pop()))
            elif seen <= set(_NUMBER_KINDS):
                fields.append((name, INT_OR_FLOAT))
            else:
                return None
        key = (first.cls, tuple(name for name, _ in fields), tuple(t for _, t in fields))
        o = _OBJECTS.get(key)
        if o is None:
            o = _OBJECTS[key] = ObjectOf(first.cls, tuple(fields))
        return o
    if type(first) is TupleOf and all(type(k) is TupleOf and k.cls is first.cls and
                                      len(k.entries) == len(first.entries) for k in kinds):
        entries = []
        for j in range(len(first.entries)):
            seen = {k.entries[j] for k in kinds}
            if len(seen) > 1 and not seen <= set(_NUMBER_KINDS):
                return None
            entries.append(seen.pop() if len(seen) == 1 else INT_OR_FLOAT)
        return _tuple_of(tuple(entries), first.cls)  # (``[Pt(3, 0.5), Pt(0.2, 1.5)]``)
    # (Lists or dicts of numbers, some of them floats: ``{"w": [0.5, 1.5], "h": [2, 3]}``,
    # a dict of ints among dicts of floats; those of ints alone stay untyped.)
    if (type(first) is ListOf or first is list) and all(
            type(k) is ListOf and k.item in _NUMBER_KINDS or
            k is list and type(v) is list and _numbers_only(v) for k, v in zip(kinds, items)) \
            and any(type(k) is ListOf and k.item is not int for k in kinds):
        return _list_of(INT_OR_FLOAT)
    if (type(first) is DictOf or first is dict) and all(
            type(k) is DictOf and k.value in _NUMBER_KINDS or
            k is dict and _numbers_only(v) for k, v in zip(kinds, items)) and \
            any(type(k) is DictOf and k.value is not int for k in kinds):
        return _dict_of(INT_OR_FLOAT)
    return None


def _numbers_only(d: dict | list) -> bool:
    """Whether ``d`` holds numbers only (ints, floats), and one at least."""
    values = d.values() if type(d) is dict else d
    return bool(d) and all(type(v) is int or type(v) is float for v in values)


def _field_type(v: Any) -> Any:
    """The type of an object's attribute: its own, or a :class:`ListOf` or :class:`DictOf`
    for a list or dict of known items (``hist: list`` of floats), so that reading and
    writing those items is arithmetic on floats."""
    t = type(v)
    if t is list or t is dict:
        a = arg_type(v)
        return a if type(a) is ListOf or type(a) is DictOf else t
    if t is numpy.ndarray and v.dtype.kind in "fc":
        # (its dtype and number of axes, not its shape: a layer's weights ``W`` are 2-D in
        # every layer of a list, of shapes that differ)
        return array_of(v.dtype.type, v.ndim, None)
    return t


#: Per class: whether its instances are typed by their attributes (:class:`ObjectOf`).
_OBJECT_CLASSES: dict[type, bool] = {}
#: One :class:`ObjectOf` per class, attribute names and types (compared by identity in
#: the derivative caches' keys, as cheap as a plain type).
_OBJECTS: dict[tuple[Any, ...], ObjectOf] = {}
#: Objects with more attributes than this are typed by their class alone.
_MAX_FIELDS = 32


def _all_like(items: list[Any], like: ObjectOf) -> bool:
    """Whether every object of ``items`` has the class and the attributes' names and types
    of ``like``: :func:`arg_type` of each, in fewer steps (a list of many particles is
    checked on every call: this is the cost of its guard)."""
    cls = like.cls
    if countOf(map(type, items), cls) != len(items):
        return False
    names = tuple(name for name, _ in like.fields)
    kinds = tuple(t for _, t in like.fields)
    dicts = list(map(_DICT, items))
    if not all(map(names.__eq__, map(tuple, dicts))):
        return False
    if all(t is float for t in kinds):
        values = [v for d in dicts for v in d.values()]
        return countOf(map(type, values), float) == len(values)
    if any(type(t) is ListOf or type(t) is DictOf or type(t) is ArrayOf for t in kinds):
        return all(kinds == tuple(map(_field_type, d.values())) for d in dicts)
    return all(kinds == tuple(map(type, d.values())) for d in dicts)


_DICT = operator.attrgetter("__dict__")


#: The argument types of containers typed by what they hold.
_NESTED = (ListOf, DictOf, TupleOf, ObjectOf)
#: Entries of tuples typed by their type alone.
_SCALARS = frozenset({float, int, bool, str, type(None)})
#: Containers whose items are not typed, and arrays of unknown dtype, as tuple entries.
_CONTAINERS = frozenset({list, dict, tuple, numpy.ndarray})


@functools.lru_cache(maxsize=256)
def _list_of(item: Any) -> ListOf:
    return ListOf(item)


@functools.lru_cache(maxsize=256)
def _dict_of(value: Any) -> DictOf:
    return DictOf(value)


@functools.lru_cache(maxsize=256)
def _tuple_of(entries: tuple[Any, ...], cls: type | None) -> TupleOf:
    return TupleOf(entries, cls=cls)


@functools.lru_cache(maxsize=256)
def _float_tuple(size: int, cls: type | None) -> TupleOf:
    return TupleOf((float,) * size, cls=cls)


def param_types(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, ...] | None:
    """The type of each parameter's value for this call (``None``: cannot bind cheaply)."""
    typed = _typer(fn)
    code = fn.__code__
    if not kwargs and code.co_flags & 0x0C == 0 and len(args) == code.co_argcount and \
            not code.co_kwonlyargcount:
        return shaped(fn, tuple(map(typed, args)))
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return shaped(fn, tuple(typed(v) for v in bound.arguments.values()))


#: Derivations specialised on the shapes of array arguments, per function and numbers of
#: axes: a function called with more shapes than this (a batch that shrinks as a loop
#: goes, ``f(x[:n])`` for every ``n``) is derived once more without shapes, which then
#: serves every later shape (``jax.jit`` traces every shape again).
SHAPES_PER_FUNCTION = 4
_SHAPES_SEEN: dict[Any, set[tuple[Any, ...]]] = {}


def shaped(fn: Any, types_: tuple[Any, ...]) -> tuple[Any, ...]:
    """``types_``, or, for a function already derived for :data:`SHAPES_PER_FUNCTION`
    other shapes of its arrays, the same types with the arrays' shapes left out."""
    if not any(type(t) is ArrayOf and t.shape is not None for t in types_):
        return types_
    axes = tuple(array_of(t.dtype, t.ndim) if type(t) is ArrayOf else t for t in types_)
    seen = _SHAPES_SEEN.setdefault((cache_key(fn), axes), set())
    if types_ in seen:
        return types_
    if len(seen) >= SHAPES_PER_FUNCTION:
        return axes
    seen.add(types_)
    return types_


def _typer(fn: Any) -> Any:
    """:func:`arg_type`, or for the derivative of a derivative (``fn`` a :class:`Gradient`),
    or of a function that takes derivatives inside (``vjp(f, x)[1](v)``), one that takes a
    function passed in as a :class:`Constant` of the derivation: the call of it is then a
    call of a known function, which differentiates again (a derivative made once per
    function object, so only where a higher order needs it)."""
    if type(fn) is not Gradient and not takes_derivatives(fn):
        return arg_type
    return lambda a: Constant(a) if type(a) in FUNCTION_VALUES else arg_type(a)


_FLOAT_OR_NONE = {float, type(None)}


class FloatItems(int):
    """What :func:`shapes_of` keeps of a list argument whose items are all floats (its
    type, :func:`arg_type`, said so): its length, no copy; :func:`finish` then checks only
    the cotangent."""


def shapes_of(args: tuple, types: tuple[Any, ...] = (), first: int = 0,
              wrt: tuple[int, ...] | None = None, written: frozenset[int] | None = None
              ) -> tuple:
    """Copies of container arguments the function may change the length of (``append``),
    also inside a tuple or an object, and of objects it may write into (``p.v = 3``
    leaves no float there): their
    cotangents take the structure the arguments had when the call began. ``types``: the
    :func:`arg_type` of the arguments from ``first`` on, if known; ``wrt``: the arguments
    whose cotangents are wanted (``None``: all); ``written``: the arguments the function
    may write into (``None``: unknown, every container is copied)."""
    lists = {k + first for k, t in enumerate(types) if t is LIST_OF_FLOAT} if types else ()
    for k, a in enumerate(args):
        if written is None and isinstance(a, (list, dict)) or k in lists or \
                written is not None and k in written and \
                (isinstance(a, (list, dict, tuple)) or
                 type(arg_type(a)) is ObjectOf):
            # (a list of floats is its length: its cotangent is checked in C, see ``finish``)
            return tuple(a if wrt is not None and k not in wrt else
                         FloatItems(len(a)) if k in lists else
                         a if written is not None and k not in written else structure(a)
                         for k, a in enumerate(args))
    return args


structure = runtime.structure


def call_vjp(fn: Any, wrt: tuple[int, ...] | None, args: tuple, kwargs: dict
              ) -> tuple[Any, Any, DerivedEntry]:
    types_ = param_types(fn, args, kwargs)
    nparams = param_count(fn)
    if types_ is None:
        # Let Python report the bad call (missing or unexpected arguments).
        fn(*args, **kwargs)
        raise TypeError("cannot bind the arguments")  # pragma: no cover
    if wrt is None:
        wrt = tuple(range(nparams))
    entry = vjp_entry(fn, wrt, types_)
    args, kwargs = with_defaults(fn, args, kwargs)
    out, pb = entry.compiled(*args, **kwargs)
    return out, pb, entry


def with_defaults(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments with every omitted parameter given its default (``fn``'s own:
    one derived function serves every function object of a code object)."""
    code = fn.__code__
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount:
        return args, kwargs
    bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def finish(x: Any, adj: Any) -> Any:
    """An adjoint in the structure of the primal ``x``, zeros materialised."""
    if type(x) is float and (type(adj) is float or adj is None):
        return 0.0 if adj is None else adj
    if type(adj) is _ndarray and type(x) is _ndarray and x.dtype.kind == "f" and \
            adj.shape == x.shape and adj.dtype == x.dtype and adj.flags.writeable:
        return adj  # (what ``tangents.materialize`` gives it, without its general checks)
    if isinstance(adj, runtime.Attrs):
        names = _dataclass_fields(type(x))
        if names is not None:
            out = object.__new__(type(x))
            values = {}
            for name in names:
                a, b = getattr(x, name), adj.get(name)
                values[name] = b if type(b) is float and type(a) is float else \
                    0.0 if b is None and type(a) is float else finish(a, b)
            d = getattr(out, "__dict__", None)
            if d is not None:
                d.update(values)  # (a frozen dataclass's ``__setattr__`` refuses)
            else:
                for name, v in values.items():
                    object.__setattr__(out, name, v)
            return out
        # A plain object has no tangent space of its own (``tangents``): no cotangent.
        return None
    if adj is None and not tangents.is_differentiable(x) and hasattr(x, "__dict__") and \
            not isinstance(x, (type, FloatItems)) and not callable(x):
        return None
    if type(x) is FloatItems:
        if type(adj) is list and len(adj) == x:
            if countOf(map(type, adj), float) == x:
                return list(adj)
            if set(map(type, adj)) <= _FLOAT_OR_NONE:
                return [0.0 if b is None else b for b in adj]
        x = [0.0] * x  # (the general case: only the items' type matters)
    if isinstance(adj, (list, tuple)) and isinstance(x, (list, tuple)) and len(adj) == len(x):
        items = [b if type(b) is float and type(a) is float else finish(a, b)
                 for a, b in zip(x, adj)]
        if type(x) is list:  # each item is finished: nothing is left to check
            return items
        if type(x) is tuple:
            return tuple(items)
        adj = tuple(items) if isinstance(x, tuple) else items
    elif isinstance(adj, dict) and isinstance(x, dict):
        adj = {k: finish(v, adj.get(k)) for k, v in x.items()}
    return tangents.materialize(x, adj)


def _dataclass_fields(cls: type) -> tuple[str, ...] | None:
    """The names of the fields of the dataclass ``cls`` (``None``: not a dataclass),
    remembered per class (``dataclasses.fields`` builds a tuple per call)."""
    names = _FIELDS.get(cls, _NOT_SEEN)
    if names is _NOT_SEEN:
        names = tuple(f.name for f in dataclasses.fields(cls)) \
            if dataclasses.is_dataclass(cls) else None
        if len(_FIELDS) < 4096:
            _FIELDS[cls] = names
    return names  # type: ignore[return-value]


_FIELDS: dict[type, tuple[str, ...] | None] = {}
_NOT_SEEN = object()


def as_adjoint(ct: Any) -> Any:
    """A cotangent in the form generated pullbacks use: dataclasses become ``Attrs``."""
    if dataclasses.is_dataclass(ct) and not isinstance(ct, type):
        return runtime.Attrs({f.name: as_adjoint(getattr(ct, f.name))
                              for f in dataclasses.fields(ct)})
    if type(ct) in (list, tuple):
        return type(ct)(as_adjoint(c) for c in ct)
    if type(ct) is dict:
        return {k: as_adjoint(c) for k, c in ct.items()}
    return ct


seed = runtime.unit_like


IMMUTABLE_ARGS = IMMUTABLE_CLASSES


def check_unaliased(fn: Any, args: tuple, written: frozenset[int]) -> None:
    """Refuse a call passing one mutable object as two arguments when ``fn`` may write
    into one of them: each argument gets its own cotangent (and tangent), but a write
    through one name is seen through the other, which the derivative would not follow."""
    seen: dict[int, int] = {}
    for i, a in enumerate(args):
        if isinstance(a, IMMUTABLE_ARGS):
            continue
        j = seen.setdefault(id(a), i)
        if j != i and (i in written or j in written):
            raise NonDifferentiableError(
                f"arguments {j} and {i} are the same {type(a).__name__}, and "
                f"{describe(fn)} writes into it: a derivative with respect to each of them "
                "cannot be told apart", primal_entry(fn).ir.loc,
                hint="pass a copy for one of them (list(xs), xs.copy())")
    # One level down: an argument held by another (``f(m, m[0])``), or one object held by
    # two of them (two lists sharing a row).
    inner: dict[int, int] = {}
    for i, a in enumerate(args):
        mine: set[int] = set()
        for x in _held(a):
            if id(x) in mine and i in written:
                raise NonDifferentiableError(
                    f"argument {i} holds one {type(x).__name__} more than once, and "
                    f"{describe(fn)} writes into it: a derivative with respect to each "
                    "place cannot be told apart", primal_entry(fn).ir.loc,
                    hint="pass a copy that shares nothing ([list(row) for row in m])")
            mine.add(id(x))
            j = seen.get(id(x), inner.setdefault(id(x), i))
            if j != i and (i in written or j in written):
                raise NonDifferentiableError(
                    f"arguments {j} and {i} hold the same {type(x).__name__}, and "
                    f"{describe(fn)} writes into it: a derivative with respect to each of "
                    "them cannot be told apart", primal_entry(fn).ir.loc,
                    hint="pass copies that share nothing (copy.deepcopy(m), "
                         "[list(row) for row in m])")


def _held(a: Any) -> list[Any]:
    """The mutable objects ``a`` holds one level down: the items of a list or tuple of
    containers or objects (a list whose first item is a number holds none), a dict's values,
    an object's attributes."""
    t = type(a)
    if t is list or t is tuple:
        if not a or isinstance(a[0], IMMUTABLE_ARGS):
            return []
        items = a
    elif t is dict:
        items = list(a.values())
    elif hasattr(a, "__dict__") and not isinstance(a, type) and not callable(a):
        items = list(vars(a).values())
    else:
        return []
    return [x for x in items if not isinstance(x, IMMUTABLE_ARGS) and not callable(x)]


NO_TANGENT_TYPES = (int, bool, str, bytes, type(None), range)


def bind_params(fn: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The value of each parameter of ``fn`` for this call, in signature order."""
    code = fn.__code__
    if not kwargs and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount and \
            len(args) == code.co_argcount:
        return list(args)
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        fn(*args, **kwargs)  # let Python report the bad call
        raise
    bound.apply_defaults()
    return list(bound.arguments.values())


def bind_dots(fn: Any, args: tuple, kwargs: dict, dots: tuple, kw_dots: dict) -> list[Any]:
    """The tangent of each parameter, laid out like :func:`bind_params`."""
    code = fn.__code__
    if not kwargs and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount and \
            len(args) == code.co_argcount:
        return list(dots)
    sig = inspect.signature(fn, follow_wrapped=False)
    bound = sig.bind(*args, **kwargs)
    out: list[Any] = [None] * len(sig.parameters)
    names = list(sig.parameters)
    i = 0
    for p in sig.parameters.values():
        k = names.index(p.name)
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if i < len(args):
                out[k] = dots[i]
                i += 1
            else:
                out[k] = kw_dots.get(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            out[k] = tuple(dots[i:])
            i = len(args)
        elif p.kind == p.KEYWORD_ONLY:
            out[k] = kw_dots.get(p.name)
        else:
            out[k] = {name: kw_dots.get(name) for name in bound.arguments.get(p.name, {})}
    return out


def is_batched(values: Sequence[Any], dots: Sequence[Any]) -> bool:
    """Whether some tangent carries a leading axis of directions that its value lacks
    (looking into lists and tuples, whose items' tangents say it)."""
    for v, d in zip(values, dots):
        if isinstance(d, numpy.ndarray) and (isinstance(v, (float, numpy.floating)) or (
                isinstance(v, numpy.ndarray) and d.ndim > v.ndim)):
            return True
        if type(v) in (list, tuple) and type(d) in (list, tuple) and is_batched(v, d):
            return True
    return False


def call_jvp(fn: Any, args: tuple, kwargs: dict, dots: tuple, kw_dots: dict,
              batched: bool | None = None) -> tuple[Any, Any]:
    """Run ``fn``'s derived JVP on internal tangents (``None`` zeros, ``Attrs`` objects)."""
    values = bind_params(fn, args, kwargs)
    vdots = bind_dots(fn, args, kwargs, dots, kw_dots)
    if batched is None:
        batched = is_batched(values, vdots)
    wrt = tuple(i for i, (v, d) in enumerate(zip(values, vdots))
                if d is not None and not isinstance(v, NO_TANGENT_TYPES))
    types_ = shaped(fn, tuple(map(_typer(fn), values)))
    entry = jvp_entry(fn, wrt, types_, batched)
    ins = [runtime.nonzero_tangent(vdots[i], values[i])
           if isinstance(values[i], (float, numpy.floating, numpy.ndarray)) else vdots[i]
           for i in wrt]
    return entry.compiled(*values, *ins)


def forward_gradient(fn: Any, full: tuple, wrt: tuple[int, ...], kwargs: dict
                     ) -> tuple[DerivedEntry, bool, list] | None:
    """The JVP entry giving ``grad``'s answer where it is the derivative of one float
    (``wrt`` names one float argument, the call binds positionally): the tangent of the
    result, with ``1.0`` for the argument's, is the gradient, in one pass and with nothing
    kept for a reverse one (a recursion or a loop then costs what its JVP costs, about 2-3×
    the function, where a VJP stores every step's values to read them back). ``None`` where
    the call is of another kind, or where forward mode cannot derive ``fn``: reverse mode
    answers then, or reports what it cannot differentiate, as the user asked. With the
    entry, whether it is the one to use: not where its pass is slower than reverse mode's
    (:data:`_SLOW_FORWARD`), which answers then unless it refuses the function."""
    if len(wrt) != 1 or type(full[wrt[0]]) is not float or kwargs:
        return None
    code = getattr(fn, "__code__", None)
    if code is None or len(full) != code.co_argcount or code.co_flags & 0x0C or \
            code.co_kwonlyargcount:
        return None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            entry = jvp_entry(fn, wrt, shaped(fn, tuple(map(_typer(fn), full))))
    except Exception:  # (reverse mode derives it, or says why it cannot)
        return None
    # (reverse mode has specialised what this forward pass does slowly)
    fast = not _dispatches(getattr(entry.compiled, "__globals__", {}), set())
    if fast:
        warned(caught)
    return entry, fast, caught


def warned(caught: list) -> None:
    """Issue again the warnings a derivation made (recorded while it was not yet known to
    be the one used)."""
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


#: What makes a forward pass slower than the specialised reverse one: finding a derivative
#: at run time, call by call (a constructor or a method of an object forward mode does not
#: specialise: ``grad`` of a particle simulation measured 160× the function in forward
#: mode, 4× in reverse), and writing into a container's tangent through a helper, where
#: reverse mode updates its adjoint in place (a loop writing array entries: 12× against 6×).
#: (Not a list's tangent made or appended to, item by item: the items of a generator summed
#: (``sum(1 / norm(z - c) for c in charges)``) cost no more forward than in reverse, where
#: reverse over a gradient taken inside costs twice forward over it.)
_SLOW_FORWARD = frozenset({
    runtime.jvp_call, runtime.jvp_method, runtime.jvp_call_active, runtime.dispatch_tangent,
    runtime.dispatch_pullback_tangent, runtime.setitem_tangent, runtime.extend_tangent,
    runtime.setattr_tangent, runtime.pop_entry_tangent})


def _dispatches(namespace: dict, seen: set[int]) -> bool:
    """Whether generated code with this namespace, or derived code it calls (not a rule's),
    calls one of :data:`_SLOW_FORWARD`."""
    seen.add(id(namespace))
    for v in namespace.values():
        if type(v) is types.FunctionType:
            if v in _SLOW_FORWARD:
                return True
            ns, name = v.__globals__, v.__code__.co_filename
            if id(ns) not in seen and name.startswith("<wengert:") and \
                    not name.startswith("<wengert:rule:") and _dispatches(ns, seen):
                return True
    return False


def internal(x: Any, t: Any) -> Any:
    """A materialised tangent in the form generated code uses (fresh containers, ``Attrs``)."""
    if t is None:
        return None
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return runtime.Attrs({f.name: internal(getattr(x, f.name), getattr(t, f.name))
                              for f in dataclasses.fields(x)})
    if isinstance(x, list):
        return [b if type(b) is float else internal(a, b) for a, b in zip(x, t)]
    if isinstance(x, tuple):
        return tuple(internal(a, b) for a, b in zip(x, t))
    if isinstance(x, dict):
        return {k: internal(v, t.get(k)) for k, v in x.items()}
    if isinstance(t, numpy.ndarray):
        return t.copy()
    return t


def external(x: Any, t: Any, batch: tuple[int, ...] = ()) -> Any:
    """A tangent from generated code in the structure of the primal ``x``, zeros materialised."""
    if isinstance(t, runtime.Attrs) or (t is not None and dataclasses.is_dataclass(x) and
                                        (isinstance(t, dict) or type(t) is type(x))):
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            out = object.__new__(type(x))
            for f in dataclasses.fields(x):
                d = t.get(f.name) if isinstance(t, dict) else getattr(t, f.name)
                object.__setattr__(out, f.name, external(getattr(x, f.name), d, batch))
            return out
        return None
    if isinstance(x, (list, tuple)) and isinstance(t, (list, tuple)) and len(x) == len(t):
        items = [b if not batch and type(b) is float and type(a) is float
                 else external(a, b, batch) for a, b in zip(x, t)]
        if type(x) is list:  # each item is finished: nothing is left to check
            return items
        if type(x) is tuple:
            return tuple(items)
        t = tuple(items) if isinstance(x, tuple) else items
        if hasattr(type(x), "_fields"):
            t = type(x)(*items)
    elif isinstance(x, dict) and isinstance(t, dict):
        t = {k: external(v, t.get(k), batch) for k, v in x.items()}
    elif isinstance(x, (float, numpy.floating, numpy.ndarray)) and t is not None:
        want = (*batch, *numpy.shape(x))
        if numpy.shape(t) != want:
            t = numpy.array(numpy.broadcast_to(t, want), dtype=numpy.result_type(x, float))
        if want == () and isinstance(x, float):
            t = float(t)
    return tangents.materialize(x, t, batch)


def check_tangents(primals: Any, tangents_: Any) -> tuple[tuple, tuple]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents_, (tuple, list)):
        raise TypeError("primals and tangents must be tuples (or lists) of arguments, got "
                        f"{type(primals).__name__} and {type(tangents_).__name__}")
    if len(primals) != len(tangents_):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents_)} tangents")
    out = []
    for k, (p, t) in enumerate(zip(primals, tangents_)):
        if t is not None and plain_object(p):
            raise not_differentiated(p, f"jvp is given a tangent for argument {k}")
        try:
            out.append(tangents.materialize(p, t))
        except ValueError as e:
            raise ValueError(f"jvp: the tangent of argument {k} does not fit its primal "
                             f"{p!r}: {e}") from None
    return tuple(primals), tuple(out)


def jvp_run(f: Any, primals: tuple, dots: tuple, batch: tuple[int, ...], has_aux: bool
             ) -> Any:
    fn, bound, bound_kw = function_of(f, len(primals), lift=True)
    full = (*bound, *primals)
    fn = fixed_arity(fn, len(full), bound_kw)
    written = writes_arguments(fn, full)
    if written:
        check_unaliased(fn, full, written)
    full_dots = (*([None] * len(bound)), *dots)
    kw_dots = dict.fromkeys(bound_kw)
    out, out_dot = call_jvp(fn, full, dict(bound_kw), full_dots, kw_dots,
                             batched=bool(batch))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (value, aux)")
        value, aux = out
        value_dot = out_dot[0] if out_dot is not None else None
        return value, external(value, value_dot, batch), aux
    return out, external(out, out_dot, batch)


def run_vjp(f: Any, primals: tuple, has_aux: bool = False) -> Any:
    """``wengert.vjp(f, *primals, has_aux=has_aux)``: the value and a pullback giving one
    finished cotangent per primal."""
    fn, bound, bound_kw = function_of(f, len(primals), lift=True)
    full = (*bound, *primals)
    fn = fixed_arity(fn, len(full), bound_kw)
    written = writes_arguments(fn, full)
    if written:
        check_unaliased(fn, full, written)
    nparams = param_count(fn)
    wrt = tuple(range(len(bound), min(len(full), nparams)))
    before = shapes_of(full, written=written)
    out, pb, _ = call_vjp(fn, wrt, full, dict(bound_kw))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (value, aux)")
        out, aux = out

    def pullback(out_bar: Any) -> tuple[Any, ...]:
        ct = as_adjoint(tangents.materialize(out, out_bar))
        adjs = pb((ct, None) if has_aux else ct)
        return tuple(finish(before[i], adjs[i]) for i in wrt)

    return (out, pullback, aux) if has_aux else (out, pullback)
