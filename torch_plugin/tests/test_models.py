# SPDX-License-Identifier: MIT
"""Whole modules on spyre through the runtime (device memory, copies, views,
autograd). Ops with device kernels (the matmul family, layer norm,
attention) compute in fp32 on the card and round once, so results match
CPU's within a tolerance; the rest still runs through the CPU fallback here
(test_models_eager.py runs models with the fallback forbidden)."""
import warnings

import pytest
import torch


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_mlp_forward_and_backward():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    x = torch.randn(5, 8)
    ref = m(x)
    ref.sum().backward()
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad(set_to_none=True)
    ms = m.to("spyre")
    y = ms(x.to("spyre"))
    y.sum().backward()
    # device kernels (fp32 inside, their own summation order) match the CPU
    # to fp32 rounding, not bit for bit
    assert y.is_spyre
    torch.testing.assert_close(y.cpu(), ref, rtol=1e-4, atol=1e-5)
    for p, g in zip(ms.parameters(), grads):
        assert p.grad.is_spyre
        torch.testing.assert_close(p.grad.cpu(), g, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_transformer_encoder_layer_eval(dtype):
    torch.manual_seed(1)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True).eval().to(dtype)
    x = torch.randn(2, 10, 32, dtype=dtype)
    with torch.no_grad():
        ref = layer(x)
        out = layer.to("spyre")(x.to("spyre"))
    assert out.is_spyre and out.dtype == dtype
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(out.cpu(), ref, rtol=tol, atol=tol)


def test_state_dict_roundtrip_through_spyre(tmp_path):
    m = torch.nn.Linear(4, 3).to("spyre")
    f = tmp_path / "m.pt"
    torch.save(m.state_dict(), f)
    m2 = torch.nn.Linear(4, 3)
    m2.load_state_dict(torch.load(f, map_location="cpu"))
    assert torch.equal(m2.weight, m.weight.cpu())
    m3 = torch.nn.Linear(4, 3).to("spyre")
    m3.load_state_dict(torch.load(f))
    assert m3.weight.is_spyre and torch.equal(m3.weight.cpu(), m.weight.cpu())
