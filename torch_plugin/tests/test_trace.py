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
