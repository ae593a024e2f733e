"""Finding a function's source and resolving the names it reads.

The whole file is parsed (and cached) rather than ``inspect.getsource``'s
snippet, so line and column numbers in diagnostics are the file's own and
lambdas or nested functions need no dedenting tricks.
"""

from __future__ import annotations

import ast
import builtins
import functools
import linecache
import types
from dataclasses import dataclass, field
from typing import Any

from wengert.diagnostics import SourceUnavailableError, describe
from wengert.locate import find_node, parse_file


@dataclass
class FunctionSource:
    """A Python function together with its AST node and the file it came from."""

    fn: types.FunctionType
    node: ast.FunctionDef | ast.Lambda
    filename: str
    lines: list[str]


@dataclass
class Dependency:
    """One name resolved at lowering time; the derivative is stale if it changes."""

    kind: str  # "global" | "builtin" | "cell"
    name: str
    value: Any
    where: Any = None  # the globals dict or the cell

    def still_valid(self) -> bool:
        """Whether the name still resolves to the very same object."""
        try:
            if self.kind == "cell":
                return self.where.cell_contents is self.value
            if self.kind == "global":
                return self.where.get(self.name, _MISSING) is self.value
            return self.name not in self.where and _builtins_of(self.where).get(
                self.name, _MISSING) is self.value
        except ValueError:  # an emptied cell
            return False


_MISSING = object()


@dataclass
class Resolver:
    """Resolves free names of a function: closure cells, then globals, then builtins."""

    fn: types.FunctionType
    deps: list[Dependency] = field(default_factory=list)

    def __post_init__(self) -> None:
        code = self.fn.__code__
        self.cells = dict(zip(code.co_freevars, self.fn.__closure__ or ()))
        self.globals = self.fn.__globals__

    def resolve(self, name: str) -> tuple[bool, Any]:
        """``(found, value)`` for a free name; records the dependency."""
        if name in self.cells:
            cell = self.cells[name]
            try:
                value = cell.cell_contents
            except ValueError:
                return False, None
            self.deps.append(Dependency("cell", name, value, cell))
            return True, value
        if name in self.globals:
            value = self.globals[name]
            self.deps.append(Dependency("global", name, value, self.globals))
            return True, value
        bdict = _builtins_of(self.globals)
        if name in bdict:
            value = bdict[name]
            self.deps.append(Dependency("builtin", name, value, self.globals))
            return True, value
        return False, None


def _builtins_of(globs: dict) -> dict:
    b = globs.get("__builtins__", builtins)
    return b if isinstance(b, dict) else vars(b)


def unwrap(f: Any) -> tuple[types.FunctionType, tuple, dict]:
    """The plain function behind ``f`` and the arguments already bound to it.

    Handles bound methods (``self`` is bound), ``functools.partial`` (its args and
    keywords are bound) and ``functools.wraps``-style wrappers are *not* followed:
    the wrapper is what runs, so the wrapper is what is differentiated.
    """
    args: tuple = ()
    kwargs: dict = {}
    while True:
        if isinstance(f, functools.partial):
            args = tuple(f.args) + args
            kwargs = {**f.keywords, **kwargs}
            f = f.func
        elif isinstance(f, types.MethodType):
            args = (f.__self__,) + args
            f = f.__func__
        elif not isinstance(f, (type, types.FunctionType, types.BuiltinFunctionType)) and \
                isinstance(getattr(type(f), "__call__", None),  # noqa: B004 - the class attr
                           types.FunctionType):
            # A callable object: calling it calls its class's ``__call__`` with it first.
            args = (f,) + args
            f = type(f).__call__
        else:
            break
    if not isinstance(f, types.FunctionType):
        name = describe(f)
        raise SourceUnavailableError(
            f"cannot read the source of {name!r}: it is not a Python function "
            f"({type(f).__name__})",
            hint="wengert differentiates Python functions from their source; register a "
                 "derivative for this callable with @wengert.derivative(of=...)")
    return f, args, kwargs


#: Functions wengert writes that stand for user code (wrappers calling one function).
_USER_EQUIVALENT = ("<wengert:primitive:", "<wengert:fixed-arity:", "<wengert:rule:")


#: Names the transforms give the functions they generate (wengert/vocabulary.py).
_DERIVATIVE_SUFFIXES = ("_pullback", "_vjp", "_jvp", "_grad", "_pulled_back")


def is_generated(fn: Any) -> bool:
    """Whether ``fn`` is a derivative's code that wengert generated (compiled from text
    registered with ``linecache``): a pullback, a VJP, a JVP. Not a wrapper standing for
    a user's call, nor a user's nested function regenerated inside a derivative (its
    captures are constants there: one reading an active value never escapes)."""
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", "")
    return filename.startswith("<wengert:") and not filename.startswith(_USER_EQUIVALENT) \
        and code.co_name.endswith(_DERIVATIVE_SUFFIXES)


def get_source(fn: types.FunctionType) -> FunctionSource:
    """Locate ``fn``'s ``def`` or ``lambda`` node in its (parsed) source file."""
    code = fn.__code__
    filename = code.co_filename
    if is_generated(fn):
        # A derivative wengert made (a pullback, a JVP): its closure holds values of the
        # computation it differentiates, which its source would read as constants.
        raise SourceUnavailableError(
            f"{fn.__qualname__!r} is code wengert generated for a derivative; it is not "
            "differentiated again through a value at run time",
            hint="take the derivative of the original function instead (wengert.grad of "
                 "wengert.grad, wengert.hessian)")
    made_by = getattr(fn, "__wengert_derivative__", None)
    if made_by is not None:
        # Its source is wengert's own driver code (loops over leaves, try/except).
        raise SourceUnavailableError(
            f"a function made by wengert.{made_by} is not differentiated again, except by "
            "wengert.jacfwd or wengert.jacrev around a jacfwd or jacrev (the Jacobian of a "
            "Jacobian)",
            hint="differentiate the original function: wengert.hessian(f), "
                 "wengert.jacfwd(wengert.jacrev(f)), wengert.grad(wengert.grad(f)); "
                 "wengert.grad(f) is differentiable to any order")
    tree = parse_file(filename)
    if tree is None:
        raise SourceUnavailableError(
            f"cannot read the source of {fn.__qualname__!r} (defined in {filename})",
            hint="define the function in a file (a module or script); functions typed at an "
                 "interactive prompt or created by exec() have no source to differentiate")
    node = find_node(tree, fn)
    if node is None:
        raise SourceUnavailableError(
            f"cannot find the source of {fn.__qualname__!r} in {filename}: the file changed "
            f"since the function was defined",
            hint="reload the module that defines it")
    return FunctionSource(fn, node, filename, linecache.getlines(filename))
