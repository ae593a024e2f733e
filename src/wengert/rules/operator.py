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
from wengert.rules.form import ans_bar, cases, defderiv, deflinear, defrule
from wengert.rules.registry import (
    defpython,
    defrules,
    lookup,
    mark_array_result,
    mark_pure,
    nondifferentiable,
)
from wengert.rules.shapes import broadcast_to as _broadcast_to
from wengert.rules.shapes import mT as _mT
from wengert.rules.shapes import mul_sum_to as _mul_sum_to
from wengert.rules.shapes import shape as _shape
from wengert.rules.shapes import skeleton as _skeleton
from wengert.rules.shapes import squeeze as _squeeze
from wengert.rules.shapes import sum_to as _sum_to
from wengert.rules.shapes import unsqueeze as _unsqueeze
from wengert.runtime import snapshot as _snapshot

# --------------------------------------------------------------------------------------
# Linear and shape helpers used inside rule bodies.  Each is a primitive with rules.
# --------------------------------------------------------------------------------------


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
    """The sum of the non-``None`` entries of ``items``; ``None`` when all are ``None``.
    Entries that are adjoints of lists or tuples (the items of ``[row] * 3``) add entry by
    entry, never by ``+``, which would join them."""
    total = None
    for item in items:
        if item is not None:
            total = item if total is None else runtime.add_adjoint(total, item)
    return total


def _nones_like(seq: Any) -> Any:
    """A list or tuple of ``None`` as long as ``seq``: the zero tangent of a sequence."""
    if isinstance(seq, tuple):
        return (None,) * len(seq)
    return [None] * len(seq)


nondifferentiable(_shape, _nones_like)
mark_pure(_sum_to, _mul_sum_to, _broadcast_to, _mT, _unsqueeze, _squeeze, _log_base, _pos_recip,
          _sum_cotangents)


# Each linear helper is the other's transpose; the two factors of a power's exponent
# derivative are each other's slopes. The two broadcasting helpers pass a symbolic zero
# through (a pullback's adjoint that no path reached): its cotangent is ``None`` too, not
# the transpose's, whose shapes would be read off the ``None``.
deflinear(_sum_to, _broadcast_to, zeros=True)
deflinear(_broadcast_to, _sum_to, zeros=True)
deflinear(_mT, _mT)
deflinear(_unsqueeze, _squeeze)
deflinear(_squeeze, _unsqueeze)
mark_array_result(_mT, _unsqueeze, _squeeze)
defderiv(_log_base, lambda a: _pos_recip(a))
defderiv(_pos_recip, lambda a, *, ans: -(ans * ans))


@defpython(_mul_sum_to)
def mul_sum_to_(a, b, shape, full):
    # The product, then its sum: what the fused helper computes, in the form the rules of
    # ``*`` and ``_sum_to`` differentiate (it appears only in generated pullbacks).
    return _sum_to(a * b, shape, full)


_A23 = numpy.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
_B3 = numpy.arange(1.0, 4.0)
_Q33 = numpy.array([[0.5, -1.0, 0.25], [1.5, 0.25, 2.0], [-0.75, 2.0, 1.0]])
cases(_sum_to, (_A23, (1, 3), (2, 3)), (_A23, (), (2, 3)), (1.5, (), ()))
cases(_broadcast_to, (_A23[:1], (1, 3), (2, 3)), (numpy.array(0.5), (), (2, 3)))
cases(_mT, (_A23,))
# (the fused helper's definition: summed over a leading axis and one of size 1, nothing
# summed, and with a leading batch axis)
cases(_mul_sum_to, (_A23, _A23[::-1].copy(), (1, 3), (2, 3)), (_A23, _B3, (3,), (2, 3)),
      (_A23, _B3, (2, 3), (2, 3)), (numpy.stack([_A23, -_A23]), _A23, (1, 3), (2, 3)),
      (1.5, -0.5, (), ()))
cases(_unsqueeze, (_A23, -2))
cases(_squeeze, (_A23[:1], -2))
cases(_log_base, (0.5,), (_A23 + 2.0,))
cases(_pos_recip, (0.5,), (_A23 + 2.0,))


# Linear in the items: each gets the sum's cotangent.
deflinear(_sum_cotangents, lambda items: (
    tuple(ans_bar for _ in items) if isinstance(items, tuple) else [ans_bar for _ in items]),
    keep={"items": _skeleton})
cases(_sum_cotangents, ([0.5, None, 1.5],), ((_A23, _A23),), ([[0.5, None], None, [1.5, 2.0]],),
      (((0.5, 1.0), (2.0, None)),))


def _repeat_adjoint(y_bar: Any, n: int) -> Any:
    """The adjoint of ``seq`` (of length ``n``) in ``seq * count``.

    Entry ``i`` sums the cotangents at ``i, i + n, i + 2n, ...``; the result is a
    tuple when the cotangent is one.
    """
    if isinstance(y_bar, tuple):
        return tuple(_sum_cotangents(y_bar[i::n]) for i in range(n))
    return [_sum_cotangents(y_bar[i::n]) for i in range(n)]


# Linear in y_bar; its transpose repeats the cotangent of the result.
deflinear(_repeat_adjoint, lambda y_bar, n: ans_bar * (len(y_bar) // n if n > 0 else 0),
          keep={"y_bar": _skeleton})
cases(_repeat_adjoint, ([0.5, 1.5, -0.5, 2.0], 2))
mark_pure(_repeat_adjoint)


def _alias(fn: Any, of: Any) -> None:
    """Give ``fn`` the rules of ``of``, which computes the same function."""
    rule = lookup(of)
    defrules(fn, rule.vjp, rule.jvp)


# --------------------------------------------------------------------------------------
# Addition and subtraction.
# --------------------------------------------------------------------------------------


def _add_rules(add):
    """The rules of ``a + b`` and ``a += b`` (``add`` is ``operator.add`` or ``iadd``, a
    closure constant the inliner reads): numbers, arrays with broadcasting, and sequence
    concatenation, where each operand gets its slice of the cotangent."""

    @defrule(add)
    def add_rule(a, b):
        # A list operand may be extended in place: remember where the split is first; an
        # array's shapes are taken first too (``a += b`` changes ``a``: only its shape is
        # read, and the pullback need not keep it).
        n = 0
        if isinstance(a, (list, tuple)):
            n = len(a)
        else:
            a_shape = _shape(a)
            b_shape = _shape(b)
        y = add(a, b)

        def add_pullback(y_bar):
            if isinstance(y, float):
                a_bar = y_bar
                b_bar = y_bar
            elif isinstance(y, (list, tuple)):
                a_bar = y_bar[:n]
                b_bar = y_bar[n:]
                if isinstance(b, tuple) and not isinstance(y, tuple):
                    b_bar = tuple(b_bar)  # ``xs += t``, a list extended by a tuple
            else:
                y_shape = _shape(y)
                a_bar = _sum_to(y_bar, a_shape, y_shape)
                b_bar = _sum_to(y_bar, b_shape, y_shape)
            return a_bar, b_bar

        def add_differential(a_dot, b_dot):
            if a_dot is None and b_dot is None:
                y_dot = None
            elif isinstance(y, (list, tuple)):
                if a_dot is None:
                    a_dot = _nones_like(y[:n])
                if b_dot is None:
                    b_dot = _nones_like(b)
                if isinstance(b, tuple) and not isinstance(y, tuple):
                    b_dot = list(b_dot)  # ``xs += t``: a list's tangent is a list
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

        return y, add_pullback, add_differential


_add_rules(operator.add)
_add_rules(operator.iadd)
# Numbers, broadcasting (a row, a number), and sequences joined (a list extended by a
# tuple in place); the in-place cases are checked on a copy of the left operand.
cases(operator.add, (0.5, 2.0), (_A23, _B3), (1.5, _A23), ([0.5, 1.5], [2.0]),
      ((0.5,), (1.5, 2.0)))
cases(operator.iadd, (0.5, 2.0), (_A23, _B3), (_A23, 1.5), ([0.5, 1.5], [2.0]),
      ([0.5], (1.5, 2.0)))


# The in-place forms too (``pure=False``): their partials read a copy of the left operand
# made before the operator overwrites it.
defderiv(operator.sub, lambda a, b: 1.0, lambda a, b: -1.0, broadcast=True)
defderiv(operator.isub, lambda a, b: 1.0, lambda a, b: -1.0, broadcast=True, pure=False)
defderiv(operator.truediv, lambda a, b: 1.0 / b, lambda a, b, *, ans: -ans / b, broadcast=True)
defderiv(operator.itruediv, lambda a, b: 1.0 / b, lambda a, b: -a / (b * b), broadcast=True,
         pure=False)
for _f in (operator.sub, operator.isub, operator.truediv, operator.itruediv):
    cases(_f, (0.5, 2.0), (numpy.ones((2, 3)), _B3), (_A23 + 2.0, 1.5))
cases(operator.truediv, (1.5, _A23 + 2.0))


# --------------------------------------------------------------------------------------
# Multiplication (numbers, arrays, and sequence repetition ``seq * n``), remainder,
# powers and matrix products, each with its in-place form (``inplace``, a closure
# constant): an in-place operator overwrites an array or list operand, so the
# derivatives read a copy ``a0`` of it (the branch folds away in the other form).
# --------------------------------------------------------------------------------------


def _mul_rules(mul, inplace):
    @defrule(mul, pure=not inplace)
    def mul_rule(a, b):
        a0 = _snapshot(a) if inplace else a
        y = mul(a, b)

        def mul_pullback(y_bar):
            if isinstance(y, float):
                a_bar = y_bar * b
                b_bar = y_bar * a0
            elif isinstance(y, (list, tuple)):
                # ``seq * n``: each entry of seq appears n times; the int count has no adjoint.
                if isinstance(a0, (list, tuple)):
                    a_bar = _repeat_adjoint(y_bar, len(a0))
                    b_bar = None
                else:
                    a_bar = None
                    b_bar = _repeat_adjoint(y_bar, len(b))
            else:
                y_shape = _shape(y)
                a_bar = _sum_to(y_bar * b, _shape(a0), y_shape)
                b_bar = _sum_to(y_bar * a0, _shape(b), y_shape)
            return a_bar, b_bar

        def mul_differential(a_dot, b_dot):
            if isinstance(y, (list, tuple)):
                # Repeat the tangent of the sequence operand; the count is an int.
                y_dot = None
                if isinstance(a0, (list, tuple)):
                    if a_dot is not None:
                        y_dot = a_dot * b
                elif b_dot is not None:
                    y_dot = a0 * b_dot
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

        return y, mul_pullback, mul_differential


_mul_rules(operator.mul, False)
_mul_rules(operator.imul, True)
# Numbers, broadcasting, and a sequence repeated by an int (on either side).
cases(operator.mul, (0.5, 2.0), (_A23, _B3), (1.5, _A23), ([0.5, 1.5], 2), (3, (0.5, 1.5)))
cases(operator.imul, (0.5, 2.0), (_A23, _B3), (_A23, 1.5), ([0.5, 1.5], 2))


def _mod_rules(mod, inplace):
    @defrule(mod, pure=not inplace)
    def mod_rule(a, b):
        # a % b == a - b * (a // b) with a // b piecewise constant; printf-style formatting
        # (a string) has no derivative.
        text = isinstance(a, (str, bytes))
        a0 = _snapshot(a) if inplace else a
        y = mod(a, b)

        def mod_pullback(y_bar):
            if text:
                return None, None
            if isinstance(y, float):
                return y_bar, -y_bar * (a0 // b)
            y_shape = _shape(y)
            return (_sum_to(y_bar, _shape(a0), y_shape),
                    _sum_to(-y_bar * (a0 // b), _shape(b), y_shape))

        def mod_differential(a_dot, b_dot):
            if text:
                return None
            if not isinstance(y, float):
                y_shape = _shape(y)
                a_dot = _broadcast_to(a_dot, _shape(a0), y_shape)
                b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            if b_dot is None:
                return a_dot
            if a_dot is None:
                return -b_dot * (a0 // b)
            return a_dot - b_dot * (a0 // b)

        return y, mod_pullback, mod_differential


_mod_rules(operator.mod, False)
_mod_rules(operator.imod, True)
# Away from the jumps (every remainder at least 0.1 from 0 and from the divisor), a
# negative dividend among them.
cases(operator.mod, (5.3, 1.7), (-5.3, 1.7), (_A23 * 3.0, numpy.array([1.7, 1.3, 0.9])),
      (_A23 + 3.0, 1.7), (5.3, _B3 + 0.5))
cases(operator.imod, (5.3, 1.7), (_A23 * 3.0, numpy.array([1.7, 1.3, 0.9])), (_A23 + 3.0, 1.7))


# d(a**b)/da = b * a**(b-1), taken as 0 when b == 0 (even at a == 0) and as b * inf at
# a == 0 with b < 1, like JAX; d(a**b)/db = log(a) * a**b with JAX's conventions at a <= 0
# (see _log_base).  An int exponent gets no adjoint.


def _pow_rules(power, inplace=False):
    """The rules of ``a ** b``, ``a **= b``, ``pow(a, b[, mod])`` and ``math.pow(a, b)``
    (``power``, a closure constant the inliner reads).  ``pow(a, b, mod)`` works on ints
    only and has no derivative; the other calls pass no ``mod``, and its tests fold away."""

    @defrule(power, pure=not inplace)
    def pow_rule(a, b, *mod):
        # (``pow(a, b, None)`` is ``a ** b``: the mod a wrapper of ``pow`` passes on)
        modular = len(mod) > 0 and mod[0] is not None
        a0 = _snapshot(a) if inplace else a
        y = power(a, b, *mod)
        y0 = _snapshot(y) if inplace else y

        def pow_pullback(y_bar):
            if modular:
                return None, None, None
            if isinstance(y, float):
                if b == 0:
                    a_bar = None
                elif a0 == 0 and b < 1:
                    a_bar = y_bar * (b * math.inf)
                else:
                    a_bar = y_bar * (b * a0 ** (b - 1))
                b_bar = None
                if not isinstance(b, int):
                    b_bar = y_bar * (_log_base(a0) * y0)
            else:
                y_shape = _shape(y)
                # (b == 0) bumps the exponent to 0 where b == 0, so 0 * 0**-1 never makes a NaN.
                a_bar = _sum_to(y_bar * (b * a0 ** (b - 1 + (b == 0))), _shape(a0), y_shape)
                b_bar = None
                if not isinstance(b, int):
                    b_bar = _sum_to(y_bar * (_log_base(a0) * y0), _shape(b), y_shape)
            if len(mod) > 0:
                return a_bar, b_bar, None
            return a_bar, b_bar

        def pow_differential(a_dot, b_dot, *mod_dot):
            if modular:
                return None
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
                return a_term
            if a_term is None:
                return b_dot * (_log_base(a0) * y0)
            return a_term + b_dot * (_log_base(a0) * y0)

        return y, pow_pullback, pow_differential


_pow_rules(operator.pow)
_pow_rules(operator.ipow, True)
# A float exponent (both partials), a negative base to an int power (no exponent adjoint),
# a positive base to an array of exponents (broadcast either way), an array of bases of
# both signs to an int power.
cases(operator.pow, (1.5, 2.2), (-1.5, 3), (_A23 + 2.0, _B3), (1.5, _A23), (_A23, 3),
      (_A23 + 2.0, 0.5))
cases(operator.ipow, (1.5, 2.2), (-1.5, 3), (_A23 + 2.0, _B3), (_A23, 3), (_A23 + 2.0, 0.5))


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
# covers 1-D, 2-D and stacked (N-D) operands and batched tangents.  ``a @= b`` keeps
# ``a``'s shape (both are matrices).
# --------------------------------------------------------------------------------------


def _matmul_rules(matmul, inplace):
    @defrule(matmul, pure=not inplace)
    def matmul_rule(a, b):
        a0 = _snapshot(a) if inplace else a
        y = matmul(a, b)
        a_shape = _shape(a0)
        b_shape = _shape(b)
        y_shape = _shape(y)
        stack = y_shape[: len(y_shape) - (len(a_shape) > 1) - (len(b_shape) > 1)]

        def matmul_pullback(y_bar):
            a2 = a0
            b2 = b
            g = y_bar
            if len(b_shape) == 1:
                b2 = _unsqueeze(b, -1)
                g = _unsqueeze(g, -1)
            if len(a_shape) == 1:
                a2 = _unsqueeze(a0, -2)
                g = _unsqueeze(g, -2)
            a2_shape = _shape(a2)
            b2_shape = _shape(b2)
            # Where the sum of a product is over one term (an outer product: ``h @ w`` for
            # a column ``w``), the broadcast product is the same numbers, made faster.
            if b2_shape[-1] == 1:
                a_bar = _sum_to(g * _mT(b2), a2_shape, stack + a2_shape[-2:])
            else:
                a_bar = _sum_to(g @ _mT(b2), a2_shape, stack + a2_shape[-2:])
            if a2_shape[-2] == 1:
                b_bar = _sum_to(_mT(a2) * g, b2_shape, stack + b2_shape[-2:])
            else:
                b_bar = _sum_to(_mT(a2) @ g, b2_shape, stack + b2_shape[-2:])
            if len(a_shape) == 1:
                a_bar = _squeeze(a_bar, -2)
            if len(b_shape) == 1:
                b_bar = _squeeze(b_bar, -1)
            return a_bar, b_bar

        def matmul_differential(a_dot, b_dot):
            a2 = a0
            b2 = b
            if len(a_shape) == 1:
                a2 = _unsqueeze(a0, -2)
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
                    return None
                y_dot = a2 @ b_dot
            elif b_dot is None:
                y_dot = a_dot @ b2
            else:
                y_dot = a_dot @ b2 + a2 @ b_dot
            if len(a_shape) == 1:
                y_dot = _squeeze(y_dot, -2)
            if len(b_shape) == 1:
                y_dot = _squeeze(y_dot, -1)
            return y_dot

        return y, matmul_pullback, matmul_differential


_matmul_rules(operator.matmul, False)
_matmul_rules(operator.imatmul, True)
# Matrix @ matrix, matrix @ vector (a column: the outer-product branch), vector @ matrix
# (a row: the other one), vector @ vector, and a stack of matrices @ a vector.
cases(operator.matmul, (_A23, _Q33), (_A23, _B3), (_B3, _A23.T), (_B3, _Q33[0]),
      (numpy.stack([_A23, _A23[::-1]]), _B3))
cases(operator.imatmul, (_A23, _Q33))


# Sequence concatenation spelled as a function: the same maths as ``+`` on sequences.
_alias(operator.concat, operator.add)
_alias(operator.iconcat, operator.iadd)
cases(operator.concat, ([0.5, 1.5], [2.0]), ((0.5,), (1.5, 2.0)))
cases(operator.iconcat, ([0.5, 1.5], [2.0]), ([0.5], (1.5, 2.0)))

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
_alias(runtime.add_floats, operator.add)
mark_pure(runtime.add_floats)
cases(runtime.add_floats, (0.5, 2.0), (-1.5, 0.25))


# ``runtime.nonzero(a, like)`` materialises a zero adjoint in generated pullbacks: the
# identity in ``a`` (``like`` gives only a shape), so differentiated pullbacks pass through.
deflinear(runtime.nonzero, lambda a, like: ans_bar, tangent=lambda a, like: a)
cases(runtime.nonzero, (0.5, 1.0), (_A23, _A23 * 2.0))
# ``runtime.nonzero_tangent(t, x)`` is its kin in generated forward code (a JVP taken inside
# differentiated code is differentiated again): the identity in ``t``.
deflinear(runtime.nonzero_tangent, lambda t, x: ans_bar, tangent=lambda t, x: t)
mark_pure(runtime.nonzero_tangent)
cases(runtime.nonzero_tangent, (0.5, 1.0), (_A23, _A23 * 2.0))


# The helpers of generated forward code that keep a new object's tangent its own, for a JVP
# differentiated again: a copy is the identity in the tangent, and so is ``own_tangent``
# (a copy of ``t`` or ``t`` itself; its tangent a copy, which is never another's). A rule,
# not a definition inlined: the object it returns is then one, not one of two a later
# write into it could not tell apart in reverse mode.
deflinear(runtime.tangent_copy, lambda t: ans_bar, tangent=lambda t: runtime.tangent_copy(t))
cases(runtime.tangent_copy, (0.5,), (_A23,), ([0.5, 1.5],))
deflinear(runtime.own_tangent, lambda t, *inputs: ans_bar,
          tangent=lambda t, *inputs: runtime.tangent_copy(t))

cases(runtime.own_tangent, (_A23, _A23), (0.5, 1.5, 0.5))
