# SPDX-License-Identifier: MIT
"""Eager ops without a spyre kernel, compiled through the Inductor path.

An eager ATen op with no hand-written spyre kernel reaches the plugin's
boxed fallback (csrc/fallback.cpp). Before running it on the CPU (or
refusing it in error mode) the fallback asks ``hook`` here, for the ops of
``OPS``: the op is traced alone on fake tensors (``make_fx``) and compiled
by Inductor (``compile_fx``: AOTAutograd with Inductor's decompositions,
the spyre device pass, the wrapper codegen), which lowers it into one
recipe through ``compiler.lower``, the lowering of ``torch.compile``.
The result is kept per (op, devices, dtypes, shapes, constant arguments):
a later call with the same key launches the recipe (one SUBMIT), and
Inductor's FX graph cache and AOTAutogradCache keep the compiled module on
disk, so another process loads it without generating a card program.

The compile is strict (``graph_pass.strict``): a graph the lowering does
not take whole is refused here (the key remembers why, and the op goes on
to the CPU fallback, counted, or to the error of error mode, which quotes
the reason). Hand-written kernels are not affected: the dispatcher only
reaches the fallback for ops without one.

Inputs that are not contiguous are made contiguous on the card first, so
the stride class of a key is always "dense"; shapes are exact (the card's
programs are generated per shape).
"""
import os
import threading
import time

import torch
from torch.utils import _pytree as pytree

from .. import _C

# Ops whose eager calls fall back to the CPU today and which Inductor's
# decompositions plus compiler.lower turn into one recipe (found with the
# OpInfo eager sweep: tests/test_opinfo_sweep.py). Names without their
# overload: every overload is offered (its out= and in-place forms run the
# functional form and copy into the written tensor).
OPS = frozenset(f"aten::{n}" for n in (
    "addmv", "aminmax", "count_nonzero", "dist", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "huber_loss", "leaky_relu", "lerp", "linalg_vector_norm", "logit",
    "mse_loss", "norm", "renorm", "roll", "smooth_l1_loss", "threshold",
    # lowered in compiler/lower_math.py
    "fix", "flip", "log1p", "prod", "sign", "std", "trunc", "var",
))

# The dtypes the card computes in (the graph compiler's, op_tensor.cpp's
# to_spyre_dtype): an op with a tensor of another (float64, complex, uint8,
# int16) is refused before compiling, as the eager kernels send those
# dtypes to the CPU fallback; compiling it would only find the same refusal.
CARD_DTYPES = frozenset((torch.float32, torch.float16, torch.bfloat16, torch.int8,
                         torch.int32, torch.int64, torch.bool))

_local = threading.local()
_lock = threading.Lock()
_compiled = {}  # key -> compiled callable, or the reason it was refused (str)
_ZERO = {"compiles": 0, "refused": 0, "calls": 0, "compile_s": 0.0}
_stats = dict(_ZERO)
_by_op = {}  # op name -> [keys compiled, keys refused, the last refusal]


def stats():
    """Eager ops compiled through Inductor in this process: compiles (keys
    compiled), refused (keys the lowering did not take), calls (launches of
    a compiled op) and compile_s (time spent compiling)."""
    with _lock:
        return dict(_stats, cached=len(_compiled), ops={k: list(v) for k, v in _by_op.items()})


def reset():
    """Forgets every compiled op of this process (Inductor's on-disk caches
    stay) and zeroes the counters."""
    with _lock:
        _compiled.clear()
        _by_op.clear()
        _stats.update(_ZERO)


def _op(name):
    ns, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), base), overload or "default")


def _unsuitable(op):
    s = op._schema
    if s.is_mutable:
        return "it writes to an argument"
    if any(r.alias_info is not None for r in s.returns):
        return "it returns a view of an argument"
    if not s.returns or not all(str(r.type) == "Tensor" for r in s.returns):
        return "it does not return tensors only"
    if any(str(a.type) in ("Generator?", "Generator") for a in s.arguments):
        return "it draws random numbers"
    return None


def _signature(schema, skip=()):
    return [(a.name, str(a.type)) for a in schema.arguments if a.name not in skip]


def _functional(op):
    """(functional op, names of the arguments it writes) for an out= or
    in-place @op (the same arguments without the written ones), or (@op, ())."""
    s = op._schema
    if not s.is_mutable:
        return op, ()
    written = tuple(a.name for a in s.arguments if a.alias_info is not None and
                    a.alias_info.is_write)
    base = s.name.split("::")[1]
    inplace = not any(a.is_out for a in s.arguments)
    if inplace:  # add_ -> add, same overload, self written
        if not base.endswith("_"):
            return None, written
        packet = getattr(torch.ops.aten, base[:-1], None)
        want = _signature(s)
    else:
        packet = getattr(torch.ops.aten, base, None)
        want = _signature(s, written)
    if packet is None:
        return None, written
    for name in packet.overloads():
        f = getattr(packet, name)
        if not f._schema.is_mutable and _signature(f._schema) == want and \
                len(f._schema.returns) == len(s.returns):
            return f, written
    return None, written


def _const_key(v):
    # repr tells -0.0 from 0.0 and keeps nan; the type keeps 1 from 1.0 and True
    return (type(v).__name__, repr(v))


def _key(name, leaves):
    return (name,) + tuple(
        ("T", str(v.device), str(v.dtype), tuple(v.shape)) if isinstance(v, torch.Tensor)
        else _const_key(v) for v in leaves)


def _compile(op, spec, leaves, tensors, pos):
    """@op with the non-tensor arguments of @leaves fixed, compiled for
    @tensors: a callable taking the tensors, returning the op's results."""
    from torch._inductor.compile_fx import compile_fx
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from . import graph_pass

    s = op._schema

    def fn(*ts):
        it = iter(ts)
        args = pytree.tree_unflatten([next(it) if i in pos else v
                                      for i, v in enumerate(leaves)], spec)
        kw = {a.name: v for a, v in zip(s.arguments, args) if a.kwarg_only}
        out = op(*[v for a, v in zip(s.arguments, args) if not a.kwarg_only], **kw)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    # fake inputs of a mode with a shape environment (static sizes): without
    # one Inductor's FX graph cache and AOTAutogradCache are bypassed
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fakes = [mode.from_tensor(t, static_shapes=True) for t in tensors]
    with graph_pass.strict():
        gm = make_fx(fn, tracing_mode="fake")(*fakes)
        compiled = compile_fx(gm, fakes)
    return compiled


def run(name, args):
    """The fallback's question for the op @name with its schema's arguments
    @args: its results (a list of tensors) when it ran through a compiled
    recipe, else a string saying why not (the fallback goes on)."""
    if getattr(_local, "busy", False):
        return "an op inside the compile of another"
    op, written = _functional(_op(name))
    if op is None:
        return "it writes to an argument and has no functional form"
    why = _unsuitable(op)
    if why:
        return why
    schema = _op(name)._schema
    targets = [v for a, v in zip(schema.arguments, args) if a.name in written]
    if not all(isinstance(t, torch.Tensor) for t in targets):
        return "it writes to a list of tensors"
    if written and any(a.is_out for a in schema.arguments):
        args = [v for a, v in zip(schema.arguments, args) if a.name not in written]
    out = _launch(name, op, args)
    if isinstance(out, str) or not written:
        return out
    from torch._prims_common.wrappers import _maybe_resize_out, _safe_copy_out
    for target, value in zip(targets, out):
        _maybe_resize_out(target, value.shape)
        _safe_copy_out(copy_from=value, copy_to=target, exact_dtype=False)
    return targets


def _launch(name, op, args):
    """@op (functional) on @args through its compiled recipe: its results,
    or why it cannot be compiled."""
    leaves, spec = pytree.tree_flatten(list(args))
    pos = {i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)}
    tensors = [leaves[i] if leaves[i].is_contiguous() else leaves[i].contiguous()
               for i in sorted(pos)]
    other = next((t.dtype for t in tensors if t.dtype not in CARD_DTYPES), None)
    if other is not None:
        return (f"a {str(other).removeprefix('torch.')} tensor: the card has no "
                f"{str(other).removeprefix('torch.')} arithmetic")
    key = _key(str(op), leaves)
    with _lock:
        fn = _compiled.get(key)
    if fn is None:
        t0 = time.perf_counter()
        _local.busy = True
        try:
            with torch.no_grad():
                fn = _compile(op, spec, leaves, tensors, pos)
        except Exception as e:  # the lowering (or Inductor) refused it
            fn = f"the Inductor path refused it ({type(e).__name__}: {_first_line(e)})"
        finally:
            _local.busy = False
        with _lock:
            _stats["compile_s"] += time.perf_counter() - t0
            _stats["refused" if isinstance(fn, str) else "compiles"] += 1
            per = _by_op.setdefault(str(op), [0, 0, ""])
            if isinstance(fn, str):
                per[1] += 1
                per[2] = fn
            else:
                per[0] += 1
            fn = _compiled.setdefault(key, fn)
    if isinstance(fn, str):
        return fn
    _local.busy = True
    try:
        with torch.no_grad():
            out = fn(*tensors)
    finally:
        _local.busy = False
    with _lock:
        _stats["calls"] += 1
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _first_line(e):
    text = str(e).strip().splitlines()
    line = next((s for s in text if "spyre" in s), text[0] if text else "")
    return line[:300]


def install():
    """Registers ``run`` with the fallback for ``OPS`` (TORCH_SPYRE_EAGER_COMPILE:
    "off" registers nothing, "all" offers it every op without a kernel)."""
    mode = os.environ.get("TORCH_SPYRE_EAGER_COMPILE", "on")
    if mode == "off":
        _C._set_eager_compile_hook(None, [], False)
        return
    names = set(OPS) | {n + "_" for n in OPS}  # and the in-place forms
    _C._set_eager_compile_hook(run, sorted(names), mode == "all")
