"""Hypothesis sweeps of NumPy shapes: binary operations under every broadcast of two shapes,
reductions over every kind of ``axis`` with and without ``keepdims``, and indexing (read and
write) with integers, negative integers, slices with steps, ``None``, ``...``, integer arrays
with repeats and boolean masks. Each drawn case goes through ``check_grads``: both modes
against central differences, the dot-product identity, ``jacfwd``."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from wengert.testing import check_grads

SWEEP = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


def _values(shape: tuple[int, ...], seed: int, positive: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape) if positive else rng.uniform(-1.5, 1.5, shape)
    return np.asarray(x, dtype=float)


BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": lambda a, b: a / b, "pow": lambda a, b: a ** b, "maximum": np.maximum,
    "arctan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp,
}
#: Operations whose second operand is drawn positive (a denominator, an exponent's base).
POSITIVE = {"truediv": 1, "pow": 0}


@pytest.mark.parametrize("name", sorted(BINARY))
@SWEEP
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                            max_side=3), seed=st.integers(0, 2**16))
def test_binary_under_broadcasting(name, shapes, seed):
    (sa, sb), out = shapes.input_shapes, shapes.result_shape
    a = _values(sa, seed, positive=POSITIVE.get(name) == 0)
    b = _values(sb, seed + 1, positive=POSITIVE.get(name) == 1)
    w = _values(out, seed + 2)
    op = BINARY[name]

    def f(a, b):
        return np.sum(op(a, b) * w)

    check_grads(f, (a, b), modes=("rev", "fwd"))


REDUCTIONS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
    "std": np.std, "var": np.var,
}


@st.composite
def shape_and_axis(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(2, 3)) for _ in range(ndim))
    kind = draw(st.sampled_from(["none", "int", "negative", "tuple"]))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(0, ndim - 1))
    elif kind == "negative":
        axis = -draw(st.integers(1, ndim))
    else:
        axis = tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1))))
    return shape, axis, draw(st.booleans())


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SWEEP
@given(case=shape_and_axis(), seed=st.integers(0, 2**16))
def test_reductions_over_every_kind_of_axis(name, case, seed):
    shape, axis, keepdims = case
    a = _values(shape, seed)  # distinct values: max and min are differentiable there
    red = REDUCTIONS[name]
    w = _values(np.shape(red(a, axis=axis, keepdims=keepdims)), seed + 1)

    def f(a):
        return np.sum(red(a, axis=axis, keepdims=keepdims) * w)

    check_grads(f, (a,), modes=("rev", "fwd"))


@st.composite
def index_of(draw, shape):
    """An index into an array of ``shape``: a tuple of parts, one kind each."""
    parts: list = []
    axis = 0
    ellipsis = False
    while axis < len(shape):
        n = shape[axis]
        kind = draw(st.sampled_from(["int", "neg", "slice", "none", "array", "mask", "all",
                                     "ellipsis"]))
        if kind == "int":
            parts.append(draw(st.integers(0, n - 1)))
        elif kind == "neg":
            parts.append(-draw(st.integers(1, n)))
        elif kind == "slice":
            step = draw(st.sampled_from([1, 2, -1]))
            parts.append(slice(None, None, step) if step < 0 else
                         slice(draw(st.integers(0, n - 1)), None, step))
        elif kind == "none":
            parts.append(None)
            continue
        elif kind == "array":
            parts.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1,
                                                max_size=4))))
        elif kind == "mask":
            parts.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        elif kind == "ellipsis" and not ellipsis:
            parts.append(Ellipsis)
            ellipsis = True
            break
        else:
            parts.append(slice(None))
        axis += 1
    # At most one advanced (array or mask) part: NumPy's rules for several are another test.
    advanced = [k for k, p in enumerate(parts) if isinstance(p, np.ndarray)]
    for k in advanced[1:]:
        parts[k] = slice(None)
    return tuple(parts)


@st.composite
def indexed(draw):
    shape = tuple(draw(st.integers(2, 4)) for _ in range(draw(st.integers(1, 3))))
    return shape, draw(index_of(shape))


@SWEEP
@given(case=indexed(), seed=st.integers(0, 2**16))
def test_indexing_reads(case, seed):
    shape, index = case
    a = _values(shape, seed)
    w = _values(np.shape(a[index]), seed + 1)

    def f(a):
        return np.sum(a[index] * w)

    check_grads(f, (a,), modes=("rev", "fwd"))


@SWEEP
@given(case=indexed(), seed=st.integers(0, 2**16), augmented=st.booleans())
def test_indexing_writes(case, seed, augmented):
    shape, index = case
    a = _values(shape, seed)
    v = _values(np.shape(a[index]), seed + 1)

    def f(a, v):
        b = a * 1.0
        if augmented:
            b[index] += v * a[index]  # repeated indices add once, as NumPy does
        else:
            b[index] = v * v
        return np.sum(b * b)

    check_grads(f, (a, v), modes=("rev", "fwd"))
