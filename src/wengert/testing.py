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

A result that is an iterator (``zip``, ``enumerate``) is checked item by item: drained into
a list, as its tangents and adjoints are lists of its items'.

Any failure raises :class:`AssertionError` naming the function, the arguments and
the first entry that differs.

:func:`check_grads` checks a whole *transformed* function the same way: the
reverse-mode ``wengert.vjp`` (and, where it exists, the forward-mode
``wengert.jvp``) of an arbitrary Python function against central differences.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy

from wengert import tangents as tree
from wengert.diagnostics import describe
from wengert.rules import registry

__all__ = ["check_grads", "check_rule", "numerical_jvp"]


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
    # A result that is an iterator (``zip``, ``enumerate``, ``iter``, ``reversed``) is
    # consumed lazily by the program, so it has no value to compare as it stands. Its
    # tangent and adjoint are, by the rules' convention (rules/sequences.py), the lists of
    # its items' tangents and adjoints in iteration order: so the check compares its items,
    # the function's, the rules' and the finite differences' iterators each drained into a
    # list (the rules must still return an iterator where the function does).
    lazy = isinstance(expected, Iterator)
    primal = _listing(fn) if lazy else fn
    if lazy:
        expected = list(expected)

    value, pullback = rule.vjp(*copy.deepcopy(args))
    _assert_same_value(_drained(value, lazy, f"{call}: the vjp rule's value"), expected,
                       f"{call}: the vjp rule's value")
    value, differential = rule.jvp(*copy.deepcopy(args))
    _assert_same_value(_drained(value, lazy, f"{call}: the jvp rule's value"), expected,
                       f"{call}: the jvp rule's value")

    # An impure primitive may update an argument in place (``a += b`` on a list,
    # ``runtime.push``), and its differential that argument's tangent with it, as forward
    # mode mirrors writes: so each call of its differential or pullback gets fresh copies of
    # the tangents or cotangents, as each call of the function gets fresh arguments. A pure
    # primitive's rules get them as they are (they may not write them).
    fresh = (lambda t: t) if registry.is_pure(fn) else copy.deepcopy

    def jvp_of(us: Sequence[Any], batch_shape: tuple[int, ...] = ()) -> Any:
        out = differential(*fresh(us))
        try:
            return tree.materialize(expected, out, batch_shape)
        except ValueError as e:
            raise AssertionError(f"{call}: the jvp differential returned a tangent that does "
                                 f"not fit the result {expected!r}: {e}") from None

    def vjp_of(v: Any, batch_shape: tuple[int, ...] = ()) -> list[Any]:
        adjoints = pullback(fresh(v))
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
        numeric = tree.materialize(expected, numerical_jvp(primal, args, tuple(u), eps))
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


def _listing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its iterator result drained into a list."""
    return lambda *a: list(fn(*a))


def _drained(value: Any, lazy: bool, message: str) -> Any:
    """A rule's value, its items drained into a list where the function returns an
    iterator (``lazy``). A rule whose value is an iterator where the function's is not, or
    the reverse, is wrong."""
    if isinstance(value, Iterator) != lazy:
        what = "is not an iterator, as the function's value is" if lazy else \
            "is an iterator, as the function's value is not"
        raise AssertionError(f"{message} {value!r} {what}")
    return list(value) if lazy else value


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
    # Rounding only: a value made by generated code that adds the same terms in another
    # order (a pullback's output, differentiated again) may differ from it by a few ulps of
    # the largest number in the value (``x - x`` summed two ways is 0.0 or 5.6e-17).
    scale = max((float(numpy.max(numpy.abs(y))) for y in expected_l
                 if numpy.size(y) and numpy.issubdtype(numpy.asarray(y).dtype, numpy.number)),
                default=0.0)
    atol = max(1e-300, 1e-14 * scale) if numpy.isfinite(scale) else 1e-300
    for x, y in zip(actual_l, expected_l, strict=True):
        if numpy.shape(x) != numpy.shape(y) or not numpy.allclose(
            x, y, rtol=1e-12, atol=atol, equal_nan=True
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
    qualname = describe(fn)
    return f"{module}.{qualname}" if module and module != "builtins" else qualname


def _format_args(args: tuple[Any, ...]) -> str:
    text = ", ".join(repr(a) for a in args)
    if len(text) > 200:
        text = text[:200] + "..."
    return f"({text})"


# --------------------------------------------------------------------------
# check_grads: whole transformed functions against finite differences
# --------------------------------------------------------------------------


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("rev",),
    argnums: int | Sequence[int] | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Check wengert's derivatives of ``f`` at ``args`` against central differences.

    ``"rev"`` mode calls ``wengert.vjp(f, *args)``: the value must be ``f(*args)``,
    the pullback must return one cotangent per argument with the structure and
    shapes of that argument, and for random ``u`` and ``v`` the dot-product test
    ``sum_i <pullback(v)[i], u_i> == <v, J u>`` must hold with ``J u`` computed by
    :func:`numerical_jvp` (two random directions).  ``"fwd"`` mode compares
    ``wengert.jvp(f, args, u)`` with :func:`numerical_jvp`.  ``argnums`` picks the
    arguments that are perturbed (default: every argument with a tangent, i.e.
    not ints, bools or strings).  ``order >= 2`` also checks, recursively, the
    function ``a -> pullback of f at a applied to a fixed v`` to ``order - 1``.

    Arguments are deep-copied before every call, so ``f`` may mutate them.
    Raises :class:`AssertionError` naming ``f``, the arguments, the mode and the
    first entry that differs.
    """
    from wengert import api as wengert  # here: the package imports this module

    args = tuple(args)
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    for mode in modes:
        if mode not in ("rev", "fwd"):
            raise ValueError(f"check_grads: unknown mode {mode!r}: expected 'rev' or 'fwd'")
    if argnums is None:
        wrt = [i for i, a in enumerate(args) if tree.is_differentiable(a)]
    else:
        wrt = [argnums] if isinstance(argnums, int) else list(argnums)
        for i in wrt:
            if not -len(args) <= i < len(args):
                raise ValueError(f"check_grads: argnums {i} is out of range for "
                                 f"{len(args)} arguments")
        wrt = sorted({i % len(args) for i in wrt})
    call = f"{_name(f)}{_format_args(args)}"
    rng = numpy.random.default_rng(seed)

    def fresh() -> tuple[Any, ...]:
        return copy.deepcopy(args)

    expected = f(*fresh())

    def random_tangents() -> tuple[Any, ...]:
        return tuple(tree.random_like(a, rng) if i in wrt else None
                     for i, a in enumerate(args))

    def numeric(u: tuple[Any, ...]) -> Any:
        return numerical_jvp(f, fresh(), u, eps)

    for mode in modes:
        where = f"{call} [mode {mode!r}]"
        if mode == "rev":
            _check_rev(wengert, f, fresh, expected, wrt, random_tangents, numeric, rng,
                       where, rtol, atol)
        else:
            _check_fwd(wengert, f, fresh, expected, random_tangents, numeric, where,
                       rtol, atol)

    if order >= 2:
        _check_hessian(wengert, f, fresh, expected, random_tangents, eps, call, rtol, atol)
        # The derivative of the pullback (in a fixed direction v) is a second
        # derivative of f: check it like any other function.
        v = tree.random_like(expected, rng)

        pulled_back = _pulled_back(wengert, f, v, len(args))
        pulled_back.__qualname__ = f"pullback_of_{getattr(f, '__name__', 'f')}"
        check_grads(pulled_back, args, order=order - 1, modes=modes, argnums=argnums,
                    eps=eps, rtol=rtol, atol=atol, seed=seed + 1)


#: ``wengert.vjp``, once :func:`check_grads` has imported it.
_vjp: Any = None


def _pulled_back(wengert: Any, f: Callable[..., Any], v: Any, nargs: int
                 ) -> Callable[..., Any]:
    """``lambda *a: vjp(f, *a)[1](v)``, spelled with ``nargs`` plain parameters so that
    wengert can differentiate it again (a ``vjp`` of ``*a`` has no length to unpack)."""
    global _vjp
    _vjp = wengert.vjp  # a global: what the functions below call is known when lowered

    def pulled_back1(a: Any) -> Any:
        return _vjp(f, a)[1](v)

    def pulled_back2(a: Any, b: Any) -> Any:
        return _vjp(f, a, b)[1](v)

    def pulled_back3(a: Any, b: Any, c: Any) -> Any:
        return _vjp(f, a, b, c)[1](v)

    def pulled_back4(a: Any, b: Any, c: Any, d: Any) -> Any:
        return _vjp(f, a, b, c, d)[1](v)

    def pulled_back5(a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
        return _vjp(f, a, b, c, d, e)[1](v)

    def pulled_back6(a: Any, b: Any, c: Any, d: Any, e: Any, g: Any) -> Any:
        return _vjp(f, a, b, c, d, e, g)[1](v)

    def pulled_back7(a: Any, b: Any, c: Any, d: Any, e: Any, g: Any, h: Any) -> Any:
        return _vjp(f, a, b, c, d, e, g, h)[1](v)

    def pulled_back8(a: Any, b: Any, c: Any, d: Any, e: Any, g: Any, h: Any, k: Any) -> Any:
        return _vjp(f, a, b, c, d, e, g, h, k)[1](v)

    def pulled_back(*primals: Any) -> Any:
        _, pullback = wengert.vjp(f, *primals)
        return pullback(v)

    return {1: pulled_back1, 2: pulled_back2, 3: pulled_back3, 4: pulled_back4,
            5: pulled_back5, 6: pulled_back6, 7: pulled_back7,
            8: pulled_back8}.get(nargs, pulled_back)


def _check_rev(
    wengert: Any,
    f: Callable[..., Any],
    fresh: Callable[[], tuple[Any, ...]],
    expected: Any,
    wrt: list[int],
    random_tangents: Callable[[], tuple[Any, ...]],
    numeric: Callable[[tuple[Any, ...]], Any],
    rng: numpy.random.Generator,
    where: str,
    rtol: float,
    atol: float,
) -> None:
    """The reverse-mode half of :func:`check_grads`."""
    args = fresh()
    out, pullback = wengert.vjp(f, *fresh())
    _assert_same_value(out, expected, f"{where}: the value returned by wengert.vjp")
    for _ in range(2):
        v = tree.random_like(expected, rng)
        cotangents = pullback(v)
        _check_cotangents(args, cotangents, where)
        u = random_tangents()
        ju = numeric(u)
        rhs = tree.vdot(v, ju)
        terms = [tree.vdot(cotangents[i], u[i]) for i in wrt]
        lhs = float(sum(terms))
        # Scale of the sum before cancellation, so that a sum of large terms that
        # nearly cancel is not held to an absolute tolerance it cannot meet.
        magnitude = sum(_abs_vdot(tree.materialize(args[i], cotangents[i]), u[i])
                        for i in wrt) + _abs_vdot(v, ju)
        if abs(lhs - rhs) <= atol + rtol * max(abs(lhs), abs(rhs), magnitude):
            continue
        detail = _first_bad_entry(fresh, numeric, cotangents, v, wrt, rtol, atol)
        raise AssertionError(
            f"{where}: the pullback disagrees with finite differences: "
            f"sum_i <pullback(v)[i], u_i> = {lhs!r} but <v, J u> = {rhs!r} "
            f"(v = {v!r}, pullback(v) = {cotangents!r}, u = {u!r}); {detail}"
        )


def _check_cotangents(args: tuple[Any, ...], cotangents: Any, where: str) -> None:
    """One cotangent per argument, each of the structure and shapes of its argument."""
    if not isinstance(cotangents, tuple) or len(cotangents) != len(args):
        raise AssertionError(f"{where}: the pullback must return a tuple of {len(args)} "
                             f"cotangents (one per argument), got {cotangents!r}")
    for i, (arg, cot) in enumerate(zip(args, cotangents, strict=True)):
        if not tree.is_differentiable(arg):
            if tree._kind(arg) == "const" and cot is not None:
                raise AssertionError(f"{where}: argument {i} ({arg!r}) has no tangent, so its "
                                     f"cotangent must be None, got {cot!r}")
            continue
        if cot is None:
            raise AssertionError(f"{where}: the cotangent of argument {i} is None; expected "
                                 f"a value shaped like {arg!r} (zeros where there is no "
                                 f"dependence)")
        try:
            tree.materialize(arg, cot)
        except ValueError as e:
            raise AssertionError(f"{where}: the cotangent of argument {i} does not fit "
                                 f"{arg!r}: {e} (got {cot!r})") from None
        got, _ = tree.flatten(cot)
        want, _ = tree.flatten(arg)
        if len(got) != len(want):
            raise AssertionError(f"{where}: the cotangent of argument {i} has {len(got)} "
                                 f"differentiable leaves, expected {len(want)} like {arg!r} "
                                 f"(got {cot!r})")


def _abs_vdot(a: Any, b: Any) -> float:
    """``<|a|, |b|>``: the scale of ``vdot(a, b)`` before cancellation."""
    if a is None or b is None:
        return 0.0
    la, _ = tree.flatten(a)
    lb, _ = tree.flatten(b)
    if len(la) != len(lb):
        return 0.0
    total = 0.0
    for x, y in zip(la, lb, strict=True):
        if numpy.shape(x) == numpy.shape(y):
            total += float(numpy.sum(numpy.abs(numpy.multiply(x, y))))
    return total


def _first_bad_entry(
    fresh: Callable[[], tuple[Any, ...]],
    numeric: Callable[[tuple[Any, ...]], Any],
    cotangents: tuple[Any, ...],
    v: Any,
    wrt: list[int],
    rtol: float,
    atol: float,
    limit: int = 64,
) -> str:
    """Name the first cotangent entry that differs from ``<v, J e_j>`` (finite differences)."""
    args = fresh()
    checked = 0
    for i in wrt:
        leaves, treedef = tree.flatten(args[i])
        cot_leaves, _ = tree.flatten(tree.materialize(args[i], cotangents[i]))
        for j, leaf in enumerate(leaves):
            for index in numpy.ndindex(numpy.shape(leaf)):
                if checked >= limit:
                    return "no single entry among the first ones checked differs"
                checked += 1
                units = [numpy.zeros_like(numpy.asarray(x, dtype=float)) for x in leaves]
                units[j][index] = 1.0
                units = [u if numpy.ndim(x) else float(u) for u, x in zip(units, leaves,
                                                                          strict=True)]
                u = tuple(tree.unflatten(treedef, units) if k == i else None
                          for k in range(len(args)))
                want = tree.vdot(v, numeric(u))
                got = float(numpy.asarray(cot_leaves[j])[index])
                if not _scalars_close(got, want, rtol, atol):
                    position = f"[{', '.join(map(str, index))}]" if index else ""
                    return (f"first differing entry: argument {i}, leaf {j}{position}: "
                            f"the pullback gives {got!r}, finite differences give {want!r}")
    return "no single entry differs by more than the tolerance"


def _check_fwd(
    wengert: Any,
    f: Callable[..., Any],
    fresh: Callable[[], tuple[Any, ...]],
    expected: Any,
    random_tangents: Callable[[], tuple[Any, ...]],
    numeric: Callable[[tuple[Any, ...]], Any],
    where: str,
    rtol: float,
    atol: float,
) -> None:
    """The forward-mode half of :func:`check_grads`."""
    for _ in range(2):
        u = random_tangents()
        # Unperturbed differentiable arguments get zero tangents, as JAX expects.
        full = tuple(tree.zeros_like(a) if t is None else t for a, t in zip(fresh(), u,
                                                                             strict=True))
        out, tangent_out = wengert.jvp(f, fresh(), full)
        _assert_same_value(out, expected, f"{where}: the value returned by wengert.jvp")
        try:
            got = tree.materialize(expected, tangent_out)
        except ValueError as e:
            raise AssertionError(f"{where}: the output tangent does not fit the value "
                                 f"{expected!r}: {e} (got {tangent_out!r})") from None
        want = tree.materialize(expected, numeric(u))
        _assert_close(got, want, rtol, atol,
                      f"{where}: the jvp disagrees with finite differences in direction {u!r}")
    _check_jacfwd(wengert, f, fresh, expected, random_tangents, numeric, where, rtol, atol)


def _check_hessian(
    wengert: Any,
    f: Callable[..., Any],
    fresh: Callable[[], tuple[Any, ...]],
    expected: Any,
    random_tangents: Callable[[], tuple[Any, ...]],
    eps: float,
    where: str,
    rtol: float,
    atol: float,
) -> None:
    """``wengert.hessian`` (batched forward mode over the gradient) of a function of floats
    and float arrays to a number: ``H u`` must be the central difference of
    ``wengert.grad`` in the direction ``u``."""
    u = random_tangents()
    args = fresh()
    idx = tuple(i for i, t in enumerate(u) if t is not None)
    if not idx or not _is_real(expected) or numpy.ndim(expected) != 0 or \
            not all(_is_real(args[i]) for i in idx):
        return
    hess = wengert.hessian(f, argnums=idx)(*args)
    grad = wengert.grad(f, argnums=idx)

    def moved(s: float) -> tuple[Any, ...]:
        a = list(fresh())
        for i in idx:
            a[i] = a[i] + s * u[i]
        return tuple(a)

    plus, minus = grad(*moved(eps)), grad(*moved(-eps))
    for k, i in enumerate(idx):
        got = sum(numpy.tensordot(numpy.asarray(hess[k][m]), numpy.asarray(u[j]),
                                  axes=numpy.ndim(u[j])) for m, j in enumerate(idx))
        want = (numpy.asarray(plus[k]) - numpy.asarray(minus[k])) / (2 * eps)
        _assert_close(numpy.asarray(got), want, max(rtol, 1e-4), max(atol, 1e-5),
                      f"{where} [wengert.hessian]: row block {i} applied to {u!r} disagrees "
                      "with differences of wengert.grad")


def _is_real(x: Any) -> bool:
    return type(x) is float or isinstance(x, numpy.floating) or \
        isinstance(x, numpy.ndarray) and x.dtype.kind == "f"


def _check_jacfwd(
    wengert: Any,
    f: Callable[..., Any],
    fresh: Callable[[], tuple[Any, ...]],
    expected: Any,
    random_tangents: Callable[[], tuple[Any, ...]],
    numeric: Callable[[tuple[Any, ...]], Any],
    where: str,
    rtol: float,
    atol: float,
) -> None:
    """Batched forward mode (many tangents at once, what ``jacfwd`` and ``hessian`` run)
    for a function of floats and float arrays to a float or an array: the Jacobian it
    gives, applied to a random direction, must be the finite differences' ``J u``."""
    u = random_tangents()
    args = fresh()
    idx = tuple(i for i, t in enumerate(u) if t is not None)
    if not idx or not _is_real(expected) or not all(_is_real(args[i]) for i in idx):
        return
    jac = wengert.jacfwd(f, argnums=idx)(*args)
    got = sum(numpy.tensordot(numpy.asarray(jac[k]), numpy.asarray(u[i]), axes=numpy.ndim(u[i]))
              for k, i in enumerate(idx))
    want = tree.materialize(expected, numeric(u))
    _assert_close(numpy.asarray(got), numpy.asarray(want), rtol, atol,
                  f"{where}: batched forward mode (jacfwd) disagrees with finite differences "
                  f"in direction {u!r}")
