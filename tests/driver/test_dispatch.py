"""Callees known only at run time (``driver/dispatch.py``) in derivatives of the second
order: a callee that writes into none of its arguments has its forward run again by its
pullback; one that writes into them is refused, never differentiated wrongly."""

from __future__ import annotations

import statistics
from typing import NamedTuple

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads


class Det:
    def __call__(self, m):
        if len(m) == 1:
            return m[0][0]
        t = 0.0
        for j in range(len(m)):
            minor = [r[:j] + r[j + 1:] for r in m[1:]]
            t += (-1.0) ** j * m[0][j] * self(minor)
        return t


class DoublingDet:
    """As :class:`Det`, but doubling the first row of the matrix it is given first."""

    def __call__(self, m):
        if len(m) == 1:
            return m[0][0]
        m[0] = [2.0 * m[0][k] for k in range(len(m))]
        t = 0.0
        for j in range(len(m)):
            minor = [r[:j] + r[j + 1:] for r in m[1:]]
            t += (-1.0) ** j * m[0][j] * self(minor)
        return t


class Expansion:
    """Cofactor expansion along the first row, then the first column, and so on: two
    methods calling each other through ``self``."""

    def rows(self, m):
        if len(m) == 1:
            return m[0][0]
        total = 0.0
        for j in range(len(m)):
            total += (-1.0) ** j * m[0][j] * self.columns([r[:j] + r[j + 1:] for r in m[1:]])
        return total

    def columns(self, m):
        if len(m) == 1:
            return m[0][0]
        total = 0.0
        for i in range(len(m)):
            total += (-1.0) ** i * m[i][0] * self.rows([r[1:] for r in m[:i] + m[i + 1:]])
        return total


def matrix(x, y):
    return [[x, y, 1.0], [y * y, x, 2.0], [0.5, x * y, 3.0]]


def callable_rec(x, y):
    return Det()(matrix(x, y))


def doubling_rec(x, y):
    return DoublingDet()(matrix(x, y))


def mutual_rec(x, y):
    return Expansion().rows(matrix(x, y))


def passed_in(x, fs):
    return fs[0](matrix(x, 2.0 * x))


def det3(x, y):
    """The same determinant, written out."""
    (a, b, c), (d, e, f), (g, h, k) = matrix(x, y)
    return a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)


def test_a_callable_object_recursing_on_itself_differentiates_to_the_second_order():
    # Its ``self(minor)`` was an unknown callee that may write into anything, and its running
    # sum ``t += ...`` one alias of ``m[0][0]`` it returns in the other branch: it was
    # refused as writing into its arguments.
    check_grads(callable_rec, (0.7, 1.3), modes=("rev", "fwd"), order=2)
    np.testing.assert_allclose(wengert.hessian(callable_rec, argnums=(0, 1))(0.7, 1.3),
                               wengert.hessian(det3, argnums=(0, 1))(0.7, 1.3), atol=1e-12)
    # Passed in: the object itself is the callee dispatched (its class summarised).
    check_grads(passed_in, (0.7, [Det()]), modes=("rev", "fwd"), argnums=0, order=2)
    # One that really writes into its argument: right to the first order, refused at the
    # second (its pullback runs it again on the matrix it changed).
    check_grads(doubling_rec, (0.7, 1.3), modes=("rev", "fwd"))
    for second in (wengert.hessian, lambda f: wengert.grad(wengert.grad(f))):
        with pytest.raises(wengert.NonDifferentiableError,
                           match="DoublingDet.__call__ writes into its arguments") as info:
            second(doubling_rec)(0.7, 1.3)
        assert info.value.loc is not None and info.value.loc.filename == __file__


def test_methods_recursing_through_each_other_differentiate_to_the_second_order():
    # ``self.columns(...)`` and ``self.rows(...)``: each summarised for the class, the other
    # assumed to write nothing until its body says otherwise.
    check_grads(mutual_rec, (0.7, 1.3), modes=("rev", "fwd"), order=2)
    np.testing.assert_allclose(wengert.hessian(mutual_rec, argnums=(0, 1))(0.7, 1.3),
                               wengert.hessian(det3, argnums=(0, 1))(0.7, 1.3), atol=1e-12)


_Pair = __import__("collections").namedtuple("_Pair", "u w")


def _replaced_item(items, c):
    q = items[0]  # of a list of mixed items: its class is known only at run time
    return q._replace(u=c).u * c


def _called_item(items, c):
    f = items[0]  # a function known only at run time
    return f([c, 0.3, 0.2]) * c


def test_an_error_inside_the_standard_library_is_reported_at_the_users_call():
    """A callee met at run time whose code in the standard library cannot be differentiated
    (``statistics.harmonic_mean`` has a ``try``) is refused at the user's call, with the
    library's place as a note, not at a line of ``statistics``."""
    with pytest.raises(wengert.WengertError) as info:
        wengert.grad(_called_item, argnums=1)([statistics.harmonic_mean, 1], 0.7)
    assert info.value.loc.filename == __file__
    assert any("standard library" in note for note in info.value.notes)
    # (a named tuple's ``_replace``, whose library code pops a dict in a loop, is
    # differentiated from a definition of what it does: ``python_defs``)
    assert wengert.grad(_replaced_item, argnums=1)([_Pair(0.5, 1.0), (1, 2)], 0.7) == \
        pytest.approx(2 * 0.7)


class _Pt(NamedTuple):
    u: float
    w: float = 0.5


def _named_tuple_methods_on_items_of_a_grown_list(qs, c):
    qs.append(_Pt(c))
    e = qs[-1]._asdict()["u"] * c
    for i, q in enumerate(qs):
        e += q._replace(w=c).w * q.u * (i + 1)
    return e


def _named_tuple_methods_on_items_of_unknown_class(qs, c):
    # (``qs`` holds items of two classes: each call's method is known only when it runs)
    e = 0.0
    for q in qs:
        e += q._replace(u=q.u * c).u + q._asdict()["w"] * c
    return e


class _Other(NamedTuple):
    u: float
    w: float


@pytest.mark.parametrize(("f", "args", "order"), [
    (_named_tuple_methods_on_items_of_a_grown_list, ([_Pt(0.489, -1.02), _Pt(1.032, 1.25)],
                                                     0.4), 2),
    # (to the second order, a callee known only at run time given an item of a list is
    # refused: it may write into it)
    (_named_tuple_methods_on_items_of_unknown_class, ([_Pt(0.489, -1.02), _Other(1.03, 1.2)],
                                                      0.4), 1),
], ids=lambda v: getattr(v, "__name__", ""))
def test_named_tuple_methods_dispatched_or_known_differentiate(f, args, order):
    """``_replace`` and ``_asdict`` of a named tuple whose class is known only at run time
    are differentiated from Python definitions of what they do (the library's ``_replace``
    pops a dict in a loop: refused before, "Pt._fields is computed by a descriptor"); a
    list of them appended to keeps its items' types, so they are known there."""
    check_grads(f, args, modes=("rev", "fwd"), order=order)
