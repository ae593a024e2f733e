"""Forward type inference over the IR: the exact Python type of a value, where it is known.

The lattice is flat: a value has one concrete type (``type(v)`` at run time, exactly,
never a supertype) or is unknown; joining two different types gives unknown. The
result feeds :mod:`wengert.transforms.specialize`, which folds a rule's
``isinstance`` fast paths at a call site, so every rule here must be *sound*: when
a callee could return something else for some input (a user ``__eq__``, a NumPy
scalar compared with a float, ``numpy.float64(array)``), the answer is unknown.

By job: :mod:`~wengert.analysis.types.lattice` (the types, what a container holds and an
array's dtype, axes and shape, and :class:`Types`, the typed result),
:mod:`~wengert.analysis.types.results` (what a call of a builtin, an operator, ``math`` or
NumPy gives, from its arguments' types and shapes), :mod:`~wengert.analysis.types.containers`
(whether the writes into a list, a dict or a field keep the types assumed of what it
holds) and :mod:`~wengert.analysis.types.infer` (the inference itself: a pass in program
order, loops to a fixpoint). What mutation may change behind the inference's back is asked
of :mod:`wengert.analysis.effects.reads`, below it.
"""

from wengert.analysis.types.infer import infer_types, return_type
from wengert.analysis.types.lattice import (
    FLOAT_OR_FLOAT64,
    FUNCTION_VALUES,
    INT_OR_FLOAT,
    ArrayOf,
    Constant,
    DictOf,
    ListOf,
    ObjectOf,
    OneOf,
    TupleOf,
    Type,
    Types,
    array_of,
    bind_constants,
    function_constant,
    join,
    plain,
    subclass,
    unshaped,
)

__all__ = [
    "FLOAT_OR_FLOAT64", "FUNCTION_VALUES", "INT_OR_FLOAT", "ArrayOf", "Constant", "DictOf",
    "ListOf", "ObjectOf", "OneOf", "TupleOf", "Type", "Types", "array_of", "bind_constants",
    "function_constant", "infer_types", "join", "plain", "return_type", "subclass", "unshaped",
]
