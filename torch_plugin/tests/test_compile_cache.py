# SPDX-License-Identifier: MIT
"""The on-disk compile cache of backend="spyre": a second process loads the
recipes instead of compiling them (counted by the backend's stats and the op
library's programs_built, not by timing), a new shape or dtype misses, two
processes writing at once leave a valid cache, a corrupt entry is compiled
again with a warning."""
import glob
import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

import torch_spyre.compiler as spyre_compiler
from torch_spyre import _C
from torch_spyre.compiler import disk_cache
from conftest import child_env

D = "spyre"
HERE = os.path.dirname(os.path.abspath(__file__))

# One process: compile the HF GPT-2 test model, run it once, report.
GPT2 = """
import json, sys, torch
from test_models_eager import hf_model, on_card
torch.spyre.set_fallback_mode("error")
ref, dev = on_card(hf_model("gpt2"))
ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4)).to("spyre")
built = torch.spyre._C._ops_counters(0)["programs_built"]
with torch.no_grad():
    logits = torch.compile(dev, backend="spyre")(ids, use_cache=False).logits.cpu()
torch.save(logits, sys.argv[1])
st = torch.spyre.compile_stats()
st["programs_built"] = torch.spyre._C._ops_counters(0)["programs_built"] - built
print("STATS", json.dumps(st))
"""


def gpt2_process(cache, out):
    return subprocess.Popen([sys.executable, "-c", GPT2, str(out)],
                            env=child_env(SPYRE_COMPILE_CACHE=cache), cwd=HERE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(p):
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0, out
    line = [s for s in out.splitlines() if s.startswith("STATS ")]
    assert line, out
    return json.loads(line[-1][6:])


def entries(cache):
    return sorted(glob.glob(os.path.join(str(cache), "*", "*.spyrecc")))


def key_of(path):
    return os.path.basename(path)[:-len(".spyrecc")]


def part_entries(cache):
    """The entries holding a recipe (not the graph entries pointing at them)."""
    return [p for p in entries(cache) if "inputs" in disk_cache.load(key_of(p))[0]]


def test_second_process_loads_the_recipe_and_two_writers_leave_a_valid_cache(tmp_path,
                                                                           monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(cache))
    # two processes compile the same model into the empty cache at once
    a, b = (gpt2_process(cache, tmp_path / f"{n}.pt") for n in "ab")
    sa, sb = finish(a), finish(b)
    for st in (sa, sb):
        assert st["recipes"] == 1 and st["graph_breaks"] == [], st
        # each either compiled (and wrote) or loaded what the other wrote
        assert st["disk_cache_hits"] + st["disk_cache_misses"] == 1, st
        assert st["disk_cache_errors"] == 0, st
    assert sa["disk_cache_writes"] + sb["disk_cache_writes"] >= 1
    # one recipe entry and the graph entry naming it
    assert len(entries(cache)) == 2, entries(cache)
    assert not glob.glob(os.path.join(str(cache), "*", ".tmp-*")), "a temporary file was left"
    (part,) = part_entries(cache)
    header, blob = disk_cache.load(key_of(part))
    assert header["outputs"][-1] == ["float32", [1, 6, 128], False] and blob[:4] == b"SPYC"

    # a third process: the recipe comes from the disk, no program is generated
    sc = finish(gpt2_process(cache, tmp_path / "c.pt"))
    # (the whole graph: no partitioning either)
    assert sc["disk_cache_hits"] == 1 and sc["disk_cache_misses"] == 0, sc
    assert sc["disk_cache_graph_hits"] == 1, sc
    assert sc["disk_cache_writes"] == 0 and sc["programs_built"] == 0, sc
    compiled = [s for s in (sa, sb) if s["disk_cache_misses"]]
    assert compiled and all(s["programs_built"] > 0 for s in compiled), (sa, sb)
    want = torch.load(tmp_path / "a.pt")
    for n in "bc":
        assert torch.equal(torch.load(tmp_path / f"{n}.pt"), want)


def test_gpt2_second_process_skips_compilation(tmp_path, monkeypatch):
    # the check the VM runs (one extra interpreter): this process compiles
    # and writes, a second one loads the whole graph and computes the same
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(cache))
    from test_models_eager import hf_model, on_card
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    torch.spyre.set_fallback_mode("error")
    _, dev = on_card(hf_model("gpt2"))
    ids = torch.randint(0, 128, (1, 6), generator=torch.Generator().manual_seed(4)).to(D)
    with torch.no_grad():
        want = torch.compile(dev, backend="spyre")(ids, use_cache=False).logits.cpu()
    st = torch.spyre.compile_stats()
    assert st["disk_cache_misses"] == 1 and st["disk_cache_writes"] == 2, st
    torch._dynamo.reset()
    st = finish(gpt2_process(cache, tmp_path / "b.pt"))
    assert st["disk_cache_graph_hits"] == 1 and st["disk_cache_misses"] == 0, st
    assert st["programs_built"] == 0 and st["recipes"] == 1, st
    assert torch.equal(torch.load(tmp_path / "b.pt"), want)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(tmp_path / "cache"))
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    torch.spyre.set_fallback_mode("error")
    yield tmp_path / "cache"
    torch._dynamo.reset()
    spyre_compiler.reset_stats()


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8))


def compiled_run(model, x):
    """A fresh compile (Dynamo and the in-process recipe cache emptied, as
    in a new process) of @model on @x; its result and the stats."""
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    built = _C._ops_counters(0)["programs_built"]
    with torch.no_grad():
        y = torch.compile(model, backend="spyre")(x).cpu()
    st = spyre_compiler.stats()
    st["programs_built"] = _C._ops_counters(0)["programs_built"] - built
    return y, st


def test_a_new_shape_or_dtype_misses(cache):
    m = mlp().to(D)
    x = torch.randn(4, 16)
    y1, st = compiled_run(m, x.to(D))
    assert st["disk_cache_misses"] == 1 and st["disk_cache_writes"] == 2, st
    y2, st = compiled_run(m, x.to(D))
    assert st["disk_cache_hits"] == 1 and st["disk_cache_misses"] == 0, st
    assert st["disk_cache_graph_hits"] == 1, st
    assert st["programs_built"] == 0, st
    assert torch.equal(y1, y2)
    torch.testing.assert_close(y2, mlp()(x), rtol=1e-4, atol=1e-4)
    _, st = compiled_run(m, torch.randn(5, 16).to(D))
    assert st["disk_cache_hits"] == 0 and st["disk_cache_misses"] == 1, st
    assert st["programs_built"] > 0, st
    y3, st = compiled_run(mlp().half().to(D), x.half().to(D))
    assert st["disk_cache_hits"] == 0 and st["disk_cache_misses"] == 1, st
    torch.testing.assert_close(y3.float(), mlp()(x), rtol=2e-2, atol=2e-2)
    assert len(part_entries(cache)) == 3 and len(entries(cache)) == 6


class _Uploading(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x.to(D))


def test_a_graph_with_a_host_input_is_loaded_with_its_upload(cache):
    # the CPU input is part of the key (a spyre input of the same shape is
    # another entry) and the loaded recipe still uploads it itself
    m = _Uploading(mlp().to(D))
    x = torch.randn(4, 16)
    y1, st = compiled_run(m, x)
    assert st["disk_cache_misses"] == 1 and st["host_inputs"] == 1, st
    y2, st = compiled_run(m, x)
    assert st["disk_cache_graph_hits"] == 1 and st["programs_built"] == 0, st
    assert torch.equal(y1, y2)
    torch.testing.assert_close(y2, mlp()(x), rtol=1e-4, atol=1e-4)
    _, st = compiled_run(m.inner, x.to(D))
    assert st["disk_cache_misses"] == 1 and st["host_inputs"] == 0, st


def test_each_size_of_a_dynamic_graph_is_cached(cache):
    m = mlp().to(D)

    def run():
        torch._dynamo.reset()
        spyre_compiler.reset_stats()
        built = _C._ops_counters(0)["programs_built"]
        f = torch.compile(m, backend="spyre", dynamic=True)
        with torch.no_grad():
            ys = [f(torch.full((r, 16), 0.5).to(D)).cpu() for r in (3, 6)]
        st = spyre_compiler.stats()
        st["programs_built"] = _C._ops_counters(0)["programs_built"] - built
        return ys, st

    y1, st = run()
    assert st["size_specializations"] == 2 and st["disk_cache_misses"] == 2, str(st)
    y2, st = run()
    assert st["disk_cache_graph_hits"] == 2 and st["programs_built"] == 0, st
    for a, b in zip(y1, y2):
        assert torch.equal(a, b)


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_a_corrupt_entry_is_compiled_again_with_a_warning(cache, damage):
    m = mlp().to(D)
    x = torch.randn(4, 16).to(D)
    y1, _ = compiled_run(m, x)
    (path,) = part_entries(cache)
    data = open(path, "rb").read()
    if damage == "flip":
        data = data[:-5] + bytes([data[-5] ^ 0x40]) + data[-4:]
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "empty":
        data = b""
    else:
        data = b"SPYRECC1" + os.urandom(200)
    open(path, "wb").write(data)
    with pytest.warns(UserWarning, match="spyre compile cache: .*compiling again"):
        y2, st = compiled_run(m, x)
    # reported once (the graph entry's path leaves the part to the part's)
    assert st["disk_cache_errors"] == 1 and st["disk_cache_misses"] == 1, st
    assert st["disk_cache_writes"] == 2 and st["programs_built"] > 0, st
    assert torch.equal(y1, y2)
    y3, st = compiled_run(m, x)  # rewritten: a hit again
    assert st["disk_cache_graph_hits"] == 1 and st["programs_built"] == 0, st
    assert torch.equal(y1, y3)


def test_a_corrupt_graph_entry_falls_back_to_the_part_entry(cache):
    m = mlp().to(D)
    x = torch.randn(4, 16).to(D)
    y1, _ = compiled_run(m, x)
    (part,) = part_entries(cache)
    (graph,) = [p for p in entries(cache) if p != part]
    data = open(graph, "rb").read()
    open(graph, "wb").write(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.warns(UserWarning, match="checksum mismatch"):
        y2, st = compiled_run(m, x)
    # partitioned again, the recipe loaded from its entry, the graph entry rewritten
    assert st["disk_cache_errors"] == 1 and st["disk_cache_hits"] == 1, st
    assert st["disk_cache_graph_hits"] == 0 and st["disk_cache_writes"] == 1, st
    assert st["programs_built"] == 0 and torch.equal(y1, y2)
    _, st = compiled_run(m, x)
    assert st["disk_cache_graph_hits"] == 1, st


def test_a_blob_the_library_refuses_is_compiled_again(cache):
    # a well-formed entry whose blob names another op library version: the
    # key would differ in real life; here the library's own check answers
    m = mlp().to(D)
    x = torch.randn(4, 16).to(D)
    y1, _ = compiled_run(m, x)
    (path,) = part_entries(cache)
    k = key_of(path)
    header, blob = disk_cache.load(k)
    stale = bytearray(blob)
    stale[8] ^= 0x7f  # SPYRE_OPS_VERSION field (checksum now fails too)
    disk_cache.store(k, header, bytes(stale))
    with pytest.warns(UserWarning, match="does not load .*spyre_compiled_deserialize"):
        y2, st = compiled_run(m, x)
    assert st["disk_cache_errors"] == 1 and st["disk_cache_writes"] == 2, st
    assert torch.equal(y1, y2)


def test_a_refusal_is_cached_too(cache):
    def f(x):
        return (torch.softmax(x, -1)[:, ::2] * 2).sin()

    x = torch.randn(3, 10)
    for attempt in range(2):
        got, st = compiled_run(f, x.to(D))
        torch.testing.assert_close(got, f(x), rtol=1e-4, atol=1e-5)
        assert any("slice with a step" in r for r in st["graph_breaks"]), st
        assert st["recipes"] == 2, st
    # the second time every part, the refused one included, came from the disk
    assert st["disk_cache_misses"] == 0 and st["disk_cache_hits"] == 3, st
    assert st["disk_cache_graph_hits"] == 0, st  # eager nodes: no graph entry


def test_a_graph_of_several_outputs_maps_them_back(cache):
    # the graph entry picks the recipe's arguments among the graph's inputs
    # and puts its outputs back in the graph's order
    def f(x, ids):
        pos = torch.arange(ids.shape[1], device=ids.device) + 2
        keep = (ids != 0).cumsum(-1) * 3 - pos
        return keep, x[pos[None, :] - 2] * 2, (ids > 5).float()

    x = torch.randn(8, 4)
    ids = torch.tensor([[0, 7, 3, 9], [4, 0, 0, 6]])
    want = f(x, ids)
    for hit in (False, True):
        torch._dynamo.reset()
        spyre_compiler.reset_stats()
        with torch.no_grad():
            got = torch.compile(f, backend="spyre")(x.to(D), ids.to(D))
        st = spyre_compiler.stats()
        assert st["disk_cache_graph_hits"] == int(hit) and st["recipes"] == 1, st
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g.cpu(), w)


def test_an_unwritable_cache_only_warns(cache, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", str(blocker))
    m = mlp().to(D)
    x = torch.randn(4, 16)
    with pytest.warns(UserWarning, match="cannot write"):
        y, st = compiled_run(m, x.to(D))
    assert st["disk_cache_writes"] == 0 and st["disk_cache_misses"] == 1, st
    torch.testing.assert_close(y, mlp()(x), rtol=1e-4, atol=1e-4)


def test_the_cache_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("SPYRE_COMPILE_CACHE", "off")
    m = mlp().to(D)
    x = torch.randn(4, 16).to(D)
    for _ in range(2):
        _, st = compiled_run(m, x)
        assert st["disk_cache_misses"] == 0 and st["disk_cache_hits"] == 0, st
        assert st["programs_built"] > 0
    assert not os.path.exists(cache)


def test_default_location_and_key_ingredients(monkeypatch, tmp_path):
    monkeypatch.delenv("SPYRE_COMPILE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.directory() == str(tmp_path / "torch_spyre" / "compile")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert disk_cache.directory() == os.path.expanduser("~/.cache/torch_spyre/compile")
    meta = torch.empty(2, 3, device="meta")
    k = disk_cache.key(0, "code", [meta])
    assert k == disk_cache.key(0, "code", [meta])
    assert k != disk_cache.key(0, "code2", [meta])
    assert k != disk_cache.key(0, "code", [torch.empty(3, 2, device="meta")])
    assert k != disk_cache.key(0, "code", [meta.half()])
    ident = disk_cache._build_identity()
    assert _C._OPS_VERSION in ident
    monkeypatch.setattr(disk_cache, "_identity", ident + ["another build"])
    assert k != disk_cache.key(0, "code", [meta])


def _raises_within(exc_info, kind):
    """@kind is the error torch.compile raised or the one it wraps (Dynamo
    reports a backend's error as BackendCompilerFailed around it)."""
    e = exc_info.value
    seen = []
    while e is not None and e not in seen:
        if isinstance(e, kind):
            return True
        seen.append(e)
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    return False


def _sin_then_double(x):
    return torch.sin(x * 3) * 2


@pytest.mark.parametrize("bug", [ZeroDivisionError, KeyError])
def test_a_lowering_bug_fails_the_compile_and_caches_nothing(cache, monkeypatch, bug):
    from torch_spyre.compiler import lower

    def broken(ctx, n):
        raise bug("a bug in the sin lowering")

    monkeypatch.setitem(lower.LOWERINGS, torch.ops.aten.sin.default, broken)
    torch._dynamo.reset()
    with pytest.raises(Exception) as ei:
        torch.compile(_sin_then_double, backend="spyre")(torch.randn(3, 5).to(D))
    assert _raises_within(ei, bug), repr(ei.value)
    assert "a bug in the sin lowering" in str(ei.value)
    assert entries(cache) == []  # neither a refusal nor a graph entry
    st = spyre_compiler.stats()
    assert st["graph_breaks"] == [] and st["disk_cache_writes"] == 0, st


def test_a_library_error_that_is_not_a_refusal_fails_the_compile(cache, monkeypatch):
    # -EINVAL (a reshape to a size the value does not have) is a bug in the
    # lowering that asked for it, not something for eager mode to cover
    from torch_spyre.compiler import lower

    def wrong_reshape(ctx, n):
        return ctx.g.reshape(ctx.v(n.args[0]), [7, 7])

    monkeypatch.setitem(lower.LOWERINGS, torch.ops.aten.sin.default, wrong_reshape)
    torch._dynamo.reset()
    with pytest.raises(Exception) as ei:
        torch.compile(_sin_then_double, backend="spyre")(torch.randn(3, 5).to(D))
    assert _raises_within(ei, RuntimeError), repr(ei.value)
    assert not _raises_within(ei, NotImplementedError), repr(ei.value)
    assert "graph reshape" in str(ei.value)
    assert entries(cache) == []


def test_a_library_refusal_breaks_the_graph_and_is_cached(cache, monkeypatch):
    # libspyre's -EOPNOTSUPP reaches Python as _C.Unsupported, a
    # NotImplementedError: the one library error that is a refusal
    from torch_spyre.compiler import lower

    def refused(ctx, n):
        return ctx.g.arange(0.0, 1.0, 4, torch.int8)  # int8 arange: not on the card

    with pytest.raises(_C.Unsupported, match="arange"):
        g = _C._Graph(0)
        g.arange(0.0, 1.0, 4, torch.int8)
    assert issubclass(_C.Unsupported, NotImplementedError)
    monkeypatch.setitem(lower.LOWERINGS, torch.ops.aten.sin.default, refused)
    x = torch.randn(3, 5)
    for attempt in range(2):
        got, st = compiled_run(_sin_then_double, x.to(D))
        torch.testing.assert_close(got, _sin_then_double(x), rtol=1e-4, atol=1e-5)
        assert st["eager_nodes"] == 1 and st["recipes"] == 2, st
        assert any("sin" in r and "arange" in r for r in st["graph_breaks"]), st
    # the second time the refusal came from the disk with the two parts
    assert st["disk_cache_misses"] == 0 and st["disk_cache_hits"] == 3, st
