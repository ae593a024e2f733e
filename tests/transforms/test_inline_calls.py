"""Inlining small user functions before differentiation (``transforms/inline_calls``)."""

from __future__ import annotations

import math

import pytest

import wengert
from wengert import api
from wengert.ir import nodes as n
from wengert.ir.clone import clone_function
from wengert.testing import check_grads
from wengert.transforms.inline_calls import MAX_CALLEE_OPS, inline_calls


def accel(theta, length):
    return -(9.81 / length) * math.sin(theta)


def step(theta, omega, length):
    return theta + 0.01 * omega, omega + 0.01 * accel(theta, length)


def simulate(theta, length):
    omega = 0.0
    for _ in range(5):
        theta, omega = step(theta, omega, length)
    return theta


def countdown(x, k):
    if k == 0:
        return x
    return countdown(x * 1.5, k - 1) + x


def scaled(x, k=2.0):
    return x * k


def uses_default(x):
    return scaled(x) * x


def big(x):
    s = x
    for _ in range(3):
        s = s * 1.1 + math.sin(s) + math.cos(s) * 0.5 - math.tanh(s) + math.exp(-s * s)
        s = s + math.atan(s) * 0.25 + math.sqrt(1.0 + s * s) - math.log1p(s * s) * 0.1
        s = s / (1.0 + abs(s)) + math.sinh(s * 0.1) + math.cosh(s * 0.1) - math.erf(s)
    return s


def calls_big(x):
    return big(x) * 2.0


def weighted(a, b=2.0, *, scale=0.5, shift):
    return (a * b + shift) * scale


def keyword_and_default(x, y):
    return weighted(x, shift=y) + weighted(b=x, a=y, shift=1.0, scale=x)


def spread(*xs, **named):
    return xs[0] * xs[-1] + len(xs) * named["w"]


def star_helper(x, y):
    return spread(x, y, x * y, w=y)


def _calls(fn: n.Function) -> list[str]:
    out = []
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}
    for op in n.walk(fn.body):
        if isinstance(op, n.Call) and op.fn.id in consts:
            out.append(getattr(consts[op.fn.id], "__name__", "?"))
    return out


def _inlined(f):
    ir, _ = clone_function(api.lower_ir(f))
    count = inline_calls(ir, lambda g: api.lower_ir(g))
    return ir, count


def test_nested_helpers_are_inlined_at_every_call():
    ir, count = _inlined(simulate)
    assert count == 2  # step, and accel inside it
    assert "step" not in _calls(ir) and "accel" not in _calls(ir)


def test_recursion_and_big_functions_stay_calls():
    ir, _ = _inlined(countdown)
    assert "countdown" in _calls(ir)
    assert sum(1 for _ in n.walk(api.lower_ir(big).body)) > MAX_CALLEE_OPS
    ir, count = _inlined(calls_big)
    assert count == 0


@pytest.mark.parametrize(("f", "args"), [
    (simulate, (0.3, 1.2)), (countdown, (0.7, 3)), (uses_default, (0.4,)),
    (calls_big, (0.2,)),
])
def test_gradients_through_inlined_helpers(f, args):
    check_grads(f, args, modes=("rev",))


def test_defaults_keywords_and_star_arguments_bind_as_python_binds_them():
    ir, count = _inlined(uses_default)  # the default is the object the def evaluated
    assert count == 1 and "scaled" not in _calls(ir)
    for f, args, helper in ((keyword_and_default, (0.3, 1.1), "weighted"),
                            (star_helper, (0.4, 0.9), "spread")):
        ir, count = _inlined(f)
        assert count >= 1 and helper not in _calls(ir), f.__name__
        check_grads(f, args, modes=("rev", "fwd"), order=2)


def test_inlined_pullback_has_no_helper_calls():
    src = wengert.show(simulate, mode="vjp", argnums=(0, 1))
    src = "\n".join(line for line in src.splitlines() if not line.strip().startswith("#"))
    assert "accel" not in src and "step" not in src and "vjp_call" not in src
