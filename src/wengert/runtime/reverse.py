"""Run-time helpers of reverse mode: what generated pullbacks call to build, split and
accumulate adjoints, and the dispatchers that reach the driver for callees whose types were
unknown when the derivative was made."""

from __future__ import annotations

import dataclasses
import sys
from operator import add as _add
from types import FunctionType as _FunctionType
from types import MethodDescriptorType as _MethodDescriptorType
from types import WrapperDescriptorType as _WrapperDescriptorType
from typing import Any

from wengert.diagnostics import NonDifferentiableError, OutputNotScalarError, SourceLoc
from wengert.objects import is_namedtuple, namedtuple_field, namedtuple_method

# ------------------------------------------------------------------------------------------
# Adjoint helpers called by generated pullbacks.  ``None`` is a zero adjoint everywhere;
# containers of adjoints hold ``None`` at zero entries.  Each helper returns new adjoint
# containers and never mutates the ones it is given: a cotangent passed in by the caller
# may be shared.
# ------------------------------------------------------------------------------------------


class Attrs(dict):
    """The adjoint of an object's attributes (a dataclass or a plain object): name -> adjoint."""


def _attrs(adj: Any) -> Attrs:
    """An object's adjoint as :class:`Attrs`: code differentiated again meets the form the
    API gives it too, an instance of the object's class holding its fields' adjoints."""
    return Attrs(adj) if isinstance(adj, dict) else Attrs(vars(adj))


def add_floats(a: Any, b: Any) -> Any:
    """``a + b`` for two adjoints known to be floats: generated code shows it as
    ``a_bar += b`` when the sum keeps the name, else as ``a + b`` (never a call)."""
    return a + b


def add_adjoint(a: Any, b: Any) -> Any:
    """``a + b`` for adjoints of any structure; ``None`` is zero; dict keys may differ."""
    if a is None:
        return b
    if b is None:
        return a
    if type(a) is float and type(b) is float:
        return a + b
    if isinstance(a, dict):
        out = type(a)(a)
        for k, v in b.items():
            out[k] = add_adjoint(out.get(k), v)
        return out
    if isinstance(a, (list, tuple)) and not hasattr(a, "shape"):
        if len(a) != len(b):
            raise ValueError(f"adjoints of different lengths: {len(a)} and {len(b)}")
        items = [x + y if type(x) is float and type(y) is float else add_adjoint(x, y)
                 for x, y in zip(a, b)]
        return tuple(items) if isinstance(a, tuple) else items
    return a + b


def spread_adjoint(prev: Any, g: Any, n: int) -> Any:
    """``add_adjoint(prev, [g] * n)``: the adjoint ``g`` of a sum of the ``n`` numbers of a
    list added into each entry of the list's adjoint ``prev``, with no list of ``g`` made
    (``total = sum(ws)``)."""
    # (The same structure as ``add_adjoint`` gives, zeros included: code differentiated
    # again reads an adjoint's structure, and a list of zeros is not a zero list.)
    if prev is None:
        return [g] * n
    if type(prev) is list and len(prev) == n:
        if g is None:
            return list(prev)
        if type(g) is float:
            return [g if p is None else p + g for p in prev]
    return add_adjoint(prev, [g] * n)


def total_adjoint(bar: Any) -> Any:
    """The sum of the entries of the list adjoint ``bar`` (``None``: zero), ``None`` for a
    zero one: what :func:`spread_adjoint` gives ``g`` back."""
    if bar is None:
        return None
    return sum(0.0 if b is None else b for b in bar)


def unit_like(y: Any) -> Any:
    """The seed of a gradient of ``y``: ``1`` in ``y``'s precision (a float32 result is
    differentiated in float32, as ``grad`` of it is). Anything but one float is refused:
    a gradient of a vector would otherwise be the gradient of its sum."""
    t = type(y)
    if t is float:
        return 1.0
    import numpy

    if isinstance(y, numpy.floating):
        return t(1.0)
    if t is numpy.ndarray and y.shape == () and y.dtype.kind == "f":
        return numpy.ones((), y.dtype)
    if isinstance(y, (int, bool, numpy.integer)):
        raise OutputNotScalarError(
            f"grad requires a float output; the function returned {t.__name__} {y!r} "
            "(an int has no derivative)")
    shape = f" of shape {y.shape}" if t is numpy.ndarray else ""
    raise OutputNotScalarError(
        f"grad requires a scalar float output; the function returned {t.__name__}{shape}; "
        "use wengert.jacrev or wengert.jacfwd for its Jacobian, wengert.vjp for a "
        "vector-Jacobian product")


def nonzero(a: Any, like: Any) -> Any:
    """``a``, or a materialised zero shaped like the primal ``like`` when ``a`` is ``None``."""
    if a is not None:
        return a
    if hasattr(like, "__next__"):
        return []  # an iterator's adjoint is the list of its items' (none here)
    from wengert.tangents import zeros_like

    z = zeros_like(like)
    return 0.0 if z is None else _as_attrs(z)


def _as_attrs(z: Any) -> Any:
    """A zero tangent in the form generated pullbacks add: a dataclass as :class:`Attrs`
    (``tangents.zeros_like`` makes the API's form, a dataclass of zeros)."""
    t = type(z)
    if t is float or t is list and all(type(v) is float for v in z):
        return z
    if dataclasses.is_dataclass(z) and not isinstance(z, type):
        return Attrs({f.name: _as_attrs(getattr(z, f.name)) for f in dataclasses.fields(z)})
    if t is list or t is tuple:
        return t(_as_attrs(v) for v in z)
    if t is dict:
        return {k: _as_attrs(v) for k, v in z.items()}
    return z


def snapshot(x: Any) -> Any:
    """A shallow copy of a container that the program mutates later (a residual stays put)."""
    if isinstance(x, (list, dict, set)):
        return type(x)(x)
    copy = getattr(x, "copy", None)
    if copy is not None and hasattr(x, "shape"):
        return copy()
    return x


def _real(x: Any) -> Any:
    """The dtype of an adjoint of the array ``x``: its own if a float one (float32 stays
    float32), else float64."""
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else float


def _empty_like(x: Any, size: int | None = None) -> Any:
    import numpy

    if isinstance(x, numpy.ndarray):
        return numpy.zeros(x.shape, dtype=_real(x))
    if isinstance(x, dict):
        return {}
    if isinstance(x, (list, tuple)) or size is not None:
        return [None] * (len(x) if size is None else size)
    return Attrs()


def getitem_adjoint(prev: Any, x: Any, index: Any, g: Any, size: int | None = None) -> Any:
    """The adjoint of ``x`` after adding ``g`` at ``x[index]`` (the reverse of a read)."""
    if g is None:
        return prev
    if type(x) is list and type(index) is int:  # the common case first: one item of a list
        n = len(x) if size is None else size
        out = [None] * n if prev is None else list(prev)
        old = out[index]
        if old is None:
            out[index] = g
        elif type(old) is float and type(g) is float:
            out[index] = old + g
        else:
            out[index] = add_adjoint(old, g)
        return tuple(out) if isinstance(prev, tuple) else out
    if type(x) is list and type(index) is slice:  # a slice of a list (``row[:j]``)
        n = len(x) if size is None else size
        if prev is None and index.step is None and type(g) is list:
            start, stop, _ = index.indices(n)
            if len(g) == stop - start or stop <= start and not g:
                out = [None] * n
                out[start:stop] = g  # (nothing there yet)
                return out
        out = [None] * n if prev is None else list(prev)
        _add_into_slice(out, index, g)
        return tuple(out) if isinstance(prev, tuple) else out
    import numpy

    if isinstance(x, numpy.ndarray):
        out = _empty_like(x) if prev is None else numpy.array(prev, dtype=_real(prev))
        if isinstance(index, (int, numpy.integer, slice)) or index is Ellipsis:
            out[index] += g
        else:
            numpy.add.at(out, index, g)
        return out
    if isinstance(x, dict):
        out = {} if prev is None else dict(prev)
        out[index] = add_adjoint(out.get(index), g)
        return out
    n = len(x) if size is None else size
    out = [None] * n if prev is None else list(prev)
    if isinstance(index, slice):
        _add_into_slice(out, index, g)
    else:
        out[index] = add_adjoint(out[index], g)
    return tuple(out) if isinstance(x, tuple) and prev is None or isinstance(prev, tuple) \
        else out


_NONE_ID = {id(None)}


def _add_into_slice(out: list[Any], index: slice, g: Any) -> None:
    """``out[index] += g`` entry by entry, for adjoints of lists (``None`` is zero)."""
    if index.step is None or index.step == 1:
        start, stop, _ = index.indices(len(out))
        # (identities, not ``list.count``: entries may be arrays, whose ``==`` is elementwise)
        if stop <= start or set(map(id, out[start:stop])) == _NONE_ID:
            out[start:stop] = g  # the common case: nothing there yet
            return
    for j, gj in zip(range(*index.indices(len(out))), g):
        old = out[j]
        out[j] = gj if old is None else old + gj if type(old) is float and \
            type(gj) is float else add_adjoint(old, gj)


def entry_adjoint(prev: Any, x: dict, key: Any, g: Any) -> Any:
    """:func:`getitem_adjoint` for the summed adjoint ``g`` of every read of ``x[key]`` (a
    dict nothing changes): a key ``x`` does not hold was never read (the read would have
    raised), so it gets no entry."""
    if key not in x:
        return prev
    return getitem_adjoint(prev, x, key, g)


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


def numbers_only(xs: list[Any]) -> bool:
    """Whether the adjoint or tangent ``xs`` of a list of floats has no ``None`` (zero)
    entry: its sum, in C, fails on one (``None not in xs`` compares each float with ``None``
    through rich comparison, five times slower)."""
    try:
        sum(xs, 0.0)
    except TypeError:
        return False
    return True


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


def _ndarray() -> type:
    import numpy

    return numpy.ndarray


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


def setitem_adjoint(prev: Any, index: Any) -> tuple[Any, Any]:
    """The reverse of ``x[index] = v``: (adjoint of ``x`` before, adjoint of ``v``)."""
    import numpy

    if prev is None:
        return None, None
    if isinstance(prev, numpy.ndarray):
        item = numpy.array(prev[index])
        kept = last_writes(prev, index)
        if kept is not None:
            item = numpy.where(kept, item, 0.0).astype(item.dtype)
        out = prev.copy()
        out[index] = 0.0
        return out, item
    if isinstance(prev, dict):
        out = dict(prev)
        return out, out.pop(index, None)
    out = list(prev)
    if isinstance(index, slice):
        item = out[index]
        for j in range(*index.indices(len(out))):
            out[j] = None
        return out, item
    item = out[index]
    out[index] = None
    # (a tuple's adjoint stays a tuple: reverse mode's write-back into a tuple passed in)
    return (tuple(out) if type(prev) is tuple else out), item


def slice_write_adjoint(prev: Any, index: Any, n: int | None) -> tuple[Any, Any]:
    """The reverse of ``xs[i:j] = v`` on a list ``xs`` of ``n`` items (``v`` of any length:
    the write may change ``xs``'s): the adjoint of ``xs`` before (``prev`` with ``v``'s
    entries taken out and ``j - i`` zeros put back) and ``v``'s adjoint. Any other write is
    :func:`setitem_adjoint`'s."""
    if prev is None:
        return None, None
    if n is None or type(index) is not slice or type(prev) is not list:
        return setitem_adjoint(prev, index)
    start, stop, step = index.indices(n)
    if step != 1:
        return setitem_adjoint(prev, index)  # (an extended slice keeps the length)
    stop = max(stop, start)
    m = len(prev) - n + (stop - start)
    out = list(prev)
    item = out[start:start + m]
    out[start:start + m] = [None] * (stop - start)
    return out, item


def slice_write_merge(rest: Any, item: Any, index: Any, n: int | None, size: int) -> Any:
    """:func:`slice_write_adjoint`'s transpose: ``rest`` (``n`` entries) with its slice
    ``index`` replaced by ``item`` (``None``: zeros), ``size`` entries in all."""
    if rest is None and item is None:
        return None
    if n is None or type(index) is not slice or index.indices(n)[2] != 1:
        rest = [None] * size if rest is None else list(rest)
        if item is not None:
            for j, g in zip(range(*index.indices(size)), item):
                rest[j] = g
        return rest
    start, stop, _ = index.indices(n)
    stop = max(stop, start)
    m = size - n + (stop - start)
    out = [None] * n if rest is None else list(rest)
    out[start:stop] = [None] * m if item is None else list(item)
    return out


def last_writes(x: Any, index: Any) -> Any:
    """For ``x[index] = v`` with an integer-array index: which entries of ``v`` end up in
    ``x`` (a position named twice keeps the last value written to it), as a boolean array
    shaped like ``x[index]``; ``None`` when every entry does (no position can repeat).
    ``x`` may carry leading batch axes in front of ``index``'s; ``None`` (a symbolic zero)
    has no entries to keep."""
    import numpy

    if x is None or not _fancy(index):
        return None
    shape = numpy.shape(x)
    ids = numpy.arange(numpy.prod(numpy.shape(numpy.empty(shape)[index]), dtype=int))
    ids = ids.reshape(numpy.shape(numpy.empty(shape)[index]))
    owner = numpy.full(shape, -1)
    owner[index] = ids
    return owner[index] == ids


def _fancy(index: Any) -> bool:
    """Whether ``index`` selects with an integer array or list (positions may repeat)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, list) or getattr(p, "dtype", None) is not None and
               getattr(p, "ndim", 0) > 0 and p.dtype.kind in "iu" for p in parts)


def pop_adjoint(prev: Any) -> tuple[Any, Any]:
    """The reverse of ``xs.append(v)``: (adjoint of ``xs`` before, adjoint of ``v``)."""
    if prev is None:
        return None, None
    return list(prev[:-1]), prev[-1]


def pop_adjoint_owned(prev: Any) -> tuple[Any, Any]:
    """:func:`pop_adjoint` for a ``prev`` the generated code never reads again and that
    nothing else holds (as for :func:`getitem_adjoint_owned`): the last entry is popped in
    place, so the reverse of a loop of appends costs O(1) per item instead of a copy."""
    if type(prev) is list and prev and _refs(prev) <= _SOLE:
        last = prev.pop()
        return prev, last
    return pop_adjoint(prev)


def unpop_adjoint(prev: Any, g: Any, index: int, n: int) -> Any:
    """The reverse of ``v = xs.pop(index)`` on a list of ``n`` items: the adjoint of ``xs``
    before the pop, ``prev`` (the shorter list's) with ``g`` (``v``'s) put back at ``index``."""
    if prev is None and g is None:
        return None
    out = [None] * (n - 1) if prev is None else list(prev)
    out.insert(index + n if index < 0 else index, g)
    return out


def when(flag: bool, g: Any) -> Any:
    """``g`` where ``flag`` holds, else zero (``None``): the part of an adjoint or tangent
    that goes one way of a choice made in the forward pass (``d.pop(k, default)`` reads
    the entry where the key was there, else the default)."""
    return g if flag else None


def unless(flag: bool, g: Any) -> Any:
    """:func:`when` for the other way."""
    return None if flag else g


def remove_adjoint(prev: Any, index: int, n: int) -> tuple[Any, Any]:
    """(``prev`` without its entry at ``index``, that entry) for the adjoint of a list of
    ``n`` items: the transpose of :func:`unpop_adjoint`."""
    if prev is None:
        return None, None
    out = list(prev)
    g = out.pop(index + n if index < 0 else index)
    return out, g


def getattr_adjoint(prev: Any, obj: Any, name: str, g: Any) -> Any:
    """The adjoint of ``obj`` after adding ``g`` to its attribute ``name``."""
    if g is None:
        return prev
    k = namedtuple_field(type(obj), name)
    if k is not None:  # a named tuple's field is an item
        return getitem_adjoint(prev, obj, k, g)
    out = Attrs() if prev is None else _attrs(prev)
    out[name] = add_adjoint(out.get(name), g)
    return out


def fields_adjoint(obj: Any, names: tuple[str, ...], *gs: Any) -> Any:
    """The adjoint of ``obj`` from zero after adding each ``gs[k]`` to its attribute
    ``names[k]`` (distinct names): a chain of :func:`getattr_adjoint` calls made as one
    (the reverse of reading ``b.m``, ``b.v`` and ``b.x`` of an item in a loop)."""
    if namedtuple_field(type(obj), names[0]) is not None:
        out = None
        for name, g in zip(names, gs):
            out = getattr_adjoint(out, obj, name, g)
        return out
    out = None
    for name, g in zip(names, gs):
        if g is not None:
            if out is None:
                out = Attrs()
            out[name] = g
    return out


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


def field_adjoint(g: Any, name: str) -> Any:
    """The adjoint of the constructor argument stored in field ``name`` (``g``: the new
    object's adjoint, an :class:`Attrs` or ``None``)."""
    if g is None:
        return None
    return g.get(name) if isinstance(g, dict) else getattr(g, name, None)


def setattr_adjoint(prev: Any, name: str) -> tuple[Any, Any]:
    """The reverse of ``obj.name = v``: (adjoint of ``obj`` before, adjoint of ``v``)."""
    if prev is None:
        return None, None
    out = _attrs(prev)
    return out, out.pop(name, None)


def check_list(obj: Any, name: str) -> None:
    """Reverse mode treats ``obj.append(v)`` as a list append: make sure it is one."""
    if type(obj) is not list:
        from wengert.diagnostics import NonDifferentiableError

        raise NonDifferentiableError(
            f"{type(obj).__name__}.{name}() receives an active value; only list.{name}() "
            "is differentiated")


def item_adjoint(g: Any, k: int) -> Any:
    """Entry ``k`` of a sequence adjoint (``None`` when the whole adjoint is zero)."""
    return None if g is None else g[k]


def display_item_adjoint(g: Any, k: int, like: Any) -> Any:
    """:func:`item_adjoint` for the adjoint ``g`` of a list or tuple display, which is an
    array where a NumPy function read the display as one (``np.dot([x, y], w)``): ``like``
    is ``g`` itself, so that its tangents, which carry batch axes in front, are cut past
    them (:func:`item_tangent`)."""
    return None if g is None else g[k]


def item_tangent(t: Any, k: int, like: Any) -> Any:
    """The tangent of :func:`item_adjoint`: entry ``k`` of ``t`` past the batch axes it has
    beyond the array ``like``."""
    if t is None:
        return None
    if type(t) is _ndarray() and type(like) is _ndarray():
        return t[(*(slice(None),) * (t.ndim - like.ndim), k)]
    return t[k]


def split_adjoint(g: Any, lens: tuple[int | None, ...]) -> Any:
    """Split the adjoint of ``[a, *b, c]`` into one entry per display item."""
    if g is None:
        return None
    out, i = [], 0
    for n in lens:
        if n is None:
            out.append(g[i])
            i += 1
        else:
            out.append(list(g[i:i + n]))
            i += n
    return out


def key_adjoint(g: Any, key: Any) -> Any:
    """The adjoint of ``d[key]``'s value in a dict display."""
    return None if g is None else g.get(key)


def subdict_adjoint(g: Any, sub: Any) -> Any:
    """The adjoint of ``**sub`` in a dict display."""
    if g is None:
        return None
    return {k: g.get(k) for k in sub}


def unshadowed(g: Any, keys: tuple[Any, ...], dicts: tuple[Any, ...]) -> Any:
    """The adjoint ``g`` of a dict display without the keys a later entry of it gives
    (``keys``, and those of the ``**`` ``dicts``): what an earlier entry put there was
    replaced, and gets none of it (``{**base, "w": v}``)."""
    if g is None:
        return None
    return {k: v for k, v in g.items()
            if k not in keys and not any(k in d for d in dicts)}


def unpack_adjoint(parts: tuple[Any, ...], value: Any, star: int | None) -> Any:
    """The adjoint of the value unpacked by ``a, *b, c = value`` from its targets' adjoints."""
    if star is None and type(value) is tuple:  # ``for w, x in zip(ws, xs)``: the parts
        for p in parts:
            if p is not None:
                return tuple(parts)
        return None
    if all(p is None for p in parts):
        return None
    items: list[Any] = []
    for k, p in enumerate(parts):
        if k == star:
            n = len(value) - (len(parts) - 1)
            items.extend(p if p is not None else [None] * n)
        else:
            items.append(p)
    if isinstance(value, tuple):
        return tuple(items)
    if isinstance(value, dict):
        return dict(zip(value, items))
    if hasattr(value, "shape"):
        import numpy
        like = numpy.asarray(value, dtype=float)
        return numpy.array([numpy.zeros(like.shape[1:]) if p is None else p for p in items])
    return items


def push(items: list[Any], g: Any) -> list[Any]:
    """Append ``g`` to ``items`` and return the list (a loop-carried collector)."""
    items.append(g)
    return items


def padded(items: list[Any], iterable: Any) -> list[Any]:
    """``items`` with ``None`` (zero) adjoints for the items of ``iterable`` that a loop left
    by ``break`` or ``return`` never reached."""
    if isinstance(iterable, dict) or not hasattr(iterable, "__len__"):
        return items
    missing = len(iterable) - len(items)
    return items + [None] * missing if missing > 0 else items


def reversed_records(stack: list[Any], size: int) -> Any:
    """The records of a loop pushed flat (``stack.extend((c, b, a))`` per step, fields last
    first), last step first, each as the tuple ``(a, b, c)`` of its ``size`` fields: one
    reversed iterator zipped with itself, so neither step makes a tuple that outlives it
    (the forward's is freed once its fields are in the list, and ``zip`` reuses its own)."""
    steps = reversed(stack)
    return zip(*(steps,) * size)


def reversed_adjoint(collected: list[Any], iterable: Any) -> Any:
    """The adjoint of a loop's iterable from its items' adjoints (collected in reverse)."""
    if (not collected or collected[0] is None) and all(c is None for c in collected):
        return None
    items = padded(collected[::-1], iterable)
    if isinstance(iterable, tuple):
        return tuple(items)
    if isinstance(iterable, dict):
        return None  # iterating a dict yields its keys, which carry no derivative
    if hasattr(iterable, "shape"):
        import numpy
        like = numpy.asarray(iterable, dtype=float)
        return numpy.array([numpy.zeros(like.shape[1:]) if c is None else c for c in items])
    # A list, or an iterator (zip, enumerate, a generator): the adjoint of an iterator
    # is the list of its items' adjoints, which is what the rule that made it expects.
    return items


class Driver:
    """What generated code, and the driver's lower modules, reach the driver through: it is
    installed once by the driver (:func:`install_driver`, from ``driver/operators.py``),
    never imported, so the run time stays below everything else.

    ``vjp(f, args, kwargs, obj, site, ...)`` and ``jvp(f, args, dots, kwargs, kw_dots, obj,
    obj_dot, site, ...)`` find or derive a callee's VJP and JVP at run time;
    ``recomputable(f, site, args)`` refuses a callee that writes into its arguments;
    ``definition(f, kwargs)`` is the function a named tuple's method runs; ``has_rule(f)``
    whether a built-in method has rules; ``jvp_of_vjp(f, f_dot, args, g, dots, g_dot,
    site)`` the tangent of a dispatched pullback's output; ``grad(f, argnums)`` the API's
    ``grad``.
    """

    __slots__ = ("vjp", "jvp", "recomputable", "definition", "has_rule", "jvp_of_vjp", "grad")

    def __init__(self, *, vjp: Any, jvp: Any, recomputable: Any, definition: Any,
                 has_rule: Any, jvp_of_vjp: Any, grad: Any) -> None:
        self.vjp, self.jvp, self.recomputable = vjp, jvp, recomputable
        self.definition, self.has_rule = definition, has_rule
        self.jvp_of_vjp, self.grad = jvp_of_vjp, grad


#: The driver, once installed (``None`` while only the run time is imported).
DRIVER: Driver | None = None


def install_driver(driver: Driver) -> None:
    """Install the driver's entry points (once, when ``wengert`` is imported)."""
    global DRIVER
    DRIVER = driver


def driver() -> Driver:
    """The installed driver (the run time is used through ``wengert``, which installs it)."""
    if DRIVER is None:  # pragma: no cover - only reached importing wengert.runtime alone
        raise RuntimeError("wengert.runtime is used without the driver: import wengert")
    return DRIVER


#: Classes whose ``__getattribute__`` a class inherits when it defines none (a named
#: tuple's is ``tuple``'s).
_PLAIN_LOOKUP = (object, tuple, list, dict)


def method_function(site: Any, obj: Any, name: str) -> Any:
    """The function ``obj.name(...)`` calls with ``obj`` as its first argument (a method
    defined in ``obj``'s class), for a method call dispatched at run time in a gradient's IR
    differentiated again: the call is then ``f(obj, ...)``, a call of a function of values
    (:func:`dispatch_value`). Anything else ``obj.name`` may be (an attribute of the
    instance, a static or class method, a method written in C) is refused where it is
    called."""
    cls = type(obj)
    f = getattr(cls, name, None)
    if namedtuple_method(f) and DRIVER is not None:
        return DRIVER.definition(f, {})  # (a named tuple's ``_replace``, as defined)
    if type(f) is _FunctionType and name not in getattr(obj, "__dict__", ()) and \
            getattr(cls.__getattribute__, "__objclass__", None) in _PLAIN_LOOKUP:
        return f  # (attributes looked up as Python does: no ``__getattribute__`` of its own)
    if type(f) in (_MethodDescriptorType, _WrapperDescriptorType) and \
            name not in getattr(obj, "__dict__", ()) and DRIVER is not None and \
            DRIVER.has_rule(f):
        return f  # (a built-in type's method with rules: ``dict.items``, ``list.index``)
    raise NonDifferentiableError(
        f"{type(obj).__name__}.{name} is not a method defined in its class, and this call of "
        "it, dispatched at run time, differentiates to the first order only", site,
        hint="call a function known where the call is written, or a method of a class "
             "known there (a dataclass, an object made in the function)")


@dataclasses.dataclass(frozen=True)
class KeywordSite(SourceLoc):
    """The site of a call dispatched at run time given keyword arguments, in a gradient's
    IR differentiated again: :func:`dispatch_value`, :func:`dispatch_pullback` and their
    rules take all of its arguments by position, the last ones (``names``) standing for
    keyword arguments, and the dispatchers call the callee with those by keyword; their
    adjoints and tangents stay in the same places."""

    names: tuple[str, ...] = ()

    def plain(self) -> SourceLoc:
        """The site itself, without the keywords."""
        return SourceLoc(self.filename, self.lineno, self.col, self.end_lineno,
                         self.end_col, self.source_line)


def by_keyword(site: Any, args: tuple) -> tuple[tuple, dict[str, Any]]:
    """The positional and keyword arguments a dispatched call at ``site`` gives its callee
    for ``args`` (all of them by position where ``site`` is no :class:`KeywordSite`)."""
    if type(site) is not KeywordSite:
        return args, {}
    n = len(args) - len(site.names)
    return args[:n], dict(zip(site.names, args[n:]))


def dispatch_value(site: Any, f: Any, *args: Any) -> Any:
    """``f(*args)`` for a callee known only at run time, in a gradient's IR that is
    differentiated again: a plain call, whose rules dispatch its derivatives (the tangent
    through :func:`dispatch_tangent`, the adjoints through :func:`dispatch_pullback`)."""
    if type(site) is KeywordSite:
        positional, keywords = by_keyword(site, args)
        return f(*positional, **keywords)
    return f(*args)


def dispatch_pullback(site: Any, f: Any, args: tuple, g: Any) -> tuple:
    """The adjoints (``f``'s, then one per argument) that the dispatched ``f(*args)`` gives
    the output cotangent ``g``: its VJP found or derived at run time, its forward run again
    (a function of values, which forward mode differentiates again, where a pullback
    closure kept from the forward would not be)."""
    if g is None:
        return (None,) * (1 + len(args))
    positional, keywords = by_keyword(site, args)
    driver().recomputable(f, site, positional)
    # (The adjoints of keyword arguments come after the others', in their order.)
    _, pb = driver().vjp(f, positional, keywords, f, site, (), True)
    return pb(g)


def vjp_call(site: Any, f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``f(*args, **kwargs)`` and its pullback, for a callee known only at run time.

    The pullback returns one adjoint for ``f`` itself (always ``None``) followed by one
    per positional and keyword argument, in call order.
    """
    return driver().vjp(f, args, kwargs, None, site)


def vjp_method(site: Any, obj: Any, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``obj.name(*args, **kwargs)`` and its pullback: adjoints of ``obj`` and the arguments."""
    return driver().vjp(getattr(obj, name), args, kwargs, obj, site)


def vjp_call_checked(site: Any, borrowed: tuple[int, ...], f: Any, *args: Any,
                     **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_call` where the arguments at positions ``borrowed`` (1 for the first
    argument) are objects read out of containers, which the callee must not change."""
    return driver().vjp(f, args, kwargs, None, site, borrowed)


def vjp_call_active(site: Any, borrowed: tuple[int, ...], f: Any, *args: Any,
                    **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_call` of a callee that is itself a value being differentiated (a callable
    object): its adjoint is the pullback's first output, as a method's receiver's is."""
    return driver().vjp(f, args, kwargs, f, site, borrowed, callee=True)


def vjp_method_checked(site: Any, borrowed: tuple[int, ...], obj: Any, name: str, *args: Any,
                       **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_method` where the receiver (position 0) or arguments at positions
    ``borrowed`` are objects read out of containers, which the callee must not change."""
    return driver().vjp(getattr(obj, name), args, kwargs, obj, site, borrowed)


def inout(inouts: Any, i: int) -> Any:
    """The adjoint a caller passes for parameter ``i`` after the call (``None``: zero)."""
    return None if inouts is None else inouts[i]


def as_tuple(x: Any) -> tuple:
    """``*x`` in a call, made a tuple first so that its length is known to the pullback."""
    return x if type(x) is tuple else tuple(x)


def regroup(outs: Any, layout: tuple[Any, ...]) -> list[Any]:
    """Regroup a pullback's per-argument adjoints by call operand (``*t`` gets a tuple)."""
    res, i = [], 0
    for t in layout:
        if t is None:
            res.append(outs[i])
            i += 1
        else:
            res.append(tuple(outs[i:i + len(t)]))
            i += len(t)
    return res


def like_structure(adj: tuple[Any, ...], x: Any) -> Any:
    """The adjoint of ``x`` (a list, a tuple, an array) from a tuple of its items' adjoints."""
    if all(a is None for a in adj):
        return None
    return reversed_adjoint(list(adj)[::-1], x)


def finish_adjoint(adj: Any, x: Any) -> Any:
    """The adjoint of ``x`` with its zeros materialised in ``x``'s structure, as
    ``wengert.vjp``'s pullback returns it (for a ``vjp`` taken inside differentiated code)."""
    if isinstance(x, (bool, int, str)) or getattr(getattr(x, "dtype", None), "kind", "f") in "iub":
        return None  # no tangent space, whatever the adjoint computed
    if adj is None:
        from wengert.tangents import zeros_like

        z = zeros_like(x)
        return 0.0 if z is None and isinstance(x, float) else z
    if isinstance(adj, Attrs) and dataclasses.is_dataclass(x) and not isinstance(x, type):
        out = object.__new__(type(x))  # the cotangent of a dataclass is one, as at the API
        for f in dataclasses.fields(x):
            object.__setattr__(out, f.name, finish_adjoint(adj.get(f.name),
                                                           getattr(x, f.name)))
        return out
    if isinstance(adj, Attrs):
        return None  # a plain object has no tangent space of its own, as at the API
    if type(x) in (list, tuple) and type(adj) in (list, tuple) and len(adj) == len(x):
        return type(x)(finish_adjoint(a, b) for a, b in zip(adj, x))
    if is_namedtuple(type(x)) and isinstance(adj, (list, tuple)) and len(adj) == len(x):
        # (a named tuple's cotangent is one of its class, as at the API)
        return type(x)._make(finish_adjoint(a, b) for a, b in zip(adj, x))
    if type(x) is dict and type(adj) is dict:
        return {k: finish_adjoint(adj.get(k), v) for k, v in x.items()}
    return adj


def finished_cotangent(g: Any, x: Any) -> Any:
    """The transpose of :func:`finish_adjoint` in its adjoint: the cotangent ``g`` of a
    finished adjoint of ``x``, less the parts ``finish_adjoint`` drops (a plain object's, an
    int's: they have no tangent space, so what arrives for them is no derivative)."""
    if g is None or isinstance(x, (bool, int, str)) or \
            getattr(getattr(x, "dtype", None), "kind", "f") in "iub":
        return None
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        if dataclasses.is_dataclass(g) and not isinstance(g, type):
            # (a dataclass's cotangent is one at the API, an ``Attrs`` in generated code)
            return Attrs({f.name: finished_cotangent(getattr(g, f.name), getattr(x, f.name))
                          for f in dataclasses.fields(x)})
        return g
    if not isinstance(g, (list, tuple, dict)) and not hasattr(x, "__dict__"):
        return g
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)) and len(g) == len(x):
        items = [finished_cotangent(a, b) for a, b in zip(g, x)]
        return tuple(items) if isinstance(g, tuple) else items
    if type(x) is dict and type(g) is dict:
        return {k: finished_cotangent(v, x[k]) if k in x else v for k, v in g.items()}
    if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x):
        return None  # a plain object: ``finish_adjoint`` gives it none
    return g


def structure(a: Any) -> Any:
    """A copy of ``a`` deep enough that later appends, pops and assignments made to its
    lists and dicts do not show in it (floats, ints and arrays are not copied: the first
    two cannot change and an array cannot change shape). Cotangents take the structure
    their argument had when the call began."""
    t = type(a)
    if t is float or t is int or t is bool or t is str or a is None:
        return a
    if t is list:
        return [v if type(v) is float else structure(v) for v in a]
    if t is tuple:
        return tuple(structure(v) for v in a)
    if t is dict:
        return {k: structure(v) for k, v in a.items()}
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        out = object.__new__(t)
        for f in dataclasses.fields(a):
            object.__setattr__(out, f.name, structure(getattr(a, f.name)))
        return out
    d = getattr(a, "__dict__", None)
    if type(d) is dict and not isinstance(a, type) and not callable(a) and \
            t.__module__ not in ("builtins", "numpy") and t.__new__ is object.__new__:
        # A plain object's attributes (a list it holds may be appended to).
        out = object.__new__(t)
        out.__dict__.update({k: structure(v) for k, v in d.items()})
        return out
    return a


class Later:
    """A derived function still being generated when a caller links to it (recursion):
    generated code calls ``later.fn`` (of a VJP split in two, ``later.forward`` and
    ``later.pullback``), which are set once the function exists."""

    __slots__ = ("fn", "forward", "pullback", "__name__")

    def __init__(self, name: str) -> None:
        self.fn: Any = None
        self.forward: Any = None
        self.pullback: Any = None
        self.__name__ = name


def call_pullback(pb: Any, *args: Any) -> Any:
    """The pullback role of a VJP that is not split in two: its "residuals" are its
    pullback closure itself (see :func:`joined`)."""
    return pb(*args)


def joined(forward: Any, pullback: Any) -> Any:
    """The VJP ``(value, pullback)`` of a VJP split in two (``transforms/split.py``): the
    forward's residuals bound to the pullback. It carries the two as ``forward`` and
    ``pullback`` for callers that call them directly."""
    from functools import partial

    def vjp(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        value, res = forward(*args, **kwargs)
        return value, partial(pullback, res)

    vjp.forward = forward  # type: ignore[attr-defined]
    vjp.pullback = pullback  # type: ignore[attr-defined]
    vjp.__name__ = getattr(forward, "__name__", "vjp")
    return vjp
