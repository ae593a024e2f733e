"""Random NumPy programs that write into arrays in place, each beside a twin without writes.

A program is ``f(x, y, c)``: it copies ``x`` and ``y`` (``a = x.copy()``, ``b = y * 1.0``,
now and then an alias, ``np.asarray(x)``), then runs 3-8 statements, some in ``for _ in
range(k)`` loops, drawn from: views kept under a name (``v = a[1:]``, ``t = a.T``, ``m =
a.reshape(2, 3)``, ``r = a[0]``, which is a copy on 1-d) read in arithmetic before their
base is written; writes and augmented assignments under basic and fancy indices, through
views now and then; self-aliasing updates (``a *= a``, ``a += a[::-1]``, ``a[1:] += a[:-1]``,
stencils); boolean masks and ``np.nonzero``/one-argument ``np.where`` indices of any count,
0 included (rows of a 2-d condition repeat); loops over rows, columns and entries that update
one at a time (recurrences, row normalisations); in-place operators on the arguments
themselves; and reductions with ``where=``, ``initial=`` and ``dtype=``. It returns a sum of
reductions.

The generator writes each statement twice: as the program has it, and as its ``twin``
without a write (copies, ``np.where``, ``np.concatenate``, gathers of constant indices);
a view's value in the twin is taken again from its base where it is read, which is what a
view shows. A third spelling, run in plain Python, records how far each compared value is
from its threshold, so that inputs are drawn away from them.

Checks: in plain Python the program and its twin agree (value and the arguments' final
contents; else the generator is wrong); every transform (``grad``, ``vjp``, ``jvp``,
``hessian``) leaves the arguments as a plain call does and gives its value; the gradient,
the pullback (called twice), the JVP and the Hessian equal the twin's; ``check_grads`` to
second order in both modes. An outcome is ``ok``, ``refused`` (a ``WengertError`` located
in the generated file: reading a view after a write through its base is refused on
purpose), ``unlocated`` (a refusal without that location), ``wrong`` (a number differs),
``crash`` (any other exception), ``generator`` (the twin is not the program's twin) or
``skipped`` (no inputs away from the thresholds). A few run in the tests; ``python3
tests/transforms/test_inplace_random.py COUNT FIRST_SEED`` runs many and prints the counts.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import wengert
from wengert.testing import check_grads

THRESHOLDS = ["-0.4", "-0.1", "0.0", "0.2", "0.3", "0.5", "0.8"]
UNARY = ["np.sin({0})", "np.tanh({0})", "{0} * c", "np.exp(0.3 * {0})", "({0} + c)", "-{0}",
         "np.cos({0}) * c", "{0} ** 2", "0.5 * {0}"]
BINARY = ["{0} * {1}", "({0} + {1})", "({0} - {1})", "{0} / (1.5 + {1} ** 2)",
          "({0} * {1} + {0})"]
DIVISORS = ["(1.5 + {0} ** 2)", "(2.0 + np.tanh({0}))", "(np.sum({0} ** 2) + 2.0)"]
# Suffixes read off a name in arithmetic (where the shape has them).
SUFFIXES = ["", "", "", "[::-1]", "[1:]", "[:-1]", "[0]", "[-1]", "[:, 0]", "[1]", ".T",
            "[:, ::-1]", "[:, 1:]", "[1:, :]"]
# Views (and the copies among them: ``.ravel()`` of a transpose) kept under a name.
VIEWS_1D = ["{0}[1:]", "{0}[:-1]", "{0}[::-1]", "{0}[1:-1]", "{0}[::2]", "{0}[0]", "{0}[-1]",
            "{0}.ravel()", "{0}.T", "{0}.reshape(-1)", "np.reshape({0}, ({n},))",
            "{0}.reshape({k}, {nk})", "{0}[None]"]
VIEWS_2D = ["{0}[0]", "{0}[-1]", "{0}[1:]", "{0}[:, 0]", "{0}[:, 1:]", "{0}.T", "{0}.ravel()",
            "{0}.reshape(-1)", "{0}.reshape({c}, {r})", "{0}[::-1]", "{0}[:, ::-1]",
            "{0}[1:, :-1]", "{0}[0, 1]", "np.transpose({0})", "{0}.T.ravel()",
            "{0}.T[0]", "{0}[..., 0]"]
# (Fancy indices that repeat an entry: the last value written to it stays.)
INDICES_1D = ["0", "-1", "1", "1:", ":-1", "1:-1", "::2", "::-1", "...", ":", "[0, 2]",
              "[-1, 1]", "2:", ":2", "[0, 0, 1]", "[2, -1, 2]"]
INDICES_2D = ["0", "-1", "1", ":, 0", ":, -1", "0, 1", "-1, 0", "1:, :", ":, 1:", "::-1", "...",
              "..., 0", "1:, ::-1", ":, [0, 2]", "[1, 0]", ":", "0, :-1", "[1, 1]",
              ":, [0, 1, 0]", "[0, 1], [1, 1]"]
# Updates of an array by itself: (index, operator, value) with {0} the array.
ALIASING = [(None, "*=", "{0}"), (None, "+=", "{0}[::-1]"), ("1:", "+=", "{0}[:-1]"),
            (":-1", "-=", "0.5 * {0}[1:]"), ("::-1", "+=", "c * {0}"), (None, "+=", "{0}.T"),
            ("1:-1", "+=", "c * ({0}[:-2] - 2.0 * {0}[1:-1] + {0}[2:])"),
            (":, 1:-1", "+=", "c * ({0}[:, :-2] - 2.0 * {0}[:, 1:-1] + {0}[:, 2:])"),
            ("...", "=", "{0}[::-1] * c"), ("::-1", "=", "{0}"), (":, 1:", "+=", "{0}[:, :-1]"),
            ("1:", "*=", "np.tanh({0}[:-1])"), (None, "-=", "np.mean({0}) * {0}")]


class Src:
    """One fragment in three spellings: the program's (``m``), the twin's (``t``) and the
    probe's (``p``: the program's, each compared value passed through ``_probe``)."""

    __slots__ = ("m", "t", "p")

    def __init__(self, m: str, t: str | None = None, p: str | None = None) -> None:
        self.m = m
        self.t = m if t is None else t
        self.p = m if p is None else p


def S(template: str, *parts: Src | str) -> Src:
    """``template`` filled with ``parts`` in each spelling."""
    def spell(k: str) -> list[str]:
        return [getattr(q, k) if isinstance(q, Src) else q for q in parts]
    return Src(template.format(*spell("m")), template.format(*spell("t")),
               template.format(*spell("p")))


@dataclass
class Var:
    kind: str  # "array", "scalar" or "mask"
    owner: str | None = None  # an array: the name that owns its memory (itself for an owner)
    twin: str = ""  # how the twin spells its value where it is read
    stale: bool = False  # its memory was written (through another name) since it was made
    mshape: tuple = ()  # a mask: the shape of the arrays it indexes
    rows: bool = False  # a mask: rows of a 2-d array (np.nonzero(...)[0]; they repeat)
    boolean: bool = False  # a mask held as a boolean array in the program too


def _broadcasts(s: tuple, t: tuple) -> bool:
    try:
        return np.broadcast_shapes(s, t) == t
    except ValueError:
        return False


class Program:
    """Generates one program and its twin, statement by statement, running each statement
    of the program on stand-in arrays as it goes (shapes, and which names share memory)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[tuple[int, Src]] = []
        self.indent = 1
        self.count = 0
        self.hidden: set[str] = set()
        self.allow_stale = rng.random() < 0.1  # reads views after writes (refused) now and then
        if rng.random() < 0.55:
            self.sx = rng.choice([(2, 3), (3, 2), (3, 3), (2, 4), (4, 3), (2, 2), (3, 4)])
            self.sy = self.sx if rng.random() < 0.8 else (self.sx[1],)
        else:
            self.sx = (rng.randrange(3, 7),)
            self.sy = self.sx
        stand_in = np.random.default_rng(rng.randrange(2 ** 32))
        self.ns: dict = {"np": np, "c": 0.7, "x": stand_in.uniform(-1, 1, self.sx),
                         "y": stand_in.uniform(-1, 1, self.sy)}
        self.vars: dict[str, Var] = {"x": Var("array", "x", "x"), "y": Var("array", "y", "y"),
                                     "c": Var("scalar", None, "c")}
        self.argnums = (0, 1, 2) if rng.random() < 0.8 else (0, 1)
        self.writes_args = False

    # --- names -------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def readable(self, name: str) -> bool:
        v = self.vars[name]
        return self.allow_stale or not (v.stale or name in self.hidden)

    def arrays(self, owners_only: bool = False) -> list[str]:
        return [n for n, v in self.vars.items() if v.kind == "array" and self.readable(n)
                and (not owners_only or v.owner == n)]

    def shape(self, text: str) -> tuple:
        return np.shape(eval(text, self.ns))

    def emit(self, src: Src) -> None:
        self.lines.append((self.indent, src))

    def run(self, text: str) -> None:
        exec(text, self.ns)

    def bind(self, name: str, e: Src) -> None:
        """``name = e``: a view (of an owner: no line in the twin, which spells the view
        where it is read), a new array, a scalar or a mask."""
        value = eval(e.m, self.ns)
        self.ns[name] = value
        if isinstance(value, np.ndarray) and value.dtype != bool:
            owner = next((k for k, v in self.vars.items() if v.kind == "array" and v.owner == k
                          and np.shares_memory(value, self.ns[k])), None)
            if owner is not None:
                self.vars[name] = Var("array", owner, f"({e.t})")
                self.emit(Src(f"{name} = {e.m}", "", f"{name} = {e.p}"))
                return
            self.vars[name] = Var("array", name, name)
        else:
            self.vars[name] = Var("scalar", None, name)
        self.emit(S(name + " = {0}", e))

    def mark_written(self, target: str) -> None:
        owner = self.vars[target].owner
        for n, v in self.vars.items():
            if v.kind == "array" and v.owner == owner and n != target:
                v.stale = True
        if owner in ("x", "y"):
            self.writes_args = True

    # --- expressions -------------------------------------------------------------------

    def atoms(self) -> list[tuple[Src, tuple]]:
        out = []
        for n in self.arrays():
            v = self.vars[n]
            for s in dict.fromkeys(SUFFIXES):
                try:
                    shape = self.shape(n + s)
                except (IndexError, ValueError, TypeError):
                    continue
                if 0 in shape:
                    continue
                out.append((Src(n + s, v.twin + s), shape))
        for n, v in self.vars.items():
            if v.kind == "scalar" and self.readable(n):
                out.append((Src(n, v.twin), ()))
        return out

    def expr(self, shape: tuple, first: Src | None = None) -> Src:
        """An expression of exactly ``shape`` (``first`` in it, if given)."""
        atoms = self.atoms()
        if first is None:
            exact = [a for a, s in atoms if s == shape]
            first = self.rng.choice(exact) if exact else Src("c")
        fits = [a for a, s in atoms if _broadcasts(s, shape)] + [Src("c"), Src("0.5")]
        e = first
        for _ in range(self.rng.randrange(1, 3)):
            if self.rng.random() < 0.5:
                e = S(self.rng.choice(UNARY), e)
            else:
                e = S(self.rng.choice(BINARY), e, self.rng.choice(fits))
        return e

    def value(self, shape: tuple, op: str) -> Src:
        """A value written into entries of ``shape`` with ``op``."""
        r = self.rng.random()
        atoms = self.atoms()
        if r < 0.25:
            scalars = [a for a, s in atoms if s == ()] + [Src("c"), Src("0.25")]
            e = self.rng.choice(scalars)
        elif r < 0.4:
            e = S(self.rng.choice(["np.mean({0})", "np.sum({0} ** 2)", "np.sum({0}) * c"]),
                  self.rng.choice([a for a, s in atoms if s != ()] or [Src("c")]))
        else:
            fits = [a for a, s in atoms if s != () and _broadcasts(s, shape)]
            e = self.expr(shape, self.rng.choice(fits) if fits else None)
        if op == "/=":
            e = S(self.rng.choice(DIVISORS), e)
        return e

    def cond(self, shape: tuple) -> Src:
        """A comparison of an expression of ``shape`` with a threshold (probed)."""
        atoms = [a for a, s in self.atoms() if s == shape]
        e = self.rng.choice(atoms)
        if self.rng.random() < 0.3:
            e = S(self.rng.choice(["np.sin({0})", "{0} * c", "({0} + c)"]), e)
        t = self.rng.choice(THRESHOLDS)
        op = self.rng.choice([">", "<"])
        c = Src(f"({e.m} {op} {t})", f"({e.t} {op} {t})", f"(_probe({e.p}, {t}) {op} {t})")
        if self.rng.random() < 0.2:
            other = self.cond(shape)
            c = S("({0} & {1})" if self.rng.random() < 0.5 else "({0} | {1})", c, other)
        return c

    def reduction(self) -> Src:
        shapes = [s for _, s in self.atoms() if s != ()]
        if not shapes:
            return Src("c * c")
        shape = self.rng.choice(shapes)
        e = self.expr(shape) if self.rng.random() < 0.6 else \
            S("{0} ** 2", self.rng.choice([a for a, s in self.atoms() if s == shape]))
        forms = [
            ("np.sum({0}, where={1})", "np.sum(np.where({1}, {0}, 0.0))"),
            ("np.mean({0}, where={1})", "(np.sum(np.where({1}, {0}, 0.0)) / np.sum({1}))"),
            ("np.prod({0}, where={1})", "np.prod(np.where({1}, {0}, 1.0))"),
            ("np.sum({0}, initial=0.5)", "(0.5 + np.sum({0}))"),
            ("np.sum({0}, where={1}, initial=1.5)", "(1.5 + np.sum(np.where({1}, {0}, 0.0)))"),
            ("np.prod({0}, initial=2.0)", "(2.0 * np.prod({0}))"),
            ("np.sum({0}, dtype=np.float64)", "np.sum({0})"),
            ("np.mean({0}, dtype=np.float64)", "np.mean({0})"),
            ("np.sum({0})", "np.sum({0})"),
            ("np.mean({0} * {0})", "np.mean(({0}) ** 2)"),
        ]
        if len(shape) == 2:
            forms.append(("np.sum(np.sum({0}, axis=0, where={1}) ** 2)",
                          "np.sum(np.sum(np.where({1}, {0}, 0.0), axis=0) ** 2)"))
            forms.append(("np.sum(np.mean({0}, axis=1, where={1}, dtype=np.float64) ** 2)",
                          "np.sum((np.sum(np.where({1}, {0}, 0.0), axis=1) "
                          "/ np.sum({1}, axis=1)) ** 2)"))
        if self.rng.random() < 0.03:  # refused by wengert: np.max with where=, initial=
            forms = [("np.max({0}, where={1}, initial=-10.0)",
                      "np.max(np.where({1}, {0}, -10.0))")]
        m, t = self.rng.choice(forms)
        c = self.cond(shape) if "{1}" in m else Src("")
        prog = S(m, e, c)
        return Src(prog.m, S(t, e, c).t, prog.p)

    # --- writes --------------------------------------------------------------------------

    def write(self, target: str, index: str | None, op: str, value: Src) -> None:
        """``target[index] op value`` (``target op value`` without an index); in the twin,
        the target's owner made again whole."""
        at = f"[{index}]" if index is not None else ""
        if index is None and op == "=":
            at = "[...]"
        prog = S(f"{target}{at} {op} {{0}}", value)
        twin = self.twin_write(target, at, op, value.t)
        self.emit(Src(prog.m, twin, prog.p))
        self.run(prog.m)
        self.mark_written(target)

    def twin_write(self, target: str, at: str, op: str, value: str) -> str:
        """The twin's line for ``target{at} op value``: the target's owner made again."""
        v = self.vars[target]
        owner = v.owner
        assert owner is not None
        current = f"{v.twin}{at}"
        new = value if op == "=" else f"{current} {op[0]} ({value})"
        shape = self.ns[owner].shape
        n = int(np.prod(shape))
        stand_in = np.arange(n, dtype=float).reshape(shape)
        env = {"np": np, owner: stand_in}
        written = np.shape(eval(current, env))
        size = int(np.prod(written))
        env["_new"] = np.arange(n, n + size, dtype=float).reshape(written)
        exec(f"{v.twin}[...] = _new" if not at else f"{current} = _new", env)
        gather = stand_in.ravel().astype(int).tolist()
        if gather == list(range(n, 2 * n)) and target == owner and written == shape:
            # The whole array, in order.
            if op == "=":
                twin = self.rng.choice([f"{owner} = np.zeros_like({owner}) + ({new})",
                                        f"{owner} = np.broadcast_to({new}, {shape}) * 1.0"])
            else:
                twin = f"{owner} = {new}"
        elif len(shape) == 1 and target == owner and self.rng.random() < 0.5 and \
                self._contiguous(gather, n):
            lo = min(i for i, g in enumerate(gather) if g >= n)
            hi = lo + size
            pieces = [f"{owner}[:{lo}]"] if lo else []
            pieces.append(f"({new}) * np.ones({size})")
            if hi < n:
                pieces.append(f"{owner}[{hi}:]")
            twin = f"{owner} = np.concatenate([{', '.join(pieces)}])"
        else:
            spread = self.rng.choice([f"(({new}) * np.ones({written})).ravel()",
                                      f"np.broadcast_to({new}, {written}).ravel()"])
            twin = (f"{owner} = np.concatenate([{owner}.ravel(), {spread}])"
                    f"[{gather}].reshape({shape})")
        return twin

    @staticmethod
    def _contiguous(gather: list[int], n: int) -> bool:
        """The entries written are one run, in order; the others are kept in place."""
        new = [i for i, g in enumerate(gather) if g >= n]
        if not new:
            return False
        lo = new[0]
        return all(g == (n + i - lo if lo <= i < lo + len(new) else i)
                   for i, g in enumerate(gather))

    def write_masked(self, target: str, index: Src, mask_t: str, shape: tuple, op: str) -> None:
        """``target[index] op F(...[index])``, its twin ``np.where(mask, F(...), target)``."""
        full = [n for n in self.arrays() if self.shape(n) == shape]
        atoms = [Src(f"{n}[{index.m}]", self.vars[n].twin, f"{n}[{index.p}]") for n in full]
        scalars = [Src(n, v.twin) for n, v in self.vars.items()
                   if v.kind == "scalar" and self.readable(n)]
        scalars += [Src("0.0"), Src("1.0"), Src("-1.0")]
        if atoms and self.rng.random() < 0.7:
            e = self.rng.choice(atoms)
            for _ in range(self.rng.randrange(0, 3)):
                if self.rng.random() < 0.5:
                    e = S(self.rng.choice(UNARY), e)
                else:
                    e = S(self.rng.choice(BINARY), e, self.rng.choice(atoms + scalars))
        else:
            e = self.rng.choice(scalars)
        if op == "/=":
            e = S(self.rng.choice(["(1.5 + {0} ** 2)", "(2.0 + np.tanh({0}))"]), e)
        prog = S(f"{target}[{{0}}] {op} {{1}}", index, e)
        tw = self.vars[target].twin
        new = e.t if op == "=" else f"{tw} {op[0]} ({e.t})"
        self.emit(Src(prog.m, f"{target} = np.where({mask_t}, {new}, {tw})", prog.p))
        self.run(prog.m)
        self.mark_written(target)

    # --- statements ----------------------------------------------------------------------

    def op(self) -> str:
        return self.rng.choice(["=", "+=", "-=", "*=", "/=", "+=", "*="])

    def index(self, target: str, choices: list[str]) -> str | None:
        valid = []
        for i in choices:
            try:
                if 0 in np.shape(eval(f"{target}[{i}]", self.ns)):
                    continue
            except (IndexError, ValueError, TypeError):
                continue
            valid.append(i)
        return self.rng.choice(valid) if valid and self.rng.random() < 0.8 else None

    def pick_owner(self, owners: list[str]) -> str:
        """One of ``owners``: an argument now and then, the function's own arrays mostly."""
        mine = [n for n in owners if n not in ("x", "y")]
        if mine and (self.rng.random() < 0.9 or len(mine) == len(owners)):
            return self.rng.choice(mine)
        return self.rng.choice([n for n in owners if n in ("x", "y")] or owners)

    def target(self) -> str | None:
        owners = self.arrays(owners_only=True)
        if not owners:
            return None
        r = self.rng.random()
        views = [n for n in self.arrays() if self.vars[n].owner != n and n not in self.hidden]
        if r < 0.07 and views:
            return self.rng.choice(views)  # written through a view: refused, mostly
        args = [n for n in ("x", "y") if n in owners]
        if r < 0.12 and args:
            return self.rng.choice(args)
        mine = [n for n in owners if n not in ("x", "y")]
        return self.rng.choice(mine or owners)

    def stmt_write(self, target: str | None = None) -> None:
        target = target or self.target()
        if target is None:
            return self.stmt_temp()
        shape = self.shape(target)
        index = self.index(target, INDICES_2D if len(shape) == 2 else INDICES_1D)
        op = self.op()
        if index is None and op == "=":
            op = "*="
        written = self.shape(f"{target}[{index}]") if index is not None else shape
        self.write(target, index, op, self.value(written, op))

    def stmt_alias(self, target: str | None = None) -> None:
        target = target or self.target()
        if target is None:
            return self.stmt_temp()
        options = []
        for index, op, value in ALIASING:
            text = value.format(target)
            try:
                probe = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                         for k, v in self.ns.items()}
                at = f"[{index}]" if index is not None else ""
                exec(f"{target}{at} {op} {text}", probe)
            except (IndexError, ValueError, TypeError):
                continue
            options.append((index, op, value))
        if not options:
            return self.stmt_write(target)
        index, op, value = self.rng.choice(options)
        v = self.vars[target]
        # The value spelled with the target: the twin's spelling of a view is its base's.
        parts = value.replace("{0}", "\0").split("\0")
        m = target.join(parts)
        t = v.twin.join(parts)
        self.write(target, index, op, Src(m, t))

    def stmt_swap(self) -> None:
        """Two entries, rows or columns swapped: ``a[0], a[2] = a[2], a[0]`` (rows of a 2-d
        array are views, so the second one assigned is the first one's new value, as NumPy
        has it) or ``a[[0, 2]] = a[[2, 0]]``."""
        owners = self.arrays(owners_only=True)
        if not owners:
            return self.stmt_temp()
        target = self.pick_owner(owners)
        shape = self.shape(target)
        axis = 1 if len(shape) == 2 and self.rng.random() < 0.3 else 0
        if shape[axis] < 2:
            return self.stmt_write(target)
        i, j = self.rng.sample(range(shape[axis]), 2)
        if self.rng.random() < 0.3:
            j -= shape[axis]  # a negative index
        lead = ":, " if axis else ""
        if self.rng.random() < 0.3:
            self.write(target, f"{lead}[{i}, {j}]", "=",
                       Src(f"{target}[{lead}[{j}, {i}]]",
                           f"{self.vars[target].twin}[{lead}[{j}, {i}]]"))
            return
        tw = self.vars[target].twin
        values = []
        for k in (j, i):
            at = f"[{lead}{k}]"
            if isinstance(eval(target + at, self.ns), np.ndarray):
                values.append(tw + at)  # a view: read when it is assigned
            else:
                held = self.fresh("t")  # a number: read before either assignment
                self.emit(Src("", f"{held} = {tw}{at}", ""))
                values.append(held)
        first, second = f"{target}[{lead}{i}]", f"{target}[{lead}{j}]"
        line = f"{first}, {second} = {second}, {first}"
        self.emit(Src(line, self.twin_write(target, f"[{lead}{i}]", "=", values[0]), line))
        self.emit(Src("", self.twin_write(target, f"[{lead}{j}]", "=", values[1]), ""))
        self.run(line)
        self.mark_written(target)

    def stmt_view(self) -> None:
        sources = [n for n in self.arrays() if n not in self.hidden]
        source = self.rng.choice(sources)
        shape = self.shape(source)
        if len(shape) == 2:
            ops = [o.format("{0}", r=shape[0], c=shape[1]) for o in VIEWS_2D]
        else:
            n = shape[0] if shape else 1
            k = next((k for k in (2, 3) if n % k == 0), 1)
            ops = [o.format("{0}", n=n, k=k, nk=n // k) for o in VIEWS_1D]
        valid = []
        for o in ops:
            try:
                if 0 in np.shape(eval(o.format(source), self.ns)):
                    continue
            except (IndexError, ValueError, TypeError):
                continue
            valid.append(o)
        v = self.vars[source]
        o = self.rng.choice(valid)
        name = self.fresh("v")
        self.bind(name, Src(o.format(source), o.format(v.twin)))
        # Read in arithmetic, then its base written: the view is not read again.
        if self.rng.random() < 0.7:
            z = self.fresh("z")
            vs = self.shape(name)
            if vs == ():
                self.bind(z, self.expr(self.rng.choice([s for _, s in self.atoms()]),
                                       Src(name, self.vars[name].twin)))
            else:
                self.bind(z, self.expr(vs, Src(name, self.vars[name].twin)))
            if self.rng.random() < 0.6 and self.vars[name].kind == "array":
                owner = self.vars[name].owner
                if owner in self.vars and self.readable(owner):
                    if self.rng.random() < 0.7:
                        self.stmt_write(owner)
                    else:
                        self.stmt_alias(owner)

    def stmt_temp(self) -> None:
        shapes = [s for _, s in self.atoms() if s != ()]
        shape = self.rng.choice(shapes) if shapes else ()
        self.bind(self.fresh("z"), self.expr(shape))

    def stmt_scalar(self) -> None:
        scalars = [n for n, v in self.vars.items() if v.kind == "scalar" and n != "c"
                   and self.readable(n)]
        if scalars and self.rng.random() < 0.4:
            s = self.rng.choice(scalars)
            op = self.rng.choice(["+=", "*=", "-="])
            e = self.rng.choice([Src("c"), self.reduction()])
            prog = S(f"{s} {op} {{0}}", e)
            self.emit(Src(prog.m, f"{s} = {s} {op[0]} ({e.t})", prog.p))
            self.run(prog.m)
            return
        self.bind(self.fresh("s"), self.reduction())

    def stmt_mask(self) -> None:
        owners = [n for n in self.arrays(owners_only=True)]
        if not owners:
            return self.stmt_temp()
        shape = self.shape(self.rng.choice(owners))
        cond = self.cond(shape)
        name = self.fresh("hi")
        kind = self.rng.random()
        rows = False
        if kind < 0.45:
            self.emit(S(f"{name} = {{0}}", cond))
            self.vars[name] = Var("mask", mshape=shape, boolean=True)
            index, mask_t = Src(name), name
        else:
            if len(shape) == 1:
                made = self.rng.choice(["np.nonzero({0})[0]", "np.where({0})[0]",
                                        "np.flatnonzero({0})", "np.nonzero({0})"])
                twin = cond.t
            elif self.rng.random() < 0.5:
                made = self.rng.choice(["np.nonzero({0})", "np.where({0})"])
                twin = cond.t
            else:
                made = self.rng.choice(["np.nonzero({0})[0]", "np.where({0})[0]"])
                twin = f"np.any({cond.t}, axis=1)"
                rows = True
            prog = S(made, cond)
            self.emit(Src(f"{name} = {prog.m}", f"{name} = {twin}", f"{name} = {prog.p}"))
            self.vars[name] = Var("mask", mshape=shape, rows=rows)
            index, mask_t = Src(name), (f"{name}[:, None]" if rows else name)
        self.run(f"{name} = {cond.m}" if kind < 0.45 else f"{name} = {prog.m}")
        for _ in range(self.rng.randrange(1, 4)):
            targets = [n for n in self.arrays(owners_only=True) if self.shape(n) == shape]
            if not targets:
                break
            target = self.pick_owner(targets)
            i, mt = index, mask_t
            if self.vars[name].boolean and self.rng.random() < 0.3:
                i, mt = Src(f"~{name}"), f"~{name}"
            elif not rows and self.rng.random() < 0.15:
                # A mask made in the write itself, from the values before it.
                other = self.cond(shape)
                if self.vars[name].boolean:
                    i = S("{0} & {1}", Src(name), other)
                    mt = f"({name} & {other.t})"
                else:
                    i, mt = other, other.t
            self.write_masked(target, i, mt, shape, self.op())

    def stmt_iloop(self) -> None:
        owners = self.arrays(owners_only=True)
        if not owners:
            return self.stmt_temp()
        target = self.pick_owner(owners)
        shape = self.shape(target)
        t = target
        if len(shape) == 2:
            r, c = shape
            same = [n for n in self.arrays() if self.shape(n) == shape]
            u = self.rng.choice(same)
            ut = self.vars[u].twin
            forms = [
                (f"for i in range({r}):", "i, :", "/=", "(np.sum({0}[i, :] ** 2) + 2.0)",
                 "row"),
                (f"for i in range(1, {r}):", "i", "+=", "c * {0}[i - 1]", "row"),
                (f"for j in range({c}):", ":, j", "-=", "np.mean({0}[:, j])", "col"),
                (f"for i in range({r}):", "i", "=", "np.tanh({0}[i]) * c + {1}[i]", "row"),
                (f"for j in range(1, {c}):", ":, j", "+=", "np.sin({0}[:, j - 1]) * c", "col"),
            ]
        else:
            n = shape[0]
            u, ut = t, t
            forms = [
                (f"for i in range(1, {n}):", "i", "+=", "c * {0}[i - 1]", "elem"),
                (f"for i in range({n - 1}):", "i + 1", "=",
                 "{0}[i + 1] * c - np.sin({0}[i])", "elem"),
                (f"for i in range({n}):", "i", "/=", "(np.sum({0} ** 2) + 2.0)", "elem"),
            ]
        header, index, op, value, kind = self.rng.choice(forms)
        val = Src(value.format(t, u), value.format(self.vars[t].twin, ut))
        prog = S(f"{t}[{index}] {op} {{0}}", val)
        current = f"{t}[{index}]"
        new = val.t if op == "=" else f"{current} {op[0]} ({val.t})"
        var = header.split()[1]
        if kind == "row":
            twin = f"{t} = np.where((np.arange({shape[0]}) == {var})[:, None], {new}, {t})"
        elif kind == "col":
            twin = (f"{t} = np.where(np.arange({shape[1]}) == {var}, "
                    f"np.reshape({new}, ({shape[0]}, 1)), {t})")
        else:
            twin = f"{t} = np.where(np.arange({shape[0]}) == {index}, {new}, {t})"
        self.emit(Src(header))
        self.indent += 1
        self.emit(Src(prog.m, twin, prog.p))
        self.indent -= 1
        self.run(f"{header}\n    {prog.m}")
        self.mark_written(t)

    def stmt_loop(self) -> None:
        k = self.rng.randrange(1, 4)
        self.emit(Src(f"for _ in range({k}):"))
        self.indent += 1
        hidden = self.hidden
        # Views made before the loop are not read in it: a write later in the body would
        # come before the read in the next pass.
        self.hidden = hidden | {n for n, v in self.vars.items()
                                if v.kind == "array" and v.owner != n}
        first = len(self.lines)
        for _ in range(self.rng.randrange(1, 4)):
            self.statement(loops=False)
        if not any(src.t for _, src in self.lines[first:]):
            self.emit(Src("", "pass", ""))
        self.hidden = hidden
        self.indent -= 1

    def statement(self, loops: bool = True) -> None:
        kinds = [(self.stmt_view, 5), (self.stmt_write, 5), (self.stmt_alias, 2),
                 (self.stmt_swap, 1),
                 (self.stmt_mask, 4), (self.stmt_temp, 2), (self.stmt_scalar, 2),
                 (self.stmt_iloop, 1.5)]
        if loops:
            kinds.append((self.stmt_loop, 3))
        fns, weights = zip(*kinds)
        self.rng.choices(fns, weights)[0]()

    # --- the whole -----------------------------------------------------------------------

    def generate(self) -> None:
        copies = ["{0}.copy()", "np.array({0})", "{0} * 1.0", "np.copy({0})", "{0} + 0.0"]
        for name, arg in (("a", "x"), ("b", "y")):
            twin = self.rng.choice(["{0}", "{0} * 1.0", "{0}.copy()"])
            if self.rng.random() < 0.07:
                made = self.rng.choice(["np.asarray({0})", "{0}"])  # an alias, not a copy
                twin = "{0}"  # (the twin spells a view with its base's name)
            else:
                made = self.rng.choice(copies)
            self.bind(name, Src(made.format(arg), twin.format(arg)))
        for _ in range(self.rng.randrange(3, 9)):
            self.statement()
        self.result = self.returned()

    def returned(self) -> Src:
        terms = []
        a, b = ("a", "b")
        if self.readable(a) and self.readable(b):
            ta, tb = self.vars[a].twin, self.vars[b].twin
            terms.append(Src(f"np.sum({a} * {b})", f"np.sum({ta} * {tb})"))
        for _ in range(self.rng.randrange(1, 4)):
            if self.rng.random() < 0.35:
                arrays = self.arrays()
                if arrays:
                    n = self.rng.choice(arrays)
                    terms.append(Src(f"np.sum({n} ** 2)", f"np.sum({self.vars[n].twin} ** 2)"))
                    continue
            terms.append(self.reduction())
        scalars = [n for n, v in self.vars.items() if v.kind == "scalar" and n != "c"
                   and self.readable(n)]
        if scalars:
            n = self.rng.choice(scalars)
            terms.append(Src(n, self.vars[n].twin))
        return Src(" + ".join(t.m for t in terms), " + ".join(t.t for t in terms),
                   " + ".join(t.p for t in terms))

    def body(self, k: str) -> str:
        return "".join("    " * i + getattr(src, k) + "\n" for i, src in self.lines
                       if getattr(src, k))

    def source(self) -> str:
        fresh = "    return f(x.copy(), y.copy(), c)\n"
        return ("import numpy as np\n\n\n"
                f"def f(x, y, c):\n{self.body('m')}    return {self.result.m}\n\n\n"
                f"def twin(x, y, c):\n{self.body('t')}    return {self.result.t}\n\n\n"
                f"def f_fresh(x, y, c):\n{fresh}")

    def private_source(self) -> str:
        """The probe and the twin returning its arguments too (plain Python only)."""
        return ("import numpy as np\n\n\n"
                f"def f_probe(x, y, c, _probe):\n{self.body('p')}    return {self.result.p}\n"
                f"\n\ndef twin_state(x, y, c):\n{self.body('t')}"
                f"    return {self.result.t}, x, y\n")


def program(rng: random.Random) -> Program:
    p = Program(rng)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p.generate()
    return p


_DIR = Path(tempfile.mkdtemp(prefix="wengert_inplace_programs_"))


def load(source: str, seed: int):
    path = _DIR / f"inplace_program_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class Wrong(AssertionError):
    """A number that differs."""


class GeneratorBug(AssertionError):
    """The twin does not compute what the program does in plain Python."""


def _leaves(t) -> list[np.ndarray]:
    if isinstance(t, (tuple, list)):
        return [leaf for s in t for leaf in _leaves(s)]
    return [np.asarray(t, dtype=float)]


def _close(got, want, what: str, rtol: float = 1e-7) -> None:
    gs, ws = _leaves(got), _leaves(want)
    if len(gs) != len(ws):
        raise Wrong(f"{what}: {len(gs)} parts, expected {len(ws)}")
    scale = max([1.0] + [float(np.max(np.abs(w))) for w in ws if w.size])
    for k, (g, w) in enumerate(zip(gs, ws)):
        if g.shape != w.shape:
            raise Wrong(f"{what}[{k}]: shape {g.shape}, expected {w.shape}")
        if not np.allclose(g, w, rtol=rtol, atol=1e-9 * scale):
            raise Wrong(f"{what}[{k}]: got {np.array2string(g.ravel(), precision=6)}, "
                        f"expected {np.array2string(w.ravel(), precision=6)}")


def _inputs(seed: int, p: Program, probe):
    """Inputs whose compared values are all at least 1e-3 from their thresholds."""
    for attempt in range(40):
        r = np.random.default_rng([seed, attempt])
        x = r.uniform(-1.0, 1.2, p.sx)
        y = r.uniform(-1.0, 1.2, p.sy)
        c = float(r.uniform(0.4, 1.1))
        margins: list[float] = []

        def record(value, threshold, margins=margins):
            d = np.abs(np.asarray(value, dtype=float) - float(threshold))
            margins.append(float(np.min(d)) if d.size else np.inf)
            return value

        # No warning either (a mean of no entries, an overflow), even in a value not used.
        with np.errstate(all="warn"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            v = probe(x.copy(), y.copy(), c, record)
        if not caught and np.isfinite(v) and abs(v) < 1e6 and \
                min(margins, default=np.inf) >= 1e-3:
            return x, y, c
    return None


def check(seed: int) -> tuple[str, str]:
    """The class of program ``seed``'s outcome and what went wrong (first line first)."""
    p = program(random.Random(seed))
    source = p.source()
    module = load(source, seed)
    path = _DIR / f"inplace_program_{seed}.py"
    private: dict = {}
    exec(compile(p.private_source(), f"<private {seed}>", "exec"), private)
    found = _inputs(seed, p, private["f_probe"])
    if found is None:
        return "skipped", "no inputs away from the thresholds"
    x, y, c = found
    f, twin = module.f, module.twin
    argnums = p.argnums
    # In plain Python: the program, its twin and the arguments' final contents.
    xf, yf = x.copy(), y.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = f(xf, yf, c)
        tv, tx, ty = private["twin_state"](x.copy(), y.copy(), c)
    try:
        _close(tv, value, "the twin's value", rtol=1e-9)
        _close((tx, ty), (xf, yf), "the twin's arguments", rtol=1e-9)
        xt, yt = x.copy(), y.copy()
        twin(xt, yt, c)
        _close((xt, yt), (x, y), "the arguments after the twin", rtol=0)
    except Wrong as e:
        return "generator", f"{e}\n{source}"

    def fresh():
        return x.copy(), y.copy()

    def side_effects(xc, yc, what):
        _close((xc, yc), (xf, yf), f"the arguments after {what}", rtol=1e-10)

    rng = np.random.default_rng(seed)
    u, w = rng.standard_normal(p.sx), rng.standard_normal(p.sy)
    dc = float(rng.standard_normal()) if 2 in argnums else 0.0
    outcomes: list[tuple[str, str]] = []

    def attempt(what, fn):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        except wengert.WengertError as e:
            loc = e.loc
            if loc is None:
                outcomes.append(("unlocated", f"{what}: {e}"))
            elif Path(loc.filename).resolve() != path.resolve():
                outcomes.append(("unlocated", f"{what}: located in {loc.filename}: {e}"))
            else:
                outcomes.append(("refused", f"{what}: {e}"))
        except AssertionError as e:
            outcomes.append(("wrong", f"{what}: {e}"))
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)[-1]
            outcomes.append(("crash", f"{what}: {type(e).__name__}: {e} "
                                      f"(at {Path(tb.filename).name}:{tb.lineno})"))

    twins: dict = {}

    def twin_derivatives():
        twins["grad"] = wengert.grad(twin, argnums=(0, 1, 2))(*fresh(), c)
        twins["jvp"] = wengert.jvp(twin, (*fresh(), c), (u, w, dc))
        twins["hessian"] = wengert.hessian(twin, argnums=argnums)(*fresh(), c)

    def grad():
        xc, yc = fresh()
        g = wengert.grad(f, argnums=argnums)(xc, yc, c)
        side_effects(xc, yc, "grad")
        if "grad" in twins:
            _close(g, tuple(twins["grad"][i] for i in argnums), "grad vs the twin's")

    def vjp():
        xc, yc = fresh()
        v, pullback = wengert.vjp(f, xc, yc, c)
        side_effects(xc, yc, "vjp")
        _close(v, value, "vjp's value", rtol=1e-10)
        first = pullback(1.0)
        again = pullback(1.0)
        _close(again, first, "the pullback called again", rtol=1e-12)
        if "grad" in twins:
            _close(first, twins["grad"], "vjp's cotangents vs the twin's gradient")

    def jvp():
        xc, yc = fresh()
        v, t = wengert.jvp(f, (xc, yc, c), (u, w, dc))
        side_effects(xc, yc, "jvp")
        _close(v, value, "jvp's value", rtol=1e-10)
        if "jvp" in twins:
            _close(t, twins["jvp"][1], "jvp vs the twin's")

    def hessian():
        xc, yc = fresh()
        h = wengert.hessian(f, argnums=argnums)(xc, yc, c)
        side_effects(xc, yc, "hessian")
        if "hessian" in twins:
            _close(h, twins["hessian"], "hessian vs the twin's")

    def grads(g):
        def run():
            check_grads(g, (x, y, c), order=2, modes=("rev", "fwd"), argnums=argnums,
                        rtol=1e-4, atol=1e-5)
        return run

    attempt("twin", twin_derivatives)
    outcomes = [(k, "twin " + m) for k, m in outcomes]
    checks = [("grad", grad), ("vjp", vjp), ("jvp", jvp), ("hessian", hessian),
              ("check_grads", grads(f))]
    if p.writes_args:
        # check_grads copies the arguments of every call; the wrapper copies them itself.
        checks.append(("check_grads of f_fresh", grads(module.f_fresh)))
    for what, fn in checks:
        attempt(what, fn)
    if _VERBOSE:
        for k, m in outcomes:
            print("  ", k, m[:300])
    for cls in ("wrong", "crash", "unlocated", "refused"):
        for k, m in outcomes:
            if k == cls:
                return cls, f"{m}\n{source}"
    return "ok", ""


_VERBOSE = False
FAILING = ("wrong", "crash", "unlocated", "generator")


@pytest.mark.parametrize("seed", range(12))
def test_random_in_place_programs(seed):
    cls, message = check(seed)
    assert cls not in FAILING, f"{cls}: {message}"


if __name__ == "__main__":
    count, first = int(sys.argv[1]), int(sys.argv[2])
    counts: Counter = Counter()
    reasons: Counter = Counter()
    for s in range(first, first + count):
        cls, message = check(s)
        counts[cls] += 1
        if cls != "ok":
            head = message.splitlines()[0] if message else ""
            print(s, cls, head[:400], flush=True)
            if cls == "refused":
                reasons[head.split("error: ", 1)[-1][:120]] += 1
    print(dict(counts))
    for reason, n in reasons.most_common():
        print(f"  {n:5d}  {reason}")
