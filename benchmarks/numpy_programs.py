"""The plain-NumPy programs differentiated by ``bench_numpy.py``.

Written the way NumPy users write them. The benchmark loads fresh copies of this file (for cold
first-call times) and copies in which the global ``np`` is rebound to ``autograd.numpy`` or
``jax.numpy``, so those peers differentiate the same source text; torch has its own spelling of
the same maths in ``bench_numpy.py``. Keep the functions free of other globals.
"""

from __future__ import annotations

import math

import numpy as np


def mlp_loss(W1, b1, W2, b2, X, y):
    """Mean squared error of a 2-layer tanh MLP."""
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def logistic_nll(w, X, y):
    """Negative log-likelihood of logistic regression, labels in {-1, +1}."""
    return np.sum(np.logaddexp(0.0, -y * (X @ w)))


def logistic_nll_lse(w, X, y):
    """The same likelihood with a log-sum-exp written out with max / exp / log / sum."""
    z = -y * (X @ w)
    m = np.maximum(z, 0.0)
    return np.sum(m + np.log(np.exp(-m) + np.exp(z - m)))


def softmax_xent(logits, labels):
    """Mean softmax cross-entropy of a batch; ``labels`` one-hot, rows of ``logits`` classes."""
    m = np.max(logits, axis=1, keepdims=True)
    shifted = logits - m
    log_z = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * (shifted - log_z), axis=1))


def ode_loop(x, w):
    """200 explicit Euler steps of x' = sin(x) * w on a vector."""
    dt = 0.01
    for _ in range(200):
        x = x + dt * np.sin(x) * w
    return np.sum(x ** 2)


def element_loop(x):
    """A Python loop over the 1000 elements of an array, a float accumulated."""
    s = 0.0
    for i in range(len(x)):
        s += math.sin(x[i]) * x[i]
    return s


def stencil(x):
    """A second-difference stencil written into a new array element by element."""
    y = np.zeros_like(x)
    for i in range(1, len(x) - 1):
        y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]
    return np.sum(y * y)


def mlp_small(W1, b1, W2, b2, X, y):
    """The MLP loss at the issue's small size (the same maths as ``mlp_loss``)."""
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp_large(W1, b1, W2, b2, X, y):
    """The MLP loss at the issue's large size (batch 1024, 256 -> 1024 -> 1)."""
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def gaussian_nll(B, mu, Y):
    """Negative log-likelihood of the rows of ``Y`` under N(mu, B B^T + I / 2)."""
    n, d = Y.shape
    S = B @ B.T + 0.5 * np.eye(d)
    R = Y - mu
    sol = np.linalg.solve(S, R.T)
    sign, logdet = np.linalg.slogdet(S)
    return 0.5 * np.sum(R.T * sol) + 0.5 * n * logdet + 0.5 * n * d * np.log(2.0 * np.pi)


def gmm_loglik(means, log_w, X):
    """Log-likelihood of a Gaussian mixture (unit variances), log-sum-exp over components."""
    d2 = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=2)
    logp = log_w - 0.5 * d2
    m = np.max(logp, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(logp - m), axis=1)))
