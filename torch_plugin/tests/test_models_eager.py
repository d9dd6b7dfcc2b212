# SPDX-License-Identifier: MIT
"""Whole models on the card with the CPU fallback forbidden
(TORCH_SPYRE_FALLBACK=error semantics): every aten op they dispatch must
have a spyre kernel. Results are compared with the same model on the CPU:
the card computes in fp32 and rounds once per op, so float32 outputs match
within 1e-4 and float16 ones within 2e-2 (relative and absolute); greedy
next tokens must be equal."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

D = "spyre"
TOL = {torch.float32: 1e-4, torch.float16: 2e-2}


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


def on_card(model, dtype=torch.float32):
    """(cpu reference in fp32, card copy in @dtype), same weights."""
    return copy.deepcopy(model).float().eval(), copy.deepcopy(model).to(dtype).to(D).eval()


def assert_near(got, want, dtype):
    assert got.device.type == "spyre" and got.dtype == dtype
    tol = TOL[dtype]
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=tol, atol=tol)


def test_mlp():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 10))
    ref, dev = on_card(m)
    x = torch.randn(6, 32)
    with torch.no_grad():
        assert_near(dev(x.to(D)), ref(x), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_transformer_encoder_layer(dtype, norm_first):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True,
                                       norm_first=norm_first)
    ref, dev = on_card(layer, dtype)
    x = torch.randn(2, 10, 32)
    with torch.no_grad():
        assert_near(dev(x.to(dtype).to(D)), ref(x), dtype)


class Block(nn.Module):
    """A GPT-style block: RMSNorm, causal self-attention, SiLU-gated MLP."""

    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.RMSNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.norm2 = nn.RMSNorm(dim, eps=1e-6)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyGPT(nn.Module):
    def __init__(self, vocab=96, dim=64, heads=4, layers=2, ctx=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, 2 * dim) for _ in range(layers))
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def greedy(model, ids, steps):
    """Appends @steps greedy tokens (no KV cache: the whole prefix each step)."""
    with torch.no_grad():
        for _ in range(steps):
            logits = model(ids)
            if not torch.is_tensor(logits):
                logits = logits.logits
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt.to(ids.dtype)], 1)
    return ids


def test_tiny_gpt_decoder():
    torch.manual_seed(2)
    ref, dev = on_card(TinyGPT())
    ids = torch.randint(0, 96, (2, 7))
    with torch.no_grad():
        assert_near(dev(ids.to(D)), ref(ids), torch.float32)
    assert torch.equal(greedy(dev, ids.to(D), 4).cpu(), greedy(ref, ids, 4))


def hf_model(kind):
    import transformers  # installed into build/venv by scripts/build-plugin
    torch.manual_seed(3)
    if kind == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2,
                                      n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
                                      attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2LMHeadModel(cfg)
    elif kind == "llama":
        cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                       num_hidden_layers=2, num_attention_heads=4,
                                       num_key_value_heads=4, max_position_embeddings=64)
        model = transformers.LlamaForCausalLM(cfg)
    else:
        # grouped-query attention (2 key/value heads for 4 query heads), as
        # every current Llama, Qwen and Mistral; Qwen3 adds per-head q/k norms
        cls = {"llama_gqa": "Llama", "qwen3": "Qwen3", "mistral": "Mistral"}[kind]
        cfg = getattr(transformers, cls + "Config")(
            vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            max_position_embeddings=64, pad_token_id=0)
        model = getattr(transformers, cls + "ForCausalLM")(cfg)
    cfg._attn_implementation = "sdpa"
    return model


GQA = ["llama_gqa", "qwen3", "mistral"]


def left_padded(seed):
    """A batch of two prompts, the first left-padded by two: its attention
    mask is 0 there, so those queries see no key at all."""
    ids = torch.randint(1, 128, (2, 6), generator=torch.Generator().manual_seed(seed))
    mask = torch.ones_like(ids)
    ids[0, :2] = 0
    mask[0, :2] = 0
    return ids, mask


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hf_greedy_tokens(kind):
    # random weights from a small config: nothing is downloaded
    ref, dev = on_card(hf_model(kind))
    ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = ref(ids, use_cache=False).logits
        got = dev(ids.to(D), use_cache=False).logits
    assert_near(got, want, torch.float32)
    assert torch.equal(greedy(dev, ids.to(D), 3).cpu(), greedy(ref, ids, 3))


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("use_cache", [False, True], ids=["no_cache", "kv_cache"])
def test_hf_generate_greedy_tokens(kind, use_cache):
    # the whole generate() loop on the card: embeddings, attention, the KV
    # cache, and the integer/bool bookkeeping (positions, stopping criteria)
    ref, dev = on_card(hf_model(kind))
    ids = torch.randint(0, 128, (2, 5), generator=torch.Generator().manual_seed(8))
    mask = torch.ones_like(ids)
    kw = dict(max_new_tokens=6, do_sample=False, use_cache=use_cache, pad_token_id=0)
    with torch.no_grad():
        want = ref.generate(ids, attention_mask=mask, **kw)
        got = dev.generate(ids.to(D), attention_mask=mask.to(D), **kw)
    assert got.device.type == "spyre"
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


@pytest.mark.parametrize("kind", GQA)
def test_hf_grouped_query_attention_and_left_padding(kind):
    # grouped-query attention through SDPA's enable_gqa (no mask) and with a
    # left-padded batch's mask, whose pad queries see no key: SDPA gives
    # them 0 (not NaN, which would spread to every later token)
    ref, dev = on_card(hf_model(kind))
    ids, mask = left_padded(5)
    with torch.no_grad():
        assert_near(dev(ids[1:].to(D)).logits, ref(ids[1:]).logits, torch.float32)
        got = dev(ids.to(D), attention_mask=mask.to(D)).logits
        assert_near(got, ref(ids, attention_mask=mask).logits, torch.float32)
        kw = dict(max_new_tokens=5, do_sample=False, pad_token_id=0)
        want = ref.generate(ids, attention_mask=mask, **kw)
        got = dev.generate(ids.to(D), attention_mask=mask.to(D), **kw)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)
