"""Jacobians by forward mode (one batched pass) and by reverse mode (one pullback per
output scalar), laid out as JAX lays them out."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy

from wengert import tangents
from wengert.diagnostics import OutputNotScalarError, ReverseModeRefusal
from wengert.driver.binding import run_vjp
from wengert.driver.forward_jacobian import forward_jacobian, layout
from wengert.driver.operators import grad
from wengert.tracebacks import api_boundary


def argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
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
    nums = argnums_tuple(argnums)
    if hasattr(f, "__wengert_jacobian__"):
        return nested_jacobian(f, argnums, has_aux)

    @functools.wraps(f)
    @api_boundary
    def jacfwd_f(*args: Any) -> Any:
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"argnums {a} is out of range for {len(args)} argument(s)")
        idx = [a % len(args) for a in nums]
        _, jac, aux = forward_jacobian(f, tuple(args), idx, single, has_aux)
        return (jac, aux) if has_aux else jac

    jacfwd_f.__wengert_jacobian__ = (f, argnums, has_aux)  # type: ignore[attr-defined]
    jacfwd_f.__wengert_derivative__ = "jacfwd"  # type: ignore[attr-defined]
    return jacfwd_f


# Taken inside differentiated code, each is the IR of a batched JVP (``nested_grad.py``).
jacfwd.__wengert_operator__ = "jacfwd"  # type: ignore[attr-defined]


def jacrev(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Any:
    """The Jacobian of ``f`` by reverse mode: one pullback per output scalar.
    Layout as in JAX (``out.shape + in.shape``; tuples for tuple argnums)."""
    single = isinstance(argnums, int)
    nums = argnums_tuple(argnums)
    if hasattr(f, "__wengert_jacobian__"):
        return nested_jacobian(f, argnums, has_aux)

    @functools.wraps(f)
    @api_boundary
    def jacrev_f(*args: Any) -> Any:
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"argnums {a} is out of range for {len(args)} argument(s)")
        idx = [a % len(args) for a in nums]
        res = run_vjp(f, tuple(args), has_aux)
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
        jac = layout(out, parts, single)
        return (jac, res[2]) if has_aux else jac

    jacrev_f.__wengert_jacobian__ = (f, argnums, has_aux)  # type: ignore[attr-defined]
    jacrev_f.__wengert_derivative__ = "jacrev"  # type: ignore[attr-defined]
    return jacrev_f


jacrev.__wengert_operator__ = "jacrev"  # type: ignore[attr-defined]


def nested_jacobian(jac: Any, argnums: Any, has_aux: bool) -> Any:
    """The Jacobian of ``jac``, itself a Jacobian made by :func:`jacfwd` or :func:`jacrev`
    (``jacfwd(jacrev(f))``, JAX's spelling of a Hessian, and the other three pairings).
    Which mode computes either level does not change the numbers, so all four are
    :func:`second_derivatives` of the function underneath."""
    f, inner, inner_aux = jac.__wengert_jacobian__
    if has_aux or inner_aux or not isinstance(argnums, int) or not isinstance(inner, int):
        raise TypeError("a Jacobian of a Jacobian (jacfwd(jacrev(f)) and the like) takes one "
                        "int argnums at each level and no has_aux; for several arguments "
                        "use wengert.hessian(f, argnums=(...)) of a scalar f")
    return second_derivatives(f, inner, argnums)


def second_derivatives(f: Any, a: int, b: int) -> Any:
    """``d/dx_b (d f / dx_a)`` laid out as ``out.shape + x_a.shape + x_b.shape``, for ``f``
    returning a float or a float array.

    A scalar ``f`` is one batched forward pass over its gradient's code (``jacfwd(grad(f,
    a), b)``). An array ``f`` has one such pass per output entry ``r``, over the gradient
    of ``sum(w * f(...))`` with ``w`` the unit array at ``r``: one function transformed
    once for every entry."""
    # One plain parameter per argument (the common arities): a ``*args`` function goes
    # through a fixed-arity wrapper whose call is dispatched, which is first order only.
    def weighted1(w: Any, x: Any) -> Any:
        return numpy.sum(w * f(x))

    def weighted2(w: Any, x: Any, y: Any) -> Any:
        return numpy.sum(w * f(x, y))

    def weighted3(w: Any, x: Any, y: Any, z: Any) -> Any:
        return numpy.sum(w * f(x, y, z))

    def weighted4(w: Any, x: Any, y: Any, z: Any, u: Any) -> Any:
        return numpy.sum(w * f(x, y, z, u))

    def weighted5(w: Any, x: Any, y: Any, z: Any, u: Any, v: Any) -> Any:
        return numpy.sum(w * f(x, y, z, u, v))

    def weighted6(w: Any, x: Any, y: Any, z: Any, u: Any, v: Any, t: Any) -> Any:
        return numpy.sum(w * f(x, y, z, u, v, t))

    def weighted(w: Any, *args: Any) -> Any:
        return numpy.sum(w * f(*args))

    passes: dict[tuple[int, int], Any] = {}

    @functools.wraps(f)
    @api_boundary
    def second(*args: Any) -> Any:
        for i in (a, b):
            if not -len(args) <= i < len(args):
                raise ValueError(f"argnums {i} is out of range for {len(args)} argument(s)")
        ia, ib = a % len(args), b % len(args)
        if (ia, ib) in passes:  # (reverse mode refused ``f``: forward over forward)
            return passes[(ia, ib)](*args)
        scalar = passes.get((-1 - ia, ib))
        if scalar is None:
            scalar = passes[(-1 - ia, ib)] = jacfwd(grad(f, ia), ib)
        try:
            return scalar(*args)
        except OutputNotScalarError:
            pass  # an array: one pass per entry, below
        except ReverseModeRefusal:
            # What reverse mode refuses (a write it cannot follow), forward mode answers:
            # ``jacfwd(jacfwd(f))``, laid out as the pass per entry below lays it out.
            passes[(ia, ib)] = _forward_over_forward(f, ia, ib)
            return passes[(ia, ib)](*args)
        y = f(*args)
        if not isinstance(y, numpy.ndarray) or y.dtype.kind != "f":
            raise TypeError("second derivatives need a function returning a float or a "
                            f"float array; it returned {type(y).__name__}")
        key = (ia, ib, len(args))
        if key not in passes:
            fn = {1: weighted1, 2: weighted2, 3: weighted3, 4: weighted4, 5: weighted5,
                  6: weighted6}.get(len(args), weighted)
            passes[key] = jacfwd(grad(fn, ia + 1), ib + 1)
        per_entry = passes[key]
        blocks = []
        for r in range(y.size):
            w = numpy.zeros(y.shape, y.dtype)
            w.flat[r] = 1.0
            blocks.append(numpy.asarray(per_entry(w, *args)))
        shape = y.shape + numpy.shape(args[ia]) + numpy.shape(args[ib])
        if not blocks:
            return numpy.zeros(shape, y.dtype)
        return numpy.stack(blocks).reshape(shape)

    second.__wengert_derivative__ = "hessian"  # type: ignore[attr-defined]
    return second


def _forward_over_forward(f: Any, a: int, b: int) -> Any:
    """``d/dx_b (d f / dx_a)`` by forward mode at both levels: the forward Jacobian of a
    function calling ``f``'s (``jacfwd(jacfwd(f))`` by its own name would be
    :func:`nested_jacobian`, which is this function's caller)."""
    def first(*args: Any) -> Any:
        return jacfwd(f, a)(*args)

    outer = jacfwd(first, b)

    def second(*args: Any) -> Any:
        h = outer(*args)
        # (of two floats, a float, as ``jacfwd(grad(f))`` gives)
        if type(args[a]) is float and type(args[b]) is float and \
                isinstance(h, numpy.ndarray) and h.ndim == 0:
            return float(h)
        return h

    return second


def hessian_blocks(f: Any, argnums: Sequence[int]) -> Any:
    """The Hessian of ``f`` with respect to several arguments (``jacfwd(grad(f, argnums),
    argnums)``, nested tuples of blocks); where reverse mode refuses ``f``, each block by
    forward over forward mode (:func:`second_derivatives`)."""
    over_grad = jacfwd(grad(f, argnums), argnums)
    forward: list[Any] = []

    @functools.wraps(f)
    @api_boundary
    def blocks(*args: Any) -> Any:
        if forward:
            return forward[0](*args)
        try:
            return over_grad(*args)
        except ReverseModeRefusal:
            pairs = [[second_derivatives(f, i, j) for j in argnums] for i in argnums]
            forward.append(lambda *xs: tuple(tuple(h(*xs) for h in row) for row in pairs))
            return forward[0](*args)

    blocks.__wengert_derivative__ = "hessian"  # type: ignore[attr-defined]
    return blocks
