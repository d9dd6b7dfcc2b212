# SPDX-License-Identifier: MIT
"""Mixture-of-experts routing in a compiled graph (lowerings for lower.py).

A MoE layer routes tokens with topk, sorts the (token, expert) pairs by
expert, counts them per expert (histc), runs each expert's matmul on its
rows (transformers' ``grouped_mm_fallback``) and puts the rows back in
order (an index_put of the inverse permutation). The op library's graph has
no sort, so these are written with ops it has, for the small sizes routing
works on (a few experts, a few thousand pairs):

- topk and sort rank every element by comparing it with every other along
  the dim (an n x n comparison, summed): rank i = how many elements come
  before it, ties broken by position (stable), NaN the largest as in
  PyTorch; the r-th output is the element of rank r. Exact (counts in fp32
  below 2^24), no arithmetic on the values themselves.
- histc counts with a [elements, bins] comparison, as the CPU bins them.
- grouped_mm_fallback computes every expert's product for every row and
  keeps, per row, its group's (rows past the last offset are zeros, as the
  fallback leaves them): E times the work of the grouped kernel, which is
  what the card's matmul unit is for at these sizes.
- index_put on the first dim: the last write of each row wins, as the CPU
  loop does (accumulate sums the writes).

Sizes beyond MAX_PAIRWISE elements stay eager kernels.
"""
import torch

from .lower import BINARY, NAMED, REDUCE, UNARY, Unsupported, ints, lowers, result_dtype

aten = torch.ops.aten
F32 = torch.float32
MAX_PAIRWISE = 1 << 22


def _b(ctx, name, a, b):
    return ctx.g.binary(BINARY[name], a, b)


def _iota(ctx, n, shape, dim):
    """0..n-1 as fp32 along @dim of @shape (broadcast elsewhere)."""
    one = [1] * len(shape)
    one[dim] = n
    return ctx.g.expand(ctx.g.reshape(ctx.g.arange(0.0, 1.0, n, F32), one), shape)


def _ranks(ctx, x, descending):
    """The stable sort position of each element of @x along its last dim,
    fp32, shape of @x; NaN sorts as the largest value."""
    shape = ctx.shape(x)
    lead, n = shape[:-1], shape[-1]
    if n * n * max(1, int(torch.tensor(lead).prod()) if lead else 1) > MAX_PAIRWISE:
        raise Unsupported(f"sorting {shape} on the card (beyond the pairwise limit)")
    sq = lead + [n, n]
    xi = ctx.g.expand(ctx.g.reshape(x, lead + [n, 1]), sq)   # element i (dim -2)
    xj = ctx.g.expand(ctx.g.reshape(x, lead + [1, n]), sq)   # element j (dim -1)
    before = _b(ctx, "gt" if descending else "lt", xj, xi)
    same = _b(ctx, "eq", xj, xi)
    if ctx.dtype(x).is_floating_point:
        ni, nj = _b(ctx, "ne", xi, xi), _b(ctx, "ne", xj, xj)
        first, last = (nj, ni) if descending else (ni, nj)
        # NaN is the largest: after everything ascending, before descending
        before = _b(ctx, "logical_or", before, _b(
            ctx, "logical_and", first, ctx.g.unary(UNARY["logical_not"], last)))
        same = _b(ctx, "logical_or", same, _b(ctx, "logical_and", ni, nj))
    lower = _b(ctx, "lt", _iota(ctx, n, sq, len(sq) - 1), _iota(ctx, n, sq, len(sq) - 2))
    before = _b(ctx, "logical_or", before, _b(ctx, "logical_and", same, lower))
    return ctx.g.reduce_dims(REDUCE["sum"], ctx.g.cast(before, F32), [len(sq) - 1], False)


def _by_rank(ctx, x, rank, count):
    """(values, int64 indices) of the elements of rank 0..count-1 of @x."""
    shape = ctx.shape(x)
    lead, n = shape[:-1], shape[-1]
    sq = lead + [count, n]
    hit = _b(ctx, "eq", ctx.g.expand(ctx.g.reshape(rank, lead + [1, n]), sq),
             _iota(ctx, count, sq, len(sq) - 2))
    pos = _b(ctx, "mul", ctx.g.cast(hit, F32), _iota(ctx, n, sq, len(sq) - 1))
    idx = ctx.g.cast(ctx.g.reduce_dims(REDUCE["sum"], pos, [len(sq) - 1], False), torch.int64)
    return ctx.g.gather(x, len(shape) - 1, idx), idx


def _last_dim(ctx, x, dim, fn):
    """@fn on @x with @dim moved last, its results moved back."""
    rank = len(ctx.shape(x))
    if rank == 0:
        raise Unsupported("a 0-d sort or topk")
    dim %= rank
    if dim != rank - 1:
        x = ctx.g.contiguous(ctx.g.transpose(x, dim, rank - 1))
    outs = fn(x)
    if dim != rank - 1:
        outs = tuple(ctx.g.contiguous(ctx.g.transpose(o, dim, rank - 1)) for o in outs)
    return outs


@lowers(aten.topk.default)
def _topk(ctx, n):
    args = list(n.args) + [-1, True, True][len(n.args) - 2:]
    k, dim, largest = args[1], n.kwargs.get("dim", args[2]), n.kwargs.get("largest", args[3])
    if not largest:
        raise Unsupported("topk of the smallest")
    x = ctx.v(n.args[0])
    if ctx.dtype(x) == torch.bool:
        raise Unsupported("topk of bool")
    k = ints([k])[0]
    return _last_dim(ctx, x, dim, lambda t: _by_rank(ctx, t, _ranks(ctx, t, True), k))


@lowers(aten.sort.default, aten.sort.stable)
def _sort(ctx, n):
    if n.target is aten.sort.stable:
        dim, desc = n.kwargs.get("dim", -1), n.kwargs.get("descending", False)
    else:
        args = list(n.args) + [-1, False][len(n.args) - 1:]
        dim, desc = n.kwargs.get("dim", args[1]), n.kwargs.get("descending", args[2])
    x = ctx.v(n.args[0])
    if ctx.dtype(x) == torch.bool:
        raise Unsupported("sorting bool")
    return _last_dim(ctx, x, dim,
                     lambda t: _by_rank(ctx, t, _ranks(ctx, t, bool(desc)), ctx.shape(t)[-1]))


@lowers(aten.histc.default)
def _histc(ctx, n):
    args = list(n.args) + [100, 0, 0][len(n.args) - 1:]
    bins, lo, hi = (n.kwargs.get(k, v) for k, v in zip(("bins", "min", "max"), args[1:4]))
    lo, hi = float(lo), float(hi)
    if hi <= lo:
        raise Unsupported("histc over the data's own range (min == max)")
    x = ctx.g.cast(ctx.v(n.args[0]), F32)
    size = int(torch.tensor(ctx.shape(x)).prod()) if ctx.shape(x) else 1
    if size * bins > MAX_PAIRWISE:
        raise Unsupported("histc beyond the pairwise limit")
    x = ctx.g.reshape(ctx.g.contiguous(x), [size, 1])
    inside = _b(ctx, "logical_and", ctx.g.binary_scalar(BINARY["ge"], x, lo, False),
                ctx.g.binary_scalar(BINARY["le"], x, hi, False))
    # as the CPU: (x - min) / (max - min) * bins, truncated; max in the last bin
    pos = ctx.g.binary_scalar(BINARY["sub"], x, lo, False)
    pos = ctx.g.binary_scalar(BINARY["div"], pos, hi - lo, False)
    pos = ctx.g.binary_scalar(BINARY["mul"], pos, float(bins), False)
    pos = ctx.g.clamp(pos, 0.0, float(bins))   # (outside: masked below)
    pos = ctx.g.cast(ctx.g.cast(pos, torch.int32), F32)   # truncated, as the CPU's cast
    pos = ctx.g.clamp(pos, 0.0, float(bins - 1))
    sq = [size, bins]
    hit = _b(ctx, "logical_and", _b(ctx, "eq", ctx.g.expand(pos, sq), _iota(ctx, bins, sq, 1)),
             ctx.g.expand(inside, sq))
    counts = ctx.g.reduce_dims(REDUCE["sum"], ctx.g.cast(hit, F32), [0], False)
    return ctx.g.cast(counts, result_dtype(n))


@lowers(aten.empty.memory_format, aten.empty_like.default)
def _empty(ctx, n):
    """Uninitialised memory: zeros are one of its values."""
    from .lower import _filled
    return _filled(ctx, n, 0)


def _grouped_mm_fallback(ctx, n):
    """transformers' grouped_mm_fallback(input [S, K], weight [E, K, N], offs [E])."""
    x, w, offs = (ctx.v(a) for a in n.args[:3])
    (s, k), (e, k2, nn) = ctx.shape(x), ctx.shape(w)
    if k != k2 or ctx.shape(offs) != [e]:
        raise Unsupported("grouped_mm_fallback with mismatched shapes")
    # the group of row r: how many offsets are <= r (E past the last one)
    rows = _iota(ctx, s, [s, e], 0)
    group = ctx.g.reduce_dims(REDUCE["sum"], ctx.g.cast(
        _b(ctx, "ge", rows, ctx.g.expand(ctx.g.reshape(ctx.g.cast(offs, F32), [1, e]), [s, e])),
        F32), [1], False)                                                  # [S]
    every = ctx.g.matmul(ctx.g.expand(ctx.g.reshape(x, [1, s, k]), [e, s, k]), w)  # [E, S, N]
    pick = ctx.g.cast(ctx.g.clamp(group, 0.0, float(e - 1)), torch.int64)
    pick = ctx.g.expand(ctx.g.reshape(pick, [1, s, 1]), [1, s, nn])
    out = ctx.g.reshape(ctx.g.gather(every, 0, ctx.g.contiguous(pick)), [s, nn])
    past = ctx.g.binary_scalar(BINARY["ge"], group, float(e), False)
    return ctx.g.masked_fill(out, ctx.g.expand(ctx.g.reshape(past, [s, 1]), [s, nn]), 0.0)


NAMED["transformers.grouped_mm_fallback.default"] = _grouped_mm_fallback


@lowers(aten.index_put.default)
def _index_put(ctx, n):
    args = list(n.args) + [False][len(n.args) - 3:]
    self_n, idx, vals_n, acc = args[:4]
    if len(idx) != 1 or idx[0] is None:
        raise Unsupported("index_put with more than one index tensor")
    x, i, v = ctx.v(self_n), ctx.v(idx[0]), ctx.v(vals_n)
    shape, dt = ctx.shape(x), result_dtype(n)
    if ctx.dtype(i) not in (torch.int32, torch.int64) or len(ctx.shape(i)) != 1:
        raise Unsupported("index_put with a mask or a multi-dim index")
    m, rows = ctx.shape(i)[0], shape[0]
    rest = shape[1:]
    if ctx.shape(v) != [m] + rest or m * rows > MAX_PAIRWISE:
        raise Unsupported("index_put with broadcast values or beyond the pairwise limit")
    fi = ctx.g.cast(i, F32)
    fi = ctx.g.where(ctx.g.binary_scalar(BINARY["lt"], fi, 0.0, False),
                     ctx.g.binary_scalar(BINARY["add"], fi, float(rows), False), fi)
    sq = [m, rows]
    hit = _b(ctx, "eq", ctx.g.expand(ctx.g.reshape(fi, [m, 1]), sq), _iota(ctx, rows, sq, 1))
    width = int(torch.tensor(rest).prod()) if rest else 1
    flat_x = ctx.g.reshape(ctx.g.contiguous(x), [rows, width])
    flat_v = ctx.g.reshape(ctx.g.contiguous(v), [m, width])
    if acc:
        add = ctx.g.matmul(ctx.g.transpose(ctx.g.cast(hit, ctx.dtype(v)), 0, 1), flat_v)
        return ctx.g.reshape(ctx.cast(_b(ctx, "add", flat_x, ctx.cast(add, ctx.dtype(flat_x))),
                                      dt), shape)
    # the last write wins: the largest i + 1 that hits each row (0: none)
    order = _b(ctx, "mul", ctx.g.cast(hit, F32),
               ctx.g.binary_scalar(BINARY["add"], _iota(ctx, m, sq, 0), 1.0, False))
    last = ctx.g.reduce_dims(REDUCE["amax"], order, [0], False)             # [rows]
    src = ctx.g.cast(ctx.g.clamp(ctx.g.binary_scalar(BINARY["sub"], last, 1.0, False),
                                 0.0, float(max(m - 1, 0))), torch.int64)
    table = flat_v if ctx.dtype(flat_v) in (torch.int32, torch.int64) else ctx.g.cast(flat_v, F32)
    got = ctx.cast(ctx.g.embedding(table, src), ctx.dtype(flat_x))
    keep = ctx.g.expand(ctx.g.reshape(ctx.g.binary_scalar(BINARY["gt"], last, 0.0, False),
                                      [rows, 1]), [rows, width])
    return ctx.g.reshape(ctx.cast(ctx.g.where(keep, got, flat_x), dt), shape)
