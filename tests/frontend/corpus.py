# ruff: noqa
"""A corpus of ordinary Python functions for the frontend acceptance tests.

Every function here is a real module-level function (or a method, closure,
lambda or ``functools.partial`` built from one), so ``inspect.getsource``
works on it. Each is registered with example inputs:

* ``case(fn, (1.0, 2.0), Args(1.0, scale=3.0), ...)`` after the definition
  (a plain tuple is positional arguments; :class:`Args` carries keywords);
* ``case_of(name, make, ...)`` when a fresh callable is needed for each call
  (bound methods whose ``self`` is mutated, closures built by a factory);
* ``@register(...)`` as a decorator (used on a couple of functions to check
  that the frontend ignores decorators that returned the function unchanged).

The tests compare each function with ``wengert.api.primal(fn)`` on every
input: return value, raised exception, printed output, and the mutations left
on the arguments. Keep every function deterministic.
"""

import contextlib
import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------


class Args:
    """One example call: positional and keyword arguments."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [_short_repr(a) for a in self.args]
        parts += [f"{k}={_short_repr(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def _short_repr(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array{list(v.shape)}"
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


@dataclass(frozen=True)
class Case:
    """A corpus entry: ``make()`` returns the callable under test (fresh each time)."""

    name: str
    make: Callable[[], Callable]
    inputs: tuple[Args, ...]


CASES: list[Case] = []
BY_NAME: dict[str, Case] = {}


def _as_args(x: Any) -> Args:
    return x if isinstance(x, Args) else Args(*x)


def case_of(name: str, make: Callable[[], Callable], *inputs: Any) -> None:
    """Register ``make()`` (called once per observation) under ``name``."""
    assert name not in BY_NAME, f"duplicate corpus name {name}"
    assert inputs, name
    c = Case(name, make, tuple(_as_args(i) for i in inputs))
    CASES.append(c)
    BY_NAME[name] = c


def case(fn: Callable, *inputs: Any, name: str | None = None) -> Callable:
    """Register a function with example inputs; returns ``fn`` unchanged."""
    case_of(name or fn.__name__, lambda: fn, *inputs)
    return fn


def register(*inputs: Any) -> Callable[[Callable], Callable]:
    """Decorator form of :func:`case`."""

    def deco(fn: Callable) -> Callable:
        return case(fn, *inputs)

    return deco


def get(name: str) -> Callable:
    """The callable registered under ``name``."""
    return BY_NAME[name].make()


# --------------------------------------------------------------------------
# Helpers used by the corpus (module-level, called from compiled code)
# --------------------------------------------------------------------------

SCALE = 2.5
OFFSET = -1.0
TABLE = {"a": 1.5, "b": -2.0, "c": 10}
PRIMES = (2, 3, 5, 7, 11)


def rec(log, v):
    """Record that ``v`` was evaluated, and return it (for evaluation-order tests)."""
    log.append(v)
    return v


class Box:
    """A small mutable object."""

    def __init__(self, value=0.0, count=0):
        self.value = value
        self.count = count

    def __repr__(self):
        return f"Box({self.value!r}, {self.count!r})"


class Recorder:
    """A context manager that records enter/exit in ``log`` and yields ``value * 10``."""

    def __init__(self, log, value):
        self.log = log
        self.value = value

    def __enter__(self):
        self.log.append(("enter", self.value))
        return self.value * 10

    def __exit__(self, exc_type, exc, tb):
        self.log.append(("exit", self.value, None if exc_type is None else exc_type.__name__))
        return False


@contextlib.contextmanager
def tag(log, name):
    log.append("<" + name + ">")
    yield name.upper()
    log.append("</" + name + ">")


class CorpusError(ValueError):
    """A custom exception raised by corpus functions."""


class Scaler:
    """A class whose bound methods are compiled."""

    def __init__(self, factor, bias=0.5):
        self.factor = factor
        self.bias = bias
        self.total = 0.0
        self.history = []

    def apply(self, x):
        return self.factor * x + self.bias

    def accumulate(self, x):
        self.total += x * self.factor
        self.history.append(x)
        return self.total

    def call_other(self, x):
        return self.apply(x) + self.apply(2 * x)

    def describe(self, prefix="scaler"):
        return f"{prefix}({self.factor:.1f}, bias={self.bias})"


# ==========================================================================
# Operators
# ==========================================================================


def arith_basic(a, b):
    return a + b, a - b, a * b, a / b, -a, +b


case(arith_basic, (3.0, 2.0), (7, 2), (1.5, -0.25), (1.0, 0.0), (4, 0))


def floor_mod(a, b):
    return a // b, a % b, divmod(a, b)


case(floor_mod, (7, 3), (-7, 3), (7.5, -2.0), (5, 0))


def power_ops(x, n):
    return x ** n, 2 ** n, -x ** 2, (-x) ** 2, x ** -1.0, pow(x, n)


case(power_ops, (2.0, 3), (9.0, 2), (-8.0, 1), (1.5, 0), (0.0, 2))


def bitwise_ops(a, b):
    return a & b, a | b, a ^ b, ~a, a << 2, b >> 1, a & b | a ^ ~b


case(bitwise_ops, (12, 10), (-5, 3), (0, 255), (True, 6))


def unary_ops(x, flag):
    return -x, +x, not flag, ~int(x), -(-x), not not flag


case(unary_ops, (2.5, True), (-3.0, 0), (0.0, []), (7.9, "s"))


def operator_precedence(a, b, c):
    return a + b * c - a / c ** 2 % 3, (a + b) * c, a - b - c, a ** b ** 0.5


case(operator_precedence, (1.0, 2.0, 3.0), (2.5, 4.0, -1.5), (0.5, 0.0, 2.0))


def mixed_numeric(a, b):
    z = complex(a, b)
    return a + 1, a * 1.0, z * 2, abs(z), a / 2, b // 1, True + True


case(mixed_numeric, (3, 4), (1.5, -2.0), (0, 0))


def neg_zero(x):
    return -x, 0.0 * -1.0, x * -1, -(x - x)


case(neg_zero, (0.0,), (-0.0,), (2.0,))


def nan_inf(x):
    y = x * float("inf")
    z = y - y
    return y, z, z != z, math.isnan(z), math.isinf(y), float("nan")


case(nan_inf, (0.0,), (1.0,), (-2.0,))


def big_int(n):
    return 2 ** 100 + n, (10 ** 20) // (n + 1), -(3 ** 40) % 7


case(big_int, (0,), (5,), (-3,))


def bool_arith(a, b):
    return True + True, (a > b) + 0, (a > b) * 2.5, sum([a > 0, b > 0, a == b])


case(bool_arith, (1.0, 2.0), (3, 3), (-1, -5))


def matmul_numpy(A, B):
    C = A @ B
    return C, C @ C, A.T @ A


_A23 = np.arange(6.0).reshape(2, 3)
_B32 = np.array([[1.0, -1.0], [0.5, 2.0], [-3.0, 0.25]])
case(matmul_numpy, (_A23, _B32), (np.eye(3), np.eye(3) * 2.0), (_A23, _A23))


def matvec(A, v):
    w = A @ v
    return w, v @ v, float(w @ w)


case(matvec, (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -1.0])),
     (np.diag([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])))


def true_div_int(a, b):
    return a / b, type(a / b).__name__


case(true_div_int, (7, 2), (6, 3), (1, 0))


def string_ops(s, n):
    return s * n, s + "!", s.count("a"), s in "banana", ord(s[0]), "%s-%d" % (s, n)


case(string_ops, ("ab", 3), ("na", 0), ("", 2))


# ==========================================================================
# Comparisons and boolean operators
# ==========================================================================


def compare_all(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


case(compare_all, (1, 2), (2.0, 2), (3.5, -1.0), ("a", "b"), ([1, 2], [1, 3]))


def chained_compare(a, b, c):
    return a < b < c, a <= b == c, a < b > c, 0 <= a < b <= c < 100


case(chained_compare, (1, 2, 3), (1, 2, 2), (3, 2, 1), (0, 5, 5))


def chained_compare_side_effects(log, a, b, c):
    r = rec(log, a) < rec(log, b) < rec(log, c)
    return r, len(log)


case(chained_compare_side_effects, ([], 1, 2, 3), ([], 2, 1, 3), ([], 1, 3, 2))


def identity_membership(x, xs):
    return x in xs, x not in xs, x is None, xs is not None, None in xs


case(identity_membership, (2, [1, 2, 3]), (None, [1, None]), ("b", "abc"), (5, {5: 1}))


def or_default(x):
    return x or []


case(or_default, ([],), ([1, 2],), (0,), ("",), ("a",), (None,), (0.0,))


def and_value(a, b):
    return a and b


case(and_value, (0, 5), (3, 0), ([], "x"), ("y", [1]), (None, 1), (2.5, 3.5))


def bool_mix(a, b, c):
    return a and b or c, not a or b, (a or b) and c, a or b or c, a and b and c


case(bool_mix, (0, 1, 2), (1, 0, []), ("", [], None), (3, 4, 5))


def short_circuit_and(log, a, b):
    return rec(log, a) and rec(log, b)


case(short_circuit_and, ([], 0, 1), ([], 1, 2), ([], [], "x"))


def short_circuit_or(log, a, b):
    return rec(log, a) or rec(log, b)


case(short_circuit_or, ([], 0, 1), ([], 1, 2), ([], "", 0))


def short_circuit_chain(log, a, b, c):
    r = rec(log, a) or rec(log, b) and rec(log, c)
    if rec(log, "cond") and (rec(log, b) or rec(log, c)):
        r = (r, "taken")
    return r


case(short_circuit_chain, ([], 0, 1, 2), ([], 1, 0, 2), ([], 0, 0, 5), ([], 0, 3, 0))


def not_ops(x):
    return not x, not not x, (not x) == (x == 0)


case(not_ops, (0,), (1.5,), ([],), ("x",))


# ==========================================================================
# Conditional expressions, walrus, f-strings
# ==========================================================================


def cond_expr(x):
    return "pos" if x > 0 else "neg" if x < 0 else "zero"


case(cond_expr, (1.0,), (-2,), (0,))


def cond_expr_side_effects(log, c, a, b):
    return rec(log, a) if rec(log, c) else rec(log, b)


case(cond_expr_side_effects, ([], True, 1, 2), ([], 0, 1, 2))


def walrus_basic(xs):
    if (n := len(xs)) > 2:
        return n * 2
    return n


case(walrus_basic, ([1, 2, 3],), ([],), ((1, 2),))


def walrus_in_comprehension(xs):
    ys = [y for x in xs if (y := x * 2) > 3]
    return ys, y


case(walrus_in_comprehension, ([1, 2, 3],), ([5.0, 0.5],), ((1,),))


def walrus_while(data):
    total = 0
    while (v := data.pop()) != 0:
        total += v
    return total, data


case(walrus_while, ([0, 1, 2, 3],), ([5, 0, 7, 0],))


def fstring_basic(name, x):
    return f"{name}: {x}", f"{name!r}", f"{x:.3f}", f"{x!s:>10}|", f"{{x}} {x:+08.2f}"


case(fstring_basic, ("alpha", 3.14159), ("b'c", -2), ("", 1e10))


def fstring_nested_spec(x, width, prec):
    return f"{x:{width}.{prec}f}|", f"{x=}", f"{x!a:<{width}}", f"{'s'} {width * 2:#x}"


case(fstring_nested_spec, (3.14159, 10, 2), (-1.0, 4, 0))


def fstring_expr(xs):
    first = xs[0] if xs else None
    return f"{len(xs)} items, first={first}, sum={sum(xs):g}, sq={[v * v for v in xs]}"


case(fstring_expr, ([1.5, 2.0],), ([],), ((3, 4, 5),))


# ==========================================================================
# Calls
# ==========================================================================


def combine(x, y=1.0, *, scale=2.0):
    return (x + y) * scale


case(combine, (1.0,), (1.0, 3.0), Args(2.0, scale=0.5), Args(y=1.0, x=5.0))


def call_kwargs(a, b):
    return combine(a), combine(a, b), combine(a, y=b, scale=0.5), combine(y=a, x=b)


case(call_kwargs, (1.0, 2.0), (-3, 4))


def call_star_args(xs):
    return combine(*xs), max(*xs, 0), [*map(abs, xs)]


case(call_star_args, ([1.0, 2.0],), ((3,),), ([1.0, 2.0, 3.0],))


def call_star_kwargs(d):
    return combine(1.0, **d), dict(**d, extra=1)


case(call_star_kwargs, ({"y": 2.0},), ({"scale": 3.0, "y": 0.0},), ({"z": 1},))


def varargs(*args, **kwargs):
    return args, sorted(kwargs.items())


case(varargs, (), (1, 2), Args(1, k=3, a="x"))


def call_mixed(a, xs, kw):
    return varargs(a, *xs, k=1, **kw), varargs(*xs, *xs), varargs(**kw, **{"q": 0})


case(call_mixed, (0, [1, 2], {"z": 9}), (1.5, (), {}))


def defaults_positional(x, y=2.0, z=None):
    if z is None:
        z = []
    z.append(x * y)
    return z


case(defaults_positional, (1.0,), (1.0, 3.0), (2.0, 1.0, [5.0]), Args(1.0, z=[0]))


def defaults_kwonly(x, *, scale=3.0, shift=0.5):
    return x * scale + shift


case(defaults_kwonly, (1.0,), Args(1.0, scale=2.0), Args(2.0, shift=-1.0, scale=0.0))


def posonly(a, b, /, c=1):
    return a * 100 + b * 10 + c


case(posonly, (1, 2), (1, 2, 3), Args(4, 5, c=6))


def kwargs_only(**kw):
    return sum(v for v in kw.values()), list(kw)


case(kwargs_only, (), Args(a=1, b=2.5))


# ==========================================================================
# Attributes, subscripts and slices
# ==========================================================================


def attr_access(z):
    return z.real, z.imag, z.conjugate(), (1.5).is_integer(), z.real.hex()


case(attr_access, (3 + 4j,), (2.0,), (-1,))


def numpy_attrs(a):
    return a.shape, a.ndim, a.T, a.sum(), a.dtype.name, a.size, a.T.shape


case(numpy_attrs, (np.arange(6.0).reshape(2, 3),), (np.array([1, 2, 3]),))


def string_methods(s):
    parts = s.split(",")
    return s.upper(), parts, "-".join(parts), s.strip().title(), s.replace(",", ";").lower()


case(string_methods, ("a,b,c",), ("  Hello, World ",), ("",))


def list_indexing(xs):
    return xs[0], xs[-1], xs[1:-1], xs[::2], xs[::-1], xs[-2:], xs[:0], xs[1:], xs[:-1:2]


case(list_indexing, ([1, 2, 3, 4, 5],), ((9.0, 8.0),), ("hello",), ([],))


def list_index_error(xs, i):
    return xs[i]


case(list_index_error, ([1, 2, 3], 1), ([1, 2, 3], -3), ([1, 2, 3], 3), ((), 0))


def string_slicing(s):
    return s[1:4], s[::-1], s[-3:], s[::3], s[len(s) // 2]


case(string_slicing, ("abcdefgh",), ("xyz",))


def numpy_indexing(a):
    return (a[0], a[-1, -1], a[1, 2], a[:, 1], a[..., 0], a[None], a[:, None, 0],
            a[::2, ::-1], a[(0, 1)], a[1:, :2], a[-1])


case(numpy_indexing, (np.arange(12.0).reshape(3, 4),), (np.arange(12).reshape(3, 4) * 2,))


def numpy_bool_mask(a, t):
    return a[a > t], np.where(a > t, a, 0.0), (a > t).sum(), a[[0, -1]]


case(numpy_bool_mask, (np.array([1.0, -2.0, 3.0, 0.5]), 0.75), (np.array([np.nan, 1.0]), 0.0))


def dict_subscript(d, k):
    return d[k], d.get(k + "x", "default"), len(d)


case(dict_subscript, ({"a": 1, "b": 2}, "a"), ({"a": 1}, "z"))


def slice_objects(xs, start, stop, step):
    s = slice(start, stop)
    return xs[start:stop:step], xs[s], xs[start:], xs[:stop], xs[::step]


case(slice_objects, (list(range(10)), 2, 8, 2), (list(range(10)), -3, None, -1),
     ("abcdef", None, 4, 3), ([1, 2], 0, 1, 0))


def slice_assign(xs):
    xs[1:3] = [9, 9, 9]
    xs[-1] = 0
    xs[::2] = [7] * len(xs[::2])
    return len(xs)


case(slice_assign, ([1, 2, 3, 4, 5],), ([1, 2, 3],))


def numpy_setitem(a):
    a[0, :] = 1.0
    a[:, -1] *= 2
    a[a < 0] = 0
    return a.sum()


case(numpy_setitem, (np.array([[-1.0, 2.0], [3.0, -4.0]]),), (np.zeros((3, 3)),))


# ==========================================================================
# Displays and comprehensions
# ==========================================================================


def displays(a, b):
    return (a, b), [a, b], {a: b}, {a, b}, (), [], {}, set(), (a,), [[a], (b,)]


case(displays, (1, 2), ("x", 3.5), (1, 1))


def starred_displays(xs, ys, d):
    return ([*xs, 1], (*xs, *ys), {*xs, 10}, {**d, "k": 1}, {"k": 0, **d},
            [*xs, *ys, *"ab"], (*range(3),), {"a": 1, **d, "b": 2, **{"c": 3}})


case(starred_displays, ([1, 2], (3,), {"k": 5, "z": 0}), ((), [], {}))


def list_comp(xs):
    return [x * 2 for x in xs if x > 0]


case(list_comp, ([1, -2, 3.5],), ([],), ((0, 5),))


def nested_list_comp(n, m):
    grid = [[i * j for j in range(m)] for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i) if (i + j) % 2 == 0 if j > 0]
    return grid, pairs


case(nested_list_comp, (3, 4), (5, 2), (0, 3))


def dict_comp(keys, vals):
    return {k: v for k, v in zip(keys, vals) if v}, {k: i for i, k in enumerate(keys)}


case(dict_comp, (["a", "b", "c"], [1, 0, 3]), ((), ()))


def set_comp(xs):
    return {x % 3 for x in xs}, {(x, -x) for x in xs if x}


case(set_comp, ([1, 2, 3, 4, 5, 6],), ([0, 0],))


def generator_exprs(xs):
    return (sum(x * x for x in xs), any(x > 2 for x in xs), all(x > 0 for x in xs),
            max((abs(x) for x in xs), default=0), tuple(x for x in xs if x),
            sum(x * y for x in xs for y in xs if x != y))


case(generator_exprs, ([1, -3, 2],), ([],), ((0.5, 0.0),))


def genexpr_next(xs):
    return next((x for x in xs if x > 2), None)


case(genexpr_next, ([1, 3, 4],), ([],))


def genexpr_is_lazy(xs):
    g = (x * 10 for x in xs)
    first = next(g)
    return first, list(g)


case(genexpr_is_lazy, ([1, 2, 3],), ((5,),))


def genexpr_short_circuit(log, xs):
    return any(rec(log, x) > 1 for x in xs), all(rec(log, -x) < 0 for x in xs)


case(genexpr_short_circuit, ([], [0, 2, 5, 7]), ([], [3, -1, 2]))


def genexpr_lazy_exception(xs):
    return all(1 / x < 10 for x in xs)


case(genexpr_lazy_exception, ([0.01, 0.0],), ([1.0, 2.0],), ([0.0],))


def comprehension_closure(xs, k):
    offset = k * 2
    return [x + k for x in xs], {x: [x * offset for _ in range(2)] for x in xs}


case(comprehension_closure, ([1, 2], 10), ((), 1))


def comprehension_scope(x):
    ys = [x for x in range(3)]
    return x, ys


case(comprehension_scope, (42,), ("s",))


def comprehension_over_matrix(rows):
    return [sum(r) for r in rows], [[c * 2 for c in r if c] for r in rows], [c for r in rows for c in r]


case(comprehension_over_matrix, ([[1, 2], [0, 3]],), ([],))


# ==========================================================================
# Lambdas
# ==========================================================================


def lambda_sort(pairs):
    return sorted(pairs, key=lambda p: (p[1], -p[0]))


case(lambda_sort, ([(1, 2), (3, 1), (2, 2)],), ([],))


def lambda_local(a):
    f = lambda t, s=2: t * s + a
    return f(1), f(2, 3), (lambda: a * 2)()


case(lambda_local, (1.5,), (-2,))


def lambda_map(xs):
    return list(map(lambda v: v + 1, xs)), list(filter(lambda v: v % 2, xs))


case(lambda_map, ([1, 2, 3, 4],), ([],))


square_lambda = lambda x: x * x
case(square_lambda, (3.0,), (-2,), (1.5,), name="square_lambda")

affine_lambda = lambda x, y=1.0: 2.0 * x + y
case(affine_lambda, (3.0,), (1.0, -4.0), name="affine_lambda")


# ==========================================================================
# Assignment statements
# ==========================================================================


def unpack_tuple(t):
    a, b = t
    return b, a


case(unpack_tuple, ((1, 2),), ([3.0, "x"],), ("ab",), ((1, 2, 3),))


def unpack_starred(xs):
    a, *b = xs
    *c, d = xs
    e, *f, g = xs
    return a, b, c, d, e, f, g


case(unpack_starred, ([1, 2, 3, 4],), ((1, 2),), ("xyz",), ([1],))


def unpack_nested(p):
    (a, b), [c, d] = p
    for (x, y), z in [((a, b), c), ((c, d), a)]:
        d = d + x * y - z
    return a + d, b * c


case(unpack_nested, (((1, 2), (3, 4)),), (([0.5, 1.5], [2.0, -1.0]),))


def chain_assign(x):
    a = b = x * 2
    a = a + 1
    return a, b


case(chain_assign, (1.0,), (3,))


def chain_assign_alias(n):
    a = b = []
    a.append(n)
    c = d = [n]
    d += [n + 1]
    return b, a is b, c, c is d


case(chain_assign_alias, (1,), (2.5,))


def swap(a, b):
    a, b = b, a
    return a, b


case(swap, (1, 2), ("x", [1]))


def aug_assign_numbers(x, n):
    x += 1.5
    x -= n
    x *= 2
    x /= 4
    n //= 2
    n %= 5
    n **= 2
    n <<= 1
    n |= 1
    n &= 0xFF
    n ^= 3
    n >>= 1
    return x, n


case(aug_assign_numbers, (1.0, 7), (-2.5, 10), (0.0, -3))


def aug_assign_list_alias(xs):
    ys = xs
    ys += [4]
    ys += (5,)
    return ys is xs, xs, ys


case(aug_assign_list_alias, ([1, 2, 3],), ([],))


def aug_assign_tuple(t):
    u = t
    u += (4,)
    return u is t, t, u


case(aug_assign_tuple, ((1, 2),), ((),))


def aug_assign_subscript(xs, d, i, k):
    xs[i] += 1
    d[k] += 10
    d.setdefault("n", 0)
    d["n"] += 1
    return xs, d


case(aug_assign_subscript, ([1, 2, 3], {"a": 1}, 0, "a"), ([1.5], {"n": 5}, -1, "n"),
     ([1], {"a": 1}, 0, "missing"))


def aug_assign_attr(box, v):
    box.value += v
    box.count += 1
    return box.value


case(aug_assign_attr, (Box(1.0, 0), 2.5), (Box([1], 3), [2]))


def aug_numpy_inplace(a):
    b = a
    b += 1.0
    b *= 2.0
    c = a + 0.0
    c -= 1.0
    return b is a, a, c


case(aug_numpy_inplace, (np.array([1.0, 2.0]),), (np.zeros((2, 2)),))


def annotated(x):
    y: float = x * 2
    z: int
    w: list[int] = []
    w.append(int(y))
    return y, w


case(annotated, (1.5,), (-3,))


# ==========================================================================
# if / elif / else
# ==========================================================================


def if_elif_else(x):
    if x < 0:
        kind = "negative"
    elif x == 0:
        kind = "zero"
    elif x < 10:
        kind = "small"
    else:
        kind = "large"
    return kind


case(if_elif_else, (-1.0,), (0,), (5.5,), (100,))


def if_only(x):
    y = 1.0
    if x > 0:
        y = x * 2
    return y


case(if_only, (2.0,), (-2.0,))


def nested_if(a, b):
    r = 0.0
    if a > 0:
        if b > 0:
            r = a * b
        else:
            r = a - b
            if r > 5:
                r = 5.0
    elif b > 0:
        r = b
    return r


case(nested_if, (2.0, 3.0), (2.0, -4.0), (1.0, -1.0), (-1.0, 7.0), (-1.0, -1.0))


def if_pass(x):
    if x:
        pass
    else:
        x = 1
    return x


case(if_pass, (0,), (5,), ([],))


def if_assign_one_branch_then_use(x):
    if x > 0:
        y = x + 1
    else:
        y = -x
        z = y * 2
        y = z + 1
    return y


case(if_assign_one_branch_then_use, (3.0,), (-2.0,))


# ==========================================================================
# for loops
# ==========================================================================


def for_range(n):
    s = 0
    for i in range(n):
        s += i * i
    t = 0
    for i in range(2, n):
        t += i
    u = []
    for i in range(n, 0, -2):
        u.append(i)
    return s, t, u


case(for_range, (0,), (1,), (6,))


def for_list(xs):
    total = 0.0
    count = 0
    for x in xs:
        total = total + x
        count += 1
    return total, count


case(for_list, ([1.0, 2.5, -3.0],), ([],))


def for_tuple(t):
    out = ""
    for part in t:
        out += str(part)
    return out


case(for_tuple, ((1, "a", 2.5),), ((),))


def for_enumerate(xs):
    acc = []
    for i, x in enumerate(xs, start=1):
        acc.append(i * x)
    for i, x in enumerate(xs):
        acc.append((i, x))
    return acc


case(for_enumerate, ([3, 4],), ("ab",))


def for_zip(xs, ys):
    dot = 0.0
    for a, b in zip(xs, ys):
        dot += a * b
    for i, (a, b) in enumerate(zip(xs, ys)):
        dot -= i * a
    return dot


case(for_zip, ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), ([1.0], [2.0, 3.0]))


def for_dict_items(d):
    keys = []
    total = 0
    for k, v in d.items():
        keys.append(k)
        total += v
    for k in d:
        keys.append(k * 2)
    for v in d.values():
        total -= v / 2
    return keys, total


case(for_dict_items, ({"a": 1, "b": 2},), ({},))


def for_numpy(a):
    total = 0.0
    rows = []
    for row in a:
        total += row.sum()
        rows.append(row * 2)
    for x in a.ravel():
        total += x * x
    return total, rows


case(for_numpy, (np.arange(6.0).reshape(3, 2),), (np.ones((1, 4)),))


def for_string(s):
    vowels = 0
    for ch in s:
        if ch in "aeiou":
            vowels += 1
    return vowels


case(for_string, ("education",), ("xyz",))


def for_tuple_targets(items):
    out = []
    for (a, b), c in items:
        out.append(a * b + c)
    return out


case(for_tuple_targets, ([((1, 2), 3), ((4, 5), 6)],), ([],))


def for_break(xs, target):
    idx = -1
    for i, x in enumerate(xs):
        if x == target:
            idx = i
            break
    return idx


case(for_break, ([5, 6, 7], 6), ([5, 6, 7], 9), ([], 1))


def for_continue(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        total += x
    return total


case(for_continue, ([1, -2, 3, -4],), ([],))


def for_else(xs, target):
    for x in xs:
        if x == target:
            result = "found"
            break
    else:
        return "not found"
    return result


case(for_else, ([1, 2, 3], 2), ([1, 2, 3], 4), ([], 0))


def nested_for_else(n):
    primes = []
    for k in range(2, n):
        for p in primes:
            if k % p == 0:
                break
        else:
            primes.append(k)
    return primes


case(nested_for_else, (20,), (3,), (0,))


def loop_var_after_loop(n):
    for i in range(n):
        pass
    return i


case(loop_var_after_loop, (1,), (5,))


def loop_carried(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


case(loop_carried, (0,), (1,), (10,), (30,))


def nested_loops_break(n):
    out = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 3 == 0:
                continue
            out.append((i, j))
    return out


case(nested_loops_break, (4,), (0,))


def for_modifies_outer_list(n):
    acc = [0.0]
    for i in range(n):
        acc.append(acc[-1] + i)
        acc[0] = acc[0] - 1
    return acc


case(for_modifies_outer_list, (4,), (0,))


# ==========================================================================
# while loops
# ==========================================================================


def while_loop(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


case(while_loop, (1,), (6,), (27,))


def while_break_continue(xs):
    i = -1
    total = 0
    while i < len(xs) - 1:
        i += 1
        x = xs[i]
        if x < 0:
            continue
        if x == 99:
            break
        total += x
    return total, i


case(while_break_continue, ([1, -1, 2, 99, 5],), ([3, 4],), ([],))


def while_else(n):
    i = 0
    while i < n:
        if i * i > 50:
            break
        i += 1
    else:
        i = -i
    return i


case(while_else, (5,), (20,), (0,))


def while_true_break(x):
    count = 0
    while True:
        x = x / 2
        count += 1
        if x < 1:
            break
    return x, count


case(while_true_break, (10.0,), (0.5,), (1000,))


def while_nested(n):
    total = 0
    i = 0
    while i < n:
        j = 0
        while j < i:
            total += j
            j += 1
        i += 1
    return total, i


case(while_nested, (5,), (0,))


def newton_sqrt(a):
    x = a if a > 1 else 1.0
    it = 0
    while abs(x * x - a) > 1e-12 and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


case(newton_sqrt, (2.0,), (0.25,), (1e6,))


# ==========================================================================
# return anywhere
# ==========================================================================


def early_return(x):
    if x < 0:
        return "negative"
    y = x * 2
    if y > 10:
        return "big"
    return y


case(early_return, (-1,), (6,), (2.5,))


def return_in_nested_loops(xs, target):
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] + xs[j] == target:
                return i, j
    return None


case(return_in_nested_loops, ([1, 2, 3, 4], 7), ([1, 2, 3, 4], 100), ([], 0))


def return_in_if_in_loop(xs):
    seen = []
    for x in xs:
        seen.append(x)
        if x < 0:
            return x, seen
    return None, seen


case(return_in_if_in_loop, ([1, 2, -3, 4],), ([1, 2],))


def return_in_while(n):
    i = 0
    while True:
        i += 1
        if i * i >= n:
            return i
        if i > 1000:
            break
    return -1


case(return_in_while, (10,), (0,), (10 ** 7,))


def return_in_else_of_loop(xs):
    for x in xs:
        if x > 10:
            break
    else:
        return "no big"
    return "big", x


case(return_in_else_of_loop, ([1, 20],), ([1, 2],))


def implicit_none(xs):
    xs.append(1)


case(implicit_none, ([],), ([0],))


def bare_return(x):
    if x:
        return
    return x


case(bare_return, (1,), (0,))


def only_pass(x):
    pass


case(only_pass, (1,), (None,))


def documented(x):
    """Multiply by three.

    The docstring must not change behaviour.
    """
    return 3 * x


case(documented, (2,), (1.5,))


# ==========================================================================
# assert and raise
# ==========================================================================


def assert_plain(x):
    assert x > 0
    return x


case(assert_plain, (1.0,), (-1.0,))


def assert_message(x):
    assert x != 0, f"x must be nonzero, got {x!r}"
    return 1 / x


case(assert_message, (2.0,), (0,))


def raise_instance(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return math.sqrt(x)


case(raise_instance, (4.0,), (-1.5,))


def raise_class(x):
    if not x:
        raise KeyError
    return x


case(raise_class, (1,), (0,))


def raise_from(x):
    if x:
        raise RuntimeError("outer") from ValueError("inner")
    return x


case(raise_from, (0,), (1,))


def raise_from_none(x):
    if x > 1:
        raise TypeError("no context") from None
    return x


case(raise_from_none, (0,), (2,))


def raise_custom(x):
    if x == 13:
        raise CorpusError(f"unlucky {x}")
    return x + 1


case(raise_custom, (12,), (13,))


def raise_in_loop(xs):
    total = 0
    for x in xs:
        if x is None:
            raise ValueError("None in input at total=" + str(total))
        total += x
    return total


case(raise_in_loop, ([1, 2],), ([1, None, 3],))


def divide(a, b):
    return a / b


case(divide, (1.0, 2.0), (1.0, 0.0), (1, 0))


def type_error(a, b):
    return a + b


case(type_error, (1, 2), (1, "a"), ([1], (2,)))


def attribute_error(x):
    return x.nope


case(attribute_error, (1.0,), ("s",))


def unused_division(x):
    y = 1 / x
    return x


case(unused_division, (2.0,), (0.0,))


def unused_raising_ops(xs, d, x):
    first = xs[0]
    value = d["key"]
    root = math.sqrt(x)
    n = int("12")
    return len(xs)


case(unused_raising_ops, ([1], {"key": 1}, 4.0), ([], {"key": 1}, 4.0), ([1], {}, 4.0),
     ([1], {"key": 1}, -1.0))


def unused_condition_division(x):
    if x < 1 / x:
        pass
    return x


case(unused_condition_division, (2.0,), (0.0,))


def math_domain(x):
    return math.log(x), math.sqrt(x)


case(math_domain, (1.0,), (-1.0,), (0.0,))


# ==========================================================================
# with blocks
# ==========================================================================


def with_block(log, x):
    with Recorder(log, x) as r:
        y = r * 2
        log.append(("body", y))
    return y + 1


case(with_block, ([], 1.5), ([], -2))


def with_return_inside(log, x):
    with Recorder(log, x) as r:
        if r > 0:
            return r + 1
        log.append("not returned")
    return -1


case(with_return_inside, ([], 1.0), ([], -1.0))


def with_exception(log, x):
    with Recorder(log, x) as r:
        y = 1 / r
    return y


case(with_exception, ([], 2.0), ([], 0))


def with_contextmanager(log, name):
    with tag(log, name) as upper:
        log.append(upper + "!")
    return upper


case(with_contextmanager, ([], "b"), ([], "div"))


def with_multiple(log, a, b):
    with Recorder(log, a) as p, Recorder(log, b) as q:
        s = p + q
    with Recorder(log, s):
        log.append("inner")
    return s


case(with_multiple, ([], 1, 2), ([], 0.5, -0.5))


def with_suppress(x):
    y = -1.0
    with contextlib.suppress(ZeroDivisionError):
        y = 1 / x
    return y


case(with_suppress, (2.0,), (0,))


def with_in_loop(log, n):
    total = 0
    for i in range(n):
        with Recorder(log, i) as r:
            if r > 15:
                break
            total += r
    return total


case(with_in_loop, ([], 3), ([], 0))


# ==========================================================================
# Nested functions and closures
# ==========================================================================


def nested_def(x):
    def inner(y):
        return y * 2 + x

    return inner(3.0) + inner(x)


case(nested_def, (1.0,), (-2,))


def nested_def_default(x):
    def inner(y, k=x):
        return y * k

    x = 100
    return inner(2), inner(2, x)


case(nested_def_default, (3,), (0.5,))


def closure_late_binding(x):
    def inner():
        return x * 2

    x = x + 1
    return inner()


# closure_late_binding is refused on purpose (see tests/frontend/test_closures.py).


def closure_in_loop(n):
    fs = []
    for i in range(n):
        def g(i=i):
            return i * 10

        fs.append(g)
    return [f() for f in fs]


case(closure_in_loop, (3,), (0,))


def nested_closure_levels(x):
    def outer(y):
        def innermost(z):
            return x + y + z

        return innermost(y * 10)

    return outer(1) + outer(2)


case(nested_closure_levels, (1,), (0.5,))


def recursive_inner(n):
    def go(k):
        return 1 if k == 0 else k * go(k - 1)

    return go(n)


case(recursive_inner, (0,), (5,))


def nested_def_docstring(x):
    def helper(v):
        """Helper with a docstring."""
        return v + 1

    return helper(helper(x))


case(nested_def_docstring, (1,),)


def make_adder(k):
    def add(x):
        return x + k

    return add


case_of("closure_adder", lambda: make_adder(2.5), (1.0,), (-2,))


def make_accumulator(store):
    def push(x, times=1):
        for _ in range(times):
            store.append(x)
        return list(store)

    return push


case_of("closure_accumulator", lambda: make_accumulator([0]), (1,), (2, 3))


def make_scaled_poly(a, b):
    c = a * b

    def poly(x):
        return a * x * x + b * x + c

    return poly


case_of("closure_poly", lambda: make_scaled_poly(2.0, -1.0), (0.0,), (1.5,), (-3,))


# ==========================================================================
# Name resolution: globals, builtins, modules, shadowing
# ==========================================================================


def use_globals(x):
    return SCALE * x + OFFSET, TABLE["a"] * x, PRIMES[2], len(TABLE)


case(use_globals, (2.0,), (-1,))


def use_builtins(xs):
    return (len(xs), sum(xs), min(xs), max(xs), abs(xs[0]), sorted(xs), list(reversed(xs)),
            round(xs[0] / 3, 2), isinstance(xs[0], int), int(xs[-1]), float(xs[0]),
            str(xs[0]), bool(xs), tuple(range(len(xs))), divmod(7, 2))


case(use_builtins, ([3, -1, 2],), ([1.5, 2.5],))


def module_attr_chains(a, x):
    return (np.linalg.norm(a), math.sin(x), math.pi, np.pi, os.path.join("a", "b"),
            np.float64(x), float(np.linalg.det(np.eye(2) * x)))


case(module_attr_chains, (np.array([3.0, 4.0]), 0.5), (np.ones(3), -1.0))


def math_funcs(x):
    return (math.exp(x), math.log(x + 10), math.sqrt(abs(x)), math.cos(x), math.tanh(x),
            math.atan2(x, 2.0), math.floor(x), math.hypot(x, 3.0), math.fabs(x))


case(math_funcs, (0.5,), (-2.25,), (3,))


def numpy_funcs(a):
    return (np.sum(a), np.mean(a), np.exp(a), np.maximum(a, 0.5), np.dot(a, a),
            np.outer(a, a), np.concatenate([a, a]), np.stack([a, a]), np.cumsum(a),
            np.sqrt(np.abs(a)), a.reshape(-1, 1).shape)


case(numpy_funcs, (np.array([1.0, -2.0, 3.0]),), (np.array([0.25]),))


def shadow_builtin(xs):
    sum = 0
    for v in xs:
        sum += v
    len = 3
    return sum * len


case(shadow_builtin, ([1, 2, 3],), ([],))


def global_shadowed_by_local(x):
    SCALE = 10.0
    return SCALE * x


case(global_shadowed_by_local, (2.0,),)


def builtin_and_global_functions(x):
    return abs(x), rec([], x), combine(x), square_lambda(x)


case(builtin_and_global_functions, (-2.0,), (3,))


# ==========================================================================
# Methods and functools.partial
# ==========================================================================


case_of("Scaler.apply.bound", lambda: Scaler(3.0).apply, (2.0,), (-1,))
case_of("Scaler.accumulate.bound", lambda: Scaler(2.0).accumulate, (1.5,), (0,))
case_of("Scaler.call_other.bound", lambda: Scaler(0.5, bias=-1.0).call_other, (4.0,))
case_of("Scaler.describe.bound", lambda: Scaler(2.0).describe, (), ("custom",))
case_of("Scaler.apply.unbound", lambda: Scaler.apply, (Scaler(2.0), 3.0))


class ScaledChild(Scaler):
    """A subclass whose methods use zero-argument super()."""

    def apply(self, x):
        return super().apply(x) * 2

    @classmethod
    def build(cls, factor):
        return cls(factor).factor * 10

    @staticmethod
    def helper(x, *, k):
        return x * k


case_of("ScaledChild.apply.super", lambda: ScaledChild(3.0).apply, (2.0,), (-1,))
case_of("ScaledChild.build.classmethod", lambda: ScaledChild.build, (2.0,))
case_of("ScaledChild.helper.staticmethod", lambda: ScaledChild.helper, Args(2.0, k=3))


def doubling(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2 * fn(*args, **kwargs)

    return wrapper


@doubling
def wrapped_by_decorator(x):
    return x + 1


case(wrapped_by_decorator, (1,), (2.5,))


def poly3(a, b, x):
    return a * x ** 2 + b * x + 1.0


case(poly3, (1.0, 2.0, 3.0), (0.5, -1.0, 2.0))
case_of("partial_positional", lambda: functools.partial(poly3, 2.0), (1.0, 3.0), (0.0, -1.0))
case_of("partial_keyword", lambda: functools.partial(defaults_kwonly, scale=0.5),
        (4.0,), Args(4.0, shift=1.0), Args(1.0, scale=10.0))
case_of("partial_of_partial", lambda: functools.partial(functools.partial(poly3, 1.0), 2.0),
        (3.0,))


@register((2.0,), (-1.0,))
def decorated(x):
    return x * 3 + 1


@register((1, 2), (0, 0))
def decorated_twice_registered(a, b):
    return a - b


# ==========================================================================
# Recursion
# ==========================================================================


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


case(factorial, (0,), (5,), (20,))


def fibonacci(n):
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


case(fibonacci, (0,), (1,), (10,))


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


case(is_even, (0,), (7,), (10,))
case(is_odd, (0,), (7,))


def power_rec(x, n):
    if n == 0:
        return 1.0
    half = power_rec(x, n // 2)
    if n % 2:
        return half * half * x
    return half * half


case(power_rec, (2.0, 10), (1.5, 3), (3.0, 0))


# ==========================================================================
# Mutation of arguments
# ==========================================================================


def append_items(xs, x):
    xs.append(x)
    xs.extend([x, x])
    xs.insert(0, -1)
    return len(xs)


case(append_items, ([],  5), ([1, 2], "a"))


def dict_update(d, k, v):
    d[k] = v
    d.update(z=1)
    old = d.pop("a", None)
    return old, sorted(d)


case(dict_update, ({"a": 0}, "b", 2), ({}, "a", 1))


def set_attr(box, v):
    box.value = v
    box.tag = "set"
    box.count = box.count + 1
    return box


case(set_attr, (Box(), 3.0), (Box(1, 5), [1]))


def list_increment(xs, i):
    xs[i] += 1
    xs[i - 1] *= 2
    return xs[i]


case(list_increment, ([1, 2, 3], 1), ([5.5], 0), ([1, 2], 5))


def sort_in_place(xs):
    xs.sort()
    xs.reverse()
    ys = xs
    ys.append(0)


case(sort_in_place, ([3, 1, 2],), ([],))


def nested_mutation(data):
    data["items"].append(len(data["items"]))
    data["meta"]["count"] = data["meta"].get("count", 0) + 1
    data["items"][0] += 100
    return data["meta"]


case(nested_mutation, ({"items": [1], "meta": {}},), ({"items": [0, 0], "meta": {"count": 4}},))


def mutate_then_read(xs):
    before = len(xs)
    xs.append(before)
    ys = xs
    ys.append(len(xs))
    return before, len(xs), xs[-1]


case(mutate_then_read, ([],), ([9, 9],))


# ==========================================================================
# print
# ==========================================================================


def print_basic(x, name):
    print("x =", x)
    print(f"{name!r}: {x:.2f}", end=";")
    print()
    print(*[1, 2, 3], sep="-")
    return x


case(print_basic, (1.5, "val"), (-2, ""))


def print_in_loop(n):
    for i in range(n):
        if i % 2:
            print("odd", i)
        else:
            print("even", i, end=" | ")
    print("done")


case(print_in_loop, (3,), (0,))


def print_then_raise(x):
    print("before")
    y = 10 / x
    print("after", y)
    return y


case(print_then_raise, (2,), (0,))


# ==========================================================================
# Evaluation order and name hygiene
# ==========================================================================


def eval_order_setitem(log, d):
    d[rec(log, "key")] = rec(log, "value")
    rec(log, d)[rec(log, "k2")] = rec(log, 2)
    return d


case(eval_order_setitem, ([], {}),)


def eval_order_augassign(log, xs):
    xs[rec(log, 0)] += rec(log, 10)
    return xs


case(eval_order_augassign, ([], [1, 2]),)


def eval_order_call(log):
    return varargs(rec(log, 1), *rec(log, [2, 3]), k=rec(log, 4), **rec(log, {"m": 5}))


case(eval_order_call, ([],),)


def swap_subscripts(xs, box):
    xs[0], xs[1] = xs[1], xs[0]
    box.value, box.count = box.count, box.value
    a, b = c = (xs[0], xs[-1])
    return a, b, c


case(swap_subscripts, ([1, 2, 3], Box(1.5, 7)),)


def unusual_targets(rows, box):
    out = []
    for a, *rest in rows:
        out.append((a, rest))
    for box.value in range(3):
        out.append(box.value)
    x = y = z = len(out)
    return out, x + y + z


case(unusual_targets, ([[1, 2, 3], [4]], Box()),)


def shadow_generated_names(operator, math, np):
    t1 = operator * math
    return t1 + np, operator - math


case(shadow_generated_names, (2.0, 3.0, 1.0), (1, 2, 3))


def temp_name_collision(t1, t2, t3):
    a = t1 * t2 + t3
    t1 = (t1 + 1) * (t2 - 1)
    tmp = [t1 * k for k in range(3)]
    return a, t1, tmp, t1 if t3 > 0 else t2


case(temp_name_collision, (1.0, 2.0, 3.0), (0.5, -1.0, -2.0))


def flag_name_collision(xs):
    break_ = 0
    returned = 5
    result = "r"
    for x in xs:
        if x > 2:
            break
        if x < 0:
            return break_, returned, result
        break_ += x
        returned -= 1
    return break_, returned, result


case(flag_name_collision, ([1, 2, 3],), ([1, -1],), ([],))


def maybe_undefined_global(x):
    if x > 100:
        return UNDEFINED_GLOBAL_NAME * 2
    return x


case(maybe_undefined_global, (1,), (200,))


def literal_forms(x):
    return 1_000 + 0x1F + 0o17 + 0b101, 1e-3 * x, 2j * x, b"ab" + b"c", -0.0, None, ...


case(literal_forms, (2.0,), (-1,))


def conditional_def(flag):
    if flag:
        def g(v):
            return v + 1
    else:
        def g(v):
            return v - 1
    return g(10)


case(conditional_def, (True,), (0,))


def lambda_in_comprehension(n):
    now = [(lambda: i * 2)() for i in range(n)]
    later = [(lambda j=i: j)() for i in range(n)]
    return now, later


case(lambda_in_comprehension, (3,), (0,))


def lambda_key_in_loop(rows):
    out = []
    for i in range(2):
        out.append(sorted(rows, key=lambda r: r[i]))
    return out


case(lambda_key_in_loop, ([(1, 9), (3, 2), (2, 5)],), ([],))


def loop_mutates_iterated_list(xs):
    for x in xs:
        if x < 3:
            xs.append(x + 3)
    return xs


case(loop_mutates_iterated_list, ([1, 2, 5],), ([],))


def last_assigned_in_loop(xs):
    for x in xs:
        last = x * 2
    return last


case(last_assigned_in_loop, ([1, 2, 3],), ((7,),))


def walrus_in_loop_condition(xs):
    out = []
    i = 0
    while i < len(xs) and (v := xs[i]) != 0:
        out.append(v)
        i += 1
    else:
        out.append("end")
    return out, i


case(walrus_in_loop_condition, ([1, 2, 0, 3],), ([1, 2],), ([],))


def loops_mixed_control(n):
    log = []
    i = 0
    while i < n:
        i += 1
        for j in range(i):
            if j == 2:
                break
            if (i + j) % 2:
                continue
            log.append((i, j))
        else:
            if i == 3:
                continue
            log.append(("else", i))
        if i > 4:
            break
    else:
        log.append("while-else")
    return log


case(loops_mixed_control, (7,), (3,), (0,))


def return_from_with_in_loop(log, xs):
    for x in xs:
        with Recorder(log, x) as r:
            if r > 25:
                return r
            while True:
                if r > 5:
                    return -r
                break
    return None


case(return_from_with_in_loop, ([], [1, 3]), ([], [0, 0.25]), ([], []))


def type_introspection(x):
    return type(x).__name__, isinstance(x, (int, float)), Scaler.__name__, callable(x)


case(type_introspection, (1,), ("s",), (len,))


def tuple_item_iadd(t):
    t[0] += [1]
    return t


case(tuple_item_iadd, (([0],),),)


def walrus_in_if(xs):
    if (m := max(xs)) > 3:
        m = m * 2
    return m


case(walrus_in_if, ([1, 5],), ([1, 2],))


def walrus_in_fstring_and_comprehension(xs):
    total = 0
    running = [total := total + x for x in xs]
    s = f"{(y := total * 2)}!"
    return running, total, s, y


case(walrus_in_fstring_and_comprehension, ([1, 2, 3],), ([],))


def while_condition_side_effects(log, n):
    i = 0
    while rec(log, i) < n:
        i += 1
    return i


case(while_condition_side_effects, ([], 3), ([], 0))


def while_condition_raises(xs):
    i = 0
    while 10 / xs[i] > 1:
        i += 1
    return i


case(while_condition_raises, ([5, 2, 20],), ([1, 0],), ([2, 4],))


def nested_default_uses_outer(x):
    y = x * 2

    def inner(a, b=y + 1):
        return a + b

    y = 0
    return inner(1), y


case(nested_default_uses_outer, (3,), (0.5,))


def numpy_views(a):
    v = a[1:]
    v += 1.0
    a[:2] += a[1:3]
    w = a.reshape(2, -1)
    w[0, 0] = -5.0
    return a, v.base is a


case(numpy_views, (np.arange(6.0),),)


# ==========================================================================
# Larger mixed programs
# ==========================================================================


def mixed_stats(xs):
    """Mean, variance and a histogram of a list of floats."""
    n = len(xs)
    if n == 0:
        return None
    mean = sum(xs) / n
    var = 0.0
    for x in xs:
        var += (x - mean) ** 2
    var /= n
    hist = {}
    for x in xs:
        bucket = "lo" if x < mean else "hi"
        hist[bucket] = hist.get(bucket, 0) + 1
    return mean, var, hist


case(mixed_stats, ([1.0, 2.0, 4.0, 8.0],), ([],), ([3.0],))


def mixed_numpy_loop(a, steps):
    x = np.array(a, dtype=float)
    history = []
    for k in range(steps):
        grad = 2 * x - 1
        x = x - 0.1 * grad
        if np.linalg.norm(grad) < 1e-3:
            break
        history.append(float(x[0]))
    return x, history


case(mixed_numpy_loop, ([1.0, 2.0], 5), ([0.5, 0.5], 3))


def mixed_matrix_power(M, k):
    R = np.eye(M.shape[0])
    while k > 0:
        if k & 1:
            R = R @ M
        M = M @ M
        k >>= 1
    return R


case(mixed_matrix_power, (np.array([[1.0, 1.0], [1.0, 0.0]]), 10), (np.eye(3) * 2.0, 0))


def mixed_text(words, width):
    lines = []
    line = ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        elif line:
            line += " " + w
        else:
            line = w
    if line:
        lines.append(line)
    return "\n".join(f"{i:02d}: {l}" for i, l in enumerate(lines))


case(mixed_text, (["the", "quick", "brown", "fox", "jumps"], 10), ([], 5))


def mixed_piecewise(x, n):
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    return s


case(mixed_piecewise, (0.5, 6), (2.0, 10), (1.0, 0))


def mixed_bisect(f_coeffs, lo, hi):
    def f(x):
        return sum(c * x ** i for i, c in enumerate(f_coeffs))

    flo = f(lo)
    for _ in range(60):
        mid = (lo + hi) / 2
        fm = f(mid)
        if fm == 0:
            return mid
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2


case(mixed_bisect, ([-2.0, 0.0, 1.0], 0.0, 2.0), ([1.0, 1.0], -3.0, 1.0))


def mixed_dict_of_lists(pairs):
    groups = {}
    for key, value in pairs:
        if key not in groups:
            groups[key] = []
        groups[key].append(value)
    return {k: (len(v), sum(v)) for k, v in sorted(groups.items())}


case(mixed_dict_of_lists, ([("a", 1), ("b", 2), ("a", 3)],), ([],))


def trapezoid(f, lo, hi, n=8):
    """The trapezoid rule for ``f`` on ``[lo, hi]``: a helper tests pass closures to."""
    h = (hi - lo) / n
    s = 0.5 * (f(lo) + f(hi))
    for i in range(1, n):
        s += f(lo + i * h)
    return s * h
