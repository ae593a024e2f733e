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
from wengert.rules.form import ans_bar, cases, deflinear
from wengert.rules.registry import mark_pure, nondifferentiable
from wengert.rules.shapes import const as _const
from wengert.rules.shapes import skeleton as _skeleton

# --------------------------------------------------------------------------------------
# Structure: what a pullback may keep of a value being differentiated.
# --------------------------------------------------------------------------------------


def _layout(layout: Any) -> tuple[Any, ...]:
    """``runtime.regroup``'s layout with its starred operands replaced by their skeletons."""
    return tuple(None if t is None else (None,) * len(t) for t in layout)


def _holder(x: Any) -> Any:
    """:func:`_skeleton` of ``x`` keeping what an attribute's adjoint needs of it: a named
    tuple's class (its fields are items), a plain object as an empty
    :class:`~wengert.runtime.Attrs` (its adjoint's form)."""
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return x._replace(**dict.fromkeys(x._fields))
    if hasattr(x, "__dict__") and not isinstance(x, (type, numpy.ndarray)) and \
            not callable(x):
        return runtime.Attrs()
    return _skeleton(x)


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
        return runtime.batch_read(t, x, index)
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
        batch = numpy.ndim(g) - numpy.ndim(x[index])
        if out.ndim == numpy.ndim(x) and batch > 0:
            # A batched part added into an adjoint without batch axes (a Hessian's pass over
            # a write): the adjoint takes the part's batch axes.
            out = numpy.array(numpy.broadcast_to(out, numpy.shape(g)[:batch] + out.shape))
    where = runtime._batch_index(out, x, index)
    g = runtime.batch_value(g, out, x, index)
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
        given = [t for t in ts if t is not None]
        # (the batch axes of the item that has the most: an item's tangent that no batch
        # reached is a plain one, broadcast; items a ``break`` left unread are zeros)
        some = max(given, key=numpy.ndim)
        batch = numpy.shape(some)[:numpy.ndim(some) - (x.ndim - 1)]
        full = batch + x.shape[1:]
        zero = numpy.zeros(full, dtype=numpy.result_type(*given, float))
        rows = [zero if t is None else numpy.broadcast_to(t, full) for t in ts]
        rows += [zero] * (len(x) - len(rows))
        return numpy.stack(rows, axis=len(batch))
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


# Each helper's rules from its transposes (the helpers come in transposed pairs); what a
# transpose reads of an argument is its skeleton or a constant, never its values.
deflinear(_take, lambda t, x, index: (
    _add_at(None, x, index, ans_bar) if isinstance(x, numpy.ndarray)
    else None if ans_bar is None else runtime.getitem_adjoint(t, t, index, ans_bar)),
    keep={"t": _skeleton, "x": _skeleton, "index": _const}, zeros=True)
deflinear(_add_at, lambda t, x, index, g: ans_bar, lambda t, x, index, g: _take(ans_bar, x, index),
          arg=(0, 3), keep={"x": _skeleton, "index": _const}, zeros=True)
deflinear(_stack, lambda ts, x: (tuple(_items(ans_bar, x, len(ts))) if isinstance(ts, tuple)
                                 else _items(ans_bar, x, len(ts))),
          keep={"ts": _skeleton, "x": _skeleton}, zeros="ans")
deflinear(_items, lambda t, x, n: _stack(ans_bar, x), keep={"x": _skeleton, "n": _const},
          zeros=True)
deflinear(_pack, lambda parts, x, star: _unpack(ans_bar, x, len(parts), star),
          keep={"parts": _skeleton, "x": _skeleton, "star": _const}, zeros="ans")
deflinear(_unpack, lambda t, x, n, star: _pack(ans_bar, x, star),
          keep={"x": _skeleton, "n": _const, "star": _const}, zeros=True)
deflinear(_join, lambda parts, lens, as_tuple: runtime.split_adjoint(ans_bar, lens),
          keep={"lens": _const, "as_tuple": _const}, zeros=True)
deflinear(_ungroup, lambda res, layout: (
    None if ans_bar is None else runtime.regroup(ans_bar, layout)),
    keep={"layout": _layout}, zeros=True)
deflinear(_append, lambda items, g, n: runtime.pop_adjoint(ans_bar)[0],
          lambda items, g, n: runtime.pop_adjoint(ans_bar)[1], arg=(0, 1),
          keep={"n": _const}, zeros=True)

deflinear(runtime.batch_front, lambda item, t, x, index: runtime.batch_value(ans_bar, t, x, index),
          keep={"t": _skeleton, "x": _skeleton, "index": _const}, zeros=True)
deflinear(runtime.batch_value, lambda v, t, x, index: runtime.batch_front(ans_bar, t, x, index),
          keep={"t": _skeleton, "x": _skeleton, "index": _const}, zeros=True)

mark_pure(_take, _add_at, _stack, _items, _pack, _unpack, _join, _ungroup, _append,
          runtime.batch_front, runtime.batch_value)
# A zero adjoint materialised in generated code is a constant.
nondifferentiable(tangents.zeros_like, runtime.last_writes, _skeleton, _const, _layout, _past_batch,
                  _holder)


# Sample points of the rules above, checked by tests/rules/test_form.py.
_V4 = numpy.array([0.3, -1.2, 0.8, 0.5])
_M32 = numpy.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]])
_X3 = [1.0, 2.0, 3.0]
cases(_take,
      ([0.1, 0.2, 0.3], _skeleton(_X3), 1),
      ((0.1, 0.2, 0.3), _skeleton((1.0, 2.0, 3.0)), slice(0, 2)),
      ({"a": 0.1, "b": 0.2}, _skeleton({"a": 1.0, "b": 2.0}), "a"),
      (_M32.copy(), _skeleton(_M32), (slice(None), 0)),
      (_M32.copy(), _skeleton(_M32), numpy.array([2, 0, 2])))
cases(_add_at,
      (_M32.copy(), _skeleton(_M32), numpy.array([2, 0, 2]), _M32[::-1].copy()),
      (None, _skeleton(_M32), 1, _V4[:2].copy()))
cases(_stack,
      ([0.1, 0.2], _skeleton([1.0, 2.0])),
      ((0.1, 0.2), _skeleton((1.0, 2.0))),
      ([_V4[:2].copy(), None, _V4[2:].copy()], _skeleton(_M32)))
cases(_items, (_M32.copy(), _skeleton(_M32), 3), ([0.1, 0.2], _skeleton([1.0, 2.0]), 2))
cases(_pack, ((0.1, [0.2, 0.3]), _skeleton((1.0, 2.0, 3.0)), 1))
cases(_unpack, (_M32.copy(), _skeleton(_M32), 2, 1))
cases(_join,
      ([0.1, [0.2, 0.3], 0.4], (None, 2, None), False),
      ([0.1, [0.2, 0.3], 0.4], (None, 2, None), True))
cases(_ungroup, ([0.1, (0.2, 0.3), 0.4], (None, (None, None), None)))
cases(_append, ([0.1, 0.2], 0.3, 2), (None, 0.3, 2))
# A batched tangent (two directions) of a 2×3×2 array read under advanced indices apart.
_XB = numpy.linspace(0.5, 2.0, 12).reshape(2, 3, 2)
_TB = numpy.linspace(-1.0, 1.0, 24).reshape(2, 2, 3, 2)
_IB = (numpy.array([0, 1]), slice(None), 0)
cases(runtime.batch_front,
      (_TB[(slice(None),) + _IB].copy(), _skeleton(_TB), _skeleton(_XB), _IB),
      (_XB[_IB].copy(), _skeleton(_XB), _skeleton(_XB), _IB))
cases(runtime.batch_value,
      (runtime.batch_read(_TB, _XB, _IB).copy(), _skeleton(_TB), _skeleton(_XB), _IB),
      (_XB[1:].copy(), _skeleton(_TB), _skeleton(_XB), slice(1, None)))
