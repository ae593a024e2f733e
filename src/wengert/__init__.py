"""wengert: a source-to-source automatic differentiation compiler for Python."""

from wengert import (
    api,  # noqa: F401
    rules,  # noqa: F401  (registers the built-in rules)
    testing,  # noqa: F401  (wengert.testing.check_grads after ``import wengert``)
)
from wengert.api import (
    derivative,
    grad,
    hessian,
    hvp,
    jvp,
    linearize,
    show,
    stop_gradient,
    value_and_grad,
    vjp,
)
from wengert.diagnostics import (
    NonDifferentiableError,
    NonDifferentiableWarning,
    RuleRefusal,
    SourceUnavailableError,
    UnsupportedSyntaxError,
    WengertError,
)
from wengert.jacobians import jacfwd, jacrev

__all__ = [
    "NonDifferentiableError",
    "NonDifferentiableWarning",
    "RuleRefusal",
    "SourceUnavailableError",
    "UnsupportedSyntaxError",
    "WengertError",
    "derivative",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "show",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
__version__ = "0.1.0"
