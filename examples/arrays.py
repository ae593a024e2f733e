"""Plain NumPy with a Python loop over the numbers of an array (the README's example)."""

import numpy as np


def smooth(x):
    y = np.zeros_like(x)
    for i in range(1, len(x) - 1):
        y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]
    return np.sum(y * y)
