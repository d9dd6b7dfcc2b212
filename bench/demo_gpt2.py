# SPDX-License-Identifier: MIT
"""The demo's GPT-2 (torch_plugin/examples/gpt_demo.py's shape: 2 layers,
64 wide, 4 heads, 12 tokens, random weights) for the VM benchmarks that
time an eager forward, so they all time the same model."""
import torch
import transformers


def demo_gpt2(device="spyre"):
    """(model in eval mode on @device, a [1, 12] batch of token ids there)."""
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2,
                                  n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
                                  attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(cfg).eval().to(device)
    ids = torch.randint(1, 256, (1, 12), generator=torch.Generator().manual_seed(1))
    return model, ids.to(device)
