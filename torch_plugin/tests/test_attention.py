# SPDX-License-Identifier: MIT
"""Attention semantics on the card, eager and compiled, against the CPU with
the fallback forbidden: a query every key is masked from gets 0 from
scaled_dot_product_attention (PyTorch's safe softmax) while softmax itself
keeps NaN for an all -inf row; grouped-query heads (enable_gqa); tril/triu
of bool and integer tensors (the causal masks attention builds)."""
import math

import pytest
import torch
import torch.nn.functional as F

import torch_spyre.compiler as spyre_compiler

D = "spyre"
MODES = ["eager", "compiled"]


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    torch.spyre.set_fallback_mode("error")
    torch.spyre.reset_fallback_counts()
    yield
    assert torch.spyre.fallback_counts() == {}
    torch.spyre.set_fallback_mode("warn")


def on_card(fn, mode, *args):
    """fn(*args) on spyre, eager or as one compiled recipe; the result on the CPU."""
    f = fn if mode == "eager" else torch.compile(fn, backend="spyre")
    out = f(*(a.to(D) if isinstance(a, torch.Tensor) else a for a in args))
    assert out.device.type == "spyre"
    if mode == "compiled":
        st = spyre_compiler.stats()
        assert st["graph_breaks"] == [] and st["recipes"] == 1, st
    return out.cpu()


def qkv(heads=4, kv_heads=4, lq=5, lk=7, dtype=torch.float32):
    g = torch.Generator().manual_seed(11)
    q = torch.randn(2, heads, lq, 16, generator=g).to(dtype)
    k = torch.randn(2, kv_heads, lk, 16, generator=g).to(dtype)
    v = torch.randn(2, kv_heads, lk, 16, generator=g).to(dtype)
    return q, k, v


def padded_mask(kind, dtype=torch.float32, lq=5):
    """[2, 1, lq, 7]: batch 0's queries 0 and 3 and batch 1's query 4 see no
    key (as a left-padded batch's pad rows); the rest keep some keys."""
    keep = torch.rand(2, 1, lq, 7, generator=torch.Generator().manual_seed(12)) > 0.4
    keep[..., 0] = True
    keep[0, 0, 0] = keep[0, 0, 3] = keep[1, 0, 4] = False
    if kind == "bool":
        return keep
    return torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, -math.inf)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["bool", "additive"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_sdpa_fully_masked_query_is_zero(kind, dtype, mode):
    q, k, v = qkv(dtype=dtype)
    mask = padded_mask(kind, dtype)
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask.float()
                                          if kind == "additive" else mask)
    got = on_card(fn, mode, q, k, v, mask)
    assert got.dtype == dtype
    for b, i in ((0, 0), (0, 3), (1, 4)):
        assert torch.equal(got[b, :, i], torch.zeros_like(got[b, :, i])), (b, i)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(got.float(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", MODES)
def test_sdpa_nan_score_stays_nan(mode):
    # only rows of nothing but -inf become 0: a NaN in a query is NaN out
    q, k, v = qkv()
    q[1, 2, 3, 5] = math.nan
    mask = padded_mask("additive")
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    got = on_card(fn, mode, q, k, v, mask)
    assert got[1, 2, 3].isnan().all() and not got[1, :2].isnan().any()
    assert torch.equal(got[0, :, 0], torch.zeros_like(got[0, :, 0]))


@pytest.mark.parametrize("mode", MODES)
def test_math_path_fully_masked_query_is_zero(mode):
    # 5-D attention takes PyTorch's math path (its _safe_softmax, isneginf)
    g = torch.Generator().manual_seed(16)
    q, k, v = (torch.randn(2, 2, 3, n, 8, generator=g) for n in (4, 5, 5))
    mask = torch.rand(4, 5, generator=g) > 0.3
    mask[1] = False
    q[1, 0, 2, 3, 0] = math.nan
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    got = on_card(fn, mode, q, k, v, mask)
    assert torch.equal(got[..., 1, :], torch.zeros_like(got[..., 1, :]))
    assert got[1, 0, 2, 3].isnan().all()
    torch.testing.assert_close(got, fn(q, k, v, mask), rtol=1e-4, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
def test_isneginf_isposinf_isnan(mode):
    x = torch.tensor([1.0, -math.inf, math.inf, math.nan, -0.0])

    def fn(x):
        return torch.stack([torch.isneginf(x), torch.isposinf(x), torch.isnan(x),
                            torch.isinf(x), torch.isfinite(x)])

    if mode == "compiled":  # no lowering: the eager kernels, on the card
        torch._dynamo.reset()
    got = (fn if mode == "eager" else torch.compile(fn, backend="spyre"))(x.to(D))
    assert torch.equal(got.cpu(), fn(x))
    assert not torch.isneginf(torch.arange(3, device=D)).any()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_an_all_neg_inf_row_stays_nan(op, mode):
    # PyTorch's softmax is not "safe": an all -inf row is NaN; only SDPA
    # turns fully masked rows into 0
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(13))
    x[1] = -math.inf
    x[2, :5] = -math.inf
    fn = getattr(F, op)
    got = on_card(lambda x: fn(x, -1), mode, x)
    assert got[1].isnan().all()
    torch.testing.assert_close(got, fn(x, -1), rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("mask", ["causal", "bool", "additive", "per_head"])
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_sdpa_grouped_query_heads(kv_heads, mask, mode):
    # enable_gqa: query head h reads key/value head h // (heads // kv_heads)
    q, k, v = qkv(heads=4, kv_heads=kv_heads, lq=7, lk=7)
    m = None
    if mask in ("bool", "additive"):
        m = padded_mask(mask, lq=7)
    elif mask == "per_head":  # [2, 4, 7, 7]: each query head its own mask
        m = torch.randn(2, 4, 7, 7, generator=torch.Generator().manual_seed(14))

    def fn(q, k, v, m=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=mask == "causal",
                                              enable_gqa=True)

    args = (q, k, v) if m is None else (q, k, v, m)
    got = on_card(fn, mode, *args)
    torch.testing.assert_close(got, fn(*args), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_sdpa_heads_broadcast_without_enable_gqa(mode):
    # one key/value head broadcasts over the query heads, as on the CPU;
    # two for four without enable_gqa are PyTorch's shape error, not GQA
    q, k, v = qkv(heads=4, kv_heads=1)
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v)  # noqa: E731
    torch.testing.assert_close(on_card(fn, mode, q, k, v), fn(q, k, v), rtol=1e-4, atol=1e-4)
    q, k, v = qkv(heads=4, kv_heads=2)
    with pytest.raises(RuntimeError):
        fn(q, k, v)
    with pytest.raises(RuntimeError):
        fn(q.to(D), k.to(D), v.to(D))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.int64, torch.float32,
                                   torch.float16], ids=str)
def test_tril_triu(dtype, mode):
    x = torch.randint(-(1 << 24), 1 << 24, (2, 5, 7),
                      generator=torch.Generator().manual_seed(15))
    x = (x % 3 != 0) if dtype == torch.bool else x.to(dtype)
    if dtype.is_floating_point:
        x[0, 1, 1] = math.nan
        x[1, 4, 0] = -math.inf

    def fn(x):
        return [t for k in (-9, -2, 0, 1, 3, 8) for t in (x.tril(k), x.triu(k))]

    f = fn if mode == "eager" else torch.compile(fn, backend="spyre")
    got = f(x.to(D))
    for g, w in zip(got, fn(x)):
        assert g.device.type == "spyre" and g.dtype == dtype
        assert torch.equal(g.cpu().nan_to_num(), w.nan_to_num())
    if mode == "compiled":
        st = spyre_compiler.stats()
        assert st["graph_breaks"] == [] and st["recipes"] == 1, st
    # the causal mask SDPA's math path builds, and an empty one
    ones = torch.ones(4, 6, dtype=torch.bool)
    assert torch.equal(torch.ones(4, 6, dtype=torch.bool, device=D).tril().cpu(), ones.tril())
    assert torch.ones(0, 3, dtype=dtype, device=D).triu().shape == (0, 3)


@pytest.mark.parametrize("gqa", [False, True])
def test_sdpa_output_has_the_meta_functions_layout(gqa):
    # Hugging Face models pass q as a transposed view ([B, L, H, E] storage):
    # PyTorch's meta function lays the output out in q's dim order, and a
    # compiled graph that calls the eager kernel (an Inductor fallback)
    # asserts those strides
    op = torch.ops.aten._scaled_dot_product_fused_attention_overrideable.default
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 9, 4, 16, generator=g).transpose(1, 2)
    kv_heads = 2 if gqa else 4
    k = torch.randn(2, 9, kv_heads, 16, generator=g).transpose(1, 2)
    v = torch.randn(2, 9, kv_heads, 8, generator=g).transpose(1, 2)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    with torch.device("meta"):
        meta = op(q.to("meta"), k.to("meta"), v.to("meta"), None, 0.0, True)[0]
    got = op(q.to(D), k.to(D), v.to(D), None, 0.0, True)[0]
    assert got.shape == want.shape and got.stride() == meta.stride(), (got.stride(), meta.stride())
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)
