"""Tests of the tangent-space utilities on nested structures."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, namedtuple

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wengert import tangents

Point = namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Params:
    w: numpy.ndarray
    b: float
    n: int = 3


@dataclasses.dataclass(frozen=True)
class Checked:
    """A frozen dataclass whose __post_init__ rejects the None fields of a tangent."""

    a: float
    label: str

    def __post_init__(self) -> None:
        if not isinstance(self.label, str):
            raise TypeError("label must be a str")


class Polar:
    """A user type registered through the protocol: r and theta are its children."""

    def __init__(self, r: float, theta: float, tag: str = "p") -> None:
        self.r = r
        self.theta = theta
        self.tag = tag


tangents.register_type(
    Polar,
    zero=lambda p: Polar(0.0, 0.0, p.tag),
    add=lambda a, b: Polar(a.r + b.r, a.theta + b.theta, a.tag),
    flatten=lambda p: ([p.r, p.theta], p.tag),
    unflatten=lambda tag, children: Polar(children[0], children[1], tag),
)


def test_differentiable_leaves_and_constants():
    assert tangents.is_differentiable(1.5)
    assert tangents.is_differentiable(numpy.float32(1.5))
    assert tangents.is_differentiable(numpy.ones(3))
    for const in (1, True, "s", None, numpy.arange(3), numpy.array([True]), object()):
        assert not tangents.is_differentiable(const)
    assert tangents.is_differentiable([1, (2, {"a": 1.0})])
    assert not tangents.is_differentiable([1, (2, {"a": "x"})])
    assert not tangents.is_differentiable([])


def test_complex_is_rejected_rather_than_treated_as_constant():
    with pytest.raises(TypeError, match="complex"):
        tangents.is_differentiable(1j)
    with pytest.raises(TypeError, match="complex"):
        tangents.zeros_like(numpy.ones(2, dtype=complex))


def test_zeros_like_keeps_structure_and_drops_constants():
    x = {"a": [1.0, 2, "s"], "b": (numpy.ones((2, 2)), Point(3.0, 4))}
    z = tangents.zeros_like(x)
    assert list(z) == ["a", "b"]
    assert z["a"] == [0.0, None, None]
    assert isinstance(z["b"], tuple)
    numpy.testing.assert_array_equal(z["b"][0], numpy.zeros((2, 2)))
    assert isinstance(z["b"][1], Point) and z["b"][1] == Point(0.0, None)
    assert tangents.zeros_like(numpy.float32(2.0)).dtype == numpy.float32
    assert tangents.zeros_like(numpy.arange(3)) is None


def test_dataclass_tangents_bypass_init():
    p = Params(numpy.ones(2), 2.0)
    z = tangents.zeros_like(p)
    assert type(z) is Params
    numpy.testing.assert_array_equal(z.w, [0.0, 0.0])
    assert z.b == 0.0 and z.n is None
    c = tangents.zeros_like(Checked(1.0, "x"))  # __post_init__ would reject label=None
    assert type(c) is Checked and c.a == 0.0 and c.label is None


def test_add_treats_none_as_zero_at_every_level():
    assert tangents.add(None, 2.0) == 2.0
    assert tangents.add(2.0, None) == 2.0
    assert tangents.add([1.0, None, 3.0], [None, 2.0, 1.0]) == [1.0, 2.0, 4.0]
    got = tangents.add({"a": 1.0, "b": (2.0, None)}, {"b": (1.0, 5.0), "a": None})
    assert got == {"a": 1.0, "b": (3.0, 5.0)}


def test_add_perturbs_a_primal_keeping_its_constants():
    x = [1.5, 7, "label", Params(numpy.ones(2), 1.0, 4)]
    t = tangents.scale(tangents.zeros_like(x), 1.0)
    t = tangents.add(t, [0.5, None, None, Params(numpy.full(2, 0.25), 2.0, None)])
    y = tangents.add(x, t)
    assert y[0] == 2.0 and y[1] == 7 and y[2] == "label"
    numpy.testing.assert_array_equal(y[3].w, [1.25, 1.25])
    assert y[3].b == 3.0 and y[3].n == 4


def test_add_rejects_mismatched_structures():
    with pytest.raises(ValueError):
        tangents.add([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        tangents.add({"a": 1.0}, {"b": 1.0})


def test_scale_and_vdot_against_hand_computation():
    a = {"x": 2.0, "y": [numpy.array([1.0, 2.0]), 3], "z": None}
    b = {"x": -1.0, "y": [numpy.array([4.0, 0.5]), 5], "z": 1.0}
    # 2*-1 + (1*4 + 2*0.5); ints and None contribute nothing.
    assert tangents.vdot(a, b) == pytest.approx(-2.0 + 4.0 + 1.0)
    s = tangents.scale(a, 3.0)
    assert s["x"] == 6.0 and s["y"][1] is None and s["z"] is None
    numpy.testing.assert_array_equal(s["y"][0], [3.0, 6.0])


def test_vdot_rejects_leaves_of_different_shapes():
    with pytest.raises(ValueError):
        tangents.vdot(numpy.ones(3), numpy.ones(2))


def test_user_type_protocol():
    p = Polar(2.0, 0.5, "q")
    assert tangents.is_differentiable(p)
    z = tangents.zeros_like(p)
    assert (z.r, z.theta, z.tag) == (0.0, 0.0, "q")
    s = tangents.add(p, Polar(1.0, 1.0))
    assert (s.r, s.theta, s.tag) == (3.0, 1.5, "q")
    assert tangents.vdot(p, Polar(3.0, 2.0)) == pytest.approx(2.0 * 3.0 + 0.5 * 2.0)
    leaves, treedef = tangents.flatten([p, 1.0])
    assert leaves == [2.0, 0.5, 1.0]
    back = tangents.unflatten(treedef, [4.0, 5.0, 6.0])
    assert isinstance(back[0], Polar) and (back[0].r, back[0].theta, back[0].tag) == (4.0, 5.0, "q")
    assert back[1] == 6.0
    r = tangents.random_like(p, numpy.random.default_rng(0))
    assert isinstance(r, Polar) and isinstance(r.r, float)


def test_flatten_roundtrip_keeps_constants_and_types():
    x = OrderedDict(a=Point(1.0, 2), b=[numpy.ones(2), "s", (3.0,)], c=Params(numpy.zeros(1), 1.0))
    leaves, treedef = tangents.flatten(x)
    assert len(leaves) == treedef.num_leaves == 5
    y = tangents.unflatten(treedef, leaves)
    assert type(y) is OrderedDict and list(y) == ["a", "b", "c"]
    assert y["a"] == Point(1.0, 2) and y["b"][1] == "s" and y["b"][2] == (3.0,)
    assert type(y["c"]) is Params and y["c"].n == 3
    with pytest.raises(ValueError):
        tangents.unflatten(treedef, leaves[:-1])


leaf = st.one_of(
    st.floats(-1e6, 1e6),
    st.integers(-5, 5),
    st.text(max_size=2),
    st.lists(st.floats(-10, 10), min_size=1, max_size=3).map(numpy.array),
)
trees = st.recursive(
    leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.tuples(children, children),
        st.dictionaries(st.sampled_from("abc"), children, max_size=3),
    ),
    max_leaves=8,
)


@given(trees)
def test_flatten_unflatten_roundtrip_property(x):
    leaves, treedef = tangents.flatten(x)
    assert all(isinstance(v, (float, numpy.ndarray)) for v in leaves)
    y = tangents.unflatten(treedef, leaves)
    leaves2, _ = tangents.flatten(y)
    assert len(leaves2) == len(leaves)
    for a, b in zip(leaves, leaves2, strict=True):
        assert a is b


@given(trees)
def test_vdot_is_the_flat_dot_product_property(x):
    rng = numpy.random.default_rng(0)
    u = tangents.random_like(x, rng)
    v = tangents.random_like(x, rng)
    flat_u = [numpy.ravel(t) for t in tangents.flatten(tangents.materialize(x, u))[0]]
    flat_v = [numpy.ravel(t) for t in tangents.flatten(tangents.materialize(x, v))[0]]
    expected = sum(float(numpy.dot(a, b)) for a, b in zip(flat_u, flat_v, strict=True))
    assert tangents.vdot(u, v) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # add and scale are the vector-space operations: <u + 2v, v> = <u, v> + 2 <v, v>.
    w = tangents.add(u, tangents.scale(v, 2.0))
    assert tangents.vdot(w, v) == pytest.approx(
        tangents.vdot(u, v) + 2.0 * tangents.vdot(v, v), rel=1e-9, abs=1e-9)


def test_random_like_shapes_dtypes_and_constants():
    rng = numpy.random.default_rng(0)
    x = [1.0, numpy.ones((2, 3), dtype=numpy.float32), 4, numpy.arange(2)]
    r = tangents.random_like(x, rng)
    assert isinstance(r[0], float)
    assert r[1].shape == (2, 3) and r[1].dtype == numpy.float32
    assert r[2] is None and r[3] is None
    # Independent draws differ.
    assert tangents.random_like(1.0, rng) != tangents.random_like(1.0, rng)


def test_materialize_fills_zeros_and_checks_shapes():
    x = (1.0, [numpy.ones(2), 3])
    m = tangents.materialize(x, None)
    assert m[0] == 0.0 and m[1][1] is None
    numpy.testing.assert_array_equal(m[1][0], [0.0, 0.0])
    # Whatever sits at a constant position is dropped.
    m = tangents.materialize(x, (2.0, [None, 9.0]))
    assert m[0] == 2.0 and m[1][1] is None
    mb = tangents.materialize(x, (numpy.ones(4), None), batch=(4,))
    assert mb[1][0].shape == (4, 2)
    with pytest.raises(ValueError, match=r"x\[1\]\[0\]"):
        tangents.materialize(x, (1.0, [numpy.ones(3), None]))
    with pytest.raises(ValueError):
        tangents.materialize(x, [1.0, [None, None]])  # a list where a tuple is expected
    with pytest.raises(ValueError):
        tangents.materialize({"a": 1.0}, {"b": 1.0})
