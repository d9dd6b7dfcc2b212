# SPDX-License-Identifier: MIT
"""torch_spyre: the Spyre accelerator as the PyTorch device "spyre".

Importing it renames PrivateUse1 to "spyre", registers ``torch.spyre`` and
generates the ``.spyre()`` / ``is_spyre`` methods. With the package
installed, a plain ``import torch`` does this (PyTorch's device-backend
autoload; ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` turns it off).
"""
import torch

from . import _C  # noqa: F401  (loads the runtime: allocator, guard, ops)
from . import _lazy_hooks
from . import _printing
from . import distributed as _distributed
from . import spyre as _spyre_module
from .inductor import eager as _eager_compile

if torch._C._get_privateuse1_backend_name() != "spyre":
    torch.utils.rename_privateuse1_backend("spyre")
    torch._register_device_module("spyre", _spyre_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True,
                                                         for_packed_sequence=True,
                                                         for_storage=True)

_distributed.register()  # the "spyre" c10d backend: registered now, created on demand
_lazy_hooks.install()  # Dynamo's device interface, Inductor's refusal: when they load
_printing.install()  # a spyre tensor's values are formatted from a CPU copy
_eager_compile.install()  # ops without a kernel: compiled through Inductor first

__all__ = ["spyre"]
