# SPDX-License-Identifier: MIT
"""GPT-2 small (12 layers, 768 wide, 124M parameters, random weights) in
fp16 on the card, eager and torch.compile(backend="spyre"): modelled device
time of a 32-token prefill and of one decode step with the KV cache
(DynamicCache), SUBMITs per call, host time per decode token, and the
decode step's modelled time against the LPDDR5 roofline (every weight
byte read once at 200 GB/s). Each figure is printed and emitted as an
@bench record for bench/report. A 512-token prefill is measured too, and
every step gets its roofline, max(bytes / 200 GB/s, FLOPs / 65.5 TFLOP/s)
+ 2 us of launch: bytes are the weights, the KV cache read and written and
the logits written; FLOPs count 2 per multiply-accumulate of every linear
layer, the LM head and attention's two products (not causally halved).

    SPYRE_BACKEND=sim build/venv/bin/python bench/plugin-big-graphs.py

Each decode step is measured right after a fresh (unmeasured) prefill: the
same cache length every time, so a warm compiled graph is measured, not the
compile of a graph for a new length.
"""
import json
import os
import statistics
import time
import warnings

import torch

warnings.simplefilter("ignore")  # deprecation chatter of transformers

PROMPT = 32
PREFILL_BIG = 512
LPDDR5_GBS = 200.0  # Documentation/spyre-card.rst, device memory bandwidth
PEAK_FP16 = 65.536e12  # 32 cores x 1 GHz x 1024 MAC x 2
LAUNCH_S = 2e-6


def step_roofline(cfg, weight_bytes, tokens, ctx):
    """(roofline seconds, FLOPs) of a step of @tokens new tokens after @ctx cached."""
    d, L, V = cfg.n_embd, cfg.n_layer, cfg.vocab_size
    total = ctx + tokens
    lin = 2 * tokens * (d * 3 * d + d * d + 2 * d * 4 * d) * L
    attn = 2 * 2 * tokens * total * d * L
    head = 2 * tokens * d * V
    flops = lin + attn + head
    kv = 2 * L * total * d * 2  # keys and values, fp16
    nbytes = weight_bytes + kv + tokens * V * 2
    return max(nbytes / (LPDDR5_GBS * 1e9), flops / PEAK_FP16) + LAUNCH_S, flops


def record(name, value, unit, ratio_of="", how=""):
    print("@bench " + json.dumps({"name": name, "value": round(value, 4), "unit": unit,
                                  "ratio_of": ratio_of, "how": how,
                                  "backend": os.environ.get("SPYRE_BACKEND", "drm")}))


def device_ms(fn):
    """Modelled device time of what @fn enqueues (timing events around it)."""
    a = torch.Event(device="spyre", enable_timing=True)
    b = torch.Event(device="spyre", enable_timing=True)
    torch.spyre.synchronize()
    a.record()
    out = fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b), out


def submits(fn):
    torch.spyre.synchronize()
    s0 = torch.spyre.counters()["submits"]
    out = fn()
    torch.spyre.synchronize()
    return torch.spyre.counters()["submits"] - s0, out


def measure(name, m, transformers, ids, nxt, ids_big, reps):
    """Prefill and decode figures of model @m (eager or compiled). Every
    decode step follows a fresh prefill (not measured), so each one sees the
    same cache length and the cache as the prefill left it."""
    def prefill():
        return m(ids, past_key_values=transformers.DynamicCache(), use_cache=True)

    def decode(cache):
        return m(nxt, past_key_values=cache, use_cache=True)

    def prefill_big():
        return m(ids_big, past_key_values=transformers.DynamicCache(), use_cache=True)

    with torch.no_grad():
        decode(prefill().past_key_values)  # warm: allocator cache filled, graphs compiled
        n_pre, _ = submits(prefill)
        cache = prefill().past_key_values
        n_dec, _ = submits(lambda: decode(cache))
        pre_ms, _ = device_ms(prefill)
        prefill_big()  # warm (a compiled graph for this length)
        big_ms, _ = device_ms(prefill_big)
        cache = prefill().past_key_values
        dec_ms, _ = device_ms(lambda: decode(cache))
        hosts = []
        for _ in range(reps):
            cache = prefill().past_key_values
            torch.spyre.synchronize()
            t0 = time.perf_counter()
            decode(cache).logits.cpu()  # the token's logits reach the host
            hosts.append(time.perf_counter() - t0)
    host_ms = statistics.median(hosts) * 1e3
    print(f"GPT-2 small {name}: prefill ({PROMPT} tokens) {pre_ms:.3f} ms modelled, "
          f"{n_pre} SUBMITs; decode step {dec_ms:.3f} ms modelled, {n_dec} SUBMITs; "
          f"host {host_ms:.1f} ms per decode token (median of {reps})")
    print(f"GPT-2 small {name}: prefill ({PREFILL_BIG} tokens) {big_ms:.3f} ms modelled")
    return {"pre_ms": pre_ms, "dec_ms": dec_ms, "n_pre": n_pre, "n_dec": n_dec,
            "host_ms": host_ms, "big_ms": big_ms}


def main():
    import transformers
    p = torch.spyre.get_device_properties()
    print(f"device: {p.name}, backend {p.backend}, torch {torch.__version__}")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval().to(torch.float16)
    # counted before the move: the tied embedding / LM head matrix once
    nparams = sum(q.numel() for q in model.parameters())
    weight_bytes = sum(q.numel() * q.element_size() for q in model.parameters())
    model = model.to("spyre")
    roofline_ms = weight_bytes / (LPDDR5_GBS * 1e9) * 1e3
    print(f"GPT-2 small: {nparams / 1e6:.1f}M parameters, {weight_bytes / 2**20:.0f} MiB fp16; "
          f"LPDDR5 roofline {roofline_ms:.3f} ms per decode step")
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50257, (1, PROMPT), generator=g).to("spyre")
    nxt = torch.randint(0, 50257, (1, 1), generator=g).to("spyre")
    ids_big = torch.randint(0, 50257, (1, PREFILL_BIG), generator=g).to("spyre")
    res = {"eager": measure("eager", model, transformers, ids, nxt, ids_big, reps=3)}
    compiled = torch.compile(model, backend="spyre")
    res["compiled"] = measure("compiled", compiled, transformers, ids, nxt, ids_big, reps=10)
    e, c = res["eager"], res["compiled"]
    cfg = model.config
    steps = (("decode step", "dec_ms", 1, PROMPT), (f"prefill {PROMPT} tokens", "pre_ms", PROMPT, 0),
             (f"prefill {PREFILL_BIG} tokens", "big_ms", PREFILL_BIG, 0))
    print("GPT-2 small roofline per model step: max(bytes / 200 GB/s, FLOPs / 65.5 TFLOP/s) "
          "+ 2 us")
    for kind, r in res.items():
        for label, key, tokens, ctx in steps:
            roof, flops = step_roofline(cfg, weight_bytes, tokens, ctx)
            ms = r[key]
            frac = flops / PEAK_FP16 / (ms * 1e-3)
            print(f"  {kind:8s} {label:20s} {ms:9.3f} ms modelled, roofline {roof * 1e3:8.3f} ms, "
                  f"{ms / (roof * 1e3):5.2f}x, {flops / 1e9:8.1f} GFLOP, {100 * frac:5.1f}% of peak")
            record(f"GPT-2 small {label} vs roofline, {kind}", ms / (roof * 1e3), "x",
                   f"modelled ({ms:.3f} ms) / max(bytes / 200 GB/s, FLOPs / peak) + 2 us "
                   f"({roof * 1e3:.3f} ms)", "timing events around one warm call")
            record(f"GPT-2 small {label} fraction of fp16 peak, {kind}", frac, "x",
                   f"FLOPs / 65.5 TFLOP/s ({flops / PEAK_FP16 * 1e3:.3f} ms) / modelled "
                   f"({ms:.3f} ms)", "timing events around one warm call")
    for kind, r in res.items():
        record(f"GPT-2 small prefill {PROMPT} tokens modelled device time, {kind}",
               r["pre_ms"], "ms", how="timing events around one warm call (deterministic)")
        record(f"GPT-2 small decode step modelled device time, {kind}", r["dec_ms"], "ms",
               how="timing events around one warm step after a 32-token prefill")
        record(f"GPT-2 small SUBMITs per prefill, {kind}", r["n_pre"], "count")
        record(f"GPT-2 small SUBMITs per decode step, {kind}", r["n_dec"], "count")
        record(f"GPT-2 small host time per decode token, {kind}", r["host_ms"], "ms",
               how="wall time of one decode step with its logits read back, median")
    record("GPT-2 small decode step vs LPDDR5 roofline, compiled", c["dec_ms"] / roofline_ms,
           "x", f"modelled decode step ({c['dec_ms']:.3f} ms) / weight bytes at 200 GB/s "
           f"({roofline_ms:.3f} ms)")
    record("GPT-2 small decode step vs LPDDR5 roofline, eager", e["dec_ms"] / roofline_ms,
           "x", f"modelled decode step ({e['dec_ms']:.3f} ms) / weight bytes at 200 GB/s")
    record("GPT-2 small host time per decode token, eager vs compiled",
           e["host_ms"] / c["host_ms"], "x",
           f"eager ({e['host_ms']:.1f} ms) / compiled ({c['host_ms']:.1f} ms) host time per "
           "token, logits read back", "median of 3 (eager) and 10 (compiled) steps")
    record("GPT-2 small host time per decode token vs modelled, compiled",
           c["host_ms"] / c["dec_ms"], "x",
           f"host time per token ({c['host_ms']:.1f} ms) / modelled device time "
           f"({c['dec_ms']:.3f} ms): what the {p.backend} path adds", "median of 10 steps")
    print(f"GPT-2 small decode: compiled {c['dec_ms'] / roofline_ms:.2f}x the roofline, "
          f"eager {e['dec_ms'] / roofline_ms:.2f}x; SUBMITs per step eager {e['n_dec']}, "
          f"compiled {c['n_dec']}")


if __name__ == "__main__":
    main()
