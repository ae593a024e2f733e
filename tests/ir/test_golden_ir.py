"""Golden IR text for representative corpus functions.

``wengert.show(f, mode="ir")`` must print exactly ``golden/<name>.txt``. After a
deliberate change to the IR or its printer, regenerate with
``WENGERT_UPDATE_GOLDEN=1 python -m pytest tests/ir/test_golden_ir.py`` and read
every diff: a golden is a reviewed statement of what the frontend produces.
"""

from __future__ import annotations

from pathlib import Path

import corpus
import pytest
from frontend_checks import check_golden, normalize_paths

import wengert

GOLDEN = Path(__file__).resolve().parent / "golden"

# Each name is a corpus entry; the comment says what the golden is there to pin down.
GOLDEN_CASES = [
    "arith_basic",                 # straight-line operator calls
    "operator_precedence",         # evaluation order of nested operators
    "chained_compare",             # a < b < c evaluates b once, short-circuits
    "short_circuit_and",           # `and` returns an operand, skips the right side
    "cond_expr",                   # nested conditional expressions
    "walrus_in_comprehension",     # := inside a comprehension binds in the function
    "fstring_basic",               # format specs, !r, literal braces
    "call_mixed",                  # *args / **kwargs at the call site
    "numpy_indexing",              # slices, ..., None, tuples of indices
    "starred_displays",            # [*a, 1], {**d, 'k': 1}
    "unpack_starred",              # a, *b = xs
    "chain_assign_alias",          # a = b = [] and += on a list
    "aug_assign_subscript",        # xs[i] += 1, d[k] += v
    "if_elif_else",                # if/elif/else yielding one variable
    "if_assign_one_branch_then_use",
    "for_break",                   # for with break (exit flag)
    "for_else",                    # for ... else with break
    "while_else",                  # while ... else with break
    "while_break_continue",        # while with continue and break
    "return_in_nested_loops",      # early return from a nested loop
    "return_in_if_in_loop",
    "loop_carried",                # tuple assignment carried around a loop
    "loop_var_after_loop",         # the loop variable is live after the loop
    "nested_comprehension",        # (alias, see below)
    "generator_exprs",             # generator expressions passed to builtins
    "nested_def",                  # nested def reading an enclosing parameter
    "nested_closure_levels",       # closures two levels deep
    "closure_adder",               # a closure built by a factory (reads a cell)
    "with_block",                  # with statement feeding the result
    "with_return_inside",          # return inside a with body
    "assert_message",              # assert with a message
    "raise_from",                  # raise ... from ...
    "use_globals",                 # globals and module constants
    "module_attr_chains",          # np.linalg.norm, math.sin
    "defaults_kwonly",             # keyword-only defaults
    "factorial",                   # recursion
    "mixed_piecewise",             # the DESIGN.md example
]
_ALIASES = {"nested_comprehension": "nested_list_comp"}


def _fn(name: str):
    return corpus.get(_ALIASES.get(name, name))


def test_enough_goldens():
    assert len(GOLDEN_CASES) >= 22
    assert len(set(GOLDEN_CASES)) == len(GOLDEN_CASES)


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_golden_ir(name):
    fn = _fn(name)
    text = wengert.show(fn, mode="ir")
    assert text == wengert.show(fn, mode="ir")
    check_golden(GOLDEN / f"{name}.txt", normalize_paths(text, corpus.__file__))

