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

import operator
import types
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy

from wengert import runtime
from wengert.analysis.types import FUNCTION_VALUES, Constant, infer_types
from wengert.diagnostics import NonDifferentiableError, ReverseModeRefusal
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import Cloner, clone_function, substitute
from wengert.ir.uses import free_uses, replace_uses

#: Calls generated code makes when a callee or its argument types were unknown: they
#: return closures, which have no IR, or derivatives found at run time, so code holding
#: them cannot be differentiated again.
_DISPATCHERS = frozenset({runtime.vjp_call, runtime.vjp_method, runtime.vjp_call_checked,
                          runtime.vjp_method_checked, runtime.vjp_call_active,
                          runtime.jvp_call_active, runtime.jvp_call,
                          runtime.jvp_method,
                          # (the second derivatives of a dispatched call: not a third)
                          runtime.dispatch_tangent, runtime.dispatch_pullback_tangent})


def check_not_dispatcher(fn: Any, op: n.Call) -> None:
    """Refuse to differentiate generated code again through a run-time dispatch."""
    try:
        found = fn in _DISPATCHERS
    except TypeError:  # unhashable
        return
    if found:
        check_second_order_only(fn, op)
        raise NonDifferentiableError(
            "this call cannot be differentiated to a higher order: what it calls (a value "
            "read out of a list, a dict or an object of unknown class) or the types it is "
            "given were only known at run time, so its derivative is dispatched at run time, "
            "and a dispatched derivative is not differentiated again", op.loc,
            hint="call a function or method known where the call is written (a global "
                 "function, a method of a dataclass), with arguments of known types (floats, "
                 "arrays, lists of floats, dataclasses): its derivative is then linked")


def check_second_order_only(fn: Any, op: n.Call) -> None:
    """Refuse a third derivative through a call dispatched at run time (its second
    derivatives are dispatched too, and not differentiated again)."""
    if fn is runtime.dispatch_tangent or fn is runtime.dispatch_pullback_tangent:
        raise NonDifferentiableError(
            "a call whose callee or argument types are known only at run time (a function "
            "read out of a list, a dict or an object of unknown class) differentiates to the "
            "second order, not to a third", op.loc,
            hint="call a function or method known where the call is written (a global "
                 "function, a method of a dataclass): its derivative is then linked, to "
                 "any order")


class Linker(Protocol):
    """What expanding nested gradients needs from the API (see ``api._Linker``)."""

    def is_grad(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.grad``."""

    def gradient_ir(self, fn: n.Function, wrt: tuple[int, ...], single: bool,
                    arg_types: Sequence[type | None]) -> n.Function:
        """The gradient of the IR ``fn`` w.r.t. parameters ``wrt``, as IR."""

    def make_grad(self, f: Any, argnums: Any) -> Any:
        """``wengert.grad(f, argnums)``."""

    def is_vjp(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.vjp``."""

    def function_ir(self, fn: Any) -> n.Function | None:
        """The IR of the plain function ``fn`` (``None`` for anything else)."""

    def applied_vjp_ir(self, fn: n.Function, wrt: tuple[int, ...],
                       arg_types: Sequence[type | None]) -> n.Function:
        """``lambda *params, v: vjp(f, *params)[1](v)`` for the IR ``fn``, as IR."""

    def result_type(self, fn: Any, arg_types: list[type | None]) -> type | None:
        """The exact type ``fn`` returns for arguments of these types, if known."""

    def is_jvp(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.jvp``."""

    def jvp_ir(self, fn: n.Function, wrt: tuple[int, ...],
               arg_types: Sequence[type | None]) -> n.Function:
        """``lambda *params, *tangents: jvp(f, params, tangents)`` for the IR ``fn``."""

    def operator_of(self, value: Any) -> str | None:
        """Which derivative operator ``value`` is (``"jacfwd"``...), or ``None``."""


def expand_nested_grads(fn: n.Function, arg_types: Sequence[type | None],
                        linker: Linker, final: bool = True) -> int:
    """Replace the calls of gradients taken inside ``fn`` (in place); returns how many.
    Not ``final``: a gradient made here and passed on (``descend(grad(f), x)``) is left for
    a later round, once the helper it is given is inlined and calls it here; ``final``:
    refused if it still is not."""
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
    vjps = [op for op in _own_ops(fn.body) if isinstance(op, n.Call) and
            op.fn.id in consts and _is(linker, consts[op.fn.id], "vjp")]
    jvps = [op for op in _own_ops(fn.body) if isinstance(op, n.Call) and
            op.fn.id in consts and _is(linker, consts[op.fn.id], "jvp")]
    hvps = [op for op in _own_ops(fn.body) if isinstance(op, n.Call) and
            op.fn.id in consts and _operator(linker, consts[op.fn.id]) == "hvp"]
    jacobians = [(op, kind) for op in _own_ops(fn.body) if isinstance(op, n.Call) and
                 op.fn.id in consts and
                 (kind := _operator(linker, consts[op.fn.id])) in _JACOBIANS]
    # (``value_and_grad``: the gradient, paired with the function's value at each call.)
    sites = [op for op in _own_ops(fn.body) if isinstance(op, n.Call) and
             op.fn.id in consts and (_is(linker, consts[op.fn.id]) or
                                     _operator(linker, consts[op.fn.id]) == "value_and_grad")]
    if not sites and not vjps and not jvps and not jacobians and not hvps:
        return 0
    types = infer_types(fn, list(arg_types), callee=linker.result_type)
    given = {p.id: t for p, t in zip(fn.body.args, arg_types)}

    def ptype(v: n.Value) -> Any:
        # A parameter passed on keeps its own type (a list of floats handed to the inner
        # derivative is not a list read-only here, but it is the caller's list of floats).
        t = given.get(v.id)
        if t is None and type(consts.get(v.id)) in FUNCTION_VALUES:
            # A function passed on (a parameter bound to the function the caller passed):
            # the inner derivative calls that very function, which differentiates again.
            return Constant(consts[v.id])
        return t if t is not None else types.param_type(v)

    count = 0
    mapping: dict[int, n.Value] = {}
    for site in vjps:
        count += _expand_vjp(fn, site, defs, uses, consts, ptype, linker, mapping)
    for site in jvps:
        count += _expand_jvp(fn, site, defs, uses, consts, ptype, linker, mapping)
    for site in hvps:
        count += _expand_jvp(fn, site, defs, uses, consts, ptype, linker, mapping, hvp=True)
    for site, kind in jacobians:
        count += _expand_jacobian(fn, site, kind, defs, uses, consts, ptype, linker, mapping)
    done: list[n.Op] = []
    for site in sites:
        argnums = _argnums(site, consts, defs)
        target = site.args[0] if site.args else None
        with_value = _operator(linker, consts[site.fn.id]) == "value_and_grad"
        calls = uses.get(site.result.id, [])
        direct = bool(calls) and all(
            isinstance(c, n.Call) and c.fn.id == site.result.id and not c.kwargs and
            not c.starred and site.result not in c.args for c in calls)
        if target is not None and target.id in consts and direct and argnums is not None \
                and _expand_global_grad(fn, site, consts[target.id], argnums, calls, ptype,
                                        linker, mapping, with_value):
            # ``grad(h)(x)`` of a global called here: its gradient's IR, inlined as for a
            # function defined here (code made for a derivative taken again -- a ``jvp`` of
            # a function taking this gradient -- has no call of a derived function left).
            _region_of(fn, site).ops.remove(site)
            count += len(calls)
            continue
        if target is not None and target.id in consts:
            if argnums is None:
                raise NonDifferentiableError(
                    f"{'value_and_grad' if with_value else 'grad'}() inside a differentiated "
                    "function needs argnums an int or a tuple of ints written out", site.loc)
            # ``grad(h)`` of a global: the very function ``grad`` makes, linked later.
            site_region = _region_of(fn, site)
            k = site_region.ops.index(site)
            made = n.Const(linker.make_grad(consts[target.id], argnums),
                           [n.Value(site.result.hint)] if with_value else site.results,
                           loc=site.loc)
            site_region.ops[k] = made
            if with_value:
                _pair_with_values(fn, site, made.result, target, uses, mapping)
            count += 1
            continue
        mk = defs.get(target.id) if target is not None else None
        if isinstance(mk, n.MakeFunction) and not direct and not final:
            continue  # (passed on: called here once the helper taking it is inlined)
        if not isinstance(mk, n.MakeFunction) or not direct:
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
        local, free = _closure(mk, consts, defs)
        for call in calls:
            if len(call.args) != nparams:
                raise NonDifferentiableError(
                    f"this gradient takes {nparams} argument(s)", call.loc)
            lifted = _lift(mk, free, consts, local)
            ptypes = [ptype(a) for a in (*call.args, *free)]
            gir = linker.gradient_ir(lifted, wrt, single, ptypes)
            body, result = _instantiate(gir, [*call.args, *free])
            if with_value:  # (the value: the lifted function's own body at the call)
                value_body, value = _instantiate(lifted, [*call.args, *free])
                pair = n.Build("tuple", [value, result], [n.Value()], loc=call.loc)
                body += [*value_body, pair]
                result = pair.result
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


def _expand_global_grad(fn: n.Function, site: n.Call, target: Any, argnums: Any,
                        calls: list[n.Op], ptype: Callable[[n.Value], Any], linker: Linker,
                        mapping: dict[int, n.Value], with_value: bool) -> bool:
    """Each call of ``grad(target, argnums)`` (``site``, ``target`` a global function) as
    the IR of its gradient at the call's arguments (``with_value``: paired with the
    function's value); ``False``, changing nothing, where the function has no such IR."""
    nargs = {len(c.args) for c in calls}  # type: ignore[attr-defined]
    if len(nargs) != 1:
        return False
    nparams = nargs.pop()
    base = linker.function_ir(linker.fixed_arity(target, nparams))
    if base is None or len(base.body.args) != nparams or base.signature.vararg or \
            base.signature.kwarg or base.signature.kwonly:
        return False
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not all(-nparams <= a < nparams for a in nums):
        return False
    wrt = tuple(a % nparams for a in nums)
    made = []
    for call in calls:
        args = list(call.args)  # type: ignore[attr-defined]
        try:
            gir = linker.gradient_ir(base, wrt, single, [ptype(a) for a in args])
        except ReverseModeRefusal:
            return False  # (the function ``grad`` makes answers by forward mode)
        body, result = _instantiate(gir, args)
        if with_value:
            value = n.Call(site.args[0], args, [], [n.Value()], loc=call.loc)
            pair = n.Build("tuple", [value.result, result], [n.Value()], loc=call.loc)
            body += [value, pair]
            result = pair.result
        made.append((call, body, result))
    for call, body, result in made:
        region = _region_of(fn, call)
        k = region.ops.index(call)
        region.ops[k:k + 1] = body
        mapping[call.result.id] = result
    return True


def _pair_with_values(fn: n.Function, site: n.Call, grad_fn: n.Value, target: n.Value,
                      uses: dict[int, list[n.Op]], mapping: dict[int, n.Value]) -> None:
    """Each call of ``value_and_grad(h)`` (``site``) of a global ``h``: ``(h(*args),
    grad_fn(*args))``, with ``grad_fn`` the function ``grad(h)`` made."""
    for call in uses.get(site.result.id, []):
        if not isinstance(call, n.Call) or call.fn.id != site.result.id or \
                site.result in call.args:
            raise NonDifferentiableError(
                "value_and_grad() inside a differentiated function must be called there",
                site.loc, hint="call value_and_grad(f)(...) directly where it is made")
        value = n.Call(target, list(call.args), list(call.kwargs), [n.Value()],
                       starred=call.starred, loc=call.loc)
        gradient = n.Call(grad_fn, list(call.args), list(call.kwargs), [n.Value()],
                          starred=call.starred, loc=call.loc)
        pair = n.Build("tuple", [value.result, gradient.result], [n.Value()], loc=call.loc)
        region = _region_of(fn, call)
        k = region.ops.index(call)
        region.ops[k:k + 1] = [value, gradient, pair]
        mapping[call.result.id] = pair.result


def _own_ops(region: n.Region) -> list[n.Op]:
    """The ops of ``region`` and its nested regions, not those of nested functions."""
    out = []
    for op in region.ops:
        out.append(op)
        if not isinstance(op, n.MakeFunction):
            for r in op.regions():
                out.extend(_own_ops(r))
    return out


def _is(linker: Linker, value: Any, what: str = "grad") -> bool:
    try:
        return linker.is_grad(value) if what == "grad" else linker.is_vjp(value) \
            if what == "vjp" else linker.is_jvp(value)
    except TypeError:  # an unhashable constant
        return False


#: The operators giving a Jacobian (or a Hessian) of a function, expanded where taken.
_JACOBIANS = ("jacfwd", "jacrev", "hessian")


def _operator(linker: Linker, value: Any) -> str | None:
    try:
        return linker.operator_of(value)
    except TypeError:  # an unhashable constant
        return None


def _expand_jacobian(fn: n.Function, site: n.Call, kind: str, defs: dict[int, n.Op],
                     uses: dict[int, list[n.Op]], consts: dict[int, Any],
                     ptype: Callable[[n.Value], Any], linker: Linker,
                     mapping: dict[int, n.Value]) -> int:
    """``jacfwd(g, argnums)(*args)`` (``jacrev``, ``hessian``) inside ``fn``: per argument
    differentiated, a loop over the entries of ``args[argnums]``, each step one JVP of ``g``
    (of its gradient, for ``hessian``) in the direction of that entry, inlined (``g``
    lambda-lifted as for ``grad``); the columns laid out as the API lays them out (the
    output's axes, then the argument's; a tuple per argument for a tuple ``argnums``, a
    tuple of tuples for ``hessian``). One direction at a time, not one batched pass: the
    code is differentiated again, and its values are then a tangent's own shape. Returns
    how many calls were expanded."""
    refuse = NonDifferentiableError(
        f"{kind}() inside a differentiated function must be of a function defined there (or "
        "a global), with argnums an int or a tuple of ints written out, and called there "
        "with positional arguments", site.loc,
        hint=f"call {kind}(f, argnums=0)(x, ...) where it is made")
    argnums = _argnums(site, consts, defs)
    calls = uses.get(site.result.id, [])
    if not site.args or site.starred or argnums is None or not calls or \
            not all(isinstance(c, n.Call) and c.fn.id == site.result.id and not c.kwargs and
                    not c.starred and site.result not in c.args for c in calls):
        raise refuse
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    target = site.args[0]
    for call in calls:
        args = list(call.args)
        found = _target_ir(target, len(args), defs, consts, ptype, args, linker)
        if found is None or not all(-len(args) <= a < len(args) for a in nums):
            raise refuse
        lifted, free = found
        wrt = tuple(a % len(args) for a in nums)
        ptypes = [ptype(a) for a in (*args, *free)]
        if kind == "hessian":
            lifted = linker.gradient_ir(lifted, wrt, single, ptypes)
        b = Builder(n.Region())
        b.loc = call.loc
        # ``blocks[j][i]``: the derivative of output ``i`` (of gradient ``i``, for a
        # Hessian of a tuple of arguments) along argument ``wrt[j]``.
        outputs = len(wrt) if kind == "hessian" and not single else 0
        blocks = [_columns(b, linker.jvp_ir(lifted, (k,), ptypes), args, free, k, outputs)
                  for k in wrt]
        if single:
            jac = blocks[0][0]
        elif kind == "hessian":
            jac = b.emit(n.Build("tuple", [
                b.emit(n.Build("tuple", [blocks[j][i] for j in range(len(wrt))],
                               [n.Value()])).result for i in range(len(wrt))],
                [n.Value()])).result
        else:
            jac = b.emit(n.Build("tuple", [block[0] for block in blocks], [n.Value()])).result
        region = _region_of(fn, call)
        j = region.ops.index(call)
        region.ops[j:j + 1] = b.region.ops
        mapping[call.result.id] = jac
    _region_of(fn, site).ops.remove(site)
    mk = defs.get(target.id)
    if isinstance(mk, n.MakeFunction) and \
            all(u is site for u in uses.get(mk.result.id, [])):
        _region_of(fn, mk).ops.remove(mk)  # (else a closure over actives stays behind)
    return len(calls)


def _columns(b: Builder, jir: n.Function, args: list[n.Value], free: list[n.Value], k: int,
             outputs: int) -> list[n.Value]:
    """Emit at ``b`` a loop of one JVP (``jir``) per entry of ``args[k]`` and return the
    Jacobian it gathers: one, of the JVP's tangent (``outputs`` 0), or one per entry of a
    tuple of ``outputs`` tangents, each laid out as the tangent's axes then ``args[k]``'s."""
    x = args[k]
    size = b.call(numpy.size, x)
    shape = b.call(numpy.shape, x)
    basis = b.call(numpy.eye, size)
    cols = [b.emit(n.Build("list", [], [n.Value()])).result for _ in range(max(outputs, 1))]
    step = n.Value("i")
    loop = n.For(b.call(range, size), [], n.Region([step], []), [], loc=b.loc)
    with b.at(loop.body):
        direction = b.call(numpy.reshape, b.getitem(basis, step), shape)
        body, result = _instantiate(jir, [*args, *free, direction])
        b.region.ops.extend(body)
        tangent = b.getitem(result, b.const(1))
        for i, col in enumerate(cols):
            b.call(b.getattr(col, "append"),
                   b.getitem(tangent, b.const(i)) if outputs else tangent)
        b.emit(n.Yield([]))
    b.emit(loop)
    out = []
    for col in cols:
        stacked = b.call(numpy.asarray, col)  # (entries of x, then the output's axes)
        moved = b.call(numpy.moveaxis, stacked, b.const(0), b.const(-1))
        out_shape = b.call(operator.getitem, b.call(numpy.shape, stacked),
                           b.emit(n.BuildSlice(b.const(1), None, None, [n.Value()])).result)
        out.append(b.call(numpy.reshape, moved, b.call(operator.add, out_shape, shape)))
    return out


def _target_ir(target: n.Value, nargs: int, defs: dict[int, n.Op], consts: dict[int, Any],
               ptype: Callable[[n.Value], Any], args: list[n.Value], linker: Linker
               ) -> tuple[n.Function, list[n.Value]] | None:
    """The function a derivative taken inside is of, as IR of ``nargs`` plain parameters
    followed by the values it reads from the enclosing function (lambda-lifted), and those
    values; ``None`` where it is neither defined there nor a known function."""
    mk = defs.get(target.id)
    if target.id in consts:
        ir = _made_gradient_ir(consts[target.id], args, ptype, linker) or \
            linker.function_ir(linker.fixed_arity(consts[target.id], nargs))
        if ir is None or len(ir.body.args) != nargs or ir.signature.vararg or \
                ir.signature.kwarg or ir.signature.kwonly:
            return None
        return ir, []
    if isinstance(mk, n.MakeFunction) and not mk.defaults and \
            all(d is None for d in mk.kw_defaults) and len(mk.func.body.args) == nargs \
            and not (mk.func.signature.vararg or mk.func.signature.kwarg or
                     mk.func.signature.kwonly):
        local, free = _closure(mk, consts, defs)
        return _lift(mk, free, consts, local), free
    return None


def _expand_jvp(fn: n.Function, site: n.Call, defs: dict[int, n.Op],
                uses: dict[int, list[n.Op]], consts: dict[int, Any],
                ptype: Callable[[n.Value], Any], linker: Linker,
                mapping: dict[int, n.Value], hvp: bool = False) -> int:
    """``jvp(g, (a, b), (ta, tb))`` inside ``fn``: the IR of ``g``'s JVP at those primals
    and tangents, inlined where it is taken (``g`` lambda-lifted as for ``grad``: the values
    it reads from ``fn`` are parameters the inner JVP gives no tangent, so the enclosing
    derivative's tangents stay apart from its own). ``hvp``: ``hvp(g, (a,), (ta,))``, the
    JVP of ``g``'s gradient, its tangent. Returns 1."""
    what = "hvp" if hvp else "jvp"
    refuse = NonDifferentiableError(
        f"{what}() inside a differentiated function must be of a function defined there (or "
        "a global), its primals and tangents written as tuples of as many entries", site.loc,
        hint=f"write {what}(f, (x, y), (dx, dy))")
    if len(site.args) != 3 or site.kwargs or site.starred:
        raise refuse
    target, given, dirs = site.args
    shown, dshown = defs.get(given.id), defs.get(dirs.id)
    if not all(isinstance(d, n.Build) and d.kind in ("tuple", "list") and not d.starred
               for d in (shown, dshown)) or len(shown.items) != len(dshown.items):  # type: ignore
        raise refuse
    args, tangents = list(shown.items), list(dshown.items)  # type: ignore[union-attr]
    found = _target_ir(target, len(args), defs, consts, ptype, args, linker)
    if found is None:
        raise refuse
    lifted, free = found
    ptypes = [ptype(a) for a in (*args, *free)]
    wrt = tuple(range(len(args)))
    if hvp:  # (as ``api.hvp``: the gradient w.r.t. every primal, one alone for one)
        lifted = linker.gradient_ir(lifted, wrt, len(args) == 1, ptypes)
    jir = linker.jvp_ir(lifted, wrt, ptypes)
    body, result = _instantiate(jir, [*args, *free, *tangents])
    if hvp:
        one = n.Const(1, [n.Value()], loc=site.loc)
        dot = n.GetItem(result, one.result, [n.Value()], loc=site.loc)
        body += [one, dot]
        result = dot.result
    region = _region_of(fn, site)
    k = region.ops.index(site)
    region.ops[k:k + 1] = body
    mapping[site.result.id] = result
    return 1


def _expand_vjp(fn: n.Function, site: n.Call, defs: dict[int, n.Op],
                uses: dict[int, list[n.Op]], consts: dict[int, Any],
                ptype: Callable[[n.Value], Any], linker: Linker,
                mapping: dict[int, n.Value]) -> int:
    """``out, pb = vjp(g, *args)`` inside ``fn``: ``out`` becomes the call ``g(*args)``
    and each ``pb(v)`` the IR of ``g``'s VJP applied to ``v``, inlined where it is called
    (``g`` lambda-lifted as for ``grad``). Returns how many calls were replaced."""
    refuse = NonDifferentiableError(
        "vjp() inside a differentiated function must be of a function defined there (or a "
        "global), called with positional arguments, its result unpacked as (out, pullback) "
        "and the pullback called there with one cotangent", site.loc,
        hint="write out, pullback = vjp(f, x) and then pullback(v)")
    if not site.args or site.kwargs or site.starred:
        raise refuse
    target, args = site.args[0], list(site.args[1:])
    mk = defs.get(target.id)
    if target.id in consts:
        # ``def g(*xs)`` called with n arguments: a wrapper of n parameters (api); a
        # function made by ``grad`` (``grad(energy)``, met again when its own derivative
        # is differentiated): its gradient's IR at the arguments' types.
        ir = _made_gradient_ir(consts[target.id], args, ptype, linker) or \
            linker.function_ir(linker.fixed_arity(consts[target.id], len(args)))
        free: list[n.Value] = []
        if ir is None or len(ir.body.args) != len(args) or ir.signature.vararg or \
                ir.signature.kwarg or ir.signature.kwonly:
            raise refuse
        lifted = ir
    elif isinstance(mk, n.MakeFunction) and not mk.defaults and \
            all(d is None for d in mk.kw_defaults) and len(mk.func.body.args) == len(args) \
            and not (mk.func.signature.vararg or mk.func.signature.kwarg or
                     mk.func.signature.kwonly):
        local, free = _closure(mk, consts, defs)
        lifted = _lift(mk, free, consts, local)
    else:
        raise refuse
    outs: list[n.Value] = []
    pbs: list[n.Value] = []
    readers: list[n.Op] = []
    for u in uses.get(site.result.id, []):
        if isinstance(u, n.Unpack) and len(u.results) == 2 and u.star is None:
            outs.append(u.results[0])
            pbs.append(u.results[1])
        elif isinstance(u, n.GetItem) and consts.get(u.index.id, None) in (0, 1) and \
                type(consts[u.index.id]) is int:
            (outs if consts[u.index.id] == 0 else pbs).append(u.result)
        else:
            raise refuse
        readers.append(u)
    calls = [c for p in pbs for c in uses.get(p.id, [])]
    if not all(isinstance(c, n.Call) and any(c.fn.id == p.id for p in pbs) and
               len(c.args) == 1 and not c.kwargs and not c.starred and
               not any(a.id == p.id for p in pbs for a in c.args) for c in calls):
        raise refuse
    # The value: a plain call of ``g``, which the outer transform differentiates.
    region = _region_of(fn, site)
    k = region.ops.index(site)
    if any(uses.get(o.id) for o in outs):
        primal = n.Call(target, args, [], [n.Value(site.result.hint)], loc=site.loc)
        region.ops[k] = primal
        for o in outs:
            mapping[o.id] = primal.result
    else:  # the value is not used: the pullback's own forward code recomputes it
        del region.ops[k]
    for r in readers:
        _region_of(fn, r).ops.remove(r)
    wrt = tuple(range(len(args)))
    for call in calls:
        ptypes = [ptype(a) for a in (*args, *free, call.args[0])]
        vir = linker.applied_vjp_ir(lifted, wrt, ptypes)
        body, result = _instantiate(vir, [*args, *free, call.args[0]])
        r = _region_of(fn, call)
        j = r.ops.index(call)
        r.ops[j:j + 1] = body
        mapping[call.result.id] = result
    return len(calls) + 1


def _made_gradient_ir(value: Any, args: list[n.Value], ptype: Callable[[n.Value], Any],
                      linker: Linker) -> n.Function | None:
    """The IR of ``value``'s gradient at ``args``' types where ``value`` is a function made
    by ``grad`` of a plain function of as many parameters; else ``None``."""
    spec = getattr(value, "__wengert_grad__", None)
    if spec is None or not isinstance(spec[0], types.FunctionType):
        return None
    base = linker.function_ir(linker.fixed_arity(spec[0], len(args)))
    argnums = spec[1]
    nums = (argnums,) if type(argnums) is int else argnums
    if base is None or len(base.body.args) != len(args) or not isinstance(nums, tuple) or \
            not nums or not all(type(a) is int and -len(args) <= a < len(args) for a in nums):
        return None
    wrt = tuple(a % len(args) for a in nums)
    return linker.gradient_ir(base, wrt, type(argnums) is int, [ptype(a) for a in args])


def _argnums(site: n.Call, consts: dict[int, Any], defs: dict[int, n.Op]) -> Any:
    """The ``argnums`` of a ``grad(g, argnums)`` call (``None``: not a constant we take)."""
    given = list(site.args[1:2]) + [v for k, v in site.kwargs if k == "argnums"]
    others = [k for k, _ in site.kwargs if k != "argnums"]
    if len(site.args) > 2 or others or site.starred or len(given) > 1:
        return None
    if not given:
        return 0
    value = consts.get(given[0].id)
    made = defs.get(given[0].id)
    if isinstance(made, n.Build) and made.kind == "tuple" and not made.starred and \
            all(i.id in consts for i in made.items):
        value = tuple(consts[i.id] for i in made.items)  # ``(0, 1)`` spelled as a display
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, tuple) and value and all(type(a) is int for a in value):
        return value
    return None


def _closure(mk: n.MakeFunction, consts: dict[int, Any], defs: dict[int, n.Op]
             ) -> tuple[list[n.MakeFunction], list[n.Value]]:
    """What lifting ``mk`` takes with it: the functions defined in the enclosing function
    that it calls (``inner`` of ``def outer(z): return inner(z) * w``, however deep), each
    before those calling it, to be defined in the lifted function too; and the values it and
    they read from outside (not constants), to become its parameters. A function passed in
    as a parameter would be one closing over values the inner derivative must not see as
    constants; defined inside, they are read as the lifted function's own."""
    local: list[n.MakeFunction] = []
    free: list[n.Value] = []
    seen: set[int] = set()

    def visit(op: n.MakeFunction) -> None:
        for v in [*op.operands(), *free_uses(op.func.body)]:
            if v.id in consts or v.id in seen:
                continue
            seen.add(v.id)
            d = defs.get(v.id)
            if isinstance(d, n.MakeFunction) and d is not mk and d is not op:
                visit(d)
                local.append(d)
            else:
                free.append(v)

    visit(mk)
    return local, free


def _lift(mk: n.MakeFunction, free: list[n.Value], consts: dict[int, Any],
          local: Sequence[n.MakeFunction] = ()) -> n.Function:
    """``mk``'s function with the values it reads from outside as trailing parameters
    (constants are copied in instead), the functions ``local`` it calls defined first in
    it (:func:`_closure`)."""
    cl = Cloner()
    made = [cl.op(op) for op in local]
    lifted = cl.function(mk.func)
    lifted.body.ops[:0] = made
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
