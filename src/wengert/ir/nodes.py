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
from typing import Any, ClassVar

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

    #: The fields holding the values the op reads, in Python evaluation order: each a
    #: ``Value``, an optional one (``None``: absent), or a list of values (``None`` entries
    #: absent, ``(key, value)`` pairs read for their value). Declared once per op kind;
    #: :meth:`operands` and :meth:`set_operands` (used by every pass that maps values)
    #: follow from it.
    OPERANDS: ClassVar[tuple[str, ...]] = ()
    #: Whether the op kind owns regions (``If``, ``For``, ...): walks skip
    #: :meth:`regions` for the straight-line kinds, most ops of every function.
    HAS_REGIONS: ClassVar[bool] = False

    def operands(self) -> list[Value]:
        """Values read directly by this op, in Python evaluation order."""
        out: list[Value] = []
        for name in self.OPERANDS:
            x = getattr(self, name)
            if isinstance(x, Value):
                out.append(x)
            elif x is not None:
                for item in x:
                    v = item[1] if isinstance(item, tuple) else item
                    if v is not None:
                        out.append(v)
        return out

    def set_operands(self, new: list[Value]) -> None:
        """Replace operands positionally (same length as :meth:`operands`)."""
        it = iter(new)
        for name in self.OPERANDS:
            x = getattr(self, name)
            if isinstance(x, Value):
                setattr(self, name, next(it))
            elif x is not None:
                setattr(self, name, [
                    (item[0], next(it)) if isinstance(item, tuple) else
                    (next(it) if item is not None else None) for item in x])
        rest = list(it)
        assert not rest, f"{type(self).__name__}: {len(rest)} operands too many"

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

    OPERANDS: ClassVar[tuple[str, ...]] = ('fn', 'args', 'kwargs')

    fn: Value
    args: list[Value]
    kwargs: list[tuple[str | None, Value]]
    results: list[Value]
    starred: tuple[int, ...] = ()
    loc: SourceLoc | None = None

    def operands(self) -> list[Value]:
        # (the commonest op: spelled out, the same as the generic reading of OPERANDS)
        out = [self.fn, *self.args]
        if self.kwargs:
            out.extend(v for _, v in self.kwargs)
        return out


@dataclass(eq=False)
class GetAttr(Op):
    """``obj.name``."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('obj',)

    obj: Value
    name: str
    results: list[Value]
    loc: SourceLoc | None = None


@dataclass(eq=False)
class SetAttr(Op):
    """``obj.name = value`` (mutation; no results)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('value', 'obj')

    obj: Value
    name: str
    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass(eq=False)
class GetItem(Op):
    """``obj[index]``."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('obj', 'index')

    obj: Value
    index: Value
    results: list[Value]
    loc: SourceLoc | None = None


@dataclass(eq=False)
class SetItem(Op):
    """``obj[index] = value`` (mutation; no results)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('value', 'obj', 'index')

    obj: Value
    index: Value
    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass(eq=False)
class BuildSlice(Op):
    """``lower:upper:step``; a missing part is ``None`` (not a value)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('lower', 'upper', 'step')

    lower: Value | None
    upper: Value | None
    step: Value | None
    results: list[Value]
    loc: SourceLoc | None = None


@dataclass(eq=False)
class Build(Op):
    """A tuple, list or set display; ``starred`` items are splatted (``[*a, 1]``)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('items',)

    kind: str  # "tuple" | "list" | "set"
    items: list[Value]
    results: list[Value]
    starred: tuple[int, ...] = ()
    loc: SourceLoc | None = None


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

    OPERANDS: ClassVar[tuple[str, ...]] = ('value',)

    value: Value
    results: list[Value]
    star: int | None = None
    loc: SourceLoc | None = None


@dataclass(eq=False)
class FormatValue(Op):
    """One ``{value!conv:spec}`` field of an f-string, producing a ``str``."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('value', 'spec')

    value: Value
    conversion: int
    spec: Value | None
    results: list[Value]
    loc: SourceLoc | None = None


@dataclass(eq=False)
class JoinStr(Op):
    """An f-string: the concatenation of string parts."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('parts',)

    parts: list[Value]
    results: list[Value]
    loc: SourceLoc | None = None


@dataclass(eq=False)
class Raise(Op):
    """``raise exc from cause``; ``exc`` ``None`` is a bare ``raise``. Control never continues."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('exc', 'cause')

    exc: Value | None
    cause: Value | None
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None


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
    #: A VJP's loop records (the forward loop body, the record pushed, the reverse loop
    #: body, its unpacking) that a pass after the in-place rewrite may still shrink, where
    #: fusing adjoint calls left fields unread. Empty for every other function.
    records: list[tuple[Region, Build, Region, Unpack]] = field(default_factory=list)
    #: A VJP's loops over a range, a list or a tuple whose record (``stack``, in the region
    #: ``fwd``) holds their item and more, with their iterable and its type: where that
    #: pass leaves the item alone, nothing need be pushed.
    item_loops: list[tuple[For, Value, Build, Region, type]] = field(default_factory=list)
    #: A VJP's slices of lists and tuples (``m[1:]``), by the id of the value: where a
    #: record holds one of a list the forward only reads, the reverse slices it again.
    list_slices: set[int] = field(default_factory=set)


@dataclass(eq=False)
class MakeFunction(Op):
    """Defines a nested function or lambda; its body may read values of the enclosing scope.

    ``defaults`` and ``kw_defaults`` are evaluated where the ``def`` stands, as in Python.
    """

    HAS_REGIONS: ClassVar[bool] = True
    OPERANDS: ClassVar[tuple[str, ...]] = ('defaults', 'kw_defaults')

    func: Function
    defaults: list[Value]
    kw_defaults: list[Value | None]
    results: list[Value]
    is_lambda: bool = False
    loc: SourceLoc | None = None
    #: A name it reads that a loop around it binds again at its next pass, and where it
    #: reads it: sound (the SSA capture is the value Python's closure would see) while the
    #: function is only called in the pass that makes it (checked once helpers are inlined:
    #: ``transforms.checks.check_iteration_closures``).
    per_iteration: tuple[str, SourceLoc | None] | None = None

    def regions(self) -> list[Region]:
        return [self.func.body]


@dataclass(eq=False)
class If(Op):
    """``if cond`` with two regions; each yields one value per result."""

    HAS_REGIONS: ClassVar[bool] = True
    OPERANDS: ClassVar[tuple[str, ...]] = ('cond',)

    cond: Value
    then: Region
    orelse: Region
    results: list[Value]
    loc: SourceLoc | None = None

    def regions(self) -> list[Region]:
        return [self.then, self.orelse]


@dataclass(eq=False)
class For(Op):
    """``for target in iterable`` with loop-carried values.

    ``body.args`` is ``[item, *carried]``; the body yields the next carried values;
    ``results`` are the carried values after the loop. The loop stops early after an
    iteration in which a carried value listed in ``exit_flags`` is true.
    """

    HAS_REGIONS: ClassVar[bool] = True
    OPERANDS: ClassVar[tuple[str, ...]] = ('iterable', 'inits')

    iterable: Value
    inits: list[Value]
    body: Region
    results: list[Value]
    exit_flags: list[int] = field(default_factory=list)
    loc: SourceLoc | None = None

    def regions(self) -> list[Region]:
        return [self.body]

    @property
    def carried_args(self) -> list[Value]:
        """The body's arguments for the carried values (without the item)."""
        return self.body.args[1:]


@dataclass(eq=False)
class While(Op):
    """``while cond`` with loop-carried values.

    ``cond`` and ``body`` read the loop's ``args`` (one per carried value; the regions
    have no arguments of their own): ``cond`` yields a single truth value; ``body``
    yields the next carried values.
    ``exit_flags`` as in :class:`For`.
    """

    HAS_REGIONS: ClassVar[bool] = True
    OPERANDS: ClassVar[tuple[str, ...]] = ('inits',)

    inits: list[Value]
    args: list[Value]
    cond: Region
    body: Region
    results: list[Value]
    exit_flags: list[int] = field(default_factory=list)
    loc: SourceLoc | None = None

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

    HAS_REGIONS: ClassVar[bool] = True
    OPERANDS: ClassVar[tuple[str, ...]] = ('manager', 'inits')

    manager: Value
    inits: list[Value]
    body: Region
    results: list[Value]
    loc: SourceLoc | None = None

    def regions(self) -> list[Region]:
        return [self.body]


@dataclass(eq=False)
class Yield(Op):
    """Terminator of an ``If``/``For``/``While``/``With`` region."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('values',)

    values: list[Value]
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None


@dataclass(eq=False)
class Return(Op):
    """Terminator of a function body."""

    OPERANDS: ClassVar[tuple[str, ...]] = ('value',)

    value: Value
    results: list[Value] = field(default_factory=list)
    loc: SourceLoc | None = None


TERMINATORS = (Yield, Return)


def walk(region: Region) -> Iterator[Op]:
    """Every op of ``region`` and its nested regions, in program order (pre-order)."""
    return _walk(region, True)


def walk_local(region: Region) -> Iterator[Op]:
    """:func:`walk` without entering nested functions' bodies: the ops of one function's
    own control flow."""
    return _walk(region, False)


def _walk(region: Region, functions: bool) -> Iterator[Op]:
    # A stack of the regions being walked, not a generator per level: each op is yielded
    # once, however deep the control flow around it (nested generators pass every op
    # up through each level: quadratic in the depth of inlined recursion).
    stack = [iter(region.ops)]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        yield op
        if op.HAS_REGIONS and (functions or not isinstance(op, MakeFunction)):
            for r in reversed(op.regions()):
                stack.append(iter(r.ops))


def region_args(op: Op) -> list[Value]:
    """Values an op defines at the entry of its regions (item, carried, with-target)."""
    if isinstance(op, While):
        return list(op.args)
    out: list[Value] = []
    for r in op.regions():
        if not isinstance(op, MakeFunction):
            out.extend(r.args)
    return out
