"""What a callable given to the API is, and the arguments a derivative is refused for."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import wengert


class Plain:
    def __init__(self, t):
        self.t = t


@dataclass
class Fields:
    t: float


def scaled(x, obj):
    return obj.t * x


def test_grad_with_respect_to_a_plain_object_is_refused_as_jax_refuses_a_non_pytree():
    with pytest.raises(wengert.WengertError) as info:
        wengert.grad(scaled, argnums=1)(1.3, Plain(2.0))
    assert "'Plain'" in str(info.value) and "dataclass" in str(info.value)
    # (its cotangent, a dataclass's, is what wengert builds; a plain object not taken as
    # an argument to differentiate is only read)
    assert wengert.grad(scaled, argnums=1)(1.3, Fields(2.0)) == Fields(1.3)
    assert wengert.grad(scaled)(1.3, Plain(2.0)) == 2.0


def test_a_tangent_given_for_a_plain_object_is_refused():
    with pytest.raises(wengert.WengertError) as info:
        wengert.jvp(scaled, (1.3, Plain(2.0)), (0.0, Plain(1.0)))
    assert "'Plain'" in str(info.value) and "argument 1" in str(info.value)
    assert wengert.jvp(scaled, (1.3, Plain(2.0)), (1.0, None))[1] == 2.0
    assert wengert.jvp(scaled, (1.3, Fields(2.0)), (0.0, Fields(1.0)))[1] == pytest.approx(1.3)
