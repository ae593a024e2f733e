"""Where a function's source is: its file parsed once (and re-parsed when the file changes),
and its ``def`` or ``lambda`` node in it. A leaf: the frontend reads functions to lower
through it, and the rule form reads the partial derivatives it is given."""

from __future__ import annotations

import ast
import bisect
import functools
import linecache
import os
import sysconfig
import types

#: The files parsed last, most recent last. Few: a syntax tree is tens of thousands of
#: objects the garbage collector walks at every full collection, and a program's
#: derivatives are made from a handful of files (the rest are parsed again if asked).
_PARSED: dict[str, tuple[str, ast.Module]] = {}
_PARSED_KEPT = 4


def parse_file(filename: str) -> ast.Module | None:
    """The parsed text of ``filename`` as ``linecache`` holds it (``None`` if there is none
    or it does not parse)."""
    # A module edited and reloaded must not be read from a stale cache.
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename)
    if not lines:
        return None
    text = "".join(lines)
    cached = _PARSED.get(filename)
    if cached is not None and cached[0] == text:
        _PARSED[filename] = _PARSED.pop(filename)  # (the most recently used: last)
        return cached[1]
    try:
        tree = ast.parse(text, filename)
    except SyntaxError:
        return None
    _PARSED.pop(filename, None)
    _PARSED[filename] = (text, tree)
    while len(_PARSED) > _PARSED_KEPT:
        del _PARSED[next(iter(_PARSED))]
    return tree


def find_node(tree: ast.Module, fn: types.FunctionType) -> ast.FunctionDef | ast.Lambda | None:
    """``fn``'s ``def`` or ``lambda`` node in ``tree`` (``None`` if it is not there)."""
    code = fn.__code__
    first = code.co_firstlineno
    lambdas, defs = _functions_of(_statement_at(tree, first))
    if code.co_name == "<lambda>":
        cands = lambdas.get(first, [])
        if len(cands) > 1:
            cands = _match_lambda(cands, code)
        return cands[0] if cands else None
    for n in defs.get(code.co_name, ()):
        start = n.decorator_list[0].lineno if n.decorator_list else n.lineno
        if start == first or n.lineno == first:
            return n  # type: ignore[return-value]
    return None


#: Per tree (by ``id``, with the tree itself, so that an id reused by a new tree is not
#: taken for the old one): the first lines of its top-level statements, and the statements.
_STARTS: dict[int, tuple[ast.Module, list[int], list[ast.stmt]]] = {}


def _statement_at(tree: ast.Module, line: int) -> ast.AST:
    """The top-level statement of ``tree`` spanning ``line`` (decorators included), or the
    whole tree where none does: a function is searched for in it alone, not in a module of
    hundreds of rules."""
    got = _STARTS.get(id(tree))
    if got is None or got[0] is not tree:
        stmts = list(tree.body)
        starts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))])
                  for s in stmts]
        got = (tree, starts, stmts)
        _STARTS[id(tree)] = got
        while len(_STARTS) > _PARSED_KEPT + 2:
            del _STARTS[next(iter(_STARTS))]
    _, starts, stmts = got
    k = bisect.bisect_right(starts, line) - 1
    if k >= 0 and line <= (stmts[k].end_lineno or 0):
        return stmts[k]
    return tree


#: The functions of the statements searched last (by ``id``, with the statement itself):
#: a statement declaring many lambdas (a table of rules) is walked once, not once each.
_INDEXED: dict[int, tuple[ast.AST, dict[int, list[ast.Lambda]], dict[str, list[ast.AST]]]] = {}


def _functions_of(tree: ast.AST) -> tuple[dict[int, list[ast.Lambda]],
                                           dict[str, list[ast.AST]]]:
    """The lambdas of ``tree`` by first line and its ``def`` nodes by name, in walk order."""
    got = _INDEXED.get(id(tree))
    if got is None or got[0] is not tree:
        lambdas: dict[int, list[ast.Lambda]] = {}
        defs: dict[str, list[ast.AST]] = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Lambda):
                lambdas.setdefault(n.lineno, []).append(n)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(n.name, []).append(n)
        got = (tree, lambdas, defs)
        _INDEXED[id(tree)] = got
        while len(_INDEXED) > 64:
            del _INDEXED[next(iter(_INDEXED))]
    return got[1], got[2]


def _match_lambda(cands: list[ast.Lambda], code: types.CodeType) -> list[ast.Lambda]:
    """Pick among several lambdas on one line by argument names, then by column."""
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    same = [c for c in cands if [a.arg for a in c.args.args + c.args.kwonlyargs] == names]
    if len(same) <= 1 or not hasattr(code, "co_positions"):
        return same or cands
    cols = {p[2] for p in code.co_positions() if p[2] is not None and p[0] == code.co_firstlineno}
    for c in same:
        if c.body.col_offset in cols or any(c.body.col_offset <= col < (c.body.end_col_offset or 0)
                                            for col in cols):
            return [c]
    return same


@functools.lru_cache(maxsize=512)
def in_wengert(filename: str) -> bool:
    """Whether ``filename`` is one of wengert's own modules (a run-time helper of generated
    code, met when that code is differentiated again): errors there are the user's call's."""
    here = os.path.dirname(os.path.realpath(__file__))
    return os.path.realpath(filename).startswith(here + os.sep)


@functools.lru_cache(maxsize=512)
def in_standard_library(filename: str) -> bool:
    """Whether ``filename`` is a module of Python's standard library (not an installed
    package): code there is not the user's to change, so errors in it are reported at the
    user's call."""
    paths = sysconfig.get_paths()
    path = os.path.realpath(filename)
    return path.startswith(os.path.realpath(paths["stdlib"]) + os.sep) and \
        not path.startswith(os.path.realpath(paths["purelib"]) + os.sep)


@functools.lru_cache(maxsize=512)
def in_installed_library(filename: str) -> bool:
    """Whether ``filename`` is a module of an installed package (``site-packages``: SciPy's
    wrappers, say), not wengert's: its code is not the user's to change, so errors in it
    are reported at the user's call."""
    paths = sysconfig.get_paths()
    path = os.path.realpath(filename)
    return any(path.startswith(os.path.realpath(paths[k]) + os.sep)
               for k in ("purelib", "platlib")) and not in_wengert(filename)
