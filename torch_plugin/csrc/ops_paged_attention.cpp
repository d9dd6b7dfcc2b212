// SPDX-License-Identifier: MIT
//
// torch.ops.spyre.paged_attention: attention over vLLM's paged KV cache in
// one op library launch (libspyre's spyre_op_paged_attention: the K/V rows
// gathered through the block table on the card). The vLLM platform plugin's
// attention backend calls it; a Meta kernel gives its shape to fake tensors
// (torch.compile).
#include "op_tensor.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace torch_spyre {
namespace {

const char *kOp = "spyre::paged_attention";

void check_args(const at::Tensor &q, const at::Tensor &kv, const at::Tensor &bt,
		const at::Tensor &sl)
{
	TORCH_CHECK(q.dim() == 4 && kv.dim() == 4 && bt.dim() == 2 && sl.dim() == 1, kOp,
		    ": q must be [R, H, Q, D], kv_cache [blocks, kv_heads, block_size, 2 * D], "
		    "block_table [R, max_blocks], seq_lens [R]; got ",
		    q.sizes(), ", ", kv.sizes(), ", ", bt.sizes(), ", ", sl.sizes());
	TORCH_CHECK(bt.scalar_type() == at::kInt && sl.scalar_type() == at::kInt, kOp,
		    ": block_table and seq_lens must be int32, got ", bt.scalar_type(), " and ",
		    sl.scalar_type());
	TORCH_CHECK(kv.scalar_type() == q.scalar_type(), kOp, ": kv_cache is ",
		    kv.scalar_type(), ", q ", q.scalar_type());
	TORCH_CHECK(kv.size(3) == 2 * q.size(3) && bt.size(0) == q.size(0) &&
			    sl.size(0) == q.size(0) && kv.size(1) > 0 && q.size(1) % kv.size(1) == 0,
		    kOp, ": shapes do not fit: q ", q.sizes(), ", kv_cache ", kv.sizes(),
		    ", block_table ", bt.sizes(), ", seq_lens ", sl.sizes());
}

at::Tensor paged_attention(const at::Tensor &q, const at::Tensor &kv_cache,
			   const at::Tensor &block_table, const at::Tensor &seq_lens,
			   double scale)
{
	check_args(q, kv_cache, block_table, seq_lens);
	for (const at::Tensor *t : { &kv_cache, &block_table, &seq_lens })
		TORCH_CHECK(t->device() == q.device(), kOp, ": all tensors must be on ",
			    q.device(), ", one is on ", t->device());
	c10::DeviceGuard guard(q.device());
	// q and the small index tensors contiguous; the cache as it is (a
	// strided cache is copied whole by the op, correct but slow)
	at::Tensor qc = q.contiguous(), bt = block_table.contiguous(), sl = seq_lens.contiguous();
	at::Tensor out = at::empty(q.sizes(), q.options());
	spyre_tensor dq = describe(qc), dkv = describe(kv_cache), dbt = describe(bt),
		     dsl = describe(sl), dout = describe(out);
	check_op(spyre_op_paged_attention(ops_context(q.device().index()), launch_stream(q), &dq,
					  &dkv, &dbt, &dsl, scale, &dout),
		 kOp);
	count_device_op("paged_attention");
	return out;
}

at::Tensor paged_attention_meta(const at::Tensor &q, const at::Tensor &kv_cache,
				const at::Tensor &block_table, const at::Tensor &seq_lens,
				double scale)
{
	(void)scale;
	check_args(q, kv_cache, block_table, seq_lens);
	return at::empty(q.sizes(), q.options());
}

} // namespace

TORCH_LIBRARY_FRAGMENT(spyre, m)
{
	m.def("paged_attention(Tensor q, Tensor kv_cache, Tensor block_table, Tensor seq_lens, "
	      "float scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(spyre, PrivateUse1, m)
{
	m.impl("paged_attention", paged_attention);
}

TORCH_LIBRARY_IMPL(spyre, Meta, m)
{
	m.impl("paged_attention", paged_attention_meta);
}

} // namespace torch_spyre
