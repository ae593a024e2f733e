"""Inlining small user functions into the function being differentiated.

A call of a helper costs CPython a frame, and its derivative costs more: a derived
VJP returns a pullback closure per call, which the caller saves and calls back. For
a small helper (``accel(theta, length)`` called four times per RK4 step) that is most
of the gradient's time. Inlining the helper's IR at the call site before the
transform gives one function to differentiate: residuals are plain values, adjoints
plain ``+=``, exactly what a person writing the adjoint by hand would do.

Inlining is exact (Python evaluates the same operations in the same order; only the
frames differ), so it needs no type information. Arguments bind to parameters as
Python binds them (:func:`bind_call`): positional, by keyword, defaults (the objects
the ``def`` evaluated), ``*args`` as a tuple, ``**kwargs`` as a dict. It is limited to
calls without ``*``/``**`` splats, of functions that are neither recursive nor
generators, and to a size budget, so generated code stays readable.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from wengert.ir import nodes as n
from wengert.ir.clone import clone_function, substitute
from wengert.ir.uses import replace_uses
from wengert.locate import in_standard_library

#: Largest callee inlined (IR ops, nested regions included).
MAX_CALLEE_OPS = 40
#: Largest callee inlined when it is given a function defined here (a lambda, a nested
#: def), or returns one it defines (a factory): inlined, the calls of that function are
#: calls of a known function, which both modes differentiate with its captures; passed on
#: or returned, it could only be refused.
MAX_HIGHER_ORDER_OPS = 400
#: Depth of inlining inside inlined code.
MAX_DEPTH = 3
#: Total ops that inlining may add to one function.
MAX_GROWTH = 1200

_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200  # generators and coroutines


def inline_calls(fn: n.Function, callee_ir: Callable[[Any], n.Function | None]) -> int:
    """Inline small user functions called in ``fn`` (in place); returns how many.

    ``callee_ir(f)`` gives the IR of the Python function ``f`` (or ``None`` when it has
    none); whatever it resolves is the caller's business (cache dependencies).
    """
    consts: dict[int, Any] = {}
    for op in n.walk(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
    budget = MAX_GROWTH
    count = 0
    mapping: dict[int, n.Value] = {}

    nested: dict[int, n.MakeFunction] = {}

    def region(r: n.Region, depth: int, stack: tuple[int, ...]) -> None:
        nonlocal budget, count
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            if isinstance(op, n.MakeFunction):
                nested[op.result.id] = op
            ir, bound, key = None, None, None
            if isinstance(op, n.Call) and depth < MAX_DEPTH:
                target = _target(op, consts)
                mk = nested.get(op.fn.id)
                if target is not None and id(target.__code__) not in stack:
                    ir, key = callee_ir(target), id(target.__code__)
                    if ir is not None and _same_function(ir, fn):
                        ir = None  # the function itself: recursion stays a call
                    bound = bind_call(target, op) if ir is not None else None
                elif mk is not None and id(mk.func) not in stack and \
                        not _recursive(mk) and not op.starred:
                    ir, key = mk.func, id(mk.func)
                    bound = bind_nested(mk, op)
            if bound is not None and _inlinable(ir):
                size = sum(1 for _ in n.walk(ir.body))
                # A function defined here is part of this one: inlined whatever its size.
                # So is a library function's Python definition (rules.registry.defpython):
                # it stands for a primitive, and a call of it could not be differentiated
                # again.
                limit = MAX_HIGHER_ORDER_OPS if op.fn.id in nested or \
                    any(a.id in nested for a in op.operands()[1:]) or \
                    _returns_function(ir) or \
                    getattr(consts.get(op.fn.id), "__wengert_inline__", False) \
                    else MAX_CALLEE_OPS
                if size <= limit and size <= budget:
                    body = _instantiate(ir, bound, consts)
                    if ir is not None and mk is None and (str(getattr(
                            target, "__module__", "")).startswith("wengert.") or
                            _standard_library(target)):
                        # A library function's definition (or a helper of generated code,
                        # differentiated again) stands for the call the user wrote: its
                        # code is at the user's line (``# grad of:`` comments,
                        # errors, tracebacks), not at a line of wengert's or of the
                        # standard library's (``p._replace(x=a)`` refused inside
                        # ``collections``: the user's call is what to change).
                        for inner_op in n.walk(n.Region([], body)):
                            inner_op.loc = op.loc
                    ret = body.pop()
                    assert isinstance(ret, n.Return)
                    mapping[op.result.id] = ret.value
                    if ret.value.hint is None:
                        ret.value.hint = op.result.hint  # ``k1w = accel(...)`` keeps its name
                    budget -= size
                    count += 1
                    inner = n.Region([], body)
                    region(inner, depth + 1, (*stack, key))
                    r.ops[k:k + 1] = inner.ops
                    k += len(inner.ops)
                    continue
            if not isinstance(op, n.MakeFunction):
                for sub in op.regions():
                    region(sub, depth, stack)
            k += 1

    region(fn.body, 0, ())
    replace_uses(fn, mapping)
    return count


def _target(op: n.Call, consts: dict[int, Any]) -> Any:
    if op.starred or any(k is None for k, _ in op.kwargs) or op.fn.id not in consts:
        return None
    f = consts[op.fn.id]
    if f is dataclasses.replace:
        return None  # rewritten as a construction once the class is known (devirtualize)
    module = getattr(f, "__module__", None) or ""
    if not isinstance(f, types.FunctionType) or (
            module.startswith("wengert.") and not module.startswith("wengert.rules.") and
            not getattr(f, "__wengert_inline__", False)):
        return None  # not a user function (wengert's run-time helpers are called)
    if f.__code__.co_flags & _NOT_PLAIN:
        return None
    from wengert.rules import registry
    rule = registry.lookup(f)
    if rule is not None:
        # A function with a registered derivative is called, not inlined; one with a Python
        # definition (``statistics.variance``) is inlined as its definition, never as the
        # library's own source.
        if rule.python is None or not registry.takes_keywords(rule, [k for k, _ in op.kwargs]):
            return None
        return rule.python
    return f


def bind_call(f: types.FunctionType, call: n.Call
              ) -> list[tuple[str, n.Value | tuple[str, Any]]] | None:
    """How ``call`` binds ``f``'s parameters, as Python binds them: for each parameter in
    order, ``("value", v)`` (an argument), ``("default", object)`` (its default, the very
    object the ``def`` evaluated), ``("tuple", [values])`` (``*args``) or ``("dict",
    [(name, value)])`` (``**kwargs``); ``None`` when the call cannot bind (Python would
    raise) or uses ``*``/``**`` splats."""
    if call.starred or any(k is None for k, _ in call.kwargs):
        return None
    code = f.__code__
    names = code.co_varnames
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    has_var = bool(code.co_flags & 0x04)
    has_varkw = bool(code.co_flags & 0x08)
    posonly = code.co_posonlyargcount
    defaults = f.__defaults__ or ()
    kwdefaults = f.__kwdefaults__ or {}
    positional = list(call.args)
    kwargs = dict(call.kwargs)
    if len(kwargs) != len(call.kwargs):
        return None
    out: list[Any] = []
    for i in range(npos):
        name = names[i]
        if i < len(positional):
            out.append(("value", positional[i]))
            if name in kwargs and i >= posonly:
                return None  # given twice: Python raises
        elif name in kwargs and i >= posonly:
            out.append(("value", kwargs.pop(name)))
        elif i >= npos - len(defaults):
            out.append(("default", defaults[i - (npos - len(defaults))]))
        else:
            return None
    extra = positional[npos:]
    if extra and not has_var:
        return None
    if has_var:
        out.append(("tuple", extra))
    for name in names[npos:npos + nkw]:
        if name in kwargs:
            out.append(("value", kwargs.pop(name)))
        elif name in kwdefaults:
            out.append(("default", kwdefaults[name]))
        else:
            return None
    if has_varkw:
        out.append(("dict", list(kwargs.items())))
        kwargs = {}
    if kwargs:
        return None  # an unexpected keyword: Python raises
    return out


def _returns_function(ir: n.Function) -> bool:
    """Whether ``ir`` returns a function it defines (a factory, a rule returning its
    pullback): inlined, calls of that function are calls of a known one."""
    made = {op.result.id for op in ir.body.ops if isinstance(op, n.MakeFunction)}
    if not made:
        return False
    defs = {r.id: op for op in ir.body.ops for r in op.results}
    ret = ir.body.ops[-1] if ir.body.ops else None
    work = [ret.value] if isinstance(ret, n.Return) else []
    while work:
        v = work.pop()
        if v.id in made:
            return True
        d = defs.get(v.id)
        if isinstance(d, n.Build):
            work.extend(d.items)
    return False


def _same_function(a: n.Function, b: n.Function) -> bool:
    """Whether two IR functions are lowered from one definition (a clone and its origin)."""
    return a.name == b.name and a.filename == b.filename and a.loc == b.loc


def _recursive(mk: n.MakeFunction) -> bool:
    """Whether a nested function calls itself (reads its own value)."""
    from wengert.ir.uses import free_uses
    return mk.result in free_uses(mk.func.body)


def bind_nested(mk: n.MakeFunction, call: n.Call
                ) -> list[tuple[str, n.Value | tuple[str, Any]]] | None:
    """:func:`bind_call` for a function defined in the function being transformed: its
    defaults are values of the enclosing function (evaluated where the ``def`` stands)."""
    if call.starred or any(k is None for k, _ in call.kwargs):
        return None
    sig = mk.func.signature
    named = [*sig.posonly, *sig.args]
    positional = list(call.args)
    kwargs = dict(call.kwargs)
    defaults = dict(zip(named[len(named) - len(mk.defaults):], mk.defaults))
    kw_defaults = dict(zip(sig.kwonly, mk.kw_defaults))
    out: list[Any] = []
    for i, name in enumerate(named):
        if i < len(positional):
            if name in kwargs and name not in sig.posonly:
                return None
            out.append(("value", positional[i]))
        elif name in kwargs and name not in sig.posonly:
            out.append(("value", kwargs.pop(name)))
        elif name in defaults:
            out.append(("value", defaults[name]))
        else:
            return None
    extra = positional[len(named):]
    if extra and not sig.vararg:
        return None
    if sig.vararg:
        out.append(("tuple", extra))
    for name in sig.kwonly:
        if name in kwargs:
            out.append(("value", kwargs.pop(name)))
        elif kw_defaults.get(name) is not None:
            out.append(("value", kw_defaults[name]))
        else:
            return None
    if sig.kwarg:
        out.append(("dict", list(kwargs.items())))
        kwargs = {}
    return None if kwargs else out


def _inlinable(ir: n.Function) -> bool:
    """One ``Return``, at the end of the body (the frontend's normal form), and no more."""
    body = ir.body

    def returns(r: n.Region) -> int:  # nested functions' returns are their own
        return sum(isinstance(op, n.Return) + sum(returns(x) for x in op.regions())
                   for op in r.ops if not isinstance(op, n.MakeFunction))

    return bool(body.ops) and isinstance(body.ops[-1], n.Return) and returns(body) == 1


def _standard_library(f: Any) -> bool:
    """Whether ``f`` is a Python function of the standard library (``statistics.fmean``,
    a named tuple's ``_replace``)."""
    code = getattr(f, "__code__", None)
    return code is not None and in_standard_library(code.co_filename)


def bound_values(bound: list[tuple[str, Any]], loc: Any = None
                 ) -> tuple[list[n.Op], list[n.Value]]:
    """Ops computing each parameter's value for a binding of :func:`bind_call` (defaults
    as constants, ``*args`` as a tuple display, ``**kwargs`` as a dict display), and the
    values, in parameter order."""
    ops: list[n.Op] = []
    values: list[n.Value] = []
    for kind, what in bound:
        if kind == "value":
            values.append(what)
        elif kind == "default":
            c = n.Const(what, [n.Value()], loc=loc)
            ops.append(c)
            values.append(c.result)
        elif kind == "tuple":
            t = n.Build("tuple", list(what), [n.Value()], loc=loc)
            ops.append(t)
            values.append(t.result)
        else:
            keys = []
            for name, _ in what:
                k = n.Const(name, [n.Value()], loc=loc)
                ops.append(k)
                keys.append(k.result)
            d = n.BuildDict(keys, [v for _, v in what], [n.Value()], loc=loc)
            ops.append(d)
            values.append(d.result)
    return ops, values


def _instantiate(ir: n.Function, bound: list[tuple[str, Any]], consts: dict[int, Any]
                 ) -> list[n.Op]:
    """A fresh copy of the callee's body with its parameters bound as the call binds them."""
    clone, _ = clone_function(ir)
    pre, values = bound_values(bound, ir.loc)
    if len(values) != len(clone.body.args):
        raise AssertionError("a binding does not match the callee's parameters")
    substitute(clone.body, {p.id: a for p, a in zip(clone.body.args, values)})
    for op in n.walk(n.Region([], [*pre, *clone.body.ops])):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
    return [*pre, *clone.body.ops]
