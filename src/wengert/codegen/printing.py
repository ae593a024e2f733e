"""Generated code as source text, and compiled: printed from its AST with the precedence
Python's own unparser gives (checked against a parse of the text), its lines mapped to the
user's lines they stand for, and registered with ``linecache`` so that tracebacks and
``pdb`` land in it."""

from __future__ import annotations

import ast
import itertools
import linecache
import math
from typing import Any

from wengert.codegen.constants import Namespace
from wengert.diagnostics import SourceLoc, remember_lines

#: Numbers the files of generated code (``<wengert:f:vjp#3>``).
_counter = itertools.count(1)


def to_source(fdefs: list[ast.stmt]) -> str:
    """Source text of generated definitions, checked to mean exactly the tree built.

    The text is what runs (tracebacks and pdb show it), so it is parsed again and
    compared with the tree node for node: a printer that dropped parentheses, or a
    literal whose text parses as an operator expression, would change what the
    program computes. Such a mismatch is an internal error, never a wrong result.
    """
    return source_and_lines(fdefs)[0]


def source_and_lines(fdefs: list[ast.stmt]) -> tuple[str, dict[int, SourceLoc]]:
    """:func:`to_source`, with the user's source location of each printed line that stands
    for one of the user's lines."""
    mod = ast.Module(body=fdefs, type_ignores=[])
    ast.fix_missing_locations(mod)
    printer = _Printer()
    source = printer.visit(mod) + "\n"
    where = _first_difference(mod, ast.parse(source))
    if where is not None:
        raise AssertionError(f"wengert internal error: generated source does not print "
                             f"as built ({where})\n{source}")
    return source, printer.locs


class _Printer(ast._Unparser):  # type: ignore[name-defined,misc]
    """``ast.unparse`` that also prints the comment marked on a statement above it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # (an f-string's parts are printed by a new printer)
        self.newlines = 0
        self.locs: dict[int, SourceLoc] = {}

    def maybe_newline(self) -> None:
        if self._source:
            self.newlines += 1
        super().maybe_newline()

    def traverse(self, node: Any) -> None:
        comment = getattr(node, "_wengert_comment", None)
        if comment is not None:
            self.fill(f"# {comment}")
        loc = getattr(node, "_wengert_loc", None)
        if loc is not None:  # (the line its statement is printed on next)
            self.locs[self.newlines + (2 if self._source else 1)] = loc
        super().traverse(node)


def _first_difference(built: Any, parsed: Any, path: str = "module") -> str | None:
    """Where two ASTs differ structurally (``None`` if nowhere); fields a constructor
    left unset compare equal to their defaults (``None``, ``[]``)."""
    if isinstance(built, ast.AST) or isinstance(parsed, ast.AST):
        if type(built) is not type(parsed):
            return f"{path}: {type(built).__name__} printed as {type(parsed).__name__}"
        if isinstance(built, ast.Constant):
            a, b = built.value, parsed.value
            if type(a) is not type(b) or (a != b and a == a) or \
                    (isinstance(a, float) and math.copysign(1.0, a) != math.copysign(1.0, b)):
                return f"{path}: constant {a!r} printed as {b!r}"
            return None
        for name in built._fields:
            if name in ("ctx", "type_comment", "kind"):
                continue
            d = _first_difference(getattr(built, name, None), getattr(parsed, name, None),
                                  f"{path}.{name}")
            if d is not None:
                return d
        return None
    if isinstance(built, list) or isinstance(parsed, list):
        a, b = built or [], parsed or []
        if len(a) != len(b):
            return f"{path}: {len(a)} items printed as {len(b)}"
        for k, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{k}]")
            if d is not None:
                return d
        return None
    return None if built == parsed else f"{path}: {built!r} printed as {parsed!r}"


def compile_source(source: str, ns: Namespace, label: str,
                   locs: dict[int, SourceLoc] | None = None) -> dict[str, Any]:
    """Compile generated source into ``ns``; register it with ``linecache`` for tracebacks
    (and the user's lines its lines stand for, ``locs``, for refusals as it runs)."""
    filename = f"<wengert:{label}#{next(_counter)}>"
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    if locs:
        remember_lines(filename, locs)
    code = compile(source, filename, "exec")
    exec(code, ns.values)
    return ns.values
