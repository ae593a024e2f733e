"""Helpers shared by the frontend and IR acceptance tests.

* :func:`assert_same_behaviour` runs an original function and its compiled
  primal on deep copies of the same arguments and compares everything a
  caller can observe: the return value, the exception, printed output, the
  arguments afterwards, and whether the result *is* one of the arguments.
* :func:`check_golden` compares text with a file under a golden directory,
  or rewrites the file when ``WENGERT_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

UPDATE_GOLDEN = os.environ.get("WENGERT_UPDATE_GOLDEN", "") not in ("", "0")
REPO_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------
# Deep equality
# --------------------------------------------------------------------------


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    # -0.0 and 0.0 compare equal but are different results (1/x tells them apart).
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def diff(a: Any, b: Any, path: str = "result", _depth: int = 0) -> str | None:
    """``None`` when ``a`` and ``b`` are indistinguishable values, else where they differ.

    Types must match exactly (``1`` vs ``1.0`` vs ``True`` are different results);
    NaN equals NaN; arrays must agree in shape, dtype and contents; dicts must
    agree in key order too (Python dicts are ordered).
    """
    if _depth > 50:
        return None
    if type(a) is not type(b):
        return f"{path}: type {type(a).__name__} != {type(b).__name__} ({a!r} vs {b!r})"
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: array {a.shape}/{a.dtype} != {b.shape}/{b.dtype}"
        try:
            same = np.array_equal(a, b, equal_nan=True)
        except TypeError:
            same = np.array_equal(a, b)
        return None if same else f"{path}: arrays differ\n{a!r}\n{b!r}"
    if isinstance(a, np.generic):
        return diff(np.asarray(a), np.asarray(b), path, _depth + 1)
    if isinstance(a, float):
        return None if _same_float(a, b) else f"{path}: {a!r} != {b!r}"
    if isinstance(a, complex):
        ok = _same_float(a.real, b.real) and _same_float(a.imag, b.imag)
        return None if ok else f"{path}: {a!r} != {b!r}"
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)} ({a!r} vs {b!r})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = diff(x, y, f"{path}[{i}]", _depth + 1)
            if d:
                return d
        return None
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return f"{path}: dict keys {list(a)!r} != {list(b)!r}"
        for k in a:
            d = diff(a[k], b[k], f"{path}[{k!r}]", _depth + 1)
            if d:
                return d
        return None
    if isinstance(a, (set, frozenset, str, bytes, int, bool, type(None), range, slice)):
        return None if a == b else f"{path}: {a!r} != {b!r}"
    if hasattr(a, "__dict__") and not callable(a):
        return diff(vars(a), vars(b), f"{path}.__dict__", _depth + 1)
    try:
        return None if a == b else f"{path}: {a!r} != {b!r}"
    except Exception as e:  # pragma: no cover - exotic objects
        return f"{path}: cannot compare {a!r} and {b!r}: {e}"


def _exc_summary(e: BaseException | None) -> str | None:
    if e is None:
        return None
    return f"{type(e).__module__}.{type(e).__qualname__}: {e}"


# --------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range)


@dataclass
class Observation:
    """Everything a caller can see after one call."""

    result: Any
    exc: BaseException | None
    stdout: str
    args: tuple
    kwargs: dict
    result_is_arg: tuple[bool, ...]


def observe(fn: Any, args: tuple, kwargs: dict) -> Observation:
    """Call ``fn`` on deep copies of ``args``/``kwargs``, capturing stdout and exceptions."""
    args, kwargs = copy.deepcopy((tuple(args), dict(kwargs)))
    buf = io.StringIO()
    result: Any = None
    exc: BaseException | None = None
    with contextlib.redirect_stdout(buf):
        try:
            result = fn(*args, **kwargs)
        except Exception as e:  # the exception is part of the behaviour
            exc = e
    # Identity only matters for mutable objects (``ys += [1]`` must mutate the caller's list).
    aliases = tuple(result is a and not isinstance(a, _IMMUTABLE)
                    for a in (*args, *kwargs.values())) if exc is None else ()
    return Observation(result, exc, buf.getvalue(), args, kwargs, aliases)


def compare(orig: Observation, comp: Observation) -> list[str]:
    """Differences between two observations (empty when they agree)."""
    problems: list[str] = []
    if (orig.exc is None) != (comp.exc is None) or (
        orig.exc is not None
        and (type(orig.exc) is not type(comp.exc) or str(orig.exc) != str(comp.exc))
    ):
        problems.append(
            f"exception: expected {_exc_summary(orig.exc)!s}, got {_exc_summary(comp.exc)!s}"
        )
    elif orig.exc is not None:
        for attr in ("__cause__",):
            a, b = getattr(orig.exc, attr), getattr(comp.exc, attr)
            if _exc_summary(a) != _exc_summary(b):
                problems.append(
                    f"exception {attr}: expected {_exc_summary(a)}, got {_exc_summary(b)}"
                )
        if orig.exc.__suppress_context__ != comp.exc.__suppress_context__:
            problems.append("exception __suppress_context__ differs")
    if orig.exc is None and comp.exc is None:
        d = diff(orig.result, comp.result)
        if d:
            problems.append(d)
        if orig.result_is_arg != comp.result_is_arg:
            problems.append(
                f"aliasing: result-is-argument {orig.result_is_arg} != {comp.result_is_arg}"
            )
    if orig.stdout != comp.stdout:
        problems.append(f"stdout: expected {orig.stdout!r}, got {comp.stdout!r}")
    d = diff(orig.args, comp.args, "arguments after the call")
    if d:
        problems.append(d)
    d = diff(orig.kwargs, comp.kwargs, "keyword arguments after the call")
    if d:
        problems.append(d)
    return problems


def assert_same_behaviour(orig_fn: Any, compiled_fn: Any, args: tuple, kwargs: dict,
                          label: str, extra_state: tuple[Any, Any] | None = None) -> None:
    """Assert the compiled function behaves exactly like the original on these arguments.

    ``extra_state`` (optional) is a pair of objects, one reachable from each
    callable (e.g. the ``self`` of a bound method), compared after the calls.
    """
    o = observe(orig_fn, args, kwargs)
    c = observe(compiled_fn, args, kwargs)
    problems = compare(o, c)
    if extra_state is not None:
        d = diff(extra_state[0], extra_state[1], "state after the call")
        if d:
            problems.append(d)
    if problems:
        tb = ""
        if c.exc is not None and o.exc is None:
            import traceback

            tb = "\n" + "".join(traceback.format_exception(c.exc)[-6:])
        raise AssertionError(f"{label}: primal differs from the original:\n  - "
                             + "\n  - ".join(problems) + tb)


def hidden_state(fn: Any) -> Any:
    """State carried by the callable itself: a bound method's ``self``, a closure's cells."""
    fn_self = getattr(fn, "__self__", None)
    if fn_self is not None and not isinstance(fn_self, type(os)):
        return fn_self
    cells = getattr(fn, "__closure__", None)
    if cells:
        return [c.cell_contents for c in cells]
    return None


def unwrap(fn: Any) -> Any:
    """The plain function behind a bound method or ``functools.partial``."""
    while True:
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, "__func__"):
            fn = fn.__func__
        else:
            return fn


# --------------------------------------------------------------------------
# Goldens
# --------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def normalize_paths(text: str, *paths: str | os.PathLike) -> str:
    """Replace machine-specific paths (and object addresses) so goldens are portable."""
    reps: list[tuple[str, str]] = []
    for p in paths:
        p = str(p)
        reps.append((p, "<file>"))
        try:
            rel = os.path.relpath(p, REPO_ROOT)
        except ValueError:
            rel = None
        if rel and not rel.startswith(".."):
            reps.append((rel, "<file>"))
    reps.append((str(REPO_ROOT) + os.sep, ""))
    for old, new in sorted(reps, key=lambda r: -len(r[0])):
        text = text.replace(old, new)
    return _ADDRESS.sub(" at 0x...", text)


def check_golden(golden_path: Path, actual: str) -> None:
    """Compare ``actual`` with the golden file, or write it when updating goldens."""
    if not actual.endswith("\n"):
        actual += "\n"
    if UPDATE_GOLDEN:
        golden_path.parent.mkdir(parents=True, exist_ok=True)
        golden_path.write_text(actual)
        return
    assert golden_path.exists(), (
        f"missing golden file {golden_path}; run with WENGERT_UPDATE_GOLDEN=1 to create it, "
        "then read it before committing"
    )
    expected = golden_path.read_text()
    if expected != actual:
        import difflib

        d = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                         "expected", "actual"))
        raise AssertionError(f"{golden_path.name} differs from the golden file "
                             f"(WENGERT_UPDATE_GOLDEN=1 rewrites it):\n{d}")
