"""The public operators: derivatives of Python functions, in JAX's names and conventions.

Thin: each operator binds its arguments and asks the driver (:mod:`wengert.driver`) for
the derived function, cached per function, argument types and ``argnums``. ``grad`` and
``value_and_grad`` are the driver's own (:mod:`wengert.driver.operators`, where the driver
recognises them in code it differentiates); Jacobians live in :mod:`wengert.jacobians`.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Sequence
from typing import Any

from wengert import tangents
from wengert.codegen.emit import generate
from wengert.diagnostics import describe
from wengert.driver.binding import (
    arg_type,
    check_tangents,
    internal,
    jvp_run,
    run_vjp,
)
from wengert.driver.cache import GRADIENT_IRS, JVPS, PRIMALS, RESULT_TYPES, VJPS
from wengert.driver.callables import (
    Gradient,
    wrt_indices,
)
from wengert.driver.operators import grad as grad  # (the public operators: defined there)
from wengert.driver.operators import value_and_grad as value_and_grad
from wengert.driver.pipeline import (
    REFUSALS,
    function_of,
    ir_entry,
    jvp_entry,
    param_count,
    primal_entry,
    vjp_entry,
)
from wengert.frontend.source import unwrap
from wengert.ir import nodes as n
from wengert.ir.printer import print_function
from wengert.jacobians import hessian_blocks, jacfwd, second_derivatives  # noqa: F401 (the API)
from wengert.rules import registry
from wengert.tracebacks import api_boundary
from wengert.transforms.checks import check_iteration_closures


def lower_ir(f: Any) -> n.Function:
    """The (cached) IR of ``f``."""
    fn, _, _ = unwrap(f)
    return primal_entry(fn).ir


def primal(f: Any) -> Any:
    """``f`` regenerated from its IR: a compiled function that behaves like ``f``."""
    fn, bound_args, bound_kwargs = unwrap(f)
    entry = primal_entry(fn)
    if entry.compiled is None:
        check_iteration_closures(entry.ir)  # (no helper inlined here: refused if passed on)
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


@api_boundary
def show(f: Any, mode: str = "ir", argnums: int | Sequence[int] = 0,
         arg_types: Sequence[type | None] | None = None,
         like: Sequence[Any] | None = None) -> str:
    """Text of what wengert makes of ``f``: ``"ir"``, ``"primal"``, ``"vjp"`` or ``"jvp"``.

    ``"vjp"`` shows the generated forward code and pullback for ``argnums``,
    specialised on ``arg_types`` (default: ``float`` for every parameter), or on the types
    of the example arguments ``like`` as a call with them specialises (``like=(np.zeros(5),
    3)``: a float64 vector and an int); ``"jvp"`` the generated forward-mode code, likewise.
    """
    fn, bound, _ = function_of(f)
    if like is not None:
        arg_types = [arg_type(a) for a in like]
    if arg_types is not None and mode in ("vjp", "jvp") and \
            len(arg_types) != param_count(fn) - len(bound):
        raise TypeError(
            f"show: {describe(fn)} takes {param_count(fn) - len(bound)} arguments, but "
            f"{len(arg_types)} {'examples (like=)' if like is not None else 'types'} were "
            "given: pass one per argument (like=(x, 3), not like=((x, 3),))")
    if mode == "ir":
        if type(fn) is Gradient:  # the gradient's IR, for float arguments
            return print_function(ir_entry(fn, (float,) * param_count(fn)).ir)
        return print_function(primal_entry(fn).ir)
    if mode == "primal":
        primal(fn)
        return primal_entry(fn).source or ""
    if mode == "vjp":
        nparams = param_count(fn)
        if arg_types is None:
            arg_types = [float] * nparams
        wrt = wrt_indices(argnums, len(bound), nparams)
        return vjp_entry(fn, wrt, tuple(arg_types)).source or ""
    if mode == "jvp":
        return _show_jvp(fn, argnums, len(bound), arg_types)
    raise ValueError(f"unknown mode {mode!r}: expected 'ir', 'primal', 'vjp' or 'jvp'")


@api_boundary
def hvp(f: Any, primals: Sequence[Any], tangents_: Sequence[Any]) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents_`` (forward over reverse):
    one cotangent-shaped result per primal (a single one for a single primal)."""
    primals = tuple(primals)
    nums = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums=nums), primals, tuple(tangents_))[1]


hvp.__wengert_operator__ = "hvp"  # type: ignore[attr-defined]  (taken inside: expanded)


def hessian(f: Any, argnums: int | Sequence[int] = 0) -> Any:
    """The Hessian of ``f``: for a scalar ``f``, ``jacfwd(grad(f))``, one batched forward
    pass over the gradient's generated code; for ``f`` returning an array (int
    ``argnums``), one such pass per output entry. Layout as in JAX (``out.shape + x.shape +
    x.shape``)."""
    if isinstance(argnums, int):
        return second_derivatives(f, argnums, argnums)
    return hessian_blocks(f, argnums)


hessian.__wengert_operator__ = "hessian"  # type: ignore[attr-defined]  (taken inside)


@api_boundary
def vjp(f: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), pullback)``; ``pullback(out_bar)`` gives one cotangent per primal
    (``(f(*primals), pullback, aux)`` with ``has_aux``, as in JAX)."""
    out = run_vjp(f, primals, has_aux)
    return (out[0], api_boundary(out[1]), *out[2:])


vjp.__wengert_operator__ = "vjp"  # type: ignore[attr-defined]  (``operators.vjp``'s kin)


@api_boundary
def jvp(f: Any, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
        ) -> Any:
    """``(f(*primals), J·tangents)``: the value and the Jacobian-vector product (JAX style).

    ``tangents`` has one entry per primal, of the same structure (a zero for arguments not
    perturbed). The output tangent has the structure of the output, zeros materialised.
    With ``has_aux=True`` ``f`` returns ``(value, aux)`` and the result is
    ``(value, value_dot, aux)``.
    """
    primals, ts = check_tangents(primals, tangents)
    return jvp_run(f, primals, tuple(internal(p, t) for p, t in zip(primals, ts)), (),
                    has_aux)


jvp.__wengert_operator__ = "jvp"  # type: ignore[attr-defined]  (taken inside: expanded)


@api_boundary
def linearize(f: Any, *primals: Any) -> tuple[Any, Any]:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``."""
    zeros = tuple(tangents.zeros_like(p) for p in primals)
    out, _ = jvp(f, primals, zeros)

    def f_jvp(*tangents_: Any) -> Any:
        return jvp(f, primals, tangents_)[1]

    return out, f_jvp


def _show_jvp(fn: Any, argnums: int | Sequence[int], nbound: int,
              arg_types: Sequence[type | None] | None) -> str:
    nparams = param_count(fn)
    if arg_types is None:
        arg_types = [float] * nparams
    wrt = wrt_indices(argnums, nbound, nparams)
    return jvp_entry(fn, wrt, tuple(arg_types)).source or ""




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
        for cache in (PRIMALS, VJPS, JVPS, GRADIENT_IRS, RESULT_TYPES, REFUSALS):
            cache.clear()
        return rule

    return register

