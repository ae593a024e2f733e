"""Lowering + code generation time of a generated 200-line function (target: < 50 ms)."""

from __future__ import annotations

import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path


def make_source(lines: int = 200) -> str:
    """A function of about ``lines`` lines mixing arithmetic, branches and loops."""
    body = ["import math", "", "def big(x, y, n):", "    s = 0.0", "    t = 1.0"]
    k = 0
    while len(body) < lines:
        k += 1
        body += [
            f"    a{k} = x * {k}.0 + math.sin(y) * t",
            f"    if a{k} > s:",
            f"        s = s + a{k} * 0.5",
            "    else:",
            f"        t = t * 0.99 + a{k}",
            f"    for i in range({k % 5 + 1}):",
            "        if i == n:",
            "            break",
            f"        s = s + math.cos(s * {k}.0) * i",
            f"    while t > {k}.0:",
            "        t = t / 2.0",
        ]
    body.append("    return s + t")
    return "\n".join(body) + "\n"


def main() -> None:
    from wengert.codegen.emit import generate
    from wengert.frontend.lower import lower

    src = make_source()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bigfn.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location("bigfn", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["bigfn"] = mod
        spec.loader.exec_module(mod)
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            ir = lower(mod.big)
            fn, _ = generate(ir)
            times.append(time.perf_counter() - t0)
        assert fn(1.0, 2.0, 3) == mod.big(1.0, 2.0, 3)
        print(f"lower + codegen of a {src.count(chr(10))}-line function: "
              f"median {statistics.median(times) * 1e3:.1f} ms, min {min(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
