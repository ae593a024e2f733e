"""The words generated code is written in: how a value's derivative is named after it.

A leaf module: the transforms name the values they make with these (``x_dot``,
``x_bar``), code generation keeps every name a valid identifier, and the driver names
the functions it writes. Fresh names are chosen in :mod:`wengert.codegen.naming`.
"""

from __future__ import annotations

import keyword
import re

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


#: How every generated pullback's name ends.
PULLBACK_SUFFIX = "_pullback"


def pullback_name(fn_name: str) -> str:
    """The generated pullback of ``fn_name``."""
    return f"{sanitize(fn_name)}{PULLBACK_SUFFIX}"
