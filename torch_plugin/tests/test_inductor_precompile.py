# SPDX-License-Identifier: MIT
"""A compiled GPT-2 saved with torch_spyre.inductor.precompile (PyTorch's
aot_compile with the spyre identity) and loaded in a second process: no
Dynamo tracing, no Inductor, no card program built, the same logits bit
for bit and the CPU's within tolerance; a file made for another card
interface, op library or lowering is refused."""
import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import child_env
from test_inductor_cache import _other_card, _other_lowering, _other_ops
from torch_spyre.inductor import graph_pass, precompile

D = "spyre"

# One process: save (argv[1] == "save") or load the compiled HF GPT-2 test model.
GPT2 = """
import json, sys, torch
from torch._dynamo.utils import counters
import torch_spyre.inductor
from torch_spyre.inductor import precompile
from test_models_eager import hf_model, on_card
torch.spyre.set_fallback_mode("error")
ref, dev = on_card(hf_model("gpt2"))
ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4))

def fwd(model, ids):
    return model(ids, use_cache=False).logits

built = torch.spyre._C._ops_counters(0)["programs_built"]
with torch.no_grad():
    if sys.argv[1] == "save":
        fn = precompile.aot_compile(fwd, (dev, ids.to("spyre")))
        precompile.save(fn, sys.argv[2])
    else:
        fn = precompile.load(sys.argv[2])
    logits = fn(dev, ids.to("spyre")).cpu()
    want = fwd(ref, ids)
torch.testing.assert_close(logits.float(), want, rtol=2e-3, atol=2e-3)
torch.save(logits, sys.argv[2] + "." + sys.argv[1])
st = torch_spyre.inductor.stats()
st["programs_built"] = torch.spyre._C._ops_counters(0)["programs_built"] - built
st["frames"] = dict(counters["frames"])
st["aot_autograd"] = dict(counters["aot_autograd"])
st["fallbacks"] = torch.spyre.fallback_counts()
print("STATS", json.dumps(st))
"""


def gpt2_process(mode, path, **env):
    p = subprocess.run([sys.executable, "-c", GPT2, mode, str(path)], env=child_env(**env),
                       cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    line = [s for s in p.stdout.splitlines() if s.startswith("STATS ")]
    assert line, p.stdout + p.stderr
    return json.loads(line[-1][6:])


def test_a_saved_gpt2_loads_without_tracing_or_building(tmp_path):
    path = tmp_path / "gpt2.spyreaot"
    a = gpt2_process("save", path)
    assert (a["graphs"], a["recipes"], a["fallback_nodes"]) == (1, 1, 0), a
    assert a["fallbacks"] == {}, a
    # neither PyTorch's caches nor the spyre compile cache: the file alone
    b = gpt2_process("load", path, SPYRE_COMPILE_CACHE="off",
                     TORCHINDUCTOR_CACHE_DIR=tmp_path / "empty-inductor-cache")
    assert b["frames"].get("total", 0) == 0, b  # Dynamo traced nothing
    assert b["graphs"] == 0 and b["programs_built"] == 0 and b["fallbacks"] == {}, b
    assert "autograd_cache_miss" not in b["aot_autograd"], b
    assert torch.equal(torch.load(f"{path}.save"), torch.load(f"{path}.load"))


def _f(x):
    return torch.softmax(x @ x.T, -1).sum(0)


@pytest.mark.parametrize("change", [_other_card, _other_ops, _other_lowering],
                         ids=["card-interface", "ops-version", "lowering"])
def test_a_file_for_another_identity_is_refused(change, tmp_path, monkeypatch):
    x = torch.randn(5, 7)
    torch._dynamo.reset()
    monkeypatch.setattr(graph_pass, "_identity", None)
    path = tmp_path / "f.spyreaot"
    precompile.save(precompile.aot_compile(_f, (x.to(D),)), path)
    torch.testing.assert_close(precompile.load(path)(x.to(D)).cpu(), _f(x), rtol=1e-5,
                               atol=1e-5)
    ident = graph_pass.identity()
    change(monkeypatch)
    monkeypatch.setattr(graph_pass, "_identity", None)  # (computed once per process)
    with pytest.raises(precompile.StaleArtifact, match="compile it again"):
        precompile.load(path)
    monkeypatch.setattr(graph_pass, "_identity", ident)
    assert precompile.load(path) is not None
    (tmp_path / "junk").write_bytes(b"not a compiled function")
    with pytest.raises(ValueError, match="not a compiled function saved by"):
        precompile.load(tmp_path / "junk")
