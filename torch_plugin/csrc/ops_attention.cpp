// SPDX-License-Identifier: MIT
// nn.MultiheadAttention's inference fast path, _native_multi_head_attention,
// composed from ops that have spyre kernels (linear, the SDPA backend op;
// matmul, masked_fill and softmax when the weights are asked for), so
// MultiheadAttention and TransformerDecoderLayer in eval mode stay on the
// card instead of falling back to the CPU.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <tuple>

namespace torch_spyre {
namespace {

// The CPU kernel's mask convention (ATen's masked_softmax): a mask that is
// not bool becomes one by "!= 0", and true masks a score out. mask_type 1
// is a key padding mask [batch, src_len]; 0 ([tgt_len, src_len]) and 2
// ([batch, heads, tgt_len, src_len]) broadcast against the scores as they are.
at::Tensor masked_out(const at::Tensor &mask, std::optional<int64_t> mask_type, int64_t bsz,
		      int64_t src_len)
{
	at::Tensor m = mask.scalar_type() == at::kBool ? mask : mask.ne(0);
	if (mask_type == 1)
		m = m.reshape({bsz, 1, 1, src_len});
	return m;
}

// [batch, len, embed] -> [batch, heads, len, head_dim]
at::Tensor split_heads(const at::Tensor &x, int64_t heads)
{
	return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

std::tuple<at::Tensor, at::Tensor>
native_multi_head_attention(const at::Tensor &query, const at::Tensor &key,
			    const at::Tensor &value, int64_t embed_dim, int64_t num_heads,
			    const at::Tensor &qkv_weight, const at::Tensor &qkv_bias,
			    const at::Tensor &proj_weight, const at::Tensor &proj_bias,
			    const std::optional<at::Tensor> &mask, bool need_weights,
			    bool average_attn_weights, std::optional<int64_t> mask_type)
{
	TORCH_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3,
		    "_native_multi_head_attention: query, key and value must be [batch, len, ",
		    "embed_dim], got ", query.sizes(), ", ", key.sizes(), ", ", value.sizes());
	TORCH_CHECK(num_heads > 0 && embed_dim % num_heads == 0 && query.size(2) == embed_dim &&
			    key.size(2) == embed_dim && value.size(2) == embed_dim &&
			    key.size(0) == query.size(0) && value.size(0) == query.size(0) &&
			    key.size(1) == value.size(1),
		    "_native_multi_head_attention: embed_dim ", embed_dim, " and ", num_heads,
		    " heads do not fit query ", query.sizes(), ", key ", key.sizes(), ", value ",
		    value.sizes());
	int64_t bsz = query.size(0), tgt_len = query.size(1), src_len = key.size(1);
	at::Tensor q, k, v;
	if (query.is_same(key) && key.is_same(value)) {
		// self-attention: one projection for q, k and v together
		auto qkv = at::linear(query, qkv_weight, qkv_bias).chunk(3, -1);
		q = qkv[0], k = qkv[1], v = qkv[2];
	} else {
		auto proj = [&](const at::Tensor &x, int64_t i) {
			return at::linear(x, qkv_weight.narrow(0, i * embed_dim, embed_dim),
					  qkv_bias.narrow(0, i * embed_dim, embed_dim));
		};
		q = proj(query, 0), k = proj(key, 1), v = proj(value, 2);
	}
	q = split_heads(q, num_heads);
	k = split_heads(k, num_heads);
	v = split_heads(v, num_heads);

	double scale = 1.0 / std::sqrt(static_cast<double>(embed_dim / num_heads));
	if (!need_weights) {
		// the attention alone: the SDPA backend op, one launch on the card
		std::optional<at::Tensor> keep;
		at::Tensor ctx;
		if (mask && mask->defined()) {
			at::Tensor out = masked_out(*mask, mask_type, bsz, src_len);
			keep = out.logical_not();
			ctx = at::scaled_dot_product_attention(q, k, v, keep, 0.0, false, scale);
			// SDPA gives a fully masked query 0 (its safe softmax), the
			// CPU kernel of this op NaN (a plain softmax): as the CPU
			ctx = ctx.masked_fill(out.all(-1, true),
					      std::numeric_limits<double>::quiet_NaN());
		} else {
			ctx = at::scaled_dot_product_attention(q, k, v, keep, 0.0, false, scale);
		}
		ctx = ctx.transpose(1, 2).reshape({bsz, tgt_len, embed_dim});
		return {at::linear(ctx, proj_weight, proj_bias), at::Tensor()};
	}
	at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).mul(scale);
	if (mask && mask->defined())
		scores = scores.masked_fill(masked_out(*mask, mask_type, bsz, src_len),
					    -std::numeric_limits<double>::infinity());
	// a fully masked row is NaN, as in ATen's CPU kernel
	at::Tensor probs = at::softmax(scores, -1);

	at::Tensor ctx = at::matmul(probs, v).transpose(1, 2).reshape({bsz, tgt_len, embed_dim});
	at::Tensor out = at::linear(ctx, proj_weight, proj_bias);
	if (average_attn_weights)
		probs = probs.sum(1).div(static_cast<double>(num_heads));
	return {out, probs};
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("_native_multi_head_attention", native_multi_head_attention);
}

} // namespace torch_spyre
