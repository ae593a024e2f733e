"""Random programs that take a derivative inside a function that is itself differentiated.

Each program ``f(w)`` makes a few values of ``w`` (a vector ``p``, floats ``q`` and ``c``,
a list ``cs``), defines the function a derivative is taken of (a global of ``(z, c)``
called with ``w`` or ``c``, a ``lambda`` closing over the locals, a nested ``def``, a
lambda calling a lambda, a lambda written in the operator's call) whose body is a small
random expression of NumPy or ``math`` functions, a tuple unpacking ``a, b = z``, a ``for``
loop over ``cs`` or a generator summed over it; then applies one or two of wengert's
operators to it (``grad``, ``value_and_grad``, ``jvp``, ``vjp`` and its pullback,
``jacfwd``, ``jacrev``, ``hessian``, ``hvp``, of one argument or of two by ``argnums``):
once, in a gradient-descent loop, handed to a global helper that descends, or in Newton
steps. What comes out is reduced to one float. ``f`` is checked by :func:`check_grads`
against central differences, in forward mode, in reverse mode, then to the second order
(derivatives of third and fourth order of what is written inside; a located refusal
counted apart). ``python tests/transforms/test_nested_random.py N SEED`` runs N of them
and counts the outcomes.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from random_programs import count_outcomes, load_function  # noqa: E402

import wengert  # noqa: E402
from wengert.testing import check_grads  # noqa: E402

PRELUDE = """import math

import numpy as np

import wengert


def descend(df, x):
    for _ in range({n}):
        x = x - 0.1 * df(x)
    return x


def descend_with(df, x, c):
    for _ in range({n}):
        x = x - 0.1 * df(x, c)
    return x
"""

#: Elementwise templates that read the main variable ``{x}`` (and ``{e}``, any expression).
READS = ["{fn}.sin({x} * {e})", "{x} * {e}", "{fn}.tanh({x} + {e})", "({x} - {e}) ** 2",
         "{fn}.exp(0.3 * {x}) * {e}", "{x} ** 3 * {e}", "{fn}.cos({x}) + {x} * {e}"]
CONSTANTS = ["0.5", "1.5", "0.25"]


@dataclasses.dataclass
class Inner:
    """A function a derivative is taken of: how it is named where it is used, the lines
    that define it (at module level, or in ``f``), its arguments' count (a global's second
    is ``c``), its argument's length (0: a float) and its result's (0: a float)."""

    ref: str
    module: list[str]
    local: list[str]
    nargs: int
    n: int
    out: int
    is_global: bool = False


def expression(rng: random.Random, leaves: list[str], fn: str, depth: int) -> str:
    """An elementwise expression of ``leaves`` (floats, or vectors of one length)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(leaves + CONSTANTS)
    kind = rng.choice(["+", "-", "*", "*", "sin", "tanh", "exp", "sq", "cube"])
    a = expression(rng, leaves, fn, depth - 1)
    if kind in "+-*":
        return f"({a} {kind} {expression(rng, leaves, fn, depth - 1)})"
    if kind == "exp":
        return f"{fn}.exp(0.3 * {a})"
    if kind in ("sin", "tanh"):
        return f"{fn}.{kind}({a})"
    return f"{a} ** {2 if kind == 'sq' else 3}"


def reads(rng: random.Random, x: str, leaves: list[str], fn: str) -> str:
    """An elementwise expression that reads ``x`` (so its shape is ``x``'s)."""
    e = expression(rng, leaves, fn, rng.randrange(0, 2))
    return rng.choice(READS).format(fn=fn, x=x, e=e)


def scalar_of(rng: random.Random, x: str, n: int, leaves: list[str], fn: str) -> str:
    """A float of ``x`` (a vector of length ``n``, or a float where ``n`` is 0)."""
    s = "np.sum({})" if n else "{}"
    first = s.format(reads(rng, x, leaves, fn))
    k = rng.randrange(3)
    if k == 0:
        return first
    if k == 1:
        scalars = [v for v in leaves if v not in ("p", "x", "z")] + CONSTANTS
        return f"{first} + {rng.choice(scalars)} * {s.format(f'{x} ** 2')}"
    return s.format(f"{reads(rng, x, leaves, fn)} * {reads(rng, x, leaves, fn)}")


def vector_of(rng: random.Random, x: str, n: int, leaves: list[str], fn: str
              ) -> tuple[str, int]:
    """A vector of ``x`` and its length: ``x``'s own, or two entries where ``x`` is a
    float."""
    if not n:
        return f"np.array([{reads(rng, x, leaves, fn)}, {reads(rng, x, leaves, fn)}])", 2
    e = reads(rng, x, leaves, fn)
    if rng.random() < 0.5:
        e = f"{e} + {rng.choice(leaves + CONSTANTS)} * {x}"
    return e, n


def body(rng: random.Random, n: int, out: bool, leaves: list[str], fn: str, ks: str,
         statements: bool, loops: bool) -> tuple[list[str], int]:
    """The lines of a body of ``z`` ending in ``return`` (one ``return`` line where
    ``statements`` is false), a float (``out`` false) or a vector, and its length; loops
    over ``ks`` (a ``for``, a generator) only where ``loops``."""
    if not statements:
        if not out and loops and rng.random() < 0.3:
            return [f"return sum(k * {scalar_of(rng, 'z', n, leaves + ['k'], fn)} "
                    f"for k in {ks})"], 0
        if out:
            e, m = vector_of(rng, "z", n, leaves, fn)
            return [f"return {e}"], m
        return [f"return {scalar_of(rng, 'z', n, leaves, fn)}"], 0
    kind = rng.choice(["return", "unpack", "unpack", "two"] + ["for", "for", "sum"] * loops)
    if kind == "unpack" and n:
        names = ["a", "b", "e"][:n]
        lines = [f"{', '.join(names)} = z"]
        ls = [v for v in leaves if v != "p"] + names
        if out:
            return lines + [f"return np.array([{reads(rng, 'a', ls, fn)}, "
                            f"{reads(rng, 'b', ls, fn)}])"], 2
        op = rng.choice(["+", "*"])
        return lines + [f"return {reads(rng, 'a', ls, fn)} {op} {reads(rng, 'b', ls, fn)}"], 0
    if kind == "for":
        if out:
            e, m = vector_of(rng, "z", n, leaves + ["k"], fn)
            start = "z * 0.0" if n else "np.zeros(2)"
        else:
            e, m = scalar_of(rng, "z", n, leaves + ["k"], fn), 0
            start = "0.0"
        return [f"s = {start}", f"for k in {ks}:", f"    s = s + k * {e}", "return s"], m
    if kind == "sum" and not out:
        return [f"return sum(k * {scalar_of(rng, 'z', n, leaves + ['k'], fn)} "
                f"for k in {ks})"], 0
    if kind == "two":
        lines = [f"u = {reads(rng, 'z', leaves, fn)}"]
        if out:
            e, m = vector_of(rng, "u", n, leaves + ["z"], fn)
            return lines + [f"return {e}"], m
        return lines + [f"return {scalar_of(rng, 'u', n, leaves + ['z'], fn)}"], 0
    return body(rng, n, out, leaves, fn, ks, False, loops)


def inner(rng: random.Random, name: str, n: int, out: bool, nargs: int, loops: bool = True
          ) -> Inner:
    """A function of ``z`` (a float where ``n`` is 0, else a vector of length ``n``), and of
    ``c`` where ``nargs`` is 2, in one of the spellings (without loops where not ``loops``:
    those a second derivative is taken of, whose derivatives to the fourth order the check
    compiles)."""
    fn = "math" if not n and rng.random() < 0.5 else "np"
    spelling = rng.choice(["global", "global", "lambda", "def", "def", "lambda2", "wrap",
                           "inline"])
    if spelling == "global":
        lines, m = body(rng, n, out, ["c"], fn, "[0.5, 1.5]", True, loops)
        module = [f"def {name.upper()}(z, c):"] + [f"    {line}" for line in lines]
        return Inner(name.upper(), module, [], 2, n, m, is_global=True)
    leaves = ["w", "c", "q"] + (["p"] if n else [])
    params = "z, c" if nargs == 2 else "z"
    if spelling == "def":
        lines, m = body(rng, n, out, leaves, fn, "cs", True, loops)
        local = [f"def {name}({params}):"] + [f"    {line}" for line in lines]
        return Inner(name, [], local, nargs, n, m)
    if spelling in ("lambda2", "wrap"):
        # A lambda calling a lambda that closes over the locals (refused: it reads what is
        # differentiated), or is handed them (refused to the second order: a call known
        # only at run time), or calling a global.
        module, local = [], []
        if spelling == "wrap":
            h = f"H{name.upper()}"
            module = [f"def {h}(z, a):", f"    return {reads(rng, 'z', ['a'], fn)}"]
        elif rng.random() < 0.3:
            h = f"h_{name}"
            local = [f"{h} = lambda z: {reads(rng, 'z', leaves, fn)}"]
        else:
            h = f"h_{name}"
            local = [f"{h} = lambda z, a: {reads(rng, 'z', ['a'], fn)}"]
        args = "" if local and "a:" not in local[0] else f", {rng.choice(['w', 'c', 'q'])}"
        call = rng.choice([f"{h}(z{args})", f"{h}(z * c{args})", f"{h}(z + w{args})"])
        if out:
            if n:
                e, m = f"{call} * {rng.choice(leaves)} + z", n
            else:
                e, m = f"np.array([{call}, {h}(z * w{args})])", 2
        else:
            s = "np.sum({})" if n else "{}"
            e, m = rng.choice([s.format(f"{call} * {call}"),
                               f"{s.format(call)} + w * {s.format('z')}",
                               f"{fn}.sin({s.format(call)}) * c"]), 0
        return Inner(name, module, local + [f"{name} = lambda {params}: {e}"], nargs, n, m)
    lines, m = body(rng, n, out, leaves, fn, "cs", False, loops)
    text = f"lambda {params}: {lines[0][len('return '):]}"
    if spelling == "inline":
        return Inner(f"({text})", [], [], nargs, n, m)
    return Inner(name, [], [f"{name} = {text}"], nargs, n, m)


def bowl(rng: random.Random, name: str, n: int) -> Inner:
    """A convex function of ``z`` for Newton steps (its Hessian 2 + at most 0.25)."""
    fn = "math" if not n and rng.random() < 0.5 else "np"
    s = "np.sum({})" if n else "{}"
    centre = rng.choice(["p", "c"] if n else ["c", "q"])
    wobble = rng.choice([f"{fn}.sin(z * {{a}})", f"{fn}.tanh(z + {{a}})", f"{fn}.cos(z * {{a}})"])
    spelling = rng.choice(["global", "lambda", "def"])
    if spelling == "global":
        e = f"{s.format('(z - c) ** 2')} + 0.1 * {s.format(wobble.format(a='c'))}"
        return Inner(name.upper(), [f"def {name.upper()}(z, c):", f"    return {e}"], [], 2, n,
                     0, is_global=True)
    e = f"{s.format(f'(z - {centre}) ** 2')} + 0.1 * {s.format(wobble.format(a='w'))}"
    if spelling == "lambda":
        return Inner(name, [], [f"{name} = lambda z: {e}"], 1, n, 0)
    return Inner(name, [], [f"def {name}(z):", f"    return {e}"], 1, n, 0)


def vector(rng: random.Random, n: int) -> str:
    return "np.array([" + ", ".join(str(round(rng.uniform(-1.0, 1.0), 2)) for _ in range(n)) \
        + "])"


def at(rng: random.Random, n: int) -> str:
    """Where a derivative is taken: an argument of length ``n`` (a float where 0)."""
    if n:
        return rng.choice(["p", "p * w", vector(rng, n), "np.sin(p)"])
    return rng.choice(["w", "c", "0.5", "q * w"])


def cotangent(rng: random.Random, m: int) -> str:
    if m:
        return rng.choice([f"np.ones({m})", "o", vector(rng, m)])
    return rng.choice(["1.0", "o", "w"])


#: Operators of one argument: what the function may return (``"S"``: a float).
ONE = {"grad": "S", "value_and_grad": "S", "jvp": "SV", "vjp": "SV", "jacfwd": "SV",
       "jacrev": "SV", "hessian": "S", "hvp": "S"}
#: Operators of two arguments (``argnums=(0, 1)``, or two primals).
TWO = {"grad2": "S", "value_and_grad2": "S", "jacfwd2": "SV", "jacrev2": "SV", "jvp2": "SV",
       "vjp2": "SV", "hessian2": "S", "hvp2": "S"}
#: Loops and helpers that step ``x`` by a derivative.
STEPS = ["descent", "descent", "helper", "helper", "newton", "inline", "inline"]
#: Operators that take a second derivative inside: drawn half as often as the others (the
#: check differentiates them to the fourth order, which takes seconds to compile).
SECOND = ("hessian", "hvp", "hessian2", "hvp2")


def applied(rng: random.Random, name: str, length: int
            ) -> tuple[list[str], list[str], list[str]]:
    """One use of a derivative, of a function of a float or of a vector of ``length``: the
    module's lines, the lines defining what it is of in ``f``, and the lines that take it
    and add what comes out to ``acc``."""
    n = rng.choice([0, length])
    kind = rng.choice(["one", "one", "one", "two", "two", "step"])
    if kind == "step":
        step = rng.choice(STEPS)
        k = rng.randrange(1, 4)
        x0 = at(rng, n)
        if step == "newton":
            g = bowl(rng, name, n)
            args = "x, c" if g.is_global else "x"
            if n:
                update = (f"x = x - np.linalg.solve(wengert.hessian({g.ref})({args}), "
                          f"wengert.grad({g.ref})({args}))")
            else:
                update = (f"x = x - wengert.grad({g.ref})({args}) / "
                          f"wengert.hessian({g.ref})({args})")
            return g.module, g.local, [f"x = {x0}", f"for _ in range({min(k, 2)}):",
                                       f"    {update}", "acc = acc + np.sum(x ** 2)"]
        if step == "inline":
            fn = "math" if not n and rng.random() < 0.5 else "np"
            leaves = ["w", "c", "x"] + (["p"] if n else [])
            e = scalar_of(rng, "z", n, leaves, fn)
            op = rng.choice(["grad", "jacrev", "jacfwd"])
            return [], [], [f"x = {x0}", f"for _ in range({k}):",
                            f"    x = x - 0.1 * wengert.{op}(lambda z: {e})(x)",
                            "acc = acc + np.sum(x ** 2)"]
        g = inner(rng, name, n, False, 1)
        extra = f", {rng.choice(['w', 'c'])}" if g.is_global else ""
        if step == "helper":
            # (a Jacobian made here and handed on is refused: it must be called where made)
            op = rng.choice(["grad", "grad", "grad", "grad", "grad", "jacrev"])
            helper = "descend_with" if g.is_global else "descend"
            return g.module, g.local, [f"x = {helper}(wengert.{op}({g.ref}), {x0}{extra})",
                                       "acc = acc + np.sum(x ** 2)"]
        ops = [f"wengert.grad({g.ref})(x{extra})", f"wengert.jacfwd({g.ref})(x{extra})",
               f"wengert.jacrev({g.ref})(x{extra})",
               f"wengert.value_and_grad({g.ref})(x{extra})[1]"]
        if not n:
            t = ", 0.0" if extra else ""
            ops.append(f"wengert.jvp({g.ref}, (x{extra},), (1.0{t},))[1]")
        return g.module, g.local, [f"x = {x0}", f"for _ in range({k}):",
                                   f"    x = x - 0.1 * {rng.choice(ops)}",
                                   "acc = acc + np.sum(x ** 2)"]
    table = ONE if kind == "one" else TWO
    op = rng.choice([op for op in sorted(table) for _ in range(1 if op in SECOND else 2)])
    out = rng.choice(table[op]) == "V"
    g = inner(rng, name, n, out, 1 if kind == "one" else 2,
              loops=op not in SECOND)
    z0, t0 = at(rng, n), at(rng, n)
    acc = "acc = acc + np.sum({}) + np.sum({})"
    if kind == "one":
        c0 = rng.choice(["w", "c"])
        args = f"{z0}, {c0}" if g.is_global else z0
        extra = ", 0.0" if g.is_global else ""
        pair = g.is_global and op in ("hvp", "vjp")
        if op == "jvp":
            lines = [f"o, t = wengert.jvp({g.ref}, ({args},), ({t0}{extra},))",
                     acc.format("o ** 2", "t * w")]
        elif op == "vjp":
            lines = [f"o, pb = wengert.vjp({g.ref}, {args})"]
            if pair:
                lines += [f"r, rc = pb({cotangent(rng, g.out)})", acc.format("r * w", "rc")]
            else:
                lines += [f"r = pb({cotangent(rng, g.out)})[0]", acc.format("r ** 2", "o")]
        elif op == "hvp":
            if pair:
                lines = [f"r, rc = wengert.hvp({g.ref}, ({args}), ({t0}{extra}))",
                         acc.format("r ** 2", "rc * w")]
            else:
                lines = [f"r = wengert.hvp({g.ref}, ({args},), ({t0},))",
                         acc.format("r ** 2", "w")]
        elif op == "value_and_grad":
            lines = [f"v, r = wengert.value_and_grad({g.ref})({args})",
                     acc.format("v", "r ** 2")]
        elif op == "grad" and rng.random() < 0.3:
            lines = [f"dg = wengert.grad({g.ref})", f"r = dg({args})",
                     acc.format("r ** 2", "r * w")]
        else:
            lines = [f"r = wengert.{op}({g.ref})({args})", acc.format("r ** 2", "r * w")]
        return g.module, g.local, lines
    c0 = rng.choice(["w", "c", "0.5 * w", "q"])
    name2 = op[:-1]
    if op in ("grad2", "jacfwd2", "jacrev2"):
        lines = [f"ra, rb = wengert.{name2}({g.ref}, argnums=(0, 1))({z0}, {c0})",
                 acc.format("ra ** 2", "rb * w")]
    elif op == "value_and_grad2":
        lines = [f"v, (ra, rb) = wengert.value_and_grad({g.ref}, argnums=(0, 1))({z0}, {c0})",
                 acc.format("v * ra", "rb")]
    elif op == "hessian2":
        lines = [f"(raa, rab), (rba, rbb) = wengert.hessian({g.ref}, argnums=(0, 1))"
                 f"({z0}, {c0})", acc.format("raa ** 2", "rab * rba") + " + rbb * w"]
    elif op == "hvp2":
        lines = [f"ra, rb = wengert.hvp({g.ref}, ({z0}, {c0}), ({t0}, 1.0))",
                 acc.format("ra ** 2", "rb")]
    elif op == "jvp2":
        lines = [f"o, t = wengert.jvp({g.ref}, ({z0}, {c0}), ({t0}, 1.0))",
                 acc.format("o * w", "t ** 2")]
    else:
        lines = [f"o, pb = wengert.vjp({g.ref}, {z0}, {c0})",
                 f"ra, rb = pb({cotangent(rng, g.out)})", acc.format("ra ** 2", "rb")]
    return g.module, g.local, lines


def program(rng: random.Random) -> str:
    """A random program ``f(w)`` of the shapes above."""
    module, local, uses = [], [], []
    n = rng.choice([2, 3])
    for name in ["g", "g2"][:rng.choice([1, 1, 2])]:
        m, loc, use = applied(rng, name, n)
        module += ["", ""] + m if m else []
        local += loc
        uses += use
    p = ", ".join(str(round(rng.uniform(-1.0, 1.0), 2)) for _ in range(n))
    lines = [f"p = np.array([{p}]) * w", "q = math.sin(w) + 0.5", "c = 0.5 * w + 0.2",
             "cs = [w, 0.5 - 0.3 * w]", *local, "acc = w * w", *uses, "return acc"]
    source = PRELUDE.format(n=rng.randrange(2, 4)) + "\n".join(module) + \
        "\n\n\ndef f(w):\n" + "".join(f"    {line}\n" for line in lines)
    return source


def point(rng: random.Random) -> float:
    return round(rng.uniform(0.3, 1.2), 3)


def _located(e: wengert.NonDifferentiableError, source: str) -> None:
    """A refusal must point at the program's line, not at wengert's own."""
    loc = e.loc
    if loc is None or not loc.filename.endswith(".py") or \
            Path(wengert.__file__).parent in Path(loc.filename).resolve().parents:
        raise RuntimeError(f"refusal not located in the program: {e}\n{source}") from e


def check(seed: int) -> str:
    """Check one program: ``"ok"``; ``"refused2"``, right to the first order and refused
    (located) to the second; ``"refused"``, refused (located) to the first order. Raises on
    a wrong number or an unlocated error."""
    rng = random.Random(seed)
    source = program(rng)
    f = load_function(source)
    w = point(rng)
    try:
        f(w)  # (raises where the program itself does, or its inner derivative)
    except wengert.NonDifferentiableError as e:
        _located(e, source)
        return "refused"
    except wengert.WengertError as e:
        raise RuntimeError(f"{type(e).__name__}: {e}\n{source}\nat {w}") from e
    kw = dict(rtol=1e-4, atol=1e-5)
    try:
        try:
            check_grads(f, (w,), modes=("fwd",), **kw)
            check_grads(f, (w,), modes=("rev",), **kw)
        except wengert.NonDifferentiableError as e:
            _located(e, source)
            return "refused"
        try:
            check_grads(f, (w,), order=2, modes=("rev", "fwd"), **kw)
        except wengert.NonDifferentiableError as e:
            _located(e, source)
            return "refused2"
    except AssertionError as e:
        raise AssertionError(f"{e}\n{source}\nat {w}") from None
    except wengert.WengertError as e:  # (a UsageError is a ValueError: not the program's)
        raise RuntimeError(f"{type(e).__name__}: {e}\n{source}\nat {w}") from e
    return "ok"


@pytest.mark.parametrize("seed", range(6))
def test_random_nested_derivative_programs(seed):
    try:
        check(seed)
    except (ValueError, ZeroDivisionError, OverflowError):
        pass  # the program itself raises there, as its primal does


if __name__ == "__main__":
    count_outcomes(check, int(sys.argv[1]), int(sys.argv[2]))
