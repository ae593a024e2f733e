"""The rules of ``scipy.special`` (src/wengert/rules/scipy_special.py) in use: log-likelihoods
written as a user writes them, the Python definitions against SciPy's functions, the
refusals of derivatives without a closed form, and SciPy left unimported by ``import
wengert``. (Every rule's own cases run in tests/rules/test_form.py.)"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

import wengert  # noqa: E402
from wengert.rules import registry  # noqa: E402
from wengert.testing import check_grads  # noqa: E402

registry.load_optional()

RNG = np.random.default_rng(7)
X = RNG.normal(size=(12, 3))
COUNTS = np.array([0, 3, 1, 0, 5, 2, 1, 7, 0, 2, 4, 1])
LABELS = (RNG.uniform(size=12) < 0.5) * 1.0


# ------------------------------------------------------------------ log-likelihoods


def negbin_loglik(beta, log_r):
    # Negative binomial regression: counts with mean exp(X beta) and dispersion r.
    mu = np.exp(X @ beta)
    r = np.exp(log_r)
    return np.sum(sc.gammaln(COUNTS + r) - sc.gammaln(r) - sc.gammaln(COUNTS + 1.0)
                  + r * np.log(r / (r + mu)) + sc.xlogy(COUNTS, mu / (r + mu)))


def poisson_loglik(beta):
    eta = X @ beta
    return np.sum(COUNTS * eta - np.exp(eta) - sc.gammaln(COUNTS + 1))


def test_count_regressions():
    beta = np.array([0.3, -0.2, 0.1])
    check_grads(negbin_loglik, (beta, 0.4), order=2, modes=("rev", "fwd"))
    check_grads(poisson_loglik, (beta,), order=2, modes=("rev", "fwd"))


PROPS = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [0.25, 0.25, 0.5]])


def dirichlet_logpdf(log_alpha):
    alpha = np.exp(log_alpha)
    norm = sc.gammaln(np.sum(alpha)) - np.sum(sc.gammaln(alpha))
    return np.sum(norm + np.sum(sc.xlogy(alpha - 1.0, PROPS), axis=1))


def beta_logpdf(a, b):
    x = PROPS[:, 0]
    return np.sum(sc.xlogy(a - 1.0, x) + sc.xlog1py(b - 1.0, -x) - sc.betaln(a, b))


def test_beta_and_dirichlet_densities():
    check_grads(dirichlet_logpdf, (np.array([0.2, -0.3, 0.5]),), order=2,
                modes=("rev", "fwd"))
    check_grads(beta_logpdf, (2.5, 1.7), order=2, modes=("rev", "fwd"))
    check_grads(beta_logpdf, (np.array([2.5, 1.2, 3.0]), 1.7), order=2, modes=("rev", "fwd"))
    # The gradient is the closed form: digamma differences and mean log x.
    x = PROPS[:, 0]
    ga, gb = wengert.grad(beta_logpdf, argnums=(0, 1))(2.5, 1.7)
    assert ga == pytest.approx(np.sum(np.log(x)) - 3 * (sc.digamma(2.5) - sc.digamma(4.2)))
    assert gb == pytest.approx(np.sum(np.log1p(-x)) - 3 * (sc.digamma(1.7) - sc.digamma(4.2)))


def logistic_loglik(w):
    z = X @ w
    return np.sum(LABELS * sc.log_expit(z) + (1.0 - LABELS) * sc.log_expit(-z))


def logistic_loglik_p(w):
    p = sc.expit(X @ w)
    return np.sum(sc.xlogy(LABELS, p) + sc.xlogy(1.0 - LABELS, 1.0 - p))


def test_logistic_regression():
    w = np.array([0.5, -1.0, 0.25])
    check_grads(logistic_loglik, (w,), order=2, modes=("rev", "fwd"))
    check_grads(logistic_loglik_p, (w,), order=2, modes=("rev", "fwd"))
    # The two spellings agree, and so do their gradients: X^T (y - p).
    want = X.T @ (LABELS - sc.expit(X @ w))
    np.testing.assert_allclose(wengert.grad(logistic_loglik)(w), want, rtol=1e-10)
    np.testing.assert_allclose(wengert.grad(logistic_loglik_p)(w), want, rtol=1e-10)


DATA = np.array([-1.2, 0.3, 2.2, 0.8, -0.4, 1.7])


def mixture_loglik(logits, mu, log_sigma):
    # A Gaussian mixture: the weights enter logsumexp as b=, the means and scales as a.
    weights = sc.softmax(logits)
    z = (DATA[:, None] - mu) / np.exp(log_sigma)
    comp = -0.5 * z * z - log_sigma - 0.5 * math.log(2.0 * math.pi)
    return np.sum(sc.logsumexp(comp, axis=1, b=weights))


def mixture_loglik_logs(logits, mu, log_sigma):
    # The same with the weights' logs added to the exponents (log_softmax).
    z = (DATA[:, None] - mu) / np.exp(log_sigma)
    comp = -0.5 * z * z - log_sigma - 0.5 * math.log(2.0 * math.pi)
    return np.sum(sc.logsumexp(comp + sc.log_softmax(logits), axis=1))


def test_gaussian_mixture():
    args = (np.array([0.2, -0.1, 0.4]), np.array([-1.0, 0.5, 2.0]), np.array([0.1, -0.3, 0.2]))
    check_grads(mixture_loglik, args, order=2, modes=("rev", "fwd"))
    assert mixture_loglik(*args) == pytest.approx(mixture_loglik_logs(*args), rel=1e-12)
    for g, h in zip(wengert.grad(mixture_loglik, argnums=(0, 1, 2))(*args),
                    wengert.grad(mixture_loglik_logs, argnums=(0, 1, 2))(*args), strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)


ANGLES = np.array([0.3, -0.5, 1.1, 0.2])
TIMES = np.array([0.7, 1.9, 3.2, 0.4])


def von_mises_loglik(mu, kappa):
    # log(exp(kappa cos(x - mu)) / (2 pi I0(kappa))), with the scaled I0 (no overflow).
    return np.sum(kappa * (np.cos(ANGLES - mu) - 1.0) - np.log(2.0 * np.pi * sc.i0e(kappa)))


def censored_gamma_loglik(log_scale):
    # Right-censored Gamma(2.5) survival times: log P(T > t) = log Q(2.5, t / scale) with a
    # float shape held constant (its derivative, which has no closed form, is not asked).
    scale = np.exp(log_scale)
    return np.sum(np.log(sc.gammaincc(2.5, TIMES / scale)))


def test_von_mises_and_censored_gamma():
    check_grads(von_mises_loglik, (0.2, 1.5), order=2, modes=("rev", "fwd"))
    check_grads(von_mises_loglik, (0.2, np.array([1.5, 0.7, 3.0, 2.0])), order=2,
                modes=("rev", "fwd"))
    check_grads(censored_gamma_loglik, (0.3,), order=2, modes=("rev", "fwd"))


def test_bessel_functions_of_constant_orders():
    def f(x):
        return sc.jv(1.5, x) * sc.yv(2, x) + sc.iv(np.array([0.5, 2.0]), x) + sc.ive(0, x)

    check_grads(f, (1.3,), order=2, modes=("rev", "fwd"))
    # x sits where the recurrences are exact: Jv' = (J(v-1) - J(v+1)) / 2 at order 1.5.
    g = wengert.grad(lambda x: sc.jv(1.5, x))(1.3)
    assert g == pytest.approx(sc.jvp(1.5, 1.3), rel=1e-12)
    assert wengert.grad(lambda x: sc.iv(3, x))(2.0) == pytest.approx(sc.ivp(3, 2.0), rel=1e-12)


# ------------------------------------------------------ the Python definitions' values

A = np.array([[0.3, -0.7, 1.1, 2.0], [0.5, 0.2, -1.4, 0.1], [1.5, -0.3, 0.0, 0.9]])
W = np.array([[1.0, 0.5, 2.0, 0.1], [0.3, 1.5, 0.7, 1.0], [0.0, 2.0, 1.0, 0.5]])
SIGNED = W * np.array([1.0, -1.0, 1.0, -1.0])

LSE_CALLS = [
    ((A,), {}),
    ((A,), {"axis": 0}),
    ((A,), {"axis": -1, "keepdims": True}),
    ((A,), {"axis": (0, 1)}),
    ((A,), {"axis": (1,), "keepdims": True}),
    ((A,), {"b": W}),
    ((A,), {"b": W, "axis": 1}),
    ((A,), {"b": W[0], "axis": 0, "keepdims": True}),
    ((A[0],), {"b": W, "axis": 1}),
    ((A,), {"b": 2.0}),
    ((A,), {"b": SIGNED, "axis": 1, "return_sign": True}),
    ((A,), {"b": SIGNED, "return_sign": True, "keepdims": True}),
    ((A,), {"b": SIGNED, "axis": 1}),  # (NaN where the sum is negative)
    ((A,), {"axis": 0, "return_sign": True}),
    ((0.7,), {}),
    ((0.7,), {"return_sign": True}),
    (([0.5, 1.0, -2.0],), {}),
    ((np.array([1, 2, 3]),), {}),
    ((A.astype(np.float32),), {"axis": 1}),
    ((A.astype(np.float32),), {"b": W, "axis": 1}),
    ((np.array([-np.inf, -np.inf, 0.0]),), {}),
    ((np.array([-np.inf, -np.inf]),), {}),
    ((np.array([np.inf, 1.0]),), {}),
    ((np.array([np.inf, 1.0, 2.0]),), {"b": np.array([0.0, 1.0, 1.0])}),
    ((np.array([1000.0, 1.0, 2.0]),), {"b": np.array([0.0, 1.0, 1.0])}),
    ((A * 300.0,), {"axis": 1}),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert type(got) is type(want), (type(got), type(want))
    assert np.shape(got) == np.shape(want)
    assert np.result_type(got) == np.result_type(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.result_type(want) == np.float32
                               else 1e-12, atol=0)


@pytest.mark.parametrize(("args", "kwargs"), LSE_CALLS)
def test_logsumexp_definition_is_scipys(args, kwargs):
    definition = registry.lookup(sc.logsumexp).python
    with np.errstate(invalid="ignore"):
        _same(definition(*args, **kwargs), sc.logsumexp(*args, **kwargs))


@pytest.mark.parametrize("fn", [sc.softmax, sc.log_softmax])
def test_softmax_definitions_are_scipys(fn):
    definition = registry.lookup(fn).python
    for args, kwargs in [((A,), {}), ((A,), {"axis": 0}), ((A,), {"axis": -1}),
                         ((A,), {"axis": (0, 1)}), ((0.7,), {}), (([0.5, 1.0],), {}),
                         ((A.astype(np.float32),), {"axis": 1}), ((A * 300.0,), {"axis": 1}),
                         ((np.array([-np.inf, 0.0, 1.0]),), {})]:
        _same(definition(*args, **kwargs), fn(*args, **kwargs))


def test_multigammaln_definition_is_scipys():
    definition = registry.lookup(sc.multigammaln).python
    for a, d in [(2.7, 3), (3.5, 1), (np.array([4.2, 5.0, 7.5]), 4)]:
        _same(definition(a, d), sc.multigammaln(a, d))
    for a, d in [(0.5, 3), (2.0, 1.5)]:
        with pytest.raises(ValueError) as theirs:
            sc.multigammaln(a, d)
        with pytest.raises(ValueError, match=theirs.value.args[0].replace("(", r"\(")
                           .replace(")", r"\)").replace(".", r"\.").replace("*", r"\*")):
            definition(a, d)


def test_logsumexp_through_wengert():
    # Values as SciPy's, and gradients: the softmax of the exponents (times the weights).
    def f(a, b):
        return sc.logsumexp(a, axis=1, b=b)

    value, pullback = wengert.vjp(f, A, W)
    _same(value, sc.logsumexp(A, axis=1, b=W))
    ga, gb = pullback(np.ones(3))
    share = W * np.exp(A - value[:, None])
    np.testing.assert_allclose(ga, share, rtol=1e-12)
    np.testing.assert_allclose(gb, np.exp(A - value[:, None]), rtol=1e-12)

    def signed(a):
        res, sgn = sc.logsumexp(a, axis=1, b=SIGNED, return_sign=True)
        return res * sgn

    check_grads(signed, (A,), order=2, modes=("rev", "fwd"))

    def listed(a):
        return sc.logsumexp([a, 2.0 * a, 1.0])

    check_grads(listed, (0.5,), order=2, modes=("rev", "fwd"))
    # A zero weight takes its term out, even an infinite one; its slope in b stays.
    grad_b = wengert.grad(lambda b: sc.logsumexp(np.array([0.3, 1.0, -0.5]), b=b))(
        np.array([1.0, 2.0, 0.0]))
    total = np.exp(0.3) + 2.0 * np.exp(1.0)
    np.testing.assert_allclose(grad_b, np.exp([0.3, 1.0, -0.5]) / total, rtol=1e-12)
    g = wengert.grad(lambda a: sc.logsumexp(a, b=np.array([1.0, 1.0, 0.0])))(
        np.array([0.3, 1.0, np.inf]))
    np.testing.assert_allclose(g, [np.exp(0.3) / (np.exp(0.3) + np.e),
                                   np.e / (np.exp(0.3) + np.e), 0.0], rtol=1e-12)


# ------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("fn", [sc.iv, sc.jv, sc.yv, sc.ive, sc.kv])
def test_no_derivative_in_a_float_order(fn):
    def f(v, x):
        return fn(v, x)

    name = fn.__name__
    with pytest.raises(wengert.NonDifferentiableError,
                       match=rf"scipy\.special\.{name} .* argument 'v'") as err:
        wengert.grad(f)(1.5, 1.3)
    # (located at the call)
    assert err.value.loc is not None and err.value.loc.line_text().strip() == \
        "return fn(v, x)"
    with pytest.raises(wengert.NonDifferentiableError, match="argument 'v'"):
        wengert.jvp(f, (1.5, 1.3), (1.0, 0.0))
    # The order held constant (an int, or a float not differentiated): x's derivative.
    assert wengert.grad(f, argnums=1)(1.5, 1.3) == pytest.approx(
        (fn(1.5, 1.3 + 1e-6) - fn(1.5, 1.3 - 1e-6)) / 2e-6, rel=1e-7)
    assert wengert.grad(lambda x: fn(2, x))(1.3) == pytest.approx(
        (fn(2, 1.3 + 1e-6) - fn(2, 1.3 - 1e-6)) / 2e-6, rel=1e-7)


def test_no_derivative_in_the_other_arguments():
    cases = [
        (lambda a, x: sc.betainc(a, 1.5, x), (2.5, 0.3), "betainc", "a"),
        (lambda b, x: sc.betainc(2.5, b, x), (1.5, 0.3), "betainc", "b"),
        (lambda a, x: sc.gammainc(a, x), (2.5, 1.3), "gammainc", "a"),
        (lambda a, x: sc.gammaincc(a, x), (2.5, 1.3), "gammaincc", "a"),
        (lambda s, q: sc.zeta(s, q), (2.5, 1.3), "zeta", "x"),
    ]
    for f, args, name, arg in cases:
        with pytest.raises(wengert.NonDifferentiableError,
                           match=rf"scipy\.special\.{name} .* argument '{arg}'"):
            wengert.grad(f)(*args)
        h = 1e-6
        x, y = args
        assert wengert.grad(f, argnums=1)(x, y) == pytest.approx(
            (f(x, y + h) - f(x, y - h)) / (2 * h), rel=1e-6)
    with pytest.raises(wengert.NonDifferentiableError, match="argument 'x'"):
        wengert.grad(lambda s: sc.zeta(s))(3.0)  # (Riemann's)
    assert wengert.grad(lambda q: sc.zeta(3, q))(1.5) == pytest.approx(-3.0 * sc.zeta(4, 1.5))


def test_import_wengert_does_not_import_scipy():
    code = "import sys, wengert; assert 'scipy' not in sys.modules, 'scipy imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _bessel_of_constant_orders(x):
    return sc.iv(1, x) * sc.jv(1.5, x) + sc.gammainc(2.5, x)


def test_constant_orders_generate_no_refusal():
    # The partial in an order held constant is never generated, in either mode.
    for mode in ("vjp", "jvp"):
        assert "_no_closed_form" not in wengert.show(_bessel_of_constant_orders, mode=mode)


def test_xlogy_conventions():
    # xlogy(0, y) is 0 for every y: slope log(y) in x, 0 in y (also at y == 0).
    def f(x, y):
        return sc.xlogy(x, y) + sc.xlog1py(x, y - 1.0)

    gx, gy = wengert.grad(f, argnums=(0, 1))(0.0, 0.5)
    assert gx == pytest.approx(math.log(0.5) + math.log1p(-0.5)) and gy == 0.0
    with np.errstate(divide="ignore"):
        gx, gy = wengert.grad(lambda x, y: sc.xlogy(x, y), argnums=(0, 1))(0.0, 0.0)
    assert gx == -np.inf and gy == 0.0
    check_grads(f, (0.0, 0.5), order=2, modes=("rev", "fwd"))
