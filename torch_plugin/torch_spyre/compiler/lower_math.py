# SPDX-License-Identifier: MIT
"""Lowerings of elementwise and reduction ops the op library has no
instruction for, written with graph ops it has: log1p, isnan, sign, trunc,
var, prod and flip (``prims.rev``, what Inductor decomposes flip into).

Each keeps PyTorch's edge values: NaN and infinities propagate as the CPU's
kernels do, -0.0 keeps its sign where PyTorch's result has it, an empty
input gives what PyTorch gives (prod: ones; var: NaN). Integers are exact.
"""
import math

import torch

from .lower import (BINARY, REDUCE, UNARY, Unsupported, _filled, _integral, ints, lowers,
                    result_dtype)

aten = torch.ops.aten
prims = torch.ops.prims


def _floating(dt):
    return dt.is_floating_point


@lowers(aten.log1p.default)
def _log1p(ctx, n):
    """log(1 + x) without the cancellation of 1 + x for small x (Goldberg's
    form): u = 1 + x; x where u == 1, else x * log(u) / (u - 1). x = +inf
    gives inf / inf there, so it is taken apart (log1p(inf) = inf)."""
    g, x = ctx.g, ctx.v(n.args[0])
    dt = result_dtype(n)
    if not _floating(dt):
        raise Unsupported(f"log1p of {ctx.dtype(x)} (integer inputs promote eagerly)")
    x = ctx.cast(x, dt)
    u = g.binary_scalar(BINARY["add"], x, 1.0, False)
    ratio = g.binary(BINARY["div"], g.unary(UNARY["log"], u),
                     g.binary_scalar(BINARY["sub"], u, 1.0, False))
    y = g.binary(BINARY["mul"], x, ratio)
    y = g.where(g.binary_scalar(BINARY["eq"], u, 1.0, False), x, y)
    return g.where(g.binary_scalar(BINARY["eq"], x, math.inf, False), x, y)


@lowers(aten.isnan.default)
def _isnan(ctx, n):
    """x != x: true for NaN only (integers and bools: never)."""
    x = ctx.v(n.args[0])
    return ctx.g.binary(BINARY["ne"], x, x)


@lowers(aten.sign.default)
def _sign(ctx, n):
    """(x > 0) - (x < 0) in the result dtype: 0 for +-0.0 and NaN, as the
    CPU kernel gives; a bool is itself."""
    x, dt = ctx.v(n.args[0]), result_dtype(n)
    if dt == torch.bool:
        return x
    g = ctx.g
    pos = ctx.cast(g.binary_scalar(BINARY["gt"], x, 0.0, False), dt)
    neg = ctx.cast(g.binary_scalar(BINARY["lt"], x, 0.0, False), dt)
    return g.binary(BINARY["sub"], pos, neg)


@lowers(aten.trunc.default)
def _trunc(ctx, n):
    """Rounding toward zero through an int64 conversion, for |x| < 2^23
    (float32's and the half types' first power of two with no fraction:
    beyond it, and for inf and NaN, x is its own truncation). A zero result
    takes x's sign (trunc(-0.5) is -0.0) from x * 0."""
    x, dt = ctx.v(n.args[0]), result_dtype(n)
    if _integral(dt):
        return x
    g = ctx.g
    r = ctx.cast(g.cast(x, torch.int64), dt)
    r = g.where(g.binary_scalar(BINARY["eq"], r, 0.0, False),
                g.binary_scalar(BINARY["mul"], x, 0.0, False), r)
    small = g.binary_scalar(BINARY["lt"], g.unary(UNARY["abs"], x), float(2 ** 23), False)
    return g.where(small, r, x)


def _dims(dims, rank):
    if dims is None:
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return sorted({d % (rank or 1) for d in dims}) if dims else list(range(rank))


@lowers(aten.var.correction)
def _var(ctx, n):
    """sum((x - mean)^2) / (N - correction), two passes as the CPU's
    (Welford's) result up to rounding; N - correction <= 0 divides by
    zero as PyTorch does (inf, or NaN for an empty or constant input)."""
    g, x = ctx.g, ctx.v(n.args[0])
    dt = result_dtype(n)
    if not _floating(dt):
        raise Unsupported(f"var of {dt}")
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    correction = n.kwargs.get("correction")
    correction = 1 if correction is None else correction
    keepdim = n.kwargs.get("keepdim", False)
    x = ctx.cast(x, dt)
    shape = ctx.shape(x)
    if not shape:
        x, shape = g.reshape(x, [1]), [1]
    dims = _dims(dims, len(shape))
    count = math.prod(shape[d] for d in dims)
    mean = g.reduce_dims(REDUCE["sum"], x, dims, True)
    mean = g.binary_scalar(BINARY["div"], mean, float(count), False) if count else \
        g.binary_scalar(BINARY["mul"], mean, math.nan, False)
    dev = g.binary(BINARY["sub"], x, mean)
    ss = g.reduce_dims(REDUCE["sum"], g.binary(BINARY["mul"], dev, dev), dims, bool(keepdim))
    out = g.binary_scalar(BINARY["div"], ss, float(max(0, count - correction)), False)
    want = ints(n.meta["val"].shape)
    return out if ctx.shape(out) == want else g.reshape(out, want)


def _product(ctx, x, dim):
    """The product of @x along @dim (kept, size 1): the halves multiplied
    pairwise until one row is left, log2(n) steps; an odd row out waits
    for the next step. Exact for integers (wrapping as the CPU's int64
    product does); floats are rounded in another order than the CPU's
    sequential loop."""
    g = ctx.g
    size = ctx.shape(x)[dim]
    while size > 1:
        half = size // 2
        y = g.binary(BINARY["mul"], g.slice(x, dim, 0, half), g.slice(x, dim, half, 2 * half))
        x = g.cat([y, g.slice(x, dim, 2 * half, size)], dim) if size % 2 else y
        size = half + size % 2
    return x


@lowers(aten.prod.default, aten.prod.dim_int)
def _prod(ctx, n):
    g, x = ctx.g, ctx.v(n.args[0])
    dt = result_dtype(n)
    x = ctx.cast(x, dt)  # bools and small integers multiply in int64
    want = ints(n.meta["val"].shape)
    shape = ctx.shape(x)
    if not math.prod(shape):  # an empty input (or an empty rest): ones
        return _filled(ctx, n, 1)
    if n.target is aten.prod.default or not shape:  # all elements (a 0-d: itself)
        x, dim = g.reshape(g.contiguous(x), [math.prod(shape)]), 0
    else:
        dim = n.args[1] % len(shape)
    out = _product(ctx, x, dim)
    return out if ctx.shape(out) == want else g.reshape(g.contiguous(out), want)


@lowers(prims.rev.default, aten.flip.default)
def _flip(ctx, n):
    """x reversed along each dim of the list: a gather with a descending
    index per dim."""
    g, x = ctx.g, ctx.v(n.args[0])
    shape = ctx.shape(x)
    if not shape or not math.prod(shape):
        return g.contiguous(x)
    for d in sorted({d % len(shape) for d in n.args[1]}):  # () flips nothing
        size = shape[d]
        if size == 1:
            continue
        view = [1] * len(shape)
        view[d] = size
        idx = g.reshape(g.arange(float(size - 1), -1.0, size, torch.int64), view)
        x = g.gather(x, d, g.contiguous(g.expand(idx, shape)))
    return g.contiguous(x)
