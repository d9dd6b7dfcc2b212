# SPDX-License-Identifier: MIT
"""Eager ops without a spyre kernel, compiled through the Inductor path
(torch_spyre/inductor/eager.py): run on the card with the CPU fallback
forbidden, compiled once per key, their out= and in-place forms, inputs
that are not contiguous, edge values, a refusal that names the reason, and
a second process served by Inductor's on-disk caches (no card program
generated)."""
import json

import pytest
import torch
import torch.nn.functional as F

from torch_spyre.inductor import eager
from conftest import run_python

D = "spyre"


@pytest.fixture(autouse=True)
def _fresh():
    eager.reset()
    yield
    eager.reset()


def programs_built():
    return torch.spyre._C._ops_counters(0)["programs_built"]


def test_compiled_once_per_key_then_launched(card_only):
    x = torch.tensor([[-2.0, -0.5, -0.0, 0.0], [0.25, 0.75, float("inf"), float("nan")]])
    want = F.hardtanh(x, -0.5, 0.5)
    got = F.hardtanh(x.to(D), -0.5, 0.5)
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=0, atol=0)
    assert torch.equal(torch.signbit(got.cpu()), torch.signbit(want))  # -0.0 kept
    assert eager.stats()["compiles"] == 1 and eager.stats()["calls"] == 1
    built = programs_built()
    y = torch.randn(2, 4)
    torch.testing.assert_close(F.hardtanh(y.to(D), -0.5, 0.5).cpu(), F.hardtanh(y, -0.5, 0.5))
    assert eager.stats()["compiles"] == 1 and eager.stats()["calls"] == 2
    assert programs_built() == built  # the same key: the recipe is launched
    # another constant, another shape: other keys
    F.hardtanh(y.to(D), -1.0, 1.0)
    F.hardtanh(torch.randn(3).to(D), -0.5, 0.5)
    assert eager.stats()["compiles"] == 3


def test_several_results_out_and_inplace_forms(card_only):
    x = torch.randn(5, 6)
    lo, hi = torch.aminmax(x.to(D), dim=1)
    want = torch.aminmax(x, dim=1)
    assert torch.equal(lo.cpu(), want.min) and torch.equal(hi.cpu(), want.max)
    out = torch.empty(0, device=D)
    got = torch.nn.functional.leaky_relu(x.to(D), 0.2, inplace=False)
    torch.ops.aten.leaky_relu.out(x.to(D), 0.2, out=out)
    torch.testing.assert_close(out.cpu(), F.leaky_relu(x, 0.2))
    torch.testing.assert_close(got.cpu(), F.leaky_relu(x, 0.2))
    d = x.to(D)
    ptr = d.data_ptr()
    F.hardtanh_(d, -0.3, 0.3)
    assert d.data_ptr() == ptr
    torch.testing.assert_close(d.cpu(), F.hardtanh(x, -0.3, 0.3))
    # an int64 count is exact
    c = torch.tensor([[0, 3, 0], [1, 0, 0]])
    assert torch.equal(torch.count_nonzero(c.to(D), dim=1).cpu(), torch.tensor([1, 1]))


def test_strided_and_empty_inputs(card_only):
    x = torch.randn(6, 4)
    got = torch.linalg.vector_norm(x.to(D).t(), ord=3, dim=1)
    torch.testing.assert_close(got.cpu(), torch.linalg.vector_norm(x.t(), ord=3, dim=1))
    e = torch.empty(0, 3)
    assert F.hardtanh(e.to(D)).shape == (0, 3)
    assert torch.linalg.vector_norm(e.to(D), dim=0).cpu().tolist() == [0.0, 0.0, 0.0]


def test_a_refused_key_says_why_and_falls_back_counted():
    x = torch.arange(12.0).reshape(3, 4)
    torch.spyre.set_fallback_mode("error")
    with pytest.raises(NotImplementedError, match=r"aten::roll.*compiling it through Inductor"):
        torch.roll(x.to(D), 1, 1)
    assert eager.stats()["refused"] == 1
    torch.spyre.set_fallback_mode("warn")
    torch.spyre.reset_fallback_counts()
    with pytest.warns(UserWarning, match="roll"):
        got = torch.roll(x.to(D), 1, 1)
    assert torch.equal(got.cpu(), torch.roll(x, 1, 1))
    assert torch.spyre.fallback_counts() == {"aten::roll": 1}
    assert eager.stats()["refused"] == 1  # remembered, not compiled again


# One process: two eager ops through the path, what it built and compiled.
PROCESS = """
import json, time, torch
import torch.nn.functional as F
from torch_spyre.inductor import eager
torch.spyre.set_fallback_mode("error")
x = torch.randn(64, 64, generator=torch.Generator().manual_seed(0)).to("spyre")
h, r0, r1 = x * 0.5, x[0].clone(), x[1].clone()
torch.spyre.synchronize()
built = torch.spyre._C._ops_counters(0)["programs_built"]
t = time.perf_counter()
a = F.huber_loss(x, h, delta=0.7)
b = torch.addmv(r0, x, r1)
torch.spyre.synchronize()
first = time.perf_counter() - t
t = time.perf_counter()
F.huber_loss(x, h, delta=0.7)
torch.spyre.synchronize()
warm = time.perf_counter() - t
from torch._dynamo.utils import counters
print("STATS", json.dumps({"built": torch.spyre._C._ops_counters(0)["programs_built"] - built,
      "eager": {k: v for k, v in eager.stats().items() if k != "ops"},
      "fxgraph_hit": counters["inductor"]["fxgraph_cache_hit"],
      "aot_hit": counters["aot_autograd"]["autograd_cache_hit"],
      "a": a.item(), "b": b.cpu().tolist(), "first": first, "warm": warm}))
"""


def _process():
    rc, out = run_python(PROCESS)
    assert rc == 0, out
    return json.loads([s for s in out.splitlines() if s.startswith("STATS ")][-1][6:])


def test_a_second_process_generates_no_card_program():
    a = _process()
    assert a["eager"]["compiles"] == 2 and a["built"] > 0 and a["fxgraph_hit"] == 0, a
    b = _process()
    assert b["eager"]["compiles"] == 2 and b["fxgraph_hit"] == 2 and b["aot_hit"] == 2, b
    assert b["built"] == 0, b
    assert (a["a"], a["b"]) == (b["a"], b["b"])


def test_off_leaves_ops_to_the_fallback():
    rc, out = run_python("import torch\n"
                         "torch.spyre.set_fallback_mode('error')\n"
                         "torch.nn.functional.hardtanh(torch.ones(2).to('spyre'))\n",
                         TORCH_SPYRE_EAGER_COMPILE="off")
    assert rc != 0 and "'aten::hardtanh' has no spyre kernel" in out, out


def test_autograd_records_the_op_as_eager_does():
    x = torch.randn(4, 5, requires_grad=True)
    d = x.detach().to(D).requires_grad_()
    torch.spyre.reset_fallback_counts()
    y = F.leaky_relu(d, 0.1)
    assert type(y.grad_fn).__name__ == "LeakyReluBackward0"
    y.sum().backward()
    F.leaky_relu(x, 0.1).sum().backward()
    torch.testing.assert_close(d.grad.cpu(), x.grad)
    # the forward ran compiled; its backward op has neither kernel nor entry
    assert "aten::leaky_relu" not in torch.spyre.fallback_counts()
