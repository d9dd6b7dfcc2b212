# SPDX-License-Identifier: MIT
"""LLM.generate on the spyre platform against Hugging Face generate() on the CPU."""

import pytest
import torch

PROMPTS = [
    "The card sits in",
    "Hello, how are you today? I am fine",
    "A",
    "A serving engine keeps many conversations going at once. Each request has a prompt",
]
NEW = 24


def hf_greedy(model_dir, prompts, n):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    out = []
    for p in prompts:
        ids = tok(p, return_tensors="pt").input_ids
        g = m.generate(ids, do_sample=False, max_new_tokens=n, min_new_tokens=n)
        out.append(g[0, ids.shape[1]:].tolist())
    return out


@pytest.fixture(scope="module")
def llm(tiny_model):
    from vllm import LLM

    # block size 8 so that the longer prompts span several KV blocks
    return LLM(model=tiny_model, dtype="float32", max_model_len=128, max_num_seqs=8,
               block_size=8, kv_cache_memory_bytes=4 << 20, enforce_eager=True, seed=0)


def test_platform_is_spyre():
    from vllm.platforms import current_platform

    assert current_platform.device_type == "spyre"
    assert current_platform.dispatch_key == "PrivateUse1"


def test_greedy_equals_hf_batched(llm, tiny_model):
    from vllm import SamplingParams

    sp = SamplingParams(temperature=0.0, max_tokens=NEW, ignore_eos=True)
    outs = llm.generate(PROMPTS, sp)
    got = [list(o.outputs[0].token_ids) for o in outs]
    assert got == hf_greedy(tiny_model, PROMPTS, NEW)


def test_greedy_equals_hf_one_by_one(llm, tiny_model):
    from vllm import SamplingParams

    sp = SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True)
    want = hf_greedy(tiny_model, PROMPTS[:2], 8)
    for p, w in zip(PROMPTS[:2], want):
        assert list(llm.generate([p], sp)[0].outputs[0].token_ids) == w


def test_attention_runs_the_card_paged_attention_op(llm):
    """The steps above ran attention as the op library's paged attention
    (one launch per layer and step), nothing on the CPU."""
    from vllm import SamplingParams

    before = llm.collective_rpc("spyre_stats")[0]["ops"].get("paged_attention", 0)
    # 2 prompts, 4 new tokens: at least 1 prefill and 3 decode steps, and
    # one launch per layer (2) in each
    llm.generate(PROMPTS[:2], SamplingParams(temperature=0.0, max_tokens=4, ignore_eos=True))
    stats = llm.collective_rpc("spyre_stats")[0]
    launches = stats["ops"].get("paged_attention", 0) - before
    assert launches >= 4 * 2 and launches % 2 == 0, launches
    assert stats["fallbacks"] == {}


def test_too_long_prompt_rejected(llm):
    from vllm import SamplingParams

    with pytest.raises(Exception, match="maximum context length is 128"):
        llm.generate(["count " * 200], SamplingParams(max_tokens=4))
    # and the engine still serves
    out = llm.generate(["The card"], SamplingParams(temperature=0.0, max_tokens=3, ignore_eos=True))
    assert len(out[0].outputs[0].token_ids) == 3


def test_sampling_top_k_1_is_greedy_and_seeded_sampling_repeats(llm):
    from vllm import SamplingParams

    p = [PROMPTS[0], PROMPTS[1]]
    greedy = llm.generate(p, SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True))
    topk1 = llm.generate(p, SamplingParams(temperature=0.8, top_k=1, max_tokens=8,
                                           ignore_eos=True, seed=1))
    assert [o.outputs[0].token_ids for o in topk1] == [o.outputs[0].token_ids for o in greedy]
    sp = SamplingParams(temperature=1.0, top_p=0.9, top_k=20, max_tokens=8,
                        ignore_eos=True, seed=7)
    a = [list(o.outputs[0].token_ids) for o in llm.generate(p, sp)]
    b = [list(o.outputs[0].token_ids) for o in llm.generate(p, sp)]
    assert a == b
    vocab = len(llm.get_tokenizer())
    assert all(0 <= t < vocab for row in a for t in row)


def test_sampling_runs_on_the_card_and_masks_like_greedy(llm):
    """Temperature, top-k and top-p sampling through vLLM's sampler on card
    tensors: the sort, cumulative sum, masks, exponential noise and argmax
    are card kernels (no CPU fallback), and masks that leave one candidate
    give the greedy tokens (a wrong top-p cut-off or temperature scaling
    would not)."""
    from vllm import SamplingParams

    p = [PROMPTS[0], PROMPTS[3]]
    greedy = llm.generate(p, SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True))
    before = llm.collective_rpc("spyre_stats")[0]["ops"]
    one_left = [
        SamplingParams(temperature=1.0, top_p=1e-6, max_tokens=6, ignore_eos=True, seed=3),
        SamplingParams(temperature=1e-4, max_tokens=6, ignore_eos=True, seed=4),
    ]
    for sp in one_left:
        outs = llm.generate(p, sp)
        assert [o.outputs[0].token_ids for o in outs] == \
            [o.outputs[0].token_ids for o in greedy], sp
    stats = llm.collective_rpc("spyre_stats")[0]
    assert stats["fallbacks"] == {}
    ran = {op for op, n in stats["ops"].items() if n > before.get(op, 0)}
    for op in ("sort", "cumsum", "argmax"):
        assert any(op in name for name in ran), (op, sorted(ran))


def test_model_forward_is_compiled(llm):
    """The steps above ran the model's forward through torch.compile's
    default (Inductor) path on the card, lowered into card recipes, not the
    eager fallback: the greedy tests compared its tokens with HF."""
    stats = llm.collective_rpc("spyre_stats")[0]
    assert stats["compile"] == "compiled"
    assert stats["compile_recipes"] > 0


def test_compile_off_is_eager_and_says_so(tiny_model, monkeypatch):
    from vllm import LLM, SamplingParams

    monkeypatch.setenv("VLLM_SPYRE_COMPILE", "0")
    eager = LLM(model=tiny_model, dtype="float32", max_model_len=64, max_num_seqs=2,
                block_size=8, kv_cache_memory_bytes=1 << 20, seed=0)
    try:
        out = eager.generate(PROMPTS[:1], SamplingParams(temperature=0.0, max_tokens=6,
                                                         ignore_eos=True))
        assert list(out[0].outputs[0].token_ids) == hf_greedy(tiny_model, PROMPTS[:1], 6)[0]
        assert eager.collective_rpc("spyre_stats")[0]["compile"] == \
            "eager (VLLM_SPYRE_COMPILE=0)"
    finally:
        eager.llm_engine.engine_core.shutdown()
