"""The programs whose first derivative ``bench_startup.py`` times, each in a fresh process.

wengert reads a function's source, so these live in a real file that the benchmark's child
processes import. ``make_args(name)`` builds each program's arguments (fixed seed).
"""

from __future__ import annotations

import math

import numpy as np


def kalman_nll(x0, F, H, zs):
    """Negative log-likelihood of observations ``zs`` under a linear-Gaussian state model."""
    n = x0.shape[0]
    x = x0
    P = np.eye(n)
    Q = 0.01 * np.eye(n)
    R = 0.1 * np.eye(H.shape[0])
    nll = 0.0
    for z in zs:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        r = z - H @ x
        S_inv = np.linalg.inv(S)
        K = P @ H.T @ S_inv
        x = x + K @ r
        P = P - K @ H @ P
        nll = nll + 0.5 * (r @ S_inv @ r + np.log(np.linalg.det(S)))
    return nll


def scalar_loop(x, y):
    """Plain floats: ``math`` calls, a branch, a ``for`` and a data-dependent ``while``."""
    s = x
    t = y
    for _ in range(50):
        s = s * 0.99 + math.sin(t) * 0.05
        if s > 1.0:
            t = t + math.exp(-s) * x
        else:
            t = t * math.cos(s) + 0.1
    while t * t < 100.0:
        t = t * 1.5 + math.log(1.0 + s * s)
    return s * t + math.sqrt(1.0 + x * x)


def mlp_xent(params, X, labels):
    """Mean softmax cross-entropy of a 2-layer tanh MLP; ``params`` a dict of weight arrays."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    m = np.max(logits, axis=1, keepdims=True)
    shifted = logits - m
    log_z = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * (shifted - log_z), axis=1))


def make_args(name):
    """Arguments of program ``name`` (a fixed seed, so every process gets the same numbers)."""
    rng = np.random.default_rng(0)
    if name == "kalman":
        n, m, T = 4, 2, 20
        x0 = rng.normal(size=n)
        F = np.eye(n) + 0.1 * rng.normal(size=(n, n))
        H = rng.normal(size=(m, n))
        zs = rng.normal(size=(T, m))
        return (x0, F, H, zs)
    if name == "scalar_loop":
        return (0.7, 0.3)
    if name == "mlp":
        X = rng.normal(size=(64, 16))
        labels = np.eye(10)[rng.integers(0, 10, size=64)]
        params = {"W1": 0.3 * rng.normal(size=(16, 32)), "b1": np.zeros(32),
                  "W2": 0.3 * rng.normal(size=(32, 10)), "b2": np.zeros(10)}
        return (params, X, labels)
    raise ValueError(name)


def leaf_sum(tree):
    """The sum of every number in a derivative (a float, an array, or a tuple / dict of them)."""
    if isinstance(tree, dict):
        return sum(leaf_sum(v) for v in tree.values())
    if isinstance(tree, (tuple, list)):
        return sum(leaf_sum(v) for v in tree)
    return float(np.sum(tree))
