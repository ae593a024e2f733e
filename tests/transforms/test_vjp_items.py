"""Reverse mode of writes into the rows of a table the function makes (``transforms/vjp_items.py``).

``c = [[0.0] * n for _ in range(n)]`` then ``c[i][j] += …``: a product into a table made
first, a dynamic programme filling its table, an elimination on a copy of a matrix. Each row
is a new list made for the table alone, so the writes go through the table's own adjoint (a
write-back ``c[i] = row`` after each). Rows that may be shared are refused at the write.
"""

from __future__ import annotations

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
        wengert.grad(f, argnums=(0, 1))([0.5, -0.3, 0.8], 1.3)
    assert info.value.loc is not None and "] = " in info.value.loc.source_line
    check_grads(f, ([0.5, -0.3, 0.8], 1.3), modes=("fwd",))


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
