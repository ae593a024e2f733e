"""Derivative rules for the :mod:`operator` module (every infix operator lowers to one of these).

The rules are written in the shape the inliner recognises (see ``registry``):
plain Python, infix operators, one ``return value, pullback`` at the end.  They
handle three families of operands:

* Python floats (and NumPy float scalars): the fast path, tested first with
  ``isinstance(y, float)``, so that inlined scalar code stays a couple of
  multiplications;
* NumPy arrays with broadcasting: cotangents are summed back to the shape of
  each operand (``_sum_to``) and tangents are broadcast up to the shape of the
  result (``_broadcast_to``);
* sequences for ``+`` (concatenation) and ``*`` (repetition by an int).

Tangents and cotangents may carry leading batch axes (batched forward mode, many
cotangents at once), so they are only ever combined linearly with primal values
through infix operators or the linear helpers below, which count axes from the
right.  A differential is only called when some argument has a tangent, so a
unary differential never sees ``None``; multi-argument ones test each tangent.

The private helpers (``_sum_to``, ``_mT``, ``_log_base`` ...) are primitives with
rules of their own, so rule bodies that call them stay differentiable (second
derivatives differentiate rule bodies again).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy

from wengert import runtime
from wengert.rules.form import cases, defderiv, deflinear
from wengert.rules.registry import defjvp, defrules, defvjp, mark_pure, nondifferentiable
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import mT as _mT
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import squeeze as _squeeze
from wengert.rules.shapes import sum_to as _sum_to
from wengert.rules.shapes import unsqueeze as _unsqueeze

# --------------------------------------------------------------------------------------
# Linear and shape helpers used inside rule bodies.  Each is a primitive with rules.
# --------------------------------------------------------------------------------------


def _snapshot(x: Any) -> Any:
    """A copy of a mutable array about to be updated in place; other values as they are.

    In-place operators on arrays overwrite their left operand, which a pullback
    may still need.
    """
    if isinstance(x, numpy.ndarray):
        return x.copy()
    return x


def _log_base(a: Any) -> Any:
    """``log(a)`` where ``a > 0``, ``0`` where ``a == 0`` and NaN where ``a < 0``.

    The factor of the exponent's derivative in ``a ** b`` (JAX's convention: at a
    zero base the exponent gets a zero adjoint; at a negative base it is undefined).
    """
    if isinstance(a, numpy.ndarray):
        safe = numpy.where(a > 0, a, 1.0)
        return numpy.where(a < 0, numpy.nan, numpy.log(safe))
    if a > 0:
        return math.log(a)
    if a == 0:
        return 0.0
    return math.nan


def _pos_recip(a: Any) -> Any:
    """``1 / a`` where ``a > 0``, ``0`` where ``a == 0``, NaN where ``a < 0``.

    The derivative of :func:`_log_base`.
    """
    if isinstance(a, numpy.ndarray):
        safe = numpy.where(a > 0, a, 1.0)
        return numpy.where(a < 0, numpy.nan, numpy.where(a > 0, 1.0 / safe, 0.0))
    if a > 0:
        return 1.0 / a
    if a == 0:
        return 0.0
    return math.nan


def _sum_cotangents(items: Any) -> Any:
    """The sum of the non-``None`` entries of ``items``; ``None`` when all are ``None``."""
    total = None
    for item in items:
        if item is not None:
            total = item if total is None else total + item
    return total


def _nones_like(seq: Any) -> Any:
    """A list or tuple of ``None`` as long as ``seq``: the zero tangent of a sequence."""
    if isinstance(seq, tuple):
        return (None,) * len(seq)
    return [None] * len(seq)


nondifferentiable(_shape, _nones_like)
mark_pure(_sum_to, _broadcast_to, _mT, _unsqueeze, _squeeze, _snapshot, _log_base, _pos_recip,
          _sum_cotangents)


# Each linear helper is the other's transpose; the two factors of a power's exponent
# derivative are each other's slopes.
deflinear(_sum_to, _broadcast_to)
deflinear(_broadcast_to, _sum_to)
deflinear(_mT, _mT)
deflinear(_unsqueeze, _squeeze)
deflinear(_squeeze, _unsqueeze)
defderiv(_snapshot, lambda x: 1.0)
defderiv(_log_base, lambda a: _pos_recip(a))
defderiv(_pos_recip, lambda a, *, ans: -(ans * ans))
_A23 = numpy.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
cases(_sum_to, (_A23, (1, 3), (2, 3)), (_A23, (), (2, 3)), (1.5, (), ()))
cases(_broadcast_to, (_A23[:1], (1, 3), (2, 3)), (numpy.array(0.5), (), (2, 3)))
cases(_mT, (_A23,))
cases(_unsqueeze, (_A23, -2))
cases(_squeeze, (_A23[:1], -2))
cases(_snapshot, (0.5,), (_A23,))
cases(_log_base, (0.5,), (_A23 + 2.0,))
cases(_pos_recip, (0.5,), (_A23 + 2.0,))


@defvjp(_sum_cotangents)
def _sum_cotangents_vjp(items):
    y = _sum_cotangents(items)

    def _sum_cotangents_pullback(y_bar):
        if isinstance(items, tuple):
            items_bar = tuple(y_bar for _ in items)
        else:
            items_bar = [y_bar for _ in items]
        return (items_bar,)

    return y, _sum_cotangents_pullback


@defjvp(_sum_cotangents)
def _sum_cotangents_jvp(items):
    return _sum_cotangents(items), lambda items_dot: _sum_cotangents(items_dot)


def _repeat_adjoint(y_bar: Any, n: int) -> Any:
    """The adjoint of ``seq`` (of length ``n``) in ``seq * count``.

    Entry ``i`` sums the cotangents at ``i, i + n, i + 2n, ...``; the result is a
    tuple when the cotangent is one.
    """
    if isinstance(y_bar, tuple):
        return tuple(_sum_cotangents(y_bar[i::n]) for i in range(n))
    return [_sum_cotangents(y_bar[i::n]) for i in range(n)]


@defvjp(_repeat_adjoint)
def _repeat_adjoint_vjp(y_bar, n):
    # Linear in y_bar; its transpose repeats the cotangent of the result.
    count = 0
    if n > 0:
        count = len(y_bar) // n
    return _repeat_adjoint(y_bar, n), lambda r_bar: (r_bar * count, None)


@defjvp(_repeat_adjoint)
def _repeat_adjoint_jvp(y_bar, n):
    return _repeat_adjoint(y_bar, n), lambda y_bar_dot, n_dot: _repeat_adjoint(y_bar_dot, n)


mark_pure(_repeat_adjoint)


# --------------------------------------------------------------------------------------
# Addition and subtraction.
# --------------------------------------------------------------------------------------


def _add_rules(add):
    """The rules of ``a + b`` and ``a += b`` (``add`` is ``operator.add`` or ``iadd``, a
    closure constant the inliner reads): numbers, arrays with broadcasting, and sequence
    concatenation, where each operand gets its slice of the cotangent."""

    def add_vjp(a, b):
        # A list operand may be extended in place: remember where the split is first.
        n = 0
        if isinstance(a, (list, tuple)):
            n = len(a)
        y = add(a, b)

        def add_pullback(y_bar):
            if isinstance(y, float):
                a_bar = y_bar
                b_bar = y_bar
            elif isinstance(y, (list, tuple)):
                a_bar = y_bar[:n]
                b_bar = y_bar[n:]
            else:
                y_shape = _shape(y)
                a_bar = _sum_to(y_bar, _shape(a), y_shape)
                b_bar = _sum_to(y_bar, _shape(b), y_shape)
            return a_bar, b_bar

        return y, add_pullback

    def add_jvp(a, b):
        n = 0
        if isinstance(a, (list, tuple)):
            n = len(a)
        y = add(a, b)

        def add_differential(a_dot, b_dot):
            if a_dot is None and b_dot is None:
                y_dot = None
            elif isinstance(y, (list, tuple)):
                if a_dot is None:
                    a_dot = _nones_like(y[:n])
                if b_dot is None:
                    b_dot = _nones_like(b)
                y_dot = a_dot + b_dot
            else:
                if not isinstance(y, float):
                    y_shape = _shape(y)
                    a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
                    b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
                if a_dot is None:
                    y_dot = b_dot
                elif b_dot is None:
                    y_dot = a_dot
                else:
                    y_dot = a_dot + b_dot
            return y_dot

        return y, add_differential

    defrules(add, add_vjp, add_jvp)
    return add_vjp, add_jvp


add_vjp, add_jvp = _add_rules(operator.add)
iadd_vjp, iadd_jvp = _add_rules(operator.iadd)


# The in-place form too: its partials read neither operand, which it may have overwritten.
defderiv(operator.sub, lambda a, b: 1.0, lambda a, b: -1.0, broadcast=True)
defderiv(operator.isub, lambda a, b: 1.0, lambda a, b: -1.0, broadcast=True, pure=False)
cases(operator.sub, (0.5, 2.0), (numpy.ones((2, 3)), numpy.arange(3.0)))
cases(operator.isub, (0.5, 2.0), (numpy.ones((2, 3)), numpy.arange(3.0)))


# --------------------------------------------------------------------------------------
# Multiplication (numbers, arrays, and sequence repetition ``seq * n``).
# --------------------------------------------------------------------------------------


@defvjp(operator.mul)
def mul_vjp(a, b):
    y = a * b

    def mul_pullback(y_bar):
        if isinstance(y, float):
            a_bar = y_bar * b
            b_bar = y_bar * a
        elif isinstance(y, (list, tuple)):
            # ``seq * n``: each entry of seq appears n times; the int count has no adjoint.
            if isinstance(a, (list, tuple)):
                a_bar = _repeat_adjoint(y_bar, len(a))
                b_bar = None
            else:
                a_bar = None
                b_bar = _repeat_adjoint(y_bar, len(b))
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar * b, _shape(a), y_shape)
            b_bar = _sum_to(y_bar * a, _shape(b), y_shape)
        return a_bar, b_bar

    return y, mul_pullback


@defjvp(operator.mul)
def mul_jvp(a, b):
    y = a * b

    def mul_differential(a_dot, b_dot):
        if isinstance(y, (list, tuple)):
            # Repeat the tangent of the sequence operand; the count is an int.
            if isinstance(a, (list, tuple)):
                y_dot = None
                if a_dot is not None:
                    y_dot = a_dot * b
            else:
                y_dot = None
                if b_dot is not None:
                    y_dot = a * b_dot
        else:
            if not isinstance(y, float):
                y_shape = _shape(y)
                a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
                b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            if a_dot is None:
                if b_dot is None:
                    y_dot = None
                else:
                    y_dot = a * b_dot
            elif b_dot is None:
                y_dot = a_dot * b
            else:
                y_dot = a_dot * b + a * b_dot
        return y_dot

    return y, mul_differential


@defvjp(operator.imul)
def imul_vjp(a, b):
    # The left operand is overwritten when it is an array or a list: keep what the
    # pullback reads.
    a0 = _snapshot(a)
    n = 0
    if isinstance(a, (list, tuple)):
        n = len(a)
    y = a
    y *= b

    def imul_pullback(y_bar):
        if isinstance(y, float):
            a_bar = y_bar * b
            b_bar = y_bar * a0
        elif isinstance(y, (list, tuple)):
            a_bar = _repeat_adjoint(y_bar, n)
            b_bar = None
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar * b, _shape(a0), y_shape)
            b_bar = _sum_to(y_bar * a0, _shape(b), y_shape)
        return a_bar, b_bar

    return y, imul_pullback


@defjvp(operator.imul)
def imul_jvp(a, b):
    a0 = _snapshot(a)
    y = a
    y *= b

    def imul_differential(a_dot, b_dot):
        if isinstance(y, (list, tuple)):
            y_dot = None
            if a_dot is not None:
                y_dot = a_dot * b
        else:
            if not isinstance(y, float):
                y_shape = _shape(y)
                a_dot = _broadcast_to(a_dot, _shape(a0), y_shape)
                b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            if a_dot is None:
                if b_dot is None:
                    y_dot = None
                else:
                    y_dot = a0 * b_dot
            elif b_dot is None:
                y_dot = a_dot * b
            else:
                y_dot = a_dot * b + a0 * b_dot
        return y_dot

    return y, imul_differential


# --------------------------------------------------------------------------------------
# Division and remainder.
# --------------------------------------------------------------------------------------


defderiv(operator.truediv, lambda a, b: 1.0 / b, lambda a, b, *, ans: -ans / b, broadcast=True)
cases(operator.truediv, (0.5, 2.0), (numpy.ones((2, 3)), numpy.arange(1.0, 4.0)), (1.5, _A23 + 2.0))


@defvjp(operator.itruediv)
def itruediv_vjp(a, b):
    a0 = _snapshot(a)
    y = a
    y /= b

    def itruediv_pullback(y_bar):
        # y may be overwritten later, so the adjoint of b is written with a0.
        if isinstance(y, float):
            a_bar = y_bar / b
            b_bar = -y_bar * (a0 / (b * b))
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar / b, _shape(a0), y_shape)
            b_bar = _sum_to(-y_bar * (a0 / (b * b)), _shape(b), y_shape)
        return a_bar, b_bar

    return y, itruediv_pullback


@defjvp(operator.itruediv)
def itruediv_jvp(a, b):
    a0 = _snapshot(a)
    y = a
    y /= b

    def itruediv_differential(a_dot, b_dot):
        if not isinstance(y, float):
            y_shape = _shape(y)
            a_dot = _broadcast_to(a_dot, _shape(a0), y_shape)
            b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
        if a_dot is None:
            if b_dot is None:
                y_dot = None
            else:
                y_dot = -b_dot * (a0 / (b * b))
        elif b_dot is None:
            y_dot = a_dot / b
        else:
            y_dot = a_dot / b - b_dot * (a0 / (b * b))
        return y_dot

    return y, itruediv_differential


@defvjp(operator.mod)
def mod_vjp(a, b):
    y = a % b

    def mod_pullback(y_bar):
        # a % b == a - b * (a // b) with a // b piecewise constant.
        if isinstance(y, float):
            a_bar = y_bar
            b_bar = -y_bar * (a // b)
        elif isinstance(y, (str, bytes)):
            # printf-style formatting: a string has no derivative.
            a_bar = None
            b_bar = None
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar, _shape(a), y_shape)
            b_bar = _sum_to(-y_bar * (a // b), _shape(b), y_shape)
        return a_bar, b_bar

    return y, mod_pullback


@defjvp(operator.mod)
def mod_jvp(a, b):
    y = a % b

    def mod_differential(a_dot, b_dot):
        if isinstance(y, (str, bytes)):
            y_dot = None
        else:
            if not isinstance(y, float):
                y_shape = _shape(y)
                a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
                b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            if a_dot is None:
                if b_dot is None:
                    y_dot = None
                else:
                    y_dot = -b_dot * (a // b)
            elif b_dot is None:
                y_dot = a_dot
            else:
                y_dot = a_dot - b_dot * (a // b)
        return y_dot

    return y, mod_differential


@defvjp(operator.imod)
def imod_vjp(a, b):
    q = a // b
    y = a
    y %= b

    def imod_pullback(y_bar):
        if isinstance(y, float):
            a_bar = y_bar
            b_bar = -y_bar * q
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar, _shape(a), y_shape)
            b_bar = _sum_to(-y_bar * q, _shape(b), y_shape)
        return a_bar, b_bar

    return y, imod_pullback


@defjvp(operator.imod)
def imod_jvp(a, b):
    q = a // b
    y = a
    y %= b

    def imod_differential(a_dot, b_dot):
        if not isinstance(y, float):
            y_shape = _shape(y)
            a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
            b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
        if a_dot is None:
            if b_dot is None:
                y_dot = None
            else:
                y_dot = -b_dot * q
        elif b_dot is None:
            y_dot = a_dot
        else:
            y_dot = a_dot - b_dot * q
        return y_dot

    return y, imod_differential


# --------------------------------------------------------------------------------------
# Powers.  d(a**b)/da = b * a**(b-1), taken as 0 when b == 0 (even at a == 0) and as
# b * inf at a == 0 with b < 1, like JAX; d(a**b)/db = log(a) * a**b with JAX's
# conventions at a <= 0 (see _log_base).  An int exponent gets no adjoint.
# --------------------------------------------------------------------------------------


def _pow_rules(power):
    """The rules of ``a ** b``, ``pow(a, b[, mod])`` and ``math.pow(a, b)`` (``power``,
    a closure constant the inliner reads).  ``pow(a, b, mod)`` works on ints only and
    has no derivative; the other calls pass no ``mod``, and its tests fold away."""

    def pow_vjp(a, b, *mod):
        y = power(a, b, *mod)

        def pow_pullback(y_bar):
            if len(mod) > 0:
                return None, None, None
            if isinstance(y, float):
                if b == 0:
                    a_bar = None
                elif a == 0 and b < 1:
                    a_bar = y_bar * (b * math.inf)
                else:
                    a_bar = y_bar * (b * power(a, b - 1))
                b_bar = None
                if not isinstance(b, int):
                    b_bar = y_bar * (_log_base(a) * y)
            else:
                y_shape = _shape(y)
                # (b == 0) bumps the exponent to 0 where b == 0, so 0 * 0**-1 never makes a NaN.
                a_bar = _sum_to(y_bar * (b * power(a, b - 1 + (b == 0))), _shape(a), y_shape)
                b_bar = None
                if not isinstance(b, int):
                    b_bar = _sum_to(y_bar * (_log_base(a) * y), _shape(b), y_shape)
            return a_bar, b_bar

        return y, pow_pullback

    def pow_jvp(a, b, *mod):
        y = power(a, b, *mod)

        def pow_differential(a_dot, b_dot, *mod_dot):
            if len(mod) > 0:
                return None
            if isinstance(y, float):
                if a_dot is None or b == 0:
                    a_term = None
                elif a == 0 and b < 1:
                    a_term = a_dot * (b * math.inf)
                else:
                    a_term = a_dot * (b * power(a, b - 1))
            else:
                y_shape = _shape(y)
                a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
                b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
                a_term = None
                if a_dot is not None:
                    a_term = a_dot * (b * power(a, b - 1 + (b == 0)))
            if b_dot is None:
                y_dot = a_term
            elif a_term is None:
                y_dot = b_dot * (_log_base(a) * y)
            else:
                y_dot = a_term + b_dot * (_log_base(a) * y)
            return y_dot

        return y, pow_differential

    defrules(power, pow_vjp, pow_jvp)
    return pow_vjp, pow_jvp


pow_vjp, pow_jvp = _pow_rules(operator.pow)


@defvjp(operator.ipow)
def ipow_vjp(a, b):
    a0 = _snapshot(a)
    y = a
    y **= b

    def ipow_pullback(y_bar):
        # Written with a0 only: y may be overwritten later.
        if isinstance(y, float):
            if b == 0:
                a_bar = None
            elif a0 == 0 and b < 1:
                a_bar = y_bar * (b * math.inf)
            else:
                a_bar = y_bar * (b * a0 ** (b - 1))
            b_bar = None
            if not isinstance(b, int):
                b_bar = y_bar * (_log_base(a0) * a0 ** b)
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar * (b * a0 ** (b - 1 + (b == 0))), _shape(a0), y_shape)
            b_bar = None
            if not isinstance(b, int):
                b_bar = _sum_to(y_bar * (_log_base(a0) * a0 ** b), _shape(b), y_shape)
        return a_bar, b_bar

    return y, ipow_pullback


@defjvp(operator.ipow)
def ipow_jvp(a, b):
    a0 = _snapshot(a)
    y = a
    y **= b

    def ipow_differential(a_dot, b_dot):
        if isinstance(y, float):
            if a_dot is None or b == 0:
                a_term = None
            elif a0 == 0 and b < 1:
                a_term = a_dot * (b * math.inf)
            else:
                a_term = a_dot * (b * a0 ** (b - 1))
        else:
            y_shape = _shape(y)
            a_dot = _broadcast_to(a_dot, _shape(a0), y_shape)
            b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            a_term = None
            if a_dot is not None:
                a_term = a_dot * (b * a0 ** (b - 1 + (b == 0)))
        if b_dot is None:
            y_dot = a_term
        elif a_term is None:
            y_dot = b_dot * (_log_base(a0) * a0 ** b)
        else:
            y_dot = a_term + b_dot * (_log_base(a0) * a0 ** b)
        return y_dot

    return y, ipow_differential


# --------------------------------------------------------------------------------------
# Unary operators.
# --------------------------------------------------------------------------------------


defderiv(operator.neg, lambda a: -1.0)
defderiv(operator.pos, lambda a: 1.0)
# The sign, with 0 at 0 (the minimum-norm subgradient, matching central differences).
defderiv(operator.abs, lambda a: (a > 0) * 1.0 - (a < 0) * 1.0)
cases(operator.neg, (0.5,), (_A23,))
cases(operator.pos, (0.5,), (_A23,))
cases(operator.abs, (0.5,), (-2.0,), (_A23,))


# --------------------------------------------------------------------------------------
# Matrix multiplication.  A 1-D operand is promoted to a matrix (a row for the left,
# a column for the right) with _unsqueeze, the matrix formulas are applied with
# broadcasting over stacks, and the promoted axes are removed again, so one code path
# covers 1-D, 2-D and stacked (N-D) operands and batched tangents.
# --------------------------------------------------------------------------------------


@defvjp(operator.matmul)
def matmul_vjp(a, b):
    y = a @ b

    def matmul_pullback(y_bar):
        a_shape = _shape(a)
        b_shape = _shape(b)
        y_shape = _shape(y)
        stack = y_shape[: len(y_shape) - (len(a_shape) > 1) - (len(b_shape) > 1)]
        a2 = a
        b2 = b
        g = y_bar
        if len(b_shape) == 1:
            b2 = _unsqueeze(b, -1)
            g = _unsqueeze(g, -1)
        if len(a_shape) == 1:
            a2 = _unsqueeze(a, -2)
            g = _unsqueeze(g, -2)
        a2_shape = _shape(a2)
        b2_shape = _shape(b2)
        a_bar = _sum_to(g @ _mT(b2), a2_shape, stack + a2_shape[-2:])
        b_bar = _sum_to(_mT(a2) @ g, b2_shape, stack + b2_shape[-2:])
        if len(a_shape) == 1:
            a_bar = _squeeze(a_bar, -2)
        if len(b_shape) == 1:
            b_bar = _squeeze(b_bar, -1)
        return a_bar, b_bar

    return y, matmul_pullback


@defjvp(operator.matmul)
def matmul_jvp(a, b):
    y = a @ b

    def matmul_differential(a_dot, b_dot):
        a_shape = _shape(a)
        b_shape = _shape(b)
        y_shape = _shape(y)
        stack = y_shape[: len(y_shape) - (len(a_shape) > 1) - (len(b_shape) > 1)]
        a2 = a
        b2 = b
        if len(a_shape) == 1:
            a2 = _unsqueeze(a, -2)
            if a_dot is not None:
                a_dot = _unsqueeze(a_dot, -2)
        if len(b_shape) == 1:
            b2 = _unsqueeze(b, -1)
            if b_dot is not None:
                b_dot = _unsqueeze(b_dot, -1)
        a2_shape = _shape(a2)
        b2_shape = _shape(b2)
        # Broadcasting the tangent over the stack first keeps its batch axes in front.
        a_dot = _broadcast_to(a_dot, a2_shape, stack + a2_shape[-2:])
        b_dot = _broadcast_to(b_dot, b2_shape, stack + b2_shape[-2:])
        if a_dot is None:
            if b_dot is None:
                y_dot = None
            else:
                y_dot = a2 @ b_dot
        elif b_dot is None:
            y_dot = a_dot @ b2
        else:
            y_dot = a_dot @ b2 + a2 @ b_dot
        if y_dot is not None and len(a_shape) == 1:
            y_dot = _squeeze(y_dot, -2)
        if y_dot is not None and len(b_shape) == 1:
            y_dot = _squeeze(y_dot, -1)
        return y_dot

    return y, matmul_differential


@defvjp(operator.imatmul)
def imatmul_vjp(a, b):
    # NumPy multiplies in place (the result has a's shape, so both are matrices).
    a0 = _snapshot(a)
    y = a
    y @= b

    def imatmul_pullback(y_bar):
        y_shape = _shape(y)
        a_shape = _shape(a0)
        b_shape = _shape(b)
        a_bar = _sum_to(y_bar @ _mT(b), a_shape, y_shape[:-2] + a_shape[-2:])
        b_bar = _sum_to(_mT(a0) @ y_bar, b_shape, y_shape[:-2] + b_shape[-2:])
        return a_bar, b_bar

    return y, imatmul_pullback


@defjvp(operator.imatmul)
def imatmul_jvp(a, b):
    a0 = _snapshot(a)
    y = a
    y @= b

    def imatmul_differential(a_dot, b_dot):
        y_shape = _shape(y)
        b_dot = _broadcast_to(b_dot, _shape(b), y_shape[:-2] + _shape(b)[-2:])
        if a_dot is None:
            if b_dot is None:
                y_dot = None
            else:
                y_dot = a0 @ b_dot
        elif b_dot is None:
            y_dot = a_dot @ b
        else:
            y_dot = a_dot @ b + a0 @ b_dot
        return y_dot

    return y, imatmul_differential


# Sequence concatenation spelled as a function: the same maths as ``+`` on sequences.
defvjp(operator.concat)(add_vjp)
defjvp(operator.concat)(add_jvp)
defvjp(operator.iconcat)(iadd_vjp)
defjvp(operator.iconcat)(iadd_jvp)

# The in-place operators are deliberately not pure: on a list or an array they mutate
# their left operand, which other names may alias, so an unused call cannot be dropped.
mark_pure(
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg,
    operator.pos, operator.abs, operator.mod, operator.matmul, operator.concat,
)

nondifferentiable(
    operator.lt, operator.le, operator.eq, operator.ne, operator.ge, operator.gt,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.inv,
    operator.lshift, operator.rshift, operator.floordiv, operator.ifloordiv, operator.index,
    operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.countOf, operator.indexOf, operator.length_hint,
    # ``x in xs`` and ``x not in xs`` (as the frontend lowers them): truth values.
    runtime.contained_in, runtime.not_contained_in,
    warn=False, pure=True,
)
for _name in ("is_none", "is_not_none"):  # Python 3.14+
    if hasattr(operator, _name):
        nondifferentiable(getattr(operator, _name), warn=False, pure=True)

# Float adjoints accumulate through ``runtime.add_floats`` (``+`` in generated code): the
# same derivative as ``+``, so generated pullbacks differentiate again.
defvjp(runtime.add_floats)(add_vjp)
defjvp(runtime.add_floats)(add_jvp)
mark_pure(runtime.add_floats)


# ``runtime.nonzero(a, like)`` materialises a zero adjoint in generated pullbacks: the
# identity in ``a`` (``like`` gives only a shape), so differentiated pullbacks pass through.
@defvjp(runtime.nonzero)
def nonzero_vjp(a, like):
    y = runtime.nonzero(a, like)
    return y, lambda y_bar: (y_bar, None)


@defjvp(runtime.nonzero)
def nonzero_jvp(a, like):
    y = runtime.nonzero(a, like)

    def nonzero_differential(a_dot, like_dot):
        return a_dot

    return y, nonzero_differential


mark_pure(runtime.nonzero)
