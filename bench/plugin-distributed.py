# SPDX-License-Identifier: MIT
"""all_reduce bus bandwidth on two spyre cards ("spyre" c10d backend) vs
message size, against gloo on CPU tensors (the same transport without the
staging through the cards) and a host memcpy of the same size, all
measured side by side in this run. Each figure is printed as an @bench
record for bench/report (ratios only: host wall times depend on the
machine).

    SPYRE_BACKEND=sim SPYRE_SIM_CARDS=2 build/venv/bin/python bench/plugin-distributed.py

Starts its two ranks itself (subprocesses joined by a FileStore).
Bus bandwidth is NCCL's convention for all_reduce: 2 (n - 1) / n * bytes /
time, the bytes each rank's link carries.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORLD = 2
SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20]  # bytes (float32 elements x 4)


def record(name, value, unit, ratio_of="", how=""):
    print("@bench " + json.dumps({"name": name, "value": round(value, 4), "unit": unit,
                                  "ratio_of": ratio_of, "how": how,
                                  "backend": os.environ.get("SPYRE_BACKEND", "drm")}),
          flush=True)


def timed(fn, nbytes, sync=lambda: None):
    """Median seconds per call (batches of calls, so small messages are
    not all timer and Python overhead)."""
    reps = max(3, min(50, (64 << 20) // max(nbytes, 1) // 8))
    fn()
    sync()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / reps)
    return statistics.median(ts)


def rank_main(rank, store_file):
    import torch
    import torch.distributed as dist

    dist.init_process_group("cpu:gloo,spyre:spyre", store=dist.FileStore(store_file, WORLD),
                            rank=rank, world_size=WORLD)
    dev = torch.device("spyre", rank)
    torch.spyre.set_device(rank)
    bus = 2 * (WORLD - 1) / WORLD
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        t_sp = torch.ones(n, device=dev)
        t_cpu = torch.ones(n)
        src, dst = torch.ones(n), torch.empty(n)
        dist.barrier()
        sp = timed(lambda: dist.all_reduce(t_sp), nbytes, lambda: torch.spyre.synchronize(rank))
        dist.barrier()
        cpu = timed(lambda: dist.all_reduce(t_cpu), nbytes)
        mc = timed(lambda: dst.copy_(src), nbytes)
        rows.append((nbytes, bus * nbytes / sp, bus * nbytes / cpu, nbytes / mc))
    # rank 0 reports; both agree on the values they reduced
    assert torch.isfinite(t_sp.cpu()).all()
    dist.destroy_process_group()
    if rank != 0:
        return
    print(f"{'bytes':>10} {'spyre busBW':>14} {'gloo CPU busBW':>15} {'host memcpy':>13}")
    for nbytes, sp, cpu, mc in rows:
        print(f"{nbytes:>10} {sp / 1e9:>10.3f} GB/s {cpu / 1e9:>11.3f} GB/s "
              f"{mc / 1e9:>9.3f} GB/s")
    for nbytes, sp, cpu, mc in rows:
        size = f"{nbytes >> 10} KiB" if nbytes < (1 << 20) else f"{nbytes >> 20} MiB"
        record(f"all_reduce {size}: spyre busBW / host memcpy", sp / mc, "ratio",
               "spyre all_reduce bus bandwidth / host memcpy bandwidth",
               "2 sim cards, 2 processes, staged through pinned host memory over gloo")
        record(f"all_reduce {size}: spyre / gloo CPU busBW", sp / cpu, "ratio",
               "spyre all_reduce bus bandwidth / gloo all_reduce of CPU tensors",
               "the cost of staging through the cards")


def main():
    if len(sys.argv) == 3:
        return rank_main(int(sys.argv[1]), sys.argv[2])
    env = dict(os.environ, SPYRE_SIM_CARDS=os.environ.get("SPYRE_SIM_CARDS", str(WORLD)),
               OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="spyre-bench-dist-") as d:
        store = os.path.join(d, "store")
        procs = [subprocess.Popen([sys.executable, __file__, str(r), store], env=env)
                 for r in range(WORLD)]
        rcs = [p.wait(timeout=900) for p in procs]
    return 0 if rcs == [0] * WORLD else 1


if __name__ == "__main__":
    sys.exit(main())
