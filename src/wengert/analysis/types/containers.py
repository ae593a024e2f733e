"""Whether what is written into a list, a dict or an object's field keeps the type the
inference assumed of what it holds (an item of the type its items have, a new object of
the class its items are), and the types a field holding numbers is widened to."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from wengert.analysis.types.lattice import INT_OR_FLOAT, DictOf, ListOf, ObjectOf, Type
from wengert.ir import nodes as n

if TYPE_CHECKING:
    from wengert.analysis.types.engine import _Inference



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


#: A value no constant is (``consts.get(v, _NOT_CONST)``).
_NOT_CONST = object()
