"""The SSA IR: values, a small closed set of operations, and structured regions.

Control flow is structured (MLIR ``scf`` style): ``If``, ``For``, ``While`` and
``With`` own regions, and every value that flows out of a region does so
explicitly, through the region's terminator (``Yield``) into the op's results.
Loop-carried values are region arguments. ``break``/``continue``/early
``return`` are normalised by the frontend into flags and guarded regions, so a
loop has one shape: a body that yields the next carried values, and optional
*exit flags* (carried booleans) that end the loop when set.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wengert.diagnostics import SourceLoc

_ids = itertools.count(1)


class UserName(str):
    """A value hint that is a name the user wrote (a variable, a parameter).

    Hints of generated values are plain ``str`` (``"x_bar"``, ``"loop"``). The mark
    travels with the string wherever a hint is copied, and is lost by any string
    operation (``f"{hint}_bar"`` is generated), so code generation can tell the user's
    names from its own and keep every generated name fresh against them.
    """

    __slots__ = ()


def user_hint(name: str | None) -> str | None:
    """``name`` marked as the user's (``None`` stays ``None``)."""
    return None if name is None else UserName(name)


def demote_hints(fn: Function) -> None:
    """Unmark every user name in ``fn`` (a rule body: its variables are wengert's own)."""
    for a in fn.body.args:
        a.hint = _plain(a.hint)
    for op in walk(fn.body):
        for v in [*op.results, *region_args(op)]:
            v.hint = _plain(v.hint)
        if isinstance(op, MakeFunction):
            for a in op.func.body.args:
                a.hint = _plain(a.hint)


def _plain(h: str | None) -> str | None:
    return None if h is None else str.__str__(h)


class Value:
    """An SSA value, defined once (an op result or a region argument), used where it dominates.

    ``hint`` is the user's variable name when the value was assigned to one; code
    generation names the value after it (``x``, ``x_bar``) when it can.
    """

    __slots__ = ("id", "hint", "loc")

    def __init__(self, hint: str | None = None, loc: SourceLoc | None = None) -> None:
        self.id = next(_ids)
        self.hint = hint
        self.loc = loc

    def __repr__(self) -> str:
        return f"%{self.hint or ''}{self.id}"


class _Unbound:
    """The value of a local variable that has not been assigned on some path."""

    _instance: _Unbound | None = None

    def __new__(cls) -> _Unbound:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNBOUND"

    def __reduce__(self) -> str:
        return "UNBOUND"


#: Sentinel constant for "variable not assigned on this path".
UNBOUND = _Unbound()


class Op:
    """Base class of operations. ``results`` are the values it defines."""

    results: list[Value]
    loc: SourceLoc | None

    def operands(self) -> list[Value]:
        """Values read directly by this op, in Python evaluation order."""
        return []

    def set_operands(self, new: list[Value]) -> None:
        """Replace operands positionally (same length as :meth:`operands`)."""
        assert not new

    def regions(self) -> list[Region]:
        """Regions owned by this op (empty for straight-line ops)."""
        return []

    @property
    def result(self) -> Value:
        """The single result of a one-result op."""
        assert len(self.results) == 1, self
        return self.results[0]


@dataclass(eq=False)
class Region:
    """A list of ops ending in a terminator (``Yield`` or ``Return``), with entry arguments."""

    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)

    @property
    def terminator(self) -> Op:
        """The region's last op."""
        return self.ops[-1]


@dataclass(eq=False)
class Const(Op):
    """A constant: a literal, or an object resolved at lowering time (module, function, global).

    ``origin`` is the source expression it came from (``"math.sin"``, ``"SCALE"``) so
    generated code can say ``math.sin`` instead of an anonymous reference.
    """

    value: Any
    results: list[Value]
    origin: str | None = None
    #: The object the first dotted part of ``origin`` names (``math`` for ``math.sin``).
    root: Any = None
    loc: SourceLoc | None = None


@dataclass(eq=False)
class Call(Op):
    """``fn(*args, **kwargs)``. Every operator is a call of its ``operator`` function.

    ``starred`` holds indices of ``args`` that are ``*iterable``; a ``kwargs`` entry
    with name ``None`` is a ``**mapping``.
    """

    fn: Value
    args: list[Value]
    kwargs: list[tuple[str | None, Value]]
    results: list[Value]
    starred: tuple[int, ...] = ()
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.fn, *self.args, *(v for _, v in self.kwargs)]

    def set_operands(self, new: list[Value]) -> None:
        n = len(self.args)
        self.fn = new[0]
        self.args = list(new[1:1 + n])
        self.kwargs = [(k, v) for (k, _), v in zip(self.kwargs, new[1 + n:])]


@dataclass(eq=False)
class GetAttr(Op):
    """``obj.name``."""

    obj: Value
    name: str
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.obj]

    def set_operands(self, new: list[Value]) -> None:
        (self.obj,) = new


@dataclass(eq=False)
class SetAttr(Op):
    """``obj.name = value`` (mutation; no results)."""

    obj: Value
    name: str
    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        # Python evaluates the right-hand side before the target object.
        return [self.value, self.obj]

    def set_operands(self, new: list[Value]) -> None:
        self.value, self.obj = new


@dataclass(eq=False)
class GetItem(Op):
    """``obj[index]``."""

    obj: Value
    index: Value
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.obj, self.index]

    def set_operands(self, new: list[Value]) -> None:
        self.obj, self.index = new


@dataclass(eq=False)
class SetItem(Op):
    """``obj[index] = value`` (mutation; no results)."""

    obj: Value
    index: Value
    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.value, self.obj, self.index]

    def set_operands(self, new: list[Value]) -> None:
        self.value, self.obj, self.index = new


@dataclass(eq=False)
class BuildSlice(Op):
    """``lower:upper:step``; a missing part is ``None`` (not a value)."""

    lower: Value | None
    upper: Value | None
    step: Value | None
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [v for v in (self.lower, self.upper, self.step) if v is not None]

    def set_operands(self, new: list[Value]) -> None:
        it = iter(new)
        self.lower = next(it) if self.lower is not None else None
        self.upper = next(it) if self.upper is not None else None
        self.step = next(it) if self.step is not None else None


@dataclass(eq=False)
class Build(Op):
    """A tuple, list or set display; ``starred`` items are splatted (``[*a, 1]``)."""

    kind: str  # "tuple" | "list" | "set"
    items: list[Value]
    results: list[Value]
    starred: tuple[int, ...] = ()
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return list(self.items)

    def set_operands(self, new: list[Value]) -> None:
        self.items = list(new)


@dataclass(eq=False)
class BuildDict(Op):
    """A dict display; a key of ``None`` means ``**value``."""

    keys: list[Value | None]
    values: list[Value]
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        out: list[Value] = []
        for k, v in zip(self.keys, self.values):
            if k is not None:
                out.append(k)
            out.append(v)
        return out

    def set_operands(self, new: list[Value]) -> None:
        it = iter(new)
        keys: list[Value | None] = []
        values: list[Value] = []
        for k in self.keys:
            keys.append(next(it) if k is not None else None)
            values.append(next(it))
        self.keys, self.values = keys, values


@dataclass(eq=False)
class Unpack(Op):
    """``a, *b, c = value``: ``len(results)`` targets, ``star`` the index of the starred one."""

    value: Value
    results: list[Value]
    star: int | None = None
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.value]

    def set_operands(self, new: list[Value]) -> None:
        (self.value,) = new


@dataclass(eq=False)
class FormatValue(Op):
    """One ``{value!conv:spec}`` field of an f-string, producing a ``str``."""

    value: Value
    conversion: int
    spec: Value | None
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.value] + ([self.spec] if self.spec is not None else [])

    def set_operands(self, new: list[Value]) -> None:
        self.value = new[0]
        self.spec = new[1] if self.spec is not None else None


@dataclass(eq=False)
class JoinStr(Op):
    """An f-string: the concatenation of string parts."""

    parts: list[Value]
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return list(self.parts)

    def set_operands(self, new: list[Value]) -> None:
        self.parts = list(new)


@dataclass(eq=False)
class Raise(Op):
    """``raise exc from cause``; ``exc`` ``None`` is a bare ``raise``. Control never continues."""

    exc: Value | None
    cause: Value | None
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [v for v in (self.exc, self.cause) if v is not None]

    def set_operands(self, new: list[Value]) -> None:
        it = iter(new)
        self.exc = next(it) if self.exc is not None else None
        self.cause = next(it) if self.cause is not None else None


@dataclass(eq=False)
class Signature:
    """The parameter list of a function: names in order, and which are special.

    Defaults are not part of the IR (the compiled function reuses the original
    default objects) except for nested functions, whose defaults are op operands.
    """

    posonly: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    vararg: str | None = None
    kwonly: list[str] = field(default_factory=list)
    kwarg: str | None = None

    def names(self) -> list[str]:
        """Every parameter name in the order of the function's region arguments."""
        out = [*self.posonly, *self.args]
        if self.vararg:
            out.append(self.vararg)
        out.extend(self.kwonly)
        if self.kwarg:
            out.append(self.kwarg)
        return out


@dataclass(eq=False)
class Function:
    """A lowered function: a name, a signature and a body region whose args are the parameters."""

    name: str
    signature: Signature
    body: Region
    filename: str = "<unknown>"
    loc: SourceLoc | None = None
    #: Source lines keyed by line number, used for ``# grad of:`` comments.
    source_lines: dict[int, str] = field(default_factory=dict)
    docstring: str | None = None


@dataclass(eq=False)
class MakeFunction(Op):
    """Defines a nested function or lambda; its body may read values of the enclosing scope.

    ``defaults`` and ``kw_defaults`` are evaluated where the ``def`` stands, as in Python.
    """

    func: Function
    defaults: list[Value]
    kw_defaults: list[Value | None]
    results: list[Value]
    is_lambda: bool = False
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [*self.defaults, *(v for v in self.kw_defaults if v is not None)]

    def set_operands(self, new: list[Value]) -> None:
        n = len(self.defaults)
        self.defaults = list(new[:n])
        it = iter(new[n:])
        self.kw_defaults = [next(it) if v is not None else None for v in self.kw_defaults]

    def regions(self) -> list[Region]:
        return [self.func.body]


@dataclass(eq=False)
class If(Op):
    """``if cond`` with two regions; each yields one value per result."""

    cond: Value
    then: Region
    orelse: Region
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.cond]

    def set_operands(self, new: list[Value]) -> None:
        (self.cond,) = new

    def regions(self) -> list[Region]:
        return [self.then, self.orelse]


@dataclass(eq=False)
class For(Op):
    """``for target in iterable`` with loop-carried values.

    ``body.args`` is ``[item, *carried]``; the body yields the next carried values;
    ``results`` are the carried values after the loop. The loop stops early after an
    iteration in which a carried value listed in ``exit_flags`` is true.
    """

    iterable: Value
    inits: list[Value]
    body: Region
    results: list[Value]
    exit_flags: list[int] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.iterable, *self.inits]

    def set_operands(self, new: list[Value]) -> None:
        self.iterable = new[0]
        self.inits = list(new[1:])

    def regions(self) -> list[Region]:
        return [self.body]

    @property
    def carried_args(self) -> list[Value]:
        """The body's arguments for the carried values (without the item)."""
        return self.body.args[1:]


@dataclass(eq=False)
class While(Op):
    """``while cond`` with loop-carried values.

    ``cond`` and ``body`` share the argument list ``args`` (one per carried value):
    ``cond`` yields a single truth value; ``body`` yields the next carried values.
    ``exit_flags`` as in :class:`For`.
    """

    inits: list[Value]
    args: list[Value]
    cond: Region
    body: Region
    results: list[Value]
    exit_flags: list[int] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return list(self.inits)

    def set_operands(self, new: list[Value]) -> None:
        self.inits = list(new)

    def regions(self) -> list[Region]:
        return [self.cond, self.body]

    @property
    def carried_args(self) -> list[Value]:
        """The carried values as seen inside the loop."""
        return self.args


@dataclass(eq=False)
class With(Op):
    """``with manager as target``: the manager really runs around ``body``.

    ``body.args`` is ``[target]`` (the value ``__enter__`` returned); the body yields
    the values assigned in it, which become ``results``. ``inits`` are those
    variables' values before the block: a manager that suppresses an exception
    leaves them in place, so they are the results' starting values (like loop slots).
    """

    manager: Value
    inits: list[Value]
    body: Region
    results: list[Value]
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.manager, *self.inits]

    def set_operands(self, new: list[Value]) -> None:
        self.manager = new[0]
        self.inits = list(new[1:])

    def regions(self) -> list[Region]:
        return [self.body]


@dataclass(eq=False)
class Yield(Op):
    """Terminator of an ``If``/``For``/``While``/``With`` region."""

    values: list[Value]
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return list(self.values)

    def set_operands(self, new: list[Value]) -> None:
        self.values = list(new)


@dataclass(eq=False)
class Return(Op):
    """Terminator of a function body."""

    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        return [self.value]

    def set_operands(self, new: list[Value]) -> None:
        (self.value,) = new


TERMINATORS = (Yield, Return)


def walk(region: Region) -> Iterator[Op]:
    """Every op of ``region`` and its nested regions, in program order (pre-order)."""
    for op in region.ops:
        yield op
        for r in op.regions():
            yield from walk(r)


def region_args(op: Op) -> list[Value]:
    """Values an op defines at the entry of its regions (item, carried, with-target)."""
    if isinstance(op, While):
        return list(op.args)
    out: list[Value] = []
    for r in op.regions():
        if not isinstance(op, MakeFunction):
            out.extend(r.args)
    return out
