# SPDX-License-Identifier: MIT
"""vLLM platform plugin for the Spyre card (torch device "spyre").

vLLM calls register() for every plugin in the ``vllm.platform_plugins``
entry-point group while it picks the platform; returning the Platform
class's qualified name activates it, returning None leaves the choice to
vLLM's built-in platforms.
"""

import os


def register() -> str | None:
    if os.environ.get("VLLM_SPYRE_DISABLE") == "1":
        return None
    try:
        import torch  # noqa: F401  (autoloads torch_spyre)
        import torch_spyre  # noqa: F401
    except ImportError:
        return None
    import torch

    if not hasattr(torch, "spyre") or torch.spyre.device_count() == 0:
        return None
    return "vllm_spyre_plugin.platform.SpyrePlatform"
