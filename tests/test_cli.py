"""The ``wengert`` command line: ``wengert show path/to/file.py:function --mode ir|primal``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SRC = REPO_ROOT / "src"

EXAMPLE = textwrap.dedent(
    """
    import math


    def poly(x, y):
        z = x * y + math.sin(x)
        return z * 2.0


    def looped(n):
        total = 0.0
        for i in range(n):
            if i % 2:
                continue
            total += i * 0.5
        return total


    def unsupported(x):
        try:
            return 1 / x
        except ZeroDivisionError:
            return 0.0
    """
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    return env


def run_cli(*args: str, entry: str = "module") -> subprocess.CompletedProcess:
    if entry == "module":
        cmd = [sys.executable, "-m", "wengert.cli", *args]
    else:
        # What the `wengert` console script does: wengert.cli:main (pyproject [project.scripts]).
        cmd = [sys.executable, "-c",
               "import sys; from wengert.cli import main; sys.argv[0] = 'wengert'; "
               "sys.exit(main())", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=60,
                          cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "example_mod.py"
    path.write_text(EXAMPLE)
    return path


def _no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout


def test_show_ir(example):
    proc = run_cli("show", f"{example}:poly", "--mode", "ir")
    assert proc.returncode == 0, proc.stderr
    _no_traceback(proc)
    assert "poly" in proc.stdout
    assert "sin" in proc.stdout
    assert proc.stdout.strip()


def test_show_ir_is_deterministic(example):
    first = run_cli("show", f"{example}:looped", "--mode", "ir")
    second = run_cli("show", f"{example}:looped", "--mode", "ir")
    assert first.returncode == 0, first.stderr
    assert "looped" in first.stdout
    assert first.stdout == second.stdout


def test_show_primal(example):
    proc = run_cli("show", f"{example}:poly", "--mode", "primal")
    assert proc.returncode == 0, proc.stderr
    _no_traceback(proc)
    assert "poly" in proc.stdout
    assert "def " in proc.stdout and "return" in proc.stdout
    ast.parse(proc.stdout)


def test_show_primal_loop(example):
    proc = run_cli("show", f"{example}:looped", "--mode", "primal")
    assert proc.returncode == 0, proc.stderr
    assert "looped" in proc.stdout
    assert "for " in proc.stdout or "while " in proc.stdout
    ast.parse(proc.stdout)


def test_console_script_entry_point(example):
    proc = run_cli("show", f"{example}:poly", "--mode", "ir", entry="main")
    assert proc.returncode == 0, proc.stderr
    assert "poly" in proc.stdout
    module_proc = run_cli("show", f"{example}:poly", "--mode", "ir")
    assert proc.stdout == module_proc.stdout


def test_relative_path(example):
    rel = os.path.relpath(example, REPO_ROOT)
    proc = run_cli("show", f"{rel}:poly", "--mode", "ir")
    assert proc.returncode == 0, proc.stderr
    assert "poly" in proc.stdout


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    _no_traceback(proc)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.py"
    line = _one_line_error(run_cli("show", f"{missing}:poly", "--mode", "ir"))
    assert "nope.py" in line


def test_missing_function(example):
    line = _one_line_error(run_cli("show", f"{example}:no_such_function", "--mode", "ir"))
    assert "no_such_function" in line


def test_missing_function_part(example):
    proc = run_cli("show", str(example), "--mode", "ir")
    assert proc.returncode != 0
    _no_traceback(proc)
    assert proc.stderr.strip()


def test_not_a_function(tmp_path):
    path = tmp_path / "consts.py"
    path.write_text("VALUE = 3\n")
    line = _one_line_error(run_cli("show", f"{path}:VALUE", "--mode", "ir"))
    assert "VALUE" in line


def test_bad_mode(example):
    proc = run_cli("show", f"{example}:poly", "--mode", "bogus")
    assert proc.returncode != 0
    _no_traceback(proc)
    assert "bogus" in proc.stderr or "mode" in proc.stderr


def test_unsupported_syntax_is_a_diagnostic(example):
    proc = run_cli("show", f"{example}:unsupported", "--mode", "ir")
    assert proc.returncode != 0
    _no_traceback(proc)
    assert "error:" in proc.stderr
    assert "try" in proc.stderr
    assert f"{example.name}:" in proc.stderr
    assert "^" in proc.stderr


def test_show_specialised_on_example_arguments(tmp_path):
    path = tmp_path / "arr.py"
    path.write_text("def total(x):\n    s = 0.0\n    for i in range(len(x)):\n"
                    "        s += x[i] * x[i]\n    return s\n")
    proc = run_cli("show", f"{path}:total", "--mode", "vjp", "--like", "np.ones(3)")
    assert proc.returncode == 0, proc.stderr
    assert "owned_array(x_bar, x)" in proc.stdout  # a float64 vector's entries, in place
    plain = run_cli("show", f"{path}:total", "--mode", "vjp")
    assert "owned_array" not in plain.stdout  # floats by default: another specialisation


def test_show_with_a_bad_example_argument(tmp_path):
    path = tmp_path / "arr.py"
    path.write_text("def total(x):\n    return x\n")
    line = _one_line_error(run_cli("show", f"{path}:total", "--mode", "vjp", "--like", "np.nope"))
    assert "--like" in line
