"""Derivatives taken inside differentiated code (``transforms/nested_grad.py``): the
gradient of a global function taken inside another, differentiated again to the second
order, against central differences and the derivatives a person writes."""

from __future__ import annotations

import math

import pytest

import wengert
from wengert.testing import check_grads


def energy(x):
    return x ** 3 + math.sin(x)


def two(x, y):
    return x * x * y + math.exp(0.5 * y)


def force_times_x(x):
    return wengert.grad(energy)(x) * x


def newton_step(x):
    return x - energy(x) / wengert.grad(energy)(x)


def second_argument(x):
    return wengert.grad(two, argnums=1)(x, 2.0 * x) + wengert.grad(two, argnums=-2)(x, 0.5)


def both_arguments(x):
    gx, gy = wengert.grad(two, argnums=(0, 1))(x, x * x)
    return gx * gy


@pytest.mark.parametrize("f", [force_times_x, newton_step, second_argument, both_arguments],
                         ids=lambda f: f.__name__)
def test_the_gradient_of_a_global_taken_inside_to_second_order(f):
    """``grad(energy)(x)`` inside ``f``: its own derivative (refused at the second order
    before: the pullback of the function ``grad`` made had no IR)."""
    check_grads(f, (0.7,), modes=("rev", "fwd"), order=2)


def test_the_hessian_is_the_one_a_person_writes():
    # f = x e'(x), e' = 3x^2 + cos x: f'' = 2 e''(x) + x e'''(x) = 2 (6x - sin x) + x (6 - cos x)
    x = 0.7
    expected = 2 * (6 * x - math.sin(x)) + x * (6 - math.cos(x))
    assert wengert.hessian(force_times_x)(x) == pytest.approx(expected, rel=1e-12)
