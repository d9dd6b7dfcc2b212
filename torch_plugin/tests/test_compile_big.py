# SPDX-License-Identifier: MIT
"""Full-size compiled models: GPT-2 small (12 layers, 768 wide, 124M
parameters) and a Llama-shaped model of about 160M parameters, fp16 on the
card, each compiled to one recipe whose argument slots are the weights,
inputs and outputs (well over the 64 addresses one LAUNCH binds), against
the same weights in fp32 on the CPU.

fp16 tolerance: logits within 2e-2 absolute + 2e-2 relative of the fp32
CPU reference (torch.testing.assert_close). The card computes in fp16 with
fp32 accumulation; with these random weights the largest difference seen is
about 0.005 on logits of magnitude up to 3 (GPT-2 prefill) and Llama's
prefill and decode step (Documentation/torch-plugin.rst, Large graphs).

One forward is one SUBMIT on the compute stream once it is warm: counted
with torch.spyre.counters() around the call, inputs already on the card.
"""
import gc

import pytest
import torch

import torch_spyre.compiler as spyre_compiler

D = "spyre"
RTOL = ATOL = 2e-2
GPT2_TOKENS = 32


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    torch.spyre.set_fallback_mode("error")
    yield
    torch.spyre.set_fallback_mode("warn")
    # the models' weights go back to the card's memory, not the allocator's cache
    torch._dynamo.reset()
    gc.collect()
    torch.spyre.synchronize()
    torch.spyre.empty_cache()


def _submits(fn):
    """The SUBMITs @fn issues (the device idle before and after)."""
    torch.spyre.synchronize()
    before = torch.spyre.counters()["submits"]
    out = fn()
    torch.spyre.synchronize()
    return out, torch.spyre.counters()["submits"] - before


def _nargs_over_64(model):
    # the point of the test: more weights than one LAUNCH can address
    assert sum(1 for _ in model.parameters()) > 64


def test_gpt2_small_fp16_compiled_matches_cpu():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config()  # GPT-2 small: 12 layers, 768 wide, 50257 tokens
    assert (cfg.n_layer, cfg.n_embd) == (12, 768)
    ref = transformers.GPT2LMHeadModel(cfg).eval()
    assert 124e6 < sum(p.numel() for p in ref.parameters()) < 125e6
    _nargs_over_64(ref)
    ids = torch.randint(0, cfg.vocab_size, (1, GPT2_TOKENS),
                        generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = ref(ids, use_cache=False).logits
    dev = ref.to(torch.float16).to(D)  # the same weights, rounded to fp16
    del ref
    compiled = torch.compile(dev, backend="spyre")
    d_ids = ids.to(D)
    with torch.no_grad():
        got = compiled(d_ids, use_cache=False).logits
        torch.testing.assert_close(got.cpu().float(), want, rtol=RTOL, atol=ATOL)
        st = spyre_compiler.stats()
        assert st["graph_breaks"] == [] and st["eager_nodes"] == 0, st
        assert st["recipes"] == 1, st
        _, n = _submits(lambda: compiled(d_ids, use_cache=False))
    assert n == 1, f"{n} SUBMITs per compiled forward"
    assert torch.spyre.fallback_counts() == {}


def _llama(transformers, kv_heads):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=3072,
                                   num_hidden_layers=12, num_attention_heads=12,
                                   num_key_value_heads=kv_heads, max_position_embeddings=512)
    return transformers.LlamaForCausalLM(cfg).eval()


def _llama_prefill_decode(kv_heads):
    """Prefill 16 tokens, then one decode step with the KV cache
    (DynamicCache), compiled on the card vs the fp32 CPU model."""
    transformers = pytest.importorskip("transformers")
    ref = _llama(transformers, kv_heads)
    assert 150e6 < sum(p.numel() for p in ref.parameters()) < 170e6
    _nargs_over_64(ref)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 32000, (1, 16), generator=g)
    nxt = torch.randint(0, 32000, (1, 1), generator=g)
    with torch.no_grad():
        r1 = ref(ids, past_key_values=transformers.DynamicCache(), use_cache=True)
        r2 = ref(nxt, past_key_values=r1.past_key_values, use_cache=True)
    dev = ref.to(torch.float16).to(D)
    del ref
    compiled = torch.compile(dev, backend="spyre")
    d_ids, d_nxt = ids.to(D), nxt.to(D)
    with torch.no_grad():
        o1 = compiled(d_ids, past_key_values=transformers.DynamicCache(), use_cache=True)
        o2 = compiled(d_nxt, past_key_values=o1.past_key_values, use_cache=True)
        torch.testing.assert_close(o1.logits.cpu().float(), r1.logits, rtol=RTOL, atol=ATOL)
        torch.testing.assert_close(o2.logits.cpu().float(), r2.logits, rtol=RTOL, atol=ATOL)
        # the cache the card filled is the CPU's too
        k_dev = o2.past_key_values.layers[11].keys.cpu().float()
        k_ref = r2.past_key_values.layers[11].keys
        assert k_dev.shape == k_ref.shape == (1, kv_heads, 17, 64)
        torch.testing.assert_close(k_dev, k_ref, rtol=RTOL, atol=ATOL)
        st = spyre_compiler.stats()
        assert st["graph_breaks"] == [] and st["eager_nodes"] == 0, st
        # warm: a fresh cache, prefill and decode again, one SUBMIT each
        cache = transformers.DynamicCache()
        o1, n1 = _submits(lambda: compiled(d_ids, past_key_values=cache, use_cache=True))
        _, n2 = _submits(lambda: compiled(d_nxt, past_key_values=o1.past_key_values,
                                          use_cache=True))
    assert (n1, n2) == (1, 1), f"SUBMITs: prefill {n1}, decode {n2}"
    assert torch.spyre.fallback_counts() == {}


def test_llama_160m_prefill_and_decode_with_kv_cache():
    # num_key_value_heads == num_attention_heads (multi-head); the GQA
    # configuration real Llama checkpoints use is the test below
    _llama_prefill_decode(kv_heads=12)


def test_llama_160m_grouped_query_attention_prefill_and_decode():
    _llama_prefill_decode(kv_heads=4)
