"""The IR verifier: SSA dominance, one definition per value, region results, terminators."""

from __future__ import annotations

from wengert.ir import nodes as n


class VerifyError(Exception):
    """The IR broke an invariant; always a bug in wengert, never in the user's program."""


def verify(fn: n.Function) -> None:
    """Check ``fn``; raise :class:`VerifyError` naming the first broken invariant."""
    _Verifier().function(fn, frozenset())


class _Verifier:
    def __init__(self) -> None:
        self.defined: set[int] = set()

    def define(self, v: n.Value, scope: set[int]) -> None:
        if v.id in self.defined:
            raise VerifyError(f"{v!r} is defined twice")
        self.defined.add(v.id)
        scope.add(v.id)

    def function(self, fn: n.Function, outer: frozenset[int]) -> None:
        if len(fn.body.args) != len(fn.signature.names()):
            raise VerifyError(f"{fn.name}: {len(fn.body.args)} args for signature "
                              f"{fn.signature.names()}")
        self.region(fn.body, set(outer), terminator=n.Return, arity=None)

    def region(self, region: n.Region, scope: set[int], terminator: type,
               arity: int | None, args_defined: bool = False) -> None:
        scope = set(scope)
        if not args_defined:
            for a in region.args:
                self.define(a, scope)
        if not region.ops or not isinstance(region.ops[-1], terminator):
            raise VerifyError(f"region must end with {terminator.__name__}")
        for i, op in enumerate(region.ops):
            if isinstance(op, n.TERMINATORS) and i != len(region.ops) - 1:
                raise VerifyError(f"terminator {op!r} in the middle of a region")
            for v in op.operands():
                if not isinstance(v, n.Value):
                    raise VerifyError(f"operand {v!r} of {type(op).__name__} is not a Value")
                if v.id not in scope:
                    raise VerifyError(f"{v!r} used by {type(op).__name__} does not dominate it")
            if isinstance(op, n.MakeFunction):
                # A nested function may call itself through its own value.
                for r in op.results:
                    self.define(r, scope)
                self.nested(op, scope)
                continue
            self.nested(op, scope)
            for r in op.results:
                self.define(r, scope)
        term = region.ops[-1]
        if arity is not None and isinstance(term, n.Yield) and len(term.values) != arity:
            raise VerifyError(f"region yields {len(term.values)} values, expected {arity}")

    def nested(self, op: n.Op, scope: set[int]) -> None:
        if isinstance(op, n.If):
            k = len(op.results)
            if op.then.args or op.orelse.args:
                raise VerifyError("if: regions take no arguments")
            self.region(op.then, scope, n.Yield, k)
            self.region(op.orelse, scope, n.Yield, k)
        elif isinstance(op, n.For):
            k = len(op.inits)
            if len(op.results) != k or len(op.body.args) != k + 1:
                raise VerifyError("for: carried values, results and body args disagree")
            self.check_flags(op.exit_flags, k)
            self.region(op.body, scope, n.Yield, k)
        elif isinstance(op, n.While):
            k = len(op.inits)
            if len(op.results) != k or len(op.args) != k or op.cond.args or op.body.args:
                raise VerifyError("while: carried values, results and args disagree")
            self.check_flags(op.exit_flags, k)
            inner = set(scope)
            for a in op.args:
                self.define(a, inner)
            self.region(op.cond, inner, n.Yield, 1)
            self.region(op.body, inner, n.Yield, k)
        elif isinstance(op, n.With):
            if len(op.body.args) != 1:
                raise VerifyError("with: body must take exactly the target")
            if len(op.inits) != len(op.results):
                raise VerifyError("with: one initial value per result")
            self.region(op.body, scope, n.Yield, len(op.results))
        elif isinstance(op, n.MakeFunction):
            self.function(op.func, frozenset(scope))

    @staticmethod
    def check_flags(flags: list[int], k: int) -> None:
        if any(not 0 <= f < k for f in flags):
            raise VerifyError(f"exit flag index out of range: {flags}")
