"""The vocabulary of mutation: which methods and operators write, and into what.

A leaf of the effects package (it imports no analysis): type inference, the alias graph
and the storage analysis all read these tables, so a method added here is known to each.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy

from wengert import runtime
from wengert.objects import hashable

# -- the vocabulary of mutation --------------------------------------------------------------

#: Methods that store their arguments into the object they are called on.
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "update", "setdefault", "add", "appendleft", "extendleft",
    "__setitem__", "__setattr__", "__iadd__", "__imul__", "fill", "put", "itemset",
})

#: Methods that change only their object itself, taking items out of it or moving them
#: (called without keywords: ``sort(key=f)`` runs ``f``): nothing is stored into it and no
#: item of it is written into, as for :data:`MUTATING_METHODS`, trusted by name.
SHRINKING_METHODS = frozenset({
    "pop", "remove", "clear", "reverse", "sort", "popitem", "discard", "popleft",
})

#: The methods of :data:`SHRINKING_METHODS` that run no function of the caller's
#: (``sort(key=f)`` may): a list they change holds items of the types it held.
ITEM_REMOVING_METHODS = SHRINKING_METHODS - {"sort"}

#: Methods of lists, dicts, tuples and strings that read their object and change nothing.
CONTAINER_READ_METHODS = frozenset({"index", "count", "copy", "keys", "values", "items", "get"})

#: Methods of a list or a dict after which it holds no item of another type (it is read, or
#: an item is taken out).
ITEM_KEEPING_METHODS = CONTAINER_READ_METHODS | {"pop"}

#: Every method that changes the object it is called on.
WRITING_METHODS = MUTATING_METHODS | SHRINKING_METHODS

#: Methods that change which items a list holds.
SLOT_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                          "reverse", "__setitem__", "__delitem__", "__iadd__", "__imul__"})

#: Methods known not to write their arguments into ``self`` (common list/dict/str/NumPy
#: methods). Any other method called with a varied argument is assumed to mutate its object:
#: user classes (``acc.push(x)``) must stay sound.
READONLY_METHODS = frozenset({
    "copy", "astype", "tolist", "item", "sum", "mean", "prod", "dot", "std", "var", "max",
    "min", "argmax", "argmin", "cumsum", "cumprod", "reshape", "ravel", "flatten", "transpose",
    "squeeze", "clip", "round", "conj", "conjugate", "trace", "diagonal", "any", "all",
    "count", "index", "get", "keys", "values", "items", "startswith", "endswith", "format",
    "join", "split", "strip", "lower", "upper", "replace", "real", "imag", "__getitem__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__matmul__", "__pow__", "__neg__",
    # (a named tuple's: a new tuple or dict, the tuple unchanged)
    "_replace", "_asdict",
})

def method_may_write(name: str) -> bool:
    """Whether a call of the method ``name`` may change the object it is called on: any
    method but the read-only ones (a user class's ``acc.push(x)``, ``sort``, ``pop`` and
    every writing method included). Both modes, and the rewrites before them, ask this."""
    return name not in READONLY_METHODS


#: Methods whose result is a fresh object sharing nothing mutable with ``self`` or the
#: arguments (for NumPy arrays of floats; ``list.copy`` is shallow).
FRESH_METHODS = frozenset({
    "copy", "astype", "tolist", "item", "sum", "mean", "prod", "dot", "std", "var", "max", "min",
    "argmax", "argmin", "cumsum", "cumprod", "flatten", "count", "index", "any", "all",
    "startswith", "endswith", "format", "join", "split", "strip", "lower", "upper", "replace",
})

#: Array methods whose result is a view of the array (shares its memory).
VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "squeeze", "view", "swapaxes",
                          "diagonal"})

#: In-place operators: ``a op= b`` changes a mutable ``a`` (a list, an array) and returns
#: it; on a number it makes a new one.
INPLACE_OPERATORS = frozenset({
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
    operator.imod, operator.ipow, operator.imatmul, operator.ilshift, operator.irshift,
    operator.iand, operator.ior, operator.ixor, operator.iconcat,
})

#: The in-place operators both modes differentiate (the others have no derivative or
#: change only integers).
DIFFERENTIABLE_INPLACE = frozenset({operator.iadd, operator.isub, operator.imul,
                                    operator.itruediv, operator.ipow, operator.imatmul,
                                    operator.iconcat})

#: In-place operators that change a list they are given: ``xs += ys`` (``xs *= 2``).
LIST_INPLACE = frozenset({operator.iadd, operator.imul, operator.iconcat})

#: Attributes of an array that are views of it.
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})

#: Operators whose result, given an array, is an array of booleans (a mask).
MASKS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                   operator.ne, operator.and_, operator.or_, operator.xor, operator.invert,
                   numpy.isnan, numpy.isfinite, numpy.logical_and, numpy.logical_or,
                   numpy.logical_not})


def is_inplace_operator(fn: Any) -> bool:
    """Whether ``fn`` is an in-place operator (``operator.iadd`` ...)."""
    return hashable(fn) and fn in INPLACE_OPERATORS


#: Helpers of generated pullbacks (in a gradient differentiated again) that read only the
#: structure of what they are given at a position (its length, its class, its fields'
#: names): they neither keep it nor change it, nor give it an adjoint. (The ``_owned``
#: adjoints write into their first argument, the adjoint, never into this one.)
STRUCTURE_READERS = ((runtime.getattr_adjoint, 1), (runtime.getattr_adjoint_owned, 1),
                     (runtime.getitem_adjoint, 1), (runtime.getitem_adjoint_owned, 1),
                     (runtime.entry_adjoint_of_list, 1), (runtime.nonzero, 1),
                     (runtime.structure, 0), (runtime.check_distinct_items, 0),
                     (runtime.check_held_alone, 0), (runtime.reversed_adjoint, 1),
                     (runtime.unpack_adjoint, 1))
