"""Adversarial programs: the shapes that once gave wrong results, written as users write them.

Built on the generator of :mod:`random_programs` (grammar :data:`ADVERSARIAL`, a
superset of ``SMOOTH``), each program mixes ordinary float code with the classes of
construct that broke wengert's promise before (issue "Never silently wrong"):

* negative literals and constants raised to powers: ``x * (-1.5) ** 2``,
  ``(-1) ** (i0 + 1)``, ``c = -1.0`` then ``x * c ** 2`` (precedence in printing);
* user names that look like generated ones: the locals and parameters are renamed to
  ``t1``, ``loop``, ``x_bar``, ``s_1``, ``x_dot``, ``out_bar``, ``inouts``... (naming);
* a list written while a loop iterates over it, and in-place sweeps through
  ``enumerate`` (items as they are reached);
* methods of list elements that write into ``self``, properties, class methods, named
  tuples, callable objects (descriptors and objects);
* lambdas with default-argument capture, in lists; ``map``, ``sorted(key=)``,
  ``max(key=)``; a helper integrating a lambda (functions as values);
* ``max``/``min`` against constants (zero adjoints in loops), variadic helpers.

:func:`check_program` runs one program through every mode and compares with central
differences; it returns what happened, so a bulk run (``python
tests/frontend/adversarial_programs.py --count 5000``) can count outcomes, and the
test (``tests/test_adversarial.py``) can fail on the first wrong one.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import sys
import warnings
from collections import Counter

import numpy
from hypothesis import strategies as st
from random_programs import (
    HELPERS_MODULE,
    SMOOTH,
    Grammar,
    blocks,
    close,
    expressions,
    load_function,
    smooth_point,
)

# Helpers and classes the programs use, in a module of their own (shared, so derivatives of
# the helpers are derived once).
ADVERSARIAL_HELPERS_MODULE = "wengert_adversarial_helpers"
ADVERSARIAL_HELPERS = f'''import dataclasses
import math
from typing import NamedTuple

from {HELPERS_MODULE} import squash


def vsum(*ts):
    return 0.5 * sum(squash(t) for t in ts)


def integrate(g, lo, hi, n=4):
    h = (hi - lo) / n
    s = 0.5 * (g(lo) + g(hi))
    for i in range(1, n):
        s += g(lo + i * h)
    return s * h


@dataclasses.dataclass
class Cell:
    u: float
    v: float

    def step(self, dt):
        self.u = self.u + self.v * dt

    def stepped(self, dt):
        return Cell(self.u + self.v * dt, self.v)

    @property
    def energy(self):
        return squash(self.u) * squash(self.v)


@dataclasses.dataclass
class Tracked:
    u: float
    v: float = 0.5

    def __post_init__(self):
        self.w = squash(self.u) * self.v


class Box:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    @property
    def area(self):
        return squash(self.w) * squash(self.h)

    @classmethod
    def square(cls, s):
        return cls(s, s)


class Pt(NamedTuple):
    u: float
    v: float = 0.5


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, t):
        return math.tanh(self.k * t)


SCALE = Scaler(0.75)
'''

ADVERSARIAL_PRELUDE = (
    "import math\n\nimport numpy as np\n\n"
    f"from {HELPERS_MODULE} import h1, h2, h3, squash\n"
    f"from {ADVERSARIAL_HELPERS_MODULE} import (SCALE, Box, Cell, Pt, Tracked,\n"
    "    integrate, vsum)\n\n\n"
)

ADVERSARIAL = dataclasses.replace(
    SMOOTH,
    consts=("0.5", "2.0", "-1.5", "3", "0.25", "1", "-0.5", "-2.0"),
    expression_kinds=(*SMOOTH.expression_kinds, "negpow", "signpow", "maxconst", "maxconst",
                      "vcall", "prop", "classmeth", "nt", "callobj", "integrate", "map",
                      "sortkey", "maxkey"),
    statement_kinds=(*SMOOTH.statement_kinds, "sweep", "mutiter", "cells", "lambdas",
                     "constpow", "objects", "containers", "arrays", "swaps", "rebinds",
                     "stars"),
    prelude=ADVERSARIAL_PRELUDE,
)

#: Names a program's variables are renamed to: what generated code calls its own values.
ADVERSARIAL_NAMES = ("t1", "t2", "t3", "loop", "loop_1", "x_bar", "y_bar", "s_1", "x_dot",
                     "y_pb", "out_bar", "inouts", "seed", "rec", "item", "items_bar", "k_1",
                     "site", "fn", "taken", "result", "returned", "v", "a_dot", "xs_len",
                     "lambda_", "t4", "t1_1", "z_dot", "accumulate", "nonzero", "tmp")
#: The program's own variables that may be renamed.
RENAMABLE = ("x", "y", "z", "a", "b", "acc", "d", "g", "t", "_rest", "c", "ps", "fs", "vals",
             "dd")


def _extra_expression(draw, kind: str, left: str, sub, loopvars: tuple[str, ...]) -> str:
    if kind == "negpow":
        base = draw(st.sampled_from(["(-1.5)", "(-0.5)", "(-2.0)", "-(1.5)"]))
        power = draw(st.sampled_from(["2", "3", "2.0"]))
        return f"({left} * {base} ** {power})"
    if kind == "signpow":
        k = f"({loopvars[-1]} + 1)" if loopvars else draw(st.sampled_from(["3", "(2 + 1)"]))
        return f"((-1) ** {k} * {left})"
    if kind == "maxconst":
        form = draw(st.sampled_from(["max(0.27, {})", "min({}, -0.5)", "max(0.0, {}) * 0.5",
                                     "max({}, 0.1, -0.3)"]))
        return form.format(left)
    if kind == "vcall":
        return draw(st.sampled_from([f"vsum({left})", f"vsum({left}, {draw(sub)})",
                                     f"vsum({left}, x, {draw(sub)})"]))
    if kind == "prop":
        return f"Box({left}, {draw(sub)}).area"
    if kind == "classmeth":
        return f"Box.square({left}).area"
    if kind == "nt":
        return draw(st.sampled_from([f"Pt({left}, {draw(sub)}).u", f"Pt({left}).v * {left}",
                                     f"Pt(v={left}, u=y).v",
                                     f"Pt({left}, y)._replace(u={draw(sub)}).u * y",
                                     f"sum(Pt(y, {left})._asdict().values())"]))
    if kind == "callobj":
        return f"SCALE({left})"
    if kind == "integrate":
        # The lambda reads only parameters (never reassigned): late binding cannot matter.
        return f"integrate(lambda t: squash(t * x + y), 0.0, {left})"
    if kind == "map":
        return f"sum(map(lambda t: squash(t * z), [{left}, {draw(sub)}]))"
    if kind == "sortkey":
        return f"sorted([{left}, {draw(sub)}, x], key=abs)[1]"
    assert kind == "maxkey", kind
    return f"max([{left}, {draw(sub)}, y], key=lambda t: t * t)"


def _extra_statement(draw, kind: str, g: Grammar, indent: int, expr, wrap) -> list:
    target = draw(st.sampled_from(g.targets))
    if kind == "sweep":
        # An in-place sweep: each step writes the next item, which the loop reads next.
        return [(indent, "acc.append(x)"), (indent, "acc.append(y)"),
                (indent, "for j, e in enumerate(acc):"),
                (indent + 1, "if j + 1 < len(acc):"),
                (indent + 2, "acc[j + 1] = acc[j + 1] * 0.5 + 0.25 * e"),
                (indent + 1, f"{target} = {wrap(f'{target} + e * 0.5')}")]
    if kind == "mutiter":
        # Writing into the list being iterated: the loop sees each item as it is reached.
        return [(indent, f"acc.append({wrap(draw(expr))})"),
                (indent, "for e in acc:"),
                (indent + 1, f"{target} = {wrap(f'{target} + e * 0.5')}"),
                (indent + 1, f"acc[-1] = {wrap(draw(expr))}")]
    if kind == "cells":
        form = draw(st.sampled_from(["method", "functional", "inline"]))
        lines = [(indent, f"ps = [Cell({draw(expr)}, x), Cell(y, {target})]")]
        if form == "method":
            lines += [(indent, "for p in ps:"), (indent + 1, "p.step(0.5)")]
        elif form == "functional":
            lines += [(indent, "ps = [p.stepped(0.5) for p in ps]")]
        else:
            lines += [(indent, "for p in ps:"), (indent + 1, "p.u = p.u + p.v * 0.5")]
        lines.append((indent, f"{target} = {wrap('ps[0].u + ps[1].energy')}"))
        return lines
    if kind == "lambdas":
        return [(indent, "fs = [lambda t, k=k: squash(k * t) for k in range(1, 4)]"),
                (indent, f"{target} = {wrap(f'sum(h(x) for h in fs) + {target}')}")]
    if kind == "objects":
        # Objects the function makes and keeps: stepped in place, renewed, a field given a
        # value of another type (an int, then a float), made with __post_init__, or a
        # plain object whose fields are written.
        form = draw(st.sampled_from(["step", "renew", "retype", "post", "box"]))
        e = draw(expr)
        if form == "step":
            return [(indent, f"ob = Cell({e}, {target})"), (indent, "for _ in range(2):"),
                    (indent + 1, "ob.step(0.5)"), (indent, f"{target} = {wrap('ob.u * ob.v')}")]
        if form == "renew":
            return [(indent, f"ob = Cell(x, {e})"), (indent, "for _ in range(2):"),
                    (indent + 1, "ob = ob.stepped(0.25)"),
                    (indent, f"{target} = {wrap(f'ob.energy + {target}')}")]
        if form == "retype":
            return [(indent, f"ob = Cell({e}, 2)"), (indent, "ob.v = ob.v * y"),
                    (indent, f"{target} = {wrap(f'ob.u + ob.v * {target}')}")]
        if form == "post":
            return [(indent, f"ob = Tracked({e})"), (indent, "ob.u = ob.w * x"),
                    (indent, f"{target} = {wrap(f'ob.u + ob.w + {target}')}")]
        return [(indent, f"bx = Box({e}, y)"), (indent, f"bx.w = bx.w * 0.5 + {target}"),
                (indent, f"{target} = {wrap('bx.area')}")]
    if kind == "containers":
        # Methods of dicts and lists holding active values, as users call them.
        form = draw(st.sampled_from(["items", "get", "pop", "extend", "insert", "update",
                                     "dictpop", "del", "slice"]))
        e = draw(expr)
        if form == "items":
            return [(indent, f"dd = {{'p': {e}, 'q': {target}}}"),
                    (indent, "for kk, vv in dd.items():"),
                    (indent + 1, f"{target} = {wrap(f'{target} * 0.5 + vv * len(kk)')}")]
        if form == "get":
            got = "dd.get('p', 0.0) * y + dd.get('q', x)"
            return [(indent, f"dd = {{'p': {e}}}"), (indent, f"{target} = {wrap(got)}")]
        if form == "pop":
            end = draw(st.sampled_from(["", "0", "-1"]))
            return [(indent, f"acc.append({e})"), (indent, "acc.append(x)"),
                    (indent, f"{target} = {wrap(f'{target} + acc.pop() * acc.pop({end})')}")]
        if form == "dictpop":
            got = "dd.pop('p') * y + dd.pop('r', x) + len(dd) + dd['q']"
            return [(indent, f"dd = {{'p': {e}, 'q': {target}}}"),
                    (indent, f"{target} = {wrap(got)}")]
        if form == "del":
            return [(indent, f"dd = {{'p': {e}, 'q': x}}"), (indent, "del dd['p']"),
                    (indent, f"acc.append({e})"), (indent, "acc.append(y)"),
                    (indent, "del acc[-2]"),
                    (indent, f"{target} = {wrap(f'{target} + acc[-1] * sum(dd.values())')}")]
        if form == "slice":
            return [(indent, f"acc.extend([{e}, y, x])"), (indent, "acc[-3:-1] = [acc[-1] * y]"),
                    (indent, f"{target} = {wrap(f'{target} + acc[-2] * acc[-1]')}")]
        if form == "extend":
            return [(indent, f"acc.extend([{e}, y])"),
                    (indent, f"{target} = {wrap(f'{target} + acc[-2] * acc[-1]')}")]
        if form == "insert":
            at = draw(st.sampled_from(["0", "1", "-1", "5"]))
            return [(indent, f"acc.insert({at}, {e})"),
                    (indent, f"{target} = {wrap(f'{target} + acc[0] * 0.5')}")]
        return [(indent, "dd = {'p': x}"), (indent, f"dd.update({{'q': {e}}})"),
                (indent, "dd.setdefault('r', y)"),
                (indent, f"{target} = {wrap(f'sum(dd.values()) * 0.25 + {target}')}")]
    if kind == "arrays":
        # Python loops over the numbers of NumPy arrays: reads, writes of one entry, an
        # in-place sweep reading what it wrote, rows of a matrix, iteration, a copy.
        form = draw(st.sampled_from(["read", "write", "sweep", "matrix", "iter", "copy"]))
        e = draw(expr)
        if form == "read":
            return [(indent, f"av = np.array([x, y, {e}])"),
                    (indent, "for j in range(len(av)):"),
                    (indent + 1, f"{target} = {wrap(f'{target} + av[j] * av[j - 1] * 0.5')}")]
        if form == "write":
            return [(indent, "aw = np.zeros(3)"), (indent, "for j in range(3):"),
                    (indent + 1, f"aw[j] = {wrap(f'{e} * (j + 1)')} + (aw[j - 1] if j else y)"),
                    (indent, f"{target} = {wrap(f'{target} + np.sum(aw * aw) * 0.1')}")]
        if form == "sweep":
            return [(indent, f"av = np.array([x, {e}, z])"), (indent, "for j in range(1, 3):"),
                    (indent + 1, "av[j] = 0.5 * (av[j - 1] + av[j]) + 0.1 * av[j] * av[j]"),
                    (indent, f"{target} = {wrap(f'{target} + av[2] - av[0]')}")]
        if form == "matrix":
            return [(indent, f"am = np.array([[x, y], [{e}, z]])"),
                    (indent, "for j in range(2):"), (indent + 1, "for k in range(2):"),
                    (indent + 2, f"{target} = {wrap(f'{target} + am[j, k] * am[k][j]')}")]
        if form == "iter":
            return [(indent, f"for ev in np.array([x, {e}]):"),
                    (indent + 1, f"{target} = {wrap(f'{target} * 0.5 + ev * y')}")]
        return [(indent, "ac = np.array([x, y]).copy()"), (indent, f"ac[0] = ac[1] * {e}"),
                (indent, f"{target} = {wrap(f'{target} + ac[0] * ac[1]')}")]
    if kind == "swaps":
        # Rows of a table swapped (a pivot picked by a key, adjacent rows, through a
        # temporary), then written into.
        form = draw(st.sampled_from(["pivot", "adjacent", "temporary"]))
        e = draw(expr)
        lines = [(indent, f"rows = [[x, {e}], [y, 0.5], [z, x * y]]")]
        if form == "pivot":
            lines += [(indent, "pv = max(range(3), key=lambda j: abs(rows[j][0]))"),
                      (indent, "rows[0], rows[pv] = rows[pv], rows[0]")]
        elif form == "adjacent":
            lines += [(indent, "for j in range(2):"),
                      (indent + 1, "if rows[j][0] > rows[j + 1][0]:"),
                      (indent + 2, "rows[j], rows[j + 1] = rows[j + 1], rows[j]")]
        else:
            lines += [(indent, "tr = rows[2]"), (indent, "rows[2] = rows[1]"),
                      (indent, "rows[1] = tr")]
        return lines + [(indent, "rows[1][0] = rows[1][0] * y + rows[0][1]"),
                        (indent, f"{target} = "
                                 f"{wrap(f'{target} + rows[0][0] * rows[2][1] + sum(rows[1])')}")]
    if kind == "rebinds":
        # A nested function rebinding the caller's variable (``nonlocal``), called as a
        # statement, assigned, added to that very variable.
        e = draw(expr)
        call = draw(st.sampled_from([f"bump({e})", f"rr = bump({e})",
                                     f"{target} += bump(y)"]))
        # (its parameter is never the variable it rebinds: ``def bump(v): nonlocal v`` is
        # no Python)
        return [(indent, "def bump(by):"), (indent + 1, f"nonlocal {target}"),
                (indent + 1, f"{target} = {wrap(f'{target} * 0.5 + by')}"),
                (indent + 1, f"return by * {target}"),
                (indent, call), (indent, f"{target} = {wrap(f'{target} + x')}")]
    if kind == "stars":
        # Starred arguments: a named tuple's entries, the columns of rows, numbers.
        e = draw(expr)
        form = draw(st.sampled_from(["tuple", "columns", "extreme"]))
        if form == "tuple":
            got = f"math.hypot(*Pt({e}, y)) + math.atan2(*(x, 2.0))"
        elif form == "columns":
            got = f"sum(c[0] * c[1] for c in zip(*[[x, {e}], [y, z]]))"
        else:
            got = f"max(*[x, {e}, 0.25]) - min(*[y, z])"
        return [(indent, f"{target} = {wrap(f'{target} + {got}')}")]
    assert kind == "constpow", kind
    c = draw(st.sampled_from(["-1.0", "-0.5", "-2.0"]))
    return [(indent, f"c = {c}"), (indent, f"{target} = {wrap(f'{target} + x * c ** 2')}")]


@st.composite
def adversarial_expressions(draw, g: Grammar, loopvars: tuple[str, ...], depth: int = 2) -> str:
    kinds = g.expression_kinds
    base = len(SMOOTH.expression_kinds)
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(expressions(g, loopvars, 0))
    k = draw(st.integers(0, len(kinds) - 1))
    if k < base:
        return draw(expressions(dataclasses.replace(g, expression_kinds=(kinds[k],)),
                                loopvars, depth))
    sub = adversarial_expressions(g, loopvars, depth - 1)
    return _extra_expression(draw, kinds[k], draw(sub), sub, loopvars)


@st.composite
def adversarial_blocks(draw, g: Grammar, indent: int, loopvars: tuple[str, ...] = ()) -> list:
    """A block of the base grammar's statements, with adversarial ones mixed in."""
    lines = []
    base = dataclasses.replace(g, statement_kinds=SMOOTH.statement_kinds,
                               expression_kinds=SMOOTH.expression_kinds)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(g.statement_kinds))
        expr = adversarial_expressions(g, loopvars)
        wrapper = draw(st.sampled_from(g.wrappers))

        def wrap(e: str, w: str = wrapper) -> str:
            return f"{w}({e})"

        if kind in SMOOTH.statement_kinds:
            if draw(st.integers(0, 2)) == 0:
                lines += draw(blocks(base, indent, 0, loopvars, 0))
                continue
            lines.append((indent, f"{draw(st.sampled_from(g.targets))} = "
                                  f"{wrap(draw(expr))}"))
            continue
        lines += _extra_statement(draw, kind, g, indent, expr, wrap)
    return lines


@st.composite
def adversarial_programs(draw) -> str:
    """The source of a module defining ``f(x, y, z)``, its names renamed adversarially."""
    g = ADVERSARIAL
    body = draw(adversarial_blocks(g, 1))
    if draw(st.booleans()):
        # Some control flow around adversarial statements, too.
        var = "i0"
        inner = draw(adversarial_blocks(g, 2, (var,)))
        body = [(1, f"for {var} in range({draw(st.integers(1, 3))}):"), *inner, *body]
    final = draw(st.sampled_from(SMOOTH.finals))
    lines = ["def f(x, y, z):", "    a = 0.0", "    b = 1.0", "    acc = []"]
    lines += ["    " * ind + text for ind, text in body]
    lines.append(f"    return {final}")
    source = "\n".join(lines) + "\n"
    names = draw(st.permutations(ADVERSARIAL_NAMES))
    count = draw(st.integers(0, len(RENAMABLE)))
    mapping = dict(zip(RENAMABLE[:count], names))
    source = re.sub(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b",
                    lambda m: mapping[m.group(1)], source) if mapping else source
    return g.prelude + source


def install_helpers() -> None:
    """Write the helper module next to the generated programs (see random_programs)."""
    import random_programs

    path = random_programs._TMP / f"{ADVERSARIAL_HELPERS_MODULE}.py"
    if not path.exists():
        path.write_text(ADVERSARIAL_HELPERS)


install_helpers()


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """What one program did: ``"ok"``, ``"refused"`` (a located WengertError, with its
    message), ``"skipped"`` (no smooth point, or the program itself fails), or a failure
    (``"wrong"``, ``"crash"``, ``"unlocated"``) with its description."""

    kind: str
    detail: str = ""


def _fd(f, args, i, h=1e-6):
    a, b = list(args), list(args)
    a[i] += h
    b[i] -= h
    return (f(*a) - f(*b)) / (2 * h)


def check_program(source: str, seed: int, hessian: bool = True,
                  third: bool = False) -> Outcome:
    """Run ``source``'s ``f`` through the regenerated primal, reverse mode, forward mode,
    (``hessian``) forward over reverse and (``third``) the derivatives of ``f_xx`` in both
    modes, against central differences."""
    import wengert
    from wengert import api

    f = load_function(source)
    try:
        found = smooth_point(f, seed)
    except Exception as e:  # the program itself fails: nothing to compare
        return Outcome("skipped", f"the program raises {type(e).__name__}")
    if found is None:
        return Outcome("skipped", "no smooth point")
    args, numeric = found
    expected = f(*args)
    scale = max(1.0, abs(expected))
    stage = "primal"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = api.primal(f)(*args)
            if not (value == expected or math.isclose(value, expected, rel_tol=1e-12)):
                return Outcome("wrong", f"regenerated primal {value!r} != {expected!r}")
            stage = "reverse"
            value, grads = wengert.value_and_grad(f, argnums=(0, 1, 2))(*copy.deepcopy(args))
            if not (value == expected or math.isclose(value, expected, rel_tol=1e-12)):
                return Outcome("wrong", f"value_and_grad value {value!r} != {expected!r}")
            for i in range(3):
                if not close(grads[i], numeric[i], scale):
                    return Outcome("wrong", f"grad[{i}] {grads[i]!r} vs differences "
                                            f"{numeric[i]!r}")
            stage = "forward"
            u = (0.3, -0.7, 1.1)
            value, tangent = wengert.jvp(f, copy.deepcopy(args), u)
            want = sum(ui * ni for ui, ni in zip(u, numeric))
            if not (value == expected or math.isclose(value, expected, rel_tol=1e-12)):
                return Outcome("wrong", f"jvp value {value!r} != {expected!r}")
            if not close(tangent, want, scale):
                return Outcome("wrong", f"jvp tangent {tangent!r} vs differences {want!r}")
            if hessian:
                stage = "hessian"
                h = numpy.array(wengert.hessian(f, argnums=(0, 1, 2))(*copy.deepcopy(args)),
                                dtype=float)
                g = wengert.grad(f, argnums=(0, 1, 2))
                for j in range(3):
                    col = [_fd(lambda *xs, i=i: g(*xs)[i], args, j, 1e-5) for i in range(3)]
                    gscale = max(1.0, float(numpy.max(numpy.abs(grads))))
                    if not all(numpy.isfinite(col)):
                        continue
                    if not close(h[:, j], col, gscale * 10):
                        return Outcome("wrong", f"hessian column {j} {h[:, j]!r} vs "
                                                f"differences of grad {col!r}")
            if third:
                stage = "third"
                # The third derivatives through f_xx (reverse over reverse over reverse, and
                # forward over reverse over reverse) against central differences of f_xx.
                fxx = wengert.grad(wengert.grad(f, argnums=0), argnums=0)
                d3 = wengert.grad(fxx, argnums=(0, 1, 2))(*copy.deepcopy(args))
                # (Richardson's extrapolation of central differences: a third
                # derivative's point may be steep enough for h**2 to show)
                want3 = [(4 * _fd(fxx, args, j, 5e-5) - _fd(fxx, args, j, 1e-4)) / 3
                         for j in range(3)]
                s3 = max(1.0, abs(fxx(*copy.deepcopy(args))))
                if all(numpy.isfinite(want3)) and not close(d3, want3, s3 * 10):
                    return Outcome("wrong", f"third derivatives {d3!r} vs differences of "
                                            f"f_xx {want3!r}")
                _, t3 = wengert.jvp(fxx, copy.deepcopy(args), u)
                w3 = sum(ui * wi for ui, wi in zip(u, want3))
                if numpy.isfinite(w3) and not close(t3, w3, s3 * 10):
                    return Outcome("wrong", f"jvp of f_xx {t3!r} vs differences {w3!r}")
        except wengert.WengertError as e:
            if e.loc is None:
                return Outcome("unlocated", f"{stage}: {e}")
            return Outcome("refused", f"{stage}: {e.message}")
        except Exception as e:
            return Outcome("crash", f"{stage}: {type(e).__name__}: {e}")
    return Outcome("ok")


def main(argv: list[str]) -> int:
    """Bulk run: ``--count N`` programs (seeded), outcomes counted, failures printed."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    count = int(argv[argv.index("--count") + 1]) if "--count" in argv else 200
    # ``--seed S``: another sequence of programs than the default derandomised one.
    fresh = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else None
    third = "--third" in argv  # (also the third derivatives: slower)
    tally: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    failures: list[str] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=fresh is None,
              suppress_health_check=list(HealthCheck))
    @given(source=adversarial_programs(), seed=st.integers(0, 2**32 - 1))
    def run(source: str, seed: int) -> None:
        out = check_program(source, seed, third=third)
        tally[out.kind] += 1
        if out.kind == "refused":
            refusals[out.detail.split(":", 1)[0] + ": " +
                     re.sub(r"'[^']*'", "'…'", out.detail.split(": ", 1)[-1])[:100]] += 1
        elif out.kind not in ("ok", "skipped"):
            failures.append(f"--- {out.kind}: {out.detail}\n{source}")

    if fresh is not None:
        run = hypothesis_seed(fresh)(run)
    run()
    for f in failures[:20]:
        print(f)
    print(dict(tally))
    for msg, k in refusals.most_common(15):
        print(f"{k:6d}  {msg}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
