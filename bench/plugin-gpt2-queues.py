# SPDX-License-Identifier: MIT
"""Host time of an eager GPT-2 forward on the drm backend: kernel queues
(every op a SUBMIT ioctl) against user-mode queues (ring entries and a
doorbell), in the test VM.

The demo's GPT-2 (2 layers, 64 wide, 12 tokens, random weights) runs in two
child processes of this one, one per SPYRE_DRM_QUEUES value (the choice is
made when the card opens), each timing synchronized eager forwards in
rounds that alternate with the other's: child A's round, child B's round,
and so on, so background load hits both alike. The figure is the ratio of
their medians; also printed are SUBMITs (ioctls) per forward.

    scripts/spyre-vm run -- build/venv/bin/python bench/plugin-gpt2-queues.py
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS, PER_ROUND = 5, 4


def child():
    import warnings

    warnings.simplefilter("ignore")
    import torch
    from demo_gpt2 import demo_gpt2

    model, d_ids = demo_gpt2("spyre")
    with torch.no_grad():
        for _ in range(2):  # warm the op library's caches
            model(d_ids, use_cache=False)
        torch.spyre.synchronize()
        c0 = torch.spyre.counters()
        print("ready", flush=True)
        for line in sys.stdin:  # one round per line from the parent
            ts = []
            for _ in range(PER_ROUND):
                t0 = time.perf_counter()
                model(d_ids, use_cache=False)
                torch.spyre.synchronize()
                ts.append(time.perf_counter() - t0)
            c1 = torch.spyre.counters()
            print(json.dumps({"t": ts, "submits": c1["submits"] - c0["submits"],
                              "ioctls": c1.get("ioctls", 0) - c0.get("ioctls", 0)}),
                  flush=True)
            c0 = c1


def main():
    kids = {}
    for q in ("kernel", "user"):
        env = dict(os.environ, SPYRE_DRM_QUEUES=q, SPYRE_BACKEND="drm")
        p = subprocess.Popen([sys.executable, __file__, "--child"], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        kids[q] = p
    for q, p in kids.items():
        line = p.stdout.readline()
        if line.strip() != "ready":
            sys.exit(f"plugin-gpt2-queues: the {q}-queue process did not start ({line!r})")
    times = {q: [] for q in kids}
    counts = {q: [0, 0, 0] for q in kids}
    for _ in range(ROUNDS):
        for q, p in kids.items():
            p.stdin.write("go\n")
            p.stdin.flush()
            r = json.loads(p.stdout.readline())
            times[q] += r["t"]
            counts[q][0] += r["submits"]
            counts[q][1] += r["ioctls"]
            counts[q][2] += len(r["t"])
    for p in kids.values():
        p.stdin.close()
        p.wait()
    med = {q: statistics.median(t) * 1e6 for q, t in times.items()}
    print(f"eager GPT-2 forward (2 layers, 64 wide, 12 tokens), host time, median of "
          f"{ROUNDS} x {PER_ROUND} alternating rounds:")
    for q in kids:
        print(f"  {q:<7} queues  {med[q]:10.1f} us   {counts[q][0] / counts[q][2]:6.1f} "
              f"submits, {counts[q][1] / counts[q][2]:6.1f} ioctls per forward")
    ratio = med["kernel"] / med["user"]
    print(f"  kernel / user = {ratio:.2f}x")
    print("@bench " + json.dumps({
        "name": "gpt2_eager_forward_kernel_vs_user_queues", "value": round(ratio, 4),
        "unit": "x", "ratio_of": "host time of a synchronized eager GPT-2 forward (2 layers, "
        "64 wide): kernel queues / user-mode queues",
        "how": f"medians of {ROUNDS} x {PER_ROUND} alternating rounds, two processes",
        "backend": "drm"}))


if __name__ == "__main__":
    child() if sys.argv[1:] == ["--child"] else main()
