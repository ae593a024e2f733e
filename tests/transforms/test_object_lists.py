"""Lists of objects a function makes and keeps, kept as one list per field
(``transforms/object_lists.py``): the derivative works on lists of numbers (no adjoint
object per item), and every way the objects could be reached otherwise leaves the list as
it is. Each program is checked against central differences in both modes and to second
order; which ones are rewritten is read off the generated code."""

from __future__ import annotations

import dataclasses
import math

import pytest

import wengert
from wengert.testing import check_grads


@dataclasses.dataclass
class Bead:
    x: float
    v: float
    m: float = 2.0


class Ball:
    def __init__(self, x, v):
        self.x = x
        self.v = v


def beads(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for _ in range(6):
        for p in ps:
            p.v -= 0.1 * p.x / p.m
            p.x += 0.1 * p.v
    return sum(p.x * p.x for p in ps)


def balls_by_index(xs, vs):
    ps = []
    for x, v in zip(xs, vs):
        ps.append(Ball(x, v))
    for _ in range(5):
        for i in range(len(ps)):
            ps[i].v = ps[i].v - 0.1 * math.sin(ps[i].x)
            ps[i].x = ps[i].x + 0.1 * ps[i].v
    return ps[0].x * ps[-1].v + ps[1].x


def pairs(xs, vs):
    ps = [Bead(x, v, m=1.0 + x * x) for x, v in zip(xs, vs)]
    for _ in range(3):
        for a in ps:
            f = 0.0
            for b in ps:
                if a is not b:
                    f += (b.x - a.x) * b.m
            a.v += 0.1 * f
        for k, p in enumerate(ps):
            p.x += 0.1 * p.v * (k + 1)
    return sum(p.v * p.x for p in reversed(ps))


def replaced_first(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    ps[0] = Bead(xs[1] * vs[0], 0.5)
    for p, x0 in zip(ps, xs):
        p.x = p.x * p.v + x0
    return ps[0].x + ps[1].x * ps[2].v


def last_then_appended(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    last = ps[-1]
    ps.append(Bead(vs[0] * 3.0, xs[0]))
    last.x = last.x * last.v  # (the object that was last: not the one appended)
    return ps[-1].x + ps[-2].x + len(ps)


def returned_list(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for p in ps:
        p.x *= p.v
    return ps[0].x + ps[1].x, ps


def _bump(p, s):
    p.x = p.x * s


def item_given_to_a_helper(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for p in ps:
        _bump(p, p.v)  # (inlined: its writes are the function's own)
    return ps[0].x + ps[1].x


def stored_in_another_list(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    first = [ps[0]]  # (specialised away: ``first[0]`` is ``ps[0]``)
    first[0].x = first[0].x * vs[1]
    for p in ps:
        p.v = p.v * p.x
    return ps[0].v + ps[1].v


def appended_while_walked(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for p in ps:
        if len(ps) < 5:
            ps.append(Bead(p.x * p.v, 1.0))
    return sum(p.x for p in ps)


def walked_sorted(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for p in sorted(ps, key=lambda b: b.x):
        p.v = p.v * p.x
    return ps[0].v + ps[1].v * ps[2].x


def named_then_indexed(xs, vs):
    first = Bead(xs[0], vs[0])
    second = Ball(xs[1], vs[1] * xs[2])  # (two classes: the list is kept)
    third = Bead(xs[2], 0.5)
    ps = [first, third]
    for k in range(5):
        p = ps[k % 2]  # (an index the display's specialisation does not know)
        p.v -= 0.1 * p.x
        p.x += 0.1 * p.v
    return first.x * third.v + ps[1].x + second.x * second.v


def fastest(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    for p in ps:
        p.x += 0.5 * p.v
    best = ps[0]
    for p in ps:
        if p.v * p.v > best.v * best.v:
            best = p  # (an item carried by the loop: an index carried)
    leader = ps[-1] if xs[0] > 0.0 else best
    leader.v = leader.v * best.x
    return best.x * 2.0 + leader.v + ps[1].x


def fastest_or_none(xs, vs):
    ps = [Bead(x, v) for x, v in zip(xs, vs)]
    best = None  # (joined with something that is no item: the list is kept)
    for p in ps:
        p.x += 0.5 * p.v
        if best is None or p.v > best.v:
            best = p
    best.x = best.x * 3.0
    return sum(p.x for p in ps)


XS, VS = [0.3, -0.5, 0.8], [0.2, 0.7, -0.4]

REWRITTEN = [beads, balls_by_index, pairs, replaced_first, item_given_to_a_helper,
             stored_in_another_list, fastest, named_then_indexed]
KEPT = [last_then_appended, returned_list, appended_while_walked, walked_sorted,
        fastest_or_none]


def _pullback_text(f):
    return wengert.show(f, mode="vjp", like=(XS, VS))


@pytest.mark.parametrize("f", REWRITTEN, ids=lambda f: f.__name__)
def test_one_list_per_field(f):
    text = _pullback_text(f)
    assert "ps_x" in text, text
    assert "getattr_adjoint" not in text and "setattr_adjoint" not in text, text
    check_grads(f, (XS, VS), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_lists_whose_objects_are_reached_otherwise_are_kept(f):
    # (each is right or refused at the user's line; the list is not split)
    try:
        text = _pullback_text(f)
    except wengert.NonDifferentiableError:
        text = ""
    assert "ps_x" not in text, text
    check_grads(f, (XS, VS), modes=("fwd",))
    try:
        check_grads(f, (XS, VS), modes=("rev",))
    except wengert.NonDifferentiableError as e:
        assert e.loc is not None and e.loc.filename == __file__


def test_identity_of_two_items_is_equality_of_their_indices():
    text = wengert.show(pairs, mode="vjp", like=(XS, VS))
    code = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert any(" != " in line for line in code), text
    assert not any(" is " in line for line in code), text
    assert wengert.vjp(pairs, XS, VS)[0] == pairs(XS, VS)
