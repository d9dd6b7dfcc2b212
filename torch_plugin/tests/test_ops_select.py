# SPDX-License-Identifier: MIT
"""Ops whose result size depends on the data, on the card against the CPU
with the fallback forbidden: nonzero, masked_select, x[mask]; and print()
of spyre tensors."""
import math
import re

import pytest
import torch

D = "spyre"


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


def data(shape, dtype, seed=20):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 3, shape, generator=g)
    if dtype == torch.bool:
        return x > 0
    x = x.to(dtype)
    if dtype.is_floating_point and x.numel() > 3:
        x.view(-1)[1] = math.nan  # NaN is nonzero
        x.view(-1)[2] = -0.0      # -0.0 is zero
    return x


SHAPES = [(7,), (3, 5), (2, 3, 4), (), (0,), (3, 0, 2)]
DTYPES = [torch.float32, torch.float16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nonzero(shape, dtype):
    x = data(shape, dtype)
    got = torch.nonzero(x.to(D))
    assert got.device.type == "spyre" and got.dtype == torch.int64
    assert torch.equal(got.cpu(), torch.nonzero(x))
    assert torch.equal(torch.nonzero(torch.zeros_like(x).to(D)).cpu(),
                       torch.nonzero(torch.zeros_like(x)))  # nothing selected


def test_nonzero_of_a_long_tensor_and_out():
    # more elements than one cumsum row (the running count in two levels)
    x = torch.rand(3, 7001, generator=torch.Generator().manual_seed(21)) > 0.7
    assert torch.equal(torch.nonzero(x.to(D)).cpu(), torch.nonzero(x))
    assert torch.equal(torch.ones(9000, device=D).nonzero().cpu().view(-1), torch.arange(9000))
    out = torch.empty(0, dtype=torch.int64, device=D)
    torch.nonzero(x.to(D), out=out)
    assert torch.equal(out.cpu(), torch.nonzero(x))
    t = x.to(D).nonzero(as_tuple=True)
    assert all(torch.equal(a.cpu(), b) for a, b in zip(t, x.nonzero(as_tuple=True)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_masked_select(dtype):
    x = data((4, 6), dtype)
    mask = data((4, 6), torch.bool, seed=22)
    got = torch.masked_select(x.to(D), mask.to(D))
    assert got.dtype == dtype
    assert torch.equal(got.cpu().nan_to_num(7), torch.masked_select(x, mask).nan_to_num(7))
    # a broadcast mask, all false, all true
    row = torch.tensor([True, False, True, True, False, False])
    assert torch.equal(torch.masked_select(x.to(D), row.to(D)).cpu().nan_to_num(7),
                       torch.masked_select(x, row).nan_to_num(7))
    none = torch.masked_select(x.to(D), torch.zeros(4, 6, dtype=torch.bool, device=D))
    assert none.shape == (0,) and none.dtype == dtype
    every = torch.masked_select(x.to(D), torch.ones(4, 6, dtype=torch.bool, device=D))
    assert torch.equal(every.cpu().nan_to_num(7), x.reshape(-1).nan_to_num(7))


def test_masked_select_exact_integers_and_out():
    # integers take the fp32 path: exact to 2^24
    x = torch.tensor([1 << 24, -(1 << 24), 3, -7, 0], dtype=torch.int64)
    m = torch.tensor([True, True, False, True, True])
    assert torch.equal(torch.masked_select(x.to(D), m.to(D)).cpu(), x[m])
    out = torch.empty(0, device=D)
    f = torch.randn(5, generator=torch.Generator().manual_seed(23))
    torch.masked_select(f.to(D), m.to(D), out=out)
    assert torch.equal(out.cpu(), f[m])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_bool_mask_indexing(dtype):
    x = data((3, 4, 5), dtype)
    m2 = data((3, 4), torch.bool, seed=24)
    m1 = torch.tensor([True, False, True, True])
    xd = x.to(D)
    for got, want in ((xd[m2.to(D)], x[m2]), (xd[:, m1.to(D)], x[:, m1]),
                      (xd[xd > 0], x[x > 0]), (xd[0, m1.to(D), 1:3], x[0, m1, 1:3])):
        assert got.dtype == dtype and got.device.type == "spyre"
        assert torch.equal(got.cpu().nan_to_num(7), want.nan_to_num(7))
    # a CPU mask is uploaded; an all-false mask selects nothing; a wrong shape is an error
    assert torch.equal(xd[m2].cpu().nan_to_num(7), x[m2].nan_to_num(7))
    assert xd[torch.zeros(3, 4, dtype=torch.bool, device=D)].shape == (0, 5)
    with pytest.raises(IndexError, match="does not match"):
        xd[torch.ones(3, 5, dtype=torch.bool, device=D)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64,
                                   torch.bool], ids=str)
def test_bool_mask_assignment(dtype):
    # x[mask] = value: a masked_fill_ on the card (no count needed)
    x = data((3, 4, 5), dtype)
    xd = x.to(D)
    m = data((3, 4, 5), torch.bool, seed=27)
    rows = torch.tensor([True, False, True])
    cols = torch.tensor([False, True, True, False])
    one = True if dtype == torch.bool else 1
    for idx, value in (((m,), one), ((rows,), 0), ((slice(None), cols), one),
                       ((torch.zeros(3, dtype=torch.bool),), one),
                       ((slice(None), slice(None), m[0, 0]), torch.tensor(0, dtype=dtype))):
        x[idx] = value
        xd[tuple(i.to(D) if torch.is_tensor(i) else i for i in idx)] = (
            value.to(D) if torch.is_tensor(value) else value)
        assert torch.equal(xd.cpu().nan_to_num(7), x.nan_to_num(7)), idx
    assert torch.equal(xd[xd != 0].cpu().nan_to_num(7), x[x != 0].nan_to_num(7))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool],
                         ids=str)
def test_print_formats_as_the_cpu(dtype):
    x = data((3, 4), dtype)
    if dtype.is_floating_point:
        x[0, 0] = math.inf
    assert on_host(repr(x.to(D))) == repr(x)
    assert str(torch.zeros(0, 2, device=D)) == "tensor([], device='spyre:0', size=(0, 2))"
    big = torch.randn(3000, generator=torch.Generator().manual_seed(26))
    assert "..." in repr(big) and on_host(repr(big.to(D))) == repr(big)


def on_host(s):
    """A spyre tensor's repr without its device= (the CPU's repr then)."""
    assert "device='spyre:0'" in s, s
    return re.sub(r",\s*device='spyre:0'", "", s)
