"""Inlining rules of a variable number of arguments (``transforms/inline``).

``math.log(x, base)``, ``math.hypot(*xs)``, ``max``/``min``/``sum`` and the other rules
written with ``*args`` are specialised on the arity of each call (``bind_arity``, then
the sequence folds of ``specialize``), so a gradient's code holds their bodies rather
than a call returning a pullback closure, and forward mode differentiates that code
again. Hessians (forward over reverse) are checked against central differences of
``wengert.grad``; first and second derivatives in both modes with ``check_grads``.
"""

from __future__ import annotations

import builtins
import math

import numpy
import pytest

import wengert
from wengert.codegen.emit import generate
from wengert.driver.pipeline import lower
from wengert.ir import nodes as n
from wengert.ir import verify
from wengert.rules import registry
from wengert.testing import check_grads
from wengert.transforms.inline import bind_arity, specialized_jvp, specialized_vjp
from wengert.transforms.specialize import specialize


def loop_of_max(x, y):
    s = 0.0
    for k in range(3):
        s = s + max(x * k, y)
    return s


#: Functions of two floats calling variadic rules, each at points where no two
#: candidates of a ``max``/``min`` are within a finite-difference step of a tie.
CASES = {
    "log_const_base": lambda x, y: math.log(x * y, 3.0),
    "log_int_base": lambda x, y: math.log(x * y, 10),
    "log_active_base": lambda x, y: math.log(x * y, y + 2.0),
    "log_natural": lambda x, y: math.log(x * y),
    "hypot_two": lambda x, y: math.hypot(x, y * x),
    "hypot_float_const": lambda x, y: math.hypot(x, y, 1.0),
    "hypot_int_const": lambda x, y: math.hypot(x, 2, y),
    "hypot_one": lambda x, y: math.hypot(x * y),
    "max_three": lambda x, y: max(x, y * 2, 0.5),
    "max_int_const": lambda x, y: max(x * y, 0, x - y),
    "min_two": lambda x, y: min(x * y, y),
    "min_int_const": lambda x, y: min(x * x, 2, y * y * x),
    "max_of_list": lambda x, y: max([x * x, y * y * y]),
    "min_of_tuple": lambda x, y: min((x * y, y * y, 3.0)),
    "sum_of_tuple": lambda x, y: sum((x, y * x, 3.0)),
    "sum_active_start": lambda x, y: sum([x * x, y], x * y),
    "sum_int_start": lambda x, y: sum([x * y, y * y], 1),
    "fsum_mixed": lambda x, y: math.fsum([x * x, x * y, 2]),
    "prod_of_list": lambda x, y: math.prod([x, y, x * y]),
    "prod_of_tuple": lambda x, y: math.prod((x, 2.0, y * y)),
    "dist": lambda x, y: math.dist((x, y), (1.0, x * y)),
    "pow_builtin": lambda x, y: pow(x, y),
    "nested": lambda x, y: math.log(max(x, y), 2.0) + math.hypot(x, y),
    "max_in_loop": loop_of_max,
}

POINTS = [(0.7, 1.3), (1.9, 0.4)]


def _fd_hessian(f, args, eps=1e-5):
    g = wengert.grad(f, tuple(range(len(args))))
    cols = []
    for j in range(len(args)):
        ap, am = list(args), list(args)
        ap[j] += eps
        am[j] -= eps
        cols.append([(p - m) / (2 * eps) for p, m in zip(g(*ap), g(*am))])
    return numpy.array(cols).T


def test_enough_cases():
    assert len(CASES) >= 15


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("name", list(CASES))
def test_hessian_matches_finite_differences_of_the_gradient(name, point):
    f = CASES[name]
    h = numpy.array(wengert.hessian(f, (0, 1))(*point), dtype=float)
    numpy.testing.assert_allclose(h, _fd_hessian(f, point), rtol=1e-4, atol=1e-5)
    numpy.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_in_both_modes(name, point):
    f = CASES[name]
    check_grads(f, point, modes=("rev", "fwd"))
    # Second order: forward mode over the gradient's generated code.
    check_grads(wengert.grad(f, (0, 1)), point, modes=("fwd",))


# ----------------------------------------------------------------------------- inlined


def test_log_with_a_base_is_inlined_in_the_gradient():
    source = wengert.show(lambda x, y: math.log(x * y, 3.0), mode="vjp")
    assert "log_vjp" not in source
    assert "math.log(" in source


@pytest.mark.parametrize("name", ["log_active_base", "hypot_float_const", "max_three",
                                  "min_two", "max_of_list", "sum_active_start",
                                  "prod_of_list", "pow_builtin"])
def test_gradients_call_no_rule(name):
    source = wengert.show(CASES[name], mode="vjp")
    assert "_vjp(" not in source.split("\n", 1)[1], source


#: (primitive, argument types) of calls whose rules inline in both modes.
VARIADIC_CALLS = [
    (math.log, (float,)), (math.log, (float, float)), (math.log, (float, int)),
    (math.hypot, (float,)), (math.hypot, (float, int, float, float)),
    (builtins.max, (float, float)), (builtins.max, (float, int, float)),
    (builtins.max, (list,)), (builtins.min, (tuple,)), (builtins.min, (int, float)),
    (builtins.sum, (list,)), (builtins.sum, (tuple, float)), (builtins.sum, (numpy.ndarray,)),
    (builtins.pow, (float, float)), (builtins.pow, (int, int, int)),
    (builtins.zip, (list, tuple)), (builtins.enumerate, (list,)),
    (builtins.enumerate, (list, int)), (builtins.list, (tuple,)), (builtins.tuple, (list,)),
    (builtins.sorted, (list,)), (builtins.dict, (list,)), (builtins.dict, (dict,)),
]


@pytest.mark.parametrize("primitive, types", VARIADIC_CALLS,
                         ids=lambda v: getattr(v, "__name__", None) or
                         "-".join(t.__name__ for t in v))
def test_variadic_rules_inline_at_a_known_arity(primitive, types):
    rule = registry.lookup(primitive)
    assert specialized_vjp(rule.vjp, len(types), types) is not None
    tangent_types = [t if t in (float, numpy.ndarray) else None for t in types]
    assert specialized_jvp(rule.jvp, len(types), types, tangent_types) is not None


TIES = [
    (lambda f: lambda x, y: f(x, y), (1.0, 1.0)),
    (lambda f: lambda x, y, z: f(x, y, z), (2.0, 0.5, 2.0)),
    (lambda f: lambda xs: f(xs), ([1.5, 1.5],)),
]


@pytest.mark.parametrize("make, args", TIES)
@pytest.mark.parametrize("primitive", [builtins.max, builtins.min], ids=lambda f: f.__name__)
def test_ties_follow_the_rule_called_directly(primitive, make, args):
    # At a tie there is no derivative; by convention the first extreme gets the adjoint.
    nums = tuple(range(len(args)))
    got = wengert.grad(make(primitive), nums)(*args)
    _, pullback = registry.lookup(primitive).vjp(*args)
    want = pullback(1.0)
    if len(args) > 1:
        want = tuple(0.0 if w is None else w for w in want)
    else:
        got, want = got[0], [0.0 if w is None else w for w in want[0]]
    assert got == want


# ----------------------------------------------------------------------------- arity


def _bound(f, nargs, types):
    fn = lower(f)
    assert bind_arity(fn, nargs, f.__defaults__ or (), f.__kwdefaults__ or {})
    specialize(fn, list(types))
    verify(fn)
    return fn, generate(fn)[0]


def _kinds(fn):
    return {type(op).__name__ for op in n.walk(fn.body)}


def _callees(fn):
    return {op.value for op in n.walk(fn.body) if isinstance(op, n.Const) and callable(op.value)}


def varargs(*args):
    total = 0.0
    for a in args:
        total = total + a
    doubled = [2.0 * a for a in args]
    return len(args), args[-1], total, tuple(doubled), math.hypot(*args)


def test_star_args_are_bound_to_the_arguments_of_the_call():
    fn, compiled = _bound(varargs, 3, [float, float, float])
    assert len(fn.body.args) == 3
    assert "For" not in _kinds(fn)
    assert len not in _callees(fn) and tuple not in _callees(fn)
    assert not any(isinstance(op, n.Call) and op.starred for op in n.walk(fn.body))
    assert compiled(1.5, -2.0, 4.0) == varargs(1.5, -2.0, 4.0)


def defaults(x, scale=2.0, *rest, shift=1, **options):
    if len(options) > 0:
        return None
    return x * scale + shift + len(rest)


def test_omitted_arguments_take_their_literal_defaults():
    fn, compiled = _bound(defaults, 1, [float])
    assert "If" not in _kinds(fn)
    assert compiled(1.5) == defaults(1.5)
    fn, compiled = _bound(defaults, 4, [float, float, int, int])
    assert compiled(1.5, 3.0, 7, 8) == defaults(1.5, 3.0, 7, 8)


_MARKER = object()


def test_a_call_that_cannot_bind_is_refused():
    def two(a, b):
        return a + b

    def marker(a, key=_MARKER):
        return a

    def keyword(a, *, key):
        return a

    assert not bind_arity(lower(two), 3)
    assert not bind_arity(lower(two), 1)
    assert not bind_arity(lower(marker), 1, marker.__defaults__)
    assert not bind_arity(lower(keyword), 1)


def appended(x):
    xs = [x]
    xs.append(x * 2.0)
    xs.append(3.0)
    return len(xs), tuple(xs)


def escapes(x):
    xs = [x]
    xs.append(x * 2.0)
    _extend(xs)
    return len(xs), tuple(xs)


def _extend(xs):
    xs.append(0.5)


def test_appends_to_a_list_display_fold_into_it():
    fn, compiled = _bound(appended, 1, [float])
    assert "GetAttr" not in _kinds(fn) and len not in _callees(fn)
    assert compiled(1.5) == appended(1.5)


def test_a_list_passed_on_keeps_its_appends_and_length():
    fn, compiled = _bound(escapes, 1, [float])
    assert len in _callees(fn)
    assert compiled(1.5) == escapes(1.5)


def test_a_rule_made_by_a_function_in_a_dotted_module_names_its_primitive(tmp_path, monkeypatch):
    # The rule reads its primitive from its closure; generated code spells it through the
    # module's own name (it bound ``pkg`` to ``pkg.sub.mod`` and failed with AttributeError).
    import importlib

    import wengert
    (tmp_path / "dotpkg" / "sub").mkdir(parents=True)
    (tmp_path / "dotpkg" / "__init__.py").write_text("")
    (tmp_path / "dotpkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "dotpkg" / "sub" / "mod.py").write_text(
        "from wengert.rules.registry import defjvp, defvjp\n\n\n"
        "def double(a):\n    return 2.0 * a\n\n\n"
        "def make_rules(prim, k):\n"
        "    def vjp(a):\n        return prim(a), lambda g: (g * k,)\n\n"
        "    def jvp(a):\n        return prim(a), lambda a_dot: a_dot * k\n\n"
        "    defvjp(prim)(vjp)\n    defjvp(prim)(jvp)\n\n\n"
        "make_rules(double, 2.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    double = importlib.import_module("dotpkg.sub.mod").double

    def f(a):
        return double(a) * a

    assert wengert.grad(f)(1.5) == pytest.approx(6.0)
    assert wengert.jvp(f, (1.5,), (1.0,))[1] == pytest.approx(6.0)
    assert wengert.hessian(f)(1.5) == pytest.approx(4.0)
