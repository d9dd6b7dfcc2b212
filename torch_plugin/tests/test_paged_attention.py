# SPDX-License-Identifier: MIT
"""torch.ops.spyre.paged_attention (the op library's paged attention over
vLLM's block-table KV cache) against a CPU reference that reads each
request's K/V through the block table itself and runs PyTorch's SDPA:
block sizes 1, 8 and 16, lengths that are not multiples of the block size,
mixed batches of prefill and decode rows, grouped KV heads, fp32/fp16/bf16,
NaN in rows no request owns; bad arguments raise."""
import math

import pytest
import torch
import torch.nn.functional as F

D = "spyre"
TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}


@pytest.fixture(autouse=True)
def _no_fallback():
    torch.spyre.set_fallback_mode("error")


def make_case(seq, qlens, bs, heads, kv_heads, hd, dtype, seed=0):
    """A cache whose blocks are handed out shuffled, NaN wherever no request
    has a token; q right aligned in [R, H, Qmax, hd]."""
    g = torch.Generator().manual_seed(seed)
    need = [-(-s // bs) for s in seq]
    nblocks = sum(need) + 3
    mb = max(need)
    order = torch.randperm(nblocks, generator=g).tolist()
    cache = torch.full((nblocks, kv_heads, bs, 2 * hd), float("nan"))
    bt = torch.zeros(len(seq), mb, dtype=torch.int32)
    k_of, v_of = [], []
    for r, s in enumerate(seq):
        k = torch.randn(kv_heads, s, hd, generator=g)
        v = torch.randn(kv_heads, s, hd, generator=g)
        for m in range(need[r]):
            blk = order.pop()
            bt[r, m] = blk
            n = min(bs, s - m * bs)
            cache[blk, :, :n, :hd] = k[:, m * bs:m * bs + n]
            cache[blk, :, :n, hd:] = v[:, m * bs:m * bs + n]
        k_of.append(k.to(dtype))
        v_of.append(v.to(dtype))
    qmax = max(qlens)
    q = torch.randn(len(seq), heads, qmax, hd, generator=g).to(dtype)
    return q, cache.to(dtype), bt, torch.tensor(seq, dtype=torch.int32), k_of, v_of


def reference(q, k_of, v_of, seq, qlens, scale):
    """Per request: its last qlen query rows against its own K/V, causal
    from position seq - qlen; rows above them are 0 (they see no key when
    their position is negative) and are compared only where defined."""
    out = torch.zeros(q.shape, dtype=torch.float32)
    qmax, heads = q.shape[2], q.shape[1]
    for r, (s, ql) in enumerate(zip(seq, qlens)):
        group = heads // k_of[r].shape[0]
        k = k_of[r].float().repeat_interleave(group, 0)
        v = v_of[r].float().repeat_interleave(group, 0)
        qq = q[r, :, qmax - ql:].float()
        pos = torch.arange(s - ql, s)
        mask = torch.arange(s)[None, :] <= pos[:, None]
        out[r, :, qmax - ql:] = F.scaled_dot_product_attention(qq, k, v, attn_mask=mask,
                                                               scale=scale)
    return out


CASES = [
    # (seq lens, query lens, block size): decode, prefill, mixed
    ([1, 9, 17, 30], [1, 1, 1, 1], 8),
    ([5, 13, 3], [5, 13, 3], 16),
    ([7, 21, 16, 2], [7, 1, 4, 2], 8),
    ([6, 3, 9], [2, 3, 1], 1),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("seq,qlens,bs", CASES)
def test_paged_attention_matches_reference(seq, qlens, bs, dtype):
    heads, kv_heads, hd = 4, 2, 16
    scale = 1 / math.sqrt(hd)
    q, cache, bt, sl, k_of, v_of = make_case(seq, qlens, bs, heads, kv_heads, hd, dtype)
    got = torch.ops.spyre.paged_attention(q.to(D), cache.to(D), bt.to(D), sl.to(D), scale)
    assert got.device.type == D and got.shape == q.shape and got.dtype == dtype
    want = reference(q, k_of, v_of, seq, qlens, scale)
    got = got.cpu().float()
    assert not got.isnan().any(), "a NaN from rows no request owns leaked"
    rtol, atol = TOL[dtype]
    qmax = q.shape[2]
    for r, ql in enumerate(qlens):
        torch.testing.assert_close(got[r, :, qmax - ql:], want[r, :, qmax - ql:],
                                   rtol=rtol, atol=atol)
        # rows at negative positions see no key: exactly 0
        lead = qmax - seq[r]
        if lead > 0:
            assert (got[r, :, :lead] == 0).all()


def test_paged_attention_errors():
    q = torch.zeros(2, 4, 1, 8, device=D)
    cache = torch.zeros(4, 2, 8, 16, device=D)
    bt = torch.zeros(2, 1, dtype=torch.int32, device=D)
    sl = torch.ones(2, dtype=torch.int32, device=D)
    with pytest.raises(RuntimeError, match="int32"):
        torch.ops.spyre.paged_attention(q, cache, bt.long(), sl, 1.0)
    with pytest.raises(RuntimeError, match="shapes do not fit"):
        torch.ops.spyre.paged_attention(q, cache[..., :8], bt, sl, 1.0)
    with pytest.raises(RuntimeError, match=r"\[R, H, Q, D\]"):
        torch.ops.spyre.paged_attention(q[0], cache, bt, sl, 1.0)
    with pytest.raises(RuntimeError, match="must be on"):
        torch.ops.spyre.paged_attention(q, cache, bt.cpu(), sl, 1.0)


def test_paged_attention_meta_shape():
    q = torch.empty(3, 4, 2, 8, device="meta")
    out = torch.ops.spyre.paged_attention(q, torch.empty(5, 2, 4, 16, device="meta"),
                                          torch.empty(3, 2, dtype=torch.int32, device="meta"),
                                          torch.empty(3, dtype=torch.int32, device="meta"), 1.0)
    assert out.shape == q.shape and out.device.type == "meta"
