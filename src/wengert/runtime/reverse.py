"""Run-time helpers of reverse mode: what generated pullbacks call to build, split and
accumulate adjoints, and the dispatchers that reach the driver for callees whose types were
unknown when the derivative was made."""

from __future__ import annotations

import dataclasses
from typing import Any

from wengert.diagnostics import OutputNotScalarError
from wengert.objects import is_namedtuple, namedtuple_field

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
    if isinstance(x, numpy.generic):
        # A NumPy scalar indexed as a 0-d array (``s[np.newaxis]``, ``s[()]``): its adjoint
        # is a scalar too.
        out = numpy.zeros((), dtype=_real(x)) if prev is None else \
            numpy.array(prev, dtype=_real(prev))
        out[index] += g
        return out[()]
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


def numbers_only(xs: list[Any]) -> bool:
    """Whether the adjoint or tangent ``xs`` of a list of floats has no ``None`` (zero)
    entry: its sum, in C, fails on one (``None not in xs`` compares each float with ``None``
    through rich comparison, five times slower)."""
    try:
        sum(xs, 0.0)
    except TypeError:
        return False
    return True


def _ndarray() -> type:
    import numpy

    return numpy.ndarray


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


def spread(ins: tuple[Any, ...], layout: tuple[Any, ...]) -> tuple[Any, ...]:
    """The adjoints a caller holds per call operand (``ins``) laid out per argument, as the
    callee's pullback takes them: ``*t`` holds none, one slot per item (:func:`regroup`'s
    inverse)."""
    res: list[Any] = []
    for a, t in zip(ins, layout):
        if t is None:
            res.append(a)
        else:
            res.extend([None] * len(t))
    return tuple(res)


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


