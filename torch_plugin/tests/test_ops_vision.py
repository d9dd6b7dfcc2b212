# SPDX-License-Identifier: MIT
"""Convolution, batch norm and pooling on the card (ops_conv.cpp,
ops_batch_norm.cpp, ops_pool.cpp) against the CPU, with the CPU fallback
forbidden. Float results within the matmul family's tolerance (fp32
accumulation, one rounding); max pooling's values and indices exactly,
NaN and -inf windows included."""
import pytest
import torch
import torch.nn.functional as F

D = "spyre"
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: (1e-4, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}


# every op on the card, no CPU fallback run or counted (conftest.card_only)
pytestmark = pytest.mark.usefixtures("card_only")


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


def close(got, want, dtype=torch.float32):
    assert got.device.type == "spyre" and got.dtype == dtype
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=rtol, atol=atol)


def cpu_ref(fn, dtype, *tensors, **kw):
    """@fn on the CPU in fp32 from @dtype inputs, rounded to @dtype once."""
    return fn(*(t.float() if t is not None else None for t in tensors), **kw).to(dtype)


CONV2D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
    dict(padding="same", dilation=2),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("kw", CONV2D, ids=lambda kw: str(kw) or "default")
def test_conv2d(dtype, groups, kw):
    x = rand(2, 4, 9, 11, dtype=dtype)
    w = rand(8, 4 // groups, 3, 3, dtype=dtype, seed=1)
    b = rand(8, dtype=dtype, seed=2)
    want = cpu_ref(F.conv2d, dtype, x, w, b, groups=groups, **kw)
    close(F.conv2d(x.to(D), w.to(D), b.to(D), groups=groups, **kw), want, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_conv1d_audio_front_end_and_depthwise(dtype):
    # a wav2vec/Whisper-style strided front end, then a depthwise conv
    x = rand(2, 1, 64, dtype=dtype)
    w1, w2 = rand(8, 1, 10, dtype=dtype, seed=3), rand(8, 1, 3, dtype=dtype, seed=4)
    want = cpu_ref(F.conv1d, dtype, x, w1, None, stride=5)
    got = F.conv1d(x.to(D), w1.to(D), stride=5)
    close(got, want, dtype)
    close(F.conv1d(got, w2.to(D), padding=1, groups=8),
          cpu_ref(F.conv1d, dtype, got.cpu(), w2, None, padding=1, groups=8), dtype)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(3, 2), dilation=(1, 2), groups=2),
                                dict(padding=2)], ids=str)
def test_conv_transpose2d(kw):
    x = rand(2, 4, 5, 6)
    w = rand(4, 3, 3, 4, seed=5)
    b = rand(3 * kw.get("groups", 1), seed=6)
    close(F.conv_transpose2d(x.to(D), w.to(D), b.to(D), **kw),
          F.conv_transpose2d(x, w, b, **kw))


def test_conv_transpose1d():
    x, w = rand(2, 4, 7), rand(4, 2, 4, seed=7)
    close(F.conv_transpose1d(x.to(D), w.to(D), stride=3, padding=1),
          F.conv_transpose1d(x, w, stride=3, padding=1))


def test_conv_edges():
    w = rand(6, 4, 3, 3)
    # an empty batch gives an empty result of the right shape
    got = F.conv2d(torch.empty(0, 4, 8, 8).to(D), w.to(D))
    assert got.shape == (0, 6, 6, 6) and got.device.type == "spyre"
    # inf and NaN propagate as on the CPU
    x = rand(1, 4, 6, 6)
    x[0, 1, 2, 2] = float("inf")
    x[0, 2, 4, 4] = float("nan")
    want = F.conv2d(x, w)
    got = F.conv2d(x.to(D), w.to(D)).cpu()
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
    torch.testing.assert_close(got.nan_to_num(0, 0, 0), want.nan_to_num(0, 0, 0),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last], ids=str)
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_strides_are_the_cpus(fmt, groups):
    # Inductor compares a fallback's strides with the meta function's, and
    # views of the result depend on them: the layout must be the CPU's.
    x = rand(2, 4, 9, 9).contiguous(memory_format=fmt)
    w = rand(6, 4 // groups, 3, 3, seed=3)
    want = F.conv2d(x, w, stride=2, padding=1, groups=groups)
    got = F.conv2d(x.to(D), w.to(D), stride=2, padding=1, groups=groups)
    assert got.stride() == want.stride()
    close(got, want)


def test_conv_refusals_name_op_dtype_and_shape():
    x = torch.zeros(1, 2, 4, 4, 4)
    with pytest.raises(NotImplementedError, match=r"3-d convolution.*\[1, 2, 4, 4, 4\]"):
        F.conv3d(x.to(D), torch.zeros(2, 2, 1, 1, 1).to(D))
    with pytest.raises(RuntimeError, match="Kernel size can.t be greater than actual input size"):
        F.conv2d(torch.zeros(1, 1, 2, 2).to(D), torch.zeros(1, 1, 3, 3).to(D))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.conv2d(torch.zeros(1, 1, 4, 4).to(D), torch.zeros(1, 1, 3, 3, dtype=torch.half).to(D))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_batch_norm_eval(dtype):
    bn = torch.nn.BatchNorm2d(4).eval()
    with torch.no_grad():
        bn.running_mean.normal_(generator=torch.Generator().manual_seed(1))
        bn.running_var.uniform_(0.5, 2.0, generator=torch.Generator().manual_seed(2))
        bn.weight.normal_(generator=torch.Generator().manual_seed(3))
        bn.bias.normal_(generator=torch.Generator().manual_seed(4))
    x = rand(2, 4, 5, 6, dtype=dtype)
    with torch.no_grad():
        want = bn(x.float()).to(dtype)
        got = bn.to(dtype).to(D)(x.to(D))
    close(got, want, dtype)


def test_batch_norm_training_updates_running_statistics():
    cpu, card = torch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3).to(D)
    x = rand(8, 3, 5)
    for _ in range(2):
        want, got = cpu(x), card(x.to(D))
    close(got.detach(), want.detach())
    close(card.running_mean, cpu.running_mean)
    close(card.running_var, cpu.running_var)
    assert int(card.num_batches_tracked.cpu()) == 2
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        torch.nn.BatchNorm1d(3).to(D)(torch.zeros(1, 3).to(D))


MAXPOOL = [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=1, dilation=(2, 1)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2),
]


@pytest.mark.parametrize("kw", MAXPOOL, ids=str)
def test_max_pool2d_values_and_indices_exact(kw):
    x = rand(2, 3, 9, 11)
    x[0, 0, 1, 1] = x[0, 0, 1, 2] = float("nan")   # two NaNs in a window: the last one's index
    x[1, 1, :4, :4] = float("-inf")                 # windows of -inf alone
    x[1, 2, 5, 5] = x[1, 2, 5, 6] = 3.0             # ties: the first maximum's index
    want_v, want_i = F.max_pool2d(x, return_indices=True, **kw)
    got_v, got_i = F.max_pool2d(x.to(D), return_indices=True, **kw)
    assert torch.equal(got_v.cpu().isnan(), want_v.isnan())
    assert torch.equal(got_v.cpu().nan_to_num(0.0), want_v.nan_to_num(0.0))
    assert got_i.dtype == torch.int64 and torch.equal(got_i.cpu(), want_i)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_max_pool_dtypes_and_1d(dtype):
    x = rand(2, 4, 10, 10, dtype=dtype)
    assert torch.equal(F.max_pool2d(x.to(D), 3, 2, 1).cpu(), F.max_pool2d(x.float(), 3, 2, 1).to(dtype))
    y = rand(2, 4, 17, dtype=dtype)
    assert torch.equal(F.max_pool1d(y.to(D), 3, 2).cpu(), F.max_pool1d(y.float(), 3, 2).to(dtype))


AVGPOOL = [
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, divisor_override=3),
]


@pytest.mark.parametrize("kw", AVGPOOL, ids=str)
def test_avg_pool2d(kw):
    x = rand(2, 3, 9, 11)
    close(F.avg_pool2d(x.to(D), **kw), F.avg_pool2d(x, **kw))


@pytest.mark.parametrize("size", [(1, 1), (3, 4), (9, 11), (4, 7)], ids=str)
def test_adaptive_avg_pool2d(size):
    x = rand(2, 3, 9, 11)
    close(F.adaptive_avg_pool2d(x.to(D), size), F.adaptive_avg_pool2d(x, size))


def test_pool_refusals():
    with pytest.raises(NotImplementedError, match=r"max_pool2d.*Long.*\[1, 1, 4, 4\]"):
        F.max_pool2d(torch.zeros(1, 1, 4, 4, dtype=torch.long).to(D), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(torch.zeros(1, 1, 4, 4).to(D), 2, padding=2)
