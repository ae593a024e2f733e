"""Jacobians by forward mode (one batched pass) and by reverse mode (one pullback per
output scalar), laid out as JAX lays them out."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy

from wengert import tangents
from wengert.diagnostics import OutputNotScalarError
from wengert.driver.binding import internal, jvp_run, run_vjp
from wengert.driver.operators import grad
from wengert.tracebacks import api_boundary


def layout(out: Any, parts: list[tuple[list[Any], Any, list[int]]], single: bool
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
                per_arg.append(per_x if is_plain else replace_leaves(x_def, per_x))
                continue
            per_x = []
            for xl, o in zip(x_leaves, cols):
                size = int(numpy.size(xl))
                part = numpy.asarray(rows[j])[o:o + size]
                part = numpy.moveaxis(part.reshape((size, *numpy.shape(ol))), 0, -1)
                part = part.reshape((*numpy.shape(ol), *numpy.shape(xl)))
                # The block has the precision of what it differentiates (float32 in, float32
                # out), as in JAX, whatever the derivative code computed in.
                kinds = [numpy.result_type(v) for v in (ol, xl) if isinstance(v, numpy.ndarray)]
                if kinds and all(k.kind == "f" for k in kinds) and part.dtype.kind == "f":
                    part = part.astype(numpy.result_type(*kinds), copy=False)
                per_x.append(float(part) if part.ndim == 0 and not isinstance(
                    xl, numpy.ndarray) and not isinstance(ol, numpy.ndarray) else part)
            per_arg.append(replace_leaves(x_def, per_x) if x_leaves else None)
        blocks.append(per_arg[0] if single else tuple(per_arg))
    return replace_leaves(out_def, blocks)


def replace_leaves(treedef: Any, leaves: list[Any]) -> Any:
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
                dots[i] = internal(args[i], tangents.materialize(
                    args[i], tangents.unflatten(td, tl), (k,)))
                continue
            tl = []
            for leaf, o in zip(leaves, offsets[i]):
                size = int(numpy.size(leaf))
                # A float32 array gets float32 tangents (and a float32 Jacobian), as in JAX.
                dtype = numpy.result_type(leaf)
                t = numpy.zeros((k, size), dtype=dtype if dtype.kind == "f" else float)
                t[o:o + size] = numpy.eye(size)
                tl.append(t.reshape((k, *numpy.shape(leaf))))
            dots[i] = internal(args[i], tangents.materialize(
                args[i], tangents.unflatten(td, tl), (k,)))
        res = jvp_run(f, tuple(args), tuple(dots), (k,), has_aux)
        out, out_dot = res[0], res[1]
        rows, _ = tangents.flatten(out_dot)
        jac = layout(out, [(rows, args[i], offsets[i]) for i in idx], single)
        return (jac, res[2]) if has_aux else jac

    jacfwd_f.__wengert_jacobian__ = (f, argnums, has_aux)  # type: ignore[attr-defined]
    jacfwd_f.__wengert_derivative__ = "jacfwd"  # type: ignore[attr-defined]
    return jacfwd_f


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
        scalar = passes.get((-1 - ia, ib))
        if scalar is None:
            scalar = passes[(-1 - ia, ib)] = jacfwd(grad(f, ia), ib)
        try:
            return scalar(*args)
        except OutputNotScalarError:
            pass  # an array: one pass per entry, below
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
