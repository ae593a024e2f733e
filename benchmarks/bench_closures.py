"""Derivatives of closures made anew on every call, as users write them.

A JAX user writes ``grad(lambda w: loss(w, X, y))(w)`` in a training loop: a new
function object on every step, capturing data. Each row times one step of such a loop
(making the closure and ``wengert.grad`` of it, then calling it) against the same
gradient built once and called with the data as arguments, in the same process:

| row | what the closure captures |
|---|---|
| kmeans cost | a list of points, the same list every step (GradBench's kmeans does this) |
| scalar loop | an ``int`` trip count, the same every step |
| NumPy loss | arrays ``X``, ``y``, the same every step |
| minibatch | arrays ``X``, ``y``, a different slice every step |

Also: the cost of making a ``wengert.grad(f)`` wrapper. Run ``python3
benchmarks/bench_closures.py``; numbers are medians of 5 repeats, never assertions.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np  # noqa: E402

import wengert  # noqa: E402


def kmeans_cost(points, c):
    s = 0.0
    for p in points:
        d = p - c
        s += d * d
    return s


def decay(x, n):
    s = x
    for _ in range(n):
        s = s * 0.999 + math.sin(s) * 0.001 * x
    return s


def logistic_loss(w, X, y):
    z = X @ w
    return np.mean(np.log1p(np.exp(-y * z)))


def _per_call(step: Callable[[], object], budget: float = 0.2) -> float:
    """Median seconds per call of ``step`` over 5 repeats of about ``budget`` each."""
    step()
    k = 1
    while True:
        t = time.perf_counter()
        for _ in range(k):
            step()
        if time.perf_counter() - t > budget / 4 or k > 1 << 16:
            break
        k *= 2
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(k):
            step()
        times.append((time.perf_counter() - t) / k)
    return statistics.median(times)


def rows() -> list[tuple[str, float, float]]:
    """(name, seconds per fresh-closure step, seconds per prebuilt step) for each row."""
    rng = np.random.default_rng(0)
    points = [float(v) for v in rng.normal(size=200)]
    X, y = rng.normal(size=(256, 8)), np.sign(rng.normal(size=256))
    w = rng.normal(size=8) * 0.1
    batches = [(X[i:i + 32], y[i:i + 32]) for i in range(0, 256, 32)]
    at = [0]
    n = 100

    def next_batch():
        at[0] = (at[0] + 1) % len(batches)
        return batches[at[0]]

    g_kmeans = wengert.grad(kmeans_cost, argnums=1)
    g_decay = wengert.grad(decay)
    g_loss = wengert.grad(logistic_loss)

    def fresh_minibatch():
        Xb, yb = next_batch()
        return wengert.grad(lambda w: logistic_loss(w, Xb, yb))(w)

    def prebuilt_minibatch():
        Xb, yb = next_batch()
        return g_loss(w, Xb, yb)

    cases = [
        ("kmeans cost", lambda: wengert.grad(lambda c: kmeans_cost(points, c))(0.3),
         lambda: g_kmeans(points, 0.3)),
        ("scalar loop", lambda: wengert.grad(lambda x: decay(x, n))(0.5),
         lambda: g_decay(0.5, n)),
        ("NumPy loss", lambda: wengert.grad(lambda w: logistic_loss(w, X, y))(w),
         lambda: g_loss(w, X, y)),
        ("minibatch", fresh_minibatch, prebuilt_minibatch),
    ]
    return [(name, _per_call(fresh), _per_call(pre)) for name, fresh, pre in cases]


def main() -> None:
    """Print the table."""
    print(f"{'closure':<14}{'fresh step':>14}{'prebuilt':>12}{'ratio':>8}")
    for name, fresh, pre in rows():
        print(f"{name:<14}{fresh * 1e6:>11.1f} us{pre * 1e6:>9.1f} us{fresh / pre:>7.2f}x")
    wrap = _per_call(lambda: wengert.grad(kmeans_cost))
    print(f"making wengert.grad(f): {wrap * 1e6:.2f} us")


if __name__ == "__main__":
    main()
