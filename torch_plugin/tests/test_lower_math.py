# SPDX-License-Identifier: MIT
"""log1p, isnan, sign, trunc, var, prod and flip (compiler/lower_math.py):
through torch.compile's default path and as eager ops compiled through
Inductor (inductor/eager.py), against the CPU with the CPU fallback
forbidden: NaN, infinities, -0.0 (its sign compared too), tiny arguments
of log1p, integers exactly, empty tensors."""
import math

import pytest
import torch

from torch_spyre.inductor import eager

D = "spyre"
nan, inf = math.nan, math.inf
EDGES = torch.tensor([[-0.0, 0.0, nan, -1.5, 2.5, inf, -inf, 1e-10, -0.5],
                      [3e7, -3e7, 0.7, -0.9999, 1e-30, -1.0, 0.25, 5.0, -2.0]])
INTS = torch.tensor([[3, -2, 0, 7], [1, -1, 5, 2]])

CASES = {
    "log1p": (torch.log1p, EDGES),
    "log1p empty": (torch.log1p, torch.zeros(0, 3)),
    "isnan": (torch.isnan, EDGES),
    "isnan int": (torch.isnan, INTS),
    "sign": (torch.sign, EDGES),
    "sign int": (torch.sign, INTS),
    "trunc": (torch.trunc, EDGES),
    "fix": (torch.fix, EDGES),
    "var dim": (lambda t: torch.var(t, 1), EDGES[:, 3:5]),
    "var all": (torch.var, EDGES[1]),
    "var correction 0 keepdim": (lambda t: torch.var(t, 0, correction=0, keepdim=True), EDGES),
    "var one element": (lambda t: torch.var(t, 0), EDGES[1, :1]),
    "std": (lambda t: torch.std(t, 1), EDGES[:, 3:6]),
    "prod dim": (lambda t: torch.prod(t, 1), EDGES),
    "prod all": (torch.prod, EDGES[1]),
    "prod odd length": (lambda t: torch.prod(t, 0), torch.randn(7, 3)),
    "prod int": (lambda t: torch.prod(t, 1), INTS),
    "prod int all": (torch.prod, INTS),
    "prod empty": (lambda t: torch.prod(t, 1), torch.zeros(3, 0)),
    "flip": (lambda t: torch.flip(t, [0, 1]), EDGES),
    "flip int": (lambda t: torch.flip(t, [1]), INTS),
    "flip empty": (lambda t: torch.flip(t, [0]), torch.zeros(0, 3)),
    "flip no dims": (lambda t: torch.flip(t, ()), EDGES),
}


def same(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    if not want.is_floating_point():
        assert torch.equal(got, want), (got, want)
        return
    # float32 on the card: rounding of another order (prod, var), 1e-5
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert torch.equal(got.signbit(), want.signbit()), (got, want)  # -0.0 kept


@pytest.mark.parametrize("name", CASES)
def test_compiled(name, card_only):
    fn, x = CASES[name]
    torch._dynamo.reset()
    same(torch.compile(fn)(x.to(D)).cpu(), fn(x))


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("isnan")])
def test_eager_through_inductor(name, card_only):
    fn, x = CASES[name]
    eager.reset()
    same(fn(x.to(D)).cpu(), fn(x))
    assert eager.stats()["compiles"] >= 1


# float64: the card has no float64 arithmetic. Its eager kernels (sin,
# add, sum, ...) send float64 to the counted CPU fallback, which error mode
# refuses naming the op; these ops do the same, with the reason, and
# compile nothing. Compiled, the node is left to that eager path.
F64 = {"trunc": (torch.trunc, "trunc"), "var": (torch.var, "var"),
       "prod": (torch.prod, "prod"), "sin (a hand-written kernel)": (torch.sin, "sin")}


@pytest.mark.parametrize("name", F64)
def test_float64_refused_as_every_op(name):
    fn, op = F64[name]
    x = EDGES[1].double()
    eager.reset()
    torch.spyre.set_fallback_mode("error")
    try:
        with pytest.raises(NotImplementedError, match=f"aten::{op}.*forbids running it on "
                                                      "the CPU"):
            fn(x.to(D))
    finally:
        torch.spyre.set_fallback_mode("warn")
    if name != "sin (a hand-written kernel)":
        assert eager.stats()["compiles"] == 0
    torch.spyre.reset_fallback_counts()
    got = fn(x.to(D))
    assert got.device.type == D
    same(got.cpu(), fn(x))
    assert sum(n for k, n in torch.spyre.fallback_counts().items() if op in k) == 1


def test_float64_error_names_the_dtype():
    torch.spyre.set_fallback_mode("error")
    try:
        with pytest.raises(NotImplementedError, match="a float64 tensor: the card has no "
                                                      "float64 arithmetic"):
            torch.trunc(EDGES.double().to(D))
    finally:
        torch.spyre.set_fallback_mode("warn")


def test_float64_compiled_leaves_the_node_to_eager():
    torch._dynamo.reset()
    x = EDGES[1]
    for fn in (lambda t: torch.trunc(t.double()) + 1, lambda t: torch.prod(t, dtype=torch.float64)):
        torch.spyre.reset_fallback_counts()
        same(torch.compile(fn)(x.to(D)).cpu(), fn(x))
        assert torch.spyre.fallback_counts(), "float64 arithmetic ran somewhere but the CPU"
