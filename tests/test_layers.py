"""The layers of DESIGN §9 hold: imports run one way only (import-linter contracts in
pyproject.toml), and the code is ruff clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml")) == 0


def test_ruff_is_clean():
    # ruff is a test extra: next to this interpreter in a virtual environment.
    beside = Path(sys.executable).parent / "ruff"
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    assert ruff is not None, "ruff is not installed (pip install -e '.[test]')"
    done = subprocess.run([ruff, "check", "src", "tests", "benchmarks", "examples"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
