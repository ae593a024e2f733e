"""scipy.stats written the way a statistician writes a model: log-likelihoods of regressions
and generalized linear models built from ``st.<distribution>.logpdf``/``logpmf`` and the
distribution functions, each checked against central differences in both modes to second
order (its value against SciPy's own). The definitions are checked case by case in
tests/rules/test_form.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import wengert
from wengert.diagnostics import NonDifferentiableError
from wengert.testing import check_grads

rng = np.random.default_rng(20240917)
N = 12
X = np.column_stack([np.ones(N), rng.standard_normal((N, 2))])
W = np.array([0.4, -0.7, 0.25])
Y = X @ W + 0.5 * rng.standard_normal(N)
COUNTS = rng.poisson(np.exp(X @ W))
TRIALS = rng.integers(3, 9, size=N)
SUCCESSES = rng.binomial(TRIALS, sc.expit(X @ W))
POSITIVE = rng.gamma(3.0, np.exp(X @ W) / 3.0)


def check(f, *args):
    check_grads(f, args, order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------- regressions


def test_gaussian_linear_regression():
    def loglik(w, log_sigma):
        return np.sum(st.norm.logpdf(Y, X @ w, np.exp(log_sigma)))

    check(loglik, W, -0.3)
    # (the gradient in w is X^T (y - X w) / sigma^2)
    sigma = np.exp(-0.3)
    assert np.allclose(wengert.grad(loglik)(W, -0.3), X.T @ (Y - X @ W) / sigma**2)


def test_student_t_robust_regression():
    # The degrees of freedom are a parameter too, by keyword, as are loc and scale.
    def loglik(w, df, scale):
        return np.sum(st.t.logpdf(Y, df=df, loc=X @ w, scale=scale))

    check(loglik, W, 4.5, 0.8)


def test_gamma_glm_with_a_log_link():
    def loglik(w, shape):
        mean = np.exp(X @ w)
        return np.sum(st.gamma.logpdf(POSITIVE, shape, scale=mean / shape))

    check(loglik, W, 2.5)


def test_poisson_glm():
    def loglik(w):
        return np.sum(st.poisson.logpmf(COUNTS, np.exp(X @ w)))

    check(loglik, W)
    assert np.allclose(wengert.grad(loglik)(W), X.T @ (COUNTS - np.exp(X @ W)))


def test_binomial_logistic_regression_with_a_normal_prior():
    def log_posterior(w):
        p = sc.expit(X @ w)
        return np.sum(st.binom.logpmf(SUCCESSES, TRIALS, p)) + np.sum(st.norm.logpdf(w, 0.0, 2.0))

    check(log_posterior, W)


def test_probit_and_censored_normal_models():
    # A probit model (the normal distribution function's log, finite far in the tails) and
    # a Tobit model: observed values by their density, censored ones by the tail beyond.
    observed = Y > 0.0

    def probit(w):
        s = np.where(observed, 1.0, -1.0)
        return np.sum(st.norm.logcdf(s * (X @ w)))

    def tobit(w, sigma):
        mu = X @ w
        dens = st.norm.logpdf(Y, mu, sigma)
        tail = st.norm.logcdf(0.0, loc=mu, scale=sigma)
        return np.sum(np.where(observed, dens, tail))

    check(probit, W)
    check(tobit, W, 0.7)


def test_exponential_survival_with_censoring():
    times = POSITIVE
    event = np.arange(N) % 3 != 0

    def loglik(w):
        scale = np.exp(X @ w)
        return np.sum(np.where(event, st.expon.logpdf(times, scale=scale),
                               st.expon.logsf(times, scale=scale)))

    check(loglik, W)


def test_quantiles_and_probabilities_of_several_distributions():
    # Distribution functions and quantiles of parameters being fitted: a quantile loss.
    def f(loc, scale):
        q = st.norm.ppf(0.9, loc, scale) + st.logistic.ppf(0.2, loc=loc, scale=scale)
        p = st.cauchy.cdf(1.3, loc, scale) + st.laplace.sf(0.4, loc, scale)
        return q * p + st.lognorm.logpdf(2.0, scale, scale=np.exp(loc))

    check(f, 0.3, 1.4)


def test_multivariate_normal_with_a_cholesky_parametrised_covariance():
    data = rng.standard_normal((6, 3))

    def loglik(mean, a):
        cov = a @ a.T + 0.5 * np.eye(3)
        return np.sum(st.multivariate_normal.logpdf(data, mean, cov))

    check(loglik, np.array([0.1, -0.2, 0.3]), np.tril(rng.standard_normal((3, 3))))


def test_dirichlet_and_beta():
    props = np.array([[0.2, 0.1, 0.4], [0.3, 0.6, 0.1]])  # the first two of three

    def f(log_alpha, a, b):
        return (np.sum(st.dirichlet.logpdf(props, np.exp(log_alpha)))
                + np.sum(st.beta.logpdf(props[0], a, b)))

    check(f, np.array([0.3, 0.1, 0.6]), 2.0, 3.5)


# ------------------------------------------------------------------------ refusals


def test_a_distribution_without_a_definition():
    x = np.array([0.5, 1.5, 2.5])

    def f(c):
        return np.sum(st.weibull_min.logpdf(x, c, loc=0.1))

    with pytest.raises(NonDifferentiableError, match=r"scipy\.stats\.weibull_min\.logpdf") \
            as info:
        wengert.grad(f)(1.5)
    assert info.value.loc is not None and info.value.loc.lineno == \
        f.__code__.co_firstlineno + 1

    # Not differentiated, it is SciPy's own method.
    def g(w):
        return w * np.sum(st.weibull_min.logpdf(x, 1.5)) + st.norm.isf(0.05)

    assert np.isclose(wengert.grad(g)(2.0), np.sum(st.weibull_min.logpdf(x, 1.5)))


def test_a_distribution_function_without_a_derivative_in_a_shape():
    def f(df):
        return st.t.cdf(0.7, df)

    with pytest.raises(NonDifferentiableError, match="df"):
        wengert.grad(f)(3.5)
    # In the data, loc and scale, it has one.
    def g(x, s):
        return np.sum(st.t.cdf(x, 3.5, 0.2, s) + st.gamma.sf(x, 2.5, scale=s))

    check(g, np.array([0.7, 1.9]), 1.3)


def test_scipy_errors_for_the_parameters():
    def missing(x):
        return st.gamma.logpdf(x)

    def twice(x):
        return st.gamma.logpdf(x, 2.0, a=3.0)

    with pytest.raises(TypeError):
        wengert.grad(missing)(1.5)
    with pytest.raises(TypeError):
        wengert.grad(twice)(1.5)
