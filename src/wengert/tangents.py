"""Tangent spaces of nested Python values.

Every differentiable value has a tangent of a known shape (docs/architecture.md, "Values
and tangents"):

* ``float`` (and NumPy floating scalars) -> a float of the same type;
* ``numpy.ndarray`` of a floating dtype -> an array of the same shape and dtype;
* ``tuple`` (named tuples included), ``list``, ``dict`` -> the same container of tangents;
* dataclass instances -> an instance of the same dataclass whose fields hold tangents;
* types registered with :func:`register_type` -> whatever their protocol builds.

Integers, booleans, strings, integer/boolean arrays and any other object are
*non-differentiable leaves*: they have no tangent, written ``None``.  ``None`` is
also the symbolic zero everywhere in this module: a tangent or cotangent that is
``None`` (at any level of a structure) means "zero".  Complex numbers are out of
scope and raise :class:`TypeError` rather than being silently treated as constants.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy

__all__ = [
    "TreeDef",
    "add",
    "flatten",
    "is_differentiable",
    "materialize",
    "random_like",
    "rebuild",
    "register_type",
    "scale",
    "unflatten",
    "vdot",
    "zeros_like",
]


@dataclass(frozen=True)
class _UserType:
    """The protocol a user registers for a type wengert does not know (Swift's Differentiable)."""

    zero: Callable[[Any], Any]
    add: Callable[[Any, Any], Any]
    flatten: Callable[[Any], tuple[list[Any], Any]]
    unflatten: Callable[[Any, list[Any]], Any]


_USER_TYPES: dict[type, _UserType] = {}


def register_type(
    cls: type,
    zero: Callable[[Any], Any],
    add: Callable[[Any, Any], Any],
    flatten: Callable[[Any], tuple[list[Any], Any]],
    unflatten: Callable[[Any, list[Any]], Any],
) -> None:
    """Make instances of ``cls`` (and of its subclasses) differentiable.

    ``zero(x)`` returns the zero tangent of ``x``; ``add(a, b)`` adds two tangents;
    ``flatten(x)`` returns ``(children, aux)`` where ``children`` is a list of values
    wengert knows how to handle (floats, arrays, containers, other registered types)
    and ``aux`` is any static data; ``unflatten(aux, children)`` rebuilds an instance.
    The tangent of an instance is an instance built by ``unflatten`` from tangents
    of its children, so ``scale``, ``vdot`` and ``random_like`` follow from flatten.
    """
    _USER_TYPES[cls] = _UserType(zero, add, flatten, unflatten)


def _user_type(x: Any) -> _UserType | None:
    # Walk the MRO so that subclasses of a registered type are covered too.
    for klass in type(x).__mro__:
        spec = _USER_TYPES.get(klass)
        if spec is not None:
            return spec
    return None


# The kinds of node a value can be.  Computed in one place so that every
# function in this module agrees on what is a leaf and what is a container.
_NONE, _CONST, _SCALAR, _ARRAY, _TUPLE, _NAMEDTUPLE, _LIST, _DICT, _DATACLASS, _USER = (
    "none", "const", "scalar", "array", "tuple", "namedtuple", "list", "dict", "dataclass",
    "user",
)


def _kind(x: Any) -> str:
    """Classify ``x`` as a leaf kind or a container kind."""
    if x is None:
        return _NONE
    if _USER_TYPES and _user_type(x) is not None:
        return _USER
    # bool is a subclass of int, and numpy.bool_ is not a numpy.number: both are constants.
    if isinstance(x, (bool, int, numpy.bool_, numpy.integer, str, bytes)):
        return _CONST
    if isinstance(x, (float, numpy.floating)):
        return _SCALAR
    if isinstance(x, (complex, numpy.complexfloating)):
        raise TypeError("complex numbers are not supported by wengert")
    if isinstance(x, numpy.ndarray):
        kind = x.dtype.kind  # (``issubdtype`` costs microseconds per call)
        if kind == "f":
            return _ARRAY
        if kind == "c":
            raise TypeError("complex arrays are not supported by wengert")
        return _CONST
    if isinstance(x, tuple):
        return _NAMEDTUPLE if hasattr(type(x), "_fields") else _TUPLE
    if isinstance(x, list):
        return _LIST
    if isinstance(x, dict):
        return _DICT
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return _DATACLASS
    return _CONST


def _children(x: Any, kind: str) -> list[Any]:
    """The child values of a container node, in a fixed order."""
    if kind in (_TUPLE, _NAMEDTUPLE, _LIST):
        return list(x)
    if kind == _DICT:
        return list(x.values())
    if kind == _DATACLASS:
        return [getattr(x, f.name) for f in dataclasses.fields(x)]
    if kind == _USER:
        children, _ = _user_type(x).flatten(x)
        return list(children)
    raise AssertionError(f"not a container kind: {kind}")


def rebuild(like: Any, kind: str, children: list[Any]) -> Any:
    """A container of the same type and static data as ``like`` holding ``children``
    (``kind`` as in a :class:`TreeDef`)."""
    if kind == _TUPLE:
        return tuple(children) if type(like) is tuple else type(like)(children)
    if kind == _NAMEDTUPLE:
        return type(like)(*children)
    if kind == _LIST:
        return list(children)
    if kind == _DICT:
        if type(like) is dict:
            return dict(zip(like.keys(), children, strict=True))
        # dict subclasses (OrderedDict, defaultdict) keep their type and extra state.
        out = like.copy()
        out.clear()
        out.update(zip(like.keys(), children, strict=True))
        return out
    if kind == _DATACLASS:
        return _new_dataclass(like, children)
    if kind == _USER:
        _, aux = _user_type(like).flatten(like)
        return _user_type(like).unflatten(aux, list(children))
    raise AssertionError(f"not a container kind: {kind}")


def _new_dataclass(like: Any, values: list[Any]) -> Any:
    # Bypass __init__ and __post_init__: a tangent instance holds tangents (or None)
    # in its fields, which validation written for primal values would reject.
    # object.__setattr__ also works for frozen and slotted dataclasses.
    out = object.__new__(type(like))
    for f, v in zip(dataclasses.fields(like), values, strict=True):
        object.__setattr__(out, f.name, v)
    return out


def _check_same(kind: str, a: Any, b: Any) -> None:
    """Raise ValueError when two containers of one kind cannot be combined leaf by leaf."""
    if kind == _DICT:
        if set(a.keys()) != set(b.keys()):
            raise ValueError(f"dict keys differ: {list(a.keys())} vs {list(b.keys())}")
    elif len(_children(a, kind)) != len(_children(b, _kind(b))):
        raise ValueError(f"structures differ in length: {a!r} vs {b!r}")


def _paired_children(kind: str, a: Any, b: Any) -> tuple[list[Any], list[Any]]:
    """The children of ``a`` and ``b`` in matching order (dicts are matched by key)."""
    _check_same(kind, a, b)
    if kind == _DICT:
        return list(a.values()), [b[k] for k in a.keys()]
    return _children(a, kind), _children(b, _kind(b))


def is_differentiable(x: Any) -> bool:
    """Whether ``x`` has at least one differentiable leaf (a float or a float array)."""
    kind = _kind(x)
    if kind in (_SCALAR, _ARRAY):
        return True
    if kind in (_NONE, _CONST):
        return False
    return any(is_differentiable(c) for c in _children(x, kind))


def zeros_like(x: Any) -> Any:
    """The zero tangent of ``x``, materialised: zeros at differentiable leaves, else ``None``."""
    kind = _kind(x)
    if kind == _SCALAR:
        # Keep NumPy scalar types (float32 stays float32); plain floats become 0.0.
        return 0.0 if type(x) is float else type(x)(0.0)
    if kind == _ARRAY:
        return numpy.zeros_like(x)
    if kind in (_NONE, _CONST):
        return None
    if kind == _USER:
        return _user_type(x).zero(x)
    return rebuild(x, kind, [zeros_like(c) for c in _children(x, kind)])


def add(a: Any, b: Any) -> Any:
    """``a + b`` leaf by leaf; ``None`` is zero, so ``add(None, b)`` is ``b``.

    Also adds a tangent to a primal (``add(x, scale(t, h))`` perturbs ``x``): the
    non-differentiable leaves of the primal meet ``None`` in the tangent and are kept.
    """
    if a is None:
        return b
    if b is None:
        return a
    kind = _kind(a)
    if kind in (_SCALAR, _ARRAY, _CONST):
        return a + b
    if kind == _USER:
        return _user_type(a).add(a, b)
    ca, cb = _paired_children(kind, a, b)
    return rebuild(a, kind, [add(x, y) for x, y in zip(ca, cb, strict=True)])


def scale(a: Any, c: float) -> Any:
    """``c * a`` leaf by leaf; ``None`` and non-differentiable leaves stay ``None``."""
    kind = _kind(a)
    if kind in (_SCALAR, _ARRAY):
        return a * c
    if kind in (_NONE, _CONST):
        return None
    return rebuild(a, kind, [scale(x, c) for x in _children(a, kind)])


def vdot(a: Any, b: Any) -> float:
    """The inner product: the sum of elementwise products over the whole structure.

    ``None`` (and any non-differentiable leaf) contributes zero.  Array leaves must
    have the same number of elements.
    """
    if a is None or b is None:
        return 0.0
    kind = _kind(a)
    if kind in (_SCALAR, _ARRAY):
        if _kind(b) not in (_SCALAR, _ARRAY):
            return 0.0
        if numpy.shape(a) != numpy.shape(b):
            raise ValueError(f"vdot of leaves with shapes {numpy.shape(a)} and {numpy.shape(b)}")
        return float(numpy.sum(numpy.multiply(a, b)))
    if kind == _CONST:
        return 0.0
    ca, cb = _paired_children(kind, a, b)
    return float(sum(vdot(x, y) for x, y in zip(ca, cb, strict=True)))


@dataclass(frozen=True, eq=False)
class TreeDef:
    """The static structure of a value, as returned by :func:`flatten`.

    ``kind`` is ``"leaf"`` (one entry of the leaf list), ``"const"`` (a
    non-differentiable leaf kept in ``meta``) or a container kind whose
    ``meta`` is an example instance of the container used to rebuild it.
    """

    kind: str
    meta: Any = None
    children: tuple[TreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        """How many leaves :func:`unflatten` expects."""
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)


def flatten(x: Any) -> tuple[list[Any], TreeDef]:
    """The differentiable leaves of ``x`` (floats, float arrays) in fixed order, and its structure.

    Non-differentiable leaves (and ``None``) are stored in the tree definition, so
    ``unflatten(*reversed(flatten(x)))`` rebuilds ``x``.  Flatten a primal and its
    *materialised* tangent (see :func:`materialize`) to get matching leaf lists.
    """
    leaves: list[Any] = []
    treedef = _flatten_into(x, leaves)
    return leaves, treedef


_LEAF = TreeDef("leaf")


def _flatten_into(x: Any, leaves: list[Any]) -> TreeDef:
    if type(x) is float or type(x) is numpy.ndarray and x.dtype == numpy.float64:
        leaves.append(x)
        return _LEAF
    if type(x) is list and all(type(v) is float for v in x):
        leaves.extend(x)  # a list of floats: the common case, without a node per item
        return TreeDef(_LIST, x, (_LEAF,) * len(x))
    kind = _kind(x)
    if kind in (_SCALAR, _ARRAY):
        leaves.append(x)
        return _LEAF
    if kind in (_NONE, _CONST):
        return TreeDef("const", x)
    children = tuple(_flatten_into(c, leaves) for c in _children(x, kind))
    return TreeDef(kind, x, children)


def unflatten(treedef: TreeDef, leaves: list[Any]) -> Any:
    """Rebuild a value of structure ``treedef`` from ``leaves`` (the inverse of :func:`flatten`)."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten expected {treedef.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    return _unflatten_from(treedef, it)


def _unflatten_from(treedef: TreeDef, it: Any) -> Any:
    if treedef.kind == "leaf":
        return next(it)
    if treedef.kind == "const":
        return treedef.meta
    children = [_unflatten_from(c, it) for c in treedef.children]
    return rebuild(treedef.meta, treedef.kind, children)


def random_like(x: Any, rng: numpy.random.Generator) -> Any:
    """A random (standard normal) tangent of ``x``; ``None`` at non-differentiable leaves."""
    kind = _kind(x)
    if kind == _SCALAR:
        value = rng.standard_normal()
        return float(value) if type(x) is float else type(x)(value)
    if kind == _ARRAY:
        return rng.standard_normal(x.shape).astype(x.dtype)
    if kind in (_NONE, _CONST):
        return None
    return rebuild(x, kind, [random_like(c, rng) for c in _children(x, kind)])


def materialize(x: Any, t: Any, batch: tuple[int, ...] = ()) -> Any:
    """The tangent ``t`` of ``x`` in canonical form, checked against ``x``.

    Symbolic zeros (``None``) at differentiable positions become zeros of the
    right shape; whatever ``t`` holds at non-differentiable positions of ``x`` is
    dropped (``None``), since those positions have no tangent space.  ``batch`` is
    the shape of a leading batch of tangents (batched forward mode, many
    cotangents at once).  Raises :class:`ValueError` naming the first mismatch.
    """
    return _materialize(x, t, tuple(batch), "x")


def _materialize(x: Any, t: Any, batch: tuple[int, ...], where: str) -> Any:
    if type(x) is float:  # the common cases, without the general checks
        if not batch and (type(t) is float or t is None):
            return 0.0 if t is None else t
        if batch and type(t) is numpy.ndarray and t.shape == batch and t.dtype == float:
            return t
    elif type(x) is numpy.ndarray and type(t) is numpy.ndarray and not batch and \
            t.shape == x.shape and x.dtype.kind == "f" and t.dtype == x.dtype and \
            t.flags.writeable:
        return t
    kind = _kind(x)
    if kind in (_NONE, _CONST):
        return None
    if kind in (_SCALAR, _ARRAY):
        want = batch + numpy.shape(x)
        if t is None:
            if want == ():
                return zeros_like(x)
            return numpy.zeros(want, dtype=numpy.result_type(x))
        if _kind(t) not in (_SCALAR, _ARRAY):
            raise ValueError(f"{where}: expected a tangent of shape {want}, got {t!r}")
        if numpy.shape(t) != want:
            raise ValueError(f"{where}: expected a tangent of shape {want}, got shape "
                             f"{numpy.shape(t)}")
        dtype = getattr(x, "dtype", None)
        if dtype is not None and dtype.kind == "f" and getattr(t, "dtype", dtype) != dtype:
            # A float32 argument met float64 data: its tangent is float32 all the same, as
            # the argument's own (JAX's and PyTorch's convention).
            cast = numpy.asarray(t).astype(dtype)
            return cast if isinstance(x, numpy.ndarray) else cast[()]
        if isinstance(t, numpy.ndarray) and not t.flags.writeable:
            return t.copy()  # a broadcast view inside generated code; the user's own array
        return t
    cx = _children(x, kind)
    if t is None:
        ct: list[Any] = [None] * len(cx)
    elif kind == _DICT:
        if not isinstance(t, dict) or set(t.keys()) != set(x.keys()):
            raise ValueError(f"{where}: expected a dict with keys {list(x.keys())}, got {t!r}")
        ct = [t[k] for k in x.keys()]
    else:
        if kind == _USER or kind == _DATACLASS:
            if type(t) is not type(x):
                raise ValueError(f"{where}: expected a {type(x).__name__}, got {t!r}")
        elif kind in (_TUPLE, _NAMEDTUPLE) and not isinstance(t, tuple):
            raise ValueError(f"{where}: expected a tuple, got {t!r}")
        elif kind == _LIST and not isinstance(t, list):
            raise ValueError(f"{where}: expected a list, got {t!r}")
        ct = _children(t, kind)
        if len(ct) != len(cx):
            raise ValueError(f"{where}: expected {len(cx)} entries, got {len(ct)}")
    keys = list(x.keys()) if kind == _DICT else range(len(cx))
    out = [_materialize(c, d, batch, f"{where}[{k!r}]") for c, d, k in zip(cx, ct, keys,
                                                                        strict=True)]
    return rebuild(x, kind, out)
