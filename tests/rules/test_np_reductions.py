"""NumPy reductions and contractions as a user writes them: sums, means, products (zeros
included), extremes (ties), variances, averages, running sums and products, differences,
traces, norms, dot and its relatives, einsum; checked against central differences in
both modes to second order, against closed forms at the kinks and zeros where finite
differences cannot look, and for the forms that are refused."""

from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads

RNG = np.random.default_rng(7)
V = RNG.normal(size=4)
M = RNG.normal(size=(3, 4))
A = RNG.normal(size=(2, 3, 4))
# Zeros in several rows and columns: products through them must not divide.
Z = np.array([[0.5, 0.0, 1.5, -2.0], [0.0, 1.2, 0.0, 0.7], [1.1, -0.3, 0.9, 2.0]])


def check(f, *args):
    check_grads(f, args, order=2, modes=("rev", "fwd"))


def numerical_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


# ------------------------------------------------------------------------------ sums


def test_sum_axis_forms():
    def f(x):
        return (np.sum(x * x, axis=0) * np.sum(np.sin(x), axis=(0, -1), keepdims=True)[0]
                + np.sum(x, axis=-2)[0] * np.sum(x))

    check(f, A)


def test_sum_and_mean_methods():
    def f(x):
        return x * x.sum(axis=-1, keepdims=True) + x.mean(axis=0) * x.mean()

    check(f, M)
    check(lambda v: v.sum() * v + v.mean(keepdims=True), V)


def test_mean_axis_tuple_and_positional():
    def f(x):
        return np.mean(x * x, (0, 2)) * np.mean(x, 1, None, None, True)[0, :, 0]

    check(f, A)


# ---------------------------------------------------------------------------- products


def _others(x, axis):
    """The product of the other entries along ``axis``, by brute force."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty_like(x)
    for i in range(x.shape[-1]):
        out[..., i] = np.prod(np.delete(x, i, axis=-1), axis=-1)
    return np.moveaxis(out, -1, axis)


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    g = np.array([0.3, -0.7, 1.1])
    got = wengert.grad(lambda x: np.prod(x, axis=1) @ g)(Z)
    np.testing.assert_allclose(got, _others(Z, 1) * g[:, None], rtol=1e-12)
    # Row 1 has two zeros: the whole gradient of that row is zero, each entry exactly.
    assert np.all(got[1] == 0.0)
    got0 = wengert.grad(lambda x: np.sum(np.prod(x, axis=0)))(Z)
    np.testing.assert_allclose(got0, _others(Z, 0), rtol=1e-12)


def test_prod_with_zeros_to_second_order():
    check(lambda x: np.prod(x, axis=1), Z)
    check(lambda x: np.prod(x, axis=0, keepdims=True) * x, Z)
    check(lambda x: x.prod(), Z[:, :3])
    v = np.array([0.0, 1.5, -0.5])
    check(lambda x: np.prod(x), v)
    # The Hessian of a product with one zero entry: d2/dx0 dxk = product of the rest.
    h = wengert.hessian(lambda x: np.prod(x))(np.array([0.0, 2.0, 3.0]))
    np.testing.assert_allclose(h, [[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


def test_prod_axes():
    check(lambda x: np.prod(x, axis=(0, 2)) + np.sum(np.prod(x, axis=-1), axis=0), A)


# ---------------------------------------------------------------------------- extremes


def test_max_min_axes():
    def f(x):
        return np.max(x, axis=1) * np.min(x) + np.amax(x * x, axis=(0, 1), keepdims=True)[0, 0]

    check(f, A)
    check(lambda x: x.max(axis=0) + x.min(axis=1, keepdims=True), M)
    check(lambda x: np.amin(x, -1) * np.ptp(x, axis=0)[:3], M)
    check(lambda v: np.ptp(v * v) + np.max(v), V)


def test_max_ties_share_the_gradient_equally():
    x = np.array([1.0, 3.0, -2.0, 3.0, 3.0])
    np.testing.assert_allclose(wengert.grad(np.max)(x), [0, 1 / 3, 0, 1 / 3, 1 / 3])
    np.testing.assert_allclose(wengert.grad(lambda v: np.min(v))(-x), [0, 1 / 3, 0, 1 / 3, 1 / 3])
    m = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]])
    np.testing.assert_allclose(wengert.grad(lambda a: np.sum(np.max(a, axis=1)))(m),
                               [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    # Forward mode takes the same share of each tangent.
    _, t = wengert.jvp(np.max, (x,), (np.array([1.0, 2.0, 4.0, 8.0, 16.0]),))
    assert t == pytest.approx((2.0 + 8.0 + 16.0) / 3)
    # A constant array: max - min is flat.
    np.testing.assert_allclose(wengert.grad(np.ptp)(np.ones(3)), np.zeros(3))


def test_argmax_argmin_argsort_carry_no_derivative():
    def f(x):
        return x[np.argmax(x)] - 2.0 * x[x.argmin()] + x[np.argsort(x)[1]]

    g = wengert.grad(f)(V)
    expected = np.zeros(4)
    expected[np.argmax(V)] += 1.0
    expected[np.argmin(V)] -= 2.0
    expected[np.argsort(V)[1]] += 1.0
    np.testing.assert_allclose(g, expected)


# --------------------------------------------------------------- variance and average


def test_var_std_ddof_axes_keepdims():
    def f(x):
        return (np.var(x, axis=1) + np.std(x, axis=(0, 1), ddof=1, keepdims=True)[0]
                + np.var(x, ddof=2))

    check(f, A)
    check(lambda x: x.var(axis=0, ddof=1) * x.std(), M)
    check(lambda v: np.std(v, correction=1) + np.var(v, keepdims=True), V)


def test_average_with_weights():
    w = np.array([0.5, 1.0, 2.0, 0.25])
    check(lambda x, wt: np.average(x, axis=1, weights=wt * wt + 0.1), M, w)
    check(lambda x, wt: np.average(x, weights=wt), M, M * M + 0.5)
    # Weights along a tuple of axes, given in the order of the axis argument.
    check(lambda x, wt: np.average(x, axis=(2, 1), weights=wt, keepdims=True),
          A, M.T * M.T + 0.5)
    check(lambda x: np.average(x * x, axis=0), A)
    # The derivative with respect to the weights, in closed form.
    x = np.array([1.0, 2.0, 4.0])
    wt = np.array([1.0, 1.0, 2.0])
    got = wengert.grad(lambda ww: np.average(x, weights=ww))(wt)
    np.testing.assert_allclose(got, (x - np.average(x, weights=wt)) / wt.sum())


# ------------------------------------------------------------ running sums and products


def test_cumsum_axes():
    check(lambda x: np.cumsum(x * x, axis=1) * x, A)
    check(lambda x: np.cumsum(x) * np.cumsum(x), M)
    check(lambda x: x.cumsum(axis=-2) ** 2, M)


def test_cumprod_with_zeros_to_second_order():
    check(lambda x: np.cumprod(x, axis=1), Z)
    check(lambda x: np.cumprod(x, axis=0), Z)
    check(lambda x: np.cumprod(x), Z[:2])
    check(lambda x: x.cumprod(axis=-2), A)
    # d cumprod(x)[i] / d x[k] = the product of x[j], j <= i, j != k: at a zero too.
    x = np.array([2.0, 0.0, 3.0, 0.5])
    j = wengert.jacrev(np.cumprod)(x)
    expected = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0],
                         [0.0, 6.0, 0.0, 0.0], [0.0, 3.0, 0.0, 0.0]])
    np.testing.assert_allclose(j, expected)
    np.testing.assert_allclose(wengert.jacfwd(np.cumprod)(x), expected)


def test_diff():
    check(lambda x: np.diff(x * x, axis=1), A)
    check(lambda x: np.diff(x * x, n=2), M)
    check(lambda v: np.diff(np.sin(v), 3), V)


def test_diff_with_ends_joined():
    # ``prepend``/``append`` join the ends along the axis, a scalar as one slice (refused
    # before, at run time): every end, scalar or array, given or computed, differentiates.
    check(lambda v: np.diff(v * v, prepend=0.0), V)
    check(lambda v: np.diff(v, n=2, append=v[0] * 2.0, prepend=np.array([1.0, -v[1]])), V)
    check(lambda x: np.diff(np.sin(x), axis=0, prepend=x[:1] * x[1:2]), M)
    check(lambda x: np.diff(x, axis=1, append=x[:, :1]) ** 2, M)
    check(lambda x, c: np.diff(x, axis=-2, n=2, prepend=c), A, 0.3)
    for f, args in [(lambda v: np.diff(v, prepend=0.5, append=-1.0), (V,)),
                    (lambda x: np.diff(x, axis=0, append=x[:1]), (M,))]:
        np.testing.assert_allclose(wengert.jacrev(f)(*args),
                                   numerical_jacobian(f, *args), rtol=1e-6, atol=1e-8)


def test_trace():
    check(lambda x: np.trace(x @ x.T), M)
    check(lambda x: np.trace(x * x, offset=1, axis1=1, axis2=2), A)
    check(lambda x: np.trace(x, -1, 2, 0), A)
    check(lambda x: x.trace(offset=-1) * x.trace(), M)


# ------------------------------------------------------------------------------- norms


def test_vector_norms():
    def f(x):
        return (np.linalg.norm(x) + np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf)
                + np.linalg.norm(x, -np.inf) + np.linalg.norm(x, 3) + np.linalg.norm(x, 2.5)
                + np.linalg.norm(x, ord=2))

    check(f, V)
    check(lambda x: np.linalg.norm(x, axis=1) * np.linalg.norm(x, axis=(0, 1), keepdims=True)[0],
          A)
    check(lambda x: np.linalg.norm(x, ord=1, axis=-1, keepdims=True) * x, M)
    # ord=0 counts the nonzero entries: piecewise constant.
    np.testing.assert_allclose(wengert.grad(lambda x: np.linalg.norm(x, 0) * x[0])(V),
                               [4.0, 0.0, 0.0, 0.0])


def test_matrix_norms():
    def f(x):
        return (np.linalg.norm(x, "fro") + np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf)
                + np.linalg.norm(x, -1) + np.linalg.norm(x, -np.inf) + np.linalg.norm(x))

    check(f, M)
    check(lambda x: np.linalg.norm(x, 1, axis=(2, 0)), A)
    check(lambda x: np.linalg.norm(x, np.inf, axis=(0, 1), keepdims=True)[0, 0] * x[0, 0], A)
    check(lambda x: np.linalg.norm(x, axis=(1, 2)), A)


def test_norm_at_zero_has_the_subgradient_zero():
    # Our choice (JAX returns NaN there): the gradient at the zero vector is 0.
    for ord in (None, 2, 1, 3, np.inf):
        np.testing.assert_array_equal(wengert.grad(lambda x: np.linalg.norm(x, ord))(np.zeros(3)),
                                      np.zeros(3))
    np.testing.assert_array_equal(
        wengert.grad(lambda x: np.sum(np.linalg.norm(x, axis=1)))(np.zeros((2, 3))),
        np.zeros((2, 3)))
    # A zero row next to a nonzero one: the zero row gets 0, the other x / |x|.
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(
        wengert.grad(lambda a: np.sum(np.linalg.norm(a, axis=1)))(x), [[0, 0], [0.6, 0.8]])
    # The second derivative does not exist there: NaN, never a silent number.
    assert np.all(np.isnan(wengert.hessian(lambda x: np.linalg.norm(x))(np.zeros(3))))


# ----------------------------------------------------------------------- contractions


def test_dot_all_cases():
    b3 = RNG.normal(size=(3, 4, 2))
    check(lambda a, b: np.dot(a, b) + np.dot(b, b) + np.dot(2.0, a)[:, 0], M, V)
    check(lambda a, b: np.dot(a, b), M, M.T.copy())
    check(lambda a, b: np.dot(a, b), V[:3], M)
    check(lambda a, b: np.dot(a, b), A, b3)
    check(lambda a, b: np.dot(a, b), A, V)
    check(lambda a, b: np.dot(a, b), V, b3)
    check(lambda a, b: a.dot(b) * np.sum(a.dot(b)), M, V)


def test_vdot_inner_outer():
    check(lambda a, b: np.vdot(a, b * b), M, M.T.copy())
    check(lambda a, b: np.inner(a, b), A, M)
    check(lambda a, b: np.inner(a, b) * np.inner(2.0, b)[:, 0], V, M)
    check(lambda a, b: np.outer(a, b), M, V)


def test_matmul_promotion_and_stacks():
    check(lambda a, b: np.matmul(a, b), A, M.T.copy())
    check(lambda a, b: np.matmul(a, b) + np.matmul(b.T, a)[0], V, M.T.copy())
    check(lambda a, b: np.matmul(a, b), V[:3], A)


def test_tensordot_and_kron():
    check(lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])), A, M)
    check(lambda a, b: np.tensordot(a, b, 1), A, M.T.copy())
    check(lambda a, b: np.tensordot(a, b, axes=0), V[:2], M)
    check(lambda a, b: np.tensordot(a, b, axes=(2, 1)), A, M)
    check(lambda a, b: np.kron(a, b), M, V)
    check(lambda a, b: np.kron(a, b), M[:2, :2].copy(), A)


def test_einsum_forms():
    check(lambda a, b: np.einsum("ij,jk->ik", a, b), M, M.T.copy())
    check(lambda a, b: np.einsum("ij,kj", a, b), M, M.copy())
    check(lambda a: np.einsum("ii", a) + np.einsum("ii->i", a) @ np.einsum("ij->j", a), M[:, :3])
    check(lambda a: np.einsum("ij->ji", a) * np.einsum("ij->", a), A[0])
    check(lambda a, b: np.einsum("...ij,jk->...ik", a, b), A, M.T.copy())
    check(lambda a, b: np.einsum("...j, ...j", a, b), A, M[:1].copy())
    check(lambda a, b, c: np.einsum("ij,jk,j->ik", a, b, c), M, M.T.copy(), V)
    check(lambda a, b, c, d: np.einsum("ij,jk,kl,l->i", a, b, c, d),
          M, M.T.copy(), M.copy(), V)
    check(lambda a, b: np.einsum("i,j->ij", a, b), V, V[:3].copy())
    check(lambda a, b: np.einsum("iij,j->i", a, b), np.stack([M[:, :3]] * 4, -1), V)
    check(lambda a, b: np.einsum("ij,jk", a, b, optimize=True), M, M.T.copy())
    # Explicit broadcasting of a size-1 axis against a longer one.
    check(lambda a, b: np.einsum("ij,ij->i", a, b), M[:1].copy(), M)


def test_einsum_jacobians_carry_batch_axes():
    def f(a):
        return np.einsum("ij,jk,kk->ik", a, a.T * 2.0, a[:, :3])

    x = M.copy()
    expected = numerical_jacobian(f, x)
    np.testing.assert_allclose(wengert.jacfwd(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wengert.jacrev(f)(x), expected, rtol=1e-6, atol=1e-8)


def test_reduction_jacobians_carry_batch_axes():
    def f(x):
        return (np.max(x, axis=0) * np.prod(x, axis=0) + np.linalg.norm(x, axis=0)
                + np.cumprod(x, axis=1)[-1] + np.var(x, axis=0) + np.trace(x[:, :3]))

    expected = numerical_jacobian(f, Z)
    np.testing.assert_allclose(wengert.jacfwd(f)(Z), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(wengert.jacrev(f)(Z), expected, rtol=1e-6, atol=1e-8)


# -------------------------------------------------------------------- compositions


def test_logsumexp_and_softmax_written_by_hand():
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    def logsumexp_rows(x):
        m = np.max(x, axis=1, keepdims=True)
        return m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))

    def softmax(x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    check(logsumexp, V)
    check(logsumexp_rows, M)
    check(softmax, M)
    # The gradient of logsumexp is the softmax, also where the max is tied.
    x = np.array([1.0, 3.0, 3.0, -2.0])
    np.testing.assert_allclose(wengert.grad(logsumexp)(x), np.exp(x) / np.exp(x).sum())


# ------------------------------------------------------------------------------ float32


def test_float32_stays_float32():
    x32 = M.astype(np.float32)

    def f(x):
        return (np.sum(np.prod(x, axis=0)) + np.max(x) + np.linalg.norm(x)
                + np.einsum("ij,ij->", x, x) + np.einsum("ij->", x) + np.var(x)
                + np.sum(np.cumprod(x, axis=1))
                + np.sum(np.linalg.norm(x, 3, axis=0))
                + np.dot(np.sum(x, axis=0), np.ones(4, np.float32)))

    value, g32 = wengert.value_and_grad(f)(x32)
    assert np.asarray(value).dtype == np.float32
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, wengert.grad(f)(M), rtol=1e-4, atol=1e-5)
    _, t32 = wengert.jvp(f, (x32,), (np.ones_like(x32),))
    assert np.asarray(t32).dtype == np.float32


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("f", [
    lambda x: np.cumsum(x, dtype=np.float64),
    lambda x: np.linalg.norm(x, "nuc"),
    lambda x: np.linalg.norm(x, 2),
    lambda x: np.einsum(x, [0, 1], [1]),
], ids=["cumsum-dtype", "norm-nuc", "norm-2-matrix", "einsum-sublist"])
def test_unsupported_forms_are_refused(f):
    with pytest.raises((TypeError, wengert.NonDifferentiableError), match="wengert|derivative") \
            as e:
        wengert.grad(lambda x: np.sum(f(x)))(M)
    if isinstance(e.value, wengert.WengertError):  # (located at the user's line)
        assert e.value.loc is not None and e.value.loc.filename == __file__


#: A point with entries on both sides of the masks' thresholds, none at them.
_W = np.array([[0.5, 1.2, 0.8, -0.4], [0.3, -0.9, 1.4, 0.65]])


@pytest.mark.parametrize("f", [
    lambda x: np.sum(x ** 2, where=x > 0.6),
    lambda x: np.sum(np.sin(x), axis=1, where=x > 0.0, keepdims=True) * x,
    lambda x: np.sum(x * x, initial=1.5),
    lambda x: np.sum(x ** 3, dtype=np.float64, axis=0),
    lambda x: np.prod(x, where=x > 0.0),
    lambda x: np.prod(x, axis=1, where=np.abs(x) > 0.45, initial=2.0),
    lambda x: np.mean(np.exp(x), where=x < 1.0),
    lambda x: np.mean(x * x, axis=0, where=x > -0.5),
    lambda x: x.sum(where=x > 0.6, initial=1.5) * x.mean(where=x < 1.0),
    lambda x: np.mean(x, dtype=np.float64, axis=1),
    lambda x: np.max(x * x, where=x > 0.6, initial=-10.0),
    lambda x: np.min(np.sin(x), axis=1, initial=0.1),
    lambda x: x.max(axis=0, initial=0.7, keepdims=True) * x,
    lambda x: np.amin(x ** 3, axis=1, where=x > -0.5, initial=5.0),
], ids=["sum-where", "sum-where-axis", "sum-initial", "sum-dtype", "prod-where",
        "prod-where-initial", "mean-where", "mean-where-axis", "methods", "mean-dtype",
        "max-where-initial", "min-initial-axis", "max-initial-method", "amin-where"])
def test_reduction_keywords_differentiate_in_both_modes_to_second_order(f):
    check_grads(lambda x: np.sum(f(x)), (_W,), order=2, modes=("rev", "fwd"))


def test_the_hessian_of_a_masked_sum_is_zero_off_the_mask():
    h = wengert.hessian(lambda x: np.sum(x ** 2, where=x > 0.6))(np.array([0.5, 1.2, 0.8, -0.4]))
    np.testing.assert_allclose(h, np.diag([0.0, 2.0, 2.0, 0.0]))


def test_the_extremes_under_a_mask_take_the_initial_value_where_none_is_selected():
    x = np.array([0.5, 1.2, 0.8, -0.4])
    # Only x[1] passes the mask and beats the initial value: the gradient is 2 x[1] there.
    np.testing.assert_allclose(
        wengert.grad(lambda x: np.max(x * x, where=x > 1.0, initial=0.0))(x), [0, 2.4, 0, 0])
    # Nothing selected: the initial value, a constant.
    np.testing.assert_allclose(
        wengert.grad(lambda x: np.max(x, where=x > 5.0, initial=0.0))(x), np.zeros(4))
    np.testing.assert_allclose(
        wengert.hessian(lambda x: np.max(x * x, where=x > 1.0, initial=0.0))(x),
        np.diag([0.0, 2.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="identity"):  # (NumPy's error: no initial value)
        wengert.grad(lambda x: np.max(x, where=x > 1.0))(x)


def test_a_refusal_stays_in_the_gradient_differentiated_again():
    # The check that refuses a keyword is a call whose result nothing reads: the gradient's
    # clean-up must not drop it, or its derivative (a Hessian) ignores the keyword.
    with pytest.raises(wengert.WengertError, match="out="):
        wengert.hessian(lambda x: np.sum(np.cumsum(x, out=np.empty(4))))(np.ones(4))
    with pytest.raises(wengert.WengertError, match="complex"):
        wengert.hessian(lambda x: np.sum(x.astype(np.complex128).real ** 2))(np.ones(4))


def test_numpy_errors_stay_numpys():
    with pytest.raises(np.exceptions.AxisError):
        wengert.grad(lambda x: np.sum(np.sum(x, axis=2)))(M)
    with pytest.raises(ValueError, match="Invalid norm order"):
        wengert.grad(lambda x: np.linalg.norm(x, "fro"))(V)
    with pytest.raises(ZeroDivisionError):
        wengert.grad(lambda w: np.average(V, weights=w))(np.zeros(4))
