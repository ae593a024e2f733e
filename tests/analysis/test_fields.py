"""Field types of objects a function makes and keeps (``analysis/fields.py``): reads of
``p.x`` are typed by what the function wrote there, and every way an instance can hold
something else (a write of another type, an instance from outside or out of a container,
one stored away, captured or handed to code that may write into it) drops the fact. Each
spelling is checked against central differences in both modes and to second order."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import wengert
from wengert.analysis.fields import object_fields
from wengert.analysis.types import infer_types
from wengert.driver.pipeline import lower
from wengert.ir import nodes as n
from wengert.testing import check_grads


@dataclass
class P:
    x: float
    v: float

    def step(self, dt, k):
        a = -k * self.x - 0.1 * self.v
        self.v = self.v + dt * a
        self.x = self.x + dt * self.v


@dataclass
class Late:
    x: float
    scale: float = 2.0
    extra: list = field(default_factory=list)


@dataclass
class Posted:
    x: float

    def __post_init__(self):
        self.y = self.x * 2.0


class Plain:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return math.tanh(self.w * x + self.b)


def inplace(x0, v0, k):
    p = P(x0, v0)
    for _ in range(20):
        p.step(0.05, k)
    return p.x * p.v


def renewed(x0, v0, k):
    p = P(x0, v0)
    for _ in range(20):
        a = -k * p.x
        p = P(p.x + 0.05 * p.v, p.v + 0.05 * a)
    return p.x


def becomes_array(x0, v0):
    p = P(x0, v0)
    p.x = np.array([1.0, 2.0]) * p.x
    return np.sum(p.x * p.v)


def stored(x0, v0):
    p = P(x0, v0)
    ps = [p]
    ps[0].x = np.array([1.0, 3.0]) * x0
    return np.sum(p.x) * p.v


def captured(x0, v0):
    p = P(x0, v0)

    def bump(s):
        p.x = p.x * s

    bump(np.array([0.5, 2.0]))
    return np.sum(p.x) + p.v


def defaults(x0):
    q = Late(x0)
    return q.x * q.scale


def post_init(x0):
    q = Posted(x0)
    return q.y * q.x


def layers(w1, w2, x):
    model = [Plain(w1, 0.1), Plain(w2, -0.2)]
    for layer in model:
        x = layer(x)
    return x


def plain(w, b, x):
    layer = Plain(w, b)
    return layer(x) + layer.w * layer.b


def test_every_spelling_differentiates():
    for f, args in [(inplace, (0.3, -0.2, 1.5)), (renewed, (0.3, -0.2, 1.5)),
                    (becomes_array, (0.3, -0.7)), (stored, (0.3, -0.7)),
                    (captured, (0.3, -0.7)), (defaults, (0.4,)), (post_init, (0.4,)),
                    (layers, (0.7, -1.1, 0.4)), (plain, (0.7, -1.1, 0.4))]:
        check_grads(f, args, order=2, modes=("rev", "fwd"))


def _fields(f, types):
    fn = lower(f)
    ty = infer_types(fn, types)
    return fn, ty


def getattrs(fn: n.Function, name: str) -> list[n.Value]:
    return [op.result for op in n.walk(fn.body) if isinstance(op, n.GetAttr) and op.name == name]


def test_fields_written_with_floats_read_as_floats():
    fn, ty = _fields(renewed, [float, float, float])
    assert getattrs(fn, "x") and all(ty.of(v) is float for v in getattrs(fn, "x"))
    # A plain class's __init__ is inlined before the transforms infer types: its writes
    # type the fields there.
    for f in (plain, post_init):
        text = wengert.show(f, mode="vjp", arg_types=(float,) * (3 if f is plain else 1))
        body = text.split("\n", 1)[1]
        assert "_vjp(" not in body and "_pb(" not in body, text


def test_facts_dropped_where_a_field_may_hold_something_else():
    fn, ty = _fields(becomes_array, [float, float])
    assert all(ty.of(v) is None for v in getattrs(fn, "x"))
    assert all(ty.of(v) is float for v in getattrs(fn, "v"))  # v is only ever a float
    for f in (stored, captured):
        fn, ty = _fields(f, [float, float])
        assert all(ty.of(v) is None for v in getattrs(fn, "x")), f.__name__
    # An instance from outside holds whatever its maker put there.
    fn = lower(lambda_free_read)
    assert object_fields(fn, infer_types(fn, [P]).of, {}) == {}


def lambda_free_read(p):
    return p.x * 2.0


def test_inlined_code_for_an_object_stepped_in_place():
    text = wengert.show(inplace, mode="vjp", arg_types=(float, float, float))
    body = text.split("\n", 1)[1]
    assert "_vjp(" not in body and "_pb(" not in body, text


def late_extra(x0):
    q = Late(x0)
    q.extra.append(x0 * q.scale)
    return sum(q.extra) + q.x


def test_a_list_or_dict_default_factory_types_the_field():
    # The generated ``__init__`` calls ``list``: the field holds a list, so ``sum`` of it
    # and its ``append`` are typed (a list, not a value known only when it runs).
    fn, ty = _fields(late_extra, [float])
    assert getattrs(fn, "extra") and all(ty.of(v) is list for v in getattrs(fn, "extra"))
    check_grads(late_extra, (0.7,), modes=("rev", "fwd"), order=2)


# --- a field given a list display of objects of one class ---------------------------------------


@dataclass
class Dense:
    w: float
    b: float

    def __call__(self, x):
        return math.tanh(self.w * x + self.b)


class Square:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return self.s * x * x


class Chain:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@dataclass
class Model:
    layers: list

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def chain_loss(w1, w2):
    m = Chain([Dense(w1, 0.1), Dense(w2, -0.2), Dense(0.5, 0.0)])
    return (m(0.7) - 0.3) ** 2


def model_loss(w1, w2):
    m = Model([Dense(w1, 0.1), Dense(w2, -0.2)])
    return (m(0.7) - 0.3) ** 2 + m.layers[0].w


def appended_other(w1, w2):
    m = Chain([Dense(w1, 0.1), Dense(w2, -0.2)])
    m.layers.append(Square(w1))  # (the field's list holds another class now)
    return m(0.7)


def replaced_by_other(w1, w2):
    m = Model([Dense(w1, 0.1), Dense(w2, -0.2)])
    m.layers[1] = Square(w2)
    return m(0.7)


def test_layers_held_in_a_field_are_typed_to_any_order():
    """A model of layer objects (``__call__``) held in a field given a list display: the
    layers' class is known, so their calls are inlined (the Hessian was refused: a call
    dispatched at run time)."""
    for f in (chain_loss, model_loss):
        check_grads(f, (0.9, -1.1), argnums=(0, 1), modes=("rev", "fwd"), order=2)
        text = wengert.show(f, mode="vjp", arg_types=(float, float))
        assert "dispatch" not in text and "vjp_call" not in text, text


def test_a_field_s_list_changed_through_the_field_is_not_typed_by_its_display():
    """Another class appended or stored through ``m.layers``: the layers are not assumed
    to be of the display's class (an AttributeError from generated code before)."""
    for f in (appended_other, replaced_by_other):
        check_grads(f, (0.9, -1.1), argnums=(0, 1), modes=("rev", "fwd"))
