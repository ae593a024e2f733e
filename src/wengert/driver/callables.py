"""What a callable is to wengert: a plain function, a gradient made by ``grad`` (a
:class:`Gradient`, differentiated again from its IR), a primitive given directly
(``grad(math.tanh)``: a Python wrapper calling it), or a ``*args`` function called with
a known number of arguments (a wrapper of that many parameters)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import linecache
import types
from collections.abc import Sequence
from typing import Any

import numpy

from wengert import runtime
from wengert.diagnostics import (
    SourceUnavailableError,
    UsageError,
    describe,
)
from wengert.objects import hashable
from wengert.rules import registry
from wengert.vocabulary import sanitize


def cache_key(fn: Any) -> Any:
    if type(fn) is Gradient:
        return ("grad", cache_key(fn.inner), fn.wrt, fn.single)
    # Identity, not equality: code objects of two identical modules compare equal.
    # The cells' contents and the globals are checked by the entry itself.
    return (id(fn.__code__), id(fn.__globals__), tuple(id(c) for c in (fn.__closure__ or ())))


def operator_name(value: Any) -> str | None:
    """``"grad"`` or ``"vjp"`` where ``value`` is one of the operators the driver recognises
    when differentiated code takes a derivative itself (``driver/operators.py``, and the
    public functions standing for them), else ``None``."""
    if type(value) is not types.FunctionType:
        return None
    return getattr(value, "__wengert_operator__", None)


class Gradient:
    """``grad(f)`` seen as a function wengert differentiates like any other.

    It takes the parameters of ``f`` (the plain function ``base`` at the bottom of a
    tower of ``grad``) and its IR is derived from ``f``'s for each set of argument types
    (:func:`ir_entry`): the VJP's forward code followed by its pullback, seeded. So
    ``grad(grad(f))``, ``jvp(grad(f))``, ``hessian`` and calls of a ``grad(f)`` inside
    differentiated code all transform generated IR again. Attributes that bind arguments
    (``__code__``, ``__defaults__``, the signature) are ``base``'s.
    """

    def __init__(self, inner: Any, wrt: tuple[int, ...], single: bool) -> None:
        self.inner, self.wrt, self.single = inner, wrt, single
        self.base = inner.base if type(inner) is Gradient else inner
        self.__name__ = f"{inner.__name__}_grad"
        self.__qualname__ = f"{inner.__qualname__}_grad"

    __code__ = property(lambda self: self.base.__code__)
    __globals__ = property(lambda self: self.base.__globals__)
    __defaults__ = property(lambda self: self.base.__defaults__)
    __kwdefaults__ = property(lambda self: self.base.__kwdefaults__)
    __closure__ = property(lambda self: self.base.__closure__)
    __signature__ = property(lambda self: inspect.signature(self.base, follow_wrapped=False))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        grad = runtime.driver().grad
        return grad(self.inner, self.wrt[0] if self.single else self.wrt)(*args, **kwargs)


#: Primitives given to the API directly (``grad(math.tanh)``) -> their Python wrappers.
_PRIMITIVES: dict[Any, types.FunctionType] = {}


def primitive_function(f: Any) -> types.FunctionType | None:
    """A Python function that only calls ``f``, for a primitive with rules and no source
    (``math.tanh``, a NumPy ufunc), so that every transform treats it like user code;
    ``None`` for anything else, or a signature that cannot be spelled."""
    if not hashable(f) or registry.lookup(f) is None or \
            isinstance(f, (types.FunctionType, types.MethodType, functools.partial)) and \
            not registry.lookup(f).user:
        # (a Python function with a rule the user registered is that rule's, given
        # directly as when called: ``grad(sq)`` as ``grad(lambda x: sq(x))``)
        return None
    if f in _PRIMITIVES:
        return _PRIMITIVES[f]
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        nin = getattr(f, "nin", None)  # a ufunc has no signature, but an arity
        names = _required_from_doc(f)
        optional = names is not None and _optional_in_doc(f)
        if isinstance(nin, int):
            names = [f"x{i}" for i in range(nin)]
            optional = False
        if names is not None:
            params = [inspect.Parameter(a, inspect.Parameter.POSITIONAL_ONLY) for a in names]
            if optional:  # (``log(x, [base=math.e])``: what is given, passed on)
                params.append(inspect.Parameter("rest", inspect.Parameter.VAR_POSITIONAL))
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


def fixed_arity(fn: Any, nargs: int, kwargs: dict) -> Any:
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
    return _calling(fn, key, params, params, f"{nargs}")


def leading(fn: Any, nargs: int) -> Any:
    """For ``def f(x, scale=2.0)`` called with its first ``nargs`` parameters alone, a
    function of exactly those calling ``f`` (``def f(x): return f(x)``: the others take
    their defaults); ``fn`` itself for anything else."""
    code = getattr(fn, "__code__", None)
    if type(fn) is not types.FunctionType or code is None or code.co_flags & 0x0C or \
            not nargs < code.co_argcount <= nargs + len(fn.__defaults__ or ()) or \
            any(k not in (fn.__kwdefaults__ or {})
                for k in code.co_varnames[code.co_argcount:code.co_argcount +
                                          code.co_kwonlyargcount]):
        return fn
    key = (fn, nargs, "leading")
    wrapper = _FIXED.get(key)
    if wrapper is not None:
        return wrapper
    params = list(code.co_varnames[:nargs])
    return _calling(fn, key, params, params, f"{nargs}-of-{code.co_argcount}")


def _calling(fn: types.FunctionType, key: tuple, params: list[str], given: list[str],
             tag: str) -> Any:
    """A function of ``params`` returning ``fn(*given)`` (``given`` spelled as in a call),
    compiled from source registered with ``linecache`` so that wengert reads it like a
    user's, and kept under ``key``."""
    name = sanitize(fn.__name__)
    source = (f"def {name}({', '.join(params)}):\n"
              f"    return {name}({', '.join(given)})\n")
    filename = f"<wengert:fixed-arity:{fn.__qualname__}/{tag}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    wrapper = namespace[name]
    namespace[name] = fn  # the name the wrapper calls is the function it stands for
    wrapper.__qualname__ = fn.__qualname__
    _FIXED[key] = wrapper
    return wrapper


def keyword_adapter(fn: types.FunctionType, npos: int, names: tuple[str, ...]) -> Any:
    """A function of ``npos + len(names)`` parameters calling ``fn`` with the first
    ``npos`` by position and the rest by keyword (``def f(a0, kw_s): return f(a0, s=kw_s)``):
    a call given keyword arguments as a call of positional ones only, for a callee taking
    them keyword-only or through ``**kwargs``."""
    key = (fn, npos, names)
    adapter = _FIXED.get(key)
    if adapter is not None:
        return adapter
    params = [f"a{k}" for k in range(npos)] + [f"kw_{k}" for k in names]
    given = [f"a{k}" for k in range(npos)] + [f"{k}=kw_{k}" for k in names]
    return _calling(fn, key, params, given, f"{npos}/{','.join(names)}")


def _optional_in_doc(f: Any) -> bool:
    """Whether a builtin's docstring spells optional parameters after its required ones
    (``log(x, [base=math.e])``)."""
    name = getattr(f, "__name__", "")
    inside = (getattr(f, "__doc__", None) or "").lstrip()[len(name) + 1:].split(")", 1)[0]
    return "[" in inside or "=" in inside


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



def wrt_indices(argnums: int | Sequence[int], nbound: int, nparams: int) -> tuple[int, ...]:
    try:
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    except TypeError:
        nums = (argnums,)
    out = []
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise UsageError(f"argnums must be an int or a tuple of ints, got {a!r}",
                             hint="argnums=0 for the first argument, argnums=(0, 1) for two")
        i = a + nbound if a >= 0 else nparams + a
        if not 0 <= i < nparams:
            raise UsageError(f"argnums {a} is out of range for a function of "
                             f"{nparams - nbound} argument(s)")
        out.append(i)
    if not out:
        raise UsageError("argnums is empty: there is nothing to differentiate with respect to")
    return tuple(out)


def check_wrt_arguments(fn: Any, args: Sequence[Any], wrt: Sequence[int], nbound: int,
                        what: str) -> None:
    """Refuse a derivative with respect to an argument that has none: an int or a bool
    (as JAX's ``grad`` does: a float is what is meant, or the argument is a count), or a
    complex number (wengert differentiates real functions)."""
    names = getattr(getattr(fn, "__code__", None), "co_varnames", ())
    for i in wrt:
        if i >= len(args):
            continue
        a = args[i]
        name = f"argument {i - nbound}" + (f" ({names[i]!r})" if i < len(names) else "")
        if isinstance(a, (bool, int, numpy.integer, numpy.bool_)):
            raise UsageError(
                f"{what} is taken with respect to {name}, which is the int {a!r}: an int has "
                "no derivative", hint=f"pass a float ({float(a)!r}), or leave it out of "
                                      "argnums")
        if isinstance(a, (complex, numpy.complexfloating)) or \
                isinstance(a, numpy.ndarray) and a.dtype.kind == "c":
            raise UsageError(
                f"{what} is taken with respect to {name}, which is complex: wengert "
                "differentiates functions of real numbers",
                hint="split it into its real and imaginary parts (two float arguments)")
        if plain_object(a):
            raise not_differentiated(a, f"{what} is taken with respect to {name}")


def plain_object(a: Any) -> bool:
    """Whether ``a`` is an instance of a plain class (not a dataclass, a named tuple or a
    container): its derivative would come back as nothing, for a dataclass's fields, or a
    named tuple's, are what wengert builds derivatives of, as a JAX pytree's leaves."""
    return hasattr(a, "__dict__") and not dataclasses.is_dataclass(type(a)) and \
        not isinstance(a, (tuple, list, dict, numpy.ndarray, types.FunctionType,
                           types.ModuleType, type)) and not callable(a)


def not_differentiated(a: Any, what: str) -> UsageError:
    """The error for a derivative asked of the plain object ``a`` (:func:`plain_object`)."""
    name = type(a).__name__
    return UsageError(
        f"{what}, an instance of the class {name!r}, which is not a dataclass: wengert "
        "builds derivatives of dataclasses, named tuples, lists, dicts, tuples, floats and "
        "arrays",
        hint=f"make {name} a @dataclasses.dataclass, or pass the floats it holds as "
             "arguments")


def check_positional(argnums: Any, given: int, what: str) -> None:
    """Refuse a call that passes fewer positional arguments than ``argnums`` names (the
    arguments differentiated are the positional ones, as in JAX)."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    try:
        need = max((a + 1 for a in nums if isinstance(a, int) and a >= 0), default=0)
    except TypeError:
        return  # (``wrt_indices`` says what is wrong with them)
    if given < need:
        raise UsageError(
            f"{what} with respect to argnums={argnums!r} needs at least {need} positional "
            f"argument(s), but the call passed {given}",
            hint="pass the arguments differentiated by position (`grad(f)(1.0)`, not "
                 "`grad(f)(x=1.0)`)")
