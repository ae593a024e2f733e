"""Hessian-vector product benchmark: an HVP of the 100-dimensional extended Rosenbrock
function as a multiple of one gradient.

``wengert.hvp`` is forward over reverse: one JVP pass over the generated gradient code
(the gradient's IR, differentiated again), so it should cost a small constant times one
gradient. The issue's target is HVP <= 4x one ``wengert.grad`` call. Two inputs are
timed: a list of 100 floats and a tuple-free scalar-Python loop over it. The HVP is
checked against central differences of the gradient, and ``wengert.hessian`` against
the HVP, before anything is timed.

Run ``python3 benchmarks/bench_hvp.py [--markdown]``; it is never part of the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_forward import _time  # noqa: E402  (one timing loop for the benchmarks)

import wengert  # noqa: E402

N = 100
TARGET = 4.0


def rosenbrock(x):
    """The extended Rosenbrock function: n/2 independent pairs."""
    total = 0.0
    for i in range(len(x) // 2):
        a = x[2 * i]
        b = x[2 * i + 1]
        total = total + 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2
    return total


def _check(x: list[float], v: list[float]) -> None:
    g = wengert.grad(rosenbrock)
    hv = numpy.asarray(wengert.hvp(rosenbrock, (x,), (v,)), dtype=float)
    eps = 1e-6
    plus = [a + eps * b for a, b in zip(x, v)]
    minus = [a - eps * b for a, b in zip(x, v)]
    fd = (numpy.asarray(g(plus)) - numpy.asarray(g(minus))) / (2 * eps)
    assert numpy.allclose(hv, fd, rtol=1e-5, atol=1e-4), "hvp disagrees with differences"
    h = numpy.asarray(wengert.hessian(rosenbrock)(x), dtype=float)
    assert numpy.allclose(h @ numpy.asarray(v), hv, rtol=1e-10, atol=1e-8), "hessian != hvp"


def run() -> dict[str, float]:
    rng = numpy.random.default_rng(0)
    x = [float(a) for a in rng.uniform(-1.5, 1.5, N)]
    v = [float(a) for a in rng.standard_normal(N)]
    _check(x, v)
    g = wengert.grad(rosenbrock)
    t0 = time.perf_counter()
    wengert.hvp(rosenbrock, (x,), (v,))
    first = time.perf_counter() - t0
    return dict(
        primal=_time(lambda: rosenbrock(x)),
        grad=_time(lambda: g(x)),
        hvp=_time(lambda: wengert.hvp(rosenbrock, (x,), (v,))),
        hessian=_time(lambda: wengert.hessian(rosenbrock)(x), repeat=5),
        first=first,
    )


def render(r: dict[str, float], markdown: bool) -> str:
    ratio = r["hvp"] / r["grad"]
    mark = "ok" if ratio <= TARGET else f"> {TARGET:g}x"
    head = ["program", "primal", "grad", "hvp", "hvp / grad", "hessian (100x100)"]
    row = [f"extended Rosenbrock, {N} floats in a list", f"{r['primal'] * 1e6:.1f} us",
           f"{r['grad'] * 1e6:.1f} us", f"{r['hvp'] * 1e6:.1f} us",
           f"{ratio:.2f}x ({mark})", f"{r['hessian'] * 1e3:.2f} ms"]
    if markdown:
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                          "| " + " | ".join(row) + " |"])
    widths = [max(len(a), len(b)) for a, b in zip(head, row)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*row)])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    r = run()
    print(render(r, args.markdown))
    print(f"first hvp call (transforms included): {r['first'] * 1e3:.1f} ms")
    return 0 if r["hvp"] / r["grad"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
