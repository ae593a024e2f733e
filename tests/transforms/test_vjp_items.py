"""Reverse mode of writes into the rows of a table the function makes (``transforms/vjp_items.py``).

``c = [[0.0] * n for _ in range(n)]`` then ``c[i][j] += …``: a product into a table made
first, a dynamic programme filling its table, an elimination on a copy of a matrix. Each row
is a new list made for the table alone, so the writes go through the table's own adjoint (a
write-back ``c[i] = row`` after each). Rows that may be shared are refused at the write.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads


def matmul_sum(a, b):
    n = len(a)
    c = [[0.0] * n for _ in range(n)]
    for i in range(n):  # (the i-k-j order: a row of b added into a row of c)
        for k in range(n):
            aik = a[i][k]
            for j in range(n):
                c[i][j] += aik * b[k][j]
    return sum(sum(r) for r in c) + c[0][1] * c[1][0]


def edit_distance(xs, ys):
    m, n = len(xs), len(ys)
    d = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        d[i][0] = d[i - 1][0] + xs[i - 1] ** 2
    for j in range(1, n + 1):
        d[0][j] = d[0][j - 1] + ys[j - 1] ** 2
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            d[i][j] = (xs[i - 1] - ys[j - 1]) ** 2 + min(d[i - 1][j], d[i][j - 1],
                                                          d[i - 1][j - 1])
    return d[m][n]


def elimination(a):
    a = [row[:] for row in a]
    n = len(a)
    det = 1.0
    for k in range(n):
        det *= a[k][k]
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            for j in range(k, n):
                a[i][j] -= f * a[k][j]
    return det


def copies(a, s):
    rows = [list(r) for r in a]
    more = [r.copy() for r in a]
    grid = [[s * v for v in r] for r in a]  # rows built by a comprehension of numbers
    for i in range(len(a)):
        rows[i][0] = rows[i][0] * s + more[i][1]
        more[i][1] = math.sin(rows[i][0]) * grid[i][0]
        grid[i][0] = grid[i][0] * more[i][1]
    return sum(rows[0]) * sum(more[1]) + max(grid[1]) + grid[0][0]


def smoothing(xs, w):
    # A table two rows high, written and read in every step.
    t = [[x for x in xs], [0.0] * len(xs)]
    for step in range(3):
        src, dst = t[step % 2], t[(step + 1) % 2]
        for i in range(1, len(xs) - 1):
            dst[i] = w * src[i - 1] + (1 - 2 * w) * src[i] + w * src[i + 1]
    return sum(v * v for v in t[1])


A = [[2.0, 0.5, 0.1], [0.3, 1.7, 0.2], [0.4, 0.6, 3.0]]
B = [[1.0, 0.2, 0.3], [0.1, 1.1, 0.4], [0.5, 0.6, 0.7]]


def matmul_flat(v):
    return matmul_sum([v[0:3], v[3:6], v[6:9]], [v[9:12], v[12:15], v[15:18]])


def edit_distance_flat(v):
    return edit_distance(v[:3], v[3:])


def elimination_flat(v):
    # (Written out: a helper copying its argument's rows counts as writing into it, and
    # one that writes is not differentiated twice.)
    a = [v[0:3], v[3:6], v[6:9]]
    a = [row[:] for row in a]
    det = 1.0
    for k in range(3):
        det *= a[k][k]
        for i in range(k + 1, 3):
            f = a[i][k] / a[k][k]
            for j in range(k, 3):
                a[i][j] -= f * a[k][j]
    return det


def copies_flat(v):
    a, s = [v[0:3], v[3:6], v[6:9]], v[9]
    rows = [list(r) for r in a]
    more = [r.copy() for r in a]
    grid = [[s * x for x in r] for r in a]
    for i in range(len(a)):
        rows[i][0] = rows[i][0] * s + more[i][1]
        more[i][1] = math.sin(rows[i][0]) * grid[i][0]
        grid[i][0] = grid[i][0] * more[i][1]
    return sum(rows[0]) * sum(more[1]) + max(grid[1]) + grid[0][0]


@pytest.mark.parametrize(("f", "args", "flat", "point"), [
    (matmul_sum, (A, B), matmul_flat, [*A[0], *A[1], *A[2], *B[0], *B[1], *B[2]]),
    (edit_distance, ([0.1, 0.5, 0.9], [0.2, 0.7]), edit_distance_flat,
     [0.1, 0.5, 0.9, 0.2, 0.7]),
    (elimination, (A,), elimination_flat, [*A[0], *A[1], *A[2]]),
    (copies, (A, 0.7), copies_flat, [*A[0], *A[1], *A[2], 0.7]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_into_rows_of_a_table_made_here_in_both_modes(f, args, flat, point):
    check_grads(f, args, modes=("rev", "fwd"))
    # Second order, forward over reverse (``hessian``), against differences of the gradient.
    hess = np.array(wengert.hessian(flat)(point))
    grad = wengert.grad(flat)
    h = 1e-5
    for k in range(len(point)):
        up, down = list(point), list(point)
        up[k] += h
        down[k] -= h
        column = (np.array(grad(up)) - np.array(grad(down))) / (2 * h)
        np.testing.assert_allclose(hess[:, k], column, rtol=1e-4, atol=1e-6)


def shared_row(a, s):
    row = [0.0] * len(a)
    t = []
    for _ in range(len(a)):
        t.append(row)  # one list, appended again and again
    for i in range(len(a)):
        t[i][i] = a[i] * s
    return sum(t[0]) * s


def row_twice(a, s):
    t = []
    for _ in range(len(a)):
        r = [0.0] * len(a)
        t.append(r)
        t.append(r)  # each row twice
    for i in range(len(a)):
        t[i][0] = a[i] * s + t[i][0]
    return sum(t[1]) + t[0][0] * s


def multiplied_row(a, s):
    t = [[0.0] * len(a)] * len(a)  # the same row len(a) times
    for i in range(len(a)):
        t[i][i] = a[i] * s
    return sum(t[0]) * s


def kept_row(a, s):
    t = []
    last = None
    for _ in range(len(a)):
        r = [0.0] * len(a)
        t.append(r)
        last = r  # a row held by another name as well
    for i in range(len(a)):
        t[i][0] = a[i] * s
    return last[0] * s + sum(t[0])


def displayed_rows(a, s):
    r = [0.0, 0.0]
    t = [r, [1.0, 2.0], r]  # one list at two places of a display
    for i in range(len(t)):
        t[i][0] = t[i][0] + a[i] * s
    return t[0][0] * t[1][0] + sum(t[2])


@pytest.mark.parametrize("f", [shared_row, row_twice, multiplied_row, kept_row],
                         ids=lambda f: f.__name__)
def test_a_table_whose_rows_may_be_one_list_is_refused_at_the_write(f):
    """Reverse mode refuses at the write; forward mode gives every place holding one row
    one tangent (``[row] * n``, a row appended twice, a row a name holds as well), so a
    write through one place reaches the others (they were wrong before)."""
    with pytest.raises(wengert.NonDifferentiableError, match="read out of a list") as info:
        wengert.vjp(f, [0.5, -0.3, 0.8], 1.3)
    assert info.value.loc is not None and "] = " in info.value.loc.source_line
    check_grads(f, ([0.5, -0.3, 0.8], 1.3), modes=("fwd",))
    _grad_is_forward_modes(f, ([0.5, -0.3, 0.8], 1.3))


def test_a_display_holding_one_row_twice_in_both_modes():
    check_grads(displayed_rows, ([0.5, -0.3, 0.8], 1.3), modes=("rev", "fwd"), order=2)


def test_nested_loop_counts_are_per_iteration():
    """An inner loop whose reverse needs only its count records it in the outer loop's
    record: a count that changes from one outer iteration to the next."""
    def triangle(m):
        total = 0.0
        for j in range(len(m)):
            minor = [row for row in m[j:]]
            total += sum(minor[0]) * len(minor)
        return total

    def staircase(m):
        total = 0.0
        for j in range(len(m)):
            for row in m[j:]:
                total = total * 0.5 + row[0]
        return total

    for f in (triangle, staircase):
        check_grads(f, (A,), modes=("rev", "fwd"), order=2)


def row_extreme_then_written(a, w0):
    t = [row[:] for row in a]
    for i in range(len(t)):
        t[i][i % len(t[0])] = max(t[i]) * w0 + a[i][0]  # max's place read before the write
        t[i][0] = sum(t[i]) * w0 + t[i][0]  # the row summed, then written
    return t[0][0] + t[1][1] * 2.0


def test_what_a_pullback_reads_of_a_row_is_its_value_before_the_write():
    """A row read (``max(t[i])``, ``sum(t[i])``) and then written through another read of
    its slot: the pullback reads the row as it was (a copy for a rule, the place of the
    extreme saved), not as the write left it. From the random table generator."""
    check_grads(row_extreme_then_written, ([[0.479, 0.757], [0.585, -0.841]], 0.841),
                modes=("rev", "fwd"))


def int_matmul(a, b):
    n = len(a)
    c = [[0] * n for _ in range(n)]  # int zeros, as people write them
    for i, row in enumerate(a):
        for j in range(n):
            c[i][j] += sum(row[k] * b[k][j] for k in range(n))
    return sum(sum(r) for r in c)


def int_edit_distance(xs, ys):
    d = [[0 for _ in range(len(ys) + 1)] for _ in range(len(xs) + 1)]
    for i in range(1, len(xs) + 1):
        for j in range(1, len(ys) + 1):
            d[i][j] = (xs[i - 1] - ys[j - 1]) ** 2 + min(d[i - 1][j], d[i][j - 1],
                                                          d[i - 1][j - 1] + 0.5)
    return d[-1][-1]


def counted(xs, w):
    t = [[0] * 2 for _ in xs]
    for i, x in enumerate(xs):
        t[i][0] = t[i][0] + 1  # an int written into an int row
        t[i][1] = x * w * t[i][0]
    return sum(r[1] for r in t)


@pytest.mark.parametrize(("f", "args", "order"), [
    (int_matmul, (A, B), 2),
    # (reverse over reverse refuses this one, located: see the closing notes)
    (int_edit_distance, ([0.1, 0.5, 0.9], [0.2, 0.7]), 1),
    (counted, ([0.3, 0.8], 1.2), 2),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_table_of_int_zeros_holds_floats_written_into_it(f, args, order):
    check_grads(f, args, modes=("rev", "fwd"), order=order)


# --------------------------------------------------------------------------
# Objects a parameter holds, written into: a dataclass's list field, a dict's lists, a
# tuple's list, a table passed in, beside other parameters (each written through the
# holder's adjoint, guarded when it runs by ``runtime.check_held_alone``).
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Trail:
    k: float
    hist: list


@dataclasses.dataclass
class Body:
    x: float
    v: float
    m: float = 1.0


class Log:
    """A plain class holding a list (no tangent of its own at the API)."""

    def __init__(self, scale, xs):
        self.scale = scale
        self.xs = xs


def trail_append(tr, c):
    tr.hist.append(tr.k * c)
    tr.hist[0] = tr.hist[0] * c
    return sum(v * v for v in tr.hist)


def trail_loop(tr, c):
    for i in range(len(tr.hist)):
        tr.hist[i] = tr.hist[i] * c + tr.k
    h = tr.hist
    h.append(math.sin(c))
    return sum(h) * tr.k + h[-1] * h[0]


def dict_of_lists(d, c):
    d["w"][0] = c * 2
    d["h"].append(c)
    ws = d["w"]
    ws[-1] = ws[-1] * c
    e = sum(s * s for s in d["h"])
    for a, b in zip(d["w"], d["h"]):
        e += a * math.sin(b)
    return e


def tuple_of_list(xt, c):
    xt[1][0] = c * 2
    xt[1].append(c)
    return xt[0] * sum(xt[1])


def trail_and_body(tr, b, c):
    tr.hist[0] = c * b.x
    b.v = b.v * c
    tr.k = tr.k * c  # a number written into a field of the holder itself
    return tr.hist[0] * tr.k + b.v * b.m


def dict_beside_list(d, xs, c):
    d["w"][0] = xs[1] * c
    return sum(d["w"]) * xs[0]


def dict_of_dicts(cfg, c):
    cfg["a"]["w"] = cfg["a"]["w"] * c
    cfg["b"]["w"] = cfg["a"]["w"] + c
    return cfg["a"]["w"] * cfg["b"]["h"] + cfg["b"]["w"]


def two_tables(m, n, c):
    for i in range(len(m)):
        m[i][i] = m[i][i] * c + n[i][0]
    return sum(sum(r) for r in m) * n[1][1]


def plain_log(lg, c):
    lg.xs[0] = lg.xs[0] * c * lg.scale
    lg.xs.append(c)
    return sum(lg.xs) * c


def unpacked_tuple(xt, c):
    x0, xs = xt
    xs[1] = xs[1] * x0
    return sum(xt[1]) * c + sum(s * xt[0] for s in xt[1][1:])


def unpacked_around_a_write(xt, c):
    x0, xs = xt
    e = x0 * sum(xs) * c
    for s in xs:
        e += x0 * math.sin(s)
    xt[1][0] = c * 2.0
    x0, xs = xt  # (the same list, as written)
    return e + x0 * sum(xs) * c + sum(xt[1]) * xt[0]


def dict_keys_iterated(d, c):
    ws = d["w"]
    ws[-1] = ws[-1] * c
    e = sum(d["w"])
    for key in d:
        e += sum(d[key]) * c
    for key in d.keys():
        e += d[key][0] * c
    return e


def items_of_a_dict_in_a_list(ds, ts, c):
    for dd in ds:
        dd["w"] += c
    ts[0] = (ts[0][1], c)  # (a list of tuples of numbers beside it: nothing to share)
    e = sum(dd["w"] * dd["h"] for dd in ds)
    for _k, val in ds[-1].items():
        e += val * math.cos(c)
    return e + ts[0][0] * ts[0][1]


HELD = [
    (unpacked_tuple, lambda: ((0.973, [1.109, -0.662, 0.4]), 0.267)),
    (unpacked_around_a_write, lambda: ((1.1, [-0.766, -1.367, 0.993]), 0.585)),
    (dict_keys_iterated, lambda: ({"w": [0.3, 0.5, 0.8], "h": [0.4, 1.1, 0.6]}, 1.3)),
    (items_of_a_dict_in_a_list, lambda: ([{"w": 0.3, "h": 0.7}, {"w": -0.5, "h": 1.1}],
                                         [(0.4, 0.6), (1.1, 0.9)], 1.3)),
    (trail_append, lambda: (Trail(0.7, [0.3, 0.9]), 1.3)),
    (trail_loop, lambda: (Trail(0.7, [0.3, 0.9, -0.4]), 1.3)),
    (dict_of_lists, lambda: ({"w": [0.3, 0.5, 0.8], "h": [0.4, 1.1, 0.6]}, 1.3)),
    (tuple_of_list, lambda: ((0.7, [0.3, 0.9]), 1.3)),
    (trail_and_body, lambda: (Trail(0.7, [0.3, 0.9]), Body(0.5, 0.8), 1.3)),
    (dict_beside_list, lambda: ({"w": [0.3, 0.5, 0.8]}, [0.4, 0.6], 1.3)),
    (dict_of_dicts, lambda: ({"a": {"w": 0.3, "h": 0.6}, "b": {"w": 0.5, "h": 1.1}}, 1.3)),
    (two_tables, lambda: ([[0.3, 0.5], [0.8, -0.2]], [[0.4, 0.6], [1.1, 0.9]], 1.3)),
    (plain_log, lambda: (Log(0.5, [0.3, 0.9]), 1.3)),
]


@pytest.mark.parametrize(("f", "make"), HELD, ids=[f.__name__ for f, _ in HELD])
def test_writes_into_objects_a_parameter_holds_in_both_modes_to_second_order(f, make):
    check_grads(f, make(), modes=("rev", "fwd"), order=2)
    # (reverse mode itself: refused before, so ``check_grads`` may not fall back to forward)
    wengert.vjp(f, *make())


def neighbours_then_step(ps, c):
    e = 0.0
    for q, r in zip(ps, ps[1:]):
        e += q.x * r.v
    for q in ps:
        q.x = q.x + 0.1 * q.v * c
    return e + sum(q.x for q in ps) * c


def step_then_pairs(ps, c):
    for q in ps:
        q.x = q.x * c + q.v
    e = 0.0
    for q, r in zip(ps[:-1], ps[1:]):
        e += (r.x - q.x) ** 2
    return e


def every_other_counted(ps, c):
    for i, q in enumerate(ps[::2]):  # (refused before: no ``start``)
        q.v = q.v * c + i
    for i, q in enumerate(ps[1::2], 2):
        q.x = q.x * c - i
    return sum(q.v * q.x for q in ps)


def every_other_and_back(ps, c, k):
    for i, q in enumerate(ps[::2], start=1):
        q.v = q.v * c + i
    e = 0.0
    for q in reversed(ps):
        q.x = q.x + e * c
        e += q.v * q.x
    for q in ps[k:]:  # (a bound the program computes)
        e += q.x
    for q in ps[-2:1:-1]:
        e += q.v * c
    for q in ps[9:]:
        e += q.x * 100.0
    return e


def written_between_slice_and_loop(ps, c):
    tail = ps[1:]
    ps[1].x = ps[1].x * c  # (the same object as tail[0]: its new x is read below)
    e = 0.0
    for q in tail:
        e += q.x * q.v
    return e


def new_object_between_slice_and_loop(ps, c):
    tail = ps[1:]
    ps[0].x = ps[0].x * c
    ps[1] = Body(c, c)  # (tail[0] is still the old object)
    e = 0.0
    for q in tail:
        e += q.x * q.v
    return e + ps[1].x


def _bodies():
    return [Body(0.3, 0.5), Body(-0.2, 0.7), Body(1.1, -0.4), Body(0.6, 0.9), Body(0.8, 0.1)]


@pytest.mark.parametrize(("f", "make"), [
    (neighbours_then_step, lambda: (_bodies(), 0.7)),
    (step_then_pairs, lambda: (_bodies(), 0.7)),
    (every_other_counted, lambda: (_bodies(), 0.7)),
    (every_other_and_back, lambda: (_bodies(), 0.7, 2)),
    (written_between_slice_and_loop, lambda: (_bodies(), 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loops_over_slices_and_reversed_of_a_holder_written_into(f, make):
    # A slice (``ps[1:]``) or ``reversed(ps)`` made for a loop is walked by index
    # (``iteration._State.slice_of``), so the items the loop reads are reads of the holder's
    # places and its writes go through the holder's adjoint: refused before.
    check_grads(f, make(), modes=("rev", "fwd"), order=2)
    wengert.vjp(f, *make())


def test_a_slice_taken_before_its_list_is_given_a_new_object_is_right_or_refused():
    # The slice holds the old object; reading the list at its indices would read the new.
    try:
        check_grads(new_object_between_slice_and_loop, (_bodies(), 0.7), modes=("rev",),
                    order=2)
    except wengert.WengertError as e:
        assert e.loc is not None and e.loc.filename == __file__, e


def slot_given_a_new_body(ps, c):
    for q in ps:
        q.x = q.x + 0.1 * q.v
    e = sum(q.x for q in ps) * c
    ps[0] = Body(c * ps[0].x, ps[0].v)  # (its reads stand before it, their uses too)
    return e + ps[0].x * ps[1].v


def every_slot_given_a_new_body(ps, c):
    for i in range(len(ps)):
        ps[i] = Body(ps[i].x * c, ps[i].v + c)
    ps[0].x = ps[0].x * ps[1].v
    return sum(q.x * q.v for q in ps)


def given_a_new_body_then_stepped(ps, c):
    ps[1] = Body(c, c * c)
    for q in ps:
        q.x = q.x + 0.1 * q.v
    return sum(q.x * q.v for q in ps)


def slot_given_a_body_holding_an_int(ps, c):
    ps[0] = Body(1, c)  # (an int where the others hold floats)
    ps[1].x = ps[1].x * c
    return ps[0].x * ps[0].v + ps[1].x * ps[0].m


def appended_a_new_body(t, ps, c):
    e = 0.0
    for i in range(len(ps)):
        e += ps[i].x * math.sin(ps[i].v)
    ps[1].m = c
    e += ps[1].m * ps[1].x + sum(t) * c
    ps.append(Body(c, 0.5))
    return e + sum(q.x * q.v for q in ps)


def dict_given_a_new_list(d, c):
    d["w"][0] = c * 2.0
    d["z"] = [c, c * 2.0]
    d["z"][1] = d["z"][1] * c
    return sum(d["w"]) * d["h"][0] + sum(d["z"])


def dict_given_a_list_holding_an_int(d, c, k):
    d["w"][0] = c * 2.0
    d["z"] = [k, c * 2.0]  # (an int where the others hold floats: lists of numbers)
    d["z"][1] = d["z"][1] * c
    return sum(sum(v) for v in d.values()) * c + d["z"][0] * d["w"][1]


def dict_values_summed_after_writes(d, c):
    d["w"][0] = c * 2.0
    d["z"] = [c, c * 2.0]
    e = sum(sum(v) for v in d.values()) * c
    for k, v in d.items():
        e += v[0] * len(k)
    return e


@pytest.mark.parametrize(("f", "make"), [
    (slot_given_a_new_body, lambda: (_bodies(), 0.7)),
    (every_slot_given_a_new_body, lambda: (_bodies(), 0.7)),
    (given_a_new_body_then_stepped, lambda: (_bodies(), 0.7)),
    (slot_given_a_body_holding_an_int, lambda: (_bodies(), 0.7)),
    (appended_a_new_body, lambda: ((-0.63, 0.311), _bodies(), 0.7)),
    (dict_given_a_new_list, lambda: ({"w": [0.5, 1.5], "h": [0.2, 0.3]}, 0.7)),
    (dict_given_a_list_holding_an_int, lambda: ({"w": [0.5, 1.5], "h": [0.2, 0.3]}, 0.7,
                                                3)),
    (dict_values_summed_after_writes, lambda: ({"w": [0.5, 1.5], "h": [0.2, 0.3]}, 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_holder_s_place_given_a_new_object_and_its_values_iterated(f, make):
    # A new object made for a place of the holder alone (``ps[0] = Body(...)``, ``d["z"] =
    # [c, v]``) where no read of the place before it is used after it; loops over a
    # dict's ``values()``/``items()`` read its values by key (``prepare``): refused before.
    check_grads(f, make(), modes=("rev", "fwd"), order=2)
    wengert.vjp(f, *make())


def field_given_a_new_list(tr, c):
    e = tr.hist[0] * tr.hist[-1] * c + tr.k * sum(tr.hist)
    tr.hist = [c, tr.k]
    e += tr.hist[0] * tr.hist[1]
    tr.hist[0] = c * c
    return e + tr.hist[0] * tr.k


def appended_then_written_in_a_loop(ps, c):
    for k in range(3):
        ps.append(Body(c * k, 0.5))
        ps[-1].x = ps[-1].x + ps[0].v * c
    return sum(q.x * q.v for q in ps)


def test_a_new_object_appended_then_written_into_in_a_loop():
    check_grads(appended_then_written_in_a_loop, (_bodies(), 0.7), modes=("rev", "fwd"))
    wengert.vjp(appended_then_written_in_a_loop, _bodies(), 0.7)


def read_then_given_a_new_list(d, c):
    e = d["w"][0] * d["w"][1]  # (kept for the pullback past the store and the write)
    d["w"] = [c, 2.0 * c]
    d["w"][1] = d["w"][1] * e
    return e * d["w"][0] + d["w"][1]


def written_read_then_given_a_new_list(d, c):
    w = d["w"]
    e = w[0]
    w[1] = w[1] * c  # (the old list written into before the store)
    d["w"] = [c, e]
    d["w"][0] = d["w"][0] * w[1]  # (the old list, as it was before the store)
    return d["w"][0] + w[0] * w[1]


def field_list_from_its_own_item(tr, c):
    s = tr.hist[0] * tr.hist[1]
    tr.hist[0] = c * s
    tr.hist = [tr.hist[0], c]  # (a list of floats once the field is known to hold them)
    tr.hist[1] = tr.hist[1] * s
    return tr.hist[0] * tr.hist[1] + s


def field_list_written_both_sides(tr, c):
    tr.hist[0] = c * tr.hist[1]
    e = tr.hist[0] * tr.k
    tr.hist = [c, tr.k]
    tr.hist[0] = tr.hist[0] * e
    return tr.hist[0] + e * tr.hist[1]


def body_kept_past_its_replacement(ps, c):
    p = ps[0]
    p.x = p.x * c
    ps[0] = Body(c * p.v, p.x)
    ps[0].v = ps[0].v + p.x * ps[1].x
    ps[1].x = ps[1].x * ps[0].v
    return ps[0].x * p.x + ps[1].x + p.v


def body_replaced_in_a_loop(ps, c):
    total = 0.0
    for k in range(3):
        p = ps[0]
        ps[0] = Body(p.x * c + k, p.v)
        ps[0].x = ps[0].x * p.v
        total = total + p.x * ps[0].x
    return total


@pytest.mark.parametrize(("f", "make"), [
    (field_given_a_new_list, lambda: (Trail(0.7, [0.3, 0.9, -0.4]), 1.3)),
    (read_then_given_a_new_list, lambda: ({"w": [0.5, 1.5]}, 0.7)),
    (written_read_then_given_a_new_list, lambda: ({"w": [0.5, 1.5]}, 0.7)),
    (field_list_from_its_own_item, lambda: (Trail(0.3, [0.5, 1.5]), 0.7)),
    (field_list_written_both_sides, lambda: (Trail(0.3, [0.5, 1.5]), 0.7)),
    (body_kept_past_its_replacement, lambda: (_bodies(), 0.7)),
    (body_replaced_in_a_loop, lambda: (_bodies(), 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_object_read_before_its_place_is_given_a_new_one_to_second_order(f, make):
    # A read of the old object used after the store (by the program, or kept for the
    # pullback in the gradient differentiated again) is the object as it was just before
    # the store (``vjp_items._same_place``; read again there after a write): refused
    # before, at the second order, or at the first where a field's new list's items were
    # of unknown type (``types``: a display of numbers, ``fields.display_type``).
    check_grads(f, make(), modes=("rev", "fwd"), order=2)
    wengert.vjp(f, *make())


def maybe_the_same_place(ps, c, i, j):
    p = ps[i]
    ps[j] = Body(c, c * 2.0)
    ps[j].x = ps[j].x * p.x  # (``p`` is the new body where i == j, the old one else)
    return p.x * ps[j].x + p.v


def old_list_written_after_the_store(tr, c):
    old = tr.hist
    tr.hist = [c, old[0] * c]
    tr.hist[1] = tr.hist[1] + old[1]
    old[0] = 5.0  # (its write-back would put the old list back)
    return tr.hist[1] * c + old[0]


@pytest.mark.parametrize(("f", "make"), [
    (maybe_the_same_place, lambda: (_bodies(), 0.7, 0, 0)),
    (maybe_the_same_place, lambda: (_bodies(), 0.7, 0, 1)),
    (old_list_written_after_the_store, lambda: (Trail(0.3, [0.5, 1.5]), 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_old_object_a_store_may_or_does_displace_is_right_or_refused(f, make):
    try:
        check_grads(f, make(), modes=("rev",), order=2)
    except wengert.WengertError as e:
        assert e.loc is not None and e.loc.filename == __file__, e


def test_a_list_field_of_a_parameter_gives_the_gradient_a_person_writes():
    # f = k * sum(h'^2) with h' = [h0 * c, h1, k * c]: each partial written out by hand.
    tr, c = Trail(0.7, [0.3, 0.9]), 1.3
    (g_tr, g_c) = wengert.grad(trail_append, argnums=(0, 1))(tr, c)
    h0, h1, k = 0.3, 0.9, 0.7
    assert g_tr.hist == pytest.approx([2 * h0 * c * c, 2 * h1])
    assert g_tr.k == pytest.approx(2 * k * c * c)
    assert g_c == pytest.approx(2 * h0 * h0 * c + 2 * k * k * c)
    # The call ran the function, as calling it does; the gradient is of its arguments as
    # they were when the call began.
    assert tr.hist == pytest.approx([h0 * c, h1, k * c])


def push(m, xs, c):
    e = 0.0
    for i in range(len(xs)):
        e += xs[i] * math.sin(c + i) + math.cos(xs[i]) * m[1][0]
        e += math.exp(-xs[i] * xs[i]) * c + math.tanh(xs[i] * c) * m[1][1]
        e += math.log(1.0 + xs[i] * xs[i]) * math.sqrt(1.0 + c * c)
    m[0][0] = c * 2.0
    return e + m[0][0] * xs[0] + sum(m[0])


def shares_the_list(c, xs, helper):
    return helper([xs, [0.5, 0.25]], xs, c)  # m[0] is xs


def shares_nothing(c, xs, helper):
    return helper([list(xs), [0.5, 0.25]], xs, c)


@pytest.mark.parametrize("call", [
    lambda xs: dict_beside_list({"w": xs}, xs, 1.3),
    lambda xs: dict_of_lists({"w": xs, "h": xs}, 1.3),
    lambda xs: trail_append(Trail(0.7, xs), 1.3) if False else
    trail_and_body(Trail(0.7, xs), Body(0.5, 0.8), 1.3) and two_tables([xs, [1.0, 2.0]],
                                                                        [xs, [3.0, 4.0]], 1.3),
], ids=["another_argument", "two_keys", "a_row_of_two_tables"])
def test_objects_a_holder_shares_are_refused_before_the_call(call):
    with pytest.raises(wengert.NonDifferentiableError,
                       match="same list|more than once|hold the same"):
        call_with_vjp(call)


def call_with_vjp(call):
    """Run ``call`` with ``wengert.vjp`` in place of each function called (as a user would
    differentiate each)."""
    xs = [0.3, 0.5, 0.8]
    originals = {f.__name__: f for f in (dict_beside_list, dict_of_lists, two_tables)}
    g = globals()
    try:
        for name, f in originals.items():
            g[name] = lambda *a, f=f: wengert.vjp(f, *a)[0]
        call(xs)
    finally:
        g.update(originals)


def test_a_callee_refuses_a_holder_sharing_a_list_when_it_runs():
    """``helper`` (``push``) is known only when it runs: its VJP, derived for the types
    of what it is given, checks that ``m[0]`` is not ``xs`` (``runtime.check_held_alone``),
    which the caller cannot see."""
    xs = [0.3, 0.5, 0.8]
    check_grads(shares_nothing, (1.3, xs, push), modes=("rev", "fwd"),
                argnums=(0, 1))
    with pytest.raises(wengert.NonDifferentiableError, match="another argument"):
        wengert.vjp(shares_the_list, 1.3, xs, push)
    check_grads(shares_the_list, (1.3, xs, push), modes=("fwd",), argnums=(0, 1))


def test_check_held_alone_refuses_each_way_of_sharing():
    from wengert import runtime

    row = [1.0, 2.0]
    runtime.check_held_alone({"a": row, "b": [3.0]}, None, 1, [4.0], Trail(0.1, [5.0]))
    with pytest.raises(wengert.NonDifferentiableError, match="more than once"):
        runtime.check_held_alone({"a": row, "b": row}, None, 0)
    with pytest.raises(wengert.NonDifferentiableError, match="another argument"):
        runtime.check_held_alone({"a": row}, None, 1, row)
    with pytest.raises(wengert.NonDifferentiableError, match="held by another"):
        runtime.check_held_alone({"a": row}, None, 0, Trail(0.1, row))
    with pytest.raises(wengert.NonDifferentiableError, match="holding a list"):
        runtime.check_held_alone({"a": [row]}, None, 0)
    holder = Trail(0.1, [5.0])
    with pytest.raises(wengert.NonDifferentiableError, match="another argument"):
        runtime.check_held_alone(holder, None, 0, [holder])


# --- rows swapped: ``m[k], m[p] = m[p], m[k]`` -------------------------------------------------


def pivoted_det(a):
    """Gaussian elimination with partial pivoting, the pivot chosen by a key function."""
    m = [row[:] for row in a]
    n = len(m)
    d = 1.0
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(m[i][k]))
        if p != k:
            m[k], m[p] = m[p], m[k]
            d = -d
        d *= m[k][k]
        for i in range(k + 1, n):
            f = m[i][k] / m[k][k]
            for j in range(k, n):
                m[i][j] -= f * m[k][j]
    return d


def pivoted_det_by_loop(a):
    """The same, the pivot found by a loop and the rows swapped through a temporary."""
    m = [list(row) for row in a]
    n = len(m)
    d = 1.0
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(m[i][k]) > abs(m[p][k]):
                p = i
        if p != k:
            t = m[k]
            m[k] = m[p]
            m[p] = t
            d = -d
        d *= m[k][k]
        for i in range(k + 1, n):
            f = m[i][k] / m[k][k]
            for j in range(k, n):
                m[i][j] = m[i][j] - f * m[k][j]
    return d


def solved(a, b):
    """``x`` of ``a x = b`` by elimination on the augmented rows, then back-substitution
    over ``reversed(range(n))``; ``sum(x ** 2)``."""
    m = [list(row) + [bi] for row, bi in zip(a, b)]
    n = len(m)
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(m[i][k]))
        m[k], m[p] = m[p], m[k]
        for i in range(k + 1, n):
            f = m[i][k] / m[k][k]
            for j in range(k, n + 1):
                m[i][j] = m[i][j] - f * m[k][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        s = m[i][n]
        for j in range(i + 1, n):
            s -= m[i][j] * x[j]
        x[i] = s / m[i][i]
    return sum(xi * xi for xi in x)


def bubbled(xs):
    """Rows sorted by a bubble sort of adjacent swaps, then one written into."""
    v = [[x, 2.0 * x] for x in xs]
    for i in range(len(v)):
        for j in range(len(v) - 1 - i):
            if v[j][0] > v[j + 1][0]:
                v[j], v[j + 1] = v[j + 1], v[j]
    v[0][1] = v[0][1] * 3.0
    return sum(r[1] * (k + 1) for k, r in enumerate(v))


PIVOTING = [[0.5, 1.0, 2.0, 0.1], [1.0, 3.0, 0.2, 0.3], [3.3, 0.4, 1.5, 0.2],
            [0.1, 4.2, 0.3, 2.0]]  # (each column's pivot is a row below it: rows move)


@pytest.mark.parametrize("f", [pivoted_det, pivoted_det_by_loop], ids=lambda f: f.__name__)
def test_elimination_with_rows_swapped_to_second_order(f):
    check_grads(f, (PIVOTING,), modes=("rev", "fwd"), order=2)
    # d det / d a = det * inv(a).T: the number a person checks it against.
    a = np.array(PIVOTING)
    expected = np.linalg.det(a) * np.linalg.inv(a).T
    np.testing.assert_allclose(wengert.grad(f)(PIVOTING), expected, rtol=1e-9)


def test_a_system_solved_with_swapped_rows_in_both_modes():
    b = [0.3, -0.2, 0.5, 0.1]
    check_grads(solved, (PIVOTING, b), modes=("rev", "fwd"))
    hess = np.array(wengert.hessian(solved, argnums=1)(PIVOTING, b))
    x = np.linalg.solve(np.array(PIVOTING), np.array(b))
    inv = np.linalg.inv(np.array(PIVOTING))
    np.testing.assert_allclose(2 * inv.T @ x, wengert.grad(solved, argnums=1)(PIVOTING, b),
                               rtol=1e-9)
    np.testing.assert_allclose(hess, 2 * inv.T @ inv, rtol=1e-8)


def test_adjacent_rows_swapped_by_a_sort_to_second_order():
    check_grads(bubbled, ([0.3, -0.5, 0.1, 0.9, -0.2],), modes=("rev", "fwd"), order=2)
    # The rows end sorted: the smallest's second entry counts 3 * 2 * 1, the k-th's 2 * k.
    assert wengert.grad(bubbled)([0.3, -0.5, 0.1, 0.9, -0.2]) == [8.0, 6.0, 6.0, 10.0, 4.0]


def read_across_a_swap(a, s):
    m = [row[:] for row in a]
    r = m[0]
    m[0], m[1] = m[1], m[0]
    m[1][0] = s * m[1][0]  # (``r`` is this row now)
    return r[0] * m[0][1]


def rotated(a, s):
    m = [row[:] for row in a]
    m[0], m[1], m[2] = m[1], m[2], m[0]
    m[0][0] = s * m[0][0]
    return m[0][0] + m[2][0]


def duplicated(a, s):
    m = [row[:] for row in a]
    m[0] = m[1]  # (one row at two places)
    m[0][0] = s * m[0][0]
    return m[1][0] + m[0][0]


def swapped_at(a, s, i, j):
    m = [row[:] for row in a]
    m[i], m[j] = m[j], m[i]
    m[i][0] = s * m[i][0]
    return m[i][0] * m[j][1] + m[0][0]


@pytest.mark.parametrize("f", [read_across_a_swap, rotated, duplicated],
                         ids=lambda f: f.__name__)
def test_rows_moved_otherwise_are_refused_in_reverse_mode_and_right_forward(f):
    """A row read before a swap and used after a write into it, three rows moved round,
    one row stored at two places: refused at the write (forward mode is right)."""
    with pytest.raises(wengert.NonDifferentiableError, match="read out of a list"):
        wengert.vjp(f, A, 1.3)
    check_grads(f, (A, 1.3), modes=("fwd",))
    _grad_is_forward_modes(f, (A, 1.3))


def _grad_is_forward_modes(f, args):
    """Where reverse mode refuses, ``grad`` answers by forward mode
    (``driver/forward_jacobian.py``): the Jacobian ``jacfwd`` gives, itself checked
    against finite differences above."""
    got = wengert.grad(f, argnums=(0, 1))(*args)
    want = wengert.jacfwd(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(np.asarray(got[0], dtype=float),
                               np.asarray(want[0], dtype=float), rtol=1e-12)
    assert got[1] == pytest.approx(want[1], rel=1e-12)


@pytest.mark.parametrize(("i", "j"), [(1, 1), (0, 2), (2, 0), (-1, 2)])
def test_a_swap_of_a_place_with_itself_or_another_to_second_order(i, j):
    check_grads(swapped_at, (A, 1.3, i, j), modes=("rev", "fwd"), order=2)


def pivoted_display(x, y, z):
    """A display of rows (not a comprehension), the pivot picked by a key reading it."""
    rows = [[x, z], [y, 0.5], [z, x * y]]
    pv = max(range(3), key=lambda j: abs(rows[j][0]))
    rows[0], rows[pv] = rows[pv], rows[0]
    rows[1][0] = rows[1][0] * y + rows[0][1]
    return rows[0][0] * rows[2][1] + sum(rows[1])


@pytest.mark.parametrize("point", [(0.3, 0.2, 0.7), (0.9, 0.2, 0.1), (0.1, 0.8, 0.3)])
def test_a_display_of_rows_pivoted_by_a_key_to_second_order(point):
    check_grads(pivoted_display, point, argnums=(0, 1, 2), modes=("rev", "fwd"), order=2)


def sorted_rows_with_ints(x, y, z):
    """Rows of a display holding an int beside floats, sorted by adjacent swaps."""
    rows = [[x, 1], [y, 0.5], [z, x * y]]
    for j in range(2):
        if rows[j][0] > rows[j + 1][0]:
            rows[j], rows[j + 1] = rows[j + 1], rows[j]
    rows[1][0] = rows[1][0] * y + rows[0][1]
    return rows[0][0] * rows[2][1] + sum(rows[1])


@pytest.mark.parametrize("point", [(0.3, 0.2, 0.7), (0.9, 0.2, 0.1)])
def test_rows_holding_ints_swapped_to_second_order(point):
    check_grads(sorted_rows_with_ints, point, argnums=(0, 1, 2), modes=("rev", "fwd"),
                order=2)


def rows_of_mixed_numbers(x, y, z):
    """Rows whose entries are ints or floats as the values run: ``min(x, 3)``, the middle
    of ``sorted(..., key=abs)``, ``(-1) ** k``."""
    rows = [[x, min(y, 3)], [y, sorted([x, 1, z], key=abs)[1]], [z, (-1) ** 2 * x * y]]
    for j in range(2):
        if rows[j][0] > rows[j + 1][0]:
            rows[j], rows[j + 1] = rows[j + 1], rows[j]
    rows[1][0] = rows[1][0] * y + rows[0][1]
    return rows[0][0] * rows[2][1] + sum(rows[1])


@pytest.mark.parametrize("point", [(0.3, 0.2, 0.7), (0.9, 4.2, 0.1), (2.1, 0.8, -0.3)])
def test_rows_holding_numbers_of_either_kind_swapped_and_written(point):
    """``min(float, int)``, ``sorted(key=)`` of ints and floats, ``int ** int`` are typed as
    an int or a float (``INT_OR_FLOAT``): the rows are a table of numbers, swapped and
    written into in reverse mode (refused at the write before); the Hessian against
    differences of the gradient."""
    check_grads(rows_of_mixed_numbers, point, argnums=(0, 1, 2), modes=("rev", "fwd"))
    hessian = np.array(wengert.hessian(rows_of_mixed_numbers, argnums=(0, 1, 2))(*point))
    grad = wengert.grad(rows_of_mixed_numbers, argnums=(0, 1, 2))
    for k in range(3):
        up = [v + (1e-6 if i == k else 0.0) for i, v in enumerate(point)]
        down = [v - (1e-6 if i == k else 0.0) for i, v in enumerate(point)]
        assert np.allclose(hessian[:, k], (np.array(grad(*up)) - np.array(grad(*down))) / 2e-6,
                           atol=1e-5)


# ---------------------------------------------- objects kept in a list of the function's own
# ``ps = [Particle(x, v) for x, v in zip(xs, vs)]`` then ``p.v -= g * dt`` over ``ps``: the
# objects are made here and the list never leaves the function's sight, so their fields are
# typed (``analysis/fields.py``) and the writes go through the list's adjoint. Every way to
# fill the list (a comprehension, ``append`` in a loop, a display, an object replaced at an
# index, a plain class with ``__init__``) and to walk it (by item, by index, ``enumerate``,
# ``zip``, pairs compared with ``is``), in both modes and to second order.

GRAVITY = 9.81


@dataclasses.dataclass
class Particle:
    x: float
    v: float


@dataclasses.dataclass
class Star:
    x: float
    y: float
    vx: float
    vy: float
    m: float = 1.0


class Cell:
    def __init__(self, value):
        self.value = value
        self.grad = 0.0


def falling(xs, vs):
    ps = [Particle(x, v) for x, v in zip(xs, vs)]
    for _ in range(20):
        for p in ps:
            p.v -= GRAVITY * 0.01
            p.x += p.v * 0.01
    return sum(p.x * p.x for p in ps)


def springs_appended(xs, k):
    ps = []
    for x in xs:
        ps.append(Particle(x, 0.0))
    for _ in range(15):
        for p in ps:
            p.v += -k * p.x * 0.05
            p.x += p.v * 0.05
    return sum(p.x for p in ps) + ps[0].v


def pendulums_displayed(a, b):
    ps = [Particle(a, 0.0), Particle(b, 1.0)]
    for _ in range(10):
        for p in ps:
            p.v = p.v - math.sin(p.x) * 0.1
            p.x = p.x + p.v * 0.1
    return ps[0].x * ps[1].x


def stepped_by_index(xs):
    ps = [Particle(x, 0.5 * x) for x in xs]
    for _ in range(10):
        for i in range(len(ps)):
            ps[i].v -= 0.1 * ps[i].x
            ps[i].x += 0.1 * ps[i].v
    return ps[-1].x + ps[0].v ** 2


def gravitating(xs, ys):
    stars = [Star(x, y, 0.0, 0.0) for x, y in zip(xs, ys)]
    for _ in range(4):
        for a in stars:
            ax = ay = 0.0
            for b in stars:
                if a is b:
                    continue
                dx, dy = b.x - a.x, b.y - a.y
                r3 = (dx * dx + dy * dy + 0.1) ** 1.5
                ax += b.m * dx / r3
                ay += b.m * dy / r3
            a.vx += ax * 0.01
            a.vy += ay * 0.01
        for s in stars:
            s.x += s.vx * 0.01
            s.y += s.vy * 0.01
    return sum(0.5 * s.m * (s.vx ** 2 + s.vy ** 2) for s in stars)


def driven(xs, w):
    ps = [Particle(x, 0.0) for x in xs]
    for _ in range(8):
        for i, p in enumerate(ps):
            p.v += w * (i + 1) * 0.1 - 0.2 * p.x
            p.x += 0.1 * p.v
    return sum([p.x * p.v for p in ps])


def cells_descending(xs):
    cells = [Cell(x) for x in xs]
    for c in cells:
        c.grad = c.value ** 2
    for _ in range(3):
        for c in cells:
            c.value = c.value - 0.1 * c.grad
            c.grad = 2.0 * c.value
    return sum(c.value for c in cells)


def zipped_with_constants(xs, ks):
    ps = [Particle(x, 0.0) for x in xs]
    for _ in range(10):
        for p, k in zip(ps, ks):
            p.v -= k * p.x * 0.1
            p.x += p.v * 0.1
    return ps[0].x + ps[1].x * ps[2].v


def bouncing(xs):
    ps = [Particle(x, 1.0) for x in xs]
    for _ in range(12):
        for p in ps:
            if p.x > 1.0:
                p.v = -abs(p.v)
            p.x += p.v * 0.1
    return sum(p.x ** 2 for p in ps)


def one_replaced(xs):
    ps = [Particle(x, 0.0) for x in xs]
    ps[0] = Particle(xs[1] * 2.0, 1.0)
    for p in ps:
        p.x *= p.x
    return ps[0].x + ps[1].x


@pytest.mark.parametrize("f, args", [
    (falling, ([0.1, 0.4, -0.3], [0.2, -0.1, 0.5])),
    (springs_appended, ([0.3, -0.2, 0.8], 1.5)),
    (pendulums_displayed, (0.4, -0.7)),
    (stepped_by_index, ([0.3, 0.9, -0.4],)),
    (gravitating, ([0.0, 1.0, 0.3], [0.0, 0.2, 1.1])),
    (driven, ([0.2, -0.5, 0.7], 0.8)),
    (cells_descending, ([0.5, -0.3, 1.2],)),
    (zipped_with_constants, ([0.4, -0.2, 0.9], [1.0, 2.0, 0.5])),
    (bouncing, ([0.33, 0.97, -0.2],)),
    (one_replaced, ([0.3, 0.95, -0.2],)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_objects_kept_in_a_list_of_its_own(f, args):
    """Refused by reverse mode before ("writes into an object read out of a list")."""
    check_grads(f, args, modes=("rev", "fwd"), order=2)


def twice_in_list(a, b):
    ps = [Particle(a, 0.0), Particle(b, 1.0)]
    ps[1] = ps[0]
    for p in ps:
        p.x = p.x * 2.0 + p.v
    return ps[0].x + ps[1].x


def appended_again(a, b):
    ps = [Particle(a, 0.0), Particle(b, 1.0)]
    ps.append(ps[0])
    for p in ps:
        p.x = p.x * p.x
    return sum(p.x for p in ps)


def shared_with_another_list(a, b):
    ps = [Particle(a, 0.5), Particle(b, 1.0)]
    qs = [ps[0]]
    for p in ps:
        p.x = p.x * 3.0
    for q in qs:
        q.x = q.x + q.v * q.x
    return ps[0].x * ps[1].x


def _scale_all(ps, s):
    for p in ps:
        p.x = p.x * s


def passed_to_a_helper(a, s):
    ps = [Particle(a, 0.5), Particle(a * 2.0, 1.0)]
    _scale_all(ps, s)
    for p in ps:
        p.v = p.v * p.x
    return ps[0].v + ps[1].x


def captured_by_a_closure(a, b):
    ps = [Particle(a, 0.5), Particle(b, 1.0)]

    def scale(s):
        for p in ps:
            p.x = p.x * s

    scale(a)
    for p in ps:
        p.v = p.v * p.x
    return ps[0].v + ps[1].v


@pytest.mark.parametrize("f", [twice_in_list, appended_again, shared_with_another_list,
                               passed_to_a_helper, captured_by_a_closure],
                         ids=lambda f: f.__name__)
def test_objects_in_a_list_that_shares_them(f):
    """One object at two places, in two lists, handed to a helper or a closure: reverse
    mode either follows it or refuses at the write, never a wrong number; ``grad`` is
    right either way (by forward mode where reverse refuses)."""
    args = (0.3, 0.7)
    check_grads(f, args, modes=("fwd",))
    try:
        check_grads(f, args, modes=("rev",), order=2)
    except wengert.NonDifferentiableError as e:
        assert e.loc is not None and e.loc.filename == __file__
    g = wengert.grad(f, argnums=(0, 1))(*args)
    h = 1e-6
    fd = [(f(*(v + (h if i == k else 0.0) for i, v in enumerate(args))) -
           f(*(v - (h if i == k else 0.0) for i, v in enumerate(args)))) / (2 * h)
          for k in range(2)]
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-8)
