"""The few helpers generated code calls."""

from __future__ import annotations

from typing import Any, NoReturn


def contained_in(item: Any, container: Any) -> bool:
    """``item in container`` as a call whose arguments are in evaluation order."""
    return item in container


def not_contained_in(item: Any, container: Any) -> bool:
    """``item not in container``."""
    return item not in container


def unbound_local(name: str) -> NoReturn:
    """Raise what Python raises when a local is read before it is assigned."""
    raise UnboundLocalError(
        f"cannot access local variable {name!r} where it is not associated with a value")


def name_error(name: str) -> NoReturn:
    """Raise what Python raises for an undefined global name."""
    raise NameError(f"name {name!r} is not defined")
