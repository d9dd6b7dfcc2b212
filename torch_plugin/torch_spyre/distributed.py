# SPDX-License-Identifier: MIT
"""torch.distributed on spyre: the "spyre" c10d backend.

``torch_spyre`` registers the backend when it loads (a few dict entries in
``torch.distributed.Backend``; nothing is created until a process group
asks for it), as the default backend of the "spyre" device::

    dist.init_process_group()                       # spyre tensors: "spyre"
    dist.init_process_group("cpu:gloo,spyre:spyre") # CPU tensors too

The backend itself is C++ (``csrc/distributed.cpp``): collectives stage
spyre tensors through pinned host memory and run on a gloo backend of its
own, on the same store (Documentation/distributed.rst).
"""
import torch

BACKEND = "spyre"


def _create_backend(store, rank, size, timeout):
    """Backend.register_backend's creator: a spyre backend over a new gloo
    backend on the group's store (under its own prefix, so it never meets a
    "cpu:gloo" backend of the same group)."""
    import torch.distributed as dist
    from . import _C

    if not dist.is_gloo_available():
        raise RuntimeError("spyre c10d backend: this torch has no gloo backend, which the "
                           "spyre backend uses to move the bytes between processes")
    gloo = dist.ProcessGroupGloo(dist.PrefixStore("spyre-gloo/", store), rank, size, timeout)
    return _C._SpyreBackend(gloo, rank, size)


def register():
    """Registers "spyre" with torch.distributed (once; a no-op without it)."""
    import torch.distributed as dist

    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND, _create_backend, devices=["spyre"])


__all__ = ["BACKEND", "register"]
