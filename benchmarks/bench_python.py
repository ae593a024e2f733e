"""Python-shapes benchmarks: ``wengert.grad`` time of plain-Python programs as a multiple of
the primal's.

Programs (``python_programs.py``): RK4 with tuple assignment, a particle ``@dataclass`` stepped
in place and by making new objects, a loss over a ``dict`` of parameters with ``zip``, a
softmax-weighted mean over a list, a recursive continued fraction, callable layer objects, the
fixed cost of ``grad(f)(x)`` on ``x * x``, a determinant by recursive cofactor expansion on
a list of lists, the energy of dataclass bodies passed in a list, and tables of lists written
entry by entry (a product into a table of zeros, a dynamic programme).

Measurement as in ``bench_reverse.py`` (whose helpers this reuses): per call the median of
repeats; × primal the median of per-pair ratios, each gradient repeat paired with a primal
repeat run just before it; the first call on a fresh copy of the programs (transform, code
generation, compile, one run; median of 3 copies). Every gradient is checked against central
finite differences over every float of the differentiated arguments before it is timed. A
program wengert refuses is reported with its message.

The wengert measured is ``src/`` beside this folder unless ``PYTHONPATH`` is set, so an older
checkout can be measured with the same script::

    python3 benchmarks/bench_python.py --save after.json
    PYTHONPATH=/tmp/bench_before/src python3 benchmarks/bench_python.py --save before.json
    python3 benchmarks/bench_python.py --compare before.json after.json

It is never part of the tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROGRAMS_FILE = HERE / "python_programs.py"

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    if not os.environ.get("PYTHONPATH"):  # PYTHONPATH, when set, picks the wengert measured
        sys.path.insert(0, str(HERE.parent / "src"))

import bench_reverse  # noqa: E402
from bench_reverse import (  # noqa: E402
    GradientMismatch,
    ProgramLoader,
    Settings,
    environment,
    fmt_ratio,
    format_markdown,
    format_text,
    time_against,
    time_per_call,
    timed_once,
)

FD_RTOL = 1e-5  # max |grad - fd| over the gradient, relative to max |fd|


# --- the programs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """One function of ``python_programs.py``, its arguments and what is differentiated."""

    label: str
    name: str
    args: Callable[[], tuple[Any, ...]]
    argnums: int | tuple[int, ...]
    fixed_cost: bool = False  # report per call minus the primal's as the fixed cost


def _points(n: int) -> tuple[list[float], list[float]]:
    xs = [i / n * 2.0 - 1.0 for i in range(n)]
    return xs, [1.0 + 2.0 * x - 0.5 * x * x + 0.1 * math.sin(17.0 * x) for x in xs]


def _bodies(n: int) -> list[Any]:
    """``n`` bodies (``python_programs.Body``) at spread positions and speeds."""
    from python_programs import Body

    return [Body(0.01 * i - 0.5, 0.3 * math.sin(0.2 * i), 1.0 + 0.002 * i) for i in range(n)]


def _matrix(n: int) -> list[list[float]]:
    return [[math.sin(7.0 * i + 3.0 * j + 1.0) + (2.0 if i == j else 0.0) for j in range(n)]
            for i in range(n)]


PROGRAMS: tuple[Program, ...] = (
    Program("RK4 pendulum, tuple assignment, 250 steps", "pendulum_tuples",
            lambda: (1.0, 0.0, 9.81), (0, 1, 2)),
    Program("particle @dataclass, in-place method, 500 steps", "particle_inplace",
            lambda: (1.0, 0.0, 2.0), (0, 1, 2)),
    Program("particle @dataclass, new object per step, 500 steps", "particle_new",
            lambda: (1.0, 0.0, 2.0), (0, 1, 2)),
    Program("dict of 3 parameters, zip over 200 points", "dict_loss",
            lambda: ({"a": 0.1, "b": 0.2, "c": 0.3}, *_points(200)), 0),
    Program("softmax-weighted mean, list of 300 floats", "softmax_mean",
            lambda: ([2.0 * math.sin(0.37 * i) for i in range(300)],), 0),
    Program("continued fraction, recursion depth 40", "continued_fraction",
            lambda: (0.7, 40), 0),
    Program("3 callable layers (affine + tanh), 20 points", "layers_loss",
            lambda: (0.5, -0.7, 1.2, *_points(20)), (0, 1, 2)),
    Program("grad(f)(x), f = x * x: fixed cost per call", "square",
            lambda: (3.0,), 0, fixed_cost=True),
    Program("determinant, cofactor recursion, 7×7 list of lists", "det",
            lambda: (_matrix(7),), 0),
    Program("energy of 200 @dataclass bodies passed in a list", "bodies_energy",
            lambda: (_bodies(200), 2.0), (0, 1)),
    Program("spring chain of 20 @dataclass masses made in a list, 50 steps", "spring_chain",
            lambda: ([1.05 * i for i in range(20)], 3.0), (0, 1)),
    Program("product into a table of zeros, 12×12 lists", "table_product",
            lambda: (_matrix(12), _matrix(12)), (0, 1)),
    Program("dynamic programme filling a 40×40 table", "edit_cost",
            lambda: ([math.sin(0.3 * i) for i in range(40)],
                     [math.cos(0.2 * i) for i in range(40)]), (0, 1)),
)


# --- checking ----------------------------------------------------------------------------------


def flatten(tree: Any) -> list[float]:
    """The floats of a float, a list / tuple, a dict (keys sorted) or a dataclass (its
    fields in order), depth first."""
    if isinstance(tree, dict):
        return [v for k in sorted(tree) for v in flatten(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [v for item in tree for v in flatten(item)]
    if dataclasses.is_dataclass(tree):
        return [v for f in dataclasses.fields(tree) for v in flatten(getattr(tree, f.name))]
    return [float(tree)]


def unflatten(like: Any, values: list[float]) -> Any:
    """``like`` with its floats replaced, in ``flatten``'s order, by ``values`` (consumed)."""
    if isinstance(like, dict):
        return {k: unflatten(like[k], values) for k in sorted(like)}
    if isinstance(like, (list, tuple)):
        return type(like)(unflatten(item, values) for item in like)
    if dataclasses.is_dataclass(like):
        return dataclasses.replace(like, **{f.name: unflatten(getattr(like, f.name), values)
                                            for f in dataclasses.fields(like)})
    return values.pop(0)


def argnums_tuple(argnums: int | tuple[int, ...]) -> tuple[int, ...]:
    return argnums if isinstance(argnums, tuple) else (argnums,)


def finite_difference(f: Callable[..., float], args: tuple[Any, ...],
                      argnums: int | tuple[int, ...]) -> list[float]:
    """Central differences along every float of each differentiated argument, flattened."""
    out = []
    for i in argnums_tuple(argnums):
        base = flatten(args[i])
        for k, value in enumerate(base):
            h = 1e-6 * max(1.0, abs(value))
            values = []
            for step in (h, -h):
                moved = list(base)
                moved[k] += step
                shifted = list(args)
                shifted[i] = unflatten(args[i], moved)
                values.append(f(*shifted))
            out.append((values[0] - values[1]) / (2 * h))
    return out


def check_gradient(grads: Any, expected: list[float]) -> None:
    """Raise ``GradientMismatch`` unless ``grads`` flattened matches ``expected``."""
    got = flatten(grads)
    if len(got) != len(expected):
        raise GradientMismatch(f"{len(got)} gradient entries, expected {len(expected)}")
    err = max(abs(g - e) for g, e in zip(got, expected)) / max(max(map(abs, expected)), 1e-12)
    if not err <= FD_RTOL:
        raise GradientMismatch(f"max error {err:.1e} relative to max |fd| (rtol {FD_RTOL:g})")


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    primal: float | None = None
    per_call: float | None = None
    ratio: float | None = None
    first_call: float | None = None
    note: str = ""
    failed: bool = False


@dataclass
class Report:
    origin: str
    rows: list[Row] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.rows)


def _error(e: BaseException) -> str:
    lines = [s for s in str(e).strip().splitlines() if s.strip()]
    text = " / ".join(s.strip() for s in lines[:1] + [s for s in lines[1:] if
                                                      s.lstrip().startswith(("hint", "note"))])
    # The fresh copies are temporary modules: name the programs' file instead.
    text = re.sub(r"\S*/(_wengert_bench_programs_\d+)\.py", "python_programs.py", text)
    text = re.sub(r"_wengert_bench_programs_\d+\.", "", text)
    return f"{type(e).__name__}: {text}"[:220]


class Loader(ProgramLoader):
    """Fresh copies of ``python_programs.py`` (new module files: nothing cached)."""

    def __init__(self) -> None:
        super().__init__()
        self._source = PROGRAMS_FILE.read_text()


def measure(program: Program, loader: ProgramLoader, settings: Settings) -> Row:
    """FD check, first call on fresh copies, then the timed calls against the primal."""
    import wengert

    row = Row(program.label)
    args = program.args()
    f = getattr(loader.load(), program.name)
    expected = finite_difference(f, args, program.argnums)

    def primal(f: Callable[..., Any] = f, args: tuple[Any, ...] = args) -> Any:
        return f(*args)

    row.primal = time_per_call(primal, settings)
    try:
        samples = []
        for _ in range(settings.first_calls):
            g = getattr(loader.load(), program.name)
            t, out = timed_once(lambda g=g: wengert.grad(g, argnums=program.argnums)(*args))
            check_gradient(out, expected)
            samples.append(t)
        grad = wengert.grad(g, argnums=program.argnums)
        check_gradient(grad(*args), expected)
    except GradientMismatch as e:
        row.note, row.failed = f"WRONG GRADIENT: {e}", True
        return row
    except Exception as e:  # a refusal is a result
        row.note, row.failed = f"refused: {_error(e)}", True
        return row
    row.first_call = statistics.median(samples)
    row.per_call, row.ratio = time_against(lambda: grad(*args), primal, settings)
    if program.fixed_cost:
        row.note = f"fixed cost ≈ {(row.per_call - row.primal) * 1e6:.1f} µs per call"
    return row


def wengert_origin() -> str:
    """Where the measured wengert comes from: its folder, commit, uncommitted changes."""
    import wengert

    src = Path(wengert.__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "."],
                               capture_output=True, text=True, check=True).stdout.strip()
        commit += " + uncommitted changes" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "commit unknown"
    return f"wengert from {src} ({commit})"


def run(programs: Sequence[Program], settings: Settings, freeze_gc: bool = False,
        progress: Callable[[str], None] = lambda s: None) -> Report:
    """Measure every program; with ``freeze_gc``, after ``gc.freeze()`` (see ``--freeze-gc``)."""
    report = Report(wengert_origin())
    if freeze_gc:
        gc.collect()
        gc.freeze()
        report.origin += f", gc.freeze() of {gc.get_freeze_count()} objects"
    loader = Loader()
    try:
        for program in programs:
            progress(program.label)
            report.rows.append(measure(program, loader, settings))
    finally:
        loader.close()
    return report


# --- output ------------------------------------------------------------------------------------


def fmt_time(t: float | None) -> str:
    """Seconds in a readable unit, nanoseconds below a microsecond."""
    return f"{t * 1e9:.0f} ns" if t is not None and t < 1e-6 else bench_reverse.fmt_time(t)


def table(report: Report) -> tuple[list[str], list[list[str]]]:
    header = ["program", "primal", "wengert.grad", "× primal", "first call", "note"]
    rows = [[r.label, fmt_time(r.primal), fmt_time(r.per_call), fmt_ratio(r.ratio),
             fmt_time(r.first_call), r.note] for r in report.rows]
    return header, rows


def compare_table(before: Report, after: Report) -> tuple[list[str], list[list[str]]]:
    header = ["program", "before: grad", "before: × primal", "before: first call",
              "after: grad", "after: × primal", "after: first call", "note"]
    old = {r.label: r for r in before.rows}
    rows = []
    for r in after.rows:
        b = old.get(r.label, Row(r.label, note="not measured"))
        notes = [f"before: {b.note}" if b.note else "", f"after: {r.note}" if r.note else ""]
        rows.append([r.label, fmt_time(b.per_call), fmt_ratio(b.ratio), fmt_time(b.first_call),
                     fmt_time(r.per_call), fmt_ratio(r.ratio), fmt_time(r.first_call),
                     "; ".join(n for n in notes if n)])
    return header, rows


def load_report(path: str) -> Report:
    data = json.loads(Path(path).read_text())
    return Report(data["origin"], [Row(**r) for r in data["rows"]])


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument("--quick", action="store_true", help="shorter timings (noisier)")
    parser.add_argument("--program", action="append", default=None,
                        choices=[p.name for p in PROGRAMS], help="only this program (repeatable)")
    parser.add_argument("--freeze-gc", action="store_true", help=(
        "gc.freeze() once wengert is imported, so that garbage collections walk only what the "
        "gradients allocate (a diagnostic: users' processes collect the whole heap)"))
    parser.add_argument("--save", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="print two saved results side by side (measures nothing)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run and print the report (1 if a gradient was wrong or refused), or compare two."""
    args = parse_args(argv)
    fmt = format_markdown if args.markdown else format_text
    if args.compare:
        before, after = (load_report(p) for p in args.compare)
        print(f"before: {before.origin}\nafter: {after.origin}\n")
        print(fmt(*compare_table(before, after)))
        return 0
    settings = Settings()
    if args.quick:
        settings.min_time, settings.repeats = 0.05, 5
    programs = [p for p in PROGRAMS if args.program is None or p.name in args.program]
    progress = lambda s: print(f"  ... {s}", file=sys.stderr, flush=True)
    report = run(programs, settings, args.freeze_gc, progress)
    print(f"{environment()}\n{report.origin}\n")
    print(fmt(*table(report)))
    if args.save:
        Path(args.save).write_text(json.dumps(
            {"origin": report.origin, "rows": [asdict(r) for r in report.rows]}, indent=1))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
