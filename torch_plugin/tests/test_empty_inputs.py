# SPDX-License-Identifier: MIT
"""Empty inputs. Reductions over an empty dim (and products with K = 0)
give PyTorch's result on spyre, eager and compiled: the identity in every
element of a non-empty output (sum and products 0, mean NaN), or the
CPU's error when PyTorch has no identity (amax, amin). A row kernel over an empty dim has
nothing to iterate, so a lowering that emitted one wrote nothing and the
output kept whatever its memory held before (a compiled linalg.vecdot of
[5, 0] vectors returned 2.0039 in the compiled OpInfo run). Each call here
first leaves other data in freed device memory, so an output that is not
written is seen."""
import pytest
import torch

import torch_spyre.inductor as spyre_inductor

D = "spyre"
JUNK = 7.5


def _dirty():
    """Leave JUNK in device blocks the allocator hands out next."""
    for n in (8, 64, 4096):
        junk = torch.full((n,), JUNK, device=D)
        del junk


CASES = {
    "sum_last": (lambda a, b: a.sum(-1), (5, 0)),
    "sum_first": (lambda a, b: a.sum(0), (0, 3)),
    "sum_keepdim": (lambda a, b: a.sum(-1, keepdim=True), (5, 0)),
    "sum_all": (lambda a, b: a.sum(), (5, 0)),
    "sum_two_dims": (lambda a, b: a.sum((0, 1)), (0, 3)),
    "nansum": (lambda a, b: a.nansum(-1), (5, 0)),
    "mean_last": (lambda a, b: a.mean(-1), (5, 0)),
    "mean_all": (lambda a, b: a.mean(), (0, 3)),
    "prod_last": (lambda a, b: a.prod(-1), (5, 0)),
    "amax_last": (lambda a, b: a.amax(-1), (5, 0)),
    "amin_first": (lambda a, b: a.amin(0), (0, 3)),
    "logsumexp": (lambda a, b: a.logsumexp(-1), (5, 0)),
    "vecdot": (lambda a, b: torch.linalg.vecdot(a, b), (5, 0)),
    "mul_sum": (lambda a, b: (a * b).sum(-1), (5, 0)),
    "dot": (lambda a, b: torch.dot(a[0], b[0]), (5, 0)),
    "mv": (lambda a, b: torch.mv(a, b[0]), (5, 0)),
    "mm": (lambda a, b: a @ b.t(), (5, 0)),
    "bmm": (lambda a, b: torch.bmm(a.unsqueeze(0), b.t().unsqueeze(0)), (5, 0)),
    "int_sum": (lambda a, b: a.long().sum(-1), (5, 0)),
}
MODES = ("eager", "inductor", "spyre")
# no spyre kernel and no lowering: NotImplementedError with the fallback off
REFUSED = {("nansum", "eager"), ("nansum", "spyre")}


def _expected(fn, shape):
    a, b = torch.randn(shape), torch.randn(shape)
    try:
        return a, b, fn(a, b), None
    except Exception as e:   # the CPU refuses: spyre must refuse too
        return a, b, None, e


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_empty_reduction_matches_cpu(case, mode):
    fn, shape = CASES[case]
    a, b, want, cpu_error = _expected(fn, shape)
    run = fn if mode == "eager" else torch.compile(fn, backend=mode, dynamic=False)
    torch._dynamo.reset()
    spyre_inductor.reset_stats()
    torch.spyre.set_fallback_mode("error")
    try:
        _dirty()
        got = run(a.to(D), b.to(D))
    except NotImplementedError as e:
        # refused (no spyre kernel, and the CPU fallback is forbidden here):
        # only where expected, so a new refusal or a new kernel is noticed
        assert "spyre" in str(e) and (case, mode) in REFUSED, f"{case} {mode}: {e}"
        return
    except Exception:
        if cpu_error is None:
            raise
        return   # the CPU raised as well (amax/amin over an empty dim)
    finally:
        torch.spyre.set_fallback_mode("warn")
        torch._dynamo.reset()
    assert cpu_error is None, f"{case} {mode}: the CPU raises {cpu_error!r}, spyre gave {got}"
    assert (case, mode) not in REFUSED, f"{case} {mode} runs now: drop it from REFUSED"
    assert got.device.type == D and got.shape == want.shape and got.dtype == want.dtype
    assert not (got.cpu() == JUNK).any(), f"{case} {mode}: the output was never written"
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=0, atol=0)


def test_compiled_empty_sum_is_one_recipe(card_only):
    # the identity is written by the recipe itself, not by an eager kernel
    x = torch.randn(5, 0, device=D)
    _dirty()
    got = torch.compile(lambda t: torch.linalg.vecdot(t, t), dynamic=False)(x)
    st = spyre_inductor.stats()
    assert st["graphs"] == 1 and st["fallback_nodes"] == 0, st
    assert got.cpu().tolist() == [0.0] * 5


def test_index_of_an_empty_tensor():
    # x[:, :, i, j] with x empty in another dim: the indexed dims merge by
    # their size (a -1 there is ambiguous for an empty tensor); PyTorch's
    # im2col decomposition (unfold under Inductor) calls it on empty batches
    x = torch.randn(0, 1, 5, 5)
    i, j = torch.tensor([[0], [-1]]), torch.tensor([[0, 1, 4]])
    want = x[:, :, i, j]
    torch.spyre.set_fallback_mode("error")
    try:
        got = x.to(D)[:, :, i.to(D), j.to(D)]
        unfolded = torch.compile(lambda t: torch.nn.functional.unfold(t, 2), dynamic=False)(
            x.to(D))
    finally:
        torch.spyre.set_fallback_mode("warn")
    assert got.shape == want.shape == (0, 1, 2, 3)
    assert unfolded.shape == torch.nn.functional.unfold(x, 2).shape == (0, 4, 16)
