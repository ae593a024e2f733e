"""Derivative rules for builtins: abs, min, max, sum, pow, float and divmod.

Containers (``list``, ``tuple``, ``dict``, ``zip``, ``enumerate``, ...) are not here:
the compiler handles them.  Sequence adjoints have the type (tuple or list) and
length of the argument, with ``None`` for entries whose adjoint is zero.  As in
``rules/operator.py``, tangents and cotangents may carry leading batch axes and
only meet primal values through infix operators and the linear helpers.
"""

from __future__ import annotations

import builtins
import math

import numpy

from wengert.rules.operator import _broadcast_to, _log_base, _shape, _sum_to, abs_jvp, abs_vjp
from wengert.rules.registry import defjvp, defvjp, mark_pure, nondifferentiable

# abs(x) is operator.abs(x): the same rules (slope sign(x), 0 at 0).
defvjp(builtins.abs)(abs_vjp)
defjvp(builtins.abs)(abs_jvp)


# --------------------------------------------------------------------------------------
# min and max: the adjoint goes to the extreme that Python returns, the first one.
# --------------------------------------------------------------------------------------


@defvjp(builtins.max)
def max_vjp(*args, **kwargs):
    if len(kwargs) > 0:
        raise TypeError("wengert: the derivative of max() does not support key= or default=;"
                        " select the element first, then differentiate it")
    if len(args) == 1:
        xs = args[0]
        if isinstance(xs, numpy.ndarray):
            raise TypeError("wengert: the derivative of max() over an array is not supported;"
                            " use numpy.max")
        if not isinstance(xs, (list, tuple)):
            xs = list(xs)  # a one-shot iterable: keep its items
    else:
        xs = args
    y = max(xs)
    # Python keeps the first of equal maxima: replay its comparisons.
    best = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[best]:
            best = i

    def max_pullback(y_bar):
        if len(args) == 1:
            xs_bar = [y_bar if i == best else None for i in range(len(xs))]
            if isinstance(xs, tuple):
                xs_bar = tuple(xs_bar)
            return (xs_bar,)
        return tuple(y_bar if i == best else None for i in range(len(args)))

    return y, max_pullback


@defjvp(builtins.max)
def max_jvp(*args, **kwargs):
    if len(kwargs) > 0:
        raise TypeError("wengert: the derivative of max() does not support key= or default=;"
                        " select the element first, then differentiate it")
    if len(args) == 1:
        xs = args[0]
        if isinstance(xs, numpy.ndarray):
            raise TypeError("wengert: the derivative of max() over an array is not supported;"
                            " use numpy.max")
        if not isinstance(xs, (list, tuple)):
            xs = list(xs)
    else:
        xs = args
    y = max(xs)
    best = 0
    for i in range(1, len(xs)):
        if xs[i] > xs[best]:
            best = i

    def max_differential(*args_dot):
        if len(args) == 1:
            if args_dot[0] is None:
                return None
            return args_dot[0][best]
        return args_dot[best]

    return y, max_differential


@defvjp(builtins.min)
def min_vjp(*args, **kwargs):
    if len(kwargs) > 0:
        raise TypeError("wengert: the derivative of min() does not support key= or default=;"
                        " select the element first, then differentiate it")
    if len(args) == 1:
        xs = args[0]
        if isinstance(xs, numpy.ndarray):
            raise TypeError("wengert: the derivative of min() over an array is not supported;"
                            " use numpy.min")
        if not isinstance(xs, (list, tuple)):
            xs = list(xs)
    else:
        xs = args
    y = min(xs)
    best = 0
    for i in range(1, len(xs)):
        if xs[i] < xs[best]:
            best = i

    def min_pullback(y_bar):
        if len(args) == 1:
            xs_bar = [y_bar if i == best else None for i in range(len(xs))]
            if isinstance(xs, tuple):
                xs_bar = tuple(xs_bar)
            return (xs_bar,)
        return tuple(y_bar if i == best else None for i in range(len(args)))

    return y, min_pullback


@defjvp(builtins.min)
def min_jvp(*args, **kwargs):
    if len(kwargs) > 0:
        raise TypeError("wengert: the derivative of min() does not support key= or default=;"
                        " select the element first, then differentiate it")
    if len(args) == 1:
        xs = args[0]
        if isinstance(xs, numpy.ndarray):
            raise TypeError("wengert: the derivative of min() over an array is not supported;"
                            " use numpy.min")
        if not isinstance(xs, (list, tuple)):
            xs = list(xs)
    else:
        xs = args
    y = min(xs)
    best = 0
    for i in range(1, len(xs)):
        if xs[i] < xs[best]:
            best = i

    def min_differential(*args_dot):
        if len(args) == 1:
            if args_dot[0] is None:
                return None
            return args_dot[0][best]
        return args_dot[best]

    return y, min_differential


# --------------------------------------------------------------------------------------
# sum(iterable[, start]): every entry (and start) gets the cotangent, summed back to
# its own shape where entries were broadcast.  sum over an array adds its rows.
# --------------------------------------------------------------------------------------


@defvjp(builtins.sum)
def sum_vjp(xs, *start):
    if not isinstance(xs, (list, tuple, numpy.ndarray)):
        xs = list(xs)  # a one-shot iterable: keep its items
    if len(start) == 0:
        y = sum(xs)
    else:
        y = sum(xs, start[0])

    def sum_pullback(y_bar):
        if isinstance(xs, numpy.ndarray):
            row = _shape(xs)[1:]
            xs_bar = _broadcast_to(_sum_to(y_bar, row, _shape(y)), row, _shape(xs))
        elif isinstance(y, float):
            xs_bar = [y_bar for x in xs]
        else:
            xs_bar = [_sum_to(y_bar, _shape(x), _shape(y)) for x in xs]
        if isinstance(xs, tuple):
            xs_bar = tuple(xs_bar)
        if len(start) == 0:
            return (xs_bar,)
        return xs_bar, _sum_to(y_bar, _shape(start[0]), _shape(y))

    return y, sum_pullback


@defjvp(builtins.sum)
def sum_jvp(xs, *start):
    if not isinstance(xs, (list, tuple, numpy.ndarray)):
        xs = list(xs)
    if len(start) == 0:
        y = sum(xs)
    else:
        y = sum(xs, start[0])

    def sum_differential(xs_dot, *start_dot):
        y_dot = None
        if xs_dot is not None:
            if isinstance(xs, numpy.ndarray):
                row = _shape(xs)[1:]
                y_dot = _broadcast_to(_sum_to(xs_dot, row, _shape(xs)), row, _shape(y))
            else:
                for i in range(len(xs)):
                    if xs_dot[i] is not None:
                        term = _broadcast_to(xs_dot[i], _shape(xs[i]), _shape(y))
                        if y_dot is None:
                            y_dot = term
                        else:
                            y_dot = y_dot + term
        if len(start_dot) > 0 and start_dot[0] is not None:
            term = _broadcast_to(start_dot[0], _shape(start[0]), _shape(y))
            if y_dot is None:
                y_dot = term
            else:
                y_dot = y_dot + term
        return y_dot

    return y, sum_differential


# --------------------------------------------------------------------------------------
# pow(base, exp[, mod]): two arguments as operator.pow (JAX's conventions, see
# rules/operator.py); the three-argument form works on ints only and has no derivative.
# --------------------------------------------------------------------------------------


@defvjp(builtins.pow)
def pow_vjp(a, b, *mod):
    if len(mod) > 0:
        y = pow(a, b, mod[0])
    else:
        y = pow(a, b)

    def pow_pullback(y_bar):
        if len(mod) > 0:
            return None, None, None
        if isinstance(y, float):
            if b == 0:
                a_bar = None
            elif a == 0 and b < 1:
                a_bar = y_bar * (b * math.inf)
            else:
                a_bar = y_bar * (b * a ** (b - 1))
            b_bar = None
            if not isinstance(b, int):
                b_bar = y_bar * (_log_base(a) * y)
        else:
            y_shape = _shape(y)
            a_bar = _sum_to(y_bar * (b * a ** (b - 1 + (b == 0))), _shape(a), y_shape)
            b_bar = None
            if not isinstance(b, int):
                b_bar = _sum_to(y_bar * (_log_base(a) * y), _shape(b), y_shape)
        return a_bar, b_bar

    return y, pow_pullback


@defjvp(builtins.pow)
def pow_jvp(a, b, *mod):
    if len(mod) > 0:
        y = pow(a, b, mod[0])
    else:
        y = pow(a, b)

    def pow_differential(a_dot, b_dot, *mod_dot):
        if len(mod) > 0:
            return None
        if isinstance(y, float):
            if a_dot is None or b == 0:
                a_term = None
            elif a == 0 and b < 1:
                a_term = a_dot * (b * math.inf)
            else:
                a_term = a_dot * (b * a ** (b - 1))
        else:
            y_shape = _shape(y)
            a_dot = _broadcast_to(a_dot, _shape(a), y_shape)
            b_dot = _broadcast_to(b_dot, _shape(b), y_shape)
            a_term = None
            if a_dot is not None:
                a_term = a_dot * (b * a ** (b - 1 + (b == 0)))
        if b_dot is None:
            y_dot = a_term
        elif a_term is None:
            y_dot = b_dot * (_log_base(a) * y)
        else:
            y_dot = a_term + b_dot * (_log_base(a) * y)
        return y_dot

    return y, pow_differential


# --------------------------------------------------------------------------------------
# float(x) and divmod(a, b).
# --------------------------------------------------------------------------------------


@defvjp(builtins.float)
def float_vjp(x):
    # The identity on floats (a derivative-free conversion for ints and strings,
    # which are never active).
    return float(x), lambda y_bar: (y_bar,)


@defjvp(builtins.float)
def float_jvp(x):
    return float(x), lambda x_dot: x_dot


@defvjp(builtins.divmod)
def divmod_vjp(a, b):
    # (q, r) with q == a // b piecewise constant and r == a - q * b.
    y = divmod(a, b)
    q = y[0]

    def divmod_pullback(y_bar):
        r_bar = y_bar[1]
        if r_bar is None:
            return None, None
        if isinstance(q, float):
            return r_bar, -r_bar * q
        r_shape = _shape(y[1])
        return _sum_to(r_bar, _shape(a), r_shape), _sum_to(-r_bar * q, _shape(b), r_shape)

    return y, divmod_pullback


@defjvp(builtins.divmod)
def divmod_jvp(a, b):
    y = divmod(a, b)
    q = y[0]

    def divmod_differential(a_dot, b_dot):
        if not isinstance(q, float):
            r_shape = _shape(y[1])
            a_dot = _broadcast_to(a_dot, _shape(a), r_shape)
            b_dot = _broadcast_to(b_dot, _shape(b), r_shape)
        if a_dot is None:
            if b_dot is None:
                r_dot = None
            else:
                r_dot = -b_dot * q
        elif b_dot is None:
            r_dot = a_dot
        else:
            r_dot = a_dot - b_dot * q
        return None, r_dot

    return y, divmod_differential


mark_pure(builtins.abs, builtins.min, builtins.max, builtins.sum, builtins.pow, builtins.float,
          builtins.divmod)

# int() and round() cut the derivative of an active float: worth a warning.
nondifferentiable(builtins.int, builtins.round, warn=True, pure=True)
nondifferentiable(
    builtins.len, builtins.range, builtins.bool, builtins.isinstance, builtins.issubclass,
    builtins.str, builtins.repr, builtins.format, builtins.hash, builtins.id, builtins.type,
    builtins.callable, builtins.ord, builtins.chr, builtins.bin, builtins.oct, builtins.hex,
    warn=False, pure=True,
)
