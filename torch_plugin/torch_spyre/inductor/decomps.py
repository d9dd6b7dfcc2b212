# SPDX-License-Identifier: MIT
"""Inductor's decompositions, kept off the ops the card lowers whole.

Inductor's AOTAutograd trace decomposes layer norm, softmax, gelu, addmm,
masked_fill, tril and more into pointwise and reduction primitives, because
its own code generators fuse those well. The card's op library has fused
programs for these ops (one row-unit pass for a layer norm or a softmax)
and the graph pass lowers them through ``compiler.lower``; decomposing them
would only lose that, and give ops (var_mean, prims) the lowering does not
take. So for an op that ``lower.LOWERINGS`` covers, Inductor's
decomposition is skipped when one of its tensor arguments is on spyre
(it returns NotImplemented, which the tracer takes as "trace the op
itself"); for every other device, and for ops the lowering does not cover,
Inductor's table is unchanged.
"""
import functools

import torch
from torch.utils import _pytree as pytree

from ..compiler import lower


def _on_spyre(args, kwargs):
    for a in pytree.tree_leaves((args, kwargs)):
        if isinstance(a, torch.Tensor) and a.device.type == "spyre":
            return True
        if isinstance(a, torch.device) and a.type == "spyre":
            return True  # a factory (full, arange) made on spyre
    return False


def _guarded(op, decomp):
    @functools.wraps(decomp)
    def decompose(*args, **kwargs):
        if _on_spyre(args, kwargs):
            return NotImplemented
        return decomp(*args, **kwargs)
    decompose._spyre_guarded = True
    return decompose


def _guard(table):
    for op, decomp in list(table.items()):
        if op in lower.LOWERINGS and not getattr(decomp, "_spyre_guarded", False):
            table[op] = _guarded(op, decomp)


def install(decomposition):
    """Guards the tables of Inductor's module @decomposition (its base table
    and the cached copy it usually hands to AOTAutograd)."""
    _guard(decomposition.decompositions)
    _guard(decomposition.fast_random_decomps())
