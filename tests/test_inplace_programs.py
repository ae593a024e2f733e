"""NumPy programs written in place as scientists write them (a textbook heat equation, Jacobi
sweeps, velocity Verlet, power iteration, LU and Cholesky by hand, RK4, batch normalisation,
discounted returns, upwind advection, Gram-Schmidt on columns, particles reflected by masks,
a Kalman filter, rows normalised in a loop, SGD on a list of parameter arrays): both modes
to second order against central finite differences, the Hessian against differences of the
gradient, and the caller's arrays unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads


def heat_explicit(u0, kappa):
    u = u0.copy()
    dx = 1.0 / (len(u) - 1)
    dt = 0.2 * dx * dx
    for _ in range(20):
        u[1:-1] += kappa * dt / dx ** 2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = 0.0
        u[-1] = 0.0
    return np.sum(u ** 2) * dx


def jacobi_poisson(f):
    n = f.shape[0]
    u = np.zeros_like(f)
    h2 = (1.0 / (n - 1)) ** 2
    for _ in range(15):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  + h2 * f[1:-1, 1:-1])
        u = new
    return np.sum(u * f)


def verlet_springs(pos0, vel0, k):
    pos = pos0.copy()
    vel = vel0.copy()
    dt = 0.05

    def accel(p):
        a = np.zeros_like(p)
        a[1:] -= k * (p[1:] - p[:-1])
        a[:-1] += k * (p[1:] - p[:-1])
        return a

    acc = accel(pos)
    for _ in range(10):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = accel(pos)
        vel += 0.5 * dt * acc
    return 0.5 * np.sum(vel ** 2) + 0.5 * k * np.sum((pos[1:] - pos[:-1]) ** 2)


def power_iteration(A):
    v = np.ones(A.shape[0])
    for _ in range(30):
        v = A @ v
        v /= np.linalg.norm(v)
    return v @ A @ v


def lu_logdet(A):
    n = A.shape[0]
    U = A.copy()
    for k in range(n - 1):
        for i in range(k + 1, n):
            factor = U[i, k] / U[k, k]
            U[i, k:] -= factor * U[k, k:]
    return np.sum(np.log(np.abs(np.diag(U))))


def cholesky_logdet(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        s = A[j, j] - np.dot(L[j, :j], L[j, :j])
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            L[i, j] = (A[i, j] - np.dot(L[i, :j], L[j, :j])) / L[j, j]
    return 2.0 * np.sum(np.log(np.diag(L)))


def rk4_lotka_volterra(y0, params):
    a, b, c, d = params
    y = y0.copy()
    dt = 0.05

    def rhs(s):
        return np.array([a * s[0] - b * s[0] * s[1], d * s[0] * s[1] - c * s[1]])

    for _ in range(20):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * dt * k1)
        k3 = rhs(y + 0.5 * dt * k2)
        k4 = rhs(y + dt * k3)
        y += dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0] * y[1]


def batchnorm_loss(X, w):
    Z = X @ w
    Z -= Z.mean(axis=0)
    Z /= np.sqrt(Z.var(axis=0) + 1e-5)
    return np.sum(np.tanh(Z) ** 2)


def discounted_returns(r, gamma):
    G = np.zeros_like(r)
    running = 0.0
    for t in reversed(range(len(r))):
        running = r[t] + gamma * running
        G[t] = running
    G -= G.mean()
    return np.sum(G * r)


def upwind_advection(u0, c):
    u = u0.copy()
    for _ in range(12):
        flux = c * u
        u[1:] -= 0.4 * (flux[1:] - flux[:-1])
        u[0] -= 0.4 * (flux[0] - flux[-1])
    return np.sum(u ** 2)


def gram_schmidt_columns(A):
    Q = A.copy()
    n = Q.shape[1]
    for j in range(n):
        for i in range(j):
            Q[:, j] -= np.dot(Q[:, i], Q[:, j]) * Q[:, i]
        Q[:, j] /= np.linalg.norm(Q[:, j])
    return np.sum(Q * A)


def reflecting_particles(x0, v0):
    x = x0.copy()
    v = v0.copy()
    for _ in range(6):
        x += 0.05 * v
        hi = x > 1.0
        x[hi] = 2.0 - x[hi]
        v[hi] *= -1.0
        lo = x < 0.0
        x[lo] = -x[lo]
        v[lo] = -v[lo]
    return np.sum(x ** 2) + 0.5 * np.sum(v ** 2)


def kalman_1d(zs, q):
    x = 0.0
    P = 1.0
    total = 0.0
    for z in zs:
        P = P + q
        K = P / (P + 0.5)
        x = x + K * (z - x)
        P = (1 - K) * P
        total += (z - x) ** 2
    return total


def normalise_rows_inplace(M):
    B = M * 1.0
    for i in range(B.shape[0]):
        B[i, :] /= np.sum(B[i, :] ** 2) ** 0.5
    return np.sum(B[:, 0] * np.arange(1.0, B.shape[0] + 1))


def _layer_grads(params, X, y):
    W, b = params
    h = np.tanh(X @ W + b)
    d = 2.0 * (h - y) * (1 - h ** 2) / y.size
    return [X.T @ d, d.sum(axis=0)]


def sgd_training_loop(W0, b0, X, y):
    # plain SGD as a tutorial writes it: a list of parameter arrays updated by slot
    params = [W0.copy(), b0.copy()]
    for _ in range(3):
        g = _layer_grads(params, X, y)
        for i in range(len(params)):
            params[i] -= 0.1 * g[i]
    W, b = params
    return np.mean((np.tanh(X @ W + b) - y) ** 2)


_RNG = np.random.default_rng(3)


def _spd(n):
    b = _RNG.standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


_CASES = {
    "heat_explicit": (heat_explicit,
                      (np.sin(np.linspace(0, np.pi, 9)) + 0.1 * _RNG.standard_normal(9), 0.7)),
    "jacobi_poisson": (jacobi_poisson, (_RNG.standard_normal((6, 6)),)),
    "verlet_springs": (verlet_springs,
                       (_RNG.standard_normal(5), _RNG.standard_normal(5), 1.3)),
    "power_iteration": (power_iteration, (_spd(4),)),
    "lu_logdet": (lu_logdet, (_spd(4),)),
    "cholesky_logdet": (cholesky_logdet, (_spd(4),)),
    "rk4_lotka_volterra": (rk4_lotka_volterra,
                           (np.array([1.0, 0.5]), (1.1, 0.4, 0.4, 0.1))),
    "batchnorm_loss": (batchnorm_loss,
                       (_RNG.standard_normal((8, 3)), _RNG.standard_normal((3, 2)))),
    "discounted_returns": (discounted_returns, (_RNG.standard_normal(7), 0.9)),
    "upwind_advection": (upwind_advection, (_RNG.standard_normal(8), 0.8)),
    "gram_schmidt_columns": (gram_schmidt_columns, (_RNG.standard_normal((5, 3)),)),
    "reflecting_particles": (reflecting_particles,
                             (_RNG.uniform(0.1, 0.9, 6), 3 * _RNG.standard_normal(6))),
    "kalman_1d": (kalman_1d, (list(_RNG.standard_normal(6)), 0.3)),
    "normalise_rows_inplace": (normalise_rows_inplace, (_RNG.standard_normal((4, 3)) + 2.0,)),
    "sgd_training_loop": (sgd_training_loop,
                          (0.5 * _RNG.standard_normal((3, 2)), 0.1 * _RNG.standard_normal(2),
                           _RNG.standard_normal((6, 3)), _RNG.standard_normal((6, 2)))),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_in_place_programs_in_every_mode(name):
    f, args = _CASES[name]
    nums = tuple(i for i, a in enumerate(args) if not isinstance(a, tuple))
    kept = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    check_grads(f, args, order=2, modes=("rev", "fwd"), argnums=nums, rtol=1e-4, atol=1e-6)
    # The Hessian times a direction against central differences of the gradient.
    k = nums[0]
    x = np.asarray(args[k], dtype=float)
    h = np.asarray(wengert.hessian(f, argnums=k)(*args)).reshape(x.size, x.size)
    u = _RNG.standard_normal(x.size)
    g = wengert.grad(f, argnums=k)
    eps = 1e-5

    def at(t):
        moved = (x + t * u.reshape(x.shape))
        moved = list(moved) if isinstance(args[k], list) else moved
        return np.ravel(g(*args[:k], moved, *args[k + 1:]))

    np.testing.assert_allclose(h @ u, (at(eps) - at(-eps)) / (2 * eps), rtol=1e-4, atol=1e-5)
    for a, b in zip(args, kept):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)  # (the programs copy what they write)
