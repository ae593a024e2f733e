"""The caches of derived functions, and what makes an entry stale.

Every entry remembers the names it resolved (globals, closure cells, builtins) and the
code objects it linked to; an entry whose names no longer resolve to the same objects
is rebuilt, so rebinding a global or redefining a helper is seen at the next call.
Nothing is cached when a transform fails.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

from wengert.frontend.source import Dependency
from wengert.ir import nodes as n

_K = TypeVar("_K")
_V = TypeVar("_V")


class Bounded(dict[_K, _V]):
    """A dict of at most ``limit`` entries: storing one more forgets the oldest stored (a
    derivation forgotten is derived again when next asked for). Stores happen under the
    driver's build lock; lookups are plain ``dict`` lookups."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: _K, value: _V) -> None:
        super().pop(key, None)  # (stored again: the most recent)
        super().__setitem__(key, value)
        while len(self) > self.limit:
            del self[next(iter(self))]


#: How many functions (each with its argument types) each cache keeps.
CACHE_LIMIT = 4096


@dataclass
class Entry:
    ir: n.Function
    deps: list[Dependency]
    code: Any = None
    globals: Any = None
    compiled: Any = None
    source: str | None = None
    #: Parameters the function may write into (computed when first asked).
    written: frozenset[int] | None = None
    #: The same for the function called with objects of known classes (as a method of
    #: one, or given them), by the class of each parameter (``pipeline.written_params``).
    written_for: dict[tuple, frozenset[int]] = field(default_factory=dict)
    #: Whether its body takes derivatives itself (computed when first asked).
    nested: bool | None = None

    def valid(self, fn: Any) -> bool:
        # Checked on every call of a derivative: loops, not generators (a microsecond
        # matters at the fixed cost of a call).
        if self.code is not fn.__code__ or self.globals is not fn.__globals__:
            return False
        for d in self.deps:
            if not d.still_valid():
                return False
        return True


PRIMALS: Bounded[Any, Entry] = Bounded(CACHE_LIMIT)


GRADIENT_IRS: Bounded[Any, Entry] = Bounded(CACHE_LIMIT)


@dataclass
class DerivedEntry:
    primal: Entry
    compiled: Any
    source: str
    code: Any
    globals: Any
    #: What the derivatives it calls directly (and the result types it used) resolved.
    linked: list[Any] = dataclasses.field(default_factory=list)

    def valid(self, fn: Any) -> bool:
        if not self.primal.valid(fn):
            return False
        for d in self.linked:
            if not d.still_valid():
                return False
        return True


VJPS: Bounded[Any, DerivedEntry] = Bounded(CACHE_LIMIT)


class CodeDep:
    """A function linked to by identity: stale if its code object is replaced."""

    __slots__ = ("fn", "code")

    def __init__(self, fn: Any) -> None:
        self.fn, self.code = fn, fn.__code__

    def still_valid(self) -> bool:
        return self.fn.__code__ is self.code


def unique(deps: list[Any]) -> list[Any]:
    """``deps`` without repeats: each dependency object once, and one :class:`CodeDep` per
    function and code (a recursive derivative links to its function at every call site,
    and every call of a derivative checks what it rests on)."""
    seen: set[Any] = set()
    out = []
    for d in deps:
        key = (id(d.fn), id(d.code)) if type(d) is CodeDep else id(d)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


RESULT_TYPES: Bounded[Any, tuple[Any, list[Any]]] = Bounded(CACHE_LIMIT)


JVPS: Bounded[Any, DerivedEntry] = Bounded(CACHE_LIMIT)
