# SPDX-License-Identifier: MIT
"""torch.compile(model, backend="spyre").

Dynamo hands over a Python-level FX graph; AOTAutograd turns it into ATen
ops (inference: no backward graph). The ATen graph is split into the
largest parts the op library can lower (torch.fx's capability-based
partitioner over ``lower.LOWERINGS``); each part becomes one op-library
graph compiled into one recipe (fused elementwise chains, one planned
workspace) that a call launches with one SUBMIT, its tensors bound at
launch. A node the library refuses is a graph break: it runs eagerly on
spyre between the recipes, and the reason is recorded in ``stats()``.
Dynamo's guards recompile for new dtypes and, for a static graph, new
shapes; a graph with symbolic sizes is compiled per size at its calls
(``PerSize``).

A CPU tensor that the graph only moves to spyre (``x.to("spyre")`` inside
the compiled code) is a host input of the recipe: a call stages it in
pinned memory and the recipe uploads it on the device's upload stream (the
DMA engine), the compute waiting for it by an event on the card, so one
call's upload overlaps the previous call's compute
(``stats()["host_inputs"]`` counts them).

A part's recipe depends only on the part's ATen code and its inputs' dtypes
and shapes (parameters are inputs, bound at launch), so identical parts
share one recipe: blocks compiled one by one, or a recompile that yields a
part seen before, skip the library's compile (``stats()["recipe_cache_hits"]``).
The same key (with the library, card and plugin versions) names the part's
entry in the on-disk compile cache (``disk_cache``), so a second process
loads the recipe instead of lowering and compiling it
(``stats()["disk_cache_hits"]``).
"""
import contextlib
import operator
import threading
import warnings

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

from .. import _C
from . import disk_cache, lower
from .cache import STATS, Disk, Memory

# (device, part code, input dtypes/shapes) -> (compiled recipe, single
# output, its on-disk key), LRU
_RECIPES_KEPT = 64
_recipes = Memory(_RECIPES_KEPT, hit="recipe_cache_hits", miss="recipe_cache_misses")
_disk = Disk()
_mode = threading.local()


@contextlib.contextmanager
def kernel_profile():
    """Graphs compiled within it (in this thread) run op by op: a recipe
    and SUBMIT per kernel, each named in ``torch.spyre.trace`` after its
    kernel, shape, dtype and bytes ("linear 512x2304x768 fp16 4718592B"),
    so a trace of a call shows each kernel's modelled device time. For
    profiles only: slower than the graph's one recipe (no merged programs,
    no workspace reuse), kept out of the on-disk cache, and refused for a
    graph that uploads host inputs."""
    prev = getattr(_mode, "flags", 0)
    _mode.flags = _C._GRAPH_OP_BY_OP
    try:
        yield
    finally:
        _mode.flags = prev


def _flags():
    return getattr(_mode, "flags", 0)


def stats():
    """What the backend did in this process: graphs compiled, recipes in
    them, graph breaks (op and reason), nodes left to eager execution, and
    how many recipes came from the in-process recipe cache (hits) or not
    (misses), and of those misses how many the on-disk compile cache served
    (disk hits: loaded, not compiled), how many it did not (disk misses),
    entries written and entries found corrupt or unreadable (errors); graph
    hits are the disk hits that served a whole graph (one recipe) without
    partitioning it; host inputs are CPU tensors a recipe uploads itself;
    dynamic graphs are graphs with symbolic sizes (PerSize) and size
    specializations the static graphs traced from them, one per size met."""
    return STATS.snapshot()


def reset_stats():
    """Zeroes the counters and empties the recipe cache (recipes still used
    by compiled functions stay alive with them)."""
    STATS.reset()
    _recipes.clear()


class _Support(OperatorSupportBase):
    def __init__(self, refused):
        self.refused = refused

    def is_node_supported(self, submodules, node):
        if node.op != "call_function" or node.name in self.refused:
            return False
        if node.target is operator.getitem:
            return True
        return node.target in lower.LOWERINGS


class _Refused(Exception):
    def __init__(self, node, reason):
        super().__init__(f"{node.target}: {reason}")
        self.node, self.reason = node, reason


def _is_upload(node):
    """@node copies its input to spyre (``x.to("spyre")``)."""
    dev = node.kwargs.get("device") if node.op == "call_function" else None
    return (node.target is torch.ops.aten._to_copy.default and dev is not None and
            torch.device(dev).type == "spyre")


def _meta(node, placeholder):
    """The tensor metadata of the part input @node (its @placeholder in the
    part): a spyre tensor, or a CPU tensor the part only uploads."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor) and val.device.type == "spyre":
        return val
    if isinstance(val, torch.Tensor) and val.device.type == "cpu":
        users = list(placeholder.users)
        if users and all(_is_upload(u) for u in users):
            return val
        if users:
            raise _Refused(next(u for u in users if not _is_upload(u)),
                           "reads a CPU tensor (only copies of it to spyre are compiled)")
    raise _Refused(node, "an input that is not a spyre tensor")


class RecipeModule(torch.nn.Module):
    """One compiled part: calling it launches its recipe."""

    def __init__(self, compiled, single, disk_key=None):
        super().__init__()
        self.compiled, self.single = compiled, single
        self.disk_key = disk_key  # its entry in the on-disk cache, if any

    def forward(self, *args):
        outs = self.compiled.run(list(args))
        return outs[0] if self.single else tuple(outs)


def _device_index(metas):
    return next((m.device.index or 0 for m in metas if m.device.type == "spyre"), 0)


def _build(sub, inputs):
    """Lowers the partition GraphModule @sub (placeholders fed by the FX
    nodes @inputs) into one recipe; raises _Refused naming a node."""
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    metas = [_meta(n, ph) for n, ph in zip(inputs, placeholders)]
    index = _device_index(metas)
    if not all(type(d) is int for m in metas for d in m.shape):
        # a size only known at run time (data-dependent; PerSize graphs
        # arrive here static): not a key, and the lowering refuses it
        return _compile_part(sub, metas, index)
    key = (index, sub.code, _flags(),
           tuple((m.device.type, m.dtype, tuple(m.shape)) for m in metas))
    hit = _recipes.get(key)
    if hit is not None:
        return RecipeModule(*hit)
    mod = _from_disk(sub, metas, index)
    _recipes.put(key, (mod.compiled, mod.single, mod.disk_key))
    return mod


def _load_part(index, header, blob):
    """A part entry's recipe, rebuilt by libspyre without compiling."""
    sig = [[(getattr(torch, d), s, h) for d, s, h in header[io]]
           for io in ("inputs", "outputs")]
    return _C._compiled_load(index, blob, *sig)


def _from_disk(sub, metas, index):
    """The part's recipe from the on-disk cache, else compiled (and written
    there); a refusal is cached as well, so a second process does not try
    the node again. Only a refusal: any other error of the compile reaches
    the caller and leaves no entry."""
    if not _disk.enabled() or _flags():
        return _compile_part(sub, metas, index)
    k = disk_cache.key(index, sub.code, metas)
    entry = _disk.get(k)
    if entry is not None:
        header, blob = entry
        nodes = {n.name: n for n in sub.graph.nodes}
        if "refused" in header and header["refused"] in nodes:
            _disk.hit()
            raise _Refused(nodes[header["refused"]], header["reason"])
        if "inputs" in header:
            try:
                mod = RecipeModule(_load_part(index, header, blob), header["single"], k)
                _disk.hit()
                return mod
            except (RuntimeError, NotImplementedError) as e:
                # libspyre would not rebuild it from these bytes
                warnings.warn(f"spyre compile cache: entry {k} does not load "
                              f"({str(e).splitlines()[0]}); compiling again")
                _disk.unusable()
    _disk.miss()
    try:
        mod = _compile_part(sub, metas, index)
    except _Refused as e:
        _disk.put(k, ({"refused": e.node.name, "reason": e.reason}, b""))
        raise
    try:
        blob = mod.compiled.serialize()
    except NotImplementedError:
        return mod  # a constant tensor inside: nothing to keep
    ins, outs = mod.compiled.signature()
    header = {"single": mod.single,
              "inputs": [[str(d).replace("torch.", ""), list(s), h] for d, s, h in ins],
              "outputs": [[str(d).replace("torch.", ""), list(s), h] for d, s, h in outs]}
    if _disk.put(k, (header, blob)):
        mod.disk_key = k
    return mod


class WholeGraph(torch.nn.Module):
    """A graph that is one recipe, loaded from the on-disk cache without
    partitioning it again: the recipe's arguments are picked from the
    graph's inputs and its outputs put in the graph's order."""

    def __init__(self, compiled, args, outs, as_list):
        super().__init__()
        self.compiled, self.args, self.outs, self.as_list = compiled, args, outs, as_list

    def forward(self, *inputs):
        r = self.compiled.run([inputs[i] for i in self.args])
        out = [r[j] for j in self.outs]
        return out if self.as_list else tuple(out)


def _graph_key(gm):
    """(device index, on-disk key) of the whole ATen graph @gm, or None when
    the cache is off, no input is a spyre tensor, or an input is neither a
    spyre or CPU tensor of static shape nor a size (an int)."""
    if not _disk.enabled() or _flags():
        return None
    metas, ints = [], []
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("val")
            if type(v) is int:  # a size a PerSize graph was specialized for
                ints.append(v)
                continue
            if (not isinstance(v, torch.Tensor) or v.device.type not in ("spyre", "cpu") or
                    not all(type(d) is int for d in v.shape)):
                return None
            metas.append(v)
    if not any(m.device.type == "spyre" for m in metas):
        return None
    index = _device_index(metas)
    return index, disk_cache.key(index, f"graph {ints}\n" + gm.code, metas)


def _whole_from_disk(gkey):
    """The graph from its on-disk entry (one recipe), or None."""
    index, k = gkey
    entry = _disk.get(k)
    if entry is None or "part" not in entry[0]:
        return None
    header = entry[0]
    # the recipe may be in this process already (another model of the
    # same structure): share it, as the part-level path does
    hit = _recipes.find(lambda rk, v: rk[0] == index and v[2] == header["part"])
    if hit is not None:
        STATS.add(graphs=1, recipes=1, disk_cache_graph_hits=1)
        return WholeGraph(hit[0], header["args"], header["outs"], header["as_list"])
    # a part entry that is missing, corrupt or refused is left to the
    # part-level path below, which reports it once and compiles again
    part = _disk.get(header["part"], warn=False)
    if part is None or "inputs" not in part[0]:
        return None
    try:
        compiled = _load_part(index, *part)
    except (RuntimeError, NotImplementedError):
        return None  # libspyre would not rebuild it: as above
    _recipes.put((index, "disk", header["part"]), (compiled, part[0]["single"], header["part"]))
    STATS.add(graphs=1, recipes=1)
    _disk.hit(graph=True)
    return WholeGraph(compiled, header["args"], header["outs"], header["as_list"])


def _store_whole(gkey, split):
    """Writes the graph entry of @split when it is one recipe fed by the
    graph's inputs, all outputs its own (the common, fully lowered case)."""
    calls = [n for n in split.graph.nodes if n.op == "call_module"]
    if len(calls) != 1 or calls[0].kwargs:
        return
    call = calls[0]
    mod = getattr(split, call.target)
    pos = {n: i for i, n in enumerate(n for n in split.graph.nodes if n.op == "placeholder")}
    res = next(n for n in split.graph.nodes if n.op == "output").args[0]
    if (not getattr(mod, "disk_key", None) or not isinstance(res, (tuple, list)) or
            not all(a in pos for a in call.args)):
        return
    outs = []
    for r in res:
        if r is call and mod.single:
            outs.append(0)
        elif (isinstance(r, torch.fx.Node) and r.target is operator.getitem and
              r.args[0] is call and not mod.single):
            outs.append(r.args[1])
        else:
            return
    header = {"part": mod.disk_key, "args": [pos[a] for a in call.args], "outs": outs,
              "as_list": isinstance(res, list)}
    _disk.put(gkey[1], (header, b""))


def _compile_part(sub, metas, index):
    graph = _C._Graph(index)
    ctx = lower.Context(graph)
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for ph, m in zip(placeholders, metas):
        try:
            if m.device.type == "cpu":
                ctx.env[ph] = graph.host_input(m.dtype, list(m.shape))
                STATS.add(host_inputs=1)
            else:
                ctx.env[ph] = graph.input(m.dtype, list(m.shape))
        except lower.REFUSALS as e:
            # an input of a dtype the card has no arithmetic for (float64,
            # complex): the node reading it runs eagerly (as the dtype's
            # eager kernels do, on the CPU fallback), with the library's reason
            user = next((u for u in ph.users if u.op == "call_function"),
                        next(n for n in sub.graph.nodes if n.op == "call_function"))
            raise _Refused(user, str(e).splitlines()[0]) from None
    made_by_view = set()
    out_node = None
    for n in sub.graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            out_node = n
            break
        try:
            if n.target is operator.getitem:
                ctx.env[n] = ctx.env[n.args[0]][n.args[1]]
            else:
                ctx.env[n] = lower.LOWERINGS[n.target](ctx, n)
                if n.target in lower.VIEWS:
                    made_by_view.add(n)
        except lower.REFUSALS as e:
            # the lowering or the library refusing the node's arguments
            # leaves it to eager mode; any other error is a bug and goes
            # to the user with its traceback
            raise _Refused(n, str(e).splitlines()[0]) from None
    results = out_node.args[0]
    host_values = {ctx.env[ph] for ph, m in zip(placeholders, metas) if m.device.type == "cpu"}
    single = not isinstance(results, (tuple, list))
    for r in ([results] if single else results):
        v = ctx.env.get(r)
        if v is None:
            raise _Refused(r, "an output with no value on the card")
        if r in made_by_view or r.op == "placeholder" or v in host_values:
            v = graph.contiguous(v)  # outputs are dense, fresh tensors
        graph.output(v)
    return RecipeModule(graph.compile(_flags()), single)


def compile_graph(gm, example_inputs=None):
    """The ATen graph @gm as recipes and eager remainders (a GraphModule),
    or, from the on-disk cache, as the one recipe it lowered to before."""
    gkey = _graph_key(gm)
    if gkey is not None:
        whole = _whole_from_disk(gkey)
        if whole is not None:
            return whole
    refused = {}
    for _ in range(len(gm.graph.nodes) + 1):
        split = torch.fx.GraphModule(gm, gm.graph.__deepcopy__())
        parts = CapabilityBasedPartitioner(
            split, _Support(refused), allows_single_node_partition=True
        ).propose_partitions()
        split = fuse_by_partitions(split, [list(p.nodes) for p in parts], prefix="spyre_part_")
        try:
            recipes = 0
            for call in [n for n in split.graph.nodes if n.op == "call_module"]:
                sub = getattr(split, call.target)
                setattr(split, call.target, _build(sub, list(call.args)))
                recipes += 1
            break
        except _Refused as e:
            refused[e.node.name] = f"{e.node.target}: {e.reason}"
    eager = [n for n in split.graph.nodes
             if n.op == "call_function" and n.target is not operator.getitem]
    breaks = [refused.get(n.name, f"{n.target}: no lowering for this op") for n in eager]
    STATS.add(graphs=1, recipes=recipes, eager_nodes=len(eager))
    STATS.breaks(breaks)
    split.recompile()
    if gkey is not None and recipes == 1 and not eager:
        _store_whole(gkey, split)
    return split


def _symbolic(gm):
    """@gm has an input of symbolic size (a SymInt, or a tensor with one)."""
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("val")
        if isinstance(v, torch.SymInt) or (
                isinstance(v, torch.Tensor) and
                not all(type(d) is int for d in v.shape)):
            return True
    return False


def _call_key(args):
    return tuple((a.device, a.dtype, tuple(a.shape), a.stride()) if isinstance(a, torch.Tensor)
                 else (type(a), a) for a in args)


class PerSize(torch.nn.Module):
    """A graph with symbolic sizes (``dynamic=True``, or a dim Dynamo made
    dynamic after seeing it change): one Dynamo graph for every size. The
    card's programs are generated for fixed shapes, so each size met at a
    call gets its own static graph, traced from this one with those sizes
    (make_fx on fake tensors: no data moves) and compiled like any graph;
    later calls of that size launch its recipes at once. Dynamo guards no
    longer recompile for a new size (and never reach its recompile limit),
    and the recipes of each size come from the in-process and on-disk
    caches like those of any static graph."""

    KEPT = 32

    def __init__(self, gm):
        super().__init__()
        self.gm = gm
        self.by_size = Memory(self.KEPT, miss="size_specializations")

    def forward(self, *args):
        key = _call_key(args)
        fn = self.by_size.get(key)
        if fn is None:
            fn = compile_graph(_specialize(self.gm, args))
            self.by_size.put(key, fn)
        return fn(*args)


def _specialize(gm, args):
    """@gm traced again on fake tensors of @args' sizes: a static graph."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    mode = FakeTensorMode()
    fakes = [mode.from_tensor(a, static_shapes=True) if isinstance(a, torch.Tensor) else a
             for a in args]
    with mode:
        static = make_fx(gm, tracing_mode="real")(*fakes)
    for ph, a in zip((n for n in static.graph.nodes if n.op == "placeholder"), args):
        if not isinstance(a, torch.Tensor):
            ph.meta["val"] = a  # the size it stands for (part of the cache key)
    # tracing names every output of a multi-output op (layer norm's mean
    # and rstd, attention's logsumexp): drop the unused ones, as
    # AOTAutograd's graph did, or the lowering sees them as used
    static.graph.eliminate_dead_code()
    static.recompile()
    return static


def spyre_backend(gm, example_inputs):
    """The Dynamo backend registered as "spyre" (an entry point)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def fw_compiler(fx_module, inputs):
        if _symbolic(fx_module):
            STATS.add(dynamic_graphs=1)
            return make_boxed_func(PerSize(fx_module))
        return make_boxed_func(compile_graph(fx_module, inputs))

    return aot_autograd(fw_compiler=fw_compiler)(gm, example_inputs)
