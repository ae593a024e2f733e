"""Built-in derivative rules, one module per source library.

Importing this package registers every rule in :mod:`wengert.rules.registry`.
"""

from wengert.rules import (
    adjoints,
    builtins,
    form,
    math,
    np_arrays,
    np_decompositions,
    np_elementwise,
    np_linalg,
    np_reductions,
    np_shapes,
    operator,
    python_defs,
    registry,
)

form.forget_sources()  # every rule is declared: the parsed rule modules are not needed

__all__ = ["adjoints", "builtins", "math", "np_arrays", "np_decompositions", "np_elementwise",
           "np_linalg", "np_reductions", "np_shapes", "operator", "python_defs", "registry"]
