# SPDX-License-Identifier: MIT
"""PyTorch's OpInfo sample inputs for the ops that run on the card,
instantiated for the privateuse1 device: each sample is made on the CPU,
moved to spyre, run there with the CPU fallback forbidden, and compared
with the same op on the CPU. An op's samples that the card cannot take
(e.g. a dtype it has no kernel for) raise NotImplementedError naming
spyre and are counted apart; any other error or mismatch fails. The total
of passing samples must not drop below the number measured when the
allow-list was last extended (MIN_PASSING)."""
import pytest
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase
from torch.utils._pytree import tree_flatten, tree_map
from torch_spyre import op_table

# ops with spyre device kernels (ops_*.cpp) and the
# runtime's views and copies (ops.cpp, copy.cpp)
HAND_WRITTEN = {
    "mm", "bmm", "addmm", "baddbmm", "matmul", "__rmatmul__", "nn.functional.linear", "mv", "dot",
    "nn.functional.bilinear", "einsum", "inner", "tensordot",
    "native_layer_norm", "nn.functional.layer_norm",
    "nn.functional.embedding", "index_select", "cat", "tril", "triu",
    "nn.functional.scaled_dot_product_attention",
    "t", "transpose", "permute", "view", "reshape", "flatten", "unflatten", "squeeze",
    "unsqueeze", "expand", "expand_as", "narrow", "select", "movedim", "split", "chunk",
    "unbind", "contiguous", "clone", "view_as", "reshape_as", "swapaxes", "diagonal",
    "as_strided", "fill", "zero_", "hsplit", "vsplit", "split_with_sizes",
    "T", "mT", "H", "mH", "ravel", "atleast_1d", "atleast_2d", "atleast_3d",
    # ops_pointwise.cpp, ops_reduce.cpp, ops_integer.cpp, gather
    "gather", "nn.functional.gelu", "clamp", "pow", "where", "masked_fill", "argmax", "cumsum",
    "softmax", "log_softmax", "any", "all", "isin",
    # ops_select.cpp, ops_sort.cpp (not topk: which of tied elements the CPU
    # returns is unspecified, test_ops_sort.py checks topk's ties)
    "nonzero", "masked_select", "sort", "argsort", "isnan",
}
# every op of libspyre's op table that PyTorch names (OpInfo files some under
# nn.functional: relu, silu)
TABLE = {name for r in op_table.ROWS if r.torch for name in (r.name, "nn.functional." + r.name)}
ALLOW = HAND_WRITTEN | TABLE
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}
# attention samples have inputs up to 9 in magnitude: scores of several
# hundred, which softmax turns into output errors ten times the others'
TOL_SCALE = {"nn.functional.scaled_dot_product_attention": 10}
MIN_PASSING = 2538  # measured on the sim (2538 passing, 54 unsupported, 108 ops)

OPS = [op for op in op_db if op.name in ALLOW and not op.variant_test_name]
RESULTS = {}  # (op name, dtype) -> (passed, unsupported)


def usable(sample):
    # dropout draws random numbers: its results cannot match the CPU's
    return not sample.kwargs.get("dropout_p", 0)


def reference(op, sample, dtype):
    """The CPU result; for half dtypes computed in fp32 and rounded once, as
    the card computes (the CPU's half kernels round between steps)."""
    if dtype == torch.float32:
        return op(sample.input, *sample.args, **sample.kwargs)
    up = sample.transform(lambda t: t.float() if torch.is_tensor(t) and t.dtype == dtype else t)
    out = op(up.input, *up.args, **up.kwargs)
    return tree_map(lambda t: t.to(dtype) if torch.is_tensor(t) and t.is_floating_point() else t,
                    out)


def run_samples(op, dtype):
    passed = unsupported = 0
    rtol, atol = (t * TOL_SCALE.get(op.name, 1) for t in TOL[dtype])
    for sample in op.sample_inputs("cpu", dtype, requires_grad=False):
        if not usable(sample):
            continue
        want = reference(op, sample, dtype)
        dev = sample.transform(lambda t: t.to("spyre") if torch.is_tensor(t) else t)
        torch.spyre.set_fallback_mode("error")
        try:
            got = op(dev.input, *dev.args, **dev.kwargs)
        except NotImplementedError as e:
            if "spyre" not in str(e):
                raise
            unsupported += 1
            continue
        finally:
            torch.spyre.set_fallback_mode("warn")
        got_l, _ = tree_flatten(got)
        want_l, _ = tree_flatten(want)
        assert len(got_l) == len(want_l), f"{op.name}: {sample}"
        for g, w in zip(got_l, want_l):
            if not torch.is_tensor(w):
                assert g == w, f"{op.name}: {sample}"
                continue
            assert g.device.type == "spyre", f"{op.name} returned a {g.device} tensor"
            torch.testing.assert_close(g.cpu(), w, rtol=rtol, atol=atol, equal_nan=True,
                                       msg=lambda m: f"{op.name} {dtype} {sample}: {m}")
        passed += 1
    RESULTS[(op.name, dtype)] = (passed, unsupported)
    return passed, unsupported


class TestSpyreOpInfo(TestCase):
    @ops(OPS, allowed_dtypes=DTYPES)
    def test_samples_match_cpu(self, device, dtype, op):
        passed, unsupported = run_samples(op, dtype)
        print(f"opinfo {op.name} {dtype}: {passed} passed, {unsupported} unsupported")
        self.assertGreater(passed + unsupported, 0)


instantiate_device_type_tests(TestSpyreOpInfo, globals(), only_for="privateuse1")


def test_passing_sample_count():
    """Runs the (op, dtype) pairs this session has not run yet, then checks the total."""
    for op in OPS:
        for dtype in DTYPES:
            if dtype in op.supported_dtypes("cpu") and (op.name, dtype) not in RESULTS:
                run_samples(op, dtype)
    passed = sum(p for p, _ in RESULTS.values())
    unsupported = sum(u for _, u in RESULTS.values())
    print(f"opinfo: {passed} samples pass on spyre, {unsupported} unsupported, "
          f"{len(OPS)} ops")
    assert passed >= MIN_PASSING
