import math

import numpy as np

SCALE = 2.0

def f(x, n):
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * i)
        else:
            s = s * x
    return s

def g(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        if x > 10:
            break
        total += x * SCALE
    else:
        total = -1
    return total

def h(a, b):
    c = a or b
    d = [v * 2 for v in range(a) if v % 2]
    return c, d, a if a > b else b, np.linalg.norm(np.array([a, b]))

def find(xs, t):
    for i, x in enumerate(xs):
        for j in range(3):
            if x * j == t:
                return i, j
    return None

def w(n):
    k = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k

def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
