"""Cleanup passes: forwarding of trivial region results and dead code elimination.

The frontend is deliberately naive (every name a loop body binds is carried,
every flag exists); these passes remove what turns out not to be needed so
generated code reads like the user's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy

from wengert import runtime
from wengert.ir import nodes as n
from wengert.ir.uses import expand_ops, free_uses, function_ops, replace_uses
from wengert.objects import hashable
from wengert.rules import registry, shapes


def cleanup(fn: n.Function, drop_pure_calls: bool = False) -> None:
    """Simplify ``fn`` in place until nothing changes.

    Calls are kept even when unused unless ``drop_pure_calls``: an unused ``1 / x``
    the user wrote still raises ``ZeroDivisionError``, and the regenerated primal must
    too. Transforms pass ``True`` for code they generate themselves.
    """
    while True:
        changed = fold_constants(fn) | zeros_through(fn)
        changed |= split_tuple_results(fn)
        changed |= forward_trivial(fn, drop_pure_calls)
        if drop_pure_calls:
            changed |= simplify_generated(fn)
            changed |= fuse_products(fn)
            changed |= common_arithmetic(fn)
        changed |= dce(fn, drop_pure_calls)
        if not changed:
            return


# ----------------------------------------------------------------------------- utilities


# ----------------------------------------------------------------------------- forwarding


_ARITH = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
          operator.pos}
_COMPARE = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
            operator.not_}
#: Ints this small convert to float exactly and multiply in no time.
_SMALL_INT = 2 ** 53


def _foldable(fn: object, args: list[object]) -> bool:
    """Whether ``fn(*args)`` on these literal values is cheap, exact, and what Python
    computes at run time: arithmetic on floats and small ints, comparisons of numbers."""
    if not all(type(a) in (int, float, bool) for a in args):
        return False
    if not all(type(a) is float or abs(a) <= _SMALL_INT for a in args):  # type: ignore
        return False
    return fn in _COMPARE or (fn in _ARITH and bool(args))


def fold_constants(fn: n.Function) -> bool:
    """Compute arithmetic and comparisons on literal numbers once (``0.5 * dt`` with
    ``dt = 0.01``, ``3 == 0`` in an inlined rule), so a loop does not redo it, and record
    it, every iteration; then splice the taken branch of an ``if`` whose condition became
    known (:func:`fold_branches`)."""
    changed = False

    def region(r: n.Region, consts: dict[int, object]) -> None:
        nonlocal changed
        for k, op in enumerate(r.ops):
            if isinstance(op, n.Const):
                consts[op.result.id] = op.value
            elif isinstance(op, n.Call) and not op.kwargs and not op.starred and \
                    op.fn.id in consts and hashable(consts[op.fn.id]) and \
                    all(a.id in consts for a in op.args) and \
                    (_foldable(consts[op.fn.id], [consts[a.id] for a in op.args]) or
                     consts[op.fn.id] in (operator.is_, operator.is_not) and
                     _identity_known([consts[a.id] for a in op.args])):
                try:
                    value = consts[op.fn.id](*(consts[a.id] for a in op.args))
                except ArithmeticError:
                    continue
                r.ops[k] = n.Const(value, op.results, loc=op.loc)
                consts[op.result.id] = value
                changed = True
            if isinstance(op, n.MakeFunction):
                region(op.func.body, dict(consts))
            else:
                for sub in op.regions():
                    region(sub, consts)

    region(fn.body, {})
    return fold_branches(fn) or changed


#: Constants whose identity Python does not promise (``0.5 is 0.5`` may be either).
_VALUES = (int, float, complex, str, bytes, tuple)


def _identity_known(values: list[object]) -> bool:
    """Whether ``a is b`` of these constants is known before the code runs: both ``None``,
    or one of them an object of its own (a sentinel such as NumPy's ``_NoValue``, a class,
    a function) that a number or a string cannot be."""
    return all(v is None for v in values) or \
        any(v is not None and not isinstance(v, _VALUES) and type(v) is not bool
            for v in values)


def fold_branches(fn: n.Function) -> bool:
    """Splice the taken branch in place of an ``If`` whose condition is known: a literal,
    or the result of an ``and``/``or`` whose every outcome has a known truth
    (``t and 3 < 1`` is false whatever ``t`` is)."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    mapping: dict[int, n.Value] = {}
    truths: dict[int, bool] = {}

    def resolve(v: n.Value) -> n.Value:
        while v.id in mapping:
            v = mapping[v.id]
        return v

    def truth(v: n.Value) -> bool | None:
        v = resolve(v)
        if v.id in consts and type(consts[v.id]) in (int, float, bool, str, type(None)):
            return bool(consts[v.id])
        return truths.get(v.id)

    def outcome(v: n.Value, cond: n.Value, taken: bool) -> bool | None:
        # A branch yielding the condition itself yields a value of known truth.
        return taken if resolve(v).id == resolve(cond).id else truth(v)

    def region(r: n.Region) -> bool:
        changed = False
        out: list[n.Op] = []
        for op in r.ops:
            if isinstance(op, n.If):
                t = truth(op.cond)
                if t is not None:
                    taken = op.then if t else op.orelse
                    region(taken)
                    mapping.update(zip((x.id for x in op.results),
                                       (resolve(v) for v in taken.terminator.values)))
                    out.extend(taken.ops[:-1])
                    changed = True
                    continue
                changed |= region(op.then) | region(op.orelse)
                for res, a, b in zip(op.results, op.then.terminator.values,
                                     op.orelse.terminator.values):
                    ta, tb = outcome(a, op.cond, True), outcome(b, op.cond, False)
                    if ta is not None and ta == tb:
                        truths[res.id] = ta
            elif isinstance(op, n.MakeFunction):
                changed |= region(op.func.body)
            else:
                for sub in op.regions():
                    changed |= region(sub)
            out.append(op)
        r.ops = out
        return changed

    changed = region(fn.body)
    if mapping:
        replace_uses(fn, mapping)
    return changed


def split_tuple_results(fn: n.Function) -> bool:
    """Yield the items of a tuple an ``if`` makes in each branch, not the tuple, when the
    tuple is only indexed by constants afterwards (a rule whose every branch returns
    ``(x_bar,)``): no tuple is built, and code that differentiates this again sees the
    items flow, not a container."""
    defs: dict[int, n.Op] = {}
    uses: dict[int, list[n.Op]] = {}
    consts: dict[int, object] = {}
    for op in n.walk(fn.body):
        for r in op.results:
            defs[r.id] = op
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
    mapping: dict[int, n.Value] = {}
    for op in n.walk(fn.body):
        if not isinstance(op, n.If) or not all(
                br.ops and isinstance(br.ops[-1], n.Yield) for br in (op.then, op.orelse)):
            continue
        for k, r in enumerate(list(op.results)):
            builds = [defs.get(br.ops[-1].values[k].id) for br in (op.then, op.orelse)]
            if not all(isinstance(b, n.Build) and b.kind == "tuple" and not b.starred
                       for b in builds):
                continue
            m = len(builds[0].items)  # type: ignore[union-attr]
            users = uses.get(r.id, [])
            if len(builds[1].items) != m or not users or not all(  # type: ignore[union-attr]
                    isinstance(u, n.GetItem) and u.obj.id == r.id and
                    type(consts.get(u.index.id)) is int and
                    -m <= consts[u.index.id] < m for u in users):  # type: ignore[operator]
                continue
            new = [n.Value() for _ in range(m)]
            op.results.extend(new)
            for br, b in zip((op.then, op.orelse), builds):
                br.ops[-1].values.extend(b.items)  # type: ignore[union-attr]
            for u in users:
                mapping[u.result.id] = new[consts[u.index.id] % m]  # type: ignore[operator]
            uses[r.id] = []
    if mapping:
        # The reads cannot fail (a constant index into a tuple of known length): drop them.
        for op in [fn.body, *(r for o in n.walk(fn.body) for r in o.regions())]:
            op.ops = [o for o in op.ops if not (isinstance(o, n.GetItem) and
                                                  o.result.id in mapping)]
        replace_uses(fn, mapping)
    return bool(mapping)



#: Arithmetic that returns a number (never ``None``, the symbolic zero) or raises.
_NUMERIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
            operator.pos, operator.pow}


#: Linear helpers of generated code that give ``None`` (a zero) for ``None``.
_ZERO_KEEPING = {shapes.sum_to, shapes.broadcast_to}


def zeros_through(fn: n.Function) -> bool:
    """``_sum_to(None, ...)`` and ``_broadcast_to(None, ...)`` are ``None``: a symbolic zero
    summed or spread is one (wengert's own helpers: safe in any code)."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    changed = False

    def region(r: n.Region) -> None:
        nonlocal changed
        for k, op in enumerate(r.ops):
            for sub in op.regions():
                region(sub)
            if isinstance(op, n.MakeFunction):
                region(op.func.body)
            if isinstance(op, n.Call) and op.args and not op.starred and \
                    hashable(f := consts.get(op.fn.id)) and f in _ZERO_KEEPING and \
                    consts.get(op.args[0].id, 0) is None:
                r.ops[k] = n.Const(None, op.results, loc=op.loc)
                changed = True

    region(fn.body)
    return changed


def simplify_generated(fn: n.Function) -> bool:
    """Identities that hold in code the transforms generate (whose values are numbers,
    arrays or adjoints): ``nonzero(a * b, like)`` is ``a * b``, since arithmetic never
    gives the symbolic zero ``None``; ``t ** 1`` is ``t`` (a rule's ``n * x ** (n - 1)``
    at ``n = 2``)."""
    consts: dict[int, object] = {}
    defs: dict[int, n.Op] = {}
    for op in n.walk(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for r in op.results:
            defs[r.id] = op

    def callee(op: n.Op | None) -> object:
        if not isinstance(op, n.Call) or op.kwargs or op.starred:
            return None
        return consts.get(op.fn.id)

    mapping: dict[int, n.Value] = {}
    for op in n.walk(fn.body):
        f = callee(op)
        if not hashable(f):
            continue
        if f is runtime.nonzero and len(op.args) == 2 and \
                hashable(g := callee(defs.get(op.args[0].id))) and g in _NUMERIC:
            mapping[op.result.id] = op.args[0]
        elif f is runtime.nonzero and len(op.args) == 2 and _summed_number(op.args[0], defs,
                                                                            callee):
            mapping[op.result.id] = op.args[0]
        elif f is operator.pow and len(op.args) == 2 and \
                type(consts.get(op.args[1].id)) is int and consts[op.args[1].id] == 1:
            mapping[op.result.id] = op.args[0]
    return replace_uses(fn, mapping)


def common_arithmetic(fn: n.Function) -> bool:
    """In generated code, the second of two equal arithmetic operations on the same values
    in one region, with only arithmetic and constants between them (nothing that could
    change an array operand in place), is the first's result: the two adjoint terms of
    ``y * y`` are one product, made once. Only where both results are read by nothing but
    arithmetic and adjoint sums (fresh values, or sums whose in-place updates count
    references): one the code later writes into (``y = x * c; z = x * c; y[0] = 0.0``, or
    through a view or a callee) must stay an object of its own."""
    mapping: dict[int, n.Value] = {}
    consts_all = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    readers: dict[int, list[n.Op]] = {}
    for op in n.walk(fn.body):
        for v in op.operands():
            readers.setdefault(v.id, []).append(op)

    def only_summed(v: n.Value) -> bool:
        for use in readers.get(v.id, ()):
            f = consts_all.get(use.fn.id) if isinstance(use, n.Call) and \
                use.fn is not v else None
            if not hashable(f) or f not in _SUMMING:
                return False
        return True

    def region(r: n.Region) -> None:
        consts: dict[int, object] = {}
        seen: dict[tuple, n.Value] = {}
        for op in r.ops:
            for sub in op.regions():
                region(sub)
            if isinstance(op, n.Const):
                consts[op.result.id] = op.value
                continue
            f = consts.get(op.fn.id) if isinstance(op, n.Call) else None
            if not hashable(f) or f not in _NUMERIC or op.kwargs or op.starred:
                seen.clear()  # (anything else might write into an operand)
                continue
            key = (f, *(mapping.get(a.id, a).id for a in op.args))
            if key in seen and only_summed(seen[key]) and only_summed(op.result):
                mapping[op.result.id] = seen[key]
            elif key not in seen:
                seen[key] = op.result

    region(fn.body)
    for op in n.walk(fn.body):
        if isinstance(op, n.MakeFunction):
            region(op.func.body)
    return replace_uses(fn, mapping)


#: What may read a value :func:`common_arithmetic` makes once: arithmetic (a new value)
#: and the sums of adjoints.
_SUMMING = _NUMERIC | {runtime.add_adjoint}


def _summed_number(v: n.Value, defs: dict[int, n.Op], callee: Callable) -> bool:
    """Whether ``v`` is a sum (``_sum_to``, ``_mul_sum_to``) of arithmetic: a number, never
    the symbolic zero ``None`` (which only ``None`` summed gives)."""
    op = defs.get(v.id)
    f = callee(op)
    if not hashable(f) or f not in (shapes.sum_to, shapes.mul_sum_to):
        return False
    return all(hashable(g := callee(defs.get(a.id))) and g in _NUMERIC
               for a in op.args[:1 if f is shapes.sum_to else 2])


def index_values(fn: n.Function) -> tuple[dict[int, object], dict[int, n.Op], dict[int, int]]:
    """The constants of ``fn`` (nested functions included), the op defining each value, and
    how many operands name each value: what the peephole passes on generated code match."""
    consts: dict[int, object] = {}
    defs: dict[int, n.Op] = {}
    uses: dict[int, int] = {}
    for op in n.walk(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for r in op.results:
            defs[r.id] = op
        for v in op.operands():
            uses[v.id] = uses.get(v.id, 0) + 1
    return consts, defs, uses


def fuse_products(fn: n.Function) -> bool:
    """Sums of products in generated code, made without the product where they reduce.

    A pullback multiplies a cotangent by a partial and then unbroadcasts it
    (``_sum_to(g * (2 * d), mu_shape, d_shape)`` for ``sum((x - mu) ** 2)``): the product is
    made in full (through a broadcast view of ``g``, which NumPy multiplies slowly) and read
    again by the sum. Rewritten here, where the inner value has no other use and is made in
    the same region (so no work moves into a loop): ``_sum_to(-a, ...)`` is
    ``-_sum_to(a, ...)``; ``_sum_to(_sum_to(t, s, f), s2, f2)`` is ``_sum_to(t, s2, f)``
    (``f2`` is ``s`` wherever the code runs; likewise for ``_mul_sum_to`` inside);
    ``_sum_to(a * b, ...)`` is ``_mul_sum_to(a, b, ...)`` (one ``einsum`` that sums as it
    multiplies); a constant factor or a negation of either operand of ``_mul_sum_to`` is
    applied to the (smaller) sum instead. Each holds for numbers and arrays; a sum of
    negated or scaled terms differs from the negated or scaled sum by rounding at most."""
    consts, defs, uses = index_values(fn)
    home: dict[int, int] = {}  # id(op) -> id of the region holding it

    def index(region: n.Region) -> None:
        for op in region.ops:
            home[id(op)] = id(region)
            for sub in op.regions():
                index(sub)

    index(fn.body)

    def callee(op: n.Op | None) -> object:
        if not isinstance(op, n.Call) or op.kwargs or op.starred:
            return None
        f = consts.get(op.fn.id)
        return f if hashable(f) else None

    touched: set[int] = set()

    def inner(op: n.Call, k: int) -> tuple[n.Call, object] | None:
        """The call making ``op``'s argument ``k`` where it may be folded into ``op``."""
        v = op.args[k]
        d = defs.get(v.id)
        if uses.get(v.id) != 1 or v.id in touched or home.get(id(d)) != home[id(op)]:
            return None
        f = callee(d)
        if f is None:
            return None
        assert isinstance(d, n.Call)
        return d, f

    def number(v: n.Value) -> bool:
        return type(consts.get(v.id)) in (int, float)

    def call(f: n.Value, args: list[n.Value], result: n.Value, loc: object) -> n.Call:
        return n.Call(f, args, [], [result], loc=loc)  # type: ignore[arg-type]

    def rewrite(op: n.Op) -> list[n.Op] | None:
        f = callee(op)
        if f is not shapes.sum_to and f is not shapes.mul_sum_to:
            return None
        assert isinstance(op, n.Call)
        if len(op.args) != (3 if f is shapes.sum_to else 4):
            return None
        r, loc = op.result, op.loc
        for k in range(1 if f is shapes.sum_to else 2):
            found = inner(op, k)
            if found is None:
                continue
            d, g = found
            args = list(op.args)
            if g is operator.neg and len(d.args) == 1:
                # f(-a) is -f(a): the negation applies to the sum.
                mid = n.Value()
                args[k] = d.args[0]
                touched.update((d.result.id, r.id))
                return [call(op.fn, args, mid, loc), call(d.fn, [mid], r, loc)]
            if g is operator.mul and len(d.args) == 2:
                for j in (0, 1):
                    if number(d.args[j]):
                        mid = n.Value()
                        args[k] = d.args[1 - j]
                        touched.update((d.result.id, r.id))
                        return [call(op.fn, args, mid, loc),
                                call(d.fn, [d.args[j], mid], r, loc)]
            if f is shapes.sum_to and g in (shapes.sum_to, shapes.mul_sum_to) and \
                    len(d.args) == (3 if g is shapes.sum_to else 4):
                # Summing a sum: one sum from the first's full shape to the second's target.
                touched.update((d.result.id, r.id))
                return [call(d.fn, [*d.args[:-2], op.args[1], d.args[-1]], r, loc)]
            if f is shapes.sum_to and g is operator.mul and len(d.args) == 2:
                fused = n.Const(shapes.mul_sum_to, [n.Value()], "_mul_sum_to")
                touched.update((d.result.id, r.id))
                return [fused, call(fused.result, [*d.args, op.args[1], op.args[2]], r, loc)]
        return None

    return expand_ops(fn.body, rewrite)


def forward_trivial(fn: n.Function, drop_pure_calls: bool = False) -> bool:
    """Replace region results that do not depend on the path taken by their one value.

    * an ``If`` result whose two branches yield the same value;
    * a loop-carried value the body never changes (it yields its own argument, or
      the initial value).
    """
    mapping: dict[int, n.Value] = {}
    for op in function_ops(fn):
        if isinstance(op, n.If):
            ty, ey = op.then.terminator, op.orelse.terminator
            for k, r in enumerate(op.results):
                if ty.values[k] is ey.values[k]:
                    mapping[r.id] = ty.values[k]
        elif isinstance(op, (n.For, n.While)):
            ys = op.body.terminator.values
            for k, (a, i, r) in enumerate(zip(op.carried_args, op.inits, op.results)):
                if k not in op.exit_flags and (ys[k] is a or ys[k] is i):
                    mapping[a.id] = i
                    mapping[r.id] = i
    return replace_uses(fn, mapping)


# ----------------------------------------------------------------------------- dead code


def _is_pure_call(op: n.Call, consts: dict[int, n.Const]) -> bool:
    c = consts.get(op.fn.id)
    # Arithmetic is pure here too: this only runs on code the transforms generate, where
    # an unused ``t ** 2`` is a rule's recomputation, not a user's check that raises.
    return c is not None and hashable(c.value) and \
        (c.value in _NUMERIC or registry.is_pure(c.value)) and not op.starred and \
        all(k is not None for k, _ in op.kwargs)


#: Shape readers: they raise for no argument (``np.shape`` of anything is a tuple).
_QUIET_SHAPES = frozenset({shapes.shape, numpy.shape, numpy.ndim})

_ALWAYS = (n.SetAttr, n.SetItem, n.Raise, n.Return, n.GetAttr, n.GetItem, n.Unpack, n.With,
           n.While)


class _DCE:
    def __init__(self, fn: n.Function, drop_pure_calls: bool) -> None:
        self.fn = fn
        self.drop_pure_calls = drop_pure_calls
        self.definer: dict[int, tuple[str, n.Op, int]] = {}
        self.parent: dict[int, n.Op | None] = {}
        self.consts: dict[int, n.Const] = {}
        self.live: set[int] = set()
        self.needed: set[int] = set()
        self.live_slots: set[tuple[int, int]] = set()
        self.work: list[n.Value] = []
        self.index(fn.body, None)

    def index(self, region: n.Region, parent: n.Op | None) -> None:
        for op in region.ops:
            self.parent[id(op)] = parent
            for k, r in enumerate(op.results):
                self.definer[r.id] = ("result", op, k)
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op
            if isinstance(op, n.For):
                self.definer[op.body.args[0].id] = ("item", op, -1)
                for k, a in enumerate(op.carried_args):
                    self.definer[a.id] = ("carried", op, k)
            elif isinstance(op, n.While):
                for k, a in enumerate(op.args):
                    self.definer[a.id] = ("carried", op, k)
            elif isinstance(op, n.With):
                self.definer[op.body.args[0].id] = ("item", op, -1)
            if isinstance(op, n.MakeFunction):
                continue  # nested functions are cleaned on their own
            for r in op.regions():
                self.index(r, op)

    def essential(self, op: n.Op) -> bool:
        if isinstance(op, n.GetItem) and self.quiet_slice(op):
            return False
        if isinstance(op, _ALWAYS):
            return True
        if isinstance(op, n.For):
            # Iterating can have effects (an iterator is consumed, __iter__ may raise);
            # only a loop over range() is known to be free of them.
            it = self.definer.get(op.iterable.id)
            if it is None or not isinstance(it[1], n.Call):
                return True
            c = self.consts.get(it[1].fn.id)
            return c is None or c.value is not range
        if isinstance(op, n.Call):
            return not (self.drop_pure_calls and _is_pure_call(op, self.consts) or
                        self.quiet_range(op) or self.quiet_shape(op))
        return False

    def quiet_slice(self, op: n.GetItem) -> bool:
        """A slice of a shape by constants (``_shape(x)[-2:]``, a rule's unused reading of
        the last two axes): slicing a tuple by ints raises nothing."""
        got = self.definer.get(op.obj.id)
        made = self.definer.get(op.index.id)
        if got is None or got[0] != "result" or not isinstance(got[1], n.Call) or \
                not self.quiet_shape(got[1]) or made is None or \
                not isinstance(made[1], n.BuildSlice):
            return False
        parts = [x for x in (made[1].lower, made[1].upper, made[1].step) if x is not None]
        return all(x.id in self.consts and type(self.consts[x.id].value) is int for x in parts)

    def quiet_shape(self, op: n.Call) -> bool:
        """A rule's ``_shape(x)`` (``np.shape``, ``np.ndim``): it reads and raises nothing."""
        c = self.consts.get(op.fn.id)
        return c is not None and hashable(c.value) and c.value in _QUIET_SHAPES and \
            len(op.args) == 1 and not op.kwargs and not op.starred

    def quiet_range(self, op: n.Call) -> bool:
        """``range(5)`` of constant ints, left by a loop unrolled: it cannot raise."""
        c = self.consts.get(op.fn.id)
        return c is not None and c.value is range and not op.kwargs and not op.starred and \
            0 < len(op.args) <= 3 and \
            all(type(getattr(self.consts.get(a.id), "value", None)) is int for a in op.args)

    def mark(self, v: n.Value) -> None:
        if v.id not in self.live:
            self.live.add(v.id)
            self.work.append(v)

    def need(self, op: n.Op) -> None:
        if id(op) in self.needed:
            return
        self.needed.add(id(op))
        if isinstance(op, n.If):
            self.mark(op.cond)
        elif isinstance(op, n.For):
            self.mark(op.iterable)
            for k in op.exit_flags:
                self.mark_slot(op, k)
        elif isinstance(op, n.While):
            self.mark(op.cond.terminator.values[0])
            for k in op.exit_flags:
                self.mark_slot(op, k)
        elif isinstance(op, n.With):
            self.mark(op.manager)
        elif isinstance(op, n.MakeFunction):
            for v in op.operands():
                self.mark(v)
            for v in free_uses(op.func.body):
                self.mark(v)
        elif isinstance(op, n.Yield):
            pass
        else:
            for v in op.operands():
                self.mark(v)
        parent = self.parent.get(id(op))
        if parent is not None:
            self.need(parent)

    def mark_slot(self, op: n.For | n.While, k: int) -> None:
        if (id(op), k) in self.live_slots:
            return
        self.live_slots.add((id(op), k))
        self.need(op)
        self.mark(op.inits[k])
        self.mark(op.body.terminator.values[k])

    def run(self) -> None:
        for op in function_ops_shallow(self.fn.body):
            if self.essential(op):
                self.need(op)
        while self.work:
            v = self.work.pop()
            d = self.definer.get(v.id)
            if d is None:
                continue  # a parameter or a value of an enclosing function
            kind, op, k = d
            if kind == "item":
                self.need(op)
            elif kind == "carried":
                self.mark_slot(op, k)  # type: ignore[arg-type]
            elif isinstance(op, n.If):
                self.need(op)
                for r in op.regions():
                    self.mark(r.terminator.values[k])
            elif isinstance(op, n.With):
                self.need(op)
                self.mark(op.inits[k])
                self.mark(op.body.terminator.values[k])
            elif isinstance(op, (n.For, n.While)):
                self.mark_slot(op, k)
            else:
                self.need(op)

    def sweep(self, region: n.Region) -> bool:
        changed = False
        kept: list[n.Op] = []
        for op in region.ops:
            if isinstance(op, n.TERMINATORS) or id(op) in self.needed:
                kept.append(op)
                changed |= self.shrink(op)
                if not isinstance(op, n.MakeFunction):
                    for r in op.regions():
                        changed |= self.sweep(r)
            else:
                changed = True
        region.ops = kept
        return changed

    def shrink(self, op: n.Op) -> bool:
        """Drop dead results of a kept region op (and the matching yields/slots)."""
        if isinstance(op, (n.If, n.With)):
            keep = [k for k, r in enumerate(op.results) if r.id in self.live]
            if len(keep) == len(op.results):
                return False
            op.results = [op.results[k] for k in keep]
            if isinstance(op, n.With):
                op.inits = [op.inits[k] for k in keep]
            for r in op.regions():
                t = r.terminator
                t.values = [t.values[k] for k in keep]  # type: ignore[attr-defined]
            return True
        if isinstance(op, (n.For, n.While)):
            keep = [k for k in range(len(op.results)) if (id(op), k) in self.live_slots]
            if len(keep) == len(op.results):
                return False
            keep_slots(op, keep)
            return True
        return False


def keep_slots(op: n.For | n.While, keep: list[int]) -> None:
    """Keep only the carried slots ``keep`` of the loop ``op`` (in order), the others'
    initial values, arguments, yields and results dropped."""
    remap = {old: new for new, old in enumerate(keep)}
    op.exit_flags = [remap[k] for k in op.exit_flags]
    op.inits = [op.inits[k] for k in keep]
    op.results = [op.results[k] for k in keep]
    t = op.body.terminator
    t.values = [t.values[k] for k in keep]  # type: ignore[attr-defined]
    if isinstance(op, n.For):
        op.body.args = [op.body.args[0]] + [op.body.args[1 + k] for k in keep]
    else:
        op.args = [op.args[k] for k in keep]


def function_ops_shallow(region: n.Region) -> list[n.Op]:
    """Ops of ``region`` and nested regions, not entering nested function bodies."""
    return list(n.walk_local(region))


def dce(fn: n.Function, drop_pure_calls: bool = False) -> bool:
    """Remove ops whose results are unused and that have no effect; return whether it changed."""
    changed = False
    for op in function_ops_shallow(fn.body):
        if isinstance(op, n.MakeFunction):
            changed |= dce(op.func, drop_pure_calls)
    d = _DCE(fn, drop_pure_calls)
    d.run()
    return d.sweep(fn.body) or changed
