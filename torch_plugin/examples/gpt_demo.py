# SPDX-License-Identifier: MIT
"""A small GPT-2 (transformers, random weights, nothing downloaded) on the
Spyre card: eager, then compiled, each checked against the CPU, with a
summary of what the card did. Part of `make demo`; runs on the sim card too
(SPYRE_BACKEND=sim). With --trace DIR it also records the device timeline
of one eager forward (a span per aten op) and of one compiled forward (one
recipe launch) as DIR/gpt2-eager.json and DIR/gpt2-compiled.json
(torch.spyre.trace; scripts/trace-plot draws them).

    build/venv/bin/python torch_plugin/examples/gpt_demo.py [--trace DIR]
"""
import argparse
import os
import sys
import time
import warnings

START = time.monotonic()


def phase(msg):
    print(f"   [{time.monotonic() - START:5.1f} s] {msg}", flush=True)


phase("importing torch (the spyre backend loads with it)")
import torch  # noqa: E402

warnings.simplefilter("ignore")
phase("importing transformers")
import transformers  # noqa: E402
import torch_spyre.compiler as spyre_compiler  # noqa: E402


def device_us(fn):
    """Device time between two timing events around @fn: the card's modelled
    time, plus, on the drm card, the time it waited for the host."""
    a = torch.Event(device="spyre", enable_timing=True)
    b = torch.Event(device="spyre", enable_timing=True)
    a.record()
    out = fn()
    b.record()
    b.synchronize()
    return out, a.elapsed_time(b) * 1000


def submits(fn):
    torch.spyre.synchronize()
    before = torch.spyre.counters()["submits"]
    out = fn()
    torch.spyre.synchronize()
    return out, torch.spyre.counters()["submits"] - before


def explain_mismatch(cpu, dev, ids, want, got, cgot):
    """Which of the things both forwards share differs: the CPU reference
    computed again, the weights on the card against the CPU's, the eager
    against the compiled logits (bit for bit)."""
    with torch.no_grad():
        again = cpu(ids, use_cache=False).logits
    print(f"   CPU reference again    {'identical' if torch.equal(again, want) else 'DIFFERENT'}"
          f" (max change {(again - want).abs().max().item():.1e})")
    host = cpu.state_dict()
    moved = [k for k, v in dev.state_dict().items() if not torch.equal(v.cpu(), host[k])]
    print(f"   weights on the card    {'equal to the CPU' if not moved else 'DIFFERENT: '}"
          f"{', '.join(moved)}")
    print(f"   eager vs compiled      {'identical' if torch.equal(got, cgot) else 'different'}"
          f" (max {(got - cgot).abs().max().item():.1e})")


def main():
    ap = argparse.ArgumentParser(description="GPT-2 on the Spyre card, eager and compiled")
    ap.add_argument("--trace", metavar="DIR", help="write device timeline traces into DIR")
    args = ap.parse_args()
    if args.trace:
        os.makedirs(args.trace, exist_ok=True)
    torch.spyre.set_fallback_mode("error")  # nothing may run on the CPU unnoticed
    props = torch.spyre.get_device_properties()
    phase(f"device: {props.name}, backend {props.backend}")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=256, n_positions=64, n_embd=64, n_layer=2,
                                  n_head=4, resid_pdrop=0.0, embd_pdrop=0.0,
                                  attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                                  initializer_range=0.3)  # livelier random tokens
    cpu = transformers.GPT2LMHeadModel(cfg).eval()
    phase("building GPT-2 (2 layers, 64 wide, random weights) and copying it to spyre")
    dev = transformers.GPT2LMHeadModel(cfg).eval()
    dev.load_state_dict(cpu.state_dict())
    dev = dev.to("spyre")
    ids = torch.randint(1, 256, (1, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    d_ids, d_mask = ids.to("spyre"), mask.to("spyre")

    with torch.no_grad():
        want = cpu(ids, use_cache=False).logits
        phase("eager forward on the card")
        dev(d_ids, use_cache=False)  # warm the op library's caches
        (got, n_eager), = [submits(lambda: dev(d_ids, use_cache=False).logits)]
        _, t_eager = device_us(lambda: dev(d_ids, use_cache=False))
        err_eager = (got.cpu() - want).abs().max().item()
        phase("greedy generation, 8 tokens, on the CPU and on the card")
        kw = dict(max_new_tokens=8, do_sample=False, pad_token_id=0)
        gen_cpu = cpu.generate(ids, attention_mask=mask, **kw)
        gen_dev = dev.generate(d_ids, attention_mask=d_mask, **kw).cpu()

        phase("torch.compile(backend=\"spyre\"): tracing and building the recipe")
        compiled = torch.compile(dev, backend="spyre")
        compiled(d_ids, use_cache=False)
        phase("compiled forward on the card")
        (cgot, n_comp), = [submits(lambda: compiled(d_ids, use_cache=False).logits)]
        _, t_comp = device_us(lambda: compiled(d_ids, use_cache=False))
        err_comp = (cgot.cpu() - want).abs().max().item()
        traces = []
        if args.trace:
            phase("device timeline traces of one eager and one compiled forward")
            for name, model in (("eager", dev), ("compiled", compiled)):
                path = os.path.join(args.trace, f"gpt2-{name}.json")
                torch.spyre.synchronize()  # only this forward's work in the trace
                with torch.spyre.trace(path):
                    model(d_ids, use_cache=False)
                traces.append(path)

    st = spyre_compiler.stats()
    ok = (err_eager < 1e-4 and err_comp < 1e-4 and torch.equal(gen_cpu, gen_dev)
          and not torch.spyre.fallback_counts())
    print()
    print("   Summary")
    print(f"   device                 {props.name} ({props.backend}), "
          f"{props.total_memory >> 20} MiB, {props.cores} cores")
    print(f"   memory in use          {torch.spyre.memory_allocated() / 2**20:.1f} MiB "
          f"(peak {torch.spyre.max_memory_allocated() / 2**20:.1f} MiB)")
    print(f"   eager forward          {n_eager} SUBMITs, {t_eager:.1f} us device time, "
          f"max |spyre - cpu| {err_eager:.1e}")
    print(f"   compiled forward       {n_comp} SUBMIT{'s' if n_comp != 1 else ''}, "
          f"{t_comp:.1f} us device time, max |spyre - cpu| {err_comp:.1e}")
    print(f"   compiled graph         {st['recipes']} recipe(s), "
          f"{len(st['graph_breaks'])} graph break(s)")
    print(f"   greedy tokens          spyre {gen_dev[0, -8:].tolist()}")
    print(f"                          cpu   {gen_cpu[0, -8:].tolist()}  "
          f"({'equal' if torch.equal(gen_cpu, gen_dev) else 'DIFFERENT'})")
    print(f"   CPU fallbacks          {sum(torch.spyre.fallback_counts().values())}")
    print("   (device time: between two timing events; on the VM's card it includes")
    print("   the time the card waited for the emulated host to submit)")
    print(f"   device ops run         {sum(torch.spyre.op_counts().values())}")
    if not ok:
        explain_mismatch(cpu, dev, ids, want, got.cpu(), cgot.cpu())
    for path in traces:
        print(f"   device timeline        {path}")
    phase("done: " + ("spyre agrees with the CPU" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
