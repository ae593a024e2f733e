"""Closures: what is captured, and the late-binding case wengert refuses loudly."""

import corpus
import pytest

import wengert


def test_late_binding_capture_is_refused_with_a_location():
    with pytest.raises(wengert.UnsupportedSyntaxError) as info:
        wengert.api.primal(corpus.closure_late_binding)
    err = info.value
    assert err.loc.filename.endswith("corpus.py")
    assert "assigns again after defining it" in err.message
    assert "x=x" in err.hint


def test_recursive_nested_function():
    assert wengert.api.primal(corpus.recursive_inner)(5) == corpus.recursive_inner(5) == 120


def test_default_argument_capture_in_loop_is_allowed():
    f = corpus.closure_in_loop
    assert wengert.api.primal(f)(4) == f(4)


def _escaping(n):
    fs = []
    for i in range(n):
        fs.append(lambda: i)
    return [f() for f in fs]


def test_escaping_lambda_capturing_a_loop_variable_is_refused():
    with pytest.raises(wengert.UnsupportedSyntaxError) as info:
        wengert.api.primal(_escaping)
    assert info.value.loc.lineno == _escaping.__code__.co_firstlineno + 3
