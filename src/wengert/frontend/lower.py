"""Lowering Python ASTs to the SSA IR.

Local variables live in an environment mapping names to SSA values; ``if``
merges environments into ``If`` results, loops carry the names their bodies
assign. Jumps are normalised here:

* ``continue`` ends the iteration: the body yields what it has;
* ``break`` sets the loop's exit flag (a carried boolean the loop tests after
  each iteration);
* ``return`` sets a returned flag and the return value, and breaks out of
  every enclosing loop.

When an ``if`` has a branch that always jumps, the statements after it are
lowered into the other branch (no flags at all: ``if x < 0: continue`` reads as
it should). Only mixed cases fall back to flags and guarded regions.
"""

from __future__ import annotations

import ast
import importlib
import operator
import sys
from typing import Any

from wengert import runtime
from wengert.diagnostics import SourceLoc, UnsupportedSyntaxError
from wengert.frontend.expressions import (
    ExpressionLowering,
    _changed_names,
    _targets_of,
)
from wengert.frontend.nonlocals import without_nonlocals
from wengert.frontend.source import (
    FunctionSource,
    Resolver,
    get_source,
    unwrap,
)
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.verify import verify

INPLACE: dict[type, Any] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
    ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod,
    ast.Pow: operator.ipow, ast.MatMult: operator.imatmul, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift, ast.BitOr: operator.ior, ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand,
}



#: Statements the frontend refuses, with the hint shown to the user.
UNSUPPORTED_STMTS: dict[type, tuple[str, str]] = {
    ast.Try: ("'try' statements are not supported",
              "move the try/except outside the differentiated function"),
    ast.ClassDef: ("class definitions inside a differentiated function are not supported",
                   "define the class at module level"),
    ast.Global: ("'global' statements are not supported",
                 "pass the value in as an argument and return the new value"),
    ast.Nonlocal: ("'nonlocal' statements are not supported",
                   "pass the value in as an argument and return the new value"),
    ast.AsyncFunctionDef: ("async functions are not supported",
                           "differentiate an ordinary (synchronous) function"),
    ast.AsyncFor: ("'async for' is not supported", "use an ordinary for loop"),
    ast.AsyncWith: ("'async with' is not supported", "use an ordinary with block"),
}
for _name, _msg in (("TryStar", "'try' statements are not supported"),
                    ("Match", "'match' statements are not supported")):
    if hasattr(ast, _name):
        UNSUPPORTED_STMTS[getattr(ast, _name)] = (_msg, "rewrite it with if/elif/else")
UNSUPPORTED_STMTS[ast.Try] = (UNSUPPORTED_STMTS[ast.Try][0],
                              "move the try/except outside the differentiated function")



RETURNED = ".returned"
RETVAL = ".retval"


def lower(f: Any) -> n.Function:
    """Lower a Python callable (function, lambda, method, partial) to verified IR."""
    return lower_with_deps(f)[0]


def lower_with_deps(f: Any) -> tuple[n.Function, list]:
    """Lower ``f`` and return the IR with the names it resolved (for cache checks)."""
    fn, _, _ = unwrap(f)
    src = get_source(fn)
    resolver = Resolver(fn)
    low = FunctionLowering(src, resolver)
    func = low.lower_function()
    verify(func)
    return func, resolver.deps


# ----------------------------------------------------------------------------- scope analysis


def assigned_names(stmts: list[ast.stmt] | list[ast.AST]) -> list[str]:
    """Names bound by these statements (in first-binding order), not looking into nested scopes.

    Walrus targets inside comprehensions bind in the enclosing function, so they count.
    """
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                visit(d)
            out.append(node.name)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.Assign,)):
            visit(node.value)
            for t in node.targets:
                _targets_of(t, out)
                visit_target_exprs(t)
            return
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            if node.value is not None:
                visit(node.value)
            _targets_of(node.target, out)
            visit_target_exprs(node.target)
            return
        if isinstance(node, ast.For):
            visit(node.iter)
            _targets_of(node.target, out)
            for s in node.body + node.orelse:
                visit(s)
            return
        if isinstance(node, ast.withitem):
            visit(node.context_expr)
            if node.optional_vars is not None:
                _targets_of(node.optional_vars, out)
            return
        if isinstance(node, ast.NamedExpr):
            visit(node.value)
            _targets_of(node.target, out)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    def visit_target_exprs(t: ast.AST) -> None:
        if isinstance(t, (ast.Attribute, ast.Subscript)):
            visit(t)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                visit_target_exprs(e)
        elif isinstance(t, ast.Starred):
            visit_target_exprs(t.value)

    for s in stmts:
        visit(s)
    seen: dict[str, None] = {}
    for name in out:
        seen.setdefault(name, None)
    return list(seen)


def _escapes(stmts: list[ast.stmt]) -> set[str]:
    """Jump kinds (``return``/``break``/``continue``) that may leave these statements."""
    out: set[str] = set()

    def visit(s: ast.AST, in_loop: bool) -> None:
        if isinstance(s, ast.Return):
            out.add("return")
        elif isinstance(s, ast.Break):
            if not in_loop:
                out.add("break")
        elif isinstance(s, ast.Continue):
            if not in_loop:
                out.add("continue")
        elif isinstance(s, (ast.For, ast.While)):
            for b in s.body:
                visit(b, True)
            for b in s.orelse:
                visit(b, in_loop)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        elif isinstance(s, ast.stmt):
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
                    visit(child, in_loop)
                elif isinstance(child, ast.match_case if hasattr(ast, "match_case") else ()):
                    for b in child.body:
                        visit(b, in_loop)

    for s in stmts:
        visit(s, False)
    return out


def _always_jumps(stmts: list[ast.stmt]) -> bool:
    """Whether control can never fall off the end of these statements."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return True
        if isinstance(s, ast.If) and _always_jumps(s.body) and _always_jumps(s.orelse):
            return True
    return False


# ----------------------------------------------------------------------------- lowering


class FunctionLowering(ExpressionLowering):
    """Lowers one function (or lambda) body; nested functions get a child lowering."""

    def __init__(self, src: FunctionSource, resolver: Resolver,
                 parent: FunctionLowering | None = None,
                 node: ast.FunctionDef | ast.Lambda | None = None) -> None:
        self.src = src
        self.resolver = resolver
        self.parent = parent
        self.node = node if node is not None else src.node
        self.b = Builder()
        self.env: dict[str, n.Value] = {}
        self.loop_depth = 0
        # (nested functions that rebind this one's variables take and return them)
        self.node = without_nonlocals(self.node, set(self._local_names()), self.error)
        self.locals = set(self._local_names())
        # Names of the enclosing functions' locals this function reads (closures).
        self.captured: dict[str, n.Value] = {}
        self._rebound: set[str] = set()
        #: Captured names the enclosing function reassigns later: (name, node).
        self.late_captures: list[tuple[str, ast.AST]] = []
        #: Reads of names a loop around this function binds again at its next pass.
        self.iteration_captures: list[tuple[str, ast.AST]] = []
        self._rebound_by_loop: set[str] = set()
        #: Set while lowering a callee or argument that is called before anything else runs.
        self.called_at_once = False
        #: Whether the call being lowered has its result called at once (``grad(f)(x)``).
        self.result_called = False

    # -- helpers ------------------------------------------------------------------------------

    def loc(self, node: ast.AST) -> SourceLoc:
        lineno = getattr(node, "lineno", None) or getattr(self.node, "lineno", 1)
        text = self.src.lines[lineno - 1].rstrip("\n") if 0 < lineno <= len(self.src.lines) else ""
        end_lineno = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_col is not None and end_lineno == lineno:
            end_col = _char_col(text, end_col)
        return SourceLoc(self.src.filename, lineno, _char_col(text, getattr(node, "col_offset", 0)),
                         end_lineno, end_col, text)

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(message, self.loc(node), hint)

    def _local_names(self) -> list[str]:
        a = self.node.args
        params = [x.arg for x in a.posonlyargs + a.args]
        if a.vararg:
            params.append(a.vararg.arg)
        params += [x.arg for x in a.kwonlyargs]
        if a.kwarg:
            params.append(a.kwarg.arg)
        self.params = params
        body = self.node.body if isinstance(self.node.body, list) else [self.node.body]
        return params + assigned_names(body)

    def signature(self) -> n.Signature:
        a = self.node.args
        return n.Signature(
            posonly=[x.arg for x in a.posonlyargs], args=[x.arg for x in a.args],
            vararg=a.vararg.arg if a.vararg else None, kwonly=[x.arg for x in a.kwonlyargs],
            kwarg=a.kwarg.arg if a.kwarg else None)

    def const(self, value: Any, origin: str | None = None, root: Any = None) -> n.Value:
        return self.b.emit(n.Const(value, [self.b.value()], origin, root=root)).result

    def call(self, fn: Any, *args: n.Value, hint: str | None = None) -> n.Value:
        fv = fn if isinstance(fn, n.Value) else self.const(fn, _origin_of(fn))
        return self.b.emit(n.Call(fv, list(args), [], [self.b.value(hint)])).result

    # -- functions ----------------------------------------------------------------------------

    def lower_function(self) -> n.Function:
        node = self.node
        if isinstance(node, ast.AsyncFunctionDef):
            msg, hint = UNSUPPORTED_STMTS[ast.AsyncFunctionDef]
            raise self.error(node, msg, hint)
        self.b.loc = self.loc(node)
        sig = self.signature()
        args = [n.Value(n.UserName(p), self.b.loc) for p in sig.names()]
        self.b.region.args = args
        for p, v in zip(sig.names(), args):
            self.env[p] = v
        self.env[RETURNED] = self.const(False)
        self.env[RETVAL] = self.const(None)
        docstring = None
        if isinstance(node, ast.Lambda):
            self.b.loc = self.loc(node.body)
            self.env[RETVAL] = self.expr(node.body)
        else:
            body = node.body
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                body = body[1:]
            self.block(body)
        ret = n.Return(self.env[RETVAL])
        self.b.emit(ret)
        name = node.name if isinstance(node, ast.FunctionDef) else "<lambda>"
        lines = {i + 1: t.rstrip("\n") for i, t in enumerate(self.src.lines)
                 if node.lineno <= i + 1 <= (node.end_lineno or node.lineno)}
        return n.Function(name, sig, self.b.region, self.src.filename, self.loc(node), lines,
                          docstring)

    # -- statements ---------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt]) -> bool:
        """Lower statements; return whether control may fall off the end normally."""
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            esc = _escapes([s])
            if isinstance(s, ast.If) and (esc or _always_jumps(s.body)
                                          or _always_jumps(s.orelse)):
                t_ft = not _always_jumps(s.body)
                e_ft = not _always_jumps(s.orelse)
                if t_ft + e_ft <= 1:
                    # Continuation form: what follows runs only in the branch that falls through.
                    return self.if_stmt(s, rest if t_ft else [], rest if e_ft else [])
            self.b.loc = self.loc(s)
            if not self.stmt(s):
                return False
            if esc and rest:
                return self.guarded(esc, rest)
        return True

    def guarded(self, esc: set[str], rest: list[ast.stmt]) -> bool:
        """Run ``rest`` only if no jump in ``esc`` happened (flags fallback)."""
        flags = []
        if "return" in esc:
            flags.append(self.env[RETURNED])
        if "break" in esc and self.loop_depth:
            flags.append(self.env[_brk(self.loop_depth)])
        if "continue" in esc and self.loop_depth:
            flags.append(self.env[_cont(self.loop_depth)])
        cond = flags[0]
        for f in flags[1:]:
            cond = self.call(operator.or_, cond, f)
        ft = [True]

        def orelse() -> None:
            ft[0] = self.block(rest)

        self.branch(cond, lambda: None, orelse)
        return ft[0]

    def stmt(self, s: ast.stmt) -> bool:
        """Lower one statement; return whether control may continue after it."""
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            msg, hint = UNSUPPORTED_STMTS.get(
                type(s), (f"'{type(s).__name__}' statements are not supported", None))
            raise self.error(s, msg, hint)
        res = method(s)
        return True if res is None else res

    def stmt_Expr(self, s: ast.Expr) -> None:
        self.expr(s.value)

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Delete(self, s: ast.Delete) -> None:
        # ``del name`` unbinds the local (a later read raises as Python does); ``del x[k]``
        # is a call of ``runtime.delete_item``, which the transforms make ``x.pop(k)`` on a
        # dict, or on a list under an int.
        targets = list(s.targets)
        while targets:
            t = targets.pop(0)
            if isinstance(t, (ast.Tuple, ast.List)):
                targets[:0] = t.elts
            elif isinstance(t, ast.Name):
                self.load_name(t.id, t)  # (a name not bound here raises, as ``del`` does)
                self.env.pop(t.id, None)
            elif isinstance(t, ast.Subscript):
                obj = self.expr(t.value)
                idx = self.subscript_index(t.slice)
                self.b.loc = self.loc(t)
                self.call(runtime.delete_item, obj, idx)
            else:
                raise self.error(t, "'del' of an attribute is not supported",
                                 "set the attribute to None, or build a new object instead")

    def stmt_Import(self, s: ast.Import) -> None:
        # ``import m`` in a function binds a local name to a module. Python imports a module
        # once per process, so it is imported here, once, and the name bound to it.
        for alias in s.names:
            module = self.imported(s, alias.name)
            if alias.asname is None:
                name = alias.name.split(".")[0]
                module = sys.modules[name]  # ``import a.b`` binds ``a``
            else:
                name = alias.asname
            self.env[name] = self.const(module, name)

    def stmt_ImportFrom(self, s: ast.ImportFrom) -> None:
        if s.level:
            raise self.error(s, "relative imports inside a differentiated function "
                                "are not supported", "import at module level")
        module = self.imported(s, s.module or "")
        for alias in s.names:
            if hasattr(module, alias.name):
                value = getattr(module, alias.name)
            else:  # a submodule not yet an attribute of its package
                value = self.imported(s, f"{s.module}.{alias.name}")
            name = alias.asname or alias.name
            self.env[name] = self.const(value, name)

    def imported(self, s: ast.stmt, name: str) -> Any:
        try:
            return importlib.import_module(name)
        except ImportError as e:
            raise self.error(s, f"cannot import {name!r}: {e}", "check the module's name") \
                from None

    def stmt_Assign(self, s: ast.Assign) -> None:
        pairs = _pairwise(s.targets, s.value)
        if pairs is not None:
            # ``a, b = x, y`` (a swap ``m[i], m[k] = m[k], m[i]`` too) is the assignments of
            # its items, all values first as Python evaluates them: no tuple is built to be
            # unpacked, so what each target receives stays the value it is (a row of ``m``),
            # for the analyses as for the generated code.
            values = [self.expr(e, hint=_single_name([t])) for t, e in pairs]
            for (t, _), v in zip(pairs, values):
                self.assign(t, v)
            return
        value = self.expr(s.value, hint=_single_name(s.targets))
        for t in s.targets:
            self.assign(t, value)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            if not isinstance(s.target, ast.Name):
                self.expr(_target_object(s.target))
            return
        value = self.expr(s.value, hint=_single_name([s.target]))
        self.assign(s.target, value)

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        fn = INPLACE[type(s.op)]
        t = s.target
        if isinstance(t, ast.Name):
            cur = self.load_name(t.id, t)
            rhs = self.expr(s.value)
            self.b.loc = self.loc(s)
            self.env[t.id] = self.call(fn, cur, rhs, hint=n.UserName(t.id))
        elif isinstance(t, ast.Attribute):
            obj = self.expr(t.value)
            cur = self.b.getattr(obj, t.attr)
            rhs = self.expr(s.value)
            self.b.loc = self.loc(s)
            new = self.call(fn, cur, rhs)
            self.b.emit(n.SetAttr(obj, t.attr, new))
        elif isinstance(t, ast.Subscript):
            obj = self.expr(t.value)
            idx = self.subscript_index(t.slice)
            cur = self.b.getitem(obj, idx)
            rhs = self.expr(s.value)
            self.b.loc = self.loc(s)
            new = self.call(fn, cur, rhs)
            self.b.emit(n.SetItem(obj, idx, new))
        else:  # pragma: no cover - the parser allows nothing else
            raise self.error(t, "unsupported augmented assignment target")

    def stmt_Assert(self, s: ast.Assert) -> None:
        test = self.expr(s.test)

        def fail() -> None:
            exc = self.const(AssertionError, "AssertionError")
            if s.msg is not None:
                exc = self.call(exc, self.expr(s.msg))
            self.b.emit(n.Raise(exc, None))

        self.branch(test, lambda: None, fail)

    def stmt_Raise(self, s: ast.Raise) -> bool:
        exc = self.expr(s.exc) if s.exc is not None else None
        cause = self.expr(s.cause) if s.cause is not None else None
        self.b.emit(n.Raise(exc, cause))
        return False

    def stmt_Return(self, s: ast.Return) -> bool:
        value = self.expr(s.value) if s.value is not None else self.const(None)
        self.env[RETVAL] = value
        self.env[RETURNED] = self.const(True)
        return False

    def stmt_Break(self, s: ast.Break) -> bool:
        self.env[_brk(self.loop_depth)] = self.const(True)
        return False

    def stmt_Continue(self, s: ast.Continue) -> bool:
        self.env[_cont(self.loop_depth)] = self.const(True)
        return False

    def stmt_If(self, s: ast.If) -> bool:
        return self.if_stmt(s, [], [])

    def if_stmt(self, s: ast.If, then_rest: list[ast.stmt], else_rest: list[ast.stmt]) -> bool:
        self.b.loc = self.loc(s)
        cond = self.expr(s.test)
        ft = [True, True]

        def then() -> None:
            ft[0] = self.block(s.body + then_rest)

        def orelse() -> None:
            ft[1] = self.block(s.orelse + else_rest)

        self.branch(cond, then, orelse, loc=self.loc(s))
        return ft[0] or ft[1]

    def branch(self, cond: n.Value, then, orelse, loc: SourceLoc | None = None) -> None:
        """Emit an ``If`` whose regions run ``then``/``orelse`` and merge the environments."""
        loc = loc or self.b.loc
        before = dict(self.env)
        regions = []
        envs = []
        for fill in (then, orelse):
            region = n.Region()
            self.env = dict(before)
            with self.b.at(region):
                fill()
            regions.append(region)
            envs.append(self.env)
        merged = _changed_names(before, envs)
        results = []
        for region, env in zip(regions, envs):
            values = []
            with self.b.at(region):
                for name in merged:
                    values.append(env[name] if name in env else self.const(n.UNBOUND))
                self.b.emit(n.Yield(values, loc=loc))
        for name in merged:
            results.append(n.Value(_user_hint(name), loc))
        self.b.emit(n.If(cond, regions[0], regions[1], results, loc=loc))
        self.env = dict(before)
        for name, v in zip(merged, results):
            self.env[name] = v

    def loop_names(self, target: ast.AST | None, test: ast.expr | None,
                   body: list[ast.stmt]) -> list[str]:
        """Names a loop carries: its target, walrus targets of its test, names its body binds."""
        names: list[str] = []
        if target is not None:
            _targets_of(target, names)
        if test is not None:
            names += [x.target.id for x in ast.walk(test) if isinstance(x, ast.NamedExpr)]
        names += assigned_names(body)
        if "return" in _escapes(body):
            names += [RETURNED, RETVAL]
        return list(dict.fromkeys(names))

    def stmt_For(self, s: ast.For) -> bool:
        iterable = self.expr(s.iter)
        self.b.loc = self.loc(s)
        return self.loop(s, iterable, s.target, s.body, s.orelse)

    def loop(self, s: ast.AST, iterable: n.Value | None, target: ast.AST | None,
             body: list[ast.stmt], orelse: list[ast.stmt], test: ast.expr | None = None) -> bool:
        """Lower a ``for`` (``iterable`` given) or ``while`` (``test`` given) loop."""
        loc = self.loc(s)
        depth = self.loop_depth + 1
        brk = _brk(depth)
        names = self.loop_names(target, test, body)
        body_esc = _escapes(body)
        has_break = "break" in body_esc
        may_return = "return" in body_esc
        carried = [x for x in names if x in self.locals or x.startswith(".")]
        if has_break:
            carried.append(brk)
        before = dict(self.env)
        inits = []
        for name in carried:
            if name == brk:
                inits.append(self.const(False))
            elif name in self.env:
                inits.append(self.env[name])
            else:
                inits.append(self.const(n.UNBOUND))
        args = [n.Value(_user_hint(x), loc) for x in carried]
        self.loop_depth = depth
        body_region = n.Region()
        cond_region = n.Region()
        self.env = dict(before)
        for name, a in zip(carried, args):
            self.env[name] = a
        if test is not None:
            with self.b.at(cond_region):
                c = self.expr(test)
                self.b.emit(n.Yield([c], loc=loc))
        with self.b.at(body_region):
            if target is not None:
                item = n.Value(_single_name([target]) or "item", loc)
                body_region.args.append(item)
                self.assign(target, item)
            self.env[_cont(depth)] = self.const(False)
            self.block(body)
            self.b.loc = loc
            self.b.emit(n.Yield([self.env[x] if x in self.env else self.const(n.UNBOUND)
                                 for x in carried], loc=loc))
        self.loop_depth = depth - 1
        exit_flags = [carried.index(brk)] if has_break else []
        if may_return:
            exit_flags.append(carried.index(RETURNED))
        results = [n.Value(_user_hint(x), loc) for x in carried]
        if test is None:
            body_region.args[1:] = args
            self.b.emit(n.For(iterable, inits, body_region, results, exit_flags, loc=loc))
        else:
            self.b.emit(n.While(inits, args, cond_region, body_region, results, exit_flags,
                                loc=loc))
        self.env = dict(before)
        for name, r in zip(carried, results):
            if name != brk:
                self.env[name] = r
        self.b.loc = loc
        if orelse:
            # ``else`` runs when the loop ended without break (or return).
            flags = [results[i] for i in exit_flags]
            if not flags:
                return self.block(orelse)
            cond = flags[0]
            for f in flags[1:]:
                cond = self.call(operator.or_, cond, f)
            self.branch(cond, lambda: None, lambda: self.block(orelse))
        return True

    def stmt_While(self, s: ast.While) -> bool:
        if not any(isinstance(x, ast.NamedExpr) for x in ast.walk(s.test)):
            return self.loop(s, None, None, s.body, s.orelse, s.test)
        # A walrus in the condition binds a name the body reads, so the test moves into
        # the body: ``while True: if not test: <exited> = True; break`` + body; the
        # ``else`` clause runs exactly when the loop ended through the test.
        exited = ".while_exit"
        self.locals = self.locals | {exited}
        self.env[exited] = self.const(False)
        flag = ast.Assign(targets=[ast.Name(exited, ast.Store())], value=ast.Constant(True))
        guard = ast.If(test=ast.UnaryOp(ast.Not(), s.test), body=[flag, ast.Break()], orelse=[])
        for node in (guard, guard.test, flag, flag.targets[0], flag.value, guard.body[1]):
            ast.copy_location(node, s.test)
        self.loop(s, None, None, [guard] + s.body, [], ast.Constant(True))
        if s.orelse:
            self.branch(self.env[exited], lambda: self.block(s.orelse), lambda: None)
        self.env.pop(exited, None)
        return True

    def stmt_With(self, s: ast.With) -> bool:
        return self.with_items(s, list(s.items))

    def with_items(self, s: ast.With, items: list[ast.withitem]) -> bool:
        item = items[0]
        mgr = self.expr(item.context_expr)
        self.b.loc = self.loc(s)
        before = dict(self.env)
        region = n.Region()
        target = n.Value(_single_name([item.optional_vars]) if item.optional_vars else None,
                         self.loc(s))
        region.args.append(target)
        ft = [True]
        with self.b.at(region):
            if item.optional_vars is not None:
                self.assign(item.optional_vars, target)
            if len(items) > 1:
                ft[0] = self.with_items(s, items[1:])
            else:
                ft[0] = self.block(s.body)
        merged = _changed_names(before, [self.env])
        after = self.env
        with self.b.at(region):
            self.b.emit(n.Yield([after[x] for x in merged]))
        results = [n.Value(_user_hint(x), self.loc(s)) for x in merged]
        self.env = before
        inits = [before[x] if x in before else self.const(n.UNBOUND) for x in merged]
        self.b.emit(n.With(mgr, inits, region, results, loc=self.loc(s)))
        self.env = dict(before)
        for name, r in zip(merged, results):
            self.env[name] = r
        # A with block may swallow an exception, so a jump in it is not certain: the
        # rest is guarded by the flags in the caller when the body can jump.
        return True

    def stmt_FunctionDef(self, s: ast.FunctionDef) -> None:
        decorators = [self.expr(d) for d in s.decorator_list]
        self.b.loc = self.loc(s)
        fv = self.make_function(s)
        for d in reversed(decorators):
            fv = self.call(d, fv, hint=n.UserName(s.name))
        self.env[s.name] = fv

    # -- assignment ---------------------------------------------------------------------------

    def assign(self, target: ast.AST, value: n.Value) -> None:
        if isinstance(target, ast.Name):
            if value.hint is None:
                value.hint = n.UserName(target.id)
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            results = [n.Value(_single_name([e.value if isinstance(e, ast.Starred) else e]),
                               self.b.loc) for e in target.elts]
            self.b.emit(n.Unpack(value, results, star))
            for e, r in zip(target.elts, results):
                self.assign(e.value if isinstance(e, ast.Starred) else e, r)
        elif isinstance(target, ast.Attribute):
            obj = self.expr(target.value)
            self.b.emit(n.SetAttr(obj, target.attr, value))
        elif isinstance(target, ast.Subscript):
            obj = self.expr(target.value)
            idx = self.subscript_index(target.slice)
            self.b.emit(n.SetItem(obj, idx, value))
        elif isinstance(target, ast.Starred):
            raise self.error(target, "a starred assignment target must be in a tuple or list")
        else:
            raise self.error(target, f"cannot assign to {type(target).__name__}")

    # -- names --------------------------------------------------------------------------------

    def load_name(self, name: str, node: ast.AST) -> n.Value:
        if name in self.env:
            return self.env[name]
        if name in self.locals:
            self.b.loc = self.loc(node)
            return self.call(runtime.unbound_local, self.const(name))
        outer = self.parent
        while outer is not None:
            if name in outer.locals:
                return self.capture(name, node)
            outer = outer.parent
        found, value = self.resolver.resolve(name)
        if not found:
            return self.call(runtime.name_error, self.const(name))
        return self.const(value, name)

    def capture(self, name: str, node: ast.AST) -> n.Value:
        """Read an enclosing function's local from inside a nested function."""
        if name in self.captured:
            return self.captured[name]
        owner = self.parent
        assert owner is not None
        if name not in owner.locals:
            v = owner.capture(name, node)
        else:
            if name not in owner.env:
                raise self.error(node, f"the nested function reads {name!r} before the enclosing "
                                       f"function assigns it",
                                 "define the variable before the nested function")
            v = owner.env[name]
            if name in owner.rebound_after_def:
                # Only sound if the function runs before ``name`` changes: checked by
                # the owner once it knows how the function value is used.
                self.late_captures.append((name, node))
            elif name in owner._rebound_by_loop:
                # Bound again by the next pass of a loop only: sound while the function is
                # called in this pass (known once the helpers it is given are inlined).
                self.iteration_captures.append((name, node))
        self.captured[name] = v
        return v

    # -- nested functions ---------------------------------------------------------------------

    @property
    def rebound_after_def(self) -> set[str]:
        """Names a nested function being lowered right now must not capture."""
        return self._rebound

    def make_function(self, node: ast.FunctionDef | ast.Lambda) -> n.Value:
        a = node.args
        defaults = [self.expr(d) for d in a.defaults]
        kw_defaults = [self.expr(d) if d is not None else None for d in a.kw_defaults]
        self.b.loc = self.loc(node)
        self._rebound, self._rebound_by_loop = self._names_rebound_after(node)
        result = self.b.value(n.UserName(node.name) if isinstance(node, ast.FunctionDef)
                              else None)
        saved = self.env.get(getattr(node, "name", ""), None)
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            # A recursive nested function refers to itself through its own name.
            self.env[node.name] = result
        child = FunctionLowering(self.src, self.resolver, parent=self, node=node)
        func = child.lower_function()
        if child.late_captures and not (self.called_at_once and isinstance(node, ast.Lambda)):
            name, where = child.late_captures[0]
            raise self.error(
                where, f"the nested function reads {name!r}, which the enclosing function "
                       f"assigns again after defining it",
                "Python closures see the latest value; pass it as a default argument "
                f"({name}={name}) to capture the current one")
        if isinstance(node, ast.FunctionDef):
            if saved is None:
                self.env.pop(node.name, None)
            else:
                self.env[node.name] = saved
        self._rebound, self._rebound_by_loop = set(), set()
        op = n.MakeFunction(func, defaults, kw_defaults, [result],
                            is_lambda=isinstance(node, ast.Lambda))
        if child.iteration_captures and not (self.called_at_once and
                                             isinstance(node, ast.Lambda)):
            name, where = child.iteration_captures[0]
            op.per_iteration = (name, self.loc(where))
        return self.b.emit(op).result

    def _names_rebound_after(self, node: ast.AST) -> tuple[set[str], set[str]]:
        """Locals assigned after ``node``, and those assigned only by the passes of a loop
        around it (its targets, what its body assigns before ``node``).

        A nested function sees such a name's *latest* value in Python (late binding),
        which an SSA capture cannot reproduce: reading one of the first is refused, one of
        the second allowed while the function is called only in the pass that made it.
        """
        out: set[str] = set()
        by_loop: set[str] = set()
        pos = (node.lineno, node.col_offset)
        inside = {id(x) for x in ast.walk(node)}  # (one walk, not one per node of the scope)
        for s in _same_scope_nodes(self.node):
            if id(s) in inside:
                continue
            if isinstance(s, ast.stmt) and (s.lineno, s.col_offset) > pos:
                out.update(assigned_names([s]))
            if isinstance(s, (ast.For, ast.While)) and _contains(s, node):
                by_loop.update(assigned_names(s.body + s.orelse))
                if isinstance(s, ast.For):
                    names: list[str] = []
                    _targets_of(s.target, names)
                    by_loop.update(names)
            if isinstance(s, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
                    and _contains(s, node):
                for g in s.generators:
                    names = []
                    _targets_of(g.target, names)
                    by_loop.update(names)
        return out, by_loop - out


def _same_scope_nodes(fn: ast.AST):
    """Every node of ``fn``'s body that belongs to ``fn``'s own scope (nested defs excluded)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))




def _char_col(text: str, byte_col: int) -> int:
    """``ast`` columns count UTF-8 bytes; diagnostics count characters."""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(x is inner for x in ast.walk(outer))


def _pairwise(targets: list[ast.expr], value: ast.expr) -> list[tuple[ast.expr, ast.expr]] | None:
    """The (target, value) pairs of ``a, b = x, y``: one tuple or list target and a tuple
    display of as many items, no starred item on either side; else ``None``."""
    if len(targets) != 1 or not isinstance(targets[0], (ast.Tuple, ast.List)) or \
            not isinstance(value, ast.Tuple) or len(targets[0].elts) != len(value.elts):
        return None
    items = [*targets[0].elts, *value.elts]
    if any(isinstance(e, ast.Starred) for e in items):
        return None
    return list(zip(targets[0].elts, value.elts))


def _single_name(targets: list[ast.AST]) -> str | None:
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return n.UserName(targets[0].id)
    return None


def _target_object(t: ast.AST) -> ast.expr:
    return t.value  # type: ignore[attr-defined]


def _user_hint(name: str) -> str | None:
    return {RETURNED: "returned", RETVAL: "result"}.get(name) or (
        "break" if name.startswith(".break") else None if name.startswith(".")
        else n.UserName(name))


def _brk(depth: int) -> str:
    return f".break{depth}"


def _cont(depth: int) -> str:
    return f".cont{depth}"


def _origin_of(fn: Any) -> str | None:
    mod = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if mod in ("_operator", "operator") and name:
        return f"operator.{name}"
    return None
