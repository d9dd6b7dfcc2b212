# SPDX-License-Identifier: MIT
"""Every unary and binary row of libspyre's op table that PyTorch names
(torch_spyre.op_table), against PyTorch's own CPU kernel of that name: its
functional, in-place and out= forms eagerly (all made from the row by
csrc/ops_table.cpp; a binary row's Tensor and Scalar overloads) and, for
unary rows, its lowering under torch.compile, on the card (a CPU fallback
fails). A new row is tested here without a line of its own."""
import pytest
import torch

import torch_spyre.compiler as spyre_compiler
from torch_spyre import op_table
from torch_spyre.compiler import lower

from optest import DEV, FLOATS, assert_close, on_card, rand

UNARY = [r for r in op_table.rows("unary", torch_only=True)]
FLOAT_UNARY = [r.name for r in UNARY if r.result == "same" and "float32" in r.dtypes]
BOOL_UNARY = [r.name for r in UNARY if r.result == "bool"]
# rows the card computes on int32/int64 (exactly, its integer mode)
INT_UNARY = [r.name for r in UNARY if "int64" in r.dtypes and r.result == "same"]
# inputs inside every float row's domain (log, sqrt, rsqrt, reciprocal) and
# across zero (NaN where the CPU gives NaN)
RANGES = [(0.1, 3.0), (-3.0, 3.0)]


def forms(name):
    """aten::<name>'s functional, in-place and out= overloads (None where
    PyTorch defines none): the operators themselves, as the rows name them."""
    aten = torch.ops.aten
    inplace = getattr(aten, name + "_").default if hasattr(aten, name + "_") else None
    out = getattr(aten, name).out if "out" in getattr(aten, name).overloads() else None
    return getattr(aten, name).default, inplace, out


BINARY = [r.name for r in op_table.rows("binary", torch_only=True) if "float32" in r.dtypes]
INT_BINARY = [r.name for r in op_table.rows("binary", torch_only=True) if "int64" in r.dtypes]


def overload(packet, *names):
    """The first of the overloads @names that @packet has, else None."""
    return next((getattr(packet, n) for n in names if n in packet.overloads()), None)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_row_forms(name, dtype):
    aten = torch.ops.aten
    packet = getattr(aten, name)
    inplace = getattr(aten, name + "_", None)
    a = rand((4, 6), dtype, -2, 2)
    b = rand((6,), dtype, 0.5, 2)  # broadcast; away from 0 for div
    b[1] = a[0, 1]                  # an equal pair for the comparisons
    f = overload(packet, "Tensor", "default")
    with on_card():
        want = f(a, b)
        assert_close(f(a.to(DEV), b.to(DEV)), want, scale=2)
        if overload(packet, "Scalar"):
            assert_close(packet.Scalar(a.to(DEV), 1.5), packet.Scalar(a, 1.5), scale=2)
        if inplace is not None:
            g = overload(inplace, "Tensor", "default")
            x = a.to(DEV)
            assert g(x, b.to(DEV)) is x
            assert_close(x, g(a.clone(), b), scale=2)
            if overload(inplace, "Scalar"):
                x = a.to(DEV)
                assert_close(inplace.Scalar(x, 1.5), inplace.Scalar(a.clone(), 1.5), scale=2)
        out_form = overload(packet, "out", "Tensor_out")
        if out_form:
            out = torch.empty(0, device=DEV, dtype=want.dtype)
            assert out_form(a.to(DEV), b.to(DEV), out=out) is out
            assert_close(out, want, scale=2)


def int_operands(dtype):
    """Values beyond 2^24 and 2^32 (int64) or near the int32 bounds, and
    small positive ones (shift amounts, divisors)."""
    big = 2 ** 40 if dtype == torch.int64 else 2 ** 28
    g = torch.Generator().manual_seed(5)
    a = torch.randint(-big, big, (4, 6), generator=g, dtype=torch.int64).to(dtype)
    a[0, 0] = torch.iinfo(dtype).min
    a[0, 1] = torch.iinfo(dtype).max
    b = torch.randint(1, 40, (6,), generator=g, dtype=torch.int64).to(dtype)
    b[2] = -b[2]
    return a, b


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("name", INT_BINARY)
def test_int_binary_row_forms(name, dtype):
    """Integer rows: bit-exact against the CPU, in each form."""
    aten = torch.ops.aten
    packet = getattr(aten, name)
    inplace = getattr(aten, name + "_", None)
    a, b = int_operands(dtype)
    f = overload(packet, "Tensor", "default")
    with on_card():
        want = f(a, b)
        assert torch.equal(f(a.to(DEV), b.to(DEV)).cpu(), want)
        if overload(packet, "Scalar"):
            assert torch.equal(packet.Scalar(a.to(DEV), 3).cpu(), packet.Scalar(a, 3))
        if inplace is not None and want.dtype == dtype:
            g = overload(inplace, "Tensor", "default")
            x = a.to(DEV)
            assert g(x, b.to(DEV)) is x
            assert torch.equal(x.cpu(), want)
        out_form = overload(packet, "out", "Tensor_out")
        if out_form:
            out = torch.empty(0, device=DEV, dtype=want.dtype)
            assert out_form(a.to(DEV), b.to(DEV), out=out) is out
            assert torch.equal(out.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("name", INT_UNARY)
def test_int_unary_row_forms(name, dtype):
    f, inplace, out_form = forms(name)
    a, _ = int_operands(dtype)
    with on_card():
        assert torch.equal(f(a.to(DEV)).cpu(), f(a))
        assert torch.equal(f(a.to(DEV).t()).cpu(), f(a.t()))
        if inplace:
            x = a.to(DEV)
            assert inplace(x) is x
            assert torch.equal(x.cpu(), f(a))
        if out_form:
            out = torch.empty(0, device=DEV, dtype=dtype)
            assert out_form(a.to(DEV), out=out) is out
            assert torch.equal(out.cpu(), f(a))


def test_table_reaches_python():
    names = {r.name for r in op_table.ROWS}
    assert {"sin", "logical_not", "maximum", "amax"} <= names
    assert lower.UNARY["sin"] != lower.UNARY["cos"]
    for r in op_table.ROWS:
        assert r.dtypes and r.iface >= (1, 0), r


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("lo,hi", RANGES, ids=str)
@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_row_three_forms(name, lo, hi, dtype):
    f, inplace, out_form = forms(name)
    a = rand((3, 7, 5), dtype, lo, hi)
    with on_card():
        assert_close(f(a.to(DEV)), f(a), scale=2)
        # a strided view: the kernel takes any strides
        assert_close(f(a.to(DEV).transpose(0, 2)), f(a.transpose(0, 2)), scale=2)
        if inplace:
            x = a.to(DEV)
            assert inplace(x) is x
            assert_close(x, inplace(a.clone()), scale=2)
        if out_form:
            out = torch.empty(0, device=DEV, dtype=dtype)  # resized by the op
            assert out_form(a.to(DEV), out=out) is out
            assert_close(out, f(a), scale=2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("name", BOOL_UNARY)
def test_bool_row_three_forms(name, dtype):
    f, inplace, out_form = forms(name)
    a = (rand((4, 6), torch.float32, -2, 2) > 0.5).to(dtype) if dtype == torch.bool else \
        rand((4, 6), torch.float32, -2, 2).round().to(dtype)
    with on_card():
        assert_close(f(a.to(DEV)), f(a))
        x = a.to(DEV)
        inplace(x)
        assert_close(x, inplace(a.clone()))
        out = torch.empty(4, 6, device=DEV, dtype=torch.bool)
        out_form(a.to(DEV), out=out)
        assert_close(out, f(a))


@pytest.mark.parametrize("name", FLOAT_UNARY + BOOL_UNARY)
def test_row_lowers_without_a_graph_break(name):
    torch._dynamo.reset()
    spyre_compiler.reset_stats()
    f = forms(name)[0]
    a = rand((6, 5), torch.float32, 0.1, 3.0)
    compiled = torch.compile(lambda t: f(t * 2.0), backend="spyre")
    with on_card():
        got = compiled(a.to(DEV))
    st = spyre_compiler.stats()
    assert st["graph_breaks"] == [] and st["eager_nodes"] == 0, st
    assert_close(got, f(a * 2.0), scale=2)


def test_unsupported_dtype_is_the_named_fallback():
    """A dtype outside the row's (int32 sin) takes the counted CPU fallback,
    which error mode refuses naming the op."""
    x = torch.arange(4, dtype=torch.int32).to(DEV)
    torch.spyre.set_fallback_mode("error")
    try:
        with pytest.raises(NotImplementedError, match="aten::sin"):
            torch.sin(x)
    finally:
        torch.spyre.set_fallback_mode("warn")
