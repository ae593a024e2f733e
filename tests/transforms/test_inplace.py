"""Adjoints of containers updated in place (``transforms.inplace``).

The pass is an optimisation that must never change a result: each program here reads
one container through aliases, shared adjoints or values kept for later, where an
in-place update of the wrong object would give a wrong gradient, and is checked against
central differences. The runtime check behind it is tested directly too.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

import wengert
from wengert import runtime
from wengert.analysis.types import ListOf
from wengert.testing import check_grads


def read_pairs(x):
    s = 0.0
    for i in range(len(x) // 2):
        a = x[2 * i]
        b = x[2 * i + 1]
        s += 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2
    return s


def alias_then_read(x):
    y = x
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * y[len(x) - 1 - i]
    return s


def two_lists_share_reads(x):
    ys = x
    zs = [v for v in x]
    total = 0.0
    for k in range(len(x)):
        total = total + ys[k] * zs[k] + x[0]
    return total


def array_sum_then_read(x, w):
    y = x + w
    s = 0.0
    for i in range(3):
        s = s + y[i] * y[i] + x[i]
    return s


def nested_lists(m):
    s = 0.0
    for row in m:
        for j in range(len(row)):
            s = s + row[j] * m[0][j]
    return s


def returns_list_items(x):
    return [x[0] * 2.0, x[1], x[0]]


def identity_list(x):
    return x


def read_in_branches(x, c):
    s = 0.0
    for i in range(len(x)):
        if x[i] > c:
            s = s + x[i] * x[0]
        else:
            s = s - x[i]
    return s


def rows_of_matrix(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s = s + a[i, j] * a[j, i]
    return s


def dict_reads(d):
    s = 0.0
    for k in ("a", "b", "a"):
        s = s + d[k] * d["b"]
    return s


X4 = [0.3, -0.7, 1.1, 0.4]

PROGRAMS = [
    (read_pairs, (X4,)),
    (alias_then_read, (X4,)),
    (two_lists_share_reads, (X4,)),
    (array_sum_then_read, (np.array([0.5, -0.2, 0.9]), np.array([0.1, 0.3, -0.4]))),
    (nested_lists, ([[0.5, -0.2], [0.9, 1.3]],)),
    (read_in_branches, (X4, 0.2)),
    (rows_of_matrix, (np.array([[0.5, -0.2, 0.3], [0.9, 1.3, -1.0], [0.2, 0.1, 0.7]]),)),
    (dict_reads, ({"a": 0.5, "b": -1.5},)),
]


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_gradients_through_in_place_updates(f, args):
    check_grads(f, args, modes=("rev", "fwd"))


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_pullback_called_twice_gives_the_same_cotangents(f, args):
    _, pullback = wengert.vjp(f, *args)
    first = pullback(1.0)
    np.testing.assert_equal(pullback(1.0), first)


def test_loop_over_a_list_updates_its_adjoint_in_place():
    # A list of floats: its adjoint is made a list of floats the loop owns, once, and
    # each read adds into its entry with no call.
    source = wengert.show(read_pairs, mode="vjp", arg_types=[ListOf(float)])
    assert "owned_float_list(" in source
    assert "getitem_adjoint" not in source and "entry_adjoint" not in source
    # Items of unknown type: the checked in-place update, never the copying one.
    source = wengert.show(read_pairs, mode="vjp", arg_types=[list])
    assert "getitem_adjoint_owned" in source
    assert "getitem_adjoint(" not in source


def test_a_callers_cotangent_is_never_changed():
    for f in (returns_list_items, identity_list):
        x = [0.5, -1.5]
        out, pullback = wengert.vjp(f, x)
        ct = [1.0, 2.0, 3.0] if f is returns_list_items else [1.0, 2.0]
        kept = list(ct)
        pullback(ct)
        assert ct == kept


def test_hessian_of_a_loop_over_a_list():
    # Forward over reverse runs the in-place pullback's rules: the functional ones.
    x = [0.3, -0.7, 1.1, 0.4]
    h = np.asarray(wengert.hessian(read_pairs)(x))
    g = wengert.grad(read_pairs)
    eps = 1e-6
    for k in range(len(x)):
        plus = list(x)
        minus = list(x)
        plus[k] += eps
        minus[k] -= eps
        column = (np.asarray(g(plus)) - np.asarray(g(minus))) / (2 * eps)
        np.testing.assert_allclose(h[:, k], column, rtol=1e-5, atol=1e-5)


def _update(prev):
    return runtime.getitem_adjoint_owned(prev, [1.0, 2.0, 3.0], 1, 0.5)


def _update_sole():
    # As generated code calls it: the argument is a local rebound to the result.
    prev = [None, 1.0, None]
    before = id(prev)
    prev = runtime.getitem_adjoint_owned(prev, [1.0, 2.0, 3.0], 1, 0.5)
    return prev, before


def test_owned_update_changes_an_object_only_its_caller_holds():
    out, before = _update_sole()
    assert id(out) == before
    assert out == [None, 1.5, None]


def test_owned_update_copies_an_object_held_elsewhere():
    prev = [None, 1.0, None]
    also = [prev]
    out = _update(prev)
    assert out is not prev
    assert also[0] == [None, 1.0, None]
    assert out == [None, 1.5, None]


def test_owned_update_copies_a_view_of_an_array():
    base = np.zeros(6)
    view = base[:3]
    out = runtime.getitem_adjoint_owned(view, np.ones(3), 1, 0.5)
    assert not base.any()
    np.testing.assert_array_equal(out, [0.0, 0.5, 0.0])


def test_owned_update_with_a_fancy_index_copies():
    prev = np.zeros(3)
    out = runtime.getitem_adjoint_owned(prev, np.ones(3), np.array([1, 1]), np.ones(2))
    np.testing.assert_array_equal(out, [0.0, 2.0, 0.0])


def cofactor_det(m):
    n = len(m)
    if n == 1:
        return m[0][0]
    total = 0.0
    for j in range(n):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        sign = 1.0 if j % 2 == 0 else -1.0
        total = total + sign * m[0][j] * cofactor_det(minor)
    return total


def shared_rows(m):
    rows = [m[0], m[1], m[0]]  # the first row twice: its adjoint is two reads' sum
    total = 0.0
    for i in range(3):
        for j in range(2):
            total += rows[i][j] * rows[2 - i][1 - j] + m[i % 2][j] ** 2
    return total


def test_reads_of_numbers_of_a_list_of_lists_add_into_the_rows_adjoint():
    """``m[i][j]``'s adjoint goes into the row's own adjoint (no list of one number per
    read), where only the owned outer adjoint holds the row: right for rows read twice,
    aliased rows, recursion, and to second order (the helper's Python definition)."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    source = wengert.show(cofactor_det, mode="vjp", like=(m,))
    assert "nested_entry_adjoint_owned(" in source, source
    for f, args in [(cofactor_det, (m,)), (shared_rows, ([[0.5, -1.5], [2.0, 0.25]],))]:
        check_grads(f, args, modes=("rev", "fwd"), order=2)
    # The Hessian of the recursion (its minors' types known only at run time: each level's
    # pullback is differentiated again as it runs; it dispatched the very same call again,
    # a RecursionError from inside wengert) against differences of the gradient.
    hessian = np.array(wengert.hessian(cofactor_det)(m))
    grad = wengert.grad(cofactor_det)
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        up, down = [r[:] for r in m], [r[:] for r in m]
        up[i][j] += 1e-6
        down[i][j] -= 1e-6
        assert np.allclose(hessian[:, :, i, j],
                           (np.array(grad(up)) - np.array(grad(down))) / 2e-6, atol=1e-6)
    # The helper itself against the functional form it stands for, aliasing included.
    row = [1.0, 2.0]
    x = [row, [3.0, 4.0]]
    shared = [0.5, None]
    got = runtime.nested_entry_adjoint_owned([shared, None], x, 0, row, 1, 0.25)
    assert got == [[0.5, 0.25], None] and shared == [0.5, None]  # (held twice: copied)


def rows_after_first(m):
    total = 0.0
    for k in range(len(m[0])):
        parts = [row[k] * row[-1] for row in m[1:]]
        total += sum(parts) * m[0][k]
    return total


def rows_until(m):
    total = 0.0
    for c in (1.0, -2.0):
        for row in m[1:]:
            if row[0] > 2.0:  # a loop left early: the rows after it get no adjoint
                break
            total += c * row[1] ** 2 * row[0]
    return total


def shared_row_slices(m):
    rows = [m[0], m[1], m[0]]  # the first row twice: its adjoint is two reads' sum
    total = 0.0
    for j in range(2):
        total += sum(r[j] * r[1 - j] for r in rows[1:]) + sum(r[j] ** 2 for r in rows[:2])
    return total


def det_named_rest(m):
    if len(m) == 1:
        return m[0][0]
    rest = m[1:]
    total = 0.0
    for j in range(len(m)):
        total += (-1.0) ** j * m[0][j] * det_named_rest([r[:j] + r[j + 1:] for r in rest])
    return total


def minors_with_head(m):
    total = 0.0
    for j in range(len(m[0])):
        # (items before the comprehension's, and a row read after: not all of ys's adjoint
        # comes from the rows)
        ys = [[m[0][j]]] + [row[:j] + row[j + 1:] for row in m[1:]]
        total += sum(v * v for y in ys for v in y) * ys[0][0]
    return total


def minors_until(m):
    total = 0.0
    for j in range(2):
        ys = []
        for row in m[1:]:
            if row[0] > 2.0:  # (a loop left early: not the comprehension's reverse)
                break
            ys.append(row[:j] + row[j + 1:])
        total += sum(y[0] * y[-1] for y in ys) * m[0][j]
    return total


def minors_of_columns(m):
    total = 0.0
    for j in range(len(m)):
        cols = [row[:j] + row[j + 2:] for row in m[::2]]  # (a step, a wider gap)
        total += sum(c[0] * c[-1] for c in cols) * math.cos(m[0][j])
    return total


def det_of_popped_copies(m):
    if len(m) == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    total = 0.0
    for j, a in enumerate(m[0]):
        minor = []
        for row in m[1:]:
            r = list(row)
            r.pop(j)
            minor.append(r)
        total += (1.0 if j % 2 == 0 else -1.0) * a * det_of_popped_copies(minor)
    return total


def test_a_determinant_of_minors_made_by_popping_copies_is_typed_to_second_order():
    """Minors made as ``r = list(row); r.pop(j)`` (a copy taken out of, not the caller's
    row): the recursion writes into no argument, so its Hessian is derived (refused
    before: "writes into its arguments"), and the minors are lists of lists of floats, so
    the recursive call is a direct call of the same derivative with no run-time checks."""
    m = [[1.5, -0.5, 0.25, 0.5], [0.75, 2.0, -1.0, 0.3], [0.5, 0.3, 1.25, -0.2],
         [0.1, -0.4, 0.6, 1.1]]
    source = wengert.show(det_of_popped_copies, mode="vjp", like=(m,))
    assert "det_of_popped_copies_vjp(minor)" in source and "check_operands" not in source, \
        source
    check_grads(det_of_popped_copies, (m,), modes=("rev", "fwd"), order=2)
    hessian = np.array(wengert.hessian(det_of_popped_copies)(m))
    # (linear in each row: no second derivative within one)
    assert hessian.shape == (4, 4, 4, 4) and all(np.allclose(hessian[i, :, i, :], 0.0)
                                                 for i in range(4))


def det_of_index_minors(m):
    n = len(m)
    if n == 1:
        return m[0][0]
    total = 0.0
    for j in range(n):
        minor = [[m[i][k] for k in range(n) if k != j] for i in range(1, n)]
        total += (-1) ** j * m[0][j] * det_of_index_minors(minor)
    return total


def test_a_sign_written_as_a_power_of_minus_one_keeps_the_products_floats():
    """``(-1) ** j`` is an int or a float (``2 ** -1`` is one), so its product with a
    float is a float: the recursion's sum is typed and its operators inline (``mul_vjp``
    calls and run-time operand checks before); right to second order."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    source = wengert.show(det_of_index_minors, mode="vjp", like=(m,))
    assert "check_operands" not in source and "mul_vjp" not in source, source
    check_grads(det_of_index_minors, (m,), modes=("rev", "fwd"), order=2)
    check_grads(lambda x, k: 2 ** k * x + x ** k, (1.5, -2), modes=("rev", "fwd"), order=2)


def test_the_reverse_of_a_comprehension_of_row_slices_is_one_call():
    """``[row[:j] + row[j + 1:] for row in m[1:]]`` (a cofactor expansion's minor): its
    reverse loop (pop each row's adjoint, split it, collect, add into ``m``'s) is one call,
    ``slice_pairs_adjoint``, which adds each part into the row's owned adjoint in place;
    right for named slices, items appended before, a loop left early (not fused), steps
    and gaps, and to second order; the helper against the calls it stands for."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    for f, fused in [(cofactor_det, True), (det_named_rest, False),  # (a name: a sum)
                     (minors_with_head, True), (minors_until, False),
                     (minors_of_columns, True)]:
        source = wengert.show(f, mode="vjp", like=(m,))
        assert ("slice_pairs_adjoint(" in source) == fused, (f, source)
        check_grads(f, (m,), modes=("rev", "fwd"), order=2)
    check_grads(minors_until, ([[1.5, -0.5], [0.75, 2.0], [2.5, 0.3], [0.5, 1.0]],),
                modes=("rev", "fwd"), order=2)
    x = [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0], [5.0, 6.0, 7.0]]
    first, second = slice(None, 1), slice(2, None)
    shared = [0.5, None, 1.0]
    for index, gs in [(slice(1, None), [[9.0, 9.0], [0.1, 0.2], [0.3, None]]),
                      (slice(None, None, -1), [[0.1, 0.2], None, [0.5, 0.25]]),
                      (slice(None, None, 2), [None, [0.25, 0.5]]),
                      (slice(1, None), None)]:
        seen = x[index]
        rows = None if gs is None else \
            [runtime.slice_pair_adjoint(r, first, second, g)
             for r, g in zip(seen, gs[len(gs) - len(seen):])]
        want = runtime.getitem_adjoint([None, shared, [1.0, None, None]], x, index, rows)
        # (``prev`` held by nothing but the call: added into in place, but not ``shared``)
        got = runtime.slice_pairs_adjoint([None, shared, [1.0, None, None]], x, index, seen,
                                          first, second, gs)
        assert got == want and shared == [0.5, None, 1.0], (index, got, want)
        assert runtime.slice_pairs_adjoint(None, x, index, seen, first, second, gs) == \
            runtime.getitem_adjoint(None, x, index, rows)
    with pytest.raises(ValueError, match="an adjoint of 3 items for a list of 2"):
        runtime.slice_pairs_adjoint([None, [0.0] * 3, None], x, slice(1, 2), x[1:2], first,
                                    second, [[1.0, 2.0, 3.0]])


def test_a_loop_over_a_slice_of_a_list_adds_its_items_adjoints_in_place():
    """The reverse of ``for row in m[1:]`` adds each row's adjoint at its place in ``m``'s
    (``items_adjoint_owned``: no reversed list, no new list per row where the row's adjoint
    is held by nothing else), right with ``break``, rows read twice and to second order."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25], [2.5, 0.5, 1.0]]
    for f in (cofactor_det, rows_after_first, rows_until, shared_row_slices):
        like = m if f is not cofactor_det else [r[:3] for r in m[:3]]
        if f is not rows_until:
            fused = "slice_pairs_adjoint(" if f is cofactor_det else "items_adjoint_owned("
            assert fused in wengert.show(f, mode="vjp", like=(like,)), f
        check_grads(f, (like,), modes=("rev", "fwd"), order=2)
    x = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    shared = [0.5, None]
    for index, items in [(slice(1, None), [[0.1, 0.2], [0.3, None]]),
                         (slice(None, None, -1), [[0.1, 0.2], None]),
                         (slice(None, None, 2), [None, [0.25, 0.5]])]:
        want = runtime.getitem_adjoint([None, shared, [1.0, None]], x, index,
                                       runtime.reversed_adjoint(items, x[index]))
        # (``prev`` held by nothing but the call: added into in place, but not ``shared``)
        got = runtime.items_adjoint_owned([None, shared, [1.0, None]], x, index, items,
                                          x[index])
        assert got == want and shared == [0.5, None], (index, got, want)
    assert runtime.items_adjoint_owned(None, x, slice(1, None), [None, None], x[1:]) is None


def without_each(xs):
    total = 0.0
    for j in range(len(xs)):
        rest = xs[:j] + xs[j + 1:]
        total += xs[j] * sum(v * v for v in rest)
    return total


def overlapping(m):
    total = 0.0
    for j in range(1, len(m[0])):
        both = [row[:j + 1] + row[j - 1:] for row in m]  # the slices share two numbers
        total += sum(v * w for r in both for v, w in zip(r, reversed(r))) * m[0][j]
    return total


def test_a_concatenation_of_two_slices_of_a_list_is_reversed_in_one_list():
    """``xs[:j] + xs[j + 1:]``'s adjoint is one new list with the two parts placed
    (``slice_pair_adjoint``), not two scatters of two copies; slices that overlap add."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    for f in (det_named_rest, overlapping):  # (cofactor_det's: ``slice_pairs_adjoint``)
        assert "slice_pair_adjoint(" in wengert.show(f, mode="vjp", like=(m,)), f
        check_grads(f, (m,), modes=("rev", "fwd"), order=2)
    check_grads(without_each, ([0.5, -1.25, 2.0, 0.75],), modes=("rev", "fwd"), order=2)
    assert runtime.slice_pair_adjoint([1.0, 2.0, 3.0], slice(None, 2), slice(1, None),
                                      [0.1, 0.2, 0.3, 0.4]) == [0.1, 0.5, 0.4]
    assert runtime.slice_pair_adjoint([1.0, 2.0, 3.0], slice(None, 1), slice(2, None),
                                      [0.1, 0.2]) == [0.1, None, 0.2]


def after_and_before(m):
    # The two parts the other way round, rows as tuples.
    return sum(sum(row[j + 1:] + row[:j]) * row[j] for row in m for j in range(len(row)))


def first_minor_row_only(m):
    # Only the first row of each minor is read: the others' adjoints stay zero (``None``).
    total = 0.0
    for j in range(len(m[0])):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        total += m[0][j] * sum(minor[0])
    return total


def test_a_slice_pair_saves_no_length_per_row():
    """The split of ``row[:j] + row[j + 1:]``'s adjoint is measured in the pullback: the
    forward saves the row alone per row (no tuple of the row, its minor row and a length),
    and a minor row whose adjoint is zero costs nothing; every spelling stays right. The
    row alone is the loop's item: nothing is pushed, the pullback walks a copy of the slice
    (the loop stays a comprehension)."""
    m = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
    src = wengert.show(cofactor_det, mode="vjp", like=(m,))
    forward = src.split("_pullback")[0]
    assert ".append(row)" not in forward and "minor = [row[:j] + row[j + 1:] for row in" in \
        forward and "len(" not in forward.split("for row in")[1].split("\n\n")[0], src
    src = wengert.show(first_minor_row_only, mode="vjp", like=(m,))
    # (The rows' adjoints popped off ``minor_bar``, split and placed: one call.)
    assert re.search(r"slice_pairs_adjoint\(m_bar, m, \w+, \w+, \w+, \w+, minor_bar\)", src), src
    for f, x in [(cofactor_det, m), (first_minor_row_only, m),
                 (after_and_before, [tuple(r) for r in m]), (after_and_before, m)]:
        check_grads(f, (x,), modes=("rev", "fwd"), order=2)


@dataclasses.dataclass
class Particle:
    x: float
    v: float
    m: float = 1.0


def advance(p, dt, k):
    a = (-k * p.x - 0.3 * p.x ** 3 - 0.1 * p.v) / p.m
    v = p.v + dt * a
    return Particle(p.x + dt * v, v, p.m)


def new_particle_per_step(x0, v0, k):
    p = Particle(x0, v0, 2.0)
    for _ in range(20):
        p = advance(p, 0.05, k)
    return p.x * p.v


def new_particle_kept(x0, v0, k):
    p = Particle(x0, v0)
    seen = []
    for i in range(6):
        p = Particle(p.x + 0.1 * p.v * k, p.v - 0.1 * p.x) if i % 2 else advance(p, 0.1, k)
        seen.append(p)  # the object itself is read again after the loop
    return sum(q.x * q.v for q in seen) + p.m * p.x


def test_a_loop_making_a_new_object_per_step_carries_its_fields_adjoints():
    """``p = Particle(...)`` per step: the reverse loop carries ``p_x_bar`` and ``p_v_bar``
    instead of an adjoint object made and taken apart per step; right where the objects
    are kept and read again, through a branch, and to second order."""
    source = wengert.show(new_particle_per_step, mode="vjp", like=(0.5, 0.1, 2.0),
                          argnums=(0, 1, 2))
    pullback = source[source.index("_pullback"):]
    assert "field_adjoint(" not in pullback and "getattr_adjoint" not in pullback, source
    for f in (new_particle_per_step, new_particle_kept):
        check_grads(f, (0.5, 0.1, 2.0), modes=("rev", "fwd"), order=2)


def table_sums(a, w):
    t = [[0.0] * len(a[0]) for _ in a]
    for i in range(len(a)):
        for j in range(len(a[0])):
            t[i][j] += a[i][j] * w  # the entry read and written
            t[i][j] = t[i][j] * t[i][j]  # written with a new value
    return sum(sum(r) for r in t)


def test_a_write_into_a_table_row_takes_the_entry_out_in_place():
    """The reverse of ``t[i][j] = v`` on a table's row takes the entry's adjoint out of the
    row's in place (``nested_entry_taken``), not through a copy of the row per write."""
    a = [[0.5, -0.25, 1.5], [0.75, 2.0, -1.0]]
    src = wengert.show(table_sums, mode="vjp", like=(a, 0.7), argnums=(0, 1))
    assert "nested_entry_taken(" in src and "entry_write_of_list(" not in src, src
    check_grads(table_sums, (a, 0.7), modes=("rev", "fwd"), order=2)
    m = [[1.0, 2.0], [3.0, 4.0]]
    row_bar = [0.5, 0.25]
    prev, g = runtime.nested_entry_taken([row_bar, None], m, 0, m[0], 1)
    assert g == 0.25 and prev[0] == [0.5, None]
    assert runtime.nested_entry_taken([None, None], m, 1, m[1], 0)[1] == 0.0


@dataclasses.dataclass
class _Trail:
    k: float
    hist: list


def _trail_update(tr, c):
    for i in range(len(tr.hist)):
        tr.hist[i] = tr.hist[i] * c + tr.k
    return sum(v * v for v in tr.hist) * c


def _trail_update_then_grow(tr, c):
    for i in range(len(tr.hist)):
        tr.hist[i] = tr.hist[i] * c + tr.k
    tr.hist.append(c)
    return sum(v * v for v in tr.hist)


@pytest.mark.parametrize("f", [_trail_update, _trail_update_then_grow])
def test_a_write_into_a_list_field_takes_the_item_out_in_place(f):
    """The reverse of ``tr.hist[i] = tr.hist[i] * c + tr.k`` takes the item's adjoint out of
    the field's adjoint in place (``field_entry_taken``) and adds the read's into it
    (``field_entry_adjoint_owned``), not through a list the field's size per step (it was
    several: 236 times the primal's time for 200 floats)."""
    like = (_Trail(0.5, [0.1, -0.2, 0.3]), 1.1)
    src = wengert.show(f, mode="vjp", like=like)
    assert "field_entry_taken(" in src and "field_entry_adjoint_owned(" in src, src
    assert "setitem_adjoint" not in src and "entry_adjoint_of_list(" not in src, src
    check_grads(f, (_Trail(0.5, [0.1 * i - 0.4 for i in range(7)]), 1.1),
                modes=("rev", "fwd"), order=2)


def _trail_written_then_read(tr, c):
    e = 0.0
    tr.hist[0] = c
    for h in tr.hist:
        e += h * tr.k * c
    return e


def _trail_shifted(tr, c):
    for i in range(len(tr.hist) - 1):
        tr.hist[i + 1] = tr.hist[i] * c + tr.hist[i + 1]
    return sum(v * v for v in tr.hist) * tr.k


@pytest.mark.parametrize("f", [_trail_written_then_read, _trail_shifted])
@pytest.mark.parametrize("k", [-2, -2.0])
def test_the_fused_reverse_of_a_field_write_reads_only_what_exists_there(f, k):
    # (an int ``k`` made the constant index of ``tr.hist[0] = c`` come after the field's
    # adjoint was taken out: the fused call read it before it was made, which the IR
    # verifier caught, found by the typed-arguments generator)
    check_grads(f, (_Trail(k, [0.578, 0.411, 0.64]), -1.04), modes=("rev", "fwd"), order=2)


def test_field_entry_helpers_fall_back_where_the_adjoint_is_shared():
    tr = _Trail(0.5, [1.0, 2.0])
    hist_bar = [0.5, 0.25]
    shared = runtime.Attrs(hist=hist_bar)
    keep = [shared]  # (held elsewhere: the helpers must not change it)
    prev, g = runtime.field_entry_taken(shared, tr, "hist", 1)
    assert g == 0.25 and keep[0]["hist"] == [0.5, 0.25] and prev["hist"][1] is None
    out = runtime.field_entry_adjoint_owned(shared, tr, "hist", tr.hist, 0, 1.0)
    assert out["hist"] == [1.5, 0.25] and shared["hist"] == [0.5, 0.25]
    assert runtime.field_entry_taken(runtime.Attrs(), tr, "hist", 0)[1] is None
    fresh = runtime.field_entry_adjoint_owned(runtime.Attrs(), tr, "hist", tr.hist, 1, 2.0, 2)
    assert fresh["hist"] == [None, 2.0]
