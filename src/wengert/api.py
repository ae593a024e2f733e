"""The public differential operators, ``show``, and the caches behind them.

Every cache entry remembers the names it resolved (globals, closure cells,
builtins); an entry whose names no longer resolve to the same objects is
rebuilt, so rebinding a global or redefining a helper is seen at the next call.
Nothing is cached when a transform fails.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from wengert.codegen.emit import generate
from wengert.frontend.lower import lower_with_deps
from wengert.frontend.source import Dependency, unwrap
from wengert.ir import nodes as n
from wengert.ir.printer import print_function


@dataclass
class _Entry:
    ir: n.Function
    deps: list[Dependency]
    code: Any = None
    globals: Any = None
    compiled: Any = None
    source: str | None = None

    def valid(self, fn: Any) -> bool:
        return self.code is fn.__code__ and self.globals is fn.__globals__ and \
            all(d.still_valid() for d in self.deps)


_PRIMAL_CACHE: dict[Any, _Entry] = {}


def _key(fn: Any) -> Any:
    # Identity, not equality: code objects of two identical modules compare equal.
    # The cells' contents and the globals are checked by the entry itself.
    return (id(fn.__code__), id(fn.__globals__), tuple(id(c) for c in (fn.__closure__ or ())))


def _primal_entry(fn: Any) -> _Entry:
    key = _key(fn)
    entry = _PRIMAL_CACHE.get(key)
    if entry is not None and entry.valid(fn):
        return entry
    _PRIMAL_CACHE.pop(key, None)
    ir, deps = lower_with_deps(fn)
    entry = _Entry(ir, deps, fn.__code__, fn.__globals__)
    _PRIMAL_CACHE[key] = entry
    return entry


def lower_ir(f: Any) -> n.Function:
    """The (cached) IR of ``f``."""
    fn, _, _ = unwrap(f)
    return _primal_entry(fn).ir


def primal(f: Any) -> Any:
    """``f`` regenerated from its IR: a compiled function that behaves like ``f``."""
    fn, bound_args, bound_kwargs = unwrap(f)
    entry = _primal_entry(fn)
    if entry.compiled is None:
        compiled, source = generate(entry.ir, f"{fn.__qualname__}:primal")
        compiled.__defaults__ = fn.__defaults__
        compiled.__kwdefaults__ = fn.__kwdefaults__
        entry.compiled, entry.source = compiled, source
    out = entry.compiled
    if bound_args or bound_kwargs:
        out = functools.partial(out, *bound_args, **bound_kwargs)
    return out


def show(f: Any, mode: str = "ir", **options: Any) -> str:
    """Text of what wengert makes of ``f``: ``"ir"``, ``"primal"``, ``"vjp"`` or ``"jvp"``."""
    fn, _, _ = unwrap(f)
    if mode == "ir":
        return print_function(_primal_entry(fn).ir)
    if mode == "primal":
        primal(fn)
        return _primal_entry(fn).source or ""
    raise ValueError(f"unknown mode {mode!r}: expected 'ir' or 'primal'")
