# SPDX-License-Identifier: MIT
"""The minimal op set: creation, views, resize, set_, fill, zero."""
import pytest
import torch

from test_copy import DTYPES


def test_empty_and_empty_strided():
    t = torch.empty(3, 4, device="spyre", dtype=torch.float16)
    assert t.is_spyre and t.shape == (3, 4) and t.dtype == torch.float16 and t.is_contiguous()
    s = torch.empty_strided((2, 3), (1, 2), device="spyre")
    assert s.stride() == (1, 2)
    z = torch.empty(0, device="spyre")
    assert z.numel() == 0 and z.cpu().numel() == 0
    cl = torch.empty(2, 3, 4, 5, device="spyre", memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)


def test_views_share_storage():
    x = torch.arange(24.0).to("spyre")
    v = x.view(4, 6)
    r = x.reshape(2, 12)
    a = x.as_strided((3, 3), (6, 1), 2)
    assert v.data_ptr() == x.data_ptr() == r.data_ptr()
    assert a.data_ptr() == x.data_ptr() + 2 * 4
    x.fill_(1.0)
    assert torch.equal(v.cpu(), torch.ones(4, 6))
    assert torch.equal(a.cpu(), torch.ones(3, 3))
    y = torch.arange(24.0).to("spyre").view(4, 6).t().reshape(24)  # a copy (non-viewable)
    assert torch.equal(y.cpu(), torch.arange(24.0).view(4, 6).t().reshape(24))


def test_resize_keeps_data():
    x = torch.arange(6, dtype=torch.int32).to("spyre")
    x.resize_(100)
    assert x.shape == (100,)
    assert torch.equal(x[:6].cpu(), torch.arange(6, dtype=torch.int32))
    x.resize_(2, 3)
    assert torch.equal(x.cpu(), torch.arange(6, dtype=torch.int32).view(2, 3))
    e = torch.empty(0, device="spyre")
    e.resize_(5)
    e.fill_(3.0)
    assert torch.equal(e.cpu(), torch.full((5,), 3.0))


def test_set_():
    x = torch.arange(10.0).to("spyre")
    y = torch.empty(0, device="spyre")
    y.set_(x.untyped_storage(), 2, (2, 3), (3, 1))
    assert torch.equal(y.cpu(), torch.arange(10.0).as_strided((2, 3), (3, 1), 2))
    z = torch.empty(0, device="spyre").set_(x)
    assert z.data_ptr() == x.data_ptr() and z.shape == x.shape
    w = torch.empty(0, device="spyre").set_(x.untyped_storage())
    assert w.shape == (10,)
    with pytest.raises(RuntimeError, match="devices must match"):
        torch.empty(0).set_(x.untyped_storage())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_and_zero(dtype):
    value = True if dtype == torch.bool else (-3 if not dtype.is_floating_point else 1.5)
    for shape in [(0,), (1,), (3,), (4, 5), (1001,)]:
        d = torch.empty(shape, dtype=dtype, device="spyre").fill_(value)
        assert torch.equal(d.cpu(), torch.full(shape, value, dtype=dtype)), (shape, dtype)
        d.zero_()
        assert torch.equal(d.cpu(), torch.zeros(shape, dtype=dtype))


def test_fill_patterns_and_strided_fill():
    big = torch.empty(5, dtype=torch.int64, device="spyre").fill_(0x1234_5678_9ABC)
    assert big.cpu().tolist() == [0x1234_5678_9ABC] * 5  # not a 32-bit pattern
    x = torch.zeros(4, 6, device="spyre")
    x[:, 1::2].fill_(2.0)
    ref = torch.zeros(4, 6)
    ref[:, 1::2] = 2.0
    assert torch.equal(x.cpu(), ref)
    x.fill_(torch.tensor(4.0))
    assert torch.equal(x.cpu(), torch.full((4, 6), 4.0))
    h = torch.empty(3, dtype=torch.float16, device="spyre").fill_(1.0)  # odd bytes
    assert torch.equal(h.cpu(), torch.ones(3, dtype=torch.float16))


def test_factories():
    assert torch.equal(torch.zeros(3, 3, device="spyre").cpu(), torch.zeros(3, 3))
    assert torch.equal(torch.ones(2, device="spyre", dtype=torch.int8).cpu(),
                       torch.ones(2, dtype=torch.int8))
    assert torch.equal(torch.full((2, 2), 7, device="spyre").cpu(), torch.full((2, 2), 7))
    t = torch.tensor([1, 2, 3], device="spyre")
    assert t.is_spyre and t.tolist() == [1, 2, 3]


def test_storage_resize_keeps_bytes():
    t = torch.arange(4, dtype=torch.int32).to("spyre")
    s = t.untyped_storage()
    s.resize_(64)
    assert s.nbytes() == 64 and s.device.type == "spyre"
    back = torch.empty(0, dtype=torch.int32, device="spyre").set_(s, 0, (4,), (1,))
    assert back.cpu().tolist() == [0, 1, 2, 3]
    s.resize_(8)
    assert torch.empty(0, dtype=torch.int32, device="spyre").set_(s, 0, (2,), (1,)).cpu().tolist() \
        == [0, 1]
