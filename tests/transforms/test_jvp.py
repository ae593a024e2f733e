"""Forward mode on the VJP corpus: every (function, arguments) pair against finite differences.

``test_jvp_corpus`` runs :func:`wengert.testing.check_grads` in forward mode on each
example of ``vjp_corpus.py``; ``test_jvp_vjp_identity`` checks Mooncake's rule test
⟨v, J·u⟩ = ⟨Jᵀ·v, u⟩ between ``wengert.jvp`` and ``wengert.vjp`` for random ``u``
and ``v``; ``test_batched_jvp`` checks that one batched pass equals the stacked
single-direction passes.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy
import pytest
import vjp_corpus as corpus
from test_vjp import UNSUPPORTED as REVERSE_UNSUPPORTED

import wengert
from wengert import tangents as tree
from wengert.driver import binding
from wengert.rules import registry
from wengert.testing import check_grads

#: Constructs forward mode does not handle yet. Each must fail with a located
#: ``WengertError`` (never a wrong tangent); when one becomes supported, move it back.
UNSUPPORTED = frozenset({
    "nested_def_recursive",
    "np_inplace_alias",
    "with_nullcontext_value",
})


def _params(cases):
    return [pytest.param(c, i, id=f"{c.name}-{i}") for c in cases for i in range(len(c.inputs))]


def _wrt(case, args) -> list[int]:
    if case.argnums is not None:
        return [a % len(args) for a in case.argnums]
    return [i for i, a in enumerate(args) if tree.is_differentiable(a)]


def _random_tangents(case, args, rng):
    wrt = _wrt(case, args)
    return tuple(tree.random_like(a, rng) if i in wrt else tree.zeros_like(a)
                 for i, a in enumerate(args))


@pytest.mark.parametrize(("case", "index"), _params(corpus.CASES))
def test_jvp_corpus(case, index):
    args = case.inputs[index]
    if case.name in UNSUPPORTED:
        u = _random_tangents(case, args, numpy.random.default_rng(0))
        with pytest.raises(wengert.WengertError) as info:
            wengert.jvp(case.make(), copy.deepcopy(args), u)
        assert info.value.loc is not None, f"{case.name}: the error has no source location"
        return
    check_grads(case.make(), args, modes=("fwd",), argnums=case.argnums)


@pytest.mark.parametrize(("case", "index"), _params(corpus.CASES))
def test_jvp_vjp_identity(case, index):
    """⟨v, J·u⟩ (forward) equals ⟨Jᵀ·v, u⟩ (reverse) for random u and v."""
    if case.name in UNSUPPORTED or case.name in REVERSE_UNSUPPORTED:
        return
    args = case.inputs[index]
    rng = numpy.random.default_rng(1)
    wrt = _wrt(case, args)
    for _ in range(2):
        u = _random_tangents(case, args, rng)
        out, out_dot = wengert.jvp(case.make(), copy.deepcopy(args), u)
        v = tree.random_like(out, rng)
        _, pullback = wengert.vjp(case.make(), *copy.deepcopy(args))
        cts = pullback(v)
        lhs = tree.vdot(v, out_dot)
        rhs = sum(tree.vdot(tree.materialize(args[i], cts[i]), u[i]) for i in wrt)
        assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9), case.name


def _batched_params():
    out = []
    for c in corpus.CASES:
        if c.name in UNSUPPORTED:
            continue
        out.append(pytest.param(c, 0, id=f"{c.name}-0"))
    return out


@pytest.mark.parametrize(("case", "index"), _batched_params())
def test_batched_jvp(case, index):
    """One batched pass with k directions equals k single-direction passes, stacked."""
    args = case.inputs[index]
    rng = numpy.random.default_rng(2)
    k = 3
    singles = [_random_tangents(case, args, rng) for _ in range(k)]
    outs = [wengert.jvp(case.make(), copy.deepcopy(args), u)[1] for u in singles]
    batched = []
    for i, a in enumerate(args):
        leaves, td = tree.flatten(a)
        per = [tree.flatten(tree.materialize(a, u[i]))[0] for u in singles]
        stacked = [numpy.stack([numpy.asarray(p[j]) for p in per]) for j in range(len(leaves))]
        batched.append(binding.internal(a, tree.materialize(a, tree.unflatten(td, stacked), (k,)))
                       if leaves else None)
    _, got = binding.jvp_run(case.make(), copy.deepcopy(args), tuple(batched), (k,), False)
    got_leaves = tree.flatten(got)[0]
    want = [tree.flatten(o)[0] for o in outs]
    assert len(got_leaves) == len(want[0])
    for j, g in enumerate(got_leaves):
        assert numpy.allclose(g, numpy.stack([numpy.asarray(w[j]) for w in want]),
                              rtol=1e-9, atol=1e-12), case.name


def test_every_rule_has_both_modes():
    """A built-in primitive with a reverse rule has a forward rule, and vice versa."""
    def builtin(r):
        return any(getattr(g, "__module__", "").startswith("wengert.rules")
                   for g in (r.vjp, r.jvp) if g is not None)

    rules = [r for r in registry.all_rules() if builtin(r)]
    assert len(rules) > 50
    missing = [r.fn for r in rules
               if not r.nondifferentiable and (r.vjp is None) != (r.jvp is None)]
    assert not missing, missing


@dataclasses.dataclass
class _Track:
    x: float
    hist: list = dataclasses.field(default_factory=list)


def _kept_field_list(a):
    p = _Track(a)
    keep = [p.hist]  # the field's list, read before anything is appended to it
    p.hist.append(a * a)
    p.hist.append(3.0 * a)
    return sum(keep[0]) + p.x


def _kept_item_list(a):
    m = {"h": [], "g": [a]}
    first = m["h"]
    m["h"].append(a * a)
    return sum(first) * m["g"][0]


def test_a_container_read_before_a_write_through_another_read_sees_the_write():
    """``keep = [p.hist]`` then ``p.hist.append(v)``: one list, so one tangent; the first
    read's zero tangent is the one the append writes into (it was a detached zero: a wrong
    JVP, 0 where differences give 2a + 3)."""
    for f in (_kept_field_list, _kept_item_list):
        check_grads(f, (0.7,), modes=("fwd", "rev"), order=2)
