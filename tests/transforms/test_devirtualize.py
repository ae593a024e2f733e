"""What a class or a call site decides, spelled out before differentiation: a named tuple's
``_replace``/``_asdict``, and a dict display splatted into a call (``f(x, **{'k': v})``)."""

from __future__ import annotations

from typing import NamedTuple

import wengert
from wengert.testing import check_grads


class State(NamedTuple):
    x: float
    v: float
    m: float = 2.0


def replace_steps(a, b):
    s = State(a, b)
    for _ in range(5):
        s = s._replace(v=s.v - 0.1 * s.x / s.m)
        s = s._replace(x=s.x + 0.1 * s.v)
    d = s._asdict()
    return d["x"] * d["v"] + s._replace(m=a * b).m ** 2


def replace_of_an_argument(s, c):
    t = s._replace(v=s.x * c)
    return t.x * t.v + sum(t._asdict().values())


def code_of(f, like):
    source = wengert.show(f, mode="vjp", like=like)
    return "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))


def test_a_named_tuples_replace_and_asdict_are_constructions():
    """``p._replace(x=a)`` is ``State(a, p.v, p.m)`` and ``p._asdict()`` a dict display, so
    they differentiate (the library's ``_replace`` pops a dict of changes in a loop) and
    the arithmetic on the fields inlines; a named tuple argument's cotangent is one."""
    check_grads(replace_steps, (0.7, 1.3), modes=("rev", "fwd"), order=2)
    check_grads(replace_of_an_argument, (State(0.5, 1.5), 2.0), modes=("rev", "fwd"),
                order=2)
    g = wengert.grad(replace_of_an_argument)(State(0.5, 1.5), 2.0)
    assert type(g) is State and g == State(2 * 0.5 * 2.0 + 1.0 + 2.0, 0.0, 1.0), g
    for f, like in [(replace_steps, (0.7, 1.3)), (replace_of_an_argument, (State(0.5, 1.5),
                                                                            2.0))]:
        code = code_of(f, like)
        calls = [line for line in code.splitlines() if not line.startswith("def ")]
        assert not any("_replace" in line or "_vjp(" in line for line in calls), code


def scaled_sum(*args, scale=1.0, **kw):
    return scale * sum(args) * kw.get("k", 1.0)


def splatted_displays(a, b):
    opts = {"k": b}
    return scaled_sum(a, **{"k": 2.0}) + scaled_sum(b, a, **{"scale": a, "k": b}) + \
        scaled_sum(a * b, **opts)


def test_a_dict_display_splatted_into_a_call_is_its_keyword_arguments():
    """``f(x, **{'k': v})`` (a display read by nothing else) is ``f(x, k=v)``: it
    differentiates where a ``**mapping`` of active values is refused."""
    check_grads(splatted_displays, (0.7, 1.3), modes=("rev", "fwd"), order=2)
