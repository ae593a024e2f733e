"""The API's caches are never stale, and failures leave nothing cached."""

import importlib.util
import sys

import pytest

import wengert
from wengert import api
from wengert.driver import cache

SOURCE = '''
SCALE = 2.0

def helper(x):
    return x + 1.0

def f(x):
    return helper(x) * SCALE

def make(k):
    def g(x):
        return x * k
    return g

def bad(x):
    try:
        return x
    except ValueError:
        return 0.0
'''


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "cachemod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("cachemod", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules["cachemod"] = m
    spec.loader.exec_module(m)
    yield m
    sys.modules.pop("cachemod", None)


def test_rebinding_a_global_is_seen(mod):
    assert api.primal(mod.f)(1.0) == 4.0
    mod.SCALE = 3.0
    assert api.primal(mod.f)(1.0) == 6.0


def test_redefining_a_helper_is_seen(mod):
    assert api.primal(mod.f)(1.0) == 4.0
    mod.helper = lambda x: x - 1.0
    assert api.primal(mod.f)(1.0) == 0.0


def test_two_closures_of_one_def_do_not_share(mod):
    g2, g3 = mod.make(2.0), mod.make(3.0)
    assert api.primal(g2)(1.0) == 2.0
    assert api.primal(g3)(1.0) == 3.0
    assert api.primal(g2)(1.0) == 2.0


def test_failure_is_not_cached(mod):
    for _ in range(2):
        with pytest.raises(wengert.UnsupportedSyntaxError):
            api.primal(mod.bad)
    assert all(k[0] != id(mod.bad.__code__) for k in cache.PRIMALS)


def test_bound_method_and_partial(mod):
    import functools

    class C:
        def __init__(self, k):
            self.k = k

        def m(self, x):
            return self.k * x

    assert api.primal(C(4.0).m)(2.0) == 8.0
    p = functools.partial(mod.make(5.0), 2.0)
    assert api.primal(p)() == 10.0


def test_show_rejects_unknown_mode(mod):
    with pytest.raises(ValueError):
        wengert.show(mod.f, mode="nope")
