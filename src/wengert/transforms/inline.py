"""Inlining derivative rules at their call sites.

A rule is ordinary Python (``registry``): ``f_vjp(*args) -> (value, pullback)``.
Its body is lowered once per (rule, argument types), specialised on the types
(``isinstance`` fast paths folded, untaken branches dropped) and cut in two:
the *primal part* (everything before ``return value, pullback``), cloned into
the forward code at the call site, and the *pullback body*, cloned into the
reverse code with its parameter bound to the result's adjoint and its captured
values bound to the forward clones. So ``y = sin(x)`` becomes
``x_bar += y_bar * math.cos(x)``, not a closure call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from wengert.analysis.cached import Analyses
from wengert.analysis.types import FLOAT_OR_FLOAT64, Types, infer_types, plain, unshaped
from wengert.diagnostics import SourceLoc
from wengert.frontend import lower
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import Cloner, clone_function
from wengert.ir.uses import free_uses
from wengert.transforms.cleanup import cleanup
from wengert.transforms.specialize import specialize

#: Rule bodies specialised on argument types without shapes (by rule, arity, types and
#: keywords): what a body for arrays of known shapes is specialised further from.
_UNSHAPED: dict[tuple[int, tuple[Any, ...]], n.Function | None] = {}

#: Literal values a call gives a rule's keyword-only parameters, by name, in the call's
#: order (``(("strict", True),)`` for ``zip(a, b, strict=True)``).
Keywords = tuple[tuple[str, Any], ...]


@dataclass
class Spec:
    """A rule body specialised on argument types, split into its two parts."""

    params: list[n.Value]
    fwd_ops: list[n.Op]
    value: n.Value
    pb_param: n.Value
    pb_ops: list[n.Op]
    #: One adjoint per argument, or ``None`` when the pullback returns a single tuple value.
    outs: list[n.Value] | None
    out_value: n.Value
    none_outs: set[int]
    pb_free: list[n.Value]
    value_type: type | None
    #: Per argument: whether its adjoint is surely a number or array (never ``None``).
    out_sure: list[bool]


_LOWERED: dict[int, n.Function | None] = {}
_SPECS: dict[tuple[int, tuple[Any, ...]], Spec | None] = {}


def _lowered(rule_fn: Callable) -> n.Function | None:
    key = id(rule_fn)
    if key not in _LOWERED:
        try:
            _LOWERED[key] = lower(rule_fn)
            # A rule's variables are not the user's: generated code names them freely.
            n.demote_hints(_LOWERED[key])
        except Exception:  # a rule the frontend cannot read is still callable
            _LOWERED[key] = None
    return _LOWERED[key]


def specialized_vjp(rule_fn: Callable, nargs: int, arg_types: Sequence[type | None],
                    unknown_ok: bool = False, keywords: Keywords = ()) -> Spec | None:
    """The inlinable form of ``rule_fn`` for ``nargs`` arguments of ``arg_types``, or ``None``.

    ``None`` means: call the rule at run time (its shape is not ``return value, pullback``,
    or its arguments' types are unknown). A rule of ``*args`` is specialised on ``nargs``.
    ``unknown_ok``: inline even where types are unknown, keeping the rule's run-time type
    tests (code that is differentiated again cannot call a rule: its pullback is a closure).
    ``keywords``: literal values the call gives keyword-only parameters (``strict=True``).
    """
    types_key = tuple(arg_types)
    key = (id(rule_fn), (nargs, types_key, unknown_ok, keywords))
    if key in _SPECS:
        return _SPECS[key]
    spec = None
    if unknown_ok or all(t is not None for t in arg_types):
        spec = _build(rule_fn, nargs, list(arg_types), keywords)
    _SPECS[key] = spec
    return spec


def _split(rule_fn: Callable, nargs: int, arg_types: list[type | None],
           keywords: Keywords) -> tuple | None:
    """A rule's body specialised on ``arg_types`` (and its keyword-only parameters on the
    literal ``keywords``) if it ends in ``return value, closure``: (function, its types,
    body, the return, definitions by value id, the returned pair)."""
    made = _specialized(rule_fn, nargs, arg_types, keywords)
    if made is None:
        return None
    fn, types = made
    body = fn.body
    ret = body.ops[-1]
    if not isinstance(ret, n.Return):
        return None
    defs = {r.id: op for op in body.ops for r in op.results}
    pair = defs.get(ret.value.id)
    if not (isinstance(pair, n.Build) and pair.kind == "tuple" and len(pair.items) == 2
            and not pair.starred):
        return None
    return fn, types, body, ret, defs, pair


def _specialized(rule_fn: Callable, nargs: int, arg_types: list[type | None],
                 keywords: Keywords) -> tuple[n.Function, Types] | None:
    """A new copy of the body of ``rule_fn`` for ``nargs`` arguments, specialised on
    ``arg_types`` and cleaned, and its types (``None``: its parameters cannot take such a
    call).

    For arrays of known shapes, the body specialised on their dtypes and axes alone is
    made once and kept, and each set of shapes specialises a copy of that: most of a
    NumPy rule's branches are decided by the number of axes, and a program calling
    ``@`` on matrices of five shapes would otherwise specialise the whole body five
    times (folding with less known, then with more, folds what folding with all of it
    at once does)."""
    plain_types = [unshaped(t) for t in arg_types]
    if plain_types != arg_types:
        key = (id(rule_fn), (nargs, tuple(plain_types), keywords))
        if key not in _UNSHAPED:
            made = _specialized(rule_fn, nargs, plain_types, keywords)
            _UNSHAPED[key] = made[0] if made is not None else None
        base = _UNSHAPED[key]
        if base is None:
            return None
        fn, _ = clone_function(base)
        return fn, _specialize_and_clean(fn, arg_types)
    base = _lowered(rule_fn)
    if base is None:
        return None
    fn, _ = clone_function(base)
    given = {**(rule_fn.__kwdefaults__ or {}), **dict(keywords)}
    if not bind_arity(fn, nargs, rule_fn.__defaults__ or (), given):
        return None
    # A constant read from the rule's closure (a rule made by a function, for several
    # primitives) is named by what it is at the call site, not by the rule's variable.
    cells = set(rule_fn.__code__.co_freevars)
    for op in n.walk(fn.body):
        if isinstance(op, n.Const) and op.origin and op.origin.split(".")[0] in cells:
            op.origin, op.root = _public_name(op.value)
    return fn, _specialize_and_clean(fn, arg_types)


def _specialize_and_clean(fn: n.Function, arg_types: list[type | None]) -> Types:
    """:func:`specialize` ``fn`` on ``arg_types``, then drop the calls nothing reads;
    return its types (those specialising found, where dropping changed nothing)."""
    analyses = Analyses(fn, arg_types)
    specialize(fn, arg_types, analyses=analyses)
    cleanup(fn, drop_pure_calls=True)
    return analyses.types()


#: Defaults a rule may take from its signature when inlined: values, not objects.
LITERALS = (type(None), bool, int, float, str)


def bind_arity(fn: n.Function, nargs: int, defaults: Sequence[Any] = (),
               kwdefaults: Mapping[str, Any] | None = None) -> bool:
    """Give ``fn`` exactly ``nargs`` positional parameters, as a call with ``nargs``
    positional arguments (and no keywords) binds them; ``False`` if it cannot.

    ``*args`` becomes a tuple display of the parameters past the named ones, ``**kwargs``
    an empty dict display, and an omitted parameter its (literal) default, so that
    :func:`specialize` folds ``len(args)``, ``args[0]`` and ``for a in args`` for this
    arity.
    """
    sig = fn.signature
    named = [*sig.posonly, *sig.args]
    if nargs > len(named) and not sig.vararg:
        return False
    params = dict(zip(sig.names(), fn.body.args))
    pre: list[n.Op] = []
    missing = named[nargs:]
    fills = list(defaults)[len(defaults) - len(missing):] if missing else []
    kwdefaults = kwdefaults or {}
    if len(fills) < len(missing) or any(k not in kwdefaults for k in sig.kwonly):
        return False
    for name, value in [*zip(missing, fills), *((k, kwdefaults[k]) for k in sig.kwonly)]:
        if type(value) not in LITERALS:
            return False
        pre.append(n.Const(value, [params[name]]))
    args = [params[name] for name in named[:nargs]]
    names = named[:nargs]
    if sig.vararg:
        extra = [n.Value(f"{sig.vararg}_{k}") for k in range(nargs - len(args))]
        names += [v.hint for v in extra]  # type: ignore[misc]
        pre.append(n.Build("tuple", extra, [params[sig.vararg]]))
        args += extra
    if sig.kwarg:
        pre.append(n.BuildDict([], [], [params[sig.kwarg]]))
    fn.signature = n.Signature(args=names)
    fn.body.args = args
    fn.body.ops[:0] = pre
    return True


def _public_name(value: Any) -> tuple[str | None, Any]:
    """``(origin, root)`` naming ``value`` as its public module does (``math.fmod``,
    ``max``), or ``(None, None)`` to let code generation name it."""
    module = getattr(value, "__module__", None)
    name = getattr(value, "__name__", None)
    if module == "builtins" and name:
        return name, value
    if module and name and not module.startswith("_") and \
            getattr(sys.modules.get(module), name, None) is value:
        # Spelled through the module's own (last) name, which is bound to the module: a
        # dotted module (``pkg.sub.mod``) would otherwise bind ``pkg`` to ``mod``.
        return f"{module.rsplit('.', 1)[-1]}.{name}", sys.modules[module]
    return None, None


def _build(rule_fn: Callable, nargs: int, arg_types: list[type | None],
           keywords: Keywords) -> Spec | None:
    split = _split(rule_fn, nargs, arg_types, keywords)
    if split is None:
        return None
    fn, types, body, ret, defs, pair = split
    value, pbv = pair.items
    mk = defs.get(pbv.id)
    if not isinstance(mk, n.MakeFunction) or mk.defaults or len(mk.func.body.args) != 1 or \
            mk.func.signature.vararg or mk.func.signature.kwarg:
        return None
    if any(mk.result in op.operands() for op in n.walk(mk.func.body)):
        return None
    uses = [op for op in body.ops if pbv in op.operands()]
    if uses != [pair]:
        return None
    fwd_ops = [op for op in body.ops if op is not mk and op is not pair and op is not ret]
    if any(value.id == r.id for op in fwd_ops for r in op.results) is False and \
            value not in body.args:
        return None
    pb_body = mk.func.body
    pb_ret = pb_body.ops[-1]
    if not isinstance(pb_ret, n.Return):
        return None
    pb_defs = {r.id: op for op in pb_body.ops for r in op.results}
    out_op = pb_defs.get(pb_ret.value.id)
    none_outs: set[int] = set()
    if isinstance(out_op, n.Build) and out_op.kind == "tuple" and not out_op.starred:
        if len(out_op.items) != nargs:
            return None
        outs: list[n.Value] | None = list(out_op.items)
        pb_ops = [op for op in pb_body.ops[:-1] if op is not out_op]
        if any(out_op.result in op.operands() for op in pb_ops):
            pb_ops = list(pb_body.ops[:-1])
        for k, v in enumerate(outs):
            d = pb_defs.get(v.id)
            if isinstance(d, n.Const) and d.value is None:
                none_outs.add(k)
    else:
        outs = None
        pb_ops = list(pb_body.ops[:-1])
    value_type = types.of(value) if value not in body.args else \
        plain(arg_types[body.args.index(value)])
    # The adjoint of a float is a float: type the pullback from it to know its outputs.
    free_types = {k: t for k, t in types.by_id.items()}
    for p, t in zip(body.args, arg_types):
        if t is not None:
            free_types[p.id] = plain(t)
    pb_types = infer_types(mk.func, [value_type], free_types)
    sure = (float, numpy.float64, numpy.ndarray, FLOAT_OR_FLOAT64)
    out_sure = [outs is not None and pb_types.of(v) in sure for v in (outs or [None] * nargs)]
    return Spec(
        params=list(body.args), fwd_ops=fwd_ops, value=value, pb_param=pb_body.args[0],
        pb_ops=pb_ops, outs=outs, out_value=pb_ret.value, none_outs=none_outs,
        pb_free=free_uses(pb_body), value_type=value_type, out_sure=out_sure)


@dataclass
class Forward:
    """The forward clone of a rule at one call site."""

    cloner: Cloner
    value: n.Value


def _stamp(ops: list[n.Op], loc: SourceLoc | None) -> None:
    for op in ops:
        op.loc = loc
        for r in op.regions():
            _stamp(r.ops, loc)


def emit_forward(spec: Spec, args: Sequence[n.Value], b: Builder,
                 loc: SourceLoc | None) -> Forward:
    """Clone the rule's primal part into ``b`` with its parameters bound to ``args``."""
    cl = Cloner({p.id: a for p, a in zip(spec.params, args)})
    ops = cl.ops(spec.fwd_ops)
    _stamp(ops, loc)
    for op in n.walk(n.Region([], ops)):
        for r in op.results:
            r.hint = None  # the rule's own variable names mean nothing at the call site
    b.region.ops.extend(ops)
    return Forward(cl, cl.value(spec.value))


def emit_pullback(spec: Spec, fwd: Forward, g: n.Value, res: Callable[[n.Value], n.Value],
                  b: Builder, need: Sequence[bool], loc: SourceLoc | None
                  ) -> list[n.Value | None]:
    """Clone the pullback body into ``b``; return one adjoint value per argument."""
    mapping = {spec.pb_param.id: g}
    for v in spec.pb_free:
        mapping[v.id] = res(fwd.cloner.value(v))
    cl = Cloner(mapping)
    ops = cl.ops(spec.pb_ops)
    _stamp(ops, loc)
    for op in n.walk(n.Region([], ops)):
        for r in op.results:
            r.hint = None
    b.region.ops.extend(ops)
    if spec.outs is None:
        whole = cl.value(spec.out_value)
        return [b.getitem(whole, b.const(k)) if need[k] else None for k in range(len(need))]
    return [cl.value(v) if need[k] and k not in spec.none_outs else None
            for k, v in enumerate(spec.outs)]


# ----------------------------------------------------------------------------- forward rules


@dataclass
class JSpec:
    """A forward rule specialised on argument and tangent types, split into its two parts.

    ``params``/``fwd_ops``/``value`` are as in :class:`Spec` (so :func:`emit_forward`
    clones the primal part); ``diff_params``, ``diff_ops`` and ``diff_out`` are the
    differential's body specialised on the tangents' types (``NoneType`` for a
    symbolic zero), and ``diff_free`` the rule's values it reads.
    """

    params: list[n.Value]
    fwd_ops: list[n.Op]
    value: n.Value
    diff_params: list[n.Value]
    diff_ops: list[n.Op]
    diff_out: n.Value
    diff_free: list[n.Value]
    value_type: type | None
    #: Whether the tangent is surely a number or an array (never ``None``).
    out_sure: bool


_JSPECS: dict[tuple[int, tuple[Any, ...]], JSpec | None] = {}


def specialized_jvp(rule_fn: Callable, nargs: int, arg_types: Sequence[type | None],
                    tangent_types: Sequence[type | None] | None = None,
                    keywords: Keywords = (), unknown_ok: bool = False) -> JSpec | None:
    """The inlinable form of the forward rule ``rule_fn`` for these argument types, or ``None``.

    ``tangent_types[i]`` is the exact type of argument ``i``'s tangent where known
    (``type(None)`` for a symbolic zero, ``None`` for unknown). ``None`` means: call the
    rule at run time (its shape is not ``return value, differential``, or its arguments'
    types are unknown). A rule of ``*args`` is specialised on ``nargs``. ``unknown_ok``:
    inline even where types are unknown (code differentiated again cannot call a rule).
    """
    ttypes = tuple(tangent_types) if tangent_types is not None else (None,) * nargs
    key = (id(rule_fn), (nargs, tuple(arg_types), ttypes, keywords, unknown_ok))
    if key in _JSPECS:
        return _JSPECS[key]
    spec = None
    if unknown_ok or all(t is not None for t in arg_types):
        spec = _build_jvp(rule_fn, nargs, list(arg_types), list(ttypes), keywords)
    _JSPECS[key] = spec
    return spec


def _build_jvp(rule_fn: Callable, nargs: int, arg_types: list[type | None],
               ttypes: list[type | None], keywords: Keywords) -> JSpec | None:
    split = _split(rule_fn, nargs, arg_types, keywords)
    if split is None:
        return None
    fn, types, body, ret, defs, pair = split
    value, dv = pair.items
    mk = defs.get(dv.id)
    # (literal defaults, ``lambda x_dot, p_dot=None: ...`` of a rule whose second argument
    # may be left out, fill the parameters the call does not give)
    given = [defs.get(d.id) for d in mk.defaults] if isinstance(mk, n.MakeFunction) else [0]
    if not isinstance(mk, n.MakeFunction) or \
            not all(isinstance(c, n.Const) and type(c.value) in LITERALS for c in given) or \
            not bind_arity(mk.func, nargs, [c.value for c in given]):  # type: ignore[union-attr]
        return None
    if any(mk.result in op.operands() for op in n.walk(mk.func.body)):
        return None
    if [op for op in body.ops if dv in op.operands()] != [pair]:
        return None
    fwd_ops = [op for op in body.ops if op is not mk and op is not pair and op is not ret]
    if value not in body.args and not any(value.id == r.id for op in fwd_ops
                                          for r in op.results):
        return None
    free_types = dict(types.by_id)
    for p, t in zip(body.args, arg_types):
        if t is not None:
            free_types[p.id] = plain(t)
    diff = mk.func
    specialize(diff, ttypes, free_types)
    cleanup(diff, drop_pure_calls=True)
    d_ret = diff.body.ops[-1]
    if not isinstance(d_ret, n.Return) or any(
            isinstance(op, n.Return) for op in diff.body.ops[:-1]):
        return None
    d_types = infer_types(diff, ttypes, free_types)
    value_type = types.of(value) if value not in body.args else \
        plain(arg_types[body.args.index(value)])
    sure = d_types.of(d_ret.value) in (float, numpy.float64, numpy.ndarray, FLOAT_OR_FLOAT64)
    return JSpec(
        params=list(body.args), fwd_ops=fwd_ops, value=value,
        diff_params=list(diff.body.args), diff_ops=list(diff.body.ops[:-1]),
        diff_out=d_ret.value, diff_free=free_uses(diff.body), value_type=value_type,
        out_sure=sure)


def emit_differential(spec: JSpec, fwd: Forward, dots: Sequence[n.Value], b: Builder,
                      loc: SourceLoc | None) -> n.Value:
    """Clone the differential's body into ``b`` with its parameters bound to ``dots``;
    return the tangent of the rule's value."""
    mapping = {p.id: d for p, d in zip(spec.diff_params, dots)}
    for v in spec.diff_free:
        mapping[v.id] = fwd.cloner.value(v)
    cl = Cloner(mapping)
    ops = cl.ops(spec.diff_ops)
    _stamp(ops, loc)
    for op in n.walk(n.Region([], ops)):
        for r in op.results:
            r.hint = None
    b.region.ops.extend(ops)
    return cl.value(spec.diff_out)
