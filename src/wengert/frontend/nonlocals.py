"""``nonlocal``: a nested function that rebinds its enclosing function's variables, made a
function that takes them and gives them back.

::

    def f(x):                              def f(x):
        total = 0.0                            total = 0.0
        def add(v):                            def add(v, *, total):
            nonlocal total                         total += v * v
            total += v * v            ->           return ((total,), None)
        for v in (x, 2 * x):                   for v in (x, 2 * x):
            add(v)                                 (total,), .nonlocal = add(v, total=total)
        return total                           return total

The rewrite is of the function's syntax tree, before it is lowered: what the lowering and
the transforms then see is a plain nested function and plain assignments, differentiated
as any (both modes, any order). It is exactly Python's meaning where the function is only
called as a statement of the function that defines it (``add(v)``, ``y = add(v)``,
``y += add(v)``, ``return add(v)``): the variables are read when it is called and rebound
when it returns, before the statement's own target. Any other use of it (passed on,
stored, called inside an expression or by another nested function, decorated, a
generator) is refused at its line, as is a ``nonlocal`` of a variable the enclosing
function does not assign.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

#: Names the rewrite binds (a ``.`` keeps them apart from every user's name).
_RESULT = ".nonlocal"
_OLD = ".nonlocal_old"

Error = Callable[[ast.AST, str, "str | None"], Exception]

_HINT = "call it as a statement (`add(v)`, `y = add(v)`, `return add(v)`), or pass the " \
        "value in as an argument and return the new value"


def without_nonlocals(fdef: ast.AST, local_names: set[str], error: Error) -> ast.AST:
    """``fdef`` (a function's syntax tree, not changed) with every function defined in it
    that declares ``nonlocal`` names rewritten as the module's docstring says, and each
    call of one; ``fdef`` itself where there is none. ``local_names``: the names
    ``fdef`` binds. ``error(node, message, hint)`` makes the exception raised."""
    if not isinstance(fdef, ast.FunctionDef) or not any(
            _nonlocal_names(d) for d in _nested_defs(fdef.body)):
        return fdef
    fdef = copy.deepcopy(fdef)
    # Each name's variables: those every definition of it declares (a function defined
    # again may rebind others; each takes and gives back them all).
    writers: dict[str, list[str]] = {}
    for d in _nested_defs(fdef.body):
        for name in _nonlocal_names(d):
            if name not in writers.setdefault(d.name, []):
                writers[d.name].append(name)
    for d in list(_nested_defs(fdef.body)):
        names = _nonlocal_names(d)
        if d.name not in writers:
            continue
        for name in names:
            if name not in local_names:
                raise error(d, f"'nonlocal {name}' names a variable of a function around "
                               f"{fdef.name!r}, not of {fdef.name!r} itself", _HINT)
        if d.decorator_list:
            raise error(d, f"{d.name!r} assigns a nonlocal variable and is decorated", _HINT)
        if any(isinstance(x, (ast.Yield, ast.YieldFrom)) for x in _own_nodes(d.body)):
            raise error(d, f"{d.name!r} assigns a nonlocal variable and is a generator",
                        _HINT)
        others = [x for x in writers[d.name] if x not in names]
        params = {a.arg for a in [*d.args.posonlyargs, *d.args.args, *d.args.kwonlyargs,
                                  *[x for x in (d.args.vararg, d.args.kwarg) if x]]}
        bound = {x.id for x in _own_nodes(d.body)
                 if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        if any(x in params or x in bound for x in others):
            raise error(d, f"{d.name!r} is defined again, and this definition has a local "
                           f"variable another one declares nonlocal", _HINT)
        _rewrite_writer(d, writers[d.name])
    for node in _own_nodes(fdef.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                node.id in writers:
            raise error(node, f"{node.id!r} assigns a nonlocal variable, and is assigned "
                              "here", _HINT)
    fdef.body = _rewrite_calls(fdef.body, writers, error)
    ast.fix_missing_locations(fdef)
    return fdef


def _nested_defs(body: list[ast.stmt]) -> Iterator[ast.FunctionDef]:
    """The functions defined by the statements of ``body`` (in its blocks too), not those
    defined inside them."""
    for node in _own_nodes(body):
        if isinstance(node, ast.FunctionDef):
            yield node


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` that belongs to its function: nested functions' and lambdas'
    nodes (but a function definition itself) and classes' are not walked."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _nonlocal_names(d: ast.FunctionDef) -> list[str]:
    names: list[str] = []
    for node in _own_nodes(d.body):
        if isinstance(node, ast.Nonlocal):
            names += [x for x in node.names if x not in names]
    return names


def _state(names: list[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(x, ctx()) for x in names], ctx())


def _rewrite_writer(d: ast.FunctionDef, names: list[str]) -> None:
    """``d`` taking ``names`` as keyword-only parameters and returning ``(names, value)``
    at each ``return`` and at its end, its ``nonlocal`` statements gone."""
    d.args.kwonlyargs += [ast.arg(x) for x in names]
    d.args.kw_defaults += [None] * len(names)

    def block(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            if isinstance(s, ast.Nonlocal):
                continue
            if isinstance(s, ast.Return):
                # (the value first, then the variables, as they are when it returns)
                value = s.value if s.value is not None else ast.Constant(None)
                keep = ast.Assign([ast.Name(_RESULT, ast.Store())], value)
                back = ast.Return(ast.Tuple([_state(names, ast.Load),
                                             ast.Name(_RESULT, ast.Load())], ast.Load()))
                out += [ast.copy_location(keep, s), ast.copy_location(back, s)]
                continue
            _blocks(s, block)
            out.append(s)
        return out

    d.body = block(d.body)
    end = ast.Return(ast.Tuple([_state(names, ast.Load), ast.Constant(None)], ast.Load()))
    d.body.append(ast.copy_location(end, d.body[-1] if d.body else d))


def _blocks(s: ast.stmt, rewrite: Callable[[list[ast.stmt]], list[ast.stmt]]) -> None:
    """Rewrite, in place, the statement lists ``s`` holds (not a nested function's)."""
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(s, field, None)
        if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
            setattr(s, field, rewrite(stmts))
    for h in getattr(s, "handlers", []) or []:
        h.body = rewrite(h.body)
    for c in getattr(s, "cases", []) or []:
        c.body = rewrite(c.body)


def _rewrite_calls(body: list[ast.stmt], writers: dict[str, list[str]],
                   error: Error) -> list[ast.stmt]:
    """``body`` with each statement calling a writer rebinding its variables after."""

    def call_of(value: ast.expr | None) -> tuple[ast.Call, list[str]] | None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                value.func.id in writers:
            return value, writers[value.func.id]
        return None

    def passing(call: ast.Call, names: list[str]) -> ast.Call:
        refuse_uses(call.args + [k.value for k in call.keywords])
        return ast.Call(call.func, call.args, call.keywords + [
            ast.keyword(x, ast.Name(x, ast.Load())) for x in names])

    def refuse_uses(nodes: list[ast.AST]) -> None:
        for node in nodes:
            for x in _all_nodes(node):
                if isinstance(x, ast.Name) and x.id in writers:
                    raise error(x, f"{x.id!r} assigns a nonlocal variable, and is used here "
                                   "other than called as a statement", _HINT)

    def block(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            new = statement(s)
            out += [ast.copy_location(x, s) for x in new]
        return out

    def statement(s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.FunctionDef):
            if s.name not in writers:
                refuse_uses(s.body + s.decorator_list)  # (called by another function)
            else:
                refuse_uses(s.body)  # (calling itself)
            return [s]
        if isinstance(s, ast.Expr) and (found := call_of(s.value)):
            call, names = found
            return [ast.Assign([ast.Tuple([_state(names, ast.Store),
                                           ast.Name(_RESULT, ast.Store())], ast.Store())],
                               passing(call, names))]
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and (found := call_of(s.value)):
            call, names = found
            refuse_uses([s.targets[0]])
            return [ast.Assign([ast.Tuple([_state(names, ast.Store), s.targets[0]],
                                          ast.Store())], passing(call, names))]
        if isinstance(s, ast.Return) and (found := call_of(s.value)):
            call, names = found
            return [ast.Assign([ast.Tuple([_state(names, ast.Store),
                                           ast.Name(_RESULT, ast.Store())], ast.Store())],
                               passing(call, names)),
                    ast.Return(ast.Name(_RESULT, ast.Load()))]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and \
                (found := call_of(s.value)):
            # ``y += add(v)``: ``y`` as it was before the call, plus what it returns.
            call, names = found
            name = s.target.id
            return [ast.Assign([ast.Name(_OLD, ast.Store())], ast.Name(name, ast.Load())),
                    ast.Assign([ast.Tuple([_state(names, ast.Store),
                                           ast.Name(_RESULT, ast.Store())], ast.Store())],
                               passing(call, names)),
                    ast.AugAssign(ast.Name(_OLD, ast.Store()), s.op,
                                  ast.Name(_RESULT, ast.Load())),
                    ast.Assign([ast.Name(name, ast.Store())], ast.Name(_OLD, ast.Load()))]
        own = [x for x in ast.iter_child_nodes(s) if not isinstance(x, (ast.stmt, list))]
        refuse_uses([x for x in own if not isinstance(x, ast.excepthandler)])
        _blocks(s, block)
        return [s]

    return block(body)


def _all_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and every node under it, lambdas' and nested functions' included."""
    return ast.walk(node)
