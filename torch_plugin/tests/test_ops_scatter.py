# SPDX-License-Identifier: MIT
"""The writing side of indexing along any dim, on the card against the CPU
with the fallback forbidden: scatter (src, value, reduce=), scatter_add,
scatter_reduce, index_add, index_copy, index_reduce, index_fill, put, and
take and index_select of bool. Duplicate indices are compared only where
PyTorch defines the result (sums, products, means, amax/amin), never for
scatter/index_copy/put's undefined winner."""
import math

import pytest
import torch

D = "spyre"

pytestmark = pytest.mark.usefixtures("card_only")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool]
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-4, 5, shape, generator=g)
    if dtype == torch.bool:
        return x > 0
    x = x.to(dtype)
    if dtype.is_floating_point and x.numel() > 4:
        x.view(-1)[1] = math.nan
        x.view(-1)[2] = -0.0
        x.view(-1)[3] = math.inf
    return x


def same(got, want):
    assert got.device.type == "spyre" and got.dtype == want.dtype and got.shape == want.shape
    got = got.cpu()
    if want.dtype.is_floating_point:
        tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[want.dtype]
        torch.testing.assert_close(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        assert torch.equal(got, want), (got, want)


def unique_index(shape, dim, size, seed):
    """An int64 index of @shape whose entries along @dim never repeat."""
    g = torch.Generator().manual_seed(seed)
    moved = list(shape)
    moved.append(moved.pop(dim))
    rows = [torch.randperm(size, generator=g)[:moved[-1]] for _ in range(math.prod(moved[:-1]))]
    return torch.stack(rows).view(moved).movedim(-1, dim)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_add_and_reduce_every_dim(dtype, dim):
    x = data((3, 4, 5), dtype, 1)
    src = data((4, 5, 6), dtype, 2)  # larger than index: only index's part is read
    idx = torch.randint(0, x.shape[dim], (2, 3, 4), generator=torch.Generator().manual_seed(3))
    same(x.to(D).scatter_add(dim, idx.to(D), src.to(D)), x.scatter_add(dim, idx, src))
    same(x.to(D).scatter_add(dim, idx.to(D).int(), src.to(D)), x.scatter_add(dim, idx.int(), src))
    for r in REDUCES:
        if dtype == torch.bool and r == "mean":
            continue
        for inc in (True, False):
            same(x.to(D).scatter_reduce(dim, idx.to(D), src.to(D), r, include_self=inc),
                 x.scatter_reduce(dim, idx, src, r, include_self=inc))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 2, -2])
def test_scatter_with_unique_indices(dtype, dim):
    x = data((3, 4, 5), dtype, 4)
    src = data((3, 4, 5), dtype, 5)
    shape = [2, 3, 4]
    shape[dim] = 2
    idx = unique_index(shape, dim % 3, x.shape[dim], 6)
    same(x.to(D).scatter(dim, idx.to(D), src.to(D)), x.scatter(dim, idx, src))
    same(x.to(D).scatter(dim, idx.to(D), 1), x.scatter(dim, idx, 1))
    if dtype != torch.bool:
        for r in ("add", "multiply"):
            same(x.to(D).scatter(dim, idx.to(D), src.to(D), reduce=r),
                 x.scatter(dim, idx, src, reduce=r))
            same(x.to(D).scatter(dim, idx.to(D), 3, reduce=r), x.scatter(dim, idx, 3, reduce=r))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_ops_every_dim(dtype, dim):
    x = data((3, 4, 5), dtype, 7)
    g = torch.Generator().manual_seed(8)
    dup = torch.randint(0, x.shape[dim], (6,), generator=g)  # duplicates
    shape = list(x.shape)
    shape[dim] = 6
    src = data(tuple(shape), dtype, 9)
    same(x.to(D).index_add(dim, dup.to(D), src.to(D)), x.index_add(dim, dup, src))
    same(x.to(D).index_add(dim, dup.to(D).int(), src.to(D)), x.index_add(dim, dup.int(), src))
    if dtype != torch.bool:
        same(x.to(D).index_add(dim, dup.to(D), src.to(D), alpha=2),
             x.index_add(dim, dup, src, alpha=2))
    for r in ("prod", "mean", "amax", "amin"):
        if dtype == torch.bool:
            continue
        for inc in (True, False):
            same(x.to(D).index_reduce(dim, dup.to(D), src.to(D), r, include_self=inc),
                 x.index_reduce(dim, dup, src, r, include_self=inc))
    uniq = torch.randperm(x.shape[dim], generator=g)[:2]
    shape[dim] = 2
    src2 = data(tuple(shape), dtype, 10)
    same(x.to(D).index_copy(dim, uniq.to(D), src2.to(D)), x.index_copy(dim, uniq, src2))
    neg = dup - x.shape[dim]  # index_fill wraps negative indices
    same(x.to(D).index_fill(dim, neg.to(D), 1), x.index_fill(dim, neg, 1))
    v = torch.tensor(0, dtype=dtype)
    same(x.to(D).index_fill(dim, dup.to(D), v.to(D)), x.index_fill(dim, dup, v))
    same(x.to(D).index_fill(dim, dup.to(D), v), x.index_fill(dim, dup, v))


def test_exact_int64_beyond_fp32():
    big = 2 ** 40 + 3
    x = torch.tensor([[big, -big, 5], [1, 2 ** 24 + 1, -(2 ** 62)]])
    src = torch.tensor([[7, 2 ** 53 + 1, -1], [2 ** 24 + 3, 1, 2 ** 62]])
    idx = torch.tensor([[2, 2, 0], [1, 1, 1]])
    for r in REDUCES:
        same(x.to(D).scatter_reduce(1, idx.to(D), src.to(D), r),
             x.scatter_reduce(1, idx, src, r))
    same(x.to(D).scatter_add(1, idx.to(D), src.to(D)), x.scatter_add(1, idx, src))
    # int64 products wrap as on the CPU
    w = torch.tensor([2 ** 40, 2 ** 40, 3])
    same(w.to(D).scatter_reduce(0, torch.tensor([0, 0]).to(D), w[:2].to(D), "prod"),
         w.scatter_reduce(0, torch.tensor([0, 0]), w[:2], "prod"))
    same(x.to(D).index_add(0, torch.tensor([1, 1]).to(D), src.to(D)),
         x.index_add(0, torch.tensor([1, 1]), src))
    same(x.to(D).take(torch.tensor([4, -1]).to(D)), x.take(torch.tensor([4, -1])))


def test_nan_signed_zero_and_inf():
    nan, inf = math.nan, math.inf
    x = torch.tensor([-0.0, 1.0, -0.0, 2.0, 5.0])
    src = torch.tensor([nan, 3.0, -0.0, inf, -inf, 1.0])
    idx = torch.tensor([0, 0, 2, 3, 3, 4])
    for r in REDUCES:
        for inc in (True, False):
            same(x.to(D).scatter_reduce(0, idx.to(D), src.to(D), r, include_self=inc),
                 x.scatter_reduce(0, idx, src, r, include_self=inc))
    # an untouched -0.0 stays -0.0
    got = x.to(D).scatter_add(0, torch.tensor([4]).to(D), torch.tensor([1.0]).to(D)).cpu()
    assert math.copysign(1, got[0].item()) == -1 and math.copysign(1, got[2].item()) == -1


def test_forms_out_inplace_and_non_contiguous():
    x = data((5, 6), torch.float32, 11)
    idx = torch.tensor([[0, 4, 4], [2, 2, 1]])
    src = data((4, 3), torch.float32, 12)
    want = x.t().scatter_add(0, idx, src[:2])
    # non-contiguous self (a transpose), index (a slice) and src (a slice)
    bigidx = torch.zeros(2, 6, dtype=torch.long)
    bigidx[:, ::2] = idx
    xd = x.to(D).t()
    same(xd.scatter_add(0, bigidx.to(D)[:, ::2], src.to(D)[:2]), want)
    xi = x.clone().to(D).t()
    r = xi.scatter_add_(0, bigidx.to(D)[:, ::2], src.to(D)[:2])
    assert r is xi
    same(xi, want)
    out = torch.empty(0, device=D)
    r = torch.scatter_add(x.to(D).t(), 0, idx.to(D), src.to(D)[:2], out=out)
    assert r is out
    same(out, want)
    out = torch.empty(0, device=D)
    ones = torch.ones(5, 2)
    torch.index_add(x.to(D), 1, torch.tensor([5, 0]).to(D), ones.to(D), out=out)
    same(out, x.index_add(1, torch.tensor([5, 0]), ones))
    y = x.to(D)
    y.index_fill_(1, torch.tensor([1]).to(D), -2.0)
    same(y, x.index_fill(1, torch.tensor([1]), -2.0))
    p = x.to(D)
    p.put_(torch.tensor([0, -1, 7]).to(D), torch.tensor([9.0, 8.0, 7.0]).to(D))
    same(p, x.put(torch.tensor([0, -1, 7]), torch.tensor([9.0, 8.0, 7.0])))
    same(x.to(D).put(torch.tensor([3, 3]).to(D), torch.tensor([1.0, 2.0]).to(D), accumulate=True),
         x.put(torch.tensor([3, 3]), torch.tensor([1.0, 2.0]), accumulate=True))


def test_empty_and_zero_dim():
    x = data((3, 4), torch.float32, 13)
    e = torch.empty(0, 4, dtype=torch.long)
    same(x.to(D).scatter_add(0, e.to(D), x.to(D)), x.scatter_add(0, e, x))
    same(x.to(D).index_add(0, torch.empty(0, dtype=torch.long).to(D), x[:0].to(D)), x)
    s = torch.tensor(3.0)
    same(s.to(D).scatter_add(0, torch.tensor(0).to(D), torch.tensor(2.0).to(D)),
         s.scatter_add(0, torch.tensor(0), torch.tensor(2.0)))
    same(s.to(D).index_fill(0, torch.tensor([0]).to(D), 1.0),
         s.index_fill(0, torch.tensor([0]), 1.0))
    z = torch.empty(0, 3)
    none = torch.empty(0, dtype=torch.long)
    same(z.to(D).take(none.to(D)), z.take(none))
    b = data((4, 3), torch.bool, 14)
    i = torch.tensor([3, 0, 0])
    same(b.to(D).index_select(0, i.to(D)), b.index_select(0, i))
    same(b.to(D).index_select(1, i[1:].to(D)), b.index_select(1, i[1:]))


def test_out_of_range_raises_like_the_cpu():
    x = torch.zeros(3, 4, device=D)
    one = torch.ones(1, 1, device=D)
    for bad in (4, -1):
        i = torch.tensor([[bad]], device=D)
        with pytest.raises(RuntimeError, match=f"index {bad} is out of bounds for dimension 1"):
            x.scatter_add(1, i, one)
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.scatter(1, i, 1.0)
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.index_add(1, i.view(1), torch.ones(3, 1, device=D))
        with pytest.raises(IndexError, match="out of bounds"):
            x.index_copy(1, i.view(1), torch.ones(3, 1, device=D))
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_fill(1, torch.tensor([-5], device=D), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        x.take(torch.tensor([12], device=D))
    with pytest.raises(IndexError, match="out of bounds"):
        x.put_(torch.tensor([-13], device=D), torch.ones(1, device=D))
    # nothing was written by the refused calls
    assert torch.equal(x.cpu(), torch.zeros(3, 4))
    with pytest.raises(RuntimeError, match="int32/int64 for index"):
        x.scatter_add(1, torch.zeros(1, 1, device=D), one)
    with pytest.raises(RuntimeError, match="long tensor for index"):
        x.take(torch.zeros(1, dtype=torch.int32, device=D))
    with pytest.raises(RuntimeError, match="no larger than self"):
        x.scatter_add(0, torch.zeros(1, 5, dtype=torch.long, device=D), torch.ones(1, 5, device=D))
    with pytest.raises(RuntimeError, match="reduce argument"):
        x.scatter_reduce(1, torch.zeros(1, 1, dtype=torch.long, device=D), one, "max")


def test_many_rows_in_steps():
    # 2 x 4100 x 4100 match elements: more than one step of 2^24
    g = torch.Generator().manual_seed(15)
    n = 4100
    x = torch.randn(2, n, generator=g)
    src = torch.randn(2, n, generator=g)
    idx = torch.randint(0, n, (2, n), generator=g)
    same(x.to(D).scatter_add(1, idx.to(D), src.to(D)), x.scatter_add(1, idx, src))
    perm = torch.stack([torch.randperm(n, generator=g) for _ in range(2)])
    same(x.to(D).scatter(1, perm.to(D), src.to(D)), x.scatter(1, perm, src))


def test_beyond_the_card_limit_is_refused_not_wrong():
    # top-p sampling's scatter over a 32k vocabulary: 2^30 match elements
    # per row is past the card path's bound; error mode names the op
    n = 32768
    x = torch.zeros(1, n, device=D)
    idx = torch.arange(n, device=D).view(1, n)
    with pytest.raises(NotImplementedError, match="scatter"):
        x.scatter(1, idx, x)
