"""Effects: what each op of a function may write, and which of its values share storage.

This package is the one home of wengert's knowledge of mutation and aliasing. Every
transform and analysis that asks "may this object change after here?", "do these two
arrays share memory?" or "which parameters may this function write into?" asks one of
its modules, and the vocabulary the questions need (which methods write into their
object, which operators change their first operand in place, which types nothing can
write into) is declared here once:

- :mod:`~wengert.analysis.effects.vocabulary`: the names of mutation (methods,
  operators, view attributes), a leaf every other module (type inference included) reads;
- :mod:`~wengert.analysis.effects.reads`: the untyped facts type inference needs (the
  values only read, the lists changed only by item writes, the records of a gradient's
  loops), below :mod:`wengert.analysis.types`;
- :mod:`~wengert.analysis.effects.aliases`: the alias graph of containers and objects
  (what each call may write, store or return a part of), which activity analysis and the
  driver's parameter summaries read;
- :mod:`~wengert.analysis.effects.arrays`: the storage of arrays (views, one array under
  several names) and the writes of each op (:class:`~wengert.analysis.effects.arrays.Effects`);
- :mod:`~wengert.analysis.effects.objects`: where each container comes from
  (:class:`~wengert.analysis.effects.objects.Objects`), and the questions the transforms
  ask of the lists in the code they generated.

The answers are conservative: where an analysis cannot tell, two values may share memory
and an object may be changed. A transform then copies the value it must keep (a residual
of the pullback) or refuses the write at the user's line; it never guesses.

The package imports nothing here: each module is imported by name, so that type inference
can read the vocabulary and the untyped facts below it while the typed analyses above it
read the types.
"""
