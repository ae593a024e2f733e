"""Hand-written adjoints of two programs of ``reverse_programs.py``: the reference that
``bench_reverse.py`` measures generated gradients against.

They are written the way a careful person would write them in plain Python: one forward sweep
that keeps on a list only what the backward sweep reads, then one backward sweep over it.
"""

from __future__ import annotations

import math


def scalar_loop_grad(x: float) -> float:
    """d scalar_loop / dx."""
    s = 0.5
    saved = []
    for _ in range(1000):
        saved.append(s)
        s = s * 0.999 + math.sin(s) * 0.001 * x
    s_bar = 1.0
    x_bar = 0.0
    for s in reversed(saved):
        x_bar += s_bar * math.sin(s) * 0.001
        s_bar = s_bar * (0.999 + math.cos(s) * 0.001 * x)
    return x_bar


def pendulum_rk4_grad(theta: float, length: float) -> tuple[float, float]:
    """(d pendulum_rk4 / d theta, d pendulum_rk4 / d length)."""
    dt = 0.01
    h = 0.5 * dt
    d6 = dt / 6.0
    c = 9.81 / length
    omega = 0.0
    saved = []
    for _ in range(250):
        # The four arguments of sin; the pullback needs their sines and cosines.
        a1 = theta
        k1w = -c * math.sin(a1)
        a2 = theta + h * omega
        k2t = omega + h * k1w
        k2w = -c * math.sin(a2)
        a3 = theta + h * k2t
        k3t = omega + h * k2w
        k3w = -c * math.sin(a3)
        a4 = theta + dt * k3t
        k4t = omega + dt * k3w
        k4w = -c * math.sin(a4)
        saved.append((a1, a2, a3, a4))
        theta = theta + d6 * (omega + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + d6 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)

    theta_bar = 1.0
    omega_bar = 0.0
    c_bar = 0.0
    for a1, a2, a3, a4 in reversed(saved):
        k1t_bar = d6 * theta_bar
        k2t_bar = 2.0 * k1t_bar
        k3t_bar = k2t_bar
        k4t_bar = k1t_bar
        k1w_bar = d6 * omega_bar
        k2w_bar = 2.0 * k1w_bar
        k3w_bar = k2w_bar
        k4w_bar = k1w_bar
        # grad of: k4w = -c * sin(a4); k4t = omega + dt * k3w; a4 = theta + dt * k3t
        c_bar -= k4w_bar * math.sin(a4)
        a4_bar = -c * k4w_bar * math.cos(a4)
        omega_bar += k4t_bar
        k3w_bar += dt * k4t_bar
        theta_bar += a4_bar
        k3t_bar += dt * a4_bar
        # grad of: k3w = -c * sin(a3); k3t = omega + h * k2w; a3 = theta + h * k2t
        c_bar -= k3w_bar * math.sin(a3)
        a3_bar = -c * k3w_bar * math.cos(a3)
        omega_bar += k3t_bar
        k2w_bar += h * k3t_bar
        theta_bar += a3_bar
        k2t_bar += h * a3_bar
        # grad of: k2w = -c * sin(a2); k2t = omega + h * k1w; a2 = theta + h * omega
        c_bar -= k2w_bar * math.sin(a2)
        a2_bar = -c * k2w_bar * math.cos(a2)
        omega_bar += k2t_bar
        k1w_bar += h * k2t_bar
        theta_bar += a2_bar
        k1t_bar += h * a2_bar
        # grad of: k1w = -c * sin(a1); k1t = omega
        c_bar -= k1w_bar * math.sin(a1)
        theta_bar -= c * k1w_bar * math.cos(a1)
        omega_bar += k1t_bar
    return theta_bar, c_bar * -9.81 / (length * length)
