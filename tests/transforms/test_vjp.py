"""Reverse mode on the VJP corpus: every (function, arguments) pair against finite differences.

``test_vjp_corpus`` runs :func:`wengert.testing.check_grads` in reverse mode on each
example of ``vjp_corpus.py`` (value, cotangent structure, and the dot-product test
against central differences). ``test_grad_*`` check the user-facing
``wengert.grad`` / ``wengert.value_and_grad`` of every scalar-output example
against the full numerical gradient, entry by entry, both with a tuple
``argnums`` and with the default ``argnums=0``.
"""

from __future__ import annotations

import copy
import math

import numpy
import pytest
import vjp_corpus as corpus

import wengert
from wengert import tangents as tree
from wengert.rules import registry
from wengert.testing import check_grads, numerical_jvp

RTOL = 1e-5
ATOL = 1e-6


def _params(cases):
    return [pytest.param(c, i, id=f"{c.name}-{i}") for c in cases for i in range(len(c.inputs))]


def _wrt(case, args) -> tuple[int, ...]:
    if case.argnums is not None:
        return case.argnums
    return tuple(i for i, a in enumerate(args) if tree.is_differentiable(a))


def _is_scalar(out) -> bool:
    return isinstance(out, (float, numpy.floating)) and not isinstance(out, bool)


def _scalar_params():
    out = []
    for c in corpus.CASES:
        for i, args in enumerate(c.inputs):
            if _is_scalar(c.make()(*copy.deepcopy(args))) and _wrt(c, args):
                out.append(pytest.param(c, i, id=f"{c.name}-{i}"))
    return out


_NUMPY_RULES = registry.lookup(numpy.sum) is not None


#: Constructs reverse mode does not handle yet. Each must fail with a located
#: ``WengertError`` (never a wrong gradient); when one becomes supported, move it back.

UNSUPPORTED = frozenset({
    'with_nullcontext_value',
    'np_inplace_alias',
    'nested_def_recursive',
})


@pytest.mark.parametrize(("case", "index"), _params(corpus.CASES))
def test_vjp_corpus(case, index):
    if case.name in UNSUPPORTED:
        with pytest.raises(wengert.WengertError):
            wengert.vjp(case.make(), *copy.deepcopy(case.inputs[index]))[1](1.0)
        return
    check_grads(case.make(), case.inputs[index], modes=("rev",), argnums=case.argnums)


if _NUMPY_RULES:
    # NumPy functions need rules/numpy.py: these cases exist only once numpy.sum has a rule.

    @pytest.mark.parametrize(("case", "index"), _params(corpus.NUMPY_REDUCTION_CASES))
    def test_vjp_corpus_numpy_functions(case, index):
        check_grads(case.make(), case.inputs[index], modes=("rev",), argnums=case.argnums)


def numerical_gradient(f, args, i):
    """The gradient of scalar ``f`` with respect to argument ``i``, entry by entry."""
    leaves, treedef = tree.flatten(args[i])
    grads = []
    for j, leaf in enumerate(leaves):
        g = numpy.zeros(numpy.shape(leaf))
        for index in numpy.ndindex(numpy.shape(leaf)):
            units = [numpy.zeros(numpy.shape(x)) for x in leaves]
            units[j][index] = 1.0
            units = [u if numpy.ndim(x) else float(u) for u, x in zip(units, leaves)]
            direction = tuple(tree.unflatten(treedef, units) if k == i else None
                              for k in range(len(args)))
            g[index] = numerical_jvp(f, args, direction)
        grads.append(g if numpy.ndim(leaf) else float(g))
    return grads


def assert_gradient(got, f, args, i, label):
    try:
        got_leaves, _ = tree.flatten(tree.materialize(args[i], got))
    except ValueError as e:
        raise AssertionError(f"{label}: the gradient of argument {i} does not fit "
                             f"{args[i]!r}: {e} (got {got!r})") from None
    want_leaves = numerical_gradient(f, args, i)
    assert len(got_leaves) == len(want_leaves), label
    for j, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        assert numpy.shape(g) == numpy.shape(w), f"{label}: leaf {j} shape"
        assert numpy.allclose(g, w, rtol=RTOL, atol=ATOL), (
            f"{label}: gradient of argument {i}, leaf {j} is {g!r}; "
            f"finite differences give {w!r}"
        )


@pytest.mark.parametrize(("case", "index"), _scalar_params())
def test_grad_matches_numerical_gradient(case, index):
    if case.name in UNSUPPORTED:
        return  # test_vjp_corpus checks that these fail cleanly
    f = case.make()
    args = case.inputs[index]
    wrt = _wrt(case, args)
    label = f"grad({case.name}, argnums={wrt}) at {args!r}"
    grads = wengert.grad(f, argnums=wrt)(*copy.deepcopy(args))
    assert isinstance(grads, tuple) and len(grads) == len(wrt), f"{label}: {grads!r}"
    for i, g in zip(wrt, grads):
        assert_gradient(g, f, args, i, label)

    value, grads2 = wengert.value_and_grad(f, argnums=wrt)(*copy.deepcopy(args))
    assert value == pytest.approx(f(*copy.deepcopy(args)), rel=1e-12, abs=1e-300), label
    for i, g in zip(wrt, grads2):
        assert_gradient(g, f, args, i, f"value_and_{label}")

    if wrt[0] == 0:
        # The default argnums=0 returns the gradient itself, not a 1-tuple.
        assert_gradient(wengert.grad(f)(*copy.deepcopy(args)), f, args, 0,
                        f"grad({case.name}) at {args!r}")


def test_corpus_size():
    """The corpus stays big enough to cover the constructs the frontend lowers."""
    assert len(corpus.CASES) >= 160
    for c in corpus.CASES + corpus.NUMPY_REDUCTION_CASES:
        assert 2 <= len(c.inputs) <= 4, c.name


def rows_summed_in_place(m):
    total = 0.0
    for j in range(len(m)):
        minor = [row[:j] + row[j + 1:] for row in m]
        total += sum(minor[0]) * m[j][0]
    return total


def rows_augmented(m):
    minor = [row for row in m]
    first = minor[0]
    first += [m[1][0] * 2.0]  # changes the row ``m`` holds
    total = 0.0
    total += sum(minor[0])
    return total


def test_a_float_summed_with_plus_equals_keeps_the_lists_typed():
    """``total += …`` of a float leaves the rows of a comprehension typed: the rules
    inline (no derivative found at run time); a list's ``+=`` keeps them unknown, right."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    src = wengert.show(rows_summed_in_place, mode="vjp", like=(m,))
    forward = src.split("def rows_summed_in_place_pullback")[0].split("\n", 1)[1]
    assert "_vjp(" not in forward and "_pb" not in forward, src
    check_grads(rows_summed_in_place, (m,), modes=("rev", "fwd"), order=2)
    check_grads(rows_augmented, ([list(r) for r in m],), modes=("fwd",), order=1)


def set_default_in_a_loop(site, s_1, n):
    rec = 0.0
    for _ in range(n):
        dd = {"p": site}
        dd.setdefault("r", s_1)  # ("r" not in dd: true here, false once it ran)
        rec = math.sin(sum(dd.values()) * 0.25 + rec)
    return rec


def test_a_test_of_a_container_changed_later_is_saved_not_computed_again():
    """The reverse loop reads what a test of a dict gave when the forward ran (``"r" not in
    dd`` before ``dd.setdefault``), not what it gives on the dict changed since: the
    gradient of ``s_1`` was 0. From the adversarial generator."""
    check_grads(set_default_in_a_loop, (0.3, 0.7, 3), modes=("rev", "fwd"), argnums=(0, 1),
                order=2)


# --- one object given to a callee at several parameters -----------------------------------------


def table_product(a, b):
    """A product into a table of zeros, made and returned by a helper."""
    n, m, p = len(a), len(b), len(b[0])
    c = [[0.0] * p for _ in range(n)]
    for i in range(n):
        for j in range(p):
            for k in range(m):
                c[i][j] += a[i][k] * b[k][j]
    return c


def trace_of_square(a):
    r = table_product(a, a)
    return r[0][0] + r[1][1] + 0.5 * r[0][1]


def trace_of_power(a):
    r = [[1.0, 0.0], [0.0, 1.0]]
    for _ in range(3):
        r = table_product(r, a)
    return r[0][0] + r[1][1] + r[0][1]


def pairs(u, v):
    return sum(x * y for x, y in zip(u, v))


def pairs_twice(xs):
    return pairs(xs, xs) + pairs(xs, [1.0, 2.0, 3.0])


def scaled_by(a, b):
    a[0] = a[0] * b[1]  # (through one parameter, seen through the other)
    return a[0] + b[0]


def written_through_one(xs):
    xs = list(xs)
    return scaled_by(xs, xs)


@pytest.mark.parametrize(("f", "args"), [
    (trace_of_square, ([[1.0, 0.5], [0.3, 0.8]],)),
    (trace_of_power, ([[1.0, 0.5], [0.3, 0.8]],)),
    (pairs_twice, ([0.7, -1.1, 0.4],)),
    (written_through_one, ([0.7, -1.1],)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_one_list_given_at_two_parameters_gets_both_adjoints(f, args):
    """``table_product(a, a)``: the callee's adjoints of both parameters are the one list's
    (the second replaced the first before: half the gradient of ``trace(a @ a)``)."""
    check_grads(f, args, modes=("rev", "fwd"), order=2)


def test_the_gradient_of_a_square_s_trace_is_twice_the_transpose():
    a = [[1.0, 0.5], [0.3, 0.8]]
    g = wengert.grad(lambda m: table_product(m, m)[0][0] + table_product(m, m)[1][1])(a)
    numpy.testing.assert_allclose(g, [[2.0, 0.6], [1.0, 1.6]], rtol=1e-12)
