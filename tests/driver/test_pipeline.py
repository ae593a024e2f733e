"""The pipeline's caches under threads: derivations are built and published by one thread
at a time (``pipeline.BUILD_LOCK``), and derivatives run in any number at once."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest

import wengert

_SOURCE = '''
import numpy as np
import pytest


def make(k):
    def f(x):
        s = 0.0
        for i in range(len(x)):
            s = s + np.sin(x[i]) * (i + k)
        return s * {scale} + np.sum(x ** 2)
    return f


def apply(g, x):
    return g(x) * 2.0


def through_a_value(x):
    return apply(np.tanh, x).sum() + apply(lambda v: v * v, x).sum() * {scale}
'''


def _modules(tmp_path, count):
    out = []
    for j in range(count):
        path = tmp_path / f"threaded_{j}.py"
        path.write_text(_SOURCE.replace("{scale}", str(j + 1)))
        spec = importlib.util.spec_from_file_location(f"threaded_{j}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append(module)
    return out


def _derivatives(module, k, x):
    f = module.make(k)
    g = wengert.grad(f)(x)
    h = wengert.hessian(f)(x)
    _, t = wengert.jvp(module.through_a_value, (x,), (np.ones_like(x),))
    _, pullback = wengert.vjp(module.through_a_value, x)
    return g, h, t, pullback(1.0)[0]


def test_eight_threads_deriving_at_once_agree_with_one(tmp_path):
    modules = _modules(tmp_path, 3)
    x = np.linspace(0.1, 1.0, 5)
    results: dict[tuple[int, int], tuple] = {}
    errors: list[BaseException] = []

    def work(t):
        try:
            for j, m in enumerate(modules):
                results[t, j] = _derivatives(m, t % 3, x)
        except BaseException as e:  # (reported below, with the thread's traceback)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    # Each against the same derivative taken alone, afterwards.
    for (t, j), got in results.items():
        want = _derivatives(modules[j], t % 3, x)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def _unknown(v):
    return v.pop() if isinstance(v, list) else v  # (its type: not known for any argument)


def _depth(v, k):
    if k <= 0:
        return _unknown(v)
    return _depth(v, k - 1)


def test_result_types_are_inferred_once_per_callee_and_argument_types(monkeypatch):
    """A callee whose result type cannot be found is inferred once, not once per guess
    made for recursive calls (it has none); a recursive one under each guess once, however
    often its body is asked for it."""
    from wengert.driver import cache, pipeline

    counts: dict[str, int] = {}
    real = pipeline.infer_types

    def counting(ir, *args, **kwargs):
        counts[ir.name] = counts.get(ir.name, 0) + 1
        return real(ir, *args, **kwargs)

    monkeypatch.setattr(pipeline, "infer_types", counting)
    for key in [k for k in cache.RESULT_TYPES if k[0] in (pipeline.cache_key(_unknown),
                                                         pipeline.cache_key(_depth))]:
        del cache.RESULT_TYPES[key]
    assert pipeline.result_type(_unknown, (None,))[0] is None
    assert counts == {"_unknown": 1}
    assert pipeline.result_type(_unknown, (None,))[0] is None and counts == {"_unknown": 1}
    counts.clear()
    assert pipeline.result_type(_depth, (None, int))[0] is None
    # (three guesses for the recursion, each inferring ``_unknown`` at most once)
    assert counts.get("_depth", 0) <= 3 and counts.get("_unknown", 0) <= 1, counts


class _Cell:
    def __init__(self, v):
        self.v = v


def _writes_into_items(x, vs):
    cells = [_Cell(v) for v in vs]
    alive = list(cells)  # (the same objects in two lists, written through one: reverse
    for _ in range(3):   # mode refuses them, forward mode answers)
        for c in alive:
            c.v = c.v * x
    return sum(c.v for c in cells)


def test_a_refusal_of_reverse_mode_is_remembered_while_nothing_changes():
    """A new ``grad`` of a function reverse mode refuses answers by forward mode, without
    deriving (and being refused) again: the refusal is kept by derivation key."""
    from wengert.diagnostics import ReverseModeRefusal
    from wengert.driver import pipeline

    with pytest.raises(ReverseModeRefusal):
        wengert.vjp(_writes_into_items, 2.0, [0.5, 1.5])
    assert wengert.grad(_writes_into_items)(2.0, [0.5, 1.5]) == pytest.approx(24.0)
    refused = [k for k in pipeline.REFUSALS if k[0] == pipeline.cache_key(_writes_into_items)]
    assert {k[1] for k in refused} == {(0,), (0, 1)}  # (grad: x alone; vjp: both)
    calls = []
    real = pipeline.derive
    pipeline.derive = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        for _ in range(3):
            assert wengert.grad(_writes_into_items)(2.0, [0.5, 1.5]) == pytest.approx(24.0)
            with pytest.raises(ReverseModeRefusal):
                wengert.vjp(_writes_into_items, 2.0, [0.5, 1.5])
    finally:
        pipeline.derive = real
    assert not [c for c in calls if c[0] is _writes_into_items]
