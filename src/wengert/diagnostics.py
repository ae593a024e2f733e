"""Errors and warnings that point at the user's source like a compiler does.

Every diagnostic carries a :class:`SourceLoc` and renders as::

    path/to/file.py:12:9: error: generators are not supported
       12 |     y = yield x
          |         ^^^^^^^
    hint: wengert differentiates ordinary functions; turn the generator into a loop

so that the user sees *their* line, never a traceback from inside wengert.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A span in a source file: 1-based line, 0-based columns (as in ``ast``)."""

    filename: str
    lineno: int
    col: int = 0
    end_lineno: int | None = None
    end_col: int | None = None
    source_line: str | None = None

    def line_text(self) -> str:
        """The text of the first line of the span (without its newline)."""
        if self.source_line is not None:
            return self.source_line
        return linecache.getline(self.filename, self.lineno).rstrip("\n")

    def short(self) -> str:
        """``file:line:col`` with a 1-based column, the form editors jump to."""
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


def render(kind: str, message: str, loc: SourceLoc | None, hint: str | None = None,
           notes: tuple[str, ...] = ()) -> str:
    """Render a diagnostic: header, the source line with a caret underline, hint and notes."""
    if loc is None:
        out = [f"{kind}: {message}"]
    else:
        out = [f"{loc.short()}: {kind}: {message}"]
        text = loc.line_text()
        if text:
            gutter = f"{loc.lineno:>5} | "
            out.append(gutter + text)
            if loc.end_lineno is not None and loc.end_lineno != loc.lineno:
                end = len(text)
            else:
                end = loc.end_col if loc.end_col is not None else loc.col + 1
            width = max(1, end - loc.col)
            out.append(" " * (len(gutter) - 2) + "| " + " " * loc.col + "^" * width)
    if hint:
        out.append(f"hint: {hint}")
    for note in notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def describe(obj: object) -> str:
    """How a message names a callable: its qualified name (``math.sin``, ``Layer.step``),
    or for any other object what it is (``a Polynomial object``), never a raw repr."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(name, str):
        module = getattr(obj, "__module__", None)
        if module in ("math", "numpy", "operator", "_operator", "cmath", "statistics"):
            return f"{module.lstrip('_')}.{name}"
        return name
    return f"a {type(obj).__qualname__} object"


class WengertError(Exception):
    """Base class of every error wengert raises about the user's program."""

    kind = "error"

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None,
                 notes: tuple[str, ...] | list[str] = ()) -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        self.notes = tuple(notes)
        super().__init__(self.render())

    def render(self) -> str:
        """The full text: location, source line, caret, hint and notes."""
        return render(self.kind, self.message, self.loc, self.hint, self.notes)


class UnsupportedSyntaxError(WengertError):
    """A construct the frontend does not lower (generators, ``try``, ``global`` writes, ...)."""


class SourceUnavailableError(WengertError):
    """The function has no retrievable Python source (a builtin, a C function, a REPL line)."""


class NonDifferentiableError(WengertError):
    """An active value flows into a callee with neither a derivative rule nor Python source."""


class ReverseModeRefusal(NonDifferentiableError):
    """What reverse mode refuses and forward mode differentiates (a write into an object read
    out of a list: its adjoint is kept apart from the list's): ``grad`` then answers by
    forward mode, one direction per input scalar, where the inputs are few."""


class RuleRefusal(NonDifferentiableError, TypeError):
    """A derivative rule's refusal of what its arguments turn out to be when it runs
    (``np.sum(x, dtype=...)``, ``out=``, a QR of a wide matrix): a
    :class:`NonDifferentiableError` that is a ``TypeError`` too, as NumPy's own refusals
    of such arguments are. Raised from generated code without a location, it takes the
    user's line that the running generated line stands for (:func:`running_loc`)."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None,
                 notes: tuple[str, ...] | list[str] = ()) -> None:
        if loc is None:
            loc = running_loc()
        prefix = "wengert: "
        if loc is not None and message.startswith(prefix):
            message = message[len(prefix):]
        super().__init__(message, loc, hint, notes)


#: For each file of generated code (``<wengert:...>``), the user's source location of its
#: lines that stand for a line of the user's (``codegen.emit`` fills it). Bounded: the
#: oldest files are forgotten first.
GENERATED_LINES: dict[str, dict[int, SourceLoc]] = {}
_GENERATED_KEPT = 4096


def remember_lines(filename: str, lines: dict[int, SourceLoc]) -> None:
    """Record which user lines the lines of the generated file ``filename`` stand for."""
    if not lines:
        return
    if len(GENERATED_LINES) >= _GENERATED_KEPT:
        GENERATED_LINES.pop(next(iter(GENERATED_LINES)))
    GENERATED_LINES[filename] = lines


def running_loc() -> SourceLoc | None:
    """The user's line that the innermost running line of generated code stands for
    (``None`` when no generated code is running, or its line stands for none)."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        lines = GENERATED_LINES.get(frame.f_code.co_filename)
        if lines is not None:
            loc = lines.get(frame.f_lineno)
            if loc is not None:
                return loc
        frame = frame.f_back
    return None


class OutputNotScalarError(WengertError, TypeError):
    """A gradient (``grad``, ``hessian``'s inner gradient) asked of a function whose result
    is not one float: its Jacobian is what ``jacrev``/``jacfwd`` compute."""


class UsageError(WengertError, TypeError, ValueError):
    """A derivative asked for in a way wengert cannot answer: ``argnums`` that are not
    parameters, a gradient with respect to an int, complex inputs, arguments missing or
    unknown, a custom pullback returning the wrong structure. A ``TypeError`` and a
    ``ValueError`` too, as the same mistakes are in JAX."""


class NonDifferentiableWarning(UserWarning):
    """An active value passes through a derivative-cutting operation and the result is used."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None) -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(render("warning", message, loc, hint))


def loc_of(node, filename: str, line_offset: int = 0, lines: list[str] | None = None) -> SourceLoc:
    """The :class:`SourceLoc` of an ``ast`` node, shifted to the file's line numbers."""
    lineno = getattr(node, "lineno", 1) + line_offset
    end_lineno = getattr(node, "end_lineno", None)
    if end_lineno is not None:
        end_lineno += line_offset
    text = None
    if lines is not None:
        i = getattr(node, "lineno", 1) - 1
        if 0 <= i < len(lines):
            text = lines[i].rstrip("\n")
    return SourceLoc(filename, lineno, getattr(node, "col_offset", 0), end_lineno,
                     getattr(node, "end_col_offset", None), text)
