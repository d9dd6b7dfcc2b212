# SPDX-License-Identifier: MIT
"""PyTorch's caches serving torch.compile(model) on spyre: a second process
gets AOTAutogradCache and FX graph cache hits, runs no spyre pass and builds
no card program (the cached module carries its recipes); a graph with
symbolic sizes is rebuilt from the source the cached module carries; an
entry made for another card interface, op library or lowering is never
used."""
import json
import os
import subprocess
import sys

import pytest
import torch
from torch._dynamo.utils import counters

import torch_spyre.inductor as spyre_inductor
from torch_spyre import _C
from torch_spyre.compiler import disk_cache
from torch_spyre.inductor import graph_pass
from conftest import child_env

D = "spyre"
HERE = os.path.dirname(os.path.abspath(__file__))

# One process: torch.compile (default backend) of the HF GPT-2 test model.
GPT2 = """
import json, sys, time, torch
from torch._dynamo.utils import counters
import torch_spyre.inductor
from test_models_eager import hf_model, on_card
torch.spyre.set_fallback_mode("error")
ref, dev = on_card(hf_model("gpt2"))
ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4)).to("spyre")
built = torch.spyre._C._ops_counters(0)["programs_built"]
with torch.no_grad():
    t = time.perf_counter()
    logits = torch.compile(dev)(ids, use_cache=False).logits.cpu()
    first = time.perf_counter() - t
torch.save(logits, sys.argv[1])
st = torch_spyre.inductor.stats()
st["programs_built"] = torch.spyre._C._ops_counters(0)["programs_built"] - built
st["inductor"] = dict(counters["inductor"])
st["aot_autograd"] = dict(counters["aot_autograd"])
st["fallbacks"] = torch.spyre.fallback_counts()
st["first_call_s"] = first
print("STATS", json.dumps(st))
"""


def gpt2_process(out, **env):
    p = subprocess.run([sys.executable, "-c", GPT2, str(out)], env=child_env(**env), cwd=HERE,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("STATS ")]
    assert line, p.stdout + p.stderr
    return json.loads(line[-1][6:])


def test_second_process_is_served_by_pytorchs_caches(tmp_path):
    a = gpt2_process(tmp_path / "a.pt")
    assert a["inductor"].get("fxgraph_cache_miss") == 1, a
    assert a["aot_autograd"].get("autograd_cache_miss") == 1, a
    assert (a["graphs"], a["recipes"], a["fallback_nodes"]) == (1, 1, 0), a
    assert a["programs_built"] > 0 and a["fallbacks"] == {}, a
    # the second process without the spyre compile cache: what it runs
    # comes from Inductor's cached module alone
    b = gpt2_process(tmp_path / "b.pt", SPYRE_COMPILE_CACHE="off")
    assert b["aot_autograd"].get("autograd_cache_hit") == 1, b
    assert b["inductor"].get("fxgraph_cache_hit") == 1, b
    assert "fxgraph_cache_miss" not in b["inductor"], b
    assert b["graphs"] == 0 and b["programs_built"] == 0 and b["fallbacks"] == {}, b
    # the same recipe: the same logits, bit for bit
    assert torch.equal(torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt"))


def _compile_and_run(x):
    def f(x):
        return torch.softmax(x @ x.T, -1).sum(0)

    torch._dynamo.reset()
    counters.clear()
    spyre_inductor.reset_stats()
    got = torch.compile(f)(x.to(D))
    torch.testing.assert_close(got.cpu(), f(x), rtol=1e-5, atol=1e-5)
    return (counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"],
            counters["aot_autograd"]["autograd_cache_hit"], spyre_inductor.stats()["graphs"])


def _other_card(monkeypatch):
    cards = graph_pass.cards()
    monkeypatch.setattr(graph_pass, "cards", lambda: [("0.1", c) for _, c in cards])


def _other_ops(monkeypatch):
    monkeypatch.setattr(_C, "_OPS_VERSION", _C._OPS_VERSION + 1, raising=True)


def _other_lowering(monkeypatch):
    ident = disk_cache._build_identity()
    monkeypatch.setattr(disk_cache, "_identity", ident + ["a changed lower.py"])


@pytest.mark.parametrize("change", [_other_card, _other_ops, _other_lowering],
                         ids=["card-interface", "ops-version", "lowering"])
def test_a_stale_entry_is_never_used(change, monkeypatch):
    x = torch.randn(5, 7)
    monkeypatch.setattr(graph_pass, "_identity", None)
    assert _compile_and_run(x) == (0, 1, 0, 1)  # compiled, stored
    assert _compile_and_run(x) == (1, 0, 1, 0)  # served by the caches
    change(monkeypatch)
    monkeypatch.setattr(graph_pass, "_identity", None)  # (computed once per process)
    assert _compile_and_run(x) == (0, 1, 0, 1)  # another key: compiled again
    assert _compile_and_run(x) == (1, 0, 1, 0)


# One process: a graph with symbolic sizes (per_size) at two sizes.
DYNAMIC = """
import json, torch
from torch._dynamo.utils import counters
import torch_spyre.compiler as spyre_compiler
import torch_spyre.inductor
torch.spyre.set_fallback_mode("error")
def f(x):
    return torch.softmax(x * 2, -1).sum(0), x.t()
c = torch.compile(f, dynamic=True)
for n in (4, 6):
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(n))
    for g, w in zip(c(x.to("spyre")), f(x)):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6)
st = torch_spyre.inductor.stats()
st["sizes"] = spyre_compiler.stats()["size_specializations"]
st["inductor"] = dict(counters["inductor"])
print("STATS", json.dumps(st))
"""


def test_a_symbolic_graph_is_rebuilt_from_the_cached_module():
    from conftest import run_python
    rc, out = run_python(DYNAMIC)
    assert rc == 0, out
    a = json.loads([s for s in out.splitlines() if s.startswith("STATS ")][-1][6:])
    assert a["per_size_graphs"] == 1 and a["sizes"] == 2, a
    rc, out = run_python(DYNAMIC)
    assert rc == 0, out
    b = json.loads([s for s in out.splitlines() if s.startswith("STATS ")][-1][6:])
    # the graph's source came from the cached module; each size is
    # compiled (or loaded from the spyre compile cache) at its first call
    assert b["inductor"].get("fxgraph_cache_hit") == 1 and b["graphs"] == 0, b
    assert b["sizes"] == 2, b
