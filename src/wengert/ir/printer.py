"""Deterministic text form of the IR (for ``show(mode="ir")`` and golden tests)."""

from __future__ import annotations

import types
from typing import Any

from wengert.ir import nodes as n


class _Printer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.lines: list[str] = []

    def name(self, v: n.Value | None) -> str:
        if v is None:
            return "_"
        s = self.names.get(v.id)
        if s is None:
            s = f"%{v.hint}.{len(self.names)}" if v.hint else f"%{len(self.names)}"
            self.names[v.id] = s
        return s

    def names_of(self, vs) -> str:
        return ", ".join(self.name(v) for v in vs)

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def function(self, fn: n.Function, depth: int = 0) -> None:
        params = self.names_of(fn.body.args)
        self.emit(depth, f"func {fn.name}({params}) {{")
        self.region(fn.body, depth + 1)
        self.emit(depth, "}")

    def region(self, region: n.Region, depth: int) -> None:
        for op in region.ops:
            self.op(op, depth)

    def op(self, op: n.Op, depth: int) -> None:  # noqa: C901 - one case per op kind
        res = self.names_of(op.results)
        lhs = f"{res} = " if op.results else ""
        nm = self.name
        if isinstance(op, n.Const):
            self.emit(depth, f"{lhs}const {_const_text(op)}")
        elif isinstance(op, n.Call):
            args = [("*" if i in op.starred else "") + nm(a) for i, a in enumerate(op.args)]
            args += [(f"{k}=" if k else "**") + nm(v) for k, v in op.kwargs]
            self.emit(depth, f"{lhs}call {nm(op.fn)}({', '.join(args)})")
        elif isinstance(op, n.GetAttr):
            self.emit(depth, f"{lhs}getattr {nm(op.obj)}.{op.name}")
        elif isinstance(op, n.SetAttr):
            self.emit(depth, f"setattr {nm(op.obj)}.{op.name} = {nm(op.value)}")
        elif isinstance(op, n.GetItem):
            self.emit(depth, f"{lhs}getitem {nm(op.obj)}[{nm(op.index)}]")
        elif isinstance(op, n.SetItem):
            self.emit(depth, f"setitem {nm(op.obj)}[{nm(op.index)}] = {nm(op.value)}")
        elif isinstance(op, n.BuildSlice):
            parts = [nm(v) if v is not None else "" for v in (op.lower, op.upper, op.step)]
            self.emit(depth, f"{lhs}slice {':'.join(parts)}")
        elif isinstance(op, n.Build):
            items = [("*" if i in op.starred else "") + nm(a) for i, a in enumerate(op.items)]
            self.emit(depth, f"{lhs}{op.kind} ({', '.join(items)})")
        elif isinstance(op, n.BuildDict):
            items = [f"{nm(k)}: {nm(v)}" if k is not None else f"**{nm(v)}"
                     for k, v in zip(op.keys, op.values)]
            self.emit(depth, f"{lhs}dict {{{', '.join(items)}}}")
        elif isinstance(op, n.Unpack):
            star = f" star={op.star}" if op.star is not None else ""
            self.emit(depth, f"{lhs}unpack {nm(op.value)}{star}")
        elif isinstance(op, n.FormatValue):
            spec = f" spec={nm(op.spec)}" if op.spec is not None else ""
            conv = f" conv={chr(op.conversion)}" if op.conversion != -1 else ""
            self.emit(depth, f"{lhs}format {nm(op.value)}{conv}{spec}")
        elif isinstance(op, n.JoinStr):
            self.emit(depth, f"{lhs}joinstr ({self.names_of(op.parts)})")
        elif isinstance(op, n.Raise):
            cause = f" from {nm(op.cause)}" if op.cause is not None else ""
            self.emit(depth, f"raise {nm(op.exc) if op.exc is not None else ''}{cause}")
        elif isinstance(op, n.MakeFunction):
            kind = "lambda" if op.is_lambda else "def"
            dflt = f" defaults({self.names_of(op.defaults)})" if op.defaults else ""
            self.emit(depth, f"{lhs}{kind}{dflt}")
            self.function(op.func, depth + 1)
        elif isinstance(op, n.If):
            self.emit(depth, f"{lhs}if {nm(op.cond)} {{")
            self.region(op.then, depth + 1)
            self.emit(depth, "} else {")
            self.region(op.orelse, depth + 1)
            self.emit(depth, "}")
        elif isinstance(op, n.For):
            carried = ", ".join(f"{nm(a)} = {nm(i)}" for a, i in zip(op.carried_args, op.inits))
            self.emit(depth, f"{lhs}for {nm(op.body.args[0])} in {nm(op.iterable)} "
                             f"carried({carried}){_exits(op)} {{")
            self.region(op.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(op, n.While):
            carried = ", ".join(f"{nm(a)} = {nm(i)}" for a, i in zip(op.args, op.inits))
            self.emit(depth, f"{lhs}while carried({carried}){_exits(op)} cond {{")
            self.region(op.cond, depth + 1)
            self.emit(depth, "} do {")
            self.region(op.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(op, n.With):
            inits = f" inits({self.names_of(op.inits)})" if op.inits else ""
            target = self.names_of(op.body.args)
            self.emit(depth, f"{lhs}with {nm(op.manager)} as {target}{inits} {{")
            self.region(op.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(op, n.Yield):
            self.emit(depth, f"yield {self.names_of(op.values)}")
        elif isinstance(op, n.Return):
            self.emit(depth, f"return {nm(op.value)}")
        else:  # pragma: no cover - the op set is closed
            raise TypeError(f"unknown op {op!r}")


def _exits(op: n.For | n.While) -> str:
    return f" exit_if{op.exit_flags}" if op.exit_flags else ""


def _const_text(op: n.Const) -> str:
    if op.origin:
        return op.origin
    v: Any = op.value
    if v is n.UNBOUND:
        return "UNBOUND"
    if isinstance(v, (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))):
        return repr(v)
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"<{getattr(v, '__qualname__', v.__name__)}>"
    return f"<{type(v).__name__}>"


def print_function(fn: n.Function) -> str:
    """The IR of ``fn`` as deterministic text (value names are renumbered per function)."""
    p = _Printer()
    p.function(fn)
    return "\n".join(p.lines) + "\n"
