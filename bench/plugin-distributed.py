# SPDX-License-Identifier: MIT
"""all_reduce bus bandwidth on two spyre cards ("spyre" c10d backend) vs
message size, against gloo on CPU tensors (the same transport without the
staging through the cards), a host memcpy of the same size and the raw TCP
bandwidth between the two ranks (one socket stream over the same network
gloo uses: the loopback interface on one machine, the VMs' virtual network
across VMs), all measured side by side in this run; and the share of a
tensor-parallel decode step (torch_plugin/examples/tp_gpt2.py's model) spent
in collectives. Each figure is printed as an @bench record for bench/report
(ratios only: host wall times depend on the machine).

Two ranks on one machine (it starts them itself, joined by a FileStore):

    SPYRE_BACKEND=sim SPYRE_SIM_CARDS=2 build/venv/bin/python bench/plugin-distributed.py

or one rank per machine under torchrun (e.g. in two VMs, scripts/spyre-vms):

    torchrun --nnodes 2 --node-rank N --master-addr A ... bench/plugin-distributed.py

Bus bandwidth is NCCL's convention for all_reduce: 2 (n - 1) / n * bytes /
time, the bytes each rank's link carries.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

WORLD = 2
SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20]  # bytes (float32 elements x 4)
STREAM_BYTES = 64 << 20  # the raw TCP measurement
DECODE_STEPS = 4


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


def tcp_stream(rank, store, addr):
    """Bytes per second of one TCP stream from rank 1 to rank 0 at @addr
    (the address gloo uses), rank 0's measurement; None on other ranks."""
    chunk = bytearray(1 << 20)
    if rank == 0:
        srv = socket.socket()
        srv.bind((addr, 0))
        srv.listen(1)
        store.set("bench-tcp-port", str(srv.getsockname()[1]))
        conn, _ = srv.accept()
        got, t0 = 0, None
        view = memoryview(chunk)
        while got < STREAM_BYTES:
            n = conn.recv_into(view)
            if n == 0:
                raise RuntimeError(f"tcp stream: peer closed after {got} bytes")
            if t0 is None:
                t0 = time.perf_counter()  # from the first byte: no connect time
            got += n
        dt = time.perf_counter() - t0
        conn.sendall(b"k")
        conn.close()
        srv.close()
        return got / dt
    if rank == 1:
        port = int(store.get("bench-tcp-port"))
        with socket.create_connection((addr, port)) as c:
            for _ in range(STREAM_BYTES // len(chunk)):
                c.sendall(chunk)
            c.recv(1)
    return None


def decode_share(rank, dev, mesh):
    """(seconds per decode step, share of it inside collectives) of the
    tensor-parallel tp_gpt2 model: torch.profiler's host times of the
    functional collectives DTensor issues (the all_reduce and its wait)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "torch_plugin", "examples"))
    import tp_gpt2

    model = tp_gpt2.tensor_parallel(tp_gpt2.build().to(dev), mesh)
    ids = torch.tensor([[5, 17, 42, 8, 63, 2]], device=dev)
    with torch.no_grad():
        model(ids)  # warm: programs built, pinned blocks cached
        torch.spyre.synchronize()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t0 = time.perf_counter()
            for _ in range(DECODE_STEPS):
                out = model(ids)[:, -1]
                out.argmax(-1).cpu()  # greedy: the token comes to the host
            step = (time.perf_counter() - t0) / DECODE_STEPS
    coll = 0.0
    for ev in prof.key_averages():
        if ev.key in ("_c10d_functional::all_reduce", "_c10d_functional::wait_tensor"):
            coll += ev.cpu_time_total * 1e-6
    return step, coll / DECODE_STEPS / step


def rank_main(rank, world, store_file=None):
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    if store_file:
        store = dist.FileStore(store_file, world)
        dist.init_process_group("cpu:gloo,spyre:spyre", store=store, rank=rank,
                                world_size=world)
        addr = "127.0.0.1"
        local = rank
    else:  # torchrun: env:// (MASTER_ADDR is rank 0's machine)
        dist.init_process_group("cpu:gloo,spyre:spyre")
        store = dist.distributed_c10d._get_default_store()
        addr = os.environ["MASTER_ADDR"]
        local = int(os.environ.get("LOCAL_RANK", "0"))
    where = "one machine" if store_file else f"{world} machines"
    dev = torch.device("spyre", local)
    torch.spyre.set_device(local)
    bus = 2 * (world - 1) / world
    # The default group goes card to card when the ranks' cards are peers
    # (its first collective connects them); a second group made with
    # SPYRE_C10D_PEER=0 at its first collective stages through host memory.
    dist.all_reduce(torch.ones(1, device=dev))
    import torch_spyre.distributed as sd
    # the default group's path and, if staged, why (ranks on different
    # machines...): the staged group below sets a reason of its own
    default_paths = sd.peer_stats()
    os.environ["SPYRE_C10D_PEER"] = "0"
    staged = dist.new_group(list(range(world)), backend="spyre")
    dist.all_reduce(torch.ones(1, device=dev), group=staged)
    del os.environ["SPYRE_C10D_PEER"]
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        t_sp = torch.ones(n, device=dev)
        t_cpu = torch.ones(n)
        src, dst = torch.ones(n), torch.empty(n)
        dist.barrier()
        sp = timed(lambda: dist.all_reduce(t_sp), nbytes, lambda: torch.spyre.synchronize(local))
        dist.barrier()
        st = timed(lambda: dist.all_reduce(t_sp, group=staged), nbytes,
                   lambda: torch.spyre.synchronize(local))
        dist.barrier()
        cpu = timed(lambda: dist.all_reduce(t_cpu), nbytes)
        mc = timed(lambda: dst.copy_(src), nbytes)
        rows.append((nbytes, bus * nbytes / sp, bus * nbytes / st, bus * nbytes / cpu,
                     nbytes / mc))
    assert torch.isfinite(t_sp.cpu()).all()
    dist.barrier()
    net = tcp_stream(rank, store, addr)
    dist.barrier()
    mesh = init_device_mesh("spyre", (world,))
    step, share = decode_share(rank, dev, mesh)
    dist.destroy_process_group()
    if rank != 0:
        return
    print(f"plugin-distributed: {world} ranks on {where}, backend "
          f"{os.environ.get('SPYRE_BACKEND', 'drm')}; TCP stream rank 1 -> 0 "
          f"({addr}): {net / 1e9:.3f} GB/s")
    peer = default_paths["groups_peer"] >= 1
    print(f"default group: {'card to card (peer DMA)' if peer else 'host staged'}"
          f"{'' if peer else ' (' + default_paths['last_reason'] + ')'}")
    print(f"{'bytes':>10} {'spyre busBW':>14} {'staged busBW':>14} {'gloo CPU busBW':>15} "
          f"{'host memcpy':>13}")
    for nbytes, sp, st, cpu, mc in rows:
        print(f"{nbytes:>10} {sp / 1e9:>10.3f} GB/s {st / 1e9:>10.3f} GB/s "
              f"{cpu / 1e9:>11.3f} GB/s {mc / 1e9:>9.3f} GB/s")
    print(f"tensor-parallel decode step (tp_gpt2, 6 tokens, no KV cache): "
          f"{step * 1e3:.1f} ms, {100 * share:.0f}% in collectives")
    how = (f"{world} cards, {world} processes on {where}, "
           + ("card to card (peer DMA)" if peer else "staged through pinned host memory over gloo"))
    for nbytes, sp, st, cpu, mc in rows:
        size = f"{nbytes >> 10} KiB" if nbytes < (1 << 20) else f"{nbytes >> 20} MiB"
        record(f"all_reduce {size} ({where}): spyre busBW / host memcpy", sp / mc, "ratio",
               "spyre all_reduce bus bandwidth / host memcpy bandwidth", how)
        record(f"all_reduce {size} ({where}): spyre / host-staged spyre busBW", sp / st, "ratio",
               "default spyre group / a group with SPYRE_C10D_PEER=0", how)
        record(f"all_reduce {size} ({where}): spyre / gloo CPU busBW", sp / cpu, "ratio",
               "spyre all_reduce bus bandwidth / gloo all_reduce of CPU tensors",
               "the cost of staging through the cards")
        record(f"all_reduce {size} ({where}): spyre busBW / TCP stream", sp / net, "ratio",
               "spyre all_reduce bus bandwidth / one TCP stream between the ranks",
               "the network gloo uses, measured in the same run")
    record(f"TP decode step ({where}): share in collectives", share, "ratio",
           "host time in functional all_reduce + wait / decode step time",
           "tp_gpt2's model split over the ranks' cards, torch.profiler host times")


def main():
    if "TORCHELASTIC_RUN_ID" in os.environ:  # started by torchrun
        return rank_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    if len(sys.argv) == 3:
        return rank_main(int(sys.argv[1]), WORLD, sys.argv[2])
    env = dict(os.environ, SPYRE_SIM_CARDS=os.environ.get("SPYRE_SIM_CARDS", str(WORLD)),
               OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="spyre-bench-dist-") as d:
        store = os.path.join(d, "store")
        procs = [subprocess.Popen([sys.executable, __file__, str(r), store],
                                  env=dict(env, LOCAL_RANK=str(r))) for r in range(WORLD)]
        rcs = [p.wait(timeout=900) for p in procs]
    return 0 if rcs == [0] * WORLD else 1


if __name__ == "__main__":
    sys.exit(main())
