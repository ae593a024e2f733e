"""Programs written the way users write them, each checked by ``check_grads`` in both
modes and to second order: each was refused or crashed until its class was fixed.

* results of the decompositions unpacked and their methods called (``s.sum()`` after
  ``u, s, vt = np.linalg.svd(m)``, ``vals.max()`` after ``eigh``, ``alpha.sum()`` after
  ``solve``): their types are declared, so second order no longer dispatches them;
* lists given to NumPy (``np.outer([x, y], w)``): typed as the arrays NumPy makes of them,
  and their batched tangents packed batch-first when a primitive reads them (``0.0``
  entries among batched ones broadcast);
* ``a, *rest = [...]`` then a loop over ``rest`` accumulating a float: ``rest`` is a list
  of the items' type, ``a`` the first item's;
* ``for xi, yi in zip(X, y)`` of arrays with ``total += ...``, as a Hessian: a snapshot of
  a number is no alias of the arrays iterated;
* ``b -= ...`` on a NumPy scalar in a Hessian: numpy scalars are immutable, ``-=`` makes
  a new one;
* list and dict methods: ``sort`` (with ``key``, ``reverse``), ``reverse``, ``remove``,
  ``index``, ``xs[:] = sorted(xs)``, ``dict.update`` with keywords.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from wengert.testing import check_grads

W = np.array([0.3, -0.6, 0.9])


def svd_unpacked(w):
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])
    u, s, vt = np.linalg.svd(a + np.outer(w, w))
    return s.sum() + s[0] ** 2 + vt[0] @ vt[0]


def svd_values_only(w):
    s = np.linalg.svd(np.diag(w ** 2 + 1.0) + 0.1, compute_uv=False)
    return s @ s


def eigh_and_slogdet(w):
    m = np.diag(w ** 2 + 1.0) + 0.1
    sign, logdet = np.linalg.slogdet(m)
    vals, vecs = np.linalg.eigh(m)
    return sign * logdet + vals.max() + vecs[0, 0] ** 2


def qr_unpacked(w):
    q, r = np.linalg.qr(np.vstack([w, w ** 2, np.ones_like(w)]).T + np.eye(3))
    return np.abs(np.diag(r)).sum() + np.sum(q[0])


def solve_and_cholesky(w):
    k = np.exp(-0.5 * (w[:, None] - w[None, :]) ** 2) + 0.1 * np.eye(len(w))
    alpha = np.linalg.solve(k, np.ones(len(w)))
    chol = np.linalg.cholesky(k)
    return alpha.sum() + 2 * np.log(np.diag(chol)).sum() + np.linalg.inv(k).trace()


def zip_of_arrays(w):
    x = np.arange(12.0).reshape(4, 3) / 10.0
    y = np.array([1.0, 0.0, 1.0, 1.0])
    total = 0.0
    for xi, yi in zip(x, y):
        z = xi @ w
        total += yi * np.log1p(np.exp(-z)) + (1 - yi) * np.log1p(np.exp(z))
    return total / len(y)


def numpy_scalar_in_place(w):
    b = 1.0
    for j in range(3):
        b = np.tanh(b + w[j] * w[j - 1])
    b -= np.sin(b) * w[0]
    b *= w[1]
    return b


@pytest.mark.parametrize("f", [svd_unpacked, svd_values_only, eigh_and_slogdet, qr_unpacked,
                               solve_and_cholesky, zip_of_arrays, numpy_scalar_in_place],
                         ids=lambda f: f.__name__)
def test_numpy_programs(f):
    check_grads(f, (W.copy(),), order=2, rtol=1e-4, atol=1e-6)


def outer_of_lists(x, y):
    m = np.outer([x, y], [y, x, 1.0])
    return np.sum(m.T) + np.sum(m @ m.T)


def list_times_array(x, y):
    return float(np.dot(np.array([x, 0.0, y]) * [y, 2.0, x], [1.0, x, y]))


def star_unpacked(x, y):
    a, *rest = [x, y, x + y, x - y]
    out = a
    for k, r in enumerate(rest, start=1):
        out += k * r ** 2
    return out


def star_in_the_middle(x, y):
    first, *middle, last = (x, y * x, math.sin(y), x / y)
    s = first * last
    for m in middle:
        s += m
    return s + len(middle)


@pytest.mark.parametrize("f", [outer_of_lists, list_times_array, star_unpacked,
                               star_in_the_middle], ids=lambda f: f.__name__)
def test_float_programs(f):
    check_grads(f, (0.7, 1.3), order=2)


def list_sorted_in_place(x, y):
    xs = [x * y, x - y, math.sin(x), y * y]
    alias = xs
    xs.sort(key=abs, reverse=True)
    return alias[0] + 2 * xs[-1] * xs[1]


def list_sort_plain_and_slice_assign(x, y):
    xs = [x * y, x - y, math.sin(x), y * y]
    xs.sort()
    ys = [y, x]
    ys[:] = sorted(ys)
    return xs[0] * ys[0] + xs[-1] * ys[1]


def list_reversed_in_place(x, y):
    xs = [x * y, x - y, math.sin(x), y * y]
    xs.reverse()
    return xs[0] + 2 * xs[-1] * xs[1]


def list_remove_and_index(x, y):
    xs = [x * y, x - y, math.sin(x), y * y]
    xs.insert(1, x)
    v = xs.pop(0)
    xs.remove(xs[2])
    k = xs.index(y * y)
    return v * xs[0] + sum(xs) + k * xs[k]


def list_cleared_and_filled(x, y):
    acc = [x, y * x]
    total = 0.0
    for _ in range(3):
        total += sum(acc)
        acc.clear()  # (emptied: what it held no longer reaches the sum)
        acc.append(total * 0.5)
        acc.append(y)
    return total + acc[0]


def dict_update_with_keywords(x, y):
    d = {"a": x, "b": y}
    d.update(c=x * y)
    d.update({"b": y * 2.0}, e=x)
    d.setdefault("f", 2.0)
    tot = 0.0
    for k in sorted(d):
        tot += d[k] ** 2
    return tot + d.get("zz", 1.0)


@pytest.mark.parametrize("f", [list_sorted_in_place, list_sort_plain_and_slice_assign,
                               list_reversed_in_place, list_remove_and_index,
                               list_cleared_and_filled, dict_update_with_keywords],
                         ids=lambda f: f.__name__)
def test_list_and_dict_methods(f):
    check_grads(f, (0.7, 1.3), order=2)


# Recursion on numbers, to second order: in a gradient's IR a recursive call (which is
# never inlined) is split into a call of the function and, in the pullback, a call of its
# gradient, both linked when the gradient is differentiated again.


def continued_fraction(x, depth):
    if depth == 0:
        return 1.0
    return 1.0 + x / continued_fraction(x, depth - 1)


def even_part(x, n):
    if n == 0:
        return x
    return math.sin(odd_part(x * 1.1, n - 1)) + x


def odd_part(x, n):
    if n == 0:
        return x * x
    return even_part(x, n - 1) * 0.9 + math.cos(x)


def power_by_halves(x, n):
    if n == 0:
        return 1.0
    half = power_by_halves(x, n // 2)
    return half * half * (x if n % 2 else 1.0)


def two_carried(x, y, n):
    if n == 0:
        return x * y
    return two_carried(y * 0.5 + x, math.sin(x) * y, n - 1) + x * y


def recursions(x, y):
    return continued_fraction(x, 6) * y + even_part(y, 5) + power_by_halves(x, 7) + \
        two_carried(x, y, 4)


def test_recursion_to_second_order():
    check_grads(recursions, (0.7, 1.3), order=2)
    check_grads(continued_fraction, (0.7, 12), order=2, argnums=(0,))


def det_by_cofactors(a):
    # Module level (tests/test_numpy_programs.py has the same expansion as a nested
    # function, which is still a located refusal at second order).
    n = a.shape[0]
    if n == 1:
        return a[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate([a[1:, :j], a[1:, j + 1:]], axis=1)
        total = total + (-1) ** j * a[0, j] * det_by_cofactors(minor)
    return total


def scaled_in_place(v, k):
    # The callee writes into its array: not split (a gradient taken in the pullback would
    # read the array after the writes), so the call stays dispatched: a located refusal at
    # second order, never a wrong number.
    if k == 0:
        return np.sum(v * v)
    v[0] = v[0] * 0.5
    return scaled_in_place(v, k - 1) + v[1] * v[0]


def test_recursion_on_arrays_to_second_order():
    a = np.random.default_rng(3).normal(size=(4, 4))
    check_grads(det_by_cofactors, (a,), order=2, rtol=1e-4, atol=1e-6)
    check_grads(lambda v: np.sin(det_by_cofactors(np.outer(v, v) + np.eye(3))),
                (W.copy(),), order=2, rtol=1e-4, atol=1e-6)


def writes_then_recurses(v, k):
    return scaled_in_place(v.copy(), k)


def test_a_recursive_callee_writing_its_array_is_right_or_refused():
    import wengert

    try:
        check_grads(writes_then_recurses, (W.copy(), 3), order=2, argnums=(0,), rtol=1e-4,
                    atol=1e-6)
    except wengert.NonDifferentiableError as e:
        assert e.loc is not None


# --------------------------------------------------------------------------------------
# Loops over lists of floats, every spelling: read by index in reverse mode, the items'
# adjoints added into a list the loop owns (``xs_bar[i] += g``), items re-read from a copy
# rather than saved, comprehensions' adjoints popped with no call. Each is checked in both
# modes, to second order, and through ``grad`` itself (its own cotangent finishing).
# --------------------------------------------------------------------------------------

COEFFS = [0.5, -1.0, 2.0, 0.25, 1.5]


def loop_items(xs):
    s = 0.0
    for x in xs:
        s += x * x * math.sin(x)
    return s


def loop_enumerate(xs):
    s = 0.0
    for i, x in enumerate(xs, start=1):
        s += i * x ** 3
    return s


def loop_zip_comprehension(xs):
    ws = [math.exp(x) for x in xs]
    return sum(w * x for w, x in zip(ws, xs)) / sum(ws)


def loop_zip_unequal(xs):
    # zip stops at the shorter: the last item of ``xs`` is only read through ``xs[1:]``.
    return sum(a * b for a, b in zip(xs, xs[1:])) + sum(c * x for c, x in zip(COEFFS, xs))


def loop_zip_tuple(xs):
    t = (1.0, 2.0, 3.0)
    s = 0.0
    for c, x, y in zip(t, xs, reversed(xs)):
        s += c * x * y
    return s


def loop_with_break(xs):
    s = 0.0
    for x in xs:
        if x > 1.0:
            break
        s += x * x
    return s


def loop_nested(xs):
    s = 0.0
    for x in xs:
        for y in xs:
            s += math.tanh(x - y) * y
    return s


def loop_list_changed_after(xs):
    s = 0.0
    for x in xs:
        s += x * x
    xs.append(s)
    xs[0] = xs[0] * s
    return s + xs[-1] * xs[0]


def loop_appended_then_indexed(xs):
    ys = []
    for x in xs:
        ys.append(x * x)
    s = 0.0
    for i in range(len(ys)):
        s += ys[i] * ys[i - 1]
    return s


def loop_logsumexp(xs):
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def loop_norm_and_min(xs):
    return math.sqrt(sum([x * x for x in xs])) * min(xs)


def loop_same_list_twice(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s += a * b * b
    return s


def smooth_copy_in_place(xs):
    ys = list(xs)
    for i in range(1, len(ys)):
        ys[i] = 0.5 * (ys[i] + ys[i - 1])
    return sum(y * y for y in ys)


def cumsum_argument_in_place(xs):
    for i in range(1, len(xs)):
        xs[i] = xs[i] + xs[i - 1]
    return xs[-1] * xs[len(xs) // 2]


def swap_sort_in_place(xs):
    ys = xs[:]
    for i in range(len(ys)):
        for j in range(len(ys) - 1 - i):
            if ys[j] > ys[j + 1]:
                ys[j], ys[j + 1] = ys[j + 1], ys[j]
    return sum(k * y for k, y in enumerate(ys))


def appended_and_written(xs):
    ys = [x * x for x in xs]
    ys.append(xs[0] * xs[1])
    ys[0] = ys[0] + ys[-1]
    last = ys.pop()
    return sum(ys) * last


def int_written_into_floats(xs):
    ys = list(xs)
    ys[0] = 1  # an int among the floats: the items' type is not assumed
    for i in range(1, len(ys)):
        ys[i] = ys[i] * ys[i - 1]
    return ys[-1]


LIST_LOOPS = [loop_items, loop_enumerate, loop_zip_comprehension, loop_zip_unequal,
              loop_zip_tuple, loop_with_break, loop_nested, loop_list_changed_after,
              loop_appended_then_indexed, loop_logsumexp, loop_norm_and_min,
              smooth_copy_in_place, cumsum_argument_in_place, swap_sort_in_place,
              appended_and_written, int_written_into_floats]
XS = [0.3, -0.7, 1.2, 0.4, -0.2]


def _numerical_gradient(f, args, k):
    h, out = 1e-6, []
    for i in range(len(args[k])):
        up = [list(a) for a in args]
        down = [list(a) for a in args]
        up[k][i] += h
        down[k][i] -= h
        out.append((f(*up) - f(*down)) / (2 * h))
    return out


@pytest.mark.parametrize("f", LIST_LOOPS, ids=lambda f: f.__name__)
def test_loops_over_lists_of_floats(f):
    import wengert

    check_grads(f, (list(XS),), order=2, modes=("rev", "fwd"))
    g = wengert.grad(f)(list(XS))
    assert type(g) is list and all(type(v) is float for v in g)
    np.testing.assert_allclose(g, _numerical_gradient(f, (XS,), 0), rtol=1e-5, atol=1e-6)
    # The pullback may be called again: its list adjoints are its own each time.
    _, pullback = wengert.vjp(f, list(XS))
    np.testing.assert_equal(pullback(1.0), pullback(1.0))


def test_one_list_passed_twice():
    import wengert

    xs = list(XS)
    check_grads(loop_same_list_twice, (xs, xs), modes=("rev", "fwd"))
    ga, gb = wengert.grad(loop_same_list_twice, argnums=(0, 1))(xs, xs)
    assert ga is not gb
    np.testing.assert_allclose(ga, _numerical_gradient(loop_same_list_twice, (xs, xs), 0),
                               rtol=1e-5, atol=1e-6)


def softmax_weighted_mean(xs):
    m = max(xs)
    ws = [math.exp(x - m) for x in xs]
    total = sum(ws)
    return sum(w * x for w, x in zip(ws, xs)) / total


def max_then_list_written(xs):
    ys = list(xs)
    m = max(ys)
    ys[0] = ys[0] * m  # the list changes after its maximum was read
    lo = min(ys)
    return m * lo + ys[0]


def max_of_items_and_pairs(xs):
    top = max(x * x for x in xs)  # a generator: its items first made a list
    pair = max(xs[0], xs[1])
    low = min([xs[2], 0.5 * xs[3], xs[4]])
    return top * pair + low


def max_in_a_loop(xs):
    s = 0.0
    for k in range(1, len(xs)):
        s += max(xs[:k + 1]) * xs[k]
    return s


def appended_then_changed(xs):
    ws = [math.exp(x) for x in xs]
    ws[1] = ws[1] * ws[0]  # an item appended, then written: not read back as appended
    return sum(w * x for w, x in zip(ws, xs))


def appended_then_grown(xs):
    ws = []
    for i in range(len(xs)):
        ws.append(math.sin(xs[i]))
    ws.append(ws[0] * ws[1])
    return sum(ws) * ws[-1]


def appended_when_positive(xs):
    ws = [math.exp(x) for x in xs if x > 0.0]
    return sum(ws) * len(ws)


def appended_before_a_break(xs):
    ws = []
    for i in range(len(xs)):
        ws.append(math.tanh(xs[i]))
        if xs[i] > 1.0:
            break
    return sum(w * w for w in ws)


def appended_into_started_list(xs):
    ws = [xs[0] * 2.0]
    for i in range(len(xs)):
        ws.append(math.cos(xs[i]))
    return sum(ws[i] * ws[i - 1] for i in range(1, len(ws)))


def sum_of_list_twice(xs):
    ws = [x * x for x in xs]
    total = sum(ws)
    return total * sum(ws) + sum([w * total for w in ws])


def range_measured_before_a_change(xs):
    n = len(xs)
    xs.append(xs[0] * 2.0)  # the loop runs over the first n items, not over the list
    ys = []
    for i in range(n):
        ys.append(xs[i] * xs[i])
    return sum(ys) + xs[-1]


def range_of_two_lengths(xs):
    ws = [math.sin(x) for x in xs]
    ws.pop()
    s = 0.0
    for i in range(min(len(ws), len(xs))):
        s += ws[i] * xs[i]
    return s


def max_of_a_comprehension_written(xs):
    m = max(xs[1:])
    ws = [math.tanh(x) * 0.7 for x in xs]
    ws[0] = ws[0] * 0.7  # ``max(ws)``'s adjoint is ``[None] * n`` with one entry written
    s = 0.0
    for w, x in zip(ws, xs):
        s += w * x * 0.7
    return s + max(ws) * m


SHARED_ADJOINTS = [max_of_a_comprehension_written,
                   range_measured_before_a_change, range_of_two_lengths,
                   softmax_weighted_mean, max_then_list_written, max_of_items_and_pairs,
                   max_in_a_loop, appended_then_changed, appended_then_grown,
                   appended_when_positive, appended_before_a_break,
                   appended_into_started_list, sum_of_list_twice]


@pytest.mark.parametrize("f", SHARED_ADJOINTS, ids=lambda f: f.__name__)
def test_maxima_appended_items_and_sums_of_lists(f):
    # ``max(xs)`` read as ``xs[k]``, items appended in a loop read back from the list in the
    # reverse loop, a sum's adjoint spread over the list's: each only where it is the same
    # value (checked against differences, to second order, in both modes).
    import wengert

    check_grads(f, (list(XS),), order=2, modes=("rev", "fwd"))
    g = wengert.grad(f)(list(XS))
    np.testing.assert_allclose(g, _numerical_gradient(f, (XS,), 0), rtol=1e-5, atol=1e-6)
    _, pullback = wengert.vjp(f, list(XS))
    np.testing.assert_equal(pullback(1.0), pullback(1.0))


@pytest.mark.parametrize("extreme", [max, min])
def test_max_and_min_of_equal_items_go_to_the_one_python_returns(extreme):
    import wengert

    def pick(xs):
        return extreme(xs) * 2.0

    xs = [1.0, 3.0, 3.0, -1.0, -1.0, 3.0]
    picked = xs.index(extreme(xs))  # Python returns the first of equal extremes
    want = [2.0 if i == picked else 0.0 for i in range(len(xs))]
    assert wengert.grad(pick)(xs) == want
    nan_first = [float("nan"), 1.0, 2.0]  # max keeps a NaN it starts with
    assert wengert.grad(pick)(nan_first) == [2.0, 0.0, 0.0]


# ------------------------------------------------------------ dataclasses.replace
# Immutable-style dataclass code: each step a copy with some fields changed.


@dataclasses.dataclass(frozen=True)
class Body:
    x: float
    v: float
    m: float = 1.0


def replace_step(b, dt):
    return dataclasses.replace(b, x=b.x + dt * b.v, v=b.v - dt * math.sin(b.x) / b.m)


def replace_simulation(x0, v0):
    b = Body(x0, v0, 2.0)
    for _ in range(20):
        b = replace_step(b, 0.05)
    return b.x * b.v


def replace_one_field_at_a_time(b):
    for _ in range(10):
        b = dataclasses.replace(b, v=b.v - 0.1 * b.x)
        b = dataclasses.replace(b, x=b.x + 0.1 * b.v)
    return b.x ** 2 + b.v * b.m


def test_dataclasses_replace_is_a_construction():
    import wengert

    check_grads(replace_simulation, (0.7, 0.2), order=2, modes=("rev", "fwd"))
    check_grads(replace_one_field_at_a_time, (Body(0.5, 0.1, 1.5),), order=2,
                modes=("rev", "fwd"))
    g = wengert.grad(replace_one_field_at_a_time)(Body(0.5, 0.1, 1.5))
    assert type(g) is Body
    # The copy is made where the call is (no run-time dispatch in the derivative).
    source = wengert.show(replace_simulation, mode="vjp")
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "vjp_call" not in code and "replace(" not in code and "Body(x=" in code, source


# ------------------------------------------------- recursion through a gradient, arrays


def det_of_fancy_minors(a):
    n = a.shape[0]
    if n == 1:
        return a[0, 0]
    total = 0.0
    for j in range(n):
        rows = [i for i in range(n) if i != j]
        total = total + (-1.0) ** j * a[j, 0] * det_of_fancy_minors(a[rows][:, 1:])
    return total


def test_recursion_on_fancy_indexed_minors_to_second_order():
    # A second derivative calls ``grad`` of the recursive function on a minor read out of
    # the array: the gradient writes what the function writes (nothing), so the minor being
    # "read out of an object" is no reason to refuse (it was, at second order).
    a = np.array([[2.0, 0.5, 0.1, 0.3], [0.3, 1.5, 0.2, -0.4], [0.1, 0.4, 3.0, 0.2],
                  [0.6, -0.2, 0.1, 1.2]])
    check_grads(det_of_fancy_minors, (a,), order=2, modes=("rev", "fwd"), rtol=1e-4,
                atol=1e-6)



# ``dict.pop`` and ``del``: an entry read and removed, in both modes and to second order.


def popped_entry(x, y):
    d = {"a": x, "b": 2.0 * y}
    v = d.pop("a")
    return v * d["b"] + len(d)


def deleted_entry_then_iterated(x, y):
    d = {"a": x, "b": 2.0 * y, "c": x * y}
    del d["a"]
    s = 0.0
    for _k, v in d.items():
        s = s + v * v
    return s * x


def deleted_list_items(x, y):
    xs = [x, 2.0 * y, 3.0 * x]
    del xs[0]
    del xs[-1]
    return xs[0] * x


def popped_with_defaults(x, y):
    d = {"a": x}
    return d.pop("z", y) * d.pop("a", y * 3.0) + d.pop("q", 1.0)


def popped_then_put_back(x, y):
    d = {"a": x, "b": y}
    v = d.pop("a")
    d["a"] = v * y
    return d["a"] * v + d.pop("b")


def popped_in_a_loop(x, y):
    d = {i: x * i + y for i in range(5)}
    total = 0.0
    for i in range(5):
        if i % 2 == 0:
            total = total + d.pop(i) * x
    return total + sum(d.values())


def deleted_name(x, y):
    t = x * y
    u = t + x
    del t
    return u * y


def deleted_slice(x, y):
    xs = [x, y, x * y, 2.0]
    del xs[0:2]
    return xs[0] * xs[1] * x


def slice_written_shorter(x, y):
    xs = [x, y, x * y, 2.0]
    xs[0:2] = []
    return xs[0] * xs[1] * x


def slice_written_longer(x, y):
    xs = [x, y]
    xs[0:1] = [y, y * y]
    return xs[0] * xs[1] * xs[2] + x


def tail_written_shorter(x, y):
    xs = [x, y, x * y, 2.0]
    xs[2:] = [y]
    return xs[0] * xs[1] * xs[2]


# (f, d/dx and d/dy at (1.5, 0.5), worked out by hand)
DELETIONS = {
    popped_entry: (2 * 0.5, 2 * 1.5),                             # 2xy + 1
    deleted_entry_then_iterated: (4 * 0.25 + 3 * 1.5 ** 2 * 0.25, 8 * 1.5 * 0.5 +
                                  2 * 1.5 ** 3 * 0.5),             # (4y² + x²y²) x
    deleted_list_items: (2 * 0.5, 2 * 1.5),                       # 2xy
    popped_with_defaults: (0.5, 1.5),                              # xy + 1
    popped_then_put_back: (2 * 1.5 * 0.5, 1.5 ** 2 + 1),          # x²y + y
    popped_in_a_loop: (12 * 1.5 + 3 * 0.5 + 4, 3 * 1.5 + 2),     # 6x² + 3xy + 4x + 2y
    deleted_name: (0.5 * 1.5, 2 * 1.5 * 0.5 + 1.5),               # (xy + x) y
    deleted_slice: (4 * 1.5 * 0.5, 2 * 1.5 ** 2),                 # 2x²y
    slice_written_shorter: (4 * 1.5 * 0.5, 2 * 1.5 ** 2),         # 2x²y
    slice_written_longer: (1.0, 4 * 0.5 ** 3),                    # y⁴ + x
    tail_written_shorter: (0.5 ** 2, 2 * 1.5 * 0.5),              # xy²
}


@pytest.mark.parametrize("f", DELETIONS, ids=lambda f: f.__name__)
def test_popped_and_deleted_entries(f):
    import wengert

    check_grads(f, (1.5, 0.5), order=2, modes=("rev", "fwd"))
    np.testing.assert_allclose(wengert.grad(f, argnums=(0, 1))(1.5, 0.5), DELETIONS[f],
                               rtol=1e-12)


def pops_a_parameter(d, x):
    v = d.pop("w")
    return v * x + d["b"]


def test_an_entry_popped_from_an_argument():
    import wengert

    check_grads(pops_a_parameter, ({"w": 2.0, "b": 3.0}, 0.7), order=2, modes=("rev", "fwd"))
    d = {"w": 2.0, "b": 3.0}
    g = wengert.grad(pops_a_parameter)(d, 0.7)
    assert g == {"w": 0.7, "b": 1.0} and d == {"b": 3.0}  # the caller's dict, popped


def deletes_a_stepped_slice(x, y):
    xs = [x, y, x * y]
    del xs[::2]
    return xs[0]


def deletes_an_attribute(x, y):
    p = SimpleNamespace(v=x)
    del p.v
    return y


def test_deletions_that_are_refused_say_where():
    import wengert

    for f, error in ((deletes_a_stepped_slice, wengert.NonDifferentiableError),
                     (deletes_an_attribute, wengert.UnsupportedSyntaxError)):
        for run in (lambda: wengert.grad(f, argnums=(0, 1))(1.5, 0.5),
                    lambda: wengert.jvp(f, (1.5, 0.5), (1.0, 0.0))):
            with pytest.raises(error) as info:
                run()
            assert info.value.loc is not None and info.value.loc.filename == __file__
            assert "del" in str(info.value)


# Methods calling their class's other methods, on objects read out of a list: summarised
# for the receiver's class, so reading methods are not taken for writers.


@dataclasses.dataclass
class MassOnSpring:
    m: float
    k: float

    def kinetic(self, v):
        return 0.5 * self.m * v * v

    def potential(self, x):
        return 0.5 * self.k * x * x

    def energy(self, x, v):
        return self.kinetic(v) + self.potential(x)


class PlainBody:
    def __init__(self, m):
        self.m = m

    def kinetic(self, v):
        return self.m * v * v

    def energy(self, x, v):
        return self.kinetic(v) + math.sin(x)


class Accumulator:
    def __init__(self):
        self.t = 1.0

    def scale(self, v):
        self.t = self.t * v

    def step(self, v):
        self.scale(v)
        return self.t


BODIES = [MassOnSpring(1.0, 2.0), MassOnSpring(2.0, 0.5)]
PLAIN_BODIES = [PlainBody(1.0), PlainBody(3.0)]


def energy_of_bodies(x, v):
    return sum(b.energy(x, v * x) for b in BODIES)


def energy_of_plain_bodies(x, v):
    s = 0.0
    for b in PLAIN_BODIES:
        s += b.energy(x, v * x)
    return s


@pytest.mark.parametrize("f", [energy_of_bodies, energy_of_plain_bodies],
                         ids=lambda f: f.__name__)
def test_methods_calling_methods_of_objects_out_of_a_list(f):
    check_grads(f, (0.7, 0.4), order=2, modes=("rev", "fwd"))


class Bank:
    """Objects held by a class: read through it, a constant of the derivation (not data
    the function is given, as a global list or a closure's list is)."""

    accumulators = [Accumulator(), Accumulator()]


def accumulated_steps(x):
    s = 0.0
    for a in Bank.accumulators:
        s += a.step(x)
    return s


ACCUMULATORS = [Accumulator(), Accumulator()]


def global_steps(x):
    s = 0.0
    for a in ACCUMULATORS:
        s += a.step(x)
    return s


def test_objects_a_class_holds_written_by_a_method_are_refused_at_the_line():
    import wengert

    with pytest.raises(wengert.NonDifferentiableError, match="class attribute") as info:
        wengert.vjp(accumulated_steps, 0.7)
    assert info.value.loc is not None and info.value.loc.filename == __file__
    assert info.value.loc.lineno == accumulated_steps.__code__.co_firstlineno + 2


def test_a_closure_writing_into_the_objects_it_captures_as_an_argument_would():
    """The list a closure captures, or a module global holds, is data the function is given
    (bound when it is called), as an argument is: the same derivative, and the same writes
    into its objects."""
    import copy

    import wengert

    accs = [Accumulator(), Accumulator()]

    def steps(x):
        s = 0.0
        for a in accs:
            s += a.step(x)
        return s

    for f, held in ((steps, accs), (global_steps, ACCUMULATORS)):
        before = copy.deepcopy(held)
        value, pullback = wengert.vjp(f, 0.7)
        assert value == pytest.approx(1.4) and [a.t for a in held] == [0.7, 0.7]
        h = 1e-6
        held[:] = copy.deepcopy(before)
        up = f(0.7 + h)
        held[:] = copy.deepcopy(before)
        down = f(0.7 - h)
        assert pullback(1.0)[0] == pytest.approx((up - down) / (2 * h), rel=1e-6)
        held[:] = copy.deepcopy(before)


# ``super()``: the method (or property) of the next class in the object's class order.


class Scalar:
    def __init__(self, a):
        super().__init__()
        self.a = a

    def f(self, x):
        return self.a * x


class Squared(Scalar):
    def f(self, x):
        return super().f(x) + x * x


class Doubled(Scalar):
    def f(self, x):
        return super().f(x) * 2.0


class Both(Squared, Doubled):
    def __init__(self, a, d):
        super(Both, self).__init__(a)  # noqa: UP008  (the two-argument spelling)
        self.d = d

    def f(self, x):
        return super().f(x) + self.d


class Disc:
    def __init__(self, r):
        self.r = r

    @property
    def area(self):
        return self.r * self.r


class Annulus(Disc):
    @property
    def area(self):
        return super().area - 1.0


SCALARS = [Squared(2.0), Doubled(3.0)]


def diamond_of_supers(x, y):
    return Both(x, y).f(y) * x  # Both -> Squared -> Doubled -> Scalar


def property_through_super(x, y):
    return Annulus(x * y).area * x


def supers_of_objects_out_of_a_list(x, y):
    s = 0.0
    for o in SCALARS:
        s += o.f(x * y)
    return s


@pytest.mark.parametrize("f, value", [
    (diamond_of_supers, (2 * 0.7 * 0.4 + 0.4 ** 2 + 0.4) * 0.7),
    (property_through_super, ((0.7 * 0.4) ** 2 - 1.0) * 0.7),
    (supers_of_objects_out_of_a_list, 2.0 * 0.28 + 0.28 ** 2 + 2 * 3.0 * 0.28),
], ids=lambda v: getattr(v, "__name__", ""))
def test_methods_and_properties_reached_through_super(f, value):
    assert f(0.7, 0.4) == pytest.approx(value)  # (Python's own order of classes)
    check_grads(f, (0.7, 0.4), order=2, modes=("rev", "fwd"))
