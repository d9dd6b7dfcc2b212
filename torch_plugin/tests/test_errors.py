# SPDX-License-Identifier: MIT
"""Errors of the card reach Python as exceptions; the device keeps working."""
import pytest
import torch

import torch_spyre

COMPUTE, DMA, DMA_ERROR, HANG = 0, 1, 2, 1
DISARM = 0


@pytest.fixture(autouse=True)
def disarm_faults():
    # A DMA fault is armed on a DMA ring of the card; a stream's copies may
    # ride another one, so a fault this test did not consume would fail a
    # later test's transfer: disarm what is left.
    yield
    torch_spyre._C._inject_fault(0, DMA, DISARM)
    torch_spyre._C._inject_fault(0, COMPUTE, DISARM)


def test_failed_copy_raises_and_later_work_runs():
    x = torch.arange(1024, dtype=torch.float32)
    d = x.to("spyre")
    torch.spyre.synchronize()
    torch_spyre._C._inject_fault(0, DMA, DMA_ERROR)
    with pytest.raises(RuntimeError, match="spyre"):
        d.cpu()  # the download's DMA fails: the card's error is reported
    y = x.to("spyre")  # later work runs
    assert torch.equal(y.cpu(), x)
    assert torch.equal(d.cpu(), x)


def test_failed_async_work_is_reported_at_synchronize():
    d = torch.empty(4096, device="spyre")
    torch.spyre.synchronize()
    torch_spyre._C._inject_fault(0, DMA, DMA_ERROR)
    d.fill_(1.0)  # queued; fails on the card
    with pytest.raises(RuntimeError, match="spyre"):
        torch.spyre.synchronize()
    d.fill_(2.0)
    assert d.cpu().sum().item() == 2.0 * 4096
