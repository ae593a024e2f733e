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


def _scalar_methods() -> None:
    """NumPy scalars have the methods and attributes of arrays (a full sum's ``.sum()``, a
    float64's ``.item()``, ``.shape``): each gets the Python definition of the ndarray's,
    which computes the same for a scalar. Not those NumPy refuses on every scalar (they
    need axes it has not): a call of one is left to NumPy, which raises as it should."""
    import numpy

    for name in sorted(set(dir(numpy.ndarray)) - {"diagonal", "swapaxes", "trace"}):
        raw, scalar = getattr(numpy.ndarray, name, None), getattr(numpy.generic, name, None)
        if raw is None or scalar is None or raw is scalar:
            continue
        rule = registry.python_definition(raw)
        if rule is not None and registry.lookup(scalar) is None:
            registry.defpython(scalar, rule.python_keywords)(rule.python)


_scalar_methods()
form.declare_now()  # wengert's rules are declared (each built when first read); a user's, at once

__all__ = ["adjoints", "builtins", "math", "np_arrays", "np_decompositions", "np_elementwise",
           "np_linalg", "np_reductions", "np_shapes", "operator", "python_defs", "registry"]
