"""A small builder that appends ops to the region being filled."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from wengert.diagnostics import SourceLoc
from wengert.ir.nodes import Build, Call, Const, GetAttr, GetItem, Op, Region, Value


class Builder:
    """Appends ops to a current region; ``loc`` is stamped on every op it creates."""

    def __init__(self, region: Region | None = None) -> None:
        self.region = region if region is not None else Region()
        self.loc: SourceLoc | None = None

    def emit(self, op: Op) -> Op:
        """Append ``op`` (stamping the current location if it has none) and return it."""
        if getattr(op, "loc", None) is None:
            op.loc = self.loc
        for v in op.results:
            if v.loc is None:
                v.loc = op.loc
        self.region.ops.append(op)
        return op

    @contextmanager
    def at(self, region: Region):
        """Fill ``region`` inside the ``with`` block, then return to the previous one."""
        saved = self.region
        self.region = region
        try:
            yield region
        finally:
            self.region = saved

    def value(self, hint: str | None = None) -> Value:
        """A fresh value carrying the current location."""
        return Value(hint, self.loc)

    def const(self, value: Any, origin: str | None = None, hint: str | None = None) -> Value:
        """Emit a constant."""
        return self.emit(Const(value, [self.value(hint)], origin)).result

    def call(self, fn: Any, *args: Value, hint: str | None = None, origin: str | None = None,
             kwargs: list[tuple[str | None, Value]] | None = None) -> Value:
        """Emit a call; ``fn`` is a value or an object to wrap in a constant."""
        fv = fn if isinstance(fn, Value) else self.const(fn, origin)
        return self.emit(Call(fv, list(args), list(kwargs or []), [self.value(hint)])).result

    def getattr(self, obj: Value, name: str, hint: str | None = None) -> Value:
        """Emit ``obj.name``."""
        return self.emit(GetAttr(obj, name, [self.value(hint)])).result

    def getitem(self, obj: Value, index: Value, hint: str | None = None) -> Value:
        """Emit ``obj[index]``."""
        return self.emit(GetItem(obj, index, [self.value(hint)])).result

    def tuple(self, *items: Value, hint: str | None = None) -> Value:
        """Emit a tuple display."""
        return self.emit(Build("tuple", list(items), [self.value(hint)])).result
