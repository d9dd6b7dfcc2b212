# SPDX-License-Identifier: MIT
"""Every model of the zoo (test_model_zoo.py) through ``torch.compile(model)``
with no backend argument (Inductor and the spyre device pass): the CPU
fallback forbidden, no node of any graph left to an eager kernel (the
pass's fallback count is 0: convolutions, max pooling and the MoE routing
are lowered into the recipes too), logits against the same model on the
CPU within the zoo's tolerance."""
import pytest
import torch

import torch_spyre.inductor as spyre_inductor
from test_model_zoo import (DECODERS, _build, _close, _prompts, bert, resnet, t5,
                            vit)

D = "spyre"

pytestmark = pytest.mark.usefixtures("card_only")


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    spyre_inductor.reset_stats()
    yield
    torch._dynamo.reset()


def _all_in_recipes():
    st = spyre_inductor.stats()
    assert st["graphs"] >= 1 and st["recipes"] + st["per_size_graphs"] >= 1, st
    assert st["fallback_nodes"] == 0, st["graph_breaks"]


@pytest.mark.parametrize("factory", DECODERS, ids=lambda f: f.__name__)
def test_decoder_prefill(factory):
    cpu, card = _build(factory)
    ids, mask = _prompts()
    with torch.no_grad():
        want = cpu(ids, attention_mask=mask, use_cache=False).logits
        got = torch.compile(card)(ids.to(D), attention_mask=mask.to(D), use_cache=False).logits
    _close(got, want)
    _all_in_recipes()


def test_encoder():
    cpu, card = _build(bert)
    ids, mask = _prompts()
    with torch.no_grad():
        want = cpu(ids, attention_mask=mask).last_hidden_state
        got = torch.compile(card)(ids.to(D), attention_mask=mask.to(D)).last_hidden_state
    _close(got, want)
    _all_in_recipes()


def test_encoder_decoder_forward():
    cpu, card = _build(t5)
    ids, mask = _prompts()
    dec = torch.zeros(2, 3, dtype=torch.long)
    with torch.no_grad():
        want = cpu(ids, attention_mask=mask, decoder_input_ids=dec).logits
        got = torch.compile(card)(ids.to(D), attention_mask=mask.to(D),
                                  decoder_input_ids=dec.to(D)).logits
    _close(got, want)
    _all_in_recipes()


@pytest.mark.parametrize("factory", [vit, resnet], ids=lambda f: f.__name__)
def test_vision(factory):
    cpu, card = _build(factory)
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        want = cpu(x).logits
        got = torch.compile(card)(x.to(D)).logits
    _close(got, want)
    _all_in_recipes()
