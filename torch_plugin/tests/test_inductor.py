# SPDX-License-Identifier: MIT
"""torch.compile(model) with PyTorch's default backend (Inductor) on spyre:
the graph's card part is lowered to recipes by the spyre device pass
(Documentation/inductor.rst), the rest calls spyre eager kernels; results
against the CPU, SUBMITs per call, what the pass did (its stats)."""
import copy

import pytest
import torch
from torch import nn

import torch_spyre.inductor as spyre_inductor

D = "spyre"


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    spyre_inductor.reset_stats()
    yield
    torch._dynamo.reset()


def submits_per_call(fn, *args, **kwargs):
    torch.spyre.synchronize()
    before = torch.spyre.counters()["submits"]
    fn(*args, **kwargs)
    torch.spyre.synchronize()
    return torch.spyre.counters()["submits"] - before


def test_mlp_is_one_recipe(card_only):
    # linear, gelu, layer norm and softmax: ops Inductor would decompose are
    # kept whole on spyre and lowered to the card's fused programs
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 8),
                      nn.Softmax(-1)).eval()
    x = torch.randn(4, 16)
    dev = torch.compile(copy.deepcopy(m).to(D))
    with torch.no_grad():
        want = m(x)
        got = dev(x.to(D))
        assert got.device.type == "spyre"
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
        assert submits_per_call(dev, x.to(D)) == 1
    st = spyre_inductor.stats()
    assert (st["graphs"], st["recipes"], st["fallback_nodes"]) == (1, 1, 0), st


def test_host_input_is_uploaded_by_the_recipe(card_only):
    # a CPU tensor the graph moves to spyre is a host input of the recipe
    w = torch.randn(8, 8)

    def f(x, wd):
        return torch.relu(x.to(D) @ wd) * 2

    x = torch.randn(3, 8)
    got = torch.compile(f)(x, w.to(D))
    assert got.device.type == "spyre"
    torch.testing.assert_close(got.cpu(), torch.relu(x @ w) * 2, rtol=1e-5, atol=1e-5)
    st = spyre_inductor.stats()
    assert (st["recipes"], st["fallback_nodes"]) == (1, 0), st


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hf_model_is_one_recipe(kind, card_only):
    # the Hugging Face test models (GPT-2 blocks, Llama blocks with RoPE and
    # grouped attention): the whole forward one recipe, one SUBMIT per call
    from test_models_eager import hf_model, on_card
    ref, dev = on_card(hf_model(kind))
    compiled = torch.compile(dev)
    ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = ref(ids, use_cache=False).logits
        got = compiled(ids.to(D), use_cache=False).logits
        torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
        assert submits_per_call(compiled, ids.to(D), use_cache=False) == 1
    st = spyre_inductor.stats()
    assert (st["graphs"], st["recipes"], st["fallback_nodes"]) == (1, 1, 0), st


def test_refused_node_runs_as_a_spyre_eager_kernel():
    # a strided slice the lowering refuses: the parts around it are recipes,
    # the slice a fallback kernel calling its spyre eager kernel
    def f(x):
        return (torch.softmax(x, -1)[:, ::2] * 2).sin()

    x = torch.randn(3, 10)
    torch.spyre.reset_fallback_counts()
    got = torch.compile(f)(x.to(D))
    torch.testing.assert_close(got.cpu(), f(x), rtol=1e-4, atol=1e-5)
    st = spyre_inductor.stats()
    assert st["recipes"] == 2 and st["fallback_nodes"] == 1, st
    assert any("slice with a step" in r for r in st["graph_breaks"]), st
    assert torch.spyre.fallback_counts() == {}



def test_outputs_keep_eager_strides(card_only):
    # a transposed and a broadcast output: the recipe writes dense tensors,
    # the generated code lays them out as eager returns them (no Inductor
    # copy kernel, which spyre does not have)
    def f(x):
        return (x * 2).t(), x[1:].sum(-1, keepdim=True).expand(3, 5)

    x = torch.randn(4, 5)
    got = torch.compile(f)(x.to(D))
    for g, w in zip(got, f(x)):
        assert g.shape == w.shape and g.stride() == w.stride()
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-5)
    assert spyre_inductor.stats()["recipes"] == 1


def test_training_forward_and_backward_are_recipes(card_only):
    # AOTAutograd's forward and backward graphs both go through the pass
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    dev = copy.deepcopy(m).to(D)
    x = torch.randn(8, 16)
    out = torch.compile(dev)(x.to(D))
    out.square().sum().backward()
    m(x).square().sum().backward()
    for p, q in zip(dev.parameters(), m.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-5)
    st = spyre_inductor.stats()
    assert (st["graphs"], st["recipes"], st["fallback_nodes"]) == (2, 2, 0), st


def test_input_mutations_are_written_back(card_only):
    # AOTAutograd's epilogue copies the new values into the mutated inputs:
    # copy_ is not lowered, it runs as the spyre eager copy after the recipe
    def f(x, buf):
        buf.add_(x)
        x.mul_(2)
        return buf.sum()

    x, b = torch.randn(4, 5), torch.ones(4, 5)
    xd, bd = x.to(D), b.to(D)
    got = torch.compile(f)(xd, bd)
    want = f(x, b)
    torch.testing.assert_close(got.cpu(), want)
    assert torch.equal(xd.cpu(), x) and torch.equal(bd.cpu(), b)
    st = spyre_inductor.stats()
    assert st["recipes"] == 1 and st["fallback_nodes"] == 2, st
    assert all("copy_" in r for r in st["graph_breaks"]), st


def test_symbolic_sizes_compile_per_size_without_recompiling(card_only):
    # dynamic=True: one Dynamo and Inductor graph; each size met gets its
    # own static recipes at its first call (backend="spyre"'s PerSize)
    import torch_spyre.compiler as spyre_compiler

    def f(x, y):
        return (torch.softmax(x[:, :3] * y.shape[0], -1).sum(0) + 1, x.new_zeros(x.shape[0]),
                x.t())

    c = torch.compile(f, dynamic=True)
    before = spyre_compiler.stats()["size_specializations"]
    for n in (4, 6, 9, 6):
        x, y = torch.randn(n, 8), torch.randn(n - 1)
        for g, w in zip(c(x.to(D), y.to(D)), f(x, y)):
            assert g.shape == w.shape and g.stride() == w.stride()
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6)
    st = spyre_inductor.stats()
    assert (st["graphs"], st["per_size_graphs"], st["fallback_nodes"]) == (1, 1, 0), st
    assert spyre_compiler.stats()["size_specializations"] - before == 3


def test_hf_generate_with_a_compiled_forward(card_only):
    # generate() with the KV cache: a new length at every step; after the
    # first recompile the length is symbolic and compiled per size, so the
    # 6 steps take 3 graphs, not 6 recompiles (Dynamo's limit is 8)
    from test_models_eager import hf_model, on_card
    ref, dev = on_card(hf_model("gpt2"))
    dev.forward = torch.compile(dev.forward)
    ids = torch.randint(3, 128, (1, 5), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = ref.generate(ids, max_new_tokens=6, do_sample=False)
        got = dev.generate(ids.to(D), max_new_tokens=6, do_sample=False)
    assert torch.equal(got.cpu(), want)
    st = spyre_inductor.stats()
    assert st["graphs"] <= 3 and st["per_size_graphs"] == 1 and st["fallback_nodes"] == 0, st


def test_second_card(two_devices, card_only):
    # the recipe is built and launched on the inputs' card
    _, d1 = two_devices

    def f(x, w):
        return torch.layer_norm(x @ w, (6,)).relu()

    x, w = torch.randn(3, 4), torch.randn(4, 6)
    got = torch.compile(f)(x.to(d1), w.to(d1))
    assert got.device == d1
    torch.testing.assert_close(got.cpu(), f(x, w), rtol=1e-5, atol=1e-5)
    assert spyre_inductor.stats()["recipes"] == 1


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_model_growing_from_32_to_512_tokens_compiles_per_size(kind, card_only):
    # torch.compile's default (dynamic=None): the second length makes the
    # sequence dim symbolic; that graph is compiled per size met (recipes,
    # no eager fallbacks: the attention with q as a transposed view is
    # lowered into them) and gives the CPU's logits at 32, 512 and 100
    import transformers
    import torch_spyre.compiler as spyre_compiler
    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=128, n_positions=512, n_embd=32, n_layer=1,
                                      n_head=2)
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64,
                                       num_hidden_layers=1, num_attention_heads=2,
                                       num_key_value_heads=2, max_position_embeddings=512)
        model = transformers.LlamaForCausalLM(cfg)
    cfg._attn_implementation = "sdpa"
    ref = model.eval()
    dev = torch.compile(copy.deepcopy(ref).to(D))
    before = spyre_compiler.stats()["size_specializations"]
    with torch.no_grad():
        for n in (32, 512, 100):
            ids = torch.randint(0, 128, (1, n), generator=torch.Generator().manual_seed(n))
            want = ref(ids, past_key_values=transformers.DynamicCache(), use_cache=True).logits
            got = dev(ids.to(D), past_key_values=transformers.DynamicCache(),
                      use_cache=True).logits
            torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)
    st = spyre_inductor.stats()
    assert st["per_size_graphs"] >= 1 and st["fallback_nodes"] == 0, st
    assert spyre_compiler.stats()["size_specializations"] - before >= 2


def test_symbolic_graph_writing_its_input_compiles_per_size(card_only):
    # a cache written in place (slice assignment: functionalized into a
    # copy_ into the input): the graph is compiled per size, only the
    # write-back copy stays an eager kernel
    def f(cache, x):
        cache[:, :x.shape[1]] = x * 2
        return torch.softmax(cache[:, :x.shape[1] + 1], -1).sum(-1)

    c = torch.compile(f, dynamic=True)
    for n in (3, 5, 7):
        x = torch.randn(2, n, 8)
        cache = torch.randn(2, 9, 8)
        dcache = cache.to(D)
        got = c(dcache, x.to(D))
        want = f(cache, x)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(dcache.cpu(), cache)
    st = spyre_inductor.stats()
    assert st["per_size_graphs"] == 1, st
    assert st["graph_breaks"] and all("copy_" in r for r in st["graph_breaks"]), st
