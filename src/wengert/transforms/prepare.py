"""What both modes do to a (cloned) primal before differentiating it.

0. checked attribute reads of generated code (``runtime.plain_attr``, differentiated
   again) are plain reads again: the transform checks them anew;
1. :func:`~wengert.transforms.devirtualize.devirtualize`: properties, methods and class
   methods of objects whose class is known become calls of the functions they are;
2. :func:`~wengert.transforms.nested_grad.expand_nested_grads`: ``grad``/``vjp`` taken
   inside the function become the IR of that derivative;
3. :func:`~wengert.transforms.inline_calls.inline_calls`: small user helpers are inlined,
   so their derivatives are straight-line code in the caller's;
4. the three again, while inlining exposes more (an inlined helper's own methods and
   nested derivatives);
5. :func:`~wengert.transforms.iteration.index_changed_iterations`: loops over a list the
   loop changes read each item when they reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wengert import runtime
from wengert.ir import nodes as n
from wengert.transforms.devirtualize import devirtualize
from wengert.transforms.inline_calls import inline_calls
from wengert.transforms.iteration import index_changed_iterations
from wengert.transforms.nested_grad import expand_nested_grads

#: Rounds of step 4 (each is bounded by the inliner's budget anyway).
_ROUNDS = 8


def prepare(fn: n.Function, arg_types: Sequence[Any], linker: Any) -> None:
    """Normalise ``fn`` in place for differentiation (see the module docstring)."""
    callee = linker.result_type if linker is not None else None
    _plain_reads(fn)
    devirtualize(fn, arg_types, callee)
    if linker is not None:
        expand_nested_grads(fn, arg_types, linker)
        _plain_reads(fn)
        inline_calls(fn, linker.callee_ir)
        for _ in range(_ROUNDS):
            expanded = expand_nested_grads(fn, arg_types, linker)
            _plain_reads(fn)
            if not (expanded | devirtualize(fn, arg_types, callee)):
                break
            inline_calls(fn, linker.callee_ir)
    index_changed_iterations(fn, arg_types)


def _plain_reads(fn: n.Function) -> None:
    """``runtime.plain_attr(obj, "name", site)`` -> ``obj.name``; likewise the checks of
    attribute writes are dropped (the transform adds what the types still need)."""
    consts = {op.result.id: op.value for op in n.walk(fn.body) if isinstance(op, n.Const)}

    def region(r: n.Region) -> None:
        out = []
        for op in r.ops:
            if isinstance(op, n.Call) and not op.kwargs and len(op.args) == 3:
                f = consts.get(op.fn.id)
                if f is runtime.plain_attr and isinstance(consts.get(op.args[1].id), str):
                    out.append(n.GetAttr(op.args[0], consts[op.args[1].id], op.results,
                                         loc=op.loc))
                    continue
                if f is runtime.check_plain_setattr:
                    continue
            for sub in op.regions():
                region(sub)
            out.append(op)
        r.ops = out

    region(fn.body)
