"""The public differential operators, ``show``, and the caches behind them.

Every cache entry remembers the names it resolved (globals, closure cells,
builtins); an entry whose names no longer resolve to the same objects is
rebuilt, so rebinding a global or redefining a helper is seen at the next call.
Nothing is cached when a transform fails.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import linecache
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from wengert import runtime, tangents
from wengert.analysis.types import ListOf, infer_types, return_type
from wengert.codegen.emit import generate
from wengert.codegen.naming import sanitize
from wengert.diagnostics import (
    NonDifferentiableError,
    NonDifferentiableWarning,
    SourceUnavailableError,
    WengertError,
    describe,
)
from wengert.frontend.lower import lower_with_deps
from wengert.frontend.source import Dependency, is_generated, unwrap
from wengert.ir import nodes as n
from wengert.ir.printer import print_function
from wengert.rules import registry
from wengert.transforms.cleanup import cleanup
from wengert.transforms.inplace import update_in_place
from wengert.transforms.vjp import vjp_transform


@dataclass
class _Entry:
    ir: n.Function
    deps: list[Dependency]
    code: Any = None
    globals: Any = None
    compiled: Any = None
    source: str | None = None
    #: Parameters the function may write into (computed when first asked).
    written: frozenset[int] | None = None

    def valid(self, fn: Any) -> bool:
        return self.code is fn.__code__ and self.globals is fn.__globals__ and \
            all(d.still_valid() for d in self.deps)


_PRIMAL_CACHE: dict[Any, _Entry] = {}


def _key(fn: Any) -> Any:
    if type(fn) is _Derived:
        return ("grad", _key(fn.inner), fn.wrt, fn.single)
    # Identity, not equality: code objects of two identical modules compare equal.
    # The cells' contents and the globals are checked by the entry itself.
    return (id(fn.__code__), id(fn.__globals__), tuple(id(c) for c in (fn.__closure__ or ())))


class _Derived:
    """``grad(f)`` seen as a function wengert differentiates like any other.

    It takes the parameters of ``f`` (the plain function ``base`` at the bottom of a
    tower of ``grad``) and its IR is derived from ``f``'s for each set of argument types
    (:func:`_ir_entry`): the VJP's forward code followed by its pullback, seeded. So
    ``grad(grad(f))``, ``jvp(grad(f))``, ``hessian`` and calls of a ``grad(f)`` inside
    differentiated code all transform generated IR again. Attributes that bind arguments
    (``__code__``, ``__defaults__``, the signature) are ``base``'s.
    """

    def __init__(self, inner: Any, wrt: tuple[int, ...], single: bool) -> None:
        self.inner, self.wrt, self.single = inner, wrt, single
        self.base = inner.base if type(inner) is _Derived else inner
        self.__name__ = f"{inner.__name__}_grad"
        self.__qualname__ = f"{inner.__qualname__}_grad"

    __code__ = property(lambda self: self.base.__code__)
    __globals__ = property(lambda self: self.base.__globals__)
    __defaults__ = property(lambda self: self.base.__defaults__)
    __kwdefaults__ = property(lambda self: self.base.__kwdefaults__)
    __closure__ = property(lambda self: self.base.__closure__)
    __signature__ = property(lambda self: inspect.signature(self.base, follow_wrapped=False))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return grad(self.inner, self.wrt[0] if self.single else self.wrt)(*args, **kwargs)


def _unwrap(f: Any, nargs: int | None = None) -> tuple[Any, tuple, dict]:
    """:func:`unwrap`, with functions made by :func:`grad` seen as :class:`_Derived`;
    ``nargs`` (the call's positional arguments, when known) fixes the arity of a
    ``*args`` function under a ``grad`` (:func:`_fixed_arity`)."""
    if type(f) is _Derived:
        return f, (), {}
    spec = getattr(f, "__wengert_grad__", None)
    if spec is None:
        prim = _primitive_function(f)
        return unwrap(f if prim is None else prim)
    inner, argnums = spec
    fn, bound, bound_kw = _unwrap(inner, nargs)
    if nargs is not None:
        fn = _fixed_arity(fn, len(bound) + nargs, bound_kw)
    wrt = _wrt(argnums, len(bound), _nparams(fn))
    return _Derived(fn, wrt, isinstance(argnums, int)), bound, bound_kw


#: Primitives given to the API directly (``grad(math.tanh)``) -> their Python wrappers.
_PRIMITIVES: dict[Any, types.FunctionType] = {}


def _primitive_function(f: Any) -> types.FunctionType | None:
    """A Python function that only calls ``f``, for a primitive with rules and no source
    (``math.tanh``, a NumPy ufunc), so that every transform treats it like user code;
    ``None`` for anything else, or a signature that cannot be spelled."""
    if isinstance(f, (types.FunctionType, types.MethodType, functools.partial)) or \
            not _hashable(f) or registry.lookup(f) is None:
        return None
    if f in _PRIMITIVES:
        return _PRIMITIVES[f]
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        nin = getattr(f, "nin", None)  # a ufunc has no signature, but an arity
        names = _required_from_doc(f)
        if isinstance(nin, int):
            names = [f"x{i}" for i in range(nin)]
        if names is not None:
            params = [inspect.Parameter(a, inspect.Parameter.POSITIONAL_ONLY) for a in names]
        else:
            name = describe(f)
            raise SourceUnavailableError(
                f"{name} has rules but no signature saying how many arguments it takes, so "
                "wengert cannot tell what to differentiate",
                hint=f"differentiate a function that calls it, e.g. "
                     f"lambda x, y: {getattr(f, '__name__', name)}(x, y)") from None
    spelled, passed, defaults = [], [], {}
    for k, p in enumerate(params):
        if not p.name.isidentifier() or p.name.startswith("__"):
            return None
        if p.kind is p.VAR_POSITIONAL:
            spelled.append(f"*{p.name}")
            passed.append(f"*{p.name}")
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if p.default is p.empty:
                spelled.append(p.name)
            else:
                defaults[f"__default{k}"] = p.default
                spelled.append(f"{p.name}=__default{k}")
            passed.append(p.name)
        else:
            return None
    name = sanitize(getattr(f, "__name__", "primitive"))
    where = f"{getattr(f, '__module__', None) or 'builtins'}.{name}"
    source = (f"def {name}({', '.join(spelled)}):\n"
              f"    return __primitive({', '.join(passed)})\n")
    filename = f"<wengert:primitive:{where}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__primitive": f, **defaults}
    exec(compile(source, filename, "exec"), namespace)
    wrapper = namespace[name]
    wrapper.__qualname__ = where
    _PRIMITIVES[f] = wrapper
    return wrapper


_FIXED: dict[tuple[Any, int], types.FunctionType] = {}


def _fixed_arity(fn: Any, nargs: int, kwargs: dict) -> Any:
    """For ``def f(a, *xs)`` called with ``nargs`` positional arguments, a function of
    exactly that many parameters calling ``f`` (``def f(a, xs_0, xs_1): return f(a, xs_0,
    xs_1)``): every positional argument is then a parameter, differentiable and counted by
    ``argnums``, as in JAX. ``fn`` itself for anything else."""
    code = getattr(fn, "__code__", None)
    if type(fn) is not types.FunctionType or code is None or not code.co_flags & 0x04 or \
            kwargs or code.co_flags & 0x08 or nargs < code.co_argcount or \
            any(k not in (fn.__kwdefaults__ or {})
                for k in code.co_varnames[code.co_argcount:code.co_argcount +
                                          code.co_kwonlyargcount]):
        return fn
    key = (fn, nargs)
    wrapper = _FIXED.get(key)
    if wrapper is not None:
        return wrapper
    named = list(code.co_varnames[:code.co_argcount])
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    params = named + [f"{star}_{k}" for k in range(nargs - len(named))]
    name = sanitize(fn.__name__)
    source = (f"def {name}({', '.join(params)}):\n"
              f"    return {name}({', '.join(params)})\n")
    filename = f"<wengert:fixed-arity:{fn.__qualname__}/{nargs}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    wrapper = namespace[name]
    namespace[name] = fn  # the name the wrapper calls is the function it wraps
    wrapper.__qualname__ = fn.__qualname__
    _FIXED[key] = wrapper
    return wrapper


def _required_from_doc(f: Any) -> list[str] | None:
    """The required parameters a builtin's docstring spells, ``log(x, [base=math.e])``
    giving ``["x"]``; ``None`` when it takes ``*args`` or says nothing parseable."""
    name = getattr(f, "__name__", None)
    doc = (getattr(f, "__doc__", None) or "").lstrip()
    if not name or not doc.startswith(f"{name}("):
        return None
    inside = doc[len(name) + 1:].split(")", 1)[0]
    out = []
    for part in (p.strip() for p in inside.split(",")):
        if part.startswith("[") or "=" in part or part == "/":
            break
        if not part.isidentifier():
            return None
        out.append(part)
    return out or None


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _nparams(fn: Any) -> int:
    """How many parameters ``fn`` has (``*args`` and ``**kwargs`` count one each)."""
    while type(fn) is _Derived:
        fn = fn.base
    return len(_primal_entry(fn).ir.body.args)


_DERIVED_IR: dict[Any, _Entry] = {}


def _ir_entry(fn: Any, arg_types: tuple[Any, ...]) -> _Entry:
    """The IR to differentiate for ``fn`` called with arguments of these types: its own
    (lowered once for all types) or, for a :class:`_Derived`, the gradient IR of what it
    differentiates, which depends on the types."""
    if type(fn) is not _Derived:
        return _primal_entry(fn)
    key = (_key(fn), arg_types)
    entry = _DERIVED_IR.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    _DERIVED_IR.pop(key, None)
    inner = _ir_entry(fn.inner, arg_types)
    gir, deps = _gradient_ir(inner.ir, fn.wrt, fn.single, arg_types)
    entry = _Entry(gir, _unique([_CodeDep(fn.base), *inner.deps, *deps]),
                   fn.__code__, fn.__globals__)
    _DERIVED_IR[key] = entry
    return entry


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
        entry.compiled, entry.source = compiled, source
    out = entry.compiled
    if fn.__defaults__ or fn.__kwdefaults__:
        # One entry serves every function object of this code (each lambda a
        # comprehension makes), but defaults belong to the object: ``lambda t, k=k``.
        out = types.FunctionType(out.__code__, out.__globals__, out.__name__,
                                 fn.__defaults__, out.__closure__)
        out.__kwdefaults__ = fn.__kwdefaults__
    if bound_args or bound_kwargs:
        out = functools.partial(out, *bound_args, **bound_kwargs)
    return out


def show(f: Any, mode: str = "ir", argnums: int | Sequence[int] = 0,
         arg_types: Sequence[type | None] | None = None) -> str:
    """Text of what wengert makes of ``f``: ``"ir"``, ``"primal"``, ``"vjp"`` or ``"jvp"``.

    ``"vjp"`` shows the generated forward code and pullback for ``argnums``,
    specialised on ``arg_types`` (default: ``float`` for every parameter); ``"jvp"``
    the generated forward-mode code, likewise.
    """
    fn, bound, _ = _unwrap(f)
    if mode == "ir":
        if type(fn) is _Derived:  # the gradient's IR, for float arguments
            return print_function(_ir_entry(fn, (float,) * _nparams(fn)).ir)
        return print_function(_primal_entry(fn).ir)
    if mode == "primal":
        primal(fn)
        return _primal_entry(fn).source or ""
    if mode == "vjp":
        nparams = _nparams(fn)
        if arg_types is None:
            arg_types = [float] * nparams
        wrt = _wrt(argnums, len(bound), nparams)
        return _vjp_entry(fn, wrt, tuple(arg_types)).source or ""
    if mode == "jvp":
        return _show_jvp(fn, argnums, len(bound), arg_types)
    raise ValueError(f"unknown mode {mode!r}: expected 'ir', 'primal', 'vjp' or 'jvp'")


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

    def resolve(self, fn: Any) -> Any:
        """The function to differentiate for a callee ``fn`` known when transforming:
        itself if a plain function, or the :class:`_Derived` behind one made by
        :func:`grad`; ``None`` for anything else (one over a bound method or
        ``functools.partial`` included)."""
        if getattr(fn, "__wengert_grad__", None) is None:
            return fn if isinstance(fn, types.FunctionType) else None
        derived, bound, bound_kw = _unwrap(fn)
        return None if bound or bound_kw else derived

    def is_grad(self, value: Any) -> bool:
        return value is grad

    def is_vjp(self, value: Any) -> bool:
        return value is vjp

    def fixed_arity(self, fn: Any, nargs: int) -> Any:
        """``fn`` as a function of exactly ``nargs`` parameters (:func:`_fixed_arity`)."""
        return _fixed_arity(fn, nargs, {})

    def function_ir(self, fn: Any) -> n.Function | None:
        """The IR of the plain function ``fn`` (``None`` for anything else)."""
        if not isinstance(fn, types.FunctionType):
            return None
        return self.callee_ir(fn)

    def applied_vjp_ir(self, fn: n.Function, wrt: tuple[int, ...],
                       arg_types: Sequence[Any]) -> n.Function:
        vir, deps = _applied_vjp_ir(fn, wrt, arg_types)
        self.deps.extend(deps)
        return vir

    def make_grad(self, f: Any, argnums: Any) -> Any:
        return grad(f, argnums)

    def gradient_ir(self, fn: n.Function, wrt: tuple[int, ...], single: bool,
                    arg_types: Sequence[Any]) -> n.Function:
        gir, deps = _gradient_ir(fn, wrt, single, arg_types)
        self.deps.extend(deps)
        return gir

    def result_type(self, fn: Any, arg_types: list[Any]) -> Any:
        fn = self.resolve(fn)
        if fn is None:
            return None
        found = _result_type(fn, tuple(arg_types), self.consulted)
        if found is None:
            return None
        self.deps.extend(found[1])
        return found[0]

    def written_params(self, fn: Any) -> Any:
        """The parameters the user function ``fn`` may write into (all, if unknown)."""
        try:
            written = _written_params(fn)
        except WengertError:
            return range(10**9)
        self.deps.append(_CodeDep(fn))
        return written

    def callee_ir(self, fn: Any) -> n.Function | None:
        """The IR of a user function to inline (``None``: it has none)."""
        if getattr(fn, "__wengert_grad__", None) is not None:
            return None  # its IR depends on the argument types: linked instead
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
        prim = _ir_entry(fn, arg_types)
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
    linker = _Linker()
    return _derive(fn, arg_types, key, "vjp", _VJP_CACHE, _BUILDING, _BUILT, linker,
                   lambda ir: vjp_transform(ir, wrt, arg_types, linker))


def _derive(fn: Any, arg_types: tuple[Any, ...], key: Any, mode: str, cache: dict,
            building: dict, built: list, linker: _Linker, transform: Any) -> _VJPEntry:
    """Transform ``fn``'s IR, compile and cache the result under ``key``: the bookkeeping
    both modes share (recursion through ``Later``, cleanup after a failure, and shared
    dependencies for mutually recursive derivatives)."""
    prim = _ir_entry(fn, arg_types)
    later = runtime.Later(f"{fn.__name__}_{mode}")
    building[key] = later
    start = len(built)
    try:
        ir, warnings_found = transform(prim.ir)
        update_in_place(ir)
        compiled, source = generate(ir, f"{fn.__qualname__}:{mode}")
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
    entry = _VJPEntry(prim, compiled, source, fn.__code__, fn.__globals__,
                      _unique(linker.deps))
    cache[key] = entry
    built.append((key, entry, linker))
    if not building:
        group = built[:]
        built.clear()
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


_LIST_OF_FLOAT = ListOf(float)


def _arg_type(a: Any) -> Any:
    """The type an argument specialises derivatives on: its own, or ``ListOf(float)`` for
    a list of floats (checked on each call: the specialised code relies on it)."""
    t = type(a)
    if t is list and a and all(type(v) is float for v in a):
        return _LIST_OF_FLOAT
    return t


def _param_types(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, ...] | None:
    """The type of each parameter's value for this call (``None``: cannot bind cheaply)."""
    code = fn.__code__
    nparams = code.co_argcount + code.co_kwonlyargcount
    if not kwargs and code.co_flags & 0x0C == 0 and len(args) == code.co_argcount and \
            not code.co_kwonlyargcount:
        return tuple(map(_arg_type, args))
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    out = tuple(_arg_type(v) for v in bound.arguments.values())
    del nparams
    return out


def _shapes_of(args: tuple) -> tuple:
    """Copies of container arguments the function may change the length of (``append``):
    their cotangents take the structure the arguments had when the call began."""
    for a in args:
        if isinstance(a, (list, dict)):
            return tuple(_structure(a) for a in args)
    return args


_structure = runtime.structure


def _call_vjp(fn: Any, wrt: tuple[int, ...] | None, args: tuple, kwargs: dict
              ) -> tuple[Any, Any, _VJPEntry]:
    types_ = _param_types(fn, args, kwargs)
    nparams = _nparams(fn)
    if types_ is None:
        # Let Python report the bad call (missing or unexpected arguments).
        fn(*args, **kwargs)
        raise TypeError("cannot bind the arguments")  # pragma: no cover
    if wrt is None:
        wrt = tuple(range(nparams))
    entry = _vjp_entry(fn, wrt, types_)
    args, kwargs = _with_defaults(fn, args, kwargs)
    out, pb = entry.compiled(*args, **kwargs)
    return out, pb, entry


def _with_defaults(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments with every omitted parameter given its default (``fn``'s own:
    one derived function serves every function object of a code object)."""
    code = fn.__code__
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount:
        return args, kwargs
    bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _finish(x: Any, adj: Any) -> Any:
    """An adjoint in the structure of the primal ``x``, zeros materialised."""
    if type(x) is float and (type(adj) is float or adj is None):
        return 0.0 if adj is None else adj
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
        items = [b if type(b) is float and type(a) is float else _finish(a, b)
                 for a, b in zip(x, adj)]
        if type(x) is list:  # each item is finished: nothing is left to check
            return items
        if type(x) is tuple:
            return tuple(items)
        adj = tuple(items) if isinstance(x, tuple) else items
    elif isinstance(adj, dict) and isinstance(x, dict):
        adj = {k: _finish(v, adj.get(k)) for k, v in x.items()}
    return tangents.materialize(x, adj)


def _as_adjoint(ct: Any) -> Any:
    """A cotangent in the form generated pullbacks use: dataclasses become ``Attrs``."""
    if dataclasses.is_dataclass(ct) and not isinstance(ct, type):
        return runtime.Attrs({f.name: _as_adjoint(getattr(ct, f.name))
                              for f in dataclasses.fields(ct)})
    if type(ct) in (list, tuple):
        return type(ct)(_as_adjoint(c) for c in ct)
    if type(ct) is dict:
        return {k: _as_adjoint(c) for k, c in ct.items()}
    return ct


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
    fast: dict[tuple[type, ...], tuple[Any, _VJPEntry, tuple[int, ...], tuple, Any]] = {}

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        hit = None if kwargs else fast.get(tuple(map(_arg_type, args)))
        if hit is not None and hit[1].valid(hit[0]):
            fn, entry, wrt, bound, written = hit
            full = (*bound, *args) if bound else args
            if written:
                _check_unaliased(fn, full, written)
            before = _shapes_of(full)
            out, pb = entry.compiled(*full)
        else:
            fn, bound, bound_kw = _unwrap(f, len(args))
            full = (*bound, *args)
            kw = {**bound_kw, **kwargs}
            fn = _fixed_arity(fn, len(full), kw)
            nparams = _nparams(fn)
            wrt = _wrt(argnums, len(bound), nparams)
            written = _writes_arguments(fn)
            if written:
                _check_unaliased(fn, full, written)
            before = _shapes_of(full)
            out, pb, entry = _call_vjp(fn, wrt, full, kw)
            if not kw and len(full) == fn.__code__.co_argcount and \
                    not fn.__code__.co_flags & 0x0C:
                fast[tuple(map(_arg_type, args))] = (fn, entry, wrt, tuple(bound), written)
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

    if not has_aux:
        # Forward mode differentiates it again from ``f``'s IR (forward over reverse).
        grad_f.__wengert_grad__ = (f, argnums)  # type: ignore[attr-defined]
    return grad_f


def hvp(f: Any, primals: Sequence[Any], tangents_: Sequence[Any]) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents_`` (forward over reverse):
    one cotangent-shaped result per primal (a single one for a single primal)."""
    primals = tuple(primals)
    nums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums=nums), primals, tuple(tangents_))[1]


def hessian(f: Any, argnums: int | Sequence[int] = 0) -> Any:
    """The Hessian of scalar ``f``: ``jacfwd(grad(f))``, one batched forward pass over the
    gradient's generated code. Layout as in JAX (``x.shape + x.shape``)."""
    return jacfwd(grad(f, argnums), argnums)


def vjp(f: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), pullback)``; ``pullback(out_bar)`` gives one cotangent per primal."""
    fn, bound, bound_kw = _unwrap(f, len(primals))
    full = (*bound, *primals)
    fn = _fixed_arity(fn, len(full), bound_kw)
    written = _writes_arguments(fn)
    if written:
        _check_unaliased(fn, full, written)
    nparams = _nparams(fn)
    wrt = tuple(range(len(bound), min(len(full), nparams)))
    before = _shapes_of(full)
    out, pb, _ = _call_vjp(fn, wrt, full, dict(bound_kw))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (value, aux)")
        out, aux = out

    def pullback(out_bar: Any) -> tuple[Any, ...]:
        ct = _as_adjoint(tangents.materialize(out, out_bar))
        adjs = pb((ct, None) if has_aux else ct)
        return tuple(_finish(before[i], adjs[i]) for i in wrt)

    return (out, pullback, aux) if has_aux else (out, pullback)


def dispatch_vjp(f: Any, args: tuple, kwargs: dict, obj: Any, site: Any = None,
                 borrowed: tuple[int, ...] = (), callee: bool = False) -> tuple[Any, Any]:
    """Run-time dispatch for a call whose callee is a value: a rule or a derived VJP.

    The pullback returns the adjoint of ``obj`` (the receiver of a method call, else
    ``None``), then one adjoint per positional and keyword argument. ``borrowed`` are
    call positions (0 the receiver, then the arguments) holding objects read out of
    containers: a callee that may write into one is refused at ``site``.
    """
    rule = registry.lookup(f) if _hashable_callable(f) else None
    nk = len(kwargs)
    if rule is not None and rule.vjp is not None:
        value, pb = _run_rule(rule.vjp, args, kwargs, site)
        width = 1 + len(args) + nk

        def rule_pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
            outs = (None, *pb(g)) if g is not None else (None,) * width
            outs = (*outs, *(None,) * (width - len(outs)))  # keywords without adjoints
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
        fn, bound, bound_kw = _unwrap(f)
    except SourceUnavailableError:
        name = describe(f)
        raise NonDifferentiableError(
            f"{name} has no derivative rule and no Python source, and an active value is "
            "passed to it", site,
            notes=(f"register one with @wengert.derivative(of={name}) returning "
                   "(value, pullback)",)) from None
    _check_not_generated(fn, site)
    full = (*bound, *args)
    kw = {**bound_kw, **kwargs}
    plan = _plan(fn, len(full), tuple(kw))
    nb = len(bound)
    has_obj = obj is not None and nb >= 1 and bound[0] is obj
    if callee and not has_obj and (bound or bound_kw):
        raise _hidden_arguments_error(f, site)
    if borrowed:
        _check_borrowed(fn, plan, borrowed, nb, has_obj, len(args), site)
    out, pb, _ = _call_vjp(fn, None, full, kw)

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
            # What a caller passes in comes back included: the callee's pullback seeds a
            # parameter's adjoint from it only for a mutable object; elsewhere (a float,
            # an argument it does not take as such) it is added here.
            out = tuple(o if k in seeded else runtime.add_adjoint(i, o)
                        for k, (o, i) in enumerate(zip(out, inouts)))
        return out

    # Call slots (0 the receiver, then arguments and keywords) whose adjoint the callee's
    # pullback seeds from what comes in: a "one" parameter holding a mutable object.
    seeded = set()
    values = [*full, *kw.values()]
    for where in plan:
        if where is not None and where[0] == "one":
            j = where[1]
            if type(values[j]) not in (float, int, bool):
                if j >= nb:
                    seeded.add(1 + j - nb)
                elif has_obj and j == 0:
                    seeded.add(0)

    return out, pullback


def _check_not_generated(fn: Any, site: Any) -> None:
    """Refuse, at the user's call, to differentiate a derivative's generated code reached
    through a value (a pullback called in a gradient differentiated again): its closure
    holds values of the computation it differentiates, which would count as constants."""
    if is_generated(fn):
        raise NonDifferentiableError(
            "this call cannot be differentiated to a higher order: what it calls at run time "
            "is a derivative wengert generated, whose closure holds values of the "
            "computation", site,
            hint="give the function it calls arguments of known types (floats, arrays, "
                 "tuples, dataclasses), so that its derivative is inlined or linked")


def _hidden_arguments_error(f: Any, site: Any) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"{describe(f)} carries arguments of its own (a bound method or a partial) and is "
        "itself being differentiated: the derivative with respect to what it carries "
        "cannot be followed through a variable", site,
        hint="call the method on its object directly (`obj.method(x)`), or pass what it "
             "carries as arguments")


def _check_borrowed(fn: Any, plan: list, borrowed: tuple[int, ...], nb: int, has_obj: bool,
                    nargs: int, site: Any) -> None:
    """Refuse a callee that may write into an object read out of a container (reverse mode
    keeps that object's adjoint apart from the container's: the write would be lost)."""
    written = _written_params(fn)
    for p, where in enumerate(plan):
        if where is None or p not in written:
            continue
        kind, pos = where
        span = range(pos, nb + nargs) if kind == "var" else [pos]
        for j in span:
            if j < nb:
                call_pos = 0 if (has_obj and j == 0) else None
            else:
                call_pos = 1 + (j - nb)
            if kind == "kw" or call_pos is None:
                continue
            if call_pos in borrowed:
                raise NonDifferentiableError(
                    "this call may write into an object read out of a list, dict or another "
                    "object, which reverse mode does not support yet", site,
                    hint="forward mode (wengert.jvp, wengert.jacfwd) handles it; in reverse "
                         "mode build new objects instead (`ps = [p.stepped(dt) for p in ps]`)")


def _writes_arguments(fn: Any) -> frozenset[int]:
    """The parameters ``fn`` may write into (none for what is not a plain function)."""
    if type(fn) is not types.FunctionType:
        return frozenset()
    try:
        return _written_params(fn)
    except WengertError:
        return frozenset()


_IMMUTABLE_ARGS = (float, int, bool, str, bytes, tuple, complex, type(None))


def _check_unaliased(fn: Any, args: tuple, written: frozenset[int]) -> None:
    """Refuse a call passing one mutable object as two arguments when ``fn`` may write
    into one of them: each argument gets its own cotangent (and tangent), but a write
    through one name is seen through the other, which the derivative would not follow."""
    seen: dict[int, int] = {}
    for i, a in enumerate(args):
        if isinstance(a, _IMMUTABLE_ARGS):
            continue
        j = seen.setdefault(id(a), i)
        if j != i and (i in written or j in written):
            raise NonDifferentiableError(
                f"arguments {j} and {i} are the same {type(a).__name__}, and "
                f"{describe(fn)} writes into it: a derivative with respect to each of them "
                "cannot be told apart", _primal_entry(fn).ir.loc,
                hint="pass a copy for one of them (list(xs), xs.copy())")


#: Summaries being computed, with the one assumed for recursive calls meanwhile.
_WRITTEN_GUESS: dict[Any, frozenset[int]] = {}


def _written_params(fn: Any) -> frozenset[int]:
    """The parameters ``fn`` may write into (:func:`~wengert.analysis.activity.
    written_params`), with the callees it calls summarised the same way. A recursive call
    is first assumed to write nothing, then what the body under that assumption writes,
    until the two agree (the least fixpoint)."""
    from wengert.analysis.activity import written_params

    entry = _primal_entry(fn)
    if entry.written is not None:
        return entry.written
    key = _key(fn)
    if key in _WRITTEN_GUESS:
        return _WRITTEN_GUESS[key]

    def callee(f: Any) -> frozenset[int] | None:
        if not isinstance(f, types.FunctionType) or registry.lookup(f) is not None:
            return None
        try:
            return _written_params(f)
        except WengertError:
            return None

    guess: frozenset[int] = frozenset()
    try:
        while True:
            _WRITTEN_GUESS[key] = guess
            found = written_params(entry.ir, callee_writes=callee)
            if found <= guess:
                break
            guess = guess | found
    finally:
        del _WRITTEN_GUESS[key]
    entry.written = guess
    return guess


def _run_rule(rule_fn: Any, args: tuple, kwargs: dict, site: Any) -> tuple[Any, Any]:
    """Call a rule at run time; an error it raises about the call itself (a keyword it does
    not take, an unsupported form) is reported at the user's call, never from inside."""
    try:
        return rule_fn(*args, **kwargs)
    except WengertError as e:
        if e.loc is None:
            raise type(e)(e.message, site, e.hint, e.notes) from None
        raise
    except TypeError as e:
        if str(e).startswith("wengert: "):  # a form the rule does not differentiate
            raise NonDifferentiableError(str(e).removeprefix("wengert: "), site) from None
        raise  # the program's own error (a bad call), as Python raises it


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


# ----------------------------------------------------------------------------- forward mode
# JVPs are cached like VJPs (same entries, same invalidation), keyed by the function, the
# parameters with tangents, their types, and whether tangents carry a batch axis. A derived
# JVP takes every parameter positionally (``*args`` as a tuple, ``**kwargs`` as a dict)
# followed by one tangent per differentiated parameter; tangents of numbers and arrays are
# never ``None`` when they come in (zeros are materialised by the caller).

_JVP_CACHE: dict[Any, _VJPEntry] = {}
_JVP_BUILDING: dict[Any, runtime.Later] = {}
_JVP_BUILT: list[tuple[Any, _VJPEntry, _Linker]] = []


class _JVPLinker(_Linker):
    """What one JVP build links to: derived JVPs of the user functions it calls directly."""

    def direct_jvp(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
                   batched: bool) -> Any:
        """The compiled JVP of ``fn`` for these types, a ``Later`` (recursion), or ``None``."""
        key = (_key(fn), wrt, arg_types, batched)
        later = _JVP_BUILDING.get(key)
        if later is not None:
            self.cyclic = True
            self.deps.extend([_CodeDep(fn), *_primal_entry(fn).deps])
            return later
        try:
            entry = _jvp_entry(fn, wrt, arg_types, batched)
        except WengertError:
            return None  # reported by the dispatcher if the call ever runs
        self.deps.extend([_CodeDep(fn), *entry.primal.deps, *entry.linked])
        return entry.compiled


def _jvp_entry(fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...],
               batched: bool = False) -> _VJPEntry:
    from wengert.transforms.jvp import jvp_transform

    key = (_key(fn), wrt, arg_types, batched)
    entry = _JVP_CACHE.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    _JVP_CACHE.pop(key, None)
    linker = _JVPLinker()
    return _derive(fn, arg_types, key, "jvp", _JVP_CACHE, _JVP_BUILDING, _JVP_BUILT, linker,
                   lambda ir: jvp_transform(ir, wrt, arg_types, linker, batched=batched))


_NO_TANGENT_TYPES = (int, bool, str, bytes, type(None), range)


def _bind_params(fn: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The value of each parameter of ``fn`` for this call, in signature order."""
    code = fn.__code__
    if not kwargs and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount and \
            len(args) == code.co_argcount:
        return list(args)
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        fn(*args, **kwargs)  # let Python report the bad call
        raise
    bound.apply_defaults()
    return list(bound.arguments.values())


def _bind_dots(fn: Any, args: tuple, kwargs: dict, dots: tuple, kw_dots: dict) -> list[Any]:
    """The tangent of each parameter, laid out like :func:`_bind_params`."""
    code = fn.__code__
    if not kwargs and code.co_flags & 0x0C == 0 and not code.co_kwonlyargcount and \
            len(args) == code.co_argcount:
        return list(dots)
    sig = inspect.signature(fn, follow_wrapped=False)
    bound = sig.bind(*args, **kwargs)
    out: list[Any] = [None] * len(sig.parameters)
    names = list(sig.parameters)
    i = 0
    for p in sig.parameters.values():
        k = names.index(p.name)
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if i < len(args):
                out[k] = dots[i]
                i += 1
            else:
                out[k] = kw_dots.get(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            out[k] = tuple(dots[i:])
            i = len(args)
        elif p.kind == p.KEYWORD_ONLY:
            out[k] = kw_dots.get(p.name)
        else:
            out[k] = {name: kw_dots.get(name) for name in bound.arguments.get(p.name, {})}
    return out


def _is_batched(values: Sequence[Any], dots: Sequence[Any]) -> bool:
    """Whether some tangent carries a leading axis of directions that its value lacks
    (looking into lists and tuples, whose items' tangents say it)."""
    for v, d in zip(values, dots):
        if isinstance(d, numpy.ndarray) and (isinstance(v, (float, numpy.floating)) or (
                isinstance(v, numpy.ndarray) and d.ndim > v.ndim)):
            return True
        if type(v) in (list, tuple) and type(d) in (list, tuple) and _is_batched(v, d):
            return True
    return False


class _InlineOnly(_Linker):
    """A linker for code that is differentiated again: helpers are inlined, but nothing is
    linked to compiled derivatives (their generated code has no IR to differentiate), and
    rules are inlined even where argument types are unknown."""

    differentiated_again = True

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[Any, ...]) -> Any:
        return None


def _gradient_ir(ir: n.Function, wrt: tuple[int, ...], single: bool,
                 arg_types: Sequence[Any]) -> tuple[n.Function, list[Any]]:
    """The gradient of the IR ``ir`` w.r.t. ``wrt`` as IR, and what it rests on."""
    # Helpers are inlined, never linked: the result is differentiated again, and a
    # compiled derivative has no IR to differentiate.
    linker = _InlineOnly()
    vir, _ = vjp_transform(ir, wrt, list(arg_types), linker)
    gir = _grad_ir(vir, wrt, single, arg_types=arg_types)
    cleanup(gir, drop_pure_calls=True)  # the primal's value, say, is no longer needed
    return gir, linker.deps


def _applied_vjp_ir(ir: n.Function, wrt: tuple[int, ...], arg_types: Sequence[Any]
                    ) -> tuple[n.Function, list[Any]]:
    """``lambda *params, v: vjp(f, *params)[1](v)`` for the IR ``ir`` of ``f``, as IR: the
    cotangents of the ``wrt`` parameters (zeros materialised, as the API's pullback gives
    them) for the output cotangent ``v``, an extra last parameter."""
    linker = _InlineOnly()
    vir, _ = vjp_transform(ir, wrt, list(arg_types[:len(ir.body.args)]), linker)
    out = _grad_ir(vir, wrt, False, seeded=True, arg_types=arg_types)
    cleanup(out, drop_pure_calls=True)
    return out, linker.deps


def _grad_ir(vjp_ir: n.Function, wrt: tuple[int, ...], single: bool, seeded: bool = False,
             arg_types: Sequence[Any] = ()) -> n.Function:
    """The gradient as one IR function: the VJP's forward code followed by its pullback's
    body, seeded with ``1.0``. It is ordinary IR, so the transforms differentiate it again
    (forward over reverse); the pullback's names and loops come along unchanged.

    The cotangents come finished (:func:`runtime.finish_adjoint`), zeros materialised in
    the structure each argument had when the call began, exactly as ``grad`` returns
    them. ``seeded``: the seed is a new last parameter ``v`` instead of ``1.0``."""
    from wengert.ir.clone import substitute

    body = vjp_ir.body
    ret = body.ops[-1]
    assert isinstance(ret, n.Return)
    pair = next(op for op in body.ops if ret.value in op.results)
    assert isinstance(pair, n.Build)
    mk = next(op for op in body.ops if pair.items[1] in op.results)
    assert isinstance(mk, n.MakeFunction)
    pb = mk.func.body
    seed = n.Const(1.0, [n.Value("seed")])
    seed_value = seed.result
    if seeded:
        seed_value = n.Value(pb.args[0].hint or "v")
    none = n.Const(None, [n.Value()])
    substitute(pb, {pb.args[0].id: seed_value, pb.args[1].id: none.result})
    pb_ret = pb.ops[-1]
    assert isinstance(pb_ret, n.Return)
    grads = next(op for op in pb.ops if pb_ret.value in op.results)
    assert isinstance(grads, n.Build)
    ops = [op for op in body.ops if op not in (ret, pair, mk)]
    ops += [seed, none, *(op for op in pb.ops if op is not pb_ret)]
    # Containers the function may change get their structure recorded at entry.
    types_ = list(arg_types) + [None] * (len(body.args) - len(arg_types))
    shapes: dict[int, n.Value] = {}
    entry_ops: list[n.Op] = []
    for i in wrt:
        if types_[i] in (list, dict) or isinstance(types_[i], ListOf) or types_[i] is None:
            fc = n.Const(runtime.structure, [n.Value()], origin="structure")
            call = n.Call(fc.result, [body.args[i]], [], [n.Value(f"{body.args[i].hint}_shape")])
            entry_ops += [fc, call]
            shapes[i] = call.result
    ops[0:0] = entry_ops
    finish = n.Const(runtime.finish_adjoint, [n.Value()], origin="finish_adjoint")
    ops.append(finish)
    finished = {}
    for i in wrt:
        if types_[i] is float:
            finished[i] = grads.items[i]  # a float parameter's adjoint is never None
            continue
        call = n.Call(finish.result, [grads.items[i], shapes.get(i, body.args[i])], [],
                      [n.Value()])
        ops.append(call)
        finished[i] = call.result
    if seeded:
        out = n.Build("tuple", [finished[i] for i in wrt], [n.Value()])
        ops.append(out)
        ops.append(n.Return(out.result, loc=ret.loc))
        return n.Function(f"{vjp_ir.name.removesuffix('_vjp')}_pulled_back",
                          n.Signature(args=[*vjp_ir.signature.names(), "v"]),
                          n.Region([*body.args, seed_value], ops), vjp_ir.filename,
                          vjp_ir.loc, vjp_ir.source_lines)
    if single:
        result = finished[wrt[0]]
    else:
        out = n.Build("tuple", [finished[i] for i in wrt], [n.Value()])
        ops.append(out)
        result = out.result
    ops.append(n.Return(result, loc=ret.loc))
    return n.Function(f"{vjp_ir.name.removesuffix('_vjp')}_grad", vjp_ir.signature,
                      n.Region(list(body.args), ops), vjp_ir.filename, vjp_ir.loc,
                      vjp_ir.source_lines)


def _call_jvp(fn: Any, args: tuple, kwargs: dict, dots: tuple, kw_dots: dict,
              batched: bool | None = None) -> tuple[Any, Any]:
    """Run ``fn``'s derived JVP on internal tangents (``None`` zeros, ``Attrs`` objects)."""
    values = _bind_params(fn, args, kwargs)
    vdots = _bind_dots(fn, args, kwargs, dots, kw_dots)
    if batched is None:
        batched = _is_batched(values, vdots)
    wrt = tuple(i for i, (v, d) in enumerate(zip(values, vdots))
                if d is not None and not isinstance(v, _NO_TANGENT_TYPES))
    types_ = tuple(map(_arg_type, values))
    entry = _jvp_entry(fn, wrt, types_, batched)
    ins = [runtime.nonzero_tangent(vdots[i], values[i])
           if isinstance(values[i], (float, numpy.floating, numpy.ndarray)) else vdots[i]
           for i in wrt]
    return entry.compiled(*values, *ins)


def _internal(x: Any, t: Any) -> Any:
    """A materialised tangent in the form generated code uses (fresh containers, ``Attrs``)."""
    if t is None:
        return None
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return runtime.Attrs({f.name: _internal(getattr(x, f.name), getattr(t, f.name))
                              for f in dataclasses.fields(x)})
    if isinstance(x, list):
        return [b if type(b) is float else _internal(a, b) for a, b in zip(x, t)]
    if isinstance(x, tuple):
        return tuple(_internal(a, b) for a, b in zip(x, t))
    if isinstance(x, dict):
        return {k: _internal(v, t.get(k)) for k, v in x.items()}
    if isinstance(t, numpy.ndarray):
        return t.copy()
    return t


def _external(x: Any, t: Any, batch: tuple[int, ...] = ()) -> Any:
    """A tangent from generated code in the structure of the primal ``x``, zeros materialised."""
    if isinstance(t, runtime.Attrs) or (t is not None and dataclasses.is_dataclass(x) and
                                        (isinstance(t, dict) or type(t) is type(x))):
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            out = object.__new__(type(x))
            for f in dataclasses.fields(x):
                d = t.get(f.name) if isinstance(t, dict) else getattr(t, f.name)
                object.__setattr__(out, f.name, _external(getattr(x, f.name), d, batch))
            return out
        return None
    if isinstance(x, (list, tuple)) and isinstance(t, (list, tuple)) and len(x) == len(t):
        items = [b if not batch and type(b) is float and type(a) is float
                 else _external(a, b, batch) for a, b in zip(x, t)]
        if type(x) is list:  # each item is finished: nothing is left to check
            return items
        if type(x) is tuple:
            return tuple(items)
        t = tuple(items) if isinstance(x, tuple) else items
        if hasattr(type(x), "_fields"):
            t = type(x)(*items)
    elif isinstance(x, dict) and isinstance(t, dict):
        t = {k: _external(v, t.get(k), batch) for k, v in x.items()}
    elif isinstance(x, (float, numpy.floating, numpy.ndarray)) and t is not None:
        want = (*batch, *numpy.shape(x))
        if numpy.shape(t) != want:
            t = numpy.array(numpy.broadcast_to(t, want), dtype=numpy.result_type(x, float))
        if want == () and isinstance(x, float):
            t = float(t)
    return tangents.materialize(x, t, batch)


def _check_tangents(primals: Any, tangents_: Any) -> tuple[tuple, tuple]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents_, (tuple, list)):
        raise TypeError("primals and tangents must be tuples (or lists) of arguments, got "
                        f"{type(primals).__name__} and {type(tangents_).__name__}")
    if len(primals) != len(tangents_):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents_)} tangents")
    out = []
    for k, (p, t) in enumerate(zip(primals, tangents_)):
        try:
            out.append(tangents.materialize(p, t))
        except ValueError as e:
            raise ValueError(f"jvp: the tangent of argument {k} does not fit its primal "
                             f"{p!r}: {e}") from None
    return tuple(primals), tuple(out)


def jvp(f: Any, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
        ) -> Any:
    """``(f(*primals), J·tangents)``: the value and the Jacobian-vector product (JAX style).

    ``tangents`` has one entry per primal, of the same structure (a zero for arguments not
    perturbed). The output tangent has the structure of the output, zeros materialised.
    With ``has_aux=True`` ``f`` returns ``(value, aux)`` and the result is
    ``(value, value_dot, aux)``.
    """
    primals, ts = _check_tangents(primals, tangents)
    return _jvp_run(f, primals, tuple(_internal(p, t) for p, t in zip(primals, ts)), (),
                    has_aux)


def _jvp_run(f: Any, primals: tuple, dots: tuple, batch: tuple[int, ...], has_aux: bool
             ) -> Any:
    fn, bound, bound_kw = _unwrap(f, len(primals))
    full = (*bound, *primals)
    fn = _fixed_arity(fn, len(full), bound_kw)
    written = _writes_arguments(fn)
    if written:
        _check_unaliased(fn, full, written)
    full_dots = (*([None] * len(bound)), *dots)
    kw_dots = dict.fromkeys(bound_kw)
    out, out_dot = _call_jvp(fn, full, dict(bound_kw), full_dots, kw_dots,
                             batched=bool(batch))
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (value, aux)")
        value, aux = out
        value_dot = out_dot[0] if out_dot is not None else None
        return value, _external(value, value_dot, batch), aux
    return out, _external(out, out_dot, batch)


def linearize(f: Any, *primals: Any) -> tuple[Any, Any]:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``."""
    zeros = tuple(tangents.zeros_like(p) for p in primals)
    out, _ = jvp(f, primals, zeros)

    def f_jvp(*tangents_: Any) -> Any:
        return jvp(f, primals, tangents_)[1]

    return out, f_jvp


def _jac_layout(out: Any, parts: list[tuple[list[Any], Any, list[int]]], single: bool
                ) -> Any:
    """Jacobian blocks in JAX's layout: the structure of ``out``, each of its leaves
    holding the block of each argument (a tuple of them unless ``single``), each block in
    the structure of its argument, with leaves of shape ``out_leaf.shape + x_leaf.shape``
    (floats for scalar by scalar).

    ``parts`` has, per argument: ``rows`` (``rows[j]`` is output leaf ``j``'s derivative
    with the argument's scalars as leading axis, shape ``(k, *out_leaf.shape)``), the
    argument ``x`` and ``cols``, the offsets of ``x``'s leaves in ``k``.
    """
    out_leaves, out_def = tangents.flatten(out)
    flat = [tangents.flatten(x) for _, x, _ in parts]
    # Floats by floats (a list of floats in, one out): each entry is a number.
    scalars = [all(type(xl) is float for xl in x_leaves) for x_leaves, _ in flat]
    # A flat list of floats needs no unflattening: the row is the block.
    plain = [type(x) is list and len(x) == len(x_leaves) and floats
             for (_, x, _), (x_leaves, _), floats in zip(parts, flat, scalars)]
    blocks = []
    for j, ol in enumerate(out_leaves):
        per_arg = []
        for (rows, _, cols), (x_leaves, x_def), floats, is_plain in zip(parts, flat, scalars,
                                                                          plain):
            if floats and type(ol) is float and x_leaves:
                per_x = numpy.asarray(rows[j])[cols].tolist()
                per_arg.append(per_x if is_plain else tangents.unflatten(x_def, per_x))
                continue
            per_x = []
            for xl, o in zip(x_leaves, cols):
                size = int(numpy.size(xl))
                part = numpy.asarray(rows[j])[o:o + size]
                part = numpy.moveaxis(part.reshape((size, *numpy.shape(ol))), 0, -1)
                part = part.reshape((*numpy.shape(ol), *numpy.shape(xl)))
                per_x.append(float(part) if part.ndim == 0 and not isinstance(
                    xl, numpy.ndarray) and not isinstance(ol, numpy.ndarray) else part)
            per_arg.append(tangents.unflatten(x_def, per_x) if x_leaves else None)
        blocks.append(per_arg[0] if single else tuple(per_arg))
    return _replace_leaves(out_def, blocks)


def _replace_leaves(treedef: Any, leaves: list[Any]) -> Any:
    """``treedef`` rebuilt with arbitrary objects at its leaves (``None`` at constants)."""
    it = iter(leaves)

    def build(td: Any) -> Any:
        if td.kind == "leaf":
            return next(it)
        if td.kind == "const":
            return None
        # The container itself (a dataclass stays one), holding blocks instead of leaves.
        return tangents.rebuild(td.meta, td.kind, [build(c) for c in td.children])
    return build(treedef)


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be ints, got {a!r}")
    return nums


def jacfwd(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """The Jacobian of ``f`` by forward mode: one batched JVP pass carrying one direction
    per input scalar. Layout as in JAX (``out.shape + in.shape``; tuples for tuple argnums).
    """
    single = isinstance(argnums, int)
    nums = _argnums_tuple(argnums)

    @functools.wraps(f)
    def jacfwd_f(*args: Any) -> Any:
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"argnums {a} is out of range for {len(args)} argument(s)")
        idx = [a % len(args) for a in nums]
        k = 0
        offsets: dict[int, list[int]] = {}
        leaves_of: dict[int, tuple[list[Any], Any]] = {}
        for i in idx:
            leaves, td = tangents.flatten(args[i])
            leaves_of[i] = (leaves, td)
            offsets[i] = []
            for leaf in leaves:
                offsets[i].append(k)
                k += int(numpy.size(leaf))
        dots: list[Any] = [None] * len(args)
        eye = None
        for i in idx:
            leaves, td = leaves_of[i]
            if all(type(leaf) is float for leaf in leaves):
                # One unit row per float: rows of the identity, no per-leaf allocation.
                eye = numpy.eye(k) if eye is None else eye
                tl = list(eye[offsets[i]])
                dots[i] = _internal(args[i], tangents.materialize(
                    args[i], tangents.unflatten(td, tl), (k,)))
                continue
            tl = []
            for leaf, o in zip(leaves, offsets[i]):
                size = int(numpy.size(leaf))
                t = numpy.zeros((k, size), dtype=numpy.result_type(leaf, float))
                t[o:o + size] = numpy.eye(size)
                tl.append(t.reshape((k, *numpy.shape(leaf))))
            dots[i] = _internal(args[i], tangents.materialize(
                args[i], tangents.unflatten(td, tl), (k,)))
        res = _jvp_run(f, tuple(args), tuple(dots), (k,), has_aux)
        out, out_dot = res[0], res[1]
        rows, _ = tangents.flatten(out_dot)
        jac = _jac_layout(out, [(rows, args[i], offsets[i]) for i in idx], single)
        return (jac, res[2]) if has_aux else jac

    return jacfwd_f


def jacrev(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """The Jacobian of ``f`` by reverse mode: one pullback per output scalar.
    Layout as in JAX (``out.shape + in.shape``; tuples for tuple argnums)."""
    single = isinstance(argnums, int)
    nums = _argnums_tuple(argnums)

    @functools.wraps(f)
    def jacrev_f(*args: Any) -> Any:
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"argnums {a} is out of range for {len(args)} argument(s)")
        idx = [a % len(args) for a in nums]
        res = vjp(f, *args, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_def = tangents.flatten(out)
        sizes = [int(numpy.size(leaf)) for leaf in out_leaves]
        m = sum(sizes)
        # grads[i][r] = the cotangent of argument i for output scalar r, flattened.
        grads: dict[int, list[list[Any]]] = {i: [] for i in idx}
        unit_leaves = [numpy.zeros(numpy.shape(leaf)) for leaf in out_leaves]
        for r in range(m):
            j, o = 0, r
            while o >= sizes[j]:
                o -= sizes[j]
                j += 1
            units = [numpy.zeros(numpy.shape(leaf)) for leaf in out_leaves]
            units[j].reshape(-1)[o] = 1.0
            units = [u if isinstance(leaf, numpy.ndarray) else type(leaf)(u)
                     for u, leaf in zip(units, out_leaves)]
            cts = pullback(tangents.unflatten(out_def, units))
            for i in idx:
                g = tangents.materialize(args[i], cts[i])
                grads[i].append(tangents.flatten(g)[0])
        del unit_leaves
        parts = []
        for i in idx:
            x_leaves, _ = tangents.flatten(args[i])
            offsets, k = [], 0
            for leaf in x_leaves:
                offsets.append(k)
                k += int(numpy.size(leaf))
            # One row per input scalar (k), per output leaf: shape (k, *out_leaf.shape).
            flat = numpy.array([numpy.concatenate([numpy.ravel(g) for g in row])
                                if row else numpy.zeros(0) for row in grads[i]])
            flat = flat.reshape(m, k).T if m else numpy.zeros((k, 0))
            rows, start = [], 0
            for leaf, size in zip(out_leaves, sizes):
                rows.append(flat[:, start:start + size].reshape((k, *numpy.shape(leaf))))
                start += size
            parts.append((rows, args[i], offsets))
        jac = _jac_layout(out, parts, single)
        return (jac, res[2]) if has_aux else jac

    return jacrev_f


def dispatch_jvp(f: Any, args: tuple, dots: tuple, kwargs: dict, kw_dots: Any, obj: Any,
                 obj_dot: Any, site: Any = None, callee: bool = False) -> tuple[Any, Any]:
    """Run-time dispatch for a call whose callee is a value: a rule or a derived JVP.

    ``dots`` are the arguments' tangents, ``kw_dots`` those of keyword arguments (or
    ``None``), ``obj``/``obj_dot`` the receiver of a method call and its tangent.
    """
    kw_dots = kw_dots or {}
    rule = registry.lookup(f) if _hashable_callable(f) else None
    if rule is not None and rule.nondifferentiable:
        return f(*args, **kwargs), None
    if rule is not None and rule.jvp is not None:
        value, differential = _run_rule(rule.jvp, args, kwargs, site)
        kd = [kw_dots.get(k) for k in kwargs]
        if all(d is None for d in (*dots, *kd)):
            return value, None
        if any(d is not None for d in kd):
            try:
                return value, differential(*dots, *kd)
            except TypeError:
                raise NonDifferentiableError(
                    "an active keyword argument of this primitive has no derivative",
                    site) from None
        return value, differential(*dots)
    if isinstance(f, type) and f.__module__ not in ("builtins", "numpy") and \
            any(d is not None for d in (*dots, *kw_dots.values())):
        return _construct_jvp(f, args, dots, kwargs, kw_dots, site)
    try:
        fn, bound, bound_kw = _unwrap(f)
    except SourceUnavailableError:
        name = describe(f)
        if all(d is None for d in (*dots, *kw_dots.values(), obj_dot)):
            return f(*args, **kwargs), None
        raise NonDifferentiableError(
            f"{name} has no derivative rule and no Python source, and an active value is "
            "passed to it", site,
            notes=(f"register one with @wengert.derivative(of={name}, mode='forward') "
                   "returning (value, differential)",)) from None
    _check_not_generated(fn, site)
    nb = len(bound)
    has_obj = obj is not None and nb >= 1 and bound[0] is obj
    if callee and not has_obj and (bound or bound_kw) and obj_dot is not None:
        raise _hidden_arguments_error(f, site)
    full = (*bound, *args)
    full_dots = (*[obj_dot if has_obj and k == 0 else None for k in range(nb)], *dots)
    kw = {**bound_kw, **kwargs}
    kwd = {**dict.fromkeys(bound_kw), **{k: kw_dots.get(k) for k in kwargs}}
    return _call_jvp(fn, full, kw, full_dots, kwd)


def _show_jvp(fn: Any, argnums: int | Sequence[int], nbound: int,
              arg_types: Sequence[type | None] | None) -> str:
    nparams = _nparams(fn)
    if arg_types is None:
        arg_types = [float] * nparams
    wrt = _wrt(argnums, nbound, nparams)
    return _jvp_entry(fn, wrt, tuple(arg_types)).source or ""


def _construct_jvp(cls: type, args: tuple, dots: tuple, kwargs: dict, kw_dots: dict,
                   site: Any) -> tuple[Any, Any]:
    """``cls(*args, **kwargs)`` and its tangent (an ``Attrs`` of its attributes'): a
    dataclass's generated ``__init__`` stores its arguments; a Python ``__init__`` is
    differentiated like any method, writing into the new object's tangent."""
    init = cls.__dict__.get("__init__") if "__init__" in cls.__dict__ else None
    for klass in cls.__mro__:
        if "__init__" in klass.__dict__:
            init = klass.__dict__["__init__"]
            break
    if dataclasses.is_dataclass(cls) and getattr(init, "__qualname__", "").endswith(
            "__create_fn__.<locals>.__init__") or (
            dataclasses.is_dataclass(cls) and not _has_source_code(init)):
        if hasattr(cls, "__post_init__"):
            raise NonDifferentiableError(
                f"constructing {cls.__name__} (a dataclass with __post_init__) from active "
                "values is not supported yet", site)
        value = cls(*args, **kwargs)
        bound = inspect.signature(cls).bind(*args, **kwargs)
        names = list(bound.arguments)
        t = runtime.Attrs()
        for k, name in enumerate(names):
            d = dots[k] if k < len(args) else kw_dots.get(name)
            if d is not None:
                t[name] = d
        return value, t
    if isinstance(init, types.FunctionType) and cls.__new__ is object.__new__:
        obj = object.__new__(cls)
        t = runtime.Attrs()
        _call_jvp(init, (obj, *args), dict(kwargs), (t, *dots), dict(kw_dots))
        return obj, t
    raise NonDifferentiableError(
        f"constructing {cls.__name__} from active values is not supported", site)


def _has_source_code(fn: Any) -> bool:
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    return True


# ----------------------------------------------------------------------------- registration


def stop_gradient(x: Any) -> Any:
    """``x`` itself, seen by every derivative as a constant: nothing flows through it
    (JAX's ``lax.stop_gradient``). Wrap a value that a derivative-cutting operation
    (``int``, ``round``) is meant to cut, and the warning about it goes away."""
    return x


registry.nondifferentiable(stop_gradient, pure=True)


def derivative(of: Any, mode: str = "reverse") -> Any:
    """Register the decorated function as the derivative rule of the callable ``of``
    (Swift's ``@derivative(of:)``): for ``mode="reverse"`` it returns ``(value,
    pullback)`` with ``pullback(out_bar)`` giving one cotangent per positional argument
    (``None`` for none); for ``mode="forward"`` ``(value, differential)`` with
    ``differential(*tangents)`` giving the output's tangent. Written as ``return value,
    lambda ...`` or a nested ``def``, it is inlined into generated code like the built-in
    rules. Derivatives made before are rebuilt."""
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', got {mode!r}")

    def register(rule: Any) -> Any:
        (registry.defvjp if mode == "reverse" else registry.defjvp)(of, user=True)(rule)
        for cache in (_PRIMAL_CACHE, _VJP_CACHE, _JVP_CACHE, _DERIVED_IR, _RESULT_TYPES):
            cache.clear()
        return rule

    return register
