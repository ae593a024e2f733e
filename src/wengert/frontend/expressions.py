"""Lowering Python expressions to the SSA IR: the ``expr_<Node>`` half of the frontend.

:class:`ExpressionLowering` is a part of :class:`~wengert.frontend.lower.FunctionLowering`
(which holds the environment, the builder and the statement handlers): one handler per
expression node kind; ``and``/``or``/conditional expressions become ``If`` selects, so a
short-circuit stays one; comprehensions become loops appending to a fresh list.
"""

from __future__ import annotations

import ast
import operator
import types
from typing import Any

from wengert import runtime
from wengert.diagnostics import SourceLoc
from wengert.frontend.source import is_table_of_code
from wengert.ir import nodes as n

BINOPS: dict[type, Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
UNARYOPS: dict[type, Any] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
CMPOPS: dict[type, Any] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: runtime.contained_in, ast.NotIn: runtime.not_contained_in,
}
UNSUPPORTED_EXPRS: dict[type, tuple[str, str]] = {
    ast.Yield: ("generators are not supported", "return a list instead of yielding values"),
    ast.YieldFrom: ("generators are not supported", "return a list instead of yielding values"),
    ast.Await: ("'await' is not supported", "differentiate an ordinary (synchronous) function"),
}


_ITERABLE_CONSUMERS = {sum, min, max, any, all, list, tuple, set, frozenset, sorted, dict,
                       enumerate, zip, map, filter, reversed}


def _targets_of(node: ast.AST, out: list[str]) -> None:
    if isinstance(node, ast.Name):
        out.append(node.id)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            _targets_of(e, out)
    elif isinstance(node, ast.Starred):
        _targets_of(node.value, out)


def _changed_names(before: dict[str, n.Value], envs: list[dict[str, n.Value]]) -> list[str]:
    """Names whose value differs from ``before`` in any of ``envs`` (deterministic order)."""
    out: dict[str, None] = {}
    for env in envs:
        for name, v in env.items():
            if before.get(name) is not v:
                out.setdefault(name, None)
    # Pseudo-variables private to a region (e.g. the continue flag) do not flow out.
    return [x for x in out if not x.startswith(".cont") and x not in (".acc", ".iter0")
            or x in before]


#: Derivative operators that call their function while they run (``jvp(f, xs, ts)``; a
#: ``vjp``'s pullback uses what ``f`` computed then), and those whose result calls it
#: (``grad(f)``: while that result runs, at once when it is called where it is made).
_RUNS_AT_ONCE = frozenset({"jvp", "vjp", "hvp"})
_RUNS_WHEN_CALLED = frozenset({"grad", "value_and_grad", "jacfwd", "jacrev", "hessian"})


def _calls_at_once(fn: n.Value, low: Any, result_called: bool = False) -> bool:
    """Whether ``fn`` calls a function argument only while it runs (``sorted(key=...)``,
    ``wengert.jvp``), or, ``result_called`` (``grad(f)(x)``), while what it returns runs."""
    import functools

    op = low._definer(fn)
    if isinstance(op, n.GetAttr):
        return op.name == "sort"
    if not isinstance(op, n.Const):
        return False
    kind = getattr(op.value, "__wengert_operator__", None)
    if kind in _RUNS_AT_ONCE or result_called and kind in _RUNS_WHEN_CALLED:
        return True
    try:
        return op.value in (sorted, min, max, functools.reduce)
    except TypeError:
        return False


def _consumes_iterable(fn: n.Value, low: Any) -> bool:
    """Whether ``fn`` is known to accept a list where a generator was written."""
    import math

    op = low._definer(fn)
    if not isinstance(op, n.Const):
        return False
    try:
        return op.value in _ITERABLE_CONSUMERS or op.value in (math.fsum, math.prod)
    except TypeError:
        return False


class ExpressionLowering:
    """The expression handlers of a function's lowering (see the module docstring)."""

    # -- expressions --------------------------------------------------------------------------

    def expr(self, e: ast.expr, hint: str | None = None) -> n.Value:
        """Lower an expression; ``hint`` names its value after the variable it is assigned to."""
        saved = self.b.loc
        self.b.loc = self.loc(e)
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            msg, h = UNSUPPORTED_EXPRS.get(
                type(e), (f"'{type(e).__name__}' expressions are not supported", None))
            raise self.error(e, msg, h)
        v = method(e)
        if hint is not None and v.hint is None:
            v.hint = hint
        self.b.loc = saved
        return v

    def expr_Constant(self, e: ast.Constant) -> n.Value:
        return self.const(e.value)

    def expr_Name(self, e: ast.Name) -> n.Value:
        return self.load_name(e.id, e)

    def expr_BinOp(self, e: ast.BinOp) -> n.Value:
        left = self.expr(e.left)
        right = self.expr(e.right)
        self.b.loc = self.loc(e)
        return self.call(BINOPS[type(e.op)], left, right)

    def expr_UnaryOp(self, e: ast.UnaryOp) -> n.Value:
        v = self.expr(e.operand)
        self.b.loc = self.loc(e)
        return self.call(UNARYOPS[type(e.op)], v)

    def expr_BoolOp(self, e: ast.BoolOp) -> n.Value:
        # ``a or b`` is ``a if a else b``; ``a and b`` is ``b if a else a``: value semantics.
        result = self.expr(e.values[0])
        for rhs in e.values[1:]:
            left = result
            holder: list[n.Value] = []

            def other(rhs: ast.expr = rhs, holder: list = holder) -> None:
                holder.append(self.expr(rhs))

            def same(left: n.Value = left, holder: list = holder) -> None:
                holder.append(left)

            if isinstance(e.op, ast.Or):
                result = self.select(left, same, other, holder)
            else:
                result = self.select(left, other, same, holder)
        return result

    def select(self, cond: n.Value, then, orelse, holder: list) -> n.Value:
        """An ``If`` producing one value (conditional expressions, ``and``/``or``)."""
        loc = self.b.loc
        regions = []
        for fill in (then, orelse):
            region = n.Region()
            env_before = dict(self.env)
            with self.b.at(region):
                holder.clear()
                fill()
                value = holder[0]
            changed = _changed_names(env_before, [self.env])
            if changed:
                # A walrus inside one arm: merge like a statement-level if.
                self.env = env_before
                return self._select_with_env(cond, then, orelse, holder, loc)
            with self.b.at(region):
                self.b.emit(n.Yield([value], loc=loc))
            regions.append(region)
        result = self.b.value()
        self.b.emit(n.If(cond, regions[0], regions[1], [result], loc=loc))
        return result

    def _select_with_env(self, cond: n.Value, then, orelse, holder: list,
                         loc: SourceLoc | None) -> n.Value:
        key = f".select{id(holder)}"

        def wrap(fill):
            def run() -> None:
                holder.clear()
                fill()
                self.env[key] = holder[0]
            return run

        self.branch(cond, wrap(then), wrap(orelse), loc=loc)
        value = self.env.pop(key)
        return value

    def expr_IfExp(self, e: ast.IfExp) -> n.Value:
        cond = self.expr(e.test)
        holder: list[n.Value] = []
        return self.select(cond, lambda: holder.append(self.expr(e.body)),
                           lambda: holder.append(self.expr(e.orelse)), holder)

    def expr_Compare(self, e: ast.Compare) -> n.Value:
        left = self.expr(e.left)
        return self._compare(left, list(zip(e.ops, e.comparators)), e)

    def _compare(self, left: n.Value, rest: list, e: ast.Compare) -> n.Value:
        op, rhs_node = rest[0]
        right = self.expr(rhs_node)
        self.b.loc = self.loc(e)
        res = self.call(CMPOPS[type(op)], left, right)
        if len(rest) == 1:
            return res
        # ``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once.
        holder: list[n.Value] = []
        return self.select(res, lambda: holder.append(self._compare(right, rest[1:], e)),
                           lambda: holder.append(res), holder)

    def expr_NamedExpr(self, e: ast.NamedExpr) -> n.Value:
        v = self.expr(e.value, hint=n.UserName(e.target.id))
        self.assign(e.target, v)
        return v

    def expr_Call(self, e: ast.Call) -> n.Value:
        if isinstance(e.func, ast.Name) and e.func.id == "super" and not e.args and \
                "super" not in self.env:
            return self.zero_arg_super(e)
        if isinstance(e.func, ast.Name) and e.func.id in ("any", "all") and len(e.args) == 1 \
                and not e.keywords and isinstance(e.args[0], ast.GeneratorExp) and \
                len(e.args[0].generators) == 1 and e.func.id not in self.env and \
                self.resolver.resolve(e.func.id)[1] in (any, all):
            return self.short_circuit(e, e.func.id)
        result_called, self.result_called = self.result_called, False
        self.called_at_once = isinstance(e.func, ast.Lambda)
        self.result_called = isinstance(e.func, ast.Call)  # (``grad(f)(x)``)
        fn = self.expr(e.func)
        self.called_at_once = self.result_called = False
        immediate = _calls_at_once(fn, self, result_called)
        args: list[n.Value] = []
        starred: list[int] = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                starred.append(len(args))
                args.append(self.expr(a.value))
            elif isinstance(a, ast.Lambda) and immediate:
                self.called_at_once = True
                args.append(self.expr(a))
                self.called_at_once = False
            elif isinstance(a, ast.GeneratorExp) and _consumes_iterable(fn, self):
                # ``sum(x * x for x in xs)``: the consumer takes any iterable.
                args.append(self.comprehension(a, "list"))
            else:
                args.append(self.expr(a))
        kwargs = []
        for k in e.keywords:
            self.called_at_once = immediate and isinstance(k.value, ast.Lambda)
            kwargs.append((k.arg, self.expr(k.value)))
            self.called_at_once = False
        self.b.loc = self.loc(e)
        return self.b.emit(n.Call(fn, args, kwargs, [self.b.value()], tuple(starred))).result

    def zero_arg_super(self, e: ast.Call) -> n.Value:
        """``super()`` is ``super(__class__, <first parameter>)``, as Python compiles it."""
        found, cls = self.resolver.resolve("__class__") if self.parent is None else (False, None)
        if not found or not self.params:
            raise self.error(e, "zero-argument super() is only supported in a method",
                             "call super(Class, self) explicitly")
        sup = self.const(super, "super")
        args = [self.const(cls, None), self.env.get(self.params[0]) or
                self.load_name(self.params[0], e)]
        return self.b.emit(n.Call(sup, args, [], [self.b.value()])).result

    def short_circuit(self, e: ast.Call, kind: str) -> n.Value:
        """``all(p for x in xs)`` stops at the first false ``p`` (``any``: first true).

        Written as the loop it is, so the generator's laziness is kept: later
        elements are never computed, as in Python.
        """
        gen: ast.GeneratorExp = e.args[0]  # type: ignore[assignment]
        g = gen.generators[0]
        res = f".{kind}"
        found = ast.Constant(kind == "any")
        test: ast.expr = gen.elt if kind == "any" else ast.UnaryOp(ast.Not(), gen.elt)
        hit = ast.If(test=test, body=[ast.Assign(targets=[ast.Name(res, ast.Store())],
                                                 value=found), ast.Break()], orelse=[])
        body: list[ast.stmt] = [hit]
        for cond in reversed(g.ifs):
            body = [ast.If(test=cond, body=body, orelse=[])]
        loop = ast.For(target=g.target, iter=ast.Name(".iter0", ast.Load()), body=body,
                       orelse=[])
        for node in ast.walk(loop):
            if not hasattr(node, "lineno") or node is hit or node in body or node is loop:
                ast.copy_location(node, gen)
        outer_env = dict(self.env)
        names: list[str] = []
        _targets_of(g.target, names)
        saved_locals = self.locals
        self.locals = self.locals | set(names) | {res, ".iter0"}
        walrus = [x.target.id for x in ast.walk(gen) if isinstance(x, ast.NamedExpr)]
        self.env[".iter0"] = self.expr(g.iter)
        self.env[res] = self.const(kind == "all")
        self.block([loop])
        value = self.env[res]
        self.locals = saved_locals
        self.leave_comprehension(outer_env, walrus)
        return value

    def leave_comprehension(self, outer_env: dict[str, n.Value], walrus: list[str]) -> None:
        """Back to the enclosing scope's names: a comprehension's own variables go, what
        a ``:=`` inside it assigned stays (it binds in the enclosing scope)."""
        new_env = dict(outer_env)
        for name in walrus:
            if name in self.env:
                new_env[name] = self.env[name]
        self.env = new_env

    def expr_Attribute(self, e: ast.Attribute) -> n.Value:
        obj = self.expr(e.value)
        self.b.loc = self.loc(e)
        op = self._definer(obj)
        if isinstance(op, n.Const) and isinstance(op.value, types.ModuleType) and \
                hasattr(op.value, e.attr) and op.origin:
            # Module attribute chains resolve to the object itself: ``np.linalg.norm``.
            return self.const(getattr(op.value, e.attr), f"{op.origin}.{e.attr}",
                              root=op.root if op.root is not None else op.value)
        return self.b.getattr(obj, e.attr)

    def _definer(self, v: n.Value) -> n.Op | None:
        for op in reversed(self.b.region.ops):
            if v in op.results:
                return op
        return None

    def expr_Subscript(self, e: ast.Subscript) -> n.Value:
        entry = self.table_entry(e)
        if entry is not None:
            return entry
        obj = self.expr(e.value)
        idx = self.subscript_index(e.slice)
        self.b.loc = self.loc(e)
        return self.b.getitem(obj, idx)

    def table_entry(self, e: ast.Subscript) -> n.Value | None:
        """``OPS["sq"]``, ``LAYERS[0]``: an entry read by a literal key from a table of
        functions that the function reads from its module or closure (code, never lifted as
        data: ``source.is_table_of_code``), as that function, so that its call is known
        where it is written (inlined, not dispatched at run time). The derivative depends
        on the entry as on a global: a table whose entry is replaced is derived again."""
        if not (isinstance(e.value, ast.Name) and isinstance(e.slice, ast.Constant)):
            return None
        name, key = e.value.id, e.slice.value
        if name in self.env or name in self.locals or self.captured.get(name) is not None:
            return None
        outer = self.parent
        while outer is not None:
            if name in outer.locals:
                return None
            outer = outer.parent
        if not self._only_read_entries(name):
            return None
        found, table = self.resolver.resolve(name)
        if not found or not is_table_of_code(table):
            return None
        try:
            value = table[key]
        except (KeyError, IndexError, TypeError):
            return None  # (the read raises as it runs, as Python's would)
        self.resolver.depend_on_entry(table, key, value)
        self.b.loc = self.loc(e)
        return self.const(value)

    def _only_read_entries(self, name: str) -> bool:
        """Whether the function being lowered (with the functions nested in it) does nothing
        with ``name`` but read its entries by literal keys: a table it writes, passes on or
        calls a method of may change while it runs, which a dependency checked at each
        call would not see."""
        top = self
        while top.parent is not None:
            top = top.parent
        reads: set[int] = set()
        uses: list[ast.Name] = []
        for node in ast.walk(top.node):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                    isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
                reads.add(id(node.value))
            elif isinstance(node, ast.Name) and node.id == name:
                uses.append(node)
            elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return False
        return all(id(u) in reads for u in uses)

    def subscript_index(self, s: ast.expr) -> n.Value:
        if isinstance(s, ast.Tuple) and any(isinstance(x, ast.Slice) for x in s.elts):
            items = [self.subscript_index(x) for x in s.elts]
            return self.b.emit(n.Build("tuple", items, [self.b.value()])).result
        return self.expr(s)

    def expr_Slice(self, e: ast.Slice) -> n.Value:
        parts = [self.expr(x) if x is not None else None for x in (e.lower, e.upper, e.step)]
        return self.b.emit(n.BuildSlice(*parts, [self.b.value()])).result

    def _display(self, kind: str, elts: list[ast.expr]) -> n.Value:
        items, starred = [], []
        for x in elts:
            if isinstance(x, ast.Starred):
                starred.append(len(items))
                items.append(self.expr(x.value))
            else:
                items.append(self.expr(x))
        return self.b.emit(n.Build(kind, items, [self.b.value()], tuple(starred))).result

    def expr_Tuple(self, e: ast.Tuple) -> n.Value:
        return self._display("tuple", e.elts)

    def expr_List(self, e: ast.List) -> n.Value:
        return self._display("list", e.elts)

    def expr_Set(self, e: ast.Set) -> n.Value:
        return self._display("set", e.elts)

    def expr_Dict(self, e: ast.Dict) -> n.Value:
        keys: list[n.Value | None] = []
        values = []
        for k, v in zip(e.keys, e.values):
            keys.append(self.expr(k) if k is not None else None)
            values.append(self.expr(v))
        return self.b.emit(n.BuildDict(keys, values, [self.b.value()])).result

    def expr_JoinedStr(self, e: ast.JoinedStr) -> n.Value:
        parts = [self.expr(v) for v in e.values]
        return self.b.emit(n.JoinStr(parts, [self.b.value()])).result

    def expr_FormattedValue(self, e: ast.FormattedValue) -> n.Value:
        v = self.expr(e.value)
        spec = self.expr(e.format_spec) if e.format_spec is not None else None
        return self.b.emit(n.FormatValue(v, e.conversion, spec, [self.b.value()])).result

    def expr_Lambda(self, e: ast.Lambda) -> n.Value:
        return self.make_function(e)

    def expr_ListComp(self, e: ast.ListComp) -> n.Value:
        return self.comprehension(e, "list")

    def expr_SetComp(self, e: ast.SetComp) -> n.Value:
        return self.comprehension(e, "set")

    def expr_DictComp(self, e: ast.DictComp) -> n.Value:
        return self.comprehension(e, "dict")

    def expr_GeneratorExp(self, e: ast.GeneratorExp) -> n.Value:
        # Evaluated eagerly; ``iter`` keeps ``next(...)`` on it working.
        acc = self.comprehension(e, "list")
        return self.call(iter, acc)

    def expr_Starred(self, e: ast.Starred) -> n.Value:
        raise self.error(e, "a starred expression is only allowed in a call or a display")

    def comprehension(self, e: ast.expr, kind: str) -> n.Value:
        """Lower a comprehension to loops filling a fresh container (eagerly)."""
        loc = self.loc(e)
        if kind == "dict":
            acc = self.b.emit(n.BuildDict([], [], [self.b.value()], loc=loc)).result
        elif kind == "set":
            acc = self.b.emit(n.Build("set", [], [self.b.value()], loc=loc)).result
        else:
            acc = self.b.emit(n.Build("list", [], [self.b.value()], loc=loc)).result
        gens = e.generators  # type: ignore[attr-defined]
        if any(g.is_async for g in gens):
            raise self.error(e, "async comprehensions are not supported")
        # Comprehension variables are local to the comprehension; walrus targets are not.
        outer_env = dict(self.env)
        inner_names = []
        for g in gens:
            _targets_of(g.target, inner_names)
        saved_locals = self.locals
        self.locals = self.locals | set(inner_names)
        walrus = [x.target.id for x in ast.walk(e) if isinstance(x, ast.NamedExpr)]

        def body_for(level: int) -> list[ast.stmt]:
            # Build the equivalent statements and lower them with the ordinary loop code.
            if level == len(gens):
                if kind == "dict":
                    stmt: ast.stmt = ast.Assign(
                        targets=[ast.Subscript(value=ast.Name(".acc", ast.Load()),
                                               slice=e.key, ctx=ast.Store())],  # type: ignore
                        value=e.value)  # type: ignore[attr-defined]
                else:
                    meth = "add" if kind == "set" else "append"
                    # (each made node at the comprehension: its derivative's comments
                    # quote the comprehension's line)
                    acc_ = ast.copy_location(ast.Name(".acc", ast.Load()), e)
                    add = ast.copy_location(ast.Attribute(acc_, meth, ast.Load()), e)
                    stmt = ast.Expr(ast.copy_location(ast.Call(
                        func=add, args=[e.elt], keywords=[]), e))  # type: ignore[attr-defined]
                return [ast.copy_location(stmt, e)]
            g = gens[level]
            inner = body_for(level + 1)
            for cond in reversed(g.ifs):
                inner = [ast.copy_location(ast.If(test=cond, body=inner, orelse=[]), cond)]
            loop = ast.For(target=g.target, iter=g.iter if level else ast.Name(".iter0",
                                                                               ast.Load()),
                           body=inner, orelse=[], type_comment=None)
            return [ast.copy_location(loop, g.iter)]

        self.env[".acc"] = acc
        # The first iterable is evaluated in the enclosing scope, before anything else.
        self.env[".iter0"] = self.expr(gens[0].iter)
        self.locals = self.locals | {".acc", ".iter0"}
        self.block(body_for(0))
        self.locals = saved_locals
        self.leave_comprehension(outer_env, walrus)
        return acc

