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
    # Recursion on numbers differentiates again (split into the call and its gradient);
    # on arrays it does not yet: a second derivative of det_cofactor is a located refusal
    # (the last test).
    order = 1 if name == "det_cofactor" else 2
    check_grads(f, args, order=order, modes=("rev", "fwd"), argnums=argnums, rtol=1e-4,
                atol=1e-6)


def test_a_second_derivative_through_recursion_is_refused_where_it_is_called():
    import wengert

    with pytest.raises(wengert.NonDifferentiableError) as e:
        wengert.hessian(det_cofactor)(CASES["det_cofactor"][1][0])
    assert e.value.loc is not None and e.value.loc.filename == __file__
