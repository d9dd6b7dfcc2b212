# SPDX-License-Identifier: MIT
"""Entry point of the ``torch.backends`` group: ``import torch`` loads the
spyre backend. A failure here must never break ``import torch`` for the
whole machine, so every error becomes a warning. This is a top-level module
on purpose: an entry point inside the torch_spyre package would import the
package (and fail with it) before this function could catch anything."""


def autoload():
    try:
        import torch_spyre  # noqa: F401  (registers everything on import)
    except Exception as e:  # noqa: BLE001
        import warnings

        warnings.warn(f"torch_spyre: the spyre backend failed to load and is disabled: {e}",
                      RuntimeWarning, stacklevel=2)
