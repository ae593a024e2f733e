"""Reverse mode through the fields of objects a function makes and keeps: every spelling
of reading and writing a float field (in place by a method, a new object per step, in a
``for`` and a ``while`` loop, in branches, fields read after a write, objects returned
whole, a field of another type beside the float ones), both modes and to second order.
The float fields of such an object get one scalar adjoint each (``p_x_bar``), so the
generated pullback of a loop stepping an object has no call per field access."""

from __future__ import annotations

import dataclasses
import math

import pytest

import wengert
from wengert.testing import check_grads


@dataclasses.dataclass
class Particle:
    x: float
    v: float

    def step(self, dt, k):
        a = -k * self.x - 0.3 * self.x ** 3 - 0.1 * self.v
        self.v = self.v + dt * a
        self.x = self.x + dt * self.v


def advance(p, dt, k):
    a = -k * p.x - 0.1 * p.v
    v = p.v + dt * a
    return Particle(p.x + dt * v, v)


def in_place(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(6):
        p.step(0.1, k)
    return p.x * p.v


def new_per_step(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(6):
        p = advance(p, 0.1, k)
    return p.x + 2.0 * p.v


def while_loop(x0, v0, k):
    p = Particle(x0, v0)
    n = 0
    while n < 5:
        p.step(0.1, k)
        n += 1
    return p.x


def branches(x0, v0, k):
    p = Particle(x0, v0)
    for i in range(6):
        if i % 2 == 0:
            p.x = p.x * k
        else:
            p.v = p.v + math.sin(p.x)
    return p.x + p.v


def read_after_write(x0, v0, k):
    p = Particle(x0, v0)
    p.x = p.x * k
    y = p.x * p.x
    p.x = y + p.v
    return p.x * p.v


class Cell:
    def __init__(self, value, count):
        self.value = value
        self.count = count


def mixed_fields(x0, v0, k):
    c = Cell(x0, 0)
    for _ in range(4):
        c.value = c.value * k + v0
        c.count = c.count + 1
    return c.value * c.count


def nested_loops(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(3):
        for _ in range(2):
            p.step(0.1, k)
        p.v = p.v * 0.9
    return p.x


def returned_whole(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(3):
        p.step(0.1, k)
    return p


PROGRAMS = [in_place, new_per_step, while_loop, branches, read_after_write, mixed_fields,
            nested_loops, returned_whole]
ARGS = (0.7, -0.3, 1.3)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_fields_in_both_modes_and_to_second_order(f):
    if f is returned_whole:
        check_grads(f, ARGS, modes=("rev", "fwd"))
        return
    check_grads(f, ARGS, order=2, modes=("rev", "fwd"))


def _reverse_loop_body(source: str) -> list[str]:
    """The lines of the pullback's loop over the records."""
    lines = source[source.index("_pullback("):].splitlines()
    start = next(k for k, line in enumerate(lines) if "in reversed(" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return body


def many_steps(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(500):
        p.step(0.01, k)
    return p.x


def test_a_loop_stepping_an_object_adds_into_one_float_per_field():
    check_grads(many_steps, ARGS, modes=("rev",))
    source = wengert.show(many_steps, mode="vjp", arg_types=(float, float, float))
    body = "\n".join(_reverse_loop_body(source))
    assert "_adjoint(" not in body and "nonzero(" not in body
    assert "p_x_bar" in body and "p_v_bar" in body
