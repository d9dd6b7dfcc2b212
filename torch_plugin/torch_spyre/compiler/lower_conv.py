# SPDX-License-Identifier: MIT
"""Convolution and max pooling in a compiled graph (lowerings for lower.py).

The op library's graph has no convolution, so a convolution becomes the
im2col matrix product the eager kernel runs (csrc/ops_conv.cpp), written
with graph ops: the input is padded (a cat with zeros), each kernel tap is
a window of it (slices; a stride is a reshape that splits the dim into
[out, stride] and keeps index 0), the taps are stacked into the window
matrix [N*OH*OW, C*KH*KW] and one matmul with the weights [C*KH*KW, O]
gives the result, summed in fp32 inside the matmul and rounded once, as
eager. A patch embedding (stride == kernel, no padding: ViT) skips the taps:
its window matrix is one reshape and permute of the input. Max pooling
takes the same windows (padded with -inf) and reduces them with maximum,
which propagates NaN as PyTorch's max pooling does.

conv1d is conv2d over a height of 1. Transposed convolutions and max
pooling whose indices are used, or with ceil_mode, stay eager kernels.
"""
import math
import operator

import torch

from .lower import BINARY, Unsupported, ints, lowers, result_dtype

aten = torch.ops.aten

# the window matrix of one convolution holds this many elements at most
# (beyond it the eager kernel's per-image path is the better schedule)
MAX_WINDOW_ELEMS = 1 << 24


def _fill(ctx, shape, value, dt):
    """A constant tensor: an arange of step 0 (inf added to zeros)."""
    n = math.prod(shape)
    flat = ctx.g.arange(0.0 if math.isinf(value) else float(value), 0.0, n, torch.float32)
    if math.isinf(value):
        flat = ctx.g.binary_scalar(BINARY["add"], flat, value, False)
    return ctx.cast(ctx.g.reshape(flat, shape), dt)


def _pad(ctx, x, dim, before, after, value):
    """@x with @before and @after elements of @value added along @dim."""
    if not before and not after:
        return x
    shape, dt = ctx.shape(x), ctx.dtype(x)
    parts = []
    if before:
        parts.append(_fill(ctx, shape[:dim] + [before] + shape[dim + 1:], value, dt))
    parts.append(x)
    if after:
        parts.append(_fill(ctx, shape[:dim] + [after] + shape[dim + 1:], value, dt))
    return ctx.g.cat(parts, dim)


def _window(ctx, x, dim, start, count, step):
    """Elements start + i * step (i < count) of @x along @dim; @x holds at
    least start + count * step of them."""
    if step == 1:
        return ctx.g.slice(x, dim, start, start + count)
    s = ctx.g.contiguous(ctx.g.slice(x, dim, start, start + count * step))
    shape = ctx.shape(s)
    split = ctx.g.reshape(s, shape[:dim] + [count, step] + shape[dim + 1:])
    one = ctx.g.contiguous(ctx.g.slice(split, dim + 1, 0, 1))
    return ctx.g.reshape(one, shape[:dim] + [count] + shape[dim + 1:])


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _padded(ctx, x, k, s, p, d, out, value):
    """@x [N, C, H, W] padded for the windows of a k/s/p/d kernel with
    @out outputs per dim: p before, and after it enough for the last
    window's stride reshape (at most s - 1 more than p)."""
    for i, dim in enumerate((2, 3)):
        size = ctx.shape(x)[dim]
        after = max(p[i], (k[i] - 1) * d[i] + out[i] * s[i] - size - p[i])
        x = _pad(ctx, x, dim, p[i], after, value)
    return x


def _taps(ctx, xp, k, s, d, out):
    """The k[0] * k[1] windows of padded @xp, each [N, C, OH, OW]."""
    taps = []
    for i in range(k[0]):
        rows = _window(ctx, xp, 2, i * d[0], out[0], s[0])
        for j in range(k[1]):
            taps.append(ctx.g.contiguous(_window(ctx, rows, 3, j * d[1], out[1], s[1])))
    return taps


def _window_matrix(ctx, x, k, s, p, d, out):
    """[N*OH*OW, C*KH*KW] (columns in the weights' order: c, kh, kw)."""
    n, c, h, w = ctx.shape(x)
    if list(s) == list(k) and not any(p) and list(d) == [1, 1]:
        # a patch embedding: non-overlapping windows, one permute
        x = ctx.g.slice(ctx.g.slice(x, 2, 0, out[0] * k[0]), 3, 0, out[1] * k[1])
        x = ctx.g.reshape(ctx.g.contiguous(x), [n, c, out[0], k[0], out[1], k[1]])
        x = ctx.g.contiguous(ctx.g.permute(x, [0, 2, 4, 1, 3, 5]))
        return ctx.g.reshape(x, [n * out[0] * out[1], c * k[0] * k[1]])
    taps = _taps(ctx, _padded(ctx, x, k, s, p, d, out, 0.0), k, s, d, out)
    t = len(taps)
    stacked = taps[0] if t == 1 else ctx.g.cat(
        [ctx.g.reshape(a, [n, c, 1, out[0] * out[1]]) for a in taps], 2)
    stacked = ctx.g.reshape(stacked, [n, c, t, out[0] * out[1]])
    cols = ctx.g.contiguous(ctx.g.permute(stacked, [0, 3, 1, 2]))
    return ctx.g.reshape(cols, [n * out[0] * out[1], c * t])


def _pairs(v, rank):
    v = ints(v if isinstance(v, (list, tuple)) else [v])
    return v * rank if len(v) == 1 else v


@lowers(aten.convolution.default)
def _convolution(ctx, n):
    x_n, w_n, b_n, stride, padding, dilation, transposed, _, groups = n.args[:9]
    if transposed:
        raise Unsupported("a transposed convolution")
    dt = result_dtype(n)
    if not dt.is_floating_point:
        raise Unsupported(f"a convolution of {dt}")
    x, w = ctx.v(x_n), ctx.v(w_n)
    xs, ws = ctx.shape(x), ctx.shape(w)
    rank = len(xs) - 2
    if rank not in (1, 2) or len(ws) != rank + 2:
        raise Unsupported(f"a {rank}-d convolution")
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r}")
    s, p, d = (_pairs(v, rank) for v in (stride, padding, dilation))
    if rank == 1:  # over a height of 1
        x = ctx.g.reshape(x, [xs[0], xs[1], 1, xs[2]])
        w = ctx.g.reshape(w, [ws[0], ws[1], 1, ws[2]])
        s, p, d = [1] + s, [0] + p, [1] + d
    N, C, H, W = ctx.shape(x)
    O, Cg, KH, KW = ctx.shape(w)
    k = [KH, KW]
    out = [_out_size(H, KH, s[0], p[0], d[0]), _out_size(W, KW, s[1], p[1], d[1])]
    if min(out) <= 0:
        raise Unsupported("a kernel larger than the padded input")
    if N * out[0] * out[1] * Cg * KH * KW > MAX_WINDOW_ELEMS:
        raise Unsupported("a window matrix beyond the lowering's size limit")
    if N == 0 or C == 0 or 0 in out:
        raise Unsupported("an empty convolution")
    g = int(groups)
    og = O // g
    results = []
    for gi in range(g):
        xg = x if g == 1 else ctx.g.slice(x, 1, gi * Cg, (gi + 1) * Cg)
        wg = w if g == 1 else ctx.g.slice(w, 0, gi * og, (gi + 1) * og)
        cols = _window_matrix(ctx, xg, k, s, p, d, out)
        wm = ctx.g.transpose(ctx.g.reshape(ctx.g.contiguous(wg), [og, Cg * KH * KW]), 0, 1)
        y = ctx.g.matmul(cols, ctx.g.contiguous(wm))            # [N*OH*OW, O/g]
        if b_n is not None:
            b = ctx.v(b_n)
            if g != 1:
                b = ctx.g.slice(b, 0, gi * og, (gi + 1) * og)
            y = ctx.g.binary(BINARY["add"], y, ctx.g.contiguous(b))
        y = ctx.g.transpose(ctx.g.reshape(y, [N, out[0] * out[1], og]), 1, 2)
        results.append(ctx.g.reshape(ctx.g.contiguous(y), [N, og] + out))
    y = results[0] if g == 1 else ctx.g.cat(results, 1)
    y = ctx.cast(y, dt)
    return ctx.g.reshape(y, [N, O, out[1]]) if rank == 1 else y


@lowers(aten.max_pool2d_with_indices.default)
def _max_pool2d(ctx, n):
    x_n = n.args[0]
    args = list(n.args) + [None] * (6 - len(n.args))
    k = _pairs(args[1], 2)
    s = _pairs(args[2] if args[2] else k, 2)
    p = _pairs(args[3] if args[3] is not None else 0, 2)
    d = _pairs(args[4] if args[4] is not None else 1, 2)
    if args[5] or n.kwargs.get("ceil_mode"):
        raise Unsupported("max pooling with ceil_mode")
    if any(u.target is operator.getitem and u.args[1] != 0 for u in n.users):
        raise Unsupported("max pooling's indices are used")
    x = ctx.v(x_n)
    xs = ctx.shape(x)
    if len(xs) == 3:
        x = ctx.g.reshape(x, [1] + xs)
    dt = ctx.dtype(x)
    if not dt.is_floating_point:
        raise Unsupported(f"max pooling of {dt}")
    N, C, H, W = ctx.shape(x)
    out = [_out_size(H, k[0], s[0], p[0], d[0]), _out_size(W, k[1], s[1], p[1], d[1])]
    if min(out) <= 0 or N * C == 0:
        raise Unsupported("an empty max pooling")
    taps = _taps(ctx, _padded(ctx, x, k, s, p, d, out, -math.inf), k, s, d, out)
    y = taps[0]
    for t in taps[1:]:
        y = ctx.g.binary(BINARY["maximum"], y, t)
    y = ctx.g.contiguous(y)
    if len(xs) == 3:
        y = ctx.g.reshape(y, [C] + out)
    return (y, None)
