"""Run-time helpers of reverse mode that update an adjoint in place where generated code
holds the only reference to it (asked of ``sys.getrefcount``): a loop writing ``x[i]`` or
appending to a list then costs O(1) per step in its pullback instead of a copy. Each falls
back to the copying helper of :mod:`wengert.runtime.reverse` it stands for when anything
else may see the adjoint."""

from __future__ import annotations

import sys
from operator import add as _add
from typing import Any

from wengert.runtime.reverse import (
    Attrs,
    _add_into_slice,
    _ndarray,
    add_adjoint,
    getattr_adjoint,
    getitem_adjoint,
    nonzero,
    numbers_only,
    pop_adjoint,
    reversed_adjoint,
    setattr_adjoint,
    setitem_adjoint,
)


def _refs(x: Any) -> int:
    return sys.getrefcount(x)


def _refs_seen_by_callee(prev: Any) -> int:
    return _refs(prev)


def _sole_reference_count() -> int:
    """What :func:`_refs` reports inside a helper for an object that only the caller's
    local variable holds (interpreters differ in the references a call adds)."""
    probe: list[Any] = []
    return _refs_seen_by_callee(probe)


#: ``_refs(prev)`` inside ``getitem_adjoint_owned`` when nothing but the caller's (dead)
#: local holds ``prev``: no other name, container or closure can see a change made to it.
_SOLE = _sole_reference_count() if hasattr(sys, "getrefcount") else -1


def getitem_adjoint_owned(prev: Any, x: Any, index: Any, g: Any, size: int | None = None
                          ) -> Any:
    """:func:`getitem_adjoint` for a ``prev`` the generated code never reads again and
    that no other adjoint shares (``transforms.inplace`` proves the first, the reference
    count checks the second): ``g`` is added into ``prev`` itself, so a loop reading
    ``x[i]`` costs O(1) per read instead of a copy of the whole adjoint."""
    if g is None:
        return prev
    t = type(prev)
    if t is list and _refs(prev) <= _SOLE:
        if type(index) is not slice:
            prev[index] = add_adjoint(prev[index], g)
            return prev
        if type(x) is list and len(prev) == len(x):
            _add_into_slice(prev, index, g)
            return prev
    if t is dict and _refs(prev) <= _SOLE:
        prev[index] = add_adjoint(prev.get(index), g)
        return prev
    if t is not list and t is not dict and _refs(prev) <= _SOLE and _own_array(prev) and \
            _basic_index(index):
        prev[index] += g
        return prev
    return getitem_adjoint(prev, x, index, g, size)


def entry_adjoint_of_array(prev: Any, x: Any, index: Any, g: Any) -> Any:
    """:func:`getitem_adjoint` for one entry of a float64 array ``x`` (``index`` as many
    integers as ``x`` has axes, ``g`` a number): the transforms emit it where the types say
    so, so that ``transforms.inplace`` may add into an owned adjoint without a call."""
    return getitem_adjoint(prev, x, index, g)


def entry_adjoint_of_array_owned(prev: Any, x: Any, index: Any, g: Any) -> Any:
    """:func:`entry_adjoint_of_array` adding into ``prev`` itself when nothing else holds
    it (as :func:`getitem_adjoint_owned`)."""
    if type(prev) is _ndarray() and _refs(prev) <= _SOLE and _own_array(prev):
        prev[index] += g
        return prev
    return getitem_adjoint(prev, x, index, g)


def entry_adjoint_of_list(prev: Any, x: Any, index: int, g: Any) -> Any:
    """:func:`getitem_adjoint` for one float of the list of floats ``x`` read at the int
    ``index`` (``g`` a number, the list not changed after the read): the transforms emit it
    where the types say so, so that ``transforms.inplace`` may add into an adjoint a loop
    owns (:func:`owned_float_list`) without a call."""
    return getitem_adjoint(prev, x, index, g)


def entry_adjoint_of_list_owned(prev: Any, x: Any, index: int, g: Any) -> Any:
    """:func:`entry_adjoint_of_list` adding into ``prev`` itself when nothing else holds it
    (as :func:`getitem_adjoint_owned`)."""
    return getitem_adjoint_owned(prev, x, index, g)


def nested_entry_adjoint(prev: Any, x: Any, i: Any, row: Any, j: Any, g: Any) -> Any:
    """``getitem_adjoint(prev, x, i, entry_adjoint_of_list(None, row, j, g))``: the float
    ``g`` read at ``row[j]`` of ``row = x[i]`` (``m[i][j]``) added into the adjoint ``prev``
    of the list of lists ``x``, made at once where ``prev`` is zero (``None``)."""
    if prev is None and type(x) is list and type(i) is int and type(j) is int and \
            -len(x) <= i < len(x) and x[i] is row and -len(row) <= j < len(row):
        out = [None] * len(x)
        inner = [None] * len(row)
        inner[j] = g
        out[i] = inner
        return out
    return getitem_adjoint(prev, x, i, getitem_adjoint(None, row, j, g))


def nested_entry_adjoint_owned(prev: Any, x: Any, i: Any, row: Any, j: int, g: Any) -> Any:
    """``getitem_adjoint_owned(prev, x, i, entry_adjoint_of_list(None, row, j, g))``: the
    float ``g`` read at ``row[j]`` of ``row = x[i]`` (``m[i][j]`` of a list of lists of
    floats) added into the row's own adjoint where nothing but ``prev`` holds it (and
    nothing but the caller's dead local holds ``prev``), instead of a list of one number
    added to the row's adjoint, a new list, per read."""
    if prev is None:
        return nested_entry_adjoint(None, x, i, row, j, g)  # (made at once)
    if type(prev) is list and _refs(prev) <= _SOLE and type(i) is int and \
            len(prev) == len(x) and x[i] is row:
        inner = prev[i]
        if inner is None:
            inner = [None] * len(row)
            inner[j] = g
            prev[i] = inner
            return prev
        if type(inner) is list and len(inner) == len(row) and _refs(inner) <= _SOLE_ITEM:
            old = inner[j]
            inner[j] = g if old is None else old + g
            return prev
    return getitem_adjoint_owned(prev, x, i, getitem_adjoint(None, row, j, g))


def field_entry_adjoint_owned(prev: Any, obj: Any, name: str, row: Any, j: Any, g: Any,
                              size: int | None = None) -> Any:
    """``getattr_adjoint_owned(prev, obj, name, getitem_adjoint(None, row, j, g, size))``:
    the float ``g`` read at ``row[j]`` of the list ``row = obj.name`` (``tr.hist[i]``; of
    ``size`` items then, where it grows later) added into the field's own adjoint where
    nothing but ``prev`` holds it (and nothing but the caller's dead local holds ``prev``),
    instead of a list of one number added to it, a new list, per read."""
    n = len(row) if size is None and type(row) is list else size
    if g is not None and type(prev) is Attrs and _refs(prev) <= _SOLE and type(j) is int and \
            type(row) is list and type(n) is int and getattr(obj, name, None) is row and \
            -n <= j < n:
        inner = prev.get(name)
        if inner is None:
            inner = [None] * n
            inner[j] = g
            prev[name] = inner
            return prev
        if type(inner) is list and len(inner) == n and _refs(inner) <= _SOLE_ITEM:
            old = inner[j]
            inner[j] = g if old is None else old + g
            return prev
    return getattr_adjoint_owned(prev, obj, name, getitem_adjoint(None, row, j, g, size))


def field_entry_taken(prev: Any, obj: Any, name: str, j: Any) -> tuple[Any, Any]:
    """The reverse of writing one item ``j`` of the list field ``obj.name`` (``tr.hist[i] =
    v``, the field written back): ``prev`` (``obj``'s adjoint) with that item's adjoint
    taken out, and the item's. In place where nothing but ``prev`` holds the field's
    adjoint (and nothing but the caller's dead local holds ``prev``); else as the three
    calls it stands for (the field's adjoint taken out, its item's, the field's put back)."""
    if type(prev) is Attrs and _refs(prev) <= _SOLE and type(j) is int:
        inner = prev.get(name)
        if inner is None:
            return prev, None  # (the field's adjoint is zero, and so its item's)
        if type(inner) is list and -len(inner) <= j < len(inner) and \
                _refs(inner) <= _SOLE_ITEM:
            g = inner[j]
            inner[j] = None
            return prev, g
    prev, field = setattr_adjoint_owned(prev, name)
    field, g = setitem_adjoint_owned(field, j)
    return getattr_adjoint_owned(prev, obj, name, field), g


def nested_entry_taken(prev: Any, x: Any, i: Any, row: Any, j: int) -> tuple[Any, Any]:
    """The reverse of writing one float at ``row[j]`` of ``row = x[i]`` (``m[i][j] = v``
    in a list of lists of floats, the row's slot written back): ``prev`` (``x``'s adjoint)
    with that entry's adjoint taken out, and the entry's. In place where nothing but
    ``prev`` holds the row's adjoint (and nothing but the caller's dead local holds
    ``prev``); else as the three calls it stands for (the slot's adjoint taken out, its
    entry cleared, the slot's adjoint put back)."""
    if type(prev) is list and _refs(prev) <= _SOLE and type(i) is int and \
            len(prev) == len(x) and x[i] is row and type(j) is int and \
            -len(row) <= j < len(row):
        inner = prev[i]
        if inner is None and numbers_only(row):
            # (as the calls it stands for: a zero row, the entry taken out of it)
            inner = [0.0] * len(row)
            inner[j] = None
            prev[i] = inner
            return prev, 0.0
        if type(inner) is list and len(inner) == len(row) and _refs(inner) <= _SOLE_ITEM:
            g = inner[j]
            inner[j] = None
            return prev, g
    prev, slot = setitem_adjoint_owned(prev, i)
    slot, g = entry_write_of_list(nonzero(slot, row), j)
    return getitem_adjoint_owned(prev, x, i, slot), g


def slice_pair_adjoint(x: Any, first: Any, second: Any, g: Any) -> Any:
    """The adjoint of the list or tuple ``x`` from ``g``, that of ``x[first] + x[second]``:
    ``getitem_adjoint_owned(getitem_adjoint(None, x, second, g[n:]), x, first, g[:n])``
    with ``n = len(x[first])`` (measured, not saved), made as one list where the two slices
    are apart (``row[:j] + row[j + 1:]``, a row without its ``j``-th number). A zero ``g``
    (``None``) gives a zero adjoint."""
    if g is None:
        return None
    size = len(x)
    if type(x) is list and type(g) is list and first.step is None and second.step is None:
        a0, a1, _ = first.indices(size)
        b0, b1, _ = second.indices(size)
        n = a1 - a0 if a1 > a0 else 0
        lb = b1 - b0 if b1 > b0 else 0
        if n + lb == len(g) and (a0 + n <= b0 or b0 + lb <= a0):
            out = [None] * size
            out[a0:a0 + n] = g[:n]
            out[b0:b0 + lb] = g[n:]
            return out
    n = len(range(size)[first])
    return getitem_adjoint_owned(getitem_adjoint(None, x, second, g[n:]), x, first, g[:n])


def items_adjoint_owned(prev: Any, x: Any, index: Any, items: Any, seen: Any) -> Any:
    """``getitem_adjoint_owned(prev, x, index, reversed_adjoint(items, seen))``: the adjoints
    of the items a loop over ``seen = x[index]`` read (``items``, collected last first)
    added into ``x``'s adjoint at their places (``for row in m[1:]``), into ``prev`` itself
    where nothing but the caller's dead local holds it, and into a list ``prev`` holds where
    nothing else holds that (a row's adjoint summed over the columns of a determinant): no
    reversed list, and no new list per item."""
    if type(x) is list and type(index) is slice and type(seen) is list and \
            type(items) is list and (prev is None or type(prev) is list and
                                     len(prev) == len(x) and _refs(prev) <= _SOLE):
        start, stop, step = index.indices(len(x))
        if len(items) <= len(seen) == len(range(start, stop, step)):  # (``break``: fewer)
            out = prev
            k = start + (len(items) - 1) * step
            for g in items:
                if g is not None:
                    if out is None:
                        out = [None] * len(x)
                    old = out[k]
                    if old is None:
                        out[k] = g
                    elif type(old) is list and type(g) is list and len(old) == len(g) and \
                            _refs(old) <= _SOLE_ITEM:
                        _add_into_list(old, g)
                    else:
                        out[k] = add_adjoint(old, g)
                k -= step
            return out
    return getitem_adjoint_owned(prev, x, index, reversed_adjoint(items, seen))


def slice_pairs_adjoint(prev: Any, x: Any, index: Any, seen: Any, first: Any, second: Any,
                        gs: Any) -> Any:
    """The reverse of ``ys = [row[first] + row[second] for row in x[index]]`` (``seen`` the
    slice the loop walked, ``gs`` the adjoint of ``ys``, whose last ``len(seen)`` items
    the loop appended) as one call: ``items_adjoint_owned`` of the rows'
    ``slice_pair_adjoint``, each row's adjoint added into the list ``prev`` holds at its
    place where nothing else holds that (a minor's rows in a determinant), so that no list
    is made per row, none collected and none reversed."""
    if gs is None:
        return prev
    if type(x) is list and type(index) is slice and type(seen) is list and \
            type(gs) is list and type(first) is slice and type(second) is slice and \
            first.step is None and second.step is None and \
            (prev is None or type(prev) is list and len(prev) == len(x) and
             _refs(prev) <= _SOLE):
        start, stop, step = index.indices(len(x))
        at = len(gs) - len(seen)
        if at >= 0 and len(seen) == len(range(start, stop, step)):
            out = prev
            k = start
            size = -1
            places: list[int] = []
            for row in seen:
                g = gs[at]
                at += 1
                if g is not None:
                    if out is None:
                        out = [None] * len(x)
                    old = out[k]
                    if type(old) is list and type(row) is list and type(g) is list and \
                            len(old) == len(row) and _refs(old) <= _SOLE_ITEM:
                        if len(row) != size:
                            # (where the parts go: measured once per length of row)
                            size = len(row)
                            places = [*range(size)[first], *range(size)[second]]
                        if len(g) != len(places):
                            raise ValueError(f"an adjoint of {len(g)} items for a list of "
                                             f"{len(places)}")
                        for i, gi in zip(places, g):
                            if gi is not None:
                                o = old[i]
                                old[i] = gi if o is None else o + gi if type(o) is float \
                                    and type(gi) is float else add_adjoint(o, gi)
                    else:
                        part = slice_pair_adjoint(row, first, second, g)
                        out[k] = part if old is None else add_adjoint(old, part)
                k += step
            return out
    items = [slice_pair_adjoint(row, first, second, g)
             for row, g in zip(seen, gs[len(gs) - len(seen):])]
    return getitem_adjoint_owned(prev, x, index, items)


def _add_into_list(out: list[Any], g: list[Any]) -> None:
    """``out[i] += g[i]`` for every ``i``, for adjoints of lists (``None`` is zero)."""
    if len(out) == len(g) >= 16:
        # Numbers only (a sum from ``0.0`` is a float: no ``None``, list or array entry,
        # whose ``+`` would mean something else): added at the speed of C.
        try:
            dense = type(sum(out, 0.0)) is float and type(sum(g, 0.0)) is float
        except TypeError:
            dense = False
        if dense:
            out[:] = map(_add, out, g)
            return
    for i, gi in enumerate(g):
        if gi is None:
            continue
        old = out[i]
        out[i] = gi if old is None else old + gi if type(old) is float and \
            type(gi) is float else add_adjoint(old, gi)


def _refs_of_item(outer: list[Any]) -> int:
    item = outer[0]
    return _refs(item)


#: ``_refs(inner)`` in :func:`nested_entry_adjoint_owned` for a list that only the (owned)
#: outer list holds.
_SOLE_ITEM = _refs_of_item([[]]) if hasattr(sys, "getrefcount") else -1


def entry_write_of_list(prev: Any, index: int) -> tuple[Any, Any]:
    """:func:`setitem_adjoint` for a write of one float into a list of floats that keeps
    its length (``prev`` a list, ``index`` an int): the adjoint before the write and the
    written float's. ``transforms.inplace`` may make it ``v_bar = xs_bar[i]; xs_bar[i] =
    0.0`` in a loop owning the adjoint."""
    return setitem_adjoint(prev, index)


def entry_write_of_list_owned(prev: Any, index: int) -> tuple[Any, Any]:
    """:func:`entry_write_of_list` clearing the entry of ``prev`` itself when nothing else
    holds it (as :func:`getitem_adjoint_owned`)."""
    if type(prev) is list and _refs(prev) <= _SOLE:
        item = prev[index]
        prev[index] = None
        return prev, item
    return entry_write_of_list(prev, index)


def owned_float_list(prev: Any, x: Any) -> list[Any]:
    """An adjoint for the list of floats ``x`` with ``prev``'s values (``0.0`` for zeros)
    that nothing else holds: ``prev`` itself when only the caller's dead local does and it
    has no ``None`` entry, else a new list. A loop adding into its entries then updates it
    with ``x_bar[i] += g``, no call and no check per entry."""
    if prev is None:
        return [0.0] * len(x)
    if type(prev) is list and _refs(prev) <= _SOLE and numbers_only(prev):
        return prev
    return [0.0 if p is None else p for p in prev]


def float_pop_adjoint(prev: Any) -> tuple[Any, Any]:
    """:func:`pop_adjoint` for the reverse of ``xs.append(v)`` on a list of floats: the
    transforms emit it where the types say so, so that ``transforms.inplace`` may pop from
    an adjoint a loop owns (:func:`owned_float_pops`, :func:`pop_float`)."""
    return pop_adjoint(prev)


def float_pop_adjoint_owned(prev: Any) -> tuple[Any, Any]:
    """:func:`float_pop_adjoint` popping from ``prev`` itself when nothing else holds it."""
    return pop_adjoint_owned(prev)


def owned_float_pops(prev: Any) -> Any:
    """The adjoint ``prev`` of a list of floats (``None``: zero) as a list that nothing else
    holds and with no ``None`` entry, for a loop that pops its entries (:func:`pop_float`)."""
    if prev is None:
        return None
    if type(prev) is list and _refs(prev) <= _SOLE and numbers_only(prev):
        return prev
    return [0.0 if p is None else p for p in prev]


def float_pops(prev: Any) -> Any:
    """The ``pop`` of :func:`owned_float_pops` of ``prev``, for a loop popping every entry
    it reads and dropping the rest: a function giving ``0.0`` for a zero adjoint."""
    if prev is None:
        return _zero_pop
    if type(prev) is list and _refs(prev) <= _SOLE and numbers_only(prev):
        return prev.pop  # (checked here, not in a call: a call would hold it once more)
    return [0.0 if p is None else p for p in prev].pop


def _zero_pop() -> float:
    return 0.0


def pop_float(prev: Any) -> Any:
    """The last entry of the adjoint ``prev`` of a list of floats that a loop owns
    (:func:`owned_float_list`), taken out of it: the reverse of one ``xs.append(v)``. A zero
    adjoint (``None``) stays zero and gives ``0.0``."""
    return 0.0 if prev is None else prev.pop()


def entry_write_adjoint(prev: Any, index: Any) -> tuple[Any, Any]:
    """:func:`setitem_adjoint` for a write into one entry of a float64 array (``index`` as
    many integers as it has axes, ``prev`` an array): the adjoint before the write and the
    written number's, a NumPy scalar."""
    out = prev.copy()
    out[index] = 0.0
    return out, prev[index]


def entry_write_adjoint_owned(prev: Any, index: Any) -> tuple[Any, Any]:
    """:func:`entry_write_adjoint` clearing the entry of ``prev`` itself when nothing else
    holds it (as :func:`getitem_adjoint_owned`)."""
    if type(prev) is _ndarray() and _refs(prev) <= _SOLE and _own_array(prev):
        item = prev[index]
        prev[index] = 0.0
        return prev, item
    return entry_write_adjoint(prev, index)


def owned_array(prev: Any, x: Any) -> Any:
    """An adjoint for the float64 array ``x`` with ``prev``'s values (zeros for ``None``)
    that nothing else holds: ``prev`` itself when only the caller's dead local does, else a
    new array. A loop adding into entries of it then updates it in place with no check."""
    import numpy

    if prev is None:
        return numpy.zeros(x.shape)
    if type(prev) is numpy.ndarray and _refs(prev) <= _SOLE and _own_array(prev) and \
            prev.shape == x.shape:
        return prev
    out = numpy.zeros(x.shape)
    out += prev
    return out


def _own_array(a: Any) -> bool:
    """Whether ``a`` is a float64 array owning its writable data (no view of another)."""
    import numpy

    return type(a) is numpy.ndarray and a.base is None and a.dtype == numpy.float64 and \
        a.flags.writeable


def _basic_index(index: Any) -> bool:
    """Whether ``index`` selects each element at most once (``+=`` is then ``add.at``)."""
    import numpy

    if type(index) is tuple:
        return all(_basic_index(i) for i in index)
    return isinstance(index, (int, numpy.integer, slice)) or index is Ellipsis


def setitem_adjoint_owned(prev: Any, index: Any) -> tuple[Any, Any]:
    """:func:`setitem_adjoint` for a ``prev`` that the generated code never reads again and
    that nothing else holds (as for :func:`getitem_adjoint_owned`): the slot is cleared in
    place, so a loop writing ``x[i]`` costs O(1) per write instead of a copy."""
    import numpy

    t = type(prev)
    if t is numpy.ndarray and _refs(prev) <= _SOLE and _own_array(prev) and \
            _basic_index(index):
        item = numpy.array(prev[index])
        prev[index] = 0.0
        return prev, item
    if t is list and _refs(prev) <= _SOLE and not isinstance(index, slice):
        item = prev[index]
        prev[index] = None
        return prev, item
    return setitem_adjoint(prev, index)


def pop_adjoint_owned(prev: Any) -> tuple[Any, Any]:
    """:func:`pop_adjoint` for a ``prev`` the generated code never reads again and that
    nothing else holds (as for :func:`getitem_adjoint_owned`): the last entry is popped in
    place, so the reverse of a loop of appends costs O(1) per item instead of a copy."""
    if type(prev) is list and prev and _refs(prev) <= _SOLE:
        last = prev.pop()
        return prev, last
    return pop_adjoint(prev)


def getattr_adjoint_owned(prev: Any, obj: Any, name: str, g: Any) -> Any:
    """:func:`getattr_adjoint` for a ``prev`` the generated code never reads again and that
    nothing else holds (as for :func:`getitem_adjoint_owned`): ``g`` is added into it in
    place, so a loop reading ``p.x`` costs O(1) per read instead of a copy of the adjoint."""
    if g is not None and type(prev) is Attrs and _refs(prev) <= _SOLE:
        prev[name] = add_adjoint(prev.get(name), g)
        return prev
    return getattr_adjoint(prev, obj, name, g)


def setattr_adjoint_owned(prev: Any, name: str) -> tuple[Any, Any]:
    """:func:`setattr_adjoint` for a ``prev`` that nothing else holds: the field's adjoint
    is taken out of it in place."""
    if type(prev) is Attrs and _refs(prev) <= _SOLE:
        return prev, prev.pop(name, None)
    return setattr_adjoint(prev, name)
