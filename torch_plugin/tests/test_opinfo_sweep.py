# SPDX-License-Identifier: MIT
"""Every op of PyTorch's OpInfo database (torch 2.13's ``op_db``), not an
allow-list: each sample input (up to SAMPLES per op and dtype) for float32,
float16, bfloat16, int64, int32 and bool is made on the CPU, moved to the
card, run there with the CPU fallback forbidden and compared with the CPU.

A sample the card has no kernel for raises NotImplementedError naming spyre
and is counted as not on the card. A sample that runs and differs from the
CPU fails, always: floats within the card's tolerance (it computes in fp32
and rounds once, so half results are compared with the CPU's fp32 result
rounded once), integers and bool exactly. An error the CPU does not raise
fails too.

test_coverage_report sums the results, writes them to
``build/opinfo/coverage.json`` (``scripts/opinfo-coverage`` turns that into
Documentation/op-coverage.rst) and holds the totals above their floors."""
import json
import os

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten, tree_map

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool)
TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}
SAMPLES = 12
# measured on the sim when this file last changed; the run must not drop below
MIN_PASSING, MIN_OPS = 11928, 368

# Ops that draw random numbers: their values cannot equal the CPU's (the
# card's generator is tested by distribution, not here).
RANDOM = ("rand", "normal", "bernoulli", "multinomial", "dropout", "uniform", "exponential",
          "geometric", "cauchy", "log_normal", "empty")
# Samples whose meaning changes when their tensors move to another device,
# on any accelerator: a view's storage is copied compactly (as_strided
# addresses the storage), tensor_split's index tensor must stay on the CPU.
NOT_PORTABLE = {"as_strided.partial_views", "tensor_split"}
# topk: which of tied elements the CPU returns is unspecified; values are
# compared, indices must point at them
TIES = {"topk"}
# Ops PyTorch implements for every device as one composite of eager ops
# (CompositeExplicitAutograd), each rounding to the tensor's dtype: on the
# card they run that same composite, so for half dtypes the reference is the
# CPU's own step-by-step result, not the fp32 result rounded once (fp16
# soft_margin_loss: exp(30.6) is inf in fp16 on the CPU and on the card).
STEPWISE_HALF = {"nn.functional.soft_margin_loss"}

OPS = [op for op in op_db
       if not any(r in op.name for r in RANDOM)
       and (op.name + "." + op.variant_test_name if op.variant_test_name else op.name)
       not in NOT_PORTABLE]
RESULTS = {}  # op id -> {dtype name: [passed, not on the card]}


def op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def on_card(sample):
    """@sample with its tensors on the card, and the card named where it names the CPU."""
    dev = sample.transform(lambda t: t.to("spyre") if torch.is_tensor(t) else t)
    for k, v in list(dev.kwargs.items()):
        if k == "device" or isinstance(v, torch.device):
            dev.kwargs[k] = torch.device("spyre")
    dev.args = tuple(torch.device("spyre") if isinstance(a, torch.device) or a == "cpu" else a
                     for a in dev.args)
    return dev


def reference(op, sample, dtype):
    """The CPU's result; for half dtypes the fp32 result rounded once to the
    dtype the CPU's own result has (as the card computes), except for the
    STEPWISE_HALF ops."""
    native = op(sample.input, *sample.args, **sample.kwargs)
    if dtype not in (torch.float16, torch.bfloat16) or op_id(op) in STEPWISE_HALF:
        return native
    up = sample.transform(lambda t: t.float() if torch.is_tensor(t) and t.dtype == dtype else t)
    wide = op(up.input, *up.args, **up.kwargs)
    nl, spec = tree_flatten(native)
    wl, _ = tree_flatten(wide)
    if len(nl) != len(wl):
        return native
    return spec.unflatten([w.to(n.dtype) if torch.is_tensor(w) and torch.is_tensor(n) else n
                           for n, w in zip(nl, wl)])


def compare(name, dtype, sample, got, want):
    gl, _ = tree_flatten(got)
    wl, _ = tree_flatten(want)
    where = f"{name} {dtype} {sample}"
    assert len(gl) == len(wl), where
    if name in TIES:
        values, idx = got
        torch.testing.assert_close(values.cpu(), want[0], equal_nan=True, msg=where)
        picked = sample.input.gather(sample.kwargs.get("dim", sample.args[1] if len(sample.args) > 1 else -1), idx.cpu())
        torch.testing.assert_close(picked, want[0], equal_nan=True, msg=where)
        return
    for g, w in zip(gl, wl):
        if not torch.is_tensor(w):
            assert g == w or (w != w and g != g), f"{where}: {g} != {w}"
            continue
        assert torch.is_tensor(g) and g.device.type == "spyre", f"{where}: got {g!r}"
        g = g.cpu()
        assert g.dtype == w.dtype and g.shape == w.shape, (where, g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype in TOL:
            rtol, atol = TOL[w.dtype]
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True, msg=where)
        else:
            assert torch.equal(g, w), f"{where}:\n{g}\n!=\n{w}"


def run(op):
    name = op_id(op)
    counts = {}
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        passed = unsupported = 0
        for sample in list(op.sample_inputs("cpu", dtype, requires_grad=False))[:SAMPLES]:
            if not torch.is_tensor(sample.input) and not isinstance(sample.input, (list, tuple)):
                continue
            if sample.kwargs.get("dropout_p", 0):   # random: test_random.py
                continue
            try:
                want = reference(op, sample, dtype)
            except Exception:   # the CPU refuses it: nothing to compare
                continue
            dev = on_card(sample)
            torch.spyre.set_fallback_mode("error")
            try:
                got = op(dev.input, *dev.args, **dev.kwargs)
            except NotImplementedError as e:
                assert "spyre" in str(e), f"{name} {dtype}: {e}"
                unsupported += 1
                continue
            finally:
                torch.spyre.set_fallback_mode("warn")
            compare(name, dtype, sample, got, want)
            passed += 1
        counts[str(dtype).removeprefix("torch.")] = [passed, unsupported]
    RESULTS[name] = counts


@pytest.mark.parametrize("op", OPS, ids=op_id)
def test_samples_match_cpu_or_are_refused(op):
    run(op)


def test_coverage_report():
    failed = []
    for op in OPS:
        if op_id(op) not in RESULTS:
            try:
                run(op)
            except Exception:   # reported by the op's own test as well
                failed.append(op_id(op))
    passed = sum(p for c in RESULTS.values() for p, _ in c.values())
    refused = sum(u for c in RESULTS.values() for _, u in c.values())
    ops = sum(1 for c in RESULTS.values() if any(p for p, _ in c.values()))
    out = os.environ.get("SPYRE_OPINFO_REPORT",
                         os.path.join(os.path.dirname(__file__), "../../build/opinfo/coverage.json"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "samples_per_dtype": SAMPLES, "ops": RESULTS},
                  f, indent=1, sort_keys=True)
    print(f"opinfo sweep: {passed} samples on the card, {refused} refused, "
          f"{ops} ops with samples on the card of {len(OPS)}")
    assert not failed, f"ops with samples that differ from the CPU or fail: {failed}"
    assert passed >= MIN_PASSING and ops >= MIN_OPS
