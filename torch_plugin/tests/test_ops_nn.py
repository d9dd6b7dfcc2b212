# SPDX-License-Identifier: MIT
"""Device kernels of ops_nn.cpp and ops_index.cpp (matmul family, layer
norm, attention, embedding/index_select, cat, tril/triu, arange) against
the CPU, with the CPU fallback forbidden: each op must run on the card."""
import copy

import pytest
import torch
import torch.nn.functional as F

D = "spyre"
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
# the card computes in fp32 and rounds once; the CPU's half kernels round
# differently, so half results are compared at their own precision
TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}


@pytest.fixture(autouse=True)
def _no_fallback():
    torch.spyre.set_fallback_mode("error")


def rand(*shape, dtype=torch.float32, gen=None):
    g = gen or torch.Generator().manual_seed(sum(shape) + 7)
    return torch.randn(*shape, generator=g).to(dtype)


def close(got, want, dtype=None):
    rtol, atol = TOL[dtype or want.dtype]
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_mm_bmm_and_transposed_views(dtype):
    a, b = rand(5, 7, dtype=dtype), rand(7, 3, dtype=dtype)
    close(torch.mm(a.to(D), b.to(D)), (a.float() @ b.float()).to(dtype), dtype)
    bt = rand(3, 7, dtype=dtype)
    close(torch.mm(a.to(D), bt.to(D).t()), (a.float() @ bt.float().t()).to(dtype), dtype)
    x, y = rand(4, 5, 6, dtype=dtype), rand(4, 6, 2, dtype=dtype)
    close(torch.bmm(x.to(D), y.to(D)), (x.float() @ y.float()).to(dtype), dtype)
    assert torch.spyre.get_fallback_mode() == "error"


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_runs_through_addmm_with_transposed_weight(dtype):
    lin = torch.nn.Linear(16, 8).to(dtype)
    x = rand(3, 4, 16, dtype=dtype)
    with torch.no_grad():
        want = copy.deepcopy(lin).float()(x.float()).to(dtype)
        got = lin.to(D)(x.to(D))
    assert got.shape == (3, 4, 8)
    close(got, want, dtype)


def test_addmm_baddbmm_scalars_and_broadcast():
    s, a, b = rand(4, 1), rand(4, 6), rand(6, 5)
    close(torch.addmm(s.to(D), a.to(D), b.to(D), beta=0.5, alpha=2.0),
          torch.addmm(s, a, b, beta=0.5, alpha=2.0))
    nan = torch.full((4, 5), float("nan"))
    close(torch.addmm(nan.to(D), a.to(D), b.to(D), beta=0), a @ b)
    s3, x, y = rand(5), rand(2, 3, 4), rand(2, 4, 5)
    close(torch.baddbmm(s3.to(D), x.to(D), y.to(D), alpha=-1.0),
          torch.baddbmm(s3, x, y, alpha=-1.0))
    out = torch.empty(0, device=D)
    torch.mm(a.to(D), b.to(D), out=out)
    close(out, a @ b)


def test_matmul_shapes_and_errors():
    x, y = rand(2, 3, 4, 5), rand(2, 3, 5, 6)
    close(x.to(D) @ y.to(D), x @ y)
    close(x.to(D) @ y[0, 0].to(D), x @ y[0, 0])
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(rand(2, 3).to(D), rand(4, 2).to(D))
    with pytest.raises(NotImplementedError, match="spyre: mm"):
        torch.mm(torch.ones(2, 2, dtype=torch.int32).to(D),
                 torch.ones(2, 2, dtype=torch.int32).to(D))
    empty_k = torch.mm(torch.ones(3, 0).to(D), torch.ones(0, 2).to(D))
    assert torch.equal(empty_k.cpu(), torch.zeros(3, 2))


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_outputs_and_stats(dtype):
    x, w, b = rand(3, 4, 10, dtype=dtype), rand(10, dtype=dtype), rand(10, dtype=dtype)
    got = torch.native_layer_norm(x.to(D), [10], w.to(D), b.to(D), 1e-5)
    want = torch.native_layer_norm(x.float(), [10], w.float(), b.float(), 1e-5)
    for g, wv in zip(got, want):
        close(g, wv.to(g.dtype), dtype)
    # two normalized dims, no affine parameters
    close(F.layer_norm(x.to(D), [4, 10]), F.layer_norm(x.float(), [4, 10]).to(dtype), dtype)


def test_embedding_and_index_select():
    w = rand(10, 6)
    idx = torch.tensor([[1, 9, 0], [3, 3, 2]])
    close(F.embedding(idx.to(D), w.to(D)), F.embedding(idx, w))
    close(F.embedding(idx.int().to(D), w.half().to(D)), F.embedding(idx, w.half()))
    x = rand(4, 5, 6)
    for dim in range(3):
        i = torch.tensor([3, 0, 3])
        close(torch.index_select(x.to(D), dim, i.to(D)), torch.index_select(x, dim, i))
    with pytest.raises(IndexError, match="int32 or int64"):
        torch.index_select(x.to(D), 0, torch.tensor([0.0]).to(D))


def test_cat_tril_triu():
    xs = [rand(2, 3), rand(2, 1), rand(2, 4)]
    close(torch.cat([t.to(D) for t in xs], 1), torch.cat(xs, 1))
    close(torch.cat([t.to(D) for t in xs] + [torch.empty(0).to(D)], -1), torch.cat(xs, -1))
    ints = [torch.arange(6).view(2, 3), torch.arange(4).view(2, 2)]
    assert torch.equal(torch.cat([t.to(D) for t in ints], 1).cpu(), torch.cat(ints, 1))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([rand(2, 3).to(D), rand(3, 3).to(D)], 1)
    m = rand(2, 5, 4)
    for k in (-7, -1, 0, 2, 9):
        assert torch.equal(torch.tril(m.to(D), k).cpu(), torch.tril(m, k))
        assert torch.equal(torch.triu(m.to(D), k).cpu(), torch.triu(m, k))


@pytest.mark.parametrize("args,dtype", [
    ((7,), torch.int64), ((2, 11, 3), torch.int64), ((5,), torch.float32),
    ((0.5, 3.0, 0.25), torch.float32), ((10, 0, -3), torch.int32),
    ((0, 2, 0.125), torch.float16),
    # float bounds of an integer result: PyTorch truncates them to int64
    # first, and sizes an int64 result in integers, an int32 one in doubles
    ((0.0, -8.000001, -4.0), torch.int64), ((2.1, -2.9, -1.0), torch.int64),
    ((0.0, -8.000001, -4.0), torch.int32), ((2.1, -2.9, -1.0), torch.int32),
    ((3.1,), torch.int64), ((5.000001, 1.0, -2.0), torch.int32)])
def test_arange(args, dtype):
    got = torch.arange(*args, dtype=dtype, device=D)
    want = torch.arange(*args, dtype=dtype)
    assert got.dtype == want.dtype
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


def test_arange_step_truncated_to_zero_is_an_error():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 3, 0.5, dtype=torch.int64, device=D)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sdpa_causal_and_masks(dtype):
    q, k, v = rand(2, 3, 5, 8, dtype=dtype), rand(2, 3, 5, 8, dtype=dtype), rand(2, 3, 5, 4, dtype=dtype)
    ref = lambda **kw: F.scaled_dot_product_attention(q.float(), k.float(), v.float(), **kw).to(dtype)
    run = lambda **kw: F.scaled_dot_product_attention(q.to(D), k.to(D), v.to(D), **kw)
    close(run(), ref(), dtype)
    close(run(is_causal=True), ref(is_causal=True), dtype)
    close(run(scale=0.3), ref(scale=0.3), dtype)
    add = rand(1, 3, 5, 5)
    close(run(attn_mask=add.to(dtype).to(D)), ref(attn_mask=add), dtype)


def test_sdpa_bool_mask():
    q, k, v = rand(1, 2, 6, 8), rand(1, 2, 4, 8), rand(1, 2, 4, 8)
    keep = torch.rand(6, 4, generator=torch.Generator().manual_seed(1)) > 0.3
    keep[:, 0] = True
    # PyTorch turns a bool mask into an additive one with aten::where before
    # it picks a backend: that op is elementwise (not this file's), so it
    # alone may still reach the fallback
    torch.spyre.set_fallback_mode("warn")
    torch.spyre.reset_fallback_counts()
    got = F.scaled_dot_product_attention(q.to(D), k.to(D), v.to(D), attn_mask=keep.to(D))
    assert set(torch.spyre.fallback_counts()) <= {"aten::where.self"}
    close(got, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))


def mha_pair(dtype, embed=32, heads=4):
    torch.manual_seed(5)
    ref = torch.nn.MultiheadAttention(embed, heads, batch_first=True).eval()
    return ref, copy.deepcopy(ref).to(dtype).to(D)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
def test_multihead_attention_fast_path(dtype, need_weights, average):
    # eval-mode nn.MultiheadAttention calls _native_multi_head_attention
    ref, dev = mha_pair(dtype)
    x, mem = rand(2, 5, 32), rand(2, 7, 32)
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)  # True masks out
    pad = torch.tensor([[False] * 7, [False] * 4 + [True] * 3])
    cases = [(x, x, x, {}), (x, x, x, {"attn_mask": causal}),
             (x, mem, mem, {"key_padding_mask": pad})]
    with torch.no_grad():
        for q, k, v, masks in cases:
            want, want_w = ref(q, k, v, need_weights=need_weights,
                               average_attn_weights=average, **masks)
            dev_masks = {name: m.to(D) for name, m in masks.items()}
            args = [t.to(dtype).to(D) for t in (q, k, v)]
            if q is k:
                args = [args[0]] * 3  # the same tensor: the self-attention path
            got, got_w = dev(*args, need_weights=need_weights, average_attn_weights=average,
                             **dev_masks)
            close(got.float(), want, dtype)
            if need_weights:
                close(got_w.float(), want_w, dtype)
            else:
                assert got_w is None and want_w is None


def test_native_mha_masks_like_the_cpu_kernel():
    # the op itself, mask_type 1 (key padding); a row with every key masked
    # out is NaN in ATen's CPU kernel and must be NaN here too
    ref, _ = mha_pair(torch.float32)
    x = rand(2, 3, 32)
    pad = torch.tensor([[True, True, True], [False, True, False]])
    params = [ref.in_proj_weight, ref.in_proj_bias, ref.out_proj.weight, ref.out_proj.bias]
    with torch.no_grad():
        want, want_w = torch._native_multi_head_attention(x, x, x, 32, 4, *params, pad, True,
                                                          True, 1)
        xd = x.to(D)
        got, got_w = torch._native_multi_head_attention(xd, xd, xd, 32, 4,
                                                        *[p.to(D) for p in params],
                                                        pad.to(D), True, True, 1)
    assert torch.isnan(want[0]).all() and not torch.isnan(want[1]).any()
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5, equal_nan=True)
    torch.testing.assert_close(got_w.cpu(), want_w, rtol=1e-4, atol=1e-5, equal_nan=True)
    # without the weights the attention is the SDPA backend op: the same rows
    with torch.no_grad():
        want2, _ = torch._native_multi_head_attention(x, x, x, 32, 4, *params, pad, False,
                                                      True, 1)
        got2, none = torch._native_multi_head_attention(xd, xd, xd, 32, 4,
                                                        *[p.to(D) for p in params],
                                                        pad.to(D), False, True, 1)
    assert none is None
    torch.testing.assert_close(got2.cpu(), want2, rtol=1e-4, atol=1e-5, equal_nan=True)


def test_transformer_decoder_layer_stays_on_the_card():
    torch.manual_seed(6)
    ref = torch.nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    dev = copy.deepcopy(ref).to(D)
    x, mem = rand(2, 6, 32), rand(2, 9, 32)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(6)
    with torch.no_grad():
        want = ref(x, mem, tgt_mask=causal, tgt_is_causal=True)
        got = dev(x.to(D), mem.to(D), tgt_mask=causal.to(D), tgt_is_causal=True)
    close(got, want)


def test_advanced_indexing_gathers_on_the_card():
    x = torch.arange(60.0).reshape(3, 4, 5)
    i, j = torch.tensor([[2, -1], [0, 1]]), torch.tensor([[3], [0]])
    xi = torch.arange(10) * 3
    for src, key in [(x, (i % 3,)), (x, (slice(None), i)), (x, (Ellipsis, torch.tensor([4, 0]))),
                     (x, (torch.tensor([1, 0]), j)), (xi, (torch.tensor([4, -2]),)),
                     (x > 20, (torch.tensor([2, 0]), torch.tensor([1, 3])))]:
        d = src.to(D)
        dkey = tuple(k.to(D) if isinstance(k, torch.Tensor) else k for k in key)
        got = d[dkey]
        assert torch.equal(got.cpu(), src[key]) and got.dtype == src.dtype, key
    assert torch.equal(x.to(D)[i].cpu(), x[i])  # host indices are uploaded, as on CUDA


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_gather(dtype):
    x = (torch.randn(3, 5, 6, generator=torch.Generator().manual_seed(1)) * 100).to(dtype)
    for dim, shape in [(0, (4, 5, 6)), (1, (3, 2, 6)), (2, (2, 5, 9)), (-1, (3, 1, 1))]:
        idx = torch.randint(0, x.shape[dim], shape, generator=torch.Generator().manual_seed(dim))
        got = torch.gather(x.to(D), dim, idx.to(D))
        assert got.dtype == dtype and torch.equal(got.cpu(), torch.gather(x, dim, idx)), dim
    with pytest.raises(IndexError, match="Size does not match"):
        torch.gather(x.to(D), 1, torch.zeros(4, 2, 6, dtype=torch.long).to(D))


def test_compiled_gather():
    import torch_spyre.compiler as spyre_compiler
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    x, idx = torch.randn(4, 9), torch.tensor([[8, 0], [1, 1], [3, 2], [0, 7]])
    f = torch.compile(lambda a, i: torch.gather(a, 1, i) * 2, backend="spyre")
    torch.testing.assert_close(f(x.to(D), idx.to(D)).cpu(), torch.gather(x, 1, idx) * 2)
    assert spyre_compiler.stats()["graph_breaks"] == []
