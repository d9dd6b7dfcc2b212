# SPDX-License-Identifier: MIT
"""print() and repr() of spyre tensors.

PyTorch formats a tensor on its own device: for float tensors it selects
the finite nonzero values (masked_select, on the card) and then works out
the format from their float64 abs, min, max and ceil (torch._tensor_str's
tensor_totype), and the card has no float64. The values printed must reach
the host anyway, so the body of a spyre tensor's repr is formatted from one
copy of it on the CPU, exactly as the CPU formats it; the rest of the repr
(device=, dtype=, requires_grad=) still comes from the spyre tensor. No op
runs on the CPU in its place: TORCH_SPYRE_FALLBACK=error allows print().
"""
import torch._tensor_str as _tensor_str_module

_cpu_tensor_str = _tensor_str_module._tensor_str


def _tensor_str(self, indent):
    if self.device.type == "spyre":
        self = self.cpu()
    return _cpu_tensor_str(self, indent)


def install():
    _tensor_str_module._tensor_str = _tensor_str
