"""Derivative rules for builtins: abs, min, max, sum, pow, float and divmod, and the
container builtins that pass values through (zip, enumerate, reversed, list, tuple,
sorted, dict; see the section at the end of this module).

Sequence adjoints have the type (tuple or list) and
length of the argument, with ``None`` for entries whose adjoint is zero.  As in
``rules/operator.py``, tangents and cotangents may carry leading batch axes and
only meet primal values through infix operators and the linear helpers.
"""

from __future__ import annotations

import bisect
import builtins
import collections
import copy
import operator
from typing import Any

import numpy

from wengert import runtime
from wengert.diagnostics import RuleRefusal
from wengert.rules.form import ans_bar, cases, defderiv, deflinear, defrule
from wengert.rules.operator import _pow_rules, _sum_cotangents
from wengert.rules.registry import mark_pure, nondifferentiable
from wengert.rules.sequences import (
    _column,
    _dict_pairs,
    _is_mapping,
    _item_dots,
    _items_bar,
    _length,
    _mapping_adjoint,
    _mapping_tangent,
    _pairs_adjoint,
    _pairs_tangent,
    _seq_adjoint,
    _sort_permutation,
    _unsort,
    _zip_dots,
)
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import sum_to as _sum_to

# Sample points of the rules below (tests/rules/test_form.py).
_A23 = numpy.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
_B3 = numpy.arange(1.0, 4.0)

# abs(x) is operator.abs(x): the same rules (slope sign(x), 0 at 0).
defderiv(builtins.abs, lambda a: (a > 0) * 1.0 - (a < 0) * 1.0)
cases(builtins.abs, (0.5,), (-2.0,), (numpy.array([0.5, -1.5]),))


# --------------------------------------------------------------------------------------
# min and max: the adjoint goes to the extreme that Python returns, the first one.
# --------------------------------------------------------------------------------------


def _extreme_rules(extreme):
    """The rules of ``max`` and ``min``.  One body serves both; ``extreme`` is a closure
    constant the inliner reads like a global."""

    @defrule(extreme)
    def extreme_rule(*args, **kwargs):
        if len(kwargs) > 0:
            raise RuleRefusal(f"wengert: the derivative of {extreme.__name__}() does not support"
                            " key= or default=; select the element first, then differentiate it")
        if len(args) == 1:
            xs = args[0]
            if isinstance(xs, numpy.ndarray) and numpy.ndim(xs) != 1:
                # (Python compares the rows: ambiguous for rows of several numbers)
                raise RuleRefusal(f"wengert: the derivative of {extreme.__name__}() over an array"
                                f" of {numpy.ndim(xs)} axes is not supported; use "
                                f"numpy.{extreme.__name__}")
            if not isinstance(xs, (list, tuple, numpy.ndarray)):
                xs = list(xs)  # a one-shot iterable: keep its items
        else:
            xs = args
        y = extreme(xs)
        # Python keeps the first of equal extremes: each item it takes beats the one it
        # held strictly, so no item before the one returned equals it (a NaN is only ever
        # the first item, found by identity). The first equal item is the one.
        best = operator.indexOf(xs, y)

        def extreme_pullback(y_bar):
            if len(args) == 1:
                if isinstance(xs, numpy.ndarray):
                    # (a cotangent's batch axes in front of the vector's)
                    xs_bar = numpy.zeros(numpy.shape(y_bar) + (len(xs),))
                    if y_bar is not None:
                        xs_bar[..., best] = y_bar
                    return (xs_bar,)
                xs_bar = [None] * len(xs)
                xs_bar[best] = y_bar
                if isinstance(xs, tuple):
                    xs_bar = tuple(xs_bar)
                return (xs_bar,)
            return tuple(y_bar if i == best else None for i in range(len(args)))

        def extreme_differential(*args_dot):
            if len(args) == 1:
                if args_dot[0] is None:
                    return None
                if isinstance(xs, numpy.ndarray):
                    return numpy.asarray(args_dot[0])[..., best]  # (batch axes in front)
                return args_dot[0][best]
            return args_dot[best]

        return y, extreme_pullback, extreme_differential


_extreme_rules(builtins.max)
_extreme_rules(builtins.min)
# (a vector's numbers are compared as a list's: its first extreme gets the adjoint)
cases(builtins.max, (numpy.array([0.5, -1.5, 2.0]),), (0.5, -1.5, 0.25))
cases(builtins.min, (numpy.array([0.5, -1.5, 2.0]),), ([0.5, -1.5, 0.25],))


# --------------------------------------------------------------------------------------
# sum(iterable[, start]): every entry (and start) gets the cotangent, summed back to
# its own shape where entries were broadcast.  sum over an array adds its rows.
# --------------------------------------------------------------------------------------


def _concatenated_adjoints(y_bar: Any, xs: Any, start: Any) -> tuple[Any, Any]:
    """The adjoints of ``xs`` and ``start`` from ``y_bar``, that of ``sum(xs, start)`` of
    lists (or tuples): a concatenation, each part its slice (``None``: zeros)."""
    if y_bar is None:
        return None, None
    k = len(start)
    parts = []
    for x in xs:
        part = y_bar[k:k + len(x)]
        parts.append(tuple(part) if isinstance(x, tuple) else list(part))
        k += len(x)
    first = y_bar[:len(start)]
    return (tuple(parts) if isinstance(xs, tuple) else parts,
            tuple(first) if isinstance(start, tuple) else list(first))


def _concatenated_tangent(y: Any, xs: Any, xs_dot: Any, start: Any, start_dot: Any) -> Any:
    """The tangent of ``y = sum(xs, start)`` of lists (or tuples): their tangents joined
    (``None``: zeros)."""
    out: list[Any] = [None] * len(start) if start_dot is None else list(start_dot)
    for i, x in enumerate(xs):
        dot = None if xs_dot is None else xs_dot[i]
        out += [None] * len(x) if dot is None else list(dot)
    if all(d is None for d in out):
        return None
    return tuple(out) if isinstance(y, tuple) else out


mark_pure(_concatenated_adjoints, _concatenated_tangent)


@defrule(builtins.sum)
def sum_rule(xs, *start):
    if not isinstance(xs, (list, tuple, numpy.ndarray)):
        xs = list(xs)  # a one-shot iterable: keep its items
    if len(start) == 0:
        y = sum(xs)
    else:
        y = sum(xs, start[0])

    def sum_pullback(y_bar):
        if len(start) > 0 and isinstance(y, (list, tuple)):  # (no start: a sum of 0)
            return _concatenated_adjoints(y_bar, xs, start[0])
        if isinstance(xs, numpy.ndarray):
            row = _shape(xs)[1:]
            xs_bar = _broadcast_to(_sum_to(y_bar, row, _shape(y)), row, _shape(xs))
        elif isinstance(y, float):
            xs_bar = [y_bar] * len(xs)  # (one list, no loop: every entry gets y_bar)
        else:
            xs_bar = [_sum_to(y_bar, _shape(x), _shape(y)) for x in xs]
        if isinstance(xs, tuple):
            xs_bar = tuple(xs_bar)
        if len(start) == 0:
            return (xs_bar,)
        return xs_bar, _sum_to(y_bar, _shape(start[0]), _shape(y))

    def sum_differential(xs_dot, *start_dot):
        if len(start) > 0 and isinstance(y, (list, tuple)):
            return _concatenated_tangent(y, xs, xs_dot, start[0], start_dot[0])
        terms = []
        if isinstance(xs, numpy.ndarray):
            row = _shape(xs)[1:]
            terms = [_broadcast_to(_sum_to(xs_dot, row, _shape(xs)), row, _shape(y))]
        elif xs_dot is not None:
            terms = [_broadcast_to(xs_dot[i], _shape(xs[i]), _shape(y)) for i in range(len(xs))]
        if len(start) > 0:
            terms = terms + [_broadcast_to(start_dot[0], _shape(start[0]), _shape(y))]
        return _sum_cotangents(terms)

    return y, sum_pullback, sum_differential


# Numbers, a start value, arrays broadcast together (and with a start), an array's rows,
# and lists joined after a start list.
cases(builtins.sum, ([0.5, -1.5, 2.0],), ((0.5, -1.5), 2.0), ([_A23, _B3, 1.5],), (_A23,),
      ([_B3, 0.5], _A23), ([[0.5], [1.5, 2.0]], [0.25]))


# pow(base, exp[, mod]) is base ** exp, or (ints only, no derivative) a modular power.
_pow_rules(builtins.pow)
# As ``**`` (operator.py), and ``pow(a, b, None)``, the mod a wrapper passes on.
cases(builtins.pow, (1.5, 2.2), (-1.5, 3), (_A23 + 2.0, _B3), (1.5, _A23), (1.5, 2.2, None))


# --------------------------------------------------------------------------------------
# float(x) and divmod(a, b).
# --------------------------------------------------------------------------------------


# The identity on floats (a derivative-free conversion for ints and strings, which are
# never active).
deflinear(builtins.float, lambda x: ans_bar, tangent=lambda x: x)
cases(builtins.float, (0.5,))


@defrule(builtins.divmod)
def divmod_rule(a, b):
    # (q, r) with q == a // b piecewise constant and r == a - q * b.
    y = divmod(a, b)
    q = y[0]

    def divmod_pullback(y_bar):
        r_bar = y_bar[1]
        if r_bar is None:
            return None, None
        if isinstance(q, float):
            return r_bar, -r_bar * q
        r_shape = _shape(y[1])
        return _sum_to(r_bar, _shape(a), r_shape), _sum_to(-r_bar * q, _shape(b), r_shape)

    def divmod_differential(a_dot, b_dot):
        r_shape = _shape(y[1])
        b_term = None if b_dot is None else -_broadcast_to(b_dot, _shape(b), r_shape) * q
        return None, _sum_cotangents([_broadcast_to(a_dot, _shape(a), r_shape), b_term])

    return y, divmod_pullback, divmod_differential


# Away from the jumps of the quotient, a negative dividend among them.
cases(builtins.divmod, (5.3, 1.7), (-5.3, 1.7), (_A23 * 3.0, numpy.array([1.7, 1.3, 0.9])))


mark_pure(builtins.abs, builtins.min, builtins.max, builtins.sum, builtins.pow, builtins.float,
          builtins.divmod)

# int() and round() cut the derivative of an active float: worth a warning.
nondifferentiable(builtins.int, builtins.round, warn=True, pure=True)
nondifferentiable(
    builtins.len, builtins.range, builtins.bool, builtins.isinstance, builtins.issubclass,
    builtins.str, builtins.repr, builtins.format, builtins.hash, builtins.id, builtins.type,
    builtins.callable, builtins.ord, builtins.chr, builtins.bin, builtins.oct, builtins.hex,
    warn=False, pure=True,
)
# Where ``bisect`` puts a number in a sorted list: an index, piecewise constant.
nondifferentiable(bisect.bisect_left, bisect.bisect_right, warn=False, pure=True)
# ``super().__init__()`` reaching ``object``: it takes nothing and leaves the object alone.
nondifferentiable(object.__init__, pure=True)
# A rule's refusal of what it is given, raised from its body (a TypeError too).
nondifferentiable(RuleRefusal, pure=True)


# --------------------------------------------------------------------------------------
# Containers: zip, enumerate, iter, reversed, list, tuple, sorted and dict move values
# around without computing with them, so their rules only route entries (the conventions
# and the bookkeeping helpers are in rules/sequences.py).
#
# zip, enumerate and reversed consume their arguments when called (the rule must see
# the items), then return an iterator of the same kind over those items: the program
# sees the same values, but a side-effecting or infinite argument is drained at once.
# --------------------------------------------------------------------------------------


@defrule(builtins.zip)
def zip_rule(*seqs, strict=False):
    items = list(zip(*seqs, strict=strict))
    n = len(items)
    sizes = [_length(s, n) for s in seqs]
    y = iter(items)  # (the tuples it made: an iterator over them, as ``zip`` is)

    def zip_pullback(y_bar):
        items_bar = _items_bar(y_bar, n)
        return tuple(_seq_adjoint(seqs[j], _column(items_bar, j, sizes[j] - n))
                     for j in range(len(seqs)))

    def zip_differential(*seqs_dot):
        return _zip_dots([_item_dots(seqs[j], seqs_dot[j], n) for j in range(len(seqs))], n)

    return y, zip_pullback, zip_differential


# (An iterator's value is compared, and its tangents and adjoints taken, item by item:
# wengert.testing.check_rule.) Sequences of different lengths (the longer one's last
# items get no adjoint), a list with an array's rows, one array.
cases(builtins.zip, ([0.5, 1.5], (2.0, -1.0)), ([0.5, 1.5, 2.5], (2.0, -1.0)),
      ([0.5, 1.5, 2.5], _A23.T), (_A23,))


@defrule(builtins.enumerate)
def enumerate_rule(seq, *start):
    items = list(seq)
    n = len(items)
    y = enumerate(items, *start)

    def enumerate_pullback(y_bar):
        return (_seq_adjoint(seq, _column(_items_bar(y_bar, n), 1, 0)), *[None for s in start])

    def enumerate_differential(seq_dot, *start_dot):
        dots = _item_dots(seq, seq_dot, n)
        if dots is None:
            return None
        return [(None, d) for d in dots]

    return y, enumerate_pullback, enumerate_differential


cases(builtins.enumerate, ([0.5, 1.5, -2.0],), ((0.5, 1.5), 3), (_A23,))


@defrule(builtins.iter)
def iter_rule(seq):
    items = list(seq)
    n = len(items)
    y = iter(items)

    def iter_pullback(y_bar):
        return (_seq_adjoint(seq, _items_bar(y_bar, n)),)

    def iter_differential(seq_dot):
        return _item_dots(seq, seq_dot, n)

    return y, iter_pullback, iter_differential


cases(builtins.iter, ([0.5, 1.5],), ((0.5, _B3),), (_A23,))


@defrule(builtins.reversed)
def reversed_rule(seq):
    items = list(reversed(seq))
    n = len(items)
    if isinstance(seq, tuple):
        y = reversed(seq)
    else:
        y = reversed(items[::-1])  # a list_reverseiterator over the items of the call

    def reversed_pullback(y_bar):
        return (_seq_adjoint(seq, _items_bar(y_bar, n)[::-1]),)

    def reversed_differential(seq_dot):
        dots = _item_dots(seq, seq_dot, n)
        if dots is None:
            return None
        return dots[::-1]

    return y, reversed_pullback, reversed_differential


cases(builtins.reversed, ([0.5, 1.5, -2.0],), ((0.5, 1.5),), (_A23,))


def _copy_rules(make):
    """The rules of ``list(xs)`` and ``tuple(xs)`` (``make``, a closure constant): each item's
    adjoint goes back to the item it copies."""

    @defrule(make)
    def copy_rule(*args):
        y = make(*args)
        n = len(y)

        def copy_pullback(y_bar):
            if len(args) == 0:
                return ()
            return (_seq_adjoint(args[0], _items_bar(y_bar, n)),)

        def copy_differential(*args_dot):
            if len(args) == 0:
                return None
            dots = _item_dots(args[0], args_dot[0], n)
            if dots is None:
                return None
            return make(dots)

        return y, copy_pullback, copy_differential


_copy_rules(builtins.list)
_copy_rules(builtins.tuple)
for _f in (builtins.list, builtins.tuple):
    cases(_f, ([0.5, 1.5],), ((0.5, _B3),), (_A23,))


@defrule(copy.deepcopy)
def deepcopy_rule(x):
    # A new object of the same structure, sharing nothing: its adjoint is the original's,
    # its tangent a copy of the original's (a write into it must not reach the other).
    y = copy.deepcopy(x)

    def deepcopy_pullback(y_bar):
        return (y_bar,)

    def deepcopy_differential(x_dot):
        return copy.deepcopy(x_dot)

    return y, deepcopy_pullback, deepcopy_differential


cases(copy.deepcopy, (0.5,), ([0.5, (1.5, _B3)],), ({"a": 0.5, "b": [1.5]},))


@defrule(builtins.sorted)
def sorted_rule(xs, *, key=None, reverse=False):
    # The permutation is piecewise constant: the adjoint of entry k of the result goes
    # back to the argument's entry it came from (ties keep their order).
    items = list(xs)
    perm = _sort_permutation(items, key, reverse)
    y = [items[i] for i in perm]

    def sorted_pullback(y_bar):
        return (_seq_adjoint(xs, _unsort(perm, _items_bar(y_bar, len(perm)))),)

    def sorted_differential(xs_dot):
        dots = _item_dots(xs, xs_dot, len(perm))
        if dots is None:
            return None
        return [dots[i] for i in perm]

    return y, sorted_pullback, sorted_differential


cases(builtins.sorted, ([0.5, -1.5, 2.0, 0.25],), ((1.5, -0.5),), (_B3[::-1].copy(),))


@defrule(builtins.dict)
def dict_rule(*args):
    # dict(mapping): the adjoint is a dict with the mapping's keys.  dict(pairs): each
    # pair that sets a value of the result gets (None, value_bar), a later pair with the
    # same key overriding an earlier one (whose adjoint is zero).
    if len(args) == 0 or _is_mapping(args[0]):
        y = dict(*args)
        pairs = None
        last = None
    else:
        y, pairs, last = _dict_pairs(*args)

    def dict_pullback(y_bar):
        if len(args) == 0:
            return ()
        if pairs is None:
            return (_mapping_adjoint(args[0], y_bar),)
        return (_pairs_adjoint(args[0], pairs, last, y_bar),)

    def dict_differential(*args_dot):
        if len(args) == 0:
            return None
        if pairs is None:
            return _mapping_tangent(y, args_dot[0])
        return _pairs_tangent(y, args[0], pairs, last, args_dot[0])

    return y, dict_pullback, dict_differential


# A mapping, pairs with a key repeated (the earlier pair gets no adjoint), a tuple of pairs
# holding an array.
cases(builtins.dict, ({"a": 0.5, "b": 1.5},), ([("a", 0.5), ("b", 1.5), ("a", 2.0)],),
      ((("a", _B3), ("b", 0.5)),))


# zip, enumerate and reversed are lazy in Python: an unused call of them does nothing.
# (list, tuple, sorted and dict drain iterators, whose side effects must be kept.)
mark_pure(builtins.zip, builtins.enumerate, builtins.reversed)


# --------------------------------------------------------------------------------------
# Named tuples: a named tuple is a tuple; its adjoint and tangent are its items'.
# --------------------------------------------------------------------------------------


deflinear(runtime.make_namedtuple, lambda cls, items: (
    None if ans_bar is None else tuple(ans_bar)), arg=1, tangent=lambda cls, items: items)
_Pair = collections.namedtuple("_Pair", "u v")
cases(runtime.make_namedtuple, (_Pair, (0.5, 1.5)))
