"""The operators the driver recognises in the code it differentiates, and its entry points.

``grad`` (and ``value_and_grad``) and ``vjp`` are defined here, each marked with
``__wengert_operator__``: a function that takes a derivative in its body (``grad(g)(x)``,
``vjp(f, x)``) is differentiated to a higher order by recognising them (``callables.
operator_name``), whatever module they were reached through. ``grad`` keeps, per argument
types, the derived function at hand, so a gradient's fixed cost is one lookup; the
gradients of closures of one code share theirs (:func:`_closure_entries`).

Here too: the forward-over-reverse derivative of a call dispatched at run time
(:func:`_jvp_of_vjp`), and the one installation of the driver's entry points into the run
time (:func:`wengert.runtime.install_driver`), which generated code calls.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Sequence
from typing import Any

from wengert import runtime
from wengert.diagnostics import NonDifferentiableError, ReverseModeRefusal, WengertError
from wengert.driver.binding import (
    arg_type,
    call_vjp,
    check_unaliased,
    finish,
    forward_gradient,
    internal,
    run_vjp,
    seed,
    shapes_of,
    warned,
)
from wengert.driver.cache import DerivedEntry
from wengert.driver.callables import (
    check_positional,
    check_wrt_arguments,
    fixed_arity,
    keyword_adapter,
    primitive_function,
    wrt_indices,
)
from wengert.driver.dispatch import (
    definition,
    dispatch_jvp,
    dispatch_vjp,
    has_rule,
    recomputable,
)
from wengert.driver.forward_jacobian import forward_jacobian, forward_size
from wengert.driver.pipeline import (
    function_of,
    is_lifted,
    param_count,
    writes_arguments,
)
from wengert.frontend.source import global_reads, lift_captures
from wengert.tracebacks import filtered


def value_and_grad(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """``f`` and its gradient with respect to ``argnums`` at once (JAX conventions)."""
    return _gradient(f, argnums, has_aux, True)


#: Argument types a gradient keeps its derivation at hand for (the shapes of arrays are
#: part of their types: a function given ever new shapes finds its derivation again).
_FAST_ENTRIES = 64


#: Argument types that :func:`arg_type` gives as they are: a call of only these is looked
#: up by ``type`` alone, the cheapest key.
_PLAIN = frozenset({float, int, bool, str, complex, type(None)})


#: The shortcuts of the gradients of closures, by code and what the gradient takes (most
#: recently made last): every ``grad`` of a closure of that code shares them.
_CLOSURE_ENTRIES: dict[tuple, dict] = {}


_CLOSURE_CODES = 256


def _closure_entries(code: Any, argnums: Any, has_aux: bool, with_value: bool) -> dict:
    """The shortcuts shared by the gradients of the closures of ``code``."""
    key = (code, argnums if isinstance(argnums, int) else tuple(argnums), has_aux, with_value)
    got = _CLOSURE_ENTRIES.pop(key, None)
    if got is None:
        got = {}
    _CLOSURE_ENTRIES[key] = got
    if len(_CLOSURE_ENTRIES) > _CLOSURE_CODES:
        del _CLOSURE_ENTRIES[next(iter(_CLOSURE_ENTRIES))]
    return got


#: Per (code, argnums, has_aux, with_value): the argument types for which reverse mode
#: refused and forward mode answers, shared by every ``grad`` of the code (a wrapper made
#: per call would otherwise try reverse mode again each time). Forward mode's answer is
#: right whatever changed since: a stale entry costs speed only.
_BY_FORWARD: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}


def _forward_answered(f: Any, argnums: Any, has_aux: bool, with_value: bool
                      ) -> set[tuple[Any, ...]]:
    """The set :data:`_BY_FORWARD` keeps for ``f`` (a new one for what cannot be a key)."""
    try:
        key = (getattr(f, "__code__", f), argnums if isinstance(argnums, int)
               else tuple(argnums), has_aux, with_value)
        hash(key)
    except TypeError:
        return set()
    got = _BY_FORWARD.get(key)
    if got is None:
        if len(_BY_FORWARD) >= _CLOSURE_CODES:
            del _BY_FORWARD[next(iter(_BY_FORWARD))]
        got = _BY_FORWARD[key] = set()
    return got


def _gradient(f: Any, argnums: int | Sequence[int], has_aux: bool, with_value: bool) -> Any:
    """``value_and_grad(f)`` (``with_value``) or ``grad(f)``: one function either way, so that
    a gradient's fixed cost is one call."""
    single = isinstance(argnums, int)
    # A plain function's data, read from its closure or its module's globals, is bound
    # anew at every call (``lift_captures``), and the types of that data are part of the
    # key; a closure (``grad(lambda w: loss(w, X, y))`` made at every step) shares what
    # earlier closures of its code found.
    liftable = type(f) is types.FunctionType and \
        getattr(f, "__wengert_grad__", None) is None and primitive_function(f) is None
    closure = liftable and f.__closure__ is not None
    # (A function reading no global and capturing nothing has no data to bind: its calls
    # take the plain path alone, whose cost is a gradient's fixed cost.)
    liftable = liftable and (closure or bool(global_reads(f.__code__)))
    #: Argument types -> (function, entry, wrt, bound arguments, written parameters,
    #: whether an argument is a container, whether the entry is a JVP) of earlier calls: a
    #: call with the same types and a still-valid entry skips binding and lookups.
    fast: dict[tuple[Any, ...], tuple[Any, DerivedEntry, tuple[int, ...], tuple, Any, bool,
                                      bool]]
    #: Those whose arguments' types are all :data:`_PLAIN`, by those types.
    plain: dict[tuple[type, ...], tuple[Any, DerivedEntry, tuple[int, ...], tuple, Any, bool,
                                        bool]] = {}
    fast = _closure_entries(f.__code__, argnums, has_aux, with_value) if closure else {}
    #: Argument types for which reverse mode refused the function and forward mode answers.
    by_forward = _forward_answered(f, argnums, has_aux, with_value)

    @functools.wraps(f)
    def gradient_f(*args: Any, **kwargs: Any) -> Any:
        try:
            if by_forward and not kwargs and tuple(map(arg_type, args)) in by_forward and \
                    _forward_fits(args, argnums):
                return _by_forward_mode(f, args, argnums, has_aux, with_value, None)
            hit = key = got = None
            data: tuple = ()
            if not kwargs and not closure:
                hit = plain.get(tuple(map(type, args)))  # (numbers, strings: nothing more)
                if hit is None:
                    key = tuple(map(arg_type, args))
                    hit = fast.get(key)
                if hit is not None and not hit[1].valid(hit[0]):
                    hit = None
            if hit is None and liftable and not kwargs:
                # (Only a function with data is found by its data's types too: one whose
                # global became data since was stale on the plain path, never stored there.)
                got = lift_captures(f)
                if got is not None:
                    data = got[1]
                    key = (got[0], *map(arg_type, data),
                           *(key if key is not None else map(arg_type, args)))
                    hit = fast.get(key)
                    if hit is not None and not hit[1].valid(hit[0]):
                        hit = None
            if hit is not None:
                fn, entry, wrt, bound, written, containers, forward = hit
                if got is not None:
                    bound = data  # (this call's own)
                full = (*bound, *args) if bound else args
                if written:
                    check_unaliased(fn, full, written)
                if forward:
                    out, res = entry.compiled(*full, 1.0)
                    return _forward_result(out, res, single, with_value)
                before = shapes_of(full, key[len(key) - len(args):] if key else
                                   tuple(map(arg_type, args)), len(bound), wrt,
                                   written) if containers else full
                # The forward and the pullback of the VJP called directly: no closure is made.
                compiled = entry.compiled
                out, res = compiled.forward(*full)
                pullback = compiled.pullback
            else:
                if key is None and not closure:
                    # (none with keywords; else a stale entry was found by type)
                    key = () if kwargs else tuple(map(arg_type, args))
                check_positional(argnums, len(args), "grad")
                fn, bound, bound_kw = function_of(f, len(args), lift=True)
                full = (*bound, *args)
                kw = {**bound_kw, **kwargs}
                fn = fixed_arity(fn, len(full), kw)
                nparams = param_count(fn)
                wrt = wrt_indices(argnums, len(bound), nparams)
                check_wrt_arguments(fn, full, wrt, len(bound), "grad")
                written = writes_arguments(fn, full)
                if written:
                    check_unaliased(fn, full, written)
                before = shapes_of(full, key[len(key) - len(args):] if key else
                                   tuple(map(arg_type, args)), len(bound), wrt, written)
                found = None if has_aux else forward_gradient(fn, full, wrt, kw)
                forward = found[0] if found is not None and found[1] else None
                if forward is not None:
                    entry = forward
                    try:
                        out, res = entry.compiled(*full, 1.0)
                    except WengertError:  # (refused as it ran: reverse mode answers or says why)
                        forward = None
                if forward is None:
                    try:
                        out, res, entry = call_vjp(fn, wrt, full, kw)
                    except WengertError as e:
                        if found is None or found[1]:
                            if not isinstance(e, ReverseModeRefusal):
                                raise
                            # (forward mode, a direction per input scalar, where few)
                            answer = _by_forward_mode(f, args, argnums, has_aux, with_value,
                                                      e, kwargs)
                            by_forward.add(tuple(map(arg_type, args)))
                            return answer
                        # Reverse mode refuses what forward mode derives, more slowly: it answers.
                        forward = entry = found[0]
                        warned(found[2])
                        out, res = entry.compiled(*full, 1.0)
                pullback = runtime.call_pullback  # (``res`` is the pullback itself)
                if key is not None and not kw and len(full) == fn.__code__.co_argcount and \
                        not fn.__code__.co_flags & 0x0C and (got is not None) == is_lifted(fn):
                    if len(fast) >= _FAST_ENTRIES:
                        fast.clear()  # (arrays of ever new shapes: their types are keys here)
                    containers = before is not full
                    fast[key] = (fn, entry, wrt, () if got is not None else tuple(bound),
                                 written, containers, forward is not None)
                    if got is None and _PLAIN.issuperset(key):
                        plain[key] = fast[key]
                if forward is not None:
                    return _forward_result(out, res, single, with_value)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise TypeError("has_aux=True requires the function to return a pair "
                                    "(value, aux)")
                value, aux = out
                adjs = pullback(res, (seed(value), None))
            else:
                value = out
                adjs = pullback(res, seed(value))
            if single:
                g = finish(before[wrt[0]], adjs[wrt[0]])
            else:
                g = tuple(finish(before[i], adjs[i]) for i in wrt)
            if not with_value:
                return (g, aux) if has_aux else g
            return ((value, aux), g) if has_aux else (value, g)
        except Exception as e:  # (wengert's frames left out: see ``wengert.tracebacks``)
            raise filtered(e)  # noqa: B904  (the same exception: its cause stays)

    return gradient_f


#: The most input scalars ``grad`` differentiates by forward mode where reverse mode
#: refuses (one direction each, in one batched pass: its cost grows with their number).
FORWARD_DIRECTIONS = 256


def _forward_fits(args: tuple, argnums: Any) -> bool:
    """Whether forward mode may answer for ``args``: ``argnums`` ints in range, at most
    :data:`FORWARD_DIRECTIONS` input scalars (else reverse mode's refusal stands)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if any(type(a) is not int or not -len(args) <= a < len(args) for a in nums):
        return False
    return forward_size(args, [a % len(args) for a in nums]) <= FORWARD_DIRECTIONS


def _by_forward_mode(f: Any, args: tuple, argnums: Any, has_aux: bool, with_value: bool,
                     refusal: ReverseModeRefusal | None, kwargs: dict | None = None) -> Any:
    """``grad``'s answer by forward mode, for a function reverse mode refuses (``refusal``)
    and forward mode differentiates (a write into an object read out of a list): the
    Jacobian of the one float the function returns, in one pass carrying a direction per
    input scalar. The refusal stands where that cannot be (keywords, too many scalars,
    forward mode refusing too)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if kwargs or not _forward_fits(args, argnums):
        raise refusal if refusal is not None else AssertionError("no refusal to stand")
    idx = [a % len(args) for a in nums]
    try:
        out, jac, aux = forward_jacobian(f, args, idx, single, has_aux)
    except WengertError:
        if refusal is not None:
            raise refusal from None
        raise
    value = out
    seed(value)  # (a result that is not one float: refused as reverse mode refuses it)
    if not with_value:
        return (jac, aux) if has_aux else jac
    return ((value, aux), jac) if has_aux else (value, jac)


def _forward_result(value: Any, tangent: Any, single: bool, with_value: bool) -> Any:
    """What ``grad`` (``value_and_grad``) returns from a forward pass of a function of one
    float: the tangent of its scalar result (checked as a pullback's seed is)."""
    seed(value)  # a result that is not a scalar float is refused as in reverse mode
    g = 0.0 if tangent is None else tangent
    g = g if single else (g,)
    return (value, g) if with_value else g


def grad(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """The gradient of the scalar function ``f`` with respect to ``argnums``."""
    grad_f = _gradient(f, argnums, has_aux, False)
    if not has_aux:
        # Forward mode differentiates it again from ``f``'s IR (forward over reverse).
        grad_f.__wengert_grad__ = (f, argnums)  # type: ignore[attr-defined]
    return grad_f


# The forward-over-reverse derivative of a call dispatched at run time, in a gradient
# differentiated again (``runtime.dispatch_pullback_tangent``): forward mode of the
# function that applies the callee's pullback, with the callee a constant of the derivation
# (a function, a callable object, a builtin with rules: each reached through ``_call*``).
def _call1(f: Any, x1: Any) -> Any:
    return f(x1)


def _call2(f: Any, x1: Any, x2: Any) -> Any:
    return f(x1, x2)


def _call3(f: Any, x1: Any, x2: Any, x3: Any) -> Any:
    return f(x1, x2, x3)


def _call4(f: Any, x1: Any, x2: Any, x3: Any, x4: Any) -> Any:
    return f(x1, x2, x3, x4)


def _pullback_at1(f: Any, x1: Any, g: Any) -> Any:
    _, pullback = vjp(_call1, f, x1)
    return pullback(g)


def _pullback_at2(f: Any, x1: Any, x2: Any, g: Any) -> Any:
    _, pullback = vjp(_call2, f, x1, x2)
    return pullback(g)


def _pullback_at3(f: Any, x1: Any, x2: Any, x3: Any, g: Any) -> Any:
    _, pullback = vjp(_call3, f, x1, x2, x3)
    return pullback(g)


def _pullback_at4(f: Any, x1: Any, x2: Any, x3: Any, x4: Any, g: Any) -> Any:
    _, pullback = vjp(_call4, f, x1, x2, x3, x4)
    return pullback(g)


_PULLBACKS_AT = {1: _pullback_at1, 2: _pullback_at2, 3: _pullback_at3, 4: _pullback_at4}


# For a plain function, its own pullback: derived from its IR (the applied VJP), where the
# call of it in ``_call1`` would be dispatched again, to no end for a recursion whose
# arguments' types only the run time knows.
def _own_pullback_at1(f: Any, x1: Any, g: Any) -> Any:
    _, pullback = vjp(f, x1)
    return (None, *pullback(g))


def _own_pullback_at2(f: Any, x1: Any, x2: Any, g: Any) -> Any:
    _, pullback = vjp(f, x1, x2)
    return (None, *pullback(g))


def _own_pullback_at3(f: Any, x1: Any, x2: Any, x3: Any, g: Any) -> Any:
    _, pullback = vjp(f, x1, x2, x3)
    return (None, *pullback(g))


def _own_pullback_at4(f: Any, x1: Any, x2: Any, x3: Any, x4: Any, g: Any) -> Any:
    _, pullback = vjp(f, x1, x2, x3, x4)
    return (None, *pullback(g))


_OWN_PULLBACKS_AT = {1: _own_pullback_at1, 2: _own_pullback_at2, 3: _own_pullback_at3,
                     4: _own_pullback_at4}


#: The calls :func:`_jvp_of_vjp` is working on (function, arguments and cotangent, by
#: identity): one met again is a derivative that dispatches itself.
_JVPS_OF_VJPS: dict[tuple[int, ...], Any] = {}


def _jvp_of_vjp(f: Any, f_dot: Any, args: tuple, g: Any, dots: tuple, g_dot: Any,
                site: Any) -> Any:
    """The tangent of the adjoints ``(f's, *args')`` that ``f``'s pullback at ``args``
    gives ``g``, for tangents ``f_dot`` of ``f`` (a callable object's fields), ``dots`` of
    ``args`` and ``g_dot`` of ``g`` (generated code's forms, ``None`` for zeros)."""
    own = type(f) is types.FunctionType and f_dot is None
    if type(site) is runtime.KeywordSite and own and not _by_keyword_position(f, site):
        # (A keyword-only parameter, or ``**kwargs``: a function of positional parameters
        # making the call as it was made.)
        positional = len(args) - len(site.names)
        return _jvp_of_vjp(keyword_adapter(f, positional, site.names), f_dot, args, g, dots,
                           g_dot, site.plain())
    if type(site) is runtime.KeywordSite or own and len(args) < f.__code__.co_argcount:
        # (A call given keyword arguments, or leaving parameters to their defaults: the
        # same call with each by position, a function's defaults given.)
        full, back = _by_position(f, site, args, own)
        full_dots = [None] * len(full)
        for i, d in enumerate(dots):
            full_dots[back[i]] = d
        out = _jvp_of_vjp(f, f_dot, full, g, tuple(full_dots), g_dot,
                          site.plain() if type(site) is runtime.KeywordSite else site)
        return None if out is None else (out[0], *(out[1 + back[i]] for i in range(len(args))))
    apply = (_OWN_PULLBACKS_AT if own else _PULLBACKS_AT).get(len(args))
    if apply is None:
        raise NonDifferentiableError(
            f"a call dispatched at run time with {len(args)} arguments is differentiated "
            "to the second order with at most 4", site,
            hint="call a function known where the call is written")
    key = (id(f), *map(id, args), id(g))
    if key in _JVPS_OF_VJPS:
        site = _JVPS_OF_VJPS[key]  # (the user's call, where it was first met)
        # The pullback's derivative dispatches this very call again (a recursion on
        # values whose types only the run time knows): it would never end.
        raise NonDifferentiableError(
            f"the second derivative of {getattr(f, '__name__', 'this call')} through a "
            "call of itself made at run time (its arguments' types are not known where "
            "the call is written) is not supported", site,
            hint="write the recursion over NumPy arrays or floats, or take differences of "
                 "wengert.grad")
    _JVPS_OF_VJPS[key] = site
    try:
        out = dispatch_jvp(apply, (f, *args, g), (f_dot, *dots, g_dot), {}, None, None,
                           None, site)[1]
    finally:
        _JVPS_OF_VJPS.pop(key, None)
    if out is None:
        return None
    # The API's cotangents (a dataclass's is one) in the form generated code adds up.
    return tuple(internal(x, t) for x, t in zip((f, *args), out))


def _by_keyword_position(f: Any, site: Any) -> bool:
    """Whether each keyword the call at ``site`` gives ``f`` is a positional parameter."""
    code = f.__code__
    return all(k in code.co_varnames[:code.co_argcount] for k in site.names)


def _by_position(f: Any, site: Any, args: tuple, every: bool) -> tuple[tuple, list[int]]:
    """For a call of ``f`` at ``site`` (a :class:`~wengert.runtime.KeywordSite` if some are
    by keyword) given ``args``: the arguments it gives ``f`` by position (defaults filled
    in before the last one given, or, ``every``, for each positional parameter), and where
    each of ``args`` is among them."""
    positional, keywords = runtime.by_keyword(site, args)
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    ordered = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in ordered]
    if any(k not in names[len(positional):] for k in keywords):
        raise NonDifferentiableError(
            f"{getattr(f, '__name__', 'this callee')} is given a keyword argument that is "
            "not one of its positional parameters (keyword-only, or taken by **kwargs), and "
            "this call, dispatched at run time, differentiates to the first order only", site,
            hint="pass the argument by position, or call a function known where the call "
                 "is written")
    last = max((names.index(k) for k in keywords), default=len(positional) - 1)
    if every:
        last = max(last, max((j for j, p in enumerate(ordered) if p.default is not p.empty),
                             default=-1))
    full = list(positional)
    for p in ordered[len(positional):last + 1]:
        full.append(keywords[p.name] if p.name in keywords else p.default)
    back = list(range(len(positional))) + [names.index(k) for k in keywords]
    return tuple(full), back



def vjp(f: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), pullback)``, as ``wengert.vjp`` (without its traceback filtering)."""
    return run_vjp(f, primals, has_aux)


grad.__wengert_operator__ = "grad"  # type: ignore[attr-defined]
value_and_grad.__wengert_operator__ = "value_and_grad"  # type: ignore[attr-defined]
vjp.__wengert_operator__ = "vjp"  # type: ignore[attr-defined]

runtime.install_driver(runtime.Driver(
    vjp=dispatch_vjp, jvp=dispatch_jvp, recomputable=recomputable, definition=definition,
    has_rule=has_rule, jvp_of_vjp=_jvp_of_vjp, grad=grad))
