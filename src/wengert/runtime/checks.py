"""Run-time helpers of the primal program: Python's semantics where the IR spells them as
calls (``x in xs``, unbound names, keyed ``min``/``max``/``sorted``, named tuples) and the
checks generated code makes before it trusts what a value is (a field read, an in-place
operator on an array that may be a view)."""

from __future__ import annotations

import operator
from typing import Any, NoReturn

from wengert.diagnostics import NonDifferentiableError
from wengert.objects import cached_kind, namedtuple_field


def contained_in(item: Any, container: Any) -> bool:
    """``item in container`` as a call whose arguments are in evaluation order."""
    return item in container


def not_contained_in(item: Any, container: Any) -> bool:
    """``item not in container``."""
    return item not in container


def unbound_local(name: str) -> NoReturn:
    """Raise what Python raises when a local is read before it is assigned."""
    raise UnboundLocalError(
        f"cannot access local variable {name!r} where it is not associated with a value")


def delete_item(obj: Any, key: Any) -> None:
    """``del obj[key]``: the transforms make it ``obj.pop(key)`` where ``obj`` is a dict,
    or a list and ``key`` an int (both differentiable), and refuse it on values being
    differentiated otherwise."""
    del obj[key]


def name_error(name: str) -> NoReturn:
    """Raise what Python raises for an undefined global name."""
    raise NameError(f"name {name!r} is not defined")


def plain_attr(obj: Any, name: str, site: Any) -> Any:
    """``obj.name`` for an object whose class was unknown when the derivative was made:
    the read is differentiated as a field read, which is right only for a field. A
    property or other descriptor is refused here, at the user's line, rather than
    differentiated as if it were stored."""
    kind = cached_kind(type(obj), name) if type(obj).__module__ != "builtins" else "field"
    if kind == "field" or kind == "method":
        return getattr(obj, name)
    cls = type(obj).__name__
    raise NonDifferentiableError(
        f"{cls}.{name} is a {'property' if kind == 'property' else 'computed attribute'}, "
        f"read on an object whose class was not known when the derivative was made", site,
        hint=f"call its getter explicitly ({cls}.{name}.fget(obj)), or pass the object in "
             "as an argument so that its class is known")


def check_plain_setattr(obj: Any, name: str, site: Any) -> None:
    """Refuse ``obj.name = v`` on an object whose class was unknown when the derivative
    was made, when ``name`` is a property or descriptor: its setter would run, and the
    derivative would treat the write as a plain store."""
    if type(obj).__module__ != "builtins" and cached_kind(type(obj), name) != "field":
        raise NonDifferentiableError(
            f"{type(obj).__name__}.{name} is not a plain field: writing it runs a "
            "descriptor, on an object whose class was not known when the derivative was "
            "made", site, hint="write the stored fields the descriptor sets")


def check_rebinding(value: Any, site: Any) -> None:
    """Before ``s += t`` where the old ``s`` is read again: fine for a number (``+=``
    makes a new one), refused for a list or array (``+=`` changes the object the old name
    still refers to, which the derivative would not see)."""
    if not isinstance(value, (float, int, complex)) and \
            type(value).__module__ == "numpy" and getattr(value, "ndim", 0) == 0:
        return  # a NumPy scalar is a number too
    if isinstance(value, (float, int, complex, tuple, str)) or value is None:
        return
    raise NonDifferentiableError(
        f"this in-place operator changes a {type(value).__name__} that is still used under "
        "its old name afterwards, or that another list, array or object holds", site,
        hint="write `x = x + y` (a new object) instead of `x += y`")


def check_view(value: Any, site: Any) -> None:
    """Before ``v += t`` on what may be an array: refused for a view of another array
    (``v = y[0]``, ``y.T``, a row iterated over), whose change the derivative would not
    see under the other array's name."""
    if getattr(value, "base", None) is not None and type(value).__module__ == "numpy" and \
            getattr(value, "ndim", 0) > 0:
        from wengert.diagnostics import NonDifferentiableError

        raise NonDifferentiableError(
            "this in-place operator changes a view of another array, which the derivative "
            "would not see", site,
            hint="write `v = v * s` (a new array), or update the array it views by index "
                 "(`y[0] *= s`)")


#: Types whose operators the rules of numbers, arrays and sequences are written for.
_RULED = (int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset,
          type(None))


def check_operands(site: Any, *operands: Any) -> None:
    """Before an operator whose operands' types were not known when the derivative was
    made: refused where one is an object of a class of the user's (its ``__add__``, not
    the rules of numbers, gives the value; a derivative made by those rules would be
    wrong). NumPy's arrays and scalars are what the rules know."""
    for x in operands:
        t = type(x)
        if not isinstance(x, _RULED) and t.__module__.split(".")[0] != "numpy":
            raise NonDifferentiableError(
                f"an operator is applied to an object of class {t.__name__} whose type was "
                "not known when the derivative was made, so its operator method was not "
                "differentiated", site,
                hint="give the object a known type where it is made (an argument of the "
                     "class, or an object made in the function), or call its method "
                     "(`a.__add__(b)`)")


def check_union(site: Any, *operands: Any) -> None:
    """Before ``a | b`` (``a |= b``) of operands whose types were not known when the
    derivative was made: the rules take it for bits of ints or bools, where a dict's
    union (or a class's ``__or__``) would carry its values: refused."""
    for x in operands:
        if not isinstance(x, (int, bool, set, frozenset, type(None))) and \
                type(x).__module__.split(".")[0] != "numpy":
            raise NonDifferentiableError(
                f"`|` is applied to a {type(x).__name__} whose type was not known when the "
                "derivative was made, so the union was not differentiated", site,
                hint="give the dicts known types where they are made, or write "
                     "`{**a, **b}`")
    check_operands(site, *operands)


def check_distinct_items(items: list, site: Any) -> None:
    """Before a function writes into the items of a list passed in
    (``transforms/vjp_items.py``): refused where one object is in the list twice, whose
    writes through one place the reverse of reads through the other would not see."""
    if len({id(x) for x in items}) != len(items):
        from wengert.diagnostics import NonDifferentiableError

        raise NonDifferentiableError(
            "this writes into an object that is in the list it was read out of more than "
            "once, which reverse mode does not support", site,
            hint="put distinct objects in the list (`[copy.copy(p) for p in ps]`), or use "
                 "forward mode (wengert.jvp, wengert.jacfwd)")


#: Values that hold no object a write could reach (what a held object may hold).
_FLAT = (float, int, bool, str, bytes, complex, type(None))


def _held_values(x: Any) -> Any:
    """What ``x`` holds one level down: a list's or tuple's items, a dict's values, an
    object's attributes (``None`` for anything else, which is not looked into)."""
    t = type(x)
    if t is list or t is tuple or isinstance(x, tuple):
        return x
    if t is dict:
        return x.values()
    d = getattr(x, "__dict__", None)
    return d.values() if type(d) is dict else None


def _held_objects(x: Any) -> list:
    """The objects (not numbers or strings, nor tuples of them) ``x`` holds one level
    down."""
    values = _held_values(x)
    if values is None:
        return []
    return [v for v in values if not isinstance(v, _FLAT) and not callable(v) and
            not (isinstance(v, tuple) and _flat(v))]


def _flat(x: Any) -> bool:
    """Whether everything ``x`` holds is a number or a string (nothing to write into)."""
    values = _held_values(x)
    return values is not None and all(isinstance(v, _FLAT) for v in values)


def check_held_alone(holder: Any, site: Any, n_tops: int, *others: Any) -> None:
    """Before a function writes into the objects ``holder`` (a parameter) holds
    (``tr.hist[0] = c``, ``d["w"].append(c)``: ``transforms/vjp_items.py``): refused
    unless each of them is reached through its own place in ``holder`` alone. They must
    be distinct, hold only numbers and strings, and be neither ``holder`` nor another
    parameter (``others``: first ``n_tops`` that hold no objects, lists of numbers or
    arrays, then those that may) nor held by one (whose objects must hold only numbers and
    strings too): a write through one place is not seen by the reverse of a read through
    another."""
    held = _held_objects(holder)
    mine = {id(x) for x in held}
    why = None
    if len(mine) != len(held) or id(holder) in mine:
        why = "in the object it was read out of more than once"
    elif not all(_flat(x) for x in held):
        why = "holding a list, dict or object itself"
    else:
        mine.add(id(holder))
        for k, o in enumerate(others):
            if id(o) in mine:
                why = "also another argument"
            for x in _held_objects(o) if k >= n_tops else ():
                if id(x) in mine or not _flat(x):
                    why = "also held by another argument, or holding objects"
    if why is not None:
        raise NonDifferentiableError(
            f"this writes into an object {why}, which reverse mode does not support: a "
            "write through one place is not seen through the other", site,
            hint="pass objects that share nothing (copy.deepcopy(x)), or use forward mode "
                 "(wengert.jvp, wengert.jacfwd)")


def keyed_extreme(items: Any, key: Any, extreme: Any, has_default: bool) -> int:
    """The index of the item ``extreme`` (``max`` or ``min``) returns for ``key=``: the first
    of equal extremes, as Python keeps; ``-1`` for no items when a default was given."""
    if len(items) == 0:
        if has_default:
            return -1
        extreme(items)  # raises as Python does
    keys = [key(x) for x in items] if key is not None else list(items)
    best = 0
    for i in range(1, len(keys)):
        if (keys[i] > keys[best]) if extreme is max else (keys[i] < keys[best]):
            best = i
    return best


def first_extreme(items: Any, extreme: Any) -> int:
    """The index of the item ``extreme(items)`` returns (``max`` or ``min`` of a list of
    floats): Python keeps the first of equal extremes, and no item before it equals it (a
    NaN is only ever the first item, found by identity)."""
    return operator.indexOf(items, extreme(items))


def keyed_order(items: Any, key: Any, reverse: bool) -> list[int]:
    """The order ``sorted(items, key=key, reverse=reverse)`` puts the items in, as indices
    (a stable sort, as Python's)."""
    keys = [key(x) for x in items] if key is not None else list(items)
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def check_spread(items: Any, extreme: Any) -> None:
    """Raise as ``extreme(*items)`` (``max(*xs)`` of numbers) does where ``extreme(items)``
    would not: for fewer than two items."""
    if len(items) == 0:
        extreme()
    if len(items) == 1:
        extreme(items[0])


def check_unshared_rows(rows: Any, site: Any) -> None:
    """Before ``copy.deepcopy`` of a list of lists of numbers taken as a copy of each row:
    refused where one row is in it twice (the deep copy would share its copy too)."""
    if len({id(r) for r in rows}) != len(rows):
        from wengert.diagnostics import NonDifferentiableError

        raise NonDifferentiableError(
            "copy.deepcopy of a list holding one list at two places: the copy shares one "
            "new list there too, which the derivative does not follow", site,
            hint="copy each row (`[row[:] for row in m]`) if they are meant to be apart")


def copy_rows(rows: Any) -> Any:
    """``copy.deepcopy(rows)`` of a list of lists of numbers, no row twice: a copy of each
    row (its Python definition, in ``rules.python_defs``, is what transforms see)."""
    return [list(r) for r in rows]


def zip_rows(rows: Any) -> Any:
    """``zip(*rows)``: the columns of a list of rows (its Python definition, in
    ``rules.python_defs``, is what transforms differentiate)."""
    return zip(*rows)


def make_namedtuple(cls: Any, items: tuple) -> Any:
    """``cls(*items)`` for a named tuple class (its fields bound in order)."""
    return cls._make(items)


def namedtuple_fields(obj: Any, changes: Any) -> tuple:
    """The fields of the named tuple ``obj``, raising what ``obj._replace(**changes)``
    raises for a name that is not one of them."""
    fields = type(obj)._fields
    unknown = [k for k in changes if k not in fields]
    if unknown:
        raise ValueError(f"Got unexpected field names: {unknown!r}")
    return fields


def field_index(obj: Any, name: str) -> int | None:
    """The index of field ``name`` if ``obj`` is a named tuple (whose fields are items),
    else ``None``."""
    return namedtuple_field(type(obj), name)
