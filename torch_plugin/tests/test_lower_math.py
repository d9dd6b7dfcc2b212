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
