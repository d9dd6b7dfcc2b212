# SPDX-License-Identifier: MIT
"""Reduction, softmax and copy/cast device kernels (csrc/ops_reduce.cpp,
csrc/ops_convert.cpp) against PyTorch's CPU kernels, in the fallback's error
mode: a CPU fallback fails the test."""
import pytest
import torch

from optest import DEV, FLOATS, assert_close, on_card, rand

DIMS = [None, 0, -1, 1, (0, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reduce(name, dim, keepdim, dtype):
    a = rand((3, 17, 5), dtype)
    f = getattr(torch, name)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    if dim is None and name in ("amax", "amin"):
        kw = {"dim": (), "keepdim": keepdim}
    with on_card():
        assert_close(f(a.to(DEV), **kw), f(a, **kw), scale=51)
        # a non-contiguous input
        assert_close(f(a.to(DEV).transpose(0, 2), **kw), f(a.transpose(0, 2), **kw), scale=51)


@pytest.mark.parametrize("shape", [(1,), (1, 1), (7,), (33, 65)], ids=str)
def test_sum_mean_shapes_dtype_and_out(shape):
    a = rand(shape, torch.float16)
    x = a.to(DEV)
    with on_card():
        assert_close(x.sum(), a.sum(), scale=100)
        assert_close(x.mean(-1), a.mean(-1), scale=100)
        assert_close(x.sum(0, dtype=torch.float32), a.sum(0, dtype=torch.float32), scale=100)
        assert_close(torch.mean(x, dtype=torch.float32), torch.mean(a, dtype=torch.float32),
                     scale=100)
        out = torch.empty(0, device=DEV, dtype=torch.float16)
        torch.sum(x, -1, keepdim=True, out=out)
        assert_close(out, a.sum(-1, keepdim=True), scale=100)


def test_expanded_inputs():
    """Stride-0 (expanded) inputs, as autograd makes them (sum().backward())."""
    a = rand((1, 6), torch.float32)
    with on_card():
        x = a.to(DEV).expand(5, 6)
        assert_close(x.sum(0), a.expand(5, 6).sum(0))
        assert_close(x.amax(0), a.expand(5, 6).amax(0))
        assert_close(torch.softmax(x, 0), torch.softmax(a.expand(5, 6), 0))
        assert_close(torch.cumsum(x, 0), torch.cumsum(a.expand(5, 6), 0))
        assert_close(torch.ones((), device=DEV).expand(4, 3).sum(0), torch.full((3,), 4.0))


def test_empty_reductions():
    a = torch.empty(0, 3)
    x = a.to(DEV)
    with on_card():
        assert_close(x.sum(0), a.sum(0))
        assert_close(x.mean(0), a.mean(0))
        assert_close(x.sum(1), a.sum(1))
        assert_close(x.amax(1), a.amax(1))
        with pytest.raises(RuntimeError, match="non-zero size"):
            x.amax(0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_and_argmax(dim, keepdim, dtype):
    # distinct values: the index of the maximum is unambiguous in every dtype
    a = (torch.randperm(4 * 9 * 6, generator=torch.Generator().manual_seed(3)).reshape(4, 9, 6)
         .to(dtype))
    x = a.to(DEV)
    with on_card():
        v, i = torch.max(x, dim, keepdim)
        rv, ri = torch.max(a, dim, keepdim)
        assert_close(v, rv)
        assert_close(i, ri)
        v, i = torch.min(x, dim, keepdim)
        rv, ri = torch.min(a, dim, keepdim)
        assert_close(v, rv)
        assert_close(i, ri)
        assert_close(torch.argmax(x, dim, keepdim), torch.argmax(a, dim, keepdim))
        assert_close(torch.argmax(x.transpose(0, 1), dim, keepdim),
                     torch.argmax(a.transpose(0, 1), dim, keepdim))
        assert_close(torch.argmax(x), torch.argmax(a))
        assert_close(torch.argmax(x, keepdim=True), torch.argmax(a, keepdim=True))
        assert_close(x.max(), a.max())
        assert_close(x.min(), a.min())
        out = torch.empty(0, device=DEV, dtype=torch.int64)
        torch.argmax(x, dim, keepdim, out=out)
        assert_close(out, torch.argmax(a, dim, keepdim))


def test_argmax_first_of_ties():
    a = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    with on_card():
        assert_close(a.to(DEV).argmax(1), a.argmax(1))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dim, dtype):
    a = rand((5, 12, 3), dtype)
    x = a.to(DEV)
    with on_card():
        assert_close(torch.cumsum(x, dim), torch.cumsum(a, dim), scale=12)
        assert_close(torch.cumsum(x, dim, dtype=torch.float32),
                     torch.cumsum(a, dim, dtype=torch.float32), scale=12)
        z = x.clone()
        z.cumsum_(dim)
        assert_close(z, a.clone().cumsum_(dim), scale=12)
        assert_close(torch.cumsum(x[:0], dim), torch.cumsum(a[:0], dim))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(dim, log, dtype):
    f = torch.log_softmax if log else torch.softmax
    a = rand((4, 7, 33), dtype, -6, 6)
    x = a.to(DEV)
    with on_card():
        assert_close(f(x, dim), f(a, dim), scale=4)
        assert_close(f(x.transpose(1, 2), dim), f(a.transpose(1, 2), dim), scale=4)
        if dtype != torch.float32:  # half_to_float through dtype=
            assert_close(f(x, dim, dtype=torch.float32), f(a, dim, dtype=torch.float32),
                         scale=4)
        assert_close(f(x[:, :0], dim), f(a[:, :0], dim))
    m = a.clone()
    m[0, :, 1] = float("-inf")
    with on_card():
        assert_close(f(m.to(DEV), -1), f(m, -1), scale=4)


# ---- copies and casts on the card -------------------------------------------

CASTS = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8, torch.bool,
         torch.int64]


@pytest.mark.parametrize("src", CASTS, ids=str)
@pytest.mark.parametrize("dst", CASTS, ids=str)
def test_cast(src, dst):
    a = (rand((6, 5), torch.float32, -50, 50)).round().to(src)
    x = a.to(DEV)
    with on_card():
        assert_close(x.to(dst), a.to(dst))
        assert_close(x.t().to(dst), a.t().to(dst))               # strided source
        o = torch.zeros(5, 6, dtype=dst, device=DEV)
        o.t().copy_(x)                                           # strided destination
        assert_close(o, a.t().to(dst))


def test_integer_copies_are_exact():
    big = torch.tensor([[2**31 - 1, -2**31, 2**24 + 1], [123456789, -987654321, 0]],
                       dtype=torch.int32)
    wide = torch.tensor([[2**40 + 3, -2**50 - 1, -1], [2**62, 5, -2**62]], dtype=torch.int64)
    with on_card():
        assert_close(big.to(DEV).t().contiguous(), big.t().contiguous())
        assert_close(wide.to(DEV).t().contiguous(), wide.t().contiguous())
        assert_close(wide.to(DEV)[:, ::2].clone(), wide[:, ::2].clone())
        assert_close(big.to(DEV).t().to(torch.int64), big.t().to(torch.int64))
        assert_close(wide[:, 1:2].expand(2, 4).to(DEV) if False else
                     wide.to(DEV)[:, 1:2].expand(2, 4).contiguous(),
                     wide[:, 1:2].expand(2, 4).contiguous())


def test_copy_shapes_and_overlap():
    a = rand((9, 10), torch.float32)
    with on_card():
        x = a.to(DEV)
        x[1:].copy_(x[:-1].clone())
        r = a.clone()
        r[1:].copy_(a[:-1].clone())
        assert_close(x, r)
        x = a.to(DEV)
        x[:, 1:].copy_(x[:, :-1])                                 # overlapping views
        r = a.clone()
        r[:, 1:] = a[:, :-1].clone()
        assert_close(x, r)
        e = torch.empty(0, 4, device=DEV)
        e.copy_(torch.empty(0, 4, device=DEV, dtype=torch.float16))
        assert e.shape == (0, 4)
        o = torch.empty(3, 4, device=DEV, dtype=torch.float16)
        o.copy_(x[0, :4])                                         # broadcast source
        assert_close(o, r[0, :4].to(torch.float16).expand(3, 4).contiguous())
        s = torch.empty((), device=DEV)
        s.copy_(x[2, 3])
        assert_close(s, r[2, 3])


@pytest.mark.parametrize("dtype", CASTS, ids=str)
def test_fill(dtype):
    with on_card():
        for v in (0, 1, -3, 7):
            if dtype == torch.bool and v not in (0, 1):
                continue
            t = torch.empty(5, 7, device=DEV, dtype=dtype)
            t.t()[::2].fill_(v)             # strided: a fill kernel
            t.fill_(v)
            assert_close(t, torch.full((5, 7), v, dtype=dtype))
            u = torch.zeros(3, 3, device=DEV, dtype=dtype)
            u[:, 1].fill_(v)
            r = torch.zeros(3, 3, dtype=dtype)
            r[:, 1] = v
            assert_close(u, r)
    if dtype.is_floating_point:
        t = torch.zeros(4, 6, device=DEV, dtype=dtype)
        with on_card():
            t[:, ::3].fill_(0.1)
        r = torch.zeros(4, 6, dtype=dtype)
        r[:, ::3] = 0.1
        assert_close(t, r)
