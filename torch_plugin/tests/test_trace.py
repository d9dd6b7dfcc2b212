# SPDX-License-Identifier: MIT
"""torch.spyre.trace: the device timeline of a block as Perfetto JSON."""
import json

import pytest
import torch


def _spans(path):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    return ev, names, [e for e in ev if e["ph"] == "X"]


def test_trace_records_copies_and_compute(tmp_path):
    path = str(tmp_path / "t.json")
    a = torch.randn(64, 64)
    with torch.spyre.trace(path) as p:
        assert p == path
        x = a.to("spyre")
        y = (x @ x).relu()
        out = y.cpu()
    torch.testing.assert_close(out, (a @ a).relu(), rtol=1e-2, atol=1e-2)
    ev, names, spans = _spans(path)
    assert names[1] == "compute"
    tracks = {names[s["tid"]] for s in spans}
    assert "compute" in tracks, tracks
    assert any(t.startswith("dma") for t in tracks), tracks
    for s in spans:
        assert s["pid"] == 1 and s["dur"] > 0 and s["ts"] >= 0, s
    # spans on one track never overlap: a queue runs one submission at a time
    for tid in {s["tid"] for s in spans}:
        lane = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans if s["tid"] == tid)
        for (a0, a1), (b0, _) in zip(lane, lane[1:]):
            assert b0 + 1e-3 >= a1, (tid, a0, a1, b0)
    assert sum(1 for e in ev if e["ph"] == "i" and e["tid"] == 0) >= len(spans)


def test_trace_errors(tmp_path):
    with pytest.raises(ValueError, match="non-empty"):
        with torch.spyre.trace(""):
            pass
    path = str(tmp_path / "t.json")
    with torch.spyre.trace(path):
        with pytest.raises(RuntimeError, match="already running"):
            with torch.spyre.trace(str(tmp_path / "u.json")):
                pass
    with pytest.raises(RuntimeError, match="cannot write"):
        with torch.spyre.trace(str(tmp_path / "no" / "such" / "dir.json")):
            torch.ones(4, device="spyre").cpu()


def test_trace_names_spans_after_the_aten_op(tmp_path):
    """Each submission is named after the innermost aten op that issued it
    (the libspyre call stays in args), also inside a user's record_function;
    after the trace, a new trace names ops again (the callback comes back)."""
    a = torch.randn(32, 32)
    for run in range(2):
        path = str(tmp_path / f"t{run}.json")
        with torch.spyre.trace(path):
            x = a.to("spyre")
            with torch.autograd.profiler.record_function("user block"):
                y = torch.mm(x, x).relu()
            out = y.cpu()
        torch.testing.assert_close(out, (a @ a).relu(), rtol=1e-2, atol=1e-2)
        _, names, spans = _spans(path)
        compute = [s["name"] for s in spans if names[s["tid"]] == "compute"]
        assert compute == ["aten::mm", "aten::relu"], compute
        copies = [s["name"] for s in spans if s["args"]["call"] == "spyre_memcpy_async"]
        assert copies[0] == copies[-1] == "aten::_copy_from", copies
        assert all(s["args"]["call"].startswith("spyre_") for s in spans), spans
