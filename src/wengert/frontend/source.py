"""Finding a function's source and resolving the names it reads.

The whole file is parsed (and cached) rather than ``inspect.getsource``'s
snippet, so line and column numbers in diagnostics are the file's own and
lambdas or nested functions need no dedenting tricks.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import linecache
import os
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

    kind: str  # "global" | "builtin" | "cell" | "entry"
    name: Any  # (an entry's key)
    value: Any
    where: Any = None  # the globals dict, the cell, or the table

    def still_valid(self) -> bool:
        """Whether the name still resolves to the very same object."""
        try:
            if self.kind == "cell":
                return self.where.cell_contents is self.value
            if self.kind == "global":
                return self.where.get(self.name, _MISSING) is self.value
            if self.kind == "entry":
                return self.where[self.name] is self.value
            return self.name not in self.where and _builtins_of(self.where).get(
                self.name, _MISSING) is self.value
        except (ValueError, KeyError, IndexError):  # an emptied cell, an entry gone
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


    def depend_on_entry(self, table: Any, key: Any, value: Any) -> None:
        """Record that the function read ``table[key]`` as ``value`` (a constant of it)."""
        self.deps.append(Dependency("entry", key, value, table))


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
    lifted = getattr(fn, "__wengert_node__", None)
    if lifted is not None:  # (a closure's data made parameters: :func:`lift_captures`)
        return FunctionSource(fn, lifted, filename, linecache.getlines(filename))
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


# -- closures keyed by their code ------------------------------------------------------------
#
# A closure made anew on every call (``grad(lambda w: loss(w, X, y))(w)`` in a training
# loop) is a new function object each time, with new cells. Its derivative depends on its
# code, on the functions and constants it reads, and on the *types* of the data it
# captures, never on the data itself: :func:`lift_captures` gives one function per code
# object (and per function and constant captured) that takes the captured data as leading
# parameters, bound like a ``functools.partial``'s, so every closure of that code shares one
# derivation and the data is read when the derivative runs.

#: Where wengert's own functions are defined (its wrappers are closures too).
_OWN_FILES = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: Lifted functions, most recently used last (bounded: each holds what its closure held).
_LIFTED: dict[tuple, tuple[types.FunctionType, tuple[str, ...]] | None] = {}
_LIFTED_KEPT = 256

#: Code flags of generators and coroutines (``CO_GENERATOR``, ``CO_COROUTINE``,
#: ``CO_ITERABLE_COROUTINE``, ``CO_ASYNC_GENERATOR``): never lifted.
_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200

#: Values read as constants of the code, guarded by value (folded where they decide
#: control flow or shapes): a closure capturing ``n = 100`` is derived for 100.
_CONSTANT_CLASSES = (int, str, bytes, bool, type(None))


def _constant_key(v: Any) -> Any:
    """A key equal for two captured constants exactly when they are interchangeable (an
    int, a string, a tuple of them: by type and value), else ``None``."""
    if type(v) in _CONSTANT_CLASSES:
        return (type(v), v)
    if type(v) is tuple:
        keys = tuple(_constant_key(x) for x in v)
        return None if None in keys else (tuple, keys)
    return None


def _is_data(v: Any) -> bool:
    """Whether a captured value is data, read when the derivative runs: not a function, a
    class, a module or another callable (linked or inlined by identity), nor a constant,
    nor a table of callables (``ACTIVATIONS = [np.tanh, relu]``, ``OPS = {"sin":
    math.sin}``: code the function picks from, whose calls are known where they are
    written when the table is a constant)."""
    return not (_is_code(v) or isinstance(v, types.ModuleType) or
                _constant_key(v) is not None or is_table_of_code(v))


def is_table_of_code(v: Any) -> bool:
    """Whether ``v`` is a list, tuple or dict of functions (``ACTIVATIONS = [np.tanh,
    relu]``, ``OPS = {"sin": math.sin}``): code a function picks from, never data."""
    t = type(v)
    if t is not list and t is not tuple and t is not dict:
        return False
    items = list(v.values()) if t is dict else v
    # (the first item decides for a list of numbers at once)
    return bool(items) and _is_code(items[0]) and all(_is_code(x) for x in items)


def _is_code(v: Any) -> bool:
    """Whether ``v`` is code: callable, and not an object of a class written in Python
    whose ``__call__`` is a method of it (a layer ``Dense(W, b)`` called as ``layer(h)``:
    data with fields, typed by its class like an argument, its call then known where it
    is written)."""
    if not callable(v) or isinstance(v, type):
        return callable(v)
    for cls in type(v).__mro__:
        if "__call__" in vars(cls):
            return not isinstance(vars(cls)["__call__"], types.FunctionType)
    return True


def lift_captures(fn: types.FunctionType) -> tuple[types.FunctionType, tuple] | None:
    """The function of ``fn``'s code that takes the data it reads from its closure and from
    its module's globals as leading positional-only parameters, and that data (``None``
    where ``fn`` reads none and captures nothing, or cannot be so taken: a generator, an
    emptied cell, a ``nonlocal`` or ``global`` statement, ``super()``, one of wengert's
    own). Its other captures (functions, classes, modules, constants: by identity or by
    value) are its own cells', which nothing rebinds; other globals are read as before."""
    # (the same function reading the same objects as on a recent call: the same answer)
    recent = _RECENT.get(fn)
    if recent is not None and recent[0] == _identities(fn):
        return recent[1]
    got = _lift_captures(fn)
    _RECENT[fn] = (_identities(fn), got)
    while len(_RECENT) > _RECENT_KEPT:
        del _RECENT[next(iter(_RECENT))]
    return got


#: :func:`lift_captures`'s recent answers, by function: the identities and types of what it
#: read (:func:`_identities`), and the answer. Bounded: fresh closures pass through.
_RECENT: dict[types.FunctionType, tuple[tuple, Any]] = {}
_RECENT_KEPT = 64


def _identities(fn: types.FunctionType) -> tuple:
    """What :func:`lift_captures`'s answer for ``fn`` rests on: the objects its cells hold
    and the globals it reads (each by identity and type; the data among them are held by
    the answer, so their identities stay theirs), and its defaults."""
    try:
        cells = tuple((id(v), type(v)) for v in (c.cell_contents for c in fn.__closure__ or ()))
    except ValueError:  # (an emptied cell)
        cells = None
    globs = fn.__globals__
    return (cells, id(fn.__code__), id(globs), id(fn.__defaults__), id(fn.__kwdefaults__),
            tuple((id(v), type(v)) for v in (globs.get(name, _NOT_LIFTED)
                                              for name in global_reads(fn.__code__))))


def _lift_captures(fn: types.FunctionType) -> tuple[types.FunctionType, tuple] | None:
    code = fn.__code__
    if code.co_flags & _NOT_PLAIN or "__class__" in code.co_freevars or \
            code.co_filename.startswith(("<wengert:", _OWN_FILES)) or \
            hasattr(fn, "__wengert_grad__") or hasattr(fn, "__wengert_derivative__"):
        return None  # (wengert's own functions, and derivatives, are never lifted)
    try:
        values = [c.cell_contents for c in fn.__closure__ or ()]
    except ValueError:  # an emptied cell: reading it raises, as Python's own call would
        return None
    globs = fn.__globals__
    read = global_reads(code)
    shared = [name for name in read if name in globs and _is_data(globs[name])]
    if not values and not shared:
        return None
    # (A closure of constants and functions alone is lifted too: the one function of its
    # code and those values, whose cells nothing rebinds, is what its derivation rests on.)
    data = [k for k, v in enumerate(values) if _is_data(v)]
    kept = tuple(_constant_key(v) or ("id", id(v)) for k, v in enumerate(values)
                 if k not in data)
    key = (code, id(globs), tuple(data), kept, tuple(shared))
    got = _LIFTED.pop(key, _NOT_LIFTED)
    if got is _NOT_LIFTED:
        got = _lift(fn, [code.co_freevars[k] for k in data] + shared,
                    {code.co_freevars[k]: values[k] for k in range(len(values))
                     if k not in data})
    _LIFTED[key] = got  # (``None`` too: a function that cannot be lifted is not tried again)
    while len(_LIFTED) > _LIFTED_KEPT:
        del _LIFTED[next(iter(_LIFTED))]
    if got is None:
        return None
    lifted, _ = got
    if lifted.__defaults__ is not fn.__defaults__ or \
            lifted.__kwdefaults__ is not fn.__kwdefaults__:
        # (defaults belong to the object: ``lambda t, k=k`` made in a loop)
        lifted = types.FunctionType(lifted.__code__, lifted.__globals__, lifted.__name__,
                                    fn.__defaults__, lifted.__closure__)
        lifted.__kwdefaults__ = fn.__kwdefaults__
        lifted.__qualname__ = fn.__qualname__
        lifted.__wengert_node__ = got[0].__wengert_node__  # type: ignore[attr-defined]
    return lifted, (*(values[k] for k in data), *(globs[name] for name in shared))


#: A key of :data:`_LIFTED` not seen before.
_NOT_LIFTED = object()

#: The globals each code object reads (``None``: it binds one, ``global x``), by code.
_GLOBAL_READS: dict[types.CodeType, tuple[str, ...] | None] = {}


def global_reads(code: types.CodeType) -> tuple[str, ...]:
    """The module globals ``code`` (or a function, lambda or comprehension in it) reads by
    name, in order of first read; none where it assigns or deletes one (``global x``)."""
    got = _GLOBAL_READS.get(code, _NOT_LIFTED)
    if got is _NOT_LIFTED:
        names: dict[str, None] = {}
        binds = False
        todo = [code]
        while todo:
            c = todo.pop()
            for ins in dis.get_instructions(c):
                if ins.opname == "LOAD_GLOBAL":
                    names.setdefault(ins.argval, None)
                elif ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                    binds = True
            todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        got = None if binds else tuple(names)
        if len(_GLOBAL_READS) > 4 * _LIFTED_KEPT:
            _GLOBAL_READS.clear()
        _GLOBAL_READS[code] = got
    return got or ()


def _lift(fn: types.FunctionType, data: list[str], kept: dict[str, Any]
          ) -> tuple[types.FunctionType, tuple[str, ...]] | None:
    """Compile ``fn``'s source again as a function of ``data`` first and its own
    parameters, nested in a function of the names in ``kept`` (so that it reads them from
    cells holding their values); ``None`` where the source is not at hand."""
    try:
        src = get_source(fn)
    except SourceUnavailableError:
        return None
    node = src.node
    if any(isinstance(x, ast.Nonlocal) for x in ast.walk(node)) or \
            getattr(node, "decorator_list", None):
        return None
    a = node.args
    placeholder = functools.partial(ast.Constant, value=None)
    args = ast.arguments(
        posonlyargs=[ast.arg(arg=name) for name in data] +
        [ast.arg(arg=x.arg) for x in a.posonlyargs],
        args=[ast.arg(arg=x.arg) for x in a.args],
        vararg=a.vararg and ast.arg(arg=a.vararg.arg),
        kwonlyargs=[ast.arg(arg=x.arg) for x in a.kwonlyargs],
        kw_defaults=[None if d is None else placeholder() for d in a.kw_defaults],
        kwarg=a.kwarg and ast.arg(arg=a.kwarg.arg),
        defaults=[placeholder() for _ in a.defaults])
    body = [ast.Return(value=node.body)] if isinstance(node, ast.Lambda) else node.body
    inner = ast.FunctionDef(name=fn.__name__ if fn.__name__.isidentifier() else "_lambda",
                            args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None)
    ast.copy_location(inner, node)
    if isinstance(node, ast.Lambda):
        ast.copy_location(body[0], node.body)
    outer = ast.FunctionDef(
        name="_wengert_lift", body=[inner, ast.Return(value=ast.Name(inner.name, ast.Load()))],
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=k) for k in kept], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(outer, node)
    module = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    try:
        compiled = compile(module, fn.__code__.co_filename, "exec")
    except (SyntaxError, ValueError, TypeError):
        return None
    make = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    made = next(c for c in make.co_consts if isinstance(c, types.CodeType))
    if set(made.co_freevars) - set(kept):
        return None
    cells = tuple(types.CellType(kept[name]) for name in made.co_freevars)
    lifted = types.FunctionType(made, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    lifted.__kwdefaults__ = fn.__kwdefaults__
    lifted.__qualname__ = fn.__qualname__
    lifted.__wengert_node__ = inner  # type: ignore[attr-defined]
    return lifted, tuple(data)
