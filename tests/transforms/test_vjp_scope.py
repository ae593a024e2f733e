"""The scalar adjoints of a dict parameter's entries (``VJP.entry_slot``, ``Scope.flush``):
``params["a"]`` read in a loop adds into one float, added into the dict's adjoint where that
is read. Every way the dict's adjoint can be read in between is a place the entries' sums
must already be in it: checked against central differences, both modes, second order."""

from __future__ import annotations

import dataclasses
import math

import pytest

import wengert
from wengert.analysis.types import DictOf
from wengert.testing import check_grads


def _helper(p, x):
    return p["a"] * x + p["b"]


def in_a_loop(p, xs):
    s = 0.0
    for x in xs:
        s += (p["a"] * x * x + p["b"] * x - p["c"]) ** 2
    return s


def nested_loops_and_while(p, xs):
    s = 0.0
    for x in xs:
        for k in range(2):
            s = s * 0.5 + p["a"] * x + k * p["b"]
    t = p["c"]
    while t < 4.0:
        t = t * 1.5 + p["a"] * 0.1
        if t > 3.0:
            break
    return s + t


def branches_and_missing_keys(p, xs):
    s = 0.0
    for x in xs:
        if x > 0.0:
            s += p["a"] * x
        elif "zz" in p:
            s += p["zz"] * x  # never runs: the key is absent
        else:
            s -= p["b"] * x * x
    return s


def mixed_with_computed_keys(p, xs):
    s = 0.0
    for x in xs:
        for k in p:
            s += p[k] * x  # a computed key reads the dict's adjoint (flushed first)
        s += p["a"] * p["b"]
    return s


def passed_to_a_helper(p, xs):
    s = p["a"] * 2.0
    for x in xs:
        s += _helper(p, x) * p["c"]
    return s + p["b"]


def returned_entry_and_sum(p, xs):
    s = sum(p[k] for k in ("a", "b")) + math.sin(p["c"])
    for x in xs:
        s = s * p["a"] + x
    return s


PROGRAMS = [in_a_loop, nested_loops_and_while, branches_and_missing_keys,
            mixed_with_computed_keys, passed_to_a_helper, returned_entry_and_sum]
P = {"a": 0.7, "b": -0.3, "c": 1.2}
XS = [0.5, -1.0, 1.5, 2.0]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_entries_of_a_dict_parameter(f):
    check_grads(f, (dict(P), list(XS)), argnums=0, order=2, modes=("rev", "fwd"))


def test_an_entry_read_in_a_loop_is_one_float():
    source = wengert.show(in_a_loop, mode="vjp", arg_types=(DictOf(float), list))
    assert "p_a_bar +=" in source and "getitem_adjoint_owned" not in source, source


def test_a_key_never_read_gets_no_entry():
    g = wengert.grad(branches_and_missing_keys)(dict(P), [1.0, 2.0])
    assert set(g) == {"a", "b", "c"} and g["b"] == 0.0 and g["a"] == pytest.approx(3.0)


# --- items read again by a gradient differentiated again (``Scope.remakeable``) -------------


@dataclasses.dataclass
class Trail:
    k: float
    hist: list


def field_rebound_after_the_loop(tr, c):
    e = 0.0
    tr.hist.append(tr.k * c)
    for h in tr.hist:
        e += h * tr.k * c
    tr.hist = [c, tr.k]
    return e + tr.hist[0] * tr.hist[1]


def field_rebound_in_a_loop(tr, c):
    e = 0.0
    for _ in range(3):
        tr.hist.append(tr.k * c)
        for h in tr.hist:
            e += h * tr.k * c
        tr.hist = [c * e, tr.k]
    return e + tr.hist[0]


def row_rebound(m, c):
    e = 0.0
    m[0].append(c)
    for v in m[0]:
        e += v * c
    m[0] = [c, e]
    return e * m[0][1]


def entry_rebound(d, c):
    e = 0.0
    d["h"].append(c)
    for v in d["h"]:
        e += v * c
    d["h"] = [c, e]
    return e * d["h"][1]


@pytest.mark.parametrize("f, make", [
    (field_rebound_after_the_loop, lambda: Trail(1.073, [-0.467, -0.445, 0.392])),
    (field_rebound_in_a_loop, lambda: Trail(1.073, [-0.467, -0.445, 0.392])),
    (row_rebound, lambda: [[0.5, 0.25], [1.5, 2.0]]),
    (entry_rebound, lambda: {"h": [0.5, 0.25]}),
])
def test_a_slot_given_another_list_after_its_items_were_walked(f, make):
    """A list in a field, a row or an entry is appended to, walked, then replaced by a new
    list: the reverse of the walk reads the old list, which the gradient differentiated
    again (Hessians, ``grad(grad(f))``) must not read out of the slot again (it failed
    there with an ``IndexError``: the new list is shorter)."""
    check_grads(f, (make(), 0.803), modes=("rev", "fwd"), order=2)
    h = wengert.grad(wengert.grad(f, argnums=1), argnums=1)(make(), 0.803)
    eps = 1e-5
    g = wengert.grad(f, argnums=1)
    assert math.isclose(h, (g(make(), 0.803 + eps) - g(make(), 0.803 - eps)) / (2 * eps),
                        rel_tol=1e-5, abs_tol=1e-7)
