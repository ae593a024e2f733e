"""Derivatives of callees known only at run time (a function passed as a value, a
method of an object whose class was unknown): a rule, or a derivative derived for the
types seen. Generated code reaches this module through the hook it installs in
:mod:`wengert.runtime`, never through an import."""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Any

import numpy

from wengert import runtime
from wengert.diagnostics import (
    NonDifferentiableError,
    SourceLoc,
    SourceUnavailableError,
    WengertError,
    describe,
)
from wengert.driver.binding import call_jvp, call_vjp
from wengert.driver.pipeline import function_of, receiver_class, written_params
from wengert.frontend.source import is_generated
from wengert.locate import in_installed_library, in_standard_library, in_wengert
from wengert.objects import hashable, namedtuple_method
from wengert.rules import python_defs, registry
from wengert.transforms.base import FLOATS


def _at_site(site: Any, derive: Any, *args: Any) -> Any:
    """``derive(*args)`` (the derivative of a callee met at run time, and its call), an
    error about the callee's own code that has no place of its own (a function without
    source, one made by ``jacfwd``) reported at the call site in the user's code."""
    try:
        return derive(*args)
    except WengertError as e:
        if not isinstance(site, SourceLoc):
            raise
        if e.loc is None:
            raise type(e)(e.message, site, e.hint, e.notes) from None
        if in_standard_library(e.loc.filename):
            # (the standard library's code is not the user's to change: their call is)
            raise type(e)(e.message, site, e.hint, (
                *e.notes, f"in the standard library's {e.loc.filename}:{e.loc.lineno}")
            ) from None
        if in_wengert(e.loc.filename):
            # (a helper of the code a derivative taken here generates, differentiated again)
            raise type(e)(e.message, site, e.hint, (
                *e.notes, "in a helper of the code wengert generates for a derivative taken "
                          "here, which is differentiated again")) from None
        if in_installed_library(e.loc.filename):
            # An installed library's function without a rule, its Python code lowered in its
            # place: that code is not the user's to change, their call (or a rule) is.
            name = describe(args[0]) if args else "this function"
            raise type(e)(
                f"{name} has no derivative rule, and its library's code, differentiated in "
                f"its place, is not supported: {e.message}", site,
                f"register one with @wengert.derivative(of={name}) returning (value, "
                "pullback), or call functions wengert has rules for",
                (*e.notes, f"in {e.loc.filename}:{e.loc.lineno}")) from None
        raise


def dispatch_vjp(f: Any, args: tuple, kwargs: dict, obj: Any, site: Any = None,
                 borrowed: tuple[int, ...] = (), callee: bool = False) -> tuple[Any, Any]:
    """Run-time dispatch for a call whose callee is a value: a rule or a derived VJP.

    The pullback returns the adjoint of ``obj`` (the receiver of a method call, else
    ``None``), then one adjoint per positional and keyword argument. ``borrowed`` are
    call positions (0 the receiver, then the arguments) holding objects read out of
    containers: a callee that may write into one is refused at ``site``.
    """
    target = _method_target(f)
    if target is not None:
        value, pb = dispatch_vjp(target, (f.__self__, *args), kwargs, None, site,
                                 tuple(k + 1 for k in borrowed), callee)

        def method_pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
            return pb(g, None if inouts is None else (None, *inouts))[1:]
        return value, method_pullback
    f = definition(f, kwargs)
    rule = registry.lookup(f) if hashable(f) else None
    nk = len(kwargs)
    if rule is not None and rule.vjp is not None:
        value, pb = run_rule(rule.vjp, args, kwargs, site)
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
        fn, bound, bound_kw = function_of(f)
    except SourceUnavailableError:
        if not args and not kwargs and obj is None:
            # Nothing goes in (``Cube()``, a class without an ``__init__`` of its own):
            # nothing to differentiate.
            value = f()

            def nothing_pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
                return inouts if inouts is not None else (None,)
            return value, nothing_pullback
        name = describe(f)
        raise NonDifferentiableError(
            f"{name} has no derivative rule and no Python source, and an active value is "
            "passed to it", site,
            notes=(f"register one with @wengert.derivative(of={name}) returning "
                   "(value, pullback)",)) from None
    _check_not_generated(fn, site)
    full = (*bound, *args)
    kw = {**bound_kw, **kwargs}
    plan = adjoint_plan(fn, len(full), tuple(kw))
    nb = len(bound)
    has_obj = obj is not None and nb >= 1 and bound[0] is obj
    if callee and not has_obj and (bound or bound_kw):
        raise _hidden_arguments_error(f, site)
    if borrowed:
        _check_borrowed(fn, plan, borrowed, nb, has_obj, len(args), site,
                        receiver_class(bound[0]) if has_obj else None)
    out, pb, _ = _at_site(site, call_vjp, fn, None, full, kw)
    # A pullback of numbers only takes no adjoints in (they are added here, as for floats).
    # (A split VJP's pullback is its pullback function with the residuals bound first.)
    code = getattr(getattr(pb, "func", pb), "__code__", None)
    bound_first = len(getattr(pb, "args", ())) if hasattr(pb, "func") else 0
    takes_inouts = code is None or code.co_argcount - bound_first >= 2

    def pullback(g: Any, inouts: Any = None) -> tuple[Any, ...]:
        ins = None
        if inouts is not None:
            # Call-site slots (receiver, arguments, keywords) to parameters.
            site = [None] * nb + list(inouts[1:])
            if has_obj:
                site[0] = inouts[0]
            ins = [site[where[1]] if where is not None and where[0] == "one" else None
                   for where in plan]
        adjs = pb(g, ins) if takes_inouts else pb(g)
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
            # (as the derived pullback decides it: a NumPy float is a number too, whose
            # adjoint coming in is not seeded by the callee but added here)
            if type(values[j]) not in (*FLOATS, int, bool):
                if j >= nb:
                    seeded.add(1 + j - nb)
                elif has_obj and j == 0:
                    seeded.add(0)

    return out, pullback


def _method_target(f: Any) -> Any:
    """For a method of a built-in type bound to its object (``x.sum`` of an array), what
    to call with the object first: the Python definition of the type's method, or the
    method itself when it has rules; ``None`` for any other callee."""
    owner = getattr(f, "__self__", None)
    if not isinstance(f, types.BuiltinMethodType) or owner is None or \
            isinstance(owner, (types.ModuleType, type)):
        return None
    method = getattr(type(owner), getattr(f, "__name__", ""), None)
    rule = registry.lookup(method) if method is not None and hashable(method) else None
    if rule is None:
        return None
    return rule.python or method


def definition(f: Any, kwargs: dict) -> Any:
    """A library function with a Python definition (``statistics.variance``) is derived from
    the definition, as where its call is seen when transforming, never from the library's
    own source (which may compute with fractions or exceptions no derivative follows)."""
    rule = registry.lookup(f) if hashable(f) else None
    if rule is not None and rule.python is not None and \
            registry.takes_keywords(rule, kwargs):
        return rule.python
    if namedtuple_method(f):
        defined = python_defs.NAMEDTUPLE_METHODS.get(f.__name__)
        if defined is not None and isinstance(f, types.MethodType):
            return types.MethodType(defined, f.__self__)  # (``q._replace(w=c)``)
        if defined is not None:
            return defined  # (``Pt._replace(q, w=c)``: the object given first)
    return f


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
                    nargs: int, site: Any, self_class: type | None = None) -> None:
    """Refuse a callee that may write into an object read out of a container (reverse mode
    keeps that object's adjoint apart from the container's: the write would be lost)."""
    written = written_params(fn, self_class)
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


def run_rule(rule_fn: Any, args: tuple, kwargs: dict, site: Any) -> tuple[Any, Any]:
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


def adjoint_plan(fn: Any, npos: int, kwnames: tuple[str, ...]) -> list:
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



def dispatch_jvp(f: Any, args: tuple, dots: tuple, kwargs: dict, kw_dots: Any, obj: Any,
                 obj_dot: Any, site: Any = None, callee: bool = False) -> tuple[Any, Any]:
    """Run-time dispatch for a call whose callee is a value: a rule or a derived JVP.

    ``dots`` are the arguments' tangents, ``kw_dots`` those of keyword arguments (or
    ``None``), ``obj``/``obj_dot`` the receiver of a method call and its tangent.
    """
    kw_dots = kw_dots or {}
    target = _method_target(f)
    if target is not None:
        return dispatch_jvp(target, (f.__self__, *args), (obj_dot, *dots), kwargs, kw_dots,
                            None, None, site, callee)
    f = definition(f, kwargs)
    rule = registry.lookup(f) if hashable(f) else None
    if rule is not None and rule.nondifferentiable:
        return f(*args, **kwargs), None
    if rule is not None and rule.jvp is not None:
        value, differential = run_rule(rule.jvp, args, kwargs, site)
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
        return construct_jvp(f, args, dots, kwargs, kw_dots, site)
    try:
        fn, bound, bound_kw = function_of(f)
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
    return _at_site(site, call_jvp, fn, full, kw, full_dots, kwd)


def construct_jvp(cls: type, args: tuple, dots: tuple, kwargs: dict, kw_dots: dict,
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
        call_jvp(init, (obj, *args), dict(kwargs), (t, *dots), dict(kw_dots))
        return obj, t
    raise NonDifferentiableError(
        f"constructing {cls.__name__} from active values is not supported", site)


def _has_source_code(fn: Any) -> bool:
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    return True


def recomputable(f: Any, site: Any, args: tuple = ()) -> None:
    """Refuse, at ``site``, a callee dispatched in code differentiated again that may write
    into its arguments: its pullback runs its forward again (``runtime.dispatch_pullback``),
    which would see them changed. A method of the class of its receiver is summarised for
    that class: the receiver is the first argument (``f(p, x)`` for ``p.energy(x)``), or
    what ``f`` carries (a bound method, a callable object: ``type(obj).__call__`` with
    ``obj`` first), so that its calls of its class's methods, itself included, are known."""
    target = _method_target(f)
    try:
        fn, bound, _ = function_of(definition(f if target is None else target, {}))
        receiver = bound[:1] if len(bound) == 1 else args[:1] if not bound else ()
        cls = receiver_class(receiver[0]) if receiver and \
            type(fn) is types.FunctionType and \
            getattr(type(receiver[0]), fn.__name__, None) is fn else None
        written = written_params(fn, cls) if type(fn) is types.FunctionType else ()
    except WengertError:
        return  # (the dispatch itself reports what it cannot differentiate)
    # (A parameter given a number or a function this time has nothing to write into: an
    # integrator calling the function it is given, with floats, runs again unchanged.)
    values = (*bound, *args)
    written = [i for i in written if i >= len(values) or
               not isinstance(values[i], _NOTHING_TO_WRITE)]
    if written:
        raise NonDifferentiableError(
            f"{describe(f)} writes into its arguments and is dispatched at run time in "
            "a derivative of the second order, whose pullback runs it again", site,
            hint="return new values from it instead of changing its arguments")


#: Arguments nothing can be written into (no item, no attribute that a write changes).
_NOTHING_TO_WRITE = (float, int, complex, str, bytes, type(None), numpy.generic,
                     types.FunctionType, types.BuiltinFunctionType, type)


def has_rule(f: Any) -> bool:
    rule = registry.lookup(f) if hashable(f) else None
    return rule is not None and (rule.vjp is not None or rule.python is not None)


