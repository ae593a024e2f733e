"""Code generation: readable names, correct copies, closures, signatures, determinism, linecache."""

from __future__ import annotations

import ast
import inspect
import linecache
import math
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import samples

import wengert
import wengert.api
from wengert.codegen.emit import generate
from wengert.driver.pipeline import lower

SRC = Path(wengert.__file__).resolve().parents[1]


def compiled(f):
    """``(function, source)`` generated from a fresh lowering of ``f``."""
    return generate(lower(f))


def check_same(f, *calls):
    """The generated function returns what ``f`` returns for every argument tuple."""
    g, source = compiled(f)
    for args in calls:
        assert g(*args) == f(*args), f"{f.__name__}{args}\n{source}"
    return source


# --------------------------------------------------------------------------- names


def power(x, n):
    s = 1.0
    for _ in range(n):
        s = s * x
    return s


def test_loop_update_keeps_the_users_name():
    source = check_same(power, (2.0, 0), (2.0, 5), (-1.5, 3))
    assert re.search(r"^\s*s = s \* x$", source, re.M), source
    assert not re.search(r"\bs_\d", source), source


def weighted_mean(xs):
    ws = [x * x for x in xs]
    return sum(w * x for w, x in zip(ws, xs)) / sum(ws)


def test_a_loop_variable_takes_the_name_of_its_next_value():
    # ``acc, g = pop_adjoint_owned(acc)``: the list popped is held by one name only, so
    # the helper pops it in place (O(1) per item) instead of copying it (O(n)).
    source = wengert.show(weighted_mean, mode="vjp", arg_types=[list])
    pops = re.findall(r"^\s*(\w+), \w+ = pop_adjoint_owned\((\w+)\)$", source, re.M)
    assert pops and all(a == b for a, b in pops), source
    # Of a list of floats: the list the loop owns, popped through its bound ``pop`` (what
    # is left of it after the loop is dropped), with no check per item.
    source = wengert.show(weighted_mean, mode="vjp", like=([0.5, 1.5, -2.0],))
    assert "pop_adjoint" not in source, source
    popper = re.search(r"^\s*(\w+) = float_pops\(\w+\)$", source, re.M)
    assert popper and re.search(rf"= {popper.group(1)}\(\)( \* x)?$", source, re.M), source
    xs = [0.5, 1.5, -2.0, 0.25]
    g = wengert.grad(weighted_mean)(xs)
    h = 1e-6
    for i in range(len(xs)):
        up, down = list(xs), list(xs)
        up[i] += h
        down[i] -= h
        fd = (weighted_mean(up) - weighted_mean(down)) / (2 * h)
        assert abs(g[i] - fd) < 1e-6 * max(1.0, abs(fd)), (i, g[i], fd)


def test_parameter_names_and_kinds_are_preserved():
    def params(a, /, b, c=2, *rest, d, e=5, **kw):
        return a, b, c, rest, d, e, sorted(kw.items())

    g, _ = compiled(params)
    want = [(p.name, p.kind) for p in inspect.signature(params).parameters.values()]
    assert [(p.name, p.kind) for p in inspect.signature(g).parameters.values()] == want


def test_keyword_calls_work_on_the_primal():
    def params(a, /, b, c=2, *rest, d, e=5, **kw):
        return a, b, c, rest, d, e, sorted(kw.items())

    p = wengert.api.primal(params)
    assert p(1, b=2, d=4) == params(1, b=2, d=4)
    assert p(1, 2, 3, 9, 9, d=4, e=6, z=7) == params(1, 2, 3, 9, 9, d=4, e=6, z=7)


def test_parameter_named_like_a_helper_does_not_shadow_it():
    # ``y += k`` where the two names differ is written as a call of ``operator.iadd``;
    # that call must still reach the helper when a parameter is called ``iadd``.
    def shadow(iadd, x):
        y = x
        y += iadd
        return y * x

    check_same(shadow, (2, 3), (0.5, 1.5))


# --------------------------------------------------------------------------- copies


def swap_tuple(a, b, n):
    for _ in range(n):
        a, b = b, a
    return a, b


def swap_temp(a, b, n):
    for _ in range(n):
        t = a
        a = b
        b = t
    return a, b


def rotate(a, b, c, n):
    for _ in range(n):
        t = a
        a = b
        b = c
        c = t
    return a, b, c


def swap_while(a, b, n):
    i = 0
    while i < n:
        a, b = b, a
        i += 1
    return a, b, i


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        c = a + b
        a = b
        b = c
    return a


def swap_in_branch(a, b, n):
    for k in range(n):
        if k % 2:
            a, b = b, a
        else:
            b, a = a + b, b
    return a, b


@pytest.mark.parametrize("f", [swap_tuple, swap_temp, swap_while, swap_in_branch])
def test_swaps_in_loops_match_python(f):
    check_same(f, *[("a", "b", n) for n in range(5)])


def test_rotation_of_three_matches_python():
    check_same(rotate, *[(1, 2, 3, n) for n in range(6)])


def test_fibonacci_matches_python():
    check_same(fib, *[(n,) for n in range(10)])


def alias_before_loop(x, n):
    y = x
    for _ in range(n):
        x = x * 2
    return x, y


def alias_read_in_loop(x, xs):
    s = x * 1.0
    t = s
    for _ in xs:
        s = s + t
    return s


def alias_while(x, n):
    i = 0
    y = x
    while i < n:
        x = x + y
        i += 1
    return x


def cases(*pairs):
    return [pytest.param(f, calls, id=f.__name__) for f, calls in pairs]


@pytest.mark.parametrize("f, calls", cases(
    (alias_before_loop, [(1.0, 0), (1.0, 3)]),
    (alias_read_in_loop, [(2.0, []), (2.0, [0, 0, 0])]),
    (alias_while, [(1.0, 0), (1.0, 3)]),
))
def test_value_still_read_by_another_name_is_not_overwritten_by_a_loop(f, calls):
    # ``y = x`` makes both names one SSA value; the loop updating ``x`` must not
    # overwrite the storage ``y`` (or the loop body) still reads.
    check_same(f, *calls)


# --------------------------------------------------------------------------- closures


def closure_vs_comprehension(x):
    a = x + 1
    g = lambda: a  # noqa: E731
    b = [a * 2 for a in range(3)]  # a different ``a``, local to the comprehension
    c = [a for a in b]
    return g(), b, c


def closure_in_branch(x, flag):
    if flag:
        v = x + 1
        g = lambda: v  # noqa: E731
    else:
        g = lambda: -x  # noqa: E731
    w = [v * 10 for v in range(3)]
    return g(), w


def closure_two_levels(x):
    y = x + 1

    def outer():
        def inner():
            return y + 1
        z = [y for y in range(2)]
        return inner(), z

    return outer()


def closure_called_in_loop(x, n):
    base = x * 2

    def get():
        return base

    out = []
    for base_like in range(n):
        base2 = base_like * 100
        out.append(get() + base2)
    return out


@pytest.mark.parametrize("f, calls", cases(
    (closure_vs_comprehension, [(1.0,), (5,)]),
    (closure_in_branch, [(1.0, True), (1.0, False)]),
    (closure_two_levels, [(3,)]),
    (closure_called_in_loop, [(1.0, 0), (1.0, 3)]),
))
def test_captured_value_is_not_clobbered(f, calls):
    check_same(f, *calls)


# --------------------------------------------------------------------------- determinism


def test_output_is_deterministic_within_a_process():
    _, first = compiled(samples.mixed)
    _, second = compiled(samples.mixed)
    assert first == second


_SCRIPT = """
import sys
sys.path[:0] = [{src!r}, {here!r}]
import samples
from wengert.codegen.emit import generate
from wengert.driver.pipeline import lower
sys.stdout.write(generate(lower(samples.mixed))[1])
"""


def test_output_does_not_depend_on_the_hash_seed():
    here = str(Path(__file__).resolve().parent)
    script = _SCRIPT.format(src=str(SRC), here=here)
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout)
    assert outs[0] == outs[1] == compiled(samples.mixed)[1]


def test_generated_code_behaves_like_the_original():
    g, _ = compiled(samples.mixed)
    for args in ([1.5, [1, -2, 3, 200, 4]], [0.0, []], [2.0, [5, 6], 0]):
        assert g(*args, *([] if len(args) == 3 else [3]), scale=2.0) == samples.mixed(*args)


# --------------------------------------------------------------------------- linecache


def divide(x, y):
    z = x + 1
    w = z / y
    return w


def test_source_compiles_and_is_registered_with_linecache():
    g, source = compiled(divide)
    ast.parse(source)
    filename = g.__code__.co_filename
    assert "".join(linecache.getlines(filename)) == source
    assert inspect.getsource(g) == source


def test_traceback_shows_the_generated_line():
    g, source = compiled(divide)
    with pytest.raises(ZeroDivisionError) as info:
        g(1.0, 0.0)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert frame.filename == g.__code__.co_filename
    assert frame.line == source.splitlines()[frame.lineno - 1].strip()
    assert "/" in frame.line


def test_functions_with_the_same_name_keep_their_own_source():
    def twin(x):
        return x + 1

    first = twin

    def twin(x):  # noqa: F811
        return x * 10

    g1, s1 = compiled(first)
    g2, s2 = compiled(twin)
    assert s1 != s2
    assert g1.__code__.co_filename != g2.__code__.co_filename
    assert inspect.getsource(g1) == s1
    assert inspect.getsource(g2) == s2


def test_show_primal_is_the_source_of_the_primal():
    text = wengert.show(divide, mode="primal")
    assert inspect.getsource(wengert.api.primal(divide)) == text


# ------------------------------------------------------------------ comprehensions


def filled_by_loop(xs, k):
    ys = []
    for x in xs:
        t = x * k
        ys.append(math.sin(t) + t)
    pairs = []
    for i, x in enumerate(xs):
        pairs.append((i, x))
    return ys, pairs


def read_while_filled(xs):
    ys = []
    for x in xs:
        ys.append(x + len(ys))  # reads the list it fills: stays a loop
    return ys


def read_before_filled(xs):
    ys = []
    first = len(ys)
    for x in xs:
        if x > 0.0:
            ys.append(x)  # appended conditionally: stays a loop
    zs = []
    for x in xs:
        zs.append(x)
        if x > 1.0:
            break  # stops early: stays a loop
    return ys, first, zs


def helper_square(x):
    return x * x


def calls_python(xs):
    ys = []
    for x in xs:
        ys.append(helper_square(x))  # a Python function: a frame per item either way
    return ys


def test_a_list_filled_by_a_loop_is_a_comprehension():
    source = check_same(filled_by_loop, ([0.5, -1.0, 2.0], 3.0), ([], 1.0))
    assert re.search(r"ys = \[math\.sin\((t\w*)\) \+ \1 for x in xs for \1 in \[x \* k\]\]",
                     source), source
    assert re.search(r"pairs = \[\(i, x\) for i, x in enumerate\(xs\)\]", source), source
    for f in (read_while_filled, read_before_filled, calls_python):
        source = check_same(f, ([0.5, -1.0, 2.0],), ([3.0, 0.25],))
        assert " for " not in source.replace("    for ", ""), source


def test_the_forward_of_a_gradient_fills_lists_by_comprehensions():
    # The forward pass of a loop over a list of floats iterates it again (the reverse
    # reads the items by index) and fills the list it makes as the program does.
    source = wengert.show(weighted_mean, mode="vjp", like=([0.5, 1.5, -2.0],))
    assert re.search(r"ws = \[x \* x for x in xs\]", source), source
    assert re.search(r"= \[w \* x for w, x in zip\(ws, xs\)\]", source), source
