"""The adversarial program generator, in the test command.

Programs of :mod:`adversarial_programs` (the shapes that once gave wrong results:
negative literals to powers, names that look generated, lists changed while iterated,
element methods writing ``self``, properties, named tuples, callable objects,
default-argument lambdas, ``map``/``sorted``/``max`` with a key, helpers taking
lambdas, ``max`` against constants, variadic helpers) through the regenerated primal,
reverse mode, forward mode and Hessians, against central differences. A wrong value
or a crash fails; a refusal must name the user's line. The bulk run that is quoted in
closing notes is ``python tests/frontend/adversarial_programs.py --count 5000``.
"""

from __future__ import annotations

import os

from adversarial_programs import adversarial_programs, check_program
from hypothesis import given
from hypothesis import strategies as st
from random_programs import derandomized

EXAMPLES = int(os.environ.get("WENGERT_ADVERSARIAL_EXAMPLES", "120"))
#: Four tests of a quarter each (their names seed different programs), so that the parallel
#: test command spreads them over its workers rather than one worker running all.
PART = max(1, EXAMPLES // 4)


def _right_or_refused(source: str, seed: int) -> None:
    out = check_program(source, seed)
    assert out.kind in ("ok", "skipped", "refused"), f"{out.kind}: {out.detail}\n{source}"


@derandomized(max_examples=PART)
@given(source=adversarial_programs(), seed=st.integers(0, 2**32 - 1))
def test_adversarial_programs_are_right_or_refused_with_a_location(source, seed):
    _right_or_refused(source, seed)


@derandomized(max_examples=PART)
@given(source=adversarial_programs(), seed=st.integers(0, 2**32 - 1))
def test_adversarial_programs_second_quarter(source, seed):
    _right_or_refused(source, seed)


@derandomized(max_examples=PART)
@given(source=adversarial_programs(), seed=st.integers(0, 2**32 - 1))
def test_adversarial_programs_third_quarter(source, seed):
    _right_or_refused(source, seed)


@derandomized(max_examples=PART)
@given(source=adversarial_programs(), seed=st.integers(0, 2**32 - 1))
def test_adversarial_programs_fourth_quarter(source, seed):
    _right_or_refused(source, seed)
