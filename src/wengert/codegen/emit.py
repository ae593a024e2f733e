"""IR -> Python AST -> source text -> compiled function.

Three steps per function: decide which single-use values are written inline as
sub-expressions (keeping Python's evaluation order), compute liveness on the
result, name every remaining value (``naming``), then build statements. The
source is registered with ``linecache`` so tracebacks, pdb and
``inspect.getsource`` show it.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
import types
from typing import Any

from wengert import runtime
from wengert.analysis.liveness import liveness
from wengert.codegen.constants import SELF, Namespace, SelfPart, const_expr
from wengert.codegen.naming import Namer, sanitize
from wengert.codegen.printing import compile_source, source_and_lines
from wengert.ir import nodes as n
from wengert.ir.uses import free_uses
from wengert.objects import hashable
from wengert.vocabulary import PULLBACK_SUFFIX

BIN_AST: dict[Any, type] = {
    operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult,
    operator.truediv: ast.Div, operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod,
    operator.pow: ast.Pow, operator.matmul: ast.MatMult, operator.lshift: ast.LShift,
    operator.rshift: ast.RShift, operator.or_: ast.BitOr, operator.xor: ast.BitXor,
    operator.and_: ast.BitAnd, runtime.add_floats: ast.Add,
}
AUG_AST: dict[Any, type] = {
    operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult,
    operator.itruediv: ast.Div, operator.ifloordiv: ast.FloorDiv, operator.imod: ast.Mod,
    operator.ipow: ast.Pow, operator.imatmul: ast.MatMult, operator.ilshift: ast.LShift,
    operator.irshift: ast.RShift, operator.ior: ast.BitOr, operator.ixor: ast.BitXor,
    operator.iand: ast.BitAnd, runtime.add_floats: ast.Add,
}
UNARY_AST: dict[Any, type] = {
    operator.neg: ast.USub, operator.pos: ast.UAdd, operator.invert: ast.Invert,
    operator.not_: ast.Not,
}
CMP_AST: dict[Any, type] = {
    operator.eq: ast.Eq, operator.ne: ast.NotEq, operator.lt: ast.Lt, operator.le: ast.LtE,
    operator.gt: ast.Gt, operator.ge: ast.GtE, operator.is_: ast.Is, operator.is_not: ast.IsNot,
    runtime.contained_in: ast.In, runtime.not_contained_in: ast.NotIn,
}
_SPECIAL = {**{k: True for k in BIN_AST}, **{k: True for k in UNARY_AST},
            **{k: True for k in CMP_AST}}


_INLINE_KINDS = (n.Call, n.GetAttr, n.GetItem, n.Build, n.BuildDict, n.BuildSlice,
                 n.FormatValue, n.JoinStr)


#: Callables whose calls run Python frames (a comprehension does not call them).
_PYTHON_CALLABLES = (types.FunctionType, types.MethodType, functools.partial)


class FunctionEmitter:
    """Emits one IR function (and its nested functions) as a Python ``FunctionDef``."""

    def __init__(self, fn: n.Function, ns: Namespace, reserved: set[str] | None = None,
                 fixed: dict[int, str] | None = None, name: str | None = None,
                 outer_consts: dict[int, n.Const] | None = None,
                 user_names: frozenset[str] | None = None) -> None:
        self.fn = fn
        self.ns = ns
        self.name = name or sanitize(fn.name if fn.name != "<lambda>" else "lambda_")
        # A pullback's statements are marked with the source lines they differentiate.
        self.commented = self.name.endswith(PULLBACK_SUFFIX)
        self.seen_lines: set[tuple[str, int]] = set()
        self.defs: dict[int, n.Op] = {}
        self.uses: dict[int, int] = {}
        # Constants of enclosing functions are written where used, like this function's.
        self.consts: dict[int, n.Const] = dict(outer_consts or {})
        self.inlined: dict[int, n.Op] = {}
        self.index(fn.body)
        for op in n.walk(fn.body):
            if isinstance(op, n.MakeFunction):
                ns.avoid.update(op.func.signature.names())
        ns.avoid.update(fn.signature.names())
        self.user_names = user_names if user_names is not None else _user_names(fn)
        for op in n.walk(fn.body):
            # Bind globals first so locals avoid their names.
            if isinstance(op, n.Const):
                const_expr(op, ns)
            elif isinstance(op, n.BuildSlice):
                ns.bind(slice, "slice")
            elif isinstance(op, n.Build) and op.kind == "set":
                ns.bind(set, "set")
        self.plan(fn.body)
        skip = {id(op) for op in self.inlined.values()}
        self.inlined_ops = skip
        self.live = liveness(fn, self.effective_operands,
                             lambda op: id(op) in skip or isinstance(op, n.Const))
        self.pinned: set[int] = set()
        self.carried_next: dict[int, n.Value] = {}
        for op in n.walk(fn.body):
            if isinstance(op, n.MakeFunction):
                self.pinned |= {v.id for v in free_uses(op.func.body)}
        self.namer = Namer(self.live, set(ns.values) | (reserved or set()), self.pinned,
                           self.user_names)
        for v_id, nm in (fixed or {}).items():
            self.namer.names[v_id] = nm
        self.name_function()

    # -- analysis ---------------------------------------------------------------------------

    def index(self, region: n.Region) -> None:
        for op in region.ops:
            for r in op.results:
                self.defs[r.id] = op
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op
            elif isinstance(op, n.GetAttr) and op.name == "fn" and op.obj.id in self.consts \
                    and self.ns.self_ref is not None \
                    and self.consts[op.obj.id].value is self.ns.self_ref:
                # ``f_vjp_later.fn`` inside ``f_vjp`` itself (recursion): the function's own name.
                self.consts[op.result.id] = n.Const(SELF, [op.result])
            elif isinstance(op, n.GetAttr) and op.name in self.ns.self_names and \
                    op.obj.id in self.consts and self.ns.self_ref is not None and \
                    self.consts[op.obj.id].value is self.ns.self_ref:
                # ``later.forward`` / ``later.pullback`` in a split VJP's own module.
                self.consts[op.result.id] = n.Const(SelfPart(op.name), [op.result])
            for v in op.operands():
                self.uses[v.id] = self.uses.get(v.id, 0) + 1
            if isinstance(op, n.MakeFunction):
                for v in free_uses(op.func.body):
                    self.uses[v.id] = self.uses.get(v.id, 0) + 2  # captured: never inline
                continue
            for r in op.regions():
                self.index(r)

    def inlinable(self, op: n.Op) -> bool:
        if len(op.results) != 1:
            return False
        v = op.result
        if v.hint is not None or self.uses.get(v.id, 0) != 1:
            return False
        if isinstance(op, _INLINE_KINDS):
            return True
        if isinstance(op, n.If):
            return self.inlinable_if(op)
        return False

    def plan(self, region: n.Region) -> None:
        """Choose the values written inline, keeping evaluation order (a pending stack)."""
        pending: list[n.Value] = []
        for op in region.ops:
            if not isinstance(op, n.MakeFunction):
                for r in op.regions():
                    self.plan(r)
            if isinstance(op, n.Const):
                continue
            operands = op.operands()
            k = len(operands) - 1
            while pending and k >= 0:
                v = operands[k]
                if pending[-1] is v:
                    pending.pop()
                    self.inlined[v.id] = self.defs[v.id]
                elif v.id in self.consts or v not in pending:
                    pass
                else:
                    break
                k -= 1
            if self.inlinable(op):
                # Still part of an expression being built: what is below stays pending.
                pending.append(op.result)
            else:
                pending.clear()

    def effective_operands(self, op: n.Op) -> list[n.Value]:
        out: list[n.Value] = []
        for v in op.operands():
            d = self.inlined.get(v.id)
            if d is None:
                if v.id not in self.consts:
                    out.append(v)
            else:
                out.extend(self.effective_operands(d))
                for r in d.regions():
                    for x in r.ops:
                        out.extend(self.effective_operands(x))
        return out

    # -- naming -----------------------------------------------------------------------------

    def name_function(self) -> None:
        taken: set[str] = set()
        for a in self.fn.body.args:
            if a.id not in self.namer.names:
                name = sanitize(a.hint or "arg")
                # A user's parameter keeps its name (callers may pass it by keyword); a
                # generated one (``a_dot``) is fresh against every name the user wrote.
                generated = not isinstance(a.hint, n.UserName)
                base, k = name, 0
                # (``reserved`` holds the names this function reads from enclosing ones.)
                while name in taken or (generated and (name in self.user_names or
                                                       name in self.namer.reserved)):
                    k += 1
                    name = f"{base}_{k}"
                self.namer.assign([a], set(), fixed=name)
            taken.add(self.namer.name_of(a))
        self.name_region(self.fn.body)

    def name_region(self, region: n.Region) -> None:
        for op in region.ops:
            if id(op) in self.inlined_ops or isinstance(op, n.Const) or \
                    op.results and op.results[0].id in self.consts:
                if isinstance(op, n.If):
                    for r in op.regions():
                        self.name_region(r)
                continue
            self.name_op(op)

    def name_op(self, op: n.Op) -> None:
        live_after = self.live.after(op)
        if isinstance(op, (n.For, n.While)):
            body_entry = self.live.entry(op.cond if isinstance(op, n.While) else op.body)
            operand_ids = {v.id for v in self.effective_operands(op)}
            for a, r, i in zip(op.carried_args, op.results, op.inits):
                live = (body_entry | live_after | operand_ids) - {a.id, r.id}
                if i.id not in body_entry and i.id not in live_after:
                    live = live - {i.id}  # the init dies entering the loop: share its name
                pref = i.hint if i.hint and self.namer.has(i) else None
                hint = a.hint or r.hint or pref
                # The loop variable keeps the name of its initial value when it can.
                prefer = self.namer.name_of(i) if self.namer.has(i) else None
                # The initial value's variable may already hold several values (an ``if``'s
                # arms and result): all flow into the loop variable.
                web = list(self.namer.holders.get(prefer, ())) if prefer is not None else []
                self.namer.assign([a, r], live, hint=hint, prefer=prefer, phi=[i, *web])
            # A value the body makes to become a carried variable's next value takes the
            # variable's name where nothing reads the variable after it is made
            # (``acc, g = pop_adjoint_owned(acc)``): no second name holds the old object,
            # so helpers that update what only one name holds do so in place.
            for a, v in zip(op.carried_args, op.body.terminator.values):
                if v.id not in self.carried_next and self.defs.get(v.id) in op.body.ops:
                    self.carried_next[v.id] = a
            if isinstance(op, n.For):
                item = op.body.args[0]
                if self.uses.get(item.id, 0):
                    self.namer.assign([item], self.live.entry(op.body) - {item.id})
                self.name_region(op.body)
            else:
                self.name_region(op.cond)
                self.name_region(op.body)
            return
        if isinstance(op, n.With):
            t = op.body.args[0]
            if self.uses.get(t.id, 0):
                self.namer.assign([t], self.live.entry(op.body) - {t.id}, hint=t.hint or "ctx")
            # Results are written before the block (their old values) and at its end.
            entry = self.live.entry(op.body)
            operand_ids = {v.id for v in self.effective_operands(op)}
            for r, i in zip(op.results, op.inits):
                live = (entry | live_after | operand_ids) - {r.id}
                if i.id not in entry and i.id not in live_after:
                    live = live - {i.id}
                prefer = self.namer.name_of(i) if self.namer.has(i) and i.hint == r.hint \
                    else None
                self.namer.assign([r], live, hint=r.hint, prefer=prefer)
            self.name_region(op.body)
            return
        elif isinstance(op, n.If):
            for r in op.regions():
                self.name_region(r)
            for k, r in enumerate(op.results):
                if self.uses.get(r.id, 0) == 0 and r.hint is None:
                    continue
                arms = [x.terminator.values[k] for x in op.regions()]
                named = [y for y in arms if self.namer.has(y) and y.id not in self.inlined
                         and y.id not in self.consts]
                others = {x.id for x in op.results if x is not r and self.namer.has(x)}
                prefer = self.namer.name_of(named[0]) if named else None
                self.namer.assign([r], set(live_after) | others, hint=r.hint,
                                  prefer=prefer, phi=named)
            return
        for r in op.results:
            if self.uses.get(r.id, 0) == 0 and (r.hint is None or len(op.results) > 1):
                continue
            others = {x.id for x in op.results if x is not r and self.namer.has(x)}
            carried = self.carried_next.get(r.id)
            if carried is not None and self.namer.has(carried):
                prefer = self.namer.name_of(carried)
                self.namer.assign([r], set(live_after) | others, hint=r.hint, prefer=prefer,
                                  phi=list(self.namer.holders.get(prefer, ())))
                continue
            self.namer.assign([r], set(live_after) | others)

    # -- expressions ------------------------------------------------------------------------

    def expr(self, v: n.Value) -> ast.expr:
        c = self.consts.get(v.id)
        if c is not None:
            return const_expr(c, self.ns)
        d = self.inlined.get(v.id)
        if d is not None:
            return self.op_expr(d)
        return ast.Name(self.namer.name_of(v), ast.Load())

    def op_expr(self, op: n.Op) -> ast.expr:  # noqa: C901 - one case per op kind
        if isinstance(op, n.Call):
            return self.call_expr(op)
        if isinstance(op, n.GetAttr):
            return ast.Attribute(self.expr(op.obj), op.name, ast.Load())
        if isinstance(op, n.GetItem):
            return ast.Subscript(self.expr(op.obj), self.index_expr(op.index), ast.Load())
        if isinstance(op, n.BuildSlice):
            return ast.Call(ast.Name(self.ns.bind(slice, "slice"), ast.Load()),
                            [self.expr(x) if x is not None else ast.Constant(None)
                             for x in (op.lower, op.upper, op.step)], [])
        if isinstance(op, n.Build):
            items = [ast.Starred(self.expr(x), ast.Load()) if i in op.starred else self.expr(x)
                     for i, x in enumerate(op.items)]
            if op.kind == "tuple":
                return ast.Tuple(items, ast.Load())
            if op.kind == "list":
                return ast.List(items, ast.Load())
            if not items:
                return ast.Call(ast.Name(self.ns.bind(set, "set"), ast.Load()), [], [])
            return ast.Set(items)
        if isinstance(op, n.BuildDict):
            return ast.Dict([self.expr(k) if k is not None else None for k in op.keys],
                            [self.expr(v) for v in op.values])
        if isinstance(op, n.FormatValue):
            return ast.JoinedStr([self.formatted(op)])
        if isinstance(op, n.JoinStr):
            parts: list[ast.expr] = []
            for p in op.parts:
                d = self.inlined.get(p.id)
                c = self.consts.get(p.id)
                if isinstance(d, n.FormatValue):
                    parts.append(self.formatted(d))
                elif c is not None and isinstance(c.value, str):
                    parts.append(ast.Constant(c.value))
                else:
                    parts.append(ast.FormattedValue(self.expr(p), -1, None))
            return ast.JoinedStr(parts)
        if isinstance(op, n.If):
            ty, ey = op.then.terminator.values[0], op.orelse.terminator.values[0]
            # ``c if c else b`` is ``c or b``; ``b if c else c`` is ``c and b``.
            if ty is op.cond and len(op.then.ops) == 1:
                return _boolop(ast.Or(), self.expr(op.cond), self.expr(ey))
            if ey is op.cond and len(op.orelse.ops) == 1:
                return _boolop(ast.And(), self.expr(op.cond), self.expr(ty))
            return ast.IfExp(self.expr(op.cond), self.expr(ty), self.expr(ey))
        raise AssertionError(f"cannot inline {op!r}")  # pragma: no cover

    def formatted(self, op: n.FormatValue) -> ast.FormattedValue:
        spec = None
        if op.spec is not None:
            s = self.expr(op.spec)
            spec = s if isinstance(s, ast.JoinedStr) else ast.JoinedStr(
                [ast.FormattedValue(s, -1, None)])
        return ast.FormattedValue(self.expr(op.value), op.conversion, spec)

    def index_expr(self, v: n.Value) -> ast.expr:
        d = self.inlined.get(v.id)
        if isinstance(d, n.BuildSlice):
            return ast.Slice(*(self.expr(x) if x is not None else None
                               for x in (d.lower, d.upper, d.step)))
        if isinstance(d, n.Build) and d.kind == "tuple" and not d.starred:
            return ast.Tuple([self.index_expr(x) for x in d.items], ast.Load())
        return self.expr(v)

    def call_expr(self, op: n.Call) -> ast.expr:
        c = self.consts.get(op.fn.id)
        simple = not op.kwargs and not op.starred
        if c is not None and simple and hashable(c.value) and c.value in _SPECIAL:
            f = c.value
            if f in BIN_AST and len(op.args) == 2:
                return ast.BinOp(self.expr(op.args[0]), BIN_AST[f](), self.expr(op.args[1]))
            if f in UNARY_AST and len(op.args) == 1:
                return ast.UnaryOp(UNARY_AST[f](), self.expr(op.args[0]))
            if f in CMP_AST and len(op.args) == 2:
                return ast.Compare(self.expr(op.args[0]), [CMP_AST[f]()],
                                   [self.expr(op.args[1])])
        if c is not None and simple and hashable(c.value) and c.value in AUG_AST and \
                len(op.args) == 2 and op.args[0].id in self.consts and \
                type(self.consts[op.args[0].id].value) in (int, float, complex, bool, str):
            # ``iadd(0.0, y)`` (a constant folded in): for a number, ``0.0 + y``.
            return ast.BinOp(self.expr(op.args[0]), AUG_AST[c.value](), self.expr(op.args[1]))
        args = [ast.Starred(self.expr(a), ast.Load()) if i in op.starred else self.expr(a)
                for i, a in enumerate(op.args)]
        kws = [ast.keyword(k, self.expr(v)) for k, v in op.kwargs]
        return ast.Call(self.expr(op.fn), args, kws)

    # -- statements -------------------------------------------------------------------------

    def target(self, v: n.Value) -> ast.expr:
        return ast.Name(self.namer.name_of(v), ast.Store())

    def copies(self, targets: list[n.Value], values: list[n.Value]) -> list[ast.stmt]:
        """Parallel copies ``t1, t2 = v1, v2`` for the pairs whose names differ."""
        pairs = [(t, v) for t, v in zip(targets, values)
                 if self.namer.has(t) and self.namer.name_of(t) != "_" and
                 (self.namer.name_of(t) != self.namer.name_of(v) or v.id in self.consts
                  or v.id in self.inlined or not self.namer.has(v))]
        if not pairs:
            return []
        if len(pairs) == 1:
            t, v = pairs[0]
            return [ast.Assign([self.target(t)], self.expr(v), lineno=0)]
        return [ast.Assign([ast.Tuple([self.target(t) for t, _ in pairs], ast.Store())],
                           ast.Tuple([self.expr(v) for _, v in pairs], ast.Load()), lineno=0)]

    def block(self, region: n.Region, yield_to: list[n.Value] | None = None) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        outer_seen, self.seen_lines = self.seen_lines, set()
        filled = self.filled_lists(region)
        made = {id(b) for b in filled.values()}
        for op in region.ops:
            if id(op) in self.inlined_ops or isinstance(op, n.Const) or \
                    op.results and op.results[0].id in self.consts or id(op) in made:
                continue
            if isinstance(op, n.Yield):
                if yield_to is not None:
                    out.extend(self.copies(yield_to, op.values))
                continue
            if id(op) in filled:
                stmts = self.list_comprehension(op, filled[id(op)])  # type: ignore[arg-type]
            else:
                stmts = self.stmt(op)
            if stmts and self.commented:
                self.comment(op, stmts[0])
            if stmts and op.loc is not None and not op.loc.filename.startswith("<wengert:"):
                for st in stmts:  # (what a refusal raised as it runs points at)
                    st._wengert_loc = op.loc  # type: ignore[attr-defined]
            out.extend(stmts)
            if isinstance(op, n.Raise):
                break
        self.seen_lines = outer_seen
        return out

    def filled_lists(self, region: n.Region) -> dict[int, n.Build]:
        """The loops of ``region`` (by id) that fill a list made empty before them and read
        nowhere in between: no carried values, no ``break``, and the body's one use of the
        list its last op, ``acc.append(v)`` (each is then a candidate for a comprehension,
        :meth:`list_comprehension`), with the display making the list."""
        out: dict[int, n.Build] = {}
        empty: dict[int, n.Build] = {}
        for op in region.ops:
            if isinstance(op, n.For) and not op.carried_args and not op.exit_flags:
                acc = self.appended_to(op)
                if acc is not None and acc.id in empty:
                    out[id(op)] = empty.pop(acc.id)
            for v in op.operands() + (free_uses(op.func.body) if isinstance(
                    op, n.MakeFunction) else [x for r in op.regions() for x in free_uses(r)]):
                empty.pop(v.id, None)
            if isinstance(op, n.Build) and op.kind == "list" and not op.items and \
                    self.namer.has(op.result):
                empty[op.result.id] = op
        return out

    def appended_to(self, loop: n.For) -> n.Value | None:
        """The list ``acc`` whose ``acc.append(v)`` is the last op of ``loop``'s body and its
        only use of ``acc``, else ``None``."""
        ops = [o for o in loop.body.ops if not isinstance(o, (n.Yield, n.Const))]
        last = ops[-1] if ops else None
        if not isinstance(last, n.Call) or len(last.args) != 1 or last.kwargs or \
                last.starred or self.uses.get(last.result.id, 0):
            return None
        method = self.inlined.get(last.fn.id)
        if not isinstance(method, n.GetAttr) or method.name != "append":
            return None
        acc = method.obj
        if sum(v is acc for o in n.walk(loop.body) for v in o.operands()) != 1:
            return None
        for o in n.walk(loop.body):
            # Only calls of functions written in C: a comprehension is a frame of its own,
            # and a Python function called from it (a recursive derivative) would stack two
            # frames per level where the loop stacks one.
            if isinstance(o, n.MakeFunction) or isinstance(o, n.Call) and o is not last and \
                    (o.fn.id not in self.consts or
                     isinstance(f := self.consts[o.fn.id].value, _PYTHON_CALLABLES) or
                     f is SELF or isinstance(f, SelfPart)):
                return None
        return acc

    def list_comprehension(self, loop: n.For, made: n.Build) -> list[ast.stmt]:
        """``acc = [v for item in xs for t in [e]]`` for ``acc = []`` then a loop whose body
        binds names (``t = e``) and ends in ``acc.append(v)``: the same evaluations in the
        same order, at the speed of a comprehension (each ``for t in [e]`` is an
        assignment). Else the list display and the loop as they are."""
        target, region = self.loop_target(loop)
        body = self.block(region, [])
        *binds, last = body or [ast.Pass()]
        if all(isinstance(b, ast.Assign) and len(b.targets) == 1 and
               isinstance(b.targets[0], (ast.Name, ast.Tuple)) for b in binds) and \
                isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            gens = [ast.comprehension(target, self.expr(loop.iterable), [], 0)]
            gens += [ast.comprehension(b.targets[0], ast.List([b.value], ast.Load()), [], 0)
                     for b in binds]  # type: ignore[attr-defined]
            comp = ast.ListComp(last.value.args[0], gens)
            return [ast.Assign([self.target(made.result)], comp, lineno=0)]
        return self.stmt(made) + self.stmt(loop)

    def loop_target(self, op: n.For) -> tuple[ast.expr, n.Region]:
        """The target of the ``for`` statement of ``op`` (the unpacking that opens the body,
        where the item is read only there) and the rest of the body."""
        body_ops = op.body
        item = body_ops.args[0]
        target: ast.expr = self.target(item) if self.namer.has(item) else \
            ast.Name("_", ast.Store())
        first = body_ops.ops[0] if body_ops.ops else None
        if isinstance(first, n.Unpack) and first.value is item and \
                self.uses.get(item.id, 0) == 1:
            target = self.stmt(first)[0].targets[0]  # type: ignore[attr-defined]
            return target, n.Region(body_ops.args, body_ops.ops[1:])
        return target, n.Region(body_ops.args, body_ops.ops)

    def comment(self, op: n.Op, stmt: ast.stmt) -> None:
        """Mark the first statement of each source line's adjoint code with that line
        (``# grad of: y = x * x``), printed above it by :func:`to_source`."""
        loc = op.loc
        if loc is None or loc.filename.startswith("<wengert:"):
            return
        where = (loc.filename, loc.lineno)
        if where in self.seen_lines:
            return  # once per block: the adjoints of one line may interleave with others'
        text = loc.line_text().strip()
        if text:
            self.seen_lines.add(where)
            stmt._wengert_comment = f"grad of: {text}"  # type: ignore[attr-defined]

    def assign_stmt(self, op: n.Op, value: ast.expr) -> ast.stmt:
        r = op.results[0] if op.results else None
        if r is None or not self.namer.has(r):
            return ast.Expr(value)
        return ast.Assign([self.target(r)], value, lineno=0)

    def stmt(self, op: n.Op) -> list[ast.stmt]:  # noqa: C901 - one case per op kind
        if isinstance(op, n.Call):
            aug = self.augmented(op)
            if aug is not None:
                return [aug]
            return [self.assign_stmt(op, self.call_expr(op))]
        if isinstance(op, _INLINE_KINDS):
            return [self.assign_stmt(op, self.op_expr(op))]
        if isinstance(op, n.SetAttr):
            aug = self.augmented_store(op)
            if aug is not None:
                return [aug]
            t = ast.Attribute(self.expr(op.obj), op.name, ast.Store())
            return [ast.Assign([t], self.expr(op.value), lineno=0)]
        if isinstance(op, n.SetItem):
            aug = self.augmented_store(op)
            if aug is not None:
                return [aug]
            t = ast.Subscript(self.expr(op.obj), self.index_expr(op.index), ast.Store())
            return [ast.Assign([t], self.expr(op.value), lineno=0)]
        if isinstance(op, n.Unpack):
            elts: list[ast.expr] = []
            for i, r in enumerate(op.results):
                t: ast.expr = ast.Name(self.namer.name_of(r), ast.Store())
                elts.append(ast.Starred(t, ast.Store()) if i == op.star else t)
            return [ast.Assign([ast.Tuple(elts, ast.Store())], self.expr(op.value), lineno=0)]
        if isinstance(op, n.Raise):
            return [ast.Raise(self.expr(op.exc) if op.exc is not None else None,
                              self.expr(op.cause) if op.cause is not None else None)]
        if isinstance(op, n.Return):
            return [ast.Return(self.expr(op.value))]
        if isinstance(op, n.If):
            if self.inlinable_if(op) and not self.yields_own_name(op):
                return [self.assign_stmt(op, self.op_expr(op))]
            body = self.block(op.then, op.results) or []
            orelse = self.block(op.orelse, op.results) or []
            test = self.expr(op.cond)
            if not body and not orelse:
                return [ast.Expr(test)] if not isinstance(test, ast.Name) else []
            if not body:
                return [ast.If(_negate(test), orelse, [])]
            return [ast.If(test, body, orelse)]
        if isinstance(op, n.For):
            pre = self.copies(op.carried_args, op.inits)
            target, region = self.loop_target(op)
            body = self.block(region, op.carried_args)
            body += self.exit_check(op)
            return pre + [ast.For(target, self.expr(op.iterable), body or [ast.Pass()], [],
                                  lineno=0)]
        if isinstance(op, n.While):
            pre = self.copies(op.args, op.inits)
            cond_stmts = self.block(op.cond)
            c = self.expr(op.cond.terminator.values[0])
            body = self.block(op.body, op.args) + self.exit_check(op)
            if cond_stmts:
                body = cond_stmts + [ast.If(_negate(c), [ast.Break()], [])] + body
                c = ast.Constant(True)
            return pre + [ast.While(c, body or [ast.Pass()], [])]
        if isinstance(op, n.With):
            t = op.body.args[0]
            var = self.target(t) if self.uses.get(t.id, 0) else None
            pre = self.copies(op.results, op.inits)
            body = self.block(op.body, op.results)
            return pre + [ast.With([ast.withitem(self.expr(op.manager), var)],
                                   body or [ast.Pass()], lineno=0)]
        if isinstance(op, n.MakeFunction):
            return self.function_stmt(op)
        raise AssertionError(f"no statement for {op!r}")  # pragma: no cover

    def inlinable_if(self, op: n.If) -> bool:
        """An ``If`` with one result and nothing but inline expressions in its arms."""
        inl = self.inlined_ids()
        return len(op.results) == 1 and all(id(x) in inl or isinstance(x, n.Const)
                                            for r in op.regions() for x in r.ops[:-1])

    def inlined_ids(self) -> set[int]:
        """Ids of the ops written inline (while planning, the set grows)."""
        ops = getattr(self, "inlined_ops", None)
        return ops if ops is not None else {id(o) for o in self.inlined.values()}

    def yields_own_name(self, op: n.If) -> bool:
        """Whether an arm just keeps the variable's value (``if c: x = 1`` reads better)."""
        r = op.result
        return any(self.namer.has(y) and self.namer.has(r) and y.id not in self.inlined and
                   self.namer.name_of(y) == self.namer.name_of(r)
                   for y in (op.then.terminator.values[0], op.orelse.terminator.values[0]))

    def exit_check(self, op: n.For | n.While) -> list[ast.stmt]:
        if not op.exit_flags:
            return []
        flags = [ast.Name(self.namer.name_of(op.carried_args[k]), ast.Load())
                 for k in op.exit_flags]
        test = flags[0] if len(flags) == 1 else ast.BoolOp(ast.Or(), flags)
        return [ast.If(test, [ast.Break()], [])]

    def augmented(self, op: n.Call) -> ast.stmt | None:
        """``x = iadd(x, y)`` where both are one variable is ``x += y``."""
        c = self.consts.get(op.fn.id)
        if c is None or not hashable(c.value) or c.value not in AUG_AST or len(op.args) != 2:
            return None
        r = op.result
        a = op.args[0]
        if self.namer.has(r) and self.namer.has(a) and a.id not in self.inlined and \
                self.namer.name_of(r) == self.namer.name_of(a):
            return ast.AugAssign(self.target(r), AUG_AST[c.value](), self.expr(op.args[1]))
        return None

    def augmented_store(self, op: n.SetAttr | n.SetItem) -> ast.stmt | None:
        """``o.a = iadd(o.a, y)`` (all inline) is ``o.a += y``; likewise for items."""
        d = self.inlined.get(op.value.id)
        if not isinstance(d, n.Call) or len(d.args) != 2:
            return None
        c = self.consts.get(d.fn.id)
        if c is None or not hashable(c.value) or c.value not in AUG_AST:
            return None
        load = self.inlined.get(d.args[0].id)
        if isinstance(op, n.SetAttr) and isinstance(load, n.GetAttr) and \
                load.obj is op.obj and load.name == op.name:
            t: ast.expr = ast.Attribute(self.expr(op.obj), op.name, ast.Store())
        elif isinstance(op, n.SetItem) and isinstance(load, n.GetItem) and \
                load.obj is op.obj and load.index is op.index:
            t = ast.Subscript(self.expr(op.obj), self.index_expr(op.index), ast.Store())
        else:
            return None
        return ast.AugAssign(t, AUG_AST[c.value](), self.expr(d.args[1]))

    def function_stmt(self, op: n.MakeFunction) -> list[ast.stmt]:
        fixed = {}
        consts = {}
        for v in free_uses(op.func.body):
            if v.id in self.consts:
                consts[v.id] = self.consts[v.id]
            else:
                fixed[v.id] = self.namer.name_of(v)
        r = op.result
        name = self.namer.name_of(r) if self.namer.has(r) else self.namer.fresh("fn")
        # The outer scope's temporaries stay its own: a nested function (a pullback) numbers
        # its temporaries on from them rather than shadowing one with another value.
        temps = {nm for nm, fam in self.namer.family.items() if fam == "t"}
        inner = FunctionEmitter(op.func, self.ns, reserved=set(fixed.values()) | {name} | temps,
                                fixed=fixed, name=name, outer_consts=consts,
                                user_names=self.user_names)
        fdef = inner.function_def(op.defaults, op.kw_defaults, self)
        return [fdef]

    def arguments(self, defaults: list[n.Value] | None = None,
                  kw_defaults: list[n.Value | None] | None = None,
                  outer: FunctionEmitter | None = None) -> ast.arguments:
        sig = self.fn.signature
        args = self.fn.body.args
        it = iter(args)

        def a() -> ast.arg:
            return ast.arg(self.namer.name_of(next(it)))

        posonly = [a() for _ in sig.posonly]
        plain = [a() for _ in sig.args]
        vararg = a() if sig.vararg else None
        kwonly = [a() for _ in sig.kwonly]
        kwarg = a() if sig.kwarg else None
        ex = outer.expr if outer is not None else self.expr
        return ast.arguments(posonly, plain, vararg, kwonly,
                             [ex(v) if v is not None else None for v in (kw_defaults or [])]
                             or [None] * len(kwonly),
                             kwarg, [ex(v) for v in (defaults or [])])

    def function_def(self, defaults: list[n.Value] | None = None,
                     kw_defaults: list[n.Value | None] | None = None,
                     outer: FunctionEmitter | None = None) -> ast.FunctionDef:
        body = self.block(self.fn.body)
        if self.fn.docstring:
            body.insert(0, ast.Expr(ast.Constant(self.fn.docstring)))
        return ast.FunctionDef(self.name, self.arguments(defaults, kw_defaults, outer),
                               body or [ast.Pass()], [], None, lineno=0)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _user_names(fn: n.Function) -> frozenset[str]:
    """Every name the user wrote that may appear in ``fn``'s generated code: each word of
    its source text and each user-marked hint of a value in it (names of inlined
    helpers included). Generated names are kept fresh against all of them."""
    out = set()
    for text in fn.source_lines.values():
        out.update(_IDENTIFIER.findall(text))
    out.update(a.hint for a in fn.body.args if isinstance(a.hint, n.UserName))
    for op in n.walk(fn.body):
        for v in [*op.results, *n.region_args(op)]:
            if isinstance(v.hint, n.UserName):
                out.add(str.__str__(v.hint))
        if isinstance(op, n.MakeFunction):
            out.update(a.hint for a in op.func.body.args if isinstance(a.hint, n.UserName))
            for text in op.func.source_lines.values():
                out.update(_IDENTIFIER.findall(text))
    return frozenset(out)


def _boolop(op: ast.boolop, left: ast.expr, right: ast.expr) -> ast.expr:
    if isinstance(left, ast.BoolOp) and type(left.op) is type(op):
        return ast.BoolOp(op, [*left.values, right])
    return ast.BoolOp(op, [left, right])


def _negate(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(ast.Not(), test)


def generate_split(forward: n.Function, pullback: n.Function, takes_inouts: bool,
                   label: str, self_ref: Any) -> tuple[Any, Any, str]:
    """Compile a VJP split in two (``transforms/split.py``) into one module: its forward
    and pullback functions, and the source. ``self_ref``: the ``runtime.Later`` through
    which recursive calls reach them (``later.forward``, ``later.pullback``), which the
    generated code calls by their names instead."""
    ns = Namespace()
    names = {}
    for role, fn in (("forward", forward), ("pullback", pullback)):
        names[role] = sanitize(fn.name if fn.name != "<lambda>" else "lambda_")
    if names["forward"] == names["pullback"]:
        names["pullback"] += "_pullback"
    ns.avoid.update(names.values())
    for nm in names.values():
        ns.values[nm] = None  # the defs bind them: no global may take their names
    ns.self_ref, ns.self_name, ns.self_names = self_ref, names["forward"], names
    defs = []
    for role, fn in (("forward", forward), ("pullback", pullback)):
        em = FunctionEmitter(fn, ns, name=names[role])
        fdef = em.function_def()
        if role == "pullback" and takes_inouts:
            fdef.args.defaults = [ast.Constant(None)]  # ``inouts``: none from most callers
        defs.append(fdef)
    source, locs = source_and_lines(defs)
    values = compile_source(source, ns, label, locs)
    return values[names["forward"]], values[names["pullback"]], source


def generate(fn: n.Function, label: str | None = None, self_ref: Any = None
             ) -> tuple[types.FunctionType, str]:
    """Compile an IR function to a Python function; return it with its source.
    ``self_ref``: the ``runtime.Later`` recursive calls reach the function through, which
    the generated code calls by its own name instead."""
    ns = Namespace()
    # The def binds its own name in the module: no constant may be bound to it too.
    name = sanitize(fn.name if fn.name != "<lambda>" else "lambda_")
    ns.avoid.add(name)
    ns.self_ref, ns.self_name = self_ref, name
    em = FunctionEmitter(fn, ns, name=name)
    fdef = em.function_def()
    source, locs = source_and_lines([fdef])
    values = compile_source(source, ns, label or em.name, locs)
    return values[em.name], source
