"""Static plans for NumPy's shape functions: functions of shapes, axes and index arrays
(which axes a transpose moves, what a reshape keeps, the gather indices of a flip or a
roll), called from the definitions in :mod:`wengert.rules.np_shapes` and never
differentiated. They raise NumPy's errors for arguments NumPy refuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.registry import mark_check, mark_gathers, nondifferentiable
from wengert.rules.shapes import ravel_copies as _ravel_copies


def _dtype(x: Any) -> Any:
    return np.asarray(x).dtype


# ================================================================== static helpers
# Functions of shapes, axes and index arrays, called from the definitions and not
# differentiated. They raise NumPy's errors for arguments NumPy refuses.


def _axis(axis: Any, ndim: int) -> int:
    """One axis (possibly negative) of an array of ``ndim`` dimensions, as a negative axis."""
    a = int(axis)
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim - ndim


def _axis_list(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None: all, an int or a sequence) as non-negative axes, in the given order."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(_axis(a, ndim) + ndim for a in axis)


def _perm(axes: Any, ndim: int) -> tuple[int, ...]:
    """``np.transpose``'s ``axes`` (``None``: reversed) as negative axes."""
    if axes is None:
        return tuple(range(-1, -ndim - 1, -1))
    if len(axes) != ndim:
        raise ValueError("axes don't match array")
    return tuple(_axis(a, ndim) for a in axes)


def _method_perm(axes: tuple, ndim: int) -> tuple[int, ...]:
    """``x.transpose(*axes)``: no axes, one sequence of them, or the axes themselves."""
    if len(axes) == 0 or len(axes) == 1 and axes[0] is None:
        return _perm(None, ndim)
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        return _perm(tuple(axes[0]), ndim)
    return _perm(axes, ndim)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    k = len(perm)
    inv = [0] * k
    for i, p in enumerate(perm):
        inv[p + k] = i - k
    return tuple(inv)


def _as_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(n) for n in shape)


def _new_shape(old: tuple[int, ...], shape: Any) -> tuple[int, ...]:
    """The shape that ``reshape(shape)`` gives an array of shape ``old`` (``shape`` an int,
    a sequence, or the varargs of the method, one ``-1`` filled in)."""
    if isinstance(shape, tuple) and len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]  # x.reshape((2, 3)) rather than x.reshape(2, 3)
    new = list(_as_shape(shape))
    size = int(np.prod(old, dtype=np.int64))
    if new.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in new:
        rest = int(np.prod([n for n in new if n != -1], dtype=np.int64))
        if rest == 0 or size % rest:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(new)}")
        new[new.index(-1)] = size // rest
    if int(np.prod(new, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(new)}")
    return tuple(new)


def _fortran(a: Any, order: Any) -> bool:
    """Whether ``order`` reads ``a`` in Fortran order (``"A"`` and ``"K"`` follow its
    memory layout where it is contiguous)."""
    if order is None or order == "C":
        return False
    if order == "F":
        return True
    if order in ("A", "K"):
        a = np.asarray(a)
        if a.flags.c_contiguous:
            return False
        if a.flags.f_contiguous:
            return True
        if order == "A":
            return False
        raise RuleRefusal("wengert: order='K' of an array that is not contiguous is not "
                        "supported; use order='C' or 'F'")
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _squeezed(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(n for n in shape if n != 1)
    drop = _axis_list(axis, len(shape))
    if any(shape[a] != 1 for a in drop):
        raise ValueError("cannot select an axis to squeeze out which has size not equal "
                         "to one")
    return tuple(n for i, n in enumerate(shape) if i not in drop)


def _expanded(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = len(shape) + len(axes)
    at = sorted(_axis(a, ndim) + ndim for a in axes)
    if len(set(at)) != len(at):
        raise ValueError("repeated axis")
    rest = iter(shape)
    return tuple(1 if i in at else next(rest) for i in range(ndim))


def _atleast_shape(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    """The shape ``np.atleast_{n}d`` gives an array of ``shape``."""
    if len(shape) >= n:
        return tuple(shape)
    if n == 1:
        return (1,)
    if n == 2:
        return (1,) * (2 - len(shape)) + tuple(shape)
    if len(shape) == 0:
        return (1, 1, 1)
    if len(shape) == 1:
        return (1, shape[0], 1)
    return tuple(shape) + (1,)


def _swap_perm(ndim: int, axis1: Any, axis2: Any) -> tuple[int, ...]:
    order = list(range(ndim))
    i, j = _axis(axis1, ndim) + ndim, _axis(axis2, ndim) + ndim
    order[i], order[j] = order[j], order[i]
    return tuple(p - ndim for p in order)


def _move_perm(ndim: int, source: Any, destination: Any) -> tuple[int, ...]:
    src = _axis_list(source, ndim)
    dst = _axis_list(destination, ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return tuple(p - ndim for p in order)


def _broadcast_target(shape: tuple[int, ...], target: Any) -> tuple[int, ...]:
    """``target`` as a shape that ``shape`` broadcasts to (NumPy's error otherwise)."""
    full = _as_shape(target)
    if np.broadcast_shapes(shape, full) != full:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {shape} and requested shape {full}")
    return full


def _common_shape(arrays: Any) -> tuple[int, ...]:
    return np.broadcast_shapes(*[np.shape(a) for a in arrays])


def _flat_plan(shape: tuple[int, ...], axis: Any) -> tuple[tuple[int, ...], int]:
    """The shape an array of ``shape`` is read in along ``axis`` (flat for ``None``) and
    that axis, negative."""
    if axis is None:
        return (int(np.prod(shape, dtype=np.int64)),), -1
    return tuple(shape), _axis(axis, len(shape))


def _take_plan(shape: tuple[int, ...], indices: Any, axis: Any, mode: str) -> tuple:
    """``(read shape, trailing index)`` of ``np.take``."""
    src, ax = _flat_plan(shape, axis)
    n = src[ax]
    idx = np.asarray(indices)
    if not np.issubdtype(idx.dtype, np.integer):
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    elif np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"index out of range for an axis of size {n}")
    # An index array, even of one int: take copies, where a[..., 1, :] would be a view.
    return src, (idx,) + (slice(None),) * (-ax - 1)


def _grid(shape: tuple[int, ...], indices: Any, axis: int) -> tuple:
    """The trailing index that reads ``indices`` along the negative ``axis`` and the
    other axes in place (``np.take_along_axis``): an open grid, all entries adjacent, so
    that batch axes stay in front."""
    idx = np.asarray(indices)
    ndim = len(shape)
    if idx.ndim != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if not np.issubdtype(idx.dtype, np.integer):
        raise IndexError("`indices` must be an integer array")
    return tuple(idx if d == axis + ndim else
                 np.arange(shape[d]).reshape([-1 if e == d else 1 for e in range(ndim)])
                 for d in range(ndim))


def _along_plan(shape: tuple[int, ...], indices: Any, axis: Any) -> tuple:
    """``(read shape, trailing index)`` of ``np.take_along_axis``."""
    src, ax = _flat_plan(shape, axis)
    return src, _grid(src, indices, ax)


def _sort_plan(a: Any, axis: Any, kind: Any, stable: Any) -> tuple:
    """``(read shape, trailing index)`` reading ``a``'s entries in sorted order (the
    permutation ``argsort`` finds; tied entries each get the cotangent of their place)."""
    src, ax = _flat_plan(np.shape(a), axis)
    order = np.argsort(np.reshape(a, src), axis=ax, kind=kind, stable=stable)
    return src, _grid(src, order, ax)


def _open_grid(indices: list[np.ndarray]) -> tuple:
    """One index array per trailing axis, shaped to index their outer product."""
    k = len(indices)
    return tuple(np.asarray(ix).reshape([-1 if e == d else 1 for e in range(k)])
                 for d, ix in enumerate(indices))


def _flip_index(ndim: int, axis: Any) -> tuple:
    axes = _axis_list(axis, ndim)
    if not axes:
        return ()
    return tuple(slice(None, None, -1) if d in axes else slice(None)
                 for d in range(min(axes), ndim))


def _roll_plan(shape: tuple[int, ...], shift: Any, axis: Any) -> tuple:
    """``(read shape, trailing index)`` of ``np.roll``: each rolled axis reads
    ``(i - shift) % n`` (shifts of one axis add up)."""
    src = (int(np.prod(shape, dtype=np.int64)),) if axis is None else tuple(shape)
    ndim = len(src)
    if axis is None:
        axis = 0
    shifts = np.broadcast_to(np.asarray(shift), np.broadcast_shapes(np.shape(shift),
                                                                    np.shape(axis)))
    axes = np.broadcast_to(np.asarray(axis), shifts.shape)
    total = [0] * ndim
    for s, a in zip(shifts.ravel().tolist(), axes.ravel().tolist(), strict=True):
        total[_axis(a, ndim) + ndim] += int(s)
    rolled = [d for d in range(ndim) if src[d] and total[d] % src[d]]
    # Nothing rolled still copies, as np.roll does: the last axis read in place.
    first = rolled[0] if rolled else ndim - 1
    return src, _open_grid([(np.arange(src[d]) - total[d]) % src[d] if src[d] else
                            np.arange(0) for d in range(first, ndim)])


def _repeat_plan(shape: tuple[int, ...], repeats: Any, axis: Any) -> tuple:
    """``(read shape, trailing index)`` of ``np.repeat``."""
    src, ax = _flat_plan(shape, axis)
    r = np.asarray(repeats)
    if not np.issubdtype(r.dtype, np.integer):
        raise TypeError(f"Cannot cast array data from {r.dtype!r} to dtype('int64') "
                        "according to the rule 'safe'")
    return src, (np.repeat(np.arange(src[ax]), r),) + (slice(None),) * (-ax - 1)


def _tile_plan(shape: tuple[int, ...], reps: Any) -> tuple:
    """For ``np.tile``: the array's shape with a unit axis before each axis (after the
    shape is padded to the result's rank), those axes broadcast to the repetitions, and
    the result's shape."""
    reps = _as_shape(reps)
    ndim = max(len(shape), len(reps))
    s = (1,) * (ndim - len(shape)) + tuple(shape)
    r = (1,) * (ndim - len(reps)) + tuple(reps)
    split = tuple(x for n in s for x in (1, n))
    full = tuple(x for n, k in zip(s, r, strict=True) for x in (k, n))
    return split, full, tuple(n * k for n, k in zip(s, r, strict=True))


def _rot90_plan(ndim: int, k: Any, axes: Any) -> tuple:
    """``np.rot90`` as a flip, a permutation and a flip (each possibly nothing)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if ndim < 2:
        raise ValueError("Axes must be different.")
    a0, a1 = _axis(axes[0], ndim) + ndim, _axis(axes[1], ndim) + ndim
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = int(k) % 4
    same = tuple(range(-ndim, 0))
    swap = _swap_perm(ndim, a0, a1)
    if k == 0:
        return (), same, ()
    if k == 1:
        return _flip_index(ndim, a1), swap, ()
    if k == 2:
        return _flip_index(ndim, (a0, a1)), same, ()
    return (), swap, _flip_index(ndim, a1)


_GATHER_MODES = ("edge", "reflect", "symmetric", "wrap")


#: A keyword argument not given (``np.pad``'s are checked against the mode).
_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>"})()


def _pad_plan(shape: tuple[int, ...], pad_width: Any, mode: Any, constant_values: Any,
              reflect_type: Any) -> tuple:
    """``(index, padded shape, border)`` of ``np.pad``: in mode ``"constant"`` the index
    where the array lands in the padded shape and the mask of the border (where the
    constant goes, ``constant_values`` replaced by 0 where it is not given); in the modes
    that copy entries, the gather index (NumPy's pad of ``arange`` along each axis is
    that axis' index map: the modes pad axis by axis) and ``None``."""
    w = np.asarray(pad_width)
    if not np.issubdtype(w.dtype, np.integer):
        raise TypeError("`pad_width` must be of integral type.")
    if np.any(w < 0):
        raise ValueError("index can't contain negative values")
    widths = [(int(b), int(a)) for b, a in np.broadcast_to(w, (len(shape), 2)).tolist()]
    out = tuple(n + b + a for n, (b, a) in zip(shape, widths, strict=True))
    if mode == "constant":
        if reflect_type is not _UNSET:
            raise ValueError("unsupported keyword arguments for mode 'constant': "
                             "{'reflect_type'}")
        if np.ndim(0 if constant_values is _UNSET else constant_values) != 0:
            raise RuleRefusal("wengert: np.pad with constant_values other than one scalar is "
                            "not supported; pad with one value, then set the others")
        inner = tuple(slice(b, b + n) for n, (b, _) in zip(shape, widths, strict=True))
        border = np.ones(out, dtype=bool)
        border[inner] = False
        return inner, out, border
    if mode not in _GATHER_MODES:
        raise RuleRefusal(f"wengert: np.pad with mode={mode!r} has no derivative; the modes "
                        f"'constant', {', '.join(repr(m) for m in _GATHER_MODES)} have one")
    if constant_values is not _UNSET or reflect_type is not _UNSET and \
            mode not in ("reflect", "symmetric"):
        given = "constant_values" if constant_values is not _UNSET else "reflect_type"
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {{'{given}'}}")
    if reflect_type not in (_UNSET, "even"):
        raise RuleRefusal("wengert: np.pad with reflect_type='odd' has no derivative; use "
                        "the default reflect_type='even'")
    if any(n == 0 for n in shape) and any(wd != (0, 0) for wd in widths):
        raise ValueError("can't extend empty axis using modes other than 'constant' or "
                         "'empty'")
    return _open_grid([np.pad(np.arange(n), wd, mode=mode)
                       for n, wd in zip(shape, widths, strict=True)]), None, None


def _diag_index(n: int, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the ``k``-th diagonal of an ``n`` by ``m`` matrix."""
    length = max(0, min(n + min(k, 0), m - max(k, 0)))
    i = np.arange(length)
    return i - min(k, 0), i + max(k, 0)


def _diag_plan(shape: tuple[int, ...], k: Any) -> tuple:
    """``(index, shape)`` of ``np.diag``: a vector scattered onto the ``k``-th diagonal
    of a square matrix of ``shape``, or (``shape`` ``None``) the diagonal gathered."""
    k = int(k)
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return _diag_index(n, n, k), (n, n)
    if len(shape) == 2:
        return _diag_index(shape[0], shape[1], k), None
    raise ValueError("Input must be 1- or 2-d.")


def _diagonal_plan(shape: tuple[int, ...], offset: Any, axis1: Any, axis2: Any) -> tuple:
    """``(permutation, index)`` of ``np.diagonal``: ``axis1`` and ``axis2`` moved last
    (in that order), then their diagonal read (it replaces them, last)."""
    ndim = len(shape)
    if ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = _axis(axis1, ndim) + ndim, _axis(axis2, ndim) + ndim
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return _move_perm(ndim, (a1, a2), (-2, -1)), _diag_index(shape[a1], shape[a2], int(offset))


def _triangle_plan(shape: tuple[int, ...], k: Any, upper: bool) -> tuple:
    """``(square shape, mask)`` of ``np.triu`` (``upper``) and ``np.tril``: a vector is
    broadcast to a square matrix first."""
    if len(shape) == 0:
        raise ValueError("input array must be at least 1-d")
    full = (shape[0], shape[0]) if len(shape) == 1 else tuple(shape)
    n, m = full[-2:]
    k = int(k)
    below = np.tri(n, m, k - 1 if upper else k, dtype=bool)
    return full, ~below if upper else below


def _split_like(a: Any, indices_or_sections: Any, axis: Any, even: bool) -> list:
    """Stand-ins (read-only views of one zero) for the pieces ``np.split`` (``even``) or
    ``np.array_split`` cuts ``a`` into along ``axis``: :func:`_split` reads their shapes."""
    shape = np.shape(a)
    ax = _axis(axis, len(shape))
    n = shape[ax]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [0]
        for i in np.asarray(indices_or_sections).tolist():
            i = int(i)
            bounds.append(min(max(i + n if i < 0 else i, 0), n))
        bounds.append(n)
        if any(b < a for a, b in zip(bounds[:-1], bounds[1:], strict=True)):
            raise RuleRefusal("wengert: np.split at decreasing indices (pieces that overlap) "
                            "is not supported; slice the pieces instead")
        sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    zero = np.zeros((), dtype=_dtype(a))
    return [np.broadcast_to(zero, shape[:len(shape) + ax] + (s,) + shape[len(shape) + ax + 1:])
            for s in sizes]


def _split_axis(ndim: int, kind: str) -> int:
    """The axis ``np.hsplit``, ``np.vsplit`` or ``np.dsplit`` cuts an array along."""
    least = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[kind]
    if ndim < least:
        raise ValueError(f"{kind} only works on arrays of {least} or more dimensions")
    if kind == "hsplit":
        return 1 if ndim > 1 else 0
    return 0 if kind == "vsplit" else 2


def _stack_perm(ndim: int, axis: Any) -> tuple[int, ...]:
    """The permutation moving the stacked (first) axis of ``ndim`` axes to ``axis``."""
    return _move_perm(ndim, 0, _axis(axis, ndim))


def _mesh_plan(arrays: Any, indexing: str) -> list[tuple[tuple[int, ...], tuple[int, ...],
                                                          tuple[int, ...]]]:
    """For each array of ``np.meshgrid``: its shape, the shape with its entries along its
    own axis, and the grid's shape."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    shapes = [np.shape(x) for x in arrays]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    k = len(sizes)
    pos = list(range(k))
    if indexing == "xy" and k > 1:
        pos[0], pos[1] = 1, 0
    full = [0] * k
    for i, n in enumerate(sizes):
        full[pos[i]] = n
    out = []
    for i, n in enumerate(sizes):
        own = [1] * k
        own[pos[i]] = n
        out.append((shapes[i], tuple(own), tuple(full)))
    return out


def _same_dtype(a: Any, dtype: Any) -> bool:
    return _dtype(a) == np.dtype(dtype)


def _ndmin_shape(shape: tuple[int, ...], ndmin: int) -> tuple[int, ...]:
    return (1,) * max(0, ndmin - len(shape)) + tuple(shape)


def _fill_dtype(fill: Any, dtype: Any) -> Any:
    return _dtype(fill) if dtype is None else dtype


def _check_castable(dtype: Any) -> None:
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        raise RuleRefusal("wengert: a cast to a complex dtype is not supported in code being "
                        "differentiated")


mark_check(_check_castable)


def _linspace_ramp(ans: Any, num: int, endpoint: bool, ndim: int) -> np.ndarray:
    """The weight of ``stop`` in each sample of ``np.linspace`` (``1 - ramp``: that of
    ``start``), shaped to broadcast over array ends, in the result's dtype (zero for an
    integer dtype: the samples are then piecewise constant)."""
    dtype = _dtype(ans)
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros((num,) + (1,) * ndim)
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    return t.astype(dtype).reshape((num,) + (1,) * ndim)


def _linspace_step(num: int, endpoint: bool) -> Any:
    """The divisor of ``np.linspace``'s step (NaN where NumPy's step is NaN)."""
    div = num - 1 if endpoint else num
    return np.float64(div) if div > 0 else float("nan")


def _arange_ramp(ans: Any, power: int) -> np.ndarray:
    """The weight of ``start`` (``power`` 0) or ``step`` (``power`` 1) in each entry of
    ``np.arange``: 1 or its position; zero for an integer dtype."""
    dtype = _dtype(ans)
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(ans))
    return (np.arange(np.size(ans)) ** power).astype(dtype)


def _structure(a: Any) -> Any:
    """``a.tolist()``: the nested lists of ``a``'s entries."""
    return np.asarray(a).tolist()


def _entry(k: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of flat position ``k`` of an array of ``shape``."""
    return tuple(int(i) for i in np.unravel_index(k, shape))


def _flat_position(shape: tuple[int, ...], args: tuple) -> int:
    """The flat position that ``a.item(*args)`` reads."""
    size = int(np.prod(shape, dtype=np.int64))
    if len(args) == 0:
        if size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return 0
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if len(args) == 1:
        k = int(args[0])
        if not -size <= k < size:
            raise IndexError("index out of bounds")
        return k % size
    return int(np.ravel_multi_index(tuple(int(i) for i in args), shape))


nondifferentiable(
    _axis, _axis_list, _perm, _method_perm, _inverse, _as_shape, _new_shape, _fortran,
    _ravel_copies,
    _squeezed, _expanded, _atleast_shape, _swap_perm, _move_perm, _broadcast_target,
    _common_shape, _flat_plan, _take_plan, _grid, _along_plan, _sort_plan, _open_grid,
    _flip_index, _roll_plan, _repeat_plan, _tile_plan, _rot90_plan, _pad_plan,
    _diag_index, _diag_plan, _diagonal_plan, _triangle_plan, _split_like, _split_axis, _stack_perm,
    _mesh_plan, _same_dtype, _ndmin_shape, _fill_dtype, _check_castable, _linspace_ramp,
    _linspace_step, _arange_ramp, _structure, _entry, _flat_position, np.argsort,
)
mark_gathers(_sort_plan)
# Their values do not depend on their arguments' values.
nondifferentiable(np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.zeros_like,
                  np.ones_like, np.empty_like, np.indices)
