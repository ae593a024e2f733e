"""Forward-mode benchmark: ``jacfwd`` of an R^50 -> R^50 function as a multiple of one JVP.

Two programs map 50 inputs to 50 outputs: ``list_map`` is scalar Python (a list of
floats, ``math`` functions, a neighbour coupling), ``array_map`` uses NumPy arrays and
infix operators only. For each, this times (median of repeats, in one process):

* the primal;
* one single-direction ``wengert.jvp`` pass;
* ``wengert.jacfwd``: ONE batched JVP pass carrying 50 directions;
* 50 single-direction JVP passes (what an unbatched ``jacfwd`` would cost).

The issue's target is batched ``jacfwd`` <= 3x one JVP pass. The Jacobian is checked
against ``wengert.jacrev`` and finite differences before anything is timed.

Run ``python3 benchmarks/bench_forward.py [--markdown]``; it is never part of the tests.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import wengert  # noqa: E402
from wengert.testing import numerical_jvp  # noqa: E402

N = 50
TARGET = 3.0
_RNG = numpy.random.default_rng(0)
_A = _RNG.standard_normal((N, N)) / math.sqrt(N)


def list_map(xs):
    n = len(xs)
    out = []
    for i in range(n):
        a = xs[i]
        b = xs[(i + 1) % n]
        out.append(math.sin(a) * b + math.exp(-a * a) - 0.5 * b * b)
    return out


def array_map(x):
    return _A @ (x * x) + x * x * x - 0.5 * x


PROGRAMS: dict[str, tuple[Callable[..., Any], Any]] = {
    "list_map (50 floats in a list)": (list_map, [float(v) for v in _RNG.uniform(-1, 1, N)]),
    "array_map (NumPy, 50-vector)": (array_map, _RNG.uniform(-1, 1, N)),
}


def _time(fn: Callable[[], Any], repeat: int = 21) -> float:
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 > 0.02:
            break
        number *= 2
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def _check(f: Callable[..., Any], x: Any) -> None:
    jf = numpy.asarray(wengert.jacfwd(f)(x), dtype=float)
    jr = numpy.asarray(wengert.jacrev(f)(x), dtype=float)
    assert jf.shape == (N, N), jf.shape
    assert numpy.allclose(jf, jr, rtol=1e-9, atol=1e-12), "jacfwd and jacrev disagree"
    for j in (0, N // 2, N - 1):
        u = numpy.zeros(N)
        u[j] = 1.0
        d = u if isinstance(x, numpy.ndarray) else [float(v) for v in u]
        col = numpy.asarray(numerical_jvp(f, (x,), (d,)), dtype=float)
        assert numpy.allclose(jf[:, j], col, rtol=1e-5, atol=1e-6), "jacfwd is wrong"


def run() -> list[dict[str, Any]]:
    rows = []
    for name, (f, x) in PROGRAMS.items():
        _check(f, x)
        u = numpy.ones(N) if isinstance(x, numpy.ndarray) else [1.0] * N
        jac = wengert.jacfwd(f)
        t_primal = _time(lambda f=f, x=x: f(x))
        t_jvp = _time(lambda f=f, x=x, u=u: wengert.jvp(f, (x,), (u,)))
        t_jac = _time(lambda jac=jac, x=x: jac(x))
        units = [numpy.eye(N)[j] if isinstance(x, numpy.ndarray) else
                 [float(v) for v in numpy.eye(N)[j]] for j in range(N)]
        t_loop = _time(lambda f=f, x=x: [wengert.jvp(f, (x,), (e,)) for e in units], repeat=5)
        rows.append(dict(name=name, primal=t_primal, jvp=t_jvp, jacfwd=t_jac, loop=t_loop))
    return rows


def render(rows: list[dict[str, Any]], markdown: bool) -> str:
    head = ["program", "primal", "1 JVP", "jacfwd (1 batched pass)", "jacfwd / JVP",
            f"{N} single JVPs"]
    lines = []
    for r in rows:
        ratio = r["jacfwd"] / r["jvp"]
        mark = "ok" if ratio <= TARGET else f"> {TARGET:g}x"
        lines.append([r["name"], f"{r['primal'] * 1e6:.1f} us", f"{r['jvp'] * 1e6:.1f} us",
                      f"{r['jacfwd'] * 1e6:.1f} us", f"{ratio:.2f}x ({mark})",
                      f"{r['loop'] * 1e6:.0f} us"])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(row) + " |" for row in lines]
        return "\n".join(out)
    widths = [max(len(x[k]) for x in [head, *lines]) for k in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), *(fmt.format(*row) for row in lines)])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    rows = run()
    print(render(rows, args.markdown))
    return 0 if all(r["jacfwd"] / r["jvp"] <= TARGET for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
