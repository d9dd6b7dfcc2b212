# SPDX-License-Identifier: MIT
"""The model zoo: Hugging Face ``transformers`` architectures people run,
built from small configs with random weights (nothing is downloaded), on the
card with the CPU fallback forbidden, eager and compiled, against the same
model on the CPU.

Configs follow what the real checkpoints use, not the simplest that passes:
grouped-query attention where the family has it (Llama, Mistral, Qwen2/3,
Phi-3, Granite, Mixtral, Gemma 2), tied embeddings where the small
checkpoints tie them (GPT-2, Qwen2, Gemma 2), biases where the family has
them (Qwen2's q/k/v, GPT-2, OPT, BERT), sliding windows (Mistral, Gemma 2),
mixture of experts (Mixtral), each model's default attention
implementation. Decoders generate greedily from a left-padded batch of two
prompts (the pad positions' queries see no key: PyTorch's safe softmax
gives them 0), and their compiled prefill logits are compared as well.

Float32 results within 1e-3 of the CPU (the card computes in fp32 with its
own summation order); generated tokens equal."""
import copy

import pytest
import torch

D = "spyre"
ATOL = RTOL = 1e-3


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


def _t():
    import transformers  # installed into build/venv by scripts/build-plugin
    return transformers


def _decoder(cls, cfg_cls, **kw):
    cfg = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
               pad_token_id=0, bos_token_id=1, eos_token_id=2)
    cfg.update(kw)
    return cls(cfg_cls(**cfg))


def gpt2():
    t = _t()
    return t.GPT2LMHeadModel(t.GPT2Config(vocab_size=128, n_positions=128, n_embd=64,
                                          n_layer=2, n_head=4, bos_token_id=1,
                                          eos_token_id=2, pad_token_id=0))


def llama():
    t = _t()
    return _decoder(t.LlamaForCausalLM, t.LlamaConfig, rope_theta=500000.0)


def mistral():
    t = _t()
    return _decoder(t.MistralForCausalLM, t.MistralConfig, sliding_window=4)


def qwen2():
    t = _t()
    return _decoder(t.Qwen2ForCausalLM, t.Qwen2Config, tie_word_embeddings=True)


def qwen3():
    t = _t()
    return _decoder(t.Qwen3ForCausalLM, t.Qwen3Config, head_dim=16)


def phi3():
    t = _t()
    return _decoder(t.Phi3ForCausalLM, t.Phi3Config)


def granite():
    t = _t()
    return _decoder(t.GraniteForCausalLM, t.GraniteConfig, embedding_multiplier=12.0,
                    residual_multiplier=0.22, attention_multiplier=0.0078125,
                    logits_scaling=8.0)


def gemma2():
    t = _t()
    return _decoder(t.Gemma2ForCausalLM, t.Gemma2Config, head_dim=16, sliding_window=4)


def opt():
    t = _t()
    return t.OPTForCausalLM(t.OPTConfig(vocab_size=128, hidden_size=64, ffn_dim=128,
                                        num_hidden_layers=2, num_attention_heads=4,
                                        max_position_embeddings=128, word_embed_proj_dim=64,
                                        pad_token_id=0, bos_token_id=1, eos_token_id=2))


def mixtral():
    t = _t()
    return _decoder(t.MixtralForCausalLM, t.MixtralConfig, num_local_experts=4,
                    num_experts_per_tok=2)


DECODERS = [gpt2, llama, mistral, qwen2, qwen3, phi3, granite, gemma2, opt, mixtral]


def _build(factory):
    """(the model on the CPU, a copy of it on the card), same weights."""
    torch.manual_seed(0)
    model = factory().eval()
    return model, copy.deepcopy(model).to(D)


def _prompts():
    ids = torch.randint(3, 128, (2, 7), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    ids[1, :3] = 0          # left padding
    mask[1, :3] = 0
    return ids, mask


def _close(got, want):
    assert got.device.type == "spyre"
    torch.testing.assert_close(got.cpu(), want, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("factory", DECODERS, ids=lambda f: f.__name__)
def test_decoder_generate_left_padded(factory):
    cpu, card = _build(factory)
    ids, mask = _prompts()
    kw = dict(max_new_tokens=4, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = cpu.generate(ids, attention_mask=mask, **kw)
        got = card.generate(ids.to(D), attention_mask=mask.to(D), **kw)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


@pytest.mark.parametrize("factory", DECODERS, ids=lambda f: f.__name__)
def test_decoder_compiled_prefill(factory):
    cpu, card = _build(factory)
    ids, mask = _prompts()
    with torch.no_grad():
        want = cpu(ids, attention_mask=mask, use_cache=False).logits
        compiled = torch.compile(card, backend="spyre")
        got = compiled(ids.to(D), attention_mask=mask.to(D), use_cache=False).logits
    _close(got, want)


def bert():
    t = _t()
    return t.BertModel(t.BertConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                     num_hidden_layers=2, num_attention_heads=4))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_encoder_embeddings(compiled):
    cpu, card = _build(bert)
    ids, mask = _prompts()
    with torch.no_grad():
        want = cpu(ids, attention_mask=mask).last_hidden_state
        run = torch.compile(card, backend="spyre") if compiled else card
        got = run(ids.to(D), attention_mask=mask.to(D)).last_hidden_state
    _close(got, want)


def t5():
    t = _t()
    return t.T5ForConditionalGeneration(t.T5Config(vocab_size=128, d_model=64, d_kv=16,
                                                   d_ff=128, num_layers=2, num_heads=4,
                                                   decoder_start_token_id=0, pad_token_id=0,
                                                   eos_token_id=1))


def test_encoder_decoder_generate_and_compiled_forward():
    cpu, card = _build(t5)
    ids, mask = _prompts()
    kw = dict(max_new_tokens=4, do_sample=False)
    dec = torch.zeros(2, 3, dtype=torch.long)
    with torch.no_grad():
        want = cpu.generate(ids, attention_mask=mask, **kw)
        got = card.generate(ids.to(D), attention_mask=mask.to(D), **kw)
        assert torch.equal(got.cpu(), want), (got.cpu(), want)
        want = cpu(ids, attention_mask=mask, decoder_input_ids=dec).logits
        compiled = torch.compile(card, backend="spyre")
        got = compiled(ids.to(D), attention_mask=mask.to(D), decoder_input_ids=dec.to(D)).logits
    _close(got, want)


def vit():
    t = _t()
    return t.ViTForImageClassification(t.ViTConfig(hidden_size=64, intermediate_size=128,
                                                   num_hidden_layers=2, num_attention_heads=4,
                                                   image_size=32, patch_size=8, num_labels=10))


def resnet():
    t = _t()
    return t.ResNetForImageClassification(t.ResNetConfig(embedding_size=16,
                                                         hidden_sizes=[16, 32, 64],
                                                         depths=[1, 2, 1],
                                                         layer_type="bottleneck",
                                                         num_labels=10))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("factory", [vit, resnet], ids=lambda f: f.__name__)
def test_vision(factory, compiled):
    cpu, card = _build(factory)
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        want = cpu(x).logits
        run = torch.compile(card, backend="spyre") if compiled else card
        got = run(x.to(D)).logits
    _close(got, want)
