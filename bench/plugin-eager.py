# SPDX-License-Identifier: MIT
"""Eager PyTorch-on-spyre figures, each a ratio or a device-time figure from
this one run (host times are medians of repeated calls; device times are
the card's modelled time from timing events).

    build/venv/bin/python bench/plugin-eager.py      (sim card on the host,
                                                      or the card in the VM)
"""
import statistics
import time
import warnings

import torch

warnings.simplefilter("ignore")  # the fallback's one-time warnings


def host_time(fn, n=200):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def device_ms(fn):
    a = torch.Event(device="spyre", enable_timing=True)
    b = torch.Event(device="spyre", enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b)


def main():
    p = torch.spyre.get_device_properties()
    print(f"device: {p.name}, backend {p.backend}, torch {torch.__version__}")

    # host cost of the minimal device ops vs the same op on the CPU
    small_d = torch.empty(64, device="spyre")
    small_c = torch.empty(64)
    torch.spyre.synchronize()
    t_fill_d = host_time(lambda: small_d.fill_(1.0))
    t_fill_c = host_time(lambda: small_c.fill_(1.0))
    torch.spyre.synchronize()
    t_empty_d = host_time(lambda: torch.empty(64, device="spyre"))
    t_empty_c = host_time(lambda: torch.empty(64))
    print(f"fill_ (64 floats), host time per op: spyre {t_fill_d * 1e6:.1f} us, "
          f"cpu {t_fill_c * 1e6:.1f} us, ratio {t_fill_d / t_fill_c:.1f}x")
    print(f"empty (64 floats, allocator cache hit): spyre {t_empty_d * 1e6:.1f} us, "
          f"cpu {t_empty_c * 1e6:.1f} us, ratio {t_empty_d / t_empty_c:.1f}x")

    # modelled transfer bandwidth (pinned and pageable host memory)
    n = 64 << 20
    host = torch.empty(n, dtype=torch.uint8)
    pinned = host.pin_memory()
    dev = torch.empty(n, dtype=torch.uint8, device="spyre")
    for name, src in (("pinned", pinned), ("pageable", host)):
        ms = device_ms(lambda: dev.copy_(src, non_blocking=True))
        print(f"H2D 64 MiB from {name} memory: {ms:.3f} ms device time, "
              f"{n / ms / 1e6:.1f} GB/s modelled")
    ms = device_ms(lambda: pinned.copy_(dev, non_blocking=True))
    print(f"D2H 64 MiB to pinned memory: {ms:.3f} ms device time, {n / ms / 1e6:.1f} GB/s modelled")
    ms = device_ms(lambda: dev.fill_(7))
    print(f"fill 64 MiB on the card: {ms:.3f} ms device time")
    del dev

    # allocator hit rate on a small decoder layer forward (ops still fall back)
    torch.manual_seed(0)
    layer = torch.nn.TransformerDecoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             batch_first=True).eval().to("spyre")
    x = torch.randn(2, 16, 64, device="spyre")
    mem = torch.randn(2, 16, 64, device="spyre")
    with torch.no_grad():
        layer(x, mem)  # warm-up: fills the cache
        c0 = torch.spyre.counters()
        torch.spyre.reset_fallback_counts()
        y = layer(x, mem)
        c1 = torch.spyre.counters()
    req = c1["alloc_requests"] - c0["alloc_requests"]
    hits = c1["alloc_cache_hits"] - c0["alloc_cache_hits"]
    fb = torch.spyre.fallback_counts()
    with torch.no_grad():
        ref = layer.to("cpu")(x.cpu(), mem.cpu())
    print(f"decoder layer forward: {req} device allocations, allocator hit rate "
          f"{hits / max(req, 1):.3f}; {sum(fb.values())} CPU-fallback calls over {len(fb)} ops; "
          f"max |spyre - cpu| {(y.cpu() - ref).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
