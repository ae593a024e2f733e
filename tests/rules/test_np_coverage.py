"""Every NumPy name people reach for has a rule, a Python definition, or is declared
without a derivative: none is left to a silent zero or to a run-time surprise."""

from __future__ import annotations

import numpy as np
import pytest

import wengert.rules  # noqa: F401  (registers the rules)
from wengert.rules import registry

FUNCTIONS = """
sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh exp exp2 expm1 log
log2 log10 log1p sqrt cbrt square reciprocal abs absolute fabs negative positive sign floor
ceil rint trunc deg2rad rad2deg degrees radians sinc add subtract multiply divide true_divide
power float_power arctan2 hypot maximum minimum fmax fmin logaddexp logaddexp2 copysign mod
remainder fmod clip where nan_to_num less greater equal not_equal less_equal greater_equal
sum mean prod max min amax amin ptp std var average cumsum cumprod diff trace dot vdot inner
outer matmul tensordot kron einsum reshape ravel transpose swapaxes moveaxis expand_dims
squeeze broadcast_to broadcast_arrays concatenate stack hstack vstack dstack column_stack split
array_split tile repeat flip fliplr flipud roll rot90 pad diag diagonal diagflat triu tril take
take_along_axis sort argsort argmax argmin atleast_1d atleast_2d atleast_3d array asarray zeros
ones full eye identity arange linspace meshgrid zeros_like ones_like full_like empty_like copy
shape ndim size
""".split()
LINALG = "inv solve det slogdet cholesky eigh qr svd pinv lstsq matrix_power norm".split()
METHODS = """
sum mean max min prod std var dot reshape transpose T ravel flatten copy astype clip squeeze
cumsum cumprod trace diagonal swapaxes item shape ndim size dtype argmax argmin
""".split()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_numpy_function_is_covered(name):
    assert registry.lookup(getattr(np, name)) is not None, f"np.{name} has no rule"


@pytest.mark.parametrize("name", LINALG)
def test_numpy_linalg_function_is_covered(name):
    assert registry.lookup(getattr(np.linalg, name)) is not None, \
        f"np.linalg.{name} has no rule"


@pytest.mark.parametrize("name", METHODS)
def test_array_method_or_attribute_is_covered(name):
    assert registry.lookup(getattr(np.ndarray, name)) is not None, \
        f"ndarray.{name} has no rule"
