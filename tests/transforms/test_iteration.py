"""Loops over what their body may change (transforms/iteration.py)."""

from __future__ import annotations

import dataclasses

import pytest

from wengert.testing import check_grads


@dataclasses.dataclass
class Body:
    x: float
    v: float


def pairs_after_a_branch(ps, c):
    e = 0.0
    for q in ps:
        if q.x > 0.0:
            e += q.x * c
        else:
            e -= q.v
    for q, r in zip(ps, ps[1:]):
        e += q.x * r.v * c
    return e


def pairs_of_numbers_after_a_branch(xs, c):
    e = 0.0
    for x in xs:
        e = e + x * c if x > 0.0 else e - x
    for a, b in zip(xs, xs[1:]):
        e += a * b * c
    return e


@pytest.mark.parametrize("f, args", [
    (pairs_after_a_branch, ([Body(0.9, -0.4), Body(-1.4, -0.7), Body(0.5, 0.2)], 0.7)),
    (pairs_of_numbers_after_a_branch, ([0.9, -1.4, 0.5], 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_loop_over_pairs_of_a_list_and_its_slice_differentiates_to_the_second_order(f, args):
    # In the gradient's IR, the pullback of ``zip`` loops over the adjoints of its items
    # (a new list made by a rule's helper) writing the adjoint of each argument: that loop
    # changes nothing it iterates (it was refused, "this loop changes the object it
    # iterates over", at the second order).
    check_grads(f, args, modes=("rev", "fwd"), order=2)
