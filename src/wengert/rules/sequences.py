"""Bookkeeping helpers of the container rules (``rules/builtins.py``: zip, enumerate, iter,
reversed, list, tuple, sorted, dict): what a rule needs to route the adjoints and tangents
of items between a sequence and its copy, its reordering or its pairs.

Conventions (one per kind of value):

* The adjoint (or tangent) of a list or tuple is a list or tuple of the same length,
  ``None`` for zero entries; of an ndarray, an array of its shape (batch axes first);
  of a dict, a dict with the same keys; ``None`` as a whole is zero.
* The adjoint (or tangent) of an *iterator* (what zip, enumerate, reversed, map or a
  generator return) is the list of its items' adjoints (tangents) in iteration order.
  That is what reverse mode collects for a ``for`` loop over it.  The list may be
  shorter than the items (a loop left by ``break``): missing entries are zero.
* Iterating a dict, a str, a range or bytes yields keys, characters and ints: no
  derivative reaches them.  Sets (no order to map adjoints back by) are refused.

Rule bodies call only callables with rules (they are inlined, and differentiated again for
higher derivatives), so the helpers below are declared pure (linear in the adjoints they
route, which come in and go out as whole containers) or non-differentiable (an order, a
test): the bookkeeping lives here, not in the rule bodies.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy

from wengert.diagnostics import RuleRefusal
from wengert.rules.registry import mark_fresh, mark_pure, nondifferentiable
from wengert.rules.shapes import shape as _shape

_NO_DERIVATIVE_ITERABLES = (dict, str, bytes, bytearray, range)


def _length(seq, consumed):
    """How many items ``seq`` has: its length if it is a sequence, else what was taken."""
    if isinstance(seq, (list, tuple, numpy.ndarray)):
        return len(seq)
    return consumed


def _items_bar(y_bar, n):
    """The adjoints of the first ``n`` items from a sequence or iterator adjoint."""
    if y_bar is None:
        return [None] * n
    m = len(y_bar)
    return [y_bar[k] if k < m else None for k in range(n)]


def _column(items_bar, j, extra):
    """Component ``j`` of each tuple adjoint in ``items_bar``, then ``extra`` zeros."""
    return [None if t is None else t[j] for t in items_bar] + [None] * extra


def _stack_rows(comps, row):
    """An array adjoint from its rows' adjoints (``None`` rows are zero; batch axes first)."""
    present = [numpy.asarray(c) for c in comps if c is not None]
    full = numpy.broadcast_shapes(*[p.shape for p in present])
    zero = numpy.zeros(full, dtype=numpy.result_type(*present))
    axis = max(len(full) - len(row), 0)
    rows = [zero if c is None else numpy.broadcast_to(c, full) for c in comps]
    return numpy.stack(rows, axis=axis)


def _seq_adjoint(seq, comps):
    """The adjoint of the iterable argument ``seq`` from its items' adjoints, in order."""
    if all(c is None for c in comps):
        return None
    if isinstance(seq, tuple):
        return tuple(comps)
    if isinstance(seq, list):
        return comps
    if isinstance(seq, numpy.ndarray):
        return _stack_rows(comps, _shape(seq)[1:])
    if isinstance(seq, _NO_DERIVATIVE_ITERABLES):
        return None
    if isinstance(seq, Iterator):
        return comps
    raise RuleRefusal(f"wengert: cannot differentiate through the items of a "
                    f"{type(seq).__name__}; pass a list, a tuple or an array")


def _item_dots(seq, seq_dot, n):
    """The tangents of the first ``n`` items of ``seq`` from its tangent (``None``: zero)."""
    if seq_dot is None or isinstance(seq, _NO_DERIVATIVE_ITERABLES):
        return None
    if isinstance(seq, (set, frozenset)):
        raise RuleRefusal("wengert: cannot differentiate through the items of a set;"
                        " pass a list, a tuple or an array")
    if isinstance(seq, numpy.ndarray):
        axis = numpy.ndim(seq_dot) - numpy.ndim(seq)  # after the batch axes
        return [numpy.take(seq_dot, k, axis=axis) for k in range(n)]
    m = len(seq_dot)
    return [seq_dot[k] if k < m else None for k in range(n)]


def _zip_dots(dots, n):
    """The tangent of a zip of ``n`` items from its arguments' item tangents."""
    if all(d is None for d in dots):
        return None
    return [tuple(None if d is None else d[k] for d in dots) for k in range(n)]


def _sort_permutation(items, key, reverse):
    """``perm`` with ``sorted(items, ...) == [items[i] for i in perm]`` (the same stable sort)."""
    if key is None:
        return sorted(range(len(items)), key=items.__getitem__, reverse=reverse)
    return sorted(range(len(items)), key=lambda i: key(items[i]), reverse=reverse)


def _unsort(perm, items_bar):
    """Scatter sorted-order adjoints back to the positions they were sorted from."""
    comps = [None] * len(perm)
    for k in range(len(perm)):
        comps[perm[k]] = items_bar[k]
    return comps


def _is_mapping(x):
    """Python's own test in ``dict(x)``: a mapping has ``keys``, anything else is pairs."""
    return hasattr(x, "keys")


def _dict_pairs(*args):
    """``dict(x)`` for an iterable of pairs, the pairs, and for each key of the result the
    index of the pair that sets its value (the last one with that key)."""
    if len(args) != 1:
        dict(*args)  # raises dict()'s own TypeError
    pairs = list(args[0])
    kv = [tuple(p) for p in pairs]
    y = dict(kv)  # raises as dict() does for a pair of the wrong length
    last = {}
    for i in range(len(kv)):
        last[kv[i][0]] = i
    return y, pairs, last


def _mapping_adjoint(x, y_bar):
    """The adjoint of ``x`` in ``dict(x)`` for a mapping: a dict with ``x``'s keys."""
    if y_bar is None:
        return None
    x_bar = {k: y_bar.get(k) for k in x.keys()}
    if all(v is None for v in x_bar.values()):
        return None
    return x_bar


def _pairs_adjoint(x, pairs, last, y_bar):
    """The adjoint of ``x`` in ``dict(x)`` for pairs: ``(None, value_bar)`` at each pair
    that sets a value of the result, ``None`` at the pairs overridden by a later one."""
    comps = [None] * len(pairs)
    if y_bar is not None:
        for k, i in last.items():
            v_bar = y_bar.get(k)
            if v_bar is not None:
                comps[i] = _seq_adjoint(pairs[i], [None, v_bar])
    return _seq_adjoint(x, comps)


def _mapping_tangent(y, x_dot):
    if x_dot is None:
        return None
    return {k: x_dot.get(k) for k in y}


def _pairs_tangent(y, x, pairs, last, x_dot):
    dots = _item_dots(x, x_dot, len(pairs))
    if dots is None:
        return None
    y_dot = {}
    for k in y:
        i = last[k]
        pair_dot = _item_dots(pairs[i], dots[i], 2)
        y_dot[k] = None if pair_dot is None else pair_dot[1]
    return y_dot


mark_pure(_length, _items_bar, _column, _stack_rows, _seq_adjoint, _item_dots, _zip_dots,
          _unsort, _dict_pairs, _mapping_adjoint, _pairs_adjoint, _mapping_tangent,
          _pairs_tangent)
mark_fresh(_items_bar, _column)
# The permutation of sorted() and the mapping test of dict() are piecewise constant.
nondifferentiable(_sort_permutation, _is_mapping)
