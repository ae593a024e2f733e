"""``ir/uses.py``: the places of a function's ops (program order, the loops around each)."""

from __future__ import annotations

from wengert.frontend import lower
from wengert.ir import nodes as n
from wengert.ir.uses import Places


def writes_in_a_loop(xs, c):
    y = xs[0]
    for k in range(3):
        xs[k] = y * c
        c = c + xs[1]
    return c + y


def test_between_follows_program_order_and_the_next_step_of_a_loop():
    fn = lower(writes_in_a_loop)
    places = Places(fn)
    ops = list(n.walk(fn.body))
    read = next(o for o in ops if isinstance(o, n.GetItem))  # ``y = xs[0]``
    write = next(o for o in ops if isinstance(o, n.SetItem))  # ``xs[k] = y * c``
    y = read.result
    uses = places.uses[y.id]
    in_loop = next(u for u in uses if places.loops[id(u)])  # ``y * c``, in the loop
    after = next(u for u in uses if not places.loops[id(u)])  # ``c + y``, after it
    # The write runs after the read and before the use after the loop; before the use in
    # the loop in program order, but also after it (the loop's next step).
    assert places.between(write, read, after)
    assert places.between(write, read, in_loop)
    assert not places.between(read, read, after)
    assert places.consts and places.defs[y.id] is read
