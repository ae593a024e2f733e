"""Reverse mode's diagnostics, and the caches behind ``grad`` that must never go stale.

* ``NonDifferentiableError``: an active value passed to a callable with neither a
  rule nor Python source is reported like a compiler error (``file:line:col``, the
  line, a caret, the callee), every time (nothing half-built is cached); the same
  callable is fine when it only ever sees inactive values.
* ``NonDifferentiableWarning``: ``int()``/``round()``/``math.floor`` of an active
  value whose result is used; none for ``int()`` of an inactive value.
* Stale-cache traps: rebinding a global, redefining a helper (rebinding the module
  global or re-executing the module), two closures of one ``def`` and a closure
  variable shadowing a global must each give the gradient of the code as it is now.
"""

from __future__ import annotations

import cmath
import importlib
import importlib.util
import inspect
import math
import operator
import os
import sys
import types
import uuid
import warnings

import numpy
import pytest

import wengert
from wengert import NonDifferentiableError, NonDifferentiableWarning, WengertError
from wengert.driver import cache
from wengert.testing import check_grads

THIS_FILE = os.path.abspath(__file__)


def line_of(fn, marker: str) -> int:
    """The file line number of the line of ``fn``'s source that contains ``marker``."""
    lines, start = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return start + k
    raise AssertionError(f"{marker!r} not in the source of {fn.__name__}")


def assert_located(message: str, fn, marker: str, callee_names: tuple[str, ...]) -> None:
    """The message points at ``marker``'s line in this file, with a caret and the callee."""
    line = line_of(fn, marker)
    assert THIS_FILE in message or os.path.basename(THIS_FILE) in message, message
    assert f":{line}:" in message, f"expected line {line} in:\n{message}"
    assert any("^" in text for text in message.splitlines()), message
    assert any(name in message for name in callee_names), (
        f"expected one of {callee_names} in:\n{message}")
    # The offending source line is quoted.
    source_line = inspect.getsourcelines(fn)[0][line - inspect.getsourcelines(fn)[1]].strip()
    assert source_line.split("#")[0].strip() in message, message


# ---------------------------------------------------------------------------
# NonDifferentiableError
# ---------------------------------------------------------------------------

times_two = operator.methodcaller("__mul__", 2.0)  # a C callable: no rule, no source
vectorized_square = numpy.frompyfunc(lambda t: t * t, 1, 1)  # a ufunc object


def active_into_methodcaller(x):
    y = x * 3.0
    z = times_two(y)  # MARK-methodcaller
    return z + x


def active_into_gamma(x):
    return cmath.phase(x) * x  # MARK-gamma


def active_into_frompyfunc(x):
    y = vectorized_square(x + 1.0)  # MARK-frompyfunc
    return y


HOLDER = types.SimpleNamespace(gamma=cmath.phase)


def active_into_attribute_callable(x):
    return HOLDER.gamma(x) * x  # MARK-attribute


def apply_to(g, x):
    return g(x) + x  # MARK-argument


def helper_calling_gamma(t):
    return cmath.phase(t + 1.0)  # MARK-helper


def calls_bad_helper(x):
    return helper_calling_gamma(x * x) + x


def inactive_into_methodcaller(x):
    return times_two(1.5) * x + cmath.phase(3.5) * x + vectorized_square(2.0) * x


def int_into_gamma(x, n):
    return cmath.phase(-n) * x


@pytest.mark.parametrize(("fn", "marker", "names"), [
    (active_into_methodcaller, "MARK-methodcaller", ("times_two", "methodcaller")),
    (active_into_gamma, "MARK-gamma", ("phase",)),
    (active_into_frompyfunc, "MARK-frompyfunc", ("vectorized_square", "frompyfunc")),
], ids=["methodcaller", "math_gamma", "frompyfunc"])
def test_active_value_into_c_callable_is_an_error(fn, marker, names):
    with pytest.raises(NonDifferentiableError) as info:
        wengert.grad(fn)(1.5)
    assert isinstance(info.value, WengertError)
    assert_located(str(info.value), fn, marker, names)
    # A second attempt fails the same way: nothing half-built was cached.
    with pytest.raises(NonDifferentiableError) as again:
        wengert.grad(fn)(1.5)
    assert str(again.value) == str(info.value)
    with pytest.raises(NonDifferentiableError):
        wengert.vjp(fn, 2.5)


def test_callee_known_only_at_run_time_is_located_too():
    # The callee is found by the runtime dispatcher (an attribute of an object, a function
    # passed in), not at transform time; the error must still point at the call.
    with pytest.raises(NonDifferentiableError) as info:
        wengert.grad(active_into_attribute_callable)(1.5)
    assert_located(str(info.value), active_into_attribute_callable, "MARK-attribute",
                   ("phase",))
    with pytest.raises(NonDifferentiableError) as info:
        wengert.grad(apply_to, argnums=1)(cmath.phase, 1.5)
    assert_located(str(info.value), apply_to, "MARK-argument", ("phase",))


def test_error_points_into_the_helper():
    with pytest.raises(NonDifferentiableError) as info:
        wengert.grad(calls_bad_helper)(0.7)
    assert_located(str(info.value), helper_calling_gamma, "MARK-helper", ("phase",))
    with pytest.raises(NonDifferentiableError):
        wengert.value_and_grad(calls_bad_helper)(0.7)


def test_c_callables_with_inactive_arguments_are_fine():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonDifferentiableWarning)
        g = wengert.grad(inactive_into_methodcaller)(0.7)
        assert g == pytest.approx(3.0 + cmath.phase(3.5) + 4.0, rel=1e-12)
        g = wengert.grad(int_into_gamma)(0.7, 4)
        assert g == pytest.approx(math.pi, rel=1e-12)


def test_vjp_int_primal_into_c_callable_is_fine():
    # wengert.vjp differentiates every primal, but an int has no tangent: inactive.
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonDifferentiableWarning)
        out, pullback = wengert.vjp(int_into_gamma, 0.7, 4)
        assert out == pytest.approx(0.7 * math.pi)
        assert pullback(1.0) == (pytest.approx(math.pi), None)


# ---------------------------------------------------------------------------
# NonDifferentiableWarning
# ---------------------------------------------------------------------------


def int_of_active_used(x):
    return int(x) * x + x  # MARK-int


def round_of_active_used(x):
    k = round(x * 2.0)  # MARK-round
    return k * x


def floor_of_active_used(x):
    return math.floor(x) + x * x  # MARK-floor


def int_of_inactive(x, n):
    return x * int(n * 1.5) + x * round(n / 3) + math.floor(n * 0.5) * x


@pytest.mark.parametrize(("fn", "marker", "x", "expected"), [
    (int_of_active_used, "MARK-int", 2.5, 2.0 + 1.0),
    (round_of_active_used, "MARK-round", 1.3, 3.0),
    (floor_of_active_used, "MARK-floor", 1.7, 3.4),
], ids=["int", "round", "math_floor"])
def test_derivative_cutting_call_on_active_value_warns(fn, marker, x, expected):
    with pytest.warns(NonDifferentiableWarning) as record:
        g = wengert.grad(fn)(x)
    assert g == pytest.approx(expected, rel=1e-12)
    messages = [str(w.message) for w in record if issubclass(w.category,
                                                            NonDifferentiableWarning)]
    assert any(f":{line_of(fn, marker)}:" in m for m in messages), messages


def test_derivative_cutting_call_on_inactive_value_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonDifferentiableWarning)
        g = wengert.grad(int_of_inactive)(1.5, 4)
    assert g == pytest.approx(6.0 + 1.0 + 2.0, rel=1e-12)


# ---------------------------------------------------------------------------
# Stale-cache traps
# ---------------------------------------------------------------------------


@pytest.fixture
def load_module(tmp_path):
    """``load(source)`` writes ``source`` to a fresh module file and imports it."""
    names = []

    def load(source: str, name: str | None = None):
        name = name or f"wengert_vjp_cache_{uuid.uuid4().hex}"
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        names.append(name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in names:
        sys.modules.pop(name, None)


def rewrite_and_reexecute(module, source: str):
    """Rewrite ``module``'s file and re-execute it in the same module dict (like reload)."""
    path = module.__file__
    old = os.stat(path)
    with open(path, "w") as fh:
        fh.write(source)
    # A later mtime, so neither linecache nor the bytecode cache reuse the old text.
    os.utime(path, (old.st_atime + 10, old.st_mtime + 10))
    module.__spec__.loader.exec_module(module)
    return module


GLOBAL_SCALE_SOURCE = """
FACTOR = 2.0


def f(x):
    return FACTOR * x * x
"""


def test_rebinding_a_global_changes_the_gradient(load_module):
    mod = load_module(GLOBAL_SCALE_SOURCE)
    g = wengert.grad(mod.f)
    assert g(1.5) == pytest.approx(2.0 * 2.0 * 1.5)
    mod.FACTOR = 3.0
    assert wengert.grad(mod.f)(1.5) == pytest.approx(3.0 * 2.0 * 1.5)
    assert g(1.5) == pytest.approx(3.0 * 2.0 * 1.5)  # the same grad object sees it too
    out, pullback = wengert.vjp(mod.f, 1.5)
    assert out == pytest.approx(3.0 * 2.25)
    assert pullback(1.0)[0] == pytest.approx(9.0)
    mod.FACTOR = 2.0
    assert g(1.5) == pytest.approx(6.0)


HELPER_SOURCE = """
import math


def helper(t):
    return t * t


def f(x):
    return helper(x) + x
"""

HELPER_SOURCE_REDEFINED = """
import math


def helper(t):
    return math.sin(t) * 3.0  # a longer line, so the file's size changes too


def f(x):
    return helper(x) + x
"""


def test_rebinding_a_helper_changes_the_gradient(load_module):
    mod = load_module(HELPER_SOURCE)
    g = wengert.grad(mod.f)
    assert g(0.5) == pytest.approx(2.0 * 0.5 + 1.0)
    mod.helper = lambda t: t * t * t
    assert wengert.grad(mod.f)(0.5) == pytest.approx(3.0 * 0.25 + 1.0)
    assert g(0.5) == pytest.approx(3.0 * 0.25 + 1.0)


def test_reexecuting_the_module_changes_the_gradient(load_module):
    mod = load_module(HELPER_SOURCE)
    old_f = mod.f
    assert wengert.grad(old_f)(0.5) == pytest.approx(2.0)
    mod = rewrite_and_reexecute(mod, HELPER_SOURCE_REDEFINED)
    expected = 3.0 * math.cos(0.5) + 1.0
    assert wengert.grad(mod.f)(0.5) == pytest.approx(expected)
    # The old function object shares the (re-executed) module dict: it now calls the
    # new helper, and its gradient must say so.
    assert wengert.grad(old_f)(0.5) == pytest.approx(expected)


def test_reexecuting_a_module_with_a_changed_function_body(load_module):
    mod = load_module("def f(x):\n    return x * x\n")
    assert wengert.grad(mod.f)(1.5) == pytest.approx(3.0)
    mod = rewrite_and_reexecute(mod, "def f(x):\n    return x * x * x * 2.0\n")
    assert wengert.grad(mod.f)(1.5) == pytest.approx(6.0 * 2.25)


TWO_LEVEL_SOURCE = """
SCALE = 2.0


def inner(t):
    return SCALE * t * t


def middle(t):
    return inner(t) + t


def f(x):
    return middle(x) * 3.0
"""


def test_a_global_read_two_calls_down_is_seen(load_module):
    # ``f`` links to ``middle``'s VJP, which links to ``inner``'s: a change that only
    # ``inner`` sees must still reach ``f``'s gradient.
    mod = load_module(TWO_LEVEL_SOURCE)
    g = wengert.grad(mod.f)
    assert g(0.5) == pytest.approx(3.0 * (2.0 * 2.0 * 0.5 + 1.0))
    mod.SCALE = 5.0
    assert g(0.5) == pytest.approx(3.0 * (2.0 * 5.0 * 0.5 + 1.0))
    mod.inner = lambda t: t * t * t
    assert g(0.5) == pytest.approx(3.0 * (3.0 * 0.25 + 1.0))


def test_replacing_a_linked_helpers_code_is_seen(load_module):
    mod = load_module(TWO_LEVEL_SOURCE)
    g = wengert.grad(mod.f)
    assert g(0.5) == pytest.approx(3.0 * (2.0 * 2.0 * 0.5 + 1.0))
    mod.inner.__code__ = (lambda t: 4.0 * t).__code__
    assert g(0.5) == pytest.approx(3.0 * (4.0 + 1.0))


MUTUAL_SOURCE = """
def even(x, n):
    if n == 0:
        return x * x
    return WEIGHT * odd(x, n - 1)


def odd(x, n):
    if n == 0:
        return x
    return even(x, n - 1) + x


WEIGHT = 1.0
"""


def _mutual(x, n, weight):
    if n == 0:
        return x * x
    return weight * (_mutual(x, n - 2, weight) + x if n - 1 else x)


def test_mutual_recursion_links_and_stays_fresh(load_module):
    mod = load_module(MUTUAL_SOURCE)
    g = wengert.grad(mod.even)
    for weight in (1.0, 3.0):
        mod.WEIGHT = weight
        expected = (_mutual(0.7 + 1e-6, 5, weight) - _mutual(0.7 - 1e-6, 5, weight)) / 2e-6
        assert mod.even(0.7, 5) == pytest.approx(_mutual(0.7, 5, weight))
        assert g(0.7, 5) == pytest.approx(expected, rel=1e-6)
        # ``odd`` was derived while ``even`` was being derived: its cache entry must
        # go stale with ``even``'s global too.
        assert wengert.grad(mod.odd)(0.7, 4) == pytest.approx(
            (mod.odd(0.7 + 1e-6, 4) - mod.odd(0.7 - 1e-6, 4)) / 2e-6, rel=1e-6)


def test_a_helper_that_cannot_be_differentiated_fails_at_transform_time():
    # Like a compiler: the error comes when ``f`` is transformed (it links to ``uses``),
    # whether or not the branch runs, and points into the helper; nothing is cached.
    def uses(x, flag):
        if flag:
            return cmath.phase(x) * 2.0
        return x * 3.0

    def f(x, flag):
        return uses(x, flag) + x

    for flag in (False, True, False):
        with pytest.raises(wengert.NonDifferentiableError, match="cmath.phase"):
            wengert.grad(f)(0.5, flag)
    assert not [e for e in cache.VJPS.values() if e.compiled.__name__ == "uses_vjp"]


def make_scaled_square(k):
    def scaled_square(x):
        return k * x * x

    return scaled_square


def make_applier(g):
    def applied(x):
        return g(x) * 2.0

    return applied


def test_two_closures_of_one_def_give_different_gradients():
    two, three = make_scaled_square(2.0), make_scaled_square(3.0)
    assert two.__code__ is three.__code__
    assert wengert.grad(two)(1.0) == pytest.approx(4.0)
    assert wengert.grad(three)(1.0) == pytest.approx(6.0)
    assert wengert.grad(two)(1.0) == pytest.approx(4.0)
    sin_applied, cos_applied = make_applier(math.sin), make_applier(math.cos)
    assert wengert.grad(sin_applied)(0.3) == pytest.approx(2.0 * math.cos(0.3))
    assert wengert.grad(cos_applied)(0.3) == pytest.approx(-2.0 * math.sin(0.3))


scale = 10.0  # a module global with the same name as the closure variable below


def make_closure_scaled(scale):
    def closure_scaled(x):
        return scale * x * x

    return closure_scaled


def global_scaled(x):
    return scale * x * x


def test_closure_variable_and_global_of_the_same_name_do_not_mix():
    local = make_closure_scaled(2.0)
    assert wengert.grad(local)(1.0) == pytest.approx(4.0)
    assert wengert.grad(global_scaled)(1.0) == pytest.approx(20.0)
    assert wengert.grad(make_closure_scaled(3.0))(1.0) == pytest.approx(6.0)
    assert wengert.grad(local)(1.0) == pytest.approx(4.0)


def test_same_code_object_with_other_globals():
    # One code object, two globals dicts: the cache must tell them apart.
    other = types.FunctionType(global_scaled.__code__, {**globals(), "scale": 4.0})
    assert wengert.grad(global_scaled)(1.0) == pytest.approx(20.0)
    assert wengert.grad(other)(1.0) == pytest.approx(8.0)
    assert wengert.grad(global_scaled)(1.0) == pytest.approx(20.0)


def _list_filled_after_it_is_stored(x, n):
    rows = []
    row = []
    rows.append(row)
    for _ in range(n):
        row.append(x * 2.0)
    return rows[0][0] * x


def _list_filled_in_a_loop_that_stores_it(x, n):
    rows = []
    row = []
    for _ in range(n):
        row.append(x)
        rows.append(row)
    return rows[0][1] * x


def _list_filled_after_it_is_stored_known(x):
    rows = []
    row = []
    rows.append(row)
    row.append(x * 2.0)
    return rows[0][0] * x


@pytest.mark.parametrize("f", [_list_filled_in_a_loop_that_stores_it])
def test_a_list_changed_after_it_is_stored_is_refused_in_reverse_mode(f):
    # Reverse mode once read the stored list as it was when stored: a wrong gradient.
    with pytest.raises(wengert.NonDifferentiableError, match="changed after it was stored") \
            as info:
        wengert.vjp(f, 1.5, 2)
    assert "row.append" in str(info.value)
    # Forward mode follows the shared object: it is right (and ``grad`` of this function
    # of one float runs it).
    check_grads(f, (1.5, 2), modes=("fwd",), argnums=(0,))
    assert wengert.grad(f)(1.5, 2) == wengert.jvp(f, (1.5, 2), (1.0, 0))[1]


def test_a_list_filled_after_it_is_stored_is_right_when_the_container_is_known():
    # Specialised first: rows[0] is row itself, so nothing is read through an alias.
    check_grads(_list_filled_after_it_is_stored_known, (1.5,), modes=("rev", "fwd"))
    check_grads(_list_filled_after_it_is_stored, (1.5, 2), modes=("rev", "fwd"),
                argnums=(0,))


# --------------------------------------------------------- writes into one of several objects


def _chosen_by_if(xs, c):
    if len(xs) > 100:
        ys = [0.0]
    else:
        ys = xs
    ys[0] = ys[0] * c  # MARK-if
    return xs[0] * c + sum(xs)


def _chosen_by_expression(xs, c):
    ys = xs if len(xs) < 100 else [0.0]
    ys[0] = ys[0] * c  # MARK-ifexp
    return xs[0] * c


def _rebound_by_a_loop(xs, c):
    cur = [0.0, 0.0]
    for i in range(len(xs)):
        if i == 1:
            cur = xs
        cur[0] = cur[0] + c  # MARK-loop
    return xs[0] * c + cur[1]


def _pick(xs, k):
    if k > 100:
        return [0.0]
    return xs


def _returned_by_a_helper(xs, c):
    ys = _pick(xs, len(xs))
    ys[0] = ys[0] * c  # MARK-helper
    return xs[0] * c + sum(xs)


@pytest.mark.parametrize(("f", "marker"), [
    (_chosen_by_if, "MARK-if"), (_chosen_by_expression, "MARK-ifexp"),
    (_rebound_by_a_loop, "MARK-loop"), (_returned_by_a_helper, "MARK-helper"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_write_into_one_of_several_objects_is_refused_in_reverse_mode(f, marker):
    """A write into ``ys`` that may be the argument ``xs`` (an ``if``, a loop rebinding it, a
    helper returning its argument, inlined or not) went into an adjoint of its own, lost:
    reverse mode gave wrong numbers. Refused at the write; forward mode is right."""
    with pytest.raises(NonDifferentiableError, match="one of several") as info:
        wengert.vjp(f, [0.5, 0.2], 1.3)
    assert info.value.loc is not None and info.value.loc.lineno == line_of(f, marker)
    check_grads(f, ([0.5, 0.2], 1.3), modes=("fwd",))
    # ``grad`` answers by forward mode (``driver/forward_jacobian.py``), which is right.
    got = wengert.grad(f, argnums=(0, 1))([0.5, 0.2], 1.3)
    want = wengert.jacfwd(f, argnums=(0, 1))([0.5, 0.2], 1.3)
    numpy.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1] == pytest.approx(want[1], rel=1e-12)


def _new_lists_chosen(x, c, n):
    cur = [0.0] * n if c > 0 else [1.0] * n  # both new, held by nothing else
    cur[0] = x * c
    u = [x, 2.0 * x]
    for _ in range(n):
        new = [0.0, 0.0]
        new[0] = u[1] * c
        new[1] = u[0] + c
        u = new  # a new list each step
        u[0] = u[0] * x
    return cur[0] + u[0] * u[1]


def test_a_write_into_one_of_several_new_objects_is_differentiated():
    check_grads(_new_lists_chosen, (0.7, 1.3, 3), modes=("rev", "fwd"), argnums=(0, 1),
                order=2)
