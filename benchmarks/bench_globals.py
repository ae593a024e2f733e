"""Derivatives of programs that read module-level state or take functions as arguments.

Users write losses over module-level data (``for x, y in zip(XS, YS)``), models as a global
list of callable layer objects, tables of functions, integrators taking the right-hand side
as an argument, and simulations of ``@dataclass`` objects reading a global constant. Each row
times one call of ``wengert.grad(f)(...)`` (the gradient object made once and warmed up)
against one call of the primal ``f(...)`` with the same arguments, in the same process:

| row | program |
|---|---|
| global lists | least squares over module-level lists ``XS``, ``YS`` (50 points), d/d(a, b) |
| lists as arguments | the same loss, the lists passed in |
| layer objects (global) | ``LAYERS``: 3 ``Dense`` callables (8 -> 16 -> 16 -> 1, tanh), d/dx |
| layer objects (argument) | the same, the list of layers passed in |
| table of functions | ``OPS["sq"]``, ``OPS["sin"]`` from a module-level dict, 50 steps |
| integrator, rhs passed in | ``solve(y0) = rk4(rhs, y0, 0.01, 200)``, scalar RK4, d/dy0 |
| rk4 called directly | ``wengert.grad(rk4, argnums=1)(rhs, y0, 0.01, 200)`` |
| dataclass simulation | 10 ``Particle`` made from the inputs, 50 steps, ``GRAVITY``, d/dxs |

Every gradient is first compared with central finite differences over every float of the
differentiated arguments (max |grad - fd| <= 1e-5 max |fd|); a row whose gradient is wrong or
fails is reported as such and not timed. Timing: 5 repeats of about 0.2 s for each side, each
gradient repeat paired with a primal repeat run just before it; per call the median of the
repeats, the ratio the median of the per-pair ratios (so load on the machine moves both sides
alike). The programs are module-level functions of this file, since wengert reads source.

The wengert measured is the ``src/`` beside this file's folder, so a copy of this file in an
older checkout measures that checkout. Run ``python3 benchmarks/bench_globals.py [--json
PATH]``; numbers are never assertions and it is never part of the tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np  # noqa: E402

import wengert  # noqa: E402

FD_RTOL = 1e-5

# --- module-level state -------------------------------------------------------------------------

_rng = np.random.default_rng(0)
XS = [float(v) for v in np.linspace(-2.0, 2.0, 50)]
YS = [0.7 * x - 0.3 + 0.1 * float(e) for x, e in zip(XS, _rng.normal(size=50))]


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


LAYERS = [
    Dense(_rng.normal(size=(16, 8)) * 0.3, _rng.normal(size=16) * 0.1),
    Dense(_rng.normal(size=(16, 16)) * 0.3, _rng.normal(size=16) * 0.1),
    Dense(_rng.normal(size=(1, 16)) * 0.3, _rng.normal(size=1) * 0.1),
]

OPS = {"sq": lambda t: t * t, "cube": lambda t: t ** 3, "sin": math.sin}

GRAVITY = 9.81


@dataclasses.dataclass
class Particle:
    x: float
    v: float


# --- the programs -------------------------------------------------------------------------------


def global_lists_loss(a, b):
    s = 0.0
    for x, y in zip(XS, YS):
        r = a * x + b - y
        s += r * r
    return s


def lists_loss(a, b, xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        r = a * x + b - y
        s += r * r
    return s


def global_layers_loss(x):
    h = x
    for layer in LAYERS:
        h = layer(h)
    return np.sum(h ** 2)


def layers_loss(x, layers):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def table_loop(x):
    s = x
    for _ in range(50):
        s = 0.8 * OPS["sin"](s) + 0.1 * OPS["sq"](s) + 0.05 * x
    return s


def rhs(y, t):
    return -0.5 * y + math.sin(y) * math.cos(t)


def rk4(f, y0, dt, n):
    y = y0
    t = 0.0
    for _ in range(n):
        k1 = f(y, t)
        k2 = f(y + 0.5 * dt * k1, t + 0.5 * dt)
        k3 = f(y + 0.5 * dt * k2, t + 0.5 * dt)
        k4 = f(y + dt * k3, t + dt)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + dt
    return y


def solve(y0):
    return rk4(rhs, y0, 0.01, 200)


def simulate(xs, vs):
    ps = [Particle(x, v) for x, v in zip(xs, vs)]
    dt = 0.01
    for _ in range(50):
        for p in ps:
            p.v -= GRAVITY * dt
            p.x += p.v * dt
    return sum(p.x * p.x for p in ps)


# --- harness ------------------------------------------------------------------------------------


def _flat(value: Any) -> list[float]:
    """The floats of a gradient (a float, an array, or tuples/lists of them), in order."""
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [float(v) for v in np.ravel(np.asarray(value, dtype=float))]


def _shifted(args: tuple, argnum: int, index: int, delta: float) -> tuple:
    """``args`` with float ``index`` of argument ``argnum`` moved by ``delta`` (copies)."""
    out = list(args)
    a = args[argnum]
    if isinstance(a, float):
        out[argnum] = a + delta
    elif isinstance(a, np.ndarray):
        b = a.copy()
        b.flat[index] += delta
        out[argnum] = b
    elif isinstance(a, list):
        b = list(a)
        b[index] = b[index] + delta
        out[argnum] = b
    else:
        raise TypeError(f"cannot perturb {type(a).__name__}")
    return tuple(out)


def _size(a: Any) -> int:
    return 1 if isinstance(a, float) else len(a) if isinstance(a, list) else int(np.size(a))


def finite_differences(f: Callable, args: tuple, argnums: tuple[int, ...]) -> list[float]:
    """Central differences of ``f`` over every float of the arguments ``argnums``."""
    out = []
    for argnum in argnums:
        for i in range(_size(args[argnum])):
            x = _flat(args[argnum])[i]
            h = 1e-6 * max(1.0, abs(x))
            up = float(f(*_shifted(args, argnum, i, h)))
            down = float(f(*_shifted(args, argnum, i, -h)))
            out.append((up - down) / (2 * h))
    return out


def _repeat_size(step: Callable[[], object], budget: float) -> int:
    """Calls per repeat so that a repeat takes about ``budget`` seconds."""
    k = 1
    while True:
        t = time.perf_counter()
        for _ in range(k):
            step()
        took = time.perf_counter() - t
        if took > budget / 4 or k > 1 << 20:
            return max(1, round(k * budget / max(took, 1e-9)))
        k *= 2


def _repeat(step: Callable[[], object], k: int) -> float:
    t = time.perf_counter()
    for _ in range(k):
        step()
    return (time.perf_counter() - t) / k


def paired(primal: Callable[[], object], gradient: Callable[[], object],
           repeats: int = 5, budget: float = 0.2) -> tuple[float, float, float]:
    """(primal s per call, gradient s per call, median per-pair ratio)."""
    kp, kg = _repeat_size(primal, budget), _repeat_size(gradient, budget)
    ps, gs, ratios = [], [], []
    for _ in range(repeats):
        p = _repeat(primal, kp)
        g = _repeat(gradient, kg)
        ps.append(p)
        gs.append(g)
        ratios.append(g / p)
    return statistics.median(ps), statistics.median(gs), statistics.median(ratios)


@dataclasses.dataclass
class Case:
    name: str
    primal: Callable
    gradient_of: Callable  # the function handed to wengert.grad
    args: tuple
    argnums: tuple[int, ...]


def cases() -> list[Case]:
    x0 = _rng.normal(size=8)
    xs = [float(v) for v in np.linspace(0.5, 5.0, 10)]
    vs = [float(v) for v in np.linspace(-1.0, 1.0, 10)]
    return [
        Case("global lists", global_lists_loss, global_lists_loss, (0.4, -0.1), (0, 1)),
        Case("lists as arguments", lists_loss, lists_loss, (0.4, -0.1, XS, YS), (0, 1)),
        Case("layer objects (global)", global_layers_loss, global_layers_loss, (x0,), (0,)),
        Case("layer objects (argument)", layers_loss, layers_loss, (x0, LAYERS), (0,)),
        Case("table of functions", table_loop, table_loop, (0.3,), (0,)),
        Case("integrator, rhs passed in", solve, solve, (0.8,), (0,)),
        Case("rk4 called directly", rk4, rk4, (rhs, 0.8, 0.01, 200), (1,)),
        Case("dataclass simulation", simulate, simulate, (xs, vs), (0,)),
    ]


def measure(case: Case) -> dict[str, Any]:
    """Check the gradient against finite differences, then time it against the primal."""
    row: dict[str, Any] = {"row": case.name}
    argnums = case.argnums[0] if len(case.argnums) == 1 else case.argnums
    try:
        g = wengert.grad(case.gradient_of, argnums=argnums)
        got = _flat(g(*case.args))
    except Exception as e:  # a refusal or a crash: reported, not timed
        row["error"] = f"fails: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        row["traceback"] = traceback.format_exc()
        return row
    want = finite_differences(case.primal, case.args, case.argnums)
    err = max(abs(a - b) for a, b in zip(got, want)) if len(got) == len(want) else math.inf
    if not err <= FD_RTOL * max(max(abs(v) for v in want), 1e-12):
        row["error"] = f"WRONG GRADIENT (max |grad - fd| = {err:.3g})"
        return row
    args = case.args
    p, t, ratio = paired(lambda: case.primal(*args), lambda: g(*args))
    row.update(primal_s=p, gradient_s=t, ratio=ratio)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--row", action="append", help="only this row (repeatable)")
    args = parser.parse_args()
    print(f"wengert: {wengert.__file__}")
    results = []
    print(f"{'row':<28}{'primal':>12}{'gradient':>12}{'ratio':>9}")
    for case in cases():
        if args.row and case.name not in args.row:
            continue
        row = measure(case)
        results.append(row)
        if "error" in row:
            print(f"{case.name:<28}  {row['error']}")
        else:
            p, g = row["primal_s"] * 1e6, row["gradient_s"] * 1e6
            print(f"{case.name:<28}{p:>9.1f} us{g:>9.1f} us{row['ratio']:>8.2f}x", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"wengert": wengert.__file__, "rows": results}, indent=2) + "\n")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
