"""Rules of the operator module, checked against finite differences in both modes.

Also home of the structural test that every built-in rule body has the shape the
inliner recognises and only calls functions that have rules.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import operator
import textwrap
import types

import numpy
import pytest

import wengert.rules
from wengert.rules import operator as oprules
from wengert.rules import registry
from wengert.testing import check_grads, check_rule
from wengert.transforms import nested_grad

rng = numpy.random.default_rng(42)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4, 2))
Q = rng.standard_normal((4, 4))
V4 = rng.standard_normal(4)
V3 = rng.standard_normal(3)
S = rng.standard_normal((5, 3, 4))  # a stack of five 3x4 matrices
POS = numpy.abs(A) + 0.5  # strictly positive entries
ROW = rng.standard_normal((1, 4))

SCALAR_BINARY = [
    (1.5, 2.0), (-0.7, 3.1), (2.25, -0.4), (1e3, 3e-2),
]

ARRAY_CASES = [
    # (a, b): same shape, array with scalar, scalar with array, broadcasting of both.
    (A, A[::-1, ::-1].copy()), (A, 2.0), (-1.5, A), (A, V4), (V3[:, None].copy(), V4), (ROW, A),
]


@pytest.mark.parametrize("fn", [operator.add, operator.sub, operator.mul])
@pytest.mark.parametrize("a, b", SCALAR_BINARY + ARRAY_CASES)
def test_add_sub_mul(fn, a, b):
    check_rule(fn, a, b)


@pytest.mark.parametrize("a, b", SCALAR_BINARY + [(A, A + 5.0), (A, 2.0), (-1.5, POS),
                                                  (A, V4 + 3.0)])
def test_truediv(a, b):
    check_rule(operator.truediv, a, b)


@pytest.mark.parametrize("a, b", [
    (1.5, 2.3), (0.3, -1.7), (2.0, 0.5), (4.0, 3), (-1.5, 3), (-2.0, -2), (3, 0.7),
    (POS, 2.5), (POS, V4), (2.0, A), (A, 3), (POS, POS[::-1].copy()),
])
def test_pow(a, b):
    check_rule(operator.pow, a, b)


@pytest.mark.parametrize("a, b", [(5.3, 2.1), (-5.3, 2.1), (5.3, -2.1), (0.25, 1.0), (A * 5, 1.3),
                                  (7.1, POS), (A * 5, V4 + 3.0)])
def test_mod(a, b):
    check_rule(operator.mod, a, b)


@pytest.mark.parametrize("fn", [operator.neg, operator.pos, operator.abs])
@pytest.mark.parametrize("x", [2.5, -0.3, A, S])
def test_unary(fn, x):
    check_rule(fn, x)


@pytest.mark.parametrize("a, b", [
    (A, B), (V4, B), (A, V4), (V4, V4), (S, B), (V3, S), (S, V4), (A, numpy.swapaxes(S, 1, 2)),
    (rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))),
])
def test_matmul(a, b):
    check_rule(operator.matmul, a, b)


def test_matmul_closed_form():
    _, pullback = registry.lookup(operator.matmul).vjp(A, B)
    g = numpy.ones((3, 2))
    a_bar, b_bar = pullback(g)
    numpy.testing.assert_allclose(a_bar, g @ B.T)
    numpy.testing.assert_allclose(b_bar, A.T @ g)
    _, pullback = registry.lookup(operator.matmul).vjp(V4, V4 * 2)
    a_bar, b_bar = pullback(1.0)
    numpy.testing.assert_allclose(a_bar, V4 * 2)
    numpy.testing.assert_allclose(b_bar, V4)


@pytest.mark.parametrize("a, b", [([1.0, 2], [3.0]), ((1.0,), (2.0, 3)), ([], [1.5]),
                                  ([1.0, "s"], [2.0])])
def test_add_concatenates_sequences(a, b):
    check_rule(operator.add, a, b)
    check_rule(operator.concat, a, b)


def test_add_sequence_tangent_for_an_inactive_operand():
    _, differential = registry.lookup(operator.add).jvp((1, 2), (3.0,))
    assert differential(None, (0.5,)) == (None, None, 0.5)


@pytest.mark.parametrize("a, b", [([1.0, 2.0], 3), (2, (1.0, 3)), ([1.5], 0), ((1.0, 2.0), 1)])
def test_mul_repeats_sequences(a, b):
    check_rule(operator.mul, a, b)


def test_mul_sequence_adjoint_closed_form():
    _, pullback = registry.lookup(operator.mul).vjp([1.0, 2.0], 3)
    a_bar, n_bar = pullback([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert a_bar == [1.0 + 3.0 + 5.0, 2.0 + 4.0 + 6.0] and n_bar is None
    # Items that are lists or tuples: their adjoints add entry by entry (``+`` would join
    # them: the first repeat's adjoint alone was read back, a third of the gradient).
    _, pullback = registry.lookup(operator.mul).vjp([(1.0, 2.0)], 3)
    a_bar, _ = pullback([(1.0, None), (0.5, 2.0), None])
    assert a_bar == [(1.5, 2.0)]
    _, pullback = registry.lookup(operator.mul).vjp(2, [[1.0, 2.0], [3.0]])
    _, a_bar = pullback([[1.0, 1.0], [2.0], [0.25, None], [4.0]])
    assert a_bar == [[1.25, 1.0], [6.0]]


def _pairs_of_one_tuple(x):
    t = (x, 0.5)
    return sum(p[0] * p[1] + p[0] ** 2 for p in [t] * 3)


def _rows_repeated_left(x, n):
    rows = n * [[x, 2.0 * x]]
    return sum(r[0] * r[1] for r in rows) + rows[-1][1]


def _tuple_of_tuples(x):
    grid = ((x, 1.5), (0.5, x * x)) * 2
    return sum(a * b for a, b in grid) * grid[3][1]


def _product_of_pools(x):
    pools = [(x, 0.5)] * 3
    out = [()]
    for pool in pools:
        out = [done + (y,) for done in out for y in pool]
    return sum(a * b * c for a, b, c in out)


def _repeated_in_place(x):
    rows = [[x, 1.0]]
    rows *= 3
    return sum(math.sin(r[0]) * r[1] for r in rows)


@pytest.mark.parametrize("f, args", [(_pairs_of_one_tuple, (0.7,)), (_rows_repeated_left, (0.7, 3)),
                                     (_tuple_of_tuples, (0.7,)), (_product_of_pools, (0.7,)),
                                     (_repeated_in_place, (0.7,))])
def test_a_sequence_of_lists_or_tuples_repeated_sums_the_repeats_adjoints(f, args):
    """``[t] * 3`` holds one tuple three times: its adjoint is the sum of the three slots'
    (a silently wrong third of it before, the slots' adjoints joined by ``+``); every
    spelling of the repetition, both modes, second order."""
    check_grads(f, args, modes=("rev", "fwd"), order=2)


# --- in-place operators ------------------------------------------------------------


@pytest.mark.parametrize("fn, a, b", [
    (operator.iadd, 1.0, 2.0), (operator.iadd, A, V4), (operator.iadd, A, 2.0),
    (operator.iadd, [1.0], [2.0, 3]), (operator.iconcat, [1.0], [2.0]),
    (operator.isub, 1.0, 2.5), (operator.isub, A, V4),
    (operator.imul, 1.5, -2.0), (operator.imul, A, V4), (operator.imul, [1.0, 2.0], 2),
    (operator.itruediv, 1.5, -2.0), (operator.itruediv, A, V4 + 3.0),
    (operator.ipow, 1.5, 2.2), (operator.ipow, POS, 1.7), (operator.ipow, POS, V4),
    (operator.imod, 5.3, 2.1), (operator.imod, A * 5, 1.3),
    (operator.imatmul, A, Q), (operator.imatmul, S, Q),
])
def test_inplace(fn, a, b):
    check_rule(fn, a, b)


@pytest.mark.parametrize("fn", [operator.imul, operator.itruediv, operator.ipow,
                                operator.imatmul, operator.iadd])
def test_inplace_on_arrays_mutates_and_keeps_the_old_value_for_the_pullback(fn):
    a = POS.copy() if fn is not operator.imatmul else A.copy()
    b = 1.5 if fn is not operator.imatmul else Q
    a_before = a.copy()
    y, pullback = registry.lookup(fn).vjp(a, b)
    assert y is a  # Python semantics: the left operand is updated in place
    a[...] = 1e9  # later writes to the result must not change the derivative
    a_bar, b_bar = pullback(numpy.ones_like(a_before))
    _, expected = registry.lookup(fn).vjp(a_before.copy(), b)
    expected_a_bar, expected_b_bar = expected(numpy.ones_like(a_before))
    numpy.testing.assert_allclose(a_bar, expected_a_bar)
    numpy.testing.assert_allclose(b_bar, expected_b_bar)


def test_iadd_on_a_list_extends_it():
    a = [1.0]
    y, pullback = registry.lookup(operator.iadd).vjp(a, [2.0, 3.0])
    assert y is a and a == [1.0, 2.0, 3.0]
    assert pullback([10.0, 20.0, 30.0]) == ([10.0], [20.0, 30.0])


# --- conventions at the edges of the domain ----------------------------------------


def _grads(fn, *args):
    _, pullback = registry.lookup(fn).vjp(*args)
    return pullback(1.0)


def _dots(fn, args, dots):
    _, differential = registry.lookup(fn).jvp(*args)
    return differential(*dots)


def test_pow_at_zero_base_follows_jax():
    # d(a**b)/db = log(a) a**b is taken as 0 at a == 0.
    a_bar, b_bar = _grads(operator.pow, 0.0, 2.5)
    assert a_bar == 0.0 and b_bar == 0.0
    # 0 ** 0 == 1 and d/da is 0 (b == 0).
    a_bar, b_bar = _grads(operator.pow, 0.0, 0.0)
    assert a_bar in (None, 0.0) and b_bar == 0.0
    # An infinite slope: sqrt at 0.
    assert _grads(operator.pow, 0.0, 0.5)[0] == math.inf
    assert _dots(operator.pow, (0.0, 0.5), (1.0, None)) == math.inf
    # Arrays follow the same conventions.
    a_bar, b_bar = _grads(operator.pow, numpy.array([0.0, 2.0]), numpy.array([0.0, 3.0]))
    numpy.testing.assert_allclose(a_bar, [0.0, 3.0 * 4.0])
    numpy.testing.assert_allclose(b_bar, [0.0, math.log(2.0) * 8.0])


def test_pow_negative_base():
    # An int exponent has no adjoint, and the base derivative is b a^(b-1).
    a_bar, b_bar = _grads(operator.pow, -2.0, 3)
    assert a_bar == pytest.approx(3 * 4.0) and b_bar is None
    # A float exponent at a negative base: log(a) is undefined, so NaN (as JAX).
    a_bar, b_bar = _grads(operator.pow, -2.0, 2.0)
    assert a_bar == pytest.approx(-4.0) and math.isnan(b_bar)


def test_abs_has_slope_zero_at_zero():
    assert _grads(operator.abs, 0.0) == (0.0,)
    assert _grads(operator.abs, -3.0) == (-1.0,)
    numpy.testing.assert_array_equal(_grads(operator.abs, numpy.array([-2.0, 0.0, 5.0]))[0],
                                     [-1.0, 0.0, 1.0])


def test_mod_closed_form():
    # 7.5 % 2 == 1.5 == 7.5 - 3 * 2: d/da = 1, d/db = -3.
    assert _grads(operator.mod, 7.5, 2.0) == (1.0, -3.0)
    # -7.5 % 2 == 0.5 == -7.5 - (-4) * 2: d/db = 4.
    assert _grads(operator.mod, -7.5, 2.0) == (1.0, 4.0)


def test_string_formatting_has_no_derivative():
    y, pullback = registry.lookup(operator.mod).vjp("%.1f", 2.0)
    assert y == "2.0" and pullback(None) == (None, None)


# --- batched tangents and cotangents -----------------------------------------------


@pytest.mark.parametrize("fn, a, b", [
    (operator.mul, 1.5, -2.0), (operator.truediv, 1.5, -2.0), (operator.pow, 1.5, 2.5),
    (operator.sub, 0.5, 4.0), (operator.mul, A, 2.0), (operator.matmul, V4, B),
])
def test_batched_tangents_match_stacked_single_directions(fn, a, b):
    """A (3, ...) stack of tangents gives the stack of the three single jvps."""
    _, differential = registry.lookup(fn).jvp(a, b)
    _, pullback = registry.lookup(fn).vjp(a, b)
    us = rng.standard_normal((3,) + numpy.shape(a))
    ws = rng.standard_normal((3,) + numpy.shape(b))
    batched = differential(us, ws)
    singles = numpy.stack([differential(us[k], ws[k]) for k in range(3)])
    numpy.testing.assert_allclose(batched, singles, rtol=1e-12)
    # Linear: a combination of directions maps to the same combination.
    numpy.testing.assert_allclose(differential(2.0 * us[0] - us[1], 2.0 * ws[0] - ws[1]),
                                  2.0 * singles[0] - singles[1], rtol=1e-10, atol=1e-12)
    y = fn(a, b)
    gs = rng.standard_normal((3,) + numpy.shape(y))
    a_bar, b_bar = pullback(gs)
    for k in range(3):
        a_k, b_k = pullback(gs[k])
        numpy.testing.assert_allclose(a_bar[k], a_k, rtol=1e-12)
        numpy.testing.assert_allclose(b_bar[k], b_k, rtol=1e-12)


def test_mul_batched_closed_form():
    a, b = 1.5, -2.0
    a_dot = numpy.array([1.0, 0.0, 2.0])
    b_dot = numpy.array([0.0, 1.0, -1.0])
    got = _dots(operator.mul, (a, b), (a_dot, b_dot))
    numpy.testing.assert_allclose(got, [b, a, 2.0 * b - a])


def test_none_tangents_are_zero():
    assert _dots(operator.mul, (2.0, 3.0), (None, 1.0)) == 2.0
    assert _dots(operator.mul, (2.0, 3.0), (1.0, None)) == 3.0
    assert _dots(operator.sub, (2.0, 3.0), (None, 1.0)) == -1.0
    assert _dots(operator.truediv, (2.0, 4.0), (None, 1.0)) == pytest.approx(-2.0 / 16.0)
    assert _dots(operator.add, (2.0, 3.0), (None, None)) is None
    numpy.testing.assert_allclose(_dots(operator.add, (2.0, A), (1.0, None)), numpy.ones_like(A))


# --- the private helpers are primitives with rules of their own ---------------------


@pytest.mark.parametrize("fn, args", [
    (oprules._sum_to, (rng.standard_normal((3, 4)), (4,), (3, 4))),
    (oprules._sum_to, (rng.standard_normal((3, 4)), (3, 1), (3, 4))),
    (oprules._sum_to, (rng.standard_normal((3, 4)), (), (3, 4))),
    (oprules._broadcast_to, (V4, (4,), (3, 4))),
    (oprules._broadcast_to, (1.5, (), (2, 3))),
    (oprules._mT, (S,)),
    (oprules._unsqueeze, (A, -2)),
    (oprules._squeeze, (ROW, -2)),
    (oprules._snapshot, (A,)),
    (oprules._log_base, (2.5,)),
    (oprules._log_base, (POS,)),
    (oprules._pos_recip, (0.7,)),
    (oprules._pos_recip, (POS,)),
    (oprules._sum_cotangents, ([1.0, None, 2.5],)),
    (oprules._repeat_adjoint, ([1.0, 2.0, 3.0, 4.0], 2)),
])
def test_helper_rules(fn, args):
    check_rule(fn, *args)


def _writes_its_argument(x, c):
    a = numpy.array(x)
    a[1:-1] += c          # c broadcast over a slice: its adjoint is a sum_to
    x[...] *= -a          # x written: its adjoint passes through the writes
    x[[3, 0]] = x[[0, 3]]
    return 0.0 * c        # nothing above reaches the result: every adjoint is None


def _reaches_only_through_a_branch_not_taken(x, y):
    z = (x - y[None, :]) ** 2
    acc = 0.0
    for i in range(3):
        if x[i, 0] > 10.0:
            acc = acc + numpy.sum(z)
    return acc + numpy.sum(numpy.sin(x) * y)


@pytest.mark.parametrize("f, args", [
    (_writes_its_argument, (numpy.array([0.1, -0.4, 0.7, 0.2]), 0.3)),
    (_reaches_only_through_a_branch_not_taken, (numpy.array([[0.1, -0.4], [0.7, 0.2],
                                                             [-0.3, 0.5]]),
                                                 numpy.array([0.3, -0.7]))),
])
def test_broadcasting_helpers_pass_a_symbolic_zero_through_at_every_order(f, args):
    # A pullback whose adjoint no path reached hands the broadcasting helpers ``None``;
    # differentiated again, the helper's cotangent must be ``None`` too (the transpose
    # read its shapes off the ``None``: a crash in reverse over reverse).
    check_grads(f, args, order=3, modes=("rev", "fwd"), argnums=tuple(range(len(args))))


def test_log_base_conventions():
    assert oprules._log_base(0.0) == 0.0
    assert math.isnan(oprules._log_base(-1.0))
    numpy.testing.assert_array_equal(oprules._log_base(numpy.array([0.0, 1.0])), [0.0, 0.0])
    assert math.isnan(oprules._log_base(numpy.array([-1.0]))[0])


# --- registration -------------------------------------------------------------------

DIFFERENTIABLE = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg,
    operator.pos, operator.abs, operator.mod, operator.matmul, operator.concat,
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow,
    operator.imod, operator.imatmul, operator.iconcat,
]
NONDIFFERENTIABLE = [
    operator.lt, operator.le, operator.eq, operator.ne, operator.ge, operator.gt,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
    operator.rshift, operator.floordiv, operator.ifloordiv, operator.index,
]
INPLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow,
           operator.imod, operator.imatmul, operator.iconcat]


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_differentiable_registration(fn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.vjp is not None and rule.jvp is not None
    assert not rule.nondifferentiable
    # In-place operators mutate an operand that may be aliased: never dropped as dead code.
    assert rule.pure == (fn not in INPLACE)


@pytest.mark.parametrize("fn", NONDIFFERENTIABLE, ids=lambda f: f.__name__)
def test_nondifferentiable_registration(fn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.nondifferentiable and rule.pure and not rule.warn


# --- every built-in rule body has the shape the inliner recognises ------------------

_FORBIDDEN = (ast.Try, ast.With, ast.AsyncWith, ast.Yield, ast.YieldFrom, ast.Await, ast.Global,
              ast.Nonlocal, ast.ClassDef, ast.Import, ast.ImportFrom, ast.AsyncFunctionDef)
_ALLOWED_UNREGISTERED = {list, tuple, TypeError, ValueError}


def _builtin_rule_functions():
    assert wengert.rules.registry is registry
    seen = {}
    for rule in registry.all_rules():
        for f in (rule.vjp, rule.jvp):
            if f is not None and f.__module__.startswith("wengert.rules."):
                seen[id(f)] = f
    return sorted(seen.values(), key=lambda f: (f.__module__, f.__qualname__))


def _resolve(node, env):
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return getattr(builtins, node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_resolve(node.value, env), node.attr)
    raise AssertionError(f"call of a computed callee: {ast.dump(node)}")


@pytest.mark.parametrize("rule_fn", _builtin_rule_functions(),
                         ids=lambda f: f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}")
def test_rule_body_is_inlinable(rule_fn):
    tree = ast.parse(textwrap.dedent(inspect.getsource(rule_fn)))
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef)
    for node in ast.walk(fdef):
        assert not isinstance(node, _FORBIDDEN), f"{type(node).__name__} in a rule body"
    # One return, at the end: (value, lambda ...) or (value, name of a nested def).
    own_returns = [n for n in _walk_own(fdef) if isinstance(n, ast.Return)]
    last = fdef.body[-1]
    assert own_returns == [last], "a rule must end with its only top-level return"
    assert isinstance(last.value, ast.Tuple) and len(last.value.elts) == 2
    second = last.value.elts[1]
    nested = {n.name for n in fdef.body if isinstance(n, ast.FunctionDef)}
    assert isinstance(second, ast.Lambda) or (isinstance(second, ast.Name) and second.id in nested)
    # Every call is of something with a rule (or a container/exception constructor).
    env = dict(rule_fn.__globals__)
    # A rule made by a function for several primitives reads them from its closure.
    env.update(zip(rule_fn.__code__.co_freevars,
                   (c.cell_contents for c in rule_fn.__closure__ or ())))
    local_defs = {n.name for n in ast.walk(fdef) if isinstance(n, ast.FunctionDef)}
    body = ast.Module(body=fdef.body, type_ignores=[])  # not the decorators
    for node in ast.walk(body):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in local_defs:
                continue
            callee = _resolve(node.func, env)
            # A Python helper of a rules module is inlined and differentiated from its source.
            helper = isinstance(callee, types.FunctionType) and \
                callee.__module__.startswith("wengert.rules.")
            # A run-time dispatcher (the second derivatives of a call dispatched at run
            # time) is refused, at the user's call, when differentiated again.
            dispatcher = callee in nested_grad._DISPATCHERS
            assert registry.lookup(callee) is not None or callee in _ALLOWED_UNREGISTERED or \
                helper or dispatcher, f"{ast.unparse(node)} calls {callee!r}, which has no rule"


def _walk_own(fdef):
    """The nodes of a function body, not descending into nested functions and lambdas."""
    stack = [n for n in fdef.body if not isinstance(n, ast.FunctionDef)]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.Lambda)):
                stack.append(child)
