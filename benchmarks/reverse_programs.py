"""The programs differentiated by ``bench_reverse.py``: plain Python floats and ``math``.

The benchmark loads fresh copies of this file (for cold first-call times) and copies in which
the name ``math`` is rebound to another library's functions (autograd, jax, torch), so every
method differentiates the same source text. Keep the functions free of other globals.
"""

from __future__ import annotations

import math


def scalar_loop(x: float) -> float:
    """1000 steps of a scalar recurrence (the reverse-mode benchmark of issue 3)."""
    s = 0.5
    for i in range(1000):  # noqa: B007  (the issue's exact program)
        s = s * 0.999 + math.sin(s) * 0.001 * x
    return s


def pendulum_accel(theta: float, length: float) -> float:
    """Angular acceleration of a pendulum: theta'' = -(g / L) sin(theta)."""
    return -(9.81 / length) * math.sin(theta)


def pendulum_rk4(theta: float, length: float) -> float:
    """Angle after 250 classic Runge-Kutta steps of 10 ms, starting at rest."""
    dt = 0.01
    omega = 0.0
    for _ in range(250):
        k1t = omega
        k1w = pendulum_accel(theta, length)
        k2t = omega + 0.5 * dt * k1w
        k2w = pendulum_accel(theta + 0.5 * dt * k1t, length)
        k3t = omega + 0.5 * dt * k2w
        k3w = pendulum_accel(theta + 0.5 * dt * k2t, length)
        k4t = omega + dt * k3w
        k4w = pendulum_accel(theta + dt * k3t, length)
        theta = theta + dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta


def exp_horner(x: float, k: int, n: int) -> float:
    """Horner form of the degree-``n`` Taylor polynomial of exp, by recursion on ``k``."""
    if k > n:
        return 1.0
    return 1.0 + x / k * exp_horner(x, k + 1, n)


def recursive_horner(x: float) -> float:
    """exp(sin(x)) through a recursion 50 calls deep."""
    return exp_horner(math.sin(x), 1, 50)


def while_grow(x: float) -> float:
    """Grow ``s`` from ``x`` until it passes 1e4: the trip count (~900 for x = 1) depends on x."""
    s = x
    while s < 1e4:
        s = s * 1.01 + math.cos(s) * 0.01
    return s
