# SPDX-License-Identifier: MIT
"""Shared by the device-kernel tests: the dtypes, the per-dtype tolerances
(in one place) and the comparison of a spyre result with PyTorch's CPU one.

The card computes floats in fp32 and rounds once to the result dtype
(Documentation/spyre-ops.rst), PyTorch's CPU kernels do the same for
fp16/bf16 elementwise ops; the tolerances cover one final rounding plus
fp32 work, and `scale` widens them for transcendental functions and sums."""
import contextlib

import torch

FLOATS = [torch.float32, torch.float16, torch.bfloat16]

TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float16: (1e-3, 2e-3),
    torch.bfloat16: (8e-3, 1.6e-2),
}

DEV = "spyre"


def assert_close(got, want, scale=1.0):
    """@got (a spyre tensor) equals the CPU reference @want within the
    tolerances of its dtype; same dtype and shape, NaNs where @want has them."""
    assert got.device.type == "spyre", got.device
    got = got.cpu()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype in TOL:
        atol, rtol = TOL[want.dtype]
        torch.testing.assert_close(got, want, atol=atol * scale, rtol=rtol * scale,
                                   equal_nan=True)
    else:
        assert torch.equal(got, want), (got, want)


def rand(shape, dtype, lo=-2.0, hi=2.0, gen=None):
    """Uniform values in [lo, hi) of @dtype (made in fp32, then rounded)."""
    g = gen or torch.Generator().manual_seed(hash((tuple(shape), str(dtype), lo, hi)) % 2**31)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


@contextlib.contextmanager
def on_card():
    """Everything inside runs as device kernels: the fallback raises, and no
    fallback call is counted."""
    before = torch.spyre.fallback_counts()
    mode = torch.spyre.get_fallback_mode()
    torch.spyre.set_fallback_mode("error")
    try:
        yield
    finally:
        torch.spyre.set_fallback_mode(mode)
    assert torch.spyre.fallback_counts() == before
