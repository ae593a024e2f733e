"""Storage of arrays (``analysis/effects/arrays.py``), and what the transforms do with it.

Each class of program below was silently wrong in reverse mode before the residuals of the
pullback asked the analysis whether a later write may reach their storage: a saved view
of an array written after (a slice, a row, a reshape, ``.T``), a mask or index computed
again from an array changed after, an in-place operator on an argument (the caller's
array changed under ``f`` and ``jvp`` but not under ``grad``). Every spelling is checked
against finite differences in both modes and to second order by the shared helper.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import wengert
from wengert.analysis.effects.arrays import IMMUTABLE, effects
from wengert.analysis.effects.vocabulary import MUTATING_METHODS, READONLY_METHODS
from wengert.analysis.types import Types
from wengert.driver.pipeline import primal_entry
from wengert.ir import nodes as n
from wengert.testing import check_grads

# ------------------------------------------------------------------ the analysis itself


def _views(a):
    b = a.copy()
    head = b[0:2]
    t = b.T
    tt = t.T
    other = b * 2.0
    b[0] = 1.0
    return head, t, tt, other


def _analysed(fn, nparams=1):
    """``fn``'s IR, its effects and its named values, every value an array but for the
    constants and slices (types a transform would infer)."""
    ir = primal_entry(fn).ir
    by_id = {v.id: np.ndarray for op in n.walk(ir.body) for v in op.results
             if not isinstance(op, (n.Const, n.BuildSlice))}
    by_id.update({a.id: np.ndarray for a in ir.body.args[:nparams]})
    fx = effects(ir, Types(by_id))
    named = {v.hint: v for op in n.walk(ir.body) for v in op.results if v.hint}
    return ir, fx, named


def test_views_share_storage_with_what_they_view_and_copies_do_not():
    ir, fx, v = _analysed(_views)
    assert fx.may_alias(v["head"], v["b"]) and fx.may_alias(v["t"], v["b"])
    assert fx.may_alias(v["tt"], v["head"])  # (views of one array: one storage)
    assert not fx.may_alias(v["other"], v["b"]) and not fx.may_alias(v["b"], ir.body.args[0])
    assert not fx.same_object(v["head"], v["b"])
    write = next(op for op in n.walk(ir.body) if isinstance(op, n.SetItem))
    made = {op.results[0].hint: op for op in n.walk(ir.body) if op.results}
    assert fx.changed_after(v["head"], made["head"])  # (through ``b``)
    assert fx.changed_after(v["tt"], made["tt"])
    assert not fx.changed_between(v["t"], made["t"], made["tt"])
    assert not fx.changed_after(v["other"], made["other"])
    assert fx.changed_after(v["head"], made["other"]) and fx.changed_after(v["b"], write)
    assert not fx.reaches_caller(v["b"]) and fx.reaches_caller(ir.body.args[0])


def _through_argument(a):
    row = a[0]
    row *= 2.0
    return a


def test_a_write_through_a_view_of_an_argument_reaches_the_caller():
    ir, fx, v = _analysed(_through_argument)
    assert fx.reaches_caller(v["row"])
    assert [type(op).__name__ for op in fx.writes_into(ir.body.args[0])] == ["Call"]


def test_one_vocabulary_of_mutation():
    assert {"append", "extend", "update", "fill"} <= MUTATING_METHODS
    assert not MUTATING_METHODS & READONLY_METHODS
    assert tuple in IMMUTABLE and list not in IMMUTABLE and np.ndarray not in IMMUTABLE


# ------------------------------------------------------- residuals a later write reaches


def sliced_then_written(a):
    b = a.copy()
    y = np.sin(b[0:2])
    b[0] = 0.0
    return np.sum(y)


def row_read_then_row_written(A):
    B = A.copy()
    B[0] = B[0] * A[0, 0]
    return np.sum(B)


def rows_normalised(A):
    B = A.copy()
    for i in range(B.shape[0]):
        B[i, :] /= np.sum(B[i, :])
    return np.sum(B ** 2 * np.arange(B.shape[1]))


def rows_normalised_by_rebinding(A):
    B = A.copy()
    for i in range(len(B)):
        B[i] = B[i] / B[i].sum()
    return np.sum(np.cos(B))


def gram_schmidt(A):
    Q = A.copy()
    for i in range(Q.shape[0]):
        for j in range(i):
            Q[i] -= np.dot(Q[i], Q[j]) * Q[j]
        Q[i] /= np.linalg.norm(Q[i])
    return np.sum(Q * np.arange(Q.size).reshape(Q.shape))


def columns_standardised(X):
    X = X.copy()
    for j in range(X.shape[1]):
        X[:, j] -= X[:, j].mean()
        X[:, j] /= X[:, j].std()
    return np.sum(X ** 3)


def allen_cahn(u0, dt):
    u = u0.copy()
    for _ in range(4):
        lap = u[:-2] - 2 * u[1:-1] + u[2:]
        u[1:-1] += dt * (lap + u[1:-1] - u[1:-1] ** 3)
    return np.sum(u ** 2)


def reshaped_then_written(a):
    b = a.copy()
    m = b.reshape(2, 2)
    y = np.exp(m) @ m
    b[0] = 1.0
    return np.sum(y)


def transposed_then_scaled(A):
    B = A.copy()
    t = B.T
    y = np.tanh(t) * t
    B *= 3.0
    return np.sum(y) + np.sum(B)


def raveled_then_written_in_place(A):
    B = A * 1.0
    r = B.ravel()
    y = r ** 3
    B[1:] += 1.0
    return np.sum(y * np.arange(y.size)) + np.sum(B ** 2)


def slice_then_whole_scaled(a):
    b = a + 0.0
    y = np.sin(b[:2]) * b[1:3]
    b *= 3.0
    return np.sum(y) + np.sum(b * b)


def read_in_a_loop_written_after(a):
    b = a.copy()
    total = 0.0
    for k in range(3):
        w = b[k:k + 2]
        total = total + np.sum(w * w)
        b[k + 1] = b[k] * 0.5
    return total


RESIDUAL_PROGRAMS = [
    (sliced_then_written, (np.array([0.5, 1.2, 0.8]),)),
    (row_read_then_row_written, (np.arange(1.0, 7.0).reshape(2, 3) / 3,)),
    (rows_normalised, (np.random.RandomState(0).rand(3, 4) + 0.5,)),
    (rows_normalised_by_rebinding, (np.random.RandomState(1).rand(3, 4) + 0.5,)),
    (gram_schmidt, (np.random.RandomState(2).rand(3, 4),)),
    (columns_standardised, (np.random.RandomState(3).rand(5, 3),)),
    (allen_cahn, (np.random.RandomState(4).rand(8), 0.1)),
    (reshaped_then_written, (np.array([0.3, -0.2, 0.5, 0.1]),)),
    (transposed_then_scaled, (np.array([[0.3, -0.2], [0.5, 0.1], [0.7, 0.4]]),)),
    (raveled_then_written_in_place, (np.array([[0.3, -0.2], [0.5, 0.1]]),)),
    (slice_then_whole_scaled, (np.array([0.3, -0.2, 0.5, 0.1]),)),
    (read_in_a_loop_written_after, (np.array([0.3, -0.2, 0.5, 0.1, 0.9]),)),
]


@pytest.mark.parametrize("f, args", RESIDUAL_PROGRAMS,
                         ids=[f.__name__ for f, _ in RESIDUAL_PROGRAMS])
def test_a_saved_view_written_after_is_saved_as_it_was(f, args):
    check_grads(f, args, order=2, modes=("rev", "fwd"))


def test_the_issue_s_numbers():
    a = np.array([0.5, 1.2, 0.8])
    np.testing.assert_allclose(wengert.grad(sliced_then_written)(a),
                               [np.cos(0.5), np.cos(1.2), 0.0])
    A = np.arange(1.0, 7.0).reshape(2, 3) / 3
    # d/dA00 of sum(B) with B[0] = A[0] * A00: sum(A[0]) + A00
    assert wengert.grad(row_read_then_row_written)(A)[0, 0] == pytest.approx(
        A[0].sum() + A[0, 0])


# ------------------------------------------------------- masks of varying count


def reflect_high(x0, v0, steps):
    x = x0.copy()
    v = v0.copy()
    for _ in range(steps):
        x += 0.05 * v
        hi = x > 1.0
        x[hi] = 2.0 - x[hi]
        v[hi] *= -1.0
    return np.sum(x ** 2) + 0.5 * np.sum(v ** 2)


def reflect_both(x0, v0, steps):
    x = x0.copy()
    v = v0.copy()
    for _ in range(steps):
        x = x + 0.1 * v
        lo = np.nonzero(x < 0.0)[0]
        x[lo] = -x[lo]
        v[lo] = -v[lo]
        hi = np.where(x > 1.0)
        x[hi] = 2.0 - x[hi]
        v[hi] *= -1.0
    return np.sum(x * v) + np.sum(x ** 3)


def clipped_in_place(x0, steps):
    x = x0 * 1.0
    for _ in range(steps):
        x *= 1.3
        x[x > 1.0] -= 0.5
    return np.sum(np.sin(x))


@pytest.mark.parametrize("seed", range(6))
def test_masks_picking_a_different_number_of_entries_each_step(seed):
    rs = np.random.RandomState(seed)
    x0, v0 = rs.uniform(0.1, 0.9, 5), 3.0 * rs.normal(size=5)
    for steps in (0, 1, 3, 7):
        check_grads(reflect_high, (x0, v0, steps), argnums=(0, 1), order=2,
                    modes=("rev", "fwd"))
        check_grads(reflect_both, (x0, v0, steps), argnums=(0, 1), order=2,
                    modes=("rev", "fwd"))
        check_grads(clipped_in_place, (x0, steps), order=2, modes=("rev", "fwd"))


# ------------------------------------------- the primal's side effects under each transform


def scaled_in_place(a, x):
    y = np.sin(a)
    a *= x
    a += 1.0
    return np.sum(a * y)


def entry_set(a, x):
    a[0] = x
    return np.sum(a ** 2)


def tail_scaled(a, x):
    a[1:] *= x
    return np.sum(a ** 2)


def squared_in_place(a, x):
    a *= a
    return np.sum(a * x)


def written_through_asarray(a, x):
    b = np.asarray(a)
    b[1:] += x * b[:-1]
    return np.sum(b * b)


def scaled_through_a_view(a, x):
    b = np.asarray(a)
    b[:] *= np.exp(0.3 * x)
    return np.sum(b * b)


@pytest.mark.parametrize("f", [scaled_in_place, entry_set, tail_scaled, squared_in_place,
                               written_through_asarray, scaled_through_a_view])
def test_an_argument_changed_in_place_is_changed_under_every_transform(f):
    a0 = np.array([1.0, 2.0, 3.0, 4.0])
    expected = a0.copy()
    f(expected, 0.7)
    runs = {
        "grad": lambda a: wengert.grad(f, argnums=(0, 1))(a, 0.7),
        "value_and_grad": lambda a: wengert.value_and_grad(f, argnums=1)(a, 0.7),
        "vjp": lambda a: wengert.vjp(f, a, 0.7)[1](1.0),
        "jvp": lambda a: wengert.jvp(f, (a, 0.7), (np.ones(4), 1.0)),
        "hessian": lambda a: wengert.hessian(f, argnums=1)(a, 0.7),
    }
    for name, run in runs.items():
        a = a0.copy()
        run(a)
        np.testing.assert_allclose(a, expected, err_msg=name)
    # (through np.asarray, reverse over reverse refuses: the gradient's IR reads the
    # argument's structure after the write through its view)
    order = 1 if "asarray" in inspect.getsource(f) else 2
    check_grads(lambda a, x: f(a.copy(), x), (a0, 0.7), argnums=(0, 1), order=order,
                modes=("rev", "fwd"))


# --------------------------------------- in-place operators on arrays other names hold


def kept_in_a_history(x):
    buf = x * 1.0
    history = [buf]
    history[0] *= 2.0
    return np.sum(buf * 5.0)


def scaled_through_enumerate(x):
    params = [x * 1.0, x * 2.0]
    for _, p in enumerate(params):
        p *= 0.5
    return np.sum(params[0]) + 3.0 * np.sum(params[1])


def stepped_through_zip(x):
    params = [x * 1.0, x * 2.0]
    grads = [x * x, x]
    for p, g in zip(params, grads):
        p -= 0.1 * g
    return np.sum(params[0]) + 3.0 * np.sum(params[1])


def scaled_through_a_loop(x):
    params = [x * 1.0, x * 2.0]
    for p in params:
        p *= 0.5
    return np.sum(params[0]) + 3.0 * np.sum(params[1])


@pytest.mark.parametrize("f", [kept_in_a_history, scaled_through_enumerate,
                               stepped_through_zip, scaled_through_a_loop])
def test_both_modes_refuse_an_in_place_change_of_an_array_another_name_holds(f):
    x = np.array([1.0, 2.0])
    for run in (lambda: wengert.grad(f)(x),
                lambda: wengert.jvp(f, (x,), (np.ones(2),))):
        with pytest.raises(wengert.NonDifferentiableError) as e:
            run()
        assert e.value.loc is not None and e.value.loc.filename == __file__
        assert "=" in e.value.loc.line_text()


def written_back(x):
    history = [x * 1.0]
    history[0] *= 2.0
    return np.sum(history[0] * 5.0)


def test_an_item_changed_and_written_back_alone_is_differentiated_forward():
    x = np.array([1.0, 2.0])
    _, t = wengert.jvp(written_back, (x,), (np.array([1.0, 0.5]),))
    assert t == pytest.approx(15.0)


# ------------------------------------- a new array whose tangent a rule passed through


def _added_zero_then_written(x, y):
    b = y + 0.0
    hi = np.flatnonzero(x > 0.5)
    b[hi] *= y[hi] / (1.5 + x[hi] ** 2)
    return np.sum(b * x) + np.sum(np.cos(y))


def _zero_added_then_written(x, y):
    b = 0.0 + y
    b[0] = x[1] * b[1]
    return np.sum(b * y)


def _minus_zero_then_masked(x, y):
    b = y - 0.0
    b[y > 0.3] += x[y > 0.3]
    return np.sum(b ** 2 * y)


def _list_plus_nothing_then_written(x, ys):
    b = ys + []
    b[0] = x * b[1]
    return b[0] * ys[0] + b[1]


@pytest.mark.parametrize("f", [_added_zero_then_written, _zero_added_then_written,
                               _minus_zero_then_masked])
def test_a_new_array_whose_tangent_a_rule_passed_through_is_written_alone(f):
    # (forward mode wrote into the argument's tangent as well: ``b_dot`` was ``y_dot``)
    x = np.array([0.3, 0.7, 0.9, 0.1])
    y = np.array([0.1, 0.5, 0.15, 0.8])
    check_grads(f, (x, y), argnums=(0, 1), order=2, modes=("rev", "fwd"))


def test_a_new_list_whose_tangent_a_rule_passed_through_is_written_alone():
    check_grads(_list_plus_nothing_then_written, (0.7, [0.3, 1.2]), argnums=(0, 1),
                modes=("rev", "fwd"))


def _divided_then_written(x, d):
    y = x / d
    y[1] *= 2.0
    return np.sum(y ** 2)


def _root_then_clipped(x):
    y = np.sqrt(x)
    y[y > 1.0] = 1.0
    return np.sum(y * x)


def _transposed_row_read_after_a_write(x, y, c):
    a = x + 0.0
    v = a.T[0]
    a[::-1] += c * a
    return np.sum(a * y) + np.sum(v ** 2)


@pytest.mark.parametrize("f, args", [
    (_divided_then_written, (np.array([0.5, 1.7, 0.9]), 1.3)),
    (_root_then_clipped, (np.array([0.5, 1.7, 0.9]),)),
])
def test_a_rule_s_result_written_after_keeps_the_value_its_derivative_reads(f, args):
    # (the pullback of ``x / d`` read ``y`` after ``y[1] *= 2.0`` changed it)
    check_grads(f, args, argnums=tuple(range(len(args))), order=2, modes=("rev", "fwd"))


def test_a_row_of_a_transpose_read_after_a_write_is_refused():
    x = np.arange(9.0).reshape(3, 3) / 10
    with pytest.raises(wengert.NonDifferentiableError, match="shares its memory") as e:
        wengert.grad(_transposed_row_read_after_a_write)(x, x + 1.0, 0.3)
    assert e.value.loc is not None and e.value.loc.filename == __file__


def _copied_by_adding_zero_then_source_written(x, y, c):
    a = x + 0.0
    hi = np.nonzero(x * c > 0.3)[0]
    x[hi] /= 1.5 + y[hi] ** 2
    return np.sum(a ** 2) + np.sum(x)


def _entry_of_the_argument_halved(x, y, c):
    a = x + 0.0
    x[0] /= 2.0
    return np.sum(a ** 2) + np.sum(x * y)


@pytest.mark.parametrize("f", [_copied_by_adding_zero_then_source_written,
                               _entry_of_the_argument_halved])
def test_an_argument_written_after_a_new_array_took_its_tangent(f):
    x, y, u = np.array([0.9, 0.2, 1.5]), np.array([0.1, 0.4, 0.3]), np.array([1.0, 2.0, 3.0])
    given = u.copy()
    _, t = wengert.jvp(f, (x.copy(), y, 0.7), (given, np.zeros(3), 0.0))
    np.testing.assert_array_equal(given, u)  # (the caller's tangent is not written into)
    h = 1e-6
    fd = (f(x + h * u, y, 0.7) - f(x - h * u, y, 0.7)) / (2 * h)
    assert t == pytest.approx(fd, rel=1e-6)
    check_grads(lambda x, y: f(x.copy(), y, 0.7), (x, y), argnums=(0, 1), order=2,
                modes=("rev", "fwd"))
