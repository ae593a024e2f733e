# ruff: noqa
"""Functions using constructs the frontend does not lower (used by test_errors.py).

Each offending line ends with a ``# ERROR: <case>`` marker; the tests find the
expected line number from the marker, so this file can be edited freely. The
goldens under ``golden/errors/`` hold the full expected message of each case.
"""

import math

COUNTER = 0


def gen_yield_assign(x):
    y = yield x  # ERROR: yield_assign
    return y


def gen_yield_stmt(xs):
    for x in xs:
        yield x * 2  # ERROR: yield_stmt


def gen_yield_from(xs):
    total = 0.0
    yield from xs  # ERROR: yield_from
    return total


def nested_generator(x):
    def inner():
        yield x  # ERROR: yield_in_nested

    return sum(inner())


async def async_function(x):  # ERROR: async_def
    return x + 1


def nested_async(x):
    async def helper(y):  # ERROR: async_nested
        return await y

    return helper


def try_except(x):
    y = x * 2
    try:  # ERROR: try_except
        y = 1 / x
    except ZeroDivisionError:
        y = 0.0
    return y


def try_finally(x):
    for i in range(3):
        try:  # ERROR: try_finally
            x = x + i
        finally:
            x = x * 2
    return x


def class_inside(x):
    class Point:  # ERROR: class_def
        scale = 2

    return Point.scale * x


def global_statement(x):
    global COUNTER  # ERROR: global_stmt
    COUNTER = COUNTER + 1
    return x


def nonlocal_statement(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    list(map(add, [x]))  # ERROR: nonlocal_stmt
    return total


def del_attr(p):
    y = p.x + 1
    del p.x  # ERROR: del_attr
    return y


def del_attr_nested(ps):
    if ps:
        del ps[0].x  # ERROR: del_attr_nested
    return ps


def import_missing(x):
    import wengert_no_such_module  # ERROR: import_missing
    return wengert_no_such_module.sin(x)


def import_relative(x):
    from . import helpers  # ERROR: import_relative
    return helpers.cos(x) + math.pi


def match_statement(x):
    match x:  # ERROR: match_stmt
        case 0:
            return "zero"
        case _:
            return "other"


def try_in_loop_in_branch(xs):
    total = 0
    if xs:
        for x in xs:
            if x:
                try:  # ERROR: try_nested_deep
                    total += 1 / x
                except ZeroDivisionError:
                    pass
    return total


def generator_after_fine_code(x):
    y = x * 2
    z = [y for _ in range(3)]
    if y > 0:
        z.append(y)
    return (yield z)  # ERROR: yield_in_return
