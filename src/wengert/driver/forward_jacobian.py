"""The Jacobian of a function by forward mode, as JAX lays it out: one batched JVP pass
carrying one direction per input scalar. ``jacfwd`` is made of it, and ``grad`` answers with
it where reverse mode refuses a function that forward mode differentiates."""

from __future__ import annotations

from typing import Any

import numpy

from wengert import tangents
from wengert.driver.binding import internal, jvp_run


def forward_size(args: tuple, idx: list[int]) -> int:
    """How many directions a forward Jacobian with respect to ``args[i]`` for ``i`` in
    ``idx`` carries: their scalars, counted."""
    return sum(int(numpy.size(leaf)) for i in idx for leaf in tangents.flatten(args[i])[0])


def forward_jacobian(f: Any, args: tuple, idx: list[int], single: bool,
                     has_aux: bool = False) -> tuple[Any, Any, Any]:
    """``(value, Jacobian, aux)`` of ``f(*args)`` with respect to the arguments at
    positions ``idx`` (the Jacobian a tuple of blocks unless ``single``), in one batched
    forward pass; ``aux`` is ``None`` unless ``has_aux``."""
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
    return out, jac, (res[2] if has_aux else None)


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
