# SPDX-License-Identifier: MIT
"""The ops mixture-of-experts routing calls on accelerators, on the card
with the CPU fallback forbidden: integer histc (tokens per expert, CUDA's
semantics: the CPU has no integer histc) and index_put_ through one integer
index of the first dimension (inverse permutations, row scatters), exact
for integers past 2^24, later writes winning as on the CPU."""
import pytest
import torch

D = "spyre"


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_histc_of_integers_counts_as_the_float_histc(dtype):
    x = torch.tensor([0, 3, 3, 1, 2, 7, -1, 2, 3, 3], dtype=dtype)
    for kw in (dict(bins=4, min=0, max=3), dict(bins=3), dict(bins=5, min=-1, max=7)):
        got = torch.histc(x.to(D), **kw)
        assert got.dtype == dtype and got.device.type == "spyre"
        assert torch.equal(got.cpu(), torch.histc(x.double(), **kw).to(dtype)), kw


def test_histc_exact_past_2_24_and_edges():
    base = 2**40
    x = torch.tensor([base, base + 5, base + 9, base + 10], dtype=torch.int64)
    assert torch.histc(x.to(D), bins=2, min=base, max=base + 9).cpu().tolist() == [1, 2]
    assert torch.equal(torch.histc(torch.empty(0, dtype=torch.int64).to(D), bins=3).cpu(),
                       torch.zeros(3, dtype=torch.int64))
    assert torch.histc(torch.full((3,), 5).to(D), bins=2).cpu().tolist() == [0, 3]


def test_float_histc_is_not_computed_on_the_card():
    with pytest.raises(NotImplementedError, match="histc"):
        torch.histc(torch.zeros(3).to(D), bins=2)


def test_inverse_permutation_as_moe_routing_writes_it():
    perm = torch.randperm(37, generator=torch.Generator().manual_seed(0))
    want = torch.empty_like(perm)
    want[perm] = torch.arange(37)
    got = torch.empty_like(perm).to(D)
    got[perm.to(D)] = torch.arange(37, device=D)
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int32, torch.bool], ids=str)
def test_index_put_rows_later_writes_win(dtype):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(6, 3, generator=g) * 5).to(dtype)
    v = (torch.randn(5, 3, generator=g) * 5).to(dtype)
    idx = torch.tensor([1, -1, 1, 3, 5])      # 1 twice, -1 is 5: the later write wins
    want = x.clone()
    want[idx] = v
    got = x.to(D)
    got[idx.to(D)] = v.to(D)
    assert torch.equal(got.cpu(), want)


def test_index_put_values_broadcast_and_int64_exact():
    x = torch.full((4, 2), 2**40 + 3)
    got = x.to(D)
    got[torch.tensor([2, 0]).to(D)] = torch.tensor(2**41 + 1).to(D)
    x[torch.tensor([2, 0])] = 2**41 + 1
    assert torch.equal(got.cpu(), x)


def test_index_put_accumulate_floats():
    g = torch.Generator().manual_seed(2)
    x, v = torch.randn(5, 4, generator=g), torch.randn(6, 4, generator=g)
    idx = torch.tensor([0, 2, 2, 4, 0, 0])
    want = x.clone().index_put_((idx,), v, accumulate=True)
    got = x.to(D).index_put_((idx.to(D),), v.to(D), accumulate=True)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_index_put_out_of_range_is_an_index_error_and_changes_nothing():
    x = torch.arange(6.0).to(D)
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 6"):
        x[torch.tensor([1, 9]).to(D)] = torch.zeros(2).to(D)
    assert torch.equal(x.cpu(), torch.arange(6.0))
