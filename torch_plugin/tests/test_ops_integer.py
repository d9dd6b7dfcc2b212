# SPDX-License-Identifier: MIT
"""Integer and bool tensors on the card: exact, as PyTorch's CPU results.

From card interface 1.9 the vector unit computes int32 and int64 exactly in
its integer mode (two's-complement wraparound, floor division, truncating
casts); nothing integer goes through fp32. Every test compares bit for bit
with the CPU on values beyond 2^24 and 2^32, where fp32 would round. The
CPU fallback is forbidden here: an op either runs exactly on the card or
raises (NotImplementedError naming it)."""
import pytest
import torch

D = "spyre"
INTS = [torch.int64, torch.int32]
I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1
I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1


@pytest.fixture(autouse=True)
def _no_fallback():
    torch.spyre.set_fallback_mode("error")
    yield
    torch.spyre.set_fallback_mode("warn")


def ints(*shape, dtype=torch.int64, lo=-50, hi=50, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def edges(dtype):
    """Values at the bounds and where fp32 stops being exact."""
    if dtype == torch.int64:
        v = [I64_MAX, I64_MIN, 2 ** 40 + 3, -(2 ** 40) - 3, 2 ** 32 + 1, -(2 ** 32),
             2 ** 24 + 1, -(2 ** 24) - 1, 46341, -7, 7, 0, -1, 1, 3037000500, I32_MIN]
    else:
        v = [I32_MAX, I32_MIN, 2 ** 30 + 3, -(2 ** 30) - 3, 2 ** 24 + 1, -(2 ** 24) - 1,
             46341, 46340, -7, 7, 0, -1, 1, 65536, -65537, 2 ** 31 - 2]
    return torch.tensor(v, dtype=dtype)


def same(got, want):
    assert got.device.type == "spyre"
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


# ---- the reproductions of issue 25 -------------------------------------------

def test_large_int64_plus_one_is_exact():
    x = torch.full((4,), 2 ** 40 + 3, dtype=torch.int64)
    same(x.to(D) + 1, x + 1)
    assert (x.to(D) + 1).cpu().tolist() == [1099511627780] * 4


def test_arange_beyond_2_pow_24_plus_one_is_exact():
    x = torch.arange(2 ** 24, 2 ** 24 + 4, dtype=torch.int64)
    same(x.to(D) + 1, x + 1)
    same(torch.arange(2 ** 24, 2 ** 24 + 4, dtype=torch.int64, device=D), x)
    same(torch.arange(2 ** 24, 2 ** 24 + 8, 3, dtype=torch.int32, device=D),
         torch.arange(2 ** 24, 2 ** 24 + 8, 3, dtype=torch.int32))


def test_int32_multiply_wraps_like_pytorch():
    x = torch.tensor([46341, 3], dtype=torch.int32)
    same(x.to(D) * 46341, x * 46341)
    assert (x.to(D) * 46341).cpu().tolist()[0] == -2147479015


def test_float_to_int_truncates_toward_zero():
    x = torch.tensor([-1.7, 1.7, -0.5, 0.5, -0.0, 2.5, -2.5])
    for dt in (torch.int64, torch.int32, torch.int8):
        same(x.to(D).to(dt), x.to(dt))
    assert x.to(D).to(torch.int64).cpu().tolist()[:2] == [-1, 1]


def test_float_to_int_out_of_range_and_nan_match_the_cpu():
    # C++ leaves these undefined; x86 (PyTorch's CPU) gives the "integer
    # indefinite" minimum, and so does the card (Documentation/spyre-card.rst)
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e10, -1e10, 1e19,
                      2147483648.0, -2147483904.0, 300.0, -129.5])
    for src in (x, x.half(), x.bfloat16()):
        for dt in (torch.int64, torch.int32, torch.int8):
            same(src.to(D).to(dt), src.to(dt))
    same(x.to(D).to(torch.bool), x.to(torch.bool))


# ---- arithmetic at the edges -------------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_add_sub_mul_wrap_at_the_bounds(dtype):
    a = edges(dtype)
    b = a.flip(0)
    da, db = a.to(D), b.to(D)
    for op in (torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum):
        same(op(da, db), op(a, b))
    same(da + 1, a + 1)
    same(da - 1, a - 1)
    same(5 - da, 5 - a)  # rsub
    same(torch.add(da, db, alpha=3), torch.add(a, b, alpha=3))
    same(da * -1, a * -1)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_neg_abs_of_the_minimum_wrap(dtype):
    a = edges(dtype)
    same(-a.to(D), -a)
    same(a.to(D).abs(), a.abs())
    same(torch.bitwise_not(a.to(D)), torch.bitwise_not(a))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_comparisons_of_values_differing_above_2_pow_24_and_2_pow_32(dtype):
    base = [2 ** 24, -(2 ** 24), 2 ** 30] if dtype == torch.int32 else \
        [2 ** 24, 2 ** 32, -(2 ** 40), 2 ** 62]
    a = torch.tensor([v + d for v in base for d in (0, 1, -1)], dtype=dtype)
    b = torch.tensor([v for v in base for _ in range(3)], dtype=dtype)
    for op in (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge):
        same(op(a.to(D), b.to(D)), op(a, b))
        same(op(a.to(D), base[0] + 1), op(a, base[0] + 1))
        same(op(a.to(D), 2.5), op(a, 2.5))  # promotes to float, as PyTorch


def test_casts_between_integer_widths_and_to_float_and_bool():
    a = edges(torch.int64)
    same(a.to(D).to(torch.int32), a.to(torch.int32))  # the low 32 bits
    same(a.to(D).to(torch.int8), a.to(torch.int8))
    same(a.to(D).to(torch.float32), a.to(torch.float32))  # nearest even
    same(a.to(D).to(torch.float16), a.to(torch.float16))
    same(a.to(D).to(torch.bfloat16), a.to(torch.bfloat16))
    same(a.to(D).to(torch.bool), a.to(torch.bool))
    b = edges(torch.int32)
    same(b.to(D).to(torch.int64), b.to(torch.int64))
    same(b.to(D).to(torch.float32), b.to(torch.float32))
    m = torch.tensor([True, False, True])
    same(m.to(D).to(torch.int64), m.to(torch.int64))
    same(m.to(D).to(torch.int32), m.to(torch.int32))


def test_mixed_integer_dtypes_and_bool_promote_like_pytorch():
    a, b = edges(torch.int32), edges(torch.int64)
    m = torch.tensor([True, False] * 8)
    same(a.to(D) + b.to(D), a + b)  # int64
    same(a.to(D) * m.to(D), a * m)  # int32
    same(m.to(D).sum(), m.sum())  # int64 count


def test_in_place_and_out_variants_write_the_integer_tensor():
    a, b = ints(2, 6) * 2 ** 35, ints(2, 6, seed=3)
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


# ---- division ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_floor_divide_and_remainder_round_toward_minus_infinity(dtype):
    a = torch.tensor([7, -7, 7, -7, 0, 2 ** 30 + 3, -(2 ** 30) - 3, 5], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, -5, 2 ** 20, 2 ** 20, -1], dtype=dtype)
    same(a.to(D) // b.to(D), a // b)
    same(a.to(D) % b.to(D), a % b)
    same(torch.div(a.to(D), b.to(D), rounding_mode="floor"),
         torch.div(a, b, rounding_mode="floor"))
    same(a.to(D) // 3, a // 3)
    same(a.to(D) % -3, a % -3)
    m = torch.tensor([I64_MIN if dtype == torch.int64 else I32_MIN], dtype=dtype)
    same(m.to(D) // -1, m // -1)  # wraps to the minimum, as PyTorch
    same(m.to(D) % -1, m % -1)


def test_integer_division_by_zero_raises_never_a_value():
    a, b = torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])
    for f in (lambda x, y: x // y, lambda x, y: x % y):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            f(a, b)  # the CPU's behaviour
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            f(a.to(D), b.to(D)).cpu()
    # the device stays usable afterwards
    same(a.to(D) // 1, a // 1)


def test_true_division_of_integers_is_float():
    a, b = edges(torch.int64), torch.tensor([3] * 16)
    same(a.to(D) / b.to(D), a / b)


# ---- bitwise ops and shifts --------------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_bitwise_ops_and_shifts(dtype):
    a = edges(dtype)
    b = a.flip(0)
    for op in (torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor):
        same(op(a.to(D), b.to(D)), op(a, b))
        same(op(a.to(D), 0x0F0F), op(a, 0x0F0F))
    s = torch.tensor([0, 1, 31, 32, 33, 63, 64, 100, -1, 2, 3, 7, 8, 15, 16, 40], dtype=dtype)
    same(a.to(D) << s.to(D), a << s)
    same(a.to(D) >> s.to(D), a >> s)


def test_bitwise_on_bool_and_integer_with_bool():
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    x = torch.tensor([-7, -2, 0, 1, 2, 3, 2 ** 40 + 1, -(2 ** 33)], dtype=torch.int64)
    m = torch.tensor([True, True, False, True, True, False, True, True])
    for op in (torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor):
        same(op(a.to(D), b.to(D)), op(a, b))
        same(op(x.to(D), m.to(D)), op(x, m))
        same(op(m.to(D), x.to(D)), op(m, x))
    same(a.to(D) & ~b.to(D), a & ~b)
    u = torch.ones(3, dtype=torch.int64)
    done = torch.tensor([False, True, False])
    same(u.to(D) & ~done.to(D), u & ~done)  # transformers' generate loop


# ---- selection, reductions, scans --------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_selection_reductions_and_scans(dtype):
    a = edges(dtype).reshape(4, 4)
    m = torch.tensor([[True, False, False, True]] * 4)
    da, dm = a.to(D), m.to(D)
    same(da.masked_fill(dm, -1), a.masked_fill(m, -1))
    same(torch.where(dm, da, -da), torch.where(m, a, -a))
    same(da.clamp(-(2 ** 24), 2 ** 24 + 5), a.clamp(-(2 ** 24), 2 ** 24 + 5))
    same(da.clamp(min=3), a.clamp(min=3))
    same(da.sum(), a.sum())  # int64, wrapping as the CPU's
    same(da.sum(1, keepdim=True), a.sum(1, keepdim=True))
    same(da.sum((0, 1)), a.sum((0, 1)))
    same(da.cumsum(1), a.cumsum(1))
    same(dm.cumsum(-1), m.cumsum(-1))
    same(da.max(), a.max())
    same(da.min(), a.min())
    same(da.amax(1), a.amax(1))
    same(da.amin(0), a.amin(0))
    v, i = da.max(1)
    same(v, a.max(1).values)
    same(i, a.max(1).indices)
    v, i = da.min(1)
    same(v, a.min(1).values)
    same(i, a.min(1).indices)
    same(da.argmax(1), a.argmax(1))


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all(op):
    x = torch.tensor([[0, 3, 0], [0, 0, 0], [1, 2, 2 ** 40]])
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
    x = ints(3, 4, lo=0, hi=10) + 2 ** 33
    t = torch.tensor([1, 4, 7, 9]) + 2 ** 33
    same(torch.isin(x.to(D), t.to(D), invert=invert), torch.isin(x, t, invert=invert))


def test_bool_arithmetic_and_masked_fill():
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    for op in (torch.add, torch.mul, torch.maximum, torch.minimum):
        same(op(a.to(D), b.to(D)), op(a, b))
    m = torch.tensor([False, True, True, False])
    same(a.to(D).masked_fill(m.to(D), True), a.masked_fill(m, True))
    x = a.to(D)
    x[m.to(D)] = False
    same(x, a.masked_fill(m, False))


def test_histc_of_integers_counts_exactly():
    # CUDA's semantics (the CPU takes floats only): the result keeps x's dtype
    x = torch.tensor([0, 3, 1, 1, 3, 2, 7, -1, 3], dtype=torch.int64)
    got = torch.histc(x.to(D), bins=4, min=0, max=3)
    assert got.dtype == torch.int64
    assert got.cpu().tolist() == torch.histc(x.float(), bins=4, min=0, max=3).long().tolist()
    got = torch.histc(x.to(D).int(), bins=3, min=0, max=8)
    assert got.cpu().tolist() == torch.histc(x.float(), bins=3, min=0, max=8).int().tolist()


def test_index_put_of_a_permutation():
    # Mixtral's inverse permutation: inv[perm] = arange (a scatter, composed)
    perm = torch.tensor([3, 0, 4, 1, 2])
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(5)
    dinv = torch.empty_like(perm.to(D))
    dinv[perm.to(D)] = torch.arange(5, device=D)
    same(dinv, inv)
    x = torch.tensor([2 ** 40, -(2 ** 40), 7, 9])
    dx = x.to(D)
    dx[torch.tensor([-1, 1]).to(D)] = torch.tensor([2 ** 50 + 1, 3]).to(D)
    x[torch.tensor([-1, 1])] = torch.tensor([2 ** 50 + 1, 3])
    same(dx, x)
    with pytest.raises(IndexError):
        dx[torch.tensor([4]).to(D)] = torch.tensor([1]).to(D)


def test_fill_and_factories_are_exact():
    for v in (2 ** 40 + 3, -(2 ** 53) - 1, I64_MAX, I64_MIN):
        same(torch.full((5,), v, dtype=torch.int64, device=D),
             torch.full((5,), v, dtype=torch.int64))
    same(torch.full((3,), 2 ** 30 + 1, dtype=torch.int32, device=D),
         torch.full((3,), 2 ** 30 + 1, dtype=torch.int32))


def test_narrow_integer_arithmetic_wraps_on_the_card():
    # int8 computes in int32 and wraps back (test_ops_small_int.py has the rest)
    x = torch.tensor([100, -3], dtype=torch.int8)
    same(x.to(D) * 3, x * 3)
    assert (x.to(D) * 3).cpu().tolist() == [44, -9]


# ---- every registered integer op: exact or refused ---------------------------

def _table_rows():
    from torch_spyre import op_table
    return [r for k in ("unary", "binary") for r in op_table.rows(k, torch_only=True)]


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_every_registered_integer_op_is_exact_or_raises(dtype):
    """Each op the plugin registers from the op table, on values beyond 2^24
    and 2^32: the CPU's result bit for bit, or an error (never a value)."""
    a = edges(dtype)
    b = torch.tensor([3, -5, 7, 2 ** 20, -(2 ** 20), 1, -1, 11, 2, 9, 13, -2, 5, 6, 17, 4],
                     dtype=dtype)
    ran = 0
    for row in _table_rows():
        fn = getattr(torch, row.name, None)
        if fn is None:
            continue
        args = (a,) if row.kind == "unary" else (a, b)
        try:
            want = fn(*args)
        except RuntimeError:
            continue  # not defined for integers on the CPU either
        try:
            got = fn(*(t.to(D) for t in args))
        except (NotImplementedError, RuntimeError):
            continue  # refused: allowed
        same(got, want)
        ran += 1
    assert ran >= 20, ran


# ---- the compiled path ---------------------------------------------------------

def test_compiled_integer_ops_are_exact():
    def f(x, y, m):
        z = (x + 1) * 3 - y
        c = (z > y) & m
        w = torch.where(c, z, -z).clamp(-(2 ** 45), 2 ** 45)
        return w, w.sum(), w.cumsum(0), x.to(torch.int32) ^ 5, z.amin(), (x << 2) >> 1

    x = edges(torch.int64)
    x[0], x[1] = 2 ** 50, -(2 ** 50)  # keep (x + 1) * 3 away from wrapping in Python
    y = torch.arange(16, dtype=torch.int64) * (2 ** 33) + 7
    m = torch.tensor([True, False] * 8)
    want = f(x, y, m)
    torch._dynamo.reset()
    got = torch.compile(f, backend="spyre")(x.to(D), y.to(D), m.to(D))
    for g, w in zip(got, want):
        same(g, w)


def test_compiled_division_by_a_number_lowers_by_a_tensor_breaks():
    import torch_spyre.compiler as spyre_compiler

    def f(x, y):
        return x // 7, x % -5, x // y

    x = edges(torch.int64)
    y = torch.tensor([3, -2] * 8)
    want = f(x, y)
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    got = torch.compile(f, backend="spyre")(x.to(D), y.to(D))
    for g, w in zip(got, want):
        same(g, w)
    breaks = spyre_compiler.stats()["graph_breaks"]
    assert len(breaks) == 1 and "floor_divide" in breaks[0], breaks
    # a zero divisor in the tensor: the eager op raises, as the CPU
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.compile(f, backend="spyre")(x.to(D), torch.zeros(16, dtype=torch.int64).to(D))


def test_compiled_casts_and_factories_are_exact():
    def f(x, i):
        return (x.to(torch.int64), x.to(torch.int32), i.to(torch.float32),
                torch.full((4,), 2 ** 40 + 3, dtype=torch.int64, device=i.device) + i[:4],
                torch.arange(2 ** 24, 2 ** 24 + 4, device=i.device) + 1)

    x = torch.tensor([-1.7, 1.7, -0.0, 2.5, -2.5, 1e10, float("nan"), 7.9])
    i = edges(torch.int64)[:8]
    want = f(x, i)
    torch._dynamo.reset()
    got = torch.compile(f, backend="spyre")(x.to(D), i.to(D))
    for g, w in zip(got, want):
        same(g, w)
