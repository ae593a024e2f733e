"""How generated code reads the constants of the IR: literals written out, everything else
(functions, arrays, objects) bound to a name of the code's namespace, named after the
user's spelling where there is one."""

from __future__ import annotations

import ast
import builtins
import itertools
import math
import operator
from typing import Any

from wengert.codegen.naming import sanitize
from wengert.ir import nodes as n
from wengert.objects import hashable


class SelfPart:
    """The constant standing for a function of the module being generated, by role."""

    def __init__(self, role: str) -> None:
        self.role = role


def _is_literal(v: Any) -> bool:
    if isinstance(v, bool) or v is None or v is Ellipsis:
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (int, str, bytes)):
        return True
    if isinstance(v, complex):
        # Signed parts print as ``(-1+2j)``, whose parse is an operator expression:
        # only plain imaginary literals are written as literals, others are bound.
        return v.real == 0.0 and math.copysign(1.0, v.real) > 0 and \
            math.isfinite(v.imag) and math.copysign(1.0, v.imag) > 0
    if type(v) is tuple:
        return all(_is_literal(x) for x in v)
    return False


class Namespace:
    """The globals of a generated module: objects generated code refers to by name."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {"__builtins__": __builtins__}
        self._by_id: dict[int, str] = {}
        #: Names taken by parameters: a global of that name would be shadowed.
        self.avoid: set[str] = set()
        #: The ``runtime.Later`` standing for the function being generated, and its name.
        self.self_ref: Any = None
        self.self_name = ""
        #: The names of a split VJP's functions by role (``forward``, ``pullback``).
        self.self_names: dict[str, str] = {}

    def bind(self, value: Any, preferred: str | None) -> str:
        """A global name bound to ``value`` (``preferred`` if free or already bound to it)."""
        if preferred is not None:
            preferred = sanitize(preferred)
            cur = self.values.get(preferred, _MISSING) if preferred not in self.avoid else None
            if cur is value:
                return preferred
            if cur is _MISSING:
                self.values[preferred] = value
                self._by_id.setdefault(id(value), preferred)
                return preferred
        existing = self._by_id.get(id(value))
        if existing is not None and self.values.get(existing) is value:
            return existing
        base = sanitize(preferred or getattr(value, "__name__", None) or type(value).__name__)
        for k in itertools.count(1):
            name = f"_{base}{k}"
            if name not in self.values:
                self.values[name] = value
                self._by_id[id(value)] = name
                return name
        raise AssertionError  # pragma: no cover


def literal_expr(v: Any) -> ast.expr:
    """The expression for a literal value (``_is_literal``), safe in any context.

    A negative number is written as a unary minus of its magnitude: ``ast.unparse``
    prints ``Constant(-2.0)`` as ``-2.0`` with no parentheses, so ``(-2.0) ** 2`` would
    come out as ``-2.0 ** 2`` (``-(2.0 ** 2)``). The unary form is parenthesised by
    precedence like any other operator.
    """
    if type(v) is tuple:
        return ast.Tuple([literal_expr(x) for x in v], ast.Load())
    if isinstance(v, (int, float)) and not isinstance(v, bool) and \
            (v < 0 or (isinstance(v, float) and math.copysign(1.0, v) < 0)):
        return ast.UnaryOp(ast.USub(), ast.Constant(-v))
    return ast.Constant(v)


def const_expr(op: n.Const, ns: Namespace) -> ast.expr:
    """The expression for a constant: a literal, a dotted global name, or a bound object."""
    v = op.value
    if _is_literal(v) and (not op.origin or isinstance(v, (bool, type(None)))):
        return literal_expr(v)
    origin = op.origin
    if origin and "." not in origin and hashable(v) and \
            getattr(builtins, getattr(v, "__name__", ""), None) is v and \
            v.__name__ not in ns.avoid:
        origin = v.__name__  # ``max``, not the name a rule's closure gave it (``extreme``)
    if origin:
        parts = origin.split(".")
        root = op.root if op.root is not None else (v if len(parts) == 1 else None)
        if root is not None:
            name = ns.bind(root, parts[0])
            if name == sanitize(parts[0]):
                expr: ast.expr = ast.Name(name, ast.Load())
                for p in parts[1:]:
                    expr = ast.Attribute(expr, p, ast.Load())
                return expr
        return ast.Name(ns.bind(v, parts[-1]), ast.Load())
    if v is n.UNBOUND:
        return ast.Name(ns.bind(v, "UNBOUND"), ast.Load())
    if v is SELF:
        return ast.Name(ns.self_name, ast.Load())
    if isinstance(v, SelfPart):
        return ast.Name(ns.self_names[v.role], ast.Load())
    mod = getattr(v, "__module__", None)
    if mod == "operator" or mod == "_operator":
        return ast.Attribute(ast.Name(ns.bind(operator, "operator"), ast.Load()), v.__name__,
                             ast.Load())
    return ast.Name(ns.bind(v, getattr(v, "__name__", None)), ast.Load())


#: The value of a constant standing for the generated function itself.
SELF = object()


_MISSING = object()
