# SPDX-License-Identifier: MIT
"""The ``torch.spyre`` device module (the counterpart of ``torch.cuda``)."""
from __future__ import annotations

import contextlib
from collections import namedtuple
from typing import Any

import torch

from . import _C

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "device",
    "synchronize", "get_device_name", "get_device_properties", "manual_seed",
    "manual_seed_all", "seed", "initial_seed", "is_initialized", "stream", "current_stream",
    "default_stream", "Stream", "Event", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "memory_stats", "reset_peak_memory_stats",
    "reset_accumulated_memory_stats", "empty_cache", "mem_get_info", "fallback_counts",
    "reset_fallback_counts", "set_fallback_mode", "get_fallback_mode", "op_counts", "counters",
    "device_time_ns", "get_rng_state", "set_rng_state", "compile_stats", "trace",
]

_DeviceProperties = namedtuple(
    "_DeviceProperties",
    ["name", "total_memory", "cores", "backend", "path", "pci_slot", "hw_version",
     "scratchpad_size", "clock_mhz"])


def _index(dev: Any = None, optional: bool = True) -> int:
    """Device index of ``dev`` (None, int, str or torch.device)."""
    if dev is None:
        return _C._current_device()
    if isinstance(dev, str):
        dev = torch.device(dev)
    if isinstance(dev, torch.device):
        if dev.type != "spyre":
            raise ValueError(f"expected a spyre device, got {dev}")
        return _C._current_device() if dev.index is None else dev.index
    if isinstance(dev, int):
        return dev
    raise TypeError(f"invalid device {dev!r}")


def _checked(dev: Any = None) -> int:
    i = _index(dev)
    _C._check_device(i)
    return i


def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def is_initialized() -> bool:
    """True once this process opened a spyre device or chose one
    (``set_device``, ``torch.accelerator.set_device_index``, a device
    guard), as ``torch.cuda.is_initialized()`` is after ``set_device``.
    DeviceMesh sets the device from LOCAL_RANK only before that; fake
    tensors (DTensor's sharding propagation, Dynamo) place a bare
    ``"spyre"`` on the current device only after it, on ``spyre:0`` before."""
    return _C._is_initialized()


def current_device() -> int:
    return _C._current_device()


def set_device(dev: Any) -> None:
    _C._set_device(_index(dev))


class device:
    """Context manager that makes ``dev`` the current spyre device."""

    def __init__(self, dev: Any):
        self.idx = _index(dev)
        self.prev = -1

    def __enter__(self):
        self.prev = _C._current_device()
        _C._set_device(self.idx)
        return self

    def __exit__(self, *exc):
        _C._set_device(self.prev)
        return False


def synchronize(dev: Any = None) -> None:
    """Waits for all work on every stream of the device."""
    _C._synchronize(_checked(dev))


def get_device_properties(dev: Any = None) -> _DeviceProperties:
    p = _C._device_properties(_checked(dev))
    return _DeviceProperties(p["name"], p["total_memory"], p["cores"], p["backend"], p["path"],
                             p["pci_slot"], p["hw_version"], p["scratchpad_size"],
                             p["clock_mhz"])


def get_device_name(dev: Any = None) -> str:
    return get_device_properties(dev).name


def device_time_ns(dev: Any = None) -> int:
    """The card's modelled device clock, in ns."""
    return _C._device_time_ns(_checked(dev))


@contextlib.contextmanager
def trace(path: str, dev: Any = None):
    """Record the device timeline of the block into ``path``.

    Chrome trace / Perfetto JSON of the modelled device time: one span per
    submission on the compute or a DMA track, host submits on tid 0
    (Documentation/runtime.rst, Tracing). The file is written, after
    waiting for the device, when the block ends.
    """
    if not isinstance(path, str) or not path:
        raise ValueError("torch.spyre.trace: path must be a non-empty string")
    i = _checked(dev)
    _C._trace_start(i, path)
    try:
        yield path
    finally:
        _C._trace_stop(i)


def counters(dev: Any = None) -> dict:
    """Submissions, ioctls and allocator cache hits of the device (tests, benchmarks)."""
    return _C._device_counters(_checked(dev))


def compile_stats() -> dict:
    """What ``torch.compile(backend="spyre")`` did in this process: graphs,
    recipes, graph breaks with reasons, in-process recipe cache hits and the
    on-disk compile cache's hits, misses, writes and errors (see
    ``torch_spyre.compiler.stats``)."""
    from .compiler import stats
    return stats()


# ---- random numbers --------------------------------------------------------

def _generator(dev: Any = None) -> torch.Generator:
    return _C._default_generator(_checked(dev))


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    _generator().manual_seed(int(seed))


def _is_in_bad_fork() -> bool:
    """True in a child forked after this process opened a device (torch.random asks)."""
    return _C._is_in_bad_fork()


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        _generator(i).manual_seed(int(seed))


def seed() -> int:
    return _generator().seed()


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(dev: Any = None) -> torch.Tensor:
    return _generator(dev).get_state()


def set_rng_state(state: torch.Tensor, dev: Any = None) -> None:
    _generator(dev).set_state(state)


# ---- streams and events ----------------------------------------------------

class Stream(torch.Stream):
    """A spyre stream (a libspyre stream: ordered work on the card).

    ``transfer=True`` makes a stream on the card's DMA engine: copies and
    fills on it overlap compute on the other streams (ops that launch
    programs cannot run on it)."""

    def __new__(cls, device: Any = None, priority: int = 0, transfer: bool = False, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        if transfer:
            sid, idx = _C._new_transfer_stream(_checked(device))
            ref = torch.accelerator.current_stream(torch.device("spyre", idx))
            return super().__new__(cls, stream_id=sid, device_index=idx,
                                   device_type=ref.device_type)
        return super().__new__(cls, device=torch.device("spyre", _checked(device)),
                               priority=priority)


class Event(torch.Event):
    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False):
        return super().__new__(cls, device="spyre", enable_timing=enable_timing,
                               blocking=blocking, interprocess=interprocess)


def current_stream(dev: Any = None) -> torch.Stream:
    return torch.accelerator.current_stream(torch.device("spyre", _checked(dev)))


def default_stream(dev: Any = None) -> torch.Stream:
    cur = current_stream(dev)
    return torch.Stream(stream_id=0, device_index=cur.device_index, device_type=cur.device_type)


@contextlib.contextmanager
def stream(s: torch.Stream | None):
    """Makes ``s`` the current stream of its device (and its device current)."""
    if s is None:
        yield
        return
    prev_dev = current_device()
    prev = current_stream(s.device_index)
    set_device(s.device_index)
    torch.accelerator.set_stream(s)
    try:
        yield
    finally:
        torch.accelerator.set_stream(prev)
        set_device(prev_dev)


# ---- memory ----------------------------------------------------------------

def memory_allocated(dev: Any = None) -> int:
    return torch.accelerator.memory_allocated(_checked(dev))


def max_memory_allocated(dev: Any = None) -> int:
    return torch.accelerator.max_memory_allocated(_checked(dev))


def memory_reserved(dev: Any = None) -> int:
    return torch.accelerator.memory_reserved(_checked(dev))


def max_memory_reserved(dev: Any = None) -> int:
    return torch.accelerator.max_memory_reserved(_checked(dev))


def memory_stats(dev: Any = None) -> dict:
    return torch.accelerator.memory_stats(_checked(dev))


def reset_peak_memory_stats(dev: Any = None) -> None:
    torch.accelerator.reset_peak_memory_stats(_checked(dev))


def reset_accumulated_memory_stats(dev: Any = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(_checked(dev))


def empty_cache() -> None:
    """Releases cached device memory that no tensor uses."""
    torch.accelerator.empty_cache()


def mem_get_info(dev: Any = None) -> tuple[int, int]:
    """(free, total) device memory in bytes, as the driver sees it."""
    return torch.accelerator.get_memory_info(_checked(dev))


# ---- CPU fallback ----------------------------------------------------------

def fallback_counts() -> dict[str, int]:
    """Calls per operator that ran on the CPU because spyre has no kernel for them."""
    return dict(_C._fallback_counts())


def reset_fallback_counts() -> None:
    _C._reset_fallback_counts()


def set_fallback_mode(mode: str) -> None:
    """"warn" (run on the CPU, warn once per op) or "error" (raise)."""
    _C._set_fallback_mode(mode)


def get_fallback_mode() -> str:
    return _C._fallback_mode()


def op_counts() -> dict[str, int]:
    """Calls per operator that ran as a device kernel (through libspyre's op
    library), since the process started: the counterpart of fallback_counts()."""
    return dict(_C._op_counts())
