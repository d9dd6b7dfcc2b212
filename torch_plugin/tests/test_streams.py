# SPDX-License-Identifier: MIT
"""Streams and events: creation, current stream, ordering in modelled device time."""
import pytest
import torch

BIG = 16 << 20  # floats: 64 MiB, long enough in modelled device time


def test_stream_objects():
    s = torch.Stream(device="spyre")
    assert s.device.type == "spyre" and s.stream_id != 0
    d = torch.spyre.default_stream()
    assert d.stream_id == 0
    assert torch.spyre.current_stream() == d
    with torch.spyre.stream(s):
        assert torch.spyre.current_stream() == s
        assert torch.accelerator.current_stream() == s
    assert torch.spyre.current_stream() == d
    prev = torch.accelerator.current_stream()
    torch.accelerator.set_stream(s)
    assert torch.accelerator.current_stream() == s
    torch.accelerator.set_stream(prev)
    s2 = torch.spyre.Stream()
    assert s2.device.type == "spyre"


def test_event_record_query_synchronize():
    e = torch.Event(device="spyre")
    assert e.query()  # never recorded
    x = torch.empty(BIG, device="spyre")
    x.fill_(1.0)
    e.record()
    e.synchronize()
    assert e.query()
    assert torch.accelerator.current_stream().query()


def test_elapsed_time_is_modelled_device_time():
    a = torch.Event(device="spyre", enable_timing=True)
    b = torch.Event(device="spyre", enable_timing=True)
    c = torch.Event(device="spyre", enable_timing=True)
    x = torch.randn(BIG // 4)
    a.record()
    small = torch.empty(1024, device="spyre").fill_(0.0)
    b.record()
    big = x.to("spyre")
    c.record()
    c.synchronize()
    t_small, t_big = a.elapsed_time(b), b.elapsed_time(c)
    assert t_small >= 0 and t_big > 0
    assert t_big > t_small  # 16 MiB upload vs a 4 KiB fill
    no_timing = torch.Event(device="spyre")
    no_timing.record()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        a.elapsed_time(no_timing)
    del small, big


def _ordering(wait):
    # s1: an upload on a transfer (DMA engine) stream; s2: a compute stream
    # that records an event, after waiting for s1's event or not.
    s1 = torch.spyre.Stream(transfer=True)
    s2 = torch.Stream(device="spyre")
    start = torch.Event(device="spyre", enable_timing=True)
    done1 = torch.Event(device="spyre", enable_timing=True)
    mark2 = torch.Event(device="spyre", enable_timing=True)
    x = torch.randn(BIG).pin_memory()
    y = torch.empty(BIG, device="spyre")
    torch.spyre.synchronize()
    with torch.spyre.stream(s2):
        start.record()
    with torch.spyre.stream(s1):
        s1.wait_event(start)
        y.copy_(x, non_blocking=True)
        done1.record()
    with torch.spyre.stream(s2):
        if wait:
            s2.wait_event(done1)
        mark2.record()
    torch.spyre.synchronize()
    assert torch.equal(y.cpu(), x)
    return start.elapsed_time(done1), start.elapsed_time(mark2)


def test_wait_event_orders_streams():
    t_done, t_mark = _ordering(wait=True)
    assert t_done > 0 and t_mark >= t_done, (t_done, t_mark)


def test_without_wait_the_race_is_visible():
    # the compute stream's event does not wait for the transfer: in device
    # time it completes before the upload does
    t_done, t_mark = _ordering(wait=False)
    assert t_mark < t_done, (t_done, t_mark)


def test_transfer_stream_copies_and_fills():
    t = torch.spyre.Stream(transfer=True)
    assert t.stream_id >= 1 << 16
    x = torch.randn(1000)
    with torch.spyre.stream(t):
        d = x.to("spyre")
        e = torch.empty(1000, device="spyre").fill_(4.0)
        f = d.clone()
    t.synchronize()
    assert torch.equal(f.cpu(), x) and torch.equal(e.cpu(), torch.full((1000,), 4.0))


def test_wait_event_orders_data():
    # s2 reads what s1 wrote, ordered by an event only
    s1 = torch.Stream(device="spyre")
    s2 = torch.Stream(device="spyre")
    x = torch.empty(BIG, device="spyre")
    ev = torch.Event(device="spyre")
    with torch.spyre.stream(s1):
        x.fill_(5.0)
        ev.record()
    with torch.spyre.stream(s2):
        s2.wait_event(ev)
        y = x.clone()
        x.record_stream(s2)
    s2.synchronize()
    assert y[0].item() == 5.0 and y[-1].item() == 5.0


def test_stream_query_and_synchronize():
    s = torch.Stream(device="spyre")
    with torch.spyre.stream(s):
        x = torch.empty(BIG, device="spyre").fill_(3.0)
    s.synchronize()
    assert s.query()
    assert x[-1].item() == 3.0
