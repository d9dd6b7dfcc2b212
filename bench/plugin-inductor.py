# SPDX-License-Identifier: MIT
"""GPT-2 small (12 layers, 768 wide, random weights) in fp16, a 32-token
forward (no KV cache), compiled three ways: ``torch.compile(model)``
(PyTorch's default backend, Inductor, with the spyre device pass),
``torch.compile(model, backend="spyre")``, and ahead of time with
``torch_spyre.inductor.precompile`` (the fresh process compiles and saves
the forward, the second one loads it: no Dynamo tracing). For each: the first compiled
call's wall time in a fresh process with empty caches (cold) and in a second
process that finds the first one's caches (warm: Inductor's FX graph cache
and AOTAutogradCache, the spyre compile cache), card programs built in each,
the time Dynamo's tracing took in each (no cache serves it), then in the warm
process the recipes, kernels and card programs of the graph, SUBMITs per
forward, modelled device time and host time per forward. First, eager ops
without a hand-written kernel compiled through the Inductor path
(inductor/eager.py): first call (compile) in a fresh and in a second
process, and warm call. Each figure is printed and emitted as an @bench
record.

    SPYRE_BACKEND=sim build/venv/bin/python bench/plugin-inductor.py

The processes are children of this one (each its own interpreter, so
"cold" and "warm" include Dynamo tracing and Python imports as a user's
second run would), with their caches in a temporary directory.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings

PROMPT = 32


def record(name, value, unit, ratio_of="", how=""):
    print("@bench " + json.dumps({"name": name, "value": round(value, 4), "unit": unit,
                                  "ratio_of": ratio_of, "how": how,
                                  "backend": os.environ.get("SPYRE_BACKEND", "drm")}))


def child(backend):
    """One process: compile, first call, then warm figures (JSON on stdout)."""
    warnings.simplefilter("ignore")
    import torch
    import transformers
    torch.spyre.set_fallback_mode("error")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    model = model.to(torch.float16).to("spyre")
    ids = torch.randint(0, 50257, (1, PROMPT), generator=torch.Generator().manual_seed(1))
    ids = ids.to("spyre")
    built = torch.spyre._C._ops_counters(0)["programs_built"]
    with torch.no_grad():
        t0, c0 = time.perf_counter(), time.process_time()
        if backend == "precompile":
            fn = precompiled(model, ids, os.environ["SPYRE_BENCH_SAVED"])
        else:
            fn = torch.compile(model, **({} if backend == "inductor" else {"backend": "spyre"}))
        fn(ids, use_cache=False).logits.cpu()
        first = time.perf_counter() - t0
        first_cpu = time.process_time() - c0
        programs = torch.spyre._C._ops_counters(0)["programs_built"] - built
        torch.spyre.synchronize()
        s0 = torch.spyre.counters()["submits"]
        fn(ids, use_cache=False)
        torch.spyre.synchronize()
        submits = torch.spyre.counters()["submits"] - s0
        a = torch.Event(device="spyre", enable_timing=True)
        b = torch.Event(device="spyre", enable_timing=True)
        a.record()
        fn(ids, use_cache=False)
        b.record()
        b.synchronize()
        hosts = []
        for _ in range(5):
            torch.spyre.synchronize()
            t0 = time.perf_counter()
            fn(ids, use_cache=False).logits.cpu()
            hosts.append(time.perf_counter() - t0)
    from torch._dynamo.utils import compilation_time_metrics, counters
    caches = {k: v for k, v in {**counters["inductor"], **counters["aot_autograd"]}.items()
              if "cache" in k}
    dynamo = sum(compilation_time_metrics.get("bytecode_tracing", []))
    print("RESULT " + json.dumps({"first_s": first, "first_cpu_s": first_cpu,
                                  "programs": programs, "submits": submits, "caches": caches,
                                  "dynamo_s": dynamo, **recipes(),
                                  "device_ms": a.elapsed_time(b),
                                  "host_ms": statistics.median(hosts) * 1e3}))


def logits(model, ids):
    return model(ids, use_cache=False).logits


def precompiled(model, ids, path):
    """The forward saved ahead of time (torch_spyre.inductor.precompile):
    compiled and saved when @path does not exist yet, else loaded from it;
    called as the compiled model is."""
    from torch_spyre.inductor import precompile
    if os.path.exists(path):
        fn = precompile.load(path)
    else:
        fn = precompile.aot_compile(logits, (model, ids))
        precompile.save(fn, path)

    return lambda ids, use_cache: types.SimpleNamespace(logits=fn(model, ids))


def recipes():
    """The recipes this process holds (what the graph launches) and the
    kernels and card programs in them, from libspyre's compiled-graph stats."""
    from torch_spyre.compiler import backend
    from torch_spyre.inductor import runtime
    live = {id(r.compiled): r.compiled for r in list(runtime._recipes.values())}
    live.update({id(c): c for c, *_ in list(backend._recipes._d.values())})
    st = [c.stats() for c in live.values()]
    return {"recipes": len(st), "kernels": sum(x["kernels"] for x in st),
            "recipe_programs": sum(x["programs"] for x in st)}


def eager_child():
    """One process: eager ops without a hand-written kernel (huber_loss,
    addmv), compiled through the Inductor path: first and warm call."""
    warnings.simplefilter("ignore")
    import torch
    import torch.nn.functional as F
    from torch_spyre.inductor import eager
    torch.spyre.set_fallback_mode("error")
    x = torch.randn(256, 256, generator=torch.Generator().manual_seed(0)).to("spyre")
    h, v = x * 0.5, x[0].clone()
    torch.spyre.synchronize()
    built = torch.spyre._C._ops_counters(0)["programs_built"]
    res = {}
    for name, op in (("huber_loss", lambda: F.huber_loss(x, h, delta=0.7)),
                     ("addmv", lambda: torch.addmv(v, x, v))):
        t0 = time.perf_counter()
        op()
        torch.spyre.synchronize()
        first = time.perf_counter() - t0
        warm = []
        for _ in range(20):
            t0 = time.perf_counter()
            op()
            torch.spyre.synchronize()
            warm.append(time.perf_counter() - t0)
        res[name] = {"first_s": first, "warm_us": statistics.median(warm) * 1e6}
    res["programs"] = torch.spyre._C._ops_counters(0)["programs_built"] - built
    res["compiles"] = eager.stats()["compiles"]
    print("RESULT " + json.dumps(res))


def run(backend, caches):
    env = dict(os.environ, SPYRE_COMPILE_CACHE=os.path.join(caches, "spyre"),
               TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
               SPYRE_BENCH_SAVED=os.path.join(caches, "gpt2.spyreaot"))
    p = subprocess.run([sys.executable, __file__, "--child", backend], env=env,
                       capture_output=True, text=True, timeout=3600)
    line = [s for s in p.stdout.splitlines() if s.startswith("RESULT ")]
    if p.returncode != 0 or not line:
        sys.exit(f"plugin-inductor: the {backend} child failed:\n{p.stdout}{p.stderr}")
    return json.loads(line[-1][7:])


def eager_ops():
    with tempfile.TemporaryDirectory(prefix="spyre-bench-caches-") as caches:
        cold, warm = run("eager", caches), run("eager", caches)
    for op in ("huber_loss", "addmv"):
        print(f"eager {op} [256x256] fp32 through the Inductor path: first call "
              f"{cold[op]['first_s'] * 1e3:.0f} ms in a fresh process, "
              f"{warm[op]['first_s'] * 1e3:.0f} ms in a second one, warm call "
              f"{warm[op]['warm_us']:.0f} us")
        record(f"eager {op} through the Inductor path, first call / warm call, fresh process",
               cold[op]["first_s"] * 1e6 / cold[op]["warm_us"], "x",
               f"{cold[op]['first_s'] * 1e3:.0f} ms (compile) / {cold[op]['warm_us']:.0f} us")
        record(f"eager {op} through the Inductor path, first call in a second process",
               warm[op]["first_s"] * 1e3, "ms", "Inductor's caches on disk")
    print(f"eager ops: {cold['programs']} card programs built in the fresh process, "
          f"{warm['programs']} in the second")
    record("eager ops through the Inductor path, card programs built in a second process",
           warm["programs"], "count")


def main():
    eager_ops()
    res = {}
    for backend in ("inductor", "spyre", "precompile"):
        with tempfile.TemporaryDirectory(prefix="spyre-bench-caches-") as caches:
            cold, warm = run(backend, caches), run(backend, caches)
        res[backend] = cold, warm
        print(f"GPT-2 small fp16 {PROMPT}-token forward, {backend}: first call cold "
              f"{cold['first_s']:.1f} s (CPU {cold['first_cpu_s']:.1f} s, {cold['programs']} "
              f"programs built, Dynamo "
              f"{cold['dynamo_s']:.1f} s), warm {warm['first_s']:.1f} s (CPU "
              f"{warm['first_cpu_s']:.1f} s, {warm['programs']} "
              f"built, Dynamo {warm['dynamo_s']:.1f} s, {warm['caches']}); "
              f"{warm['recipes']} recipe(s) per graph: {warm['kernels']} kernels fused into "
              f"{warm['recipe_programs']} card programs launched per call, {warm['submits']} "
              f"SUBMITs per forward, {warm['device_ms']:.3f} ms modelled, host "
              f"{warm['host_ms']:.1f} ms per forward")
        rest = (cold["first_s"] - cold["dynamo_s"]) / (warm["first_s"] - warm["dynamo_s"])
        record(f"GPT-2 small first compiled call without Dynamo's tracing, cold vs warm, "
               f"{backend}", rest, "x",
               f"(first call - Dynamo bytecode tracing): {cold['first_s'] - cold['dynamo_s']:.1f}"
               f" s / {warm['first_s'] - warm['dynamo_s']:.1f} s")
        record(f"GPT-2 small kernels per compiled graph, {backend}", warm["kernels"], "count")
        record(f"GPT-2 small card programs launched per compiled graph, {backend}",
               warm["recipe_programs"], "count")
        what = {"inductor": "torch.compile(model)", "spyre": "torch.compile(model, backend=spyre)",
                "precompile": "precompile.aot_compile + save, then precompile.load"}[backend]
        record(f"GPT-2 small first compiled call cold vs warm process, {backend}",
               cold["first_s"] / warm["first_s"], "x",
               f"{what}: first call in a fresh process ({cold['first_s']:.1f} s) / in a second "
               f"process with the first one's caches ({warm['first_s']:.1f} s)")
        record(f"GPT-2 small first compiled call cold vs warm process, CPU time, {backend}",
               cold["first_cpu_s"] / warm["first_cpu_s"], "x",
               f"{what}: this process's CPU time in the first call, fresh "
               f"({cold['first_cpu_s']:.1f} s) / second process ({warm['first_cpu_s']:.1f} s)",
               "time.process_time(): what the load of other processes does not inflate")
        record(f"GPT-2 small card programs built in a warm process, {backend}",
               warm["programs"], "count")
        record(f"GPT-2 small SUBMITs per compiled forward, {backend}", warm["submits"], "count")
        record(f"GPT-2 small {PROMPT}-token forward modelled device time, {backend}",
               warm["device_ms"], "ms", how="timing events around one warm call")
    cold, saved = res["inductor"][0], res["precompile"][1]
    print(f"GPT-2 small first call in a second process loading the saved forward: "
          f"{saved['first_s']:.1f} s vs {cold['first_s']:.1f} s for torch.compile(model) in a "
          f"fresh process ({cold['first_s'] / saved['first_s']:.2f}x)")
    record("GPT-2 small first compiled call, fresh torch.compile(model) vs a second process "
           "loading the saved forward", cold["first_s"] / saved["first_s"], "x",
           f"{cold['first_s']:.1f} s / {saved['first_s']:.1f} s (torch_spyre.inductor.precompile: "
           "no Dynamo tracing, no Inductor, no card program built)")
    i, s = res["inductor"][1], res["spyre"][1]
    record("GPT-2 small forward modelled device time, Inductor path vs backend=spyre",
           i["device_ms"] / s["device_ms"], "x",
           f"{i['device_ms']:.3f} ms / {s['device_ms']:.3f} ms modelled")
    record("GPT-2 small forward host time, Inductor path vs backend=spyre",
           i["host_ms"] / s["host_ms"], "x",
           f"{i['host_ms']:.1f} ms / {s['host_ms']:.1f} ms per warm forward, logits read back "
           "(on the sim, mostly the card model running the programs)", "median of 5 calls each")


if __name__ == "__main__":
    if sys.argv[1:3] == ["--child", "eager"]:
        eager_child()
    elif sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
