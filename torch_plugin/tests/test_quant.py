# SPDX-License-Identifier: MIT
"""Quantised inference through torchao on the card: ``quantize_`` with its
int8 weight-only config (int8 weights, per-channel scales) and its int8
dynamic-activation config (per-token int8 activations, ``_int_mm``) on the
Hugging Face GPT-2 and Llama test models, eager and ``torch.compile``
(Inductor), against the same quantised model on the CPU, with no CPU
fallback. The weight-only product reads the int8 weight on the card
(libspyre ``matmul_w8``) whatever path it takes.

Tolerance: weight-only, the card's fused epilogue scales the fp32 product
once where torchao's CPU path rounds the product to the model dtype first,
so logits agree to the model dtype's rounding, not bit for bit (fp32:
1e-4). Dynamic activations: quantising one activation is exact on the card
(same int8 values and scales as the CPU from the same input,
``test_activation_quantisation_is_exact``), but an activation that differs
from the CPU's in its last bit (the card's sin/cos of Llama's rotary
embedding, its rsqrt) can round to the neighbouring int8 step, 1/127 of
its row's largest magnitude: logits then agree to 2% of their largest
magnitude."""
import copy

import pytest
import torch
from torch import nn

import torch_spyre.inductor as spyre_inductor

torchao = pytest.importorskip("torchao", reason="scripts/build-plugin installs torchao")
from torchao.quantization import (  # noqa: E402
    Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_)

D = "spyre"
TOL = 1e-4


def linears(model):
    """GPT-2 keeps its projections in transformers' Conv1D ([in, out]
    weights), which torchao's default filter does not quantise: the same
    layers as nn.Linear, so the whole model is quantised."""
    from transformers.pytorch_utils import Conv1D
    for name, mod in list(model.named_modules()):
        for cname, child in list(mod.named_children()):
            if isinstance(child, Conv1D):
                lin = nn.Linear(child.weight.shape[0], child.weight.shape[1])
                lin.weight = nn.Parameter(child.weight.detach().t().contiguous())
                lin.bias = nn.Parameter(child.bias.detach().clone())
                setattr(mod, cname, lin)
    return model


def quantised_pair(kind, config):
    from test_models_eager import hf_model
    model = hf_model(kind)
    if kind == "gpt2":
        model = linears(model)
    model.config.tie_word_embeddings = False
    model = model.float().eval()
    ref = copy.deepcopy(model)
    dev = copy.deepcopy(model).to(D)
    quantize_(ref, config)
    quantize_(dev, config)
    return ref, dev


def ids():
    return torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(5))


def quantised_layers(model):
    from torchao.quantization import Int8Tensor
    return sum(isinstance(m.weight, Int8Tensor) for m in model.modules()
               if isinstance(m, nn.Linear))


CONFIGS = {"weight_only": Int8WeightOnlyConfig,
           "dynamic_act": Int8DynamicActivationInt8WeightConfig}


def assert_logits(got, want, config):
    if config == "weight_only":
        torch.testing.assert_close(got.cpu(), want, rtol=TOL, atol=TOL)
    else:
        torch.testing.assert_close(got.cpu(), want, rtol=0,
                                   atol=0.02 * want.abs().max().item())


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_eager_matches_cpu(kind, config, card_only):
    ref, dev = quantised_pair(kind, CONFIGS[config]())
    assert quantised_layers(dev) == quantised_layers(ref) > 4
    x = ids()
    with torch.no_grad():
        want = ref(x, use_cache=False).logits
        got = dev(x.to(D), use_cache=False).logits
    assert got.device.type == "spyre"
    assert_logits(got, want, config)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_compiled_matches_cpu(kind, config, card_only):
    torch._dynamo.reset()
    spyre_inductor.reset_stats()
    ref, dev = quantised_pair(kind, CONFIGS[config]())
    compiled = torch.compile(dev)
    x = ids()
    with torch.no_grad():
        want = ref(x, use_cache=False).logits
        got = compiled(x.to(D), use_cache=False).logits
    assert_logits(got, want, config)
    st = spyre_inductor.stats()
    assert (st["recipes"], st["fallback_nodes"]) == (1, 0), st
    torch._dynamo.reset()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_activation_quantisation_is_exact(dtype, card_only):
    """torchao's per-token symmetric int8 quantisation (amax, amin, divide,
    round, clamp, cast) of the same activations: the same int8 values and
    scales on the card as on the CPU, ties and an all-zero row included."""
    from torchao.quantization import Int8Tensor
    from torchao.quantization.granularity import PerRow
    g = torch.Generator().manual_seed(9)
    x = (torch.randn(7, 96, generator=g) * 3).to(dtype)
    x[1] = 0  # a zero row: the scale is eps
    x[2, :4] = torch.tensor([127.5, -127.5, 63.75, -0.25])  # ties of x / scale
    x[2, 4:] = 0
    want = Int8Tensor.from_hp(x, PerRow())
    got = Int8Tensor.from_hp(x.to(D), PerRow())
    assert torch.equal(got.qdata.cpu(), want.qdata)
    assert torch.equal(got.scale.cpu(), want.scale)


def test_int_mm_is_exact(card_only):
    g = torch.Generator().manual_seed(7)
    for m, k, n in ((1, 300, 70), (33, 64, 8), (260, 600, 520)):
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=g)
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, generator=g)
        a[0, :] = -128
        b[:, 0] = -128  # the largest products, k * 2^14
        got = torch._int_mm(a.to(D), b.to(D))
        assert got.dtype == torch.int32
        assert torch.equal(got.cpu(), torch._int_mm(a, b))
    # a transposed operand, and the out= form
    bt = torch.randint(-128, 128, (40, 64), dtype=torch.int8, generator=g)
    out = torch.empty(8, 40, dtype=torch.int32, device=D)
    torch._int_mm(a[:8, :64].to(D), bt.to(D).t(), out=out)
    assert torch.equal(out.cpu(), torch._int_mm(a[:8, :64], bt.t()))


def test_int_mm_refuses_other_dtypes():
    a = torch.ones(4, 8, device=D)
    with pytest.raises(RuntimeError, match="Expected self dtype int8"):
        torch._int_mm(a, a.t())
    b = torch.ones(8, 4, dtype=torch.int8, device=D)
    with pytest.raises(RuntimeError, match="needs to match"):
        torch._int_mm(b, b)


def device_ns(fn):
    a = torch.Event(device=D, enable_timing=True)
    b = torch.Event(device=D, enable_timing=True)
    torch.spyre.synchronize()
    a.record()
    out = fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e6, out


def test_compiled_weight_only_reads_int8_weights(card_only):
    """The compiled product takes the int8 weight itself: a decode row over
    an int8 [3072, 768] weight takes about the time of reading its 2.4 MB
    at 200 GB/s (11.8 us) plus a launch, well under the 23.6 us an fp16
    copy of the weight would need."""
    torch._dynamo.reset()
    lin = nn.Linear(768, 3072).half()
    quantize_(lin, Int8WeightOnlyConfig())
    dev = copy.deepcopy(lin).to(D)
    f = torch.compile(dev)
    x = torch.randn(1, 768, generator=torch.Generator().manual_seed(8)).half()
    xd = x.to(D)
    with torch.no_grad():
        f(xd)
        ns, got = device_ns(lambda: f(xd))
        w = lin.weight.qdata.float() * lin.weight.scale.float().reshape(-1, 1)
    want = x.float() @ w.t() + lin.bias.float()
    torch.testing.assert_close(got.cpu().float(), want, rtol=1e-2, atol=1e-2)
    assert ns < 2000 + 1.25 * 3072 * 768 / 200, ns
    torch._dynamo.reset()
