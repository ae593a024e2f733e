"""The parts a generated pullback's adjoints are made of, and their rules.

What a pullback may keep of a value being differentiated (:func:`_skeleton`, :func:`_const`:
its structure, never its values), and the private linear helpers rule bodies call, in
transposed pairs (``_take`` / ``_add_at``, ``_stack`` / ``_items``, ``_pack`` / ``_unpack``,
``_join``, ``_ungroup``, ``_append``), each with rules of its own so that rule bodies calling
them differentiate again. The rules of the run-time helpers that use them are in
:mod:`wengert.rules.adjoints`.
"""

from __future__ import annotations

from typing import Any

import numpy

from wengert import runtime, tangents
from wengert.rules.registry import defjvp, defvjp, mark_pure, nondifferentiable

# --------------------------------------------------------------------------------------
# Structure: what a pullback may keep of a value being differentiated.
# --------------------------------------------------------------------------------------


def _skeleton(x: Any) -> Any:
    """A stand-in for ``x`` with its structure and none of its values: a zero array view of
    its shape, a dict of its keys, a list or tuple of ``None`` of its length (``None`` for
    ``None``; an empty list for an iterator, whose adjoint is a list)."""
    if x is None:
        return None
    if isinstance(x, numpy.ndarray):
        return numpy.broadcast_to(numpy.zeros((), dtype=x.dtype), x.shape)
    if isinstance(x, dict):
        return dict.fromkeys(x)
    if isinstance(x, tuple):
        return (None,) * len(x)
    if hasattr(x, "__len__"):
        return [None] * len(x)
    return []


def _const(v: Any) -> Any:
    """``v`` itself, as a constant to the transforms: an index, a key, a name or a count
    says where an adjoint goes and carries no derivative of its own."""
    return v


def _layout(layout: Any) -> tuple[Any, ...]:
    """``runtime.regroup``'s layout with its starred operands replaced by their skeletons."""
    return tuple(None if t is None else (None,) * len(t) for t in layout)


def _past_batch(t: Any, x: Any, index: Any) -> Any:
    """``index`` into the tangent ``t`` of the array ``x``, past ``t``'s leading batch axes."""
    if t is None:
        return index
    return runtime._batch_index(t, x, index)


# --------------------------------------------------------------------------------------
# Linear helpers used in rule bodies.  Each is a primitive with rules of its own.
# --------------------------------------------------------------------------------------


def _take(t: Any, x: Any, index: Any) -> Any:
    """The part at ``x[index]`` of the adjoint (or tangent) ``t`` of ``x`` (``None``: zero)."""
    if t is None:
        return None
    if isinstance(t, dict):
        return t.get(index)
    if isinstance(x, numpy.ndarray):
        return t[runtime._batch_index(t, x, index)]
    return t[index]


def _add_at(t: Any, x: Any, index: Any, g: Any) -> Any:
    """``runtime.getitem_adjoint`` for an array ``x`` whose adjoints (or tangents) ``t`` and
    ``g`` may carry leading batch axes: ``t`` plus ``g`` at ``x[index]``."""
    if g is None:
        return t
    if t is None:
        batch = numpy.shape(g)[:numpy.ndim(g) - numpy.ndim(x[index])]
        out = numpy.zeros(batch + x.shape, dtype=numpy.result_type(x.dtype, float))
    else:
        out = numpy.array(t, dtype=numpy.result_type(t, float))
    where = runtime._batch_index(out, x, index)
    if isinstance(index, (int, numpy.integer, slice)) or index is Ellipsis:
        out[where] += g
    else:
        numpy.add.at(out, where, g)
    return out


def _stack(ts: Any, x: Any) -> Any:
    """The adjoint (or tangent) of the sequence ``x`` from those of its items, ``ts``
    (``None`` entries are zeros; an array's batch axes stay in front)."""
    if ts is None or all(t is None for t in ts):
        return None
    if isinstance(x, numpy.ndarray):
        some = next(t for t in ts if t is not None)
        batch = numpy.shape(some)[:numpy.ndim(some) - (x.ndim - 1)]
        zero = numpy.zeros(batch + x.shape[1:], dtype=numpy.result_type(some, float))
        return numpy.stack([zero if t is None else t for t in ts], axis=len(batch))
    if isinstance(x, tuple):
        return tuple(ts)
    if isinstance(x, dict):
        return None  # the items of a dict are its keys, which carry no derivative
    return list(ts)


def _items(t: Any, x: Any, n: int) -> list[Any]:
    """The adjoints (or tangents) of the ``n`` items of the sequence ``x`` from its own,
    ``t``: the transpose of :func:`_stack`."""
    if t is None or isinstance(x, dict):
        return [None] * n
    if isinstance(x, numpy.ndarray):
        batch = numpy.ndim(t) - x.ndim
        return [row.copy() for row in numpy.moveaxis(numpy.asarray(t), batch, 0)]
    return list(t)


def _pack(parts: Any, x: Any, star: int | None) -> Any:
    """``runtime.unpack_adjoint(parts, x, star)`` with the batch axes of array tangents
    kept in front (and no derivative for the keys a dict unpacks to)."""
    if parts is None:
        return None
    items: list[Any] = []
    for k, p in enumerate(parts):
        if k != star:
            items.append(p)
        elif p is None:
            items.extend([None] * (len(x) - (len(parts) - 1)))
        else:
            items.extend(p)
    return _stack(items, x)


def _unpack(t: Any, x: Any, n: int, star: int | None) -> tuple[Any, ...]:
    """The adjoints of the ``n`` targets of ``a, *b, c = x`` from the adjoint ``t`` of ``x``:
    the transpose of :func:`_pack`."""
    items = _items(t, x, len(x))
    if star is None:
        return tuple(items)
    k = len(items) - (n - 1)
    return (*items[:star], items[star:star + k], *items[star + k:])


def _join(parts: Any, lens: tuple[int | None, ...], as_tuple: bool) -> Any:
    """The adjoint of ``[a, *b, c]`` from its display items' adjoints: the transpose of
    ``runtime.split_adjoint``."""
    if parts is None:
        return None
    items: list[Any] = []
    for p, n in zip(parts, lens):
        if n is None:
            items.append(p)
        elif p is None:
            items.extend([None] * n)
        else:
            items.extend(p)
    return tuple(items) if as_tuple else items


def _ungroup(res: Any, layout: tuple[Any, ...]) -> Any:
    """Per-argument adjoints from per-operand ones: the transpose of ``runtime.regroup``."""
    if res is None:
        return None
    outs: list[Any] = []
    for r, t in zip(res, layout):
        if t is None:
            outs.append(r)
        elif r is None:
            outs.extend([None] * len(t))
        else:
            outs.extend(r)
    return tuple(outs)


def _append(items: Any, g: Any, n: int) -> Any:
    """``items + [g]`` for the adjoint ``items`` of a list of ``n`` entries (``None``: zero):
    the transpose of ``runtime.pop_adjoint``."""
    if items is None and g is None:
        return None
    out = [None] * n if items is None else list(items)
    out.append(g)
    return out


@defvjp(_take)
def _take_vjp(t, x, index):
    y = _take(t, x, index)
    t_like = _skeleton(t)
    x_like = _skeleton(x)
    where = _const(index)

    def _take_pullback(y_bar):
        t_bar = None
        if isinstance(x_like, numpy.ndarray):
            if t_like is not None:
                t_bar = _add_at(None, x_like, where, y_bar)
        elif t_like is not None and y_bar is not None:
            t_bar = runtime.getitem_adjoint(t_like, t_like, where, y_bar)
        return t_bar, None, None

    return y, _take_pullback


@defjvp(_take)
def _take_jvp(t, x, index):
    y = _take(t, x, index)
    x_like = _skeleton(x)
    where = _const(index)

    def _take_differential(t_dot, x_dot, index_dot):
        return _take(t_dot, x_like, where)

    return y, _take_differential


@defvjp(_add_at)
def _add_at_vjp(t, x, index, g):
    y = _add_at(t, x, index, g)
    t_zero = t is None
    g_zero = g is None
    x_like = _skeleton(x)
    where = _const(index)

    def _add_at_pullback(y_bar):
        t_bar = None
        if not t_zero:
            t_bar = y_bar
        g_bar = None
        if not g_zero:
            g_bar = _take(y_bar, x_like, where)
        return t_bar, None, None, g_bar

    return y, _add_at_pullback


@defjvp(_add_at)
def _add_at_jvp(t, x, index, g):
    y = _add_at(t, x, index, g)
    x_like = _skeleton(x)
    where = _const(index)

    def _add_at_differential(t_dot, x_dot, index_dot, g_dot):
        return _add_at(t_dot, x_like, where, g_dot)

    return y, _add_at_differential


@defvjp(_stack)
def _stack_vjp(ts, x):
    y = _stack(ts, x)
    zero = y is None
    n = 0 if ts is None else len(ts)
    as_tuple = isinstance(ts, tuple)
    x_like = _skeleton(x)

    def _stack_pullback(y_bar):
        ts_bar = None
        if not zero and y_bar is not None:
            ts_bar = _items(y_bar, x_like, n)
            if as_tuple:
                ts_bar = tuple(ts_bar)
        return ts_bar, None

    return y, _stack_pullback


@defjvp(_stack)
def _stack_jvp(ts, x):
    y = _stack(ts, x)
    x_like = _skeleton(x)

    def _stack_differential(ts_dot, x_dot):
        return _stack(ts_dot, x_like)

    return y, _stack_differential


@defvjp(_items)
def _items_vjp(t, x, n):
    y = _items(t, x, n)
    t_zero = t is None
    x_like = _skeleton(x)

    def _items_pullback(y_bar):
        t_bar = None
        if not t_zero:
            t_bar = _stack(y_bar, x_like)
        return t_bar, None, None

    return y, _items_pullback


@defjvp(_items)
def _items_jvp(t, x, n):
    y = _items(t, x, n)
    x_like = _skeleton(x)
    count = _const(n)

    def _items_differential(t_dot, x_dot, n_dot):
        return _items(t_dot, x_like, count)

    return y, _items_differential


@defvjp(_pack)
def _pack_vjp(parts, x, star):
    y = _pack(parts, x, star)
    zero = y is None
    n = 0 if parts is None else len(parts)
    x_like = _skeleton(x)
    starred = _const(star)

    def _pack_pullback(y_bar):
        parts_bar = None
        if not zero:
            parts_bar = _unpack(y_bar, x_like, n, starred)
        return parts_bar, None, None

    return y, _pack_pullback


@defjvp(_pack)
def _pack_jvp(parts, x, star):
    y = _pack(parts, x, star)
    x_like = _skeleton(x)
    starred = _const(star)

    def _pack_differential(parts_dot, x_dot, star_dot):
        return _pack(parts_dot, x_like, starred)

    return y, _pack_differential


@defvjp(_unpack)
def _unpack_vjp(t, x, n, star):
    y = _unpack(t, x, n, star)
    t_zero = t is None
    x_like = _skeleton(x)
    starred = _const(star)

    def _unpack_pullback(y_bar):
        t_bar = None
        if not t_zero:
            t_bar = _pack(y_bar, x_like, starred)
        return t_bar, None, None, None

    return y, _unpack_pullback


@defjvp(_unpack)
def _unpack_jvp(t, x, n, star):
    y = _unpack(t, x, n, star)
    x_like = _skeleton(x)
    count = _const(n)
    starred = _const(star)

    def _unpack_differential(t_dot, x_dot, n_dot, star_dot):
        return _unpack(t_dot, x_like, count, starred)

    return y, _unpack_differential


@defvjp(_join)
def _join_vjp(parts, lens, as_tuple):
    y = _join(parts, lens, as_tuple)
    parts_zero = parts is None
    sizes = _const(lens)

    def _join_pullback(y_bar):
        parts_bar = None
        if not parts_zero:
            parts_bar = runtime.split_adjoint(y_bar, sizes)
        return parts_bar, None, None

    return y, _join_pullback


@defjvp(_join)
def _join_jvp(parts, lens, as_tuple):
    y = _join(parts, lens, as_tuple)
    sizes = _const(lens)
    tupled = _const(as_tuple)

    def _join_differential(parts_dot, lens_dot, as_tuple_dot):
        return _join(parts_dot, sizes, tupled)

    return y, _join_differential


@defvjp(_ungroup)
def _ungroup_vjp(res, layout):
    y = _ungroup(res, layout)
    res_zero = res is None
    shape = _layout(layout)

    def _ungroup_pullback(y_bar):
        res_bar = None
        if not res_zero and y_bar is not None:
            res_bar = runtime.regroup(y_bar, shape)
        return res_bar, None

    return y, _ungroup_pullback


@defjvp(_ungroup)
def _ungroup_jvp(res, layout):
    y = _ungroup(res, layout)
    shape = _layout(layout)

    def _ungroup_differential(res_dot, layout_dot):
        return _ungroup(res_dot, shape)

    return y, _ungroup_differential


@defvjp(_append)
def _append_vjp(items, g, n):
    y = _append(items, g, n)
    items_zero = items is None
    g_zero = g is None

    def _append_pullback(y_bar):
        items_bar, g_bar = runtime.pop_adjoint(y_bar)
        if items_zero:
            items_bar = None
        if g_zero:
            g_bar = None
        return items_bar, g_bar, None

    return y, _append_pullback


@defjvp(_append)
def _append_jvp(items, g, n):
    y = _append(items, g, n)
    count = _const(n)

    def _append_differential(items_dot, g_dot, n_dot):
        return _append(items_dot, g_dot, count)

    return y, _append_differential


mark_pure(_take, _add_at, _stack, _items, _pack, _unpack, _join, _ungroup, _append)
# A zero adjoint materialised in generated code is a constant.
nondifferentiable(tangents.zeros_like, runtime.last_writes, _skeleton, _const, _layout, _past_batch)
