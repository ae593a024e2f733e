"""``analysis/cached.py``: a function's types kept while no pass changes it, found again
after any change."""

from __future__ import annotations

import wengert.rules  # noqa: F401  (registers the built-in rules)
from wengert.analysis.cached import Analyses
from wengert.analysis.types import infer_types
from wengert.frontend import lower
from wengert.ir import nodes as n


def scaled(x, k):
    y = x * k
    return y + 1


def test_types_are_kept_while_the_function_is_unchanged_and_found_again_after():
    fn = lower(scaled)
    a = Analyses(fn, [float, int])
    first = a.types()
    assert a.types() is first and (a.inferred, a.reused) == (1, 1)
    ret = fn.body.terminator.value
    assert first.of(ret) is float
    # A pass rewrites a constant in place (``y + 1`` becomes ``y + 1.5``): found again.
    const = next(op for op in n.walk(fn.body) if isinstance(op, n.Const) and op.value == 1)
    const.value = 1.5
    again = a.types()
    assert again is not first and a.inferred == 2
    assert again.of(ret) is float and again.of(const.result) is float
    # Asked another way (with callees' writes): inferred for that way, once.
    other = a.types(writes=True)
    assert other is not again and a.types(writes=True) is other
    fresh = infer_types(fn, [float, int])
    assert all(fresh.of(v) == again.of(v) for op in n.walk(fn.body) for v in op.results)
