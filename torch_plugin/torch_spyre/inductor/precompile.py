# SPDX-License-Identifier: MIT
"""A compiled function saved to a file and loaded in another process without
Dynamo tracing: PyTorch's ahead-of-time compile
(``torch.compile(fn, fullgraph=True).aot_compile(...)`` and
``torch.compiler.load_compiled_function``) with the spyre key.

PyTorch's artifact carries Dynamo's bytecode, its serialisable guards and
Inductor's compiled module (with the spyre recipes in it), so loading it
skips Dynamo's tracing, AOTAutograd, Inductor and the card program
generation. PyTorch checks the torch version and the device type when
loading, not what the spyre pass's ``uuid`` covers (the card interface,
the op library, the lowering): ``save`` writes that identity in front of
PyTorch's bytes and ``load`` refuses a file made with another one, as
Inductor's caches miss on it (Documentation/inductor.rst).
"""
import io
import json

import torch

_MAGIC = b"SPYREAOT1\n"

# guard kinds Dynamo cannot serialise (CheckFunctionManager's list in
# torch 2.13): identities of code, classes and closure cells, dict versions
_UNSERIALISABLE = ("DICT_VERSION", "NN_MODULE", "ID_MATCH", "FUNCTION_MATCH", "CLASS_MATCH",
                   "MODULE_MATCH", "CLOSURE_MATCH", "WEAKREF_ALIVE")


class StaleArtifact(RuntimeError):
    """The file was compiled for another card interface, op library or lowering."""


def guard_filter(entries):
    """``torch.compile(options={"guard_filter_fn": ...})`` for ``aot_compile``:
    keeps every guard Dynamo can write to a file (tensor metadata, shapes,
    dtypes, constants such as a model config's values, grad mode) and drops
    global guards and guards on the identity of code objects, classes and
    closure cells (a Hugging Face model's decorators hold such cells), which
    PyTorch's default filter for ``aot_compile`` drops too except when they
    are derived from another guard. The saved function assumes the same
    model code, as every ahead-of-time artifact does."""
    return [not (e.is_global or e.guard_type in _UNSERIALISABLE or
                 any(d in _UNSERIALISABLE for d in e.derived_guard_types)) for e in entries]


def aot_compile(fn, args, kwargs=None):
    """``fn(*args, **kwargs)`` compiled ahead of time with the default backend
    (Inductor and the spyre pass), whole graph: an ``AOTCompiledFunction``
    to call with arguments like @args and to ``save``."""
    c = torch.compile(fn, fullgraph=True, options={"guard_filter_fn": guard_filter})
    return c.aot_compile((tuple(args), dict(kwargs or {})))


def _identity():
    from .graph_pass import identity
    return identity()


def save(compiled, path):
    """Writes @compiled (from ``aot_compile``) to @path with the spyre identity."""
    data = type(compiled).serialize(compiled).serialized_data
    header = json.dumps({"identity": _identity()}).encode()
    with open(path, "wb") as f:
        f.write(_MAGIC + len(header).to_bytes(4, "little") + header + data)


def load(path):
    """The compiled function saved at @path; raises StaleArtifact when it was
    compiled for another card interface, op library or lowering."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 4:
        raise ValueError(f"spyre: {path} is not a compiled function saved by "
                         "torch_spyre.inductor.precompile.save")
    at = len(_MAGIC) + 4
    hlen = int.from_bytes(data[len(_MAGIC):at], "little")
    header = json.loads(data[at:at + hlen].decode())
    if header.get("identity") != _identity():
        raise StaleArtifact(f"spyre: {path} was compiled for another card interface, op "
                            "library or lowering than this process has; compile it again")
    return torch.compiler.load_compiled_function(io.BytesIO(data[at + hlen:]))
