"""Static plans for NumPy's reductions and contractions: functions of axes, shapes, masks
and einsum subscripts, called from the definitions in :mod:`wengert.rules.np_reductions`
and never differentiated. They raise NumPy's errors for arguments NumPy refuses.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from wengert.diagnostics import RuleRefusal
from wengert.rules.registry import mark_check, nondifferentiable

_NoValue = np._NoValue


# ====================================================================== static helpers
# Axes, shapes, masks and einsum subscripts: functions of shapes (and of comparisons) only,
# called from the definitions and rules and never differentiated.


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple, possibly negative) as a sorted tuple of negative
    axes of an array with ``ndim`` dimensions; NumPy's errors for bad or repeated axes."""
    if axis is None:
        return tuple(range(-ndim, 0))
    got = np.lib.array_utils.normalize_axis_tuple(axis, ndim)
    return tuple(sorted(a - ndim for a in got))


def _axis(axis: Any, ndim: int) -> int:
    """One axis (possibly negative) as a negative axis; NumPy's error when out of range."""
    return np.lib.array_utils.normalize_axis_index(int(axis), ndim) - ndim


def _end_shape(a: Any, end: Any, axis: int) -> tuple[int, ...]:
    """The shape ``np.diff``'s ``prepend``/``append`` value ``end`` is broadcast to: ``a``'s
    with one entry along ``axis`` for a scalar, its own otherwise."""
    if np.ndim(end) == 0:
        shape = list(np.shape(a))
        shape[axis] = 1
        return tuple(shape)
    return np.shape(end)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many entries a reduction over ``axes`` of an array of ``shape`` combines."""
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _flag(value: Any) -> bool:
    """A ``keepdims`` argument, NumPy's "not given" marker read as False."""
    return False if value is _NoValue else bool(value)


def _unsupported(name: str, **given: Any) -> None:
    """Refuse arguments that the definitions do not differentiate (``out=``, ``dtype=``,
    ``where=``, ``initial=``): the error names them at the user's call."""
    # (``out_``: a call with an ``out=`` keyword reads to wengert as a write into an array.)
    bad = [k.rstrip("_") for k, v in given.items() if v is not None and v is not _NoValue]
    if bad:
        how = {"dtype": "cast the array first (x.astype(...))",
               "out": "assign the result instead",
               "where": "select the entries first (np.where(mask, x, 0) for a sum)",
               "initial": "combine the initial value with the result",
               "prepend": "concatenate first", "append": "concatenate first"}
        raise RuleRefusal(f"wengert: the derivative of np.{name} does not support "
                        f"{', '.join(k + '=' for k in bad)}: "
                        f"{'; '.join(how.get(k, 'leave it out') for k in bad)}")


mark_check(_unsupported)


def _ddof(ddof: Any, correction: Any) -> Any:
    """``var``/``std``'s degrees of freedom, from ``ddof`` or its alias ``correction``."""
    if correction is _NoValue:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _dof(n: int, ddof: Any) -> Any:
    """The divisor of a variance: ``n - ddof``, not below 0 (NumPy's)."""
    return max(n - ddof, 0)


def _float_dtype(a: Any) -> Any:
    dtype = np.result_type(a)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _tie_weights(a: Any, m: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """Each entry's share of the max (min) ``m`` of ``a`` over ``axes``: 1/k for the k
    entries equal to it, 0 elsewhere (NaN entries share a NaN extreme). ``m`` is the
    extreme the primal computed (``keepdims`` as it was asked): it is not found again, and
    the NaN test and the division by the count run only where there are NaNs and ties."""
    a = np.asarray(a)
    m = np.asarray(m)
    if not keepdims:
        for ax in sorted(axes, reverse=True):
            m = np.expand_dims(m, ax)
    hit = a == m
    dtype = _float_dtype(a)
    if not np.isnan(m).any():
        if np.count_nonzero(hit) == m.size:  # no ties: one entry equals each extreme
            return hit.astype(dtype)
    else:
        hit |= np.isnan(a) & np.isnan(m)
    return (hit / np.sum(hit, axis=axes, keepdims=True)).astype(dtype)


def _off(x: Any) -> Any:
    """``1 - I`` of the size of ``x``'s last axis, in ``x``'s float type."""
    n = np.shape(x)[-1]
    return 1 - np.eye(n, dtype=_float_dtype(x))


def _eye(x: Any) -> Any:
    """``I`` of the size of ``x``'s last axis, in ``x``'s float type."""
    return np.eye(np.shape(x)[-1], dtype=_float_dtype(x))


def _upper(x: Any) -> Any:
    """The mask ``[m <= i]`` (row m, column i) of the size of ``x``'s last axis."""
    n = np.shape(x)[-1]
    return np.triu(np.ones((n, n), dtype=_float_dtype(x)))


def _nan_at_zero(n: Any) -> Any:
    """NaN where ``n`` is 0, else 0 (in ``n``'s float type)."""
    n = np.asarray(n)
    return np.where(n == 0, np.nan, 0.0).astype(_float_dtype(n))[()]


def _kept(spec: tuple[str, ...], k: int) -> str:
    """The letters of operand ``k`` of an einsum ``spec`` (input subscripts, then the
    output's) that occur in another of its subscripts: those its cotangent is computed
    over before being spread over the others (summed letters, diagonals)."""
    others = "".join(s for i, s in enumerate(spec) if i != k)
    return "".join(dict.fromkeys(c for c in spec[k] if c in others))


def _nonzero_count(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """``norm(x, ord=0)``: how many entries are not zero, a piecewise constant."""
    x = np.asarray(x)
    return np.sum((x != 0).astype(_float_dtype(x)), axis=axes, keepdims=keepdims)


def _check_weights(scl: Any) -> None:
    """NumPy's error when a sum of ``np.average``'s weights is zero."""
    if np.any(np.asarray(scl) == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")


mark_check(_check_weights)


def _weight_layout(wshape: tuple[int, ...], shape: tuple[int, ...], axis: Any
                   ) -> tuple[str, str, tuple[int, ...], tuple[int, ...]]:
    """How ``np.average``'s weights of shape ``wshape`` line up with ``a`` of ``shape``
    along ``axis``: the einsum that orders their axes like ``a``'s, and the shapes
    before and after the size-1 axes are put in (NumPy's checks and errors)."""
    if tuple(wshape) == tuple(shape):
        letters = string.ascii_letters[:len(shape)]
        return letters, letters, tuple(shape), tuple(shape)
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    axes = np.lib.array_utils.normalize_axis_tuple(axis, len(shape))
    if tuple(wshape) != tuple(shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
    letters = string.ascii_letters[:len(axes)]
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    ordered = "".join(letters[i] for i in order)
    sorted_shape = tuple(wshape[i] for i in order)
    full = tuple(s if ax in axes else 1 for ax, s in enumerate(shape))
    return letters, ordered, sorted_shape, full


def _norm_plan(ndim: int, ord: Any, axis: Any
               ) -> tuple[bool, Any, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``np.linalg.norm``'s case, as ``(matrix, p, first, second, both)``: a vector norm
    of order ``p`` over the negative axes ``first`` (the Frobenius norm is the vector
    2-norm over both axes), or a matrix norm summing ``|x|`` over ``first`` then taking
    the max (``p > 0``) or min over ``second``; ``both`` the sorted pair. NumPy's errors."""
    if axis is None:
        if ord is None or (ndim == 2 and ord in ("f", "fro")) or (ndim == 1 and ord == 2):
            return False, 2, tuple(range(-ndim, 0)), (), ()
        if ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(ndim))
    elif isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(np.lib.array_utils.normalize_axis_index(int(a), ndim) - ndim for a in axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return False, 2 if ord is None else ord, axes, (), ()
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row, col = axes
    if row == col:
        raise ValueError("Duplicate axes given.")
    both = tuple(sorted(axes))
    if ord is None or ord in ("f", "fro"):
        return False, 2, both, (), ()
    if ord in (2, -2, "nuc"):
        raise RuleRefusal(f"wengert: the derivative of np.linalg.norm(ord={ord!r}) of a "
                        "matrix needs its singular values, which it does not support")
    if ord in (1, -1):
        return True, ord, (row,), (col,), both
    if ord in (np.inf, -np.inf):
        return True, ord, (col,), (row,), both
    raise ValueError("Invalid norm order for matrices.")


def _dot_spec(na: int, nb: int) -> tuple[str, str, str]:
    """``np.dot`` of an ``na``-D and an ``nb``-D array (``nb >= 2``): the last axis of
    ``a`` against the second-to-last of ``b``."""
    la = string.ascii_letters[:na - 1]
    lb = string.ascii_letters[na - 1:na - 1 + nb - 1]
    return la + "z", lb[:-1] + "z" + lb[-1:], la + lb


def _inner_spec(na: int, nb: int) -> tuple[str, str, str]:
    """``np.inner``: the last axes of both, the others in order."""
    la = string.ascii_letters[:na - 1]
    lb = string.ascii_letters[na - 1:na - 1 + nb - 1]
    return la + "z", lb + "z", la + lb


def _tensordot_spec(na: int, nb: int, axes: Any) -> tuple[str, str, str]:
    """``np.tensordot``'s ``axes`` (an int, or two sequences of axes) as einsum
    subscripts: paired axes share a letter; the free axes of ``a``, then of ``b``."""
    try:
        n = int(axes)
        axes_a, axes_b = list(range(na - n, na)), list(range(n))
        if n < 0 or n > min(na, nb):
            raise ValueError("shape-mismatch for sum")
    except TypeError:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError("shape-mismatch for sum") from None
    axes_a = [np.lib.array_utils.normalize_axis_index(int(i), na) for i in axes_a]
    axes_b = [np.lib.array_utils.normalize_axis_index(int(i), nb) for i in axes_b]
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(axes_a, axes_b, strict=True):
        sb[j] = sa[i]
    free_a = [c for i, c in enumerate(sa) if i not in axes_a]
    free_b = [c for j, c in enumerate(sb) if j not in axes_b]
    return "".join(sa), "".join(sb), "".join(free_a + free_b)


def _kron_plan(sa: tuple[int, ...], sb: tuple[int, ...]
               ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[str, str, str],
                          tuple[int, ...]]:
    """``np.kron``: both shapes padded with leading 1s to the same length, the einsum of
    their outer product with the axes interleaved, and the shape it is merged into."""
    nd = max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + tuple(sa)
    sb = (1,) * (nd - len(sb)) + tuple(sb)
    la = string.ascii_letters[:nd]
    lb = string.ascii_letters[nd:2 * nd]
    out = "".join(x + y for x, y in zip(la, lb, strict=True))
    return sa, sb, (la, lb, out), tuple(x * y for x, y in zip(sa, sb, strict=True))


def _einsum_plan(operands: tuple, out_arg: Any) -> list[tuple]:
    """``np.einsum(subscripts, *arrays)`` as steps ``(i, j, spec)``, each the
    :func:`_einsum2` of entries ``i`` and ``j`` of a tuple that starts as ``operands``
    followed by a 1 (:func:`_einsum_one`) and gets each step's result appended. A step on
    one operand pairs it with the 1 (a diagonal, a sum, or dropping the size-1 axes that
    broadcast against longer ones). Ellipses become letters; the implicit output is
    NumPy's; three or more operands are contracted two at a time in the order NumPy's
    greedy path picks. (One kind of step, so that the loop over them has no branch.)"""
    _unsupported("einsum", out_=out_arg)
    subscripts = operands[0]
    if not isinstance(subscripts, str):
        raise RuleRefusal("wengert: the derivative of np.einsum takes the subscripts as a "
                        "string ('ij,jk->ik'), not the sublist form")
    shapes = [np.shape(x) for x in operands[1:]]
    # NumPy's own checks and errors, on zero-size stand-ins (only shapes are read).
    np.einsum_path(subscripts, *[np.broadcast_to(np.zeros(()), s) for s in shapes],
                   optimize=False)
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    fresh = [c for c in string.ascii_letters if c not in spec]
    extra = [len(shape) - (len(s) - 3) if "..." in s else 0
             for s, shape in zip(ins, shapes, strict=True)]
    width = max(extra, default=0)
    dots = "".join(fresh[:width])
    subs = [s.replace("...", dots[width - k:]) for s, k in zip(ins, extra, strict=True)]
    if arrow:
        out = out.replace("...", dots)
    else:
        counts: dict[str, int] = {}
        for c in lhs.replace(".", "").replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = dots + "".join(sorted(c for c, k in counts.items() if k == 1))
    steps: list[tuple] = []
    # A size-1 axis against a longer one broadcasts: the operand loses it.
    sizes: dict[str, set[int]] = {}
    for s, shape in zip(subs, shapes, strict=True):
        for c, n in zip(s, shape, strict=True):
            sizes.setdefault(c, set()).add(n)
    at = list(range(1, len(subs) + 1))  # where each operand is in the growing tuple
    one = len(operands)
    for k, (s, shape) in enumerate(zip(subs, shapes, strict=True)):
        drop = [i for i, (c, n) in enumerate(zip(s, shape, strict=True))
                if n == 1 and len(sizes[c]) > 1]
        if drop:
            subs[k] = "".join(c for i, c in enumerate(s) if i not in drop)
            shapes[k] = tuple(n for i, n in enumerate(shape) if i not in drop)
            steps.append((at[k], one, (s, "", subs[k])))
            at[k] = one + len(steps)
    n = len(subs)
    if n == 1:
        return [*steps, (at[0], one, (subs[0], "", out))]
    if n == 2:
        return [*steps, (at[0], at[1], (subs[0], subs[1], out))]
    path = np.einsum_path(",".join(subs) + "->" + out,
                          *[np.broadcast_to(np.zeros(()), s) for s in shapes],
                          optimize="greedy")[0][1:]
    alive = list(range(n))  # NumPy's path: positions in the list of operands not used yet

    def push(step: tuple, letters: str) -> int:
        steps.append(step)
        subs.append(letters)
        at.append(one + len(steps))
        return len(subs) - 1

    for contraction in path:
        group = [alive[p] for p in contraction]
        for p in sorted(contraction, reverse=True):
            del alive[p]
        cur = group[0]
        if len(group) == 1:
            keep = _needed(subs[cur], [subs[i] for i in alive], out)
            cur = push((at[cur], one, (subs[cur], "", keep)), keep)
        for t, j in enumerate(group[1:], start=1):
            last = not alive and t == len(group) - 1
            later = [subs[i] for i in alive] + [subs[i] for i in group[t + 1:]]
            keep = out if last else _needed(subs[cur] + subs[j], later, out)
            cur = push((at[cur], at[j], (subs[cur], subs[j], keep)), keep)
        alive.append(cur)
    if subs[-1] != out:
        push((at[-1], one, (subs[-1], "", out)), out)
    return steps


def _einsum_one(operands: tuple) -> Any:
    """The 1 that :func:`_einsum_plan`'s one-operand steps multiply by, in the operands'
    float type (a float32 einsum stays float32)."""
    return np.ones((), dtype=np.result_type(*[np.asarray(x).dtype for x in operands[1:]]))


def _needed(letters: str, later: list[str], out: str) -> str:
    """The letters (each once, in order) still needed by the operands left or the output."""
    wanted = set(out).union(*later)
    return "".join(dict.fromkeys(c for c in letters if c in wanted))


nondifferentiable(
    _axes, _axis, _end_shape, _count, _flag, _unsupported, _ddof, _dof, _float_dtype,
    _tie_weights, _off, _eye, _upper, _nan_at_zero, _kept, _nonzero_count, _check_weights,
    _weight_layout, _norm_plan, _dot_spec, _inner_spec, _tensordot_spec, _kron_plan,
    _einsum_plan, _einsum_one,
)
# Indices and orders are piecewise constant in the values.
nondifferentiable(np.argmax, np.argmin, np.argsort)
