"""Derivatives taken inside differentiated code: ``wengert.grad(lambda y: x * y)(1.0)``.

Before a function is differentiated, each ``grad(g)(args)`` in it is replaced by the
gradient's IR, inlined at the call. ``g`` is lambda-lifted first: the values it reads
from the enclosing function (``x``) become parameters of its own, which the inner
gradient does not differentiate. Its gradient is therefore an ordinary function of
``x``, and the outer transform differentiates it like any other code. This is what
rules out perturbation confusion: the inner derivative is taken with respect to ``y``
alone, so d/dx [x * d/dy (x + y)] is 1, not 2, whatever the nesting.

``grad`` of a function known when transforming (a global) becomes the function made by
``grad`` itself, which the linker differentiates again like any gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from wengert import runtime
from wengert.analysis.types import infer_types
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.clone import Cloner, clone_function, substitute
from wengert.transforms.cleanup import free_uses, replace_uses

#: Calls generated code makes when a callee's argument types were unknown: they return
#: closures, which have no IR, so code holding them cannot be differentiated again.
_DISPATCHERS = frozenset({runtime.vjp_call, runtime.vjp_method, runtime.jvp_call,
                          runtime.jvp_method})


def check_not_dispatcher(fn: Any, op: n.Call) -> None:
    """Refuse to differentiate generated code again through a run-time dispatch."""
    try:
        found = fn in _DISPATCHERS
    except TypeError:  # unhashable
        return
    if found:
        raise NonDifferentiableError(
            "this call cannot be differentiated to a higher order: when its derivative was "
            "generated the types of its arguments were unknown, so it is dispatched at run "
            "time", op.loc,
            hint="arguments of known types (floats, arrays, tuples of them) let wengert "
                 "inline or link its derivative")


class Linker(Protocol):
    """What expanding nested gradients needs from the API (see ``api._Linker``)."""

    def is_grad(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.grad``."""

    def gradient_ir(self, fn: n.Function, wrt: tuple[int, ...], single: bool,
                    arg_types: Sequence[type | None]) -> n.Function:
        """The gradient of the IR ``fn`` w.r.t. parameters ``wrt``, as IR."""

    def make_grad(self, f: Any, argnums: Any) -> Any:
        """``wengert.grad(f, argnums)``."""

    def result_type(self, fn: Any, arg_types: list[type | None]) -> type | None:
        """The exact type ``fn`` returns for arguments of these types, if known."""


def expand_nested_grads(fn: n.Function, arg_types: Sequence[type | None],
                        linker: Linker) -> int:
    """Replace the calls of gradients taken inside ``fn`` (in place); returns how many."""
    defs: dict[int, n.Op] = {}
    uses: dict[int, list[n.Op]] = {}
    consts: dict[int, Any] = {}
    for op in n.walk(fn.body):
        for r in op.results:
            defs[r.id] = op
        if isinstance(op, n.Const):
            consts[op.result.id] = op.value
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
    # Gradients inside nested functions are expanded when those are differentiated.
    sites = [op for op in _own_ops(fn.body) if isinstance(op, n.Call) and
             op.fn.id in consts and _is(linker, consts[op.fn.id])]
    if not sites:
        return 0
    types = infer_types(fn, list(arg_types), callee=linker.result_type)
    count = 0
    mapping: dict[int, n.Value] = {}
    done: list[n.Op] = []
    for site in sites:
        argnums = _argnums(site, consts)
        target = site.args[0] if site.args else None
        if target is not None and target.id in consts:
            # ``grad(h)`` of a global: the very function ``grad`` makes, linked later.
            site_region = _region_of(fn, site)
            k = site_region.ops.index(site)
            site_region.ops[k] = n.Const(linker.make_grad(consts[target.id], argnums),
                                         site.results, loc=site.loc)
            count += 1
            continue
        mk = defs.get(target.id) if target is not None else None
        calls = uses.get(site.result.id, [])
        if not isinstance(mk, n.MakeFunction) or not calls or not all(
                isinstance(c, n.Call) and c.fn.id == site.result.id and not c.kwargs and
                not c.starred and site.result not in c.args for c in calls):
            raise NonDifferentiableError(
                "a gradient taken inside a differentiated function must be of a function "
                "defined there (or a global), and called there with positional arguments",
                site.loc, hint="call grad(f)(...) directly where it is made")
        sig = mk.func.signature
        if mk.defaults or any(d is not None for d in mk.kw_defaults) or sig.vararg or \
                sig.kwarg or sig.kwonly or sig.posonly or argnums is None:
            raise NonDifferentiableError(
                "grad() inside a differentiated function needs a function with plain "
                "parameters and no defaults, and argnums an int or a tuple of ints",
                site.loc)
        nparams = len(mk.func.body.args)
        single = isinstance(argnums, int)
        nums = (argnums,) if single else tuple(argnums)
        if not all(-nparams <= a < nparams for a in nums):
            raise NonDifferentiableError(f"argnums {argnums} is out of range", site.loc)
        wrt = tuple(a % nparams for a in nums)
        free = [v for v in free_uses(mk.func.body) if v.id not in consts]
        for call in calls:
            if len(call.args) != nparams:
                raise NonDifferentiableError(
                    f"this gradient takes {nparams} argument(s)", call.loc)
            lifted = _lift(mk, free, consts)
            ptypes = [types.of(a) for a in call.args] + [types.of(v) for v in free]
            gir = linker.gradient_ir(lifted, wrt, single, ptypes)
            body, result = _instantiate(gir, [*call.args, *free])
            region = _region_of(fn, call)
            k = region.ops.index(call)
            region.ops[k:k + 1] = body
            mapping[call.result.id] = result
            count += 1
        _region_of(fn, site).ops.remove(site)
        done.append(site)
        if all(any(u is d for d in done) for u in uses.get(mk.result.id, [])):
            _region_of(fn, mk).ops.remove(mk)  # else a closure over actives stays behind
    replace_uses(fn, mapping)
    return count


def _own_ops(region: n.Region) -> list[n.Op]:
    """The ops of ``region`` and its nested regions, not those of nested functions."""
    out = []
    for op in region.ops:
        out.append(op)
        if not isinstance(op, n.MakeFunction):
            for r in op.regions():
                out.extend(_own_ops(r))
    return out


def _is(linker: Linker, value: Any) -> bool:
    try:
        return linker.is_grad(value)
    except TypeError:  # an unhashable constant
        return False


def _argnums(site: n.Call, consts: dict[int, Any]) -> Any:
    """The ``argnums`` of a ``grad(g, argnums)`` call (``None``: not a constant we take)."""
    given = list(site.args[1:2]) + [v for k, v in site.kwargs if k == "argnums"]
    others = [k for k, _ in site.kwargs if k != "argnums"]
    if len(site.args) > 2 or others or site.starred or len(given) > 1:
        return None
    if not given:
        return 0
    value = consts.get(given[0].id)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, tuple) and value and all(type(a) is int for a in value):
        return value
    return None


def _lift(mk: n.MakeFunction, free: list[n.Value], consts: dict[int, Any]) -> n.Function:
    """``mk``'s function with the values it reads from outside as trailing parameters
    (constants are copied in instead)."""
    cl = Cloner()
    lifted = cl.function(mk.func)
    extra = [cl.fresh(v) for v in free]
    substitute(lifted.body, {v.id: e for v, e in zip(free, extra)})
    copied = []
    for v in free_uses(lifted.body):
        if v.id in consts:
            c = n.Const(consts[v.id], [n.Value(v.hint)])
            copied.append(c)
            substitute(lifted.body, {v.id: c.result})
    lifted.body.ops[:0] = copied
    lifted.body.args = [*lifted.body.args, *extra]
    lifted.signature = n.Signature(args=[*mk.func.signature.names(),
                                         *[f"{v.hint or 'c'}" for v in free]])
    return lifted


def _instantiate(gir: n.Function, args: list[n.Value]) -> tuple[list[n.Op], n.Value]:
    """The gradient's body with its parameters bound to ``args``, and its result."""
    clone, _ = clone_function(gir)
    substitute(clone.body, {p.id: a for p, a in zip(clone.body.args, args)})
    ops = list(clone.body.ops)
    ret = ops.pop()
    assert isinstance(ret, n.Return)
    return ops, ret.value


def _region_of(fn: n.Function, op: n.Op) -> n.Region:
    stack = [fn.body]
    while stack:
        r = stack.pop()
        if op in r.ops:
            return r
        for x in r.ops:
            stack.extend(x.regions())
    raise AssertionError("op not found")  # pragma: no cover
