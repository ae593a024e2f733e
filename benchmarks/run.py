"""Run every benchmark in this folder (never part of the test suite).

Options (``--markdown``, ``--quick``, ``--no-peers``, ``--no-jit``, ``--program``) go to the
reverse-mode benchmarks; see ``bench_reverse.py --help``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import bench_frontend  # noqa: E402
import bench_reverse  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    """Run the frontend and reverse-mode benchmarks; 1 if a wengert gradient failed."""
    options = bench_reverse.parse_args(argv)
    print("== frontend: lowering + code generation ==")
    bench_frontend.main()
    print()
    print("== reverse mode: gradient time / primal time ==", flush=True)
    return bench_reverse.run_cli(options)


if __name__ == "__main__":
    sys.exit(main())
