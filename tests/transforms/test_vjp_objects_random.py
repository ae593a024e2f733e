"""Random simulations of objects kept in a list, the way people write particle systems.

Each program ``f(xs, vs, w)`` makes objects of a ``@dataclass`` or of a plain class with an
``__init__`` (by a comprehension, by ``append`` in a loop, by a display, or one replaced at
an index), keeps them in a list, steps them in place (by item, by index, through
``enumerate`` or ``zip``, by a method, over pairs compared with ``is``, under a branch, the
best one carried by a loop and written) and reduces them. The list is the function's own
(kept as one list per field, ``transforms/object_lists.py``, or its writes followed through
its adjoint, ``transforms/vjp_items.py``) or shares its objects (a second list of them, one
object at two places, the list handed to a helper that writes into it), where reverse mode
must refuse at the user's line or be right. Checked by :func:`check_grads` against central
differences, both modes, to the first order and then the second (a located refusal counted
apart). ``python tests/transforms/test_vjp_objects_random.py N SEED`` runs N of them and
counts the outcomes.
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

CLASSES = """import dataclasses
import math


@dataclasses.dataclass
class P:
    x: float
    v: float
    m: float = 1.0

    def kick(self, a, dt):
        self.v = self.v + a * dt
        self.x += self.v * dt


class Q:
    def __init__(self, x, v):
        self.x = x
        self.v = v
        self.m = 1.0

    def kick(self, a, dt):
        self.v = self.v + a * dt
        self.x += self.v * dt


def push_all(ps, a):
    for p in ps:
        p.v += a
"""

#: Lists of objects made for the list alone (``{C}``: the class).
OWN = [
    ["ps = [{C}(x, v) for x, v in zip(xs, vs)]"],
    ["ps = []", "for x, v in zip(xs, vs):", "    ps.append({C}(x, 0.5 * v))"],
    ["ps = [{C}(xs[0], vs[0]), {C}(xs[1] * w, 1.0), {C}(0.3, vs[-1])]"],
    ["ps = [{C}(x, w) for x in xs]", "ps[0] = {C}(xs[1] * w, vs[0])"],
]
#: Lists whose objects are held elsewhere too (reverse mode refuses, or follows them).
SHARED = [
    ["ps = [{C}(x, v) for x, v in zip(xs, vs)]", "ps[-1] = ps[0]"],
    ["ps = [{C}(x, v) for x, v in zip(xs, vs)]", "ps.append(ps[0])"],
    ["owned = [{C}(x, v) for x, v in zip(xs, vs)]", "ps = list(owned)"],
    ["ps = [{C}(x, v) for x, v in zip(xs, vs)]", "push_all(ps, w)"],
]
STEP = [
    ["for _ in range({n}):", "    for p in ps:", "        p.v -= w * p.x * 0.1",
     "        p.x += p.v * 0.1"],
    ["for _ in range({n}):", "    for i in range(len(ps)):",
     "        ps[i].v = ps[i].v - 0.1 * math.sin(ps[i].x)", "        ps[i].x += 0.1 * ps[i].v"],
    ["for _ in range({n}):", "    for i, p in enumerate(ps):",
     "        p.v += 0.05 * (i + 1) * w - 0.1 * p.x", "        p.x = p.x + 0.1 * p.v"],
    ["for _ in range({n}):", "    for p, x0 in zip(ps, xs):",
     "        p.kick(-(p.x - x0) * w, 0.1)"],
    ["for _ in range({n}):", "    for a in ps:", "        f = 0.0", "        for b in ps:",
     "            if a is b:", "                continue",
     "            f += (b.x - a.x) / (1.0 + (b.x - a.x) ** 2)",
     "        a.v += 0.1 * f * w", "    for p in ps:", "        p.x += 0.1 * p.v"],
    ["for _ in range({n}):", "    for p in ps:", "        if p.x > 5.0:",
     "            p.v = -abs(p.v)", "        p.x += 0.1 * p.v"],
    ["for p in ps:", "    p.m = 1.0 + p.x * p.x", "for p in ps:", "    p.v = p.v / p.m"],
    ["best = ps[0]", "for p in ps:", "    if p.x > best.x:", "        best = p",
     "best.v = best.v * w + best.x"],
]
REDUCE = [
    ["return sum(p.x * p.x for p in ps) + w"],
    ["return sum(0.5 * p.m * p.v ** 2 for p in ps) + ps[0].x"],
    ["return max(p.x for p in ps) + sum([p.v for p in ps])"],
    ["s = 0.0", "for i, p in enumerate(ps):", "    s += (i + 1) * p.x * p.v", "return s"],
]


def program(rng: random.Random) -> tuple[str, bool]:
    """A random program ``f(xs, vs, w)`` of the shapes above, and whether reverse mode may
    refuse it (its list's objects held elsewhere too, or chosen by branches)."""
    shared = rng.random() < 0.25
    cls = rng.choice(["P", "Q"])
    make = rng.choice(SHARED if shared else OWN)
    body = [line.format(C=cls) for line in make]
    for step in rng.sample(STEP, rng.randrange(1, 3)):
        body += [line.format(n=rng.randrange(1, 6)) for line in step]
        # (a display's loops are unrolled and its list specialised away: the best object
        # is then one of several objects chosen by branches, which reverse mode refuses)
        shared |= make is OWN[2] and step is STEP[-1]
    body += rng.choice(REDUCE)
    return CLASSES + "\n\ndef f(xs, vs, w):\n" + "".join(f"    {line}\n" for line in body), \
        shared


def point(rng: random.Random) -> tuple[list[float], list[float], float]:
    """Three positions and velocities (distinct, for ``max``), and a weight."""
    while True:
        xs = [round(rng.uniform(-1.0, 1.0), 3) for _ in range(3)]
        if len({round(x, 2) for x in xs}) == 3:
            break
    vs = [round(rng.uniform(-1.0, 1.0), 3) for _ in range(3)]
    return xs, vs, round(rng.uniform(0.3, 1.2), 3)


def check(seed: int) -> str:
    """Check one program: ``"ok"``; ``"refused2"``, right to the first order and refused
    (located) to the second; ``"refused"``, refused (located) in reverse mode, right in
    forward mode. Raises on a wrong number or an unlocated error."""
    rng = random.Random(seed)
    source, shared = program(rng)
    f = load_function(source)
    xs, vs, w = point(rng)
    args = (xs, vs, w)
    f(list(xs), list(vs), w)  # (raises where the program itself does)
    kw = dict(argnums=(0, 1, 2), rtol=1e-4, atol=1e-5)
    try:
        check_grads(f, args, modes=("fwd",), **kw)
        try:
            check_grads(f, args, modes=("rev",), **kw)
        except wengert.NonDifferentiableError as e:
            assert e.loc is not None and e.loc.filename.endswith(".py"), \
                f"unlocated refusal: {e}"
            assert shared, f"refused a list of the function's own: {e}"
            return "refused"
        try:
            check_grads(f, args, order=2, modes=("rev", "fwd"), **kw)
        except wengert.NonDifferentiableError as e:
            assert e.loc is not None, f"unlocated refusal: {e}"
            return "refused2"
    except AssertionError as e:
        raise AssertionError(f"{e}\n{source}\nat {xs}, {vs}, {w}") from None
    return "ok"


@pytest.mark.parametrize("seed", range(10))
def test_random_object_list_programs(seed):
    try:
        check(seed)
    except (ValueError, ZeroDivisionError, OverflowError):
        pass  # the program itself raises there, as its primal does


if __name__ == "__main__":
    count_outcomes(check, int(sys.argv[1]), int(sys.argv[2]))
