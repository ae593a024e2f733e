"""The pipeline's caches under threads: derivations are built and published by one thread
at a time (``pipeline.BUILD_LOCK``), and derivatives run in any number at once."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np

import wengert

_SOURCE = '''
import numpy as np


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
