"""The public differential operators, ``show``, and the caches behind them.

Every cache entry remembers the names it resolved (globals, closure cells,
builtins); an entry whose names no longer resolve to the same objects is
rebuilt, so rebinding a global or redefining a helper is seen at the next call.
Nothing is cached when a transform fails.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from wengert import runtime, tangents
from wengert.analysis.types import infer_types, return_type
from wengert.codegen.emit import generate
from wengert.diagnostics import (
    NonDifferentiableError,
    NonDifferentiableWarning,
    SourceUnavailableError,
    WengertError,
)
from wengert.frontend.lower import lower_with_deps
from wengert.frontend.source import Dependency, unwrap
from wengert.ir import nodes as n
from wengert.ir.printer import print_function
from wengert.rules import registry
from wengert.transforms.vjp import vjp_transform


@dataclass
class _Entry:
    ir: n.Function
    deps: list[Dependency]
    code: Any = None
    globals: Any = None
    compiled: Any = None
    source: str | None = None

    def valid(self, fn: Any) -> bool:
        return self.code is fn.__code__ and self.globals is fn.__globals__ and \
            all(d.still_valid() for d in self.deps)


_PRIMAL_CACHE: dict[Any, _Entry] = {}


def _key(fn: Any) -> Any:
    # Identity, not equality: code objects of two identical modules compare equal.
    # The cells' contents and the globals are checked by the entry itself.
    return (id(fn.__code__), id(fn.__globals__), tuple(id(c) for c in (fn.__closure__ or ())))


def _primal_entry(fn: Any) -> _Entry:
    key = _key(fn)
    entry = _PRIMAL_CACHE.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    _PRIMAL_CACHE.pop(key, None)
    ir, deps = lower_with_deps(fn)
    entry = _Entry(ir, deps, fn.__code__, fn.__globals__)
    _PRIMAL_CACHE[key] = entry
    return entry


def lower_ir(f: Any) -> n.Function:
    """The (cached) IR of ``f``."""
    fn, _, _ = unwrap(f)
    return _primal_entry(fn).ir


def primal(f: Any) -> Any:
    """``f`` regenerated from its IR: a compiled function that behaves like ``f``."""
    fn, bound_args, bound_kwargs = unwrap(f)
    entry = _primal_entry(fn)
    if entry.compiled is None:
        compiled, source = generate(entry.ir, f"{fn.__qualname__}:primal")
        compiled.__defaults__ = fn.__defaults__
        compiled.__kwdefaults__ = fn.__kwdefaults__
        entry.compiled, entry.source = compiled, source
    out = entry.compiled
    if bound_args or bound_kwargs:
        out = functools.partial(out, *bound_args, **bound_kwargs)
    return out


def show(f: Any, mode: str = "ir", argnums: int | Sequence[int] = 0,
         arg_types: Sequence[type | None] | None = None) -> str:
    """Text of what wengert makes of ``f``: ``"ir"``, ``"primal"`` or ``"vjp"``.

    ``"vjp"`` shows the generated forward code and pullback for ``argnums``,
    specialised on ``arg_types`` (default: ``float`` for every parameter).
    """
    fn, bound, _ = unwrap(f)
    if mode == "ir":
        return print_function(_primal_entry(fn).ir)
    if mode == "primal":
        primal(fn)
        return _primal_entry(fn).source or ""
    if mode == "vjp":
        nparams = len(_primal_entry(fn).ir.body.args)
        if arg_types is None:
            arg_types = [float] * nparams
        wrt = _wrt(argnums, len(bound), nparams)
        return _vjp_entry(fn, wrt, tuple(arg_types)).source or ""
    raise ValueError(f"unknown mode {mode!r}: expected 'ir', 'primal' or 'vjp'")


# ----------------------------------------------------------------------------- reverse mode


@dataclass
class _VJPEntry:
    primal: _Entry
    compiled: Any
    source: str
    code: Any
    globals: Any
    #: What the derivatives it calls directly (and the result types it used) resolved.
    linked: list[Any] = dataclasses.field(default_factory=list)

    def valid(self, fn: Any) -> bool:
        return self.primal.valid(fn) and all(d.still_valid() for d in self.linked)


_VJP_CACHE: dict[Any, _VJPEntry] = {}


class _CodeDep:
    """A function linked to by identity: stale if its code object is replaced."""

    __slots__ = ("fn", "code")

    def __init__(self, fn: Any) -> None:
        self.fn, self.code = fn, fn.__code__

    def still_valid(self) -> bool:
        return self.fn.__code__ is self.code


def _unique(deps: list[Any]) -> list[Any]:
    seen: set[int] = set()
    return [d for d in deps if id(d) not in seen and not seen.add(id(d))]  # type: ignore


class _Linker:
    """What one VJP build links to: the derived VJPs of user functions it calls with
    arguments of known types (called directly, no dispatcher), and the result types of
    such calls. Whatever those resolved becomes part of the caller's entry, so the
    caller is rebuilt when any of them changes."""

    def __init__(self) -> None:
        self.deps: list[Any] = []
        self.cyclic = False
        #: Result types of calls still being inferred that this build assumed.
        self.consulted: set[Any] = set()

    def result_type(self, fn: Any, arg_types: list[Any]) -> Any:
        found = _result_type(fn, tuple(arg_types), self.consulted)
        if found is None:
            return None
        self.deps.extend(found[1])
        return found[0]

    def callee_ir(self, fn: Any) -> n.Function | None:
        """The IR of a user function to inline (``None``: it has none)."""
        try:
            prim = _primal_entry(fn)
        except WengertError:
            return None
        self.deps.extend([_CodeDep(fn), *prim.deps])
        return prim.ir

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> Any:
        """The compiled VJP of ``fn`` for these types, a :class:`runtime.Later` for one
        being built (recursion), or ``None`` (the call goes through the dispatcher)."""
        key = (_key(fn), wrt, arg_types)
        later = _BUILDING.get(key)
        if later is not None:
            self.cyclic = True
            self.deps.extend([_CodeDep(fn), *_primal_entry(fn).deps])
            return later
        entry = _vjp_entry(fn, wrt, arg_types)  # its errors are the caller's, like a compiler
        self.deps.extend([_CodeDep(fn), *entry.primal.deps, *entry.linked])
        return entry.compiled


_RESULT_TYPES: dict[Any, tuple[Any, list[Any]]] = {}
#: Result types being inferred, with the type assumed for recursive calls meanwhile.
_RESULT_GUESS: dict[Any, Any] = {}


def _result_type(fn: Any, arg_types: tuple[Any, ...], consulted: set[Any] | None = None
                 ) -> tuple[Any, list[Any]] | None:
    """The exact type ``fn`` returns for arguments of these types, and what that rests on.

    A recursive call is assumed to return a guess (unknown, then ``float``, then an array);
    a guess is kept only when the body, under it, returns exactly that type: then every
    call returns it, by induction on the depth of the recursion.
    """
    key = (_key(fn), arg_types)
    hit = _RESULT_TYPES.get(key)
    if hit is not None and all(d.still_valid() for d in hit[1]):
        return hit
    if key in _RESULT_GUESS:
        if consulted is not None:
            consulted.add(key)
        return _RESULT_GUESS[key], []
    if not _has_plain_signature(fn, len(arg_types)):
        return None
    try:
        prim = _primal_entry(fn)
    except WengertError:
        return None
    for guess in (None, float, numpy.ndarray):
        linker = _Linker()
        _RESULT_GUESS[key] = guess
        try:
            inferred = infer_types(prim.ir, list(arg_types), callee=linker.result_type)
        finally:
            del _RESULT_GUESS[key]
        t = return_type(prim.ir, inferred)
        if t is not None and (guess is None or t is guess):
            break
    else:
        t = None
    found = (t, _unique([_CodeDep(fn), *prim.deps, *linker.deps]))
    linker.consulted.discard(key)
    if consulted is not None:
        consulted |= linker.consulted
    if not linker.consulted:  # else it rests on a caller's guess, still unconfirmed
        _RESULT_TYPES[key] = found
    return found


def _has_plain_signature(fn: Any, nargs: int) -> bool:
    """Whether ``fn(a1, ..., an)`` binds its arguments to its parameters one to one."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount \
        and code.co_argcount == nargs


#: VJPs being generated, by cache key: a recursive call links to the ``Later``.
_BUILDING: dict[Any, runtime.Later] = {}
#: Entries finished while an outer build is still going (cleared when it ends).
_BUILT: list[tuple[Any, _VJPEntry, _Linker]] = []


def _vjp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> _VJPEntry:
    key = (_key(fn), wrt, arg_types)
    entry = _VJP_CACHE.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    _VJP_CACHE.pop(key, None)
    prim = _primal_entry(fn)
    later = runtime.Later(f"{fn.__name__}_vjp")
    _BUILDING[key] = later
    start = len(_BUILT)
    linker = _Linker()
    try:
        ir, warnings_found = vjp_transform(prim.ir, wrt, arg_types, linker)
        compiled, source = generate(ir, f"{fn.__qualname__}:vjp")
    except BaseException:
        # Derivatives finished inside this one may link to its ``Later``: drop them too.
        for k, _, _ in _BUILT[start:]:
            _VJP_CACHE.pop(k, None)
        del _BUILT[start:]
        raise
    finally:
        del _BUILDING[key]
    compiled.__defaults__ = fn.__defaults__
    compiled.__kwdefaults__ = fn.__kwdefaults__
    later.fn = compiled
    for name, loc in warnings_found:
        warnings.warn(NonDifferentiableWarning(
            f"an active value passes through {name}(), which has no derivative; "
            "the gradient through it is zero", loc,
            hint="use wengert.stop_gradient() to say this is intended"), stacklevel=4)
    entry = _VJPEntry(prim, compiled, source, fn.__code__, fn.__globals__,
                      _unique(linker.deps))
    _VJP_CACHE[key] = entry
    _BUILT.append((key, entry, linker))
    if not _BUILDING:
        group = _BUILT[:]
        _BUILT.clear()
        if any(lk.cyclic for _, _, lk in group):
            # Mutually recursive derivatives call each other: each is stale when any is.
            union = _unique([d for _, e, _ in group for d in [*e.primal.deps, *e.linked]])
            for _, e, _ in group:
                e.linked = union
    return entry


def _wrt(argnums: int | Sequence[int], nbound: int, nparams: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be ints, got {a!r}")
        i = a + nbound if a >= 0 else nparams + a
        if not 0 <= i < nparams:
            raise ValueError(f"argnums {a} is out of range for a function of "
                             f"{nparams - nbound} argument(s)")
        out.append(i)
    return tuple(out)


def _param_types(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, ...] | None:
    """The type of each parameter's value for this call (``None``: cannot bind cheaply)."""
    code = fn.__code__
    nparams = code.co_argcount + code.co_kwonlyargcount
    if not kwargs and code.co_flags & 0x0C == 0 and len(args) == code.co_argcount and \
            not code.co_kwonlyargcount:
        return tuple(type(a) for a in args)
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    out = tuple(type(v) for v in bound.arguments.values())
    del nparams
    return out


def _shapes_of(args: tuple) -> tuple:
    """Copies of container arguments the function may change the length of (``append``):
    their cotangents take the structure the arguments had when the call began."""
    for a in args:
        if isinstance(a, (list, dict)):
            return tuple(copy.deepcopy(a) if isinstance(a, (list, dict)) else a for a in args)
    return args


def _call_vjp(fn: Any, wrt: tuple[int, ...] | None, args: tuple, kwargs: dict
              ) -> tuple[Any, Any, _VJPEntry]:
    types_ = _param_types(fn, args, kwargs)
    nparams = len(_primal_entry(fn).ir.body.args)
    if types_ is None:
        # Let Python report the bad call (missing or unexpected arguments).
        fn(*args, **kwargs)
        raise TypeError("cannot bind the arguments")  # pragma: no cover
    if wrt is None:
        wrt = tuple(range(nparams))
    entry = _vjp_entry(fn, wrt, types_)
    out, pb = entry.compiled(*args, **kwargs)
    return out, pb, entry


def _finish(x: Any, adj: Any) -> Any:
    """An adjoint in the structure of the primal ``x``, zeros materialised."""
    if type(adj) is float and type(x) is float:
        return adj
    if isinstance(adj, runtime.Attrs):
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            fields = [_finish(getattr(x, f.name), adj.get(f.name)) for f in dataclasses.fields(x)]
            out = object.__new__(type(x))
            for f, v in zip(dataclasses.fields(x), fields):
                object.__setattr__(out, f.name, v)
            return out
        # A plain object has no tangent space of its own (``tangents``): no cotangent.
        return None
    if adj is None and not tangents.is_differentiable(x) and hasattr(x, "__dict__") and \
            not isinstance(x, type) and not callable(x):
        return None
    if isinstance(adj, (list, tuple)) and isinstance(x, (list, tuple)) and len(adj) == len(x):
        items = [_finish(a, b) for a, b in zip(x, adj)]
        adj = tuple(items) if isinstance(x, tuple) else items
    elif isinstance(adj, dict) and isinstance(x, dict):
        adj = {k: _finish(v, adj.get(k)) for k, v in x.items()}
    return tangents.materialize(x, adj)


def _seed(out: Any) -> Any:
    if isinstance(out, (float, numpy.floating)):
        return type(out)(1.0)
    if isinstance(out, numpy.ndarray) and out.shape == () and \
            numpy.issubdtype(out.dtype, numpy.floating):
        return numpy.ones((), out.dtype)
    if isinstance(out, (int, bool, numpy.integer)):
        raise TypeError(f"grad requires a float output; the function returned "
                        f"{type(out).__name__} {out!r} (an int has no derivative)")
    raise TypeError("grad requires a scalar float output; the function returned "
                    f"{type(out).__name__}; use wengert.vjp for other outputs")


def value_and_grad(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """``f`` and its gradient with respect to ``argnums`` at once (JAX conventions)."""
    single = isinstance(argnums, int)

    #: Argument types -> (function, entry, wrt, bound arguments) of earlier calls: a call
    #: with the same types and a still-valid entry skips binding and lookups.
    fast: dict[tuple[type, ...], tuple[Any, _VJPEntry, tuple[int, ...], tuple]] = {}

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        hit = None if kwargs else fast.get(tuple(map(type, args)))
        if hit is not None and hit[1].valid(hit[0]):
            fn, entry, wrt, bound = hit
            full = (*bound, *args) if bound else args
            before = _shapes_of(full)
            out, pb = entry.compiled(*full)
        else:
            fn, bound, bound_kw = unwrap(f)
            full = (*bound, *args)
            kw = {**bound_kw, **kwargs}
            nparams = len(_primal_entry(fn).ir.body.args)
            wrt = _wrt(argnums, len(bound), nparams)
            before = _shapes_of(full)
            out, pb, entry = _call_vjp(fn, wrt, full, kw)
            if not kw and len(full) == fn.__code__.co_argcount and \
                    not fn.__code__.co_flags & 0x0C:
                fast[tuple(map(type, args))] = (fn, entry, wrt, tuple(bound))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair "
                                "(value, aux)")
            value, aux = out
            adjs = pb((_seed(value), None))
        else:
            value = out
            adjs = pb(_seed(value))
        grads = tuple(_finish(before[i], adjs[i]) for i in wrt)
        g = grads[0] if single else grads
        return ((value, aux), g) if has_aux else (value, g)

    return value_and_grad_f


def grad(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """The gradient of the scalar function ``f`` with respect to ``argnums``."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_f


def vjp(f: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), pullback)``; ``pullback(out_bar)`` gives one cotangent per primal."""
    fn, bound, bound_kw = unwrap(f)
    full = (*bound, *primals)
    nparams = len(_primal_entry(fn).ir.body.args)
    wrt = tuple(range(len(bound), min(len(full), nparams)))
    before = _shapes_of(full)
    out, pb, _ = _call_vjp(fn, wrt, full, dict(bound_kw))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (value, aux)")
        out, aux = out

    def pullback(out_bar: Any) -> tuple[Any, ...]:
        ct = tangents.materialize(out, out_bar)
        adjs = pb((ct, None) if has_aux else ct)
        return tuple(_finish(before[i], adjs[i]) for i in wrt)

    return (out, pullback, aux) if has_aux else (out, pullback)


def dispatch_vjp(f: Any, args: tuple, kwargs: dict, obj: Any, site: Any = None
                 ) -> tuple[Any, Any]:
    """Run-time dispatch for a call whose callee is a value: a rule or a derived VJP.

    The pullback returns the adjoint of ``obj`` (the receiver of a method call, else
    ``None``), then one adjoint per positional and keyword argument.
    """
    rule = registry.lookup(f) if _hashable_callable(f) else None
    nk = len(kwargs)
    if rule is not None and rule.vjp is not None and not kwargs:
        value, pb = rule.vjp(*args)

        def rule_pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
            outs = (None, *pb(g)) if g is not None else (None,) * (1 + len(args))
            if inouts is not None:
                outs = tuple(runtime.add_adjoint(a, b) for a, b in zip(inouts, outs))
            return outs
        return value, rule_pullback
    if rule is not None and rule.nondifferentiable:
        value = f(*args, **kwargs)

        def nondiff_pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
            return inouts if inouts is not None else (None,) * (1 + len(args) + nk)
        return value, nondiff_pullback
    try:
        fn, bound, bound_kw = unwrap(f)
    except SourceUnavailableError:
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
        raise NonDifferentiableError(
            f"{name} has no derivative rule and no Python source, and an active value is "
            "passed to it", site,
            notes=(f"register one with @wengert.derivative(of={name}) returning "
                   "(value, pullback)",)) from None
    full = (*bound, *args)
    kw = {**bound_kw, **kwargs}
    out, pb, _ = _call_vjp(fn, None, full, kw)
    plan = _plan(fn, len(full), tuple(kw))
    nb = len(bound)
    has_obj = obj is not None and nb >= 1 and bound[0] is obj

    def pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
        ins = None
        if inouts is not None:
            # Call-site slots (receiver, arguments, keywords) to parameters.
            site = [None] * nb + list(inouts[1:])
            if has_obj:
                site[0] = inouts[0]
            ins = [site[where[1]] if where is not None and where[0] == "one" else None
                   for where in plan]
        adjs = pb(g, ins)
        slots = [None] * (len(full) + nk)
        for p, where in enumerate(plan):
            if where is None:
                continue
            kind, pos = where
            a = adjs[p]
            if kind == "one":
                slots[pos] = a
            elif kind == "var":
                for j, x in enumerate(a if a is not None else ()):
                    slots[pos + j] = x
            else:  # "kw": a dict of adjoints for **kwargs
                for j, name in enumerate(kw):
                    if a is not None and name in a:
                        slots[len(full) + j] = a[name]
        first = slots[0] if has_obj else None
        out = (first, *slots[nb:])
        if inouts is not None:
            # Arguments the callee does not see as parameters keep what came in.
            out = tuple(o if o is not None else (i if p is None else None)
                        for o, i, p in zip(out, inouts, [None] * len(out)))
        return out

    return out, pullback


_PLANS: dict[Any, list] = {}


def _plan(fn: Any, npos: int, kwnames: tuple[str, ...]) -> list:
    """For each parameter: where its adjoint goes among the call's arguments."""
    key = (id(fn.__code__), npos, kwnames)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    sig = inspect.signature(fn, follow_wrapped=False)
    plan = []
    i = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if i < npos:
                plan.append(("one", i))
                i += 1
            elif p.name in kwnames:
                plan.append(("one", npos + kwnames.index(p.name)))
            else:
                plan.append(None)
        elif p.kind == p.VAR_POSITIONAL:
            plan.append(("var", i))
            i = npos
        elif p.kind == p.KEYWORD_ONLY:
            plan.append(("one", npos + kwnames.index(p.name)) if p.name in kwnames else None)
        else:
            plan.append(("kw", 0))
    _PLANS[key] = plan
    return plan


def _hashable_callable(f: Any) -> bool:
    try:
        hash(f)
    except TypeError:
        return False
    return True
