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

import types
from collections.abc import Callable
from typing import Any

from wengert.ir import nodes as n
from wengert.ir.clone import clone_function, substitute
from wengert.transforms.cleanup import replace_uses

#: Largest callee inlined (IR ops, nested regions included).
MAX_CALLEE_OPS = 40
#: Depth of inlining inside inlined code.
MAX_DEPTH = 3
#: Total ops that inlining may add to one function.
MAX_GROWTH = 400

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

    def region(r: n.Region, depth: int, stack: tuple[int, ...]) -> None:
        nonlocal budget, count
        k = 0
        while k < len(r.ops):
            op = r.ops[k]
            target = _target(op, consts) if isinstance(op, n.Call) else None
            ir = None
            if target is not None and depth < MAX_DEPTH and id(target.__code__) not in stack:
                ir = callee_ir(target)
            bound = bind_call(target, op) if ir is not None else None
            if bound is not None and _inlinable(ir):
                size = sum(1 for _ in n.walk(ir.body))
                if size <= MAX_CALLEE_OPS and size <= budget:
                    body = _instantiate(ir, bound, consts)
                    ret = body.pop()
                    assert isinstance(ret, n.Return)
                    mapping[op.result.id] = ret.value
                    if ret.value.hint is None:
                        ret.value.hint = op.result.hint  # ``k1w = accel(...)`` keeps its name
                    budget -= size
                    count += 1
                    inner = n.Region([], body)
                    region(inner, depth + 1, (*stack, id(target.__code__)))
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
    if not isinstance(f, types.FunctionType) or \
            (getattr(f, "__module__", None) or "").startswith("wengert."):
        return None  # not a user function (wengert's own helpers are called)
    if f.__code__.co_flags & _NOT_PLAIN:
        return None
    from wengert.rules import registry
    if registry.lookup(f) is not None:
        return None  # a function with a registered derivative is called, not inlined
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


def _inlinable(ir: n.Function) -> bool:
    """One ``Return``, at the end of the body (the frontend's normal form), and no more."""
    body = ir.body
    return bool(body.ops) and isinstance(body.ops[-1], n.Return) \
        and sum(isinstance(op, n.Return) for op in n.walk(body)) == 1


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
