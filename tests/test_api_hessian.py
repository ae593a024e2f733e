"""Hessians and Hessian-vector products: forward mode over the gradient's generated code.

Every Hessian is checked against central differences of ``wengert.grad`` (itself checked
against finite differences of the function in ``transforms/test_vjp.py``).
"""

from __future__ import annotations

import copy
import math

import numpy
import pytest

import wengert
from transforms import vjp_corpus as corpus
from wengert.rules.registry import defvjp

#: Corpus functions of float arguments whose Hessian forward-over-reverse computes today.
HESSIAN_CASES = [
    'arith_add_sub',
    'arith_mul_div',
    'arith_div_both',
    'arith_pow_const',
    'arith_pow_var',
    'arith_const_base',
    'arith_neg',
    'arith_pos',
    'arith_abs',
    'arith_inplace_pow_var',
    'arith_mod',
    'arith_horner',
    'arith_fanout',
    'arith_reassign',
    'arith_dead_code',
    'arith_independent_input',
    'arith_constant_output',
    'arith_identity',
    'arith_globals',
    'arith_bool_times_float',
    'arith_many_ops',
    'math_sin',
    'math_cos',
    'math_tan',
    'math_asin',
    'math_acos',
    'math_atan',
    'math_atan2',
    'math_sinh',
    'math_cosh',
    'math_tanh',
    'math_asinh',
    'math_acosh',
    'math_atanh',
    'math_exp',
    'math_exp2',
    'math_expm1',
    'math_log',
    'math_log_base',
    'math_log_const_base',
    'math_log2',
    'math_log10',
    'math_log1p',
    'math_sqrt',
    'math_cbrt',
    'math_hypot',
    'math_hypot3',
    'math_pow',
    'math_pow_int',
    'math_fabs',
    'math_erf',
    'math_erfc',
    'math_copysign',
    'math_fmod',
    'math_degrees_radians',
    'math_constants',
    'math_alias',
    'math_composition',
    'builtin_abs',
    'builtin_min_max_args',
    'builtin_max_of_tuple',
    'builtin_sum_tuple_of_actives',
    'builtin_pow',
    'builtin_int_in_branch',
    'builtin_round_in_branch',
    'if_else',
    'if_elif_else',
    'if_no_else',
    'if_nested',
    'if_on_data_both_branches_active',
    'if_early_return',
    'cond_expression',
    'cond_expression_nested',
    'and_or_conditions',
    'not_condition',
    'chained_comparison',
    'for_range_step',
    'for_range_negative_step',
    'while_else',
    'while_data_dependent',
    'while_true_break',
    'while_newton_sqrt',
    'for_newton_fixed',
    'nested_loops_break_inner',
    'nested_loops_data_break',
    'nested_loop_return',
    'while_with_continue',
    'param_rebinding',
    'string_formatting_of_active',
    'helper_call',
    'helper_with_loop_and_branch',
    'closure_constant_capture_a',
    'closure_constant_capture_b',
    'module_lambda',
    'module_lambda_default',
    'apply_math_sin',
    'functools_partial_keyword',
    'functools_partial_positional',
    'with_in_loop',
    'only_second_float_differentiated',
    'euler_ode',
]

_BY_NAME = {c.name: c for c in corpus.CASES}


def _fd_hessian(f, args, eps=1e-5):
    nums = tuple(range(len(args)))
    g = wengert.grad(f, nums)
    cols = []
    for j in range(len(args)):
        ap, am = list(args), list(args)
        ap[j] += eps
        am[j] -= eps
        gp, gm = g(*ap), g(*am)
        cols.append([(p - m) / (2 * eps) for p, m in zip(gp, gm)])
    return numpy.array(cols).T


def test_enough_cases():
    assert len(HESSIAN_CASES) >= 30


@pytest.mark.parametrize("name", HESSIAN_CASES)
def test_hessian_matches_finite_differences_of_the_gradient(name):
    case = _BY_NAME[name]
    for args in case.inputs:
        f = case.make()
        nums = tuple(range(len(args)))
        h = numpy.array(wengert.hessian(f, nums)(*copy.deepcopy(args)), dtype=float)
        numpy.testing.assert_allclose(h, _fd_hessian(f, args), rtol=1e-4, atol=1e-5)
        numpy.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", HESSIAN_CASES[::7])
def test_hvp_is_hessian_times_vector(name):
    case = _BY_NAME[name]
    args = case.inputs[0]
    f = case.make()
    rng = numpy.random.default_rng(0)
    v = tuple(float(x) for x in rng.normal(size=len(args)))
    got = wengert.hvp(f, args, v)
    got = numpy.atleast_1d(numpy.array(got, dtype=float))
    want = _fd_hessian(f, args) @ numpy.array(v)
    numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def loop_and_branch(x, y):
    s = x
    for _ in range(4):
        if s < 2.0:
            s = s * y + math.sin(s)
        else:
            s = s - 0.1 * y
    return s * x


def test_hessian_single_argnum_is_a_float():
    h = wengert.hessian(loop_and_branch)(0.5, 1.5)
    assert type(h) is float
    assert h == pytest.approx(_fd_hessian(loop_and_branch, (0.5, 1.5))[0, 0], rel=1e-4)


def _cube(x):
    return x * x * x


@defvjp(_cube, user=True)
def _cube_vjp(x):
    def cube_pullback(y_bar, scale=3.0):  # a default argument: the rule is not inlined
        return (y_bar * scale * x * x,)

    return _cube(x), cube_pullback


def test_hessian_through_a_rule_whose_pullback_reads_its_input():
    # The rule returns a pullback reading x (and taking a default): the gradient's code
    # calls the rule's body, whose pullback is inlined where it is called, x included.
    def f(x):
        return _cube(x) + x

    assert wengert.grad(f)(2.0) == 13.0
    assert wengert.hessian(f)(2.0) == pytest.approx(12.0)


def four_argument_vector(s, a, b, c):
    return numpy.sin(s) * a * b * c + s * s * c


def stages_of_a_copy(y0, k):
    y = y0.copy()
    k1 = -k * y * y + numpy.roll(y, 1)
    k2 = -k * (y + k1) + numpy.roll(y + k1, 1)
    k3 = -k * (y + k2) * y + numpy.roll(y + k2, 1)
    return y + k1 + k2 + k3


@pytest.mark.parametrize("f, args", [
    (four_argument_vector, (numpy.array([0.3, -0.5, 1.2]), 2.0, 3.0, 0.5)),
    (stages_of_a_copy, (numpy.array([0.3, -0.5, 1.2, 0.4]), 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_of_an_array_valued_function(f, args):
    # (refused past three arguments; an OutputNotScalarError from generated code where a
    # callee's result type was not known: the gradient of a call is taken only of a float)
    h = wengert.hessian(f)(*args)
    x = args[0]
    jac = wengert.jacfwd(f)
    eps = 1e-5
    cols = []
    for e in numpy.eye(x.size):
        cols.append((jac(x + eps * e, *args[1:]) - jac(x - eps * e, *args[1:])) / (2 * eps))
    numpy.testing.assert_allclose(h, numpy.stack(cols, axis=-1), rtol=1e-6, atol=1e-8)
    numpy.testing.assert_allclose(wengert.jacfwd(wengert.jacrev(f))(*args), h, rtol=1e-10,
                               atol=1e-12)


def one_of_two_lists(a, c):
    xs = [a, 2.0 * a]
    ys = xs if c > 0 else [1.0, 2.0]  # (a write into one of two lists: reverse mode refuses)
    ys[0] = ys[0] * c
    return ys[0] * xs[1] + c * xs[0] * c


def test_hessian_where_reverse_mode_refuses_is_forward_over_forward():
    """``hessian`` answers what ``grad`` answers: where reverse mode refuses the function,
    each block by forward mode over forward mode, in the layout and types of the usual
    one (floats of floats)."""
    with pytest.raises(wengert.NonDifferentiableError, match="one of several"):
        wengert.vjp(one_of_two_lists, 0.3, 0.7)
    fd = _fd_hessian(one_of_two_lists, (0.3, 0.7))
    h = wengert.hessian(one_of_two_lists)(0.3, 0.7)
    assert type(h) is float and h == pytest.approx(fd[0, 0], rel=1e-4)
    blocks = wengert.hessian(one_of_two_lists, argnums=(0, 1))(0.3, 0.7)
    assert all(type(b) is float for row in blocks for b in row)
    assert numpy.allclose(numpy.array(blocks), fd, rtol=1e-4)
    assert wengert.hessian(one_of_two_lists, argnums=(0, 1))(0.3, -0.7)[1][1] == \
        pytest.approx(_fd_hessian(one_of_two_lists, (0.3, -0.7))[1, 1], rel=1e-4)
