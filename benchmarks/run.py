"""Run every benchmark in this folder (never part of the test suite)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import bench_frontend  # noqa: E402


def main() -> None:
    print("== frontend: lowering + code generation ==")
    bench_frontend.main()


if __name__ == "__main__":
    main()
