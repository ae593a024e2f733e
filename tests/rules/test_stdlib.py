"""The standard library people reach for on floats: math's special functions and the
statistics module, differentiated in both modes to second order, with the library's values
and its errors."""

from __future__ import annotations

import math
import statistics

import pytest

import wengert
from wengert.testing import check_grads


def sample(x):
    return [x, 2.0 * x, 1.0, math.sin(x)]


PROGRAMS = {
    "lgamma": (lambda x: math.lgamma(x) * x, (3.7,)),
    "lgamma_negative": (lambda x: math.lgamma(x), (-2.5,)),
    "gamma": (lambda x: math.gamma(x), (0.6,)),
    "mean": (lambda x: statistics.mean(sample(x)), (1.3,)),
    "fmean": (lambda x: statistics.fmean(sample(x)), (1.3,)),
    "fmean_weights": (lambda x: statistics.fmean(sample(x), [1.0, 2.0, 0.5, x]), (1.3,)),
    "variance": (lambda x: statistics.variance(sample(x)), (1.3,)),
    "variance_xbar": (lambda x: statistics.variance(sample(x), 0.5), (1.3,)),
    "pvariance": (lambda x: statistics.pvariance(sample(x)), (1.3,)),
    "stdev": (lambda x: statistics.stdev(sample(x)), (1.3,)),
    "pstdev": (lambda x: statistics.pstdev(sample(x)), (1.3,)),
    "sum_start": (lambda x: sum(sample(x), x * x), (1.3,)),
    "fsum": (lambda x: math.fsum(sample(x)), (1.3,)),
    "prod": (lambda x: math.prod(sample(x)), (1.3,)),
    "dist": (lambda x: math.dist([x, 1.0], [0.0, x * x]), (1.3,)),
    "divmod": (lambda x: divmod(x * 3.0, 0.7)[1] * x, (1.3,)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_stdlib_against_finite_differences(name):
    f, args = PROGRAMS[name]
    assert wengert.api.primal(f)(*args) == pytest.approx(f(*args), rel=1e-12)
    check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_the_digamma_function_is_lgammas_derivative():
    # psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 ln 2, psi'(1) = pi^2 / 6.
    euler = 0.5772156649015329
    assert wengert.grad(math.lgamma)(1.0) == pytest.approx(-euler, rel=1e-13)
    assert wengert.grad(math.lgamma)(0.5) == pytest.approx(-euler - 2 * math.log(2), rel=1e-13)
    assert wengert.grad(wengert.grad(math.lgamma))(1.0) == pytest.approx(math.pi ** 2 / 6,
                                                                         rel=1e-13)


def test_a_sample_too_short_raises_the_librarys_error():
    with pytest.raises(statistics.StatisticsError):
        wengert.grad(lambda x: statistics.variance([x]))(1.0)
    with pytest.raises(statistics.StatisticsError):
        wengert.grad(lambda x: x + statistics.mean([]))(1.0)
