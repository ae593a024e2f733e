"""The rule form: every rule's declared cases against central differences, in both modes
and to second order; the generated rule source; the declaration errors."""

from __future__ import annotations

import ast
import copy
import itertools
import linecache
import math
from collections.abc import Iterator

import numpy
import pytest
import scipy.special  # noqa: F401  (a test extra: its rules are among those checked)

import wengert
import wengert.rules  # noqa: F401  (registers the rules)
from wengert import runtime
from wengert.rules import registry
from wengert.rules.form import Keywords, cases, defderiv, deflinear
from wengert.tangents import is_differentiable
from wengert.testing import check_grads, check_rule

# The rules of the optional libraries the tests install (SciPy), declared as a user's code
# importing them would have them declared.
registry.load_optional()

CASES = [(rule.fn, args) for rule in registry.all_rules() for args in rule.cases
         if rule.vjp is not None or rule.jvp is not None]
#: The cases of the Python definitions (``defpython``): NumPy's and Python's functions
#: wengert differentiates by reading a definition of its own in their place.
PY_CASES = [(rule.fn, args) for rule in registry.all_rules() if rule.python is not None
            for args in rule.cases]


def _name(fn) -> str:
    # (a ufunc has a ``__name__`` and no ``__qualname__``)
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or \
        type(fn).__name__


def _calling(fn, args):
    """``fn`` called from a Python function of ``len(args)`` plain parameters (what wengert
    differentiates: the rule is inlined, and differentiated again at second order). An
    in-place operator (an impure primitive of two arguments: ``a += b``, ``runtime.push``)
    updates a local copy (it may not change a caller's array or list); an iterator a rule
    returns is drained by its caller, as a ``for`` loop over it would be."""
    n = len(args)
    if not registry.is_pure(fn) and n == 2:
        if isinstance(args[0], list):
            return lambda a, b: fn(list(a), b)
        return lambda a, b: fn(a * 1.0, b)
    if isinstance(fn(*copy.deepcopy(args)), Iterator):
        assert n <= 2
        if n == 1:
            return lambda a: list(fn(a))
        return lambda a, b: list(fn(a, b))
    if n == 1:
        return lambda a: fn(a)
    if n == 2:
        return lambda a, b: fn(a, b)
    if n == 3:
        return lambda a, b, c: fn(a, b, c)
    if n == 4:
        return lambda a, b, c, d: fn(a, b, c, d)
    return lambda a, b, c, d, e: fn(a, b, c, d, e)


def _user_values(x) -> bool:
    """Whether ``x`` is a value a user's function takes: the run-time helpers' cases also
    hold adjoints (``None`` for a zero, ``runtime.Attrs``), whose second derivatives the
    helpers' own tests check (tests/rules/test_adjoints.py)."""
    if x is None or isinstance(x, runtime.Attrs):
        return False
    if isinstance(x, (list, tuple)):
        return all(_user_values(v) for v in x)
    if isinstance(x, dict):
        return all(_user_values(v) for v in x.values())
    return True


@pytest.mark.parametrize(("fn", "args"), CASES,
                         ids=[f"{_name(fn)}-{i}" for i, (fn, _) in enumerate(CASES)])
def test_rule_case(fn, args):
    # The rules called directly: values, finite differences, linearity, the dot-product
    # identity and batched tangents and cotangents.
    check_rule(fn, *args)
    # Through wengert (inlined), in both modes and to second order.
    if _user_values(args):
        check_grads(_calling(fn, args), args, order=2, modes=("rev", "fwd"),
                    rtol=1e-4, atol=1e-5)


def _wengerts(rule) -> bool:
    """Whether ``rule`` is one of wengert's own (its rules made in a module of wengert's),
    not one a test module registers (tests/test_testing.py registers wrong rules on purpose,
    to see them caught)."""
    made = rule.vjp if rule.vjp is not None else rule.jvp
    return (getattr(made, "__module__", None) or "").startswith("wengert.")


def test_every_rule_has_cases():
    # Every differentiable rule, declared in the rule form (anywhere) or written by hand
    # (``defrule``, ``defvjp``/``defjvp``, one rule shared by several functions) in wengert,
    # is checked at its sample points by test_rule_case.
    missing = [_name(r.fn) for r in registry.all_rules()
               if not r.nondifferentiable and (r.vjp is not None or r.jvp is not None)
               and (r.form or _wengerts(r)) and not r.cases]
    assert not missing, f"rules without cases: {missing}"


_CALLERS = itertools.count()


def _split_keywords(args: tuple) -> tuple[tuple, dict]:
    """A case's positional arguments and its keyword arguments (a last :func:`kw`)."""
    if args and isinstance(args[-1], Keywords):
        return args[:-1], dict(args[-1])
    return args, {}


def _is_attribute(fn) -> bool:
    """Whether ``fn`` is read, not called: a property or a slot of a class (``.T``)."""
    return not callable(fn) and hasattr(fn, "__get__")


def _apply(fn, positional: tuple, keywords: dict):
    """``fn`` at a case: called, or read off its one argument (a property)."""
    if _is_attribute(fn):
        assert len(positional) == 1 and not keywords, "a property's case is its object"
        return fn.__get__(positional[0], type(positional[0]))
    return fn(*positional, **keywords)


def _caller(fn, nargs: int, keywords: dict, drain: bool = False):
    """``def call(a0, .., an): return fn(a0, .., an, k=v, ..)`` (a method or property of a
    class as users spell it: ``a0.sum(a1, k=v)``, ``a0.T``), its keywords written as
    literals where they are (else read from globals), in a source wengert reads;
    ``drain``: the iterator it returns made a list, as a ``for`` loop would walk it."""
    params = ", ".join(f"a{i}" for i in range(nargs))
    ns = {"FN": fn}
    given = []
    for k, v in keywords.items():
        try:
            literal = ast.literal_eval(repr(v)) == v
        except (ValueError, SyntaxError, TypeError):
            literal = False
        if literal is True and type(v) in (int, float, bool, str, tuple, type(None)):
            given.append(f"{k}={v!r}")
        else:
            ns[f"K_{k}"] = v
            given.append(f"{k}=K_{k}")
    owner = getattr(fn, "__objclass__", None)
    if owner is not None and nargs >= 1:
        rest = ", ".join([*(f"a{i}" for i in range(1, nargs)), *given])
        expression = f"a0.{fn.__name__}" + ("" if _is_attribute(fn) else f"({rest})")
    else:
        expression = f"FN({', '.join([params, *given] if params else given)})"
    if drain:
        expression = f"list({expression})"
    text = f"def call({params}):\n    return {expression}\n"
    filename = f"<wengert-test:{_name(fn)}#{next(_CALLERS)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), ns)
    return ns["call"]


#: The types of a dict's views: their definitions make a list of the entries at the call
#: (``rules/python_defs.py`` says why), compared with the view's entries.
_VIEWS = (type({}.items()), type({}.values()), type({}.keys()))


def _same(got, want, where="result") -> None:
    """``got`` is ``want``: of the same type (arrays: dtype and shape), equal numbers."""
    if isinstance(want, _VIEWS) and type(got) is list:
        want = list(want)
    assert type(got) is type(want), f"{where}: {type(got).__name__} for {type(want).__name__}"
    if isinstance(want, numpy.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, \
            f"{where}: {got.dtype}{got.shape} for {want.dtype}{want.shape}"
        numpy.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=where)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{where}: {len(got)} items for {len(want)}"
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{k}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), f"{where}: keys {list(got)} for {list(want)}"
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (float, complex, numpy.number)):
        numpy.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=where)
    else:
        assert got == want, f"{where}: {got!r} for {want!r}"


@pytest.mark.parametrize(("fn", "args"), PY_CASES,
                         ids=[f"{_name(fn)}-{i}" for i, (fn, _) in enumerate(PY_CASES)])
def test_python_definition_case(fn, args):
    # The definition computes what the function does, value and type (type inference
    # and the specialisations read the definition's types for the function's).
    positional, keywords = _split_keywords(args)
    definition = registry.lookup(fn).python
    want = _apply(fn, copy.deepcopy(positional), copy.deepcopy(keywords))
    got = definition(*copy.deepcopy(positional), **copy.deepcopy(keywords))
    drain = isinstance(want, Iterator)
    if drain:  # (``map``, ``itertools``: what they yield)
        assert isinstance(got, Iterator), f"result: {type(got).__name__} for an iterator"
        want, got = list(want), list(got)
    _same(got, want)
    # Through wengert (the definition inlined), in both modes and to second order.
    if _user_values(positional) and any(is_differentiable(a) for a in positional) and \
            is_differentiable(want):
        check_grads(_caller(fn, len(positional), keywords, drain), positional, order=2,
                    modes=("rev", "fwd"), rtol=1e-4, atol=1e-5)


def test_every_python_definition_has_cases():
    missing = [_name(r.fn) for r in registry.all_rules()
               if r.python is not None and _wengerts_definition(r) and not r.cases]
    assert not missing, f"Python definitions without cases ({len(missing)}): {missing}"


def _wengerts_definition(rule) -> bool:
    return (getattr(rule.python, "__module__", None) or "").startswith("wengert.")


def test_the_cases_cover_the_rule_tables():
    declared = [r for r in registry.all_rules() if r.form]
    assert len(declared) >= 40
    assert {r.form for r in declared} == {"defderiv", "deflinear"}


def test_generated_rules_read_the_partial_inline():
    source = "".join(linecache.getlines(registry.lookup(math.tan).vjp.__code__.co_filename))
    assert "ans_bar * (1.0 + ans * ans)" in source
    assert "lambda" not in source.replace("lambda ans_bar", "")


def test_generated_code_names_the_users_variables():
    def f(x):
        y = math.tan(x)
        return y * x

    text = wengert.show(f, mode="vjp")
    assert "(1.0 + y * y)" in text
    assert "_d0" not in text and "partial" not in text


# A user's own primitive declared in the form: both modes and second order follow.
def _softplus(x):
    return math.log1p(math.exp(x))


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


defderiv(_softplus, lambda x: _sigmoid(x))
defderiv(_sigmoid, lambda x, *, ans: ans * (1.0 - ans))
cases(_softplus, (0.3,))
cases(_sigmoid, (-0.7,))


def _scale(x, k):
    return x * k


deflinear(_scale, _scale)
cases(_scale, (numpy.array([0.5, -1.0]), 3))


def _spread(x, s):
    return x * numpy.sign(s) * 2.0


# One differentiable argument of two that broadcast: its tangent is spread to the result's
# shape (a float ``x`` times an array ``s`` is an array).
defderiv(_spread, lambda x, s: numpy.sign(s) * 2.0, None, broadcast=True)
cases(_spread, (0.5, numpy.array([1.0, -2.0, 3.0])), (numpy.array([0.5, 1.5]), 2.0))


def test_user_rules_in_the_form():
    def f(x):
        return _softplus(x) * _sigmoid(x) + _scale(x, 2)

    check_grads(f, (0.4,), order=2, modes=("rev", "fwd"))
    assert wengert.grad(f)(0.4) == pytest.approx(
        _sigmoid(0.4) * _sigmoid(0.4) + _softplus(0.4) * _sigmoid(0.4) * (1 - _sigmoid(0.4))
        + 2.0)


def test_declaration_errors():
    with pytest.raises(ValueError, match="no partial"):
        defderiv(_softplus, None)
    with pytest.raises(ValueError, match="2 arguments but 1 partials"):
        defderiv(_scale, lambda x, k: k)
    with pytest.raises(ValueError, match="different arguments"):
        defderiv(_scale, lambda x, k: k, lambda x: 1.0)
    with pytest.raises(ValueError, match="may not read"):
        defderiv(_softplus, lambda x: ans_bar)  # noqa: F821
    with pytest.raises(ValueError, match="lambda written in a file"):
        defderiv(_softplus, math.cos)
    with pytest.raises(ValueError, match="no rule is registered"):
        cases(lambda x: x, (1.0,))
