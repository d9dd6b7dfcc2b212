# SPDX-License-Identifier: MIT
"""Integer and bool tensors on the card (ops_integer.cpp): integer ops run
as their float kernels on fp32 copies made on the card and are cast back,
exact for integers of magnitude <= 2^24; any/all/isin and the bitwise ops
on bool operands are composed from card kernels. The CPU fallback is
forbidden: every op here must run on the card."""
import pytest
import torch

D = "spyre"
INTS = [torch.int64, torch.int32]


@pytest.fixture(autouse=True)
def _no_fallback():
    torch.spyre.set_fallback_mode("error")
    yield
    torch.spyre.set_fallback_mode("warn")


def ints(*shape, dtype=torch.int64, lo=-50, hi=50, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def same(got, want):
    assert got.device.type == "spyre"
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_arithmetic_and_comparisons(dtype):
    a, b = ints(3, 5, dtype=dtype), ints(5, dtype=dtype, seed=1)  # broadcasting
    da, db = a.to(D), b.to(D)
    same(da + db, a + b)
    same(da - db, a - b)
    same(da * db, a * b)
    same(da + 7, a + 7)
    same(3 - da, 3 - a)  # rsub
    same(torch.add(da, db, alpha=2), torch.add(a, b, alpha=2))
    same(torch.maximum(da, db), torch.maximum(a, b))
    same(torch.minimum(da, db), torch.minimum(a, b))
    same(-da, -a)
    same(da.abs(), a.abs())
    same(da.clamp(-10, 10), a.clamp(-10, 10))
    for op in (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge):
        same(op(da, db), op(a, b))
        same(op(da, 3), op(a, 3))


def test_mixed_integer_dtypes_and_bool_promote_like_pytorch():
    a, b = ints(4, dtype=torch.int32), ints(4, dtype=torch.int64, seed=2)
    m = torch.tensor([True, False, True, True])
    same(a.to(D) + b.to(D), a + b)  # int64
    same(a.to(D) * m.to(D), a * m)  # int32
    same(m.to(D).sum(), m.sum())  # int64 count


def test_in_place_and_out_variants_write_the_integer_tensor():
    a, b = ints(2, 6), ints(2, 6, seed=3)
    da = a.to(D)
    ptr = da.data_ptr()
    da += b.to(D)
    da.mul_(2)
    assert da.data_ptr() == ptr
    same(da, (a + b) * 2)
    out = torch.empty(0, dtype=torch.int64, device=D)
    torch.sub(a.to(D), b.to(D), out=out)
    same(out, a - b)
    bout = torch.empty(12, dtype=torch.bool, device=D)
    torch.lt(a.to(D), b.to(D), out=bout.view(2, 6))
    same(bout.view(2, 6), a < b)


def test_selection_reductions_and_scans():
    a = ints(4, 7, lo=0, hi=1000)
    m = a % 3 == 0
    da, dm = a.to(D), m.to(D)
    same(da.masked_fill(dm, -1), a.masked_fill(m, -1))
    same(torch.where(dm, da, -da), torch.where(m, a, -a))
    same(da.sum(), a.sum())
    same(da.sum(1, keepdim=True), a.sum(1, keepdim=True))
    same(da.cumsum(1), a.cumsum(1))
    same(dm.cumsum(-1), m.cumsum(-1))
    same(da.max(), a.max())
    same(da.amin(0), a.amin(0))
    v, i = da.max(1)
    same(v, a.max(1).values)
    same(i, a.max(1).indices)
    same(da.argmax(1), a.argmax(1))


def test_exact_up_to_2_pow_24():
    a = torch.tensor([16_000_000, -16_777_000, 5], dtype=torch.int64)
    b = torch.tensor([777_216, -216, -5], dtype=torch.int64)
    same(a.to(D) + b.to(D), a + b)  # |result| = 2^24 at most


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all(op):
    x = torch.tensor([[0, 3, 0], [0, 0, 0], [1, 2, 3]])
    f = torch.tensor([[0.0, 0.5], [float("nan"), 0.0]])
    b = x > 0
    for t in (x, f, b):
        dt = t.to(D)
        same(getattr(dt, op)(), getattr(t, op)())
        same(getattr(dt, op)(1), getattr(t, op)(1))
        same(getattr(dt, op)(0, keepdim=True), getattr(t, op)(0, keepdim=True))
        same(getattr(torch, op)(dt, dim=(0, 1)), getattr(torch, op)(t, dim=(0, 1)))
    empty = torch.zeros(0, 3, dtype=torch.bool)
    same(getattr(empty.to(D), op)(), getattr(empty, op)())
    same(getattr(empty.to(D), op)(0), getattr(empty, op)(0))
    out = torch.empty(3, dtype=torch.bool, device=D)
    getattr(torch, op)(b.to(D), 0, out=out)
    same(out, getattr(torch, op)(b, 0))


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    x = ints(3, 4, lo=0, hi=10)
    t = torch.tensor([1, 4, 7, 9])
    same(torch.isin(x.to(D), t.to(D), invert=invert), torch.isin(x, t, invert=invert))


def test_bitwise_on_bool_and_integer_with_bool():
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    x = torch.tensor([-7, -2, 0, 1, 2, 3, 4_000_001, -4_000_000], dtype=torch.int64)
    m = torch.tensor([True, True, False, True, True, False, True, True])
    for op in (torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor):
        same(op(a.to(D), b.to(D)), op(a, b))
        same(op(x.to(D), m.to(D)), op(x, m))
        same(op(m.to(D), x.to(D)), op(m, x))
    same(a.to(D) & ~b.to(D), a & ~b)
    u = torch.ones(3, dtype=torch.int64)
    done = torch.tensor([False, True, False])
    same(u.to(D) & ~done.to(D), u & ~done)  # transformers' generate loop


def test_integer_bitwise_between_integers_is_a_named_fallback():
    x = ints(4).to(D)
    with pytest.raises(NotImplementedError, match="bitwise_and"):
        torch.bitwise_and(x, x)


def test_narrow_integer_arithmetic_is_a_named_fallback():
    # int8 arithmetic wraps around (100 * 3 == 44): the fp32 unit would
    # saturate, so it is refused in error mode instead of answering wrong
    x = torch.tensor([100, -3], dtype=torch.int8).to(D)
    with pytest.raises(NotImplementedError, match="mul"):
        x * 3


def test_integer_division_is_not_rounded_through_this_path():
    # true division of integers is a float op (the float kernel); floor
    # division stays a named fallback rather than a wrong answer
    a, b = ints(5, lo=1, hi=40), ints(5, lo=1, hi=9, seed=4)
    torch.testing.assert_close((a.to(D) / b.to(D)).cpu(), a / b)
    with pytest.raises(NotImplementedError, match="div"):
        torch.div(a.to(D), b.to(D), rounding_mode="floor")
