"""The type lattice: exact types, the one union (a float or a ``numpy.float64``), what a
container holds (:class:`ListOf`, :class:`TupleOf`, :class:`DictOf`, :class:`ObjectOf`),
an array's dtype, axes and shape (:class:`ArrayOf`), constants of a derivation
(:class:`Constant`), and :class:`Types`, the result of inference."""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy

from wengert.ir import nodes as n
from wengert.ir.uses import replace_uses

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


@dataclass(frozen=True, eq=False)
class Constant:
    """A parameter type: the argument is this very object (a function passed in: the
    right-hand side an integrator is given, a function a derivative of a derivative takes),
    so the derivation treats the parameter as a constant of the program
    (:func:`bind_constants`) and calls of it are calls of a known function, inlined or
    linked and differentiated again like any other.

    Two functions of one code, module and defaults that capture nothing compute the same
    (``lambda y, t: -y`` made anew at every call): their types are equal, so a derivation
    made for one serves the other."""

    value: Any

    def _key(self) -> Any:
        v = self.value
        if type(v) is types.FunctionType and v.__closure__ is None:
            key = (v.__code__, id(v.__globals__), v.__defaults__,
                   tuple(sorted((v.__kwdefaults__ or {}).items())))
            try:
                hash(key)
            except TypeError:  # (a default that is a list: the object itself)
                return ("id", id(v))
            return key
        return ("id", id(v))

    def __eq__(self, other: object) -> bool:
        return type(other) is Constant and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


#: Functions passed in that a derivative of a derivative takes as constants: Python
#: functions, builtins (``math.sin``) and built-in types' methods (``dict.items``). (A
#: bound method or a ``functools.partial`` is still dispatched.)
FUNCTION_VALUES = (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                   types.WrapperDescriptorType)


def function_constant(v: Any) -> Constant | None:
    """The :class:`Constant` type of a function passed as an argument that the derivation
    may take as a constant: one that captures nothing (a closure is data too: its calls
    are dispatched when they run), a builtin, a built-in type's method; else ``None``."""
    t = type(v)
    if t is types.FunctionType:
        return Constant(v) if v.__closure__ is None else None
    return Constant(v) if t in FUNCTION_VALUES else None


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
    #: The types of the entries of tuple values whose entries are known in number (a tuple
    #: display, an item of a list of such tuples, a ``TupleOf`` parameter).
    entries: Mapping[int, tuple[Any, ...]] = field(default_factory=dict)

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
        if v.id in self.entries and self.by_id.get(v.id) is tuple and \
                None not in self.entries[v.id]:
            # (a tuple of known entries passed on: its callee spreads and reads them too)
            return TupleOf(tuple(unshaped(e) for e in self.entries[v.id]))
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
