"""Generated identifiers: valid, conventional, shared only by values never live together."""

from __future__ import annotations

import keyword

import pytest

import wengert
from wengert.analysis.liveness import Liveness
from wengert.codegen.naming import (
    Namer,
    adjoint_name,
    pullback_name,
    sanitize,
    tangent_name,
)
from wengert.ir import Value
from wengert.testing import check_grads


@pytest.mark.parametrize("hint", ["x", "class", "lambda", "1st", "a.b", "<lambda>", "", "x-y",
                                  "café"])
def test_sanitize_gives_a_valid_non_keyword_identifier(hint):
    name = sanitize(hint)
    assert name.isidentifier()
    assert not keyword.iskeyword(name)


def test_sanitize_keeps_valid_names_and_distinguishes_keywords():
    assert sanitize("velocity_2") == "velocity_2"
    assert sanitize("class") != "class"
    assert sanitize("class").startswith("class")


def test_derivative_names_follow_the_conventions():
    assert adjoint_name("x") == "x_bar"
    assert tangent_name("x") == "x_dot"
    assert pullback_name("f") == "f_pullback"
    assert pullback_name("<lambda>").isidentifier()


def namer(reserved=(), pinned=()) -> Namer:
    return Namer(Liveness(), set(reserved), {v.id for v in pinned})


def test_value_takes_the_users_name():
    nm = namer()
    x = Value("x")
    assert nm.assign([x], set()) == "x"
    assert nm.name_of(x) == "x" and nm.has(x)


def test_name_is_reused_when_its_holder_is_dead():
    nm = namer()
    s0, s1 = Value("s"), Value("s")
    nm.assign([s0], set())
    assert nm.assign([s1], set()) == "s"  # s0 is not live: ``s = s * x``


def test_name_is_not_reused_while_its_holder_is_live():
    nm = namer()
    s0, s1 = Value("s"), Value("s")
    nm.assign([s0], set())
    other = nm.assign([s1], {s0.id})
    assert other != "s" and other.startswith("s")
    s2 = Value("s")
    third = nm.assign([s2], {s0.id, s1.id})
    assert third not in ("s", other)


def test_group_shares_one_name():
    nm = namer()
    a, r = Value("acc"), Value("acc")
    name = nm.assign([a, r], set())
    assert nm.name_of(a) == nm.name_of(r) == name


def test_reserved_names_and_keywords_are_avoided():
    nm = namer(reserved={"math", "x"})
    assert nm.assign([Value("math")], set()) != "math"
    assert nm.assign([Value("x")], set()) != "x"
    assert nm.assign([Value("if")], set()) != "if"


def test_pinned_value_keeps_its_name_to_itself():
    # A value a nested function reads must never share its name, even when dead here.
    y0 = Value("y")
    nm = namer(pinned=[y0])
    assert nm.assign([y0], set()) == "y"
    assert nm.assign([Value("y")], set()) != "y"


def test_pinned_value_does_not_take_a_used_name():
    y0, y1 = Value("y"), Value("y")
    nm = namer(pinned=[y1])
    nm.assign([y0], set())
    assert nm.assign([y1], set()) != "y"


def test_live_unnamed_values_get_distinct_temporaries():
    nm = namer()
    temps = [Value() for _ in range(3)]
    names = [nm.assign([t], {u.id for u in temps[:k]}) for k, t in enumerate(temps)]
    assert len(set(names)) == 3
    assert all(n.isidentifier() for n in names)


def test_temporaries_avoid_live_user_names():
    nm = namer()
    user = Value("t1")
    assert nm.assign([user], set()) == "t1"
    assert nm.assign([Value()], {user.id}) != "t1"


def test_fresh_names_are_never_handed_out_again():
    nm = namer(reserved={"loop"})
    a = nm.fresh("loop")
    b = nm.fresh("loop")
    assert len({"loop", a, b}) == 3
    assert nm.assign([Value(a)], set()) != a


def _user_names_like_generated_ones(a):
    a_dot = a * 2.0
    a_bar = a_dot * a
    a_pullback = a_bar + 1.0
    return a_dot * a + a_pullback


def _parameters_named_like_tangents(x, x_dot, x_bar):
    x_dot_1 = x * x_dot
    return x_dot_1 * x_bar + x


@pytest.mark.parametrize("f, args", [(_user_names_like_generated_ones, (1.3,)),
                                     (_parameters_named_like_tangents, (1.1, 0.7, -0.4))])
def test_user_names_never_clash_with_generated_ones(f, args):
    # A parameter ``x_dot`` beside ``x`` once gave "duplicate argument" in the JVP.
    check_grads(f, args, modes=("rev", "fwd"))
    h = wengert.hessian(f)(*args)
    g = wengert.grad(f)
    eps = 1e-5
    shifted = [(args[0] + s, *args[1:]) for s in (eps, -eps)]
    assert abs(h - (g(*shifted[0]) - g(*shifted[1])) / (2 * eps)) < 1e-6
