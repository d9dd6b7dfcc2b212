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
    assert spyre_compiler.stats()["recipe_cache_misses"] == 2


def test_identical_parts_share_a_recipe_with_their_own_weights():
    # the same structure compiled again (Dynamo's own caches emptied, as for
    # another model of the same shape): the ATen part is identical, so it
    # reuses the first recipe instead of the library's compile; the weights
    # are launch-time inputs, so each model gives its own CPU result
    torch.manual_seed(3)
    refs = [models()["mlp"].eval() for _ in range(2)]
    for p in refs[1].parameters():
        p.data.mul_(-0.5)
    x = torch.randn(4, 32)
    xd = x.to(D)
    got = []
    with torch.no_grad():
        for r in refs:
            torch._dynamo.reset()
            c = torch.compile(copy.deepcopy(r).to(D), backend="spyre")
            got.append(c(xd).cpu())
            torch.testing.assert_close(got[-1], r(x), rtol=1e-4, atol=1e-4)
        assert not torch.allclose(got[0], got[1])
        st = spyre_compiler.stats()
        assert st["graphs"] == 2 and st["recipes"] == 2, st
        assert st["recipe_cache_misses"] == 1 and st["recipe_cache_hits"] == 1, st
        torch.spyre.synchronize()
        before = torch.spyre.counters()["submits"]
        for _ in range(3):
            c(xd)
        torch.spyre.synchronize()
    assert torch.spyre.counters()["submits"] - before == 3  # one per call


def test_recipe_cache_is_keyed_by_shape_and_dtype():
    ref = models()["mlp"].eval()
    with torch.no_grad():
        for dtype, rows in ((torch.float32, 3), (torch.float16, 3), (torch.float32, 5)):
            torch._dynamo.reset()
            c = torch.compile(copy.deepcopy(ref).to(dtype).to(D), backend="spyre")
            x = torch.randn(rows, 32)
            tol = TOL[dtype]
            torch.testing.assert_close(c(x.to(dtype).to(D)).cpu().float(), ref(x),
                                       rtol=tol, atol=tol)
    st = spyre_compiler.stats()
    assert st["recipe_cache_hits"] == 0 and st["recipe_cache_misses"] == 3, st


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


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hf_model_compiles_to_one_recipe(kind):
    # the whole forward, integer bookkeeping and mask building included, is
    # one recipe: one SUBMIT per call, nothing eager, nothing on the CPU
    from test_models_eager import hf_model, on_card
    ref, dev = on_card(hf_model(kind))
    compiled = torch.compile(dev, backend="spyre")
    ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = ref(ids, use_cache=False).logits
        got = compiled(ids.to(D), use_cache=False).logits
        torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
        assert spyre_compiler.stats()["recipes"] == 1
        assert spyre_compiler.stats()["graph_breaks"] == []
        d_ids = ids.to(D)
        torch.spyre.synchronize()
        before = torch.spyre.counters()["submits"]
        compiled(d_ids, use_cache=False)
        torch.spyre.synchronize()
        assert torch.spyre.counters()["submits"] - before == 1
    assert torch.spyre.fallback_counts() == {}


def test_integer_ops_indexing_and_fills_lower_into_the_recipe():
    def f(x, ids):
        pos = torch.arange(ids.shape[1], device=ids.device) + 2
        keep = (ids != 0).cumsum(-1) * 3 - pos
        rows = x[pos[None, :] - 2 + (ids > 100)]  # a gather along the leading dim
        full = torch.full(ids.shape, float("-inf"), device=ids.device)
        return keep, rows, torch.where(ids > 5, full, torch.zeros_like(full))

    x = torch.randn(8, 4)
    ids = torch.tensor([[0, 7, 3, 9], [4, 0, 0, 6]])
    got = torch.compile(f, backend="spyre")(x.to(D), ids.to(D))
    for g, w in zip(got, f(x, ids)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w)
    st = spyre_compiler.stats()
    assert st["recipes"] == 1 and st["graph_breaks"] == [], st


def test_default_inductor_is_registered_lazily_and_compiles_for_spyre():
    # a fresh interpreter: Dynamo and Inductor are imported (and the device
    # interface and the spyre Inductor backend registered by the import
    # hook) only once something compiles
    from conftest import run_python
    code = """
import sys, torch
print("inductor loaded at import:", "torch._inductor.codegen.common" in sys.modules)
print("dynamo loaded at import:", "torch._dynamo" in sys.modules)
from torch._dynamo.device_interface import get_interface_for_device
i = get_interface_for_device("spyre")
s = i.Stream(device="spyre")
i.set_stream(s)
print("interface:", i.device_count(), i.is_available(), i.current_stream() == s,
      i.get_compute_capability().startswith("spyre-1."))
x = torch.tensor([-1.0, 2.0])
print("spyre:", torch.compile(lambda x: (x * 2).relu())(x.to("spyre")).cpu().tolist())
import torch_spyre.inductor
print("pass:", torch_spyre.inductor.stats()["recipes"])
print("cpu:", torch.compile(lambda x: x + 1)(torch.ones(2)).tolist())
print("graphs after cpu:", torch_spyre.inductor.stats()["graphs"])
"""
    rc, out = run_python(code, SPYRE_BACKEND="sim")
    assert rc == 0, out
    assert "inductor loaded at import: False" in out, out
    assert "dynamo loaded at import: False" in out, out
    assert "interface: 2 True True True" in out, out
    assert "spyre: [0.0, 4.0]" in out and "pass: 1" in out, out
    assert "cpu: [2.0, 2.0]" in out, out  # Inductor still compiles for the CPU
    assert "graphs after cpu: 1" in out, out  # the spyre pass left the CPU graph alone


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hf_generate_with_a_compiled_forward(kind):
    # generate() with the KV cache: every step is a new shape (Dynamo
    # recompiles once, then makes the length dynamic), each one recipe with
    # no graph break
    compiled_generate(kind, seed=8, new_tokens=3)
    st = spyre_compiler.stats()
    assert st["graph_breaks"] == [] and st["recipes"] == st["graphs"] >= 2, st
    assert torch.spyre.fallback_counts() == {}


def compiled_generate(kind, seed, new_tokens):
    """Greedy generate() of the HF test model @kind with a compiled forward
    and the KV cache, on spyre and on the CPU: the tokens must be equal."""
    from test_models_eager import hf_model, on_card
    ref, dev = on_card(hf_model(kind))
    dev.forward = torch.compile(dev.forward, backend="spyre")
    ids = torch.randint(0, 128, (2, 5), generator=torch.Generator().manual_seed(seed))
    mask = torch.ones_like(ids)
    kw = dict(max_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = ref.generate(ids, attention_mask=mask, **kw)
        got = dev.generate(ids.to(D), attention_mask=mask.to(D), **kw)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)


class Uploading(nn.Module):
    """Takes a CPU tensor and moves it to spyre itself."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x.to(D))


def test_a_cpu_input_is_uploaded_by_the_recipe_on_the_upload_stream():
    torch.manual_seed(5)
    ref = models()["mlp"].eval()
    compiled = torch.compile(Uploading(copy.deepcopy(ref).to(D)), backend="spyre")
    x = torch.randn(32, 6).t()  # not contiguous: staged contiguous on the host
    with torch.no_grad():
        got = compiled(x)
        torch.testing.assert_close(got.cpu(), ref(x), rtol=1e-4, atol=1e-4)
        st = spyre_compiler.stats()
        assert st["host_inputs"] == 1 and st["recipes"] == 1, st
        assert st["graph_breaks"] == [] and st["eager_nodes"] == 0, st
        torch.spyre.synchronize()
        before = torch.spyre.counters()["submits"]
        for _ in range(3):
            compiled(x)
        torch.spyre.synchronize()
        # one SUBMIT per stream touched: the upload stream and the compute stream
        assert torch.spyre.counters()["submits"] - before == 6
    # the caller may change its tensor as soon as the call returned: the
    # call staged it
    with torch.no_grad():
        y = torch.randn(6, 32)
        out = compiled(y)
        want = ref(y)
        y.fill_(1e6)
        torch.testing.assert_close(out.cpu(), want, rtol=1e-4, atol=1e-4)
    assert torch.spyre.fallback_counts() == {}


def test_a_cpu_input_used_on_the_cpu_is_a_graph_break():
    # the CPU op runs eagerly where its input is (a named graph break); the
    # copy to spyre is still the recipe's host input
    def f(x):
        return x.to(D) * 2, x.sum()

    x = torch.randn(4, 8)
    got, s = torch.compile(f, backend="spyre")(x)
    torch.testing.assert_close(got.cpu(), x * 2)
    torch.testing.assert_close(s, x.sum())
    assert s.device.type == "cpu"
    st = spyre_compiler.stats()
    assert st["graph_breaks"] == ["aten.sum.default: reads a CPU tensor (only copies of it to "
                                  "spyre are compiled)"], st
    assert st["eager_nodes"] == 1 and st["host_inputs"] == 1 and st["recipes"] == 1, st


def test_consecutive_calls_overlap_uploads_with_compute(tmp_path):
    # call k + 1's upload (DMA engine) runs while call k computes: the
    # device timeline shows them overlapping
    import json
    torch.manual_seed(6)
    ref = nn.Linear(1024, 1024)
    compiled = torch.compile(Uploading(copy.deepcopy(ref).to(D)), backend="spyre")
    xs = [torch.randn(512, 1024) for _ in range(4)]
    path = str(tmp_path / "t.json")
    with torch.no_grad():
        compiled(xs[0])
        torch.spyre.synchronize()
        with torch.spyre.trace(path):
            outs = [compiled(x) for x in xs]
            torch.spyre.synchronize()
    for x, o in zip(xs, outs):
        torch.testing.assert_close(o.cpu(), ref(x), rtol=1e-3, atol=1e-3)
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in ev if e["ph"] == "X"]
    compute = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans if names[s["tid"]] == "compute")
    upload = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans
                    if names[s["tid"]].startswith("dma"))
    assert len(compute) == len(upload) == 4, (compute, upload)
    for k in range(3):
        assert upload[k][1] <= compute[k][0] + 1e-3  # compute waits for its upload
        assert upload[k + 1][0] < compute[k][1], (k, upload, compute)  # overlap
    serial = sum(e - s for s, e in compute + upload)
    assert compute[-1][1] - upload[0][0] < 0.85 * serial, (compute, upload)


def test_dynamic_sizes_share_one_dynamo_graph():
    # dynamic=True: one Dynamo graph; each size met is traced to a static
    # graph of its own once, later calls of that size reuse its recipe
    ref = models()["mlp"].eval()
    compiled = torch.compile(copy.deepcopy(ref).to(D), backend="spyre", dynamic=True)
    with torch.no_grad():
        for rows in (3, 5, 7, 5, 3):
            x = torch.randn(rows, 32)
            torch.testing.assert_close(compiled(x.to(D)).cpu(), ref(x), rtol=1e-4, atol=1e-4)
    st = spyre_compiler.stats()
    assert st["dynamic_graphs"] == 1 and st["size_specializations"] == 3, st
    assert st["graphs"] == 3 and st["recipes"] == 3 and st["graph_breaks"] == [], st
    # a call of a size seen before is one SUBMIT, nothing traced or compiled
    x = torch.randn(7, 32).to(D)
    with torch.no_grad():
        torch.spyre.synchronize()
        before = torch.spyre.counters()["submits"]
        compiled(x)
        torch.spyre.synchronize()
    assert torch.spyre.counters()["submits"] - before == 1
    assert spyre_compiler.stats()["size_specializations"] == 3


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hf_generate_past_dynamos_recompile_limit(kind):
    # 12 new tokens with the KV cache: the sequence length changes every
    # step, Dynamo makes it dynamic after the second, and the one dynamic
    # graph serves every later length (more lengths than Dynamo's
    # recompile limit of 8), each length one recipe with no graph break
    from torch._dynamo.utils import counters
    counters.clear()
    compiled_generate(kind, seed=9, new_tokens=12)
    st = spyre_compiler.stats()
    assert st["dynamic_graphs"] == 1 and st["size_specializations"] >= 9, st
    assert st["graph_breaks"] == [] and st["recipes"] == st["graphs"], st
    assert counters["stats"]["unique_graphs"] <= 6, dict(counters["stats"])
    assert torch.spyre.fallback_counts() == {}


@pytest.mark.parametrize("kind", ["llama_gqa", "qwen3", "mistral"])
def test_hf_grouped_query_attention_compiles(kind):
    # grouped-query attention (enable_gqa, the causal mask in SDPA) is one
    # recipe; generate() of a left-padded batch with a compiled forward
    # (fully masked pad queries: 0, as PyTorch's SDPA) gives the CPU's tokens
    from test_models_eager import hf_model, left_padded, on_card
    ref, dev = on_card(hf_model(kind))
    ids, mask = left_padded(6)
    with torch.no_grad():
        got = torch.compile(dev, backend="spyre")(ids[1:].to(D), use_cache=False).logits
        torch.testing.assert_close(got.cpu(), ref(ids[1:], use_cache=False).logits,
                                   rtol=1e-4, atol=1e-4)
        st = spyre_compiler.stats()
        assert st["recipes"] == 1 and st["graph_breaks"] == [], st
        torch._dynamo.reset()
        dev.forward = torch.compile(dev.forward, backend="spyre")
        kw = dict(max_new_tokens=3, do_sample=False, pad_token_id=0)
        want = ref.generate(ids, attention_mask=mask, **kw)
        got = dev.generate(ids.to(D), attention_mask=mask.to(D), **kw)
    assert torch.equal(got.cpu(), want), (got.cpu(), want)
    assert spyre_compiler.stats()["graph_breaks"] == []
    assert torch.spyre.fallback_counts() == {}


def _hf_rms_norm(x, w, eps):
    # Hugging Face's LlamaRMSNorm, op for op
    dt = x.dtype
    h = x.to(torch.float32)
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return w * h.to(dt)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class NormRope(nn.Module):
    """Llama's RMSNorm, then rotary embeddings on the heads of the result."""

    def __init__(self, heads=3, d=66):
        super().__init__()
        self.heads, self.d = heads, d
        self.w = nn.Parameter(torch.randn(heads * d))

    def forward(self, x, cos, sin):
        h = _hf_rms_norm(x, self.w, 1e-6)
        b, t, _ = h.shape
        q = h.view(b, t, self.heads, self.d).transpose(1, 2)
        return q * cos.unsqueeze(1) + _rotate_half(q) * sin.unsqueeze(1)


class GatedMLP(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x))."""

    def __init__(self, d=72, hidden=200):
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def _compute_kernels(compiled, args, path):
    import json
    compiled(*args)
    with torch.spyre.trace(path):
        got = compiled(*args)
        torch.spyre.synchronize()
    with open(path) as f:
        names = [e["name"] for e in json.load(f)["traceEvents"]
                 if e["ph"] == "X" and e.get("cat") == "compute"]
    return got, names


@pytest.mark.parametrize("quant", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("rows", [1, 37, 130])
def test_gated_mlp_gate_and_up_are_one_kernel(dtype, quant, rows, tmp_path):
    # silu(x @ wg.T) * (x @ wu.T) is one dual matmul reading x once (the
    # op library's graph lowering), then the down projection: two kernels,
    # against the CPU; with torchao's int8 weights too. 130 rows take the
    # shared-operand schedule, 1 and 37 one core per tile.
    torch.manual_seed(12)
    ref = GatedMLP().to(dtype)
    if quant:
        from torchao.quantization import Int8WeightOnlyConfig, quantize_
        quantize_(ref, Int8WeightOnlyConfig())
    x = torch.randn(1, rows, 72, dtype=dtype)
    x[0, 0, 5] = float("inf") if rows > 1 else x[0, 0, 5]
    compiled = torch.compile(copy.deepcopy(ref).to(D), backend="spyre")
    with torch.no_grad(), spyre_compiler.kernel_profile():
        got, names = _compute_kernels(compiled, (x.to(D),), str(tmp_path / "t.json"))
        want = ref(x)
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}[dtype]
    # the inf row: NaN where the CPU has NaN, else finite or inf alike
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol, equal_nan=True)
    assert len(names) == 2, names
    assert names[0].startswith(("linear", "matmul")) and f"x{200}x" in names[0], names
    assert spyre_compiler.stats()["graph_breaks"] == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_rms_norm_and_rotary_embedding_lower_to_two_kernels(dtype, tmp_path):
    # RMSNorm as Hugging Face writes it is one row kernel, and
    # x * cos + rotate_half(x) * sin one kernel (no cat, no neg, no separate
    # products): against the CPU, rows of an odd count
    import json
    torch.manual_seed(11)
    ref = NormRope().to(dtype)
    x = torch.randn(2, 37, 3 * 66, dtype=dtype)
    ang = torch.randn(2, 37, 66)
    cos, sin = ang.cos().to(dtype), ang.sin().to(dtype)
    compiled = torch.compile(copy.deepcopy(ref).to(D), backend="spyre")
    path = str(tmp_path / "t.json")
    with torch.no_grad(), spyre_compiler.kernel_profile():
        args = (x.to(D), cos.to(D), sin.to(D))
        compiled(*args)
        with torch.spyre.trace(path):
            got = compiled(*args)
            torch.spyre.synchronize()
        want = ref(x, cos, sin)
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}[dtype]
    torch.testing.assert_close(got.cpu(), want, rtol=tol, atol=tol)
    with open(path) as f:
        names = [e["name"].split()[0] for e in json.load(f)["traceEvents"]
                 if e["ph"] == "X" and e.get("cat") == "compute"]
    assert len(names) == 2 and "cat" not in names, names
    assert spyre_compiler.stats()["graph_breaks"] == []
