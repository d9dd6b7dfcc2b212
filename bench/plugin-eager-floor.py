# SPDX-License-Identifier: MIT
"""How far an eager GPT-2 forward is from the fastest any backend could be
in this process: the demo's GPT-2 (2 layers, 64 wide, 12 tokens, random
weights), eager, synchronized after each forward.

What no backend can remove is the Hugging Face module code and Python
around the aten ops, and PyTorch's own dispatch of each op. This measures:

- the forward's host time (median of synchronized forwards);
- in profiled forwards alternating with those, the host time outside the
  top-level aten ops up to the final synchronize: the module code and
  Python (the profiler's own cost mostly lands inside the ops' spans);
- PyTorch's dispatch floor: the CPU backend's cheapest op (a ``view``) in
  this process.

floor = time outside the ops + ops x CPU view: the forward of a backend
whose every op cost no more than a CPU ``view``. Printed as
ms and as forward / floor; in the test VM (TCG) both are tens of times
their native figures, so compare the ratio, not the times, across hosts.

    scripts/spyre-vm run -- build/venv/bin/python bench/plugin-eager-floor.py
    SPYRE_BACKEND=sim build/venv/bin/python bench/plugin-eager-floor.py
"""
import json
import os
import statistics
import time
import warnings

warnings.simplefilter("ignore")
import torch  # noqa: E402
from demo_gpt2 import demo_gpt2  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

ROUNDS = 12


def record(name, value, unit, ratio_of, how):
    print("@bench " + json.dumps({"name": name, "value": round(value, 4), "unit": unit,
                                  "ratio_of": ratio_of, "how": how,
                                  "backend": os.environ.get("SPYRE_BACKEND", "drm")}))


def median_us(fn, n=400):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def top_level_aten(prof):
    """Top-level aten events (an aten op called by another one is part of it)."""
    return [e for e in prof.events() if e.name.startswith("aten::") and
            (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))]


def main():
    torch.set_num_threads(1)
    model, ids = demo_gpt2("spyre")
    sync = torch.spyre.synchronize
    fwd, pfwd, rests, aten, ops = [], [], [], [], []
    with torch.no_grad():
        for _ in range(3):  # the op library's caches, the allocator's pools
            model(ids)
            sync()
        # Rounds of one plain forward and one profiled forward, so that a
        # change of the host's load hits both; each profiled forward gives
        # its own split (its aten ops against its own wall clock).
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            model(ids)
            sync()
            fwd.append(time.perf_counter() - t0)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                t0 = time.perf_counter()
                model(ids)
                t1 = time.perf_counter()
                sync()
                t2 = time.perf_counter()
            top = top_level_aten(prof)
            ops.append(len(top))
            aten.append(sum(e.cpu_time_total for e in top) / 1e6)
            pfwd.append(t2 - t0)
            rests.append(max(t1 - t0 - aten[-1], 0.0))
    forward_ms = statistics.median(fwd) * 1e3
    rest_ms = statistics.median(rests) * 1e3
    aten_ms = statistics.median(aten) * 1e3
    ops = statistics.median(ops)
    profiled_ms = statistics.median(pfwd) * 1e3
    y = torch.zeros(4, 4)
    view_us = median_us(lambda: y.view(-1))
    floor_ms = rest_ms + ops * view_us / 1e3
    print(f"eager GPT-2 forward (2 layers, 64 wide, 12 tokens) on {torch.spyre.get_device_name()}:"
          f" {forward_ms:.2f} ms host time (median of {ROUNDS})")
    print(f"  profiled forwards {profiled_ms:.2f} ms: {ops:.0f} top-level aten ops,"
          f" {aten_ms:.2f} ms (profiler included)")
    print(f"  module code and Python around the ops {rest_ms:.2f} ms;"
          f" a CPU view {view_us:.1f} us")
    print(f"  floor for any backend {floor_ms:.2f} ms: forward = {forward_ms / floor_ms:.2f}x floor")
    how = f"medians of {ROUNDS} rounds of a plain and a profiled synchronized forward"
    record("gpt2_eager_forward_ms", forward_ms, "ms",
           "host time of a synchronized eager GPT-2 forward (2 layers, 64 wide, 12 tokens)", how)
    record("gpt2_eager_forward_floor_ms", floor_ms, "ms",
           "forward minus its aten ops and synchronize, plus each op at a CPU view's cost", how)
    record("gpt2_eager_forward_vs_floor", forward_ms / floor_ms, "x",
           "eager GPT-2 forward host time / the floor any backend has in this process", how)


if __name__ == "__main__":
    main()
