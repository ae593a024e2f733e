"""The driver: from a Python callable to a cached, compiled derivative.

* :mod:`~wengert.driver.callables`: what a callable is to wengert (a plain function,
  a gradient made by ``grad``, a primitive given directly, a ``*args`` function at a
  fixed arity);
* :mod:`~wengert.driver.cache`: the caches and what makes an entry stale;
* :mod:`~wengert.driver.pipeline`: the pipeline (lower, clean up, verify, transform,
  clean up, update in place, verify, emit) and the linkers that connect derivatives;
* :mod:`~wengert.driver.binding`: arguments bound to parameters, tangents and
  cotangents converted between the user's form and generated code's;
* :mod:`~wengert.driver.dispatch`: derivatives of callees known only at run time,
  reached from generated code through the hook it installs in :mod:`wengert.runtime`.
"""

from wengert.driver import dispatch  # noqa: F401  (installs the run-time dispatchers)
