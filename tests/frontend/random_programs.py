"""Random float programs for the property tests: one generator, several grammars.

Hypothesis writes small programs ``def f(x, y, z)`` as source text: straight-line
arithmetic, ``if/elif/else`` and conditional expressions, ``for`` over ranges and
tuples, bounded ``while`` loops, ``break``, ``continue``, loop ``else`` clauses and
early ``return``, nested up to depth 3. A :class:`Grammar` says which expressions
and statements may appear and how they are weighted:

* :data:`FRONTEND` (``frontend/test_random_programs.py``) writes programs of any
  result (tuples, lists, floats), with ``and``/``or`` values, ``==`` and unbounded
  products, to check that lowering keeps behaviour.
* :data:`SMOOTH` (``transforms/test_vjp_random.py``, ``transforms/test_jvp_random.py``)
  writes float programs that are smooth almost everywhere and whose values stay
  bounded: every assignment goes through a bounded function, products are of
  bounded factors, division is by ``1 + r * r``; calls of small helpers (from the
  module :data:`HELPERS_MODULE`), of a local lambda; active values through list
  elements, dict entries and tuple unpacking. Finite differences are a precise
  oracle for them.
* :data:`PAIR_SMOOTH` is :data:`SMOOTH` with a pair of floats as the result.
* :data:`SCALAR_SMOOTH` is :data:`SMOOTH` without lists, dicts, lambdas, tuple
  assignment, int constants and helper calls that rely on default arguments: the
  float programs whose Hessians ``transforms/test_jvp_random.py`` checks.

Every loop is bounded (``range`` of a constant, or a ``while`` whose counter is
incremented first thing in the body, so ``continue`` cannot skip it). Division is
guarded and there is no ``**``, so the programs do not raise.

:func:`load_function` saves a program to a file (so ``inspect.getsource`` works)
and imports it; :func:`smooth_point` finds a seeded evaluation point where finite
differences can be trusted; :func:`derandomized` are the hypothesis settings of
the derivative property tests.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import numpy
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

PARAMS = ("x", "y", "z")
LOCALS = ("a", "b")
VARS = PARAMS + LOCALS

# --------------------------------------------------------------------------
# Grammars
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Grammar:
    """What the generator may write, and how likely each choice is.

    Kinds are drawn uniformly from their tuple, so a kind listed twice is twice as
    likely. Changing the order or the number of choices changes which programs a
    derandomized test sees.
    """

    #: Constants that may stand for an expression.
    consts: tuple[str, ...]
    #: How a loop variable ``{v}`` may stand for an expression.
    loopvar_atoms: tuple[str, ...]
    #: Compound expressions (see :func:`expressions`).
    expression_kinds: tuple[str, ...]
    comparisons: tuple[str, ...]
    #: Simple statements (see :func:`statements`); ``if``, loops, ``break`` and
    #: ``continue`` are added where depth and loop nesting allow them.
    statement_kinds: tuple[str, ...]
    #: The variables that statements assign.
    targets: tuple[str, ...]
    #: Every value a statement assigns goes through one of these (none: as it is).
    #: Products (expression kind ``prod``) multiply values passed through them.
    wrappers: tuple[str, ...]
    #: The value of a ``return`` statement (``{}`` is the expression).
    returned: str
    #: The value the program returns at its end.
    finals: tuple[str, ...]
    #: The most statements in a block at depth below ``shallow_depth``, and deeper.
    block_size: tuple[int, int]
    shallow_depth: int
    #: Bounds of ``range(n)``, ``range(1, n)`` and ``range(n, 0, -1)`` in ``for`` loops.
    range_bounds: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]
    #: Other iterables of ``for`` loops.
    iterables: tuple[str, ...]
    #: The most iterations of a ``while`` loop.
    while_bound: int
    max_depth: int = 3
    max_loop_nesting: int = 3
    #: Source put before ``def f``.
    prelude: str = ""


FRONTEND = Grammar(
    consts=("0.5", "2.0", "-1.5", "3", "0.0", "1", "0.25"),
    loopvar_atoms=("float({v})", "{v}"),
    expression_kinds=("+", "-", "*", "*", "safe/", "neg", "abs", "min", "max", "ifexp", "sq",
                      "and", "or"),
    comparisons=("<", "<=", ">", ">=", "==", "!="),
    statement_kinds=("assign", "assign", "assign", "aug", "return", "swap", "append"),
    targets=VARS,
    wrappers=(),
    returned="{}",
    finals=("(x, y, z, a, b, acc)", "a + b * x", "[a, b]"),
    block_size=(4, 2),
    shallow_depth=2,
    range_bounds=((0, 4), (1, 5), (3, 5)),
    iterables=("(0.5, -1.0, 2.0)", "[x, y, z]"),
    while_bound=4,
)

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
HELPERS_MODULE = "wengert_random_helpers"
PRELUDE = f"import math\n\nfrom {HELPERS_MODULE} import h1, h2, h3, squash\n\n\n"

SMOOTH = Grammar(
    consts=("0.5", "2.0", "-1.5", "3", "0.25", "1"),
    loopvar_atoms=("float({v})", "({v} * 0.5)"),
    expression_kinds=("+", "-", "prod", "prod", "div", "neg", "half", "unary", "exp", "abs",
                      "min", "max", "ifexp", "call", "call2", "call3", "or"),
    comparisons=("<", "<=", ">", ">=", "!="),
    statement_kinds=("assign", "assign", "assign", "aug", "aug", "return", "shift", "append",
                     "container"),
    targets=LOCALS,
    wrappers=("math.tanh", "math.sin", "math.cos", "squash", "h1"),
    returned="{} * 1.0 + sum(acc)",
    finals=("a + b * x + sum(acc)", "a * b - z + sum(acc)",
            "math.tanh(a) + b * y + 0.5 * sum(acc)"),
    block_size=(3, 2),
    shallow_depth=1,
    range_bounds=((0, 3), (1, 4), (2, 3)),
    iterables=("(0.5, -1.0, 2.0)", "(x, y, z)", "[a, x * y]"),
    while_bound=3,
    max_loop_nesting=2,
    prelude=PRELUDE,
)

PAIR_SMOOTH = dataclasses.replace(
    SMOOTH,
    returned="({} * 1.0 + sum(acc), a * b)",
    finals=("(a + b * x + sum(acc), a * b - z)", "(math.tanh(a) + b * y, 0.5 * sum(acc) - x)",
            "(b, a * b + sum(acc))"),
)

# SMOOTH without the forms whose Hessian (forward over reverse) is refused today with a
# NonDifferentiableError: tuple assignment (``a, b = b, e``), lists, dicts and lambdas
# kept in variables (``append``, ``container``, ``sum(acc)``), int constants (a value
# that may be an int or a float, such as ``max(x, 1)``), and helper calls that leave a
# parameter to its default (``h2(t)``, ``h3(t)``; here every argument is given). Loops
# over tuples and lists of active values stay.
SCALAR_SMOOTH = dataclasses.replace(
    SMOOTH,
    consts=("0.5", "2.0", "-1.5", "3.0", "0.25", "1.0"),
    expression_kinds=("+", "-", "prod", "prod", "div", "neg", "half", "unary", "exp", "abs",
                      "min", "max", "ifexp", "call", "call2pos", "call3pos", "or"),
    statement_kinds=("assign", "assign", "assign", "aug", "aug", "return"),
    returned="{} * 1.0",
    finals=("a + b * x", "a * b - z", "math.tanh(a) + b * y"),
)


# --------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------


@st.composite
def expressions(draw, g: Grammar, loopvars: tuple[str, ...], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        atoms = list(VARS) + list(g.consts)
        atoms += [form.format(v=v) for form in g.loopvar_atoms for v in loopvars]
        return draw(st.sampled_from(atoms))
    sub = expressions(g, loopvars, depth - 1)
    kind = draw(st.sampled_from(g.expression_kinds))
    left = draw(sub)
    if kind in ("+", "-", "*", "and", "or"):
        # ``and``/``or`` have value semantics: the result is one of the operands.
        return f"({left} {kind} {draw(sub)})"
    if kind == "safe/":
        return f"({left} / (abs({draw(sub)}) + 1.0))"
    if kind == "div":
        right = draw(sub)
        return f"({left} / (1.0 + {right} * {right}))"
    if kind == "prod":
        # A product of bounded factors, so that nested products cannot blow up.
        f, h = draw(st.sampled_from(g.wrappers)), draw(st.sampled_from(g.wrappers))
        return f"({f}({left}) * {h}({draw(sub)}))"
    if kind == "sq":
        # x * x rather than x ** 2: float ** overflows with an exception, * gives inf.
        return f"({left} * {left})"
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
    if kind in ("call2pos", "call3pos"):
        # Every argument given, by position.
        return f"h{kind[4]}({left}, {draw(sub)})"
    assert kind == "ifexp", kind
    cond = draw(conditions(g, loopvars, 0))
    return f"({left} if {cond} else {draw(sub)})"


@st.composite
def conditions(draw, g: Grammar, loopvars: tuple[str, ...], depth: int = 1) -> str:
    op = draw(st.sampled_from(g.comparisons))
    base = f"{draw(expressions(g, loopvars, 1))} {op} {draw(expressions(g, loopvars, 1))}"
    if depth > 0:
        combine = draw(st.sampled_from(["", "", "", "and", "or", "not", "chain"]))
        if combine in ("and", "or"):
            return f"({base}) {combine} ({draw(conditions(g, loopvars, 0))})"
        if combine == "not":
            return f"not ({base})"
        if combine == "chain":
            return f"{base} < {draw(expressions(g, loopvars, 1))}"
    return base


Line = tuple[int, str]


@st.composite
def blocks(draw, g: Grammar, indent: int, depth: int, loopvars: tuple[str, ...], loops: int,
           min_size: int = 1) -> list[Line]:
    most = g.block_size[0] if depth < g.shallow_depth else g.block_size[1]
    n = draw(st.integers(min_size, most))
    lines: list[Line] = []
    for _ in range(n):
        lines.extend(draw(statements(g, indent, depth, loopvars, loops)))
    return lines


@st.composite
def statements(draw, g: Grammar, indent: int, depth: int, loopvars: tuple[str, ...],
               loops: int) -> list[Line]:
    """One statement (a few lines for compound ones); ``loops`` is the loop nesting."""
    kinds = list(g.statement_kinds)
    if depth < g.max_depth:
        kinds += ["if", "if"]
        if loops < g.max_loop_nesting:
            kinds += ["for", "while"]
    if loops:
        kinds += ["break", "continue"]
    kind = draw(st.sampled_from(kinds))
    expr = expressions(g, loopvars)
    cond = conditions(g, loopvars)
    if g.wrappers:
        wrapper = draw(st.sampled_from(g.wrappers))

        def wrap(e: str) -> str:
            return f"{wrapper}({e})"
    else:
        def wrap(e: str) -> str:
            return e
    if kind == "assign":
        return [(indent, f"{draw(st.sampled_from(g.targets))} = {wrap(draw(expr))}")]
    if kind == "swap":
        u, v = draw(st.lists(st.sampled_from(g.targets), min_size=2, max_size=2, unique=True))
        return [(indent, f"{u}, {v} = {v}, {wrap(draw(expr))}")]
    if kind == "shift":
        return [(indent, f"a, b = b, {wrap(draw(expr))}")]
    if kind == "append":
        return [(indent, f"acc.append({wrap(draw(expr))})")]
    if kind == "container":
        return _container(draw, g, indent, expr, wrap)
    if kind == "aug":
        op = draw(st.sampled_from(["+=", "-=", "*="]))
        return [(indent, f"{draw(st.sampled_from(g.targets))} {op} {wrap(draw(expr))}")]
    if kind == "return":
        value = g.returned.format(draw(expr))
        if draw(st.booleans()):
            return [(indent, f"if {draw(cond)}:"), (indent + 1, f"return {value}")]
        return [(indent, f"return {value}")]
    if kind in ("break", "continue"):
        if draw(st.integers(0, 3)) == 0:
            return [(indent, kind)]
        return [(indent, f"if {draw(cond)}:"), (indent + 1, kind)]
    if kind == "if":
        lines = [(indent, f"if {draw(cond)}:")]
        lines += draw(blocks(g, indent + 1, depth + 1, loopvars, loops))
        for _ in range(draw(st.integers(0, 2))):
            lines.append((indent, f"elif {draw(cond)}:"))
            lines += draw(blocks(g, indent + 1, depth + 1, loopvars, loops))
        if draw(st.booleans()):
            lines.append((indent, "else:"))
            lines += draw(blocks(g, indent + 1, depth + 1, loopvars, loops))
        return lines
    if kind == "for":
        var = f"i{depth}"
        (lo0, hi0), (lo1, hi1), (lo2, hi2) = g.range_bounds
        iterable = draw(st.sampled_from([
            f"range({draw(st.integers(lo0, hi0))})",
            f"range(1, {draw(st.integers(lo1, hi1))})",
            f"range({draw(st.integers(lo2, hi2))}, 0, -1)",
            *g.iterables,
        ]))
        lines = [(indent, f"for {var} in {iterable}:")]
        lines += draw(blocks(g, indent + 1, depth + 1, (*loopvars, var), loops + 1))
    else:  # while with a bounded trip count
        assert kind == "while", kind
        counter = f"w{depth}"
        bound = draw(st.integers(0, g.while_bound))
        extra = f" and {draw(conditions(g, loopvars, 0))}" if draw(st.booleans()) else ""
        lines = [(indent, f"{counter} = 0"), (indent, f"while {counter} < {bound}{extra}:"),
                 (indent + 1, f"{counter} += 1")]
        lines += draw(blocks(g, indent + 1, depth + 1, loopvars, loops + 1))
    if draw(st.integers(0, 3)) == 0:
        # The else clause runs when the loop was not broken; break/continue in it
        # refer to the enclosing loop.
        lines.append((indent, "else:"))
        lines += draw(blocks(g, indent + 1, depth + 1, loopvars, loops))
    return lines


def _container(draw, g: Grammar, indent: int, expr, wrap) -> list[Line]:
    """Active values through list elements, dict entries, tuples and a local lambda."""
    local = draw(st.sampled_from(g.targets))
    form = draw(st.sampled_from(["read", "set", "augset", "dict", "tuple", "lambda"]))
    if form == "read":
        return [(indent, "if acc:"),
                (indent + 1, f"{local} = {wrap(f'acc[-1] * {draw(expr)} + acc[0]')}")]
    if form == "set":
        return [(indent, "if acc:"), (indent + 1, f"acc[0] = {wrap(draw(expr))}")]
    if form == "augset":
        op = draw(st.sampled_from(["+=", "*="]))
        return [(indent, "if acc:"), (indent + 1, f"acc[-1] {op} {wrap(draw(expr))}")]
    if form == "dict":
        p, q = wrap("d['p']"), wrap("d['p'] - d['q']")
        return [(indent, f"d = {{'p': {draw(expr)}, 'q': {local}}}"),
                (indent, f"d['q'] = d['q'] * {p}"),
                (indent, f"{local} = {q}")]
    if form == "tuple":
        return [(indent, f"t = ({draw(expr)}, {local}, x)"),
                (indent, f"{local}, *_rest = t[1], t[2], {wrap('t[0]')}"),
                (indent, f"{local} = {wrap(f'{local} + _rest[-1]')}")]
    # The factor is a default value (y, never reassigned, is closed over): a lambda kept
    # in a variable may not close over a loop variable (the frontend rejects that).
    return [(indent, f"g = lambda t, k={draw(expr)}: {wrap('t * k + 0.5 * y')}"),
            (indent, f"{local} = g({local}) + g(y) * 0.5")]


@st.composite
def programs(draw, g: Grammar) -> str:
    """The source of a module defining ``f(x, y, z)``."""
    body = draw(blocks(g, 1, 0, (), 0))
    final = draw(st.sampled_from(g.finals))
    lines = ["def f(x, y, z):", "    a = 0.0", "    b = 1.0", "    acc = []"]
    lines += ["    " * ind + text for ind, text in body]
    lines.append(f"    return {final}")
    return g.prelude + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="wengert_random_programs_"))
atexit.register(shutil.rmtree, _TMP, True)
(_TMP / f"{HELPERS_MODULE}.py").write_text(HELPERS)
sys.path.insert(0, str(_TMP))


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


def assert_bounded_float_program(source: str, outputs: int = 1) -> None:
    """``source`` is valid Python, and its ``f`` terminates with a float (or a tuple of
    ``outputs`` floats) of moderate size."""
    ns: dict = {}
    exec(compile(source, "<generated>", "exec"), ns)
    for args in ((1.0, 2.0, -0.5), (-1.7, 0.3, 1.9)):
        out = ns["f"](*args)
        if outputs != 1:
            assert isinstance(out, tuple) and len(out) == outputs, source
        for value in out if outputs != 1 else (out,):
            assert isinstance(value, float), source
            assert abs(value) < 1e3, source


# --------------------------------------------------------------------------
# Evaluation points where finite differences are an oracle
# --------------------------------------------------------------------------

RTOL = 1e-5
ATOL = 1e-6


def central_differences(f, args: tuple[float, ...], eps: float) -> list:
    """``d f / d args[i]`` by central differences: floats for a float ``f``, arrays for a
    tuple of floats."""
    out = []
    for i in range(len(args)):
        plus = list(args)
        minus = list(args)
        plus[i] += eps
        minus[i] -= eps
        hi, lo = f(*plus), f(*minus)
        if isinstance(hi, (int, float)):
            out.append((hi - lo) / (2.0 * eps))
        else:
            with numpy.errstate(all="ignore"):
                out.append((numpy.asarray(hi, dtype=float) - numpy.asarray(lo, dtype=float))
                           / (2.0 * eps))
    return out


def close(a, b, scale: float) -> bool:
    """``a`` and ``b`` (floats or arrays) agree to ``RTOL`` relative to ``scale``."""
    a = numpy.asarray(a, dtype=float)
    b = numpy.asarray(b, dtype=float)
    bound = ATOL + RTOL * numpy.maximum(numpy.maximum(abs(a), abs(b)), scale)
    return bool(numpy.all(abs(a - b) <= bound))


def smooth_point(f, seed: int, tries: int = 5):
    """A point where ``f`` (float-valued, or a tuple of floats) is smooth enough for finite
    differences, and ``f``'s derivatives there (:func:`central_differences`); ``None`` when
    ``tries`` seeded points all lie next to a kink or a jump.

    Steps ``1e-6`` and ``1e-5`` must agree: a difference across a kink or jump depends on
    the step, and there is no derivative to compare there.
    """
    rng = numpy.random.default_rng(seed)
    for _ in range(tries):
        args = tuple(float(v) for v in rng.uniform(-2.0, 2.0, size=3))
        fine = central_differences(f, args, 1e-6)
        coarse = central_differences(f, args, 1e-5)
        scale = max(1.0, float(numpy.max(numpy.abs(f(*args)))))
        if all(numpy.all(numpy.isfinite(g)) for g in fine) and all(
            close(a, b, scale) for a, b in zip(fine, coarse)
        ):
            return args, fine
    return None


def smooth_points(f, name: str, seeds: int = 3):
    """:func:`smooth_point` for seeds ``0 .. seeds - 1`` (handwritten programs): each must
    be found."""
    for seed in range(seeds):
        found = smooth_point(f, seed)
        assert found is not None, f"{name}: no point where finite differences agree"
        yield found


def derandomized(max_examples: int) -> settings:
    """Hypothesis settings of the derivative property tests.

    Deterministic (derandomize), and no shrinking: shrinking a failing program can take
    minutes, and the unshrunk program (printed with its evaluation point) is small anyway.
    """
    return settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def count_outcomes(check, count: int, first: int) -> dict[str, int]:
    """Run ``check(seed)`` (returning an outcome's name: ``"ok"``, ``"refused"``, ...) for
    ``count`` seeds from ``first``, print each wrong number and crash, and the tally (a
    generator's bulk run: ``python tests/transforms/test_..._random.py N SEED``)."""
    tally = {"ok": 0, "refused2": 0, "refused": 0, "raises": 0, "wrong": 0, "crash": 0}
    for s in range(first, first + count):
        try:
            tally[check(s)] += 1
        except (ValueError, ZeroDivisionError, OverflowError):
            tally["raises"] += 1
        except AssertionError as e:
            tally["wrong"] += 1
            print("WRONG", s, str(e)[:3000])
        except Exception as e:  # noqa: BLE001 (a bulk run counts every failure)
            tally["crash"] += 1
            print("CRASH", s, type(e).__name__, str(e)[:1500])
    print(tally)
    return tally
