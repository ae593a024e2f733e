"""A compiled VJP split in two functions: the forward, which returns its residuals, and
the pullback, which takes them (closure conversion).

The VJP transform builds ``f_vjp`` returning ``(value, pullback)``, the pullback a
closure over the forward values it reads. That is the form every transform composes
(it is differentiated again as it is), but a closure costs at run time: each call of
``f_vjp`` makes a cell per captured value and a function object, and the pullback reads
its values through the cells. A recursive function, or a helper a loop calls directly,
pays that once per call.

So the code that is only compiled, never transformed again, is split just before code
generation: the forward returns ``(value, (v1, ..., vk))``, the values the pullback
reads, and the pullback is a module-level function ``f_pullback(res, out_bar[, inouts])``
that unpacks them. A caller linked to a split derivative calls ``f_forward`` and, in its
own pullback, ``f_pullback(res, y_bar)``: a tuple made and unpacked instead of a closure
(``transforms/vjp.py``, ``call_direct``). Everything else calls the VJP as before, through
a function joining the two (``driver/pipeline.py``).
"""

from __future__ import annotations

from wengert.ir import nodes as n
from wengert.ir.clone import substitute
from wengert.ir.uses import free_uses


def split_pullback(vjp_fn: n.Function) -> tuple[n.Function, n.Function, bool] | None:
    """``vjp_fn`` (ending ``return value, pullback``) as its forward function, returning
    ``(value, residuals)``, and its pullback taking the residuals first; and whether the
    pullback takes the caller's ``inouts`` (then its last parameter, ``None`` by
    default). ``None`` when ``vjp_fn`` does not end that way. ``vjp_fn`` is changed into
    the forward function."""
    body = vjp_fn.body
    ret = body.ops[-1] if body.ops else None
    if not isinstance(ret, n.Return):
        return None
    pair = next((op for op in body.ops if ret.value in op.results), None)
    if not isinstance(pair, n.Build) or pair.kind != "tuple" or len(pair.items) != 2:
        return None
    mk = next((op for op in body.ops if pair.items[1] in op.results), None)
    if not isinstance(mk, n.MakeFunction) or mk.kw_defaults or \
            any(op is not pair and mk.result in op.operands() for op in n.walk(body)):
        return None
    pb = mk.func
    takes_inouts = len(pb.body.args) == 2
    free = free_uses(pb.body)
    # The forward: the residuals instead of the closure.
    res = n.Build("tuple", free, [n.Value("res")], loc=mk.loc)
    body.ops[body.ops.index(mk)] = res
    pair.items = [pair.items[0], res.result]
    # The pullback: the residuals unpacked into values of its own, named as the forward's.
    res_arg = n.Value("res")
    own = [n.Value(v.hint) for v in free]
    substitute(pb.body, {v.id: o for v, o in zip(free, own)})
    if own:
        pb.body.ops.insert(0, n.Unpack(res_arg, own))
    pb.body.args.insert(0, res_arg)
    pb.signature = n.Signature(args=["res", *pb.signature.args])
    return vjp_fn, pb, takes_inouts
