"""Adjoints of containers accumulated in place.

A pullback adds each read ``x[i]``'s adjoint into the adjoint of ``x`` with
``runtime.getitem_adjoint``, which returns a new container: the functional form keeps
every earlier adjoint value valid, which the transforms rely on, but it costs a copy
of the whole adjoint per read, so a loop over ``x`` is quadratic.

Just before code generation, this pass gives each such call whose previous adjoint is
dead afterwards the in-place variant, ``runtime.getitem_adjoint_owned``. Liveness proves
that the generated code never reads the old value again; what it cannot prove is that
no other value holds the same object (a rule's pullback may hand one adjoint to two
operands, a caller may keep what it passed). The variant checks that at run time with
the reference count, and copies as before when anything else holds the object. For that
check to mean "only the caller's dead local holds it", the previous adjoint must be a
named local of the generated code: the result of an earlier in-place update, of an
update of a zero adjoint, or a value a loop or branch carries. A function parameter, a
value read out of a tuple, or a captured value may be shared with code the liveness
here does not see, so those keep the copying form.

The IR this pass rewrites is only compiled, never differentiated again, so the variant
needs no rules of its own.
"""

from __future__ import annotations

from wengert import runtime
from wengert.analysis.liveness import Liveness, liveness
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses

#: Functional adjoint updates and their in-place variants.
IN_PLACE = {runtime.getitem_adjoint: runtime.getitem_adjoint_owned,
            runtime.setitem_adjoint: runtime.setitem_adjoint_owned,
            runtime.pop_adjoint: runtime.pop_adjoint_owned,
            runtime.getattr_adjoint: runtime.getattr_adjoint_owned,
            runtime.setattr_adjoint: runtime.setattr_adjoint_owned}
#: Those returning a pair (the updated adjoint, a part), unpacked at once.
PAIRS = {runtime.setitem_adjoint, runtime.setitem_adjoint_owned, runtime.pop_adjoint,
         runtime.pop_adjoint_owned, runtime.setattr_adjoint, runtime.setattr_adjoint_owned}


def update_in_place(fn: n.Function) -> None:
    """Rewrite ``fn`` (and the functions it defines) to update dead adjoints in place."""
    _function(fn)


def _function(fn: n.Function) -> None:
    live = liveness(fn)
    # A nested function reads what it captures whenever it runs, after any point that
    # liveness can name.
    captured = {v.id for op in n.walk(fn.body) if isinstance(op, n.MakeFunction)
                for v in free_uses(op.func.body)}
    consts: dict[int, object] = {}
    #: Values held only by a named local of this function when they are defined.
    owned: set[int] = set()
    #: Pairs whose first part is such a value once unpacked.
    pairs: set[int] = set()

    def region(r: n.Region) -> None:
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            if isinstance(op, n.Const):
                consts[op.result.id] = op.value
            elif isinstance(op, n.MakeFunction):
                _function(op.func)
            elif isinstance(op, n.Call) and _rewrite(op, r, k, live):
                k += 1  # past the constant inserted before the call
            elif isinstance(op, n.Unpack) and op.value.id in pairs:
                owned.add(op.results[0].id)
            for a in n.region_args(op):
                owned.add(a.id)
            if isinstance(op, (n.If, n.For, n.While)):
                owned.update(v.id for v in op.results)
            if not isinstance(op, n.MakeFunction):
                for sub in op.regions():
                    region(sub)
            k += 1

    def _rewrite(op: n.Call, r: n.Region, k: int, live: Liveness) -> bool:
        fn_value = consts.get(op.fn.id)
        if not op.args or op.kwargs or op.starred or not _hashable(fn_value):
            return False
        if fn_value not in IN_PLACE and fn_value not in IN_PLACE.values():
            return False
        prev = op.args[0]
        made = pairs if fn_value in PAIRS else owned
        if consts.get(prev.id, 0) is None:  # a zero adjoint: the result is a fresh object
            made.add(op.result.id)
            return False
        if prev.id not in owned or prev.id in live.after(op) or prev.id in captured or \
                any(a.id == prev.id for a in op.args[1:]):
            return False
        made.add(op.result.id)
        if fn_value in IN_PLACE.values():
            return False
        const = n.Const(IN_PLACE[fn_value], [n.Value(hint=None)], loc=op.loc)  # type: ignore
        r.ops.insert(k, const)
        op.fn = const.result
        consts[const.result.id] = const.value
        return True

    region(fn.body)


def _hashable(v: object) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
