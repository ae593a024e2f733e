"""The frontend: Python source -> SSA IR."""

from wengert.frontend.lower import lower, lower_with_deps  # noqa: F401
