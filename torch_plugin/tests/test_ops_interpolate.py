# SPDX-License-Identifier: MIT
"""torch.nn.functional.interpolate on the card against the CPU with the
fallback forbidden: nearest, nearest-exact, linear, bilinear and trilinear,
align_corners both ways, sizes and scale factors, up and down."""
import math

import pytest
import torch
import torch.nn.functional as F

D = "spyre"

pytestmark = pytest.mark.usefixtures("card_only")

TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def same(got, want, scale=1.0):
    """@scale: the inputs' magnitude. The CPU rounds half-precision weighted
    sums after each step, the card once: results of cancelling terms differ
    by the inputs' rounding, not the result's."""
    assert got.device.type == "spyre" and got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.is_floating_point:
        t = TOL[want.dtype]
        torch.testing.assert_close(got.cpu(), want, rtol=t, atol=t * scale, equal_nan=True)
    else:
        assert torch.equal(got.cpu(), want)


def data(shape, dtype, seed=1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 4).to(dtype)


RESIZES = [dict(size=7), dict(size=2), dict(scale_factor=2), dict(scale_factor=0.6),
           dict(scale_factor=1.7), dict(size=5)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nearest(dtype, mode, nd):
    x = data((2, 3) + (5, 4, 3)[:nd], dtype)
    for kw in RESIZES:
        same(F.interpolate(x.to(D), mode=mode, **kw), F.interpolate(x, mode=mode, **kw))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("mode,nd", [("linear", 1), ("bilinear", 2), ("trilinear", 3)])
@pytest.mark.parametrize("align", [False, True])
def test_linear_modes(dtype, mode, nd, align):
    x = data((2, 3) + (5, 4, 3)[:nd], dtype)
    for kw in RESIZES:
        same(F.interpolate(x.to(D), mode=mode, align_corners=align, **kw),
             F.interpolate(x, mode=mode, align_corners=align, **kw), x.abs().max().item())
    # output of one element along a dim with align_corners (ratio 0)
    same(F.interpolate(x.to(D), size=(1,) * nd, mode=mode, align_corners=align),
         F.interpolate(x, size=(1,) * nd, mode=mode, align_corners=align))


def test_edges_nan_inf_non_contiguous_out():
    x = data((1, 2, 4, 6), torch.float32)
    x[0, 0, 1, 2] = math.nan
    x[0, 1, 3, 5] = math.inf
    x[0, 1, 0, 0] = -0.0
    for mode, kw in (("nearest", {}), ("bilinear", dict(align_corners=False)),
                     ("bilinear", dict(align_corners=True))):
        same(F.interpolate(x.to(D), size=(7, 9), mode=mode, **kw),
             F.interpolate(x, size=(7, 9), mode=mode, **kw))
        xt = x.transpose(2, 3)  # non-contiguous input
        same(F.interpolate(x.to(D).transpose(2, 3), scale_factor=1.5, mode=mode, **kw),
             F.interpolate(xt, scale_factor=1.5, mode=mode, **kw))
    out = torch.empty(0, device=D)
    torch.ops.aten.upsample_nearest2d.out(x.to(D), [8, 12], None, None, out=out)
    same(out, torch.ops.aten.upsample_nearest2d(x, [8, 12]))
    e = torch.empty(0, 2, 4, 6)
    same(F.interpolate(e.to(D), size=(3, 3)), F.interpolate(e, size=(3, 3)))
    with pytest.raises(RuntimeError, match="greater than 0"):
        torch.ops.aten.upsample_nearest2d(x.to(D), [0, 3])
