"""scipy.linalg, scipy.integrate and scipy.signal written the way a modeller writes them: a
Gaussian process's negative log marginal likelihood (a Cholesky factor and its solves),
quadrature of a parametric curve, a smoothed signal's fit; each checked against central
differences in both modes to second order (its value against SciPy's own). The definitions
are checked case by case in tests/rules/test_form.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg as sl
import scipy.signal as ss
import scipy.special as sc
import scipy.stats as st

import wengert
from wengert.testing import check_grads

rng = np.random.default_rng(20241130)
N = 8
XS = np.sort(rng.uniform(0.0, 4.0, N))
YS = np.sin(XS) + 0.1 * rng.standard_normal(N)


def check(f, *args):
    check_grads(f, args, order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


def kernel(log_ell, log_noise):
    """A squared-exponential kernel of the length-scale, plus the noise on its diagonal."""
    d = XS[:, None] - XS[None, :]
    return np.exp(-0.5 * d * d / np.exp(2.0 * log_ell)) + np.exp(2.0 * log_noise) * np.eye(N)


def reference_nll(log_ell, log_noise):
    k = kernel(log_ell, log_noise)
    return 0.5 * YS @ np.linalg.solve(k, YS) + 0.5 * np.linalg.slogdet(k)[1]


# --------------------------------------------------------------------- Gaussian processes


def test_gp_negative_log_marginal_likelihood_cholesky():
    def nll(log_ell, log_noise):
        low = sl.cholesky(kernel(log_ell, log_noise), lower=True)
        alpha = sl.cho_solve((low, True), YS)
        return 0.5 * YS @ alpha + np.sum(np.log(np.diag(low)))

    check(nll, 0.1, -1.0)
    assert np.isclose(nll(0.1, -1.0), reference_nll(0.1, -1.0))
    g = wengert.grad(nll, argnums=(0, 1))(0.1, -1.0)
    h = 1e-6
    fd = [(reference_nll(0.1 + h, -1.0) - reference_nll(0.1 - h, -1.0)) / (2 * h),
          (reference_nll(0.1, -1.0 + h) - reference_nll(0.1, -1.0 - h)) / (2 * h)]
    assert np.allclose(g, fd, rtol=1e-5)


def test_gp_negative_log_marginal_likelihood_cho_factor():
    # The upper factor of cho_factor, its lower triangle the kernel's entries, as SciPy
    # leaves them: cho_solve reads the upper one only.
    def nll(log_ell, log_noise):
        c, lower = sl.cho_factor(kernel(log_ell, log_noise))
        alpha = sl.cho_solve((c, lower), YS)
        return 0.5 * YS @ alpha + np.sum(np.log(np.diag(c)))

    check(nll, 0.1, -1.0)
    assert np.isclose(nll(0.1, -1.0), reference_nll(0.1, -1.0))


def test_gp_predictive_mean_with_triangular_solves():
    xstar = np.array([0.5, 2.5])

    def mean(log_ell, log_noise):
        ell2 = np.exp(2.0 * log_ell)
        d = XS[:, None] - XS[None, :]
        k = np.exp(-0.5 * d * d / ell2) + np.exp(2.0 * log_noise) * np.eye(N)
        ds = xstar[:, None] - XS[None, :]
        ks = np.exp(-0.5 * ds * ds / ell2)
        low = sl.cholesky(k, lower=True)
        v = sl.solve_triangular(low, YS, lower=True)
        w = sl.solve_triangular(low, v, lower=True, trans="T")
        return np.sum((ks @ w) ** 2) + sl.det(k[:3, :3]) + np.sum(sl.inv(k[:2, :2]))

    check(mean, 0.2, -1.2)


def test_solve_with_structure():
    a0 = np.array([[3.0, 0.5], [0.4, 2.5]])

    def f(a, b):
        return np.sum(sl.solve(a, b, assume_a="pos") * sl.solve(a, b))

    check(f, a0, np.array([1.0, -0.5]))


def test_banded_solve_is_refused():
    def f(a, b):
        return np.sum(sl.solve(a, b, assume_a="banded"))

    with pytest.raises(NotImplementedError, match="banded"):
        wengert.grad(f)(np.eye(2) * 2.0, np.ones(2))


# ------------------------------------------------------------------ integration, signals


def test_quadrature_of_a_parametric_curve():
    t = np.linspace(0.0, 2.0, 7)
    x = t ** 1.5

    def f(a, b):
        y = np.exp(-a * t) * np.sin(b * t)
        return (si.trapezoid(y, t) + si.simpson(y, x=x) + si.simpson(y[:6], dx=0.25)
                + np.sum(si.cumulative_trapezoid(y, x, initial=0) ** 2))

    check(f, 0.7, 1.3)


def test_smoothed_signal_fit():
    s = np.sin(np.linspace(0.0, 3.0, 12))

    def loss(w):
        smooth = ss.convolve(s, w, mode="same")
        lag = ss.correlate(smooth, w, mode="valid")
        return np.sum((smooth - s) ** 2) + np.sum(ss.fftconvolve(lag, w) ** 2)

    check(loss, np.array([0.25, 0.5, 0.25]))


def _poisson_posterior(w, X, counts):
    # (the README's model)
    rate = np.exp(X @ w)
    loglik = np.sum(counts * np.log(rate) - rate - sc.gammaln(counts + 1.0))
    return -(loglik + np.sum(st.norm.logpdf(w, 0.0, 2.0)))


def _gp_nll(params, t, y):
    ell, noise = params[0], params[1]
    K = np.exp(-0.5 * (t[:, None] - t[None, :]) ** 2 / ell ** 2) + noise * np.eye(len(t))
    c, lower = sl.cho_factor(K, lower=True)
    alpha = sl.cho_solve((c, lower), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))


def test_the_readmes_models_to_second_order():
    X = np.array([[1.0, 0.2], [1.0, -0.4], [1.0, 1.1], [1.0, 0.7]])
    counts = np.array([2.0, 0.0, 5.0, 3.0])
    check_grads(_poisson_posterior, (np.array([0.1, 0.3]), X, counts), argnums=0, order=2,
                modes=("rev", "fwd"), rtol=1e-5)
    t = np.linspace(0.0, 2.0, 5)
    check_grads(_gp_nll, (np.array([0.8, 0.1]), t, np.sin(t)), argnums=0, order=2,
                modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)
