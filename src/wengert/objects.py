"""What reading an attribute of an object does, decided by its class.

``obj.name`` is a field read only when the class leaves attribute access to Python's
default and defines nothing (or a plain constant, or a ``__slots__`` member) under
``name``; a property, a method or another descriptor computes something. Both the
transforms and the run-time helpers ask here.
"""

from __future__ import annotations

import collections
import dataclasses
import types
from typing import Any

#: Returned by :func:`class_attribute` when no class defines the name.
MISSING: Any = object()

#: Descriptor types whose reads are plain storage (``__slots__`` members).
_STORAGE = (types.MemberDescriptorType,)


def class_attribute(cls: type, name: str) -> Any:
    """The attribute ``name`` as stored in ``cls`` or a base (a descriptor, unbound),
    or :data:`MISSING` when no class in the MRO defines it."""
    for klass in getattr(cls, "__mro__", (cls,)):
        d = getattr(klass, "__dict__", {})
        if name in d:
            return d[name]
    return MISSING


def plain_class(cls: Any) -> bool:
    """A user class whose attribute access is Python's default (no ``__getattr__``,
    no ``__getattribute__`` of its own)."""
    if not isinstance(cls, type) or cls.__module__ in ("builtins", "numpy"):
        return False
    if cls.__getattribute__ is not object.__getattribute__:
        return False
    return class_attribute(cls, "__getattr__") is MISSING


def attribute_kind(cls: Any, name: str) -> str:
    """What reading ``name`` on an instance of ``cls`` does: ``"field"`` (the instance's
    own storage, or a class constant), ``"property"``, ``"method"`` (a function,
    static or class method: reading it makes a bound callable) or ``"other"`` (a
    descriptor wengert does not know, or a class that customises attribute access)."""
    if namedtuple_field(cls, name) is not None:
        return "field"
    if not plain_class(cls):
        return "other"
    if dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
        return "field"
    raw = class_attribute(cls, name)
    if raw is MISSING or isinstance(raw, _STORAGE):
        return "field"
    if isinstance(raw, property):
        return "property"
    if isinstance(raw, (types.FunctionType, staticmethod, classmethod)):
        return "method"
    if hasattr(type(raw), "__get__"):
        return "other"  # functools.cached_property, a user descriptor, ...
    return "field"  # a plain class attribute (a constant an instance may shadow)


def is_namedtuple(cls: Any) -> bool:
    """A class made by ``collections.namedtuple`` or ``typing.NamedTuple``."""
    if not isinstance(cls, type):
        return False
    known = _NAMEDTUPLES.get(cls)
    if known is None:
        known = issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
        if len(_NAMEDTUPLES) < 4096:  # (classes made in a loop: not all remembered)
            _NAMEDTUPLES[cls] = known
    return known


#: Classes :func:`is_namedtuple` has seen (run-time helpers ask it for every field read).
_NAMEDTUPLES: dict[type, bool] = {}


def namedtuple_field(cls: Any, name: str) -> int | None:
    """The index of field ``name`` of a named tuple class, or ``None``."""
    if is_namedtuple(cls) and name in cls._fields:
        return cls._fields.index(name)
    return None


_KINDS: dict[tuple[type, str], str] = {}


def cached_kind(cls: type, name: str) -> str:
    """:func:`attribute_kind`, remembered per class and name (for run-time checks)."""
    key = (cls, name)
    kind = _KINDS.get(key)
    if kind is None:
        kind = _KINDS[key] = attribute_kind(cls, name)
    return kind


def hashable(v: Any) -> bool:
    """Whether ``v`` can be a dict key (callables and constants usually are)."""
    try:
        hash(v)
    except TypeError:
        return False
    return True


#: The code of every named tuple class's ``_replace``, ``_asdict`` and ``_make`` (the
#: factory gives each class its own functions of one code).
_NAMEDTUPLE_CODES = frozenset(
    {(_nt := collections.namedtuple("_Any", "a"))._replace.__code__, _nt._asdict.__code__,
     _nt._make.__func__.__code__})  # type: ignore[attr-defined]


def namedtuple_method(f: Any) -> bool:
    """Whether ``f`` is a named tuple's ``_replace``, ``_asdict`` or ``_make`` (bound or
    not): each makes a new tuple or dict and writes into nothing it is given (``_replace``
    pops the keywords of a dict of its own)."""
    return getattr(f, "__code__", None) in _NAMEDTUPLE_CODES or \
        getattr(getattr(f, "__func__", None), "__code__", None) in _NAMEDTUPLE_CODES


def dataclass_arguments(cls: Any, args: list[Any], kwargs: list[tuple[str | None, Any]]
                        ) -> dict[str, Any] | None:
    """What a call ``cls(*args, **kwargs)`` gives each field its generated ``__init__``
    takes (by name; those not given keep their defaults), for a dataclass with that
    ``__init__`` and no ``__post_init__``; ``None`` for any other class or call (a custom
    ``__init__``, too many arguments, a keyword given twice or unnamed)."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)) or \
            hasattr(cls, "__post_init__") or \
            getattr(getattr(cls.__init__, "__code__", None), "co_filename", "") != "<string>":
        return None
    params = [f.name for f in dataclasses.fields(cls) if f.init]
    if len(args) > len(params):
        return None
    given = dict(zip(params, args))
    for k, v in kwargs:
        if k is None or k in given or k not in params:
            return None
        given[k] = v
    return given
