"""The pipeline from a function to its compiled derivative, and the linkers.

lower -> clean up -> verify (:func:`lower_with_deps`) -> transform (the VJP or JVP
transform, given a linker) -> update adjoints in place -> emit and compile
(:func:`derive`). A linker tells a transform what a user function it calls is: its IR
(to inline it), the result type of a call, the parameters it writes into, its compiled
derivative (to link it, recursion through a ``runtime.Later``), or nothing (the call is
dispatched at run time). Derivatives differentiated again are built with
:class:`InlineOnly`, which links nothing (compiled code has no IR to differentiate).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy

from wengert import runtime
from wengert.analysis.effects.aliases import returned_params as params_returned_by
from wengert.analysis.effects.aliases import written_params as params_written_in
from wengert.analysis.types import infer_types, return_type
from wengert.codegen.emit import generate, generate_split
from wengert.diagnostics import (
    NonDifferentiableWarning,
    ReverseModeRefusal,
    WengertError,
)
from wengert.driver.cache import (
    GRADIENT_IRS,
    JVPS,
    PRIMALS,
    RESULT_TYPES,
    VJPS,
    CodeDep,
    DerivedEntry,
    Entry,
    unique,
)
from wengert.driver.callables import (
    Gradient,
    cache_key,
    fixed_arity,
    leading,
    operator_name,
    primitive_function,
    wrt_indices,
)
from wengert.frontend.lower import lower_with_deps as lower_source
from wengert.frontend.source import Dependency, lift_captures, unwrap
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.clone import clone_function
from wengert.ir.verify import VerifyError, verify
from wengert.locate import in_standard_library
from wengert.objects import namedtuple_method
from wengert.rules import registry
from wengert.transforms.cleanup import cleanup
from wengert.transforms.gradient import grad_ir
from wengert.transforms.inplace import update_in_place
from wengert.transforms.prepare import prepare_function
from wengert.transforms.split import split_pullback
from wengert.transforms.vjp import vjp_transform
from wengert.transforms.vjp_record_pruning import prune_fused_records

#: Held while anything is derived or looked up in the caches of derivations: derivations
#: are built, then published, by one thread at a time (the bookkeeping of recursion,
#: ``_BUILDING`` and the guesses of result types, is shared), while derivatives already
#: built run in any number of threads. Re-entrant: a derivation derives its callees.
BUILD_LOCK = threading.RLock()

_T = TypeVar("_T", bound=Callable[..., Any])


def _under_build_lock(fn: _T) -> _T:
    """``fn``, run holding :data:`BUILD_LOCK`."""

    @functools.wraps(fn)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with BUILD_LOCK:
            return fn(*args, **kwargs)
    return locked  # type: ignore[return-value]


def lower_with_deps(f: Any) -> tuple[n.Function, list[Dependency]]:
    """``f``'s IR, cleaned up and verified, and the names it resolved (for staleness)."""
    ir, deps = lower_source(f)
    cleanup(ir)
    verify(ir)
    return ir, deps


def lower(f: Any) -> n.Function:
    """``f``'s IR, cleaned up and verified (not cached: :func:`primal_entry` caches)."""
    return lower_with_deps(f)[0]


def function_of(f: Any, nargs: int | None = None, lift: bool = False
                ) -> tuple[Any, tuple, dict]:
    """:func:`unwrap`, with functions made by :func:`grad` seen as :class:`Gradient`;
    ``nargs`` (the call's positional arguments, when known) fixes the arity of a
    ``*args`` function under a ``grad`` (:func:`fixed_arity`). With ``lift`` (a function
    given to the API), a closure's data is bound as leading arguments of the one function
    of its code (:func:`lift_captures`): closures made anew share their derivation."""
    if type(f) is Gradient:
        return f, (), {}
    spec = getattr(f, "__wengert_grad__", None)
    if spec is None:
        prim = primitive_function(f)
        fn, bound, bound_kw = unwrap(f if prim is None else prim)
        if lift and prim is None and (got := lift_captures(fn)) is not None:
            fn, data = got
            bound = (*data, *bound)
        return fn, bound, bound_kw
    inner, argnums = spec
    fn, bound, bound_kw = function_of(inner, nargs, lift)
    if nargs is not None:
        fn = fixed_arity(fn, len(bound) + nargs, bound_kw)
    wrt = wrt_indices(argnums, len(bound), param_count(fn))
    return Gradient(fn, wrt, isinstance(argnums, int)), bound, bound_kw


def is_lifted(fn: Any) -> bool:
    """Whether ``fn`` (or the function at the bottom of a :class:`Gradient`) takes a
    closure's data as leading arguments (:func:`function_of` with ``lift``): they are read
    anew at every call."""
    while type(fn) is Gradient:
        fn = fn.base
    return getattr(fn, "__wengert_node__", None) is not None


def param_count(fn: Any) -> int:
    """How many parameters ``fn`` has (``*args`` and ``**kwargs`` count one each)."""
    while type(fn) is Gradient:
        fn = fn.base
    return len(primal_entry(fn).ir.body.args)


@_under_build_lock
def ir_entry(fn: Any, arg_types: tuple[Any, ...]) -> Entry:
    """The IR to differentiate for ``fn`` called with arguments of these types: its own
    (lowered once for all types) or, for a :class:`Gradient`, the gradient IR of what it
    differentiates, which depends on the types."""
    if type(fn) is not Gradient:
        return primal_entry(fn)
    key = (cache_key(fn), arg_types)
    entry = GRADIENT_IRS.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    GRADIENT_IRS.pop(key, None)
    inner = ir_entry(fn.inner, arg_types)
    gir, deps = gradient_ir(inner.ir, fn.wrt, fn.single, arg_types)
    entry = Entry(gir, unique([CodeDep(fn.base), *inner.deps, *deps]),
                   fn.__code__, fn.__globals__)
    GRADIENT_IRS[key] = entry
    return entry


def takes_derivatives(fn: Any) -> bool:
    """Whether the plain function ``fn`` takes derivatives in its body (``grad(g)(x)``,
    ``vjp(f, x)``): its own derivative is one of a higher order."""
    if not isinstance(fn, types.FunctionType):
        return False
    try:
        entry = primal_entry(fn)
    except WengertError:
        return False
    if entry.nested is None:
        entry.nested = any(isinstance(op, n.Const) and operator_name(op.value) is not None
                           for op in n.walk(entry.ir.body))
    return entry.nested


def primal_entry(fn: Any) -> Entry:
    """``fn``'s lowered IR, cached (a lookup needs no lock: the caches are published to
    whole, under the build lock)."""
    entry = PRIMALS.get(cache_key(fn))
    if entry is not None and entry.valid(fn):
        return entry
    return _primal_entry(fn)


@_under_build_lock
def _primal_entry(fn: Any) -> Entry:
    key = cache_key(fn)
    entry = PRIMALS.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    PRIMALS.pop(key, None)
    ir, deps = lower_with_deps(fn)
    entry = Entry(ir, deps, fn.__code__, fn.__globals__)
    PRIMALS[key] = entry
    return entry


class Linker:
    """What one VJP build links to: the derived VJPs of user functions it calls with
    arguments of known types (called directly, no dispatcher), and the result types of
    such calls. Whatever those resolved becomes part of the caller's entry, so the
    caller is rebuilt when any of them changes."""

    def __init__(self) -> None:
        self.deps: list[Any] = []
        self.cyclic = False
        #: Result types of calls still being inferred that this build assumed.
        self.consulted: set[Any] = set()

    def resolve(self, fn: Any) -> Any:
        """The function to differentiate for a callee ``fn`` known when transforming:
        itself if a plain function, or the :class:`Gradient` behind one made by
        :func:`grad`; ``None`` for anything else (one over a bound method or
        ``functools.partial`` included)."""
        if getattr(fn, "__wengert_grad__", None) is None:
            return fn if isinstance(fn, types.FunctionType) else None
        derived, bound, bound_kw = function_of(fn)
        return None if bound or bound_kw else derived

    def is_grad(self, value: Any) -> bool:
        return operator_name(value) == "grad"

    def is_vjp(self, value: Any) -> bool:
        return operator_name(value) == "vjp"

    def is_jvp(self, value: Any) -> bool:
        return operator_name(value) == "jvp"

    def operator_of(self, value: Any) -> str | None:
        return operator_name(value)

    def jvp_ir(self, fn: n.Function, wrt: tuple[int, ...],
               arg_types: Sequence[Any]) -> n.Function:
        jir, deps = jvp_ir(fn, wrt, arg_types)
        self.deps.extend(deps)
        return jir

    def fixed_arity(self, fn: Any, nargs: int) -> Any:
        """``fn`` as a function of exactly ``nargs`` parameters (:func:`fixed_arity`; those
        past them left to their defaults, :func:`leading`)."""
        return leading(fixed_arity(fn, nargs, {}), nargs)

    def function_ir(self, fn: Any) -> n.Function | None:
        """The IR of the plain function ``fn`` (``None`` for anything else)."""
        if not isinstance(fn, types.FunctionType):
            return None
        return self.callee_ir(fn)

    def applied_vjp_ir(self, fn: n.Function, wrt: tuple[int, ...],
                       arg_types: Sequence[Any]) -> n.Function:
        vir, deps = applied_vjp_ir(fn, wrt, arg_types)
        self.deps.extend(deps)
        return vir

    def make_grad(self, f: Any, argnums: Any) -> Any:
        return runtime.driver().grad(f, argnums)

    def gradient_ir(self, fn: n.Function, wrt: tuple[int, ...], single: bool,
                    arg_types: Sequence[Any]) -> n.Function:
        gir, deps = gradient_ir(fn, wrt, single, arg_types)
        self.deps.extend(deps)
        return gir

    def result_type(self, fn: Any, arg_types: list[Any]) -> Any:
        fn = self.resolve(fn)
        if fn is None:
            return None
        found = result_type(fn, tuple(arg_types), self.consulted)
        if found is None:
            return None
        self.deps.extend(found[1])
        return found[0]

    def written_params(self, fn: Any) -> Any:
        """The parameters the user function ``fn`` may write into (all, if unknown)."""
        try:
            written = written_params(fn)
        except WengertError:
            return range(10**9)
        self.deps.append(CodeDep(fn))
        return written

    def returned_params(self, fn: Any) -> Any:
        """The parameters of the user function ``fn`` whose objects (or parts) it may
        return (all, if unknown)."""
        try:
            returned = params_returned_by(primal_entry(fn).ir)
        except WengertError:
            return range(10**9)
        self.deps.append(CodeDep(fn))
        return returned

    def callee_ir(self, fn: Any) -> n.Function | None:
        """The IR of a user function to inline (``None``: it has none)."""
        if getattr(fn, "__wengert_grad__", None) is not None:
            return None  # its IR depends on the argument types: linked instead
        try:
            prim = primal_entry(fn)
        except WengertError:
            return None
        self.deps.extend([CodeDep(fn), *prim.deps])
        return prim.ir

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> Any:
        """The compiled VJP of ``fn`` for these types, a :class:`runtime.Later` for one
        being built (recursion), or ``None`` (the call goes through the dispatcher)."""
        key = (cache_key(fn), wrt, arg_types)
        later = _BUILDING.get(key)
        if later is not None:
            self.cyclic = True
            self.deps.extend([CodeDep(fn), *primal_entry(fn).deps])
            return later
        entry = vjp_entry(fn, wrt, arg_types)  # its errors are the caller's, like a compiler
        self.deps.extend([CodeDep(fn), *entry.primal.deps, *entry.linked])
        return entry.compiled


#: Result types being inferred, with the type assumed for recursive calls meanwhile.
_RESULT_GUESS: dict[Any, Any] = {}
#: Result types found under guesses still being made: key -> [(the guesses, by key, it
#: rests on; what was found)].
_PROVISIONAL: dict[Any, list[tuple[tuple[tuple[Any, Any], ...], Any]]] = {}


@_under_build_lock
def result_type(fn: Any, arg_types: tuple[Any, ...], consulted: set[Any] | None = None
                 ) -> tuple[Any, list[Any]] | None:
    """The exact type ``fn`` returns for arguments of these types, and what that rests on.

    A recursive call is assumed to return a guess (unknown, then ``float``, then an array);
    a guess is kept only when the body, under it, returns exactly that type: then every
    call returns it, by induction on the depth of the recursion.
    """
    key = (cache_key(fn), arg_types)
    hit = RESULT_TYPES.get(key)
    if hit is not None and all(d.still_valid() for d in hit[1]):
        return hit
    if key in _RESULT_GUESS:
        if consulted is not None:
            consulted.add(key)
        return _RESULT_GUESS[key], []
    for rests_on, found in _PROVISIONAL.get(key, ()):
        # Found before under the guesses still made now: the same inference again.
        if all(k in _RESULT_GUESS and _RESULT_GUESS[k] is g for k, g in rests_on):
            if consulted is not None:
                consulted.update(k for k, _ in rests_on)
            return found
    if not _has_plain_signature(fn, len(arg_types)) or \
            in_standard_library(fn.__code__.co_filename):
        # (the standard library's Python is not read for a type: a helper of a helper
        # such as ``dataclasses.fields`` would be lowered for nothing the caller needs)
        return None
    try:
        prim = ir_entry(fn, arg_types)
    except WengertError:
        return None
    for guess in (None, float, numpy.ndarray):
        linker = Linker()
        _RESULT_GUESS[key] = guess
        try:
            inferred = infer_types(prim.ir, list(arg_types), callee=linker.result_type,
                                   writes=linker.written_params)
        finally:
            del _RESULT_GUESS[key]
            # (what rested on this guess is stale now; all of it once no guess is left)
            if not _RESULT_GUESS:
                _PROVISIONAL.clear()
        t = return_type(prim.ir, inferred)
        if t is not None and (guess is None or t is guess):
            break
        if key not in linker.consulted:
            break  # (no recursive call read the guess: another one finds the same)
    else:
        t = None
    found = (t, unique([CodeDep(fn), *prim.deps, *linker.deps]))
    linker.consulted.discard(key)
    if consulted is not None:
        consulted |= linker.consulted
    if not linker.consulted:  # else it rests on a caller's guess, still unconfirmed
        RESULT_TYPES[key] = found
    else:
        # Kept while the guesses it rests on are made (each call of a recursive helper
        # in the caller's body would otherwise infer it again), dropped with the last.
        rests_on = tuple((k, _RESULT_GUESS[k]) for k in linker.consulted)
        _PROVISIONAL.setdefault(key, []).append((rests_on, found))
    return found


def _has_plain_signature(fn: Any, nargs: int) -> bool:
    """Whether ``fn(a1, ..., an)`` binds its arguments to its parameters one to one."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount \
        and code.co_argcount == nargs


#: VJPs being generated, by cache key: a recursive call links to the ``Later``.
_BUILDING: dict[Any, runtime.Later] = {}


#: Entries finished while an outer build is still going (cleared when it ends).
_BUILT: list[tuple[Any, DerivedEntry, Linker]] = []


def vjp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> DerivedEntry:
    """``fn``'s VJP for these argument types, derived once (looked up without the lock)."""
    entry = VJPS.get((cache_key(fn), wrt, arg_types))
    if entry is not None and entry.valid(fn):
        return entry
    return _vjp_entry(fn, wrt, arg_types)


#: Reverse mode's refusals (of the writes into objects it cannot follow), by derivation key,
#: with what the primal rests on: a function dispatched at every call (or given to a new
#: ``grad`` each time, which then answers by forward mode) is not derived again to be refused
#: again, while nothing it reads has changed.
REFUSALS: dict[Any, tuple[ReverseModeRefusal, list[Any]]] = {}


@_under_build_lock
def _vjp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> DerivedEntry:
    key = (cache_key(fn), wrt, arg_types)
    entry = VJPS.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    VJPS.pop(key, None)
    refused = REFUSALS.get(key)
    if refused is not None and all(d.still_valid() for d in refused[1]):
        raise refused[0].with_traceback(None)
    linker = Linker()
    try:
        return derive(fn, arg_types, key, "vjp", VJPS, _BUILDING, _BUILT, linker,
                      lambda ready: vjp_transform(ready.fn, wrt, arg_types, linker, ready))
    except ReverseModeRefusal as e:
        if len(REFUSALS) >= 256:
            del REFUSALS[next(iter(REFUSALS))]
        REFUSALS[key] = (e, [CodeDep(fn), *ir_entry(fn, arg_types).deps])
        raise


#: Verify the IR after every transform, not only after lowering (the test suite sets
#: ``WENGERT_VERIFY=1``): a transform that breaks an IR invariant fails where it did.
VERIFY_TRANSFORMS = os.environ.get("WENGERT_VERIFY") == "1"


def checked(ir: n.Function, after: str) -> None:
    """Verify ``ir`` (when :data:`VERIFY_TRANSFORMS`), naming the pass that made it."""
    if VERIFY_TRANSFORMS:
        try:
            verify(ir)
        except VerifyError as e:
            raise AssertionError(f"wengert internal error: the IR after {after} is "
                                 f"malformed: {e}") from None


def derive(fn: Any, arg_types: tuple[Any, ...], key: Any, mode: str, cache: dict,
            building: dict, built: list, linker: Linker, transform: Any) -> DerivedEntry:
    """Transform ``fn``'s IR, compile and cache the result under ``key``: the bookkeeping
    both modes share (recursion through ``Later``, cleanup after a failure, and shared
    dependencies for mutually recursive derivatives)."""
    prim = ir_entry(fn, arg_types)  # lower -> cleanup (the frontend; verified)
    later = runtime.Later(f"{fn.__name__}_{mode}")
    building[key] = later
    start = len(built)
    try:
        # devirtualize -> nested derivatives -> inline -> specialize, to a fixpoint ->
        # index loops -> guards (``transforms/prepare.py``), on a copy of the primal
        ready = prepare_function(clone_function(prim.ir)[0], arg_types, linker)
        checked(ready.fn, "the preparation")
        # the mode's transform: its own loop rewrites and checks, then the derivative
        ir, warnings_found = transform(ready)
        checked(ir, f"the {mode} transform")
        update_in_place(ir)
        prune_fused_records(ir)
        checked(ir, "the in-place update")
        parts = split_pullback(ir) if mode == "vjp" else None
        if parts is not None:
            # Forward and pullback as two functions: callers linked to this one call them
            # directly, with a tuple of residuals instead of a closure between them.
            fwd, pb, takes_inouts = parts
            checked(fwd, "the split of the pullback")
            forward, pullback, source = generate_split(fwd, pb, takes_inouts,
                                                       f"{fn.__qualname__}:{mode}", later)
            compiled = runtime.joined(forward, pullback)
            later.forward, later.pullback = forward, pullback
        else:
            compiled, source = generate(ir, f"{fn.__qualname__}:{mode}", self_ref=later)
            if mode == "vjp":  # (linked callers call the roles; this one has a closure)
                later.forward, later.pullback = compiled, runtime.call_pullback
                compiled.forward, compiled.pullback = compiled, runtime.call_pullback
    except BaseException:
        # Derivatives finished inside this one may link to its ``Later``: drop them too.
        for k, _, _ in built[start:]:
            cache.pop(k, None)
        del built[start:]
        raise
    finally:
        del building[key]
    # Defaults are never baked in: the entry is shared by every function object of the
    # code, each with defaults of its own, so callers pass every parameter.
    later.fn = compiled
    what = "gradient" if mode == "vjp" else "tangent"
    for name, loc in warnings_found:
        warnings.warn(NonDifferentiableWarning(
            f"an active value passes through {name}(), which has no derivative; "
            f"the {what} through it is zero", loc,
            hint="use wengert.stop_gradient() to say this is intended"), stacklevel=5)
    entry = DerivedEntry(prim, compiled, source, fn.__code__, fn.__globals__,
                      unique(linker.deps))
    cache[key] = entry
    built.append((key, entry, linker))
    if not building:
        group = built[:]
        built.clear()
        if any(lk.cyclic for _, _, lk in group):
            # Mutually recursive derivatives call each other: each is stale when any is.
            union = unique([d for _, e, _ in group for d in [*e.primal.deps, *e.linked]])
            for _, e, _ in group:
                e.linked = union
    return entry


def writes_arguments(fn: Any, args: Sequence[Any] = ()) -> frozenset[int]:
    """The parameters ``fn`` may write into (none for what is not a plain function), called
    with ``args`` (a method called on one of them is its class's: ``p.kinetic()``)."""
    if type(fn) is not types.FunctionType:
        return frozenset()
    try:
        return written_params(fn, classes=tuple(map(_receiver_classes, args)))
    except WengertError:
        return frozenset()


@dataclasses.dataclass(frozen=True)
class ItemsOf:
    """In a write summary's ``classes``: a list parameter whose items are all of ``cls``
    (:func:`receiver_class`), so that ``q.m()`` for ``q`` read out of it is ``cls.m``."""

    cls: type


def _receiver_classes(obj: Any) -> Any:
    """:func:`receiver_class` of ``obj``, or for a list of objects of one such class
    (``[Body(...), ...]``) :class:`ItemsOf` it."""
    if type(obj) is list and obj and type(obj[0]).__module__ not in ("builtins", "numpy"):
        cls = receiver_class(obj[0])
        if cls is not None and all(type(o) is cls and receiver_class(o) is cls for o in obj):
            return ItemsOf(cls)
        return None
    return receiver_class(obj)


def receiver_class(obj: Any) -> type | None:
    """The class whose methods ``obj.m(...)`` calls, for summarising a method's writes
    (``None`` for a builtin's object, or where an attribute of ``obj`` itself hides a method
    of its class)."""
    cls = type(obj)
    if cls.__module__ in ("builtins", "numpy") or \
            cls.__getattribute__ is not object.__getattribute__:
        return None  # (attribute reads the class decides itself)
    own = getattr(obj, "__dict__", None) or {}
    if any(isinstance(getattr(cls, k, None), types.FunctionType) for k in own):
        return None
    return cls


#: Summaries being computed, with the one assumed for recursive calls meanwhile.
_WRITTEN_GUESS: dict[Any, frozenset[int]] = {}


@_under_build_lock
def written_params(fn: Any, self_class: type | None = None,
                   classes: tuple[type | None, ...] = ()) -> frozenset[int]:
    """The parameters ``fn`` may write into (:func:`~wengert.analysis.activity.
    written_params`), with the callees it calls summarised the same way. A recursive call
    is first assumed to write nothing, then what the body under that assumption writes,
    until the two agree (the least fixpoint). A gradient made by ``grad`` writes what the
    function it differentiates writes (it calls it with the same arguments). With
    ``self_class``, ``fn`` is a method called on an instance of that class (one whose own
    attributes hide none of its methods): its calls ``self.m(...)`` are of ``m`` as the
    class defines it, summarised for the class in turn; ``classes`` gives the class of each
    parameter so (``None`` where unknown), for calls ``p.m(...)`` of methods of any of
    them."""
    if self_class is not None:
        classes = (self_class,)
    if not any(classes):
        classes = ()
    made = getattr(fn, "__wengert_grad__", None)
    if made is not None and isinstance(made[0], types.FunctionType):
        return written_params(made[0])
    if namedtuple_method(fn):
        return frozenset()  # (``p._replace(x=v)``: a new tuple; ``_asdict``: a new dict)
    if type(fn) is Gradient:
        return written_params(fn.base)
    entry = primal_entry(fn)
    if not classes and entry.written is not None:
        return entry.written
    if classes and classes in entry.written_for:
        return entry.written_for[classes]
    key = (cache_key(fn), classes)
    if key in _WRITTEN_GUESS:
        return _WRITTEN_GUESS[key]

    def callee(f: Any, given: tuple[int | None, ...] = ()) -> frozenset[int] | None:
        # (``given``: which of this function's parameters each argument is; their classes,
        # where known, are the callee's parameters' too)
        if not isinstance(f, types.FunctionType) or registry.lookup(f) is not None:
            return None
        known = tuple(classes[k] if k is not None and k < len(classes) else None
                      for k in given)
        try:
            return written_params(f, classes=known)
        except WengertError:
            return None

    def method(name: str, after: type | None, param: int = 0, item: bool = False
               ) -> tuple[Any, frozenset[int]] | None:
        # (As the class holds it: a static or class method is not called with ``self``.)
        # (``item``: called on an item of the list parameter ``param``.)
        cls = classes[param] if param < len(classes) else None
        if isinstance(cls, ItemsOf) or item:
            cls = cls.cls if isinstance(cls, ItemsOf) and item else None
        if cls is None:
            return None
        mro = cls.__mro__
        if after is not None:
            if after not in mro:
                return None
            mro = mro[mro.index(after) + 1:]
        f = next((vars(k)[name] for k in mro if name in vars(k)), None)
        if type(f) is not types.FunctionType or registry.lookup(f) is not None:
            return None
        try:
            return f, written_params(f, cls)
        except WengertError:
            return None

    guess: frozenset[int] = frozenset()
    try:
        while True:
            _WRITTEN_GUESS[key] = guess
            found = params_written_in(entry.ir, callee_writes=callee,
                                      method_writes=method if classes else None,
                                      vjp_operator=lambda v: operator_name(v) == "vjp")
            if found <= guess:
                break
            guess = guess | found
    finally:
        del _WRITTEN_GUESS[key]
    if not classes:
        entry.written = guess
    else:
        entry.written_for[classes] = guess
    return guess


_JVP_BUILDING: dict[Any, runtime.Later] = {}


_JVP_BUILT: list[tuple[Any, DerivedEntry, Linker]] = []


class JVPLinker(Linker):
    """What one JVP build links to: derived JVPs of the user functions it calls directly."""

    def direct_jvp(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
                   batched: bool) -> Any:
        """The compiled JVP of ``fn`` for these types, a ``Later`` (recursion), or ``None``."""
        key = (cache_key(fn), wrt, arg_types, batched)
        later = _JVP_BUILDING.get(key)
        if later is not None:
            self.cyclic = True
            self.deps.extend([CodeDep(fn), *primal_entry(fn).deps])
            return later
        try:
            entry = jvp_entry(fn, wrt, arg_types, batched)
        except WengertError:
            return None  # reported by the dispatcher if the call ever runs
        self.deps.extend([CodeDep(fn), *entry.primal.deps, *entry.linked])
        return entry.compiled


def jvp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
              batched: bool = False) -> DerivedEntry:
    """``fn``'s JVP for these argument types, derived once (looked up without the lock)."""
    entry = JVPS.get((cache_key(fn), wrt, arg_types, batched))
    if entry is not None and entry.valid(fn):
        return entry
    return _jvp_entry(fn, wrt, arg_types, batched)


@_under_build_lock
def _jvp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
               batched: bool = False) -> DerivedEntry:
    from wengert.transforms.jvp import jvp_transform

    key = (cache_key(fn), wrt, arg_types, batched)
    entry = JVPS.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    JVPS.pop(key, None)
    linker = JVPLinker()
    return derive(fn, arg_types, key, "jvp", JVPS, _JVP_BUILDING, _JVP_BUILT, linker,
                   lambda ready: jvp_transform(ready.fn, wrt, arg_types, linker,
                                               batched=batched, prepared=ready))


class InlineOnly(Linker):
    """A linker for code that is differentiated again: helpers are inlined, but nothing is
    linked to compiled derivatives (their generated code has no IR to differentiate), and
    rules are inlined even where argument types are unknown."""

    differentiated_again = True

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> Any:
        return None


def gradient_ir(ir: n.Function, wrt: tuple[int, ...], single: bool,
                 arg_types: Sequence[Any]) -> tuple[n.Function, list[Any]]:
    """The gradient of the IR ``ir`` w.r.t. ``wrt`` as IR, and what it rests on."""
    # Helpers are inlined, never linked: the result is differentiated again, and a
    # compiled derivative has no IR to differentiate.
    linker = InlineOnly()
    vir, _ = vjp_transform(ir, wrt, list(arg_types), linker)
    gir = grad_ir(vir, wrt, single, arg_types=arg_types)
    checked(gir, "the gradient's composition")
    cleanup(gir, drop_pure_calls=True)  # the primal's value, say, is no longer needed
    return gir, linker.deps


class InlineOnlyJVP(JVPLinker):
    """:class:`InlineOnly` for a JVP that is differentiated again (a ``jvp`` taken inside
    differentiated code): nothing linked to compiled JVPs."""

    differentiated_again = True

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> Any:
        return None

    def direct_jvp(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
                   batched: bool) -> Any:
        return None


def jvp_ir(ir: n.Function, wrt: tuple[int, ...], arg_types: Sequence[Any]
           ) -> tuple[n.Function, list[Any]]:
    """``lambda *params, *tangents: jvp(f, params, tangents)`` for the IR ``ir`` of ``f``,
    as IR (a tangent for each of the ``wrt`` parameters, after all of them): the value and
    its tangent, a zero tangent materialised as the API's ``jvp`` gives it. (Never batched:
    the code is differentiated again, and the pullbacks' shape arithmetic takes a value's
    shape for the shape its derivatives have.)"""
    from wengert.transforms.jvp import jvp_transform

    linker = InlineOnlyJVP()
    jir, _ = jvp_transform(ir, wrt, list(arg_types[:len(ir.body.args)]), linker)
    ret = jir.body.ops.pop()
    assert isinstance(ret, n.Return)
    b = Builder(jir.body)
    value, dot = (b.getitem(ret.value, b.const(k)) for k in (0, 1))
    dot = b.call(runtime.finish_adjoint, dot, value)  # (zeros in the value's structure)
    b.emit(n.Return(b.emit(n.Build("tuple", [value, dot], [n.Value()])).result))
    checked(jir, "the inner JVP")
    cleanup(jir, drop_pure_calls=True)
    return jir, linker.deps


def applied_vjp_ir(ir: n.Function, wrt: tuple[int, ...], arg_types: Sequence[Any]
                    ) -> tuple[n.Function, list[Any]]:
    """``lambda *params, v: vjp(f, *params)[1](v)`` for the IR ``ir`` of ``f``, as IR: the
    cotangents of the ``wrt`` parameters (zeros materialised, as the API's pullback gives
    them) for the output cotangent ``v``, an extra last parameter."""
    linker = InlineOnly()
    vir, _ = vjp_transform(ir, wrt, list(arg_types[:len(ir.body.args)]), linker)
    out = grad_ir(vir, wrt, False, seeded=True, arg_types=arg_types)
    checked(out, "the pullback's composition")
    cleanup(out, drop_pure_calls=True)
    return out, linker.deps
