"""An ``if`` choosing between functions, its rest of block copied into each branch.

A closure over a value being differentiated may be passed to a helper only where the
transforms know which function it is: the helper is inlined and the closure's calls become
calls of a function defined here, differentiated with its captures as inputs. Defined in
each branch of an ``if`` (one ``def slope`` per mode, a lambda per case) and passed on
after it, the value reaching the helper is a join of two functions, which nothing can
inline. Copying what follows the ``if`` in its block into each branch (tail duplication)
gives each copy one known function: the program computes the same, each branch's rest of
block now reading the function that branch made.
"""

from __future__ import annotations

import copy
import types

from wengert.ir import nodes as n
from wengert.ir.clone import Cloner
from wengert.ir.uses import free_uses

#: The most ops a rest of block may have to be copied (per branch).
MAX_COPIED_OPS = 400
#: The most ``if`` statements split in one function (each copy may double what follows).
MAX_SPLITS = 8


def split_function_joins(fn: n.Function) -> bool:
    """Copy the rest of the block after each ``if`` whose branches each make (or name) a
    function that the rest reads (passes on, or calls) into its branches; return whether
    anything changed. Nested functions' bodies are split too."""
    changed = False
    splits = 0
    work = [fn.body]
    while work:
        region = work.pop()
        k = 0
        while k < len(region.ops):
            op = region.ops[k]
            if isinstance(op, n.If) and splits < MAX_SPLITS and _passes_on_a_join(region, k):
                _split(region, k)
                splits += 1
                changed = True
            k += 1
        for op in region.ops:
            if isinstance(op, n.MakeFunction):
                work.append(op.func.body)
            else:
                work.extend(op.regions())
    return changed


def _makes_function(region: n.Region, v: n.Value) -> bool:
    """Whether the branch ``region`` yields, as ``v``, a function it defines or names."""
    made = {r.id: op for op in region.ops for r in op.results}
    op = made.get(v.id)
    if isinstance(op, n.Call) and isinstance(f := made.get(op.fn.id), n.Const):
        # ``wengert.grad(g)``: a function made by a derivative operator
        return getattr(f.value, "__wengert_operator__", None) == "grad"
    return isinstance(op, n.MakeFunction) or isinstance(op, n.Const) and \
        isinstance(op.value, (types.FunctionType, types.BuiltinFunctionType))


def _passes_on_a_join(region: n.Region, k: int) -> bool:
    """Whether the ``if`` at ``region.ops[k]`` joins functions (every branch yielding one
    at the same place) that the rest of the block reads, and that rest is small."""
    op = region.ops[k]
    assert isinstance(op, n.If)
    rest = region.ops[k + 1:]
    joined = [r for i, r in enumerate(op.results)
              if all(_makes_function(b, b.ops[-1].values[i])  # type: ignore[attr-defined]
                     for b in (op.then, op.orelse))]
    if not joined:
        return False
    size = sum(1 for r in rest for _ in n.walk(n.Region([], [r])))
    if size > MAX_COPIED_OPS:
        return False
    # Used at all (passed on, or called: a call of a join is dispatched when it runs, its
    # function known only then, and a closure reaching it refused).
    ids = {r.id for r in joined}
    return any(v.id in ids for later in rest for user in n.walk(n.Region([], [later]))
               for v in _reads(user))


def _reads(op: n.Op) -> list[n.Value]:
    """The values ``op`` reads, a nested function's captures included."""
    if isinstance(op, n.MakeFunction):
        return [*op.operands(), *free_uses(op.func.body)]
    return op.operands()


def _split(region: n.Region, k: int) -> None:
    """Copy ``region.ops[k + 1:]`` (all but the terminator) into both branches of the ``if``
    at ``k``, the ``if`` then yielding what the terminator carries."""
    op = region.ops[k]
    assert isinstance(op, n.If)
    rest, term = region.ops[k + 1:-1], region.ops[-1]
    carried = term.operands()
    for branch in (op.then, op.orelse):
        y = branch.ops[-1]
        assert isinstance(y, n.Yield)
        cl = Cloner({r.id: v for r, v in zip(op.results, y.values)})
        branch.ops[-1:] = [*cl.ops(rest), n.Yield([cl.value(v) for v in carried], loc=y.loc)]
    op.results = [n.Value(v.hint, v.loc) for v in carried]
    end = copy.copy(term)
    end.set_operands(list(op.results))
    region.ops[k + 1:] = [end]
