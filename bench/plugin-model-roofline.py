# SPDX-License-Identifier: MIT
"""Model steps against their roofline on the card, compiled with
torch.compile(model) (PyTorch's default backend, Inductor; the spyre device
pass lowers each graph to one recipe): a GPT-2-small-shaped model (124M
parameters) and a Llama-shaped one (~160M: 12 layers, 768 wide, MLP 3072,
32000-token vocabulary, untied LM head), each in fp16 and with int8 weights
(torchao ``quantize_`` with ``Int8WeightOnlyConfig``: every nn.Linear,
per-channel fp32 scales; GPT-2's Conv1D projections made nn.Linear first so
that they are quantised too). Random weights; nothing is downloaded.

Per model step, the modelled device time (timing events around one warm
call) against its roofline, max(bytes / 200 GB/s, FLOPs / 65.5 TFLOP/s) +
2 us of launch, where bytes are what a step must move at least once: every
linear weight (int8: one byte each plus its scales), the norms, the
embedding rows of the step's tokens, the KV cache read and written and the
logits written; FLOPs count 2 per multiply-accumulate of the linear layers,
the LM head and attention's two products. Printed, and emitted as @bench
records for bench/report:

- decode step (one token after a 32-token prefill) vs its roofline,
- 512-token prefill as a fraction of fp16 peak,
- where the fp16 prefill's time goes: the same model compiled op by op
  (``torch_spyre.compiler.kernel_profile``: a SUBMIT per kernel, each named
  after its kernel, shape, dtype and bytes in ``torch.spyre.trace``), one
  traced 512-token prefill, per kernel shape its launches, modelled time
  and roofline (max(bytes / 200 GB/s, FLOPs / peak), bytes of the tensors
  it binds). Op by op the kernels' sum is more than the fused recipe's time
  (every intermediate goes through LPDDR5); it says which kernels to fix.

    SPYRE_BACKEND=sim build/venv/bin/python bench/plugin-model-roofline.py [gpt2|llama]
"""
import json
import os
import re
import sys
import tempfile
import warnings

import torch
from torch import nn

warnings.simplefilter("ignore")  # deprecation chatter of transformers and torchao

PROMPT = 32
PREFILL_BIG = 512
LPDDR5_GBS = 200.0  # Documentation/spyre-card.rst, device memory bandwidth
PEAK_FP16 = 65.536e12  # 32 cores x 1 GHz x 1024 MAC x 2
LAUNCH_S = 2e-6


def _sibling(name, path):
    """A module of this directory whose file name is not an identifier."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# the @bench record and the timing-event measurement of plugin-big-graphs.py
_big = _sibling("plugin_big_graphs", "plugin-big-graphs.py")
record, device_ms = _big.record, _big.device_ms


def gpt2_linears(model):
    """transformers' Conv1D ([in, out] weights) as nn.Linear, so that
    torchao's default filter quantises GPT-2's projections."""
    from transformers.pytorch_utils import Conv1D
    for mod in list(model.modules()):
        for name, child in list(mod.named_children()):
            if isinstance(child, Conv1D):
                lin = nn.Linear(child.weight.shape[0], child.weight.shape[1])
                lin.weight = nn.Parameter(child.weight.detach().t().contiguous())
                lin.bias = nn.Parameter(child.bias.detach().clone())
                setattr(mod, name, lin)
    return model


def build(kind):
    import transformers
    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = transformers.GPT2Config()
        model = gpt2_linears(transformers.GPT2LMHeadModel(cfg))
        shape = dict(d=cfg.n_embd, layers=cfg.n_layer, kv_d=cfg.n_embd, vocab=cfg.vocab_size)
    else:
        cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=3072,
                                       num_hidden_layers=12, num_attention_heads=12,
                                       num_key_value_heads=12, max_position_embeddings=1024,
                                       tie_word_embeddings=False)
        model = transformers.LlamaForCausalLM(cfg)
        shape = dict(d=768, layers=12, kv_d=768, vocab=32000)
    cfg._attn_implementation = "sdpa"
    return model.eval().to(torch.float16), shape


def weight_bytes(model, tokens):
    """Bytes a step reads of the parameters: linear weights (int8 + scales
    when quantised), biases and norms whole, embedding tables one row per
    token."""
    from torchao.quantization import Int8Tensor
    total, seen = 0, set()
    # linears first: a tied LM head reads its whole matrix, the embedding rows
    mods = sorted(model.modules(), key=lambda m: not isinstance(m, nn.Linear))
    for mod in mods:
        for name, p in mod.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            if isinstance(p, Int8Tensor):
                total += p.qdata.numel() + p.scale.numel() * p.scale.element_size()
            elif isinstance(mod, nn.Embedding):
                total += tokens * p.shape[1] * p.element_size()
            else:
                total += p.numel() * p.element_size()
    return total


def step_roofline(model, shape, wbytes, tokens, ctx):
    """(roofline seconds, bytes, FLOPs) of @tokens new tokens after @ctx cached."""
    d, L, V, kvd = shape["d"], shape["layers"], shape["vocab"], shape["kv_d"]
    total = ctx + tokens
    # the LM head is one of the linears (GPT-2's, tied to the embedding, too)
    lin_macs = sum(m.in_features * m.out_features for m in model.modules()
                   if isinstance(m, nn.Linear))
    flops = 2 * tokens * lin_macs + 2 * 2 * tokens * total * d * L
    kv = 2 * L * (total + tokens) * kvd * 2  # keys and values read, new ones written (fp16)
    nbytes = wbytes + kv + tokens * V * 2
    return (max(nbytes / (LPDDR5_GBS * 1e9), flops / PEAK_FP16) + LAUNCH_S, nbytes, flops)


def measure(m, transformers, ids, nxt, ids_big):
    def prefill(x):
        return m(x, past_key_values=transformers.DynamicCache(), use_cache=True)

    def decode(cache):
        return m(nxt, past_key_values=cache, use_cache=True)

    with torch.no_grad():
        decode(prefill(ids).past_key_values)  # warm: graphs compiled for these sizes
        cache = prefill(ids).past_key_values
        dec_ms, _ = device_ms(lambda: decode(cache))
        prefill(ids_big)
        big_ms, _ = device_ms(lambda: prefill(ids_big))
    return dec_ms, big_ms


_LABEL = re.compile(r"^(\S+) (\S+) (\S+)( w8)? (\d+)B")


def kernel_roofline(label):
    """(kernel key, roofline seconds) of a kernel from its trace label
    (libspyre's SPYRE_COMPILE_OP_BY_OP names), or None for other spans."""
    m = _LABEL.match(label)
    if m is None:
        return None
    name, dims, _, _, nbytes = m.groups()
    flops = 0
    if name in ("matmul", "linear", "matmul_w8", "linear_w8", "embedding"):
        n = 1
        for d in dims.split("x"):
            n *= int(d)
        flops = 2 * n
    return m.group(0), max(int(nbytes) / (LPDDR5_GBS * 1e9), flops / PEAK_FP16)


def kernel_table(model, transformers, ids_big, label, top=12):
    """Prints where the compiled prefill's time goes, kernel by kernel (the
    module's docstring); returns the kernels' summed modelled ms."""
    from torch_spyre.compiler import kernel_profile
    torch._dynamo.reset()
    with kernel_profile(), torch.no_grad():
        prof = torch.compile(model, backend="spyre", dynamic=False)

        def prefill():
            return prof(ids_big, past_key_values=transformers.DynamicCache(), use_cache=True)

        prefill()  # compiled op by op
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            with torch.spyre.trace(path):
                prefill()
            with open(path) as f:
                events = json.load(f)["traceEvents"]
    rows = {}
    for e in events:
        if e["ph"] != "X" or e.get("cat") != "compute":
            continue
        got = kernel_roofline(e["name"])
        key, roof = got if got else (e["name"], 0.0)
        r = rows.setdefault(key, [0, 0.0, 0.0])
        r[0] += 1
        r[1] += e["dur"] * 1e-3  # us -> ms
        r[2] += roof * 1e3
    total = sum(r[1] for r in rows.values())
    print(f"  {label}: prefill {PREFILL_BIG} tokens op by op, {total:.3f} ms modelled in "
          f"{sum(r[0] for r in rows.values())} kernels; the {top} largest:")
    print(f"    {'kernel (batch.. M N K / space, dtype, bytes)':58s} {'launches':>8s} "
          f"{'ms':>8s} {'share':>6s} {'roofline':>9s} {'x roof':>7s}")
    for key, (n, ms, roof) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]:
        ratio = f"{ms / roof:7.2f}" if roof else "      -"
        print(f"    {key[:58]:58s} {n:8d} {ms:8.3f} {100 * ms / total:5.1f}% {roof:9.3f} {ratio}")
    # op by op every intermediate has a buffer of its own: free them (the
    # recipe cache holds the compiled parts) before the next model
    import gc
    import torch_spyre.compiler as spyre_compiler
    del prof, prefill
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    gc.collect()
    torch.spyre.synchronize()
    torch.spyre.empty_cache()
    return total


def run(kind, quant):
    import transformers
    from torchao.quantization import Int8WeightOnlyConfig, quantize_
    torch._dynamo.reset()
    model, shape = build(kind)
    if quant:
        quantize_(model, Int8WeightOnlyConfig())
    nparams = sum(p.numel() for p in model.parameters())
    model = model.to("spyre")
    # torch.compile's default sizes: the second step length makes the
    # sequence dim symbolic, a graph compiled per size met (its recipes are
    # those of the static graph of that size)
    compiled = torch.compile(model)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, shape["vocab"], (1, PROMPT), generator=g).to("spyre")
    nxt = torch.randint(0, shape["vocab"], (1, 1), generator=g).to("spyre")
    ids_big = torch.randint(0, shape["vocab"], (1, PREFILL_BIG), generator=g).to("spyre")
    dec_ms, big_ms = measure(compiled, transformers, ids, nxt, ids_big)
    label = f"{'GPT-2 small' if kind == 'gpt2' else 'Llama 160M'} {'int8 weights' if quant else 'fp16'}"
    print(f"{label}: {nparams / 1e6:.1f}M parameters")
    out = {}
    for step, ms, tokens, ctx in (("decode step", dec_ms, 1, PROMPT),
                                  (f"prefill {PREFILL_BIG} tokens", big_ms, PREFILL_BIG, 0)):
        roof, nbytes, flops = step_roofline(model, shape, weight_bytes(model, tokens), tokens,
                                            ctx)
        frac = flops / PEAK_FP16 / (ms * 1e-3)
        print(f"  {label:26s} {step:18s} {ms:9.3f} ms modelled, roofline {roof * 1e3:8.3f} ms "
              f"({nbytes / 1e6:7.1f} MB, {flops / 1e9:7.1f} GFLOP), {ms / (roof * 1e3):5.2f}x, "
              f"{100 * frac:5.1f}% of fp16 peak")
        how = ("torch.compile (Inductor), timing events around one warm call; roofline "
               "max(bytes / 200 GB/s, FLOPs / 65.5 TFLOP/s) + 2 us")
        record(f"{label} compiled {step} vs roofline", ms / (roof * 1e3), "x",
               f"modelled ({ms:.3f} ms) / roofline ({roof * 1e3:.3f} ms)", how)
        record(f"{label} compiled {step} fraction of fp16 peak", frac, "x",
               f"FLOPs / peak ({flops / PEAK_FP16 * 1e3:.3f} ms) / modelled ({ms:.3f} ms)", how)
        out[step] = (ms, roof * 1e3)
    # fp16 only: op by op every intermediate has its own buffer, and the
    # int8 model's (615 MB) do not fit next to it in the card's 1 GB
    if not quant and os.environ.get("SPYRE_BENCH_KERNELS", "1") != "0":
        kernel_table(model, transformers, ids_big, label)
    torch._dynamo.reset()
    return out


def main():
    kinds = sys.argv[1:] or ["gpt2", "llama"]
    p = torch.spyre.get_device_properties()
    print(f"device: {p.name}, backend {p.backend}, torch {torch.__version__}")
    for kind in kinds:
        for quant in (False, True):
            run(kind, quant)


if __name__ == "__main__":
    main()
