# SPDX-License-Identifier: MIT
"""Elementwise device kernels (csrc/ops_pointwise.cpp) against PyTorch's CPU
kernels, in the fallback's error mode: a CPU fallback fails the test."""
import pytest
import torch

from optest import DEV, FLOATS, assert_close, on_card, rand

BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum,
}
COMPARE = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
           "ge": torch.ge}
# shapes of the two operands: 0-sized, 1 element, odd sizes, broadcasting
SHAPES = [((0,), (0,)), ((1,), (1,)), ((7,), (7,)), ((3, 5), (5,)), ((2, 1, 3), (4, 1)),
          ((65, 33), (65, 1)), ((), (3,))]


def pair(sa, sb, dtype):
    a = rand(sa, dtype)
    b = rand(sb, dtype, 0.5, 2.0)  # away from 0: div
    return a, b


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, shapes, dtype):
    a, b = pair(*shapes, dtype)
    f = BINARY[name]
    with on_card():
        assert_close(f(a.to(DEV), b.to(DEV)), f(a, b))
        assert_close(f(b.to(DEV), a.to(DEV)) if name != "div" else f(a.to(DEV), b.to(DEV)),
                     f(b, a) if name != "div" else f(a, b))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_scalars_and_alpha(dtype):
    a = rand((4, 9), dtype)
    x = a.to(DEV)
    with on_card():
        assert_close(x + 2.5, a + 2.5)
        assert_close(3 - x, 3 - a)          # rsub
        assert_close(torch.rsub(x, x * 2, alpha=3), torch.rsub(a, a * 2, alpha=3))
        assert_close(x * 0.5, a * 0.5)
        assert_close(x / 3, a / 3)
        assert_close(1 / (x.abs() + 1), 1 / (a.abs() + 1))
        assert_close(torch.add(x, x, alpha=2), torch.add(a, a, alpha=2))
        assert_close(torch.sub(x, 1.5, alpha=-2), torch.sub(a, 1.5, alpha=-2))
        assert_close(x + torch.tensor(1.25), a + torch.tensor(1.25))   # 0-dim CPU tensor
        assert_close(torch.tensor(2.0) * x, torch.tensor(2.0) * a)
        assert_close(torch.div(x, 4.0, rounding_mode=None), torch.div(a, 4.0, rounding_mode=None))


def test_type_promotion():
    h, f = rand((3, 4), torch.float16), rand((4,), torch.float32)
    b = rand((3, 4), torch.bfloat16)
    with on_card():
        assert_close(h.to(DEV) + f.to(DEV), h + f)         # -> fp32
        assert_close(h.to(DEV) * b.to(DEV), h * b)         # -> fp32
        assert_close(h.to(DEV) > f.to(DEV), h > f)
        out = torch.empty(3, 4, device=DEV)                # fp16 inputs, fp32 out=
        torch.mul(h.to(DEV), h.to(DEV), out=out)
        assert_close(out, (h * h).float(), scale=2)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_non_contiguous(dtype):
    a = rand((6, 10), dtype)
    b = rand((10, 6), dtype)
    x, y = a.to(DEV), b.to(DEV)
    with on_card():
        assert_close(x[:, ::2] + y.t()[:, 1::2], a[:, ::2] + b.t()[:, 1::2])
        assert_close(torch.exp(y.t()), torch.exp(b.t()), scale=2)
        assert_close(x.t() * 3, a.t() * 3)
        assert_close(x.expand(2, 6, 10) - x[0], a.expand(2, 6, 10) - a[0])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_inplace_and_out(dtype):
    a, b = rand((5, 7), dtype), rand((7,), dtype, 0.5, 2)
    x = a.to(DEV)
    with on_card():
        x.add_(b.to(DEV), alpha=2)
        ref = a.clone().add_(b, alpha=2)
        assert_close(x, ref)
        x.mul_(3).sub_(1).div_(b.to(DEV))
        ref.mul_(3).sub_(1).div_(b)
        assert_close(x, ref, scale=2)
        v = x[:, 1:4]                       # in-place on a strided view
        v.mul_(-1)
        ref[:, 1:4].mul_(-1)
        assert_close(x, ref, scale=2)
        o = torch.empty(0, device=DEV, dtype=dtype)   # out= is resized
        torch.sub(x, b.to(DEV), out=o)
        assert_close(o, torch.sub(ref, b), scale=2)
        ot = torch.empty(7, 5, device=DEV, dtype=dtype).t()   # a strided out=
        torch.maximum(x, b.to(DEV), out=ot)
        assert_close(ot, torch.maximum(ref, b), scale=2)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x[0].add_(x)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", COMPARE)
def test_compare(name, dtype):
    a = rand((4, 6), dtype).round()
    b = rand((6,), dtype).round()
    f = COMPARE[name]
    x, y = a.to(DEV), b.to(DEV)
    with on_card():
        assert_close(f(x, y), f(a, b))
        assert_close(f(x, 1.0), f(a, 1.0))
        assert_close(f(x, 0.1), f(a, 0.1))  # the scalar rounds to the dtype, as on the CPU
        out = torch.empty(4, 6, device=DEV, dtype=torch.bool)
        f(x, y, out=out)
        assert_close(out, f(a, b))
        z = x.clone()
        getattr(z, name + "_")(y)           # in place: 0/1 in x's dtype
        assert_close(z, getattr(a.clone(), name + "_")(b))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.float16, torch.int32],
                         ids=str)
def test_logical(dtype):
    a = rand((3, 8), torch.float32).round().to(dtype)
    b = rand((8,), torch.float32).round().to(dtype)
    x, y = a.to(DEV), b.to(DEV)
    with on_card():
        assert_close(torch.logical_and(x, y), torch.logical_and(a, b))
        assert_close(torch.logical_or(x, y), torch.logical_or(a, b))
        assert_close(torch.logical_not(x), torch.logical_not(a))
        assert_close(~x.to(torch.bool), ~a.to(torch.bool))
        z = x.clone()
        z.logical_not_()
        assert_close(z, a.clone().logical_not_())


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_and_masked_fill(dtype):
    a, b = rand((4, 5), dtype), rand((5,), dtype)
    m = rand((4, 5), torch.float32) > 0
    x, y, c = a.to(DEV), b.to(DEV), m.to(DEV)
    with on_card():
        assert_close(torch.where(c, x, y), torch.where(m, a, b))
        assert_close(torch.where(c, x, 0.0), torch.where(m, a, 0.0))
        assert_close(torch.where(c[0], -1.5, y), torch.where(m[0], -1.5, b))
        assert_close(x.masked_fill(c, -7.0), a.masked_fill(m, -7.0))
        assert_close(x.masked_fill(c[:1], float("-inf")), a.masked_fill(m[:1], float("-inf")))
        assert_close(x.masked_fill(c, torch.tensor(3.5)), a.masked_fill(m, torch.tensor(3.5)))
        z = x.clone()
        z.masked_fill_(c, 0.25)
        assert_close(z, a.clone().masked_fill_(m, 0.25))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_clamp_pow(dtype):
    a = rand((3, 11), dtype, -3, 3)
    p = rand((3, 11), dtype, 0.1, 3)
    x, q = a.to(DEV), p.to(DEV)
    with on_card():
        assert_close(torch.clamp(x, -1, 0.5), torch.clamp(a, -1, 0.5))
        assert_close(torch.clamp(x, min=0.25), torch.clamp(a, min=0.25))
        assert_close(torch.clamp(x, max=-0.25), torch.clamp(a, max=-0.25))
        assert_close(torch.clamp_min(x, 0), torch.clamp_min(a, 0))
        assert_close(torch.clamp_max(x, 1), torch.clamp_max(a, 1))
        z = x.clone()
        z.clamp_(-2, 2)
        assert_close(z, a.clamp(-2, 2))
        for e in (0, 1, 2, 3, -1, -2):
            assert_close(x ** e, a ** e, scale=2)
        for e in (0.5, 1.7, -0.5):
            assert_close(q ** e, p ** e, scale=4)
        z = q.clone()
        z.pow_(2)
        assert_close(z, p ** 2)


UNARY = {
    "neg": (torch.neg, -3, 3), "abs": (torch.abs, -3, 3), "exp": (torch.exp, -3, 3),
    "log": (torch.log, 0.1, 5), "sqrt": (torch.sqrt, 0, 5), "rsqrt": (torch.rsqrt, 0.1, 5),
    "reciprocal": (torch.reciprocal, 0.5, 5), "tanh": (torch.tanh, -3, 3),
    "sigmoid": (torch.sigmoid, -5, 5), "relu": (torch.relu, -3, 3),
    "gelu": (torch.nn.functional.gelu, -4, 4),
    "gelu_tanh": (lambda t: torch.nn.functional.gelu(t, approximate="tanh"), -4, 4),
    "silu": (torch.nn.functional.silu, -4, 4),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(0,), (1,), (13,), (3, 7, 5)], ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, shape, dtype):
    f, lo, hi = UNARY[name]
    a = rand(shape, dtype, lo, hi)
    with on_card():
        assert_close(f(a.to(DEV)), f(a), scale=2)
        if len(shape) == 3:
            assert_close(f(a.to(DEV).transpose(0, 2)), f(a.transpose(0, 2)), scale=2)


@pytest.mark.parametrize("name", ["neg", "exp", "sigmoid", "relu", "sqrt"])
def test_unary_inplace_and_out(name):
    f = getattr(torch, name)
    a = rand((4, 6), torch.float16, 0.1, 3)
    with on_card():
        x = a.to(DEV)
        getattr(x, name + "_")()
        assert_close(x, getattr(a.clone(), name + "_")(), scale=2)
        if name != "relu":
            out = torch.empty(4, 6, device=DEV)            # fp32 out of fp16 input
            f(a.to(DEV), out=out)
            assert_close(out, f(a).float(), scale=2)


@pytest.mark.parametrize("name", ["sin", "cos", "erf"])
def test_card_function_or_named_error(name):
    """sin/cos/erf run on the card where the op library has them; else the
    refusal names the op (error mode), never a silent CPU run."""
    a = rand((5, 3), torch.float32)
    f = getattr(torch, name)
    with on_card():
        try:
            got = f(a.to(DEV))
        except NotImplementedError as e:
            assert name in str(e)
            return
        assert_close(got, f(a), scale=2)


def test_narrow_integer_arithmetic_runs_on_the_card():
    # int32/int64 run in the card's integer mode (test_ops_integer.py); int8
    # computes there too, widened to int32 and wrapped back: no fallback
    x = torch.arange(5, dtype=torch.int8).to(DEV)
    torch.spyre.reset_fallback_counts()
    before = torch.spyre.op_counts().get("add", 0)
    torch.spyre.set_fallback_mode("error")
    try:
        assert torch.equal((x + 125).cpu(), torch.arange(5, dtype=torch.int8) + 125)
    finally:
        torch.spyre.set_fallback_mode("warn")
    assert torch.spyre.fallback_counts().get("aten::add.Tensor", 0) == 0
    assert torch.spyre.op_counts().get("add", 0) == before + 1


def test_op_counts():
    before = torch.spyre.op_counts()
    x = torch.ones(3, device=DEV)
    with on_card():
        (x + x).relu_()
    after = torch.spyre.op_counts()
    assert after.get("add", 0) == before.get("add", 0) + 1
    assert after.get("relu_", 0) == before.get("relu_", 0) + 1
