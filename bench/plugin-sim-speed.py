# SPDX-License-Identifier: MIT
"""How fast the sim card runs a real-size model: wall time of a GPT-2
small (12 layers, 768 wide, 124M parameters, random weights) decode step
(one token after a 32-token prefill, DynamicCache) and of the 32-token
prefill on the sim card in fp16, eager and torch.compile(backend="spyre"),
divided by PyTorch's wall time for the same call on the CPU in fp32, all
measured in one run, and the same ratio of CPU time (every thread of the
process), which load from other processes disturbs less; plus each call's modelled device time, which no
speed-up of the sim may change.

    SPYRE_BACKEND=sim build/venv/bin/python bench/plugin-sim-speed.py [--reps N]

Each figure is the minimum of N calls (default 3): the machine is shared,
and the minimum is the call least disturbed by others. Wall time of a
spyre call runs until its logits are on the host.
"""
import argparse
import json
import os
import resource
import time
import warnings

import torch

warnings.simplefilter("ignore")  # deprecation chatter of transformers

PROMPT = 32


def record(name, value, unit, ratio_of="", how=""):
    print("@bench " + json.dumps({"name": name, "value": round(value, 4), "unit": unit,
                                  "ratio_of": ratio_of, "how": how,
                                  "backend": os.environ.get("SPYRE_BACKEND", "drm")}))


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn, sync, prep=None):
    """(wall, CPU) seconds of one call: CPU is every thread of the process
    (PyTorch's CPU threads; the sim's card thread), which other load on the
    machine disturbs less than wall time."""
    if prep:
        prep()
    sync()
    t0, c0 = time.perf_counter(), cpu_s()
    fn()
    return time.perf_counter() - t0, cpu_s() - c0


def best_of(fn, reps, sync, prep=None):
    runs = [timed(fn, sync, prep) for _ in range(reps)]
    return min(w for w, _ in runs) * 1e3, min(c for _, c in runs) * 1e3


def device_ms(fn):
    a = torch.Event(device="spyre", enable_timing=True)
    b = torch.Event(device="spyre", enable_timing=True)
    torch.spyre.synchronize()
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b)


def calls(m, transformers, ids, nxt):
    """(prefill, decode) callables of model @m; decode gets a fresh
    prefill's cache each time (same cache length), prepared outside the
    timed call."""
    caches = []

    def prefill():
        return m(ids, past_key_values=transformers.DynamicCache(), use_cache=True).logits.cpu()

    def prep():
        caches.append(m(ids, past_key_values=transformers.DynamicCache(),
                        use_cache=True).past_key_values)

    def decode():
        return m(nxt, past_key_values=caches.pop(), use_cache=True).logits.cpu()
    return prefill, prep, decode


def measure(m, transformers, ids, nxt, reps, spyre):
    prefill, prep, decode = calls(m, transformers, ids, nxt)
    sync = torch.spyre.synchronize if spyre else (lambda: None)

    with torch.no_grad():
        prep()
        decode()  # warm: graphs compiled, programs loaded
        pre, pre_cpu = best_of(prefill, reps, sync)
        dec, dec_cpu = best_of(decode, reps, sync, prep)
        r = {"pre": pre, "dec": dec, "pre_cpu": pre_cpu, "dec_cpu": dec_cpu}
        if spyre:
            r["pre_dev"] = device_ms(prefill)
            prep()
            r["dec_dev"] = device_ms(decode)
    return r


def main():
    import transformers
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=["eager", "compiled"], default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    cpu = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50257, (1, PROMPT), generator=g)
    nxt = torch.randint(0, 50257, (1, 1), generator=g)
    res = {"cpu": measure(cpu, transformers, ids, nxt, a.reps, False)}
    model = cpu.to(torch.float16).to("spyre")
    ids_s, nxt_s = ids.to("spyre"), nxt.to("spyre")
    if a.only != "compiled":
        res["eager"] = measure(model, transformers, ids_s, nxt_s, a.reps, True)
    if a.only != "eager":
        compiled = torch.compile(model, backend="spyre")
        res["compiled"] = measure(compiled, transformers, ids_s, nxt_s, a.reps, True)
    c = res["cpu"]
    print(f"GPT-2 small on the CPU, fp32: prefill ({PROMPT} tokens) {c['pre']:.1f} ms "
          f"(CPU time {c['pre_cpu']:.1f} ms), decode step {c['dec']:.1f} ms "
          f"(CPU time {c['dec_cpu']:.1f} ms), torch threads {torch.get_num_threads()}")
    for kind in ("eager", "compiled"):
        if kind not in res:
            continue
        r = res[kind]
        print(f"GPT-2 small on the sim card, fp16, {kind}: prefill {r['pre']:.1f} ms "
              f"({r['pre'] / c['pre']:.2f}x the CPU; CPU time {r['pre_cpu']:.1f} ms, "
              f"{r['pre_cpu'] / c['pre_cpu']:.2f}x), decode step {r['dec']:.1f} ms "
              f"({r['dec'] / c['dec']:.2f}x; CPU time {r['dec_cpu']:.1f} ms, "
              f"{r['dec_cpu'] / c['dec_cpu']:.2f}x); modelled device time prefill "
              f"{r['pre_dev'] * 1e6:.0f} ns, decode {r['dec_dev'] * 1e6:.0f} ns")
        for what, key in (("prefill 32 tokens", "pre"), ("decode step", "dec")):
            record(f"GPT-2 small {what} sim wall / CPU fp32 wall, {kind}", r[key] / c[key], "x",
                   f"sim card fp16 ({r[key]:.1f} ms) / CPU fp32 ({c[key]:.1f} ms)",
                   f"minimum of {a.reps} calls each, one run")
            record(f"GPT-2 small {what} sim CPU time / CPU fp32 CPU time, {kind}",
                   r[key + "_cpu"] / c[key + "_cpu"], "x",
                   f"sim card fp16 ({r[key + '_cpu']:.1f} ms) / CPU fp32 "
                   f"({c[key + '_cpu']:.1f} ms), all threads of the process",
                   f"minimum of {a.reps} calls each, one run")
            record(f"GPT-2 small {what} modelled device time, {kind} (sim speed run)",
                   r[key + "_dev"] * 1e6, "ns", how="timing events around one warm call")


if __name__ == "__main__":
    main()
