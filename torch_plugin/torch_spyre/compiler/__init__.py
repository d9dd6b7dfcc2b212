# SPDX-License-Identifier: MIT
"""torch.compile on spyre: ``torch.compile(model, backend="spyre")``.

The backend is found through the ``torch_dynamo_backends`` entry point, so
importing torch_spyre does not import Dynamo.
"""
from .backend import compile_graph, kernel_profile, reset_stats, spyre_backend, stats

__all__ = ["compile_graph", "kernel_profile", "reset_stats", "spyre_backend", "stats"]
