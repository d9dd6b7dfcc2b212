# SPDX-License-Identifier: MIT
"""ATen FX nodes -> the op library's graph (torch_spyre._C._Graph).

``LOWERINGS`` maps each ATen overload the graph compiler can take to a
function ``fn(ctx, node)`` returning the node's graph value (an int), a
tuple of them for multi-output ops, or a Python number for scalars. A
function raises ``Unsupported`` for arguments it cannot take; the op
library's graph calls raise ``torch_spyre._C.Unsupported`` (a
NotImplementedError) for what the card cannot run. Either way the node is
left to eager execution (a graph break with that reason): ``REFUSALS``.
Any other exception out of a lowering is a bug, not a refusal.
"""
import math
import operator

import torch

from .. import _C, op_table

aten = torch.ops.aten
UNARY = op_table.values("unary")
BINARY = op_table.values("binary")
REDUCE = op_table.values("reduce")

class _Table(dict):
    """ATen overload -> lowering; an op of another library, which exists
    only once that library is imported, is looked up by its name
    (``NAMED``: "namespace.op.overload", as str() of the overload)."""

    def __missing__(self, op):
        fn = NAMED.get(str(op)) if isinstance(op, torch._ops.OpOverload) else None
        if fn is None:
            raise KeyError(op)
        return fn

    def __contains__(self, op):
        return dict.__contains__(self, op) or (
            isinstance(op, torch._ops.OpOverload) and str(op) in NAMED)


LOWERINGS = _Table()
NAMED = {}
# ops whose result aliases their input (no data moves): an output made by
# one is copied contiguous before the recipe writes it out
VIEWS = set()


class Unsupported(Exception):
    """An argument combination the lowering does not take (message: why)."""


# what a lowering may raise to refuse a node (and nothing else may)
REFUSALS = (Unsupported, _C.Unsupported)


def lowers(*ops, view=False):
    def register(fn):
        for op in ops:
            LOWERINGS[op] = fn
            if view:
                VIEWS.add(op)
        return fn
    return register


class Context:
    """One graph being built: FX nodes -> graph values."""

    def __init__(self, graph):
        self.g = graph
        self.env = {}

    def v(self, arg):
        """The graph value (or Python scalar) of an FX argument."""
        if isinstance(arg, torch.fx.Node):
            val = self.env[arg]
            if val is None:
                raise Unsupported(f"{arg.name} has no value on the card")
            return val
        return arg

    def dtype(self, value):
        return self.g.info(value)[0]

    def shape(self, value):
        return self.g.info(value)[1]

    def cast(self, value, dtype):
        return value if self.dtype(value) == dtype else self.g.cast(value, dtype)


def result_dtype(node):
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor):
        raise Unsupported(f"{node.name} has no tensor metadata")
    return val.dtype


def ints(xs):
    for x in xs:
        if not isinstance(x, int):
            raise Unsupported(f"symbolic size {x}: the card compiles static shapes")
    return list(xs)


# ---- views -------------------------------------------------------------------

def resolved_shape(numel, shape):
    shape = ints(shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = numel // known if known else 0
    return shape


@lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default, view=True)
def _reshape(ctx, n):
    x = ctx.v(n.args[0])
    return ctx.g.reshape(x, resolved_shape(math.prod(ctx.shape(x)), n.args[1]))


@lowers(aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
        view=True)
def _resqueeze(ctx, n):
    return ctx.g.reshape(ctx.v(n.args[0]), ints(n.meta["val"].shape))


@lowers(aten.t.default, view=True)
def _t(ctx, n):
    x = ctx.v(n.args[0])
    return ctx.g.transpose(x, 0, 1) if len(ctx.shape(x)) == 2 else x


@lowers(aten.transpose.int, view=True)
def _transpose(ctx, n):
    x = ctx.v(n.args[0])
    if not ctx.shape(x):  # a 0-d tensor: dims 0 and -1 name itself
        return x
    return ctx.g.transpose(x, n.args[1], n.args[2])


@lowers(aten.permute.default, view=True)
def _permute(ctx, n):
    x = ctx.v(n.args[0])
    nd = len(ctx.shape(x))
    if not nd:  # a 0-d tensor: the empty permutation
        return x
    return ctx.g.permute(x, [d % nd for d in n.args[1]])


@lowers(aten.expand.default, view=True)
def _expand(ctx, n):
    x = ctx.v(n.args[0])
    shape, src = ints(n.args[1]), ctx.shape(x)
    lead = len(shape) - len(src)
    shape = [src[i - lead] if s == -1 else s for i, s in enumerate(shape)]
    return ctx.g.expand(x, shape)


@lowers(aten.slice.Tensor, view=True)
def _slice(ctx, n):
    x = ctx.v(n.args[0])
    dim, start, end, step = (list(n.args[1:]) + [0, None, None, 1][len(n.args) - 1:])[:4]
    if step != 1:
        raise Unsupported("slice with a step")
    size = ctx.shape(x)[dim]
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return ctx.g.slice(x, dim, start, end)


@lowers(aten.select.int, view=True)
def _select(ctx, n):
    x, dim, index = ctx.v(n.args[0]), n.args[1], n.args[2]
    shape = ctx.shape(x)
    dim %= len(shape)
    index %= shape[dim]
    s = ctx.g.slice(x, dim, index, index + 1)
    return ctx.g.reshape(s, shape[:dim] + shape[dim + 1:])


@lowers(aten.alias.default, aten.detach.default, view=True)
def _alias(ctx, n):
    return ctx.v(n.args[0])


@lowers(aten.clone.default, aten.lift_fresh_copy.default)
def _clone(ctx, n):
    return ctx.g.contiguous(ctx.v(n.args[0]))


@lowers(aten._to_copy.default)
def _to_copy(ctx, n):
    x = ctx.v(n.args[0])
    dev = n.kwargs.get("device")
    if dev is not None and torch.device(dev).type != "spyre":
        raise Unsupported(f"a copy to {dev}")
    return ctx.g.cast(x, result_dtype(n))


@lowers(torch.ops.prims.convert_element_type.default)
def _convert_element_type(ctx, n):
    """A dtype conversion as Inductor's decompositions write it."""
    return ctx.cast(ctx.v(n.args[0]), result_dtype(n))


# ---- matmul ------------------------------------------------------------------

_WIDENS = (torch.ops.prims.convert_element_type.default, aten._to_copy.default)
_B_VIEWS = (aten.t.default, aten.transpose.int, aten.permute.default)


def _int8_source(ctx, b, dtype):
    """The int8 value behind mm operand @b when @b is an int8 tensor widened
    to @dtype (views before or after the cast), else None. Weight-only
    int8 quantisation writes ``x @ w_int8.t().to(x.dtype)``: the card then
    reads the int8 bytes and widens them in the scratchpad (``matmul_w8``),
    half the LPDDR5 traffic of an fp16 weight; torchao's int8 x int8
    product (``out_dtype(mm, int32, a, b)``) reaches the graph as a product
    of two int8 tensors widened to int32, which the PE array's int8 mode
    computes exactly. The cast, left unused, is dropped from the graph."""
    chain, node = [], b
    while isinstance(node, torch.fx.Node) and node.target in _B_VIEWS:
        chain.append(node)
        node = node.args[0]
    if not isinstance(node, torch.fx.Node) or node.target not in _WIDENS:
        return None
    if node.target is aten._to_copy.default and node.kwargs.get("device") is not None:
        return None
    src = node.args[0]
    val = src.meta.get("val") if isinstance(src, torch.fx.Node) else None
    if (not isinstance(val, torch.Tensor) or val.dtype != torch.int8
            or result_dtype(node) != dtype):
        return None
    saved = {m: ctx.env[m] for m in [node] + chain}
    try:
        ctx.env[node] = ctx.v(src)
        for view in reversed(chain):  # innermost first, each over the int8 value
            ctx.env[view] = LOWERINGS[view.target](ctx, view)
        return ctx.env[b]
    finally:
        ctx.env.update(saved)


@lowers(aten.mm.default, aten.bmm.default)
def _mm(ctx, n):
    a = ctx.v(n.args[0])
    dtype = ctx.dtype(a)
    if dtype == torch.int32:
        a8, b8 = _int8_source(ctx, n.args[0], dtype), _int8_source(ctx, n.args[1], dtype)
        if a8 is not None and b8 is not None:
            return ctx.g.matmul(a8, b8)  # int8 x int8 -> int32, exact
    elif dtype.is_floating_point:
        w8 = _int8_source(ctx, n.args[1], dtype)
        if w8 is not None:
            return ctx.g.matmul_w8(a, w8)
    return ctx.g.matmul(a, ctx.v(n.args[1]))


@lowers(aten.addmm.default)
def _addmm(ctx, n):
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        raise Unsupported("addmm with beta or alpha")
    bias, a, b = (ctx.v(x) for x in n.args[:3])
    return ctx.g.binary(BINARY["add"], ctx.g.matmul(a, b), bias)


# ---- elementwise -------------------------------------------------------------

def _overloads(name, names):
    """The overloads @names of aten::@name that PyTorch defines."""
    packet = getattr(aten, name)
    return [getattr(packet, o) for o in names if o in packet.overloads()]


def _is(node, *targets):
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and \
        node.target in targets


def _rms_pattern(n):
    """(x, eps) when mul node @n is x * rsqrt(mean(x ** 2, -1, keepdim) + eps)
    over a float x (RMSNorm as Hugging Face's Llama writes it), else None."""
    if len(n.args) != 2 or n.kwargs:
        return None
    for x, r in (n.args, n.args[::-1]):
        if not _is(r, aten.rsqrt.default) or not isinstance(x, torch.fx.Node):
            continue
        add = r.args[0]
        if not _is(add, aten.add.Tensor, aten.add.Scalar) or add.kwargs.get("alpha", 1) != 1 \
                or not isinstance(add.args[1], (int, float)) or add.args[1] < 0:
            continue
        mean = add.args[0]
        if not _is(mean, aten.mean.dim) or mean.kwargs.get("dtype") is not None:
            continue
        val = x.meta.get("val")
        if val is None or not val.is_floating_point() or not val.dim() or \
                val.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            continue
        dims = mean.args[1] if len(mean.args) > 1 else mean.kwargs.get("dim")
        keep = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
        if dims is None or isinstance(dims, int):
            dims = [dims]
        if not keep or len(dims) != 1 or dims[0] not in (-1, val.dim() - 1):
            continue
        sq = mean.args[0]
        if not _is(sq, aten.pow.Tensor_Scalar) or sq.args[0] is not x or sq.args[1] != 2:
            continue
        if tuple(n.meta["val"].shape) != tuple(val.shape) or n.meta["val"].dtype != val.dtype:
            continue
        return x, float(add.args[1])
    return None


def _binary(row):
    name = row.name
    compare = row.result == "bool" and not row.truth

    def lower(ctx, n):
        rms = _rms_pattern(n) if name == "mul" else None
        if rms is not None:
            # one row kernel instead of a reduction, a [rows, 1] kernel and
            # a broadcast product, each through LPDDR5; the nodes it replaces
            # are left unused and dropped
            return ctx.g.rms_norm(ctx.v(rms[0]), -1, rms[1])
        a_node, b_node = (isinstance(x, torch.fx.Node) for x in n.args[:2])
        a, b = ctx.v(n.args[0]), ctx.v(n.args[1])
        alpha = n.kwargs.get("alpha", 1)
        out_dt = result_dtype(n)
        if not a_node and not b_node:
            raise Unsupported("an op on two Python numbers")
        if name in ("floor_divide", "remainder") and (b_node or b == 0):
            # by a tensor (or 0): eager checks the divisor and raises
            # ZeroDivisionError at the op; a failed card job would not
            raise Unsupported(f"{name} by a tensor (division by zero is checked eagerly)")
        if a_node and b_node:
            dt = torch.promote_types(ctx.dtype(a), ctx.dtype(b)) if compare else out_dt
            a, b = ctx.cast(a, dt), ctx.cast(b, dt)
            if alpha != 1:
                b = ctx.g.binary_scalar(BINARY["mul"], b, _scalar(alpha, dt), False)
            return ctx.g.binary(BINARY[name], a, b)
        node, scalar = (n.args[0], b) if a_node else (n.args[1], a)
        if not isinstance(scalar, (int, float, bool)) or (not a_node and alpha != 1):
            raise Unsupported(f"operand {scalar!r} with alpha {alpha}")
        if a_node:
            scalar = scalar * alpha
        # PyTorch's promotion with a Python number (an int tensor < 2.5 compares in float)
        dt = torch.result_type(node.meta["val"], scalar) if compare else out_dt
        return ctx.g.binary_scalar(BINARY[name], ctx.cast(ctx.v(node), dt),
                                   _scalar(scalar, dt), not a_node)
    return lower


def _integral(dt):
    return dt in (torch.int32, torch.int64, torch.bool)


def _scalar(v, dt):
    """A Python number as the op library's double: integers of an integer op
    exactly (the card's integer mode), else Unsupported."""
    if _integral(dt) and dt != torch.bool:
        if isinstance(v, float) and not v.is_integer():
            raise Unsupported(f"a fractional scalar {v} with {dt}")
        if abs(int(v)) > 2 ** 53:
            raise Unsupported(f"the scalar {v}: beyond what a double holds exactly")
        return float(int(v))
    return float(v)


# every binary row of the op table PyTorch names: its Tensor and Scalar
# overloads (div's rounding modes are other overloads, left to eager)
for _row in op_table.rows("binary", torch_only=True):
    lowers(*_overloads(_row.name, ("Tensor", "Scalar", "default")))(_binary(_row))
    if _row.name in ("bitwise_left_shift", "bitwise_right_shift"):
        # Python's x << y, x >> y
        op = "__lshift__" if _row.name == "bitwise_left_shift" else "__rshift__"
        lowers(*_overloads(op, ("Tensor", "Scalar")))(_binary(_row))


@lowers(aten.rsub.Scalar)
def _rsub(ctx, n):
    a, b = ctx.v(n.args[0]), n.args[1]
    alpha = n.kwargs.get("alpha", 1)
    if isinstance(b, torch.fx.Node):
        raise Unsupported("rsub of two tensors")
    if alpha != 1:
        a = ctx.g.binary_scalar(BINARY["mul"], a, float(alpha), False)
    dt = result_dtype(n)
    return ctx.g.binary_scalar(BINARY["sub"], ctx.cast(a, dt), _scalar(b, dt), True)


def _unary(name):
    def lower(ctx, n):
        return ctx.g.unary(UNARY[name], ctx.v(n.args[0]))
    return lower


for _row in op_table.rows("unary", torch_only=True):
    lowers(getattr(aten, _row.name).default)(_unary(_row.name))


@lowers(aten.gelu.default)
def _gelu(ctx, n):
    approximate = n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none")
    return ctx.g.unary(UNARY["gelu_tanh" if approximate == "tanh" else "gelu"], ctx.v(n.args[0]))


@lowers(aten.pow.Tensor_Scalar)
def _pow(ctx, n):
    if isinstance(n.args[1], torch.fx.Node):
        raise Unsupported("a tensor exponent")
    return ctx.g.pow_scalar(ctx.v(n.args[0]), float(n.args[1]))


@lowers(aten.clamp.default)
def _clamp(ctx, n):
    lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min")
    hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max")
    dt = result_dtype(n)  # a float bound on an integer tensor gives a float result
    return ctx.g.clamp(ctx.cast(ctx.v(n.args[0]), dt),
                       -math.inf if lo is None else _scalar(lo, dt),
                       math.inf if hi is None else _scalar(hi, dt))


@lowers(aten.where.self)
def _where(ctx, n):
    c, a, b = (ctx.v(x) for x in n.args[:3])
    dt = result_dtype(n)
    return ctx.g.where(c, ctx.cast(a, dt), ctx.cast(b, dt))


@lowers(aten.masked_fill.Scalar)
def _masked_fill(ctx, n):
    x = ctx.v(n.args[0])
    return ctx.g.masked_fill(x, ctx.v(n.args[1]), _scalar(n.args[2], ctx.dtype(x)))


@lowers(aten.tril.default, aten.triu.default)
def _tril(ctx, n):
    k = n.args[1] if len(n.args) > 1 else n.kwargs.get("diagonal", 0)
    x, dt = ctx.v(n.args[0]), result_dtype(n)
    rows, cols = ctx.shape(x)[-2:]
    k = max(min(k, cols + 1), -rows - 1)  # beyond the matrix: all kept or all zero
    if dt in (torch.int32, torch.int64):  # through fp32, as the plugin's eager rule
        return ctx.cast(ctx.g.tril(ctx.cast(x, torch.float32), k,
                                   n.target is aten.triu.default), dt)
    return ctx.g.tril(x, k, n.target is aten.triu.default)


# ---- reductions and normalisation --------------------------------------------

def _reduce(name):
    def lower(ctx, n):
        x = ctx.v(n.args[0])
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        if n.kwargs.get("dtype") is not None:
            x = ctx.cast(x, n.kwargs["dtype"])
        elif name == "sum":  # integers and bools sum in int64 (exactly)
            x = ctx.cast(x, result_dtype(n))
        dims = [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))
        if not ctx.shape(x):
            # a 0-d tensor (dim 0 or -1 names itself): reduced as one element
            out = ctx.g.reduce_dims(REDUCE[name], ctx.g.reshape(x, [1]), [0], False)
            return ctx.g.reshape(out, [])
        return ctx.g.reduce_dims(REDUCE[name], x, dims, bool(keepdim))
    return lower


for _row in op_table.rows("reduce", torch_only=True):
    lowers(*_overloads(_row.name, ("default", "dim", "dim_IntList")))(_reduce(_row.name))


@lowers(aten._softmax.default, aten._log_softmax.default)
def _softmax(ctx, n):
    x, dim, half_to_float = ctx.v(n.args[0]), n.args[1], n.args[2]
    if half_to_float:
        x = ctx.cast(x, torch.float32)
    f = ctx.g.softmax if n.target is aten._softmax.default else ctx.g.log_softmax
    return f(x, dim)


@lowers(aten._safe_softmax.default)
def _safe_softmax(ctx, n):
    """PyTorch's math attention path: softmax whose all -inf rows are 0 (a
    NaN row, whose max is NaN, stays NaN), as libspyre's SDPA does."""
    x, dim = ctx.v(n.args[0]), n.args[1]
    dt = n.args[2] if len(n.args) > 2 else n.kwargs.get("dtype")
    if dt is not None:
        x = ctx.cast(x, dt)
    p = ctx.g.softmax(x, dim)
    top = ctx.g.reduce_dims(REDUCE["amax"], x, [dim], True)
    return ctx.g.masked_fill(p, ctx.g.binary_scalar(BINARY["eq"], top, -math.inf, False), 0.0)


@lowers(aten.argmax.default)
def _argmax(ctx, n):
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    if dim is None:
        raise Unsupported("argmax over all elements")
    keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    return ctx.g.cast(ctx.g.argmax(ctx.v(n.args[0]), dim, bool(keepdim)), torch.int64)


@lowers(aten.cumsum.default)
def _cumsum(ctx, n):
    x, out_dt = ctx.v(n.args[0]), result_dtype(n)
    return ctx.g.cumsum(ctx.cast(x, out_dt), n.args[1])  # integers: exact


@lowers(aten.native_layer_norm.default)
def _layer_norm(ctx, n):
    x, shape, w, b, eps = n.args[:5]
    if len(shape) != 1:
        raise Unsupported("layer_norm over more than the last dim")
    if any(u.target is operator.getitem and u.args[1] != 0 for u in n.users):
        raise Unsupported("layer_norm's mean/rstd outputs are used")
    out = ctx.g.layer_norm(ctx.v(x), -1 if w is None else ctx.v(w),
                           -1 if b is None else ctx.v(b), float(eps))
    return (out, None, None)


@lowers(aten.embedding.default)
def _embedding(ctx, n):
    return ctx.g.embedding(ctx.v(n.args[0]), ctx.v(n.args[1]))


@lowers(aten.gather.default)
def _gather(ctx, n):
    return ctx.g.gather(ctx.v(n.args[0]), n.args[1], ctx.v(n.args[2]))


def _slice_of(node, dim, start, end):
    """The sliced tensor when @node is x[..., start:end] along @dim (the
    last), else None."""
    if not _is(node, aten.slice.Tensor) or len(node.args) > 4 or node.kwargs:
        return None
    x = node.args[0]
    val = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
    if val is None or not val.dim():
        return None
    size = val.shape[-1]
    d, s0, e0 = (list(node.args[1:]) + [0, None, None][len(node.args) - 1:])[:3]
    s0 = 0 if s0 is None else (s0 + size if s0 < 0 else s0)
    e0 = size if e0 is None else min(size, e0 + size if e0 < 0 else e0)
    if d % val.dim() != dim or s0 != start or e0 != end:
        return None
    return x


def _rotate_half_of(n, dim):
    """x when cat node @n is cat([-x[..., h:], x[..., :h]], -1) of a float x
    whose last dim is 2h (rotate_half of rotary embeddings), else None."""
    xs = n.args[0]
    val = n.meta.get("val")
    if len(xs) != 2 or val is None or not val.dim() or dim % val.dim() != val.dim() - 1 or \
            val.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return None
    size = val.shape[-1]
    if not isinstance(size, int) or size % 2 or not size:
        return None
    h = size // 2
    neg, first = xs
    if not _is(neg, aten.neg.default):
        return None
    last = val.dim() - 1
    x = _slice_of(neg.args[0], last, h, size)
    if x is None or _slice_of(first, last, 0, h) is not x:
        return None
    xv = x.meta["val"]
    if tuple(xv.shape) != tuple(val.shape) or xv.dtype != val.dtype:
        return None
    return x


@lowers(aten.cat.default)
def _cat(ctx, n):
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    out_dt = result_dtype(n)
    rot = _rotate_half_of(n, dim)
    if rot is not None:
        # one row kernel (two vector instructions a tile), which the
        # products and sum of a rotary embedding around it fuse into
        return ctx.g.rotate_half(ctx.v(rot))
    dt = out_dt  # integers too: copies, exact
    rank = len(n.meta["val"].shape)
    dim %= rank or 1
    # as torch.cat, 1-D empty tensors (an empty KV cache) take no part
    xs = [ctx.v(x) for x in n.args[0]]
    xs = [x for x in xs if rank == 1 or ctx.shape(x) != [0]]
    if len(xs) == 1:
        return ctx.cast(ctx.g.contiguous(xs[0]), out_dt)
    return ctx.cast(ctx.g.cat([ctx.cast(x, dt) for x in xs], dim), out_dt)


def _filled(ctx, n, value):
    """A constant tensor of the node's shape and dtype: an arange of step 0."""
    shape = ints(n.meta["val"].shape)
    dt = result_dtype(n)
    if _integral(dt) and dt != torch.bool:  # exact in the integer mode
        return ctx.g.reshape(ctx.g.arange(_scalar(value, dt), 0.0, math.prod(shape), dt), shape)
    value = float(value)
    flat = ctx.g.arange(value if math.isfinite(value) else 0.0, 0.0, math.prod(shape),
                        torch.float32)
    if not math.isfinite(value):  # inf/nan: added to zeros
        flat = ctx.g.binary_scalar(BINARY["add"], flat, value, False)
    return ctx.cast(ctx.g.reshape(flat, shape), dt)


@lowers(aten.new_ones.default, aten.ones.default, aten.ones_like.default)
def _ones(ctx, n):
    return _filled(ctx, n, 1)


@lowers(aten.new_zeros.default, aten.zeros.default, aten.zeros_like.default)
def _zeros(ctx, n):
    return _filled(ctx, n, 0)


@lowers(aten.full.default, aten.new_full.default, aten.full_like.default)
def _full(ctx, n):
    value = n.args[2] if n.target is aten.new_full.default else n.args[1]
    if isinstance(value, torch.fx.Node):
        raise Unsupported("a fill value that is a tensor")
    return _filled(ctx, n, value)


@lowers(aten.scalar_tensor.default)
def _scalar_tensor(ctx, n):
    return _filled(ctx, n, n.args[0])


@lowers(aten._scaled_dot_product_fused_attention_overrideable.default)
def _sdpa(ctx, n):
    q, k, v = (ctx.v(x) for x in n.args[:3])
    args = list(n.args) + [None, 0.0, False, False][len(n.args) - 3:]
    bias, dropout, causal = args[3], args[4], args[5]
    if dropout:
        raise Unsupported("attention dropout")
    if any(u.target is operator.getitem and u.args[1] != 0 for u in n.users):
        raise Unsupported("attention's logsumexp or other outputs are used")
    scale = n.kwargs.get("scale")
    mask = -1 if bias is None else ctx.v(bias)
    qs, ks, vs = ctx.shape(q), ctx.shape(k), ctx.shape(v)
    grouped = (min(len(qs), len(ks), len(vs)) >= 3 and ks[-3] > 1 and vs[-3] == ks[-3]
               and qs[-3] != ks[-3] and qs[-3] % ks[-3] == 0)
    if grouped:  # enable_gqa: query head h reads key/value head h / G (ops_nn.cpp)
        hkv, grp = ks[-3], qs[-3] // ks[-3]
        q = ctx.g.reshape(q, qs[:-3] + [hkv, grp] + qs[-2:])
        k = ctx.g.expand(ctx.g.reshape(k, ks[:-2] + [1] + ks[-2:]),
                         ks[:-2] + [grp] + ks[-2:])
        v = ctx.g.expand(ctx.g.reshape(v, vs[:-2] + [1] + vs[-2:]),
                         vs[:-2] + [grp] + vs[-2:])
        if mask != -1:
            ms = ctx.shape(mask)
            split = len(ms) >= 3 and ms[-3] == qs[-3]
            mask = ctx.g.reshape(mask, ms[:-3] + [hkv, grp] + ms[-2:] if split
                                 else ms[:-2] + [1] + ms[-2:])
    out = ctx.g.sdpa(q, k, v, mask, bool(causal), 0.0 if scale is None else float(scale))
    if grouped:
        os_ = ctx.shape(out)
        out = ctx.g.reshape(out, os_[:-4] + [os_[-4] * os_[-3]] + os_[-2:])
    return (out,) + (None,) * 8


@lowers(aten.arange.start_step, aten.arange.start, aten.arange.default)
def _arange(ctx, n):
    args = list(n.args)
    if n.target is aten.arange.default:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else n.kwargs.get("step", 1)
    count = len(range(*ints([start, end, step]))) if all(
        isinstance(x, int) for x in (start, end, step)) else math.ceil((end - start) / step)
    dt = result_dtype(n)
    return ctx.g.arange(_scalar(start, dt), _scalar(step, dt), int(count), dt)


# ---- nn.TransformerEncoderLayer's inference fast path -------------------------

def _pick(ctx, x, dim, index):
    """x[..., index, ...] along @dim, as a view."""
    shape = ctx.shape(x)
    s = ctx.g.slice(x, dim, index, index + 1)
    return ctx.g.reshape(ctx.g.contiguous(s), shape[:dim] + shape[dim + 1:])


@lowers(aten._transformer_encoder_layer_fwd.default)
def _encoder_layer(ctx, n):
    (src, embed, heads, wqkv, bqkv, wp, bp, use_gelu, norm_first, eps, w1n, b1n, w2n, b2n,
     wf1, bf1, wf2, bf2) = n.args[:18]
    mask = n.args[18] if len(n.args) > 18 else n.kwargs.get("mask")
    if mask is not None:
        raise Unsupported("the encoder fast path with a mask")
    g, v = ctx.g, ctx.v
    x = v(src)
    b, t, _ = ctx.shape(x)
    hd = embed // heads

    def attention(h):
        qkv = g.reshape(g.linear(h, v(wqkv), v(bqkv)), [b, t, 3, heads, hd])
        q, k, vv = (g.transpose(_pick(ctx, qkv, 2, i), 1, 2) for i in range(3))
        a = g.sdpa(g.contiguous(q), g.contiguous(k), g.contiguous(vv), -1, False, 0.0)
        a = g.reshape(g.contiguous(g.transpose(a, 1, 2)), [b, t, embed])
        return g.linear(a, v(wp), v(bp))

    def ffn(h):
        h = g.linear(h, v(wf1), v(bf1))
        h = g.unary(UNARY["gelu" if use_gelu else "relu"], h)
        return g.linear(h, v(wf2), v(bf2))

    def norm(h, w, bias):
        return g.layer_norm(h, v(w), v(bias), float(eps))

    add = BINARY["add"]
    if norm_first:
        x = g.binary(add, x, attention(norm(x, w1n, b1n)))
        return g.binary(add, x, ffn(norm(x, w2n, b2n)))
    x = norm(g.binary(add, x, attention(x)), w1n, b1n)
    return norm(g.binary(add, x, ffn(x)), w2n, b2n)


@lowers(aten.split.Tensor, aten.split_with_sizes.default, view=True)
def _split(ctx, n):
    x, sizes = ctx.v(n.args[0]), n.args[1]
    dim = n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)
    dim %= len(ctx.shape(x))
    total = ctx.shape(x)[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, total - s) for s in range(0, total, sizes)] if sizes else [total]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return tuple(ctx.g.slice(x, dim, s, s + k) for s, k in zip(starts, ints(sizes)))


@lowers(aten.unbind.int, view=True)
def _unbind(ctx, n):
    x = ctx.v(n.args[0])
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    dim %= len(ctx.shape(x))
    return tuple(_pick(ctx, x, dim, i) for i in range(ctx.shape(x)[dim]))


@lowers(aten.index.Tensor)
def _index(ctx, n):
    """x[i0, i1, ..] with index tensors on the leading dims: one linear row
    index (computed through fp32, exact to 2^24) and a row gather."""
    x, idx = ctx.v(n.args[0]), list(n.args[1])
    if not idx or any(i is None for i in idx):
        raise Unsupported("index tensors that are not on the leading dims")
    shape, out_dt, f32 = ctx.shape(x), result_dtype(n), torch.float32
    # the table: int32/int64 rows move as they are (exact), bools through fp32
    tdt = out_dt if out_dt in (torch.int32, torch.int64) else f32
    bshape = ints(n.meta["val"].shape)[:len(n.meta["val"].shape) - (len(shape) - len(idx))]
    linear = None
    for j, node in enumerate(idx):
        t = ctx.v(node)
        if ctx.dtype(t) not in (torch.int32, torch.int64):
            raise Unsupported("bool mask indexing (data-dependent shape)")
        t = ctx.g.expand(ctx.cast(t, f32), bshape)
        neg = ctx.g.binary_scalar(BINARY["lt"], t, 0.0, False)
        t = ctx.g.where(neg, ctx.g.binary_scalar(BINARY["add"], t, float(shape[j]), False), t)
        linear = t if linear is None else ctx.g.binary(
            BINARY["add"], ctx.g.binary_scalar(BINARY["mul"], linear, float(shape[j]), False), t)
    rest = shape[len(idx):]
    table = ctx.g.reshape(ctx.g.contiguous(ctx.cast(x, tdt)),
                          [math.prod(shape[:len(idx)]), math.prod(rest)])
    rows = ctx.g.embedding(table, ctx.g.contiguous(ctx.cast(linear, torch.int64)))
    return ctx.cast(ctx.g.reshape(rows, bshape + rest), out_dt)


# convolution, max pooling, the composed math ops and MoE routing (their own
# files), registered on import
from . import lower_conv, lower_math, lower_routing  # noqa: E402,F401
