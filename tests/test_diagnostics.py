"""Diagnostics render like a compiler's: location, source line, caret underline, hint, notes."""

from __future__ import annotations

import ast
import warnings

import pytest

import wengert
from wengert.diagnostics import (
    NonDifferentiableWarning,
    SourceLoc,
    UnsupportedSyntaxError,
    WengertError,
    loc_of,
    render,
)
from wengert.driver.pipeline import lower

LINE = "    y = math.floor(x) + z"
SPAN = "math.floor(x)"
COL = LINE.index(SPAN)


def parts(text: str) -> tuple[str, str, str, list[str]]:
    """Header, source line, caret line, remaining lines."""
    lines = text.splitlines()
    return lines[0], lines[1], lines[2], lines[3:]


def caret_span(source_line: str, caret_line: str, text: str) -> str:
    """The text of ``source_line`` above the carets (both lines include the gutter)."""
    assert source_line.endswith(text)
    start = caret_line.index("^")
    end = len(caret_line.rstrip())
    return source_line[start:end]


def loc(**kw) -> SourceLoc:
    base = dict(filename="model.py", lineno=12, col=COL, end_lineno=12,
                end_col=COL + len(SPAN), source_line=LINE)
    base.update(kw)
    return SourceLoc(**base)


def test_header_has_file_line_and_one_based_column():
    header, *_ = parts(render("error", "no derivative", loc()))
    assert header == f"model.py:12:{COL + 1}: error: no derivative"


def test_source_line_is_shown_after_a_gutter_with_the_line_number():
    _, src, caret, _ = parts(render("error", "no derivative", loc()))
    gutter, _, text = src.partition(" | ")
    assert gutter.strip() == "12"
    assert text == LINE
    # The caret line continues the gutter's bar in the same column.
    assert caret.index("|") == src.index("|")
    assert caret[:caret.index("|")].strip() == ""


def test_caret_underlines_exactly_the_span():
    _, src, caret, _ = parts(render("error", "no derivative", loc()))
    assert caret_span(src, caret, LINE) == SPAN
    assert set(caret.split("| ", 1)[1].strip()) == {"^"}


def test_hint_and_notes_follow_in_order():
    text = render("error", "no derivative", loc(), hint="register a rule",
                  notes=("called from f", "called from g"))
    *_, rest = parts(text)
    assert rest == ["hint: register a rule", "note: called from f", "note: called from g"]


def test_span_without_end_gets_one_caret():
    _, src, caret, _ = parts(render("error", "m", loc(end_lineno=None, end_col=None)))
    assert caret_span(src, caret, LINE) == "m"  # the first character of math.floor


def test_empty_span_still_gets_one_caret():
    _, _, caret, _ = parts(render("error", "m", loc(end_col=COL)))
    assert caret.count("^") == 1


def test_multi_line_span_is_underlined_to_the_end_of_the_first_line():
    _, src, caret, _ = parts(render("error", "m", loc(end_lineno=14, end_col=3)))
    assert caret_span(src, caret, LINE) == LINE[COL:]


def test_long_line_numbers_keep_the_caret_aligned():
    _, src, caret, _ = parts(render("error", "m", loc(lineno=123456, end_lineno=123456)))
    assert src.split(" | ")[0].strip() == "123456"
    assert caret.index("|") == src.index("|")
    assert caret_span(src, caret, LINE) == SPAN


def test_without_location_only_the_message_hint_and_notes():
    text = render("error", "bad", None, hint="h", notes=("n",))
    assert text.splitlines() == ["error: bad", "hint: h", "note: n"]


def test_source_line_is_read_from_the_file_when_not_given(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("a = 1\nb = undefined_thing(a)\n")
    text = render("error", "m", SourceLoc(str(path), 2, 4, 2, 19))
    _, src, caret, _ = parts(text)
    assert caret_span(src, caret, "b = undefined_thing(a)") == "undefined_thing"


def test_missing_source_line_leaves_no_gutter():
    text = render("error", "m", SourceLoc("<nowhere>", 3, 0))
    assert text == "<nowhere>:3:1: error: m"


def test_error_message_is_the_rendered_diagnostic():
    err = UnsupportedSyntaxError("no try", loc(), hint="move it", notes=["n"])
    assert isinstance(err, WengertError) and isinstance(err, wengert.WengertError)
    assert str(err) == err.render() == render("error", "no try", loc(), "move it", ("n",))


def test_warning_renders_as_a_warning():
    w = NonDifferentiableWarning("int() cuts the derivative", loc(), hint="use floor")
    header = str(w).splitlines()[0]
    assert header.endswith(": warning: int() cuts the derivative")
    with pytest.warns(NonDifferentiableWarning, match="cuts the derivative"):
        warnings.warn(w, stacklevel=1)


def test_loc_of_shifts_lines_and_keeps_the_nodes_text():
    lines = ["def f(x):\n", "    return g(x)\n"]
    tree = ast.parse("".join(lines))
    call = tree.body[0].body[0].value
    where = loc_of(call, "m.py", line_offset=10, lines=lines)
    assert (where.lineno, where.end_lineno) == (12, 12)
    assert where.source_line == "    return g(x)"
    assert where.line_text()[where.col:where.end_col] == "g(x)"


# --------------------------------------------------------------------------- from the frontend


def generator(x):
    y = (yield x)
    return y


def generator_after_text(x):
    label = "αβγ"; y = (yield x)  # noqa: E702
    return label, y


@pytest.mark.parametrize("f", [generator, generator_after_text])
def test_frontend_error_points_at_the_users_source(f):
    with pytest.raises(UnsupportedSyntaxError) as info:
        lower(f)
    err = info.value
    text = err.render()
    header, src, caret, rest = parts(text)
    path, line, col = header.split(": ")[0].rsplit(":", 2)
    assert path == __file__
    assert int(line) == f.__code__.co_firstlineno + 1
    source_line = err.loc.line_text()
    assert src.endswith(source_line)
    # The column is a character column and the carets sit under ``yield x``.
    assert int(col) == source_line.index("yield x") + 1
    assert caret_span(src, caret, source_line) == "yield x"
    assert rest and rest[0].startswith("hint: ")


def test_a_rule_s_refusal_when_it_runs_is_a_wengert_error_and_a_type_error():
    # (a plain TypeError from inside wengert before: ``except WengertError`` missed it)
    import numpy as np

    def nuclear(x):
        return np.linalg.norm(x, "nuc")

    with pytest.raises(wengert.RuleRefusal, match="nuc") as e:
        wengert.grad(nuclear)(np.eye(3))
    assert isinstance(e.value, wengert.WengertError) and isinstance(e.value, TypeError)
    # located at the user's call, as refusals made before it runs are
    assert e.value.loc is not None and e.value.loc.filename == __file__
    assert e.value.loc.line_text().strip() == 'return np.linalg.norm(x, "nuc")'
    assert f"{__file__}:{e.value.loc.lineno}:" in str(e.value) and "^^^" in str(e.value)


@pytest.mark.parametrize("spelling", ["einsum", "vstack", "nuc"])
def test_refusals_as_the_rule_runs_point_at_the_user_s_line(spelling):
    import numpy as np

    def einsum(a):
        return np.einsum(a, [0, 1], a, [1, 0])

    def vstack(a):
        return np.sum(np.vstack(a))

    def nuc(a):
        return np.linalg.norm(a, "nuc") * 2.0

    f = {"einsum": einsum, "vstack": vstack, "nuc": nuc}[spelling]
    for run in (lambda: wengert.grad(f)(np.eye(2) + 0.1),
                lambda: wengert.jvp(f, (np.eye(2) + 0.1,), (np.eye(2),))):
        with pytest.raises(wengert.WengertError) as e:
            run()
        assert e.value.loc is not None and e.value.loc.filename == __file__, str(e.value)
        assert "error: wengert:" not in str(e.value)
