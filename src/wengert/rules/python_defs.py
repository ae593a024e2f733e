"""Python definitions of builtins that call functions they are given.

``map(f, xs)``, ``filter(f, xs)``, ``functools.reduce(f, xs)`` and ``sorted(xs, key=f)``
call ``f`` from C, where no derivative can follow it: a lambda over a value being
differentiated, handed to one of them, would be a function passed on. Written in
Python instead, they are inlined into the function being differentiated (like a small
user helper), and their calls of ``f`` are calls of a known function there, which both
modes differentiate with its captures, to any order.

``math.prod`` is its product loop (the same multiplications in the same order), so its
derivative at a zero entry is the other entries' product, and a float ``start`` or array
items need nothing special. The :mod:`statistics` functions people use on floats
(``mean``, ``fmean``, ``variance``, ``pvariance``, ``stdev``, ``pstdev``) are defined here
too, in floating point.

The methods of dicts and lists people call on containers of values being differentiated
(``d.get``, ``d.items()``, ``d.values()``, ``d.copy()``, ``d.setdefault``, ``d.update``,
``xs.extend``, ``xs.insert``, ``xs.copy()``) are defined with indexing, ``append`` and loops,
which both modes differentiate to any order; ``d.keys()`` carries no derivative. (``xs.pop``
is differentiated by the transforms themselves: it shrinks the list.)

Each definition computes what the builtin computes. ``d.items()`` and ``d.values()``
are lists of the entries made at the call, not views: a loop over one that writes the entry
it is at reads what the view reads, and one that may write another entry is iterated over
the keys instead, reading each entry when it is reached (``prepare._live_dict_loops``); a
program that keeps a view, changes the dict, then reads the view sees the entries as they
were. The laziness of ``map`` and ``filter`` is not kept (their results are iterators over
lists made at once), as for generator expressions, which wengert also evaluates eagerly.
The key a ``sorted``, ``min`` or ``max`` compares by only decides an order: it is piecewise
constant, and carries no derivative (:func:`wengert.runtime.keyed_order`).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import operator
import statistics

from wengert import runtime
from wengert.rules.form import cases, kw
from wengert.rules.registry import defpython, nondifferentiable
from wengert.rules.sequences import _is_mapping


@defpython(builtins.map)
def map_(function, *iterables):
    if len(iterables) == 1:
        return iter([function(x) for x in iterables[0]])
    if len(iterables) == 2:  # (no starred call: one of a known callee is inlined)
        return iter([function(x, y) for x, y in zip(iterables[0], iterables[1])])
    return iter([function(*xs) for xs in zip(*iterables)])


@defpython(builtins.filter)
def filter_(function, iterable):
    if function is None:
        return iter([x for x in iterable if x])
    return iter([x for x in iterable if function(x)])


@defpython(functools.reduce)
def reduce_(function, iterable, *initial):
    if len(initial) == 0:
        items = list(iterable)
        if len(items) == 0:
            functools.reduce(function, items)  # raises as Python does
        acc = items[0]
        rest = items[1:]
    else:
        # (the iterable itself, not a copy: a display of closures stays one, whose calls
        # are calls of the closures)
        acc = initial[0]
        rest = iterable
    for x in rest:
        acc = function(acc, x)
    return acc


@defpython(builtins.sorted, keywords=("key", "reverse"))
def sorted_(iterable, key=None, reverse=False):
    items = list(iterable)
    order = runtime.keyed_order(items, key, reverse)
    return [items[i] for i in order]


@defpython(math.prod, keywords=("start",))
def prod_(iterable, start=1):
    acc = start
    for x in iterable:
        acc = acc * x
    return acc


@defpython(dict.get)
def dict_get(self, key, default=None):
    if key in self:
        return self[key]
    return default


@defpython(dict.items)
def dict_items(self):
    return [(key, self[key]) for key in self]


@defpython(dict.values)
def dict_values(self):
    return [self[key] for key in self]


@defpython(dict.copy)
def dict_copy(self):
    return {key: self[key] for key in self}


@defpython(dict.setdefault)
def dict_setdefault(self, key, default=None):
    if key not in self:
        self[key] = default
    return self[key]


@defpython(dict.update, keywords=("**",))
def dict_update(self, other=(), **kwargs):
    if _is_mapping(other):
        for key in list(other):
            self[key] = other[key]
    else:
        for key, value in list(other):
            self[key] = value
    for key in kwargs:
        self[key] = kwargs[key]


@defpython(list.extend)
def list_extend(self, iterable):
    for item in list(iterable):  # ``xs.extend(xs)`` reads the items first, as Python does
        self.append(item)


@defpython(list.insert)
def list_insert(self, index, item):
    n = len(self)
    at = _insert_position(index, n)
    self.append(item)
    for j in range(n, at, -1):
        self[j] = self[j - 1]
    self[at] = item


@defpython(list.sort, keywords=("key", "reverse"))
def list_sort(self, key=None, reverse=False):
    order = runtime.keyed_order(self, key, reverse)
    items = [self[i] for i in order]
    for j in range(len(items)):
        self[j] = items[j]


@defpython(list.reverse)
def list_reverse(self):
    items = self[::-1]
    for j in range(len(items)):
        self[j] = items[j]


@defpython(list.remove)
def list_remove(self, value):
    self.pop(self.index(value))  # (index raises ValueError as remove does)


@defpython(list.clear)
def list_clear(self):
    for _ in range(len(self)):
        self.pop()


@defpython(list.copy)
def list_copy(self):
    return self[:]


def _insert_position(index, n):
    """Where ``xs.insert(index, v)`` puts ``v`` in a list of ``n`` items (Python clips)."""
    index = operator.index(index)
    if index < 0:
        return max(index + n, 0)
    return min(index, n)


nondifferentiable(_insert_position, dict.keys, list.index, list.count)


# The statistics module computes with exact fractions (and try/except), which no derivative
# follows; these definitions compute the same in floating point. An empty (or too short)
# sample calls the module itself, which raises its own error.


def _too_short(fn, items, n):
    """Let ``fn`` raise its own error for a sample of fewer than ``n`` items."""
    if len(items) < n:
        fn(items)


nondifferentiable(_too_short)


@defpython(statistics.mean)
def mean_(data):
    items = list(data)
    _too_short(statistics.mean, items, 1)
    return sum(items) / len(items)


@defpython(statistics.fmean, keywords=("weights",))
def fmean_(data, weights=None):
    items = list(data)
    if weights is None:
        _too_short(statistics.fmean, items, 1)
        return sum(items) / len(items)
    ws = list(weights)
    return sum([w * x for w, x in zip(ws, items)]) / sum(ws)


@defpython(statistics.variance, keywords=("xbar",))
def variance_(data, xbar=None):
    items = list(data)
    _too_short(statistics.variance, items, 2)
    m = sum(items) / len(items) if xbar is None else xbar
    return sum([(x - m) * (x - m) for x in items]) / (len(items) - 1)


@defpython(statistics.pvariance, keywords=("mu",))
def pvariance_(data, mu=None):
    items = list(data)
    _too_short(statistics.pvariance, items, 1)
    m = sum(items) / len(items) if mu is None else mu
    return sum([(x - m) * (x - m) for x in items]) / len(items)


@defpython(statistics.stdev, keywords=("xbar",))
def stdev_(data, xbar=None):
    return math.sqrt(variance_(data, xbar))


@defpython(statistics.pstdev, keywords=("mu",))
def pstdev_(data, mu=None):
    return math.sqrt(pvariance_(data, mu))


@defpython(itertools.chain)
def chain_(*iterables):
    out = []
    for it in iterables:
        for x in it:
            out.append(x)
    return iter(out)


@defpython(itertools.chain.from_iterable)
def chain_from_iterable_(iterables):
    out = []
    for it in iterables:
        for x in it:
            out.append(x)
    return iter(out)


@defpython(itertools.product, keywords=("repeat",))
def product_(*iterables, repeat=1):
    pools = [tuple(it) for it in iterables] * repeat
    out = [()]
    for pool in pools:
        out = [done + (x,) for done in out for x in pool]
    return iter(out)


@defpython(itertools.combinations)
def combinations_(iterable, r):
    pool = tuple(iterable)
    out = [()]
    starts = [0]
    for _ in range(r):
        grown = []
        after = []
        for done, start in zip(out, starts):
            for i in range(start, len(pool)):
                grown.append(done + (pool[i],))
                after.append(i + 1)
        out, starts = grown, after
    return iter(out)


@defpython(itertools.pairwise)
def pairwise_(iterable):
    items = list(iterable)
    return iter([(items[i], items[i + 1]) for i in range(len(items) - 1)])


@defpython(itertools.starmap)
def starmap_(function, iterable):
    return iter([function(*args) for args in iterable])


@defpython(itertools.accumulate, keywords=("func", "initial"))
def accumulate_(iterable, func=None, initial=None):
    items = list(iterable)
    if initial is not None:
        items = [initial] + items
    if len(items) == 0:
        return iter([])
    acc = items[0]
    out = [acc]
    for x in items[1:]:
        acc = acc + x if func is None else func(acc, x)
        out.append(acc)
    return iter(out)


@defpython(runtime.copy_rows)
def copy_rows_(rows):
    return [list(r) for r in rows]


@defpython(runtime.zip_rows)
def zip_rows_(rows):
    # (``zip(*rows)`` of a list of lists or tuples: its columns, as tuples, made by index)
    n = min([len(r) for r in rows]) if len(rows) > 0 else 0
    return iter([tuple([r[j] for r in rows]) for j in range(n)])


# -- a real number's parts (``x.real``, ``x.imag``, ``x.conjugate()``): itself and zero.

@defpython(float.real)
def float_real(self):
    return self


@defpython(float.imag)
def float_imag(self):
    return 0.0 * self


@defpython(float.conjugate)
def float_conjugate(self):
    return self


def _let_raise(fn, failed, *args):
    """Let ``fn`` raise its own error where ``failed`` (what the definition would not)."""
    if failed:
        fn(*args)


nondifferentiable(_let_raise)


def _centred_sums(xs, ys):
    n = len(xs)
    xbar = math.fsum(xs) / n
    ybar = math.fsum(ys) / n
    sxy = math.fsum([(a - xbar) * (b - ybar) for a, b in zip(xs, ys)])
    return n, xbar, ybar, sxy


@defpython(statistics.covariance)
def covariance_(x, y):
    xs, ys = list(x), list(y)
    _let_raise(statistics.covariance, len(xs) != len(ys) or len(xs) < 2, xs, ys)
    n, _, _, sxy = _centred_sums(xs, ys)
    return sxy / (n - 1)


@defpython(statistics.correlation)
def correlation_(x, y):
    xs, ys = list(x), list(y)
    _let_raise(statistics.correlation, len(xs) != len(ys) or len(xs) < 2, xs, ys)
    n, xbar, ybar, sxy = _centred_sums(xs, ys)
    sxx = math.fsum([(a - xbar) * (a - xbar) for a in xs])
    syy = math.fsum([(b - ybar) * (b - ybar) for b in ys])
    _let_raise(statistics.correlation, sxx * syy == 0.0, xs, ys)
    return sxy / math.sqrt(sxx * syy)


@defpython(statistics.linear_regression, keywords=("proportional",))
def linear_regression_(x, y, proportional=False):
    xs, ys = list(x), list(y)
    _let_raise(statistics.linear_regression, len(xs) != len(ys) or len(xs) < 2, xs, ys)
    if proportional:
        sxy = math.fsum([a * b for a, b in zip(xs, ys)])
        sxx = math.fsum([a * a for a in xs])
        _let_raise(statistics.linear_regression, sxx == 0.0, xs, ys)
        return statistics.LinearRegression(slope=sxy / sxx, intercept=0.0)
    n, xbar, ybar, sxy = _centred_sums(xs, ys)
    sxx = math.fsum([(a - xbar) * (a - xbar) for a in xs])
    _let_raise(statistics.linear_regression, sxx == 0.0, xs, ys)
    slope = sxy / sxx
    return statistics.LinearRegression(slope=slope, intercept=ybar - slope * xbar)


# -- named tuples' methods, called on an object whose class is known only at run time (one
# known when transforming is spelled out by ``transforms.devirtualize``); the library's own
# ``_replace`` pops a dict of changes in a loop no derivative follows.

def namedtuple_replace(self, **changes):
    fields = runtime.namedtuple_fields(self, changes)
    return runtime.make_namedtuple(type(self), tuple(
        [changes[f] if f in changes else self[i] for i, f in enumerate(fields)]))


def namedtuple_asdict(self):
    fields = runtime.namedtuple_fields(self, {})
    return {f: self[i] for i, f in enumerate(fields)}


#: The definitions above by the name of the method they define.
NAMEDTUPLE_METHODS = {"_replace": namedtuple_replace, "_asdict": namedtuple_asdict}


# -- Sample points of the definitions above, checked against the functions they define (and
# differentiated) by tests/rules/test_form.py.

_XS = [0.5, -1.5, 2.0, 0.25]
_YS = [1.25, -0.5, 1.5, 0.75]
_D = {"a": 0.5, "b": -1.5}


def _positive(x):
    """A predicate for ``filter``'s cases."""
    return x > 0.0


cases(builtins.map, (math.sin, _XS), (operator.mul, _XS, _YS))
cases(builtins.filter, (_positive, _XS), (None, _XS))
cases(functools.reduce, (operator.mul, _XS), (operator.add, _XS, 0.75))
cases(math.prod, (_XS,), (_XS, kw(start=2.0)))
cases(dict.items, (_D,))
cases(dict.values, (_D,))
cases(dict.get, (_D, "b"), (_D, "z", 0.25))
cases(dict.copy, (_D,))
cases(dict.setdefault, (_D, "b", 0.25), (_D, "z", 0.25))
cases(dict.update, (_D, {"b": 0.75, "c": 1.25}), (_D, [("c", 1.25)]), (_D, kw(c=1.25)))
cases(list.extend, (_XS, _YS[:2]))
cases(list.insert, (_XS, 1, 0.75), (_XS, -9, 0.75))
cases(list.sort, (_XS,), (_XS, kw(key=abs, reverse=True)))
cases(list.reverse, (_XS,))
cases(list.remove, (_XS, 2.0))
cases(list.clear, (_XS,))
cases(list.copy, (_XS,))
cases(statistics.mean, (_XS,))
cases(statistics.fmean, (_XS,), (_XS, kw(weights=[1.0, 2.0, 0.5, 1.5])))
cases(statistics.variance, (_XS,), (_XS, kw(xbar=0.25)))
cases(statistics.pvariance, (_XS,), (_XS, kw(mu=0.25)))
cases(statistics.stdev, (_XS,), (_XS, kw(xbar=0.25)))
cases(statistics.pstdev, (_XS,), (_XS, kw(mu=0.25)))
cases(statistics.covariance, (_XS, _YS))
cases(statistics.correlation, (_XS, _YS))
cases(statistics.linear_regression, (_XS, _YS), (_XS, _YS, kw(proportional=True)))
cases(itertools.chain, (_XS, _YS[:2]))
cases(itertools.chain.from_iterable, ([_XS, _YS[:2]],))
cases(itertools.product, (_XS[:2], _YS[:2]), (_XS[:2], kw(repeat=2)))
cases(itertools.combinations, (_XS, 2))
cases(itertools.pairwise, (_XS,))
cases(itertools.starmap, (operator.mul, [(2, 3), (-4, 5)]), (operator.mul, list(zip(_XS, _YS))))
cases(itertools.accumulate, (_XS,), (_XS, kw(func=operator.mul)), (_XS, kw(initial=0.75)))
cases(runtime.copy_rows, ([_XS[:2], _YS[:2]],))
cases(runtime.zip_rows, ([_XS[:3], _YS[:3]],))
cases(float.real, (0.5,))
cases(float.imag, (0.5,))
cases(float.conjugate, (0.5,))
