"""Run-time helpers for calls whose callee was not known when the derivative was made: the
driver's entry points (installed once, never imported, so the run time stays below
everything else), the dispatchers generated pullbacks call, and the linking of derived
functions to each other (:class:`Later` for a recursion, :func:`joined` for a VJP split in
two)."""

from __future__ import annotations

import dataclasses
from types import FunctionType as _FunctionType
from types import MethodDescriptorType as _MethodDescriptorType
from types import WrapperDescriptorType as _WrapperDescriptorType
from typing import Any

from wengert.diagnostics import NonDifferentiableError, SourceLoc
from wengert.objects import namedtuple_method


class Driver:
    """What generated code, and the driver's lower modules, reach the driver through: it is
    installed once by the driver (:func:`install_driver`, from ``driver/operators.py``),
    never imported, so the run time stays below everything else.

    ``vjp(f, args, kwargs, obj, site, ...)`` and ``jvp(f, args, dots, kwargs, kw_dots, obj,
    obj_dot, site, ...)`` find or derive a callee's VJP and JVP at run time;
    ``recomputable(f, site, args)`` refuses a callee that writes into its arguments;
    ``definition(f, kwargs)`` is the function a named tuple's method runs; ``has_rule(f)``
    whether a built-in method has rules; ``jvp_of_vjp(f, f_dot, args, g, dots, g_dot,
    site)`` the tangent of a dispatched pullback's output; ``grad(f, argnums)`` the API's
    ``grad``.
    """

    __slots__ = ("vjp", "jvp", "recomputable", "definition", "has_rule", "jvp_of_vjp", "grad")

    def __init__(self, *, vjp: Any, jvp: Any, recomputable: Any, definition: Any,
                 has_rule: Any, jvp_of_vjp: Any, grad: Any) -> None:
        self.vjp, self.jvp, self.recomputable = vjp, jvp, recomputable
        self.definition, self.has_rule = definition, has_rule
        self.jvp_of_vjp, self.grad = jvp_of_vjp, grad


#: The driver, once installed (``None`` while only the run time is imported).
DRIVER: Driver | None = None


def install_driver(driver: Driver) -> None:
    """Install the driver's entry points (once, when ``wengert`` is imported)."""
    global DRIVER
    DRIVER = driver


def driver() -> Driver:
    """The installed driver (the run time is used through ``wengert``, which installs it)."""
    if DRIVER is None:  # pragma: no cover - only reached importing wengert.runtime alone
        raise RuntimeError("wengert.runtime is used without the driver: import wengert")
    return DRIVER


#: Classes whose ``__getattribute__`` a class inherits when it defines none (a named
#: tuple's is ``tuple``'s).
_PLAIN_LOOKUP = (object, tuple, list, dict)


def method_function(site: Any, obj: Any, name: str) -> Any:
    """The function ``obj.name(...)`` calls with ``obj`` as its first argument (a method
    defined in ``obj``'s class), for a method call dispatched at run time in a gradient's IR
    differentiated again: the call is then ``f(obj, ...)``, a call of a function of values
    (:func:`dispatch_value`). Anything else ``obj.name`` may be (an attribute of the
    instance, a static or class method, a method written in C) is refused where it is
    called."""
    cls = type(obj)
    f = getattr(cls, name, None)
    if namedtuple_method(f) and DRIVER is not None:
        return DRIVER.definition(f, {})  # (a named tuple's ``_replace``, as defined)
    if type(f) is _FunctionType and name not in getattr(obj, "__dict__", ()) and \
            getattr(cls.__getattribute__, "__objclass__", None) in _PLAIN_LOOKUP:
        return f  # (attributes looked up as Python does: no ``__getattribute__`` of its own)
    if type(f) in (_MethodDescriptorType, _WrapperDescriptorType) and \
            name not in getattr(obj, "__dict__", ()) and DRIVER is not None and \
            DRIVER.has_rule(f):
        return f  # (a built-in type's method with rules: ``dict.items``, ``list.index``)
    raise NonDifferentiableError(
        f"{type(obj).__name__}.{name} is not a method defined in its class, and this call of "
        "it, dispatched at run time, differentiates to the first order only", site,
        hint="call a function known where the call is written, or a method of a class "
             "known there (a dataclass, an object made in the function)")


@dataclasses.dataclass(frozen=True)
class KeywordSite(SourceLoc):
    """The site of a call dispatched at run time given keyword arguments, in a gradient's
    IR differentiated again: :func:`dispatch_value`, :func:`dispatch_pullback` and their
    rules take all of its arguments by position, the last ones (``names``) standing for
    keyword arguments, and the dispatchers call the callee with those by keyword; their
    adjoints and tangents stay in the same places."""

    names: tuple[str, ...] = ()

    def plain(self) -> SourceLoc:
        """The site itself, without the keywords."""
        return SourceLoc(self.filename, self.lineno, self.col, self.end_lineno,
                         self.end_col, self.source_line)


def by_keyword(site: Any, args: tuple) -> tuple[tuple, dict[str, Any]]:
    """The positional and keyword arguments a dispatched call at ``site`` gives its callee
    for ``args`` (all of them by position where ``site`` is no :class:`KeywordSite`)."""
    if type(site) is not KeywordSite:
        return args, {}
    n = len(args) - len(site.names)
    return args[:n], dict(zip(site.names, args[n:]))


def dispatch_value(site: Any, f: Any, *args: Any) -> Any:
    """``f(*args)`` for a callee known only at run time, in a gradient's IR that is
    differentiated again: a plain call, whose rules dispatch its derivatives (the tangent
    through :func:`dispatch_tangent`, the adjoints through :func:`dispatch_pullback`)."""
    if type(site) is KeywordSite:
        positional, keywords = by_keyword(site, args)
        return f(*positional, **keywords)
    return f(*args)


def dispatch_pullback(site: Any, f: Any, args: tuple, g: Any) -> tuple:
    """The adjoints (``f``'s, then one per argument) that the dispatched ``f(*args)`` gives
    the output cotangent ``g``: its VJP found or derived at run time, its forward run again
    (a function of values, which forward mode differentiates again, where a pullback
    closure kept from the forward would not be)."""
    if g is None:
        return (None,) * (1 + len(args))
    positional, keywords = by_keyword(site, args)
    driver().recomputable(f, site, positional)
    # (The adjoints of keyword arguments come after the others', in their order.)
    _, pb = driver().vjp(f, positional, keywords, f, site, (), True)
    return pb(g)


def vjp_call(site: Any, f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``f(*args, **kwargs)`` and its pullback, for a callee known only at run time.

    The pullback returns one adjoint for ``f`` itself (always ``None``) followed by one
    per positional and keyword argument, in call order.
    """
    return driver().vjp(f, args, kwargs, None, site)


def vjp_method(site: Any, obj: Any, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``obj.name(*args, **kwargs)`` and its pullback: adjoints of ``obj`` and the arguments."""
    return driver().vjp(getattr(obj, name), args, kwargs, obj, site)


def vjp_call_checked(site: Any, borrowed: tuple[int, ...], f: Any, *args: Any,
                     **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_call` where the arguments at positions ``borrowed`` (1 for the first
    argument) are objects read out of containers, which the callee must not change."""
    return driver().vjp(f, args, kwargs, None, site, borrowed)


def vjp_call_active(site: Any, borrowed: tuple[int, ...], f: Any, *args: Any,
                    **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_call` of a callee that is itself a value being differentiated (a callable
    object): its adjoint is the pullback's first output, as a method's receiver's is."""
    return driver().vjp(f, args, kwargs, f, site, borrowed, callee=True)


def vjp_method_checked(site: Any, borrowed: tuple[int, ...], obj: Any, name: str, *args: Any,
                       **kwargs: Any) -> tuple[Any, Any]:
    """:func:`vjp_method` where the receiver (position 0) or arguments at positions
    ``borrowed`` are objects read out of containers, which the callee must not change."""
    return driver().vjp(getattr(obj, name), args, kwargs, obj, site, borrowed)


class Later:
    """A derived function still being generated when a caller links to it (recursion):
    generated code calls ``later.fn`` (of a VJP split in two, ``later.forward`` and
    ``later.pullback``), which are set once the function exists."""

    __slots__ = ("fn", "forward", "pullback", "__name__")

    def __init__(self, name: str) -> None:
        self.fn: Any = None
        self.forward: Any = None
        self.pullback: Any = None
        self.__name__ = name


def call_pullback(pb: Any, *args: Any) -> Any:
    """The pullback role of a VJP that is not split in two: its "residuals" are its
    pullback closure itself (see :func:`joined`)."""
    return pb(*args)


def joined(forward: Any, pullback: Any) -> Any:
    """The VJP ``(value, pullback)`` of a VJP split in two (``transforms/split.py``): the
    forward's residuals bound to the pullback. It carries the two as ``forward`` and
    ``pullback`` for callers that call them directly."""
    from functools import partial

    def vjp(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        value, res = forward(*args, **kwargs)
        return value, partial(pullback, res)

    vjp.forward = forward  # type: ignore[attr-defined]
    vjp.pullback = pullback  # type: ignore[attr-defined]
    vjp.__name__ = getattr(forward, "__name__", "vjp")
    return vjp
