# SPDX-License-Identifier: MIT
"""The caching allocator: reuse, splitting, stream awareness, statistics, OOM."""
import gc

import pytest
import torch

MiB = 1 << 20


def fresh():
    gc.collect()  # tensors of earlier tests that only a reference cycle keeps
    torch.spyre.synchronize()
    torch.spyre.empty_cache()
    torch.spyre.reset_peak_memory_stats()


def test_stats_follow_allocations():
    fresh()
    base = torch.spyre.memory_allocated()
    x = torch.empty(1000, device="spyre")  # 4000 B -> 4096 B block
    assert torch.spyre.memory_allocated() == base + 4096
    assert torch.spyre.memory_reserved() >= 2 * MiB
    assert torch.accelerator.memory_allocated() == torch.spyre.memory_allocated()
    del x
    assert torch.spyre.memory_allocated() == base
    assert torch.spyre.max_memory_allocated() >= base + 4096
    torch.spyre.reset_peak_memory_stats()
    assert torch.spyre.max_memory_allocated() == base
    st = torch.spyre.memory_stats()
    for k in ("allocated_bytes.all.current", "reserved_bytes.all.peak",
              "active_bytes.small_pool.current", "segment.all.current", "num_ooms",
              "requested_bytes.all.allocated"):
        assert k in st, k


def test_freed_block_is_reused():
    fresh()
    x = torch.empty(MiB // 4, device="spyre")
    p = x.data_ptr()
    del x
    before = torch.spyre.counters()["alloc_cache_hits"]
    y = torch.empty(MiB // 4, device="spyre")
    assert y.data_ptr() == p
    assert torch.spyre.counters()["alloc_cache_hits"] == before + 1


def test_small_blocks_split_one_segment():
    fresh()
    r0 = torch.spyre.memory_reserved()
    ts = [torch.empty(256, device="spyre") for _ in range(8)]  # 1 KiB each
    assert torch.spyre.memory_reserved() - r0 == 2 * MiB  # one small segment
    ptrs = sorted(t.data_ptr() for t in ts)
    assert all(b - a == 1024 for a, b in zip(ptrs, ptrs[1:]))
    del ts
    # after freeing, the pieces merge back: a 1.5 MiB request... goes large,
    # but a 1 MiB small request fits in the merged small segment
    z = torch.empty(MiB // 4, device="spyre")
    assert torch.spyre.memory_reserved() - r0 == 2 * MiB
    del z


def test_large_blocks_and_empty_cache():
    fresh()
    r0 = torch.spyre.memory_reserved()
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="spyre")
    assert torch.spyre.memory_reserved() - r0 == 4 * MiB  # rounded to 2 MiB
    del x
    assert torch.spyre.memory_reserved() - r0 == 4 * MiB  # cached
    torch.spyre.empty_cache()
    assert torch.spyre.memory_reserved() == r0
    free, total = torch.spyre.mem_get_info()
    assert 0 < free <= total == torch.spyre.get_device_properties().total_memory


def test_other_stream_reuses_only_after_owner_is_idle():
    fresh()
    s1 = torch.Stream(device="spyre")
    s2 = torch.Stream(device="spyre")
    s3 = torch.Stream(device="spyre")
    with torch.spyre.stream(s1):
        x = torch.empty(64 * MiB // 4, device="spyre").fill_(1.0)  # s1 busy for a while
        p = x.data_ptr()
        del x
    with torch.spyre.stream(s2):
        y = torch.empty(64 * MiB // 4, device="spyre")
        q = y.data_ptr()
        # still busy now means busy when y was allocated: s1's block is not handed out
        if not s1.query():
            assert q != p
        del y
    torch.spyre.synchronize()
    before = torch.spyre.counters()["alloc_cross_stream_reuses"]
    with torch.spyre.stream(s3):  # s3 owns no block: it takes an idle stream's
        z = torch.empty(64 * MiB // 4, device="spyre")
    assert z.data_ptr() in (p, q)
    assert torch.spyre.counters()["alloc_cross_stream_reuses"] == before + 1
    del z


def test_record_stream_defers_free():
    fresh()
    s = torch.Stream(device="spyre")
    x = torch.empty(MiB // 4, device="spyre")
    p = x.data_ptr()
    with torch.spyre.stream(s):
        x.fill_(2.0)
    x.record_stream(s)
    before = torch.spyre.counters()["alloc_deferred_frees"]
    del x
    assert torch.spyre.counters()["alloc_deferred_frees"] == before + 1
    s.synchronize()
    y = torch.empty(MiB // 4, device="spyre")  # the event completed: reusable
    assert y.data_ptr() == p


def test_out_of_memory_is_a_python_error():
    fresh()
    total = torch.spyre.get_device_properties().total_memory
    keep = torch.empty(MiB, dtype=torch.uint8, device="spyre")
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate"):
        torch.empty(total * 2, dtype=torch.uint8, device="spyre")  # never fits
    held = []
    with pytest.raises(torch.OutOfMemoryError) as e:
        for _ in range(total // (128 * MiB) + 2):
            held.append(torch.empty(128 * MiB, dtype=torch.uint8, device="spyre"))
    msg = str(e.value)
    assert "Tried to allocate 128.00 MiB" in msg, msg
    assert held, "not even one 128 MiB block fitted"
    assert f"{len(held) * 128 + 1:.2f} MiB is allocated by PyTorch" in msg, msg
    del held
    for part in ("Tried to allocate", "total capacity", "allocated by PyTorch",
                 "reserved by PyTorch"):
        assert part in msg, msg
    assert torch.spyre.memory_stats()["num_ooms"] >= 1
    # the device still works
    keep.fill_(1)
    assert keep.cpu().sum().item() == MiB


def test_empty_cache_merges_pieces_of_different_streams():
    fresh()
    r0 = torch.spyre.memory_reserved()
    s1 = torch.Stream(device="spyre")
    s2 = torch.Stream(device="spyre")
    with torch.spyre.stream(s1):
        a = torch.empty(MiB // 8, device="spyre")  # 512 KiB piece of a small segment
        del a
    s1.synchronize()
    with torch.spyre.stream(s2):
        b = torch.empty(MiB // 16, device="spyre")  # s2 takes part of s1's idle piece
    assert torch.spyre.memory_reserved() - r0 == 2 * MiB
    del b
    torch.spyre.empty_cache()
    assert torch.spyre.memory_reserved() == r0


def test_accelerator_memory_api_matches():
    fresh()
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="spyre")
    assert torch.accelerator.memory_allocated() == torch.spyre.memory_allocated() >= 3 * MiB
    assert torch.accelerator.memory_reserved() == torch.spyre.memory_reserved()
    st = torch.accelerator.memory_stats()
    assert st["allocated_bytes.all.current"] == torch.spyre.memory_allocated()
    assert st["allocated_bytes.large_pool.current"] >= 3 * MiB
    free, total = torch.accelerator.get_memory_info()
    assert total == torch.spyre.get_device_properties().total_memory
    r = torch.spyre.memory_reserved()
    del x
    torch.accelerator.empty_cache()
    assert torch.spyre.memory_reserved() == r - 4 * MiB  # its own 4 MiB segment


def test_random_alloc_free_never_overlaps_and_accounts_exactly():
    # Random sizes (both pools, splitting and merging), random frees, two
    # streams: every live tensor keeps its own fill value (no two blocks
    # overlap), requested bytes are exactly the live tensors' bytes, and
    # allocated bytes cover their rounded sizes (a large block keeps a
    # remainder of up to 1 MiB unsplit, as CUDA's allocator does).
    import random
    fresh()
    rng = random.Random(1)
    base = torch.spyre.memory_allocated()
    base_req = torch.spyre.memory_stats()["requested_bytes.all.current"]
    base_reserved = torch.spyre.memory_reserved()
    streams = [torch.spyre.current_stream(), torch.Stream(device="spyre")]
    live = {}
    for step in range(300):
        if live and rng.random() < 0.45:
            key = rng.choice(list(live))
            del live[key]
            continue
        n = rng.choice([1, 100, 1000, 30000, 300000, 700000])
        with torch.spyre.stream(rng.choice(streams)):
            t = torch.empty(n, dtype=torch.int32, device="spyre").fill_(step)
        live[step] = t
        if step % 50 == 0:
            torch.spyre.synchronize()
    torch.spyre.synchronize()
    rounded = sum(max(512, -(-t.numel() * 4 // 512) * 512) for t in live.values())
    exact = sum(t.numel() * 4 for t in live.values())
    assert torch.spyre.memory_stats()["requested_bytes.all.current"] - base_req == exact
    assert rounded <= torch.spyre.memory_allocated() - base <= rounded + len(live) * MiB
    for v, t in live.items():
        c = t.cpu()
        assert c.min().item() == v and c.max().item() == v, v
    live.clear()
    del t, c
    assert torch.spyre.memory_allocated() == base
    torch.spyre.empty_cache()
    st = torch.spyre.memory_stats()
    assert st["inactive_split.all.current"] == 0
    assert torch.spyre.memory_reserved() == base_reserved  # every segment went back
    assert st["active.all.current"] == st["allocation.all.current"]
