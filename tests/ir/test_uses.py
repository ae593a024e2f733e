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


def test_the_fingerprint_changes_with_every_kind_of_rewrite_and_only_then():
    from wengert.ir.clone import clone_function
    from wengert.ir.uses import fingerprint

    fn = lower(writes_in_a_loop)
    same = fingerprint(fn)
    assert fingerprint(fn) == same
    assert fingerprint(clone_function(fn)[0]) != same  # (other ops: other identities)
    ops = list(n.walk(fn.body))
    call = next(o for o in ops if isinstance(o, n.Call) and len(o.args) == 2)
    loop = next(o for o in ops if isinstance(o, n.For))
    const = next(o for o in ops if isinstance(o, n.Const) and o.value == 3)

    def changed(undo, do) -> bool:
        do()
        try:
            return fingerprint(fn) != same
        finally:
            undo()
            assert fingerprint(fn) == same

    a, b = call.args
    assert changed(lambda: setattr(call, "args", [a, b]), lambda: setattr(call, "args", [b, a]))
    assert changed(lambda: call.args.pop(), lambda: call.args.append(a))  # (in place)
    old = const.value
    assert changed(lambda: setattr(const, "value", old), lambda: setattr(const, "value", 4))
    body = loop.body.ops
    assert changed(lambda: setattr(loop.body, "ops", body),
                   lambda: setattr(loop.body, "ops", body[1:]))
    moved = body[0]
    assert changed(lambda: (fn.body.ops.remove(moved), body.insert(0, moved)),
                   lambda: (body.remove(moved), fn.body.ops.insert(0, moved)))
    res = call.results
    assert changed(lambda: setattr(call, "results", res),
                   lambda: setattr(call, "results", [n.Value("r")]))
    args = loop.body.args
    assert changed(lambda: setattr(loop.body, "args", args),
                   lambda: setattr(loop.body, "args", [*args[:1], n.Value("c"), *args[2:]]))
