"""The README is part of the product: its Python runs, and the generated code it shows is
what wengert generates today."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
ROOT = README.parent


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def test_the_python_in_the_readme_runs(tmp_path, capsys):
    # The snippets that define things run in order in one namespace, as a reader would.
    code = "\n".join(b for b in _blocks("python") if not _generated(b))
    script = tmp_path / "readme_snippets.py"  # a file: wengert reads functions' source
    script.write_text(code)
    namespace = {"__name__": "readme_snippets", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)
    assert "Traceback" not in capsys.readouterr().out


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "wengert.cli", *args], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _generated(block: str) -> bool:
    return block.lstrip().startswith(("def f_", "def smooth_"))


def test_the_generated_code_shown_is_what_wengert_generates():
    shown = [b.strip() for b in _blocks("python") if _generated(b)]
    assert len(shown) == 3
    assert shown[0] == _cli("show", "examples/loops.py:f", "--mode", "vjp")
    assert shown[1] == _cli("show", "examples/loops.py:f", "--mode", "jvp")
    assert shown[2] == _cli("show", "examples/arrays.py:smooth", "--mode", "vjp", "--like",
                            "np.zeros(5)")


def test_the_main_command_prints_what_the_readme_says():
    blocks = re.findall(r"```\n(value:.*?)```", README.read_text(), re.S)
    assert blocks and blocks[0].strip() == _cli("grad", "examples/loops.py:f", "--at", "0.7", "5")
