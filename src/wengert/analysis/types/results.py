"""What a call gives: the result type of a builtin, an operator, a ``math`` or NumPy
function from the types of its arguments (``None``: unknown), and the shapes NumPy gives
(broadcasting, ``@``), for :mod:`~wengert.analysis.types.infer`."""

from __future__ import annotations

import builtins
import itertools
import operator
from collections.abc import Mapping
from typing import Any

import numpy

from wengert import runtime
from wengert.analysis.types.lattice import (
    _INT_FLOAT,
    FLOAT_OR_FLOAT64,
    INT_OR_FLOAT,
    ArrayOf,
    ListOf,
    OneOf,
    Type,
    array_of,
    join,
    plain,
)
from wengert.ir import nodes as n

_INTS = (bool, int)


#: Types of values whose NumPy shape is ``()``.
_SCALAR_SHAPED = frozenset({bool, int, float, numpy.float64, numpy.float32, numpy.int64,
                      FLOAT_OR_FLOAT64})


#: Types a ``numpy.float64`` computes with to give a ``numpy.float64``.
_F64_PARTNERS = (bool, int, float, numpy.float64, numpy.float32, numpy.int64)


#: Index types that select one entry along an axis (``True`` adds an axis instead).
_INDEX_INTS = (int, numpy.int64, numpy.intp, numpy.int32)


_NUMBERS = (bool, int, float)


#: Numbers an in-place operator makes a new one of (``x += 1`` changes no object).
_IMMUTABLE_NUMBERS = (bool, int, float, complex, numpy.float64, numpy.float32, numpy.int64)


#: Types whose comparisons always give a ``bool`` (or raise), whatever the other operand.
_PLAIN = frozenset({bool, int, float, complex, str, bytes, type(None), tuple, list, dict, set,
                    frozenset, range})


_ARITH = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.iadd, operator.isub, operator.imul,
          operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow,
          runtime.add_floats}


_ADDS = {operator.add, operator.iadd, operator.concat, operator.iconcat, runtime.add_floats}


_MULS = {operator.mul, operator.imul}


_DIVS = {operator.truediv, operator.itruediv}


_POWS = {operator.pow, operator.ipow}


_MODS = {operator.mod, operator.imod}


_UNARY = {operator.neg, operator.pos, operator.abs, builtins.abs}


_RICH = {operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge}


_ALWAYS_BOOL = {operator.is_, operator.is_not, operator.not_, operator.truth,
                operator.contains, runtime.contained_in, runtime.not_contained_in}


#: Builtins whose result type does not depend on their arguments.
_BUILTIN_RESULT: dict[Any, type] = {
    float: float, int: int, bool: bool, str: str, bytes: bytes, complex: complex, len: int,
    range: range, slice: slice, isinstance: bool, issubclass: bool, callable: bool,
    hasattr: bool, list: list, tuple: tuple, dict: dict, set: set, frozenset: frozenset,
    zip: zip, enumerate: enumerate, map: map, filter: filter, sorted: list, repr: str,
    format: str, chr: str, ord: int, id: int, hash: int,
}


_REVERSED = {list: type(reversed([])), tuple: reversed, range: type(reversed(range(0)))}


_MATH_INT = frozenset({"factorial", "gcd", "lcm", "isqrt", "comb", "perm"})


_MATH_ROUNDING = frozenset({"floor", "ceil", "trunc"})  # int for real numbers only


_MATH_BOOL = frozenset({"isnan", "isinf", "isfinite", "isclose"})


_MATH_TUPLE = frozenset({"frexp", "modf"})


_MATH_UNKNOWN = frozenset({"prod", "sumprod"})  # the type of their items


#: NumPy functions whose result may be a NumPy scalar rather than an array (reductions,
#: contractions, determinants) even for array arguments.
_NUMPY_MAY_REDUCE = frozenset({
    "sum", "mean", "prod", "max", "min", "amax", "amin", "ptp", "std", "var", "average",
    "median", "dot", "vdot", "inner", "trace", "norm", "det", "einsum", "any", "all",
    "argmax", "argmin", "count_nonzero", "nansum", "nanmean", "nanmax", "nanmin", "matmul",
    "logdet", "cond", "matrix_rank", "item", "tensordot", "logsumexp", "percentile",
    "quantile", "searchsorted", "slogdet", "shape", "ndim", "size", "isscalar", "result_type",
    "allclose", "array_equal", "iscomplexobj", "isrealobj",
})


def _numpy(fn: Any, args: list[Type]) -> Type:
    """The type of a NumPy function's result: an array when an argument is one (or the
    function builds arrays), unless it may reduce to a scalar."""
    name = getattr(fn, "__name__", "")
    if name in _NUMPY_MAY_REDUCE:
        return None
    if isinstance(fn, numpy.ufunc):
        if any(t is numpy.ndarray for t in args):
            return numpy.ndarray if fn.nout == 1 else tuple
        return None  # NumPy scalars of the arguments' types
    if name in _NUMPY_SEVERAL:
        return None
    if any(t is numpy.ndarray for t in args) or name in _NUMPY_BUILDERS:
        return numpy.ndarray
    return None


#: NumPy functions that build a new array whatever their arguments.
_NUMPY_BUILDERS = frozenset({
    "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "identity",
    "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "diag",
    "outer", "kron", "copy", "tri", "triu", "tril",
})


#: NumPy functions returning a list or tuple of arrays (one array for one argument).
_NUMPY_SEVERAL = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit",
                            "broadcast_arrays", "meshgrid", "atleast_1d", "atleast_2d",
                            "atleast_3d"})


def _hashable_get(table: Mapping[Any, Any], key: Any) -> Any:
    try:
        return table.get(key)
    except TypeError:
        return None


def _numpy_scalar(t: Type) -> bool:
    return t is not None and issubclass(t, (numpy.floating, numpy.integer))


def _arith(fn: Any, a: Type, b: Type) -> Type:
    """The type of ``fn(a, b)`` for a binary arithmetic operator."""
    if fn in _MODS and a in (str, bytes):
        return a  # printf-style formatting, whatever the right operand
    if (a is numpy.ndarray or b is numpy.ndarray) and a not in (str, bytes):
        return numpy.ndarray  # (bytes + array concatenates the array's buffer)
    if a in _INTS and b in _INTS:
        if fn in _DIVS:
            return float
        # (``2 ** -1`` is a float, ``(-1) ** j`` an int: one of the two, which a product
        # with a float makes a float)
        return INT_OR_FLOAT if fn in _POWS else int
    if a in _NUMBERS and b in _NUMBERS:
        return float
    if (a is numpy.float64 and b in _F64_PARTNERS) or (b is numpy.float64 and a in _F64_PARTNERS):
        return numpy.float64  # (a float subclass: float's operators defer to its own)
    if a is b and _numpy_scalar(a):
        return numpy.float64 if fn in _DIVS and issubclass(a, numpy.integer) else a
    if fn in _ADDS and a is b and a in (list, tuple, str, bytes):
        return a
    if fn in _MULS:
        if a in (list, tuple, str, bytes) and b in _INTS:
            return a
        if b in (list, tuple, str, bytes) and a in _INTS:
            return b
    return None


def _unary(a: Type) -> Type:
    if a in _INTS:
        return int
    if a is float or a is numpy.ndarray or _numpy_scalar(a):
        return a
    return None


def _math(name: str, args: list[Type]) -> Type:
    if name in _MATH_BOOL:
        return bool
    if name in _MATH_INT:
        return int
    if name in _MATH_ROUNDING:
        # math.floor(x) calls x.__floor__, which may return anything for other types.
        return int if args and args[0] in _NUMBERS else None
    if name in _MATH_TUPLE:
        return tuple
    if name in _MATH_UNKNOWN:
        return None
    return float


def _builtin(fn: Any, args: list[Type], simple: bool) -> Type:
    """The type of a builtin call; ``simple`` when it has positional arguments only."""
    if fn is round and simple:
        if len(args) == 1:
            return int if args[0] in _NUMBERS else None
        if len(args) == 2 and args[0] in (int, float) and args[1] in _INTS:
            return args[0]
        return None
    if fn in (min, max):
        if simple and len(args) >= 2 and all(t is args[0] for t in args):
            return args[0]
        if simple and len(args) >= 2 and all(t in _INT_FLOAT for t in args):
            return INT_OR_FLOAT  # (``min(a, 3)``: the float or the int, whichever is less)
        return None
    if fn is reversed:
        return _REVERSED.get(args[0]) if simple and len(args) == 1 else None
    if fn is pow:
        return _arith(operator.pow, args[0], args[1]) if simple and len(args) == 2 else None
    return _hashable_get(_BUILTIN_RESULT, fn)


def _one_known(ts: list[Type]) -> Type:
    """The one type among ``ts`` other than unknown, or ``None`` (ints and floats: a
    number; lists of known and unknown items: a list)."""
    known = {t for t in ts if t is not None}
    if len(known) > 1 and known <= set(_INT_FLOAT):
        return INT_OR_FLOAT  # (a field holding ints and floats both: a number)
    if len(known) > 1 and all(t is list or isinstance(t, ListOf) for t in known):
        return list  # (a list of floats passed in, another list put there: a list)
    return known.pop() if len(known) == 1 else None


def _plain_class(t: type) -> bool:
    return type(t) is type and t.__module__ != "builtins" and t.__new__ is object.__new__


def _class_call(cls: type) -> Type:
    # Only a plain class is sure to return an instance of itself (``Path()`` builds a
    # ``PosixPath``, ``numpy.float64(array)`` returns an array).
    if type(cls) is type and cls.__new__ is object.__new__:
        return cls
    return None


def _call(fn: Any, args: list[Type], simple: bool) -> Type:
    """The result type of ``fn(*args)`` where the callee ``fn`` is a known object."""
    try:
        hash(fn)
    except TypeError:
        return None  # not a function or class these tables know
    if fn in _ALWAYS_BOOL:
        return bool
    if fn in _RICH:
        # User __eq__, NumPy scalars (numpy.bool_) and arrays decide for themselves.
        return bool if len(args) == 2 and all(t in _PLAIN for t in args) else None
    if fn in (operator.matmul, operator.imatmul) and simple and len(args) == 2 and \
            all(t is numpy.ndarray for t in args):
        # An array, or for two vectors a NumPy scalar: like the elementwise operators on
        # 0-d arrays, one the rules' array branches handle as they handle an array.
        return numpy.ndarray
    if fn in _ARITH or fn in (operator.concat, operator.iconcat):
        return _arith(fn, args[0], args[1]) if simple and len(args) == 2 else None
    if fn is runtime.make_namedtuple:
        return None  # the class is an argument: the call site knows it (see ``call``)
    if fn is runtime.snapshot and simple and len(args) == 1:
        return args[0]  # a copy of a container, the value itself otherwise
    if fn is runtime.nonzero and simple and len(args) == 2 and args[1] is numpy.ndarray and \
            args[0] in (None, numpy.ndarray, type(None)):
        return numpy.ndarray  # an array's adjoint, or zeros shaped like it
    if fn is runtime.add_adjoint and simple and len(args) == 2:
        # Adjoints of one value: ``None`` is a zero, two numbers add like ``+``.
        a, b = args
        if a is type(None) or b is type(None):
            return b if a is type(None) else a
        return _arith(operator.add, a, b) if a is b and a in (float, int) else None
    if fn in _UNARY:
        return _unary(args[0]) if simple and len(args) == 1 else None
    if getattr(fn, "__module__", None) == "math" and callable(fn):
        return _math(getattr(fn, "__name__", ""), args)
    if getattr(fn, "__module__", None) == "builtins":
        return _builtin(fn, args, simple)
    if isinstance(fn, numpy.ufunc) or not isinstance(fn, type) and \
            str(getattr(fn, "__module__", None)).startswith("numpy"):
        return _numpy(fn, args) if simple else None
    if isinstance(fn, type):
        return _class_call(fn)
    if str(getattr(fn, "__module__", "")).startswith("wengert.rules."):
        defines = getattr(fn, "__wengert_defines__", None)
        if defines is not None:  # (a Python definition of ``np.array``: what it returns)
            return _call(defines, args, simple)
        from wengert.rules import registry  # the rule tables import this module's users

        rule = registry.lookup(fn)
        if rule is not None and rule.array_result and simple and \
                (numpy.ndarray in args or list in args):
            # (a list given to a NumPy primitive is read as an array: ``np.outer([x, y], w)``)
            return numpy.ndarray
        if rule is not None and rule.nondifferentiable:
            # The static helpers of the NumPy definitions say what they return.
            ann = str(getattr(fn, "__annotations__", {}).get("return", ""))
            return _ANNOTATED.get(ann.split("[")[0])
    return None


def _lifted(fn: Any, args: list[Type], simple: bool) -> Type:
    """:func:`_call` where arguments may be unions: the join of its answers for every
    choice of their members."""
    unions = [k for k, t in enumerate(args) if isinstance(t, OneOf)]
    if not unions:
        return _call(fn, args, simple)
    if len(unions) > 3:
        return None
    out: Type = None
    for k, choice in enumerate(itertools.product(*(args[i].members for i in unions))):
        trial = list(args)
        for i, m in zip(unions, choice):
            trial[i] = m
        t = _call(fn, trial, simple)
        if t is None:
            return None
        if k == 0:
            out = t
        elif INT_OR_FLOAT in args and {out, t} <= set(_INT_FLOAT):
            # (ints and floats both, from numbers of either kind: a number too)
            out = out if out == t else INT_OR_FLOAT
        else:
            out = join(out, t)
    return out


#: NumPy functions making an array of the dtype and number of axes of their first argument.
_LIKE = frozenset({numpy.zeros_like, numpy.ones_like, numpy.empty_like, numpy.full_like,
                   numpy.copy})


#: Numbers that computing elementwise with a float64 array keeps it float64.
_REAL_SCALARS = (bool, int, float, numpy.float64, FLOAT_OR_FLOAT64)


_ELEMENTWISE = frozenset({operator.add, operator.sub, operator.mul, operator.truediv,
                          operator.pow, operator.neg, operator.pos, operator.abs,
                          operator.iadd, operator.isub, operator.imul, operator.itruediv,
                          operator.ipow, operator.mod, operator.floordiv, abs})


def _join_full(a: Any, b: Any) -> Any:
    """:func:`join` that keeps an :class:`ArrayOf` (or a :class:`ListOf`) both sides agree
    on."""
    if a is b or a == b and isinstance(a, ListOf):
        return a
    if isinstance(a, ArrayOf) and isinstance(b, ArrayOf) and a.dtype is b.dtype and \
            a.ndim == b.ndim:
        return array_of(a.dtype, a.ndim)  # (shapes that differ: the axes are known)
    return join(plain(a), plain(b))


def _matmul_ndim(a: int, b: int) -> int | None:
    """The number of axes of ``x @ y`` for ``x``, ``y`` of ``a``, ``b`` axes (``None``:
    an error)."""
    if a == 0 or b == 0:
        return None
    if a == 1 or b == 1:
        return a + b - 2
    return max(a, b)


def _broadcast_shape(shapes: list[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """The shape arrays of ``shapes`` broadcast to (``None``: one is unknown, or they do
    not broadcast, which the operation itself reports when it runs)."""
    if any(s is None for s in shapes):
        return None
    try:
        return tuple(numpy.broadcast_shapes(*shapes))  # type: ignore[arg-type]
    except ValueError:
        return None


def _matmul_shape(a: tuple[int, ...] | None, b: tuple[int, ...] | None
                  ) -> tuple[int, ...] | None:
    """The shape of ``x @ y`` for ``x``, ``y`` of shapes ``a``, ``b`` (``None``: unknown,
    or an error the product reports when it runs)."""
    if a is None or b is None or not a or not b:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        return None
    stack = _broadcast_shape([a2[:-2], b2[:-2]])
    if stack is None:
        return None
    return stack + a2[-2:-1] * (len(a) > 1) + b2[-1:] * (len(b) > 1)


def _float_elementwise(fn: Any) -> bool:
    """Whether ``fn`` computes entry by entry, float64 entries giving float64 ones (a
    broadcasting operator, or a ufunc with a float64 loop: not ``isnan``, not ``@``)."""
    if isinstance(fn, numpy.ufunc):
        return fn.nout == 1 and "d" * fn.nin + "->d" in fn.types
    return fn in _ELEMENTWISE


#: NumPy functions making a float64 array of a shape given as their one argument.
_FLOAT_MAKERS = frozenset({numpy.zeros, numpy.ones, numpy.empty})


#: Return annotations of wengert's own helpers, as types.
_ANNOTATED = {"int": int, "bool": bool, "float": float, "str": str, "tuple": tuple,
              "list": list}


def _entry_shape(shape: tuple[int, ...] | None, parts: list[Any]) -> tuple[int, ...] | None:
    """The shape of ``x[parts]`` for ``x`` of ``shape`` where each part is a constant int,
    ``None`` or ``:`` (``None``: another index, or ``shape`` unknown)."""
    if shape is None:
        return None
    out: list[int] = []
    axis = 0
    for p in parts:
        if p is None:
            out.append(1)
        elif type(p) is int and axis < len(shape) and -shape[axis] <= p < shape[axis]:
            axis += 1
        elif p == slice(None) and axis < len(shape):
            out.append(shape[axis])
            axis += 1
        else:
            return None
    return tuple(out) + shape[axis:]


def _for_item(t: Type) -> Type:
    if t is range or t is _REVERSED[range]:
        return int  # (``for i in reversed(range(n))`` too)
    if t is str:
        return str
    if t in (enumerate, zip):
        return tuple
    return None


def _diverges(region: n.Region) -> bool:
    """Whether ``region`` always raises, so its yield is never reached."""
    return any(isinstance(op, n.Raise) for op in region.ops)
