"""The one registry of derivative rules, keyed by the Python callable itself.

A rule is plain Python in one of two shapes, so that the transforms can lower its
body through the frontend and *inline* it (``y = sin(x)`` becomes
``x_bar += y_bar * math.cos(x)`` in generated code) and so that the same rule can
be called directly at run time:

* reverse (``vjp``): ``f_vjp(*args) -> (value, pullback)`` where
  ``pullback(value_bar)`` returns a tuple with one adjoint per positional
  argument; ``None`` stands for a zero adjoint (integers, flags, arguments the
  result does not depend on).
* forward (``jvp``): ``f_jvp(*args) -> (value, differential)`` where
  ``differential(*arg_dots)`` takes one tangent per positional argument and
  returns the tangent of the value.

Both are written as ``return value, lambda ...: ...`` or with a nested ``def``
returned by name; that is the shape the inliner recognises.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Held while a declared rule is built from its declaration (:attr:`Rule.pending`): a
#: derivation on another thread asking for the same rule waits for it, never sees half.
_BUILD = threading.RLock()


@dataclass
class Rule:
    """What wengert knows about differentiating one callable.

    ``vjp`` and ``jvp`` are the reverse and forward rules. A rule of the rule form
    (:mod:`wengert.rules.form`) declared while wengert is imported is built on first
    reading them (``pending``): most programs use a few dozen of the hundreds declared, and
    building one (its source written, compiled) costs what importing NumPy costs for ten.
    """

    fn: Any
    _vjp: Callable | None = field(default=None, repr=False)
    _jvp: Callable | None = field(default=None, repr=False)
    #: Builds ``vjp`` and ``jvp`` from the declaration, once, when either is first read.
    pending: Callable[[], None] | None = field(default=None, repr=False)
    _building: bool = field(default=False, repr=False)
    #: True when every output is a piecewise constant of the inputs (``len``, ``<``, ``floor``).
    nondifferentiable: bool = False
    #: Warn when an *active* value flows through it and the result is used (``int``, ``round``).
    warn: bool = False
    #: No side effects and no observable failure worth keeping: safe to drop when unused.
    pure: bool = False
    #: Registered by the user (``wengert.derivative``) rather than built in.
    user: bool = False
    #: A Python function computing the same (:mod:`wengert.rules.python_defs`): calls are
    #: rewritten to call it, and it is inlined like a user helper.
    python: Callable | None = None
    #: The keyword arguments the Python definition takes (others: the call stays).
    python_keywords: tuple[str, ...] = ()
    #: How the rules were declared: ``"defderiv"``, ``"deflinear"`` (:mod:`wengert.rules.form`)
    #: or ``None`` (hand-written ``defvjp``/``defjvp``).
    form: str | None = None
    #: Argument tuples at which the rule harness checks the rules (``form.cases``).
    cases: list[tuple] = field(default_factory=list)
    #: Given an array, it returns an array (or a NumPy scalar, for a full reduction): what
    #: type inference knows of a private NumPy primitive's result (:func:`mark_array_result`).
    array_result: bool = False
    #: It takes a list as a list of arrays (``_concat``), not as one array as NumPy
    #: would (:func:`mark_sequence_args`).
    sequence_args: bool = False
    #: ``(dtype, ndim)`` of the array it returns from its arguments' types, or ``None``
    #: where they do not say (:func:`mark_array_type`).
    array_type: Callable[..., tuple[type, int] | None] | None = None
    #: The full type of its result from its arguments' full types and constant values
    #: (:func:`mark_result_type`), or ``None``.
    result_type: Callable[[list[Any], list[Any]], Any] | None = None
    #: The shape of the result from the arguments' shapes (``None`` where not known) and
    #: constant values (:func:`mark_result_shape`), or ``None``.
    result_shape: Callable[[list[Any], list[Any]], Any] | None = None
    #: A check: it returns ``None`` or raises, and does nothing else (:func:`mark_check`).
    check: bool = False
    #: Its result is a new list (or ``None``) that holds no slot of its arguments'
    #: (:func:`mark_fresh`): what a loop over it changes is nothing of theirs.
    fresh: bool = False
    #: Its result may share memory with its first argument, or hold arrays that do (a
    #: reshape, a transpose, ``np.asarray`` of an array, ``np.split``'s pieces;
    #: :func:`mark_view`): a write into one changes the other.
    view: bool = False
    #: A plan whose index reads entries by arrays of positions (:func:`mark_gathers`): a
    #: view primitive given that index makes a new array, no view.
    gathers: bool = False

    @property
    def vjp(self) -> Callable | None:
        """``f_vjp(*args) -> (value, pullback)``, or ``None``."""
        if self.pending is not None:
            self.build()
        return self._vjp

    @vjp.setter
    def vjp(self, rule: Callable | None) -> None:
        # (a rule given over a declaration not yet built, ``wengert.derivative`` of
        # ``np.sin``: the declaration is built first, so that the rule given wins)
        if self.pending is not None and not self._building:
            self.build()
        self._vjp = rule

    @property
    def jvp(self) -> Callable | None:
        """``f_jvp(*args) -> (value, differential)``, or ``None``."""
        if self.pending is not None:
            self.build()
        return self._jvp

    @jvp.setter
    def jvp(self, rule: Callable | None) -> None:
        if self.pending is not None and not self._building:
            self.build()
        self._jvp = rule

    def build(self) -> None:
        """Build the rules from a deferred declaration (nothing if there is none)."""
        with _BUILD:
            pending = self.pending
            if pending is not None:
                self._building = True
                try:
                    pending()
                finally:
                    self._building = False
                self.pending = None


_RULES: dict[object, Rule] = {}
_KEEPALIVE: dict[object, Any] = {}


def _key(fn: Any) -> object:
    # Keyed by identity: builtins such as ``math.sin`` are not always hashable in a
    # useful way, and two distinct callables must never share a rule. A class method of a
    # builtin class (``itertools.chain.from_iterable``) is a new object at each read: it
    # is keyed by its class and name.
    if isinstance(fn, types.BuiltinMethodType) and isinstance(fn.__self__, type):
        return ("classmethod", id(fn.__self__), fn.__name__)
    return id(fn)


def _entry(fn: Any) -> Rule:
    k = _key(fn)
    rule = _RULES.get(k)
    if rule is None:
        rule = Rule(fn)
        _RULES[k] = rule
        _KEEPALIVE[k] = fn
    return rule


#: The rule families of optional libraries, by the library's top-level module: imported
#: (their rules declared) when a rule is first looked for after the user's code imported
#: the library, so that ``import wengert`` imports none of them.
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "scipy": ("wengert.rules.scipy_special", "wengert.rules.scipy_stats",
              "wengert.rules.scipy_linalg")}


#: Set while an optional family is imported: its rules, like wengert's own, are built when
#: first read (``form._declare``).
loading_optional = False


def load_optional() -> bool:
    """Declare the rules of the optional libraries imported by now; whether any were."""
    global loading_optional
    found = [lib for lib in _OPTIONAL if lib in sys.modules]
    with _BUILD:
        for lib in found:
            for name in _OPTIONAL.pop(lib, ()):
                loading_optional = True
                try:
                    importlib.import_module(name)
                finally:
                    loading_optional = False
    return bool(found)


def lookup(fn: Any) -> Rule | None:
    """The rule registered for ``fn``, or ``None``."""
    k = _key(fn)
    rule = _RULES.get(k)
    if rule is None and _OPTIONAL and load_optional():
        rule = _RULES.get(k)
    return rule


def defvjp(fn: Any, *, user: bool = False) -> Callable[[Callable], Callable]:
    """Decorator registering ``f_vjp(*args) -> (value, pullback)`` as the reverse rule of ``fn``."""

    def register(rule_fn: Callable) -> Callable:
        entry = _entry(fn)
        entry.vjp = rule_fn
        entry.user = entry.user or user
        return rule_fn

    return register


def defjvp(fn: Any, *, user: bool = False) -> Callable[[Callable], Callable]:
    """Decorator registering ``f_jvp(*args) -> (value, differential)``: ``fn``'s forward rule."""

    def register(rule_fn: Callable) -> Callable:
        entry = _entry(fn)
        entry.jvp = rule_fn
        entry.user = entry.user or user
        return rule_fn

    return register


def defrules(fn: Any, vjp: Callable, jvp: Callable) -> None:
    """Register both rules of ``fn`` where one pair of rule bodies serves several callables
    (``max`` and ``min``): a function of the callable makes them, reading it from its
    closure, and they are named after ``fn`` (``max_vjp``) here."""
    name = getattr(fn, "__name__", "fn")
    for rule, mode in ((vjp, "vjp"), (jvp, "jvp")):
        rule.__name__ = rule.__qualname__ = f"{name}_{mode}"
    defvjp(fn)(vjp)
    defjvp(fn)(jvp)


def defpython(fn: Any, keywords: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorator registering a Python definition of ``fn`` (same arguments, same result),
    used instead of ``fn`` in differentiated code; ``keywords`` are the keyword arguments
    it accepts."""

    def register(definition: Callable) -> Callable:
        entry = _entry(fn)
        entry.python = definition
        entry.python_keywords = tuple(keywords)
        definition.__wengert_inline__ = True  # type: ignore[attr-defined]
        # (what it defines: its calls, before it is inlined, return what ``fn``'s do)
        definition.__wengert_defines__ = fn  # type: ignore[attr-defined]
        return definition

    return register


def library_copy(fn: Any, qualname: str) -> Any:
    """A copy of the library function ``fn`` named ``qualname``, for a Python definition that
    hands what it does not follow to the library's own code: the definition replaces ``fn``
    itself, and the copy is what a refusal of that code names (``scipy.stats.weibull_min.
    logpdf``)."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = qualname
    return copy


def takes_keywords(rule: Rule, names: Any) -> bool:
    """Whether ``rule``'s Python definition takes each keyword argument of ``names``
    (every one, where its keywords include ``"**"``)."""
    return "**" in rule.python_keywords or all(k in rule.python_keywords for k in names)


def python_definition(fn: Any) -> Rule | None:
    """The rule of ``fn`` if it has a Python definition."""
    rule = lookup(fn)
    return rule if rule is not None and rule.python is not None else None


def nondifferentiable(*fns: Any, warn: bool = False, pure: bool = True) -> None:
    """Mark callables whose outputs carry no derivative (``len``, comparisons, ``int``).

    ``warn=True`` asks for a :class:`NonDifferentiableWarning` when an active value
    flows through the callable and its result is used.
    """
    for fn in fns:
        entry = _entry(fn)
        entry.nondifferentiable = True
        entry.warn = warn
        entry.pure = entry.pure or pure


def mark_pure(*fns: Any) -> None:
    """Declare callables free of side effects, so unused calls of them may be removed."""
    for fn in fns:
        _entry(fn).pure = True


def mark_fresh(*fns: Any) -> None:
    """Declare helpers that return a new list sharing no slot with their arguments (the
    adjoints of a sequence's items, built for a rule's pullback)."""
    for fn in fns:
        _entry(fn).fresh = True


def mark_view(*fns: Any) -> None:
    """Declare array primitives whose result may be a view of their first argument (or
    hold views of it): what is written into one is seen through the other."""
    for fn in fns:
        _entry(fn).view = True


def mark_gathers(*fns: Any) -> None:
    """Declare plan functions whose index (their result, or its last entry) holds arrays of
    positions: what a view primitive reads with it is a copy (``np.sort``'s entries)."""
    for fn in fns:
        _entry(fn).gathers = True


def gathers(fn: Any) -> bool:
    """Whether ``fn`` is a plan of :func:`mark_gathers`."""
    rule = lookup(fn)
    return rule is not None and rule.gathers


def is_view(fn: Any) -> bool:
    """Whether ``fn`` may return a view of its first argument (:func:`mark_view`)."""
    rule = lookup(fn)
    return rule is not None and rule.view


def mark_array_result(*fns: Any) -> None:
    """Declare primitives whose result is an array (or a NumPy scalar) when an argument is
    an array, so that the rules of what is computed from it inline with their array
    branches (which hold for NumPy scalars too)."""
    for fn in fns:
        _entry(fn).array_result = True


def mark_sequence_args(*fns: Any) -> None:
    """Declare array primitives that take a list argument as a list of arrays, rather than
    reading it as one array: the tangent of such a list stays a list of tangents."""
    for fn in fns:
        _entry(fn).sequence_args = True


def mark_check(*fns: Any) -> None:
    """Declare functions that only check their arguments (return ``None`` or raise): a call
    of one with constant arguments that passes is dropped at compile time."""
    for fn in fns:
        _entry(fn).check = True


#: A constant value not known at compile time (:func:`mark_result_type`'s callbacks).
UNKNOWN = object()


def mark_result_type(of_args: Callable[[list[Any], list[Any]], Any], *fns: Any) -> None:
    """Declare the type of what ``fn`` returns for type inference, as ``of_args(types,
    consts)`` from its arguments' types (``(dtype, ndim)`` for an array of known axes, as
    :func:`mark_array_type` has them) and constant values (:data:`UNKNOWN` where not
    known): a type, ``(dtype, ndim)`` for an array, a list of these for a tuple of them,
    or ``None``."""
    for fn in fns:
        _entry(fn).result_type = of_args


def mark_result_shape(of_args: Callable[[list[Any], list[Any]], Any], *fns: Any) -> None:
    """Declare the shape of what ``fn`` returns for type inference, as ``of_args(shapes,
    consts)`` from its arguments' shapes (``None`` where not known) and constant values
    (:data:`UNKNOWN` where not known): a tuple, or ``None`` where it cannot say (the
    shapes the API specialises a function on then fold its rules' shape arithmetic)."""
    for fn in fns:
        _entry(fn).result_shape = of_args


def mark_array_type(fn: Any, of_types: Callable[..., tuple[type, int] | None]) -> None:
    """Declare the dtype and number of axes of the array primitive ``fn`` returns, as
    ``of_types(*argument_types)`` (``None``: unknown), for type inference: an argument's
    type is ``(dtype, ndim)`` for an array known to have them, else its type."""
    _entry(fn).array_type = of_types


def is_pure(fn: Any) -> bool:
    """Whether an unused call of ``fn`` may be dropped (never a check's: it is there to
    raise)."""
    rule = lookup(fn)
    return rule is not None and rule.pure and not rule.check


def all_rules() -> list[Rule]:
    """Every registered rule (for tests that walk the tables)."""
    return list(_RULES.values())
