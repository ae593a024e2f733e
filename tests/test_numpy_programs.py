"""Real NumPy programs, written as their users write them, end to end: gradients in both
modes and Hessians against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from wengert.testing import check_grads

RNG = np.random.default_rng(7)


def gmm_loglik(means, log_w, x):
    # log-likelihood of a Gaussian mixture (unit variances) with log-sum-exp over components
    d2 = np.sum((x[:, None, :] - means[None, :, :]) ** 2, axis=-1)      # (N, K)
    logp = log_w[None, :] - 0.5 * d2 - 0.5 * x.shape[1] * np.log(2 * np.pi)
    m = np.max(logp, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(logp - m), axis=1)))


def kmeans_objective(centers, x):
    d2 = np.sum((x[:, None, :] - centers[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(d2, axis=1))


def least_squares(w, x, y):
    r = x @ w - y
    return 0.5 * r @ r


def mlp_mse(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2
    return np.mean((out - y) ** 2)


def logistic_nll(w, x, y):
    z = x @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def rk4(state, k):
    def deriv(s):
        return np.array([s[1], -k * np.sin(s[0])])

    dt = 0.05
    for _ in range(20):
        k1 = deriv(state)
        k2 = deriv(state + 0.5 * dt * k1)
        k3 = deriv(state + 0.5 * dt * k2)
        k4 = deriv(state + dt * k3)
        state = state + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(state ** 2)


def det_cofactor(m):
    def det(a):
        n = a.shape[0]
        if n == 1:
            return a[0, 0]
        total = 0.0
        for j in range(n):
            minor = np.concatenate([a[1:, :j], a[1:, j + 1:]], axis=1)
            total = total + (-1) ** j * a[0, j] * det(minor)
        return total

    return det(m)


def softmax_xent(logits, labels):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def heat_stencil(u0, alpha):
    u = u0.copy()
    for _ in range(5):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                           - 4.0 * u[1:-1, 1:-1])
        u[1:-1, 1:-1] += alpha * lap[1:-1, 1:-1]
    return np.sum(u ** 2)


X8 = RNG.normal(size=(8, 2))
CASES = {
    "gmm": (gmm_loglik, (RNG.normal(size=(3, 2)), np.log(np.array([0.2, 0.3, 0.5])), X8),
            (0, 1)),
    "kmeans": (kmeans_objective, (RNG.normal(size=(3, 2)), X8), (0,)),
    "least_squares": (least_squares, (RNG.normal(size=3), RNG.normal(size=(6, 3)),
                                      RNG.normal(size=6)), (0,)),
    "mlp": (mlp_mse, (RNG.normal(size=(3, 4)) * 0.5, RNG.normal(size=4) * 0.1,
                      RNG.normal(size=4), RNG.normal(size=(5, 3)), RNG.normal(size=5)),
            (0, 1, 2)),
    "logistic": (logistic_nll, (RNG.normal(size=3), RNG.normal(size=(7, 3)),
                                (RNG.random(7) > 0.5) * 1.0), (0,)),
    "rk4": (rk4, (np.array([0.4, 0.1]), 1.3), (0, 1)),
    "det_cofactor": (det_cofactor, (RNG.normal(size=(4, 4)),), (0,)),
    "softmax_xent": (softmax_xent, (RNG.normal(size=(4, 5)), np.eye(5)[[0, 2, 4, 1]]), (0,)),
    "heat_stencil": (heat_stencil, (RNG.normal(size=(5, 6)), 0.1), (0, 1)),
}


@pytest.mark.parametrize("name", CASES)
def test_program_gradients_and_hessians(name):
    f, args, argnums = CASES[name]
    check_grads(f, args, order=2, modes=("rev", "fwd"), argnums=argnums, rtol=1e-4,
                atol=1e-6)


def test_the_hessian_of_a_recursive_determinant_on_submatrices():
    # The nested recursive ``det`` is dispatched at run time in the second derivative; it
    # calls ``np.concatenate`` with ``axis=`` (a keyword argument), which writes nothing.
    import wengert

    a = CASES["det_cofactor"][1][0]
    h = wengert.hessian(det_cofactor)(a)
    eps = 1e-5
    for i, j in [(0, 0), (1, 2), (3, 1)]:
        e = np.zeros_like(a)
        e[i, j] = eps
        fd = (wengert.grad(det_cofactor)(a + e) - wengert.grad(det_cofactor)(a - e)) / (2 * eps)
        np.testing.assert_allclose(h[:, :, i, j], fd, rtol=1e-5, atol=1e-7)


# Every spelling of "a cotangent times a partial, summed where an operand was broadcast":
# the pullback sums the product as it makes it (``_mul_sum_to``); checked in both modes
# and to second order, float32 kept float32.
X = RNG.normal(size=(6, 3))


def pairwise_sq(mu):
    return np.sum((X[:, None, :] - mu[None, :, :]) ** 2)


def pairwise_sq_method(mu):
    return ((X[:, None] - mu) ** 2).sum(axis=(0, 2)).sum()


def weighted_rows(w):
    return np.sum(w[:, None] * X * X)


def scaled_negated(mu):
    d = X[:, None, :] - mu
    return -np.mean(2.0 * d * d) + np.sum(-(d * 3.0) * d, axis=0).sum()


def nearest_centre(mu):
    return np.min(np.sum((X[:, None] - mu) ** 2, -1), 1).sum()


def column_scale(s):
    return np.sum(np.tanh(X * s) * X)


SUMS_OF_PRODUCTS = {
    "pairwise_sq": (pairwise_sq, RNG.normal(size=(4, 3))),
    "pairwise_sq_method": (pairwise_sq_method, RNG.normal(size=(4, 3))),
    "weighted_rows": (weighted_rows, RNG.normal(size=6)),
    "scaled_negated": (scaled_negated, RNG.normal(size=(4, 3))),
    "nearest_centre": (nearest_centre, RNG.normal(size=(4, 3))),
    "column_scale": (column_scale, RNG.normal(size=3)),
}


@pytest.mark.parametrize("name", SUMS_OF_PRODUCTS)
def test_sums_of_broadcast_products(name):
    import wengert

    f, arg = SUMS_OF_PRODUCTS[name]
    check_grads(f, (arg,), order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)
    assert "_mul_sum_to(" in wengert.show(f, mode="vjp", like=(arg,))
    g32 = wengert.grad(f)(arg.astype(np.float32))
    assert g32.dtype == np.float32 and g32.shape == arg.shape
    np.testing.assert_allclose(g32, wengert.grad(f)(arg), rtol=1e-3, atol=1e-3)
