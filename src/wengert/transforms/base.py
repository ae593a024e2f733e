"""What the reverse-mode and forward-mode transforms share.

Both walk a (cloned) primal function once, op by op, each op handled by the method
``on_<Op>`` of the mode (one handler per op kind). Before that, both prepare the
function the same way (:mod:`~wengert.transforms.prepare`), infer types, run activity
analysis and make the same checks. A call is classified here, once, as one of:

* ``nondifferentiable``: a primitive registered as piecewise constant (``len``, ``<``);
* ``rule``: a primitive with a rule of this mode, called with positional arguments;
* ``new_object``: ``object.__new__(Cls)``, a constructor spelled out by devirtualize;
* ``class``: another class constructed (a dataclass maps its fields);
* ``no_source``: a callable with neither a rule nor Python source: only integers may
  go in (else a located error);
* ``direct``: a user function whose argument types are known, linked to its derivative;
* ``list_method``: a list method (``append``...) on a list;
* ``nested``: a function defined in this one, called where defined;
* ``dynamic``: anything else, dispatched at run time.

Each mode implements ``call_<kind>``; ``call_class`` and ``call_direct`` may decline
(return :data:`DECLINED`), and the call is then dispatched.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Sequence
from typing import Any, Protocol

import numpy

from wengert import runtime
from wengert.analysis.activity import Activity
from wengert.analysis.effects.arrays import IMMUTABLE as _IMMUTABLE
from wengert.analysis.effects.vocabulary import DIFFERENTIABLE_INPLACE
from wengert.analysis.types import (
    FLOAT_OR_FLOAT64,
    FUNCTION_VALUES,
    INT_OR_FLOAT,
    ArrayOf,
    ListOf,
    Types,
    function_constant,
)
from wengert.diagnostics import NonDifferentiableError, SourceLoc, describe
from wengert.ir import nodes as n
from wengert.ir.builder import Builder
from wengert.ir.uses import free_uses
from wengert.objects import hashable
from wengert.rules import registry, shapes
from wengert.transforms import inline
from wengert.transforms.checks import (
    check_array_attributes,
    check_global_writes,
    check_held_inplace,
    check_out_arguments,
    check_view_writes,
)
from wengert.transforms.devirtualize import OPERATOR_METHODS, called_only
from wengert.transforms.nested_grad import check_not_dispatcher
from wengert.transforms.prepare import Prepared, prepare_function
from wengert.vocabulary import tangent_name

#: Python and NumPy floating scalar types.
FLOATS = (float, numpy.float64, numpy.float32, FLOAT_OR_FLOAT64)
#: Types whose values have no tangent space.
NO_TANGENT = frozenset({int, bool, str, bytes, type(None), range})
#: Types whose values no callee can write into, and the in-place operators both modes
#: differentiate (declared with the rest of the vocabulary of mutation).
IMMUTABLE = _IMMUTABLE
INPLACE = DIFFERENTIABLE_INPLACE
#: List methods both modes differentiate in place of a dispatch.
LIST_METHODS = frozenset({"append", "extend", "insert", "pop"})

#: What ``call_class`` / ``call_direct`` return when they cannot handle a call.
DECLINED: Any = object()


class Linker(Protocol):
    """How a transform learns about the user functions it meets (implemented by the
    driver's linkers; see :mod:`wengert.driver.pipeline`)."""

    #: Set on a linker for code that will be differentiated again: nothing is linked to
    #: compiled derivatives, and rules are inlined even where types are unknown.
    differentiated_again: bool

    def callee_ir(self, fn: Any) -> n.Function | None:
        """The IR of the user function ``fn``, to inline it (``None``: not possible)."""

    def resolve(self, fn: Any) -> Any:
        """What a call of the function value ``fn`` links to (a function, or a gradient
        made by ``wengert.grad``), or ``None``: not linked."""

    def result_type(self, fn: Any, arg_types: list[type | None]) -> type | None:
        """The exact type ``fn`` returns for arguments of these types, if known."""

    def written_params(self, fn: Any) -> Any:
        """The parameters ``fn`` may write into (a container of indices)."""

    def returned_params(self, fn: Any) -> Any:
        """The parameters whose objects (or parts) ``fn`` may return (indices)."""

    def direct(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[type, ...]) -> Any:
        """``fn``'s derived VJP (or a ``runtime.Later``), or ``None`` for the dispatcher."""

    def direct_jvp(self, fn: Any, wrt: tuple[int, ...], arg_types: tuple[type, ...],
                   batched: bool) -> Any:
        """``fn``'s derived JVP (or a ``runtime.Later``), or ``None`` for the dispatcher."""

    def is_grad(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.grad``."""

    def is_vjp(self, value: Any) -> bool:
        """Whether ``value`` is ``wengert.vjp``."""

    def function_ir(self, fn: Any) -> n.Function | None:
        """The IR of the plain function ``fn`` (``None`` for anything else)."""

    def fixed_arity(self, fn: Any, nargs: int) -> Any:
        """``fn`` as a function of exactly ``nargs`` parameters (``def f(*xs)``)."""

    def gradient_ir(self, fn: n.Function, wrt: tuple[int, ...], single: bool,
                    arg_types: Sequence[Any]) -> n.Function:
        """The gradient of the IR ``fn`` as IR (for ``grad`` taken inside)."""

    def applied_vjp_ir(self, fn: n.Function, wrt: tuple[int, ...],
                       arg_types: Sequence[Any]) -> n.Function:
        """``lambda *params, v: vjp(f, *params)[1](v)`` as IR (``vjp`` taken inside)."""

    def make_grad(self, f: Any, argnums: Any) -> Any:
        """``wengert.grad(f, argnums)``."""


def dot_hint(v: n.Value) -> str | None:
    """The name generated code gives ``v``'s tangent (``x_dot``), from the user's name."""
    return tangent_name(v.hint) if v.hint and not v.hint.startswith(".") else None


def has_source(fn: Any) -> bool:
    """Whether calling ``fn`` runs Python code wengert can read (a function, a method, a
    class with a Python ``__init__``, a partial of one, a callable object)."""
    if isinstance(fn, (types.FunctionType, types.MethodType)):
        return True
    if isinstance(fn, type):
        return fn.__module__ != "builtins" and not is_c_type(fn)
    if isinstance(fn, functools.partial):
        return has_source(fn.func)
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the class attribute, on purpose
    return isinstance(call, types.FunctionType)


def is_c_type(t: type) -> bool:
    """A type implemented in C (builtins, NumPy)."""
    return not hasattr(t, "__dict__") or t.__module__ in ("builtins", "numpy")


def _integer_array(t: Any) -> bool:
    """Whether ``t`` is the type of an array of integers or booleans."""
    return isinstance(t, ArrayOf) and isinstance(t.dtype, type) and \
        issubclass(t.dtype, (numpy.integer, numpy.bool_))


class Transform:
    """The state and queries both modes share for one (cloned) primal function."""

    #: Types whose in-place operators the mode follows even when the old value is read
    #: again (forward mode mirrors list updates on the list's tangent).
    #: Types whose ``x += y`` makes a new object (immutable ones) or that are checked
    #: when the code runs (unknown): :meth:`check_inplace` lets them be.
    inplace_followed: frozenset[Any] = frozenset({
        None, float, int, bool, complex, str, tuple, FLOAT_OR_FLOAT64, numpy.float64,
        numpy.float32, numpy.int64, numpy.bool_, INT_OR_FLOAT})

    def __init__(self, fn: n.Function, wrt: Sequence[int], arg_types: Sequence[Any],
                 linker: Linker | None, prepared: Prepared | None = None) -> None:
        """``prepared``: ``fn`` made ready by the driver (:func:`prepare_function`), else
        it is prepared here (a nested function the transform meets)."""
        self.fn = fn
        # (an array of integers or booleans carries no derivative, as an int does: labels,
        # indices; its cotangent is ``None``)
        self.wrt = tuple(i for i in wrt if i >= len(arg_types) or
                         not _integer_array(arg_types[i]))
        self.linker = linker
        if prepared is None:
            prepared = prepare_function(fn, arg_types, linker)
        assert prepared.fn is fn
        arg_types = prepared.arg_types
        #: ``fn``'s analyses, kept while no pass changes it.
        self.analyses = prepared.analyses
        #: The parameters' types (``ListOf``, ``ObjectOf``, ... as the caller was checked).
        self.arg_types = list(arg_types)
        self.types: Types
        self.act: Activity
        self.analyse()
        if self.index_loops():
            self.analyse()
        self.wrt_ids = {fn.body.args[i].id for i in self.wrt}
        #: Values the transform computes anew (an inlined rule's value): old -> new.
        self.rename: dict[int, n.Value] = {}
        self.extra_types: dict[int, type] = {}
        self.defs: dict[int, n.Op] = {}
        self.consts: dict[int, n.Const] = {}
        #: Value id -> the ops that read it (nested functions' reads included).
        self.uses: dict[int, list[n.Op]] = {}
        self.warnings: list[tuple[str, SourceLoc | None]] = []
        for op in n.walk(fn.body):
            for r in op.results:
                self.defs[r.id] = op
            if isinstance(op, n.Const):
                self.consts[op.result.id] = op
            vals = op.operands()
            if isinstance(op, n.MakeFunction):
                vals = vals + free_uses(op.func.body)
            for v in vals:
                self.uses.setdefault(v.id, []).append(op)
        self.called = called_only(fn)
        self.check_closures()
        check_global_writes(fn, self.act)
        check_out_arguments(fn, self.act)
        check_array_attributes(fn, self.types)
        check_view_writes(fn, self.types, self.act, indexed=self.rule_kind == "vjp")
        if self.rule_kind == "jvp":
            check_held_inplace(fn, self.types, self.act)
        self.check_inplace()

    def analyse(self) -> None:
        """Infer the function's types and activity (again, after it was rewritten)."""
        fn = self.fn
        self.types = self.analyses.types(writes=True)
        # Objects passed in may be written to: what lands in them is an output as well.
        mutable = [i for i in self.wrt if self.types.of(fn.body.args[i]) not in IMMUTABLE]
        self.act = self.analyses.activity(self.wrt, mutable)

    def index_loops(self) -> bool:
        """Rewrite loops of the function, once types and activity are known, into a form
        this mode differentiates better; return whether anything changed (the analyses
        are then made again). Nothing by default."""
        return False

    # -- queries -------------------------------------------------------------------------

    def resolve(self, v: n.Value) -> n.Value:
        """What ``v`` is computed as now (an inlined rule's value, an unpacked pair)."""
        while v.id in self.rename:
            v = self.rename[v.id]
        return v

    def is_wrt(self, v: n.Value) -> bool:
        return v.id in self.wrt_ids

    def type_of(self, v: n.Value) -> Any:
        """``v``'s exact type where known (``None``: unknown)."""
        v = self.resolve(v)
        t = self.extra_types.get(v.id)
        return t if t is not None else self.types.of(v)

    def reads_as_array(self, fn: Any, args: list[n.Value], a: n.Value) -> bool:
        """Whether ``fn(*args)`` reads its argument ``a``, a list or tuple, as an array: a
        NumPy function does, and an operator with an array operand. Its derivatives are then
        arrays too (batch axes in front), not lists of the items' (wengert's own NumPy
        primitives, ``_pack``, ``_concat``, take lists as lists)."""
        if self.type_of(a) not in (list, tuple):
            return False
        rule = registry.lookup(fn) if hashable(fn) else None
        if rule is not None and rule.array_result and not rule.sequence_args and \
                args and a is args[0]:
            # wengert's own NumPy primitives read their operand (first; the others are
            # shapes, axes and indices) as NumPy does.
            return True
        return isinstance(fn, numpy.ufunc) or \
            str(getattr(fn, "__module__", "")).startswith("numpy") or \
            getattr(fn, "__module__", None) in ("_operator", "operator") and \
            any(self.type_of(o) is numpy.ndarray for o in args)

    def rule_arg_type(self, v: n.Value) -> Any:
        """``v``'s type for specialising a rule's body: its :class:`ArrayOf` where the
        number of axes is known (the body's shape branches fold), :class:`ListOf` for a
        list of floats, else its type."""
        a = self.types.arrays.get(self.resolve(v).id) or self.types.arrays.get(v.id)
        if a is not None:
            return a
        t = self.type_of(v)
        if t is list and self.types.items.get(self.resolve(v).id) is float:
            # A list of floats: ``sum(xs)`` in the body is a float, and its branches fold.
            return ListOf(float)
        return t

    def param_type(self, v: n.Value) -> Any:
        """``v``'s type as a callee's parameter type (``ListOf`` for a list of floats,
        ``DictOf`` for a dict of floats)."""
        t = self.type_of(v)
        if t in FUNCTION_VALUES:
            # (a known function passed on, ``rk4(rhs, y0)``: the callee is derived for it)
            is_c, value = self.const_value(v)
            return (function_constant(value) or t) if is_c else t
        if t not in (list, dict, numpy.ndarray):
            return t
        full = self.types.param_type(self.resolve(v))
        # (an array the transform made, whose axes are not recorded: an array still)
        return full if full is not None or t is not numpy.ndarray else t

    def const_value(self, v: n.Value) -> tuple[bool, Any]:
        """``(True, value)`` for a constant, ``(False, None)`` otherwise."""
        c = self.consts.get(self.resolve(v).id)
        return (True, c.value) if c is not None else (False, None)

    def is_module_attr(self, m: n.GetAttr) -> bool:
        is_c, v = self.const_value(m.obj)
        return is_c and isinstance(v, types.ModuleType)

    def callee_name(self, op: n.Call) -> str:
        """How messages name the callee of ``op``: as the user wrote it, where known."""
        c = self.consts.get(self.resolve(op.fn).id)
        if c is not None and c.origin:
            return c.origin
        return describe(c.value if c is not None else None)

    def region_of(self, op: n.Op) -> n.Region:
        """The region (of this function, not of nested ones) that holds ``op``."""
        stack = [self.fn.body]
        while stack:
            r = stack.pop()
            if op in r.ops:
                return r
            for x in r.ops:
                if not isinstance(x, n.MakeFunction):
                    stack.extend(x.regions())
        raise AssertionError("op not found")  # pragma: no cover

    # -- checks --------------------------------------------------------------------------

    def check_closures(self) -> None:
        """Refuse a nested function that reads an active value when it escapes.

        Called directly it is differentiated with its captures as inputs; passed on or
        stored, the callee would see its captures as constants and the derivative with
        respect to them would silently be lost.
        """
        for op in n.walk(self.fn.body):
            if not isinstance(op, n.MakeFunction):
                continue
            reads = [v for v in free_uses(op.func.body) if v.id != op.result.id and
                     self.act.is_varied(v)] + [d for d in op.operands() if self.act.is_varied(d)]
            if not reads:
                continue
            for user in self.uses.get(op.result.id, []):
                if user is op:
                    continue
                if isinstance(user, n.Call) and user.fn is op.result and \
                        op.result not in user.args and \
                        op.result not in [v for _, v in user.kwargs]:
                    continue
                if not self.act.is_useful(op.result) and not any(
                        self.act.is_useful(r) for r in user.results):
                    continue
                if isinstance(user, n.Call) and self._nondifferentiable_callee(user):
                    continue  # a key of sorted/min/max: it only decides an order
                name = reads[0].hint or "a value"
                raise NonDifferentiableError(
                    f"{op.func.name if not op.is_lambda else 'a lambda'} reads {name!r}, "
                    "which is being differentiated, and is passed on instead of being called "
                    "here", user.loc or op.loc,
                    hint=f"pass {name!r} to it as an argument, or call it directly")

    def _nondifferentiable_callee(self, op: n.Call) -> bool:
        is_c, fn = self.const_value(op.fn)
        rule = registry.lookup(fn) if is_c and hashable(fn) else None
        return rule is not None and rule.nondifferentiable

    def check_inplace(self) -> None:
        """Refuse ``a += b`` on a list or array whose old value is read again afterwards.

        In SSA the old and the new value are different values, but at run time they are
        one object: reads of the old name see the update, which the derivative would miss.
        A value of unknown type is checked when it runs (prepare, step 6).
        """
        order = {id(op): k for k, op in enumerate(n.walk(self.fn.body))}
        for op in n.walk(self.fn.body):
            if not isinstance(op, n.Call) or not op.args or \
                    not any(self.act.is_varied(v) for v in op.args):
                continue
            is_c, fn = self.const_value(op.fn)
            if not is_c or not hashable(fn) or fn not in INPLACE:
                continue
            a = op.args[0]
            if self.type_of(a) in self.inplace_followed or not self.act.is_useful(a):
                continue
            later = [u for u in self.uses.get(a.id, []) if order.get(id(u), -1) > order[id(op)]]
            if any(not (self.type_of(a) is numpy.ndarray and self._reads_shape(u, a))
                   for u in later):
                raise NonDifferentiableError(
                    f"this in-place operator changes a {self.type_of(a).__name__} that is "
                    "still used under its old name afterwards", op.loc,
                    hint="write `x = x + y` (a new object) instead of `x += y`")

    def _reads_shape(self, op: n.Op, a: n.Value) -> bool:
        """Whether ``op`` only reads the shape of an array operand (which an in-place
        update keeps): ``_shape(a)``, or ``nonzero(adjoint, a)`` in a gradient's IR."""
        if not isinstance(op, n.Call):
            return False
        is_c, fn = self.const_value(op.fn)
        if not is_c:
            return False
        return fn is shapes.shape or fn in (runtime.nonzero, runtime.finish_adjoint) and \
            op.args[0] is not a

    # -- calls ---------------------------------------------------------------------------

    def on_Call(self, op: n.Call, b: Builder) -> Any:
        """Classify the call (see the module docstring) and hand it to the mode."""
        is_const, fn = self.const_value(op.fn)
        simple = not op.kwargs and not op.starred
        if is_const and fn is runtime.delete_item:
            # (``del x[k]`` on a dict, or on a list under an int, is ``x.pop(k)`` by now)
            if any(self.active(a) for a in op.args):
                raise NonDifferentiableError(
                    "'del' of an item of a value being differentiated is supported on a "
                    "dict, and on a list under an int index or a slice without a step", op.loc,
                    hint="build a new container without the item instead")
            b.emit(op)
            return None
        if is_const:
            check_not_dispatcher(fn, op)
            self.check_operands(op, fn, b)
            rule = registry.lookup(fn) if hashable(fn) else None
            if rule is not None and rule.nondifferentiable:
                return self.call_nondifferentiable(op, b)
            mode_rule = getattr(rule, self.rule_kind, None) if rule is not None else None
            if mode_rule is not None and simple:
                return self.call_rule(op, rule, b)
            if mode_rule is not None and \
                    (keywords := self.literal_keywords(op, mode_rule)) is not None:
                out = self.call_rule(op, rule, b, keywords)
                if out is not DECLINED:
                    return out
            if mode_rule is None and rule is not None and rule.user and \
                    any(self.active(a) for a in op.args):
                raise self.one_mode_error(op)
            if mode_rule is not None and not op.starred:
                self.check_rule_keywords(op, mode_rule)
            if fn is object.__new__:
                return self.call_new_object(op, b)
            if rule is None and isinstance(fn, type):
                out = self.call_class(op, fn, b)
                if out is not DECLINED:
                    return out
            if rule is None and not has_source(fn):
                if all(self.type_of(a) in (int, bool, str) for a in op.operands()[1:]
                       if self.active(a)):
                    b.emit(op)  # only integers go in: nothing to differentiate
                    return None
                raise self.nondifferentiable_error(op)
            if rule is None and simple:
                out = self.call_direct(op, fn, b)
                if out is not DECLINED:
                    return out
        method = self.defs.get(self.resolve(op.fn).id)
        if isinstance(method, n.GetAttr) and not self.is_module_attr(method) and \
                method.name in LIST_METHODS and self.type_of(method.obj) in (list, None):
            out = self.call_list_method(op, method, b)
            if out is not DECLINED:
                return out
        if isinstance(method, n.GetAttr) and not self.is_module_attr(method) and \
                method.name == "pop" and self.type_of(method.obj) is dict:
            if op.kwargs or op.starred or len(op.args) not in (1, 2):
                raise NonDifferentiableError(
                    "dict.pop() takes a key and an optional default", op.loc)
            return self.call_dict_pop(op, method, b)
        if isinstance(method, n.MakeFunction):
            return self.call_nested(op, method, b)
        return self.call_dynamic(op, method if isinstance(method, n.GetAttr) and
                                 not self.is_module_attr(method) else None, b)

    def check_active_index(self, op: n.GetItem) -> None:
        """Refuse ``obj[k]`` where ``k`` holds a value being differentiated (``np.r_[x, y]``,
        an object whose ``__getitem__`` computes with the key): an index only selects,
        and the derivative through what ``__getitem__`` does with it would be lost."""
        if self.active(op.index) and self.type_of(op.index) not in (int, bool, str, slice) \
                and self.type_of(op.obj) not in (list, tuple, dict, str) and \
                not self.integer_tuple(op.index):
            raise NonDifferentiableError(
                "a value being differentiated is used as an index (inside the brackets); "
                "its derivative through the indexing cannot be followed", op.loc,
                hint="build the array with a function (np.concatenate([x, y]) for "
                     "np.r_[x, y], np.stack for np.c_), or call the method directly")

    def integer_tuple(self, v: n.Value) -> bool:
        """Whether ``v`` is a display of ints, bools, slices and ``None`` (``a[j, 0]``) or a
        list of ints: it carries no derivative, whatever the analysis of the values it was
        built from."""
        v = self.resolve(v)
        made = self.defs.get(v.id)
        if isinstance(made, n.Build) and not made.starred and \
                all(self.type_of(x) in (int, bool, slice, type(None)) for x in made.items):
            return True
        # (a list of ints: ``rows = [i for i in range(n) if i != j]``, ``a[rows]``)
        return self.type_of(v) is list and self.types.items.get(v.id) in (int, bool)

    def check_operands(self, op: n.Call, fn: Any, b: Builder) -> None:
        """Before an arithmetic operator given a value of a type not known here, in a user's
        function: a run-time check that refuses an object whose class defines the operator
        (``runtime.check_operands``; ``devirtualize`` calls the method where the class is
        known; ``|`` is ``prepare._guard_unions``'s)."""
        if not hashable(fn) or fn not in OPERATOR_METHODS or op.kwargs or op.starred or \
                getattr(self.linker, "differentiated_again", False):
            return
        unknown = [a for a in op.args if self.type_of(a) is None and
                   not self.const_value(a)[0]]
        if unknown:
            before, b.loc = b.loc, op.loc
            b.call(runtime.check_operands, b.const(op.loc, origin="site"), *unknown)
            b.loc = before

    def literal_keywords(self, op: n.Call, rule_fn: Any) -> inline.Keywords | None:
        """The keywords of ``op`` as ``(name, value)`` pairs where each names a keyword-only
        parameter of the rule ``rule_fn`` and is given a literal (``zip(a, b,
        strict=True)``): the rule's body is specialised on them. ``None`` otherwise (the
        call is dispatched at run time)."""
        kwdefaults = getattr(rule_fn, "__kwdefaults__", None) or {}
        if op.starred or not op.kwargs:
            return None
        out = []
        for k, v in op.kwargs:
            is_c, value = self.const_value(v)
            if k not in kwdefaults or not is_c or type(value) not in inline.LITERALS:
                return None
            out.append((k, value))
        return tuple(out)

    def check_rule_keywords(self, op: n.Call, rule_fn: Any) -> None:
        """Refuse, at the user's line, keyword arguments a primitive's rule does not take
        (``np.sin(x, out=buf)``, ``np.sum(x, dtype=...)``): a call passing them could
        only fail when it runs, or (``out=``) write a result the derivative never sees."""
        params = inspect.signature(rule_fn).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        unknown = [k for k, _ in op.kwargs if k is None or
                   not takes_any and (k not in params or
                                      params[k].kind is inspect.Parameter.POSITIONAL_ONLY)]
        if unknown and any(self.active(a) for a in op.operands()[1:]):
            shown = ", ".join("**" if k is None else f"{k}=" for k in unknown)
            hint = "assign the result instead (`y = f(x)`)" if "out" in unknown else \
                "leave the argument out, or convert the result afterwards"
            raise NonDifferentiableError(
                f"{self.callee_name(op)}() has no derivative rule taking {shown}", op.loc,
                hint=hint)

    def nondifferentiable_error(self, op: n.Call) -> NonDifferentiableError:
        name = self.callee_name(op)
        how = "" if self.rule_kind == "vjp" else ", mode='forward'"
        returns = "pullback" if self.rule_kind == "vjp" else "differential"
        return NonDifferentiableError(
            f"{name} has no derivative rule and no Python source, and an active value is "
            "passed to it", op.loc,
            notes=(f"register one with @wengert.derivative(of={name}{how}) returning "
                   f"(value, {returns})",))

    def one_mode_error(self, op: n.Call) -> NonDifferentiableError:
        """A callee whose derivative the user registered for the other mode only: its
        source is not differentiated instead, which would bypass the rule (a surrogate
        gradient, a stable formula), as JAX refuses ``jvp`` of a ``custom_vjp``."""
        name = self.callee_name(op)
        this, other = ("reverse", "forward") if self.rule_kind == "vjp" else \
            ("forward", "reverse")
        return NonDifferentiableError(
            f"{name} has a {other}-mode derivative registered with wengert.derivative and "
            f"no {this}-mode one", op.loc,
            notes=(f"register its {this} rule too: @wengert.derivative(of={name}, "
                   f"mode='{this}')",))

    #: Which rule of a primitive this mode uses (``"vjp"`` or ``"jvp"``).
    rule_kind = "vjp"

    def active(self, v: n.Value) -> bool:  # pragma: no cover - each mode defines it
        raise NotImplementedError
