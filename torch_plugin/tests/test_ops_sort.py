# SPDX-License-Identifier: MIT
"""sort, argsort and topk on the card against the CPU with the fallback
forbidden: stable order of ties (ascending and descending), NaN above
+inf, -0.0 equal to 0.0, any dim, integer and bool data, empty rows."""
import math

import pytest
import torch

D = "spyre"


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


def data(shape, dtype, seed=30):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-4, 4, shape, generator=g)  # many ties
    if dtype == torch.bool:
        return x > 0
    x = x.to(dtype)
    if dtype.is_floating_point:
        flat = x.view(-1)
        flat[::7] = math.nan
        flat[1::11] = math.inf
        flat[2::13] = -math.inf
        flat[3::5] = -0.0
    return x


def same(a, b):
    return torch.equal(a.cpu().nan_to_num(99), b.nan_to_num(99))


DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
@pytest.mark.parametrize("shape,dim", [((3, 17), -1), ((4, 6, 5), 1), ((9,), 0), ((), 0),
                                       ((2, 0), 1)], ids=str)
def test_sort_stable(dtype, descending, shape, dim):
    x = data(shape, dtype)
    v, i = x.to(D).sort(dim=dim, descending=descending, stable=True)
    w, j = x.sort(dim=dim, descending=descending, stable=True)
    assert v.dtype == dtype and i.dtype == torch.int64
    assert same(v, w) and torch.equal(i.cpu(), j)
    assert torch.equal(x.to(D).argsort(dim=dim, descending=descending, stable=True).cpu(), j)


def test_sort_long_rows_and_out():
    # rows of 1000 in a batch bigger than one step's scratch
    x = torch.randn(20, 1000, generator=torch.Generator().manual_seed(31))
    x[3, 100] = math.nan
    v, i = x.to(D).sort(descending=True)
    w, j = x.sort(descending=True, stable=True)
    assert same(v, w) and torch.equal(i.cpu(), j)
    vo, io = torch.empty(0, device=D), torch.empty(0, dtype=torch.int64, device=D)
    torch.sort(x.to(D), dim=0, out=(vo, io))
    assert same(vo, x.sort(dim=0, stable=True)[0])
    assert torch.equal(io.cpu(), x.sort(dim=0, stable=True)[1])


def check_topk(got, x, k, dim, largest):
    v, i = got
    w, _ = x.topk(k, dim=dim, largest=largest)
    assert v.dtype == x.dtype and i.dtype == torch.int64
    assert same(v, w)  # the values in order; tied indices may differ from the CPU's
    assert same(x.gather(dim, i.cpu()), w)
    assert torch.equal(i.cpu().sort(dim)[0].diff(dim=dim).ne(0).all(), torch.tensor(True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    x = data((5, 12), dtype)
    for k, dim in ((3, 1), (12, 1), (2, 0), (1, -1)):
        check_topk(x.to(D).topk(k, dim=dim, largest=largest), x, k, dim, largest)
    assert x.to(D).topk(0).values.shape == (5, 0)
    with pytest.raises(RuntimeError, match="out of range"):
        x.to(D).topk(13)
    with pytest.raises(RuntimeError, match="bool"):  # as on the CPU
        (x > 0).to(D).topk(2)


def test_topk_of_a_long_row():
    # a vocabulary-sized row: rounds of argmax, NaN first, -inf and ties kept apart
    x = torch.randn(2, 6000, generator=torch.Generator().manual_seed(32))
    x[0, 17] = math.nan
    x[1, :] = -math.inf
    x[1, 4000] = 1.0
    check_topk(x.to(D).topk(4), x, 4, 1, True)
    v, i = x.to(D).topk(3)
    assert i[1].cpu().tolist() == [4000, 0, 1]  # then the first -inf elements in order
    vo, io = torch.empty(0, device=D), torch.empty(0, dtype=torch.int64, device=D)
    torch.topk(x.to(D), 2, out=(vo, io))
    assert same(vo, x.topk(2).values)


def test_isnan():
    x = data((4, 7), torch.float32)
    assert torch.equal(x.to(D).isnan().cpu(), x.isnan())
    assert not torch.arange(3, device=D).isnan().any()
