"""A function wengert refuses: its diagnostic is shown in the README."""

def gen(x):
    y = yield x
    return y
