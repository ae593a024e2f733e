"""Reverse mode through the fields of objects a function makes and keeps: every spelling
of reading and writing a float field (in place by a method, a new object per step, in a
``for`` and a ``while`` loop, in branches, fields read after a write, objects returned
whole, a field of another type beside the float ones), both modes and to second order.
The float fields of such an object get one scalar adjoint each (``p_x_bar``), so the
generated pullback of a loop stepping an object has no call per field access. Lists and
dicts in such fields are written into (``p.hist.append``, ``p.items[i] = v``, in methods
and loops), and refused where something else may hold the same list. Objects, lists and
dicts held in a list are written into (``for p in ps: p.x = ...``, ``ps[i].x = ...``,
methods, ``enumerate``), and refused where the same object may be reached another way."""

from __future__ import annotations

import dataclasses
import inspect
import math

import pytest

import wengert
from wengert.testing import check_grads


@dataclasses.dataclass
class Particle:
    x: float
    v: float

    def step(self, dt, k):
        a = -k * self.x - 0.3 * self.x ** 3 - 0.1 * self.v
        self.v = self.v + dt * a
        self.x = self.x + dt * self.v


def advance(p, dt, k):
    a = -k * p.x - 0.1 * p.v
    v = p.v + dt * a
    return Particle(p.x + dt * v, v)


def in_place(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(6):
        p.step(0.1, k)
    return p.x * p.v


def new_per_step(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(6):
        p = advance(p, 0.1, k)
    return p.x + 2.0 * p.v


def while_loop(x0, v0, k):
    p = Particle(x0, v0)
    n = 0
    while n < 5:
        p.step(0.1, k)
        n += 1
    return p.x


def branches(x0, v0, k):
    p = Particle(x0, v0)
    for i in range(6):
        if i % 2 == 0:
            p.x = p.x * k
        else:
            p.v = p.v + math.sin(p.x)
    return p.x + p.v


def read_after_write(x0, v0, k):
    p = Particle(x0, v0)
    p.x = p.x * k
    y = p.x * p.x
    p.x = y + p.v
    return p.x * p.v


class Cell:
    def __init__(self, value, count):
        self.value = value
        self.count = count


def mixed_fields(x0, v0, k):
    c = Cell(x0, 0)
    for _ in range(4):
        c.value = c.value * k + v0
        c.count = c.count + 1
    return c.value * c.count


def nested_loops(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(3):
        for _ in range(2):
            p.step(0.1, k)
        p.v = p.v * 0.9
    return p.x


def returned_whole(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(3):
        p.step(0.1, k)
    return p


PROGRAMS = [in_place, new_per_step, while_loop, branches, read_after_write, mixed_fields,
            nested_loops, returned_whole]
ARGS = (0.7, -0.3, 1.3)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_fields_in_both_modes_and_to_second_order(f):
    if f is returned_whole:
        check_grads(f, ARGS, modes=("rev", "fwd"))
        return
    check_grads(f, ARGS, order=2, modes=("rev", "fwd"))


def _reverse_loop_body(source: str) -> list[str]:
    """The lines of the pullback's loop over the records."""
    lines = source[source.index("_pullback("):].splitlines()
    start = next(k for k, line in enumerate(lines)
                 if "in reversed(" in line or "in reversed_records(" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return body


def many_steps(x0, v0, k):
    p = Particle(x0, v0)
    for _ in range(500):
        p.step(0.01, k)
    return p.x


def test_a_loop_stepping_an_object_adds_into_one_float_per_field():
    check_grads(many_steps, ARGS, modes=("rev",))
    source = wengert.show(many_steps, mode="vjp", arg_types=(float, float, float))
    body = "\n".join(_reverse_loop_body(source))
    assert "_adjoint(" not in body and "nonzero(" not in body
    assert "p_x_bar" in body and "p_v_bar" in body


# Lists and dicts held in fields of objects the function makes: every read of the field
# is the one list (``own_field_containers``), so writes into it (``append``, ``x[i] = v``,
# ``x[i] += v``, in loops, in inlined methods) differentiate in reverse mode; a list that
# something else may hold too (a caller's, another object's) stays refused, at the write.


@dataclasses.dataclass
class Trail:
    x: float
    v: float
    hist: list = dataclasses.field(default_factory=list)
    items: list = dataclasses.field(default_factory=list)
    table: dict = dataclasses.field(default_factory=dict)


def trajectory(a, b):
    p = Trail(a, b)
    for _ in range(5):
        p.x = p.x + 0.1 * p.v
        p.v = p.v - 0.1 * math.sin(p.x)
        p.hist.append(p.x)
    return sum(p.hist) + p.v


def long_trajectory(a, b):
    # (more steps than are unrolled: a loop carrying the field's list)
    p = Trail(a, b)
    for _ in range(25):
        p.x = p.x + 0.1 * p.v
        p.v = p.v - 0.1 * math.sin(p.x)
        p.hist.append(p.x * p.v)
    return sum(p.hist) * p.v


class Walker:
    def __init__(self, x, v):
        self.x = x
        self.v = v
        self.hist = []

    def step(self):
        self.x = self.x + 0.1 * self.v
        self.v = self.v - 0.1 * math.sin(self.x)
        self.hist.append(self.x)


def walked(a, b):
    w = Walker(a, b)
    for _ in range(20):
        w.step()
    return sum(w.hist) * w.v


def entries_written(a, b):
    p = Trail(a, b, items=[a, b, a * b])
    for k in range(20):
        i = k % 3
        p.items[i] = p.items[i] + p.x * p.items[(i + 1) % 3]
        p.items[(i + 2) % 3] += 0.1 * p.v
        p.x = 0.9 * p.x
    return p.items[0] + p.items[1] * p.items[2]


def assigned_then_filled(a, b):
    p = Trail(a, b)
    p.hist = []
    n = 0
    while n < 20:
        p.hist.append(p.x * b)
        p.x = p.x + 0.05 * math.cos(p.hist[-1])
        n += 1
    return sum(p.hist)


def fresh_list_per_step(a, b):
    p = Trail(a, b)
    total = 0.0
    for _ in range(20):
        p.hist = [p.x]
        p.hist.append(p.v * p.x)
        p.x = p.x + 0.01 * p.hist[1]
        total = total + p.hist[0] * p.hist[-1]
    return total


def table_field(a, b):
    p = Trail(a, b)
    for k in range(20):
        p.table[k % 4] = p.x * b + p.table.get(k % 4, 0.0)
        p.x = p.x * 0.95
    return p.table[0] * p.table[1] + p.table[3]


FIELD_CONTAINERS = [trajectory, long_trajectory, walked, entries_written,
                    assigned_then_filled, fresh_list_per_step, table_field]


@pytest.mark.parametrize("f", FIELD_CONTAINERS, ids=lambda f: f.__name__)
def test_writes_into_a_field_list_in_both_modes_and_to_second_order(f):
    check_grads(f, (0.7, 1.3), modes=("rev", "fwd"), order=2)


def test_a_field_list_is_one_list_in_the_pullback():
    # One read of the field right after the constructor; the loop pops that list's adjoint.
    source = wengert.show(long_trajectory, mode="vjp", arg_types=(float, float))
    forward = source[:source.index("_pullback(")]
    assert forward.count(".hist") == 1, source
    assert "getattr_adjoint" not in "\n".join(_reverse_loop_body(source)), source


def callers_list(xs, a):
    p = Trail(a, 0.5, xs)
    p.hist.append(a * a)  # MARK-callers
    return sum(xs) + sum(p.hist)


def callers_list_copied(xs, a):
    p = Trail(a, 0.5, list(xs))
    p.hist.append(a * a)
    return sum(xs) + sum(p.hist)


def returned_with_list(a, b):
    p = Trail(a, b)
    p.hist.append(a * b)  # MARK-returned
    return p


def returned_sum(a, b):
    p = Trail(a, b)
    p.hist.append(a * b)
    return sum(p.hist) + p.x


def assigned_in_a_branch(a, b):
    p = Trail(a, b)
    if a > 0.0:
        p.hist = [b]
    p.hist.append(a * b)  # MARK-branch
    return sum(p.hist)


def assigned_before_a_branch(a, b):
    p = Trail(a, b)
    p.hist = [b]
    if a > 0.0:
        p.hist.append(a * b)
    return sum(p.hist)


def assigned_later_in_the_loop(a, b):
    p = Trail(a, b)
    for _ in range(20):
        p.hist.append(p.x)  # MARK-later
        p.x = p.x * 1.01 + sum(p.hist) * 0.001
        p.hist = [p.x * b]
    return sum(p.hist)


def _line(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, text in enumerate(lines) if marker in text)


@pytest.mark.parametrize(("unsafe", "safe", "args", "marker"), [
    # The caller's list is the field's too: the caller reads it, and the field's adjoint
    # would not see what the caller's holds. A copy is the field's own.
    (callers_list, callers_list_copied, ([0.5, 0.2], 1.3), "MARK-callers"),
    # The object leaves whole: its cotangent's list would reach the field's list only
    # where it was made, after the appends were undone.
    (returned_with_list, returned_sum, (0.7, 1.3), "MARK-returned"),
    # Which list the field holds depends on the branch taken, or on the iteration.
    (assigned_in_a_branch, assigned_before_a_branch, (0.7, 1.3), "MARK-branch"),
    (assigned_later_in_the_loop, fresh_list_per_step, (0.7, 1.3), "MARK-later"),
], ids=["callers_list", "returned_whole", "branch", "later_in_loop"])
def test_a_field_list_others_may_hold_is_refused_at_the_write(unsafe, safe, args, marker):
    check_grads(safe, args, modes=("rev",), order=2)
    with pytest.raises(wengert.NonDifferentiableError, match="read out of a list") as info:
        wengert.vjp(unsafe, *args)
    assert info.value.loc is not None and info.value.loc.lineno == _line(unsafe, marker)


def shared_with_another_object(a, b):
    p = Trail(a, b)
    q = Trail(b, a, p.hist)
    p.hist.append(a * b)  # MARK-shared
    return sum(q.hist) + q.x


def local_list_in_an_object(a, b):
    xs = [a]
    q = Trail(b, a, xs)
    xs.append(a * b)  # MARK-local
    return sum(q.hist) + q.x


@pytest.mark.parametrize(("f", "marker"), [
    (shared_with_another_object, "MARK-shared"),
    (local_list_in_an_object, "MARK-local"),
])
def test_a_list_changed_after_a_constructor_kept_it_is_refused(f, marker):
    # A constructor's arguments are stored like ``o.f = xs``: the other object's reads
    # would see the list as it was when stored.
    with pytest.raises(wengert.NonDifferentiableError, match="changed after it was stored") \
            as info:
        wengert.vjp(f, 0.7, 1.3)
    assert info.value.loc is not None and info.value.loc.lineno == _line(f, marker)


# Writes into the items of a list: the object read out of the list is written through
# the list's own adjoint slot (``transforms/vjp_items.py``), so reads of the same item
# before and after the write, in this iteration or a later one, get the right adjoints.

@dataclasses.dataclass
class Body:
    x: float
    v: float

    def step(self, dt):
        self.v = self.v - dt * math.sin(self.x)
        self.x = self.x + dt * self.v


def simulate(ps, k):
    for _ in range(20):
        for p in ps:
            p.v = p.v - 0.1 * k * math.sin(p.x)  # MARK-simulate
            p.x = p.x + 0.1 * p.v
    return sum(p.x * p.v for p in ps)


def by_index(ps, k):
    for _ in range(3):
        for i in range(len(ps)):
            ps[i].v = ps[i].v - k * ps[i].x
            ps[i].x = ps[i].x + 0.1 * ps[i].v
    return ps[0].x * ps[1].v + ps[-1].x


def by_method(ps, dt):
    for _ in range(3):
        for p in ps:
            p.step(dt)
    return sum(p.x * p.v for p in ps)


def own_bodies(a, b):
    ps = [Body(a, b), Body(b, a)]
    for _ in range(3):
        for p in ps:
            p.x += 0.1 * p.v * p.x
            p.v -= 0.2 * math.sin(p.x)
    return ps[0].x * ps[1].v


def enumerated(ps, k):
    for i, p in enumerate(ps):
        p.x = p.x * (i + k)
        p.v = p.v + p.x
    return sum(p.v * p.x for p in ps)


def read_before_and_after(ps, k):
    s = 0.0
    for _ in range(2):
        for p in ps:
            a = p.x
            p.x = k * p.x * p.v
            s = s + a * p.x + p.x * p.x
    return s


def pairs(ps, k):
    # Item i written, item j (the same one when i == j) read, in one loop.
    for _ in range(2):
        for p in ps:
            for q in ps:
                p.v = p.v + k * math.sin(q.x - p.x)
        for p in ps:
            p.x = p.x + 0.1 * p.v
    return sum(p.x * p.v for p in ps)


def rows(m, c):
    for row in m:
        row[0] = row[0] * c + row[1]
        row[1] = row[1] * row[0]
    return m[0][0] * m[1][1] + m[1][0]


def entries(ds, c):
    for d in ds:
        d["a"] = d["a"] * c + d["b"]
    return ds[0]["a"] * ds[1]["a"]


def _bodies():
    return [Body(0.5, 0.1), Body(-0.3, 0.2), Body(0.7, -0.4)]


@pytest.mark.parametrize(("f", "args"), [
    (simulate, lambda: ([Body(0.5, 0.1), Body(-0.3, 0.2)], 1.5)),
    (by_index, lambda: (_bodies(), 0.7)),
    (by_method, lambda: (_bodies(), 0.3)),
    (own_bodies, lambda: (0.4, 0.9)),
    (enumerated, lambda: (_bodies(), 0.7)),
    (read_before_and_after, lambda: (_bodies(), 0.7)),
    (pairs, lambda: (_bodies(), 0.3)),
    (rows, lambda: ([[0.5, 0.2], [0.3, -0.4]], 1.3)),
    (entries, lambda: ([{"a": 0.5, "b": 0.2}, {"a": 0.3, "b": -0.4}], 1.3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_writes_into_items_of_a_list_in_both_modes_and_to_second_order(f, args):
    check_grads(f, args(), modes=("rev", "fwd"), order=2)


def test_a_simulation_over_a_list_matches_central_differences():
    def bodies():
        return [Body(0.5, 0.1), Body(-0.3, 0.2)]

    h = 1e-6
    dk = (simulate(bodies(), 1.5 + h) - simulate(bodies(), 1.5 - h)) / (2 * h)
    assert wengert.grad(simulate, argnums=1)(bodies(), 1.5) == pytest.approx(dk, rel=1e-6)
    cotangent = wengert.grad(simulate, argnums=0)(bodies(), 1.5)
    for i in range(2):
        for name in ("x", "v"):
            up, down = bodies(), bodies()
            setattr(up[i], name, getattr(up[i], name) + h)
            setattr(down[i], name, getattr(down[i], name) - h)
            expected = (simulate(up, 1.5) - simulate(down, 1.5)) / (2 * h)
            assert getattr(cotangent[i], name) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def copied_then_written(ps, k):
    qs = list(ps)  # the same objects, in another list
    for p in ps:
        p.x = p.x * k  # MARK-copied
    return qs[0].x + qs[1].x


@dataclasses.dataclass
class Holder:
    body: Body


def held_then_written(ps, k):
    h = Holder(ps[0])  # the first item, held by another object
    for p in ps:
        p.x = p.x * k  # MARK-held
    return h.body.x


@pytest.mark.parametrize(("f", "marker"), [
    (copied_then_written, "MARK-copied"),
    (held_then_written, "MARK-held"),
])
def test_an_item_also_held_elsewhere_is_refused_at_the_write(f, marker):
    with pytest.raises(wengert.NonDifferentiableError, match="read out of a list") as info:
        wengert.vjp(f, [Body(0.5, 0.1), Body(0.2, 0.3)], 1.3)
    assert info.value.loc is not None and info.value.loc.lineno == _line(f, marker)


def rows_popped_in_a_loop(m):
    sub = [list(r) for r in m]
    for r in sub:
        r.pop(0)  # MARK-loop
    return sub[0][0] * 2.0 + sub[1][1] * 3.0


def row_popped_by_index(m):
    sub = [list(r) for r in m]
    for i in range(len(sub)):
        sub[i].pop(0)  # MARK-index
    return sub[0][0] * 2.0 + sub[1][1] * 3.0


def row_popped_then_read(m):
    total = 0.0
    for r in m:
        total += r.pop(0) * 3.0 + r[0]  # MARK-read
    return total


def argument_rows_popped_then_read(m):
    total = 0.0
    for r in m:
        total += r.pop() * 2.0  # MARK-table
    return total + m[0][0] * 5.0


def row_of_argument_cleared(m):
    m[1].clear()  # MARK-clear
    return m[0][0] * 2.0 + len(m[1])


@pytest.mark.parametrize(("f", "marker"), [
    (rows_popped_in_a_loop, "MARK-loop"), (row_popped_by_index, "MARK-index"),
    (row_popped_then_read, "MARK-read"), (argument_rows_popped_then_read, "MARK-table"),
    (row_of_argument_cleared, "MARK-clear"),
])
def test_items_taken_out_of_a_row_read_again_are_refused_at_the_line(f, marker):
    """``r.pop(j)``, ``r.clear()`` on a row read out of a table, where the row or the table
    is read again after: the adjoint those reads give the row has its length after the
    pop, which the pop's reverse (on the row's own adjoint, kept apart from the table's)
    does not reach. Reverse mode refuses them at their line (it failed inside wengert when
    the two were added, "adjoints of different lengths"); forward mode is right."""
    m = [[1.5, -0.5, 0.3], [0.75, 2.0, 0.1]]
    with pytest.raises(wengert.NonDifferentiableError, match="read out of a list") as info:
        wengert.vjp(f, [list(r) for r in m])
    assert info.value.loc is not None and info.value.loc.lineno == _line(f, marker)
    check_grads(f, ([list(r) for r in m],), modes=("fwd",))
    # ``grad`` answers by forward mode (``driver/forward_jacobian.py``), which is right.
    got = wengert.grad(f)([list(r) for r in m])
    want = wengert.jacfwd(f)([list(r) for r in m])
    assert [float(v) for r in got for v in r] == pytest.approx(
        [float(v) for r in want for v in r], rel=1e-12)


def rows_popped_and_summed(m):
    total = 0.0
    for r in m:
        total += r.pop() * 2.0 + r.pop(0)
    return total


def entries_popped_from_dicts(ds):
    total = 0.0
    for d in ds:
        total += d.pop("a") * 2.0 + d["b"]
    return total + ds[0]["b"]


def test_items_taken_out_of_rows_read_nowhere_else_in_both_modes():
    """Where only the pops read the rows (``total += r.pop()`` over an argument's rows), the
    popped items' adjoints are the rows' whole adjoints: right in both modes; a dict's
    adjoint is keyed, so its rows may be read again."""
    check_grads(rows_popped_and_summed, ([[1.5, -0.5, 0.3], [0.75, 2.0, 0.1]],),
                modes=("rev", "fwd"))
    check_grads(entries_popped_from_dicts, ([{"a": 1.5, "b": 0.5}, {"a": -0.5, "b": 2.0}],),
                modes=("rev", "fwd"))


def test_one_object_twice_in_the_list_is_refused_when_it_runs():
    p = Body(0.5, 0.1)
    # (refused by the API before it runs, at the function: an argument holding one object
    # twice, written into; ``runtime.check_distinct_items`` stays for lists it cannot see)
    with pytest.raises(wengert.NonDifferentiableError, match="more than once") as info:
        wengert.vjp(simulate, [p, p], 1.5)
    assert info.value.loc is not None and info.value.loc.lineno == \
        simulate.__code__.co_firstlineno
    with pytest.raises(wengert.NonDifferentiableError, match="more than once") as info:
        wengert.runtime.check_distinct_items([p, p], None)
    # Distinct objects of the same values are differentiated.
    check_grads(simulate, ([Body(0.5, 0.1), Body(0.5, 0.1)], 1.5), modes=("rev",))


def union_of_displays(x, y):
    u = {"a": x} | {"c": y * 2.0, "a": x * y}
    return u["a"] * u["c"]


def union_in_place(x, y):
    d = {"a": x, "b": 1.0}
    d |= {"c": y * 2.0}
    return d["a"] * d["c"] + d["b"]


def overlapping_splats(x, y):
    d1 = {"a": x, "b": y}
    d2 = {"a": x * x}
    m = {**d1, **d2}
    return m["a"] * m["b"]


def defaults_overridden(x, y):
    base = {"w": x, "b": 0.5, "s": y}
    p = {**base, "w": x * y, "b": base["b"] * x}
    return p["w"] + p["b"] * p["s"]


@pytest.mark.parametrize("f", [union_of_displays, union_in_place, overlapping_splats,
                               defaults_overridden], ids=lambda f: f.__name__)
def test_merged_dicts_take_the_last_value_of_each_key(f):
    # ``a | b`` of dicts had the rules of bits (a zero derivative); a key given again by a
    # later entry of a display sent its adjoint to the value it replaced as well.
    check_grads(f, (0.7, 1.3), modes=("rev", "fwd"), order=2)


def union_of_unknown_dicts(ds, x):
    u = ds[0] | {"c": x * 2.0}  # (a list of a dict and an int: its items' type unknown)
    return u["a"] * u["c"]


def test_a_union_of_dicts_of_unknown_type_is_refused_when_it_runs():
    with pytest.raises(wengert.NonDifferentiableError, match="`|`") as e:
        wengert.grad(union_of_unknown_dicts, argnums=1)([{"a": 0.5, "n": "x"}, 3], 0.7)
    assert e.value.loc.filename == __file__
