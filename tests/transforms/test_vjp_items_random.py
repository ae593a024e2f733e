"""Random programs writing into the rows of tables, the way people fill a table.

Each program ``f(a, xs, w0)`` (``a`` a list of lists of floats) makes a table (rows of
zeros, copies of ``a``'s rows by slice, ``list``, ``.copy()``, rows computed by a
comprehension, rows appended in a loop, or one row shared at every place, which reverse
mode must refuse), fills it (``+=`` into every entry, a recurrence reading the row above, a
sum of the row written into its first entry, an elimination below the diagonal, a product
of ``a`` with itself, writes through ``enumerate``'s rows, a constant entry scaled) and
reduces it (sums of rows, ``max`` of rows, a weighted sum by index, ``sorted`` rows).
Checked by :func:`check_grads` against central differences, both modes: to the first order
always, then to the second (where a located refusal is counted apart: see the closing notes
of the reverse mode of tables). ``python tests/transforms/test_vjp_items_random.py N SEED``
runs N of them and counts the outcomes.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from random_programs import count_outcomes, load_function  # noqa: E402

import wengert  # noqa: E402
from wengert.testing import check_grads  # noqa: E402

ITEMS = ["x * w0", "math.sin(x)", "x * x + 0.5", "math.exp(0.2 * x)", "x - w0"]
#: Tables whose rows are new lists made for them (reverse mode differentiates them).
OWN = [
    ["t = [[0.0] * len(a[0]) for _ in range(len(a))]"],
    ["t = [row[:] for row in a]"],
    ["t = [list(row) for row in a]"],
    ["t = [row.copy() for row in a]"],
    ["t = [[{e} for x in row] for row in a]"],
    ["t = []", "for i in range(len(a)):", "    t.append([0.0] * len(a[0]))"],
    ["t = [[0.0 for _ in row] for row in a]"],
    ["t = [[0] * len(a[0]) for _ in range(len(a))]"],  # (int zeros, read as floats)
    ["t = [[0 for _ in row] for row in a]"],
]
#: Tables holding one row at several places (reverse mode refuses the writes into them).
SHARED = [
    ["r0 = [0.0] * len(a[0])", "t = [r0 for _ in range(len(a))]"],
    ["t = [[0.0] * len(a[0])] * len(a)"],
]
FILL = [
    ["for i in range(len(t)):", "    for j in range(len(t[0])):",
     "        t[i][j] += a[i][j] * w0"],
    ["for i in range(1, len(t)):", "    for j in range(len(t[0])):",
     "        t[i][j] = math.sin(t[i - 1][j]) + a[i][j] * w0"],
    ["for i in range(len(t)):", "    t[i][0] = t[i][0] * w0 + sum(t[i]) + xs[i % len(xs)]"],
    ["for k in range(len(t) - 1):", "    for i in range(k + 1, len(t)):",
     "        g = t[i][k] / (2.0 + t[k][k] * t[k][k])", "        for j in range(len(t[0])):",
     "            t[i][j] -= g * t[k][j]"],
    ["for i in range(len(t)):", "    for j in range(len(t[0])):",
     "        for k in range(len(t[0])):",
     "            t[i][j] += a[i][k] * a[k % len(a)][j] * w0"],
    ["for i, row in enumerate(t):", "    row[0] = row[0] * xs[i % len(xs)] + w0"],
    ["t[0][1] *= w0", "t[-1][0] = t[-1][0] - xs[0] * t[0][1]"],
    ["for i in range(len(t)):", "    t[i][i % len(t[0])] = max(t[i]) * w0 + a[i][0]"],
]
REDUCE = [
    ["return sum(sum(r) for r in t) * w0 + t[0][0]"],
    ["return sum(max(r) * r[0] for r in t) + t[-1][-1] * xs[-1]"],
    ["return sum(t[i][j] * a[i][j] for i in range(len(t)) for j in range(len(t[0])))"],
    ["s = 0.0", "for r in t:", "    s += sorted(r)[0] * r[-1]", "return s + w0 * sum(t[0])"],
]


def program(rng: random.Random) -> tuple[str, bool]:
    """A random program ``f(a, xs, w0)`` of the shapes above, and whether its table shares
    one row at several places."""
    shared = rng.random() < 0.15
    make = rng.choice(SHARED if shared else OWN)
    item = rng.choice(ITEMS)
    body = [line.format(e=item) for line in make]
    for fill in rng.sample(FILL, rng.randrange(1, 3)):
        body += fill
    body += rng.choice(REDUCE)
    return "import math\n\n\ndef f(a, xs, w0):\n" + "".join(f"    {line}\n" for line in body), \
        shared


def point(rng: random.Random) -> tuple[list[list[float]], list[float], float]:
    """A square table's worth of numbers (``a[k % len(a)]`` reads rows), the distinct
    numbers ``max`` and ``sorted`` need to be smooth, and a weight."""
    n = rng.randrange(2, 4)
    while True:
        a = [[round(rng.uniform(-1.0, 1.0), 3) for _ in range(n)] for _ in range(n)]
        flat = [v for r in a for v in r]
        if len({round(v, 2) for v in flat}) == len(flat):
            break
    xs = [round(rng.uniform(-1.0, 1.0), 3) for _ in range(rng.randrange(1, 4))]
    return a, xs, round(rng.uniform(0.3, 1.2), 3)


def check(seed: int) -> str:
    """Check one program: ``"ok"``; ``"refused2"``, right to the first order and refused
    (located) to the second; ``"refused"``, refused (located) in reverse mode for a table
    sharing a row, right in forward mode. Raises on a wrong number or an unlocated error."""
    rng = random.Random(seed)
    source, shared = program(rng)
    f = load_function(source)
    a, xs, w0 = point(rng)
    args = ([list(r) for r in a], list(xs), w0)
    f(*[[list(r) for r in a], list(xs), w0])  # (raises where the program itself does)
    try:
        if shared:
            try:
                check_grads(f, args, modes=("rev",), argnums=(0, 1, 2), rtol=1e-4, atol=1e-5)
            except wengert.NonDifferentiableError as e:
                assert e.loc is not None, f"unlocated refusal: {e}"
            check_grads(f, args, modes=("fwd",), argnums=(0, 1, 2), rtol=1e-4, atol=1e-5)
            return "refused"
        check_grads(f, args, modes=("rev", "fwd"), argnums=(0, 1, 2), rtol=1e-4, atol=1e-5)
        try:
            check_grads(f, args, order=2, modes=("rev", "fwd"), argnums=(0, 1, 2),
                        rtol=1e-4, atol=1e-5)
        except wengert.NonDifferentiableError as e:
            assert e.loc is not None, f"unlocated refusal: {e}"
            return "refused2"
    except AssertionError as e:
        raise AssertionError(f"{e}\n{source}\nat {a}, {xs}, {w0}") from None
    return "ok"


@pytest.mark.parametrize("seed", range(12))
def test_random_table_programs(seed):
    try:
        check(seed)
    except (ValueError, ZeroDivisionError, OverflowError):
        pass  # the program itself raises there, as its primal does


if __name__ == "__main__":
    count_outcomes(check, int(sys.argv[1]), int(sys.argv[2]))
