"""Rules of the container builtins: zip, enumerate, reversed, list, tuple, sorted, dict.

zip, enumerate and reversed return iterators, which :func:`check_rule` cannot compare
or perturb; they are checked composed with ``list`` (and with each other): each
composition is a small function whose rules are the compositions of the rules
(registered only while its test runs), so that ``check_rule`` compares them with
finite differences of the real builtins.
That also checks the convention that joins them: the adjoint (tangent) of an iterator
is the list of its items' adjoints (tangents).  Hand-derived adjoints check the
routing itself (ties, duplicate keys, extra items, ``None`` entries).
"""

from __future__ import annotations

import builtins

import numpy
import pytest

import wengert
import wengert.rules  # noqa: F401  (registers the rules)
from wengert.rules import registry
from wengert.testing import check_grads, check_rule

rng = numpy.random.default_rng(7)
V3 = rng.standard_normal(3)
M23 = rng.standard_normal((2, 3))


def _vjp(fn, *args, **kwargs):
    return registry.lookup(fn).vjp(*args, **kwargs)


def _jvp(fn, *args, **kwargs):
    return registry.lookup(fn).jvp(*args, **kwargs)


def _vjp_rule(fn):
    return getattr(fn, "vjp_rule", None) or registry.lookup(fn).vjp


def _jvp_rule(fn):
    return getattr(fn, "jvp_rule", None) or registry.lookup(fn).jvp


def _chain(outer, inner, nin=None):
    """``f(*args) = outer(inner(*args[:nin]), *args[nin:])``, with the composed rules as
    ``f.vjp_rule`` and ``f.jvp_rule`` (registered only while a test checks them)."""

    def f(*args):
        return outer(inner(*args[:nin]), *args[len(args) if nin is None else nin:])

    def f_vjp(*args):
        k = len(args) if nin is None else nin
        mid, inner_pb = _vjp_rule(inner)(*args[:k])
        y, outer_pb = _vjp_rule(outer)(mid, *args[k:])

        def pullback(y_bar):
            outer_bars = outer_pb(y_bar)
            return (*inner_pb(outer_bars[0]), *outer_bars[1:])

        return y, pullback

    def f_jvp(*args):
        k = len(args) if nin is None else nin
        mid, inner_d = _jvp_rule(inner)(*args[:k])
        y, outer_d = _jvp_rule(outer)(mid, *args[k:])
        return y, lambda *dots: outer_d(inner_d(*dots[:k]), *dots[k:])

    f.__name__ = f"{getattr(outer, '__name__', 'f')}_of_{getattr(inner, '__name__', 'g')}"
    f.vjp_rule = f_vjp
    f.jvp_rule = f_jvp
    return f


@pytest.fixture
def check_composed(monkeypatch):
    """``check_rule`` for a :func:`_chain` function, its rules registered for the test only
    (the registry is global: other tests walk every rule in it)."""

    def check(f, *args):
        rule = registry.Rule(f, pure=True)
        rule.vjp, rule.jvp = f.vjp_rule, f.jvp_rule
        monkeypatch.setitem(registry._RULES, registry._key(f), rule)
        check_rule(f, *args)

    return check


zip_list = _chain(list, zip)
enumerate_list = _chain(list, enumerate)
reversed_list = _chain(list, reversed)
reversed_tuple = _chain(tuple, reversed)
zip_enumerate_list = _chain(list, _chain(zip, enumerate, nin=1))
dict_zip = _chain(dict, zip)
sorted_zip = _chain(sorted, zip)
sum_reversed = _chain(sum, reversed)
list_list_zip = _chain(list, _chain(list, zip))


# --- check_rule: the rules against finite differences of the builtins ------------------


@pytest.mark.parametrize("args", [
    ([1.0], [2.0]),
    ([1.0, 2.0, 3.0], [4.0, 5.0]),                    # the first is longer
    ((1.0, 2.0), [3, 4.5, -1.0]),                     # ints mixed in, the second longer
    ([1.0, 2.0, 3.0], (4.0, 5.0), [6.0, 7.0, 8.0, 9.0]),
    ([0.5, -1.5],),
    (V3, [1.0, 2.0]),
    (M23, (1.0, 2.0, 3.0)),
    (["a", "b"], [1.0, 2.0]),
    (range(3), (1.5, 2.5)),
])
def test_zip(check_composed, args):
    check_composed(zip_list, *args)
    check_composed(list_list_zip, *args)


@pytest.mark.parametrize("args", [
    ([1.0, 2, 3.5],), ((1.0, -2.0), 5), ([0.25],), (V3,), (M23, -1),
])
def test_enumerate(check_composed, args):
    check_composed(enumerate_list, *args)


@pytest.mark.parametrize("args", [
    ([1.0, 2.0, 3.0], [4.0, 5.0]),   # zip takes a third item from enumerate and drops it
    ([1.0], [2.0, 3.0]),
    ((1.0, 2.0), (3.0, 4.0)),
])
def test_zip_of_enumerate(check_composed, args):
    check_composed(zip_enumerate_list, *args)


@pytest.mark.parametrize("fn", [reversed_list, reversed_tuple, sum_reversed],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[1.0], [1.0, 2.0, 3.0], (1.5, -2, 0.5), V3, M23],
                         ids=["one", "list", "tuple", "vector", "matrix"])
def test_reversed(check_composed, fn, x):
    check_composed(fn, x)


@pytest.mark.parametrize("fn", [builtins.list, builtins.tuple], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [
    [1.0], [1.0, 2.0, 3], (1.0, -2.5), (0.5, 1.5, 2.5), V3, M23, [V3, 2.0], {"a": 1.0},
], ids=["one", "list", "tuple2", "tuple3", "vector", "matrix", "mixed", "dict"])
def test_list_tuple(fn, x):
    if isinstance(x, dict):
        # Iterating a dict yields its keys: nothing to differentiate, and no adjoint.
        _, pullback = _vjp(fn, x)
        assert pullback(["a_bar"]) == (None,)
        return
    check_rule(fn, x)


@pytest.mark.parametrize("x", [
    [1.0], [3.0, 1.0, 2.0], (2.5, -1, 0.5), [0.5, 0.25, -3.0, 7.0], V3,
])
def test_sorted(x):
    check_rule(builtins.sorted, x)


@pytest.mark.parametrize("args", [
    ([2.0, 1.0, 3.0], [4.0, 5.0, 6.0]), ([1.0, -1.0], (7.0, 8.0, 9.0)),
])
def test_sorted_of_zip(check_composed, args):
    check_composed(sorted_zip, *args)


@pytest.mark.parametrize("x", [
    {"a": 1.0, "b": 2},
    {"a": V3, "b": [1.0, 2.0]},
    [("a", 1.0), ("b", 2.0)],
    [("a", 1.0), ("b", 2.0), ("a", 3.0)],   # the last "a" wins
    [["a", 1.0], ("b", -2.0)],
    ((1, 2.0), (2, 3.0)),
], ids=["mapping", "nested", "pairs", "duplicate", "list_pair", "tuple_of_pairs"])
def test_dict(x):
    check_rule(builtins.dict, x)


@pytest.mark.parametrize("args", [
    (["a", "b"], [1.0, 2.0]), (["a", "b", "a"], (1.0, 2.0, 3.0)), (["a"], [1.0, 2.0]),
])
def test_dict_of_zip(check_composed, args):
    check_composed(dict_zip, *args)


# --- hand-derived adjoints and tangents ---------------------------------------------------


def test_zip_value_is_a_one_shot_iterator_of_the_same_items():
    y, _ = _vjp(builtins.zip, [1.0, 2.0, 3.0], (4.0, 5.0))
    assert iter(y) is y
    assert list(y) == [(1.0, 4.0), (2.0, 5.0)]
    assert list(y) == []
    y, _ = _jvp(builtins.zip, [1.0, 2.0], "ab")
    assert iter(y) is y and list(y) == [(1.0, "a"), (2.0, "b")]


def test_zip_pullback_routes_components_and_pads_longer_inputs():
    _, pullback = _vjp(builtins.zip, [1.0, 2.0, 3.0], (4.0, 5.0))
    assert pullback([(10.0, 20.0), (30.0, None)]) == ([10.0, 30.0, None], (20.0, None))
    assert pullback([None, (None, 7.0)]) == (None, (None, 7.0))
    assert pullback(None) == (None, None)
    # A loop left by ``break`` after one item: the rest is zero.
    assert pullback([(1.0, 2.0)]) == ([1.0, None, None], (2.0, None))


def test_zip_pullback_for_arrays_iterators_and_constants():
    _, pullback = _vjp(builtins.zip, numpy.array([1.0, 2.0, 3.0]), iter([4.0, 5.0]),
                       range(5))
    v_bar, it_bar, r_bar = pullback([(1.0, 2.0, None), (3.0, 4.0, None)])
    numpy.testing.assert_array_equal(v_bar, [1.0, 3.0, 0.0])
    assert it_bar == [2.0, 4.0] and r_bar is None
    _, pullback = _vjp(builtins.zip)
    assert pullback([]) == () and pullback(None) == ()


def test_zip_refuses_sets_that_receive_an_adjoint():
    _, pullback = _vjp(builtins.zip, {1.0}, [2.0])
    assert pullback([(None, 1.0)]) == (None, [1.0])
    with pytest.raises(TypeError, match="set"):
        pullback([(1.0, None)])


def test_zip_tangents():
    _, differential = _jvp(builtins.zip, [1.0, 2.0, 3.0], (4.0, 5.0))
    assert differential([0.1, 0.2, 0.3], None) == [(0.1, None), (0.2, None)]
    assert differential(None, (0.4, 0.5)) == [(None, 0.4), (None, 0.5)]
    assert differential(None, None) is None


def test_zip_strict_keyword_when_called_directly():
    with pytest.raises(ValueError):
        _vjp(builtins.zip, [1.0, 2.0], [3.0], strict=True)
    y, pullback = _vjp(builtins.zip, [1.0], [3.0], strict=True)
    assert list(y) == [(1.0, 3.0)] and pullback([(1.0, 2.0)]) == ([1.0], [2.0])


def test_enumerate_routing():
    y, pullback = _vjp(builtins.enumerate, (1.0, 2.0), 5)
    assert isinstance(y, enumerate) and list(y) == [(5, 1.0), (6, 2.0)]
    assert pullback([(None, 3.0), None]) == ((3.0, None), None)
    assert pullback(None) == (None, None)
    _, pullback = _vjp(builtins.enumerate, [1.0, 2.0, 3.0])
    assert pullback([(None, 3.0)]) == ([3.0, None, None],)
    _, differential = _jvp(builtins.enumerate, [1.0, 2.0])
    assert differential([0.5, None]) == [(None, 0.5), (None, None)]
    assert differential(None) is None


def test_reversed_routing():
    y, pullback = _vjp(builtins.reversed, [1.0, 2.0, 3.0])
    assert type(y) is type(reversed([])) and list(y) == [3.0, 2.0, 1.0]
    assert pullback([10.0, None, 30.0]) == ([30.0, None, 10.0],)
    assert pullback([10.0]) == ([None, None, 10.0],)
    y, pullback = _vjp(builtins.reversed, (1.0, 2.0))
    assert type(y) is reversed and list(y) == [2.0, 1.0]
    assert pullback([5.0, 6.0]) == ((6.0, 5.0),)
    _, differential = _jvp(builtins.reversed, [1.0, 2.0, 3.0])
    assert differential([0.1, 0.2, 0.3]) == [0.3, 0.2, 0.1]


def test_list_and_tuple_of_iterators_and_of_nothing():
    y, pullback = _vjp(builtins.list, iter((1.0, 2.0)))
    assert y == [1.0, 2.0] and pullback([3.0, None]) == ([3.0, None],)
    y, pullback = _vjp(builtins.tuple, (x for x in [1.0, 2.0]))
    assert y == (1.0, 2.0) and pullback((3.0, 4.0)) == ([3.0, 4.0],)
    y, pullback = _vjp(builtins.tuple, [1.0, 2.0])
    xs_bar, = pullback((None, 4.0))
    assert xs_bar == [None, 4.0] and isinstance(xs_bar, list)
    y, pullback = _vjp(builtins.list, (1.0, 2.0))
    xs_bar, = pullback([None, 4.0])
    assert xs_bar == (None, 4.0) and isinstance(xs_bar, tuple)
    assert pullback([None, None]) == (None,)
    for fn, empty in ((builtins.list, []), (builtins.tuple, ())):
        y, pullback = _vjp(fn)
        assert y == empty and pullback(None) == ()
        y, differential = _jvp(fn)
        assert y == empty and differential() is None
        y, pullback = _vjp(fn, [])
        assert y == empty and pullback(empty) == (None,)


def test_list_of_an_array_gives_an_array_adjoint():
    _, pullback = _vjp(builtins.list, numpy.array([1.0, 2.0, 3.0]))
    xs_bar, = pullback([1.0, None, 3.0])
    numpy.testing.assert_array_equal(xs_bar, [1.0, 0.0, 3.0])
    # Batched cotangents: the batch axis stays first.
    xs_bar, = pullback([numpy.array([1.0, 2.0]), None, numpy.array([3.0, 4.0])])
    numpy.testing.assert_array_equal(xs_bar, [[1.0, 0.0, 3.0], [2.0, 0.0, 4.0]])
    _, differential = _jvp(builtins.list, numpy.array([1.0, 2.0]))
    assert differential(numpy.array([[1.0, 2.0], [3.0, 4.0]]))[1].tolist() == [2.0, 4.0]


def test_sorted_ties_keep_their_order():
    xs = [2.0, 1.0, 2.0, 1.0]
    y, pullback = _vjp(builtins.sorted, xs)
    assert y == [1.0, 1.0, 2.0, 2.0]
    # Sorted positions come from indices 1, 3, 0, 2 (stable).
    assert pullback([10.0, 20.0, 30.0, 40.0]) == ([30.0, 10.0, 40.0, 20.0],)
    assert pullback(None) == (None,)
    _, differential = _jvp(builtins.sorted, xs)
    assert differential([1.0, 2.0, 3.0, 4.0]) == [2.0, 4.0, 1.0, 3.0]
    _, pullback = _vjp(builtins.sorted, (3.0, 1.0))
    xs_bar, = pullback([5.0, None])
    assert xs_bar == (None, 5.0) and isinstance(xs_bar, tuple)


def test_sorted_key_and_reverse_when_called_directly():
    y, pullback = _vjp(builtins.sorted, [2.0, 1.0, 2.0, 1.0], reverse=True)
    assert y == [2.0, 2.0, 1.0, 1.0]
    # reverse=True keeps equal items in their original order too: indices 0, 2, 1, 3.
    assert pullback([10.0, 20.0, 30.0, 40.0]) == ([10.0, 30.0, 20.0, 40.0],)
    y, pullback = _vjp(builtins.sorted, [-3.0, 1.0, 2.0], key=abs)
    assert y == [1.0, 2.0, -3.0] and pullback([10.0, 20.0, 30.0]) == ([30.0, 10.0, 20.0],)


def test_dict_adjoints():
    pairs = [("a", 1.0), ("b", 2.0), ("a", 3.0)]
    y, pullback = _vjp(builtins.dict, pairs)
    assert y == {"a": 3.0, "b": 2.0}
    assert pullback({"a": 10.0, "b": 20.0}) == ([None, (None, 20.0), (None, 10.0)],)
    assert pullback({"a": None, "b": None}) == (None,)
    assert pullback(None) == (None,)
    _, pullback = _vjp(builtins.dict, [["a", 1.0]])
    assert pullback({"a": 5.0}) == ([[None, 5.0]],)
    # 1 and 1.0 are one key: the first key object stays, the last value wins.
    y, pullback = _vjp(builtins.dict, [(1, 1.0), (1.0, 2.0)])
    assert y == {1: 2.0}
    assert pullback({1: 5.0}) == ([None, (None, 5.0)],)
    _, pullback = _vjp(builtins.dict, {"a": 1.0, "b": 2.0})
    assert pullback({"a": 5.0, "b": None}) == ({"a": 5.0, "b": None},)
    _, pullback = _vjp(builtins.dict, zip(["a", "b"], [1.0, 2.0]))
    assert pullback({"a": 5.0, "b": 6.0}) == ([(None, 5.0), (None, 6.0)],)
    y, pullback = _vjp(builtins.dict)
    assert y == {} and pullback({}) == ()


def test_dict_tangents():
    _, differential = _jvp(builtins.dict, [("a", 1.0), ("b", 2.0), ("a", 3.0)])
    assert differential([(None, 0.1), (None, 0.2), (None, 0.3)]) == {"a": 0.3, "b": 0.2}
    assert differential([None, (None, 0.2), None]) == {"a": None, "b": 0.2}
    assert differential(None) is None
    _, differential = _jvp(builtins.dict, {"a": 1.0})
    assert differential({"a": 0.5}) == {"a": 0.5}


def test_dict_rejects_bad_pairs_as_python_does():
    with pytest.raises(ValueError):
        _vjp(builtins.dict, [("a", 1.0, 2.0)])
    with pytest.raises(TypeError, match="at most 1 argument"):
        _jvp(builtins.dict, [("a", 1.0)], [("b", 2.0)])
    with pytest.raises(TypeError, match="at most 1 argument"):
        _vjp(builtins.dict, {"a": 1.0}, [("b", 2.0)])


def test_sum_of_an_iterator():
    y, pullback = registry.lookup(builtins.sum).vjp(map(float, [1, 2]))
    assert y == 3.0 and pullback(2.0) == ([2.0, 2.0],)
    y, pullback = registry.lookup(builtins.sum).vjp(reversed([1.0, 4.0]))
    assert y == 5.0 and pullback(1.0) == ([1.0, 1.0],)
    _, differential = registry.lookup(builtins.sum).jvp(iter([1.0, 2.0]))
    assert differential([0.5, 0.25]) == 0.75


# --- registration -----------------------------------------------------------------------

_CONTAINERS = [builtins.zip, builtins.enumerate, builtins.reversed, builtins.list,
               builtins.tuple, builtins.sorted, builtins.dict]


@pytest.mark.parametrize("fn", _CONTAINERS, ids=lambda f: f.__name__)
def test_registration(fn):
    rule = registry.lookup(fn)
    assert rule is not None and rule.vjp is not None and rule.jvp is not None
    assert not rule.nondifferentiable and not rule.warn
    # zip, enumerate and reversed are lazy, so an unused call may go; list, tuple, sorted
    # and dict drain iterators, whose side effects must stay.
    assert rule.pure is (fn in (builtins.zip, builtins.enumerate, builtins.reversed))


# --- through reverse mode ------------------------------------------------------------------


def loop_zip(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def loop_enumerate(xs):
    s = 0.0
    for i, x in enumerate(xs, 1):
        s = s + i * x * x
    return s


def loop_reversed(xs):
    s = 0.0
    for x in reversed(xs):
        s = s * 0.5 + x
    return s


def pairs_of_zip(xs, ys):
    ps = list(zip(xs, ys))
    return ps[0][0] * ps[1][1]


def tuple_of_genexp(xs):
    t = tuple(x * x for x in xs)
    return t[0] + 2.0 * t[-1]


def smallest_two(xs):
    ys = sorted(xs)
    return ys[0] * 3.0 + ys[1]


def dict_of_zip(keys, vals):
    d = dict(zip(keys, vals))
    return d["a"] * d["b"]


@pytest.mark.parametrize("f, args", [
    (loop_zip, ([1.0, 2.0, 3.0], [4.0, 5.0])),
    (loop_enumerate, ((1.0, -2.0, 3.0),)),
    (loop_reversed, ([1.0, 2.0, 3.0],)),
    (pairs_of_zip, ([1.0, 2.0], (3.0, 4.0))),
    (tuple_of_genexp, ([1.5, 2.0, -1.0],)),
    (smallest_two, ([3.0, 1.0, 2.0],)),
    (dict_of_zip, (["a", "b", "a"], [2.0, 3.0, 5.0])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_reverse_mode_through_containers(f, args):
    check_grads(f, args)


def test_reverse_mode_zip_gradient_by_hand():
    # d/dxs sum(a*b) = ys padded with zeros; d/dys = xs[:2].
    g = wengert.grad(loop_zip, argnums=(0, 1))([1.0, 2.0, 3.0], [4.0, 5.0])
    assert g[0] == [4.0, 5.0, 0.0] and g[1] == [1.0, 2.0]


def loop_zip_strict(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys, strict=True):
        s = s * 0.5 + a * b
    return s


def table_of_zip_strict(xs, ys):
    t = [[0.0, 0.0] for _ in xs]
    for i, (a, b) in enumerate(zip(xs, ys, strict=True), start=1):
        t[i - 1][0] = a * b / i
        t[i - 1][1] += t[i - 1][0] * a
    return sum(r[0] * r[1] for r in t)


def zip_strict_given(xs, ys, flag):
    return sum(a * b for a, b in zip(xs, ys, strict=flag))


@pytest.mark.parametrize("f", [loop_zip_strict, table_of_zip_strict],
                         ids=lambda v: v.__name__)
def test_a_literal_keyword_of_a_rule_is_inlined_in_both_modes_to_second_order(f):
    # ``zip(a, b, strict=True)`` (what a linter asks for) was a call dispatched at run time,
    # refused at the second order: the rule's body is specialised on the literal.
    args = ([0.3, -1.2, 0.8], [1.5, 0.4, -0.7])
    check_grads(f, args, modes=("rev", "fwd"), order=2)
    for mode in ("vjp", "jvp"):
        src = wengert.show(f, mode=mode, like=args)
        assert "zip(xs, ys, strict=True)" in src and "_call(" not in src, src
    with pytest.raises(ValueError):  # (as Python raises: one is shorter)
        wengert.grad(f)([0.3, -1.2], [1.5])
    with pytest.raises(ValueError):
        wengert.jvp(f, ([0.3, -1.2], [1.5]), ([1.0, 1.0], [1.0]))


def test_a_keyword_given_a_variable_is_dispatched_at_the_first_order():
    args = ([0.3, -1.2], [1.5, 0.4], True)
    check_grads(zip_strict_given, args, modes=("rev", "fwd"), order=1)
