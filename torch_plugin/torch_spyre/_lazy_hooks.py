# SPDX-License-Identifier: MIT
"""What torch_spyre registers with Dynamo and Inductor, without importing them.

Dynamo and Inductor cost about a second to import, which ``import torch``
(and so every user of the autoloaded backend) should not pay. A meta path
hook waits until one of their registries is imported (which happens only
when something compiles) and registers then:

- ``torch._dynamo.device_interface``: the "spyre" device interface (device
  count and selection, streams, events, synchronize, properties), which
  Dynamo uses to trace stream and event code on the device;
- ``torch._inductor.codegen.common``: the spyre Inductor backend
  (``torch_spyre.inductor``: the device pass that lowers a graph to
  recipes, the scheduling, the wrapper codegen, the device op overrides);
- ``torch._inductor.decomposition``: Inductor's decompositions of ops the
  card lowers whole are skipped for spyre tensors (``inductor.decomps``);
- ``torch._inductor.codecache``: PyTorch's source hash for the cache keys
  kept from one process to the next (``inductor.torch_key``);
- ``torch.distributed.tensor._random``: DTensor's random ops refused on spyre
  with a clear error (see DTENSOR_RNG_MESSAGE).
"""
import contextlib
import importlib.abc
import importlib.util
import sys

import torch

DTENSOR_RNG_MESSAGE = (
    "spyre: DTensor random ops (rand/randn/normal_/uniform_/dropout on a DTensor) are not "
    "supported on spyre: DTensor gives each shard its own slice of one random stream by "
    "moving a Philox generator's offset in units of CUDA's (4 per element), and the spyre "
    "generator's offset counts ops (Documentation/random.rst), so shards would draw "
    "overlapping numbers. Initialise "
    "the tensor on the CPU or on one card and distribute_tensor() it "
    "(Documentation/distributed.rst)")


def _register_inductor(common):
    from . import inductor
    inductor.register(common)


def _register_decompositions(decomposition):
    from . import inductor
    inductor.register_decompositions(decomposition)


def _register_torch_key_memo(codecache):
    from .inductor import torch_key
    torch_key.install(codecache)


def _register_device_interface(di):
    spyre = torch.spyre

    def exchange_device(device):
        previous = spyre.current_device()
        if device >= 0:
            spyre.set_device(device)
        return previous

    class Worker:
        set_device = staticmethod(spyre.set_device)
        current_device = staticmethod(spyre.current_device)
        get_device_properties = staticmethod(spyre.get_device_properties)

    class SpyreInterface(di.DeviceInterface):
        device = spyre.device
        Event = torch.Event
        Stream = torch.Stream

    SpyreInterface.Worker = Worker
    for name, fn in {
        "current_device": spyre.current_device,
        "set_device": spyre.set_device,
        "exchange_device": exchange_device,
        "maybe_exchange_device": exchange_device,
        "device_count": spyre.device_count,
        "is_available": spyre.is_available,
        "stream": spyre.stream,
        "current_stream": spyre.current_stream,
        "set_stream": torch.accelerator.set_stream,
        "synchronize": spyre.synchronize,
        "memory_allocated": spyre.memory_allocated,
        "get_compute_capability": lambda device=None: (
            "spyre-" + spyre.get_device_properties(device).hw_version),
        "is_bf16_supported": lambda including_emulation=False: True,
        "is_triton_capable": lambda device=None: False,
    }.items():
        setattr(SpyreInterface, name, staticmethod(fn))
    di.register_interface_for_device("spyre", SpyreInterface)


def _register_dtensor_random(random):
    # Without this the tracker fails with a bare AssertionError reading the
    # offset of our state; running the op without the tracker would give
    # every shard the same numbers (silently not what one device gives).
    tracker = random.OffsetBasedRNGTracker
    original = tracker._distribute_region

    @contextlib.contextmanager
    def _distribute_region(self, spec, generator=None):
        if self._device.type == "spyre" and self.distribute_region_enabled:
            raise NotImplementedError(DTENSOR_RNG_MESSAGE)
        with original(self, spec, generator):
            yield

    tracker._distribute_region = _distribute_region


# The generator functions Dynamo must run, not trace: a compiled function
# that saves and restores the RNG state (torch.random.fork_rng) graph-breaks
# into them, and tracing the generator's get_state/set_state then fails
# inside Dynamo (as it would for any C++ object it cannot fake).
_RNG = ("get_rng_state", "set_rng_state", "manual_seed", "manual_seed_all", "seed",
        "initial_seed")


def _register_dynamo_skips(eval_frame):
    from . import spyre
    for name in _RNG:
        setattr(spyre, name, eval_frame.DisableContext()(getattr(spyre, name)))


_PENDING = {
    "torch._dynamo.eval_frame": _register_dynamo_skips,
    "torch._dynamo.device_interface": _register_device_interface,
    "torch._inductor.codegen.common": _register_inductor,
    "torch._inductor.decomposition": _register_decompositions,
    "torch._inductor.codecache": _register_torch_key_memo,
    "torch.distributed.tensor._random": _register_dtensor_random,
}


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        register = _PENDING.pop(name, None)
        if register is None:
            return None
        if not _PENDING:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)  # (no longer pending: not back here)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            register(module)
        spec.loader.exec_module = exec_and_register
        return spec


def install():
    for name in list(_PENDING):
        if name in sys.modules:
            _PENDING.pop(name)(sys.modules[name])
    if _PENDING and not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
