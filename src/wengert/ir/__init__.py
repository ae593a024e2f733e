"""wengert's SSA intermediate representation with structured regions."""

from wengert.ir.nodes import (  # noqa: F401
    UNBOUND,
    Build,
    BuildDict,
    BuildSlice,
    Call,
    Const,
    For,
    FormatValue,
    Function,
    GetAttr,
    GetItem,
    If,
    JoinStr,
    MakeFunction,
    Op,
    Raise,
    Region,
    Return,
    SetAttr,
    SetItem,
    Signature,
    Unpack,
    Value,
    While,
    With,
    Yield,
    walk,
)
from wengert.ir.printer import print_function  # noqa: F401
from wengert.ir.verify import VerifyError, verify  # noqa: F401
