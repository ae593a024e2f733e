"""Randomly generated float programs: ``wengert.grad`` against central differences.

Hypothesis writes small programs of three float parameters (the generator of
``tests/frontend/test_random_programs.py``, adapted so that every program is
smooth almost everywhere and its values stay bounded): straight-line arithmetic
with ``+ - *``, ``sin``, ``cos``, ``tanh``, ``exp`` of bounded values, guarded
division, ``abs``/``min``/``max``, calls of small helpers and of a local lambda;
active values through list elements (``append``, ``acc[i] = v``, ``acc[i] += v``),
dict entries and tuple (starred) unpacking; ``if/elif/else`` and
conditional expressions on data; ``for`` loops over ranges and over tuples of
active values; ``while`` loops with a bounded trip count and a data-dependent
condition; ``break``, ``continue``, loop ``else`` and early ``return``. Every
assignment goes through a bounded function, so values (and derivatives) stay
small enough for finite differences to be a precise oracle.

The evaluation point is drawn from a seeded generator rather than by hypothesis
(which favours round numbers that sit exactly on branch boundaries). A point
where finite differences with two step sizes disagree lies next to a kink or a
jump of the program, where there is no derivative to check: another point is
drawn instead.
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import importlib.util
import math
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import wengert

PARAMS = ("x", "y", "z")
LOCALS = ("a", "b")
VARS = PARAMS + LOCALS
CONSTS = ("0.5", "2.0", "-1.5", "3", "0.25", "1")
BOUNDED = ("math.tanh", "math.sin", "math.cos", "squash", "h1")
MAX_DEPTH = 3
MAX_LOOP_NESTING = 2

# The helpers live in one module shared by every program, so that their derivatives
# are derived once rather than once per program.
HELPERS = '''import math


def squash(t):
    return t / (1.0 + t * t)


def h1(t):
    return math.tanh(t) * 0.75 + 0.1 * math.sin(3.0 * t)


def h2(t, s=1.0):
    if t > s:
        return math.sin(t - s)
    return squash(t * s)


def h3(t, scale=0.5):
    u = 0.0
    for k in range(3):
        u = u * scale + math.cos(t + k)
    return u
'''
HELPERS_MODULE = "wengert_vjp_random_helpers"
PRELUDE = f"import math\n\nfrom {HELPERS_MODULE} import h1, h2, h3, squash\n\n\n"

RTOL = 1e-5
ATOL = 1e-6

_TMP = Path(tempfile.mkdtemp(prefix="wengert_vjp_random_"))
atexit.register(shutil.rmtree, _TMP, True)
(_TMP / f"{HELPERS_MODULE}.py").write_text(HELPERS)
sys.path.insert(0, str(_TMP))


# --------------------------------------------------------------------------
# Program generator
# --------------------------------------------------------------------------


@st.composite
def expressions(draw, loopvars: tuple[str, ...], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        atoms = list(VARS) + list(CONSTS)
        atoms += [f"float({v})" for v in loopvars] + [f"({v} * 0.5)" for v in loopvars]
        return draw(st.sampled_from(atoms))
    sub = expressions(loopvars, depth - 1)
    kind = draw(st.sampled_from([
        "+", "-", "prod", "prod", "div", "neg", "half", "unary", "exp", "abs", "min", "max",
        "ifexp", "call", "call2", "call3", "or",
    ]))
    left = draw(sub)
    if kind in ("+", "-"):
        return f"({left} {kind} {draw(sub)})"
    if kind == "prod":
        # A product of bounded factors, so that nested products cannot blow up.
        f, g = draw(st.sampled_from(BOUNDED)), draw(st.sampled_from(BOUNDED))
        return f"({f}({left}) * {g}({draw(sub)}))"
    if kind == "div":
        right = draw(sub)
        return f"({left} / (1.0 + {right} * {right}))"
    if kind == "neg":
        return f"(-{left})"
    if kind == "half":
        return f"(0.5 * {left})"
    if kind == "unary":
        return f"{draw(st.sampled_from(['math.sin', 'math.cos', 'math.tanh']))}({left})"
    if kind == "exp":
        return f"math.exp({draw(st.sampled_from(['math.sin', 'math.tanh']))}({left}))"
    if kind == "abs":
        return f"abs({left})"
    if kind in ("min", "max"):
        return f"{kind}({left}, {draw(sub)})"
    if kind == "call":
        return f"{draw(st.sampled_from(['h1', 'squash']))}({left})"
    if kind == "call2":
        if draw(st.booleans()):
            return f"h2({left})"
        return f"h2({left}, s={draw(sub)})"
    if kind == "call3":
        return f"h3({left})"
    if kind == "or":
        # Value semantics: the result is one of the operands.
        return f"({left} or {draw(sub)})"
    cond = draw(conditions(loopvars, 0))
    return f"({left} if {cond} else {draw(sub)})"


@st.composite
def conditions(draw, loopvars: tuple[str, ...], depth: int = 1) -> str:
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "!="]))
    base = f"{draw(expressions(loopvars, 1))} {op} {draw(expressions(loopvars, 1))}"
    if depth > 0:
        combine = draw(st.sampled_from(["", "", "", "and", "or", "not", "chain"]))
        if combine in ("and", "or"):
            return f"({base}) {combine} ({draw(conditions(loopvars, 0))})"
        if combine == "not":
            return f"not ({base})"
        if combine == "chain":
            return f"{base} < {draw(expressions(loopvars, 1))}"
    return base


Line = tuple[int, str]


@st.composite
def blocks(draw, indent: int, depth: int, loopvars: tuple[str, ...], loops: int,
           min_size: int = 1) -> list[Line]:
    n = draw(st.integers(min_size, 3 if depth < 1 else 2))
    lines: list[Line] = []
    for _ in range(n):
        lines.extend(draw(statements(indent, depth, loopvars, loops)))
    return lines


@st.composite
def statements(draw, indent: int, depth: int, loopvars: tuple[str, ...],
               loops: int) -> list[Line]:
    kinds = ["assign", "assign", "assign", "aug", "aug", "return", "swap", "append",
             "container"]
    if depth < MAX_DEPTH:
        kinds += ["if", "if"]
        if loops < MAX_LOOP_NESTING:
            kinds += ["for", "while"]
    if loops:
        kinds += ["break", "continue"]
    kind = draw(st.sampled_from(kinds))
    expr = expressions(loopvars)
    cond = conditions(loopvars)
    bounded = draw(st.sampled_from(BOUNDED))
    if kind == "assign":
        return [(indent, f"{draw(st.sampled_from(LOCALS))} = {bounded}({draw(expr)})")]
    if kind == "swap":
        return [(indent, f"a, b = b, {bounded}({draw(expr)})")]
    if kind == "append":
        return [(indent, f"acc.append({bounded}({draw(expr)}))")]
    if kind == "container":
        # Active values through list elements, dict entries, tuples and a local lambda.
        local = draw(st.sampled_from(LOCALS))
        form = draw(st.sampled_from(["read", "set", "augset", "dict", "tuple", "lambda"]))
        if form == "read":
            return [(indent, "if acc:"),
                    (indent + 1, f"{local} = {bounded}(acc[-1] * {draw(expr)} + acc[0])")]
        if form == "set":
            return [(indent, "if acc:"), (indent + 1, f"acc[0] = {bounded}({draw(expr)})")]
        if form == "augset":
            op = draw(st.sampled_from(["+=", "*="]))
            return [(indent, "if acc:"), (indent + 1, f"acc[-1] {op} {bounded}({draw(expr)})")]
        if form == "dict":
            return [(indent, f"d = {{'p': {draw(expr)}, 'q': {local}}}"),
                    (indent, f"d['q'] = d['q'] * {bounded}(d['p'])"),
                    (indent, f"{local} = {bounded}(d['p'] - d['q'])")]
        if form == "tuple":
            return [(indent, f"t = ({draw(expr)}, {local}, x)"),
                    (indent, f"{local}, *_rest = t[1], t[2], {bounded}(t[0])"),
                    (indent, f"{local} = {bounded}({local} + _rest[-1])")]
        # The factor is a default value (y, never reassigned, is closed over): a lambda kept
        # in a variable may not close over a loop variable (the frontend rejects that).
        return [(indent, f"g = lambda t, k={draw(expr)}: {bounded}(t * k + 0.5 * y)"),
                (indent, f"{local} = g({local}) + g(y) * 0.5")]
    if kind == "aug":
        op = draw(st.sampled_from(["+=", "-=", "*="]))
        return [(indent, f"{draw(st.sampled_from(LOCALS))} {op} {bounded}({draw(expr)})")]
    if kind == "return":
        value = f"{draw(expr)} * 1.0 + sum(acc)"
        if draw(st.booleans()):
            return [(indent, f"if {draw(cond)}:"), (indent + 1, f"return {value}")]
        return [(indent, f"return {value}")]
    if kind in ("break", "continue"):
        if draw(st.integers(0, 3)) == 0:
            return [(indent, kind)]
        return [(indent, f"if {draw(cond)}:"), (indent + 1, kind)]
    if kind == "if":
        lines = [(indent, f"if {draw(cond)}:")]
        lines += draw(blocks(indent + 1, depth + 1, loopvars, loops))
        for _ in range(draw(st.integers(0, 2))):
            lines.append((indent, f"elif {draw(cond)}:"))
            lines += draw(blocks(indent + 1, depth + 1, loopvars, loops))
        if draw(st.booleans()):
            lines.append((indent, "else:"))
            lines += draw(blocks(indent + 1, depth + 1, loopvars, loops))
        return lines
    if kind == "for":
        var = f"i{depth}"
        iterable = draw(st.sampled_from([
            f"range({draw(st.integers(0, 3))})",
            f"range(1, {draw(st.integers(1, 4))})",
            f"range({draw(st.integers(2, 3))}, 0, -1)",
            "(0.5, -1.0, 2.0)",
            "(x, y, z)",
            "[a, x * y]",
        ]))
        lines = [(indent, f"for {var} in {iterable}:")]
        lines += draw(blocks(indent + 1, depth + 1, (*loopvars, var), loops + 1))
    else:  # while with a bounded trip count
        counter = f"w{depth}"
        bound = draw(st.integers(0, 3))
        extra = f" and {draw(conditions(loopvars, 0))}" if draw(st.booleans()) else ""
        lines = [(indent, f"{counter} = 0"), (indent, f"while {counter} < {bound}{extra}:"),
                 (indent + 1, f"{counter} += 1")]
        lines += draw(blocks(indent + 1, depth + 1, loopvars, loops + 1))
    if draw(st.integers(0, 3)) == 0:
        # The else clause runs when the loop was not broken; break/continue in it
        # refer to the enclosing loop.
        lines.append((indent, "else:"))
        lines += draw(blocks(indent + 1, depth + 1, loopvars, loops))
    return lines


@st.composite
def programs(draw) -> str:
    body = draw(blocks(1, 0, (), 0))
    final = draw(st.sampled_from(["a + b * x + sum(acc)", "a * b - z + sum(acc)",
                                  "math.tanh(a) + b * y + 0.5 * sum(acc)"]))
    lines = ["def f(x, y, z):", "    a = 0.0", "    b = 1.0", "    acc = []"]
    lines += ["    " * ind + text for ind, text in body]
    lines.append(f"    return {final}")
    return PRELUDE + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Loading and checking
# --------------------------------------------------------------------------


def load_function(source: str, name: str = "f"):
    """Write ``source`` to a file, import it as a module and return ``name`` from it."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    modname = f"wengert_vjp_random_{digest}"
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


def central_gradient(f, args: tuple[float, ...], eps: float) -> list[float]:
    out = []
    for i in range(len(args)):
        plus = list(args)
        minus = list(args)
        plus[i] += eps
        minus[i] -= eps
        out.append((f(*plus) - f(*minus)) / (2.0 * eps))
    return out


def close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b), scale)


def smooth_point(f, seed: int) -> tuple[tuple[float, ...], list[float]] | None:
    """A point where ``f`` is smooth enough for finite differences, and its gradient there."""
    rng = numpy.random.default_rng(seed)
    for _ in range(5):
        args = tuple(float(v) for v in rng.uniform(-2.0, 2.0, size=3))
        fine = central_gradient(f, args, 1e-6)
        coarse = central_gradient(f, args, 1e-5)
        scale = max(1.0, abs(f(*args)))
        if all(math.isfinite(g) for g in fine) and all(
            close(a, b, scale) for a, b in zip(fine, coarse)
        ):
            return args, fine
    return None


def check_program(source: str, seed: int) -> None:
    f = load_function(source)
    found = smooth_point(f, seed)
    # Only when every try lands next to a kink or jump (or the oracle is unusable):
    # there is no derivative to compare, so this example says nothing.
    assume(found is not None)
    args, numeric = found
    label = f"program\n{source}\nat {args!r}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wengert.NonDifferentiableWarning)
        try:
            value, grads = wengert.value_and_grad(f, argnums=(0, 1, 2))(*copy.deepcopy(args))
        except Exception as e:
            raise AssertionError(f"value_and_grad failed for {label}") from e
        single = wengert.grad(f)(*args)
    expected = f(*args)
    assert value == expected or math.isclose(value, expected, rel_tol=1e-12), (
        f"value {value!r} != {expected!r} for {label}")
    scale = max(1.0, abs(expected))
    for i, (g, n) in enumerate(zip(grads, numeric)):
        assert close(g, n, scale), (
            f"d f / d {PARAMS[i]}: wengert.grad gives {g!r}, central differences give {n!r} "
            f"for {label}")
    assert close(single, numeric[0], scale), (
        f"grad(f) (argnums=0) gives {single!r}, central differences give {numeric[0]!r} "
        f"for {label}")


# Deterministic (derandomize), and no shrinking: shrinking a failing program can take
# minutes, and the unshrunk program (printed with its evaluation point) is small anyway.
_SETTINGS = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                     phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much])


@_SETTINGS
@given(source=programs(), seed=st.integers(0, 2**32 - 1))
def test_random_programs_grad_matches_central_differences(source, seed):
    check_program(source, seed)


def test_generated_programs_are_bounded_float_programs():
    """The generator itself is sound: valid Python, terminating, float results of moderate size."""

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(source=programs())
    def run(source):
        ns: dict = {}
        exec(compile(source, "<generated>", "exec"), ns)
        for args in ((1.0, 2.0, -0.5), (-1.7, 0.3, 1.9)):
            out = ns["f"](*args)
            assert isinstance(out, float), source
            assert abs(out) < 1e3, source

    run()


HANDWRITTEN = {
    "design_example": """
import math


def f(x, y, z):
    s = 0.0
    for i in range(6):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * y
    return s + z
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
            a -= z * 0.1
        if a > z:
            continue
        a = a * 0.5
    return a
""",
    "early_return_in_nested_loops": """
def f(x, y, z):
    a = x
    for i in range(3):
        for j in range(3):
            a = a * y * 0.5 + z
            if a > 1.5:
                return a * i + j
    return a
""",
    # Found by the generator: a helper result that is only compared, on a value that is
    # loop-carried and used later.
    "helper_result_only_compared": """
import math

from wengert_vjp_random_helpers import squash


def f(x, y, z):
    b = 1.0
    for t in (x, y, z):
        a, b = b, math.cos(y)
    if squash(a) > 5.0:
        pass
    elif squash(z) > 1.0:
        pass
    return math.tanh(a) + b * y
""",
    "helper_result_in_or_condition": """
import math

from wengert_vjp_random_helpers import h1, h3, squash


def f(x, y, z):
    a = 0.0
    b = squash(math.exp(math.sin(z)) or a)
    if (0.5 * b >= abs(z)) or (x - 0.5 >= h3(b)):
        return h1(z)
    return math.tanh(a) + b * y
""",
    # Found by the generator: the branch condition is a list that is appended to after
    # the branch, so it must be recorded, not re-tested, for the pullback.
    "branch_on_list_mutated_later": """
import math


def f(x, y, z):
    a = 0.0
    acc = []
    if acc:
        a = math.tanh(acc[0] * x)
    acc.append(y * 2.0)
    return a + acc[0] * x + z
""",
    "loop_else_and_continue": """
import math


def f(x, y, z):
    b = 0.0
    for t in (x, y, z):
        if t < 0:
            continue
        b += math.tanh(t)
    else:
        b = -b * x
    return b
""",
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_handwritten_programs(name):
    f = load_function(HANDWRITTEN[name].lstrip("\n"))
    for seed in range(3):
        found = smooth_point(f, seed)
        assert found is not None, name
        args, numeric = found
        grads = wengert.grad(f, argnums=(0, 1, 2))(*args)
        for i, (g, n) in enumerate(zip(grads, numeric)):
            assert close(g, n, 1.0), f"{name} at {args}: d/d{PARAMS[i]} {g!r} vs {n!r}"
