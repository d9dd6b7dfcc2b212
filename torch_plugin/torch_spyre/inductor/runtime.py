# SPDX-License-Identifier: MIT
"""What Inductor's generated code for spyre calls: the recipe registry and
the ``spyre_inductor::launch`` op.

A lowered part of a graph is one prepared libspyre recipe. Inductor's
wrapper code refers to it by a key (a SHA-256 of its serialised form): the
module's header loads every recipe it uses (``load``: libspyre rebuilds the
prepared recipe from its serialised bytes, which the module carries, so
nothing is compiled), and each call of the graph launches it through the
``launch`` op, one SUBMIT per recipe. The module is what Inductor's FX
graph cache stores, so a cache hit in another process loads the recipes
from the cached module itself.

The registry holds recipes weakly: a recipe lives as long as a compiled
module (or the graph pass's result being compiled) refers to it.
"""
import base64
import hashlib
import json
import threading
import weakref

import torch

from .. import _C

_lock = threading.Lock()
_recipes = weakref.WeakValueDictionary()

LIB = torch.library.Library("spyre_inductor", "DEF")
LIB.define("launch(Tensor[] args, str recipe) -> Tensor[]")
LIB.define("restride(Tensor x, SymInt[] stride) -> Tensor")


class Recipe:
    """One prepared recipe: its compiled graph, device and output metadata."""

    def __init__(self, key, index, compiled, outputs):
        self.key, self.index, self.compiled = key, index, compiled
        self.outputs = outputs  # [(dtype, shape)] of what it returns

    def run(self, args):
        return self.compiled.run(list(args))


def _signature(compiled):
    ins, outs = compiled.signature()
    return {"inputs": [[str(d).replace("torch.", ""), list(s), bool(h)] for d, s, h in ins],
            "outputs": [[str(d).replace("torch.", ""), list(s), bool(h)] for d, s, h in outs]}


def _unpack(sig, io):
    return [(getattr(torch, d), s, h) for d, s, h in sig[io]]


def register(index, compiled):
    """A compiled graph as a Recipe: (Recipe, serialised source for the
    generated module). Raises NotImplementedError when the graph cannot be
    serialised (it holds a constant tensor)."""
    blob = compiled.serialize()
    sig = _signature(compiled)
    text = json.dumps([index, sig, base64.b64encode(blob).decode()], separators=(",", ":"))
    key = hashlib.sha256(text.encode()).hexdigest()
    with _lock:
        recipe = _recipes.get(key)
        if recipe is None:
            recipe = Recipe(key, index, compiled, [(d, s) for d, s, _ in _unpack(sig, "outputs")])
            _recipes[key] = recipe
    return recipe, text


def load(key, text):
    """The recipe @key, from this process's registry or rebuilt from its
    serialised @text (what ``register`` returned); the generated module
    keeps the result so the recipe lives as long as the module."""
    with _lock:
        recipe = _recipes.get(key)
    if recipe is not None:
        return recipe
    if hashlib.sha256(text.encode()).hexdigest() != key:
        raise RuntimeError(f"spyre: the recipe {key} in Inductor's generated code is corrupt "
                           "(its contents do not match its key); clear Inductor's cache")
    index, sig, blob = json.loads(text)
    compiled = _C._compiled_load(index, base64.b64decode(blob), _unpack(sig, "inputs"),
                                 _unpack(sig, "outputs"))
    with _lock:
        recipe = _recipes.setdefault(
            key, Recipe(key, index, compiled, [(d, s) for d, s, _ in _unpack(sig, "outputs")]))
    return recipe


def _find(key):
    recipe = _recipes.get(key)
    if recipe is None:
        raise RuntimeError(f"spyre: recipe {key} is not loaded in this process (Inductor's "
                           "generated module loads its recipes when it is imported)")
    return recipe


@torch.library.impl(LIB, "launch", "CompositeExplicitAutograd")
def _launch(args, recipe):
    return _find(recipe).run(args)


@torch.library.register_fake("spyre_inductor::launch", lib=LIB)
def _launch_fake(args, recipe):
    r = _find(recipe)
    return [torch.empty(s, dtype=d, device=torch.device("spyre", r.index)) for d, s in r.outputs]


def _restrided(x, stride):
    """A tensor of @x's values laid out with @stride (what eager returns);
    a broadcast output (stride 0) writes each stored element once."""
    out = torch.empty_strided(x.shape, stride, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return out
    idx = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                for n, st in zip(x.shape, stride))
    out[idx].copy_(x[idx])
    return out


@torch.library.impl(LIB, "restride", "CompositeExplicitAutograd")
def _restride(x, stride):
    return _restrided(x, stride)


@torch.library.register_fake("spyre_inductor::restride", lib=LIB)
def _restride_fake(x, stride):
    return torch.empty_strided(x.shape, stride, dtype=x.dtype, device=x.device)
