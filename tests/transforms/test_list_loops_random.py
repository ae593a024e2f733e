"""Random programs over lists of floats, in the shapes reverse mode rewrites most.

Each program makes a list from an argument list (a comprehension, a loop appending at
every step, a filtered comprehension, a loop that stops early, a written item, an
in-place sweep), takes an extreme (``max``/``min`` of the list or a slice) and reduces the
list (sums, ``zip`` loops with ``+=``, ``enumerate``, log-sum-exp, a sum read twice): the
code that reads ``max(xs)`` as one entry, reads appended items back from the list,
spreads a sum's adjoint, pops adjoints through a bound ``pop``, iterates forward loops
over the lists again and writes comprehensions. Checked by :func:`check_grads` against
central differences in both modes and to second order (the second-order checks
differentiate the generated pullbacks again). ``python tests/transforms/
test_list_loops_random.py N SEED`` runs N of them and counts the outcomes.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from random_programs import load_function  # noqa: E402

import wengert  # noqa: E402
from wengert.testing import check_grads  # noqa: E402

ITEMS = ["x * x", "math.sin(x)", "math.exp(0.3 * x)", "x - m", "math.tanh(x) * w0",
         "x / (1.0 + x * x)", "math.cos(x) + m", "0.5 * x"]
EXTREMES = ["max(xs)", "min(xs)", "xs[0]", "sum(xs) / len(xs)", "max(xs[1:])"]
MAKE = [
    ["ws = [{e} for x in xs]"],
    ["ws = []", "for i in range(len(xs)):", "    x = xs[i]", "    ws.append({e})"],
    ["ws = [{e} for x in xs if x > -0.5]", "ws.append(m)"],
    ["ws = []", "for x in xs:", "    ws.append({e})", "    if x > 1.5:", "        break"],
    ["ws = [{e} for x in xs]", "ws[0] = ws[0] * w0"],
    ["ws = list(xs)", "for i in range(1, len(ws)):", "    ws[i] = ws[i] + 0.5 * ws[i - 1]"],
]
REDUCE = [
    ["total = sum(ws)",
     "return sum(w * x for w, x in zip(ws, xs)) / (1.0 + total * total)"],
    ["s = 0.0", "for w, x in zip(ws, xs):", "    s += w * x * w0", "return s + max(ws) * m"],
    ["n = len(ws)", "return sum(ws[i] * ws[i - 1] for i in range(1, n)) + min(ws)"],
    ["t = sum(ws)", "return t * sum(ws) + sum([w * t for w in ws]) * w0"],
    ["top = max(ws)", "return top + math.log(sum(math.exp(w - top) for w in ws))"],
    ["acc = 0.0", "for i, w in enumerate(ws):", "    acc = acc + w * (i + 1) * m",
     "return acc"],
]


def program(rng: random.Random) -> str:
    """A random program ``f(xs, w0)`` of the shapes above."""
    body = [f"m = {rng.choice(EXTREMES)}"]
    item = rng.choice(ITEMS)
    body += [line.format(e=item) for line in rng.choice(MAKE)]
    body += rng.choice(REDUCE)
    return "import math\n\n\ndef f(xs, w0):\n" + "".join(f"    {line}\n" for line in body)


def point(rng: random.Random) -> tuple[list[float], float]:
    """Items whose images are distinct (no ties for ``max``/``min`` of ``x * x`` or
    ``math.cos(x)``, equal for ``±x``, nor of ``x / (1.0 + x * x)``, equal for ``x`` and
    ``1 / x``: a tie is a kink, where differences average the two sides), away from the
    filters' edges."""
    while True:
        xs = [round(rng.uniform(-1.0, 1.2), 3) for _ in range(rng.randrange(2, 7))]
        if len({abs(x) for x in xs}) == len(xs) and \
                not any(abs(x * y - 1.0) < 0.01 for x in xs for y in xs if x != y) and \
                all(abs(x + 0.5) > 0.01 and abs(x - 1.5) > 0.01 for x in xs):
            return xs, round(rng.uniform(0.3, 1.5), 3)


def check(seed: int) -> None:
    rng = random.Random(seed)
    source = program(rng)
    f = load_function(source)
    xs, w0 = point(rng)
    f(list(xs), w0)  # (a program whose list comes out empty raises here, as in Python)
    try:
        check_grads(f, (list(xs), w0), order=2, modes=("rev", "fwd"), argnums=(0, 1),
                    rtol=1e-4, atol=1e-5)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{source}\nat {xs}, {w0}") from None


@pytest.mark.parametrize("seed", range(30))
def test_random_list_programs(seed):
    try:
        check(seed)
    except ValueError:
        pass  # an empty list given to max/min: the program raises, so does its primal


if __name__ == "__main__":
    count, first = int(sys.argv[1]), int(sys.argv[2])
    tally = {"ok": 0, "raises": 0, "refused": 0, "wrong": 0}
    for s in range(first, first + count):
        try:
            check(s)
            tally["ok"] += 1
        except ValueError:
            tally["raises"] += 1
        except wengert.WengertError as e:
            tally["refused"] += 1
            print("refused", s, str(e)[:200])
        except AssertionError as e:
            tally["wrong"] += 1
            print("WRONG", s, str(e)[:2000])
    print(tally)
