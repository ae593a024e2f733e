"""The caches of derived functions, and what makes an entry stale.

Every entry remembers the names it resolved (globals, closure cells, builtins) and the
code objects it linked to; an entry whose names no longer resolve to the same objects
is rebuilt, so rebinding a global or redefining a helper is seen at the next call.
Nothing is cached when a transform fails.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from wengert.frontend.source import Dependency
from wengert.ir import nodes as n


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


PRIMALS: dict[Any, Entry] = {}


GRADIENT_IRS: dict[Any, Entry] = {}


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


VJPS: dict[Any, DerivedEntry] = {}


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


RESULT_TYPES: dict[Any, tuple[Any, list[Any]]] = {}


JVPS: dict[Any, DerivedEntry] = {}
