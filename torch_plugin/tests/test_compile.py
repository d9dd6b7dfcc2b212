# SPDX-License-Identifier: MIT
"""torch.compile(model, backend="spyre"): compiled graphs run as recipes of
the op library's graph compiler, against eager spyre and the CPU, with the
CPU fallback forbidden."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch_spyre.compiler as spyre_compiler

D = "spyre"
TOL = {torch.float32: 1e-4, torch.float16: 2e-2}


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    torch.spyre.set_fallback_mode("error")
    yield
    torch.spyre.set_fallback_mode("warn")


class DecoderBlock(nn.Module):
    """GPT-style: rms_norm, causal attention, SiLU-gated MLP, residuals."""

    def __init__(self, dim=32, heads=4, ffn=64):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.RMSNorm(dim, eps=1e-5), nn.RMSNorm(dim, eps=1e-5)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.gate, self.up = nn.Linear(dim, ffn, bias=False), nn.Linear(dim, ffn, bias=False)
        self.down = nn.Linear(ffn, dim, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.n1(x)).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.ReLU(),
                        nn.Linear(64, 32))
    enc = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return {"mlp": mlp, "encoder_layer": enc, "decoder_block": DecoderBlock()}


def run_three_ways(name, dtype, x):
    ref = models()[name].eval()
    dev = copy.deepcopy(ref).to(dtype).to(D)
    compiled = torch.compile(dev, backend="spyre")
    with torch.no_grad():
        want = ref(x)
        eager = dev(x.to(dtype).to(D))
        got = compiled(x.to(dtype).to(D))
    return want, eager, got, compiled


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("name", ["mlp", "encoder_layer", "decoder_block"])
def test_compiled_matches_eager_and_cpu(name, dtype):
    x = torch.randn(2, 7, 32)
    want, eager, got, _ = run_three_ways(name, dtype, x)
    assert got.device.type == "spyre" and got.dtype == dtype
    tol = TOL[dtype]
    torch.testing.assert_close(got.cpu().float(), want, rtol=tol, atol=tol)
    torch.testing.assert_close(got.cpu().float(), eager.cpu().float(), rtol=tol, atol=tol)
    st = spyre_compiler.stats()
    assert st["graphs"] >= 1 and st["recipes"] >= 1
    assert st["graph_breaks"] == [], st


@pytest.mark.parametrize("name", ["mlp", "decoder_block"])
def test_one_submit_per_compiled_call(name):
    x = torch.randn(2, 7, 32).to(D)
    _, _, _, compiled = run_three_ways(name, torch.float32, x.cpu())
    with torch.no_grad():
        compiled(x)  # warm
        torch.spyre.synchronize()
        before = torch.spyre.counters()["submits"]
        for _ in range(3):
            compiled(x)
        torch.spyre.synchronize()
        after = torch.spyre.counters()["submits"]
    assert after - before == 3  # the driver's/sim's submission counter
    assert spyre_compiler.stats()["recipes"] == 1


def test_recompiles_for_a_new_shape():
    ref = models()["mlp"].eval()
    compiled = torch.compile(copy.deepcopy(ref).to(D), backend="spyre", dynamic=False)
    with torch.no_grad():
        for rows in (3, 5):
            x = torch.randn(rows, 32)
            torch.testing.assert_close(compiled(x.to(D)).cpu(), ref(x), rtol=1e-4, atol=1e-4)
    assert spyre_compiler.stats()["graphs"] == 2


class WithBreak(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(self, x):
        h = torch.relu(self.a(x))
        m = h.max(dim=-1, keepdim=True).values  # aten.max.dim: no lowering
        return self.b(h - m)


def test_graph_break_runs_eagerly_on_spyre_and_is_reported():
    torch.manual_seed(2)
    ref = WithBreak().eval()
    compiled = torch.compile(copy.deepcopy(ref).to(D), backend="spyre")
    x = torch.randn(4, 16)
    with torch.no_grad():
        got = compiled(x.to(D))
    torch.testing.assert_close(got.cpu(), ref(x), rtol=1e-4, atol=1e-5)
    st = spyre_compiler.stats()
    assert st["recipes"] == 2 and st["eager_nodes"] == 1, st
    assert any("max.dim" in r and "no lowering" in r for r in st["graph_breaks"]), st
    assert torch.spyre.fallback_counts() == {}  # the break ran on the card


def test_refused_node_is_a_named_graph_break():
    # a strided slice has a lowering that refuses it (the graph's views are
    # unit-step): the node runs eagerly, named with the reason
    def f(x):
        return (torch.softmax(x, -1)[:, ::2] * 2).sin()

    x = torch.randn(3, 10)
    got = torch.compile(f, backend="spyre")(x.to(D))
    torch.testing.assert_close(got.cpu(), f(x), rtol=1e-4, atol=1e-5)
    st = spyre_compiler.stats()
    assert any("slice with a step" in r for r in st["graph_breaks"]), st
    assert st["recipes"] == 2, st
