# SPDX-License-Identifier: MIT
"""PyTorch's OpInfo database through torch.compile's default backend
(Inductor) on spyre: the compiled-OpInfo pattern of PyTorch's own Inductor
tests (compile a function calling the op on a sample, compare with eager on
the CPU), over the same ops as the eager sweep (test_opinfo_sweep.py).

A compile per sample costs far more than an eager call (Dynamo, AOTAutograd,
Inductor and the card's graph compiler, about 0.3 s each on the sim), so
the default run is a deterministic subset, chosen without looking at
results: the ops whose CRC-32 of their name is 0 modulo SHARDS (a third of
them), one dtype each (float32, else int64, else the op's first supported
one), and per op the first sample input the CPU accepts plus the first
edge sample (an empty tensor or a 0-d one; the empty vectors of
linalg.vecdot found a reduction that wrote nothing). It runs in about a
minute. SPYRE_OPINFO_COMPILED=full runs every op with float32 and int64
and the same samples (about ten times as long). Each sample is compiled
alone (Dynamo reset, static shapes) with the CPU fallback forbidden.

Counted like the eager sweep: a sample that runs and matches the CPU is on
the card (in recipes, or partly as spyre eager kernels the compiled graph
calls: both counted, and the split reported); a sample that raises
NotImplementedError naming spyre (an eager kernel the card lacks, reached
from the compiled graph) is refused; a result that differs from the CPU, or
any other error the CPU does not raise, fails, always.
test_compiled_coverage_report holds the totals above their floors."""
import json
import os
import zlib

import pytest
import torch

import torch_spyre.inductor as spyre_inductor
from test_opinfo_sweep import OPS, compare, on_card, op_id, reference

FULL = os.environ.get("SPYRE_OPINFO_COMPILED") == "full"
DTYPES = (torch.float32, torch.int64)
SHARDS = 1 if FULL else 3
RUN_OPS = [op for op in OPS if zlib.crc32(op_id(op).encode()) % SHARDS == 0]
# measured on the sim when this file last changed; the run must not drop
# below (full: the earlier full run's first samples, a subset of its samples)
MIN_PASSING, MIN_IN_RECIPES, MIN_OPS = (618, 393, 0) if FULL else (192, 118, 125)

RESULTS = {}  # op id -> {dtype name: [passed, of them with no eager kernel, refused]}


def _dtypes(op):
    have = op.supported_dtypes("cpu")
    got = [d for d in DTYPES if d in have]
    if not got:
        got = [d for d in (torch.float16, torch.bfloat16, torch.int32, torch.bool) if d in have][:1]
    return got if FULL else got[:1]


def _refusal(e):
    """The NotImplementedError naming spyre inside @e (Dynamo and Inductor
    wrap what a compiled graph's op raises), or None."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, NotImplementedError) and "spyre" in str(e):
            return e
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    return None


def _edge(sample):
    """An empty tensor or a 0-d one among the sample's tensors."""
    ts = [t for t in [sample.input, *sample.args, *sample.kwargs.values()] if torch.is_tensor(t)]
    return any(t.numel() == 0 or t.dim() == 0 for t in ts)


def _samples(op, dtype):
    """The first sample the CPU accepts, and the first edge one after it."""
    out = []
    for sample in op.sample_inputs("cpu", dtype, requires_grad=False):
        if len(out) == 2:
            break
        if not torch.is_tensor(sample.input) and not isinstance(sample.input, (list, tuple)):
            continue
        if out and not _edge(sample):
            continue
        try:
            want = reference(op, sample, dtype)
        except Exception:   # the CPU refuses it: nothing to compare
            continue
        out.append((sample, want))
    return out


def run(op):
    name = op_id(op)
    counts = {}
    for dtype in _dtypes(op):
        passed = recipes_only = refused = 0
        for sample, want in _samples(op, dtype):
            dev = on_card(sample)

            def fn(inp, args, kwargs):
                return op(inp, *args, **kwargs)

            torch._dynamo.reset()
            spyre_inductor.reset_stats()
            torch.spyre.set_fallback_mode("error")
            try:
                got = torch.compile(fn, dynamic=False)(dev.input, dev.args, dev.kwargs)
            except Exception as e:
                why = _refusal(e)
                if why is None:
                    raise AssertionError(f"{name} {dtype} {sample}: the compiled op raised "
                                         f"{type(e).__name__}: {e}") from e
                refused += 1
                continue
            finally:
                torch.spyre.set_fallback_mode("warn")
                torch._dynamo.reset()
            compare(name, dtype, sample, got, want)
            st = spyre_inductor.stats()
            passed += 1
            recipes_only += st["graphs"] > 0 and st["fallback_nodes"] == 0
        counts[str(dtype).removeprefix("torch.")] = [passed, recipes_only, refused]
    RESULTS[name] = counts


@pytest.mark.parametrize("op", RUN_OPS, ids=op_id)
def test_compiled_samples_match_cpu_or_are_refused(op):
    run(op)


def test_compiled_coverage_report():
    failed = []
    for op in RUN_OPS:
        if op_id(op) not in RESULTS:
            try:
                run(op)
            except Exception:   # reported by the op's own test as well
                failed.append(op_id(op))
    passed = sum(c[0] for d in RESULTS.values() for c in d.values())
    recipes = sum(c[1] for d in RESULTS.values() for c in d.values())
    refused = sum(c[2] for d in RESULTS.values() for c in d.values())
    ops = sum(1 for d in RESULTS.values() if any(c[0] for c in d.values()))
    out = os.environ.get("SPYRE_OPINFO_COMPILED_REPORT",
                         os.path.join(os.path.dirname(__file__),
                                      "../../build/opinfo/compiled.json"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "full": FULL, "shards": SHARDS,
                   "dtypes": [str(d) for d in DTYPES], "ops": RESULTS}, f, indent=1,
                  sort_keys=True)
    print(f"compiled opinfo: {passed} samples on the card ({recipes} all in recipes), "
          f"{refused} refused, {ops} ops with samples on the card of {len(RUN_OPS)} run ({len(OPS)} in the sweep)")
    assert not failed, f"ops with compiled samples that differ from the CPU or fail: {failed}"
    assert passed >= MIN_PASSING and recipes >= MIN_IN_RECIPES and ops >= MIN_OPS
