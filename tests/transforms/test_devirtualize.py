"""What a class or a call site decides, spelled out before differentiation: a named tuple's
``_replace``/``_asdict``, and a dict display splatted into a call (``f(x, **{'k': v})``)."""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import NamedTuple

import pytest

import wengert
from wengert.testing import check_grads


class State(NamedTuple):
    x: float
    v: float
    m: float = 2.0


def replace_steps(a, b):
    s = State(a, b)
    for _ in range(5):
        s = s._replace(v=s.v - 0.1 * s.x / s.m)
        s = s._replace(x=s.x + 0.1 * s.v)
    d = s._asdict()
    return d["x"] * d["v"] + s._replace(m=a * b).m ** 2


def replace_of_an_argument(s, c):
    t = s._replace(v=s.x * c)
    return t.x * t.v + sum(t._asdict().values())


def code_of(f, like):
    source = wengert.show(f, mode="vjp", like=like)
    return "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))


def test_a_named_tuples_replace_and_asdict_are_constructions():
    """``p._replace(x=a)`` is ``State(a, p.v, p.m)`` and ``p._asdict()`` a dict display, so
    they differentiate (the library's ``_replace`` pops a dict of changes in a loop) and
    the arithmetic on the fields inlines; a named tuple argument's cotangent is one."""
    check_grads(replace_steps, (0.7, 1.3), modes=("rev", "fwd"), order=2)
    check_grads(replace_of_an_argument, (State(0.5, 1.5), 2.0), modes=("rev", "fwd"),
                order=2)
    g = wengert.grad(replace_of_an_argument)(State(0.5, 1.5), 2.0)
    assert type(g) is State and g == State(2 * 0.5 * 2.0 + 1.0 + 2.0, 0.0, 1.0), g
    for f, like in [(replace_steps, (0.7, 1.3)), (replace_of_an_argument, (State(0.5, 1.5),
                                                                            2.0))]:
        code = code_of(f, like)
        calls = [line for line in code.splitlines() if not line.startswith("def ")]
        assert not any("_replace" in line or "_vjp(" in line for line in calls), code


def scaled_sum(*args, scale=1.0, **kw):
    return scale * sum(args) * kw.get("k", 1.0)


def splatted_displays(a, b):
    opts = {"k": b}
    return scaled_sum(a, **{"k": 2.0}) + scaled_sum(b, a, **{"scale": a, "k": b}) + \
        scaled_sum(a * b, **opts)


def test_a_dict_display_splatted_into_a_call_is_its_keyword_arguments():
    """``f(x, **{'k': v})`` (a display read by nothing else) is ``f(x, k=v)``: it
    differentiates where a ``**mapping`` of active values is refused."""
    check_grads(splatted_displays, (0.7, 1.3), modes=("rev", "fwd"), order=2)


class Vec:
    """A vector class with its own arithmetic (``__add__`` and the reflected ones)."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def __sub__(self, o):
        return Vec(self.x - o.x, self.y - o.y)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    def __rmul__(self, s):
        return Vec(s * self.x, s * self.y)

    def __truediv__(self, s):
        return Vec(self.x / s, self.y / s)

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __matmul__(self, o):
        return self.x * o.x + self.y * o.y


@dataclasses.dataclass
class Dual:
    re: float
    im: float

    def __mul__(self, o):
        return Dual(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)

    def __iadd__(self, o):
        self.re += o.re
        self.im += o.im
        return self


class Pair(typing.NamedTuple):
    a: float
    b: float

    def __add__(self, o):
        return Pair(self.a + o.a, self.b + o.b)

    def __mul__(self, s):
        return Pair(self.a * s, self.b * s)


def vector_arithmetic(a, b):
    u = Vec(a, 1.0) + Vec(2.0, b)
    w = -(u - Vec(b, a)) * 3.0
    z = 2.0 * w / a
    return abs(z) + (z @ u) + z.x * z.y


def dual_arithmetic(a, b):
    d = Dual(a, b) * Dual(b, 0.5)
    d += Dual(a * a, 1.0)
    return d.re * d.im


def pair_arithmetic(a, b):
    p = (Pair(a, 1.0) + Pair(2.0, b)) * a
    return p.a * 10.0 + p.b


def summed_in_a_loop(a, b):
    acc = Vec(0.0, 0.0)
    for k in range(3):
        acc = acc + Vec(a * k, b) * a
    return acc @ acc


@pytest.mark.parametrize("f", [vector_arithmetic, dual_arithmetic, pair_arithmetic,
                               summed_in_a_loop], ids=lambda f: f.__name__)
def test_operators_a_class_defines_call_its_methods(f):
    # ``a + b`` on an object of a class defining ``__add__`` was differentiated by the
    # rules of numbers (a named tuple's as tuple concatenation): wrong derivatives, or
    # a TypeError from generated code.
    check_grads(f, (0.7, 1.3), modes=("rev", "fwd"), order=2)


def items_of_unknown_type(items, a):
    s = items[0] * a  # (a list of a Vec and a float: its items' type is not known)
    return s.x + items[1] * a


def test_an_operator_on_an_object_of_unknown_type_is_refused_when_it_runs():
    with pytest.raises(wengert.NonDifferentiableError, match="class Vec") as e:
        wengert.grad(items_of_unknown_type, argnums=1)([Vec(0.3, 0.5), 2.0], 0.7)
    assert e.value.loc.filename == __file__


class Series:
    """A container class of its own: ``s[i]``, ``s[i] = v`` and ``for v in s``."""

    def __init__(self, vals):
        self.vals = list(vals)

    def __getitem__(self, i):
        return self.vals[i]

    def __setitem__(self, i, v):
        self.vals[i] = v

    def __iter__(self):
        return iter(self.vals)


def indexed_and_iterated(x, y):
    s = Series([x, 2.0, y])
    s[1] = s[0] * s[2]
    total = 0.0
    for v in s:
        total += v * v
    return total + s[1]


def test_a_class_s_own_indexing_and_iteration():
    # (a TypeError from inside wengert before: ``s[0]`` taken for a list's item,
    # ``for v in s`` for a loop over the object's fields)
    check_grads(indexed_and_iterated, (0.7, 1.3), modes=("rev", "fwd"), order=2)


class Acc:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return Acc(self.x + o.x, self.y + o.y)

    def __radd__(self, o):
        if o == 0:
            return self  # (``sum`` starts from 0)
        return self + o


def summed_objects(a, b):
    t = sum([Acc(a, 1.0), Acc(2.0, a), Acc(b, a * b)])
    return t.x * t.y


def test_sum_of_a_display_of_objects_with_their_own_addition():
    # (a TypeError from inside wengert in forward mode before: the rules of a numeric sum
    # added the objects' tangents)
    check_grads(summed_objects, (0.7, 1.3), modes=("rev", "fwd"), order=2)


# A call spreading a tuple read out of a list of tuples of known entries is given the
# entries (``f(*args)`` as ``f(args[0], args[1])``): inlined and differentiated to any
# order, not dispatched when it runs.
def products(pairs):
    import operator

    return [operator.mul(*args) for args in pairs]


def extremes(triples):
    s = 0.0
    for t in triples:
        s = s + max(*t) * min(*t) + sum(t)
    return s


def spread_into_a_helper(rows, w):
    def line(a, b):
        return a * w + b

    return sum(line(*r) for r in rows)


@pytest.mark.parametrize("f, args", [
    (products, ([(0.5, 1.25), (-1.5, 0.75)],)),
    (extremes, ([(0.5, 1.25, 0.3), (-1.5, 0.75, 2.0)],)),
    (spread_into_a_helper, ([(0.5, 1.25), (-1.5, 0.75)], 0.7)),
], ids=["operator", "max-min", "helper"])
def test_a_tuple_read_out_of_a_list_spread_into_a_call_differentiates_to_second_order(f, args):
    check_grads(f, args, order=2, modes=("rev", "fwd"))
    text = wengert.show(f, mode="vjp", like=args)
    assert "dispatch" not in text
