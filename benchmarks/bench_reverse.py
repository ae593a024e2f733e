"""Reverse-mode benchmarks: gradient time as a multiple of the primal's, in one process.

Programs (``reverse_programs.py``): a 1000-step scalar loop, RK4 on a pendulum (250 steps),
a recursion 50 calls deep, and a ``while`` loop whose trip count depends on the input.

For each program and each method (``wengert.grad``, a hand-written adjoint where there is one,
and autograd / jax / jax.jit / torch when importable) this prints the median time of one gradient,
its ratio to the plain-Python primal, and the time of the first call on a freshly imported copy
of the program (for wengert: transform + code generation + compile + run). Every gradient is
checked against a central finite difference before it is timed; a method whose gradient is wrong
gets no number, and a wrong or failing ``wengert.grad`` makes the script exit with status 1.
It also counts the lines of the generated pullback (``wengert.show(f, mode="vjp")``).

Run ``python3 benchmarks/bench_reverse.py [--markdown] [--quick]``; it is never part of the tests.
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib.metadata
import importlib.util
import inspect
import itertools
import math
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROGRAMS_FILE = HERE / "reverse_programs.py"

#: Targets of issue 3 (item 9).
TARGET_RATIO = 3.5  # gradient time / primal time, scalar loop and RK4
TARGET_FIRST_CALL = 0.100  # seconds, transform + compile + first run
TARGET_LINES = 3.0  # pullback lines / primal lines, scalar loop

FD_RTOL = 1e-5
FD_ATOL = 1e-9


@dataclass(frozen=True)
class Program:
    """One differentiated program of ``reverse_programs.py`` and how to call it."""

    label: str
    name: str
    args: tuple[float, ...]
    argnums: int | tuple[int, ...]
    hand: str | None = None  # name of the hand-written adjoint in reverse_adjoints.py
    targets: bool = False  # whether the ratio target applies
    helpers: tuple[str, ...] = ()  # functions it calls, counted in its primal lines
    slow_jit: bool = False  # jax.jit of the unrolled program compiles for over a minute


PROGRAMS: tuple[Program, ...] = (
    Program("scalar loop, 1000 steps", "scalar_loop", (1.0,), 0, "scalar_loop_grad", True),
    Program("RK4 pendulum, 250 steps", "pendulum_rk4", (1.0, 1.5), (0, 1),
            "pendulum_rk4_grad", True, ("pendulum_accel",), slow_jit=True),
    Program("recursion, depth 50", "recursive_horner", (0.7,), 0, helpers=("exp_horner",)),
    Program("data-dependent while", "while_grow", (1.0,), 0),
)


@dataclass
class Row:
    """One measured (or skipped) method of one program."""

    program: Program
    method: str
    per_call: float | None = None
    ratio: float | None = None
    first_call: float | None = None
    note: str = ""
    failed: bool = False  # a wengert row whose gradient was wrong or raised


@dataclass
class LineCount:
    """Size of the generated VJP of one program against its primal."""

    program: Program
    primal: int | None = None
    pullback: int | None = None
    vjp_total: int | None = None
    note: str = ""


@dataclass
class Settings:
    """How long to time each method."""

    # Many short repeats rather than a few long ones: each ratio pairs a method repeat with the
    # primal repeat just before it, and short pairs see the same load on a busy machine.
    min_time: float = 0.1  # seconds per repeat
    repeats: int = 11
    first_calls: int = 3  # fresh copies timed for the wengert first call (median)
    peers: bool = True
    jit: bool = True
    slow_jit: bool = False  # also jax.jit programs marked slow_jit


@dataclass
class Report:
    """Everything one run measured."""

    rows: list[Row] = field(default_factory=list)
    lines: list[LineCount] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Whether a wengert gradient was wrong or could not be computed."""
        return any(r.failed for r in self.rows)


class Unavailable(Exception):
    """A method that cannot run here (library not installed, API not there yet)."""


class GradientMismatch(AssertionError):
    """A gradient that disagrees with the central finite difference."""


# --- loading fresh copies of the programs ------------------------------------------------------

_counter = itertools.count()


class ProgramLoader:
    """Imports fresh copies of ``reverse_programs.py`` from a temporary folder.

    Each copy is a real file (``inspect.getsource`` and wengert need one) under a new module
    name, so its functions have new code objects and no cache has seen them. ``math`` can be
    rebound in a copy to another library's functions, keeping the source text identical.
    """

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="wengert_bench_")
        self._source = PROGRAMS_FILE.read_text()
        self._modules: list[str] = []

    def load(self, math_ns: Any = None) -> types.ModuleType:
        """A freshly imported copy; ``math_ns`` replaces its global ``math`` when given."""
        name = f"_wengert_bench_programs_{next(_counter)}"
        path = Path(self._dir.name) / f"{name}.py"
        path.write_text(self._source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        self._modules.append(name)
        spec.loader.exec_module(module)
        if math_ns is not None:
            module.math = math_ns
        return module

    def close(self) -> None:
        """Forget the copies and delete their files."""
        for name in self._modules:
            sys.modules.pop(name, None)
        self._dir.cleanup()


# --- timing and checking ---------------------------------------------------------------------


def _run(call: Callable[[], object], number: int) -> float:
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(number):
        call()
    return time.perf_counter() - t0


def calibrate(call: Callable[[], object], min_time: float) -> tuple[int, float]:
    """(calls per repeat so that one repeat takes ``min_time``, seconds per call seen)."""
    number = 1
    while True:
        t = _run(call, number)
        if t >= min_time:
            return number, t / number
        grow = min_time / max(t, 1e-9) * 1.2
        number = max(number + 1, min(number * 10, math.ceil(number * grow)))


def time_per_call(call: Callable[[], object], settings: Settings) -> float:
    """Median seconds per call over ``settings.repeats`` repeats of ``number`` calls each.

    The garbage collector stays on: tape-based methods pay for it in real use.
    """
    number, _ = calibrate(call, settings.min_time)
    return statistics.median(_run(call, number) / number for _ in range(settings.repeats))


def time_against(call: Callable[[], object], primal: Callable[[], object],
                 settings: Settings) -> tuple[float, float]:
    """(median seconds per call of ``call``, median ratio to ``primal``).

    Each repeat of ``call`` is paired with a repeat of ``primal`` run right before it, and the
    ratio is taken per pair, so a machine that speeds up or slows down during the run (other
    processes, frequency scaling) moves both sides of each ratio alike. A method whose call
    takes over a second is timed once.
    """
    primal_number, _ = calibrate(primal, settings.min_time)
    t0 = time.perf_counter()
    number, per_call = calibrate(call, settings.min_time)
    times, ratios = [], []
    repeats = settings.repeats
    if time.perf_counter() - t0 > 1.0 and number == 1:
        # A call of over a second (jax.grad on a 1000-step loop) is timed once, by the
        # calibrating call: its ratio is in the thousands, and repeats would take minutes.
        times.append(per_call)
        ratios.append(per_call / (_run(primal, primal_number) / primal_number))
        repeats = 0
    for _ in range(repeats):
        base = _run(primal, primal_number) / primal_number
        t = _run(call, number) / number
        times.append(t)
        ratios.append(t / base)
    return statistics.median(times), statistics.median(ratios)


def timed_once(call: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by one call, and its result."""
    t0 = time.perf_counter()
    out = call()
    return time.perf_counter() - t0, out


def argnums_tuple(argnums: int | tuple[int, ...]) -> tuple[int, ...]:
    """``argnums`` as a tuple."""
    return argnums if isinstance(argnums, tuple) else (argnums,)


def as_floats(grads: Any, argnums: int | tuple[int, ...]) -> tuple[float, ...]:
    """A gradient (a scalar, or a tuple for tuple ``argnums``) as a tuple of floats."""
    parts = grads if isinstance(argnums, tuple) else (grads,)
    if len(parts) != len(argnums_tuple(argnums)):
        raise GradientMismatch(f"expected {len(argnums_tuple(argnums))} gradients, got {grads!r}")
    return tuple(float(g) for g in parts)


def finite_difference(f: Callable[..., float], args: Sequence[float],
                      argnums: int | tuple[int, ...]) -> tuple[float, ...]:
    """Central finite differences of ``f`` at ``args`` along each of ``argnums``."""
    out = []
    for i in argnums_tuple(argnums):
        h = 1e-6 * max(1.0, abs(args[i]))
        up, down = list(args), list(args)
        up[i] += h
        down[i] -= h
        out.append((f(*up) - f(*down)) / (2 * h))
    return tuple(out)


def check_gradient(grads: Any, expected: tuple[float, ...], program: Program) -> None:
    """Raise ``GradientMismatch`` unless ``grads`` matches ``expected`` (rtol 1e-5)."""
    got = as_floats(grads, program.argnums)
    for g, e in zip(got, expected):
        if not abs(g - e) <= FD_ATOL + FD_RTOL * abs(e):
            raise GradientMismatch(
                f"gradient {got} != finite difference {expected} (rtol {FD_RTOL:g})")


# --- the methods -------------------------------------------------------------------------------


@dataclass
class Trial:
    """One method on one freshly loaded copy of a program.

    ``first`` computes the gradient the way a user's first call would (for wengert:
    ``wengert.grad(f, argnums)(*args)``, transform included); ``then`` is called after it and
    returns the call to time repeatedly (the transform cached, the jit compiled).
    """

    first: Callable[[], Any]
    then: Callable[[], Callable[[], Any]]


@dataclass
class Method:
    """A way to compute gradients: how to make a ``Trial`` of it for a program."""

    label: str
    prepare: Callable[[Program, ProgramLoader], Callable[[], Trial]]
    peer: bool = False
    first_call: bool = True  # whether the first call is worth reporting


def _same(call: Callable[[], Any]) -> Trial:
    return Trial(call, lambda: call)


def _wengert() -> Any:
    import wengert

    if not hasattr(wengert, "grad"):
        raise Unavailable("wengert.grad not available yet")
    return wengert


def prepare_wengert(program: Program, loader: ProgramLoader) -> Callable[[], Trial]:
    """``wengert.grad(f, argnums)(*args)``."""
    wengert = _wengert()

    def fresh() -> Trial:
        # New code objects miss every cache; a cache-clearing API, once there is one, also
        # drops what wengert derived for other functions (rules, helpers).
        for owner in (wengert, getattr(wengert, "api", None)):
            clear = getattr(owner, "clear_caches", None)
            if callable(clear):
                clear()
                break
        f = getattr(loader.load(), program.name)

        def then() -> Callable[[], Any]:
            g = wengert.grad(f, argnums=program.argnums)
            return lambda: g(*program.args)

        return Trial(lambda: wengert.grad(f, argnums=program.argnums)(*program.args), then)

    return fresh


def prepare_hand(program: Program, loader: ProgramLoader) -> Callable[[], Trial]:
    """The hand-written adjoint of ``reverse_adjoints.py``."""
    if program.hand is None:
        raise Unavailable("no hand-written adjoint")
    import reverse_adjoints

    g = getattr(reverse_adjoints, program.hand)
    return lambda: _same(lambda: g(*program.args))


def prepare_autograd(program: Program, loader: ProgramLoader) -> Callable[[], Trial]:
    """``autograd.grad`` with ``math`` rebound to ``autograd.numpy``."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError as e:
        raise Unavailable("not installed") from e
    shim = types.SimpleNamespace(sin=anp.sin, cos=anp.cos)

    def fresh() -> Trial:
        g = autograd.grad(getattr(loader.load(shim), program.name), argnum=program.argnums)
        return _same(lambda: g(*program.args))

    return fresh


def _jax() -> Any:
    try:
        import jax
    except ImportError as e:
        raise Unavailable("not installed") from e
    jax.config.update("jax_enable_x64", True)  # the programs are float64 programs
    return jax


def prepare_jax(program: Program, loader: ProgramLoader, jit: bool = False
                ) -> Callable[[], Trial]:
    """``jax.grad`` with ``math`` rebound to ``jax.numpy``; with ``jit``, ``jax.jit`` of it.

    Without jit, Python control flow on values works. With jit, loops are unrolled at trace
    time, the first call compiles, and a data-dependent ``while`` cannot be traced.
    """
    jax = _jax()
    import jax.numpy as jnp

    shim = types.SimpleNamespace(sin=jnp.sin, cos=jnp.cos)

    def fresh() -> Trial:
        g = jax.grad(getattr(loader.load(shim), program.name), argnums=program.argnums)
        if jit:
            g = jax.jit(g)
        return _same(lambda: jax.block_until_ready(g(*program.args)))

    return fresh


def prepare_jax_jit(program: Program, loader: ProgramLoader) -> Callable[[], Trial]:
    """``jax.jit(jax.grad(f))``."""
    return prepare_jax(program, loader, jit=True)


def prepare_torch(program: Program, loader: ProgramLoader) -> Callable[[], Trial]:
    """float64 scalar tensors with ``requires_grad`` and ``.backward()``."""
    try:
        import torch
    except ImportError as e:
        raise Unavailable("not installed") from e

    def sin(v: Any) -> Any:
        return torch.sin(v) if isinstance(v, torch.Tensor) else math.sin(v)

    def cos(v: Any) -> Any:
        return torch.cos(v) if isinstance(v, torch.Tensor) else math.cos(v)

    shim = types.SimpleNamespace(sin=sin, cos=cos)
    wrt = argnums_tuple(program.argnums)

    def fresh() -> Trial:
        f = getattr(loader.load(shim), program.name)

        def grad() -> Any:
            args = [torch.tensor(a, dtype=torch.float64, requires_grad=True) if i in wrt else a
                    for i, a in enumerate(program.args)]
            f(*args).backward()
            grads = tuple(args[i].grad for i in wrt)
            return grads if isinstance(program.argnums, tuple) else grads[0]

        return _same(grad)

    return fresh


METHODS: tuple[Method, ...] = (
    Method("wengert.grad", prepare_wengert),
    Method("hand-written adjoint", prepare_hand, first_call=False),
    Method("autograd.grad", prepare_autograd, peer=True),
    Method("jax.grad", prepare_jax, peer=True),
    Method("jax.jit(jax.grad)", prepare_jax_jit, peer=True),
    Method("torch .backward()", prepare_torch, peer=True),
)


def _error(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:100]


def measure_method(program: Program, method: Method, primal: Callable[[], object],
                   expected: tuple[float, ...], loader: ProgramLoader,
                   settings: Settings) -> Row:
    """Check one method's gradient against ``expected``, then time its first call and calls.

    The first call is timed on ``settings.first_calls`` fresh copies for wengert (median; the
    copies are new modules, so nothing is cached) and on one for the peers.
    """
    row = Row(program, method.label)
    is_wengert = method.label == "wengert.grad"
    try:
        fresh = method.prepare(program, loader)
        samples = []
        for _ in range(settings.first_calls if is_wengert else 1):
            trial = fresh()
            t, out = timed_once(trial.first)
            check_gradient(out, expected, program)
            samples.append(t)
        call = trial.then()
        check_gradient(call(), expected, program)
    except Unavailable as e:
        row.note = str(e)
        return row
    except GradientMismatch as e:
        row.note, row.failed = f"WRONG GRADIENT: {e}", is_wengert
        return row
    except Exception as e:  # a transform that cannot handle the program is a result too
        row.note, row.failed = f"error: {_error(e)}", is_wengert
        return row
    if method.first_call:
        row.first_call = statistics.median(samples)
    row.per_call, row.ratio = time_against(call, primal, settings)
    return row


# --- generated-code size -----------------------------------------------------------------------


def _strip_docstrings(node: ast.AST) -> ast.AST:
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.body:
            first = sub.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str) and len(sub.body) > 1:
                sub.body = sub.body[1:]
    return node


def code_lines(node: ast.AST) -> int:
    """Lines of ``node`` as ``ast.unparse`` writes it, docstrings dropped.

    Counting unparsed lines measures statements, not formatting or comments, so the user's
    primal and the generated code are counted alike.
    """
    return len(ast.unparse(_strip_docstrings(node)).splitlines())


def pullback_lines(source: str) -> tuple[int, int]:
    """(lines of the pullback(s), lines of everything) in the source ``show`` returns.

    The pullbacks are the outermost functions whose name contains ``pullback``; failing that,
    the functions nested in the first top-level function; failing that, the whole text.
    """
    tree = ast.parse(source)
    total = code_lines(tree)
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and "pullback" in child.name:
                found.append(child)
            else:
                visit(child)

    visit(tree)
    if not found:
        tops = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
        if tops:
            found = [s for s in ast.walk(tops[0])
                     if isinstance(s, ast.FunctionDef) and s is not tops[0]]
    if not found:
        return total, total
    return sum(code_lines(f) for f in found), total


def count_lines(program: Program, loader: ProgramLoader) -> LineCount:
    """Pullback lines against primal lines for one program."""
    module = loader.load()
    f = getattr(module, program.name)
    primal = sum(code_lines(ast.parse(inspect.getsource(getattr(module, name))))
                 for name in (program.name, *program.helpers))
    result = LineCount(program, primal=primal)
    try:
        wengert = _wengert()
        source = wengert.show(f, mode="vjp", argnums=program.argnums)
        result.pullback, result.vjp_total = pullback_lines(source)
    except Unavailable as e:
        result.note = str(e)
    except Exception as e:
        result.note = f"error: {_error(e)}"
    return result


# --- the run and its report --------------------------------------------------------------------


def run(programs: Sequence[Program], settings: Settings,
        progress: Callable[[str], None] = lambda s: None) -> Report:
    """Measure every method on every program."""
    report = Report()
    loader = ProgramLoader()
    try:
        for program in programs:
            f = getattr(loader.load(), program.name)
            expected = finite_difference(f, program.args, program.argnums)
            progress(f"{program.label}: primal")

            def primal(f: Callable[..., float] = f, args: tuple[float, ...] = program.args
                       ) -> float:
                return f(*args)  # called like the methods' calls, one frame deep

            report.rows.append(Row(program, "primal (Python floats)",
                                   time_per_call(primal, settings), 1.0))
            for method in METHODS:
                if (method.peer and not settings.peers) or \
                        (method.label == "hand-written adjoint" and program.hand is None):
                    continue
                if method.label == "jax.jit(jax.grad)":
                    if not settings.jit:
                        continue
                    if program.slow_jit and not settings.slow_jit:
                        report.rows.append(Row(program, method.label, note=(
                            "skipped: compiling the unrolled loop takes minutes (--slow-jit)")))
                        continue
                progress(f"{program.label}: {method.label}")
                report.rows.append(measure_method(program, method, primal, expected,
                                                  loader, settings))
            report.lines.append(count_lines(program, loader))
    finally:
        loader.close()
    return report


def fmt_time(t: float | None) -> str:
    """Seconds in a readable unit."""
    if t is None:
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1.0:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def fmt_ratio(r: float | None) -> str:
    """A ratio as ``2.9×``."""
    return "—" if r is None else f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


def timing_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the timing table."""
    header = ["program", "method", "per call", "× primal", "first call", "note"]
    rows = [[r.program.label, r.method, fmt_time(r.per_call), fmt_ratio(r.ratio),
             fmt_time(r.first_call), r.note] for r in report.rows]
    return header, rows


def lines_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the generated-code size table."""
    header = ["program", "primal lines (with helpers)", "pullback lines", "pullback / primal",
              "vjp + pullback lines", "note"]
    rows = []
    for c in report.lines:
        ratio = c.pullback / c.primal if c.pullback is not None and c.primal else None
        rows.append([c.program.label, str(c.primal or "—"),
                     "—" if c.pullback is None else str(c.pullback), fmt_ratio(ratio),
                     "—" if c.vjp_total is None else str(c.vjp_total), c.note])
    return header, rows


def targets(report: Report) -> list[str]:
    """One line per target of the issue: measured value and whether it is met."""
    out = []

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    for r in report.rows:
        if r.method != "wengert.grad":
            continue
        if r.program.targets:
            value = "not measured" if r.ratio is None else \
                f"{fmt_ratio(r.ratio)} {verdict(r.ratio <= TARGET_RATIO)}"
            out.append(f"{r.program.label}: gradient ≤ {TARGET_RATIO}× primal: {value}")
        value = "not measured" if r.first_call is None else \
            f"{fmt_time(r.first_call)} {verdict(r.first_call < TARGET_FIRST_CALL)}"
        out.append(f"{r.program.label}: first call < {TARGET_FIRST_CALL * 1e3:.0f} ms: {value}")
    for c in report.lines:
        if c.program.name != "scalar_loop":
            continue
        if c.pullback is None or not c.primal:
            out.append(f"{c.program.label}: pullback ≤ {TARGET_LINES:g}× primal lines: "
                       "not measured")
        else:
            ratio = c.pullback / c.primal
            out.append(f"{c.program.label}: pullback ≤ {TARGET_LINES:g}× primal lines: "
                       f"{c.pullback}/{c.primal} = {fmt_ratio(ratio)} "
                       f"{verdict(ratio <= TARGET_LINES)}")
    return out


def format_text(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table with aligned columns."""
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    line = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    return "\n".join([body[0], line, *body[1:]])


def format_markdown(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub markdown table."""
    def md(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([md(header), md(["---"] * len(header)), *(md(r) for r in rows)])


def environment() -> str:
    """Python and peer versions, one line."""
    parts = [f"Python {sys.version.split()[0]}"]
    for name in ("autograd", "jax", "torch"):
        try:
            parts.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def render(report: Report, markdown: bool) -> str:
    """The whole report as text or markdown."""
    fmt = format_markdown if markdown else format_text
    parts = [environment(), "", fmt(*timing_table(report)), "", fmt(*lines_table(report)), ""]
    parts += [("- " if markdown else "") + t for t in targets(report)]
    return "\n".join(parts)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command-line options (shared with ``run.py``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--quick", action="store_true", help="shorter timings (noisier)")
    parser.add_argument("--no-peers", action="store_true", help="skip autograd, jax and torch")
    parser.add_argument("--no-jit", action="store_true",
                        help="skip jax.jit (compiling the unrolled loops takes seconds)")
    parser.add_argument("--slow-jit", action="store_true",
                        help="also jax.jit RK4, whose unrolled loop compiles for minutes")
    parser.add_argument("--program", action="append", default=None,
                        choices=[p.name for p in PROGRAMS], help="only this program (repeatable)")
    return parser.parse_args(argv)


def run_cli(args: argparse.Namespace) -> int:
    """Run the benchmarks as ``args`` say and print the report; 1 if wengert.grad failed."""
    settings = Settings(peers=not args.no_peers, jit=not args.no_jit, slow_jit=args.slow_jit)
    if args.quick:
        settings.min_time, settings.repeats = 0.05, 5
    programs = [p for p in PROGRAMS if args.program is None or p.name in args.program]
    report = run(programs, settings, lambda s: print(f"  ... {s}", file=sys.stderr, flush=True))
    print(render(report, args.markdown))
    return 1 if report.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the benchmarks and print the report; 1 if wengert.grad failed."""
    return run_cli(parse_args(argv))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent / "src"))
    sys.path.insert(0, str(HERE))
    sys.exit(main())
