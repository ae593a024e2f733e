"""numpy.linalg written the way a NumPy user writes it: log-determinants, linear solves in
a loss, inverses, spectra of symmetric matrices built from parameters, least-squares fits,
factorisations; each checked against central differences in both modes to second order,
on single matrices and stacks. The rules themselves are checked case by case in
tests/rules/test_form.py."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads

rng = np.random.default_rng(20240611)
A = rng.standard_normal((3, 3))
B = rng.standard_normal((3, 3))
b = rng.standard_normal(3)
STACK = rng.standard_normal((2, 3, 3))
TALL = rng.standard_normal((5, 3))
WIDE = rng.standard_normal((2, 4))
I3 = np.eye(3)


def check(f, *args, order=2):
    check_grads(f, args, order=order, modes=("rev", "fwd"), rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------------- det, slogdet, inv, solve


def test_log_det_of_a_gram_matrix():
    def f(A):
        return np.log(np.linalg.det(A @ A.T + np.eye(3)))

    check(f, A)


def test_det_of_a_stack_and_of_a_matrix_with_negative_determinant():
    def f(A):
        return np.sum(np.linalg.det(A) ** 2)

    def g(A):
        return np.linalg.det(A) * 2.0

    check(f, STACK)
    neg = np.diag([1.0, 2.0, -3.0]) + 0.1 * B
    assert np.linalg.det(neg) < 0
    check(g, neg)


def test_slogdet_unpacked_indexed_and_by_field():
    def unpacked(A):
        sign, logdet = np.linalg.slogdet(A @ A.T + np.eye(3))
        return logdet

    def by_field(A):
        return np.linalg.slogdet(A).logabsdet

    def signed(A):
        res = np.linalg.slogdet(A)
        return res[0] * np.exp(res[1])  # det(A): sign times |det|

    check(unpacked, A)
    check(by_field, A + 3 * I3)
    check(signed, A)
    check(lambda S: np.sum(np.linalg.slogdet(S)[1]), STACK)


def test_slogdet_matches_the_inverse_transpose():
    # d log|det A| / dA = A^-T, a textbook identity.
    M = A + 3 * I3
    g = wengert.grad(lambda A: np.linalg.slogdet(A)[1])(M)
    np.testing.assert_allclose(g, np.linalg.inv(M).T, rtol=1e-10)


def test_hessian_of_log_det():
    # The second derivative of log det A in directions H, K is -tr(A^-1 H A^-1 K).
    M = A + 3 * I3
    H = wengert.hessian(lambda A: np.linalg.slogdet(A)[1])(M)
    K = B
    Minv = np.linalg.inv(M)
    expected = -(Minv @ K @ Minv).T  # the Hessian applied to K, as a matrix in H
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", H, K), expected, rtol=1e-9)
    H_det = wengert.hessian(lambda A: np.log(np.linalg.det(A)))(M)
    np.testing.assert_allclose(H_det, H, rtol=1e-9, atol=1e-12)


def test_sum_of_inverse_times_weights():
    def f(A, B):
        return np.sum(np.linalg.inv(A + 3 * np.eye(3)) * B)

    check(f, A, B)
    check(lambda S: np.sum(np.sin(np.linalg.inv(S + 3 * np.eye(3)))), STACK)


def test_solving_a_linear_system_inside_a_loss():
    def residual_loss(A, b):
        x = np.linalg.solve(A @ A.T + np.eye(3), b)
        return np.sum(x * x)

    def matrix_rhs(A, B):
        X = np.linalg.solve(A + 3 * np.eye(3), B[:, :2])
        return np.sum(np.sin(X))

    check(residual_loss, A, b)
    check(matrix_rhs, A, B)


def test_solve_with_stacks_broadcast_against_one_right_hand_side():
    def f(S, B):
        X = np.linalg.solve(S + 3 * np.eye(3), B)  # (2, 3, 3) against (3, 2)
        return np.sum(X * X)

    def g(S, B):
        return np.sum(np.tanh(np.linalg.solve(S[0] + 3 * np.eye(3), B)))  # one against many

    check(f, STACK, B[:, :2])
    check(g, STACK, rng.standard_normal((2, 3, 2)))


# ------------------------------------------------------------------ cholesky, eigh, eigvalsh


def test_gaussian_log_likelihood_through_cholesky():
    def nll(log_scale, X, y):
        K = np.exp(log_scale) * (X @ X.T) + np.eye(4)
        L = np.linalg.cholesky(K)
        alpha = np.linalg.solve(L, y)
        return 0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.sum(L * np.eye(4), axis=1)))

    check(nll, 0.3, rng.standard_normal((4, 2)), rng.standard_normal(4))


def test_cholesky_reads_one_triangle():
    # NumPy reads the lower triangle (the upper with upper=True) and ignores the other:
    # entries it never reads have no derivative.
    S = A @ A.T + np.eye(3)
    lower_only = np.tril(S) + np.triu(B, 1)
    upper_only = np.triu(S) + np.tril(B, -1)

    def f(S):
        return np.sum(np.linalg.cholesky(S) ** 3)

    def g(S):
        return np.sum(np.sin(np.linalg.cholesky(S, upper=True)))

    check(f, lower_only)
    check(g, upper_only)
    assert np.all(np.triu(wengert.grad(f)(lower_only), 1) == 0)
    assert np.all(np.tril(wengert.grad(g)(upper_only), -1) == 0)


def test_cholesky_of_a_stack():
    def f(G):
        L = np.linalg.cholesky(G @ np.swapaxes(G, -1, -2) + np.eye(3))
        return np.sum(L * L * L)

    check(f, STACK)


_E = [np.diag([1.0, -1.0, 0.0]),
      np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
      np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
      np.diag([0.0, 1.0, 3.0])]


def test_eigenvalues_of_a_symmetric_matrix_built_from_parameters():
    def spectrum(p):
        S = p[0] * _E[0] + p[1] * _E[1] + p[2] * _E[2] + _E[3]
        w = np.linalg.eigvalsh(S)
        return np.sum(w * np.array([1.0, 2.0, 3.0]))

    def top_mode(p):
        S = p[0] * _E[0] + p[1] * _E[1] + p[2] * _E[2] + _E[3]
        w, V = np.linalg.eigh(S)
        return w[2] + np.sum(V[:, 2] ** 4)  # the eigenvector's sign cancels

    check(spectrum, np.array([0.3, 0.5, -0.2]))
    check(top_mode, np.array([0.3, 0.5, -0.2]))


def test_eigh_of_a_stack_by_field_and_with_uplo():
    def f(M):
        res = np.linalg.eigh(M + np.swapaxes(M, -1, -2))
        return np.sum(np.sin(res.eigenvalues)) + np.sum(res.eigenvectors ** 2 * 0.5)

    def g(M):
        w, V = np.linalg.eigh(M, UPLO="U")
        return np.sum(w * w) + np.sum(V ** 4)

    check(f, STACK)
    check(g, A @ A.T + np.diag([0.0, 2.0, 5.0]) + np.tril(B, -1))
    assert np.all(np.tril(wengert.grad(g)(A + np.diag([0.0, 2.0, 5.0])), -1) == 0)


def test_eigenvalues_at_a_repeated_eigenvalue():
    # The eigenvalues of diag(1, 1, 2) have a gradient (the diagonal projectors) even
    # though the eigenvectors of the repeated one do not: only the values are used.
    S = np.diag([1.0, 1.0, 2.0])

    def f(S):
        w, V = np.linalg.eigh(S)
        return np.sum(w * w)

    expected = np.diag([2.0, 2.0, 4.0])
    np.testing.assert_allclose(wengert.grad(f)(S), expected, atol=1e-12)
    np.testing.assert_allclose(wengert.grad(lambda S: np.sum(np.linalg.eigvalsh(S) ** 2))(S),
                               expected, atol=1e-12)


# -------------------------------------------------------------------------------- qr, svd


def test_qr_of_square_tall_and_stacked_matrices():
    def f(M):
        Q, R = np.linalg.qr(M)
        return np.sum(np.sin(Q)) + np.sum(R * R * R)

    def r_only(M):
        return np.sum(np.linalg.qr(M, mode="r") ** 2 * np.arange(3.0))

    check(f, A)
    check(f, TALL)
    check(f, rng.standard_normal((2, 4, 3)))
    check(lambda M: np.sum(np.linalg.qr(M).Q[:, 0] * np.arange(5.0)), TALL)
    check(r_only, TALL)


def test_svd_factors_and_singular_values():
    def f(M):
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        return np.sum(np.sin(U)) + np.sum(s * s * s) + np.sum(np.tanh(Vt))

    def nuclear_norm(M):
        return np.sum(np.linalg.svd(M, compute_uv=False))

    check(f, TALL)
    check(f, WIDE)
    check(f, rng.standard_normal((2, 3, 4)))
    check(lambda M: np.sum(np.linalg.svd(M).S ** 2 * np.arange(3.0)), A)  # square: full
    check(nuclear_norm, TALL)
    check(lambda M: np.sum(np.linalg.svdvals(M) ** 3), STACK)


def test_the_nuclear_norm_gradient_is_u_vt():
    # d sum(s) / dA = U V^T for a matrix of full rank (a textbook identity).
    U, _, Vt = np.linalg.svd(TALL, full_matrices=False)
    g = wengert.grad(lambda M: np.sum(np.linalg.svd(M, compute_uv=False)))(TALL)
    np.testing.assert_allclose(g, U @ Vt, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------ pinv and lstsq


def test_pinv_of_tall_wide_and_stacked_matrices():
    def f(M):
        return np.sum(np.sin(np.linalg.pinv(M)))

    check(f, TALL)
    check(f, WIDE)
    check(f, STACK)
    check(lambda M: np.sum(np.linalg.pinv(M, rtol=1e-10) ** 2), TALL)


def test_a_least_squares_fit():
    # Fit a line to data that depend on parameters; the loss reads the fitted slope.
    t = np.linspace(0.0, 1.0, 6)
    V = np.stack([np.ones(6), t], axis=1)

    def fitted_slope(theta):
        y = np.sin(theta[0] * t) + theta[1] * t * t
        coef, res, rank, sv = np.linalg.lstsq(V, y, rcond=None)
        return coef[1] * coef[1] + coef[0]

    check(fitted_slope, np.array([1.3, -0.4]))


def test_lstsq_in_the_design_matrix_with_residuals_and_singular_values():
    def solution(M, y):
        x, res, rank, sv = np.linalg.lstsq(M, y)
        return np.sum(np.sin(x))  # not |x|^2: its derivative misses a part orthogonal to x

    def residuals(M, y):
        x, res, rank, sv = np.linalg.lstsq(M, y)
        return np.sum(res) + np.sum(sv)

    def several(M, Y):
        return np.sum(np.sin(np.linalg.lstsq(M, Y, rcond=1e-12)[0]))

    y = rng.standard_normal(5)
    check(solution, TALL, y)
    check(residuals, TALL, y)
    check(several, TALL, rng.standard_normal((5, 2)))
    check(solution, WIDE, rng.standard_normal(2))  # the minimum-norm solution


def test_lstsq_residuals_are_empty_for_an_underdetermined_problem():
    x, res, rank, sv = wengert.jvp(lambda M: np.linalg.lstsq(M, np.ones(2)), (WIDE,),
                                   (np.ones((2, 4)),))[0]
    assert res.shape == (0,) and rank == 2


# -------------------------------------------------------------------- compositions


def test_matrix_power_positive_zero_and_negative():
    def f(M):
        return (np.sum(np.linalg.matrix_power(M, 3)) + np.sum(np.linalg.matrix_power(M, 0))
                + np.sum(np.linalg.matrix_power(M + 3 * np.eye(3), -2)))

    check(f, A)
    check(lambda S: np.sum(np.linalg.matrix_power(S, 2) ** 2), STACK)


def test_matrix_power_with_a_variable_exponent():
    def f(M, k):
        return np.sum(np.linalg.matrix_power(M, k))

    check(f, A, 3, order=1)
    # d sum(M^3) / dM = J (M^2)^T + M^T J M^T + (M^2)^T J, with J all ones.
    J = np.ones((3, 3))
    M2t = (A @ A).T
    np.testing.assert_allclose(wengert.grad(f)(A, 3), J @ M2t + A.T @ J @ A.T + M2t @ J,
                               rtol=1e-10)


def test_multi_dot_and_the_array_api_spellings():
    def f(A, B, b):
        return np.sum(np.linalg.multi_dot([A, B, A, b]))

    def g(A, B):
        return np.sum(np.linalg.matmul(A, B) * np.linalg.matrix_transpose(B))

    check(f, A, B, b)
    check(g, A, B)
    check(lambda S: np.sum(np.linalg.matrix_transpose(S) * S[::-1]), STACK)
    check(lambda S: np.sum(np.linalg.trace(S) ** 2 + np.linalg.trace(S, offset=1)), STACK)
    check(lambda S: np.sum(np.sin(np.linalg.diagonal(S, offset=-1))), STACK)
    check(lambda v, w: np.sum(np.sin(np.linalg.outer(v, w))), b, B[0])
    check(lambda S, v: np.sum(np.linalg.vecdot(S, v) ** 2), STACK, b)
    check(lambda S: np.sum(np.sin(np.linalg.tensordot(S, S[0]))), STACK)


def test_matrix_rank_carries_no_derivative():
    def f(M):
        return np.sum(M * M) * np.linalg.matrix_rank(M)

    check(f, A)


def test_float32_stays_float32():
    M = (A @ A.T + I3).astype(np.float32)
    for f in (lambda M: np.sum(np.linalg.inv(M)), lambda M: np.linalg.det(M),
              lambda M: np.sum(np.linalg.eigh(M)[1]), lambda M: np.sum(np.linalg.svd(M)[1]),
              lambda M: np.sum(np.linalg.cholesky(M)), lambda M: np.sum(np.linalg.qr(M)[0])):
        assert wengert.grad(f)(M).dtype == np.float32


def test_jacobians_of_matrix_valued_functions():
    # Jacobians push a batch of tangents (cotangents) through the rules at once.
    M = A + 3 * I3
    for f in (np.linalg.inv, lambda M: np.linalg.eigh(M + M.T)[0],
              lambda M: np.linalg.qr(M)[1], lambda M: np.linalg.solve(M, b)):
        jf = wengert.jacfwd(f)(M)
        jr = wengert.jacrev(f)(M)
        out = f(M)
        numeric = np.zeros(out.shape + M.shape)
        for i in range(3):
            for j in range(3):
                d = np.zeros((3, 3))
                d[i, j] = 1e-6
                numeric[..., i, j] = (f(M + d) - f(M - d)) / 2e-6
        np.testing.assert_allclose(jf, numeric, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(jr, numeric, rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(("f", "x", "message"), [
    (lambda M: np.sum(np.linalg.qr(M)[1]), WIDE, "wide matrix"),
    (lambda M: np.sum(np.linalg.qr(M, mode="complete")[0]), TALL, "mode='complete'"),
    (lambda M: np.sum(np.linalg.qr(M, mode="raw")[0]), A, "mode='raw'"),
    (lambda M: np.sum(np.linalg.svd(M)[0]), TALL, "full_matrices=True"),
    (lambda M: np.sum(np.linalg.svd(M, hermitian=True)[1]), A @ A.T, "hermitian=True"),
    (lambda M: np.sum(np.linalg.pinv(M, hermitian=True)), A @ A.T, "hermitian=True"),
])
def test_unsupported_forms_are_refused_in_both_modes(f, x, message):
    for run in (lambda: wengert.grad(f)(x), lambda: wengert.jvp(f, (x,), (np.ones_like(x),))):
        with pytest.raises(TypeError, match=f"error: .*{message}") as e:
            run()
        assert e.value.loc is not None and e.value.loc.filename == __file__


def test_refused_forms_still_run_when_not_differentiated():
    # The refusal belongs to the derivative: an inactive call computes as NumPy does.
    def f(x):
        Q, R = np.linalg.qr(WIDE)
        return x * np.sum(R)

    assert wengert.grad(f)(2.0) == pytest.approx(np.sum(np.linalg.qr(WIDE)[1]))


def test_a_singular_matrix_is_an_error_not_a_number():
    def f(M):
        return np.sum(np.linalg.inv(M))

    with pytest.raises(np.linalg.LinAlgError):
        wengert.grad(f)(np.ones((3, 3)))
