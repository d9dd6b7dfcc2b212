# SPDX-License-Identifier: MIT
"""The examples users run (make demo runs gpt_demo.py in the VM) keep
working: each runs in a fresh interpreter on the sim card. The demo's
device timeline traces are valid Perfetto / Chrome trace JSON and
scripts/trace-plot draws them."""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys

from conftest import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
TRACE_PLOT = os.path.join(HERE, "..", "..", "scripts", "trace-plot")


def check_perfetto(path):
    """What Perfetto's JSON importer needs, and what makes the lanes readable:
    a traceEvents array; complete ("X") spans with numeric ts/dur and the
    pid/tid of a named process and thread; spans on one track that never
    overlap (a queue runs one submission at a time). Returns the spans."""
    with open(path) as f:
        trace = json.load(f)
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list), path
    ev = trace["traceEvents"]
    for e in ev:
        assert e["ph"] in ("M", "X", "i"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        assert isinstance(e["name"], str) and e["name"], e
    procs = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"
             and e["args"]["name"]}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in ev if e["ph"] == "X"]
    assert spans, path
    for s in spans:
        assert isinstance(s["ts"], (int, float)) and isinstance(s["dur"], (int, float)), s
        assert s["ts"] >= 0 and s["dur"] > 0, s
        assert s["pid"] in procs and (s["pid"], s["tid"]) in threads, s
        assert s["cat"] in ("compute", "dma") and s["args"]["call"].startswith("spyre_"), s
    for track in {(s["pid"], s["tid"]) for s in spans}:
        lane = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans
                      if (s["pid"], s["tid"]) == track)
        for (a0, a1), (b0, _) in zip(lane, lane[1:]):
            assert b0 + 1e-3 >= a1, (path, threads[track], a0, a1, b0)
    for i in (e for e in ev if e["ph"] == "i"):
        assert i["tid"] == 0 and i["s"] == "t" and i["ts"] >= 0, i
    return [dict(s, track=threads[(s["pid"], s["tid"])]) for s in spans]


def test_gpt_demo_agrees_with_the_cpu_and_traces(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "gpt_demo.py"),
                        "--trace", str(tmp_path)], env=child_env(SPYRE_BACKEND="sim"),
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "spyre agrees with the CPU" in out and "1 SUBMIT," in out, out
    assert "CPU fallbacks          0" in out, out

    eager = check_perfetto(tmp_path / "gpt2-eager.json")
    compiled = check_perfetto(tmp_path / "gpt2-compiled.json")
    # eager: one span per submission, named after the aten op that issued it
    ops = {s["name"] for s in eager if s["track"] == "compute"}
    assert len(eager) > 50 and {"aten::addmm", "aten::native_layer_norm"} <= ops, ops
    assert all(n.startswith("aten::") for n in ops), ops
    # compiled: the whole forward is one recipe launch on the compute engine
    assert [(s["name"], s["track"], s["args"]["call"]) for s in compiled] == \
        [("compiled graph", "compute", "spyre_recipe_launch")], compiled
    # modelled device time: the compiled forward does the same work, without
    # the eager forward's extra copies, in no more time
    busy = sum(s["dur"] for s in eager if s["track"] == "compute")
    assert 0 < compiled[0]["dur"] <= busy * 1.05, (compiled[0]["dur"], busy)

    png = tmp_path / "timeline.png"
    p = subprocess.run([sys.executable, TRACE_PLOT, str(tmp_path / "gpt2-eager.json"),
                        str(tmp_path / "gpt2-compiled.json"), str(png)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == str(png), p.stdout + p.stderr
    with open(png, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, len(data)


def test_trace_plot_rejects_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, '
                   '"tid": 0, "args": {"name": "x"}}]}')
    for args, msg in (([str(bad), str(tmp_path / "o.png")], "no device spans"),
                      ([str(tmp_path / "none.json"), str(tmp_path / "o.png")],
                       "No such file"),
                      ([str(bad)], "at least one trace"),
                      ([str(bad), str(tmp_path / "o.txt")], "the PNG to write")):
        p = subprocess.run([sys.executable, TRACE_PLOT, *args], capture_output=True,
                           text=True, timeout=300)
        assert p.returncode != 0 and msg in p.stderr, (args, p.stderr)
    assert not (tmp_path / "o.png").exists()


def test_trace_plot_shortens_only_idle_time():
    """Gaps in which no lane runs shrink to the threshold; durations, order
    and the overlap of DMA with compute stay as recorded."""
    loader = importlib.machinery.SourceFileLoader("trace_plot", TRACE_PLOT)
    spec = importlib.util.spec_from_loader("trace_plot", loader)
    tp = importlib.util.module_from_spec(spec)
    loader.exec_module(tp)
    spans = [("dma", 0.0, 10.0, "a"), ("compute", 5.0, 10.0, "b"),   # overlap 5..10
             ("dma", 1000.0, 4.0, "c"), ("compute", 1016.0, 2.0, "d")]  # gaps 985, 12
    moved, marks, cut = tp.squeeze(spans, 3.0)
    assert moved == [("dma", 0.0, 10.0, "a"), ("compute", 5.0, 10.0, "b"),
                     ("dma", 18.0, 4.0, "c"), ("compute", 25.0, 2.0, "d")], moved
    assert marks == [16.5, 23.5] and cut == 982.0 + 9.0, (marks, cut)
    assert tp.squeeze(spans, float("inf"))[0] == spans
