# SPDX-License-Identifier: MIT
"""torch.distributed on spyre: the "spyre" c10d backend.

``torch_spyre`` registers the backend when it loads (a few dict entries in
``torch.distributed.Backend``; nothing is created until a process group
asks for it), as the default backend of the "spyre" device::

    dist.init_process_group()                       # spyre tensors: "spyre"
    dist.init_process_group("cpu:gloo,spyre:spyre") # CPU tensors too

The backend itself is C++ (``csrc/distributed.cpp``): between the cards
of one machine all_reduce, broadcast, all_gather(_into_tensor),
reduce_scatter(_tensor), all_to_all(_single), gather, scatter and
send/recv move bytes card to card (peer DMA,
``csrc/distributed_peer.cpp``); everything else, and ranks on several
machines, stage spyre tensors through pinned host memory and run on a gloo
backend of its own, on the same store (Documentation/distributed.rst).
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
    return _C._SpyreBackend(gloo, rank, size, dist.PrefixStore("spyre-peer/", store),
                            int(timeout.total_seconds() * 1000))


def peer_stats():
    """Process-wide counters of the backend's two paths: ``peer_collectives``
    (operations card to card) and ``peer_bytes`` (bytes written card to
    card; ``by_op`` splits them by operation: ``allreduce``, ``alltoall``,
``send``...), ``staged_collectives`` (through host memory and gloo),
    ``groups_peer`` / ``groups_staged`` (process groups that connected
    card to card or could not) and ``last_reason`` (why the last one could
    not)."""
    from . import _C

    return dict(_C._c10d_peer_stats())


def register():
    """Registers "spyre" with torch.distributed (once; a no-op without it)."""
    import torch.distributed as dist

    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND, _create_backend, devices=["spyre"])


__all__ = ["BACKEND", "peer_stats", "register"]
