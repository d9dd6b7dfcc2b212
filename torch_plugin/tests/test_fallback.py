# SPDX-License-Identifier: MIT
"""The visible CPU fallback: warning once per op, counters, error mode, device checks."""
import warnings

import pytest
import torch

from conftest import run_python


def test_fallback_runs_warns_once_and_counts():
    torch.spyre.reset_fallback_counts()
    a = torch.arange(6.0).to("spyre")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        # atan: no device kernel (the card has no function for it)
        b = torch.atan(a)
        c = torch.atan(b)
    assert torch.equal(c.cpu(), torch.atan(torch.atan(torch.arange(6.0))))
    assert c.is_spyre
    msgs = [str(x.message) for x in w if "no spyre kernel" in str(x.message)]
    assert len(msgs) == 1 and "aten::atan" in msgs[0], msgs
    counts = torch.spyre.fallback_counts()
    assert sum(v for k, v in counts.items() if k.startswith("aten::atan")) == 2, counts


def test_fallback_error_mode():
    a = torch.ones(3, device="spyre")
    torch.spyre.set_fallback_mode("error")
    with pytest.raises(NotImplementedError, match="aten::atan.*TORCH_SPYRE_FALLBACK=error"):
        torch.atan(a)
    # the minimal ops keep working in error mode
    assert torch.equal((a.clone().fill_(2)).cpu(), torch.full((3,), 2.0))
    torch.spyre.set_fallback_mode("warn")
    with pytest.raises(RuntimeError, match="must be 'warn' or 'error'"):
        torch.spyre.set_fallback_mode("silent")


def test_fallback_error_mode_from_environment():
    code = """
import torch
print("mode", torch.spyre.get_fallback_mode())
try:
    torch.ones(2, device="spyre").atan()
except NotImplementedError as e:
    print("raised", "aten::atan" in str(e))
"""
    rc, out = run_python(code, TORCH_SPYRE_FALLBACK="error")
    assert rc == 0 and "mode error" in out and "raised True" in out, out


def test_mixed_devices_is_an_error(two_devices):
    d0, d1 = two_devices
    import warnings
    torch.spyre.reset_fallback_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "runs on the CPU" warning first
        with pytest.raises(RuntimeError, match="same device"):
            torch.ones(2, device=d0) + torch.ones(2, device=d1)
        with pytest.raises(RuntimeError, match="same device"):
            torch.ones(2, device=d0) + torch.ones(2)
    assert torch.spyre.fallback_counts() == {}  # nothing ran on the CPU
    # a 0-dim CPU tensor is a scalar operand, as on CUDA
    r = torch.ones(2, device=d0) + torch.tensor(1.0)
    assert torch.equal(r.cpu(), torch.full((2,), 2.0))
