"""Declared rules built on first use (``registry.Rule.pending``): the built rules are the
declaration's, a rule given over a declaration not yet built wins, a build that fails is
tried again, and threads asking at once get the one built rule."""

from __future__ import annotations

import threading

import pytest

from wengert.rules import registry


def _declared(calls):
    rule = registry.Rule(object())

    def build():
        calls.append(1)
        rule.vjp = "declared vjp"
        rule.jvp = "declared jvp"

    rule.pending = build
    return rule


def test_a_declaration_is_built_once_when_first_read():
    calls = []
    rule = _declared(calls)
    assert calls == []
    assert rule.jvp == "declared jvp" and rule.vjp == "declared vjp"
    assert calls == [1] and rule.pending is None


def test_a_rule_given_over_a_declaration_not_yet_built_wins():
    calls = []
    rule = _declared(calls)
    rule.vjp = "user vjp"  # (``wengert.derivative`` of a function with a declared rule)
    assert rule.vjp == "user vjp" and rule.jvp == "declared jvp" and calls == [1]


def test_a_failing_build_is_tried_again():
    rule = registry.Rule(object())
    tries = []

    def build():
        tries.append(1)
        raise ValueError("a declaration's mistake")

    rule.pending = build
    for _ in range(2):
        with pytest.raises(ValueError):
            rule.vjp  # noqa: B018
    assert tries == [1, 1] and rule.pending is not None


def test_threads_asking_at_once_see_the_built_rule():
    started = threading.Event()
    rule = registry.Rule(object())

    def build():
        started.wait(1.0)
        rule.vjp = "declared vjp"
        rule.jvp = "declared jvp"

    rule.pending = build
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(rule.vjp)) for _ in range(8)]
    for t in threads:
        t.start()
    started.set()
    for t in threads:
        t.join()
    assert seen == ["declared vjp"] * 8
