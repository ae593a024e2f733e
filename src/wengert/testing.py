"""Finite-difference checks of derivatives.

:func:`numerical_jvp` is the oracle: central differences on nested structures.
:func:`check_rule` checks one registered rule against it, in both modes:

(a) the values returned by the ``vjp`` and ``jvp`` rules equal ``fn(*args)``;
(b) the ``jvp`` differential agrees with :func:`numerical_jvp` in random directions;
(c) the ``vjp`` pullback is the transpose of the differential:
    ``<v, J u> == <J^T v, u>`` for random ``u`` and ``v`` (this checks reverse mode
    against forward mode, so together with (b) against finite differences);
(d) both are linear, and give the same answer for a batch of tangents/cotangents
    stacked on a leading axis as for each one on its own (batched forward mode and
    many cotangents at once);
(e) tangents and adjoints have the structure and shapes of the values they belong to.

Any failure raises :class:`AssertionError` naming the function, the arguments and
the first entry that differs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from wengert import tangents as tree
from wengert.rules import registry

__all__ = ["check_rule", "numerical_jvp"]


def numerical_jvp(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    tangents: tuple[Any, ...],
    eps: float = 1e-6,
) -> Any:
    """``J_f(args) @ tangents`` by central differences, on nested structures.

    ``tangents`` holds one tangent per argument (``None`` for an argument that is not
    perturbed, such as an int).  The result has the tangent structure of ``f``'s
    output: ``None`` at its non-differentiable leaves.  Arguments are deep-copied
    before each call, so ``f`` may mutate them (in-place operators do).
    """
    args = tuple(args)
    tangents = tuple(tangents)
    if len(args) != len(tangents):
        raise ValueError(f"numerical_jvp: {len(args)} arguments but {len(tangents)} tangents")
    plus = f(*_perturb(args, tangents, eps))
    minus = f(*_perturb(args, tangents, -eps))
    leaves_plus, _ = tree.flatten(plus)
    leaves_minus, _ = tree.flatten(minus)
    if len(leaves_plus) != len(leaves_minus):
        raise ValueError("numerical_jvp: the output changed structure under a small perturbation")
    # The tangent structure of the output: zeros at its leaves, None at its constants.
    _, tangent_def = tree.flatten(tree.zeros_like(plus))
    diffs = [(p - m) / (2.0 * eps) for p, m in zip(leaves_plus, leaves_minus, strict=True)]
    return tree.unflatten(tangent_def, diffs)


def _perturb(args: tuple[Any, ...], ts: tuple[Any, ...], h: float) -> tuple[Any, ...]:
    """``args + h * ts`` leaf by leaf, on fresh copies of the arguments."""
    pairs = zip(args, ts, strict=True)
    return tuple(tree.add(copy.deepcopy(a), tree.scale(t, h)) for a, t in pairs)


def check_rule(
    fn: Callable[..., Any],
    *args: Any,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
    eps: float = 1e-6,
    directions: int = 2,
    batch: int = 3,
) -> None:
    """Check the registered ``vjp`` and ``jvp`` rules of ``fn`` at ``args``.

    ``directions`` random tangents are compared with finite differences (step
    ``eps``) and used for the dot-product test; ``batch`` is the size of the
    stacked batch used to test batched tangents and cotangents (0 skips it).
    Raises :class:`AssertionError` describing the first disagreement.
    """
    rule = registry.lookup(fn)
    name = _name(fn)
    call = f"{name}{_format_args(args)}"
    if rule is None:
        raise AssertionError(f"{name} has no registered rule")
    if rule.nondifferentiable:
        raise AssertionError(f"{name} is registered as non-differentiable; nothing to check")
    if rule.vjp is None or rule.jvp is None:
        missing = "vjp" if rule.vjp is None else "jvp"
        raise AssertionError(f"{name} has no {missing} rule")
    rng = numpy.random.default_rng(seed)
    diff_args = [tree.is_differentiable(a) for a in args]
    if not any(diff_args):
        raise AssertionError(f"{call}: no argument is differentiable, so there is nothing to check")

    expected = fn(*copy.deepcopy(args))
    value, pullback = rule.vjp(*copy.deepcopy(args))
    _assert_same_value(value, expected, f"{call}: the vjp rule's value")
    value, differential = rule.jvp(*copy.deepcopy(args))
    _assert_same_value(value, expected, f"{call}: the jvp rule's value")

    def jvp_of(us: Sequence[Any], batch_shape: tuple[int, ...] = ()) -> Any:
        out = differential(*us)
        try:
            return tree.materialize(expected, out, batch_shape)
        except ValueError as e:
            raise AssertionError(f"{call}: the jvp differential returned a tangent that does "
                                 f"not fit the result {expected!r}: {e}") from None

    def vjp_of(v: Any, batch_shape: tuple[int, ...] = ()) -> list[Any]:
        adjoints = pullback(v)
        if not isinstance(adjoints, tuple) or len(adjoints) != len(args):
            raise AssertionError(f"{call}: the pullback must return a tuple of {len(args)} "
                                 f"adjoints (one per positional argument), got {adjoints!r}")
        out = []
        for i, (arg, adj) in enumerate(zip(args, adjoints, strict=True)):
            if not diff_args[i]:
                # The adjoint of an int (or other constant) is discarded by the caller.
                out.append(None)
                continue
            try:
                out.append(tree.materialize(arg, adj, batch_shape))
            except ValueError as e:
                raise AssertionError(f"{call}: the adjoint of argument {i} does not fit "
                                     f"{arg!r}: {e}") from None
        return out

    def random_args() -> list[Any]:
        pairs = zip(args, diff_args, strict=True)
        return [tree.random_like(a, rng) if d else None for a, d in pairs]

    us = [random_args() for _ in range(max(directions, 2))]
    vs = [tree.random_like(expected, rng) for _ in range(max(directions, 2))]
    jus = [jvp_of(u) for u in us]
    adjs = [vjp_of(v) for v in vs]

    # (d) linearity first, so that a non-linear differential is reported as such:
    # J(2 u0 - u1/2) == 2 J u0 - J u1 / 2 (coefficients not summing to 1 also catch
    # an affine offset), and the same for the pullback.
    u_mix = [_combine(a, b) for a, b in zip(us[0], us[1], strict=True)]
    _assert_close(jvp_of(u_mix), _combine(jus[0], jus[1]), rtol, atol,
                  f"{call}: the jvp differential is not linear")
    adj_mix = vjp_of(_combine(vs[0], vs[1]))
    for i in range(len(args)):
        _assert_close(adj_mix[i], _combine(adjs[0][i], adjs[1][i]), rtol, atol,
                      f"{call}: the pullback is not linear (argument {i})")

    # (b) forward mode against finite differences.
    for u, ju in zip(us[:directions], jus, strict=False):
        numeric = tree.materialize(expected, numerical_jvp(fn, args, tuple(u), eps))
        _assert_close(ju, numeric, rtol, atol,
                      f"{call}: the jvp disagrees with finite differences in direction {u!r}")

    # (c) reverse mode is the transpose of forward mode.
    for u, ju, v, adj in zip(us[:directions], jus, vs, adjs, strict=False):
        lhs = tree.vdot(v, ju)
        rhs = sum(tree.vdot(a, ui) for a, ui in zip(adj, u, strict=True))
        if not _scalars_close(lhs, rhs, rtol, atol):
            raise AssertionError(f"{call}: the vjp is not the transpose of the jvp: "
                                 f"<v, J u> = {lhs!r} but <J^T v, u> = {rhs!r} "
                                 f"(u = {u!r}, v = {v!r}, J^T v = {adj!r})")

    if batch:
        _check_batched(call, args, diff_args, expected, rng, batch, jvp_of, vjp_of, rtol, atol)


def _check_batched(
    call: str,
    args: tuple[Any, ...],
    diff_args: list[bool],
    expected: Any,
    rng: numpy.random.Generator,
    size: int,
    jvp_of: Callable[..., Any],
    vjp_of: Callable[..., Any],
    rtol: float,
    atol: float,
) -> None:
    """A stack of ``size`` tangents (cotangents) must give the stack of their images."""
    us = [[tree.random_like(a, rng) if d else None for a, d in zip(args, diff_args, strict=True)]
          for _ in range(size)]
    stacked_u = [_stack(args[i], [u[i] for u in us]) if diff_args[i] else None
                 for i in range(len(args))]
    got = jvp_of(stacked_u, (size,))
    want = _stack(expected, [jvp_of(u) for u in us])
    _assert_close(got, want, rtol, atol,
                  f"{call}: the jvp of a batch of {size} tangents differs from the batch of "
                  f"single jvps")

    vs = [tree.random_like(expected, rng) for _ in range(size)]
    got_adj = vjp_of(_stack(expected, vs), (size,))
    singles = [vjp_of(v) for v in vs]
    for i in range(len(args)):
        if diff_args[i]:
            want_adj = _stack(args[i], [s[i] for s in singles])
            _assert_close(got_adj[i], want_adj, rtol, atol,
                          f"{call}: the pullback of a batch of {size} cotangents differs from "
                          f"the batch of single pullbacks (argument {i})")


def _stack(like: Any, ts: list[Any]) -> Any:
    """Stack tangents of ``like`` leaf by leaf on a new leading axis."""
    flat = [tree.flatten(tree.materialize(like, t))[0] for t in ts]
    _, tangent_def = tree.flatten(tree.zeros_like(like))
    leaves = [numpy.stack([f[j] for f in flat]) for j in range(tangent_def.num_leaves)]
    return tree.unflatten(tangent_def, leaves)


def _combine(a: Any, b: Any) -> Any:
    """``2 a - b / 2`` on tangents (``None`` is zero)."""
    return tree.add(tree.scale(a, 2.0), tree.scale(b, -0.5))


def _scalars_close(x: float, y: float, rtol: float, atol: float) -> bool:
    return abs(x - y) <= atol + rtol * max(abs(x), abs(y))


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float, message: str) -> None:
    """Leafwise ``allclose`` of two tangents with the same structure (``None`` is zero)."""
    if actual is None and expected is None:
        return
    if actual is None or expected is None:
        actual_l = [] if actual is None else tree.flatten(actual)[0]
        expected_l = [] if expected is None else tree.flatten(expected)[0]
        if all(numpy.all(numpy.asarray(x) == 0) for x in actual_l + expected_l):
            return
        raise AssertionError(f"{message}: got {actual!r}, expected {expected!r}")
    actual_l, _ = tree.flatten(actual)
    expected_l, _ = tree.flatten(expected)
    if len(actual_l) != len(expected_l):
        raise AssertionError(f"{message}: got {actual!r}, expected {expected!r} "
                             f"(different structures)")
    for j, (x, y) in enumerate(zip(actual_l, expected_l, strict=True)):
        if numpy.shape(x) != numpy.shape(y):
            raise AssertionError(f"{message}: leaf {j} has shape {numpy.shape(x)}, "
                                 f"expected {numpy.shape(y)}")
        if not numpy.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{message}: leaf {j} is {x!r}, expected {y!r} "
                                 f"(whole value {actual!r} vs {expected!r})")


def _assert_same_value(actual: Any, expected: Any, message: str) -> None:
    """The rule's value must be the primitive's value (same structure, constants, leaves)."""
    actual_l, actual_def = tree.flatten(actual)
    expected_l, expected_def = tree.flatten(expected)
    if len(actual_l) != len(expected_l) or not _same_consts(actual_def, expected_def):
        raise AssertionError(f"{message} {actual!r} is not the function's value {expected!r}")
    for x, y in zip(actual_l, expected_l, strict=True):
        if numpy.shape(x) != numpy.shape(y) or not numpy.allclose(
            x, y, rtol=1e-12, atol=1e-300, equal_nan=True
        ):
            raise AssertionError(f"{message} {actual!r} is not the function's value "
                                 f"{expected!r}")


def _same_consts(a: tree.TreeDef, b: tree.TreeDef) -> bool:
    """Whether two tree definitions have the same shape and the same constant leaves."""
    if a.kind != b.kind or len(a.children) != len(b.children):
        return False
    if a.kind == "const":
        if isinstance(a.meta, numpy.ndarray) or isinstance(b.meta, numpy.ndarray):
            return bool(numpy.array_equal(a.meta, b.meta))
        return bool(a.meta == b.meta)
    return all(_same_consts(x, y) for x, y in zip(a.children, b.children, strict=True))


def _name(fn: Any) -> str:
    # C implementations live in private modules (_operator.mul is operator.mul).
    module = (getattr(fn, "__module__", None) or "").lstrip("_")
    qualname = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{qualname}" if module and module != "builtins" else qualname


def _format_args(args: tuple[Any, ...]) -> str:
    text = ", ".join(repr(a) for a in args)
    if len(text) > 200:
        text = text[:200] + "..."
    return f"({text})"
