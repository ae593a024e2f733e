"""The shape helpers of generated code (``rules/shapes.py``) against NumPy: unbroadcasting
sums (planned once per shapes, summed by ``einsum`` for float arrays), products summed as
they are made, and read-only broadcast views."""

from __future__ import annotations

import numpy as np
import pytest

from wengert.rules.shapes import add_over, broadcast_view, mul_sum_to, sum_to

RNG = np.random.default_rng(3)

# (shape of the cotangent, target shape, full shape): batch axes in front, leading axes
# summed, size-1 axes summed, nothing summed, everything summed.
SUMS = [
    ((5, 3, 4), (1, 3, 4), (5, 3, 4)),
    ((5, 3, 4), (3, 4), (5, 3, 4)),
    ((5, 3, 4), (3, 1), (5, 3, 4)),
    ((2, 5, 3, 4), (3, 1), (5, 3, 4)),
    ((5, 3, 4), (), (5, 3, 4)),
    ((5, 3, 4), (5, 3, 4), (5, 3, 4)),
    ((32, 1), (1,), (32, 1)),
    ((7,), (1,), (7,)),
]


def _reference(t, shape, full):
    batch = t.ndim - len(full)
    lead = len(full) - len(shape)
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + i for i, n in enumerate(shape) if n == 1 and full[lead + i] != 1)
    return np.sum(t, axis=axes).reshape(t.shape[:batch] + shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("tshape, shape, full", SUMS)
def test_sum_to_is_numpys_sum_over_the_broadcast_axes(tshape, shape, full, dtype):
    t = (RNG.normal(size=tshape) * 10).astype(dtype)
    for _ in range(2):  # planned, then from the plan
        got = sum_to(t, shape, full)
        want = _reference(t, shape, full)
        assert np.shape(got) == want.shape and np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # Shapes given as lists take the general path to the same sums.
    np.testing.assert_allclose(sum_to(t, list(shape), list(full)), _reference(t, shape, full),
                               rtol=1e-5)
    assert sum_to(None, shape, full) is None


@pytest.mark.parametrize("tshape, shape, full", SUMS)
def test_mul_sum_to_is_the_sum_of_the_product(tshape, shape, full):
    a = RNG.normal(size=tshape)
    b = RNG.normal(size=tshape[:-1] + (1,))  # (broadcast against ``a``)
    np.testing.assert_allclose(mul_sum_to(a, b, shape, full), sum_to(a * b, shape, full),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mul_sum_to(b, a, shape, full), sum_to(b * a, shape, full),
                               rtol=1e-12, atol=1e-12)
    assert mul_sum_to(None, a, shape, full) is None
    np.testing.assert_allclose(mul_sum_to(2.0, a, shape, full), sum_to(2.0 * a, shape, full))


@pytest.mark.parametrize("axes", [(0,), (-1,), (0, 2), (1,), (-3, -1)])
def test_add_over_is_numpys_sum(axes):
    t = RNG.normal(size=(4, 3, 5))
    np.testing.assert_allclose(add_over(t, axes), np.sum(t, axis=axes), rtol=1e-12)
    np.testing.assert_allclose(add_over(t, axes, True), np.sum(t, axis=axes, keepdims=True))
    ints = np.arange(60).reshape(4, 3, 5)
    np.testing.assert_array_equal(add_over(ints, axes), np.sum(ints, axis=axes))


@pytest.mark.parametrize("ashape, shape", [((), (3, 2)), ((3, 1), (2, 3, 4)), ((1, 4), (3, 4)),
                                           ((3, 4), (3, 4)), ((2, 1, 3), (2, 5, 3))])
def test_broadcast_view_is_numpys_read_only_view(ashape, shape):
    a = RNG.normal(size=ashape)
    v = broadcast_view(a, shape)
    np.testing.assert_array_equal(v, np.broadcast_to(a, shape))
    assert v.shape == shape and not v.flags.writeable
    a.flat[0] = 7.5  # a view, not a copy
    assert v.flat[0] == 7.5
    # Not contiguous, or not broadcastable: NumPy's own view, or its error.
    w = RNG.normal(size=(4, 6))[:, ::2]
    np.testing.assert_array_equal(broadcast_view(w, (2, 4, 3)), np.broadcast_to(w, (2, 4, 3)))
    with pytest.raises(ValueError):
        broadcast_view(RNG.normal(size=(3,)), (4,))
