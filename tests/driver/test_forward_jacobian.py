"""``grad`` answers by forward mode where reverse mode refuses and forward mode
differentiates (``driver/forward_jacobian.py``): a write into an object read out of a list,
as simulations of objects are written. The answer is the one finite differences give; the
refusal stands, located, where forward mode cannot answer cheaply."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import wengert
from wengert.diagnostics import ReverseModeRefusal
from wengert.driver import operators

GRAVITY = 9.81


@dataclasses.dataclass
class Particle:
    x: float
    v: float


# (Objects kept in one list of the function's own are followed by reverse mode,
# ``transforms/test_vjp_items.py``; here the same objects are in two lists.)
def step_in_place(xs, vs):
    ps = [Particle(x, v) for x, v in zip(xs, vs)]
    moving = list(ps)
    for _ in range(4):
        for p in moving:
            p.v -= GRAVITY * 0.01 * p.x
            p.x += p.v * 0.01
    return sum(p.x * p.x for p in ps)


def step_by_index(xs, vs):
    ps = [Particle(x, v) for x, v in zip(xs, vs)]
    moving = list(ps)
    for _ in range(4):
        for i in range(len(moving)):
            moving[i].v -= GRAVITY * 0.01 * moving[i].x
            moving[i].x += moving[i].v * 0.01
    return sum(p.x * p.x for p in ps)


def with_aux(xs, vs):
    return step_in_place(xs, vs), len(xs)


def _fd(f, xs, vs, h=1e-6):
    out = []
    for i in range(len(xs)):
        a, b = list(xs), list(xs)
        a[i] += h
        b[i] -= h
        out.append((f(a, vs) - f(b, vs)) / (2 * h))
    return out


XS, VS = [0.1, 0.5, 0.9], [1.0, -0.5, 0.2]


@pytest.mark.parametrize("f", [step_in_place, step_by_index])
def test_grad_of_objects_written_in_a_list_by_forward_mode(f):
    with pytest.raises(ReverseModeRefusal):
        wengert.vjp(f, XS, VS)  # (reverse mode's own verdict stands where asked for)
    g = wengert.grad(f)
    want = _fd(f, XS, VS)
    for _ in range(2):  # (the second call goes straight to forward mode)
        got = g(XS, VS)
        assert isinstance(got, list)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    value, (gx, gv) = wengert.value_and_grad(f, argnums=(0, 1))(XS, VS)
    assert value == f(XS, VS)
    np.testing.assert_allclose(gx, want, rtol=1e-6)
    np.testing.assert_allclose(gv, _fd(lambda v, x: f(x, v), VS, XS), rtol=1e-6)


def test_has_aux_by_forward_mode():
    g, aux = wengert.grad(with_aux, has_aux=True)(XS, VS)
    assert aux == 3
    np.testing.assert_allclose(g, _fd(step_in_place, XS, VS), rtol=1e-6)


def test_the_refusal_stands_past_the_forward_limit(monkeypatch):
    monkeypatch.setattr(operators, "FORWARD_DIRECTIONS", 2)
    with pytest.raises(ReverseModeRefusal) as e:
        wengert.grad(step_by_index)(XS, VS)
    assert e.value.loc is not None and e.value.loc.lineno > 0
    assert "moving[i].v -=" in str(e.value)
