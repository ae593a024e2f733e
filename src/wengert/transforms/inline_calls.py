"""Inlining small user functions into the function being differentiated.

A call of a helper costs CPython a frame, and its derivative costs more: a derived
VJP returns a pullback closure per call, which the caller saves and calls back. For
a small helper (``accel(theta, length)`` called four times per RK4 step) that is most
of the gradient's time. Inlining the helper's IR at the call site before the
transform gives one function to differentiate: residuals are plain values, adjoints
plain ``+=``, exactly what a person writing the adjoint by hand would do.

Inlining is exact (Python evaluates the same operations in the same order; only the
frames differ), so it needs no type information. It is limited to direct calls with
positional arguments that bind one to one, of functions that are neither recursive
nor generators, and to a size budget, so generated code stays readable.
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

_NOT_PLAIN = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # *args, **kw, generator, async


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
            if ir is not None and _inlinable(ir, len(op.args)):
                size = sum(1 for _ in n.walk(ir.body))
                if size <= MAX_CALLEE_OPS and size <= budget:
                    body = _instantiate(ir, op, consts)
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
    if op.kwargs or op.starred or op.fn.id not in consts:
        return None
    f = consts[op.fn.id]
    if not isinstance(f, types.FunctionType) or \
            (getattr(f, "__module__", None) or "").startswith("wengert."):
        return None  # not a user function (wengert's own helpers are called)
    code = f.__code__
    if code.co_flags & _NOT_PLAIN or code.co_kwonlyargcount or code.co_argcount != len(op.args):
        return None
    from wengert.rules import registry
    if registry.lookup(f) is not None:
        return None  # a function with a registered derivative is called, not inlined
    return f


def _inlinable(ir: n.Function, nargs: int) -> bool:
    """One ``Return``, at the end of the body (the frontend's normal form), and no more."""
    body = ir.body
    return len(body.args) == nargs and bool(body.ops) and isinstance(body.ops[-1], n.Return) \
        and sum(isinstance(op, n.Return) for op in n.walk(body)) == 1


def _instantiate(ir: n.Function, call: n.Call, consts: dict[int, Any]) -> list[n.Op]:
    """A fresh copy of the callee's body with its parameters bound to the call's arguments."""
    clone, _ = clone_function(ir)
    substitute(clone.body, {p.id: a for p, a in zip(clone.body.args, call.args)})
    for op in n.walk(clone.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
    return list(clone.body.ops)
