"""NumPy's linear algebra (``numpy.linalg``)."""

from __future__ import annotations
