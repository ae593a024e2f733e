"""Nested derivatives as the classic benchmarks take them (Siskind & Pearlmutter's ``saddle``
and ``particle``, GradBench's): an outer derivative through an optimiser or a simulation
that is handed an inner derivative of a function closing over the very value the outer one
varies, in the four pairings of modes each.

- saddle, inner grad / jvp: ``ascend`` of ``p1 * p1 - p2 * p2`` over ``p2``, 30 steps of a
  slope made by ``wengert.grad`` (``"r"``) or ``wengert.jvp`` (``"f"``), chosen by a branch;
  d/dp1 of the value at the ``p2`` found.
- particle, inner grad / jacfwd: an Euler loop ended by a data-dependent ``while``, the
  acceleration ``-grad(field)(x)`` (or ``-jacfwd(field)(x)``) of a field of two charges, one
  moved by ``w``; d/dw of the miss.

Each row is timed as ``bench_globals.py`` times its rows (5 paired repeats of about 0.2 s,
the median of the per-pair ratios of the derivative to the primal), outer derivative by
``wengert.grad`` and by ``wengert.jvp``, after the derivative is checked against central
differences (relative error <= 1e-5); the first call (derivation, code generation, one run)
is timed once, in this process, before the rest. The programs are module-level functions of
this file (wengert reads source); the wengert measured is the ``src/`` beside this file's
folder. Run ``python3 benchmarks/bench_nested.py``; it is never part of the tests.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_globals import paired  # noqa: E402

import wengert  # noqa: E402


def descend(f, df, x):
    for _ in range(30):
        x = x - 0.1 * df(x)
    return x


def ascend(f, df, start):
    return descend(lambda x: -f(x), lambda x: -df(x), start)


def saddle_value(p1, p2):
    return p1 * p1 - p2 * p2


def saddle(p1, mode):
    if mode == "r":
        def slope(p2):
            return wengert.grad(saddle_value, argnums=1)(p1, p2)
    else:
        def slope(p2):
            return wengert.jvp(lambda q: saddle_value(p1, q), (p2,), (1.0,))[1]
    best = ascend(lambda p2: saddle_value(p1, p2), slope, 0.3)
    return saddle_value(p1, best)


def saddle_by_grad(p1):
    return saddle(p1, "r")


def saddle_by_jvp(p1):
    return saddle(p1, "f")


def particle(w, inner):
    charges = [np.array([10.0, 10.0 - w]), np.array([10.0, 0.0])]
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    delta_t = 1e-1

    def field(z):
        return sum(1.0 / np.linalg.norm(z - c) for c in charges)

    while True:
        if inner == "grad":
            xddot = -wengert.grad(field)(x)
        else:
            xddot = -wengert.jacfwd(field)(x)
        x_new = x + delta_t * xdot
        if x_new[1] <= 0.0:
            delta_t_f = -x[1] / xdot[1]
            x_t_f = x + delta_t_f * xdot
            return x_t_f[0] ** 2
        x, xdot = x_new, xdot + delta_t * xddot


def particle_by_grad(w):
    return particle(w, "grad")


def particle_by_jacfwd(w):
    return particle(w, "jacfwd")


ROWS: list[tuple[str, Callable[[float], float], float]] = [
    ("saddle, inner grad", saddle_by_grad, 1.5),
    ("saddle, inner jvp", saddle_by_jvp, 1.5),
    ("particle, inner grad", particle_by_grad, 0.0),
    ("particle, inner jacfwd", particle_by_jacfwd, 0.0),
]


def main() -> int:
    print(f"wengert: {wengert.__file__}")
    print(f"{'row':24s} {'outer':5s} {'primal':>10s} {'derivative':>11s} {'ratio':>8s} "
          f"{'first call':>11s}")
    status = 0
    for name, f, x in ROWS:
        h = 1e-6
        fd = (f(x + h) - f(x - h)) / (2 * h)
        outer = {"grad": lambda f=f: wengert.grad(f)(x),
                 "jvp": lambda f=f: wengert.jvp(f, (x,), (1.0,))[1]}
        for mode, d in outer.items():
            try:
                t = time.perf_counter()
                got = d()
                first = time.perf_counter() - t
                if abs(got - fd) > 1e-5 * max(1.0, abs(fd)):
                    print(f"{name:24s} {mode:5s} WRONG: {got} against differences {fd}")
                    status = 1
                    continue
                p, g, ratio = paired(lambda f=f: f(x), d)
                print(f"{name:24s} {mode:5s} {p * 1e6:8.1f} us {g * 1e6:9.1f} us "
                      f"{ratio:7.2f}x {first * 1e3:8.1f} ms")
            except Exception:  # (reported, the other rows still measured)
                print(f"{name:24s} {mode:5s} FAILED")
                traceback.print_exc()
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
