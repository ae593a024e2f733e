"""Functions with real source for the code generation tests.

They live in a module of their own so that a fresh interpreter (started with a
different hash seed) can import and compile exactly the same functions.
"""

from __future__ import annotations

import math


def mixed(x, xs, n=3, *, scale=2.0):
    """A bit of everything: loops, branches, jumps, closures, displays, f-strings."""
    total = 0.0
    seen = {"a", "b", "c"}
    table = {"k": x, "v": n}
    for _i, v in enumerate(xs):
        if v < 0:
            continue
        if v > 100:
            break
        total = total + v * scale
    else:
        total += 1.0
    k = 0
    while k < n and total > 0:
        total = total - math.sin(total) * 0.1
        k += 1
    offset = total * 0.5

    def shift(y):
        return y + offset

    pairs = [(name, shift(len(name))) for name in sorted(seen)]
    label = f"{total:.3f}/{k}"
    a, b = table["k"], table["v"]
    for _ in range(n):
        a, b = b, a
    return total, pairs, label, a, b
