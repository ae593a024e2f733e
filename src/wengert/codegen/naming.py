"""Every identifier in generated code comes from here.

Values are named after the user's variables (``s``, ``x_bar``); two values share
a Python name only when liveness proves they never need to exist at once, so
``s = s * x`` stays ``s = s * x`` rather than ``s_2 = s_1 * x``.
"""

from __future__ import annotations

import builtins
import keyword
import re

from wengert.analysis.liveness import Liveness
from wengert.ir import nodes as n

_IDENT = re.compile(r"[^0-9A-Za-z_]")


def sanitize(hint: str) -> str:
    """A valid identifier derived from ``hint``."""
    s = _IDENT.sub("_", hint) or "v"
    if s[0].isdigit():
        s = "v" + s
    if keyword.iskeyword(s):
        s += "_"
    return s


def adjoint_name(name: str) -> str:
    """The name of the adjoint of a variable: ``x`` -> ``x_bar``."""
    return f"{name}_bar"


def tangent_name(name: str) -> str:
    """The name of the tangent of a variable: ``x`` -> ``x_dot``."""
    return f"{name}_dot"


def pullback_name(fn_name: str) -> str:
    """The generated pullback of ``fn_name``."""
    return f"{sanitize(fn_name)}_pullback"


class Namer:
    """Assigns names to values of one function scope, avoiding interference."""

    def __init__(self, live: Liveness, reserved: set[str], pinned: set[int]) -> None:
        self.live = live
        self.reserved = set(reserved)
        self.pinned = pinned
        self.names: dict[int, str] = {}
        self.holders: dict[str, list[n.Value]] = {}
        self.counters: dict[str, int] = {}

    def name_of(self, v: n.Value) -> str:
        """The name given to ``v`` (values never named get ``_``)."""
        return self.names.get(v.id, "_")

    def has(self, v: n.Value) -> bool:
        """Whether ``v`` was given a name."""
        return v.id in self.names

    def _free(self, name: str, group: list[n.Value], live: set[int] | frozenset[int]) -> bool:
        if name in self.reserved or keyword.iskeyword(name):
            return False
        ids = {v.id for v in group}
        for w in self.holders.get(name, ()):
            if w.id in ids:
                continue
            if w.id in live or w.id in self.pinned:
                return False
        if any(v.id in self.pinned for v in group) and self.holders.get(name):
            return False
        return True

    def assign(self, group: list[n.Value], live: set[int] | frozenset[int],
               hint: str | None = None, fixed: str | None = None) -> str:
        """Give every value of ``group`` one name free of interference with ``live``."""
        if fixed is not None:
            name = fixed
        else:
            base = sanitize(hint or next((v.hint for v in group if v.hint), None) or "t")
            if base in ("t", "_") or base.startswith("."):
                base = "t"
            name = base
            k = self.counters.get(base, 0)
            if base == "t" or not self._free(name, group, live):
                while True:
                    k += 1
                    name = f"{base}{k}" if base == "t" else f"{base}_{k}"
                    if self._free(name, group, live):
                        break
        for v in group:
            self.names[v.id] = name
            self.holders.setdefault(name, []).append(v)
        return name

    def fresh(self, base: str) -> str:
        """A name used by nothing else in this scope (for helper variables)."""
        base = sanitize(base)
        name = base
        k = 0
        while name in self.holders or name in self.reserved:
            k += 1
            name = f"{base}{k}"
        self.holders[name] = []
        self.reserved.add(name)
        return name


RESERVED_BUILTINS = {"True", "False", "None"} | set(dir(builtins))
