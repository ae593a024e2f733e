"""Attribute reads and method calls resolved where the object's class is known.

``obj.name`` in Python is not always a field read: the class may define ``name`` as a
property (a function of ``obj``), a method (a function called with ``obj`` first), a
class method, a static method, or another descriptor. The transforms differentiate
a field read as a read, so a property read as one would silently lose its derivative
(``Rect(w, h).area`` has gradient ``(h, w)``, not zero). Where type inference knows
the class of ``obj`` (an argument, an object the function constructs) or ``obj`` is
the class itself, this pass spells out what Python does, so that the derivative
follows the real computation and small helpers inline like any function:

* ``obj.prop``            -> ``Cls.prop.fget(obj)``
* ``obj.method(args)``    -> ``Cls.method(obj, args)``
* ``obj.static(args)``    -> ``Cls.static(args)``; ``obj.clsmeth(args)`` and
  ``Cls.clsmeth(args)``   -> ``Cls.clsmeth.__func__(Cls, args)``
* ``Cls.attr``            -> the class attribute itself, a constant.

What it cannot spell out it leaves alone; :func:`attribute_kind` tells the transforms
whether a remaining read is a plain field (safe to differentiate as a read) or not
(refused where it matters, with a location).
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import operator
import types
from collections.abc import Callable, Sequence
from typing import Any

from wengert import runtime
from wengert.analysis.cached import Analyses
from wengert.analysis.types import INT_OR_FLOAT, ListOf, TupleOf, Types, infer_types
from wengert.diagnostics import NonDifferentiableError
from wengert.ir import nodes as n
from wengert.ir.uses import expand_ops, replace_uses
from wengert.objects import MISSING as _MISSING
from wengert.objects import (
    attribute_kind,
    class_attribute,
    hashable,
    is_namedtuple,
    namedtuple_field,
    plain_class,
)
from wengert.rules import registry


def devirtualize(fn: n.Function, arg_types: Sequence[Any],
                 callee: Callable[[Any, list[Any]], Any] | None = None,
                 analyses: Analyses | None = None) -> bool:
    """Rewrite, in place, the attribute reads and method calls of ``fn`` whose meaning the
    class decides (see the module docstring); return whether anything changed.
    ``analyses``: where ``fn``'s types (of ``arg_types``, with ``callee``) are kept."""
    types_ = analyses.types() if analyses is not None else \
        infer_types(fn, list(arg_types), callee=callee)
    consts: dict[int, n.Const] = {}
    uses: dict[int, list[n.Op]] = {}
    defs: dict[int, n.Op] = {}
    for op in n.walk_local(fn.body):
        if isinstance(op, n.Const):
            consts[op.result.id] = op
        for r in op.results:
            defs[r.id] = op
        for v in op.operands():
            uses.setdefault(v.id, []).append(op)
        if isinstance(op, n.MakeFunction):
            from wengert.ir.uses import free_uses
            for v in free_uses(op.func.body):
                uses.setdefault(v.id, []).append(op)
    mapping: dict[int, n.Value] = {}

    def rewrite(op: n.Op) -> list[n.Op] | None:
        if isinstance(op, n.Call):
            return _rewrite_mapping_kwargs(op, consts, defs, uses) or \
                _rewrite_namedtuple(op, consts) or \
                _rewrite_namedtuple_method(op, defs, types_.of) or \
                _rewrite_construction(op, consts) or \
                _rewrite_callable_object(op, consts, types_.of(op.fn)) or \
                _rewrite_operator(op, consts, types_.of) or \
                _rewrite_dict_union(op, consts, types_.of, mapping) or \
                _rewrite_sum_of_objects(op, consts, defs, types_.of) or \
                _rewrite_star(op, consts, defs, types_, arg_types, fn.body.args) or \
                _rewrite_deepcopy(op, consts, types_) or \
                _rewrite_replace(op, consts, types_.of(op.args[0]) if op.args else None) or \
                _rewrite_delete(op, consts, defs, [types_.of(a) for a in op.args])
        if isinstance(op, n.GetAttr) and op.name in _NAMEDTUPLE_METHODS and \
                is_namedtuple(types_.of(op.obj)) and \
                (calls := _only_called(op, uses)) is not None and \
                all(_namedtuple_call(c, types_.of(op.obj), op.name) for c in calls):
            return []  # (each call becomes what it does, below)
        if isinstance(op, n.GetAttr):
            return _rewrite_class_method(op, consts) or \
                _rewrite_super_attr(op, consts, uses, defs, types_.of, resolved) or \
                _rewrite_attr(op, consts, uses, types_.of(op.obj), mapping)
        if isinstance(op, n.SetAttr):
            return _rewrite_store(op, types_.of(op.obj))
        if isinstance(op, (n.GetItem, n.SetItem, n.For)):
            return _rewrite_protocol(op, types_.of)
        return None

    #: ``super(C, obj)`` calls -> how many of their uses were rewritten into plain calls.
    resolved: dict[int, int] = {}
    changed = expand_ops(fn.body, rewrite)
    # A ``super(C, obj)`` whose every use became a call of the method it found goes.
    gone = {k for k, count in resolved.items() if count == len(uses.get(k, ()))}
    if gone:
        expand_ops(fn.body, lambda op: [] if isinstance(op, n.Call) and op.results and
                   op.result.id in gone else None)
    if mapping:
        replace_uses(fn, mapping)
    return changed


def _const(value: Any, origin: str | None, root: Any, loc: Any) -> n.Const:
    return n.Const(value, [n.Value()], origin, root=root, loc=loc)


def _rewrite_attr(op: n.GetAttr, consts: dict[int, n.Const], uses: dict[int, list[n.Op]],
                  obj_type: Any, mapping: dict[int, n.Value]) -> list[n.Op] | None:
    """The ops replacing ``op`` (and the calls of its result, rewritten in place)."""
    name, loc = op.name, op.loc
    c = consts.get(op.obj.id)
    if c is not None and isinstance(c.value, type) and plain_class(c.value):
        # ``Cls.name``: what the class holds, bound as Python binds it.
        cls = c.value
        raw = class_attribute(cls, name)
        if raw is _MISSING or not isinstance(raw, (types.FunctionType, staticmethod,
                                                   classmethod)):
            return None
        origin, root = _origin(c, cls, name)
        if isinstance(raw, classmethod):
            func = raw.__func__
            callers = _only_called(op, uses)
            if callers is None:
                value = _const(getattr(cls, name), origin, root, loc)
                mapping[op.result.id] = value.result
                return [value]
            fconst = _const(func, f"{origin}.__func__", root, loc)
            for call in callers:
                call.fn = fconst.result
                call.args = [op.obj, *call.args]
                call.starred = tuple(i + 1 for i in call.starred)
            return [fconst]
        value = _const(raw.__func__ if isinstance(raw, staticmethod) else raw, origin, root,
                       loc)
        mapping[op.result.id] = value.result
        return [value]
    field = namedtuple_field(obj_type, name)
    if field is not None:  # a named tuple's field is an item: ``p.x`` is ``p[0]``
        index = _const(field, None, None, loc)
        return [index, n.GetItem(op.obj, index.result, op.results, loc=loc)]
    if isinstance(obj_type, type) and builtin_type(obj_type):
        return _rewrite_builtin_attr(op, obj_type, uses)
    if obj_type is None or isinstance(obj_type, type) and not plain_class(obj_type):
        return None
    kind = attribute_kind(obj_type, name)
    raw = class_attribute(obj_type, name)
    if kind == "property" and raw.fget is not None:
        fget = _const(raw.fget, f"{obj_type.__name__}.{name}.fget", obj_type, loc)
        call = n.Call(fget.result, [op.obj], [], [op.result], loc=loc)
        return [fget, call]
    if kind == "method":
        callers = _only_called(op, uses)
        if callers is None:
            return None
        if isinstance(raw, staticmethod):
            f, first = raw.__func__, None
        elif isinstance(raw, classmethod):
            f, first = raw.__func__, obj_type
        else:
            f, first = raw, _MISSING
        spelled = f"{obj_type.__name__}.{name}"
        if isinstance(raw, classmethod):
            spelled += ".__func__"
        fconst = _const(f, spelled, obj_type, loc)
        out: list[n.Op] = [fconst]
        if first is not None and first is not _MISSING:
            cconst = _const(first, obj_type.__name__, obj_type, loc)
            out.append(cconst)
            lead = [cconst.result]
        elif first is _MISSING:
            lead = [op.obj]
        else:
            lead = []
        for call in callers:
            call.fn = fconst.result
            call.args = [*lead, *call.args]
            call.starred = tuple(i + len(lead) for i in call.starred)
        return out
    return None


def _rewrite_class_method(op: n.GetAttr, consts: dict[int, n.Const]) -> list[n.Op] | None:
    """``itertools.chain.from_iterable`` (a builtin class's class method, or another of its
    attributes with a rule): the callable itself, a constant whose rule applies."""
    c = consts.get(op.obj.id)
    if c is None or not isinstance(c.value, type):
        return None
    value = getattr(c.value, op.name, None)
    if value is None or registry.lookup(value) is None or not (
            builtin_type(c.value) or isinstance(value, types.BuiltinMethodType)):
        return None
    return [n.Const(value, [op.result], f"{c.origin}.{op.name}" if c.origin else None,
                    root=c.root, loc=op.loc)]


def _rewrite_super_attr(op: n.GetAttr, consts: dict[int, n.Const],
                        uses: dict[int, list[n.Op]], defs: dict[int, n.Op],
                        type_of: Callable[[n.Value], Any], resolved: dict[int, int]
                        ) -> list[n.Op] | None:
    """``super(C, obj).name(args)`` (``super()`` in a method, as the frontend spells it) for
    ``obj`` of a known class: the function ``name`` is in the first class after ``C`` in that
    class's order that defines it, called with ``obj`` first (``object.__init__`` too, which
    takes nothing and carries no derivative); a property's getter, likewise."""
    d = defs.get(op.obj.id)
    if not isinstance(d, n.Call) or d.kwargs or d.starred or len(d.args) != 2:
        return None
    c, start = consts.get(d.fn.id), consts.get(d.args[0].id)
    if c is None or c.value is not super or start is None or \
            not isinstance(start.value, type):
        return None
    obj = d.args[1]
    kind = type_of(obj)
    if not isinstance(kind, type) or start.value not in kind.__mro__:
        return None
    mro = kind.__mro__
    owner = next((k for k in mro[mro.index(start.value) + 1:] if op.name in vars(k)), None)
    raw = vars(owner)[op.name] if owner is not None else None
    if isinstance(raw, property) and raw.fget is not None:  # ``super().area``
        fget = _const(raw.fget, f"{owner.__name__}.{op.name}.fget", owner, op.loc)
        resolved[d.result.id] = resolved.get(d.result.id, 0) + 1
        return [fget, n.Call(fget.result, [obj], [], op.results, loc=op.loc)]
    if not isinstance(raw, types.FunctionType) and raw is not object.__init__:
        return None
    callers = _only_called(op, uses)
    if callers is None:
        return None
    fconst = _const(raw, f"{owner.__name__}.{op.name}", owner, op.loc)
    for call in callers:
        call.fn = fconst.result
        call.args = [obj, *call.args]
        call.starred = tuple(i + 1 for i in call.starred)
    resolved[d.result.id] = resolved.get(d.result.id, 0) + 1
    return [fconst]


def builtin_type(cls: type) -> bool:
    """A type implemented in C by Python or NumPy (``ndarray``, ``float``), whose
    attributes are descriptors wengert knows only through rules."""
    return cls.__module__ in ("builtins", "numpy")


def _rewrite_builtin_attr(op: n.GetAttr, cls: type, uses: dict[int, list[n.Op]]
                          ) -> list[n.Op] | None:
    """``x.T``, ``x.sum(axis=0)`` on a NumPy array, ``d.get(k)`` on a dict: the Python
    definition registered for the type's descriptor (``ndarray.T``, ``dict.get``), called
    with ``x`` first (or the descriptor itself when it has no derivative)."""
    raw = getattr(cls, op.name, _MISSING)
    rule = registry.lookup(raw) if raw is not _MISSING and hashable(raw) else None
    if rule is None or rule.python is None and not (callable(raw) and rule.nondifferentiable):
        return None
    # A method without a derivative (``d.keys()``) is called as the type's own function, so
    # that the transforms see what they are calling.
    pconst = _const(rule.python if rule.python is not None else raw, None, None, op.loc)
    if callable(raw):  # a method: its calls call the definition
        callers = _only_called(op, uses)
        if callers is None:
            return None
        for call in callers:
            call.fn = pconst.result
            call.args = [op.obj, *call.args]
            call.starred = tuple(i + 1 for i in call.starred)
        return [pconst]
    return [pconst, n.Call(pconst.result, [op.obj], [], op.results, loc=op.loc)]


def _rewrite_namedtuple(op: n.Call, consts: dict[int, n.Const]) -> list[n.Op] | None:
    """``Point(a, y=b)`` for a named tuple class: its fields bound as its ``__new__`` binds
    them (defaults included), then ``runtime.make_namedtuple(Point, (a, b))``."""
    c = consts.get(op.fn.id)
    if c is None or not is_namedtuple(c.value) or op.starred or \
            any(k is None for k, _ in op.kwargs):
        return None
    cls = c.value
    fields, defaults = cls._fields, getattr(cls, "_field_defaults", {})
    given = dict(op.kwargs)
    if len(op.args) > len(fields) or any(k not in fields for k in given):
        return None
    out: list[n.Op] = []
    items = []
    for i, name in enumerate(fields):
        if i < len(op.args):
            if name in given:
                return None
            items.append(op.args[i])
        elif name in given:
            items.append(given[name])
        elif name in defaults:
            d = n.Const(defaults[name], [n.Value()], loc=op.loc)
            out.append(d)
            items.append(d.result)
        else:
            return None
    tup = n.Build("tuple", items, [n.Value()], loc=op.loc)
    make = _const(runtime.make_namedtuple, "make_namedtuple", None, op.loc)
    call = n.Call(make.result, [op.fn, tup.result], [], op.results, loc=op.loc)
    return [*out, tup, make, call]


def _rewrite_mapping_kwargs(op: n.Call, consts: dict[int, n.Const], defs: dict[int, n.Op],
                            uses: dict[int, list[n.Op]]) -> list[n.Op] | None:
    """``f(a, **{'k': v})``: a dict display of constant string keys, read by nothing else,
    splatted into a call is the keyword arguments it spells, ``f(a, k=v)`` (a mapping
    whose entries are known to nobody else but the call)."""
    if not any(k is None for k, _ in op.kwargs):
        return None
    kwargs: list[tuple[str | None, n.Value]] = []
    spelled = False
    for k, v in op.kwargs:
        made = defs.get(v.id)
        if k is not None or not isinstance(made, n.BuildDict) or \
                uses.get(v.id, []) != [op] or \
                not all(key is not None and key.id in consts and
                        type(consts[key.id].value) is str for key in made.keys):
            kwargs.append((k, v))
            continue
        kwargs += [(consts[key.id].value, value)  # type: ignore[union-attr]
                   for key, value in zip(made.keys, made.values)]
        spelled = True
    names = [k for k, _ in kwargs if k is not None]
    if not spelled or len(set(names)) != len(names):
        return None  # (nothing spelled out, or a repeated name: Python raises)
    op.kwargs = kwargs
    return [op]


#: The methods of named tuples spelled out by :func:`_rewrite_namedtuple_method`.
_NAMEDTUPLE_METHODS = ("_replace", "_asdict")


def _namedtuple_call(op: n.Call, cls: Any, name: str) -> bool:
    """Whether ``op`` calls the method ``name`` of named tuples of class ``cls`` as
    :func:`_rewrite_namedtuple_method` spells out: no positional arguments, keywords that
    name fields (``_replace``) or none (``_asdict``); else the method raises what it
    raises."""
    if name not in _NAMEDTUPLE_METHODS or not is_namedtuple(cls) or op.args or \
            op.starred or any(k is None or k not in cls._fields for k, _ in op.kwargs):
        return False
    return name == "_replace" or not op.kwargs


def _rewrite_namedtuple_method(op: n.Call, defs: dict[int, n.Op],
                               type_of: Callable[[n.Value], Any]) -> list[n.Op] | None:
    """``p._replace(x=a)`` and ``p._asdict()`` for a named tuple ``p`` of a known class: what
    they do, spelled with its items (``make_namedtuple(Point, (a, p[1]))``, ``{'x': p[0],
    'y': p[1]}``), where the library's own code (a loop popping a dict of changes) would
    not differentiate."""
    get = defs.get(op.fn.id)
    if not isinstance(get, n.GetAttr) or \
            not _namedtuple_call(op, cls := type_of(get.obj), get.name):
        return None
    fields, given = cls._fields, dict(op.kwargs)
    out: list[n.Op] = []
    items: list[n.Value] = []
    for i, name in enumerate(fields):
        if name in given:
            items.append(given[name])
            continue
        index = _const(i, None, None, op.loc)
        read = n.GetItem(get.obj, index.result, [n.Value()], loc=op.loc)
        out += [index, read]
        items.append(read.result)
    if get.name == "_asdict":
        keys = [_const(name, None, None, op.loc) for name in fields]
        return [*out, *keys, n.BuildDict([k.result for k in keys], items, op.results,
                                         loc=op.loc)]
    tup = n.Build("tuple", items, [n.Value()], loc=op.loc)
    kind = _const(cls, cls.__name__, cls, op.loc)
    make = _const(runtime.make_namedtuple, "make_namedtuple", None, op.loc)
    return [*out, tup, kind, make,
            n.Call(make.result, [kind.result, tup.result], [], op.results, loc=op.loc)]


def _rewrite_construction(op: n.Call, consts: dict[int, n.Const]) -> list[n.Op] | None:
    """``Cls(args)`` for a plain class with a Python ``__init__``: what ``type.__call__``
    does, ``obj = object.__new__(Cls); Cls.__init__(obj, args)``, so that ``__init__`` is
    inlined or linked like any method (its writes go into a new object)."""
    c = consts.get(op.fn.id)
    if c is None or not isinstance(c.value, type) or any(k is None for k, _ in op.kwargs):
        return None
    cls = c.value
    if type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__ or \
            not plain_class(cls):
        return None
    init = class_attribute(cls, "__init__")
    new = _const(object.__new__, "object.__new__", object, op.loc)
    make = n.Call(new.result, [op.fn], [], op.results, loc=op.loc)
    if isinstance(init, types.FunctionType) and \
            getattr(init.__code__, "co_filename", "<string>") == "<string>":
        # A dataclass's generated __init__: the transforms map its fields, unless a
        # ``__post_init__`` runs after it (stores, then a method call like any other).
        return _dataclass_construction(cls, op, new, make)
    if not isinstance(init, types.FunctionType):
        return None
    fi = _const(init, f"{cls.__name__}.__init__", cls, op.loc)
    call = n.Call(fi.result, [op.result, *op.args], list(op.kwargs), [n.Value()],
                  tuple(i + 1 for i in op.starred), loc=op.loc)
    return [new, make, fi, call]


def _rewrite_replace(op: n.Call, consts: dict[int, n.Const], kind: Any) -> list[n.Op] | None:
    """``dataclasses.replace(obj, **changes)`` for ``obj`` of a known dataclass: what it
    does, ``Cls(f=changes[f] if given else obj.f, ...)`` over the fields ``__init__`` takes,
    so that the construction is a constructor call like any other."""
    c = consts.get(op.fn.id)
    if c is None or c.value is not dataclasses.replace or len(op.args) != 1 or op.starred or \
            not isinstance(kind, type) or not dataclasses.is_dataclass(kind) or \
            any(k is None for k, _ in op.kwargs):
        return None
    fields = [f for f in dataclasses.fields(kind) if f.init]
    if any(f.type is dataclasses.InitVar or isinstance(f.type, dataclasses.InitVar)
           for f in kind.__dataclass_fields__.values()) or \
            any(k not in {f.name for f in fields} for k, _ in op.kwargs):
        return None  # (replace itself raises what it raises)
    given = dict(op.kwargs)
    obj = op.args[0]
    out: list[n.Op] = [_const(kind, kind.__name__, kind, op.loc)]
    kwargs: list[tuple[str | None, n.Value]] = []
    for f in fields:
        if f.name in given:
            kwargs.append((f.name, given[f.name]))
        else:
            read = n.GetAttr(obj, f.name, [n.Value()], loc=op.loc)
            out.append(read)
            kwargs.append((f.name, read.result))
    out.append(n.Call(out[0].result, [], kwargs, op.results, loc=op.loc))
    return out


def _rewrite_delete(op: n.Call, consts: dict[int, n.Const], defs: dict[int, n.Op],
                    kinds: list[Any]) -> list[n.Op] | None:
    """``del x[k]`` (a call of ``runtime.delete_item``) as ``x.pop(k)`` where ``x`` is a
    dict, or a list and ``k`` an int, and as ``x[k] = []`` for a slice of a list without a
    step: the same
    removal, in forms both modes differentiate (the entries' adjoints or tangents leave
    with them)."""
    c = consts.get(op.fn.id)
    if c is None or c.value is not runtime.delete_item or len(op.args) != 2 or op.kwargs or \
            op.starred:
        return None
    if kinds[0] is list and kinds[1] is slice:
        # ``del xs[i:j]`` is ``xs[i:j] = []`` (a slice without a step: one with a step is
        # deleted entry by entry, which no write of a list spells).
        made = defs.get(op.args[1].id)
        if not isinstance(made, n.BuildSlice) or made.step is not None and \
                getattr(consts.get(made.step.id), "value", None) not in (None, 1):
            return None
        empty = n.Build("list", [], [n.Value()], loc=op.loc)
        return [empty, n.SetItem(op.args[0], op.args[1], empty.result, loc=op.loc),
                n.Const(None, op.results, loc=op.loc)]
    if kinds[0] is not dict and not (kinds[0] is list and kinds[1] in (int, bool)):
        return None
    pop = n.GetAttr(op.args[0], "pop", [n.Value()], loc=op.loc)
    return [pop, n.Call(pop.result, [op.args[1]], [], op.results, loc=op.loc)]


def _dataclass_construction(cls: type, op: n.Call, new: n.Const, make: n.Call
                            ) -> list[n.Op] | None:
    """``Cls(args)`` for a dataclass with ``__post_init__``: what its ``__init__`` does,
    each field stored in the new object, then ``Cls.__post_init__(obj)``."""
    post = class_attribute(cls, "__post_init__")
    spec = getattr(cls, "__dataclass_params__", None)
    if not dataclasses.is_dataclass(cls) or not isinstance(post, types.FunctionType) or \
            op.starred or spec is None or spec.frozen or \
            any(f.type is dataclasses.InitVar or isinstance(f.type, dataclasses.InitVar)
                for f in cls.__dataclass_fields__.values()):
        return None
    fields = [f for f in dataclasses.fields(cls) if f.init]
    positional = [f for f in fields if not f.kw_only]
    if len(op.args) > len(positional):
        return None
    given = {f.name: a for f, a in zip(positional, op.args)}
    for k, v in op.kwargs:
        if k in given:
            return None
        given[k] = v
    out: list[n.Op] = [new, make]
    for f in dataclasses.fields(cls):
        value = given.get(f.name)
        if value is None:
            if f.default is not dataclasses.MISSING:
                c = _const(f.default, None, None, op.loc)
                out.append(c)
                value = c.result
            elif f.default_factory is not dataclasses.MISSING:
                c = _const(f.default_factory, None, None, op.loc)
                call = n.Call(c.result, [], [], [n.Value()], loc=op.loc)
                out += [c, call]
                value = call.result
            else:
                return None  # Python raises: leave the call as it is
        out.append(n.SetAttr(op.result, f.name, value, loc=op.loc))
    if set(given) - {f.name for f in fields}:
        return None
    fp = _const(post, f"{cls.__name__}.__post_init__", cls, op.loc)
    out += [fp, n.Call(fp.result, [op.result], [], [n.Value()], loc=op.loc)]
    return out


#: Operators a class may define for its objects: the method, the reflected one (tried on
#: the right operand when the left one has none), and for in-place operators the plain
#: method Python falls back to.
OPERATOR_METHODS: dict[Any, tuple[str, str | None, str | None]] = {
    operator.add: ("__add__", "__radd__", None), operator.sub: ("__sub__", "__rsub__", None),
    operator.mul: ("__mul__", "__rmul__", None),
    operator.truediv: ("__truediv__", "__rtruediv__", None),
    operator.floordiv: ("__floordiv__", "__rfloordiv__", None),
    operator.mod: ("__mod__", "__rmod__", None), operator.pow: ("__pow__", "__rpow__", None),
    operator.matmul: ("__matmul__", "__rmatmul__", None),
    operator.iadd: ("__iadd__", "__radd__", "__add__"),
    operator.isub: ("__isub__", "__rsub__", "__sub__"),
    operator.imul: ("__imul__", "__rmul__", "__mul__"),
    operator.itruediv: ("__itruediv__", "__rtruediv__", "__truediv__"),
    operator.ipow: ("__ipow__", "__rpow__", "__pow__"),
    operator.imatmul: ("__imatmul__", "__rmatmul__", "__matmul__"),
    operator.neg: ("__neg__", None, None), operator.pos: ("__pos__", None, None),
    builtins.abs: ("__abs__", None, None),
}
#: Types whose operators give way to a user class's reflected method.
_NUMBERS = frozenset({float, int, bool})


def _user_method(cls: Any, name: str | None) -> Any:
    """The Python function a user's class (a plain class, a named tuple) defines for the
    operator method ``name``, or ``None`` (a builtin's, or none)."""
    if name is None or not isinstance(cls, type) or \
            not (plain_class(cls) or is_namedtuple(cls)):
        return None
    f = class_attribute(cls, name)
    return f if isinstance(f, types.FunctionType) else None


def _rewrite_operator(op: n.Call, consts: dict[int, n.Const], type_of: Callable[[n.Value], Any]
                      ) -> list[n.Op] | None:
    """``a + b`` (and every arithmetic operator, ``-a``, ``abs(a)``, ``a += b``) on an
    object of a class that defines the operator in Python: a call of the method
    (``Vec.__add__(a, b)``; ``Vec.__rmul__(b, a)`` for ``2.0 * b``), inlined and
    differentiated like any method, where the rules of numbers would be wrong."""
    c = consts.get(op.fn.id)
    if c is None or not hashable(c.value) or c.value not in OPERATOR_METHODS or op.kwargs or \
            op.starred or not op.args:
        return None
    name, reflected, fallback = OPERATOR_METHODS[c.value]
    a = op.args[0]
    ta = type_of(a)
    f = _user_method(ta, name) or _user_method(ta, fallback)
    args = list(op.args)
    if f is not None:
        cls = ta
    elif len(op.args) == 2 and ta in _NUMBERS and \
            (f := _user_method(type_of(op.args[1]), reflected)) is not None:
        cls, args = type_of(op.args[1]), [op.args[1], a]
    else:
        return None
    k = _const(f, f"{cls.__name__}.{f.__name__}", cls, op.loc)
    return [k, n.Call(k.result, args, [], op.results, loc=op.loc)]


def _rewrite_sum_of_objects(op: n.Call, consts: dict[int, n.Const], defs: dict[int, n.Op],
                            type_of: Callable[[n.Value], Any]) -> list[n.Op] | None:
    """``sum([a, b, c])`` (or ``sum((a, b), start)``) of objects of a class that defines
    ``+``: the additions it makes, ``((0 + a) + b) + c``, each a call of the class's
    method once typed (the rules of a numeric sum would be wrong)."""
    c = consts.get(op.fn.id)
    if c is None or c.value is not builtins.sum or op.kwargs or op.starred or \
            len(op.args) not in (1, 2):
        return None
    shown = defs.get(op.args[0].id)
    if not isinstance(shown, n.Build) or shown.starred or not shown.items or \
            not all(_user_method(type_of(x), "__add__") or
                    _user_method(type_of(x), "__radd__") for x in shown.items):
        return None
    out: list[n.Op] = []
    if len(op.args) == 2:
        acc = op.args[1]
    else:
        zero = _const(0, None, None, op.loc)
        out.append(zero)
        acc = zero.result
    add = _const(operator.add, "operator.add", operator, op.loc)
    out.append(add)
    for k, x in enumerate(shown.items):
        last = k == len(shown.items) - 1
        step = n.Call(add.result, [acc, x], [], op.results if last else [n.Value()],
                      loc=op.loc)
        out.append(step)
        acc = step.result
    return out


def _rewrite_protocol(op: n.GetItem | n.SetItem | n.For, type_of: Callable[[n.Value], Any]
                      ) -> list[n.Op] | None:
    """``obj[i]``, ``obj[i] = v`` and ``for x in obj`` on an object of a user's class that
    defines ``__getitem__``, ``__setitem__`` or ``__iter__`` in Python: calls of them."""
    obj = op.iterable if isinstance(op, n.For) else op.obj
    cls = type_of(obj)
    name = {n.GetItem: "__getitem__", n.SetItem: "__setitem__", n.For: "__iter__"}[type(op)]
    if not isinstance(cls, type) or not plain_class(cls) or is_namedtuple(cls) or \
            cls.__module__.split(".")[0] in ("numpy", "wengert"):
        return None  # (a library's indexing object, ``np.r_``: its own code, not the user's)
    f = _user_method(cls, name)
    if f is None:
        return None
    k = _const(f, f"{cls.__name__}.{name}", cls, op.loc)
    if isinstance(op, n.GetItem):
        return [k, n.Call(k.result, [obj, op.index], [], op.results, loc=op.loc)]
    if isinstance(op, n.SetItem):
        return [k, n.Call(k.result, [obj, op.index, op.value], [], [n.Value()], loc=op.loc)]
    it = n.Call(k.result, [obj], [], [n.Value(f"{obj.hint}_iter" if obj.hint else None)],
                loc=op.loc)
    op.iterable = it.result
    return [k, it, op]


def _rewrite_star(op: n.Call, consts: dict[int, n.Const], defs: dict[int, n.Op],
                  types_: Types, arg_types: Sequence[Any], params: list[n.Value]
                  ) -> list[n.Op] | None:
    """A call given ``*t`` of a tuple whose entries are known in number (a named tuple, a
    tuple display, a tuple parameter of known entries: ``math.hypot(*p)``) is given the
    entries themselves; ``zip(*rows)`` of a list of lists or tuples is
    :func:`runtime.zip_rows`, defined in Python. Either is a call the transforms inline
    and differentiate to any order, where a starred call is dispatched when it runs."""
    if not op.starred:
        return None
    c = consts.get(op.fn.id)
    rows = types_.items.get(op.args[0].id) if op.args else None
    if c is not None and c.value is builtins.zip and op.starred == (0,) and \
            len(op.args) == 1 and not op.kwargs and types_.of(op.args[0]) is list and \
            (rows in (list, tuple) or isinstance(rows, (ListOf, TupleOf))):
        k = n.Const(runtime.zip_rows, [n.Value()], origin="zip")
        return [k, n.Call(k.result, list(op.args), [], op.results, loc=op.loc)]
    if c is not None and c.value in (builtins.max, builtins.min) and op.starred == (0,) and \
            len(op.args) == 1 and not op.kwargs and types_.of(op.args[0]) in (list, tuple) \
            and types_.items.get(op.args[0].id) in (float, int, INT_OR_FLOAT):
        # ``max(*xs)`` of numbers: ``max(xs)``, where ``xs`` has two items or more.
        check = n.Const(runtime.check_spread, [n.Value()])
        return [check, n.Call(check.result, [op.args[0], op.fn], [], [n.Value()], loc=op.loc),
                n.Call(op.fn, list(op.args), [], op.results, loc=op.loc)]
    ops: list[n.Op] = []
    args: list[n.Value] = []
    starred: list[int] = []
    for i, a in enumerate(op.args):
        count = _entry_count(a, defs, types_, arg_types, params) \
            if i in op.starred else None
        if count is None:
            if i in op.starred:
                starred.append(len(args))
            args.append(a)
            continue
        shown = defs.get(a.id)
        if isinstance(shown, n.Build):
            args.extend(shown.items)
            continue
        for k in range(count):
            index = n.Const(k, [n.Value()])
            entry = n.GetItem(a, index.result, [n.Value()], loc=op.loc)
            ops += [index, entry]
            args.append(entry.result)
    if len(starred) == len(op.starred):
        return None
    return [*ops, n.Call(op.fn, args, list(op.kwargs), op.results, tuple(starred),
                         loc=op.loc)]


def _rewrite_deepcopy(op: n.Call, consts: dict[int, n.Const], types_: Types
                      ) -> list[n.Op] | None:
    """``copy.deepcopy(x)`` of a list of numbers (``list(x)``), a dict of numbers
    (``dict(x)``) or a list of lists of numbers (a copy of each row, no row twice:
    :func:`runtime.copy_rows`): a new container the transforms see made, whose items a
    loop may write into (the copy the deep copy is, as the rule of ``copy.deepcopy``
    would not say)."""
    c = consts.get(op.fn.id)
    if c is None or c.value is not copy.deepcopy or len(op.args) != 1 or op.kwargs or \
            op.starred:
        return None
    x = op.args[0]
    kind, item, value = types_.of(x), types_.items.get(x.id), types_.values.get(x.id)
    numbers = (float, int, INT_OR_FLOAT)
    if kind is list and item in numbers or kind is dict and value in numbers:
        k = n.Const(kind, [n.Value()])
        return [k, n.Call(k.result, [x], [], op.results, loc=op.loc)]
    if kind is list and isinstance(item, ListOf) and item.item in numbers:
        site = n.Const(op.loc, [n.Value()], origin="site")
        check = n.Const(runtime.check_unshared_rows, [n.Value()])
        k = n.Const(runtime.copy_rows, [n.Value()])
        return [site, check, n.Call(check.result, [x, site.result], [], [n.Value()],
                                    loc=op.loc),
                k, n.Call(k.result, [x], [], op.results, loc=op.loc)]
    return None


def _entry_count(a: n.Value, defs: dict[int, n.Op], types_: Types, arg_types: Sequence[Any],
                 params: list[n.Value]) -> int | None:
    """How many entries the tuple ``a`` has, where known before it runs: a tuple display's,
    a named tuple's fields, a tuple parameter's given entries, a tuple's whose entries type
    inference knows (an item of a list of pairs: ``for args in pairs: f(*args)``); else
    ``None``."""
    shown = defs.get(a.id)
    kind = types_.of(a)
    if isinstance(shown, n.Build) and shown.kind == "tuple" and not shown.starred:
        return len(shown.items)
    if is_namedtuple(kind):
        return len(kind._fields)
    if a in params and isinstance(t := arg_types[params.index(a)], TupleOf):
        return len(t.entries)
    if kind is tuple and a.id in types_.entries:
        return len(types_.entries[a.id])
    if isinstance(shown, n.Const) and type(shown.value) is tuple:
        return len(shown.value)  # (a module's tuple read as a constant: ``*ARGS``)
    if isinstance(shown, n.GetItem) and isinstance(base := defs.get(shown.obj.id), n.Const) \
            and type(base.value) is tuple and \
            isinstance(part := defs.get(shown.index.id), n.BuildSlice):
        bounds = [None if p is None else getattr(defs.get(p.id), "value", _MISSING)
                  for p in (part.lower, part.upper, part.step)]
        if all(b is None or type(b) is int for b in bounds) and bounds[2] != 0:
            return len(base.value[slice(*bounds)])  # ``*ARGS[1:]``
    return None


def _rewrite_dict_union(op: n.Call, consts: dict[int, n.Const],
                        type_of: Callable[[n.Value], Any], mapping: dict[int, n.Value]
                        ) -> list[n.Op] | None:
    """``a | b`` of two dicts: the display ``{**a, **b}`` (a new dict, ``b``'s value for
    a key both hold); ``a |= b``: ``a.update(b)``, the dict itself changed."""
    c = consts.get(op.fn.id)
    if c is None or c.value not in (operator.or_, operator.ior) or len(op.args) != 2 or \
            op.kwargs or op.starred or any(type_of(a) is not dict for a in op.args):
        return None
    a, b = op.args
    if c.value is operator.or_:
        return [n.BuildDict([None, None], [a, b], op.results, loc=op.loc)]
    method = n.GetAttr(a, "update", [n.Value()], loc=op.loc)
    mapping[op.result.id] = a
    return [method, n.Call(method.result, [b], [], [n.Value()], loc=op.loc)]


def _rewrite_callable_object(op: n.Call, consts: dict[int, n.Const], fn_type: Any
                             ) -> list[n.Op] | None:
    """``obj(args)`` for an object whose class defines ``__call__`` in Python (a constant
    such object, or a value of a known class): ``Cls.__call__(obj, args)``."""
    c = consts.get(op.fn.id)
    if c is not None:
        obj = c.value
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType,
                            types.MethodType)) or not plain_class(type(obj)):
            return None
        cls = type(obj)
    elif fn_type is not None and isinstance(fn_type, type) and plain_class(fn_type):
        cls = fn_type
    else:
        return None
    call = class_attribute(cls, "__call__")
    if not isinstance(call, types.FunctionType):
        return None
    f = _const(call, f"{cls.__name__}.__call__", cls, op.loc)
    new = n.Call(f.result, [op.fn, *op.args], op.kwargs, op.results,
                 tuple(i + 1 for i in op.starred), loc=op.loc)
    return [f, new]


def _rewrite_store(op: n.SetAttr, obj_type: Any) -> list[n.Op] | None:
    """``obj.prop = v`` for a property with a setter: ``Cls.prop.fset(obj, v)``."""
    if obj_type is None or attribute_kind(obj_type, op.name) != "property":
        return None
    raw = class_attribute(obj_type, op.name)
    if raw.fset is None:
        return None
    fset = _const(raw.fset, f"{obj_type.__name__}.{op.name}.fset", obj_type, op.loc)
    call = n.Call(fset.result, [op.obj, op.value], [], [n.Value()], loc=op.loc)
    return [fset, call]


def _only_called(op: n.GetAttr, uses: dict[int, list[n.Op]]) -> list[n.Call] | None:
    """The calls of ``op``'s result if that is all it is used for, else ``None``."""
    users = uses.get(op.result.id, [])
    if not users or not all(isinstance(u, n.Call) and u.fn is op.result and
                            op.result not in u.args and
                            all(v is not op.result for _, v in u.kwargs) for u in users):
        return None
    return users  # type: ignore[return-value]


def _origin(c: n.Const, cls: type, name: str) -> tuple[str | None, Any]:
    """How generated code spells ``Cls.name``: through the user's own name for the class."""
    if c.origin:
        return f"{c.origin}.{name}", c.root if c.root is not None else (
            cls if "." not in c.origin else None)
    return None, None


def called_only(fn: n.Function) -> set[int]:
    """Ids of values ``fn`` uses as a callee and nowhere else (a method looked up to be
    called: ``p.step`` in ``p.step(dt)``)."""
    callee, other = set(), set()
    for op in n.walk(fn.body):
        for v in op.operands():
            if isinstance(op, n.Call) and v is op.fn and v not in op.args and \
                    all(w is not v for _, w in op.kwargs):
                callee.add(v.id)
            else:
                other.add(v.id)
    return callee - other


def checked_attribute(op: n.GetAttr, obj_type: Any, module: bool, b: Any,
                      called: bool = False) -> n.Op:
    """The op that reads ``op``'s attribute of an object being differentiated: ``op``
    itself for a field; a run-time checked read (:func:`runtime.plain_attr`) when the
    object's class is unknown here. A property or descriptor of a known class that
    :func:`devirtualize` could not spell out is refused at the user's line. ``called``:
    the result is only called (a method; the call is dispatched, which sees properties)."""
    if module or called:
        return op
    if obj_type is None:
        site = b.const(op.loc, origin="site")
        return n.Call(b.const(runtime.plain_attr), [op.obj, b.const(op.name), site], [],
                      [op.result], loc=op.loc)
    if obj_type is type:
        # An attribute of a class (``Bank.accounts``): a constant of the derivation, which
        # the function writes values being differentiated into.
        raise NonDifferentiableError(
            f"the class attribute {op.name!r} holds objects that values being differentiated "
            "are written into: a class's attributes are constants of the derivation, which "
            "wengert does not follow writes into", op.loc,
            hint=f"pass what {op.name!r} holds as an argument (or hold it in a module "
                 "global, which the derivative reads as an argument)")
    if isinstance(obj_type, type) and builtin_type(obj_type):
        # Not a field: a descriptor computing something (``x.T``, ``x.flat``) with no rule.
        raise NonDifferentiableError(
            f"{obj_type.__name__}.{op.name} has no derivative rule, and it is read on a "
            "value being differentiated", op.loc,
            hint=f"use a NumPy function instead (np.transpose(x) for x.T), or register a "
                 f"Python definition with wengert.rules.registry.defpython("
                 f"{obj_type.__name__}.{op.name})")
    if isinstance(obj_type, type):
        kind = attribute_kind(obj_type, op.name)
        if kind in ("property", "other"):
            raise NonDifferentiableError(
                f"{obj_type.__name__}.{op.name} is computed by a "
                f"{'property without a getter' if kind == 'property' else 'descriptor'} "
                "that wengert cannot differentiate through", op.loc,
                hint=f"read the stored value the {op.name!r} attribute is computed from")
    return op


def check_stored_attribute(op: n.SetAttr, obj_type: Any, b: Any) -> None:
    """Refuse a write of an attribute that a property or descriptor handles, into an
    object being differentiated (a property with a setter was already made a call)."""
    if isinstance(obj_type, type) and obj_type.__module__ not in ("builtins", "numpy"):
        if attribute_kind(obj_type, op.name) not in ("field",):
            raise NonDifferentiableError(
                f"{obj_type.__name__}.{op.name} is not a plain field: writing it runs a "
                "descriptor wengert cannot differentiate through", op.loc,
                hint="write the stored fields the descriptor sets")
    elif obj_type is None:
        b.call(runtime.check_plain_setattr, op.obj, b.const(op.name),
               b.const(op.loc, origin="site"))
