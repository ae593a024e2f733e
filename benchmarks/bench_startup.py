"""What a user pays before the first derivative: ``import wengert`` and the first call.

Every number comes from a fresh child process (``python -c``) that prints its own
``time.perf_counter()`` deltas as JSON, with Python's bytecode cache usable: the child's
environment drops ``PYTHONDONTWRITEBYTECODE`` and points ``PYTHONPYCACHEPREFIX`` at a temporary
directory, and one warm-up child of each kind runs first, so every module (NumPy's, wengert's,
``startup_programs.py``) is imported from cached bytecode, as on a user's machine after the
first run.

| row | what the child times |
|---|---|
| import | ``import numpy``, then ``import wengert`` in the same child; median of 5 children |
| kalman grad | ``wengert.grad(kalman_nll, argnums=(0, 1))(x0, F, H, zs)``: a Kalman filter's NLL |
| kalman hessian | ``wengert.hessian(kalman_nll)(x0, F, H, zs)`` (w.r.t. ``x0``), in its own child |
| scalar_loop grad | a float loop with ``math`` calls, an ``if`` and a ``while``, d/d(x, y) |
| mlp grad | a 2-layer tanh MLP's softmax cross-entropy, d/d(dict of 4 weight arrays) |

A derivative row's child imports numpy and wengert, builds the arguments, then times the first
call (derivation, code generation, compile and one run) and the second call (steady state);
median of 3 children. The programs are in ``startup_programs.py`` (wengert reads source, so
they live in a real file). Before anything is timed, every derivative is compared with central
differences in this process, and each child's result with the checked one.

Targets (the issue's): import numpy + wengert <= 4x import numpy; the Kalman gradient's first
call <= 200 ms, its Hessian's <= 500 ms.

Run ``python3 benchmarks/bench_startup.py [--json PATH]``; it is never part of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import startup_programs as programs  # noqa: E402

IMPORT_RUNS = 5
CALL_RUNS = 3
IMPORT_RATIO_TARGET = 4.0

# row name -> (program for make_args, function, "grad" or "hessian", argnums, first-call target s)
ROWS: dict[str, tuple[str, str, str, object, float | None]] = {
    "kalman grad": ("kalman", "kalman_nll", "grad", (0, 1), 0.200),
    "kalman hessian": ("kalman", "kalman_nll", "hessian", 0, 0.500),
    "scalar_loop grad": ("scalar_loop", "scalar_loop", "grad", (0, 1), None),
    "mlp grad": ("mlp", "mlp_xent", "grad", 0, None),
}

_PATHS = f"import sys; sys.path[:0] = [{str(SRC)!r}, {str(HERE)!r}]\n"

IMPORT_CHILD = _PATHS + """\
import json, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import wengert
t2 = time.perf_counter()
print(json.dumps({"numpy": t1 - t0, "wengert": t2 - t1}))
"""

CALL_CHILD = _PATHS + """\
import json, time
import numpy
import wengert
import startup_programs as p
args = p.make_args({program!r})
d = wengert.{kind}(p.{function}, argnums={argnums!r})
t0 = time.perf_counter()
first = d(*args)
t1 = time.perf_counter()
second = d(*args)
t2 = time.perf_counter()
print(json.dumps({{"first": t1 - t0, "second": t2 - t1,
                  "sum1": p.leaf_sum(first), "sum2": p.leaf_sum(second)}}))
"""


def child_env(pycache: str) -> dict[str, str]:
    """This process's environment with the bytecode cache usable, kept under ``pycache``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def run_child(code: str, env: dict[str, str]) -> dict[str, float]:
    """Run ``code`` in a fresh interpreter; the JSON object on its last line of output."""
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=HERE, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def call_code(row: str) -> str:
    program, function, kind, argnums, _ = ROWS[row]
    return CALL_CHILD.format(program=program, function=function, kind=kind, argnums=argnums)


# --- correctness, in this process, before anything is timed ------------------------------

def _central(f, args, i: int, eps: float = 1e-6):
    """Central differences of ``f`` w.r.t. argument ``i`` (a float, an array or a dict of
    arrays): for an array, the value's shape + the argument's shape (JAX's Jacobian layout)."""
    a = args[i]
    if isinstance(a, dict):
        out = {}
        for k in a:
            def fk(v, k=k):
                return f(*args[:i], {**a, k: v}, *args[i + 1:])
            out[k] = _central(fk, (a[k],), 0, eps)
        return out
    if isinstance(a, float):
        hi = f(*args[:i], a + eps, *args[i + 1:])
        lo = f(*args[:i], a - eps, *args[i + 1:])
        return (hi - lo) / (2 * eps)
    x = np.array(a, dtype=float)
    cols = []
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += eps
        down[j] -= eps
        cols.append((np.asarray(f(*args[:i], up, *args[i + 1:]))
                     - np.asarray(f(*args[:i], down, *args[i + 1:]))) / (2 * eps))
    out = np.stack(cols, axis=-1)  # the value's shape + x's shape, as JAX lays out Jacobians
    return out.reshape(out.shape[:-1] + x.shape)


def _close(got, want, what: str) -> None:
    if isinstance(want, dict):
        for k in want:
            _close(got[k], want[k], f"{what}[{k!r}]")
        return
    assert np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                       rtol=1e-5, atol=1e-6), f"{what}: wengert disagrees with central differences"


def check() -> dict[str, float]:
    """Assert every row's derivative matches central differences; each row's leaf sum."""
    import wengert

    sums = {}
    for row, (program, function, kind, argnums, _) in ROWS.items():
        f = getattr(programs, function)
        args = programs.make_args(program)
        got = getattr(wengert, kind)(f, argnums=argnums)(*args)
        if kind == "grad":
            nums = argnums if isinstance(argnums, tuple) else (argnums,)
            parts = got if isinstance(argnums, tuple) else (got,)
            for i, part in zip(nums, parts):
                _close(part, _central(f, args, i), f"{row}, argument {i}")
        else:  # the Hessian: central differences of the (checked) gradient
            g = wengert.grad(f, argnums=argnums)
            _close(got, _central(g, args, argnums, eps=1e-5), row)
        sums[row] = programs.leaf_sum(got)
    return sums


# --- timing --------------------------------------------------------------------------------

def measure(sums: dict[str, float]) -> dict[str, object]:
    """Every child's numbers, and their medians."""
    with tempfile.TemporaryDirectory(prefix="wengert-pycache-") as pycache:
        env = child_env(pycache)
        # warm-up: one child of each kind, so every module's bytecode is cached
        run_child(IMPORT_CHILD, env)
        for row in ROWS:
            run_child(call_code(row), env)
        imports = [run_child(IMPORT_CHILD, env) for _ in range(IMPORT_RUNS)]
        calls = {}
        for row in ROWS:
            calls[row] = [run_child(call_code(row), env) for _ in range(CALL_RUNS)]
    for row, runs in calls.items():
        for r in runs:
            for key in ("sum1", "sum2"):
                assert np.isclose(r[key], sums[row], rtol=1e-8, atol=1e-10), (
                    f"{row}: a child's derivative differs from the checked one")
    med = statistics.median
    result: dict[str, object] = {
        "import": {
            "numpy_s": med(r["numpy"] for r in imports),
            "wengert_s": med(r["wengert"] for r in imports),
            "ratio": med((r["numpy"] + r["wengert"]) / r["numpy"] for r in imports),
            "ratio_target": IMPORT_RATIO_TARGET,
            "runs": imports,
        },
        "calls": {
            row: {"first_s": med(r["first"] for r in runs),
                  "second_s": med(r["second"] for r in runs),
                  "first_target_s": ROWS[row][4],
                  "runs": [{"first": r["first"], "second": r["second"]} for r in runs]}
            for row, runs in calls.items()
        },
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    return result


def _verdict(value: float, target: float | None) -> str:
    if target is None:
        return ""
    return "met" if value <= target else "missed"


def report(result: dict[str, object]) -> None:
    """Print the two tables."""
    imp = result["import"]
    print(f"import, fresh process, bytecode cached (median of {IMPORT_RUNS} children)")
    print(f"{'row':<34}{'median':>10}  {'target':<22}{'verdict'}")
    print(f"{'import numpy':<34}{imp['numpy_s'] * 1e3:>7.1f} ms")
    print(f"{'import wengert (numpy imported)':<34}{imp['wengert_s'] * 1e3:>7.1f} ms")
    target = f"<= {IMPORT_RATIO_TARGET:g}x"
    print(f"{'(numpy + wengert) / numpy':<34}{imp['ratio']:>8.2f}x  "
          f"{target:<22}{_verdict(imp['ratio'], IMPORT_RATIO_TARGET)}")
    print()
    print(f"first derivative call, fresh process after import (median of {CALL_RUNS} children)")
    print(f"{'row':<20}{'first call':>12}{'second call':>14}  {'target (first)':<16}{'verdict'}")
    for row, c in result["calls"].items():
        target = c["first_target_s"]
        ts = "—" if target is None else f"<= {target * 1e3:.0f} ms"
        print(f"{row:<20}{c['first_s'] * 1e3:>9.1f} ms{c['second_s'] * 1e3:>11.2f} ms  "
              f"{ts:<16}{_verdict(c['first_s'], target)}".rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    sums = check()
    result = measure(sums)
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
