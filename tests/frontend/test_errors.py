"""Acceptance: unsupported constructs and missing source give precise, compiler-style errors.

For each construct the frontend does not lower, ``wengert.api.primal``,
``wengert.show`` and ``wengert.frontend.lower`` raise
:class:`wengert.UnsupportedSyntaxError` whose location is the construct's real
line and column in ``error_cases.py``; the rendered message shows that line
with a caret under the construct, and its full text matches a golden file
under ``golden/errors/`` (paths replaced by ``<file>``; set
``WENGERT_UPDATE_GOLDEN=1`` to rewrite the goldens, then read them).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import error_cases
import pytest
from frontend_checks import check_golden, normalize_paths

import wengert
import wengert.api
import wengert.frontend

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "errors"
CASES_FILE = Path(error_cases.__file__).resolve()
CASES_LINES = CASES_FILE.read_text().splitlines()

# name -> (function, text the caret must start at, a word the message must contain)
UNSUPPORTED = {
    "yield_assign": (error_cases.gen_yield_assign, "yield x", "generator"),
    "yield_stmt": (error_cases.gen_yield_stmt, "yield x * 2", "generator"),
    "yield_from": (error_cases.gen_yield_from, "yield from xs", "generator"),
    "yield_in_nested": (error_cases.nested_generator, "yield x", "generator"),
    "yield_in_return": (error_cases.generator_after_fine_code, "yield z", "generator"),
    "async_def": (error_cases.async_function, "async def", "async"),
    "async_nested": (error_cases.nested_async, "async def", "async"),
    "try_except": (error_cases.try_except, "try", "try"),
    "try_finally": (error_cases.try_finally, "try", "try"),
    "try_nested_deep": (error_cases.try_in_loop_in_branch, "try", "try"),
    "class_def": (error_cases.class_inside, "class", "class"),
    "global_stmt": (error_cases.global_statement, "global", "global"),
    "nonlocal_stmt": (error_cases.nonlocal_statement, "add", "nonlocal"),
    "del_attr": (error_cases.del_attr, "p.x", "del"),
    "del_attr_nested": (error_cases.del_attr_nested, "ps[0].x", "del"),
    "import_missing": (error_cases.import_missing, "import", "cannot import"),
    "import_relative": (error_cases.import_relative, "from", "relative"),
    "match_stmt": (error_cases.match_statement, "match", "match"),
}


def marker_line(name: str) -> int:
    """1-based line number of the ``# ERROR: name`` marker in error_cases.py."""
    hits = [i + 1 for i, line in enumerate(CASES_LINES)
            if re.search(rf"# ERROR: {re.escape(name)}$", line)]
    assert len(hits) == 1, f"marker for {name}: {hits}"
    return hits[0]


def lower_error(fn) -> wengert.UnsupportedSyntaxError:
    with pytest.raises(wengert.UnsupportedSyntaxError) as info:
        wengert.api.primal(fn)
    return info.value


def test_every_case_has_a_marker():
    markers = {m.group(1) for line in CASES_LINES
               if (m := re.search(r"# ERROR: (\w+)$", line))}
    assert markers == set(UNSUPPORTED)


def test_error_hierarchy():
    assert issubclass(wengert.UnsupportedSyntaxError, wengert.WengertError)
    assert issubclass(wengert.SourceUnavailableError, wengert.WengertError)
    assert issubclass(wengert.WengertError, Exception)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_location(name):
    fn, anchor, _ = UNSUPPORTED[name]
    err = lower_error(fn)
    lineno = marker_line(name)
    line = CASES_LINES[lineno - 1]
    assert err.loc is not None
    assert os.path.samefile(err.loc.filename, CASES_FILE), err.loc.filename
    assert err.loc.lineno == lineno, str(err)
    assert err.loc.col == line.index(anchor), str(err)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_rendering(name):
    fn, anchor, keyword = UNSUPPORTED[name]
    err = lower_error(fn)
    lineno = marker_line(name)
    line = CASES_LINES[lineno - 1]
    col = line.index(anchor)
    text = str(err)
    lines = text.splitlines()
    # Header: file:line:col (1-based column, the form editors jump to).
    assert lines[0].startswith(f"{err.loc.filename}:{lineno}:{col + 1}: error: "), lines[0]
    assert keyword in lines[0].lower(), lines[0]
    # The offending source line, behind a gutter with the line number.
    gutter, _, shown = lines[1].partition(" | ")
    assert gutter.strip() == str(lineno), lines[1]
    assert shown == line, lines[1]
    # The caret line: carets start under the construct.
    caret = lines[2]
    bar = caret.index("|")
    assert bar == len(gutter) + 1, (lines[1], caret)
    body = caret[bar + 2:]
    assert body.index("^") == col, f"caret at {body.index('^')}, construct at {col}:\n{text}"
    assert set(body.strip()) == {"^"}, caret
    if "\n" not in anchor and anchor.startswith(("yield", "del ")):
        # Single-line expressions are underlined exactly.
        assert body.count("^") >= len(anchor), text
    # A hint tells the user what to do instead.
    assert isinstance(err.hint, str) and err.hint.strip(), text
    assert any(ln.startswith("hint: ") for ln in lines[3:]), text


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_golden_message(name):
    fn, _, _ = UNSUPPORTED[name]
    err = lower_error(fn)
    check_golden(GOLDEN / f"{name}.txt", normalize_paths(str(err), CASES_FILE, err.loc.filename))


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_every_entry_point_raises_again(name):
    """Nothing half-built is cached: each entry point raises the same error every time."""
    fn, _, _ = UNSUPPORTED[name]
    first = lower_error(fn)
    second = lower_error(fn)
    assert str(second) == str(first)
    for mode in ("ir", "primal"):
        for _ in range(2):
            with pytest.raises(wengert.UnsupportedSyntaxError) as info:
                wengert.show(fn, mode=mode)
            assert str(info.value) == str(first)
    with pytest.raises(wengert.UnsupportedSyntaxError) as info:
        wengert.frontend.lower(fn)
    assert str(info.value) == str(first)
    assert str(lower_error(fn)) == str(first)


def test_error_in_callee_not_reported_for_caller():
    """Lowering a function only lowers *its* body: calling a generator is fine."""

    compiled = wengert.api.primal(_calls_a_generator)
    assert compiled([1.0, 2.0]) == _calls_a_generator([1.0, 2.0])


def _calls_a_generator(xs):
    return list(error_cases.gen_yield_stmt(xs))


# --------------------------------------------------------------------------
# Functions without source
# --------------------------------------------------------------------------


def _exec_function():
    ns: dict = {}
    exec("def made_by_exec(x):\n    return x + 1\n", ns)
    return ns["made_by_exec"]


def _prompt_function():
    ns: dict = {}
    exec(compile("def typed_at_prompt(x):\n    return 2 * x\n", "<stdin>", "exec"), ns)
    return ns["typed_at_prompt"]


def _exec_lambda():
    return eval("lambda q: q * 3")


NO_SOURCE = {
    "math_sin": (lambda: math.sin, "sin"),
    "len": (lambda: len, "len"),
    "exec_function": (_exec_function, "made_by_exec"),
    "prompt_function": (_prompt_function, "typed_at_prompt"),
    "eval_lambda": (_exec_lambda, "lambda"),
}


@pytest.mark.parametrize("name", sorted(NO_SOURCE))
def test_source_unavailable(name):
    make, fn_name = NO_SOURCE[name]
    fn = make()
    with pytest.raises(wengert.SourceUnavailableError) as info:
        wengert.api.primal(fn)
    text = str(info.value)
    assert fn_name in text, text
    assert "Traceback" not in text
    if wengert.rules.registry.lookup(fn) is not None:
        # A primitive with rules is wrapped for the API: show() displays the wrapper.
        assert f"return __primitive({'x' if fn_name == 'sin' else 'obj'})" in \
            wengert.show(fn, mode="primal")
        return
    # The same for show(), and again on a second try.
    for mode in ("ir", "primal", "ir"):
        with pytest.raises(wengert.SourceUnavailableError) as again:
            wengert.show(fn, mode=mode)
        assert str(again.value) == text
    with pytest.raises(wengert.SourceUnavailableError):
        wengert.frontend.lower(fn)


@pytest.mark.parametrize("name", sorted(NO_SOURCE))
def test_source_unavailable_golden_message(name):
    make, _ = NO_SOURCE[name]
    with pytest.raises(wengert.SourceUnavailableError) as info:
        wengert.api.primal(make())
    check_golden(GOLDEN / f"source_{name}.txt", normalize_paths(str(info.value), __file__))


def test_source_unavailable_is_a_wengert_error():
    with pytest.raises(wengert.WengertError):
        wengert.api.primal(math.cos)


# --- imports inside a function are imports, not errors ----------------------------------


def _imports_inside(a):
    import os.path  # binds ``os``
    import statistics
    from math import cos
    from math import sin as s

    import numpy as np
    return statistics.stdev([a, a * a, 1.0]) + s(a) * cos(a) + float(np.sum(np.array([a, a]))) \
        + len(os.path.sep)


def test_imports_inside_a_function_bind_their_names():
    from wengert.testing import check_grads

    assert wengert.api.primal(_imports_inside)(0.6) == pytest.approx(_imports_inside(0.6))
    check_grads(_imports_inside, (0.6,), order=2, modes=("rev", "fwd"))
