"""The plain-Python programs differentiated by ``bench_python.py``.

Written the way a user writes them: tuple assignment, a ``@dataclass``, a ``dict`` of
parameters, ``zip``, list comprehensions and ``sum``, recursion, callable objects, lists of
lists. The benchmark loads fresh copies of this file for cold first-call times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def pendulum_tuples(th, om, g):
    """RK4 on theta'' = -g sin(theta), 250 steps of 10 ms, stages as tuple assignments."""
    dt = 0.01
    for _ in range(250):
        k1t, k1o = om, -g * math.sin(th)
        k2t, k2o = om + 0.5 * dt * k1o, -g * math.sin(th + 0.5 * dt * k1t)
        k3t, k3o = om + 0.5 * dt * k2o, -g * math.sin(th + 0.5 * dt * k2t)
        k4t, k4o = om + dt * k3o, -g * math.sin(th + dt * k3t)
        th, om = (th + dt / 6 * (k1t + 2 * k2t + 2 * k3t + k4t),
                  om + dt / 6 * (k1o + 2 * k2o + 2 * k3o + k4o))
    return th


@dataclass
class Particle:
    x: float
    v: float

    def step(self, dt, k):
        """Semi-implicit Euler on a damped anharmonic spring, in place."""
        a = -k * self.x - 0.3 * self.x ** 3 - 0.1 * self.v
        self.v = self.v + dt * a
        self.x = self.x + dt * self.v


def particle_inplace(x0, v0, k):
    """500 steps of a particle that a method updates in place."""
    p = Particle(x0, v0)
    for _ in range(500):
        p.step(0.01, k)
    return p.x


def advance(p, dt, k):
    """One step returning a new particle."""
    a = -k * p.x - 0.3 * p.x ** 3 - 0.1 * p.v
    v = p.v + dt * a
    return Particle(p.x + dt * v, v)


def particle_new(x0, v0, k):
    """500 steps, each making a new particle."""
    p = Particle(x0, v0)
    for _ in range(500):
        p = advance(p, 0.01, k)
    return p.x


def dict_loss(params, xs, ys):
    """Mean squared error of a quadratic whose coefficients are in a dict."""
    total = 0.0
    for x, y in zip(xs, ys):
        pred = params["a"] * x * x + params["b"] * x + params["c"]
        total += (pred - y) ** 2
    return total / len(xs)


def softmax_mean(xs):
    """Softmax-weighted mean of a list of floats."""
    m = max(xs)
    ws = [math.exp(x - m) for x in xs]
    total = sum(ws)
    return sum(w * x for w, x in zip(ws, xs)) / total


def continued_fraction(x, depth):
    """1 + x / (1 + x / (1 + ...)), ``depth`` levels, by recursion."""
    if depth == 0:
        return 1.0
    return 1.0 + x / continued_fraction(x, depth - 1)


class Layer:
    """A scalar affine map followed by tanh."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return math.tanh(self.w * x + self.b)


def layers_loss(w1, w2, w3, xs, ys):
    """Squared error of three callable layers over a few points."""
    model = [Layer(w1, 0.1), Layer(w2, -0.2), Layer(w3, 0.3)]
    loss = 0.0
    for x, y in zip(xs, ys):
        h = x
        for layer in model:
            h = layer(h)
        loss = loss + (h - y) ** 2
    return loss


def square(x):
    """The smallest program: the fixed cost of one ``grad`` call."""
    return x * x


def det(m):
    """Determinant by cofactor expansion along the first row."""
    n = len(m)
    if n == 1:
        return m[0][0]
    total = 0.0
    for j in range(n):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        sign = 1.0 if j % 2 == 0 else -1.0
        total = total + sign * m[0][j] * det(minor)
    return total


@dataclass
class Body:
    """A body passed in: position, speed and mass."""

    x: float
    v: float
    m: float


def bodies_energy(bodies, k):
    """The energy of bodies on pendulum springs, a list of dataclasses passed in."""
    e = 0.0
    for b in bodies:
        e += 0.5 * b.m * b.v ** 2 + k * (1.0 - math.cos(b.x))
    return e


def spring_chain(xs, k):
    """Masses on a chain of springs: a list of dataclasses made here, stepped in place."""
    ms = [Body(x, 0.0, 1.0) for x in xs]
    for _ in range(50):
        for i in range(1, len(ms)):
            a, b = ms[i - 1], ms[i]
            f = k * (b.x - a.x - 1.0)
            a.v += f * 0.01 / a.m
            b.v -= f * 0.01 / b.m
        for m in ms:
            m.x += m.v * 0.01
    return sum(m.x * m.x for m in ms) + ms[-1].v


def table_product(a, b):
    """A matrix product into a table of zeros made first, then its entries summed."""
    n = len(a)
    c = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            for k in range(n):
                c[i][j] += a[i][k] * b[k][j]
    return sum(sum(row) for row in c)


def edit_cost(xs, ys):
    """A dynamic programme over a table (a smooth edit distance between two sequences)."""
    d = [[0.0] * (len(ys) + 1) for _ in range(len(xs) + 1)]
    for i in range(1, len(xs) + 1):
        d[i][0] = d[i - 1][0] + xs[i - 1] ** 2
    for j in range(1, len(ys) + 1):
        d[0][j] = d[0][j - 1] + ys[j - 1] ** 2
    for i in range(1, len(xs) + 1):
        for j in range(1, len(ys) + 1):
            d[i][j] = (xs[i - 1] - ys[j - 1]) ** 2 + min(d[i - 1][j], d[i][j - 1],
                                                          d[i - 1][j - 1])
    return d[-1][-1]
