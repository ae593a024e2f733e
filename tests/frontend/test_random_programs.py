"""Acceptance: randomly generated programs keep their behaviour through the frontend.

Hypothesis writes small float programs as source text (straight-line arithmetic,
``if/elif/else``, ``for`` over ranges and tuples, bounded ``while`` loops,
``break``, ``continue``, loop ``else`` clauses and early ``return``, nested up to
depth 3), saves each to a file so ``inspect.getsource`` works, imports it and
compares the original with ``wengert.api.primal`` on a few inputs.

Every loop is bounded (``range`` of a constant, or a ``while`` whose counter is
incremented first thing in the body, so ``continue`` cannot skip it). Division
is guarded (``l / (abs(r) + 1.0)``) and there is no ``**``, so the programs do
not raise: operations that may raise are covered by the corpus instead.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from frontend_checks import assert_same_behaviour
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wengert
import wengert.api
import wengert.frontend
import wengert.ir

PARAMS = ("x", "y", "z")
LOCALS = ("a", "b")
VARS = PARAMS + LOCALS
CONSTS = ("0.5", "2.0", "-1.5", "3", "0.0", "1", "0.25")
MAX_DEPTH = 3

_TMP = Path(tempfile.mkdtemp(prefix="wengert_random_programs_"))
atexit.register(shutil.rmtree, _TMP, True)


# --------------------------------------------------------------------------
# Program generator
# --------------------------------------------------------------------------


@st.composite
def expressions(draw, loopvars: tuple[str, ...], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        atoms = list(VARS) + list(CONSTS) + [f"float({v})" for v in loopvars] + list(loopvars)
        return draw(st.sampled_from(atoms))
    sub = expressions(loopvars, depth - 1)
    kind = draw(st.sampled_from(["+", "-", "*", "*", "safe/", "neg", "abs", "min", "max",
                                 "ifexp", "sq", "and", "or"]))
    left = draw(sub)
    if kind in ("and", "or"):
        # Value semantics: the result is one of the operands.
        return f"({left} {kind} {draw(sub)})"
    if kind in ("+", "-", "*"):
        return f"({left} {kind} {draw(sub)})"
    if kind == "safe/":
        return f"({left} / (abs({draw(sub)}) + 1.0))"
    if kind == "neg":
        return f"(-{left})"
    if kind == "sq":
        # x * x rather than x ** 2: float ** overflows with an exception, * gives inf.
        return f"({left} * {left})"
    if kind in ("abs",):
        return f"abs({left})"
    if kind in ("min", "max"):
        return f"{kind}({left}, {draw(sub)})"
    cond = draw(conditions(loopvars, 0))
    return f"({left} if {cond} else {draw(sub)})"


@st.composite
def conditions(draw, loopvars: tuple[str, ...], depth: int = 1) -> str:
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    base = f"{draw(expressions(loopvars, 1))} {op} {draw(expressions(loopvars, 1))}"
    if depth > 0:
        combine = draw(st.sampled_from(["", "", "", "and", "or", "not", "chain"]))
        if combine in ("and", "or"):
            return f"({base}) {combine} ({draw(conditions(loopvars, 0))})"
        if combine == "not":
            return f"not ({base})"
        if combine == "chain":
            e = draw(expressions(loopvars, 1))
            return f"{base} < {e}"
    return base


Line = tuple[int, str]


@st.composite
def blocks(draw, indent: int, depth: int, loopvars: tuple[str, ...], in_loop: bool,
           min_size: int = 1) -> list[Line]:
    n = draw(st.integers(min_size, 4 if depth < 2 else 2))
    lines: list[Line] = []
    for _ in range(n):
        lines.extend(draw(statements(indent, depth, loopvars, in_loop)))
    return lines


@st.composite
def statements(draw, indent: int, depth: int, loopvars: tuple[str, ...],
               in_loop: bool) -> list[Line]:
    kinds = ["assign", "assign", "assign", "aug", "return", "swap", "append"]
    if depth < MAX_DEPTH:
        kinds += ["if", "if", "for", "while"]
    if in_loop:
        kinds += ["break", "continue"]
    kind = draw(st.sampled_from(kinds))
    expr = expressions(loopvars)
    cond = conditions(loopvars)
    if kind == "assign":
        return [(indent, f"{draw(st.sampled_from(VARS))} = {draw(expr)}")]
    if kind == "swap":
        u, v = draw(st.lists(st.sampled_from(VARS), min_size=2, max_size=2, unique=True))
        return [(indent, f"{u}, {v} = {v}, {draw(expr)}")]
    if kind == "append":
        return [(indent, f"acc.append({draw(expr)})")]
    if kind == "aug":
        op = draw(st.sampled_from(["+=", "-=", "*="]))
        return [(indent, f"{draw(st.sampled_from(VARS))} {op} {draw(expr)}")]
    if kind == "return":
        value = draw(expr)
        if draw(st.booleans()):
            return [(indent, f"if {draw(cond)}:"), (indent + 1, f"return {value}")]
        return [(indent, f"return {value}")]
    if kind in ("break", "continue"):
        if draw(st.integers(0, 3)) == 0:
            return [(indent, kind)]
        return [(indent, f"if {draw(cond)}:"), (indent + 1, kind)]
    if kind == "if":
        lines = [(indent, f"if {draw(cond)}:")]
        lines += draw(blocks(indent + 1, depth + 1, loopvars, in_loop))
        for _ in range(draw(st.integers(0, 2))):
            lines.append((indent, f"elif {draw(cond)}:"))
            lines += draw(blocks(indent + 1, depth + 1, loopvars, in_loop))
        if draw(st.booleans()):
            lines.append((indent, "else:"))
            lines += draw(blocks(indent + 1, depth + 1, loopvars, in_loop))
        return lines
    if kind == "for":
        var = f"i{depth}"
        iterable = draw(st.sampled_from([
            f"range({draw(st.integers(0, 4))})",
            f"range(1, {draw(st.integers(1, 5))})",
            f"range({draw(st.integers(3, 5))}, 0, -1)",
            "(0.5, -1.0, 2.0)",
            "[x, y, z]",
        ]))
        lines = [(indent, f"for {var} in {iterable}:")]
        lines += draw(blocks(indent + 1, depth + 1, (*loopvars, var), True))
    else:  # while with a bounded trip count
        counter = f"w{depth}"
        bound = draw(st.integers(0, 4))
        extra = f" and {draw(conditions(loopvars, 0))}" if draw(st.booleans()) else ""
        lines = [(indent, f"{counter} = 0"), (indent, f"while {counter} < {bound}{extra}:"),
                 (indent + 1, f"{counter} += 1")]
        lines += draw(blocks(indent + 1, depth + 1, loopvars, True))
    if draw(st.integers(0, 3)) == 0:
        # The else clause runs when the loop was not broken; break/continue in it
        # refer to the enclosing loop.
        lines.append((indent, "else:"))
        lines += draw(blocks(indent + 1, depth + 1, loopvars, in_loop))
    return lines


@st.composite
def programs(draw) -> str:
    body = draw(blocks(1, 0, (), False))
    final = draw(st.sampled_from(["(x, y, z, a, b, acc)", "a + b * x", "[a, b]"]))
    lines = ["def f(x, y, z):", "    a = 0.0", "    b = 1.0", "    acc = []"]
    lines += ["    " * ind + text for ind, text in body]
    lines.append(f"    return {final}")
    return "\n".join(lines) + "\n"


INPUT = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
INPUTS = st.lists(st.tuples(INPUT, INPUT, INPUT), min_size=2, max_size=3)


# --------------------------------------------------------------------------
# Loading and checking
# --------------------------------------------------------------------------


def load_function(source: str, name: str = "f"):
    """Write ``source`` to a file, import it as a module and return ``name`` from it."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    modname = f"wengert_random_program_{digest}"
    path = _TMP / f"{modname}.py"
    if not path.exists():
        path.write_text(source)
    if modname in sys.modules:
        return getattr(sys.modules[modname], name)
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return getattr(module, name)


def check_program(source: str, inputs: list[tuple]) -> None:
    fn = load_function(source)
    try:
        wengert.ir.verify(wengert.frontend.lower(fn))
        compiled = wengert.api.primal(fn)
    except Exception as e:
        raise AssertionError(f"lowering/compiling failed for program:\n{source}") from e
    for args in inputs:
        assert_same_behaviour(fn, compiled, args, {},
                              label=f"program\n{source}\ncalled with {args!r}")


@settings(max_examples=int(os.environ.get("WENGERT_RANDOM_PROGRAMS", "120")), deadline=None,
          database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=programs(), inputs=INPUTS)
def test_random_programs(source, inputs):
    check_program(source, [*inputs, (0.0, 0.0, 0.0), (1.0, -1.0, 2.0)])


def test_generated_programs_compile_and_terminate():
    """The generator itself is sound: its programs are valid Python and terminate."""

    @settings(max_examples=50, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(source=programs())
    def run(source):
        ns: dict = {}
        exec(compile(source, "<generated>", "exec"), ns)
        try:
            ns["f"](1.0, 2.0, -0.5)
        except (ZeroDivisionError, OverflowError):
            pass

    run()


HANDWRITTEN = {
    "design_example": """
import math

def f(x, n):
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    return s
""",
    "break_in_while_in_for": """
def f(x, y, z):
    a = 0.0
    for i in range(4):
        w = 0
        while w < 3:
            w += 1
            if a > y:
                break
            a += x * w
        else:
            a -= 1.0
        if a > z:
            continue
        a = a * 0.5
    return a
""",
    "return_inside_nested_loops": """
def f(x, y, z):
    a = x
    for i in range(3):
        for j in range(3):
            a = a * y + z
            if a > 10.0:
                return i, j, a
        if a < -10.0:
            return "low", a
    return None, a
""",
    "continue_and_else": """
def f(x, y, z):
    b = 0.0
    for i in (x, y, z):
        if i < 0:
            continue
        b += i
    else:
        b = -b
    w = 0
    while w < 5:
        w += 1
        if w == 2:
            continue
        if b > 3:
            break
        b += 1
    else:
        return "exhausted", b
    return "broke", b
""",
    "break_in_loop_else": """
def f(x, y, z):
    a = 0.0
    for i in range(3):
        for j in range(2):
            a += x
            if a > y:
                break
        else:
            a -= z
            if a < 0:
                break
    return a
""",
    "early_return_in_branches": """
def f(x, y, z):
    if x > 0:
        if y > 0:
            return x * y
        elif y < -1:
            a = y
        else:
            return z
    else:
        a = x - y
    b = a * 2
    if b > 1:
        return b
    return a + b
""",
    "while_with_condition_and_counter": """
def f(x, y, z):
    w = 0
    a = x
    while w < 4 and a < 100.0:
        w += 1
        a = a * 2 + abs(y)
        if z > a:
            continue
        a -= z
    return a, w
""",
}

HANDWRITTEN_INPUTS = {
    "design_example": [(0.5, 6), (2.0, 10), (1.0, 0)],
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_handwritten_programs(name):
    inputs = HANDWRITTEN_INPUTS.get(
        name, [(1.0, 2.0, 3.0), (-1.0, 0.5, -2.0), (3.0, -3.0, 0.0), (0.5, 0.25, 20.0)]
    )
    check_program(HANDWRITTEN[name].lstrip("\n"), inputs)
