"""Run-time helpers of forward mode: what generated JVPs call to read, write and iterate
tangents, and the dispatchers for callees whose types were unknown when the derivative was
made."""

from __future__ import annotations

import dataclasses
from itertools import compress as _compress
from itertools import repeat as _repeat
from operator import is_ as _is
from typing import Any, NoReturn

from wengert.diagnostics import NonDifferentiableError
from wengert.objects import namedtuple_field
from wengert.runtime.calls import by_keyword, driver
from wengert.runtime.reverse import Attrs, _ndarray, numbers_only

# ------------------------------------------------------------------------------------------
# Tangent helpers called by generated JVPs (forward mode).  ``None`` is a zero tangent;
# containers of tangents hold ``None`` at zero entries.  A tangent may carry leading batch
# axes (many directions at once): axes of array tangents are counted from the right.
# Unlike the adjoint helpers above, writes mutate tangent containers in place, so that
# aliases of a mutated object see the change in its tangent too.
# ------------------------------------------------------------------------------------------


def _batch_index(t: Any, x: Any, index: Any) -> Any:
    """``index`` into the tangent ``t`` of the array ``x``, past ``t``'s batch axes."""
    batch = t.ndim - x.ndim
    if batch <= 0:
        return index
    lead = (slice(None),) * batch
    return lead + index if isinstance(index, tuple) else (*lead, index)


def _moveaxis() -> Any:
    import numpy

    return numpy.moveaxis


def _advanced_first(index: Any) -> int:
    """How many axes an index whose advanced parts (arrays, and ints beside them) are
    separated by a slice, ``None`` or ``...`` puts first (NumPy moves them in front of every
    other axis: with a batched tangent's slices prepended, in front of the batch axes as
    well); ``0`` for any other index."""
    parts = index if type(index) is tuple else (index,)
    import numpy

    arrays = [k for k, p in enumerate(parts) if isinstance(p, (numpy.ndarray, list))]
    if not arrays:
        return 0
    advanced = [k for k, p in enumerate(parts)
                if k in arrays or isinstance(p, (int, numpy.integer)) and
                not isinstance(p, bool)]
    if advanced[-1] - advanced[0] == len(advanced) - 1:
        return 0  # (adjacent: their axes stay where they are)
    shapes = []
    for k in advanced:
        p = numpy.asarray(parts[k])
        shapes.extend([(int(p.sum()),)] * p.ndim if p.dtype == bool else [p.shape])
    return len(numpy.broadcast_shapes(*shapes))


def batch_read(t: Any, x: Any, index: Any) -> Any:
    """``t[index]`` for the tangent (or adjoint) ``t`` of the array ``x``, past ``t``'s
    batch axes, which stay in front."""
    return batch_front(t[_batch_index(t, x, index)], t, x, index)


def batch_front(item: Any, t: Any, x: Any, index: Any) -> Any:
    """``item``, read from ``t`` at ``_batch_index(t, x, index)``, with ``t``'s batch axes
    moved in front (NumPy puts the axes of advanced indices apart before them)."""
    if item is None or type(t) is not _ndarray() or type(item) is not _ndarray():
        return item
    batch = t.ndim - x.ndim
    if batch > 0 and (k := _advanced_first(index)):
        # (axes in front of all of these: an outer derivative's own batch, kept in front)
        e = item.ndim - batch - _ndim()(x[index])
        return _moveaxis()(item, range(e + k, e + k + batch), range(e, e + batch))
    return item


def batch_value(v: Any, t: Any, x: Any, index: Any) -> Any:
    """``v``, of batch axes in front and then ``x[index]``'s, with its axes in the order
    ``t[_batch_index(t, x, index)]`` has them (the transpose of :func:`batch_read`'s move)."""
    if type(v) is not _ndarray() or type(t) is not _ndarray():
        return v
    nb = t.ndim - x.ndim
    if nb > 0 and (k := _advanced_first(index)) and \
            (e := v.ndim - nb - _ndim()(x[index])) >= 0:
        return _moveaxis()(v, range(e, e + nb), range(e + k, e + k + nb))
    return v


def _ndim() -> Any:
    import numpy

    return numpy.ndim


def _tangent_error(message: str, site: Any = None) -> NoReturn:

    raise NonDifferentiableError(message, site)


def apply_rule(rule: Any, args: tuple, dots: tuple) -> tuple[Any, Any]:
    """Call the forward rule ``rule`` at run time: ``(value, tangent)``.

    The differential is called only when some tangent is not ``None``.
    """
    value, differential = rule(*args)
    if all(d is None for d in dots):
        return value, None
    return value, differential(*dots)


def nonzero_tangent(t: Any, x: Any) -> Any:
    """``t``, or a zero tangent for the number or array ``x`` when ``t`` is ``None``."""
    if t is not None:
        return t
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        import numpy

        return numpy.zeros(numpy.shape(x), dtype=numpy.result_type(x, float))
    return 0.0


def own_tangent(t: Any, *inputs: Any) -> Any:
    """``t``, or a copy of it where it is one of ``inputs`` (an argument's tangent passed
    through by a rule, ``b = y + 0.0``): the tangent of a new object that writes will fill
    in place must not be another value's (a shallow copy: a new container of the same
    items, as the object is)."""
    for i in inputs:
        if t is i:
            return tangent_copy(t)
    return t


def tangent_copy(t: Any) -> Any:
    """A shallow copy of the tangent ``t``: a new list or dict of the same items, a copy of
    an array (anything else as it is)."""
    if type(t) is list:
        return list(t)
    if type(t) is dict:
        return dict(t)
    copy = getattr(t, "copy", None)
    return copy() if copy is not None and hasattr(t, "shape") else t


def real_tangent(t: Any, x: Any, like_dot: Any = None, like: Any = None) -> Any:
    """A tangent for the mutable object ``x`` that later writes can fill in place. In
    batched forward mode ``like_dot`` is the tangent of a number or array ``like`` passed
    in: an array's zero tangent gets its leading batch axes, so that batched tangents can be
    written into it."""
    if isinstance(x, tuple) and (t is None or type(t) is tuple and len(t) == len(x)) and \
            any(type(v) in (list, dict) or hasattr(v, "__dict__") and not callable(v)
                for v in x):
        # A tuple holding lists, dicts or objects written into: their tangents made real
        # now (the tuple's tangent, a tuple too, cannot take them in later).
        ts = (None,) * len(x) if t is None else t
        return tuple(real_tangent(u, v) if u is None else u for u, v in zip(ts, x))
    if t is not None:
        return t
    if isinstance(x, tuple):
        # (a real tangent is one indexed plainly: a tuple of its items', zeros as None)
        return tuple(real_tangent(None, v) for v in x)
    if type(x) is list:
        return [None] * len(x)
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        import numpy

        if numpy.issubdtype(numpy.asarray(x).dtype, numpy.inexact):
            batch = ()
            if like_dot is not None and hasattr(like_dot, "shape"):
                batch = numpy.shape(like_dot)[:numpy.ndim(like_dot) - numpy.ndim(like)]
            return numpy.zeros(batch + numpy.shape(x), dtype=numpy.result_type(x, float))
        return None
    if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x):
        return Attrs()
    return None


def float_list_tangent(t: Any, x: list) -> list:
    """The tangent of the list of floats ``x`` with every zero a ``0.0``, so that reading
    an item needs no check (one scan in C when nothing is missing)."""
    if t is None:
        return [0.0] * len(x)
    if numbers_only(t):
        return t
    return [0.0 if v is None else v for v in t]


def seq_tangent(t: Any, x: Any) -> Any:
    """The tangent of a sequence spelled out item by item (``None`` items for a zero)."""
    if t is not None:
        return t
    return [None] * len(x)


def getitem_tangent(t: Any, x: Any, index: Any) -> Any:
    """The tangent of ``x[index]`` given the tangent ``t`` of ``x``."""
    if t is None:
        return None
    if hasattr(x, "shape") and hasattr(t, "shape"):
        if not hasattr(x, "ndim"):
            return None
        out = batch_read(t, x, index)
        if type(out) is _ndarray() and out.base is not None and out.ndim == t.ndim - x.ndim:
            # One number of x, with batch axes: a copy, as the number is. (A view would
            # change when the entry is written later, the number read before it would not.)
            return out.copy()
        return out
    if isinstance(x, dict):
        c = t.get(index)
        return _stored_zero(t, x, index, x[index]) if c is None and type(t) is dict else c
    if isinstance(x, (list, tuple)):
        c = t[index]
        return _stored_zero(t, x, index, x[index]) if c is None and type(t) is list else c
    if isinstance(x, (str, bytes, range)):
        return None
    _tangent_error(f"indexing a {type(x).__name__} holding active values has no derivative")


def _stored_zero(t: Any, x: Any, key: Any, v: Any) -> Any:
    """The zero tangent of the list or dict ``v`` read at ``key`` (an index or key, or an
    attribute's name) of ``x``, whose tangent is ``t``, made real and stored there (else
    ``None``): a list read now and appended to later through another read of the same
    place is one object, and so must its tangent be (``keep = [p.hist];
    p.hist.append(x)``)."""
    if type(v) is list or type(v) is dict:
        c = real_tangent(None, v)
        _store_tangent(t, x, key, c)
        return c
    return None


def _store_tangent(t: Any, x: Any, key: Any, c: Any) -> None:
    """``t[key] = c``, the tangent made for ``x[key]`` (``t`` the tangent of ``x``); and at
    every other place of the list ``x`` holding the same object with no tangent yet
    (``[row] * n``): one tangent for all of them, as a write through one place changes
    what every other place holds."""
    t[key] = c
    if type(x) is list and type(t) is list and len(t) == len(x):
        item = x[key]
        for k in _compress(range(len(x)), map(_is, x, _repeat(item))):
            if t[k] is None:
                t[k] = c
    elif isinstance(t, dict) and (type(x) is dict or hasattr(x, "__dict__")):
        held = x if type(x) is dict else vars(x)
        item = held.get(key)
        for k, v in held.items():
            if v is item and t.get(k) is None:
                t[k] = c  # (the same list in two fields, or under two keys)


def child_tangent(t: Any, x: Any, index: Any) -> Any:
    """The tangent of ``x[index]``, made real and stored in ``t`` so that writes reach it."""
    c = getitem_tangent(t, x, index)
    if c is not None or t is None:
        return c
    item = x[index]
    c = real_tangent(None, item)
    if c is not None:
        if isinstance(t, tuple):
            _tangent_error("a write into an object held in a tuple is not supported")
        _store_tangent(t, x, index, c)
    return c


def getattr_tangent(t: Any, x: Any, name: str) -> Any:
    """The tangent of ``x.name`` given the tangent ``t`` of ``x``."""
    if t is None:
        return None
    k = namedtuple_field(type(x), name)
    if k is not None:  # a named tuple's field is an item
        return getitem_tangent(t, x, k)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(t, dict):
        if name == "T":
            import numpy

            batch = t.ndim - x.ndim
            return numpy.transpose(t, (*range(batch), *range(t.ndim - 1, batch - 1, -1)))
        if name == "real":
            return t
        return None
    if isinstance(t, dict):
        c = t.get(name)
        return _stored_zero(t, x, name, getattr(x, name, None)) if c is None else c
    return None


def child_attr_tangent(t: Any, x: Any, name: str) -> Any:
    """The tangent of ``x.name``, made real and stored in ``t`` so that writes reach it."""
    c = getattr_tangent(t, x, name)
    if c is not None or t is None or not isinstance(t, dict):
        return c
    c = real_tangent(None, getattr(x, name))
    if c is not None:
        t[name] = c
    return c


def setitem_tangent(t: Any, x: Any, index: Any, v: Any, value: Any = None) -> Any:
    """Mirror ``x[index] = v`` on the tangent ``t`` of ``x`` (in place); return ``t``.
    ``value`` is what was written (a zero tangent of a slice written into a list is as
    long as it: the write may change the list's length)."""
    if t is None:
        if v is None:
            return None
        _tangent_error("a write of an active value into an object whose tangent was not "
                       "prepared (an alias the transform could not see)")
    if hasattr(x, "shape") and hasattr(t, "shape"):
        if v is not None and t.ndim < x.ndim + (getattr(v, "ndim", 0) -
                                                getattr(x[index], "ndim", 0)):
            _tangent_error("a batched tangent is written into an array whose zero tangent "
                           "has no batch axis")
        nb = t.ndim - x.ndim
        if nb > 0 and type(v) is _ndarray() and v.shape[:nb] == t.shape[:nb]:
            # A value spread over the entries it is written to (``b[1:3] = a[0]``): its axes
            # line up with theirs from the right, after the batch axes.
            pad = getattr(x[index], "ndim", 0) - (v.ndim - nb)
            if pad > 0:
                v = v.reshape(v.shape[:nb] + (1,) * pad + v.shape[nb:])
            v = batch_value(v, t, x, index)
        t[_batch_index(t, x, index)] = 0.0 if v is None else v
        return t
    if isinstance(index, slice) and isinstance(t, list):
        t[index] = [None] * len(x[index] if value is None else value) if v is None else v
        return t
    t[index] = v
    return t


def setattr_tangent(t: Any, name: str, v: Any) -> Any:
    """Mirror ``x.name = v`` on the tangent ``t`` (an :class:`Attrs`) of ``x``; return ``t``."""
    if t is None:
        if v is None:
            return None
        _tangent_error("a write of an active value into an object whose tangent was not "
                       "prepared (an alias the transform could not see)")
    t[name] = v
    return t


def pop_entry_tangent(t: Any, key: Any) -> Any:
    """Mirror ``d.pop(key)`` on the tangent ``t`` of the dict ``d`` (``None``: zero): the
    entry's tangent, taken out of ``t``."""
    return None if t is None else t.pop(key, None)


def append_tangent(t: Any, v: Any) -> Any:
    """Mirror ``xs.append(v)`` on the tangent ``t`` of the list ``xs``."""
    if t is None:
        if v is None:
            return None
        _tangent_error("an append of an active value to a list whose tangent was not prepared")
    t.append(v)
    return t


def extend_tangent(t: Any, v: Any, items: Any) -> Any:
    """Mirror ``xs.extend(items)`` (or ``xs += items``) on the tangent ``t`` of ``xs``."""
    if t is None:
        if v is None:
            return None
        _tangent_error("an extend with active values of a list whose tangent was not prepared")
    t.extend([None] * len(items) if v is None else v)
    return t


def unpack_tangent(t: Any, x: Any, n: int, star: int | None) -> list[Any]:
    """Tangents of the ``n`` targets of ``a, *b, c = x`` from the tangent ``t`` of ``x``."""
    if t is None:
        if star is None:
            return [None] * n
        out: list[Any] = [None] * n
        out[star] = [None] * (len(x) - (n - 1))
        return out
    if hasattr(x, "shape") and hasattr(t, "shape"):
        import numpy

        batch = t.ndim - x.ndim
        items = list(numpy.moveaxis(t, batch, 0)) if batch else list(t)
    elif isinstance(x, dict):
        items = [None] * len(x)  # unpacking a dict yields its keys
    else:
        items = list(t)
    if star is None:
        return items
    k = len(items) - (n - 1)
    return [*items[:star], items[star:star + k], *items[star + k:]]


def real_items(it: Any, t: Any) -> None:
    """Make the zero item tangents of the list ``it`` real containers, stored in its
    tangent ``t`` (which aliases of the list share), for a loop that writes into its items."""
    if type(t) is list and type(it) is list:
        # One tangent per object, shared by every place holding it (``[row] * n``): a write
        # through one place changes what the others hold.
        made: dict[int, Any] = {}
        for x, u in zip(it, t):
            if u is not None:
                made.setdefault(id(x), u)
        for j, x in enumerate(it):
            if t[j] is None:
                c = made.get(id(x))
                if c is None:
                    c = made[id(x)] = real_tangent(None, x)
                t[j] = c


def zero_items() -> Any:
    """Zero tangents (``None``) for the items of an iterator however many it yields."""
    import itertools

    return itertools.repeat(None)


def iter_tangent(it: Any, t: Any, real: bool = False) -> Any:
    """Pairs ``(item, item tangent)`` for ``for item in it`` given the tangent ``t`` of ``it``.

    ``real``: the loop may write into its items, so zero item tangents of a list are made
    real containers first (and stored in ``t``, which aliases of the list share).
    """
    import itertools

    if real:
        real_items(it, t)
    if t is None or isinstance(it, dict):
        return zip(it, itertools.repeat(None))
    if hasattr(it, "shape") and hasattr(t, "shape"):
        import numpy

        batch = t.ndim - it.ndim
        return zip(it, numpy.moveaxis(t, batch, 0) if batch else t)
    return zip(it, t)


def jvp_call(site: Any, f: Any, args: tuple, dots: tuple, kw_dots: Any = None,
             **kwargs: Any) -> tuple[Any, Any]:
    """``f(*args, **kwargs)`` and its tangent, for a callee known only at run time."""
    return driver().jvp(f, args, dots, kwargs, kw_dots, None, None, site)


def jvp_call_active(site: Any, f: Any, f_dot: Any, args: tuple, dots: tuple,
                    kw_dots: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """:func:`jvp_call` of a callee that is itself a value being differentiated (a
    callable object), whose tangent is ``f_dot``."""
    return driver().jvp(f, args, dots, kwargs, kw_dots, f, f_dot, site, callee=True)


def jvp_method(site: Any, obj: Any, obj_dot: Any, name: str, args: tuple, dots: tuple,
               kw_dots: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """``obj.name(*args, **kwargs)`` and its tangent; writes reach ``obj_dot`` in place."""
    if type(obj) is dict and name in _DICT_METHODS and not kwargs:
        return _dict_method(obj, obj_dot, name, args, dots)
    if type(obj) is list and name in _LIST_METHODS and not kwargs:
        return _list_method(obj, obj_dot, name, args, dots, site)
    return driver().jvp(getattr(obj, name), args, dots, kwargs, kw_dots, obj, obj_dot, site)


def dispatch_tangent(site: Any, f: Any, f_dot: Any, args: tuple, dots: Any) -> Any:
    """The tangent of :func:`~wengert.runtime.calls.dispatch_value`'s ``f(*args)`` for
    the tangents ``f_dot`` of the callee (a callable object's fields) and ``dots`` of the
    arguments (``None``: zeros): its JVP found or derived at run time."""
    dots = _dots_of(args, dots)
    args, keywords = by_keyword(site, args)
    dots, kw_dots = dots[:len(args)], dict(zip(keywords, dots[len(args):]))
    if f_dot is None:
        return driver().jvp(f, args, dots, keywords, kw_dots, None, None, site)[1]
    return driver().jvp(f, args, dots, keywords, kw_dots, f, f_dot, site, callee=True)[1]


def dispatch_pullback_tangent(site: Any, f: Any, f_dot: Any, args: tuple, g: Any, dots: Any,
                              g_dot: Any) -> Any:
    """The tangent of :func:`~wengert.runtime.calls.dispatch_pullback`'s adjoints for the
    tangents ``f_dot`` of the callee, ``dots`` of the arguments and ``g_dot`` of the
    cotangent (``None``: zeros): the callee's forward-over-reverse derivative, derived at
    run time."""
    dots = _dots_of(args, dots)
    if any(_plain_object_tangent(a, d) for a, d in zip(args, dots)):
        # (As for the callee below: a plain object given to it, holding values being
        # differentiated, gets no cotangent from the pullback at the API.)
        raise NonDifferentiableError(
            "an object given to this call holds values being differentiated, and the call "
            "is dispatched at run time: its derivatives are followed to the first order "
            "only for an object that is not a dataclass", site,
            hint="make the object's class a @dataclass, or pass what it holds as arguments")
    if f_dot is not None:
        # (Its pullback at the API gives a plain object no cotangent: the part of the
        # second derivative through the object's own values would be lost.)
        raise NonDifferentiableError(
            "this callable object holds values being differentiated and is called through "
            "a value known only at run time: its derivatives are followed to the first "
            "order only", site,
            hint="call an object whose class is known where the call is written (not one "
                 "read out of a list or a dict), or pass what it holds as arguments")
    if g is None or g_dot is None and all(d is None for d in dots):
        return None
    return driver().jvp_of_vjp(f, f_dot, args, g, dots, g_dot, site)


def _dots_of(args: tuple, dots: Any) -> tuple:
    """The tangents of a dispatched call's arguments from the adjoints a generated
    pullback differentiated again gives them (``None``: zeros). A zero adjoint of an
    adjoint that was itself zero (``None``) is materialised as ``0.0`` whatever the
    structure it stands for (``runtime.nonzero`` has no primal to shape it by): for an
    argument that is no number it is ``None``, the zero of any structure."""
    if dots is None:
        return (None,) * len(args)
    return tuple(None if type(d) is float and d == 0.0 and not isinstance(a, _NUMBERS)
                 else d for a, d in zip(args, dots))


_NUMBERS = (float, int, complex)


def _plain_object_tangent(x: Any, t: Any) -> bool:
    """Whether the tangent ``t`` of ``x`` gives a tangent to an object that is not a
    dataclass (anywhere inside ``x``): one the API's pullback gives no cotangent."""
    if t is None:
        return False
    if isinstance(t, Attrs):
        if not dataclasses.is_dataclass(x) or isinstance(x, type):
            return True
        return any(_plain_object_tangent(getattr(x, k, None), v) for k, v in t.items())
    if isinstance(t, (list, tuple)) and isinstance(x, (list, tuple)):
        return any(_plain_object_tangent(a, b) for a, b in zip(x, t))
    if isinstance(t, dict) and isinstance(x, dict):
        return any(_plain_object_tangent(x.get(k), v) for k, v in t.items())
    return False


_DICT_METHODS = frozenset({"items", "values", "keys", "get", "copy"})
_LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "copy", "index", "count"})


def _dict_method(d: dict, t: Any, name: str, args: tuple, dots: tuple) -> tuple[Any, Any]:
    """Dict methods that read: their tangents come from the dict's tangent."""
    value = getattr(d, name)(*args)
    if name == "keys":
        return value, None
    if name == "get":
        if args[0] in d:
            return value, None if t is None else t.get(args[0])
        return value, dots[1] if len(dots) > 1 else None
    if t is None:
        return value, None
    if name == "items":
        return value, [(None, t.get(k)) for k in d]
    if name == "values":
        return value, [t.get(k) for k in d]
    return value, dict(t)


def _list_method(xs: list, t: Any, name: str, args: tuple, dots: tuple,
                 site: Any) -> tuple[Any, Any]:
    """List methods on a list known to be one only at run time: mirrored on its tangent."""
    if name in ("index", "count"):
        return getattr(xs, name)(*args), None
    if t is None and any(d is not None for d in dots):
        _tangent_error(f"list.{name}() with an active value on a list without a tangent",
                       site)
    value = getattr(xs, name)(*args)
    if t is None:
        return value, None
    if name == "append":
        t.append(dots[0])
        return value, None
    if name == "extend":
        t.extend([None] * (len(xs) - len(t)) if dots[0] is None else dots[0])
        return value, None
    if name == "insert":
        t.insert(args[0], dots[1])
        return value, None
    if name == "pop":
        return value, t.pop(*args)
    return value, list(t)
