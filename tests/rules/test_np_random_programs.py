"""Random NumPy programs, to second order: chains of elementwise operations on an array
argument and a float, the same arithmetic twice (what generated code may make once), writes
into copies under integer, negative, slice and ``...`` indices, and reductions (with ``axis``,
of NumPy scalars), each called at two shapes (derivatives specialise on shapes) and checked
by ``check_grads`` in both modes. A few run in the tests; ``python3
tests/rules/test_np_random_programs.py COUNT FIRST_SEED`` runs many and prints the counts.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from wengert.testing import check_grads

UNARY = ["np.sin({a})", "np.tanh({a})", "{a} * {a}", "np.exp(0.3 * {a})", "{a} * c",
         "{a} + c", "-{a}", "np.cos({a}) * c"]
BINARY = ["{a} * {b}", "{a} + {b}", "{a} - {b}", "{a} * {b} + {a}"]
REDUCE = ["np.sum({a})", "np.mean({a})", "np.sum({a} * {a})", "np.max({a})",
          "np.sum({a}, axis=0).sum()", "np.mean({a} ** 2)"]
SHAPES = [(3,), (2, 3), (4,), (3, 2), (5,), (2, 2)]


def program(rng: random.Random) -> str:
    """The source of ``f(x, c)``."""
    lines: list[str] = []
    names = ["x"]
    for k in range(rng.randrange(2, 6)):
        a = rng.choice(names)
        if rng.random() < 0.5 or len(names) < 2:
            e = rng.choice(UNARY).format(a=a)
        else:
            e = rng.choice(BINARY).format(a=a, b=rng.choice(names))
        lines.append(f"v{k} = {e}")
        names.append(f"v{k}")
        if rng.random() < 0.35:
            lines.append(f"v{k}_twin = {e}")  # the same arithmetic again
            names.append(f"v{k}_twin")
        if rng.random() < 0.3:
            target = rng.choice(names[1:])
            index = rng.choice(["0", "-1", "1:", ":1", "..., 0"])
            value = rng.choice(["0.5", "c * x[0]", f"2.0 * {rng.choice(names)}[0]"])
            lines += [f"{target} = {target} * 1.0", f"{target}[{index}] = {value}"]
    terms = [rng.choice(REDUCE).format(a=rng.choice(names)) for _ in range(rng.randrange(1, 4))]
    lines.append("return " + " + ".join(terms))
    return "import numpy as np\n\n\ndef f(x, c):\n" + textwrap.indent("\n".join(lines), "    ") + \
        "\n"


_DIR = Path(tempfile.mkdtemp(prefix="wengert_np_programs_"))


def load(source: str, seed: int):
    path = _DIR / f"np_program_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.f


def check(seed: int) -> None:
    """Raise where wengert's derivatives of program ``seed`` are wrong or it fails."""
    rng = random.Random(seed)
    source = program(rng)
    f = load(source, seed)
    for shape in rng.sample(SHAPES, 2):
        # Distinct numbers: no ties for ``np.max``.
        x = np.random.default_rng(seed).uniform(-1.2, 1.2, shape) + \
            np.arange(int(np.prod(shape))).reshape(shape) * 1e-3
        try:
            f(x.copy(), 0.7)
        except (IndexError, ValueError):
            continue  # (an index the shape does not have: Python's error, not a derivative)
        try:
            check_grads(f, (x, 0.7), order=2, modes=("rev", "fwd"), rtol=1e-4, atol=1e-5)
        except Exception as e:
            raise AssertionError(f"{type(e).__name__}: {e}\n{source}\nat shape {shape}") \
                from None


@pytest.mark.parametrize("seed", range(8))
def test_random_numpy_programs(seed):
    check(seed)


if __name__ == "__main__":
    count, first = int(sys.argv[1]), int(sys.argv[2])
    counts = {"ok": 0, "failed": 0}
    for s in range(first, first + count):
        try:
            check(s)
            counts["ok"] += 1
        except AssertionError as e:
            counts["failed"] += 1
            print("FAILED", s, str(e)[:2000])
    print(counts)
