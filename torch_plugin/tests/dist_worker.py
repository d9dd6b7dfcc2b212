# SPDX-License-Identifier: MIT
"""One rank of a test_distributed.py case (a process of its own).

    python dist_worker.py CASE RANK WORLD STORE_FILE
    python dist_worker.py CASE RANK WORLD env     (MASTER_ADDR/MASTER_PORT)

Each rank uses the sim card spyre:RANK (the killed case: spyre:LOCAL_RANK,
so that it also runs with one card in each of two VMs, scripts/tests/
multi-vm.sh, joined by a TCP store at MASTER_ADDR instead of a file). A case either prints
"CASE-OK rank R ..." and exits 0, or ends with a traceback and exit 1; the
test reads both ranks' output.
"""
import datetime
import os
import sys
import time
import zlib

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool]
SHAPES = [(0,), (7,), (3, 5), (2, 3, 4)]
OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "max": dist.ReduceOp.MAX,
       "min": dist.ReduceOp.MIN, "product": dist.ReduceOp.PRODUCT}


def init(backend, rank, world, store_file, timeout=60):
    if store_file == "env":  # rank 0 serves a TCP store at MASTER_ADDR:MASTER_PORT
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world,
                              rank == 0, timeout=datetime.timedelta(seconds=300))
    else:
        store = dist.FileStore(store_file, world)
    # Every rank at the store before the group's (short) timeout starts:
    # under TCG in the VM one interpreter's start can lag the other's by
    # more than the killed case's 10 s, and gloo's connection setup would
    # time out on the early rank.
    store.set(f"arrived/{rank}", "1")
    store.wait([f"arrived/{r}" for r in range(world)], datetime.timedelta(seconds=300))
    kw = {} if backend is None else {"backend": backend}
    dist.init_process_group(store=store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout), **kw)


def data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return torch.randint(-9, 10, shape, generator=g).to(dtype)


class Placed:
    """@x on the card, contiguous or as every other element of a wider
    tensor whose other elements (a sentinel) no collective may touch."""

    def __init__(self, x, dev, strided):
        self.strided = strided
        if strided and x.dim() > 0:
            wide = list(x.shape[:-1]) + [2 * x.shape[-1]]
            self.base = data(wide, x.dtype, 999).to(dev)
            self.sentinel = self.base.cpu()[..., 1::2].clone()
            self.t = self.base[..., ::2]
            self.t.copy_(x.to(dev))
            assert x.numel() < 2 or not self.t.is_contiguous()
        else:
            self.base = None
            self.t = x.to(dev)

    def untouched(self):
        return self.base is None or torch.equal(self.base.cpu()[..., 1::2], self.sentinel)


def outcome(fn):
    """("ok", None) or ("error", the exception) of fn()."""
    try:
        fn()
        return "ok", None
    except Exception as e:  # noqa: BLE001 (compared with gloo's own outcome)
        return "error", e


class Checker:
    def __init__(self, rank):
        self.rank, self.checked, self.refused, self.failures = rank, 0, [], []

    def same(self, what, ref_fn, ref_out, got_fn, got_out, placed=()):
        """Runs the collective on CPU tensors through gloo (ref_fn) and on
        spyre tensors through the spyre backend (got_fn): both fail, or
        both give the same values, exactly (both reduce on the host)."""
        r, re = outcome(ref_fn)
        g, ge = outcome(got_fn)
        if r != g:
            self.failures.append(f"{what}: gloo {r} ({re!r}), spyre {g} ({ge!r})")
            return
        if r == "error":
            self.refused.append(f"{what}: {type(ge).__name__}: {str(ge)[:120]}")
            return
        for i, (a, b) in enumerate(zip(ref_out, got_out)):
            b = b.cpu() if b.device.type == "spyre" else None
            if b is None or b.dtype != a.dtype or b.shape != a.shape or not torch.equal(a, b):
                self.failures.append(f"{what}: output {i} differs: gloo {a}, spyre {b}")
                return
        for p in placed:
            if not p.untouched():
                self.failures.append(f"{what}: wrote outside the strided view")
                return
        self.checked += 1


def case_collectives(rank, world, store_file):
    """Every collective against gloo on CPU tensors: dtypes, shapes (empty
    too), contiguous and strided (non-contiguous) spyre tensors."""
    init("cpu:gloo,spyre:spyre", rank, world, store_file)
    dev = torch.device("spyre", rank)
    torch.spyre.set_device(rank)
    c = Checker(rank)
    peer = (rank + 1) % world
    for dtype in DTYPES:
        for shape in SHAPES:
            for strided in (False, True):
                seed = zlib.crc32(repr((dtype, shape, strided)).encode()) % 10000
                tag = f"{dtype} {shape} {'strided' if strided else 'contiguous'}"
                x = data(shape, dtype, seed * 10 + rank)

                for name, op in OPS.items():
                    ref, p = x.clone(), Placed(x, dev, strided)
                    c.same(f"all_reduce {name} {tag}", lambda: dist.all_reduce(ref, op), [ref],
                           lambda: dist.all_reduce(p.t, op), [p.t], [p])

                ref, p = x.clone(), Placed(x, dev, strided)
                c.same(f"broadcast {tag}", lambda: dist.broadcast(ref, src=1), [ref],
                       lambda: dist.broadcast(p.t, src=1), [p.t], [p])

                # all_gather into strided views of one wide tensor each
                ref = [torch.empty_like(x) for _ in range(world)]
                outs = [Placed(torch.zeros_like(x), dev, strided) for _ in range(world)]
                inp = Placed(x, dev, strided)
                c.same(f"all_gather {tag}", lambda: dist.all_gather(ref, x), ref,
                       lambda: dist.all_gather([o.t for o in outs], inp.t),
                       [o.t for o in outs], outs + [inp])

                wide = (world * shape[0],) + shape[1:]
                ref = torch.empty(wide, dtype=dtype)
                got = torch.empty(wide, dtype=dtype, device=dev)
                c.same(f"all_gather_into_tensor {tag}",
                       lambda: dist.all_gather_into_tensor(ref, x), [ref],
                       lambda: dist.all_gather_into_tensor(got, inp.t), [got])

                parts = [data(shape, dtype, seed * 10 + 5 + rank * world + i)
                         for i in range(world)]
                ref = torch.empty_like(x)
                out = Placed(torch.zeros_like(x), dev, strided)
                c.same(f"reduce_scatter {tag}",
                       lambda: dist.reduce_scatter(ref, [q.clone() for q in parts]), [ref],
                       lambda: dist.reduce_scatter(out.t, [q.to(dev) for q in parts]),
                       [out.t], [out])

                for name in ("sum", "avg", "max"):
                    ref = torch.empty_like(x)
                    got = torch.empty(shape, dtype=dtype, device=dev)
                    cat = torch.cat(parts)
                    c.same(f"reduce_scatter_tensor {name} {tag}",
                           lambda: dist.reduce_scatter_tensor(ref, cat.clone(), OPS[name]),
                           [ref],
                           lambda: dist.reduce_scatter_tensor(got, cat.to(dev), OPS[name]),
                           [got])

                ref = torch.empty(wide, dtype=dtype)
                got = torch.empty(wide, dtype=dtype, device=dev)
                cat = torch.cat(parts)
                c.same(f"all_to_all_single {tag}",
                       lambda: dist.all_to_all_single(ref, cat.clone()), [ref],
                       lambda: dist.all_to_all_single(got, cat.to(dev)), [got])

                ref = [torch.empty_like(x) for _ in range(world)]
                outs = [Placed(torch.zeros_like(x), dev, strided) for _ in range(world)]
                c.same(f"all_to_all {tag}",
                       lambda: dist.all_to_all(ref, [q.clone() for q in parts]), ref,
                       lambda: dist.all_to_all([o.t for o in outs], [q.to(dev) for q in parts]),
                       [o.t for o in outs], outs)

                # point to point: each rank sends its x to the next, receives the previous
                ref = torch.empty_like(x)
                out = Placed(torch.zeros_like(x), dev, strided)
                c.same(f"send/recv {tag}",
                       lambda: _ring(ref, x, rank, peer, world), [ref],
                       lambda: _ring(out.t, inp.t, rank, peer, world), [out.t], [out, inp])

                # rooted: reduce and gather to rank 0, scatter from rank 0
                ref, p = x.clone(), Placed(x, dev, strided)
                c.same(f"reduce {tag}", lambda: dist.reduce(ref, dst=0),
                       [ref] if rank == 0 else [],
                       lambda: dist.reduce(p.t, dst=0), [p.t] if rank == 0 else [], [p])
                ref = [torch.empty_like(x) for _ in range(world)] if rank == 0 else None
                got = ([torch.empty(shape, dtype=dtype, device=dev) for _ in range(world)]
                       if rank == 0 else None)
                c.same(f"gather {tag}", lambda: dist.gather(x, ref, dst=0), ref or [],
                       lambda: dist.gather(inp.t, got, dst=0), got or [])
                ref = torch.empty_like(x)
                got = torch.empty(shape, dtype=dtype, device=dev)
                c.same(f"scatter {tag}",
                       lambda: dist.scatter(ref, [q.clone() for q in parts] if rank == 0
                                            else None, src=0), [ref],
                       lambda: dist.scatter(got, [q.to(dev) for q in parts] if rank == 0
                                            else None, src=0), [got])
                if not inp.untouched() or not torch.equal(inp.t.cpu(), x):
                    c.failures.append(f"{tag}: an input of the collectives changed")

    # uneven all_to_all_single splits
    x = torch.arange(10, dtype=torch.float32) + 100 * rank
    ins, outs_ = ([3, 7], [3, 4]) if rank == 0 else ([4, 6], [7, 6])
    ref = torch.empty(sum(outs_))
    got = torch.empty(sum(outs_), device=dev)
    c.same("all_to_all_single uneven", lambda: dist.all_to_all_single(ref, x, outs_, ins), [ref],
           lambda: dist.all_to_all_single(got, x.to(dev), outs_, ins), [got])

    # coalesced forms (functional collectives and FSDP use them)
    xs = [data((5,), torch.float32, 7 + rank), data((2, 3), torch.float32, 9 + rank)]
    refs = [t.clone() for t in xs]
    gots = [t.to(dev) for t in xs]
    c.same("all_reduce_coalesced",
           lambda: dist.all_reduce_coalesced(refs), refs,
           lambda: dist.all_reduce_coalesced(gots), gots)

    dist.barrier()
    dist.destroy_process_group()
    # the ranks' cards are peers (two sim cards or two cards of one VM):
    # the collectives above went card to card, not through gloo
    import torch_spyre.distributed as sd
    paths = sd.peer_stats()
    if os.environ.get("SPYRE_C10D_PEER") != "0":
        assert paths["groups_peer"] == 1 and paths["peer_collectives"] >= 300 and \
            paths["peer_bytes"] > 0, paths
        # all_to_all(_single), gather and scatter too, for every dtype
        # (the ops with nothing to send at a shape of (0,) count as well)
        ops = paths["by_op"]
        assert all(ops.get(o, 0) >= len(DTYPES) * len(SHAPES) * 2
                   for o in ("alltoall", "gather", "scatter")), paths
    if c.failures:
        raise AssertionError(f"rank {rank}: {len(c.failures)} collectives disagree with gloo:\n"
                             + "\n".join(c.failures[:40]))
    # refused by both: only the average of integers or bools (no exact result)
    odd = [w for w in c.refused if " avg " not in w or "float" in w.split(" avg ")[1][:20]]
    assert not odd, "\n".join(odd)
    assert c.checked >= 800, c.checked
    print(f"collectives-OK rank {rank} checked {c.checked} card-to-card "
          f"{paths['peer_collectives']} staged {paths['staged_collectives']} "
          f"refused-by-both {len(c.refused)}: "
          f"{c.refused[0] if c.refused else ''}")


def case_chunked(rank, world, store_file):
    """Messages of many cells (the test makes the cells 4 KiB, three per
    pair, so most messages here are several pipelined chunks): every
    card-to-card collective against gloo on CPU tensors, all_to_all_single
    whose pairs move different numbers of chunks (one none), and a send of
    a whole region before the receiver reads it."""
    init("cpu:gloo,spyre:spyre", rank, world, store_file)
    dev = torch.device("spyre", rank)
    torch.spyre.set_device(rank)
    import torch_spyre.distributed as sd
    c = Checker(rank)
    for dtype, n in ((torch.float32, 5000), (torch.float16, 9000), (torch.bfloat16, 4097),
                     (torch.int64, 1537), (torch.int32, 3071)):
        tag = f"{dtype} {n}"
        x = data((n,), dtype, 31 + rank)
        for name, op in OPS.items():
            if name == "avg" and not dtype.is_floating_point:
                continue
            ref, p = x.clone(), Placed(x, dev, strided=name == "max")
            c.same(f"all_reduce {name} {tag}", lambda: dist.all_reduce(ref, op), [ref],
                   lambda: dist.all_reduce(p.t, op), [p.t], [p])
        ref, p = x.clone(), Placed(x, dev, False)
        c.same(f"broadcast {tag}", lambda: dist.broadcast(ref, src=0), [ref],
               lambda: dist.broadcast(p.t, src=0), [p.t])
        ref = [torch.empty_like(x) for _ in range(world)]
        outs = [Placed(torch.zeros_like(x), dev, True) for _ in range(world)]
        c.same(f"all_gather {tag}", lambda: dist.all_gather(ref, x), ref,
               lambda: dist.all_gather([o.t for o in outs], x.to(dev)), [o.t for o in outs],
               outs)
        ref = torch.empty(world * n, dtype=dtype)
        got = torch.empty(world * n, dtype=dtype, device=dev)
        c.same(f"all_gather_into_tensor {tag}", lambda: dist.all_gather_into_tensor(ref, x),
               [ref], lambda: dist.all_gather_into_tensor(got, x.to(dev)), [got])
        parts = [data((n,), dtype, 71 + rank * world + i) for i in range(world)]
        cat = torch.cat(parts)
        ref = torch.empty_like(x)
        got = torch.empty(n, dtype=dtype, device=dev)
        c.same(f"reduce_scatter_tensor {tag}",
               lambda: dist.reduce_scatter_tensor(ref, cat.clone()), [ref],
               lambda: dist.reduce_scatter_tensor(got, cat.to(dev)), [got])
        ref = torch.empty_like(x)
        got = torch.empty(n, dtype=dtype, device=dev)
        c.same(f"reduce_scatter {tag}",
               lambda: dist.reduce_scatter(ref, [q.clone() for q in parts], dist.ReduceOp.MIN),
               [ref],
               lambda: dist.reduce_scatter(got, [q.to(dev) for q in parts], dist.ReduceOp.MIN),
               [got])
        ref = torch.empty_like(cat)
        got = torch.empty(world * n, dtype=dtype, device=dev)
        c.same(f"all_to_all_single {tag}", lambda: dist.all_to_all_single(ref, cat.clone()),
               [ref], lambda: dist.all_to_all_single(got, cat.to(dev)), [got])
        # all_to_all lists whose pairs differ in size (rank r sends q
        # n + 1000 (r + 2q) elements): gloo's all_to_all refuses those (NCCL
        # takes them), so the reference is gloo's all_to_all_single with
        # the same splits, into views of one CPU tensor
        size = [[n + 1000 * (r + 2 * q) for q in range(world)] for r in range(world)]
        ins = [data((size[rank][q],), dtype, 5 + q) for q in range(world)]
        got_sizes = [size[q][rank] for q in range(world)]
        flat = torch.empty(sum(got_sizes), dtype=dtype)
        ref = list(flat.split(got_sizes))
        outs = [Placed(torch.zeros(m, dtype=dtype), dev, True) for m in got_sizes]
        c.same(f"all_to_all uneven {tag}",
               lambda: dist.all_to_all_single(flat, torch.cat(ins), got_sizes, size[rank]), ref,
               lambda: dist.all_to_all([o.t for o in outs], [t.to(dev) for t in ins]),
               [o.t for o in outs], outs)
        ref = [torch.empty_like(x) for _ in range(world)] if rank == 1 else None
        got = ([torch.empty(n, dtype=dtype, device=dev) for _ in range(world)]
               if rank == 1 else None)
        c.same(f"gather {tag}", lambda: dist.gather(x, ref, dst=1), ref or [],
               lambda: dist.gather(x.to(dev), got, dst=1), got or [])
        ref = torch.empty_like(x)
        out = Placed(torch.zeros_like(x), dev, True)
        c.same(f"scatter {tag}",
               lambda: dist.scatter(ref, [q.clone() for q in parts] if rank == 1 else None,
                                    src=1), [ref],
               lambda: dist.scatter(out.t, [q.to(dev) for q in parts] if rank == 1 else None,
                                    src=1), [out.t], [out])

    # all_reduce from 256 KiB on: each rank reduces its half (reduce-scatter,
    # then all-gather), halves of odd sizes too
    for dtype, n in ((torch.float32, 65537), (torch.float16, 131075), (torch.int64, 40000)):
        x = data((n,), dtype, 17 + rank)
        for name in ("sum", "avg", "max"):
            if name == "avg" and not dtype.is_floating_point:
                continue
            ref, p = x.clone(), Placed(x, dev, strided=name == "max")
            c.same(f"all_reduce {name} {dtype} {n}", lambda: dist.all_reduce(ref, OPS[name]),
                   [ref], lambda: dist.all_reduce(p.t, OPS[name]), [p.t], [p])

    # uneven all_to_all_single of 3-element rows: rank 0 -> 1 2500 rows
    # (8 chunks), 1 -> 0 7000 rows (21 chunks), 1 -> 1 none
    rows = [[10, 2500], [7000, 0]]
    ins_, outs_ = rows[rank], [rows[q][rank] for q in range(world)]
    x = data((sum(ins_), 3), torch.float32, 3 + rank)
    ref = torch.empty(sum(outs_), 3)
    got = torch.empty(sum(outs_), 3, device=dev)
    c.same("all_to_all_single uneven chunked",
           lambda: dist.all_to_all_single(ref, x, outs_, ins_), [ref],
           lambda: dist.all_to_all_single(got, x.to(dev), outs_, ins_), [got])

    # a send of the whole region (three cells) returns before the receiver
    # reads; the next one waits for the receiver to free a cell
    a, b = data((3072,), torch.float32, 1), data((100,), torch.float32, 2)
    if rank == 0:
        dist.send(a.to(dev), 1)
        dist.send(b.to(dev), 1)
    else:
        time.sleep(0.5)
        ga, gb = torch.empty(3072, device=dev), torch.empty(100, device=dev)
        dist.recv(ga, 0)
        dist.recv(gb, 0)
        if not (torch.equal(ga.cpu(), a) and torch.equal(gb.cpu(), b)):
            c.failures.append("send/recv of a whole region: wrong bytes")
    dist.barrier()
    dist.destroy_process_group()
    stats = sd.peer_stats()
    ops = stats["by_op"]
    moved = ["allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall", "gather",
             "scatter", "send" if rank == 0 else "recv"]
    assert all(ops.get(o, 0) > 0 for o in moved), stats
    assert stats["staged_collectives"] == 0, stats  # (the barrier is gloo's own)
    if c.failures:
        raise AssertionError(f"rank {rank}: {len(c.failures)} collectives disagree with gloo:\n"
                             + "\n".join(c.failures[:40]))
    assert not c.refused, c.refused
    print(f"chunked-OK rank {rank} checked {c.checked} card-to-card {ops}")


def _ring(out, x, rank, peer, world):
    prev = (rank - 1) % world
    if rank % 2 == 0:
        dist.send(x, peer)
        dist.recv(out, prev)
    else:
        dist.recv(out, prev)
        dist.send(x, peer)


def case_semantics(rank, world, store_file):
    """The default backend, async Work and streams, functional collectives,
    bad input."""
    init(None, rank, world, store_file)  # no backend named: spyre's default
    dev = torch.device("spyre", rank)
    assert dist.get_default_backend_for_device("spyre") == "spyre"
    be = dist.group.WORLD._get_backend(dev)
    assert type(be).__name__ == "_SpyreBackend" and be.name() == "spyre", be
    torch.spyre.set_device(rank)
    torch.spyre.set_fallback_mode("error")  # nothing below may run on the CPU

    # async work: the result is usable by later work on the current stream
    x = torch.full((64, 64), float(rank + 1), device=dev)
    work = dist.all_reduce(x, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True
    y = x * 2
    assert torch.equal(y.cpu(), torch.full((64, 64), 2.0 * (1 + 2))), y

    # on a side stream: the input is produced there (staging waits for it),
    # the result is consumed there after wait()
    s = torch.spyre.Stream()
    with torch.spyre.stream(s):
        a = torch.ones(1000, device=dev)
        for _ in range(20):
            a = a + 1.0   # 21 on both ranks, computed on stream s
        w = dist.all_reduce(a, async_op=True)
        w.wait()
        b = a * 3
    s.synchronize()
    assert torch.equal(b.cpu(), torch.full((1000,), 21.0 * world * 3)), b.cpu()[:4]

    # the call does not wait for the card: the inputs' download is queued
    # behind the work producing them (16 matmuls, ~0.2 s on the sim card;
    # more on a retry, in case a loaded host delayed the caller that long)
    a = torch.full((256, 256), 1.0 / 256, device=dev)
    busy = []
    for n in (16, 48, 128):
        m = torch.ones(256, 256, device=dev)
        for _ in range(n):
            m = m @ a  # stays all ones, exactly
        w = dist.all_reduce(m, async_op=True)
        busy.append(not torch.spyre.current_stream().query())
        w.wait()
        assert torch.equal(m.cpu(), torch.full((256, 256), 2.0)), m.cpu()
        t = torch.tensor([float(busy[-1])], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MIN)  # both ranks retry, or neither
        if t.item() == 1.0:
            break
    assert busy[-1], f"all_reduce(async_op=True) waited for the card's queued work: {busy}"

    # several outstanding works, waited in reverse order
    ts = [torch.full((10,), float(i + rank), device=dev) for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        w.wait()
    for i, t in enumerate(ts):
        assert torch.equal(t.cpu(), torch.full((10,), float(2 * i + 1))), (i, t.cpu())

    # polling: is_completed() true means the result is in place
    t = torch.full((8,), float(rank), device=dev)
    w = dist.all_reduce(t, async_op=True)
    deadline = time.monotonic() + 30
    while not w.is_completed():
        assert time.monotonic() < deadline, "is_completed() never became true"
        time.sleep(0.001)
    assert torch.equal(t.cpu(), torch.full((8,), 1.0)), t.cpu()
    w.wait()
    assert torch.equal(t.cpu(), torch.full((8,), 1.0)), "wait() after is_completed() changed t"

    # get_future(): completes with the output tensors
    t = torch.full((3,), 2.0, device=dev)
    fut = dist.all_reduce(t, async_op=True).get_future()
    res = fut.wait()
    assert torch.equal(res[0].cpu(), torch.full((3,), 4.0)), res

    # functional collectives (what DTensor calls)
    g = dist.group.WORLD
    x = torch.arange(6, dtype=torch.float32, device=dev).view(2, 3) + 10 * rank
    r = funcol.all_reduce(x, "sum", g)
    assert torch.equal(r.cpu(), (torch.arange(6.).view(2, 3) * 2 + 10)), r
    r = funcol.all_reduce(x, "avg", g)
    assert torch.equal(r.cpu(), torch.arange(6.).view(2, 3) + 5), r
    r = funcol.all_gather_tensor(x, 0, g)
    assert torch.equal(r.cpu(), torch.cat([torch.arange(6.).view(2, 3),
                                           torch.arange(6.).view(2, 3) + 10])), r
    r = funcol.reduce_scatter_tensor(x, "sum", 0, g)
    assert torch.equal(r.cpu(), (torch.arange(6.).view(2, 3) * 2 + 10)[rank:rank + 1]), r
    r = funcol.all_to_all_single(x, [1, 1], [1, 1], g)
    assert torch.equal(r.cpu(), torch.stack([torch.arange(3.) + 3 * rank,
                                             torch.arange(3.) + 3 * rank + 10])), r
    rs = funcol.all_reduce_coalesced([x, x + 1], "max", g)
    assert torch.equal(rs[0].cpu(), torch.arange(6.).view(2, 3) + 10), rs
    assert torch.equal(rs[1].cpu(), torch.arange(6.).view(2, 3) + 11), rs
    assert r.device == dev and rs[0].device == dev

    # bad input: clear errors, raised on both ranks before anything is sent,
    # so the group stays usable
    cpu = torch.ones(4)
    expect_error(lambda: dist.all_reduce(cpu), "cpu")  # no CPU backend in this group
    expect_error(lambda: dist.all_gather([torch.empty(4), torch.empty(4)],
                                         torch.ones(4, device=dev)),
                 "spyre c10d backend: allgather: tensor_list is a cpu tensor", ValueError)
    expect_error(lambda: dist.all_gather_into_tensor(torch.empty(7, device=dev),
                                                     torch.ones(4, device=dev)),
                 "all_gather_into_tensor: output_tensor has 7 elements, expected world_size "
                 "(2) x input_tensor's 4 = 8", ValueError)
    expect_error(lambda: dist.reduce_scatter_tensor(torch.empty(3, device=dev),
                                                    torch.ones(4, device=dev)),
                 "reduce_scatter_tensor: input has 4 elements, expected world_size (2) x "
                 "output's 3 = 6", ValueError)
    expect_error(lambda: dist.all_gather_into_tensor(torch.empty(8, device=dev),
                                                     torch.ones(4, device=dev).half()),
                 "output_tensor is Float but input_tensor is Half", ValueError)
    expect_error(lambda: dist.all_to_all_single(torch.empty(4, device=dev),
                                                torch.ones(4, device=dev), [1, 3], [3, 3]),
                 "Split sizes")
    expect_error(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32, device=dev),
                                         op=dist.ReduceOp.AVG),
                 "ReduceOp.AVG needs a floating-point tensor", ValueError)
    t = torch.full((4,), float(rank), device=dev)
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), torch.full((4,), 1.0)), "group unusable after bad input"

    # object collectives (pickles through spyre tensors), a subgroup, and a
    # 2-D mesh's sub-mesh group: each gets a spyre backend of its own
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    assert objs == [{"rank": r} for r in range(world)], objs
    lst = [rank * 10]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [10], lst
    from torch.distributed.device_mesh import init_device_mesh
    tp = init_device_mesh("spyre", (1, world), mesh_dim_names=("dp", "tp"))["tp"].get_group()
    for g in (dist.new_group(list(range(world))), tp):
        assert type(g._get_backend(dev)).__name__ == "_SpyreBackend"
        t = torch.full((3,), float(rank + 1), device=dev)
        dist.all_reduce(t, group=g)
        assert torch.equal(t.cpu(), torch.full((3,), 3.0)), t.cpu()
    dist.barrier()
    dist.destroy_process_group()
    print(f"semantics-OK rank {rank}")


def expect_error(fn, text, kind=Exception):
    try:
        fn()
    except kind as e:
        assert text in str(e), f"expected {text!r} in the error, got {e!r}"
        return
    raise AssertionError(f"no {kind.__name__} (expected one mentioning {text!r})")


def case_killed(rank, world, store_file):
    """Rank 1 dies after one collective; rank 0's next collective raises
    within the group's timeout (10 s) instead of hanging."""
    init("spyre", rank, world, store_file, timeout=10)
    local = int(os.environ.get("LOCAL_RANK", rank))
    dev = torch.device("spyre", local)
    torch.spyre.set_device(local)
    t = torch.ones(16, device=dev)
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), torch.full((16,), 2.0))
    if rank == 1:
        sys.stdout.flush()
        os._exit(17)  # no goodbye: as if killed
    time.sleep(0.5)
    t0 = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(t)
    except Exception as e:  # noqa: BLE001 (any error, but an error)
        print(f"killed-OK rank 0 raised {type(e).__name__} after "
              f"{time.monotonic() - t0:.1f} s: {str(e)[:200]!r}")
        sys.stdout.flush()
        os._exit(0)  # the group is broken: skip its teardown
    raise AssertionError("all_reduce with a dead peer returned")


def case_dtensor(rank, world, store_file):
    """DeviceMesh takes the card from LOCAL_RANK; DTensor's collectives;
    tensor-parallel MLP and attention against one card and the CPU."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor

    assert not torch.spyre.is_initialized()
    init(None, rank, world, store_file)
    mesh = init_device_mesh("spyre", (world,))
    assert torch.spyre.current_device() == rank, (torch.spyre.current_device(), rank)
    # chosen (as torch.cuda's set_device initialises), not opened yet
    assert torch.spyre.is_initialized() and not torch.spyre._C._any_device_open()
    dev = torch.device("spyre", rank)
    # DTensor's sharding propagation makes fake tensors on the bare "spyre":
    # they must land on this rank's card, not on spyre:0
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        assert torch.empty(2, device="spyre").device == dev

    full = torch.arange(24, dtype=torch.float32).view(4, 6)
    d = distribute_tensor(full.to(dev), mesh, [Shard(0)])
    assert d.to_local().device == dev and d.to_local().shape == (2, 6)
    assert torch.equal(d.full_tensor().cpu(), full)
    assert torch.equal(d.redistribute(mesh, [Shard(1)]).to_local().cpu(),
                       full[:, 3 * rank:3 * rank + 3])
    from torch.distributed.tensor import DTensor
    p = DTensor.from_local(torch.full((2, 2), float(rank + 1), device=dev), mesh, [Partial()])
    assert torch.equal(p.redistribute(mesh, [Replicate()]).to_local().cpu(),
                       torch.full((2, 2), 3.0))

    # random ops: refused with a clear error (no Philox generator on spyre)
    r = distribute_tensor(torch.zeros(4, 4, device=dev), mesh, [Shard(0)])
    expect_error(lambda: r.uniform_(), "DTensor random ops", NotImplementedError)
    expect_error(lambda: torch.nn.functional.dropout(r, 0.5, training=True),
                 "DTensor random ops", NotImplementedError)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "examples"))
    import tp_gpt2
    torch.spyre.set_fallback_mode("error")  # the split model runs on the cards only
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    with torch.no_grad():
        cpu = tp_gpt2.build(1)(ids)
        one = tp_gpt2.build(1).to(dev)(ids.to(dev)).cpu()
        tp = tp_gpt2.tensor_parallel(tp_gpt2.build(1).to(dev), mesh)
        w = tp.blocks[0].fc.weight
        assert isinstance(w, DTensor) and w.to_local().shape == (128, 64), w.to_local().shape
        got = tp(ids.to(dev)).cpu()
    assert torch.spyre.is_initialized()
    err_one = (got - one).abs().max().item()
    err_cpu = (got - cpu).abs().max().item()
    assert err_one < 1e-4 and err_cpu < 1e-4, (err_one, err_cpu)
    assert torch.equal(got.argmax(-1), cpu.argmax(-1))
    dist.destroy_process_group()
    print(f"dtensor-OK rank {rank} |tp - one card| {err_one:.1e} |tp - cpu| {err_cpu:.1e}")


if __name__ == "__main__":
    case, r, n, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    globals()["case_" + case](r, n, path)
