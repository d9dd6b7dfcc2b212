# SPDX-License-Identifier: MIT
"""A small Hugging Face model directory that vLLM can serve offline.

Nothing can be downloaded here, so the model is a GPT-2 of a small config
with random weights (seeded: the same directory on every machine) and a
byte-level BPE tokenizer trained on the text shipped in data/corpus.txt,
saved in the layout vLLM and transformers load from a local path.

    python -m vllm_spyre_plugin.tiny_model OUTDIR [--layers N] [--hidden N]
"""

from __future__ import annotations

import argparse
import json
import os
from importlib import resources

# ChatML-like: enough for /v1/chat/completions to render a prompt
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
EOS = "<|endoftext|>"
SPECIALS = [EOS, "<|system|>", "<|user|>", "<|assistant|>"]


def build_tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    text = resources.files("vllm_spyre_plugin").joinpath("data/corpus.txt").read_text()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(text.splitlines(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS,
        bos_token=EOS,
        unk_token=EOS,
        additional_special_tokens=SPECIALS[1:],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build(outdir: str, layers: int = 2, hidden: int = 64, heads: int = 4,
          positions: int = 256, vocab_size: int = 512, seed: int = 0) -> str:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = build_tokenizer(vocab_size)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_positions=positions,
        n_embd=hidden,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        torch_dtype="float32",
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(cfg).eval()
    # random init gives near-uniform logits: scale the weights up so the
    # greedy choice is decided by clear margins, not rounding
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.mul_(8.0)
    os.makedirs(outdir, exist_ok=True)
    model.save_pretrained(outdir, safe_serialization=True)
    tok.save_pretrained(outdir)
    with open(os.path.join(outdir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": tok.eos_token_id, "bos_token_id": tok.bos_token_id}, f)
    return outdir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--positions", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(build(a.outdir, a.layers, a.hidden, a.heads, a.positions, seed=a.seed))


if __name__ == "__main__":
    main()
