# SPDX-License-Identifier: MIT
"""Scans and reductions beyond one row kernel, on the card against the CPU
with the fallback forbidden: cumprod and logcumsumexp along any dim, and
sum/mean/amax/amin/max/argmax/argmin/softmax/log_softmax/cumsum/layer_norm
over rows longer than a scratchpad (run in passes, never a different
value)."""
import math

import pytest
import torch

D = "spyre"

pytestmark = pytest.mark.usefixtures("card_only")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def close(got, want, tol=None):
    assert got.device.type == "spyre" and got.dtype == want.dtype and got.shape == want.shape
    tol = tol or TOL.get(want.dtype, 0)
    if want.dtype.is_floating_point:
        torch.testing.assert_close(got.cpu().double(), want.double(), rtol=tol, atol=tol,
                                   equal_nan=True)
    else:
        assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_and_logcumsumexp_floats(dtype, dim):
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(4, 37, 5, generator=g) * 0.8 + 0.6).to(dtype)  # products stay finite
    close(x.to(D).cumprod(dim), x.cumprod(dim))
    y = (torch.randn(4, 37, 5, generator=g) * 5).to(dtype)
    close(y.to(D).logcumsumexp(dim), y.logcumsumexp(dim))
    out = torch.empty(0, dtype=dtype, device=D)
    torch.cumprod(x.to(D), dim, out=out)
    close(out, x.cumprod(dim))
    z = x.to(D)
    z.cumprod_(dim)
    close(z, x.cumprod(dim))
    out = torch.empty(0, dtype=dtype, device=D)
    torch.logcumsumexp(y.to(D), dim, out=out)
    close(out, y.logcumsumexp(dim))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=str)
def test_cumprod_integers_exact_with_wraparound(dtype):
    g = torch.Generator().manual_seed(2)
    x = torch.randint(-3, 4, (3, 70), generator=g)  # 3^70 wraps int64 and int32
    x = x > 0 if dtype == torch.bool else x.to(dtype)
    close(x.to(D).cumprod(1), x.cumprod(1))  # integers and bool give int64
    close(x.to(D).cumprod(0, dtype=torch.int32), x.cumprod(0, dtype=torch.int32))
    close(x.to(D).cumprod(1, dtype=torch.float32), x.cumprod(1, dtype=torch.float32))


def test_scan_edges():
    inf, nan = math.inf, math.nan
    e = torch.tensor([-inf, -inf, 0.0, inf, inf, -1e4, nan, 1.0])
    close(e.to(D).logcumsumexp(0), e.logcumsumexp(0))
    # far apart values: the small ones are not lost to a global maximum
    f = torch.tensor([-1000.0, -1001.0, 0.0, -30.0, 20.0])
    close(f.to(D).logcumsumexp(0), f.logcumsumexp(0), 1e-6)
    p = torch.tensor([2.0, -0.0, inf, nan, 3.0])
    close(p.to(D).cumprod(0), p.cumprod(0))
    for t in (torch.tensor(3.0), torch.empty(0), torch.empty(2, 0)):
        close(t.to(D).cumprod(-1), t.cumprod(-1))
        close(t.to(D).logcumsumexp(-1), t.logcumsumexp(-1))
    nc = torch.randn(6, 5, generator=torch.Generator().manual_seed(3)).t()  # non-contiguous
    close(nc.to(D).t().contiguous().t().cumprod(1), nc.cumprod(1))


LONG = 1 << 20  # fp32 elements: four times one core's scratchpad


def long_ref(f, x):
    r = f(x.double())
    return r.to(x.dtype) if r.dtype.is_floating_point and x.dtype.is_floating_point else r


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_long_rows_run_in_passes(dtype):
    g = torch.Generator().manual_seed(4)
    x = torch.rand(2, LONG // 2 + 3, generator=g) * 100 - 50
    x = (x * 1000003).to(dtype) if dtype == torch.int64 else x.to(dtype)
    xd = x.to(D)
    cases = [("sum", lambda t: t.sum(-1)), ("sum all", lambda t: t.sum()),
             ("amax", lambda t: t.amax(-1)), ("amin", lambda t: t.amin(1)),
             ("max", lambda t: t.max()), ("argmax", lambda t: t.argmax(-1)),
             ("argmin", lambda t: t.argmin(1)), ("max.dim", lambda t: t.max(-1)[1]),
             ("argmax all", lambda t: t.argmax())]
    if dtype.is_floating_point:
        cases += [("mean", lambda t: t.mean(-1)), ("softmax", lambda t: t.softmax(-1)),
                  ("log_softmax", lambda t: t.log_softmax(-1))]
    for name, f in cases:
        got = f(xd)
        if name.startswith(("sum", "mean", "softmax", "log")) and dtype.is_floating_point:
            # against the exact value: fp32 sums of a million terms differ from
            # the CPU's own order by more than a few ulps
            want = f(x.double())
            scale = want.abs().max().item()
            err = (got.cpu().double() - want).abs().max().item()
            assert err <= TOL[dtype] * max(scale, 1), (name, err)
        else:
            close(got, f(x))
    # cumsum along the long row: integers exactly
    if dtype == torch.int64:
        close(xd.cumsum(-1), x.cumsum(-1))
    else:
        want = x.double().cumsum(-1)
        err = (xd.cumsum(-1).cpu().double() - want).abs().max().item()
        assert err <= TOL[dtype] * want.abs().max().item()


def test_long_row_nan_and_first_maximum():
    x = torch.zeros(LONG)
    x[700001] = 5.0
    x[900000] = 5.0  # a later equal maximum: the first wins
    xd = x.to(D)
    assert xd.argmax().item() == 700001 and xd.max().item() == 5.0
    x[800000] = math.nan  # NaN wins argmax and propagates through max
    xd = x.to(D)
    assert xd.argmax().item() == 800000 and math.isnan(xd.max().item())
    assert math.isnan(xd.sum().item()) and torch.isnan(xd.softmax(0).cpu()).all()
    y = torch.full((LONG,), -math.inf)
    y[LONG - 1] = 1.0
    close(y.to(D).softmax(0), y.softmax(0))
    close(y.to(D).argmax(), y.argmax())


@pytest.mark.parametrize("n", [40000, LONG])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_long_layer_norm(n, dtype):
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(2, n, generator=g) * 3 + 100).to(dtype)  # a large mean: no cancellation
    w = torch.randn(n, generator=g).to(dtype)
    b = torch.randn(n, generator=g).to(dtype)
    got = torch.native_layer_norm(x.to(D), [n], w.to(D), b.to(D), 1e-5)
    want = torch.native_layer_norm(x.float(), [n], w.float(), b.float(), 1e-5)
    tol = {torch.float32: 1e-4, torch.bfloat16: 3e-2}[dtype]
    for g_, w_ in zip(got, want):
        assert g_.device.type == "spyre" and g_.shape == w_.shape
        torch.testing.assert_close(g_.cpu().float(), w_, rtol=tol, atol=tol)
    y = torch.nn.functional.layer_norm(x.to(D), [n])
    torch.testing.assert_close(y.cpu().float(), torch.nn.functional.layer_norm(x.float(), [n]),
                               rtol=tol, atol=tol)
