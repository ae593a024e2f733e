"""The one rule form: a primitive's derivative declared once, both modes generated from it.

``defderiv(fn, *partials)`` declares ``fn``'s partial derivatives, one per positional
argument, each a lambda of the arguments (``lambda x: math.cos(x)``) that may read the
result through a keyword ``ans`` (``lambda x, *, ans: 1.0 - ans * ans``); ``None`` stands
for an argument with no derivative (an int exponent, a flag). ``deflinear(fn, transpose)``
declares a function linear in one argument, with the function applying its transpose
(called like ``fn``, the cotangent in the linear argument's place).
``cases(fn, *args)`` records sample points at which one harness checks every rule against
central differences, in both modes and to second order (tests/rules/test_form.py).

From a declaration the registry gets a reverse and a forward rule in the shape the
inliner reads (``return value, pullback``), written as Python source with each partial's
*expression* substituted in (the source is registered with ``linecache``, so the frontend
lowers it like a hand-written rule)::

    defderiv(math.tan, lambda x, *, ans: 1.0 + ans * ans)

    def tan_vjp(x):                            def tan_jvp(x):
        ans = math.tan(x)                          ans = math.tan(x)
        return ans, lambda ans_bar: (              return ans, lambda x_dot: (
            ans_bar * (1.0 + ans * ans),)              x_dot * (1.0 + ans * ans))

so generated code reads ``x_bar += y_bar * (1.0 + y * y)``, with no call of the partial.
What every rule needs is done here once, never inside a partial: symbolic zeros (a
``None`` tangent is skipped, a ``None`` partial gives a ``None`` cotangent), a slope of
exactly 1 or -1 applied without a multiplication, and with ``broadcast=True`` (NumPy
functions of several arrays) cotangents summed back to each argument's shape and tangents
broadcast up to the result's. :func:`~wengert.rules.registry.defvjp` and
:func:`~wengert.rules.registry.defjvp` stay the escape hatch for rules that need more:
sequences, several results, in-place updates.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import itertools
import linecache
import sys
import types
from collections.abc import Callable
from typing import Any

from wengert import runtime
from wengert.locate import find_node, parse_file
from wengert.rules import registry, shapes
from wengert.rules.registry import _entry, defjvp, defvjp, lookup, mark_pure

__all__ = ["ans_bar", "cases", "defderiv", "deflinear", "defrule"]

#: The name a transpose reads for the result's cotangent (``lambda x: ans_bar * 2.0``):
#: importable so that the declarations read as plain Python; the generated rule binds it.
ans_bar: Any = None

_serial = itertools.count(1)


def defderiv(fn: Any, *partials: Callable | None, name: str | None = None,
             broadcast: bool = False, pure: bool = True) -> None:
    """Register ``fn``'s reverse and forward rules from its partial derivatives.

    ``partials[i]`` is a lambda of ``fn``'s positional arguments (and, keyword ``ans``, of
    its result) giving the derivative with respect to argument ``i``, or ``None``. The
    lambdas may take more parameters than there are partials, with defaults (``axis=None``):
    static arguments, in ``fn``'s own order, that get no derivative. ``broadcast`` says the
    arguments may be arrays of different shapes broadcast together.
    """
    _declare(fn, "defderiv", pure, dict(sys._getframe(1).f_globals),
             lambda caller: _defderiv(fn, partials, name, broadcast, pure, caller))


def _defderiv(fn: Any, partials: tuple[Callable | None, ...], name: str | None,
              broadcast: bool, pure: bool, caller: dict[str, Any]) -> None:
    """:func:`defderiv`'s rules, built (``caller``: the declaring module's globals)."""
    given = [p for p in partials if p is not None]
    if not given:
        raise ValueError(f"defderiv({name or _name(fn)}): no partial derivative given")
    sig = _signature(given[0])
    if any(_signature(p) != sig for p in given):
        raise ValueError(f"defderiv({_name(fn)}): the partials take different arguments")
    params = [q.name for q in sig]
    if len(partials) > len(params) or len(partials) < len([q for q in sig if q.default is q.empty]):
        raise ValueError(f"defderiv({_name(fn)}): {len(params)} arguments but "
                         f"{len(partials)} partials")
    base = name or _name(fn)
    ns = _namespace(given, caller)
    head = _head(sig, base, ns)
    call = f"{_spelling(fn, ns)}({', '.join(params)})"
    # An in-place operator changes its first argument: the partials read a copy made
    # before (they may not read the result, which later code may change in turn).
    read = params if pure else [f"{params[0]}_old", *params[1:]]
    slopes = [None if p is None else _expression(p, read, pure=pure) for p in partials]
    slopes += [None] * (len(params) - len(slopes))
    # An elementwise function of one argument has its argument's shape: nothing to unbroadcast.
    active = [p for p, d in zip(params, slopes, strict=True) if d is not None]
    spread = broadcast and len(partials) > 1
    plain = [_scaled("ans_bar", d) for d in slopes]
    first = []
    if not pure and any(d is not None and read[0] in d for d in slopes):
        first = [f"    {read[0]} = _snapshot({params[0]})"]
    if spread and not pure:
        first.append(f"    {params[0]}_shape = _shape({params[0]})")
    shape_of = {p: f"_shape({p})" for p in params}
    if spread and not pure:
        shape_of[params[0]] = f"{params[0]}_shape"
    vjp = [f"def {base}_vjp({head}):", *first, f"    ans = {call}"]
    if spread:
        # A float result needs no unbroadcasting (the branch folds away where types are known).
        summed = [b if b == "None" else f"_sum_to({b}, {shape_of[p]}, _shape(ans))"
                  for p, b in zip(params, plain, strict=True)]
        vjp += ["", f"    def {base}_pullback(ans_bar):",
                "        if isinstance(ans, float):",
                f"            return {_tuple(plain)}",
                f"        return {_tuple(summed)}",
                "", f"    return ans, {base}_pullback"]
    else:
        vjp += [f"    return ans, lambda ans_bar: {_tuple(plain)}"]
    dots = [f"{p}_dot" for p in params]
    # A static argument a call leaves out (its default) comes with no tangent either.
    dot_params = ", ".join(d if q.default is q.empty else f"{d}=None" for d, q in zip(dots, sig))
    if len(params) == 1:
        jvp = [f"def {base}_jvp({head}):", *first,
               f"    ans = {call}",
               f"    return ans, lambda {dots[0]}: {_scaled(dots[0], slopes[0])}"]
    elif len(active) == 1 and not spread:
        k = params.index(active[0])
        jvp = [f"def {base}_jvp({head}):", *first,
               f"    ans = {call}",
               f"    return ans, lambda {dot_params}: "
               f"None if {dots[k]} is None else {_scaled(dots[k], slopes[k])}"]
    else:
        jvp = [f"def {base}_jvp({head}):", *first,
               f"    ans = {call}", "",
               f"    def {base}_differential({dot_params}):",
               "        ans_dot = None"]
        for p, d in zip(params, slopes, strict=True):
            if d is None:
                continue
            jvp += [f"        if {p}_dot is not None:"]
            if spread:
                jvp += ["            if not isinstance(ans, float):",
                        f"{' ' * 16}{p}_dot = _broadcast_to({p}_dot, {shape_of[p]}, _shape(ans))"]
            jvp += [f"            term = {_scaled(p + '_dot', d)}",
                    "            ans_dot = term if ans_dot is None else ans_dot + term"]
        jvp += ["        return ans_dot", "", f"    return ans, {base}_differential"]
    _register(fn, base, vjp, jvp, ns)


def deflinear(fn: Any, *transposes: Callable, arg: int | tuple[int, ...] = 0,
              keep: dict[str, Callable] | None = None, tangent: Callable | None = None,
              zeros: bool | str = False, name: str | None = None,
              pure: bool = True) -> None:
    """Register the rules of ``fn``, linear in its argument at position ``arg`` (or jointly
    in the arguments at the positions ``arg`` names; the others are static: shapes, axes,
    indices). ``transposes`` (one per linear argument) give that argument's cotangent from
    the result's, ``ans_bar``: either a lambda of ``fn``'s arguments reading ``ans_bar``
    (its expression is substituted; its parameters and defaults are the rule's), or a
    function called like ``fn`` with ``ans_bar`` in place of the linear argument, with rules
    of its own (usually ``fn`` is declared its transpose in turn). Either way the body calls
    only functions with rules (or Python helpers of this package), so that the rule
    differentiates again. The tangent is ``fn`` applied to the arguments' tangents (or the
    expression of ``tangent``, a lambda of the same parameters, the linear ones standing
    for their tangents), which may carry leading batch axes: a linear function with axes
    takes them counted from the right.

    A transpose must not read a value being differentiated, only its structure (the rule
    may be called, not inlined, in code differentiated again, and a closure over such a
    value cannot be): ``keep`` maps argument names to the non-differentiable function whose
    result the transposes and the tangent read in the argument's place (``shapes.skeleton``:
    its shape, length or keys; ``shapes.const``: an index, a key, a name, as a constant).
    ``zeros=True``: a linear argument that is ``None`` (a symbolic zero) gets ``None`` as its
    cotangent; ``zeros="ans"``: every linear argument does when the result is ``None``.
    """
    _declare(fn, "deflinear", pure, dict(sys._getframe(1).f_globals),
             lambda caller: _deflinear(fn, transposes, arg, keep, tangent, zeros, name,
                                       caller))


def _deflinear(fn: Any, transposes: tuple[Callable, ...], arg: int | tuple[int, ...],
               keep: dict[str, Callable] | None, tangent: Callable | None,
               zeros: bool | str, name: str | None, caller: dict[str, Any]) -> None:
    """:func:`deflinear`'s rules, built (``caller``: the declaring module's globals)."""
    linear = (arg,) if isinstance(arg, int) else tuple(arg)
    if len(transposes) != len(linear):
        raise ValueError(f"deflinear({_name(fn)}): {len(linear)} linear arguments but "
                         f"{len(transposes)} transposes")
    lambdas = [t for t in (*transposes, tangent) if t is not None and _is_lambda(t)]
    ns = _namespace([*transposes, *([tangent] if tangent is not None else [])], caller)
    source = lambdas[0] if lambdas else fn
    sig = _signature(source)
    params = [q.name for q in sig]
    star = _star(source)
    rest = [f"*{star}"] if star else []
    spell = _spelling(fn, ns)
    bars = []
    for k, t in zip(linear, transposes, strict=True):
        if _is_lambda(t):
            bars.append(_expression(t, params, reads=("ans_bar",)))
        else:
            bars.append(f"{_spelling(t, ns)}({', '.join(_swap(params, k, 'ans_bar') + rest)})")
    base = name or _name(fn)
    head = ", ".join([_head(sig, base, ns), *rest])
    call = f"{spell}({', '.join(params + rest)})"
    kept = [f"    {p} = {_spelling(f, ns)}({p})" for p, f in (keep or {}).items()]
    tests = {k: f"{params[k]}_zero" for k in linear} if zeros is True else {}
    if zeros == "ans":
        tests = dict.fromkeys(linear, "ans_zero")
    cotangents = ["None"] * len(params)
    for k, bar in zip(linear, bars, strict=True):
        cotangents[k] = f"None if {tests[k]} else {bar}" if tests else bar
    vjp = [f"def {base}_vjp({head}):", f"    ans = {call}",
           *(f"    {t} = {t[:-5]} is None" for t in dict.fromkeys(tests.values())),
           *kept,
           f"    return ans, lambda ans_bar: {_tuple(cotangents)}"
           + (f" + (None,) * len({star})" if star else "")]
    dots = [f"{p}_dot" if k in linear else p for k, p in enumerate(params)]
    if tangent is not None:
        value = _expression(tangent, dots, reads=tuple(dots[k] for k in linear))
    else:
        value = f"{spell}({', '.join(dots + rest)})"
        if len(params) > 1 and len(linear) == 1:
            value = f"None if {dots[linear[0]]} is None else {value}"
    dot_params = ", ".join(f"{p}_dot" if q.default is q.empty else f"{p}_dot=None"
                           for p, q in zip(params, sig, strict=True))
    if star:
        dot_params += f", *{star}_dot"
    jvp = [f"def {base}_jvp({head}):", f"    ans = {call}",
           *(line for line in kept if line.split(" = ")[0].strip() not in
             {params[k] for k in linear}),
           f"    return ans, lambda {dot_params}: {value}"]
    _register(fn, base, vjp, jvp, ns)


def defrule(fn: Any, pure: bool = False) -> Callable[[Callable], Callable]:
    """Register both of ``fn``'s rules from one function written like ``fn``'s reverse
    rule, but returning ``value, pullback, differential``: the escape hatch for what
    :func:`defderiv` and :func:`deflinear` cannot say (sequences, several results, in-place
    updates, run-time choices), with the part both modes share (the primal, what the
    derivatives read of it) written once. The reverse rule is the function without the
    ``def`` of the differential, the forward rule the function without that of the
    pullback, each compiled from source in the shape the inliner reads."""

    def register(rule: Callable) -> Callable:
        _declare(fn, None, pure, dict(sys._getframe(1).f_globals),
                 lambda caller: _defrule(fn, rule, caller))
        return rule

    return register


def _defrule(fn: Any, rule: Callable, caller: dict[str, Any]) -> None:
    """:func:`defrule`'s rules, built (``caller``: the declaring module's globals)."""
    tree = parse_file(rule.__code__.co_filename)
    node = find_node(tree, rule) if tree is not None else None
    last = node.body[-1] if isinstance(node, ast.FunctionDef) else None
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple)
            and len(last.value.elts) == 3
            and all(isinstance(e, ast.Name) for e in last.value.elts[1:])):
        raise ValueError(f"defrule({_name(fn)}): the rule must end with "
                         f"'return value, pullback, differential'")
    value, back, forth = last.value.elts
    base = _name(fn)
    ns = _namespace([rule], caller)
    sources = []
    for mode, keep, drop in (("vjp", back, forth), ("jvp", forth, back)):
        body = [st for st in node.body[:-1]
                if not (isinstance(st, ast.FunctionDef) and st.name == drop.id)]
        ret = ast.Return(ast.Tuple([value, keep], ast.Load()))
        made = ast.FunctionDef(name=f"{base}_{mode}", args=node.args, body=[*body, ret],
                               decorator_list=[], returns=None, type_comment=None)
        made.type_params = []  # Python 3.12+ reads it
        sources.append(ast.unparse(ast.fix_missing_locations(ast.Module([made], []))))
    _register(fn, base, sources[0].splitlines(), sources[1].splitlines(), ns)


class Keywords(dict):
    """The keyword arguments of a case, as its last entry (:func:`kw`)."""


def kw(**given: Any) -> Keywords:
    """Keyword arguments for a case of a Python definition: ``cases(np.sum, (a, kw(axis=0,
    keepdims=True)))`` calls ``np.sum(a, axis=0, keepdims=True)``."""
    return Keywords(given)


def cases(fn: Any, *args: tuple) -> None:
    """Sample points of ``fn``'s rules (argument tuples), checked by the rule harness
    against central differences in both modes and to second order; for a Python
    definition (:func:`~wengert.rules.registry.defpython`), also its values against
    ``fn``'s. A case's last entry may be :func:`kw`'s keyword arguments."""
    rule = lookup(fn)
    if rule is None:
        raise ValueError(f"cases({_name(fn)}): no rule is registered")
    rule.cases = [*rule.cases, *args]


# ----------------------------------------------------------------------------- helpers


def _scaled(cotangent: str, slope: str | None) -> str:
    """``cotangent`` times ``slope``, as source: unit slopes need no multiplication."""
    if slope is None:
        return "None"
    if slope in ("1", "1.0"):
        return cotangent
    if slope in ("-1", "-1.0", "(-1.0)", "(-1)"):
        return f"-{cotangent}"
    tree = ast.parse(slope, mode="eval").body
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Div) and \
            isinstance(tree.left, ast.Constant) and tree.left.value == 1:
        # A slope 1 / d: divide by d rather than multiply by its reciprocal.
        return ast.unparse(ast.BinOp(ast.Name(cotangent), ast.Div(), tree.right))
    return f"{cotangent} * ({slope})"


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _swap(params: list[str], k: int, name: str) -> list[str]:
    return [name if i == k else p for i, p in enumerate(params)]


def _signature(p: Callable) -> list[inspect.Parameter]:
    """The positional parameters of ``p`` (a partial, a transpose, a primitive)."""
    return [q for q in inspect.signature(p).parameters.values()
            if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]


def _star(p: Callable) -> str | None:
    """The name of ``p``'s ``*args`` parameter, if it has one."""
    return next((q.name for q in inspect.signature(p).parameters.values()
                 if q.kind is q.VAR_POSITIONAL), None)


def _positional(p: Callable) -> list[str]:
    return [q.name for q in _signature(p)]


def _head(sig: list[inspect.Parameter], base: str, ns: dict[str, Any]) -> str:
    """The generated rule's parameter list: ``sig``'s names, its defaults bound in ``ns``."""
    out = []
    for q in sig:
        if q.default is q.empty:
            out.append(q.name)
        else:
            key = f"_{base}_{q.name}_default"
            ns[key] = q.default
            out.append(f"{q.name}={key}")
    return ", ".join(out)


def _is_lambda(f: Any) -> bool:
    return getattr(getattr(f, "__code__", None), "co_name", None) == "<lambda>"


def _expression(partial: Callable, params: list[str], reads: tuple[str, ...] = (),
                pure: bool = True) -> str:
    """The source of ``partial``'s body with its parameters renamed to ``params``; of the
    names the generated rule defines, it may read only ``reads`` (and ``ans`` unless the
    rule is of an in-place operator)."""
    code = getattr(partial, "__code__", None)
    tree = parse_file(code.co_filename) if code is not None else None
    node = find_node(tree, partial) if tree is not None else None
    if not isinstance(node, ast.Lambda):
        raise ValueError(f"a partial derivative must be a lambda written in a file, "
                         f"got {partial!r}")
    rename = dict(zip(_positional(partial), params, strict=True))
    reserved = {"ans_bar", "ans_dot", "term", *(p + "_dot" for p in params)} - set(reads)
    if not pure:
        reserved.add("ans")

    class Rename(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.Name:
            if name.id in reserved:
                raise ValueError(f"a partial derivative may not read {name.id!r}")
            return ast.copy_location(ast.Name(rename.get(name.id, name.id), name.ctx), name)

    return ast.unparse(Rename().visit(ast.parse(ast.unparse(node.body), mode="eval")).body)


def _namespace(fns: list[Callable], caller: dict[str, Any]) -> dict[str, Any]:
    """The globals the generated rule runs in: those of the module declaring the rule
    (``caller``) and of the module the partials come from, the values their closures hold,
    and the broadcasting helpers."""
    ns: dict[str, Any] = dict(caller)
    for f in fns:
        ns.update(getattr(f, "__globals__", {}))
        code = getattr(f, "__code__", None)
        closure = getattr(f, "__closure__", None) or ()
        for var, cell in zip(getattr(code, "co_freevars", ()), closure, strict=True):
            ns[var] = cell.cell_contents
    ns.update(_sum_to=shapes.sum_to, _broadcast_to=shapes.broadcast_to, _shape=shapes.shape,
              _skeleton=shapes.skeleton, _const=shapes.const, _snapshot=runtime.snapshot)
    return ns


def _spelling(fn: Any, ns: dict[str, Any]) -> str:
    """How the generated rule names ``fn``: as the module namespace spells it
    (``math.sin``, ``np.sin``, ``_sum_to``), else under a name bound for it."""
    attr = getattr(fn, "__name__", None)
    for key, value in ns.items():
        if value is fn and not key.startswith("__"):
            return key
    for key, value in ns.items():
        if isinstance(value, types.ModuleType) and attr and getattr(value, attr, None) is fn:
            return f"{key}.{attr}"
    if attr and getattr(builtins, attr, None) is fn and attr not in ns:
        return attr
    key = f"_{_name(fn)}_primal"
    ns[key] = fn
    return key


def _name(fn: Any) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name).lstrip("_") or "fn"


#: Whether declarations are built when their rules are first read (those of wengert's own
#: rule modules, while wengert is imported: :func:`declare_now` ends it) or at once (a
#: user's, whose mistakes are reported at the declaration).
_DEFERRED = True


def _declare(fn: Any, form: str | None, pure: bool, caller: dict[str, Any],
             build: Callable[[dict[str, Any]], None]) -> None:
    """Register ``fn``'s rule as declared (its form, whether it is pure), its reverse and
    forward rules made by ``build`` now or, while wengert's rules are imported, when first
    read (:attr:`~wengert.rules.registry.Rule.pending`). ``caller`` is a copy of the
    declaring module's globals as they are now (a declaration in a loop reads its
    variable's value at the declaration)."""
    entry = _entry(fn)
    entry.form = form
    if pure:
        mark_pure(fn)
    if _DEFERRED or registry.loading_optional:
        entry.pending = functools.partial(build, caller)
    else:
        build(caller)


def declare_now() -> None:
    """Build the rules declared from here on at their declaration (wengert's own are
    declared: the ones not yet read are built when they are)."""
    global _DEFERRED
    _DEFERRED = False


def _register(fn: Any, base: str, vjp: list[str], jvp: list[str], ns: dict[str, Any]) -> None:
    defvjp(fn)(_compile("\n".join(vjp) + "\n", f"{base}_vjp", ns, base))
    defjvp(fn)(_compile("\n".join(jvp) + "\n", f"{base}_jvp", ns, base))


def _compile(source: str, name: str, ns: dict[str, Any], base: str) -> Callable:
    """Compile a generated rule, its source registered where the frontend reads it."""
    filename = f"<wengert:rule:{base}#{next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ns)
    fn = ns.pop(name)
    fn.__module__ = ns.get("__name__", "wengert.rules")
    return fn
