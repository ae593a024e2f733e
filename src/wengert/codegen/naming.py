"""Every identifier in generated code comes from here.

Values are named after the user's variables (``s``, ``x_bar``); two values share
a Python name only when liveness proves they never need to exist at once, so
``s = s * x`` stays ``s = s * x`` rather than ``s_2 = s_1 * x``.
"""

from __future__ import annotations

import builtins
import keyword

from wengert.analysis.liveness import Liveness
from wengert.ir import nodes as n
from wengert.vocabulary import adjoint_name, pullback_name, sanitize, tangent_name


class Namer:
    """Assigns names to values of one function scope, avoiding interference.

    The one authority for local names in generated code. Its rules:

    * a name the user wrote (``user_names``) is given only to values of that user
      variable (hint exactly that name, marked :class:`~wengert.ir.nodes.UserName`);
      every generated name (temporaries, ``x_bar``, ``x_dot``, ``s_1`` versions) is
      fresh against all of them;
    * a name belongs to one *family* (the hint it was made from): values of two
      families never share a name, and two temporaries never share one, so a name
      always means one thing;
    * within a family, two values share a name only when liveness proves they are
      never needed at once (``s = s * x`` stays ``s``).
    """

    def __init__(self, live: Liveness, reserved: set[str], pinned: set[int],
                 user_names: set[str] | frozenset[str] = frozenset()) -> None:
        self.live = live
        self.reserved = set(reserved)
        self.pinned = pinned
        self.user = frozenset(user_names)
        self.names: dict[int, str] = {}
        self.holders: dict[str, list[n.Value]] = {}
        self.family: dict[str, str] = {}
        self.counters: dict[str, int] = {}

    def name_of(self, v: n.Value) -> str:
        """The name given to ``v`` (values never named get ``_``)."""
        return self.names.get(v.id, "_")

    def has(self, v: n.Value) -> bool:
        """Whether ``v`` was given a name."""
        return v.id in self.names

    def _free(self, name: str, group: list[n.Value], live: set[int] | frozenset[int],
              base: str, user: bool, phi: frozenset[int] = frozenset()) -> bool:
        if name in self.reserved or keyword.iskeyword(name):
            return False
        if name in self.user and not (user and name == base):
            return False
        fam = self.family.get(name)
        if fam is not None and fam != base:
            return False
        ids = {v.id for v in group}
        holders = [w for w in self.holders.get(name, ()) if w.id not in ids]
        if base == "t" and any(w.id not in phi for w in holders):
            return False  # a temporary is never rebound to an unrelated value
        for w in holders:
            if w.id in live or w.id in self.pinned:
                return False
        if any(v.id in self.pinned for v in group) and holders:
            return False
        return True

    def assign(self, group: list[n.Value], live: set[int] | frozenset[int],
               hint: str | None = None, fixed: str | None = None,
               prefer: str | None = None, phi: list[n.Value] = ()) -> str:
        """Give every value of ``group`` one name free of interference with ``live``.

        ``prefer``: a name to try first, held by ``phi``, the values that flow into the
        group (a loop variable's initial value, the values an ``if``'s arms yield): one
        variable, which may share a name even when it is a temporary.
        """
        if fixed is not None:
            name = fixed
            base = self.family.get(fixed, fixed)
        else:
            h = hint or next((v.hint for v in group if v.hint), None)
            user = isinstance(h, n.UserName)
            base = sanitize(h or "t")
            if base in ("t", "_") or base.startswith("."):
                base, user = "t", False
            partners = frozenset(v.id for v in phi)
            if prefer is not None and self.family.get(prefer) == "t" and base == "t" or \
                    prefer is not None and self.family.get(prefer, base) == base:
                fam = self.family.get(prefer, base)
                ok = self._free(prefer, group, live, fam, user and prefer == base, partners)
            else:
                ok = False
            if ok:
                name = prefer
            elif base != "t" and self._free(base, group, live, base, user):
                name = base
            else:
                k = self.counters.get(base, 0)
                while True:
                    k += 1
                    name = f"t{k}" if base == "t" else f"{base}_{k}"
                    if self._free(name, group, live, base, False):
                        break
                if base == "t":
                    self.counters[base] = k
        self.family.setdefault(name, base)
        for v in group:
            self.names[v.id] = name
            self.holders.setdefault(name, []).append(v)
        return name

    def fresh(self, base: str) -> str:
        """A name used by nothing else in this scope (for helper variables)."""
        base = sanitize(base)
        name = base
        k = 0
        while name in self.holders or name in self.reserved or name in self.user:
            k += 1
            name = f"{base}{k}"
        self.holders[name] = []
        self.family[name] = name
        self.reserved.add(name)
        return name


RESERVED_BUILTINS = {"True", "False", "None"} | set(dir(builtins))

__all__ = ["Namer", "adjoint_name", "pullback_name", "sanitize", "tangent_name"]
