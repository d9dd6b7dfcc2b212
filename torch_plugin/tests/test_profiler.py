# SPDX-License-Identifier: MIT
"""torch.profiler with ProfilerActivity.PrivateUse1 shows the card's work:
one device event per submission (csrc/profiler.cpp, a Kineto child
profiler), named after the aten op, lasting its modelled device time."""
import json

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

BOTH = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _device(p):
    return [e for e in p.events() if e.device_type == DeviceType.PrivateUse1]


def _kernels(p, name):
    """The op's compute-engine events (its DMA ones are gpu_memcpy on tracks 2..)."""
    ev = [e for e in _device(p) if e.name == name and e.activity_type == "kernel"]
    assert all(e.device_resource_id == 1 for e in ev), ev
    return ev


def _mm_relu(n):
    x = torch.randn(n, n).to("spyre")
    torch.spyre.synchronize()
    return x


def test_profiler_shows_device_ops_with_modelled_times(tmp_path):
    x = _mm_relu(128)
    # warm: the VM's card spends longer on the first launch of a program
    torch.mm(x, x).relu().cpu()
    with profile(activities=BOTH) as p:
        out = torch.mm(x, x).relu().cpu()
    # The same ops in a device timeline trace, right after and from about the
    # same state. On user-mode queues (the default on the drm backend) the
    # card's MMU caches translations, so an op's modelled time includes the
    # walks for pages its TLB lost (100 ns a table read): the downloads of
    # x below would evict some of the mm's, and the two sessions' timestamp
    # pages differ; measured 0.06 µs apart here, 0.74 µs after the
    # downloads. On SUBMIT (no translation) the two are equal.
    path = str(tmp_path / "mm.json")
    with torch.spyre.trace(path):
        torch.mm(x, x).relu().cpu()
    torch.testing.assert_close(out, (x.cpu() @ x.cpu()).relu(), rtol=1e-2, atol=1e-2)
    dev = _device(p)
    names = [e.name for e in dev]
    assert "aten::mm" in names and "aten::relu" in names, names
    assert names[-1] == "aten::_copy_from", names  # the copy back to the host
    assert all(e.device_index == 0 for e in dev), dev
    assert {e.activity_type for e in dev} == {"kernel", "gpu_memcpy"}, dev
    cpu_mm = next(e for e in p.events() if e.name == "aten::mm"
                  and e.device_type == DeviceType.CPU)
    mm, = _kernels(p, "aten::mm")
    # on the device after the op submitted it, for a modelled time in µs
    assert mm.time_range.start >= cpu_mm.time_range.start, (mm.time_range, cpu_mm.time_range)
    assert 0 < mm.time_range.elapsed_us() < 10000, mm.time_range.elapsed_us()
    # the modelled time of the device timeline trace of the same op, in the
    # same unit, give or take the page walks of a TLB state not quite equal
    with open(path) as f:
        spans = [e for e in json.load(f)["traceEvents"]
                 if e["ph"] == "X" and e["name"] == "aten::mm" and e["cat"] == "compute"]
    dur = mm.time_range.elapsed_us()
    assert len(spans) == 1 and abs(spans[0]["dur"] - dur) <= max(0.01, 0.05 * dur), \
        (spans, dur)
    # key_averages attributes the device time to the op's device row
    avg = {(a.key, a.device_type): a for a in p.key_averages()}
    assert avg[("aten::mm", DeviceType.PrivateUse1)].self_device_time_total > 0


def test_profiler_device_time_grows_with_the_work():
    small, big = _mm_relu(32), _mm_relu(256)
    with profile(activities=BOTH) as p:
        torch.mm(small, small)
        torch.mm(big, big)
        torch.spyre.synchronize()
    mms = [e.time_range.elapsed_us() for e in _kernels(p, "aten::mm")]
    assert len(mms) == 2 and mms[1] > 4 * mms[0], mms


def test_profiler_without_privateuse1_leaves_the_card_alone(tmp_path):
    x = _mm_relu(16)
    with profile(activities=[ProfilerActivity.CPU]) as p:
        # no device session: a device trace can run inside
        with torch.spyre.trace(str(tmp_path / "t.json")):
            torch.mm(x, x).cpu()
    assert not _device(p)
    assert any(e.name == "aten::mm" for e in p.events())
    # and a trace already running keeps the card: the profile has no device
    # events instead of failing, and the trace is complete
    path = str(tmp_path / "u.json")
    with torch.spyre.trace(path):
        with profile(activities=BOTH) as p:
            torch.mm(x, x).cpu()
    assert not _device(p)
    with open(path) as f:
        assert any(e["name"] == "aten::mm" for e in json.load(f)["traceEvents"])
