"""Tracebacks leave wengert's own frames out (``wengert.tracebacks``), in every API."""

from __future__ import annotations

import os
import traceback

import numpy as np
import pytest

import wengert
from wengert.tracebacks import is_internal


def _refused(x):
    return np.sum(np.cumsum(x * 2.0, dtype=np.float32))  # (refused in both modes)


def _divides_by_zero(x):
    y = x * 2.0
    return np.sum(1.0 / (y - y))


_X = np.ones((3, 2))

_CALLS = {
    "grad": lambda f: wengert.grad(f)(_X),
    "value_and_grad": lambda f: wengert.value_and_grad(f)(_X),
    "vjp": lambda f: wengert.vjp(f, _X)[1](1.0),
    "jvp": lambda f: wengert.jvp(f, (_X,), (_X,)),
    "hessian": lambda f: wengert.hessian(f)(_X),
    "hessian-tuple": lambda f: wengert.hessian(f, argnums=(0,))(_X),
    "jacrev": lambda f: wengert.jacrev(f)(_X),
    "jacfwd": lambda f: wengert.jacfwd(f)(_X),
    "hvp": lambda f: wengert.hvp(f, (_X,), (_X,)),
}


def _frames(e: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(e.__traceback__)


@pytest.mark.parametrize("api", sorted(_CALLS))
@pytest.mark.parametrize("f", [_refused, _divides_by_zero])
def test_only_the_boundary_frame_of_wengert_is_left(api, f):
    with np.errstate(all="raise"), pytest.raises(Exception) as info:
        _CALLS[api](f)
    frames = _frames(info.value)
    inside = [fr for fr in frames if is_internal(fr.filename)]
    # The user's call comes first; of wengert's own, only the frame that raised it again.
    assert frames[0].filename == __file__
    assert len(inside) == 1, [f"{fr.filename}:{fr.lineno}" for fr in inside]
    if f is _divides_by_zero:  # (the user's error: it ends in the code that ran it)
        assert not is_internal(frames[-1].filename)
        assert isinstance(info.value, (ZeroDivisionError, FloatingPointError))
    else:
        e = info.value
        assert isinstance(e, wengert.WengertError) and e.loc is not None
        assert e.loc.filename == __file__  # (the message points at the user's line)


def test_filtering_off_keeps_every_frame(monkeypatch):
    monkeypatch.setenv("WENGERT_TRACEBACK_FILTERING", "off")
    with pytest.raises(wengert.WengertError) as info:
        wengert.grad(_refused)(_X + 1.0)  # (new argument values: the error is raised anew)
    assert sum(is_internal(fr.filename) for fr in _frames(info.value)) > 3


def test_the_package_files_are_internal_and_generated_code_is_not():
    assert is_internal(wengert.__file__)
    assert is_internal(os.path.join(os.path.dirname(wengert.__file__), "api.py"))
    assert not is_internal("<wengert:f:vjp#1>")
    assert not is_internal(__file__)


def test_a_fault_of_wengert_s_own_keeps_its_frames(monkeypatch):
    # (a bug: an exception of another kind raised inside wengert's code; here a key the
    # caches cannot hash)
    from wengert.driver import pipeline

    monkeypatch.setattr(pipeline, "cache_key", lambda fn: [fn])
    with pytest.raises(TypeError, match="unhashable") as info:
        wengert.grad(lambda x: x * x * 3.0 + 1.0)(2.0)
    assert is_internal(_frames(info.value)[-1].filename)
    assert sum(is_internal(fr.filename) for fr in _frames(info.value)) > 2
