# SPDX-License-Identifier: MIT
"""Inductor's post-grad pass for spyre: the graph's card part becomes recipes.

Inductor runs this pass (registered as the device's custom pass) on every
post-grad ATen graph that has a spyre tensor, before it lowers the graph to
its own IR. It splits the graph exactly as ``backend="spyre"`` does (the
capability-based partitioner over ``compiler.lower.LOWERINGS``, the same
lowering and compile of each part into one recipe, with the same
in-process and on-disk recipe caches) and rewrites it:

- each part becomes one ``spyre_inductor::launch(args, key)`` node, which
  Inductor lowers as an extern (fallback) kernel: one SUBMIT per call;
- each node the lowering refuses becomes an Inductor fallback kernel of its
  own ATen op (a "passthrough lowering"), so the generated code calls the
  op's spyre eager kernel, as the graph breaks of ``backend="spyre"`` do.

A graph with symbolic sizes is not partitioned: it becomes one
``spyre_inductor::per_size`` node that compiles a static graph per size met
at its calls (per_size.py), its constant tensors passed in as inputs and
its writes into inputs (functionalization's ``copy_``, a cache updated in
place) left outside it as eager copies of its results.

So Inductor's own code generators never see a spyre pointwise or reduction
node: the graph it lowers holds only extern kernels. The pass's ``uuid``
is part of Inductor's FX graph cache key (and AOTAutogradCache's); it
covers the plugin's and libspyre's build, the op library version and every
card's interface version, so an entry made by other code or for another
card is never used.
"""
import contextlib
import hashlib
import json
import operator
import os
import threading

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

from .. import _C
from ..compiler import backend, disk_cache
from . import per_size, runtime

_lock = threading.Lock()
_strict = threading.local()
_ZERO = {"graphs": 0, "recipes": 0, "per_size_graphs": 0, "fallback_nodes": 0,
         "graph_breaks": []}
_stats = dict(_ZERO, graph_breaks=[])
_identity = None


def stats():
    """What the pass did in this process: graphs lowered, recipes in them,
    nodes left to spyre eager kernels (fallback nodes) and why (graph
    breaks). An Inductor cache hit does not run the pass."""
    with _lock:
        return {**_stats, "graph_breaks": list(_stats["graph_breaks"])}


def reset_stats():
    with _lock:
        _stats.update(_ZERO, graph_breaks=[])


@contextlib.contextmanager
def strict():
    """Within it, a graph the lowering does not take whole (a node left to
    an eager kernel, or symbolic sizes) is an error rather than eager
    fallback nodes: the eager ops compiled through Inductor (eager.py) are
    themselves what such a node would call."""
    prev = getattr(_strict, "on", False)
    _strict.on = True
    try:
        yield
    finally:
        _strict.on = prev


def cards():
    """(interface version, cores) of every spyre card of this process."""
    return [(p.hw_version, p.cores) for p in
            (torch.spyre.get_device_properties(i) for i in range(torch.spyre.device_count()))]


def identity():
    """What a compiled spyre graph depends on besides the graph itself (the
    pass's uuid): the plugin's build identity (its version, torch's, the op
    library version, the extension module, libspyre, the lowering), this
    package's source, and the cards' interface versions."""
    global _identity
    if _identity is None:
        here = os.path.dirname(__file__)
        h = hashlib.sha256()
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                with open(os.path.join(here, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
        desc = [disk_cache._build_identity(), _C._OPS_VERSION, h.hexdigest(), cards()]
        _identity = hashlib.sha256(json.dumps(desc).encode()).hexdigest()
    return _identity


class _Fallback:
    """A passthrough lowering: Inductor calls it with its IR arguments and
    gets the fallback kernel of @op (the generated code calls the op, whose
    spyre eager kernel runs it). Only this node falls back: the op is not
    added to Inductor's global fallback set, which other devices share."""

    _inductor_lowering_function = True

    def __init__(self, op):
        self.op = op
        self.__name__ = f"spyre_fallback_{op}"

    def __call__(self, *args, **kwargs):
        from torch._inductor.lowering import fallback_handler
        return fallback_handler(self.op, add_to_fallback_set=False)(*args, **kwargs)

    def __repr__(self):
        return f"spyre_fallback({self.op})"


def _fakes(recipe):
    dev = torch.device("spyre", recipe.index)
    mode = torch._guards.detect_fake_mode()
    with mode if mode is not None else torch._subclasses.FakeTensorMode():
        return [torch.empty(s, dtype=d, device=dev) for d, s in recipe.outputs]


def _part_nodes(split, call):
    sub = getattr(split, call.target)
    return [n.name for n in sub.graph.nodes if n.op == "call_function"]


def _split(gm):
    """@gm partitioned, each part compiled and registered: (split module,
    {call_module name: (Recipe, text)}, {refused node name: reason})."""
    refused = {}
    for _ in range(len(gm.graph.nodes) + 1):
        split = torch.fx.GraphModule(gm, gm.graph.__deepcopy__())
        parts = CapabilityBasedPartitioner(
            split, backend._Support(refused), allows_single_node_partition=True
        ).propose_partitions()
        split = fuse_by_partitions(split, [list(p.nodes) for p in parts], prefix="spyre_part_")
        built = {}
        for call in [n for n in split.graph.nodes if n.op == "call_module"]:
            reason = None
            try:
                mod = backend._build(getattr(split, call.target), list(call.args))
                index = backend._device_index(
                    [a.meta["val"] for a in call.args if isinstance(a.meta.get("val"),
                                                                   torch.Tensor)])
                built[call.target] = runtime.register(index, mod.compiled), mod.single
            except backend._Refused as e:
                if e.node.op == "call_function":
                    refused[e.node.name] = f"{e.node.target}: {e.reason}"
                    break
                reason = e.reason  # an input of the part: the part runs eagerly
            except NotImplementedError:
                # a recipe holding a constant tensor cannot be written into
                # Inductor's cached code: its nodes run eagerly instead
                reason = "a recipe with a constant tensor (not cacheable)"
            if reason is not None:
                for name in _part_nodes(split, call):
                    refused[name] = reason
                break
        else:
            return split, built, refused
    raise RuntimeError("spyre: partitioning the graph did not converge")


def _output_values(g):
    out = next(n for n in g.nodes if n.op == "output")
    return out, out.args[0] if isinstance(out.args[0], (tuple, list)) else [out.args[0]]


def _same_strides(a, b):
    from torch.fx.experimental.symbolic_shapes import statically_known_true
    return len(a.stride()) == len(b.stride()) and all(
        statically_known_true(x == y) for x, y in zip(a.stride(), b.stride()))


def _keep_output_strides(g, wanted):
    """A recipe's outputs are dense; where the graph returned another layout
    (a transposed or broadcast view), a restride op lays the values out as
    eager would. Without it Inductor would generate a copy kernel of its
    own to match the strides, which spyre does not have."""
    out, values = _output_values(g)
    new = list(values)
    for i, (v, want) in enumerate(zip(values, wanted)):
        have = v.meta.get("val") if isinstance(v, torch.fx.Node) else None
        if not isinstance(have, torch.Tensor) or not isinstance(want, torch.Tensor):
            continue
        if have.device.type != "spyre" or _same_strides(have, want):
            continue
        with g.inserting_before(out):
            # symbolic strides as nodes computing them from the inputs
            stride = g.materialize_symints(list(want.stride()))
            r = g.call_function(torch.ops.spyre_inductor.restride.default, (v, stride))
        r.meta["val"] = want
        new[i] = r
    if new != list(values):
        out.args = (type(out.args[0])(new) if isinstance(out.args[0], (tuple, list))
                    else new[0],)


def _all_eager(g, reason):
    eager = []
    for n in g.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            eager.append(f"{n.target}: {reason}")
            n.target = _Fallback(n.target)
    return eager


def _input_copies(g):
    """The ``copy_(input, value)`` nodes that write @g's results back into
    its inputs (what functionalization leaves of an in-place update, a KV
    cache written by slice assignment), or None when @g mutates otherwise
    or a copy's result is used by anything but the output."""
    copies = []
    for n in g.nodes:
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload) or \
                not n.target._schema.is_mutable:
            continue
        if n.target is not torch.ops.aten.copy_.default or n.args[0].op != "placeholder" or \
                any(u.op != "output" for u in n.users):
            return None
        copies.append(n)
    return copies


def _per_size_graph(gm, copies):
    """What per_size compiles of @gm: (graph, outputs kept, constants).
    Its input @copies are left out, their values returned after its
    outputs (the copies stay in the outer graph); its constant tensors
    (get_attr) become inputs after its placeholders, which the outer graph
    passes in, since per_size's graph travels as source code."""
    sub = torch.fx.GraphModule(gm, gm.graph.__deepcopy__())
    names = {c.name for c in copies}
    out, values = _output_values(sub.graph)
    mine = [n for n in sub.graph.nodes if n.name in names]
    keep = [v for v in values if not (isinstance(v, torch.fx.Node) and v.name in names)]
    if mine:
        out.args = (tuple(keep + [n.args[1] for n in mine]),)
        for n in mine:
            sub.graph.erase_node(n)
    consts = [n for n in sub.graph.nodes if n.op == "get_attr"]
    first = next(n for n in sub.graph.nodes if n.op not in ("placeholder", "get_attr"))
    for n in consts:
        with sub.graph.inserting_before(first):
            ph = sub.graph.placeholder(f"spyre_const_{n.name}")
        ph.meta = dict(n.meta)
        n.replace_all_uses_with(ph)
        sub.graph.erase_node(n)
    sub.graph.eliminate_dead_code()
    sub.recompile()
    return sub, len(keep), [n.name for n in consts]


def _lower_symbolic(gm, wanted):
    """A graph with symbolic sizes -> one per_size node (per_size.py);
    ({key: (object, text, loader)}, eager reasons). Writes into inputs
    (``copy_`` nodes) stay in the graph, eager copies of the per_size
    node's results, so a graph updating a cache in place is compiled too;
    constant tensors are inputs of the per_size node."""
    g = gm.graph
    copies = _input_copies(g)
    got = None
    if copies is not None:
        sub, nkeep, consts = _per_size_graph(gm, copies)
        if all(isinstance(n.meta.get("val"), torch.Tensor) for n in g.nodes
               if n.name in consts):
            got = per_size.register(sub)
    if got is None:
        return {}, _all_eager(g, "a graph with symbolic sizes that mutates an input other "
                                 "than by copy_, or returns a non-tensor (eager)")
    graph, text = got
    phs = [n for n in g.nodes if n.op == "placeholder"]
    tensors = [p for p in phs if isinstance(p.meta["val"], torch.Tensor)]
    sizes = [p for p in phs if not isinstance(p.meta["val"], torch.Tensor)]
    by_name = {n.name: n for n in g.nodes}
    tensors += [by_name[c] for c in consts]
    mode = torch._guards.detect_fake_mode([p.meta["val"] for p in tensors])
    with mode:
        fakes = graph.fake([p.meta["val"] for p in tensors], [p.meta["val"] for p in sizes])
    out, _ = _output_values(g)
    with g.inserting_before(out):
        node = g.call_function(torch.ops.spyre_inductor.per_size.default,
                               (tensors, sizes, graph.key))
        node.meta["val"] = fakes
        items = []
        for i, f in enumerate(fakes):
            items.append(g.call_function(operator.getitem, (node, i)))
            items[-1].meta["val"] = f
    res = out.args[0]
    eager = []
    if copies:
        # the copies write the per_size node's extra results into the inputs
        moved = {}
        for c, item in zip(copies, items[nkeep:]):
            with g.inserting_before(out):
                moved[c] = g.call_function(_Fallback(c.target), (c.args[0], item))
            moved[c].meta = dict(c.meta)
            eager.append(f"{c.target}: writes an input of a graph with symbolic sizes")
        old = res if isinstance(res, (tuple, list)) else [res]
        it = iter(items[:nkeep])
        new = [moved[v] if isinstance(v, torch.fx.Node) and v in moved else next(it)
               for v in old]
        out.args = (type(res)(new) if isinstance(res, (tuple, list)) else new[0],)
        for c in copies:
            g.erase_node(c)
    else:
        moved = {}
        out.args = (type(res)(items) if isinstance(res, (tuple, list)) else items[0],)
    # the moved copies' target is a _Fallback, which DCE cannot see mutate;
    # seeded ops (attention's dropout) count as impure as FX's own DCE does
    kept = set(moved.values())
    rnd = torch._inductor.config.fallback_random if torch._guards.TracingContext.try_get() \
        else True
    g.eliminate_dead_code(is_impure_node=lambda n: n in kept or n.is_impure(rnd))
    _keep_output_strides(g, wanted)
    return {graph.key: (graph, text, "spyre_per_size.load")}, eager


def _lower_static(gm, wanted):
    """A graph of static sizes -> recipes and fallbacks (the module's
    docstring); ({key: (object, text, loader)}, eager reasons)."""
    split, built, refused = _split(gm)
    g = split.graph
    loads = {}
    for call in [n for n in g.nodes if n.op == "call_module"]:
        (recipe, text), single = built[call.target]
        loads[recipe.key] = (recipe, text, "spyre_runtime.load")
        with g.inserting_before(call):
            launch = g.call_function(torch.ops.spyre_inductor.launch.default,
                                     (list(call.args), recipe.key))
        fakes = _fakes(recipe)
        launch.meta["val"] = fakes
        if single:
            with g.inserting_after(launch):
                item = g.call_function(operator.getitem, (launch, 0))
            item.meta["val"] = fakes[0]
            call.replace_all_uses_with(item)
        else:
            for user in list(call.users):
                if user.target is not operator.getitem:
                    raise RuntimeError(f"spyre: part {call.target} used whole by {user}")
                user.args = (launch, user.args[1])
                user.meta["val"] = fakes[user.args[1]]
        g.erase_node(call)
        delattr(split, call.target)
    _keep_output_strides(g, wanted)
    ours = (torch.ops.spyre_inductor.launch.default, torch.ops.spyre_inductor.restride.default)
    eager = []
    for n in g.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) and \
                n.target not in ours:
            eager.append(refused.get(n.name, f"{n.target}: no lowering for this op"))
            n.target = _Fallback(n.target)
    gm.graph = g
    return loads, eager


def lower_graph(gm):
    """Rewrites @gm in place (see the module's docstring)."""
    wanted = [v.meta.get("val") if isinstance(v, torch.fx.Node) else None
              for v in _output_values(gm.graph)[1]]
    symbolic = backend._symbolic(gm)
    if symbolic and getattr(_strict, "on", False):
        raise NotImplementedError("spyre: a graph with symbolic sizes (compiled per size)")
    loads, eager = (_lower_symbolic if symbolic else _lower_static)(gm, wanted)
    if eager and getattr(_strict, "on", False):
        raise NotImplementedError(f"spyre: the lowering left {len(eager)} node(s) to eager "
                                  f"kernels: {'; '.join(eager[:3])}")
    gm.meta["spyre_loads"] = loads
    gm.recompile()
    with _lock:
        _stats["graphs"] += 1
        _stats["recipes"] += 0 if symbolic else len(loads)
        _stats["per_size_graphs"] += len(loads) if symbolic else 0
        _stats["fallback_nodes"] += len(eager)
        _stats["graph_breaks"].extend(eager)


class LowerToRecipes(CustomGraphModulePass):
    """The device custom pass registered for spyre."""

    def __call__(self, gm):
        lower_graph(gm)

    def uuid(self):
        return identity()
