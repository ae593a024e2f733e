"""The analyses of one function while passes rewrite it (its types, its activity), each made
when asked and kept while the function stays as it was.

The prepare passes and the transforms ask a function's types again and again (each pass
reads them, most passes change nothing): :class:`Analyses` answers from what it found last
while the function's :func:`~wengert.ir.uses.fingerprint` is the one it had then, so no
pass has to say what it changed and none can forget to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from wengert.analysis.activity import Activity, activity
from wengert.analysis.effects.arrays import SCALAR_TYPES
from wengert.analysis.types import Types, infer_types
from wengert.ir import nodes as n
from wengert.ir.uses import fingerprint


class Analyses:
    """Types of ``fn`` for parameters of ``arg_types``, kept per way of asking (with or
    without the linker's ``callee`` result types and ``writes`` summaries) until ``fn``
    changes."""

    def __init__(self, fn: n.Function, arg_types: Sequence[Any],
                 callee: Callable[[Any, list[Any]], Any] | None = None,
                 writes: Callable[[Any], Any] | None = None) -> None:
        self.fn = fn
        self.arg_types = list(arg_types)
        self.callee = callee
        self.writes = writes
        self._types: dict[tuple[bool, bool], tuple[tuple[object, ...], Types]] = {}
        self._activity: dict[tuple[tuple[int, ...], tuple[int, ...]],
                             tuple[tuple[object, ...], Activity]] = {}
        #: How often types were inferred, and found unchanged (for tests and profiles).
        self.inferred = 0
        self.reused = 0

    def types(self, callee: bool = True, writes: bool = False) -> Types:
        """``fn``'s types now (``callee``: with its callees' result types; ``writes``:
        with what they write into)."""
        key = (callee, writes)
        now = fingerprint(self.fn)
        got = self._types.get(key)
        if got is not None and got[0] == now:
            self.reused += 1
            return got[1]
        self.inferred += 1
        found = infer_types(self.fn, list(self.arg_types),
                            callee=self.callee if callee else None,
                            writes=self.writes if writes else None)
        self._types[key] = (now, found)
        return found

    def activity(self, wrt: Sequence[int], outputs: Sequence[int] = ()) -> Activity:
        """Which values of ``fn`` now vary with its parameters ``wrt`` and reach its result
        (or the objects of the parameters ``outputs``), its types (with the callees' writes)
        saying which values are scalars no call can write into."""
        key = (tuple(wrt), tuple(outputs))
        now = fingerprint(self.fn)
        got = self._activity.get(key)
        if got is not None and got[0] == now:
            return got[1]
        types = self.types(writes=True)
        found = activity(self.fn, wrt, outputs,
                         scalar=lambda v: types.of(v) in SCALAR_TYPES)
        self._activity[key] = (now, found)
        return found
