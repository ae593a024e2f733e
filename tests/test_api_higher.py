"""Higher-order derivatives by transforming generated IR again: ``grad(grad(f))``, third
derivatives, and gradients taken inside differentiated functions (nested
differentiation, with no perturbation confusion)."""

from __future__ import annotations

import copy
import dataclasses
import math
import typing

import pytest

import wengert
from transforms import vjp_corpus as corpus
from wengert import grad, hessian, jacfwd
from wengert.testing import check_grads

# ----------------------------------------------------------------------------- functions


def poly(x):
    return x**5 - 2 * x**3 + x


def trig(x):
    return math.sin(2 * x)


def expo(x):
    return math.exp(x) * x


def horner(x):
    s = 0.0
    for c in (1.0, 2.0, 3.0, 4.0, 5.0):
        s = s * x + c
    return s


def branch(x):
    if x > 0:
        return x**4
    return -x**3


def power_while(x):
    k = 0
    y = x
    while k < 3:
        y = y * x
        k += 1
    return y


def _wave(z):
    return z * math.cos(z)


def uses_helper(x):
    return _wave(x) + x**2


def tanh_(x):
    return math.tanh(x)


def root(x):
    return math.sqrt(x) * x


def rational(x):
    return 1.0 / (1.0 + x * x)


def sincos(x):
    return math.cos(x) * math.sin(x)


def _t(x):
    return math.tanh(x)


#: (function, its third derivative in closed form, points)
THIRD = [
    (poly, lambda x: 60 * x**2 - 12, (0.7, -1.3)),
    (trig, lambda x: -8 * math.cos(2 * x), (0.7, 2.1)),
    (expo, lambda x: math.exp(x) * (x + 3), (0.7, -0.4)),
    (horner, lambda x: 24 * x + 12, (0.7, -1.1)),
    (branch, lambda x: 24 * x if x > 0 else -6.0, (0.7, -0.6)),
    (power_while, lambda x: 24 * x, (0.7, 1.9)),
    (uses_helper, lambda x: -3 * math.cos(x) + x * math.sin(x), (0.7, 2.5)),
    (tanh_, lambda x: (1 - _t(x)**2) * (6 * _t(x)**2 - 2), (0.7, -0.2)),
    (root, lambda x: -0.375 * x**-1.5, (0.7, 3.0)),
    (rational, lambda x: (24 * x - 24 * x**3) / (1 + x * x)**4, (0.7, -1.6)),
    (sincos, lambda x: -4 * math.cos(2 * x), (0.7, 1.2)),
]


@pytest.mark.parametrize("f, d3, points", THIRD, ids=[t[0].__name__ for t in THIRD])
@pytest.mark.parametrize("how", ["grad_grad_grad", "jacfwd_grad_grad", "hessian_grad"])
def test_third_derivative_matches_closed_form(f, d3, points, how):
    op = {
        "grad_grad_grad": lambda: grad(grad(grad(f))),
        "jacfwd_grad_grad": lambda: jacfwd(grad(grad(f))),
        "hessian_grad": lambda: hessian(grad(f)),
    }[how]()
    for x in points:
        assert float(op(x)) == pytest.approx(d3(x), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("f", [t[0] for t in THIRD], ids=[t[0].__name__ for t in THIRD])
def test_grad_of_grad_against_finite_differences(f):
    # Reverse over reverse and forward over reverse, each against central differences.
    check_grads(grad(f), (0.7,), modes=("rev", "fwd"))
    check_grads(grad(grad(f)), (0.7,), modes=("rev", "fwd"))


# Library functions over lists whose derivatives' own helpers are dispatched at run time
# (``list(xs)``'s pullback builds the list's adjoint from its items'): at the third order a
# zero adjoint of an adjoint that was itself zero reached them as ``0.0`` for a list (a
# TypeError from inside wengert, seen on ``statistics.variance(xs) + math.prod(xs)``).
def _copied_and_read(a, b):
    xs = [a, b]
    items = list(xs)
    return items[0] * xs[0] * b * a


def _copied_and_summed(a, b):
    xs = [a, b, a * b]
    items = list(xs)
    return sum(items) * xs[0] * xs[2]


def _library_over_one_list(a, b):
    import statistics

    xs = [a, b, a * b, 1.0]
    return statistics.variance(xs) + math.prod(xs) + sum(sorted(xs)) * a


def _sq(v):
    return v / (1.0 + v * v)


# A list written in a loop, grown and popped (found by the adversarial generator at the
# third order): the adjoint of a list after a read of an item whose adjoint may be zero
# may be zero itself, and the rule of ``+`` on lists split it (a TypeError from inside
# wengert: ``None[:n]``).
def _grown_and_popped(x, y):
    acc = [_sq(math.tanh(math.cos(_sq(y))))]
    b = _sq(y)
    for e in acc:
        b = _sq(b + e * 0.5)
        acc[-1] = _sq(b)
    acc.append(sorted([2.0, y, x], key=abs)[1])
    acc.append(x)
    b = _sq(b + acc.pop() * acc.pop(-1))
    return b * x + sum(acc)


@pytest.mark.parametrize("f", [_copied_and_read, _copied_and_summed, _library_over_one_list,
                               _grown_and_popped])
def test_third_derivatives_through_lists_copied_grown_and_popped(f):
    # (the first argument's third derivative in reverse mode, the second's in forward
    # mode: both in both took a fifth of the test command's slowest minute)
    for i, mode in ((0, "rev"), (1, "fwd")):
        second = grad(grad(f, argnums=i), argnums=i)
        check_grads(lambda a, b: second(a, b), (0.7, 0.3), modes=(mode,))


def two(x, y):
    return x * x * y + math.sin(x * y)


def test_mixed_partials_of_two_arguments():
    dxy = grad(grad(two, 0), 1)
    dyx = grad(grad(two, 1), 0)
    x, y = 0.8, -0.3
    exact = 2 * x + math.cos(x * y) - x * y * math.sin(x * y)
    assert dxy(x, y) == pytest.approx(exact, rel=1e-12)
    assert dyx(x, y) == pytest.approx(exact, rel=1e-12)
    h = hessian(two, (0, 1))(x, y)
    assert h[0][1] == pytest.approx(exact, rel=1e-12)


def test_grad_of_grad_with_tuple_argnums_is_refused_as_nonscalar():
    # grad(f, (0, 1)) returns a pair: its gradient is not defined (as in JAX).
    with pytest.raises(TypeError, match="scalar"):
        grad(grad(two, (0, 1)))(0.8, -0.3)


def test_redefining_the_inner_function_is_seen():
    ns: dict = {}
    src = "import math\ndef g(x):\n    return {body}\n"
    path = _write_module(src.format(body="x ** 3"))
    exec(compile(open(path).read(), path, "exec"), ns)
    g = ns["g"]
    d2 = grad(grad(g))
    assert d2(2.0) == pytest.approx(12.0)
    g.__code__ = _code_of(src.format(body="x ** 4"), path)
    assert d2(2.0) == pytest.approx(48.0)


def _write_module(text):
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".py", prefix="wengert_higher_")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def _code_of(text, path):
    import linecache
    with open(path, "w") as fh:
        fh.write(text)
    linecache.checkcache(path)
    ns: dict = {}
    exec(compile(text, path, "exec"), ns)
    return ns["g"].__code__


# ----------------------------------------------------------------------------- nested


def confusion(x):
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1; perturbation confusion would give 2.
    return x * grad(lambda y: x + y)(1.0)


def confusion_product(x):
    # d/dy (x * y) = x, so the function is x * x and its derivative 2x.
    return x * grad(lambda y: x * y)(3.0)


def confusion_nested(x):
    # d/dy d/dz (x y z) = x: the function is x * x.
    return grad(lambda y: grad(lambda z: x * y * z)(1.0))(2.0) * x


def _h(a, b):
    return a * a * b


def global_grads(x):
    # d/db (a^2 b) = a^2 at (x, 3); d/da at (x, x) = 2 x^2: the sum is 3 x^2.
    return grad(_h, 1)(x, 3.0) + grad(_h)(x, x)


def inner_def(x):
    def inner(y):
        return x * y * y
    return x * grad(inner)(x)  # x * 2 x^2 = 2 x^3


def in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + grad(lambda y: math.sin(x * y))(float(k))  # x cos(k x)
    return total


def in_a_branch(x):
    if x > 0:
        return grad(lambda y: y * y * x)(x)  # 2 x^2
    return grad(lambda y: y * x)(2.0)  # x


NESTED = [
    (confusion, lambda x: 1.0),
    (confusion_product, lambda x: 2 * x),
    (confusion_nested, lambda x: 2 * x),
    (global_grads, lambda x: 6 * x),
    (inner_def, lambda x: 6 * x * x),
    (in_a_loop, lambda x: sum(math.cos(k * x) - k * x * math.sin(k * x) for k in range(3))),
    (in_a_branch, lambda x: 4 * x if x > 0 else 1.0),
]


@pytest.mark.parametrize("f, df", NESTED, ids=[t[0].__name__ for t in NESTED])
@pytest.mark.parametrize("x", [1.5, -0.7])
def test_nested_gradient_has_no_perturbation_confusion(f, df, x):
    assert grad(f)(x) == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    assert float(jacfwd(f)(x)) == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    out, t = wengert.jvp(f, (x,), (1.0,))
    assert t == pytest.approx(df(x), rel=1e-12, abs=1e-12)
    check_grads(f, (x,), modes=("rev", "fwd"))


def test_hessian_of_function_taking_a_gradient_inside():
    def f(x):
        return x * x * grad(lambda y: x * y * y)(x)  # 2 x^4

    for x in (0.6, -1.2):
        assert float(hessian(f)(x)) == pytest.approx(24 * x * x, rel=1e-10)


def test_gradient_made_by_a_helper_and_called_is_differentiated():
    def make(x):
        return grad(lambda y: x * y)

    def f(x):
        return make(x)(2.0)  # the helper is inlined: the gradient is called where made

    assert grad(f)(1.0) == 1.0


def test_gradient_stored_in_a_list_and_read_back_is_differentiated():
    # (the list is a display only read: its entry is the gradient, called where it is read;
    # one that outlives the function is refused: tests/transforms/test_nested_grad.py)
    def f(x):
        gs = [grad(lambda y: x * y * y)]
        return gs[0](2.0)

    assert grad(f)(1.0) == 4.0 and grad(f)(3.0) == 4.0  # d/dx [d/dy x y^2 at 2] = 4


def test_nested_gradient_of_two_captured_values():
    def f(a, b):
        # d/dv (a v^2 + b v) at v = b is 2 a b + b: f = a (2 a b + b) = 2 a^2 b + a b.
        return a * grad(lambda v: a * v * v + b * v)(b)

    a, b = 0.5, -1.25
    da, db = grad(f, (0, 1))(a, b)
    assert da == pytest.approx(4 * a * b + b, rel=1e-12)
    assert db == pytest.approx(2 * a * a + a, rel=1e-12)
    check_grads(f, (a, b), modes=("rev", "fwd"))


# --------------------------------------------------------------------------- primitives


PRIMITIVES = [
    (math.tanh, (0.5,), lambda x: 1 - math.tanh(x) ** 2,
     lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2)),
    (math.sin, (0.3,), math.cos, lambda x: -math.sin(x)),
    (math.exp, (0.7,), math.exp, math.exp),
    (math.log, (1.7,), lambda x: 1 / x, lambda x: -1 / x ** 2),
    (math.sqrt, (2.5,), lambda x: 0.5 / math.sqrt(x), lambda x: -0.25 * x ** -1.5),
]


@pytest.mark.parametrize("f, args, d1, d2", PRIMITIVES, ids=[p[0].__name__ for p in PRIMITIVES])
def test_a_primitive_given_directly_differentiates_to_any_order(f, args, d1, d2):
    # JAX users write grad(jnp.tanh): a primitive with rules and no source is wrapped.
    (x,) = args
    assert wengert.grad(f)(x) == pytest.approx(d1(x), rel=1e-12)
    assert wengert.grad(wengert.grad(f))(x) == pytest.approx(d2(x), rel=1e-9)
    assert wengert.hessian(f)(x) == pytest.approx(d2(x), rel=1e-9)
    assert wengert.jvp(f, (x,), (2.0,))[1] == pytest.approx(2 * d1(x), rel=1e-12)
    check_grads(f, args, modes=("rev", "fwd"))


def test_a_primitive_of_two_arguments_given_directly():
    g = wengert.grad(math.atan2, (0, 1))(0.3, 0.7)
    assert g == pytest.approx((0.7 / (0.3 ** 2 + 0.7 ** 2), -0.3 / (0.3 ** 2 + 0.7 ** 2)))
    check_grads(math.pow, (1.3, 0.7), modes=("rev", "fwd"))


def test_a_variadic_primitive_given_directly_is_refused_with_a_hint():
    with pytest.raises(wengert.WengertError, match="lambda x, y: max"):
        wengert.grad(max)(1.0)


# ------------------------------------------------- second order: vjp inside vjp


def _vjp_inside(x, y):
    out, pullback = wengert.vjp(_two_args, x, y)
    gx, gy = pullback(2.0)
    return gx * out + gy


def _two_args(x, y):
    return math.sin(x) * y + x * x * y


def _vjp_of_closure(x):
    def g(y):
        return x * y * y

    out, pullback = wengert.vjp(g, 1.5)
    return pullback(x)[0] + out


def test_vjp_inside_a_differentiated_function():
    x, y = 0.3, 0.7
    # d/dx and d/dy of (2 (cos x · y + 2 x y)) · f + 2 (sin x + x²), by hand.
    f = math.sin(x) * y + x * x * y
    gx = 2 * (math.cos(x) * y + 2 * x * y)
    dgx = (2 * (-math.sin(x) * y + 2 * y), 2 * (math.cos(x) + 2 * x))
    dgy = (2 * (math.cos(x) + 2 * x), 0.0)
    fx, fy = math.cos(x) * y + 2 * x * y, math.sin(x) + x * x
    want = (dgx[0] * f + gx * fx + dgy[0], dgx[1] * f + gx * fy + dgy[1])
    assert wengert.grad(_vjp_inside, (0, 1))(x, y) == pytest.approx(want, rel=1e-12)
    check_grads(_vjp_inside, (x, y), modes=("rev", "fwd"))


def test_vjp_of_a_closure_does_not_confuse_perturbations():
    # x · 2 · 1.5 · x + x · 1.5²: the pullback's cotangent x is a value, not a direction.
    x = 0.4
    assert wengert.grad(_vjp_of_closure)(x) == pytest.approx(6.0 * x + 1.5 ** 2, rel=1e-12)
    check_grads(_vjp_of_closure, (x,), modes=("rev", "fwd"))


#: Corpus functions whose second derivatives check_grads(order=2) checks in both modes:
#: the pullback (a vjp called inside a function) differentiated again, by reverse and
#: forward mode.
ORDER2_CASES = [
    'arith_add_sub', 'arith_mul_div', 'arith_div_both', 'arith_pow_const', 'arith_pow_var',
    'arith_pow_int_exponent', 'arith_const_base', 'arith_neg', 'arith_pos', 'arith_abs',
    'arith_inplace', 'arith_inplace_pow_var', 'arith_mod', 'arith_horner', 'arith_int_mix',
    'arith_fanout', 'arith_reassign', 'arith_dead_code', 'arith_independent_input',
    'arith_constant_output', 'arith_identity', 'arith_swap_outputs', 'arith_globals',
    'arith_bool_times_float', 'arith_many_ops', 'math_sin', 'math_cos', 'math_tan',
    'math_asin', 'math_acos', 'math_atan', 'math_atan2', 'math_sinh', 'math_cosh', 'math_tanh',
    'math_asinh', 'math_acosh', 'math_atanh', 'math_exp', 'math_exp2', 'math_expm1',
    'math_log', 'math_log_base', 'math_log_const_base', 'math_log2', 'math_log10',
    'math_log1p', 'math_sqrt', 'math_cbrt', 'math_pow', 'math_pow_int', 'math_hypot',
    'math_hypot3', 'math_fabs', 'math_erf', 'math_erfc', 'math_copysign', 'math_fmod',
    'math_degrees_radians', 'math_ldexp', 'math_composition', 'math_constants', 'math_alias',
    'builtin_abs', 'builtin_min_max_args', 'builtin_min_max_iterable', 'builtin_max_of_tuple',
    'builtin_min_genexp', 'builtin_sum_list', 'builtin_sum_start',
    'builtin_sum_tuple_of_actives', 'builtin_pow', 'builtin_float', 'builtin_divmod',
    'builtin_len_range', 'builtin_int_of_inactive', 'builtin_int_in_branch',
    'builtin_round_in_branch', 'builtin_bool_isinstance', 'if_else', 'if_elif_else',
    'if_no_else', 'if_nested', 'if_on_data_both_branches_active', 'if_early_return',
    'cond_expression', 'cond_expression_nested', 'and_or_values', 'and_or_conditions',
    'not_condition', 'chained_comparison', 'branch_on_int', 'branch_on_flag', 'for_range',
    'for_range_step', 'for_range_negative_step', 'for_list_arg', 'for_list_of_actives',
    'for_enumerate_start', 'for_reversed_list', 'for_reversed_range', 'for_over_dict_keys',
    'for_break', 'for_continue', 'for_early_return', 'for_else_no_break', 'while_else',
    'while_data_dependent', 'while_counter', 'while_true_break', 'while_newton_sqrt',
    'for_newton_fixed', 'nested_loops', 'nested_loops_break_inner', 'loop_carried_pair',
    'while_with_continue', 'loop_with_branches', 'loop_accumulate_product',
    'tuple_build_index', 'list_build_index', 'list_index_with_int', 'list_slices',
    'tuple_input', 'unpack_swap', 'unpack_nested', 'unpack_starred_first',
    'unpack_starred_middle', 'starred_in_display', 'list_append_then_index', 'list_setitem',
    'list_setitem_overwrite_active', 'list_branch_on_emptiness', 'list_read_then_overwrite',
    'list_append_while_iterating_copy', 'list_read_and_append_in_loop',
    'dict_read_then_overwrite', 'param_rebinding', 'string_formatting_of_active',
    'list_concat_repeat', 'tuple_concat', 'dict_build_index', 'dict_input',
    'dict_input_with_constants', 'dict_output', 'list_output', 'tuple_output_with_int',
    'nested_output', 'list_comprehension', 'list_comprehension_filter',
    'list_comprehension_nested', 'list_comprehension_range', 'dict_comprehension',
    'sum_genexp', 'list_of_tuples_input', 'list_len_and_membership', 'dataclass_input',
    'dataclass_with_int_field', 'dataclass_nested', 'dataclass_in_list',
    'dataclass_read_then_overwrite', 'dataclass_mutate_input', 'helper_call',
    'helper_with_int_arg', 'helper_returning_tuple', 'helper_mutating_list',
    'helper_with_loop_and_branch', 'closure_constant_capture_a', 'closure_constant_capture_b',
    'closure_list_capture', 'module_lambda', 'apply_math_sin', 'with_nullcontext',
    'with_user_context_manager', 'with_contextmanager_decorator', 'with_in_loop', 'np_add_sub',
    'np_mul_div', 'np_matmul_matvec', 'np_matmul_matmat', 'np_vecdot', 'np_pow',
    'np_pow_float_exponent', 'np_neg', 'np_index', 'np_index_2d', 'np_slice',
    'np_broadcast_scalars', 'np_broadcast_row', 'np_scalar_output', 'np_loop_over_entries',
    'np_in_list', 'np_setitem', 'np_mixed_with_math', 'np_int_array_constant',
    'int_and_float_args', 'only_second_float_differentiated', 'int_used_as_index',
    'string_and_float_args', 'bool_and_float_args', 'softmax_list', 'logsumexp', 'euler_ode',
    'bisection_root', 'polynomial_eval_list', 'moving_average', 'piecewise_spline',
]


@pytest.mark.parametrize("name", ORDER2_CASES)
def test_second_order_check_grads_on_the_corpus(name):
    case = corpus.BY_NAME[name]
    check_grads(case.make(), copy.deepcopy(case.inputs[0]), order=2, modes=("rev", "fwd"),
                argnums=case.argnums)


# ------------------------------------------------- calls dispatched at run time, second order
# A callee read out of a list, a dict or an argument of unknown class is dispatched at run
# time; to the second order its value and its pullback are functions of values whose
# derivatives are dispatched too (forward over reverse of the callee met).


class Cube:
    def __call__(self, x):
        return x * x * x


class Scaled:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.w * math.tanh(x)


def _quartic(t):
    return t ** 4


def sum_of_callables(x, fs):
    s = 0.0
    for f in fs:
        s = s + f(x) * x
    return s


def picked_by_index(x, k):
    fs = [math.sin, math.cos, _quartic, lambda t: math.exp(0.5 * t)]
    return fs[k](x) * x + fs[(k + 1) % 4](x)


def two_argument_callee(x, y, fs):
    return fs[0](x, y) * fs[1](y, x)


def layer_made_inside(x, k):
    layers = [Scaled(2.0 * x), Cube()]  # a callable object holding a value being differentiated
    return layers[k](x) * x


def _norm2(v):
    return sum(t * t for t in v)


def list_changed_after_the_call(x, fs):
    v = [x, 2.0 * x]
    y = fs[0](v) * x  # the callee reads the list as it is here...
    v.append(x * x)  # ...and it changes afterwards
    return y + fs[0](v)


@dataclasses.dataclass
class Spring:
    k: float

    def energy(self, x):
        return 0.5 * self.k * x * x


@dataclasses.dataclass
class Pendulum:
    m: float

    def energy(self, x):
        return self.m * (1.0 - math.cos(x))

    def scaled(self, x, s):
        return s * self.m * (1.0 - math.cos(x))


def energies_in_a_loop(x, parts):
    s = 0.0
    for p in parts:
        s += p.energy(x * x)
    return s


def energies_in_a_generator(x, parts):
    return sum(p.energy(x) * x for p in parts)


def method_of_two_arguments(x, parts):
    return parts[1].scaled(x, x * x) + parts[0].energy(x)


def receiver_made_inside(x, k):
    parts = [Spring(x * x), Pendulum(2.0 * x)]
    return parts[k].energy(x) * x  # the receiver holds values being differentiated


@dataclasses.dataclass
class Box:
    v: float


def dataclass_argument(x, fs):
    return fs[0](Box(x * x), x)


def _box_energy(o, x):
    return o.v * o.v * x


PARTS = [Spring(2.0), Pendulum(1.5)]

DISPATCHED = [
    (energies_in_a_loop, (0.7, PARTS)),
    (energies_in_a_generator, (0.7, PARTS)),
    (method_of_two_arguments, (0.7, PARTS)),
    (receiver_made_inside, (0.7, 0)),
    (receiver_made_inside, (0.7, 1)),
    (dataclass_argument, (0.7, [_box_energy])),
    (list_changed_after_the_call, (0.7, [_norm2])),
    (sum_of_callables, (0.7, [Cube(), Scaled(2.0), math.sin, _quartic])),
    (picked_by_index, (0.7, 2)),
    (picked_by_index, (0.3, 3)),
    (two_argument_callee, (0.7, -0.4, [lambda a, b: a * math.sin(b), math.hypot])),
    (layer_made_inside, (0.6, 1)),
]


@pytest.mark.parametrize("f, args", DISPATCHED, ids=lambda v: getattr(v, "__name__", ""))
def test_dispatched_calls_differentiate_to_second_order(f, args):
    nums = tuple(i for i, a in enumerate(args) if type(a) is float)
    check_grads(f, args, order=2, modes=("rev", "fwd"), argnums=nums)
    h = 1e-4
    x = args[0]

    def g(t):
        return grad(f)(t, *args[1:])

    want = (g(x + h) - g(x - h)) / (2 * h)
    assert math.isclose(grad(grad(f))(*args), want, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(hessian(f)(*args), want, rel_tol=1e-6, abs_tol=1e-8)


def writes_into(xs):
    xs[0] = xs[0] * 2.0
    return xs[0]


def calls_writer(x, fs):
    return fs[0]([x, 1.0]) * x


class PlainBox:
    def __init__(self, v):
        self.v = v

    def energy(self, x):
        return self.v * self.v * x


def plain_object_argument(x, fs):
    return fs[0](PlainBox(x * x), x)


def plain_receiver(x, k):
    parts = [PlainBox(x * x), Pendulum(1.0)]
    return parts[k].energy(x)


def test_plain_objects_holding_values_refuse_a_dispatched_second_derivative():
    # The API's pullback gives an object that is not a dataclass no cotangent: the part of
    # the second derivative through its values would be lost (it was: a wrong Hessian).
    for f, args in ((plain_object_argument, (0.7, [_box_energy])), (plain_receiver, (0.7, 0))):
        check_grads(f, args, modes=("rev", "fwd"), argnums=0)
        for second in (hessian, lambda f: grad(grad(f))):
            with pytest.raises(wengert.NonDifferentiableError, match="not a dataclass") as info:
                second(f)(*args)
            assert info.value.loc is not None and info.value.loc.filename == __file__


def test_dispatched_calls_past_the_second_order_or_writing_arguments_are_refused():
    # A callable object holding a value being differentiated, met at run time: first order
    # only (the API's pullback gives a plain object no cotangent to differentiate again).
    check_grads(layer_made_inside, (0.6, 0), modes=("rev", "fwd"), argnums=0)
    for second in (hessian, lambda f: grad(grad(f))):
        with pytest.raises(wengert.NonDifferentiableError, match="first order only"):
            second(layer_made_inside)(0.6, 0)
    fs = [Cube()]
    with pytest.raises(wengert.NonDifferentiableError, match="not to a third") as info:
        grad(grad(grad(sum_of_callables)))(0.7, fs)
    assert info.value.loc is not None and info.value.loc.filename == __file__
    with pytest.raises(wengert.NonDifferentiableError, match="writes into its arguments"):
        hessian(calls_writer)(0.7, [writes_into])
    assert grad(calls_writer)(0.7, [writes_into]) == pytest.approx(4 * 0.7)


# --- calls dispatched at run time given keyword arguments, or leaving defaults -------------
# A callee read out of a dict or list (known only at run time) called with keywords
# (``table["poly"](x, b=x * x)``, ``o.val(x, p=3.0)``, ``layer(x, scale=x)``) or with
# parameters left to their defaults, in a gradient differentiated again: its derivatives
# are derived at run time for the types met, as for positional calls (it was refused, "this
# call cannot be differentiated to a higher order", or reported as a write).
def _poly(x, a=1.0, b=0.5, c=0.0):
    return a * x * x + b * x ** 3 + c * math.sin(x)


def _keyword_only(x, *, s=1.0):
    return s * math.exp(x)


@dataclasses.dataclass
class _Lin:
    w: float

    def __call__(self, x, scale=1.0):
        return self.w * x * x * scale

    def val(self, x, p=2.0):
        return self.w * x ** p


_TABLE = {"poly": _poly, "kw": _keyword_only, "lam": lambda x, k=2.0: x ** k}
_LINS = [_Lin(2.0), _Lin(0.5)]


def _kw_skipping_defaults(x):
    return _TABLE["poly"](x, c=x)


def _kw_out_of_order(x):
    return _TABLE["poly"](x, b=x * x, a=2.0)


def _defaults_left(x):
    return _TABLE["poly"](x, 2.0, x * x) + _TABLE["poly"](x)


def _kw_of_callable_objects(x):
    return sum(o(x, scale=x) for o in _LINS)


def _kw_of_methods(x):
    return sum(o.val(x, p=3.0) for o in _LINS)


def _kw_of_a_lambda(x):
    return _TABLE["lam"](x * 2, k=3.0)


def _kw_of_objects_made_inside(x, w):
    return sum(o(x, scale=2.0) * o.val(w, p=3.0) for o in [_Lin(w), _Lin(2.0 * w)])


def _builtin_method_of_unknown(x, things):
    s = 0.0
    for t in things:
        if isinstance(t, dict):
            for _, v in t.items():
                s += v * x * x
        else:
            s += t * x
    return s


@pytest.mark.parametrize("f, args", [
    (_kw_skipping_defaults, (0.7,)), (_kw_out_of_order, (0.7,)), (_defaults_left, (0.7,)),
    (_kw_of_callable_objects, (0.7,)), (_kw_of_methods, (0.7,)), (_kw_of_a_lambda, (0.7,)),
    (_kw_of_objects_made_inside, (0.7, 1.3)),
    (_builtin_method_of_unknown, (0.7, [{"a": 1.0, "b": 2}, 3.0, {"c": 0.5}])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_dispatched_calls_with_keywords_or_defaults_differentiate_to_the_second_order(f, args):
    check_grads(f, args, modes=("rev", "fwd"), order=2, argnums=0)
    h = hessian(f)(*args)
    assert jacfwd(jacfwd(f))(*args) == pytest.approx(h, rel=1e-12)
    assert wengert.jacrev(jacfwd(f))(*args) == pytest.approx(h, rel=1e-12)


def _kw_only(x):
    return _TABLE["kw"](x, s=x)


class _Pair(typing.NamedTuple):
    a: float
    b: float


def _replaced_in_a_list(qs, c):
    e = 0.0
    for i, q in enumerate(qs):
        e += q._replace(b=c).b * q.a * (i + 1)
    qs[0] = qs[0]._replace(a=c)
    return e + qs[0].a * qs[1].b


@pytest.mark.parametrize("f, args", [
    (_kw_only, (0.7,)),
    (_replaced_in_a_list, ([_Pair(3.0, 0.5), _Pair(1.3, -0.4), _Pair(-1.2, 2.0)], 1.1)),
    (_replaced_in_a_list, ([_Pair(3, 0.5), _Pair(1.3, -0.4), _Pair(-1.2, 2)], 1.1)),
], ids=["keyword_only", "named_tuples", "named_tuples_of_ints_and_floats"])
def test_dispatched_calls_of_keyword_only_parameters_or_kwargs(f, args):
    # (A callee taking them keyword-only or by ``**kwargs``, a named tuple's ``_replace``:
    # its second derivatives through a function of positional parameters making the call.)
    check_grads(f, args, modes=("rev", "fwd"), order=2)
