"""The caches of derivations are bounded, and fresh closures do not grow them.

A training loop makes a closure per step (``grad(lambda w: loss(w, Xb, yb))``), each
capturing a new minibatch: every closure of one code shares one derivation
(``frontend/source.lift_captures``), so the caches hold as many entries after thousands of
steps as after the first, and what the process holds stays flat.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import wengert
from wengert.driver import cache


def loss(w, X, y):
    return np.mean((X @ w - y) ** 2)


def train(steps, rng):
    w = np.zeros(3)
    for _ in range(steps):
        Xb, yb = rng.normal(size=(8, 3)), rng.normal(size=8)
        w = w - 0.01 * wengert.grad(lambda w: loss(w, Xb, yb))(w)
    return w


def _sizes():
    return [len(c) for c in (cache.PRIMALS, cache.VJPS, cache.JVPS, cache.GRADIENT_IRS,
                             cache.RESULT_TYPES)]


def test_thousands_of_fresh_closures_keep_the_caches_and_memory_flat():
    rng = np.random.default_rng(0)
    train(20, rng)
    before = _sizes()
    gc.collect()
    tracemalloc.start()
    try:
        train(50, rng)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        train(2000, rng)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert _sizes() == before
    assert grown < 200_000, grown  # (bytes: no entry, cell or array kept per step)


def test_a_bounded_cache_forgets_the_oldest():
    c = cache.Bounded(3)
    for k in range(5):
        c[k] = k * k
    assert list(c) == [2, 3, 4]
    c[2] = 5  # (stored again: now the most recent)
    c[7] = 49
    assert list(c) == [4, 2, 7] and c[2] == 5
