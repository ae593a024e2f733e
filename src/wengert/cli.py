"""The ``wengert`` command: the library's operations on a ``file.py:function``."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from wengert.diagnostics import WengertError


class CliError(Exception):
    """A problem with the command line itself (bad path, missing function)."""


def load_function(spec: str) -> Any:
    """Import ``path/to/file.py`` and return its attribute ``function`` (dots allowed)."""
    if ":" not in spec:
        raise CliError(f"expected FILE.py:FUNCTION, got {spec!r}")
    path_text, _, attr = spec.rpartition(":")
    path = Path(path_text)
    if not path.is_file():
        raise CliError(f"no such file: {path_text}")
    sys.path.insert(0, str(path.resolve().parent))
    mod_name = f"_wengert_cli_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    if module_spec is None or module_spec.loader is None:
        raise CliError(f"cannot import {path_text}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's module failed to import: say so, briefly
        raise CliError(f"importing {path_text} failed: {type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{path_text} has no function {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CliError(f"{attr!r} in {path_text} is not callable")
    return obj


def _cmd_show(args: argparse.Namespace) -> int:
    from wengert import api as wengert

    fn = load_function(args.target)
    options = {}
    if args.argnums is not None:
        options["argnums"] = tuple(args.argnums) if len(args.argnums) > 1 else args.argnums[0]
    if args.like is not None:
        import math

        import numpy

        scope = {"np": numpy, "numpy": numpy, "math": math}
        try:
            options["like"] = [eval(text, scope) for text in args.like]  # noqa: S307
        except Exception as e:
            raise CliError(f"--like: cannot evaluate an example argument: {e}") from None
    print(wengert.show(fn, mode=args.mode, **options), end="")
    return 0


def _parse_value(text: str) -> Any:
    """A number from the command line: an int when it looks like one, else a float."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise CliError(f"--at expects numbers, got {text!r}") from None


def _cmd_grad(args: argparse.Namespace) -> int:
    from wengert import api as wengert

    fn = load_function(args.target)
    at = tuple(_parse_value(t) for t in args.at)
    nums = tuple(args.argnums) if args.argnums else tuple(
        i for i, v in enumerate(at) if isinstance(v, float))
    if not nums:
        raise CliError("nothing to differentiate: give float values with --at, or --argnums")
    try:
        value, grads = wengert.value_and_grad(fn, argnums=nums)(*at)
    except TypeError as exc:
        raise CliError(str(exc)) from exc
    print(f"value: {value!r}")
    for i, g in zip(nums, grads):
        print(f"grad[{i}]: {g!r}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``wengert`` command."""
    p = argparse.ArgumentParser(prog="wengert",
                                description="Source-to-source automatic differentiation.")
    sub = p.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the IR or generated source of a function")
    show.add_argument("target", help="path/to/file.py:function")
    show.add_argument("--mode", default="ir", choices=["ir", "primal", "vjp", "jvp"])
    show.add_argument("--argnums", type=int, nargs="+", default=None)
    show.add_argument("--like", nargs="+", default=None, metavar="EXPR",
                      help="example arguments (Python expressions; np and math are there): "
                           "the code is specialised on their types, as a call with them is")
    show.set_defaults(run=_cmd_show)
    grad = sub.add_parser("grad", help="print a function's value and gradient at a point")
    grad.add_argument("target", help="path/to/file.py:function")
    grad.add_argument("--at", nargs="+", required=True, metavar="X",
                      help="the arguments (numbers; ints are not differentiated by default)")
    grad.add_argument("--argnums", type=int, nargs="+", default=None)
    grad.set_defaults(run=_cmd_grad)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except CliError as exc:
        print(f"wengert: error: {exc}", file=sys.stderr)
        return 2
    except WengertError as exc:
        print(exc.render(), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
