# SPDX-License-Identifier: MIT
"""Graphs with symbolic sizes under Inductor: one op that compiles per size.

The card's programs are generated for fixed shapes. A post-grad graph with
symbolic sizes (``dynamic=True``, or a size Dynamo made dynamic after
seeing it change, as in ``generate()`` with a growing KV cache) becomes
one ``spyre_inductor::per_size(tensors, sizes, key)`` node: at a call it
runs ``backend="spyre"``'s ``PerSize`` over the graph, which traces a
static graph for the sizes met and compiles it into recipes (from the
in-process and on-disk recipe caches when they have it), so Dynamo does not
recompile for every new size and never reaches its recompile limit.

The graph travels as its Python source (FX's code for it), which the
generated module carries, so Inductor's caches can store it. The device
pass makes its constant tensors inputs of the node and keeps its writes
into inputs (``copy_``) outside it (graph_pass.py); a graph that source
cannot rebuild otherwise (a global FX would have to pickle) is not taken,
and runs as eager fallbacks instead.
"""
import hashlib
import json
import threading
import weakref

import torch

from ..compiler import backend
from .runtime import LIB

LIB.define("per_size(Tensor[] tensors, SymInt[] sizes, str graph) -> Tensor[]")

_lock = threading.Lock()
_graphs = weakref.WeakValueDictionary()

# the globals FX's code for a post-grad graph uses, by name
_GLOBALS = {"inf": float("inf"), "nan": float("nan"), "NoneType": type(None),
            "torch": torch, "device": torch.device}


def _source(gm):
    """(source, order) of @gm, or None when it cannot be rebuilt from them.
    order says, for each placeholder, "t" (a tensor) or "s" (a size)."""
    if any(n.op in ("get_attr", "call_module") for n in gm.graph.nodes):
        return None
    order = []
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            order.append("t")
        elif isinstance(v, (int, torch.SymInt)):
            order.append("s")
        else:
            return None
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    outs = out if isinstance(out, (tuple, list)) else [out]
    if not all(isinstance(o, torch.fx.Node) and isinstance(o.meta.get("val"), torch.Tensor)
               for o in outs):
        return None
    code = gm.graph.python_code(root_module="self")
    for name, obj in code.globals.items():
        if name in ("fx_pytree", "pytree"):
            continue
        want = _GLOBALS.get(name, object())
        if obj is not want and not (isinstance(obj, float) and repr(obj) == repr(want)):
            return None
    return code.src, "".join(order)


class Graph:
    """A graph with symbolic sizes: its rebuilt forward and a PerSize."""

    def __init__(self, key, src, order):
        ns = dict(_GLOBALS)
        ns["fx_pytree"] = torch.fx._pytree
        ns["pytree"] = torch.utils._pytree
        exec(compile(src, f"<spyre per-size graph {key[:12]}>", "exec"), ns)
        forward = ns["forward"]
        self.key, self.order = key, order
        self.fn = lambda *args: forward(None, *args)
        self.per_size = backend.PerSize(self.fn)

    def args(self, tensors, sizes):
        t, s = iter(tensors), iter(sizes)
        return [next(t) if k == "t" else next(s) for k in self.order]

    def run(self, tensors, sizes):
        args = self.args(tensors, sizes)
        outs = self.per_size(*args)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        # an op's outputs are fresh, dense tensors (what its fake said):
        # a view of an input, or a strided eager result, is copied
        ptrs = {a.untyped_storage().data_ptr() for a in tensors if a.numel()}
        return [o.clone(memory_format=torch.contiguous_format)
                if (o.numel() and o.untyped_storage().data_ptr() in ptrs)
                or not o.is_contiguous() else o for o in outs]

    def fake(self, tensors, sizes):
        outs = self.fn(*self.args(tensors, sizes))
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        return [torch.empty(o.shape, dtype=o.dtype, device=o.device) for o in outs]


def register(gm):
    """@gm as a Graph: (Graph, text for the generated module), or None."""
    got = _source(gm)
    if got is None:
        return None
    text = json.dumps(list(got))
    key = hashlib.sha256(text.encode()).hexdigest()
    return load(key, text), text


def load(key, text):
    """The Graph @key, from this process or rebuilt from @text."""
    with _lock:
        g = _graphs.get(key)
        if g is None:
            if hashlib.sha256(text.encode()).hexdigest() != key:
                raise RuntimeError(f"spyre: the graph {key} in Inductor's generated code is "
                                   "corrupt (its contents do not match its key)")
            g = Graph(key, *json.loads(text))
            _graphs[key] = g
    return g


def _find(key):
    g = _graphs.get(key)
    if g is None:
        raise RuntimeError(f"spyre: graph {key} is not loaded in this process (Inductor's "
                           "generated module loads its graphs when it is imported)")
    return g


@torch.library.impl(LIB, "per_size", "CompositeExplicitAutograd")
def _per_size(tensors, sizes, graph):
    return _find(graph).run(tensors, sizes)


@torch.library.register_fake("spyre_inductor::per_size", lib=LIB)
def _per_size_fake(tensors, sizes, graph):
    return _find(graph).fake(tensors, sizes)
