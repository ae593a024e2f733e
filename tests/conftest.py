"""Shared test set-up: make ``wengert`` and the frontend corpus importable.

``src`` goes first on ``sys.path`` so the suite runs from a plain checkout
(``python -m pytest``) as well as from an editable install. ``tests/frontend``
is added so that ``import corpus``, ``import frontend_checks`` and
``import random_programs`` work from any test directory (the IR golden tests
reuse the frontend corpus; the reverse- and forward-mode property tests reuse
the random program generator).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Verify the IR after every transform (wengert.driver.pipeline.VERIFY_TRANSFORMS).
os.environ.setdefault("WENGERT_VERIFY", "1")

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
SRC_DIR = REPO_ROOT / "src"
FRONTEND_TESTS_DIR = TESTS_DIR / "frontend"

for _path in (FRONTEND_TESTS_DIR, SRC_DIR):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
