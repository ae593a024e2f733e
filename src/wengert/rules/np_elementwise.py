"""NumPy's elementwise functions (ufuncs): one partial derivative per argument.

Every function here is declared with :func:`~wengert.rules.form.defderiv`; functions of
two arrays pass ``broadcast=True`` (cotangents are summed back to each argument's shape).
Partials are written with NumPy so that they hold for arrays and for floats alike, and
call only functions that have rules themselves (so Hessians differentiate them again).
Tangents may carry leading batch axes; elementwise partials broadcast against them
from the right, as they should.
"""

from __future__ import annotations

import numpy as np

from wengert.rules.form import cases, defderiv

_X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -1.4]])

defderiv(np.sin, lambda x: np.cos(x))
defderiv(np.cos, lambda x: -np.sin(x))
defderiv(np.exp, lambda x, *, ans: ans)
defderiv(np.tanh, lambda x, *, ans: 1.0 - ans * ans)
defderiv(np.sqrt, lambda x, *, ans: 0.5 / ans)
defderiv(np.negative, lambda x: -1.0)
defderiv(np.add, lambda x1, x2: 1.0, lambda x1, x2: 1.0, broadcast=True)
defderiv(np.multiply, lambda x1, x2: x2, lambda x1, x2: x1, broadcast=True)

cases(np.sin, (_X,), (0.4,))
cases(np.cos, (_X,))
cases(np.exp, (_X,))
cases(np.tanh, (_X,))
cases(np.sqrt, (_X * _X + 0.1,))
cases(np.negative, (_X,))
cases(np.add, (_X, _X[0]), (_X, 2.0))
cases(np.multiply, (_X, _X[:, :1]), (1.5, _X))
