"""Tracebacks that show the user's code, not wengert's: its own frames are left out.

An error raised while wengert derives or runs a derivative (a refusal, a misuse of the
API, the user's own ``ZeroDivisionError`` inside the generated code) reaches the user
through a dozen frames of the driver and the transforms, which say nothing about their
program. Each public operator is an *API boundary*: an exception leaving it has the frames
of files inside this package removed from its traceback (and from those of the exceptions
it was raised from), as JAX filters its internals. What is left is the user's call, their
functions' frames and the generated code's (which lives outside the package, so a
debugger lands in it), and the one frame of the boundary that raised it again.

A fault of wengert's own (an exception of another kind raised inside its code: a bug)
keeps every frame, as does ``WENGERT_TRACEBACK_FILTERING=off`` in the environment.
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable
from typing import Any, TypeVar

#: The directory of the package: frames of files under it are wengert's own.
_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep

_F = TypeVar("_F", bound=Callable[..., Any])


def filtering() -> bool:
    """Whether tracebacks are filtered (``WENGERT_TRACEBACK_FILTERING`` is not ``off``)."""
    return os.environ.get("WENGERT_TRACEBACK_FILTERING", "on").strip().lower() not in (
        "off", "0", "false", "no")


#: Files of code wengert writes for itself (not a derivative the user reads).
_GLUE = ("<wengert:primitive:", "<wengert:fixed-arity:")


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is one of wengert's own source files, or code wengert writes
    for itself (the generated derivatives are the user's to read: they are kept)."""
    return filename.startswith(_ROOT) or filename.startswith(_GLUE)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the entries of wengert's own frames."""
    kept: list[types.TracebackType] = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def internal_fault(e: BaseException) -> bool:
    """Whether ``e`` is a fault of wengert's own: raised inside its code and not one of its
    errors (which say what is wrong with the user's program, at the user's line)."""
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return is_internal(tb.tb_frame.f_code.co_filename) and \
        not type(e).__module__.startswith("wengert.")


def filtered(e: BaseException) -> BaseException:
    """``e`` with wengert's frames left out of its traceback and of those of the exceptions
    it was raised from or during (each once); ``e`` itself, unchanged, when filtering is
    off or ``e`` is a fault of wengert's own (its frames are what a report of it needs)."""
    if not filtering() or internal_fault(e):
        return e
    seen: set[int] = set()
    x: BaseException | None = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        x.__traceback__ = filter_traceback(x.__traceback__)
        x = x.__cause__ if x.__cause__ is not None else x.__context__
    return e


def api_boundary(fn: _F) -> _F:
    """``fn`` whose exceptions leave it with wengert's frames filtered out of their
    tracebacks (see the module docstring)."""

    @functools.wraps(fn)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841  (pytest and IPython hide this frame too)
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise filtered(e)  # noqa: B904  (the same exception: its cause stays)
    return boundary  # type: ignore[return-value]
