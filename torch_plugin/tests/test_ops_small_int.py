# SPDX-License-Identifier: MIT
"""int8, uint8 and int16 arithmetic on the card (through int32, wrapped
back: ops_small_int.cpp), the general index_put_, masked_scatter_ and the
last random distributions. Integers compare bit for bit with the CPU; the
CPU fallback is forbidden, so an op either runs exactly on the card or
raises naming spyre."""
import pytest
import torch

D = "spyre"
SMALL = [torch.int8, torch.uint8, torch.int16]


@pytest.fixture(autouse=True)
def _no_fallback():
    torch.spyre.set_fallback_mode("error")
    yield
    torch.spyre.set_fallback_mode("warn")


def same(got, want):
    assert got.device.type == "spyre"
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


def every(dtype):
    """Every value of an 8-bit dtype; int16's bounds, signs and carries."""
    if dtype != torch.int16:
        i = torch.iinfo(dtype)
        return torch.arange(i.min, i.max + 1).to(dtype)
    v = [32767, -32768, 32766, -32767, 255, 256, -256, -255, 128, -129, 181, 182, -1, 0, 1, 7,
         -7, 12345, -12345, 300, -300, 1000]
    return torch.tensor(v, dtype=dtype)


def pair(dtype):
    a = every(dtype)
    g = torch.Generator().manual_seed(1)
    b = a[torch.randperm(a.numel(), generator=g)]
    return a, b


@pytest.mark.parametrize("dtype", SMALL, ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "bitwise_and", "bitwise_or", "bitwise_xor",
                                "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
                                "logical_and", "logical_or", "div"])
def test_binary_wraps_as_the_cpu(dtype, op):
    a, b = pair(dtype)
    f = getattr(torch, op)
    same(f(a.to(D), b.to(D)), f(a, b))
    # broadcast, and a Python number (wrapped to the dtype first, also in compares)
    same(f(a.to(D)[:, None], b.to(D)[:7]), f(a[:, None], b[:7]))
    if op in ("maximum", "minimum", "logical_and", "logical_or"):
        return  # no Scalar overload
    for s in (3, 100, 300, -129):
        if op in ("div",) or not (dtype == torch.uint8 and s < 0):
            same(f(a.to(D), s), f(a, s))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_division_and_shifts(dtype):
    a, b = pair(dtype)
    b = torch.where(b == 0, torch.ones_like(b), b)
    for op in ("floor_divide", "remainder"):
        f = getattr(torch, op)
        same(f(a.to(D), b.to(D)), f(a, b))
    if dtype != torch.uint8:  # -128 // -1 wraps to -128
        m = torch.tensor([torch.iinfo(dtype).min], dtype=dtype)
        same(m.to(D) // -1, m // -1)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a.to(D) // torch.zeros_like(a).to(D)
    s = torch.arange(a.numel()).remainder(20).to(dtype)   # shifts past the width too
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        f = getattr(torch, op)
        same(f(a.to(D), s.to(D)), f(a, s))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_unary_and_reductions(dtype):
    a = every(dtype)
    x = a.to(D)
    for f in (torch.neg, torch.abs, torch.bitwise_not, torch.logical_not):
        same(f(x), f(a))
    same(x.sum(), a.sum())                       # int64 by default
    same(x.sum(dtype=dtype), a.sum(dtype=dtype))  # wraps in the small dtype
    same(x.view(-1, 2).sum(1), a.view(-1, 2).sum(1))
    same(torch.cumsum(x, 0), torch.cumsum(a, 0))
    same(torch.cumsum(x, 0, dtype=dtype), torch.cumsum(a, 0, dtype=dtype))
    same(x.max(), a.max())
    same(x.min(), a.min())
    same(torch.amax(x.view(2, -1), 1), torch.amax(a.view(2, -1), 1))


@pytest.mark.parametrize("dtype", SMALL, ids=str)
def test_in_place_out_and_promotion(dtype):
    a, b = pair(dtype)
    x = a.to(D).clone()
    x.add_(b.to(D), alpha=3)
    same(x, a.clone().add_(b, alpha=3))
    x = a.to(D).clone()
    x.mul_(7)
    same(x, a * 7)
    out = torch.empty(0, dtype=torch.int32, device=D)
    torch.add(a.to(D), b.to(D), out=out)  # computed in the small dtype, then widened
    same(out, torch.add(a, b, out=torch.empty(0, dtype=torch.int32)))
    # a wider operand promotes: nothing wraps
    w = torch.full_like(a, 5, dtype=torch.int32)
    same(a.to(D) * w.to(D), a * w)
    same(a.to(D) + 0.5, a + 0.5)
    with pytest.raises(RuntimeError, match="without overflow"):
        a.to(D).add(b.to(D), alpha=100000)
    # empty and non-contiguous
    e = torch.empty(0, 3, dtype=dtype)
    same(e.to(D) + e.to(D), e + e)
    same(e.to(D).sum(), e.sum())
    t = a[: (a.numel() // 2) * 2].view(2, -1)
    same(t.to(D).t() - 1, t.t() - 1)


def _put_apart(x, i, k, v, acc):
    """x[i, :, k] = v (or +=) through index_put_ (dims 0 and 2 indexed)."""
    y = x.clone()
    return torch.ops.aten.index_put(y, [i, None, k], v, acc)


def test_index_put_beyond_one_row_index():
    x = torch.arange(60.).view(3, 4, 5)
    i = torch.tensor([0, 2, 2, -1])
    j = torch.tensor([1, 3, 3, 0])
    v = torch.arange(4.) + 100
    for acc in (False, True):   # duplicates: the last write wins / all add up
        same(x.to(D).index_put((i.to(D), j.to(D)), v[:, None].to(D), accumulate=acc),
             x.index_put((i, j), v[:, None], accumulate=acc))
    # an index on a later dim, and broadcast index tensors
    y, yd = x.clone(), x.to(D)
    y[:, j] = -1.0
    yd[:, j.to(D)] = -1.0
    same(yd, y)
    b0, b1 = torch.arange(3)[:, None], j[None, :]
    same(x.to(D).index_put((b0.to(D), b1.to(D)), torch.tensor(-2.).to(D)),
         x.index_put((b0, b1), torch.tensor(-2.)))
    # indexed dims apart (the selected dims move first)
    ii, kk = torch.tensor([[0], [2]]), torch.tensor([[1, 4, 4]])
    vals = torch.arange(24.).view(2, 3, 4)
    for acc in (False, True):
        same(_put_apart(x.to(D), ii.to(D), kk.to(D), vals.to(D), acc),
             _put_apart(x, ii, kk, vals, acc))
    # integers accumulate exactly, past 2^24
    n = torch.zeros(4, 3, dtype=torch.int64)
    r, c = torch.tensor([1, 1, 3]), torch.tensor([2, 2, 0])
    big = torch.tensor([2 ** 40 + 1, 2 ** 40 + 3, -5])
    same(n.to(D).index_put_((r.to(D), c.to(D)), big.to(D), accumulate=True),
         n.clone().index_put_((r, c), big, accumulate=True))
    # a bool mask with a value per selected element, and with integers after it
    m = x[:, :, 0] > 20
    same(x.to(D).index_put((m.to(D),), torch.arange(5.)[None].expand(int(m.sum()), 5).contiguous().to(D)),
         x.index_put((m,), torch.arange(5.)[None].expand(int(m.sum()), 5).contiguous()))
    # out of range raises as the CPU does, writes nothing
    xd = x.to(D)
    with pytest.raises(IndexError, match="out of bounds"):
        xd.index_put_((i.to(D), torch.tensor([0, 1, 2, 4]).to(D)), v[:, None].to(D))
    same(xd, x)
    # empty index
    same(x.to(D).index_put((i[:0].to(D), j[:0].to(D)), v[:0, None].to(D)), x)


def test_masked_scatter():
    x = torch.arange(12.).view(3, 4)
    m = torch.tensor([[True, False, True, True], [False] * 4, [True, False, False, True]])
    src = -torch.arange(10.) - 1
    same(x.to(D).masked_scatter(m.to(D), src.to(D)), x.masked_scatter(m, src))
    row = torch.tensor([False, True, False, True])   # broadcast mask
    same(x.to(D).masked_scatter(row.to(D), src.to(D)), x.masked_scatter(row, src))
    xi = torch.arange(12, dtype=torch.int64).view(3, 4) + 2 ** 40
    same(xi.to(D).masked_scatter(m.to(D), (src.long() - 2 ** 41).to(D)),
         xi.masked_scatter(m, src.long() - 2 ** 41))
    same(x.to(D).masked_scatter(torch.zeros_like(m).to(D), src[:0].to(D)), x)
    with pytest.raises(RuntimeError, match="source < number of ones"):
        x.to(D).masked_scatter(m.to(D), src[:3].to(D))


def test_log_normal_cauchy_geometric_on_the_card():
    torch.spyre.manual_seed(5)
    n = 200_000
    ln = torch.empty(n, device=D).log_normal_(0.5, 0.25).cpu()
    assert (ln > 0).all()
    assert abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.25) < 0.01
    c = torch.empty(n, device=D).cauchy_(2.0, 3.0).cpu()
    assert abs(c.median().item() - 2.0) < 0.1   # the median, and quartiles at +-sigma
    q = torch.quantile(c[:100_000], torch.tensor([0.25, 0.75]))
    assert abs(q[0].item() + 1.0) < 0.15 and abs(q[1].item() - 5.0) < 0.15
    for dt in (torch.float32, torch.int64, torch.int32):
        g = torch.empty(n, device=D, dtype=dt).geometric_(0.25).cpu()
        assert g.min().item() >= 1
        assert abs(g.float().mean().item() - 4.0) < 0.05   # 1/p
        assert abs((g == 1).float().mean().item() - 0.25) < 0.01
    torch.spyre.manual_seed(5)
    again = torch.empty(n, device=D).log_normal_(0.5, 0.25).cpu()
    assert torch.equal(again, ln)
    with pytest.raises(RuntimeError, match="geometric_ expects p"):
        torch.empty(3, device=D).geometric_(1.5)
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma"):
        torch.empty(3, device=D).cauchy_(0, -1)
    assert torch.empty(0, device=D).log_normal_().numel() == 0


def test_rng_state_as_dtensor_uses_it():
    """DTensor's OffsetBasedRNGTracker reads get_rng_state() as (seed: uint64,
    offset: uint64), moves the offset to shard_index * local_numel (rounded
    to 4) before a random op and to the old offset + numel after it. Every
    offset is its own Philox stream here: shards at different offsets draw
    different numbers, replicas at the same offset the same ones, and the
    op reads exactly the offset the state was given."""
    from torch.distributed.tensor._random import _PhiloxState
    torch.spyre.manual_seed(123)
    st = _PhiloxState(torch.spyre.get_rng_state())
    assert st.seed.item() == 123 and st.offset.item() == 0
    draws = {}
    for shard, offset in ((0, 0), (1, 8), (0, 0)):
        s = _PhiloxState(torch.spyre.get_rng_state())
        s.offset = torch.tensor([offset], dtype=torch.uint64)
        torch.spyre.set_rng_state(s.state)
        draws.setdefault(shard, []).append(torch.rand(8, device=D).cpu())
        after = _PhiloxState(torch.spyre.get_rng_state())
        assert after.offset.item() == offset + 1 and after.seed.item() == 123
    assert torch.equal(draws[0][0], draws[0][1])        # a replica: the same numbers
    assert not torch.isclose(draws[0][0], draws[1][0]).any()  # another shard: others
    g = torch.Generator(device=D)
    g.manual_seed(123)
    g.set_offset(8)
    assert torch.equal(torch.rand(8, device=D, generator=g).cpu(), draws[1][0])


def test_scatter_family_past_2_pow_24_and_past_its_limit():
    # a destination number beyond fp32's exact integers: exact (int64 match)
    n = 2 ** 24 + 16
    x = torch.zeros(n)
    idx = torch.tensor([2 ** 24 + 1, 2 ** 24 + 3, 2 ** 24 + 3, 5])
    src = torch.tensor([1.0, 2.0, 3.0, 4.0])
    got = x.to(D).scatter_add(0, idx.to(D), src.to(D)).cpu()
    assert torch.equal(got, x.scatter_add(0, idx, src))
    assert got[2 ** 24 + 3].item() == 5.0 and got[2 ** 24 + 2].item() == 0.0
    # beyond the match work one call takes: refused naming the op, no value
    big = torch.zeros(2 ** 12, 2 ** 10, device=D)
    i = torch.zeros(2 ** 12, 2 ** 10, dtype=torch.int64, device=D)
    with pytest.raises(NotImplementedError, match="scatter_add"):
        big.scatter_add(1, i, big)
