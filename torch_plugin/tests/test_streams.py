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
    s1 = torch.Stream(device="spyre")
    s2 = torch.Stream(device="spyre")
    start = torch.Event(device="spyre", enable_timing=True)
    done1 = torch.Event(device="spyre", enable_timing=True)
    mark2 = torch.Event(device="spyre", enable_timing=True)
    x = torch.randn(BIG).pin_memory()
    y = torch.empty(BIG, device="spyre")
    torch.spyre.synchronize()
    with torch.spyre.stream(s1):
        start.record()
        y.copy_(x, non_blocking=True)
        done1.record()
    with torch.spyre.stream(s2):
        if wait:
            s2.wait_event(done1)
        mark2.record()
    torch.spyre.synchronize()
    return start.elapsed_time(done1), start.elapsed_time(mark2)


def test_wait_event_orders_streams():
    t_done, t_mark = _ordering(wait=True)
    assert t_mark >= t_done, (t_done, t_mark)


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
