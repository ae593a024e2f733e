"""Randomly generated float programs in forward mode: JVPs, Jacobians, Hessians.

The forward-mode counterpart of ``test_vjp_random.py``, on programs of the same
generator (``tests/frontend/random_programs.py``):

* ``wengert.jvp`` against central differences: along each argument, against the
  differences that :func:`random_programs.smooth_point` checked with two step sizes,
  and :func:`wengert.testing.check_grads` in both modes in random directions;
* ``wengert.jacfwd`` (one batched pass, one direction per argument) against the
  single-direction ``wengert.jvp`` passes, stacked, for several ``argnums``, for
  float and pair results (JAX's layout);
* the dot-product identity ⟨v, J·u⟩ = ⟨Jᵀ·v, u⟩ between ``wengert.jvp`` and
  ``wengert.vjp`` for random ``u`` and ``v``;
* ``wengert.hessian`` and ``wengert.hvp`` (forward over reverse) against central
  differences of ``wengert.grad``.

JVPs and Jacobians are checked on programs of grammar ``SMOOTH`` (the programs of the
reverse-mode tests: containers, helpers, a lambda, every kind of control flow) and
``PAIR_SMOOTH`` (the same, with a pair of floats as the result). Hessians are checked
on grammar ``SCALAR_SMOOTH``: the same control flow and float arithmetic, but no
lists, dicts, lambdas, tuple assignment, int constants or helper calls that rely on
default arguments (see its comment: forward over reverse refuses them today).

As in the reverse-mode tests, the evaluation point is drawn from a seeded generator,
and a point where finite differences with two step sizes disagree (next to a kink or a
jump of the program, or of its gradient for Hessians) is replaced by another one.
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from random_programs import (
    PAIR_SMOOTH,
    PARAMS,
    SCALAR_SMOOTH,
    SMOOTH,
    assert_bounded_float_program,
    close,
    derandomized,
    load_function,
    programs,
    smooth_point,
    smooth_points,
)
from test_vjp_random import HANDWRITTEN

import wengert
from wengert.testing import check_grads

SEEDS = st.integers(0, 2**32 - 1)
UNITS = tuple(tuple(1.0 if j == i else 0.0 for j in range(3)) for i in range(3))


@contextlib.contextmanager
def checking(label: str):
    """Name the program and point in any failure; a crash of wengert is a failure too."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wengert.NonDifferentiableWarning)
        try:
            yield
        except AssertionError as e:
            raise AssertionError(f"{e}\nfor {label}") from None
        except Exception as e:
            raise AssertionError(f"{type(e).__name__}: {e}\nfor {label}") from e


def prepare(source: str, seed: int):
    """The program's ``f``, a point where it is smooth, its derivatives there, a label."""
    f = load_function(source)
    found = smooth_point(f, seed)
    # Only when every try lands next to a kink or jump: there is no derivative to
    # compare, so this example says nothing.
    assume(found is not None)
    args, numeric = found
    return f, args, numeric, f"program\n{source}\nat {args!r}"


def same_value(value: float, expected: float) -> bool:
    return value == expected or math.isclose(value, expected, rel_tol=1e-12)


# --------------------------------------------------------------------------
# JVPs against central differences
# --------------------------------------------------------------------------


@derandomized(max_examples=30)
@given(source=programs(SMOOTH), seed=SEEDS)
def test_random_programs_jvp_matches_central_differences(source, seed):
    f, args, numeric, label = prepare(source, seed)
    expected = f(*args)
    scale = max(1.0, abs(expected))
    with checking(label):
        for i, unit in enumerate(UNITS):
            value, tangent = wengert.jvp(f, copy.deepcopy(args), unit)
            assert same_value(value, expected), f"wengert.jvp value {value!r} != {expected!r}"
            assert type(tangent) is float, f"the tangent {tangent!r} is not a float"
            assert close(tangent, numeric[i], scale), (
                f"d f / d {PARAMS[i]}: wengert.jvp gives {tangent!r}, central differences "
                f"give {numeric[i]!r}")
        check_grads(f, args, modes=("rev", "fwd"), seed=seed)


# --------------------------------------------------------------------------
# Batched tangents: jacfwd against stacked single JVPs
# --------------------------------------------------------------------------


ARGNUMS = st.sampled_from([(0, 1, 2), (2, 0), (1,), 0, 2, -1])


@derandomized(max_examples=30)
@given(source=programs(SMOOTH), seed=SEEDS, argnums=ARGNUMS)
def test_random_programs_jacfwd_is_stacked_jvps(source, seed, argnums):
    """One batched pass (a direction per argument) equals the single JVPs: a float for an
    int ``argnums``, a tuple of floats for a tuple."""
    f, args, numeric, label = prepare(source, seed)
    scale = max(1.0, abs(f(*args)))
    nums = (argnums,) if isinstance(argnums, int) else argnums
    with checking(f"{label} with argnums={argnums!r}"):
        jac = wengert.jacfwd(f, argnums=argnums)(*copy.deepcopy(args))
        singles = [wengert.jvp(f, copy.deepcopy(args), UNITS[i])[1] for i in nums]
        got = (jac,) if isinstance(argnums, int) else jac
        assert isinstance(got, tuple) and len(got) == len(nums), (
            f"jacfwd gives {jac!r}: expected one float per argnum in {argnums!r}")
        for m, i in enumerate(nums):
            assert type(got[m]) is float, f"jacfwd entry {got[m]!r} is not a float"
            assert math.isclose(got[m], singles[m], rel_tol=1e-9, abs_tol=1e-12), (
                f"d f / d {PARAMS[i]}: the batched pass of jacfwd gives {got[m]!r}, the "
                f"single JVP gives {singles[m]!r}")
            assert close(got[m], numeric[i], scale), (
                f"d f / d {PARAMS[i]}: jacfwd gives {got[m]!r}, central differences give "
                f"{numeric[i]!r}")


@derandomized(max_examples=20)
@given(source=programs(PAIR_SMOOTH), seed=SEEDS, argnums=ARGNUMS)
def test_random_programs_jacfwd_of_pairs_is_stacked_jvps(source, seed, argnums):
    """The same for a pair output, laid out as in JAX (``out.shape + in.shape``): a pair
    ``(d out_0, d out_1)``, each a float for an int ``argnums`` and a tuple over a tuple."""
    f, args, numeric, label = prepare(source, seed)
    scale = max(1.0, *map(abs, f(*args)))
    nums = (argnums,) if isinstance(argnums, int) else argnums
    with checking(f"{label} with argnums={argnums!r}"):
        jac = wengert.jacfwd(f, argnums=argnums)(*copy.deepcopy(args))
        singles = [wengert.jvp(f, copy.deepcopy(args), UNITS[i])[1] for i in nums]
        assert isinstance(jac, tuple) and len(jac) == 2, (
            f"jacfwd gives {jac!r}: expected one entry per output (a pair)")
        for k in range(2):
            row = (jac[k],) if isinstance(argnums, int) else jac[k]
            assert isinstance(row, tuple) and len(row) == len(nums), (
                f"jacfwd gives {jac!r}: expected entry {k} (output {k}) to be a "
                f"{'float' if isinstance(argnums, int) else 'tuple of floats, one per argnum'}")
            for m, i in enumerate(nums):
                assert type(row[m]) is float, f"jacfwd entry {row[m]!r} is not a float"
                assert math.isclose(row[m], singles[m][k], rel_tol=1e-9, abs_tol=1e-12), (
                    f"d out_{k} / d {PARAMS[i]}: the batched pass of jacfwd gives {row[m]!r}, "
                    f"the single JVP gives {singles[m][k]!r} (jacfwd: {jac!r})")
                assert close(row[m], numeric[i][k], scale), (
                    f"d out_{k} / d {PARAMS[i]}: jacfwd gives {row[m]!r}, central differences "
                    f"give {numeric[i][k]!r}")


# --------------------------------------------------------------------------
# Forward mode is the transpose of reverse mode
# --------------------------------------------------------------------------


@derandomized(max_examples=30)
@given(source=programs(PAIR_SMOOTH), seed=SEEDS)
def test_random_programs_jvp_is_the_transpose_of_vjp(source, seed):
    f, args, _, label = prepare(source, seed)
    rng = numpy.random.default_rng(seed)
    with checking(label):
        _, pullback = wengert.vjp(f, *copy.deepcopy(args))
        for _ in range(2):
            u = tuple(float(t) for t in rng.normal(size=3))
            v = tuple(float(t) for t in rng.normal(size=2))
            _, tangent = wengert.jvp(f, copy.deepcopy(args), u)
            cotangents = pullback(v)
            terms = [c * t for c, t in zip(cotangents, u)]
            out_terms = [w * t for w, t in zip(v, tangent)]
            lhs, rhs = sum(out_terms), sum(terms)
            # Both are exact derivatives, computed in different orders: they may differ
            # by rounding only, relative to the size of the terms before cancellation.
            magnitude = max(1.0, sum(map(abs, out_terms)), sum(map(abs, terms)))
            assert abs(lhs - rhs) <= 1e-9 * magnitude, (
                f"<v, J u> = {lhs!r} (wengert.jvp) but <J^T v, u> = {rhs!r} (wengert.vjp) "
                f"for u = {u!r}, v = {v!r}: J u = {tangent!r}, J^T v = {cotangents!r}")


# --------------------------------------------------------------------------
# Hessians and Hessian-vector products against differences of the gradient
# --------------------------------------------------------------------------


def check_hessian(f, seed: int, label: str) -> bool:
    """``wengert.hessian`` and ``wengert.hvp`` of ``f`` against central differences of
    ``wengert.grad``, at a seeded point where the gradient is smooth; ``False`` when no
    such point was found (the gradient jumps at the kinks of ``f``)."""
    with checking(label):
        gradient = wengert.grad(f, argnums=(0, 1, 2))
        found = smooth_point(gradient, seed)
    if found is None:
        return False
    args, columns = found
    # numeric[i, j] = d/dx_j of the i-th entry of the gradient.
    numeric = numpy.array(columns).T
    scale = max(1.0, float(numpy.max(numpy.abs(gradient(*args)))))
    rng = numpy.random.default_rng(seed)
    with checking(f"{label}\nat {args!r}"):
        h = wengert.hessian(f, argnums=(0, 1, 2))(*copy.deepcopy(args))
        assert isinstance(h, tuple) and len(h) == 3 and all(
            isinstance(row, tuple) and len(row) == 3 and all(type(e) is float for e in row)
            for row in h), f"the Hessian {h!r} is not a 3 x 3 tuple of tuples of floats"
        h = numpy.array(h)
        assert close(h, numeric, scale), (
            f"wengert.hessian gives\n{h!r}\ncentral differences of wengert.grad give\n"
            f"{numeric!r}")
        assert numpy.allclose(h, h.T, rtol=1e-9, atol=1e-9 * scale), (
            f"the Hessian is not symmetric:\n{h!r}")
        d2 = wengert.hessian(f)(*copy.deepcopy(args))
        assert type(d2) is float and math.isclose(d2, h[0, 0], rel_tol=1e-9, abs_tol=1e-12), (
            f"hessian(f) (argnums=0) gives {d2!r}, the full Hessian has {h[0, 0]!r}")
        v = tuple(float(t) for t in rng.normal(size=3))
        hv = wengert.hvp(f, copy.deepcopy(args), v)
        assert isinstance(hv, tuple) and len(hv) == 3, f"hvp gives {hv!r}"
        assert numpy.allclose(hv, h @ v, rtol=1e-9, atol=1e-9 * scale), (
            f"wengert.hvp gives {hv!r} for v = {v!r}, the Hessian times v is {h @ v!r}")
        assert close(hv, numeric @ v, scale), (
            f"wengert.hvp gives {hv!r} for v = {v!r}, central differences of wengert.grad "
            f"give {numeric @ v!r}")
    return True


@derandomized(max_examples=20)
@given(source=programs(SCALAR_SMOOTH), seed=SEEDS)
def test_random_programs_hessian_matches_differences_of_grad(source, seed):
    assume(check_hessian(load_function(source), seed, f"program\n{source}"))


@pytest.mark.parametrize(("grammar", "outputs"), [(PAIR_SMOOTH, 2), (SCALAR_SMOOTH, 1)],
                         ids=["PAIR_SMOOTH", "SCALAR_SMOOTH"])
def test_generated_programs_are_bounded_float_programs(grammar, outputs):
    """The generator is sound: valid Python, terminating, results of moderate size."""

    @settings(max_examples=30, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(source=programs(grammar))
    def run(source):
        assert_bounded_float_program(source, outputs)

    run()


# --------------------------------------------------------------------------
# Handwritten programs
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_handwritten_programs(name):
    """The reverse-mode tests' handwritten programs, in forward mode."""
    f = load_function(HANDWRITTEN[name].lstrip("\n"))
    for seed, (args, numeric) in enumerate(smooth_points(f, name)):
        with checking(f"{name} at {args!r}"):
            jac = wengert.jacfwd(f, argnums=(0, 1, 2))(*args)
            for i, (j, n) in enumerate(zip(jac, numeric)):
                assert close(j, n, 1.0), f"d/d{PARAMS[i]}: jacfwd {j!r} vs {n!r}"
            check_grads(f, args, modes=("fwd",), seed=seed)


HESSIAN_HANDWRITTEN = {
    "design_example": HANDWRITTEN["design_example"],
    "loop_else_and_continue": HANDWRITTEN["loop_else_and_continue"],
    # Found by the generator: an in-place update of a float before a branch and in it.
    "inplace_update_before_and_in_branch": """
import math


def f(x, y, z):
    a = 0.0
    a += math.tanh(x)
    if y > 0.0:
        a += math.tanh(z)
    return a * y
""",
}


@pytest.mark.parametrize("name", sorted(HESSIAN_HANDWRITTEN))
def test_handwritten_hessians(name):
    f = load_function(HESSIAN_HANDWRITTEN[name].lstrip("\n"))
    for seed in range(3):
        assert check_hessian(f, seed, name), f"{name}: no point where the gradient is smooth"
