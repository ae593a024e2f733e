"""Built-in derivative rules, one module per source library.

Importing this package registers every rule in :mod:`wengert.rules.registry`.
"""

from wengert.rules import builtins, math, operator, registry

__all__ = ["builtins", "math", "operator", "registry"]
