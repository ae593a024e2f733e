"""Loop records made small (``transforms/vjp_records.py``): what the forward keeps alive for
the pullback is what the reverse loops read and no more. Each program checks one way of
saving less against central differences, in both modes and to second order, and the
generated code for the saving itself; the programs where saving less would be wrong (the
list changed after, by the function or by its caller) are checked to stay right."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from test_inplace import cofactor_det

import wengert
from wengert import runtime
from wengert.testing import check_grads

M = [[1.5, -0.5, 0.25], [0.75, 2.0, -1.0], [0.5, 0.3, 1.25]]
XS = [0.5, -1.25, 2.0, 0.75]


def _split(f, args):
    """The generated forward and pullback of ``f`` at ``args``' types, comments left out."""
    source = "\n".join(line for line in wengert.show(f, mode="vjp", like=args).splitlines()
                       if not line.lstrip().startswith("#"))
    at = source.rindex("\ndef ", 0, source.index("_pullback(") + 1)
    return source[:at], source[at:]


def _pushed(forward):
    """The names the forward's loop records hold."""
    return {name for push in re.findall(r"\.(?:append|extend)\((.*)\)", forward)
            for name in re.findall(r"\w+", push)}


def _sliced(forward):
    """The names the forward gives slices of lists (``xs[i:]``, ``xs[cut]`` for a ``cut``
    it made as a slice)."""
    cuts = set(re.findall(r"(\w+) = slice\(", forward))
    return {name for name, index in re.findall(r"(\w+) = [\w.]+\[([^\]]*)\]$", forward,
                                               re.MULTILINE)
            if ":" in index or index in cuts}


# --- slices of lists nothing changes: sliced again ------------------------------------------


def tails(xs):
    total = 0.0
    for i in range(len(xs)):
        tail = xs[i:]
        total += tail[0] * tail[-1] + len(tail) * xs[i]
    return total


def rows_below(m):
    total = 0.0
    for j in range(len(m[0])):
        for row in m[1:]:
            total += row[j] * m[0][j]
    return total


def rows_below_in_a_branch(m, flag):
    if flag:
        total = 0.0
        for j in range(len(m[0])):
            below = [r[j] * r[j] for r in m[1:]]
            total += sum(below) * m[0][j]
        return total
    return m[0][0]


def every_other_from(xs):
    total = 0.0
    for k in range(1, len(xs) // 2 + 1):
        part = xs[k - 1::2]
        total += part[0] * part[-1] * k
    return total


def windows(xs, k):
    total = 0.0
    for i in range(len(xs) - k + 1):
        w = xs[i:i + k]
        total += w[0] * w[-1] * len(w)
    return total


def named_cuts(xs, k):
    total = 0.0
    for i in range(len(xs) - k + 1):
        cut = slice(i, i + k)
        w = xs[cut]
        total += sum(w) * w[0] + xs[cut][-1] * w[-1]
    return total


@pytest.mark.parametrize("f, args, again", [
    (windows, (XS, 2), "w = xs["),
    (named_cuts, (XS, 2), "w = xs["),
    (cofactor_det, (M,), "= m[1:]"),
    (tails, (XS,), "tail = xs["),
    (tails, (tuple(XS),), "tail = xs["),
    (rows_below, (M,), "m[1:]"),
    (rows_below_in_a_branch, (M, True), "m[1:]"),
    (every_other_from, (XS,), "part = xs["),
])
def test_a_slice_of_a_list_nothing_changes_is_sliced_again_by_the_reverse(f, args, again):
    """A loop record holding ``xs[a:b]`` of a list or tuple the function only reads (an
    argument, at any depth of loops and branches) holds nothing for it: the reverse loop
    slices again (the same items), so no list per iteration stays alive for the pullback;
    a slice object a record held (``i:``, ``k - 1::2``) is made again from its bounds."""
    forward, pullback = _split(f, args)
    assert again in pullback, pullback
    assert not _pushed(forward) & _sliced(forward), forward  # (a slice of a list pushed)
    # (Typed, a tuple of floats too: its entries' products inline, no rule called.)
    assert "mul_vjp" not in forward and "check_operands" not in forward, forward
    check_grads(f, args, modes=("rev", "fwd"), order=2, argnums=0)


def grown_in_the_loop(xs):
    total = 0.0
    for _ in range(len(xs) - 1):
        t = xs[1:]
        total += t[0] * t[-1]
        xs.append(total)
    return total


def written_in_the_loop(xs):
    total = 0.0
    for i in range(len(xs) - 1):
        t = xs[1:]
        total += t[0] * t[-1]
        xs[1 + i % 2] = total * xs[0]
    return total


def _rows_times_first(m):
    total = 0.0
    for j in range(len(m[0])):
        for row in m[1:]:
            total += row[j] * m[0][j]
    return total


def caller_changes_the_list_after(m):
    v = _rows_times_first(m)
    m[1] = [2.0 * a for a in m[2]]
    m.append([v, v, v])
    return v * _rows_times_first(m)


def returned_and_changed_by_the_caller(m):
    total = 0.0
    for j in range(len(m)):
        rest = m[j:]
        total += rest[0][0] * len(rest)
    return total, m


def _uses_returned(m):
    total, same = returned_and_changed_by_the_caller(m)
    same.append([total, total, total])
    same[0] = [total, 1.0, 2.0]
    return total * sum(r[0] for r in same)


@pytest.mark.parametrize("f", [grown_in_the_loop, written_in_the_loop,
                               caller_changes_the_list_after, _uses_returned])
def test_a_slice_of_a_list_changed_later_is_saved(f):
    """Where the list is changed after the slice (appended to, written into, by the
    function itself or by its caller after the call, or returned to a caller that changes
    it), the slice is saved as it was: slicing again would read the changed list."""
    args = (XS,) if f in (grown_in_the_loop, written_in_the_loop) else (M,)
    if f in (grown_in_the_loop, written_in_the_loop):
        forward, pullback = _split(f, args)
        assert "= xs[1:]" not in pullback, pullback
    check_grads(f, args, modes=("rev", "fwd"), order=2)


# --- items read again: nothing copied for nothing ---------------------------------------------


def test_an_item_read_again_that_the_pullback_does_not_use_makes_no_copy():
    """``len(tail) * xs[i]``: the reverse reads ``xs[i]`` again out of a copy of ``xs``
    only if its adjoint needs it; here the other operand is an int, so neither the read nor
    the copy is made (a dead read and a list copied per call before)."""
    forward, pullback = _split(tails, (XS,))
    assert "list(xs)" not in forward and "_copy" not in pullback, forward + pullback


# --- records pushed flat ----------------------------------------------------------------------


def while_records(x, n):
    k = 0
    s = x
    while k < n:
        s = math.sin(s) * (k + 1.5) + s * x
        k += 1
    return s


def break_records(xs, limit):
    total = 0.0
    for v in xs:
        total += math.sin(v) * total + v * xs[0]
        if total > limit:
            break
    return total


def branch_records(xs):
    total = 1.0
    for v in xs:
        if v > 0:
            total = total * v + math.exp(v) * total
        else:
            total = total - v * total * total
    return total


def nested_records(m):
    total = 0.0
    for row in m:
        acc = 1.0
        for v in row:
            acc = acc * math.cos(v) + v * acc
        total += acc * total + acc
    return total


@pytest.mark.parametrize("f, args, flat", [
    (while_records, (0.7, 4), 1),
    (break_records, ([0.5, -0.3, 0.8, 1.2], 0.9), 1),
    (break_records, ([0.5, -0.3, 0.8, 1.2], 99.0), 1),
    (branch_records, ([0.5, -0.3, 0.8, -1.2],), 1),
    (nested_records, ([[0.5, -0.3], [0.8, 1.2], [0.1, 0.2]],), 2),
    (cofactor_det, (M,), 1),
])
def test_records_of_several_fields_are_pushed_flat(f, args, flat):
    """A loop record of several fields is pushed as its fields (``loop.extend((b, a))``)
    and walked back by ``reversed_records(loop, 2)``: no tuple per iteration alive between
    the forward and the pullback. Loops of ``while``, with ``break``, with branches, nested
    (the inner record list held by the outer record) and in a recursion."""
    forward, pullback = _split(f, args)
    assert forward.count(".extend((") == flat and ".append((" not in forward, forward
    assert pullback.count("reversed_records(") == flat, pullback
    check_grads(f, args, modes=("rev", "fwd"), order=2, argnums=0)


def test_reversed_records_walks_back_records_pushed_flat():
    """The runtime helper against the records it stands for."""
    records = [(1.0, [2.0], "a"), (3.0, None, "b"), (4.0, [5.0], "c")]
    stack: list = []
    for r in records:
        stack.extend(r[::-1])
    assert list(runtime.reversed_records(stack, 3)) == records[::-1]
    assert list(runtime.reversed_records([], 2)) == []


# --- numbers of the top level computed again ---------------------------------------------------


def damped(x, k, n):
    for _ in range(n):
        c = -k * 0.5
        x = x + c * math.sin(x)
    return x


def spring_steps(x, v, k, dt):
    for _ in range(20):
        a = -k * x - 0.1 * v
        v = v + dt * a
        x = x + dt * v
    return x * v


def test_a_number_made_from_the_top_level_is_computed_again_not_saved():
    """``c = -k * 0.5`` inside a loop, ``k`` a parameter: the same at every step, so the
    reverse loop computes it again instead of each step's record holding it."""
    for f, args in [(damped, (0.7, 1.3, 6)), (spring_steps, (1.0, 0.0, 2.0, 0.05))]:
        forward, pullback = _split(f, args)
        invariant = set(re.findall(r"(\w+) = -k\b", forward))
        assert invariant and not _pushed(forward) & invariant, forward
        check_grads(f, args, modes=("rev", "fwd"), order=2)


# --- one field read twice: saved once ----------------------------------------------------------


@dataclasses.dataclass
class Point:
    x: float
    v: float

    def nudge(self, d):
        self.x += d
        return d


def read_twice(p, k, steps):
    for _ in range(steps):
        a = -k * p.x - 0.3 * p.x ** 3
        p.v = p.v + 0.1 * a
        p.x = p.x + 0.1 * p.v
    return p.x * p.v


def written_between(p, k, steps):
    for _ in range(steps):
        first = p.x * k
        p.x = p.x * 0.9 + 0.1 * p.v
        a = first * p.x
        p.v = p.v + 0.1 * math.sin(a)
    return p.x * p.v


def changed_by_a_call_between(p, k, steps):
    for _ in range(steps):
        first = p.x * k
        d = p.nudge(0.01 * first)
        a = first * p.x + d
        p.v = p.v + 0.1 * math.sin(a)
    return p.x * p.v


@pytest.mark.parametrize("f, saved", [(read_twice, 1), (written_between, None),
                                      (changed_by_a_call_between, None)])
def test_one_field_read_twice_between_numbers_only_is_saved_once(f, saved):
    """``-k * p.x - 0.3 * p.x ** 3``: the two reads of ``p.x`` are one value (nothing between
    them can change it), so each step saves one number; where the field is written, or a
    method may write it, between the reads, both are saved and the gradient stays right."""
    args = (Point(0.7, -0.2), 1.3, 6)
    forward, pullback = _split(f, args)
    if saved is not None:
        assert forward.count(".append(") == saved and "extend(" not in forward, forward
    check_grads(f, args, modes=("rev", "fwd"), order=2)
