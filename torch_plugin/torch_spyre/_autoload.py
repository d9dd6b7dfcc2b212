# SPDX-License-Identifier: MIT
"""Entry point of the ``torch.backends`` group: ``import torch`` loads the
spyre backend. A failure here must never break ``import torch`` for the
whole machine, so every error becomes a warning."""


def autoload():
    try:
        import torch_spyre  # noqa: F401  (registers everything on import)
    except Exception as e:  # noqa: BLE001
        import warnings

        warnings.warn(f"torch_spyre: the spyre backend failed to load and is disabled: {e}",
                      RuntimeWarning, stacklevel=2)
